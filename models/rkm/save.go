package rkm

import (
	"fmt"
	"io"
	"math"

	"github.com/kdual/kdual/internal/modelfile"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// Model files: a NumPy .npz archive like every kdual model (see kpca's
// format), with a JSON header (format "kdual.rkm", version 1, n, s, the
// setting, the views' feature maps or kernels, the fit's Info) and float64
// arrays: h (n×s), gamma (s×s), u (df×s, primal); per view v: x_v (the
// training inputs), row_means_v (n, the centring of its kernel; the grand
// mean is in the header), and either phi_v (n×dim, the centred features)
// and mean_v (dim) for a feature map, with rff_w_v and rff_b_v for random
// Fourier features, or kc_v (n×n, the centred kernel) for a kernel view.
// Feature maps other than Identity and *kernel.RFF cannot be saved (their
// parameters are not kdual's). A loaded model infers and forecasts bit
// for bit like the saved one.
const ModelVersion = 1

// ErrModelFile is wrapped by every error about a model file that is
// truncated, corrupted, of another format or version, or inconsistent.
var ErrModelFile = fmt.Errorf("rkm: bad model file: %w", status.ErrInvalid)

const modelFormat = "kdual.rkm"

type modelView struct {
	// Map is "identity", "rff" or "kernel".
	Map          string      `json:"map"`
	D            int         `json:"d"`   // input columns
	Dim          int         `json:"dim"` // feature dimension (explicit views)
	Mean         float64     `json:"mean"`
	Kernel       kernel.Spec `json:"kernel"`
	RFFNormalize bool        `json:"rff_normalize,omitempty"`
}

type modelHeader struct {
	Format     string        `json:"format"`
	Version    int           `json:"version"`
	N          int           `json:"n"`
	Components int           `json:"components"`
	Setting    string        `json:"setting"`
	NoRescale  bool          `json:"no_rescale,omitempty"`
	Views      []modelView   `json:"views"`
	Info       Info          `json:"info"`
	Scale      *Standardizer `json:"scale,omitempty"`
}

// Save writes the fitted model to w (see the format above).
func (m *Model) Save(w io.Writer) error {
	if m == nil || !m.fitted {
		return ErrNotFitted
	}
	h := modelHeader{Format: modelFormat, Version: ModelVersion, N: m.n, Components: m.s,
		Setting: m.setting.String(), NoRescale: m.NoRescale, Info: m.info, Scale: m.Scale}
	for v, fv := range m.views {
		_, d := fv.x.Dims()
		mv := modelView{D: d, Dim: fv.dim, Mean: fv.center.Mean}
		switch fm := fv.fm.(type) {
		case nil:
			mv.Map = "kernel"
			mv.Kernel = fv.kern.Spec()
		case Identity:
			mv.Map = "identity"
		case *kernel.RFF:
			mv.Map, mv.RFFNormalize = "rff", fm.Normalize
		default:
			return fmt.Errorf("rkm: Save: view %d's feature map %T is not one kdual can save (Identity, *kernel.RFF or a kernel): %w", v, fv.fm, status.ErrInvalid)
		}
		h.Views = append(h.Views, mv)
	}
	mw := modelfile.NewWriter(w, h)
	mw.Mat("h", m.h)
	mw.Sym("gamma", m.gamma)
	if m.setting == Primal {
		mw.Mat("u", m.u)
	}
	for v, fv := range m.views {
		name := func(p string) string { return fmt.Sprintf("%s_%d", p, v) }
		mw.Mat(name("x"), fv.x)
		mw.Vec(name("row_means"), fv.center.RowMeans)
		if fv.explicit {
			mw.Mat(name("phi"), fv.phi)
			mw.Vec(name("mean"), fv.mean)
			if f, ok := fv.fm.(*kernel.RFF); ok {
				mw.Mat(name("rff_w"), f.W)
				mw.Vec(name("rff_b"), f.B)
			}
		} else {
			mw.Sym(name("kc"), fv.kc)
		}
	}
	if err := mw.Close(); err != nil {
		return fmt.Errorf("rkm: Save: %w", err)
	}
	return nil
}

// Load reads a model written by Save, checking format, version, shapes and
// finiteness (errors wrap ErrModelFile). The loaded model's Views are the
// saved feature maps and kernels; its Solver is nil.
func Load(r io.Reader) (*Model, error) {
	var h modelHeader
	mr, err := modelfile.Open(r, ErrModelFile, &h)
	if err != nil {
		return nil, err // it names the model kind already
	}
	if err := mr.Check(h.Format, h.Version, modelFormat, ModelVersion); err != nil {
		return nil, err
	}
	n, s, nv := h.N, h.Components, len(h.Views)
	if n < 2 || n > 1<<24 || s < 1 || s >= n || nv < 1 || nv > MaxViews {
		return nil, mr.Errorf("n = %d, s = %d, %d views", n, s, nv)
	}
	m := &Model{Components: s, NoRescale: h.NoRescale, n: n, s: s, info: h.Info}
	if h.Scale != nil {
		if !(h.Scale.Std > 0) || math.IsInf(h.Scale.Std, 0) || math.IsNaN(h.Scale.Mean) || math.IsInf(h.Scale.Mean, 0) {
			return nil, mr.Errorf("series scaling %+v", *h.Scale)
		}
		sc := *h.Scale
		m.Scale = &sc
	}
	switch h.Setting {
	case "primal":
		m.setting = Primal
	case "dual":
		m.setting = Dual
	default:
		return nil, mr.Errorf("setting %q", h.Setting)
	}
	m.Setting = m.setting
	m.views = make([]fitView, nv)
	m.Views = make([]View, nv)
	for v, mv := range h.Views {
		if err := m.loadView(mr, v, mv); err != nil {
			return nil, err
		}
	}
	if m.setting == Primal {
		for v := range m.views {
			if !m.views[v].explicit {
				return nil, mr.Errorf("a primal model with a kernel view")
			}
		}
		if s > m.df {
			return nil, mr.Errorf("s = %d exceeds the feature dimension %d", s, m.df)
		}
		if m.u, err = mr.Mat("u", m.df, s); err != nil {
			return nil, err
		}
	}
	if m.h, err = mr.Mat("h", n, s); err != nil {
		return nil, err
	}
	if m.gamma, err = mr.Sym("gamma", s); err != nil {
		return nil, err
	}
	m.Training = Eig
	if h.Info.Training == "stiefel" {
		m.Training = Stiefel
	}
	m.Rotate = h.Info.Rotated
	m.fitted = true
	return m, nil
}

// compile-time check that the saved maps are FeatureMaps.
var _ = []FeatureMap{Identity{}, (*kernel.RFF)(nil)}

// loadView reads view v of a model file (its header mv): the data, the
// centring statistics and the feature map or kernel.
func (m *Model) loadView(mr *modelfile.Reader, v int, mv modelView) error {
	n := m.n
	var err error
	name := func(p string) string { return fmt.Sprintf("%s_%d", p, v) }
	fv := &m.views[v]
	if mv.D < 1 || mv.D > 1<<24 || math.IsNaN(mv.Mean) || math.IsInf(mv.Mean, 0) {
		return mr.Errorf("view %d: d = %d, mean %g", v, mv.D, mv.Mean)
	}
	if fv.x, err = mr.Mat(name("x"), n, mv.D); err != nil {
		return err
	}
	means, err := mr.Vec(name("row_means"), n)
	if err != nil {
		return err
	}
	fv.center = linalg.Centering{RowMeans: means, Mean: mv.Mean}
	switch mv.Map {
	case "kernel":
		if fv.kern, err = mv.Kernel.Kernel(); err != nil {
			return mr.Errorf("%v", err)
		}
		if fv.kc, err = mr.Sym(name("kc"), n); err != nil {
			return err
		}
		m.Views[v] = View{Kernel: fv.kern}
	case "identity", "rff":
		if mv.Dim < 1 || mv.Dim > 1<<24 {
			return mr.Errorf("view %d: feature dimension %d", v, mv.Dim)
		}
		fv.explicit, fv.dim = true, mv.Dim
		if fv.phi, err = mr.Mat(name("phi"), n, mv.Dim); err != nil {
			return err
		}
		if fv.mean, err = mr.Vec(name("mean"), mv.Dim); err != nil {
			return err
		}
		if mv.Map == "identity" {
			if mv.Dim != mv.D {
				return mr.Errorf("view %d: identity map from %d to %d columns", v, mv.D, mv.Dim)
			}
			fv.fm = Identity{}
		} else {
			f := &kernel.RFF{Normalize: mv.RFFNormalize}
			if f.W, err = mr.Mat(name("rff_w"), mv.D, mv.Dim); err != nil {
				return err
			}
			if f.B, err = mr.Vec(name("rff_b"), mv.Dim); err != nil {
				return err
			}
			fv.fm = f
		}
		m.Views[v] = View{Features: fv.fm}
	default:
		return mr.Errorf("view %d: map %q", v, mv.Map)
	}
	fv.offset = m.df
	m.df += fv.dim
	return nil
}
