package kpca

import (
	"fmt"
	"io"
	"math"

	"github.com/kdual/kdual/approx"
	"github.com/kdual/kdual/internal/modelfile"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// Model files. Save writes a NumPy .npz archive (numpy.load reads it) with
// these members, all float64 and C-ordered unless said otherwise:
//
//	header.npy     uint8: the JSON header (modelHeader): "format" "kdual.kpca",
//	               "version" 2, the kernel (kernel.Spec), centring, n, s, the
//	               solver's name and the fit's info
//	values.npy     s: the eigenvalues λ_1 ≥ … ≥ λ_s
//	proj.npy       n×s: scores of new points are k_c(x)ᵀ·proj
//	scores.npy     n×s: the training scores
//	dual.npy       n×s: H
//	row_means.npy  n: the training kernel's row means (centred models; the
//	               grand mean is in the header), for centring new rows
//	x.npy          n×d: the training points (models fitted with Fit; absent
//	               after FitGram, which then transforms kernel rows only)
//	inv_z.npy, inv_coef.npy: the pre-image map (FitInverse); its kernel
//	               is the header's "inverse_kernel" when present, else the
//	               fit's
//
// A new point's scores: k = kernel(x_new, x) (1×n), k_c = k − mean(k) −
// row_means + mean, z = k_c·proj (what Transform computes, in the same
// order, so a loaded model transforms bit for bit like the saved one).
//
// Version 2 added the sigmoid, cosine and laplacian kernels and c₀'s
// default (kernel.Spec's coef0_set); version 3 the pre-image map's own
// kernel (KPCA.InverseKernel) and the data's scale (KPCA.InputScale).
// Load reads versions 1 to 3, a version-1 polynomial kernel with its c₀ as
// written (0: homogeneous).
const (
	modelFormat  = "kdual.kpca"
	ModelVersion = 3
	oldestModel  = 1
)

// ErrModelFile is wrapped by every error about a model file that is
// truncated, corrupted, of another format or version, or inconsistent.
var ErrModelFile = fmt.Errorf("kpca: bad model file: %w", status.ErrInvalid)

type modelHeader struct {
	Format     string      `json:"format"`
	Version    int         `json:"version"`
	Kernel     kernel.Spec `json:"kernel"`
	Center     bool        `json:"center"`
	Mean       float64     `json:"mean"`
	N          int         `json:"n"`
	D          int         `json:"d"` // 0 without x
	Components int         `json:"components"`
	Alpha      float64     `json:"alpha"`
	HasX       bool        `json:"has_x"`
	HasInverse bool        `json:"has_inverse"`
	// InverseKernel is the pre-image map's kernel where it is not the
	// fit's (version 3).
	InverseKernel *kernel.Spec `json:"inverse_kernel,omitempty"`
	// InputScale is KPCA.InputScale when it is not 0 or 1 (version 3).
	InputScale float64 `json:"input_scale,omitempty"`
	Solver     string  `json:"solver"`
	Status     string  `json:"status"`
	Test       string  `json:"stopping_test,omitempty"`
	// Approx describes an approximate model's feature map (members
	// landmarks and chol for nystrom, rff_w and rff_b for rff, with
	// feature_mean and w; proj is absent).
	Approx *approx.Info `json:"approx,omitempty"`
}

// Save writes the fitted model to w (see the format above).
func (k *KPCA) Save(w io.Writer) error {
	if k == nil || !k.fitted {
		return ErrNotFitted
	}
	if k.distributed {
		return errDistributed
	}
	n, s := k.scores.Dims()
	h := modelHeader{
		Format: modelFormat, Version: ModelVersion, Center: k.fitCenter, Mean: k.center.Mean,
		N: n, Components: s, Alpha: k.fitAlpha, HasX: k.x != nil, HasInverse: k.inverse != nil,
		Solver: k.info.Solver, Status: k.info.Status.Code.String(), Test: k.info.Status.Test,
		Kernel: k.fitKernel.Spec(),
	}
	if k.x != nil {
		_, h.D = k.x.Dims()
	}
	if k.InputScale != 1 {
		h.InputScale = k.InputScale
	}
	if k.inverse != nil && k.inverse.kern != k.fitKernel {
		spec := k.inverse.kern.Spec()
		h.InverseKernel = &spec
	}
	if k.approx != nil {
		ai := k.approx.fm.Info()
		// A wall-clock time is not part of the model: the same fit saves
		// the same bytes in every process.
		ai.Seconds = 0
		h.Approx = &ai
		switch fm := k.approx.fm.(type) {
		case *approx.NystromMap:
			_, h.D = fm.XL.Dims()
		case *approx.RFFMap:
			h.D, _ = fm.RFF.W.Dims()
		}
	}
	mw := modelfile.NewWriter(w, h)
	mw.Vec("values", k.values)
	if k.approx == nil {
		mw.Mat("proj", k.proj)
	} else {
		switch fm := k.approx.fm.(type) {
		case *approx.NystromMap:
			mw.Mat("landmarks", fm.XL)
			mw.Mat("chol", fm.R)
		case *approx.RFFMap:
			mw.Mat("rff_w", fm.RFF.W)
			mw.Vec("rff_b", fm.RFF.B)
		default:
			return fmt.Errorf("kpca: Save: feature map %T: %w", fm, status.ErrInvalid)
		}
		mw.Vec("feature_mean", k.approx.mean)
		mw.Mat("w", k.approx.w)
	}
	mw.Mat("scores", k.scores)
	mw.Mat("dual", k.h)
	if k.fitCenter && k.approx == nil {
		mw.Vec("row_means", k.center.RowMeans)
	}
	if k.x != nil {
		mw.Mat("x", k.x)
	}
	if k.inverse != nil {
		mw.Mat("inv_z", k.inverse.z)
		mw.Mat("inv_coef", k.inverse.coef)
	}
	if err := mw.Close(); err != nil {
		return fmt.Errorf("kpca: Save: %w", err)
	}
	return nil
}

// Load reads a model written by Save. It checks the format, the version,
// every array's shape against the header and that every value is finite;
// a truncated, corrupted, foreign or inconsistent file gives an error
// wrapping ErrModelFile. The loaded model transforms exactly like the one
// that was saved; its Solver is nil (the solver's name is in Info).
func Load(r io.Reader) (*KPCA, error) {
	var h modelHeader
	mr, err := modelfile.Open(r, ErrModelFile, &h)
	if err != nil {
		return nil, err // it names the model kind already
	}
	if err := mr.CheckVersions(h.Format, h.Version, modelFormat, oldestModel, ModelVersion); err != nil {
		return nil, err
	}
	if h.N < 2 || h.Components < 1 || h.Components >= h.N || (h.HasX && h.D < 1) {
		return nil, mr.Errorf("n = %d, s = %d, d = %d", h.N, h.Components, h.D)
	}
	kern, err := h.Kernel.Kernel()
	if err != nil {
		return nil, mr.Errorf("%v", err)
	}
	n, s := h.N, h.Components
	k := &KPCA{Components: s, Kernel: kern, NoCenter: !h.Center, Alpha: h.Alpha,
		fitKernel: kern, fitCenter: h.Center, fitAlpha: h.Alpha, n: n}
	if k.values, err = mr.Vec("values", s); err != nil {
		return nil, err
	}
	if h.Approx == nil {
		if k.proj, err = mr.Mat("proj", n, s); err != nil {
			return nil, err
		}
	} else if err := loadApprox(mr, &h, k, kern); err != nil {
		return nil, err
	}
	if k.scores, err = mr.Mat("scores", n, s); err != nil {
		return nil, err
	}
	if k.h, err = mr.Mat("dual", n, s); err != nil {
		return nil, err
	}
	if h.Center && h.Approx == nil {
		means, err := mr.Vec("row_means", n)
		if err != nil {
			return nil, err
		}
		if math.IsNaN(h.Mean) || math.IsInf(h.Mean, 0) {
			return nil, mr.Errorf("grand mean %g", h.Mean)
		}
		k.center = linalg.Centering{RowMeans: means, Mean: h.Mean}
	}
	if h.HasX {
		if k.x, err = mr.Mat("x", n, h.D); err != nil {
			return nil, err
		}
	}
	if h.HasInverse {
		if !h.HasX {
			return nil, mr.Errorf("a pre-image map without training points")
		}
		z, err := mr.Mat("inv_z", n, s)
		if err != nil {
			return nil, err
		}
		coef, err := mr.Mat("inv_coef", n, h.D)
		if err != nil {
			return nil, err
		}
		k.inverse = &preimage{z: z, coef: coef, kern: kern}
		if h.InverseKernel != nil {
			if k.inverse.kern, err = h.InverseKernel.Kernel(); err != nil {
				return nil, mr.Errorf("inverse kernel: %v", err)
			}
			ik := k.inverse.kern
			k.InverseKernel = &ik
		}
		k.FitInverse = true
	}
	if h.InputScale != 0 {
		if math.IsNaN(h.InputScale) || math.IsInf(h.InputScale, 0) {
			return nil, mr.Errorf("input scale %g", h.InputScale)
		}
		k.InputScale = h.InputScale
	}
	k.info = Info{Solver: h.Solver, Operator: "loaded", Approx: h.Approx}
	if err := k.info.Status.Code.UnmarshalText([]byte(h.Status)); err != nil {
		return nil, mr.Errorf("status: %v", err)
	}
	k.info.Status.Test = h.Test
	k.fitted = true
	return k, nil
}

// loadApprox reads an approximate model's feature map, mean and W.
func loadApprox(mr *modelfile.Reader, h *modelHeader, k *KPCA, kern kernel.Kernel) error {
	a := h.Approx
	r, s := a.Rank, h.Components
	if r < s || r > 1<<24 || h.D < 1 || h.HasX || h.HasInverse {
		return mr.Errorf("approximation of rank %d for %d components (d = %d, training points %v)", r, s, h.D, h.HasX)
	}
	var fm approx.FeatureMap
	switch a.Method {
	case "nystrom":
		xl, err := mr.Mat("landmarks", r, h.D)
		if err != nil {
			return err
		}
		chol, err := mr.Mat("chol", r, r)
		if err != nil {
			return err
		}
		nm, err := approx.NewNystromMap(kern, xl, chol, *a)
		if err != nil {
			return mr.Errorf("%v", err)
		}
		fm = nm
	case "rff":
		if kern.Kind != kernel.Gaussian {
			return mr.Errorf("random features of a %v kernel", kern.Kind)
		}
		rw, err := mr.Mat("rff_w", h.D, r)
		if err != nil {
			return err
		}
		rb, err := mr.Vec("rff_b", r)
		if err != nil {
			return err
		}
		fm = approx.NewRFFMap(&kernel.RFF{W: rw, B: rb}, *a)
	default:
		return mr.Errorf("approximation %q", a.Method)
	}
	mean, err := mr.Vec("feature_mean", r)
	if err != nil {
		return err
	}
	w, err := mr.Mat("w", r, s)
	if err != nil {
		return err
	}
	k.approx = &approxState{fm: fm, mean: mean, w: w}
	return nil
}
