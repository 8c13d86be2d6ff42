package kmvda

import (
	"fmt"
	"io"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/modelfile"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/status"
)

// Model files: a NumPy .npz archive like every kdual model (see kpca's
// format), with a JSON header (format "kdual.kmvda", version 1, the kind,
// σ, the views' dimensions, l, the fit's Info) and float64 arrays:
// values (l), and per view j: linear: w_j (d_j×l); rff: rff_w_j (d_j×m),
// rff_b_j (m) and w_j (m×l); rbf: x_j (n_j×d_j, the training samples) and
// z_j (n_j×l). A loaded model's Transform is bit for bit the saved one's.
const ModelVersion = 1

// ErrModelFile is wrapped by every error about a model file that is
// truncated, corrupted, of another format or version, or inconsistent.
var ErrModelFile = fmt.Errorf("kmvda: bad model file: %w", status.ErrInvalid)

const modelFormat = "kdual.kmvda"

type modelHeader struct {
	Format       string  `json:"format"`
	Version      int     `json:"version"`
	Kind         string  `json:"kind"`
	Sigma        float64 `json:"sigma"`
	Dims         []int   `json:"dims"`
	Rows         []int   `json:"rows,omitempty"`       // rbf: n_j
	Features     int     `json:"features,omitempty"`   // rff: m
	InputDims    []int   `json:"input_dims,omitempty"` // rff: d_j
	RFFNormalize bool    `json:"rff_normalize,omitempty"`
	Components   int     `json:"components"`
	Info         Info    `json:"info"`
}

// Save writes the fitted model to w (see the format above).
func (m *Model) Save(w io.Writer) error {
	if m == nil || !m.fitted {
		return ErrNotFitted
	}
	h := modelHeader{Format: modelFormat, Version: ModelVersion, Kind: m.fitKind.String(), Sigma: m.fitSigma,
		Dims: m.dims, Components: len(m.values), Info: m.info}
	if m.fitKind == RFF {
		h.Features = m.rff[0].Dim()
		h.RFFNormalize = m.rff[0].Normalize
		for _, f := range m.rff {
			d, _ := f.W.Dims()
			h.InputDims = append(h.InputDims, d)
		}
	}
	if m.fitKind == RBF {
		for _, x := range m.x {
			r, _ := x.Dims()
			h.Rows = append(h.Rows, r)
		}
	}
	mw := modelfile.NewWriter(w, h)
	mw.Vec("values", m.values)
	for j := 0; j < m.views; j++ {
		switch m.fitKind {
		case Linear:
			mw.Mat(fmt.Sprintf("w_%d", j), m.w[j])
		case RFF:
			mw.Mat(fmt.Sprintf("rff_w_%d", j), m.rff[j].W)
			mw.Vec(fmt.Sprintf("rff_b_%d", j), m.rff[j].B)
			mw.Mat(fmt.Sprintf("w_%d", j), m.w[j])
		case RBF:
			mw.Mat(fmt.Sprintf("x_%d", j), m.x[j])
			mw.Mat(fmt.Sprintf("z_%d", j), m.z[j])
		}
	}
	if err := mw.Close(); err != nil {
		return fmt.Errorf("kmvda: Save: %w", err)
	}
	return nil
}

// Load reads a model written by Save, checking format, version, shapes and
// finiteness (errors wrap ErrModelFile). The loaded model's Solver is nil.
func Load(r io.Reader) (*Model, error) {
	var h modelHeader
	mr, err := modelfile.Open(r, ErrModelFile, &h)
	if err != nil {
		return nil, err // it names the model kind already
	}
	if err := mr.Check(h.Format, h.Version, modelFormat, ModelVersion); err != nil {
		return nil, err
	}
	kind, err := ParseKind(h.Kind)
	if err != nil {
		return nil, mr.Errorf("%v", err)
	}
	v, l := len(h.Dims), h.Components
	if v < 1 || v > MaxViews || l < 1 || l > 1<<20 {
		return nil, mr.Errorf("%d views, l = %d", v, l)
	}
	for _, d := range h.Dims {
		if d < 1 || d > 1<<24 {
			return nil, mr.Errorf("view dimensions %v", h.Dims)
		}
	}
	if kind != Linear && (!(h.Sigma > 0) || math.IsInf(h.Sigma, 0)) {
		return nil, mr.Errorf("σ = %g", h.Sigma)
	}
	if kind == RFF && (h.Features < 1 || h.Features > 1<<24 || len(h.InputDims) != v) {
		return nil, mr.Errorf("%d random features, %d input dimensions for %d views", h.Features, len(h.InputDims), v)
	}
	if kind == RBF && len(h.Rows) != v {
		return nil, mr.Errorf("%d sample counts for %d views", len(h.Rows), v)
	}
	m := &Model{Kind: kind, Sigma: h.Sigma, Dim: l, views: v, dims: h.Dims, fitKind: kind, fitSigma: h.Sigma, info: h.Info}
	if kind == RFF {
		m.Features = h.Features
	}
	if m.values, err = mr.Vec("values", l); err != nil {
		return nil, err
	}
	m.w, m.x, m.z, m.rff = make([]*mat.Dense, v), make([]*mat.Dense, v), make([]*mat.Dense, v), make([]*kernel.RFF, v)
	for j := 0; j < v; j++ {
		name := func(p string) string { return fmt.Sprintf("%s_%d", p, j) }
		switch kind {
		case Linear:
			if m.w[j], err = mr.Mat(name("w"), h.Dims[j], l); err != nil {
				return nil, err
			}
		case RFF:
			f := &kernel.RFF{Normalize: h.RFFNormalize}
			if h.InputDims[j] < 1 || h.InputDims[j] > 1<<24 {
				return nil, mr.Errorf("view %d: input dimension %d", j, h.InputDims[j])
			}
			if f.W, err = mr.Mat(name("rff_w"), h.InputDims[j], h.Features); err != nil {
				return nil, err
			}
			if f.B, err = mr.Vec(name("rff_b"), h.Features); err != nil {
				return nil, err
			}
			m.rff[j] = f
			if m.w[j], err = mr.Mat(name("w"), h.Features, l); err != nil {
				return nil, err
			}
		case RBF:
			if h.Rows[j] < 1 || h.Rows[j] > 1<<24 {
				return nil, mr.Errorf("view %d has %d samples", j, h.Rows[j])
			}
			if m.x[j], err = mr.Mat(name("x"), h.Rows[j], h.Dims[j]); err != nil {
				return nil, err
			}
			if m.z[j], err = mr.Mat(name("z"), h.Rows[j], l); err != nil {
				return nil, err
			}
		}
	}
	if kind == Linear || kind == RFF {
		m.x, m.z = nil, nil
	}
	m.fitted = true
	return m, nil
}
