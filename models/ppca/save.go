package ppca

import (
	"fmt"
	"io"
	"math"

	"github.com/kdual/kdual/internal/modelfile"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// Model files: a NumPy .npz archive (numpy.load reads it) like every kdual
// model (see kpca's format), with a JSON header (format "kdual.ppca.dual"
// or "kdual.ppca.primal", version 1, N, q, σ², the trace, the kernel) and
// float64 arrays:
//
//	dual:   values (every eigenvalue computed), vectors N×len(values),
//	        a N×q (Ã), ka N×q (K_c·Ã), kc N×N (the centred training
//	        kernel), row_means N (centring new kernel vectors; the grand
//	        mean is in the header), x N×d (absent after FitKernel)
//	primal: values d, mean d, v d×d (eigenvectors), w d×q (W)
//
// A loaded model transforms, reconstructs, generates and samples bit for
// bit like the saved one.
const ModelVersion = 1

// ErrModelFile is wrapped by every error about a model file that is
// truncated, corrupted, of another format or version, or inconsistent.
var ErrModelFile = fmt.Errorf("ppca: bad model file: %w", status.ErrInvalid)

type modelHeader struct {
	Format   string      `json:"format"`
	Version  int         `json:"version"`
	N        int         `json:"n"`
	D        int         `json:"d"` // primal: d; dual: columns of x (0 without x)
	Q        int         `json:"components"`
	Sigma2   float64     `json:"sigma2"`
	Trace    float64     `json:"trace"`
	Values   int         `json:"values"` // eigenvalues stored
	AllPairs bool        `json:"all_pairs,omitempty"`
	Mean     float64     `json:"mean,omitempty"`
	Kernel   kernel.Spec `json:"kernel"`
	Status   string      `json:"status,omitempty"`
	Test     string      `json:"stopping_test,omitempty"`
}

const (
	formatDual   = "kdual.ppca.dual"
	formatPrimal = "kdual.ppca.primal"
)

// Save writes the fitted model to w (see the format above).
func (m *Dual) Save(w io.Writer) error {
	if err := m.check(); err != nil {
		return err
	}
	h := modelHeader{Format: formatDual, Version: ModelVersion, N: m.n, Q: m.q, Sigma2: m.sigma2, Trace: m.trace,
		Values: len(m.values), AllPairs: m.allPairs, Mean: m.center.Mean,
		Kernel: m.Kernel.Spec(),
		Status: m.status.Code.String(), Test: m.status.Test}
	if m.x != nil {
		_, h.D = m.x.Dims()
	}
	mw := modelfile.NewWriter(w, h)
	mw.Vec("values", m.values)
	mw.Mat("vectors", m.vectors)
	mw.Mat("a", m.a)
	mw.Mat("ka", m.ka)
	mw.Sym("kc", m.kc)
	mw.Vec("row_means", m.center.RowMeans)
	if m.x != nil {
		mw.Mat("x", m.x)
	}
	if err := mw.Close(); err != nil {
		return fmt.Errorf("ppca: Save: %w", err)
	}
	return nil
}

// LoadDual reads a model written by Dual.Save, checking format, version,
// shapes and finiteness (errors wrap ErrModelFile). The loaded model's
// Solver is nil.
func LoadDual(r io.Reader) (*Dual, error) {
	var h modelHeader
	mr, err := modelfile.Open(r, ErrModelFile, &h)
	if err != nil {
		return nil, err // it names the model kind already
	}
	if err := mr.Check(h.Format, h.Version, formatDual, ModelVersion); err != nil {
		return nil, err
	}
	// N sizes the dual's arrays (an N×N kernel): at most 2²⁴.
	if err := h.checkLatent(mr, h.N, 1<<24); err != nil {
		return nil, err
	}
	kern, err := h.Kernel.Kernel()
	if err != nil {
		return nil, mr.Errorf("%v", err)
	}
	if math.IsNaN(h.Mean) || math.IsInf(h.Mean, 0) {
		return nil, mr.Errorf("grand mean %g", h.Mean)
	}
	m := &Dual{Q: h.Q, Sigma2: h.Sigma2, Kernel: kern, allPairs: h.AllPairs}
	m.latent = latent{n: h.N, q: h.Q, sigma2: h.Sigma2, trace: h.Trace}
	n := h.N
	if m.values, err = mr.Vec("values", h.Values); err != nil {
		return nil, err
	}
	if m.vectors, err = mr.Mat("vectors", n, h.Values); err != nil {
		return nil, err
	}
	if m.a, err = mr.Mat("a", n, h.Q); err != nil {
		return nil, err
	}
	if m.ka, err = mr.Mat("ka", n, h.Q); err != nil {
		return nil, err
	}
	if m.kc, err = mr.Sym("kc", n); err != nil {
		return nil, err
	}
	means, err := mr.Vec("row_means", n)
	if err != nil {
		return nil, err
	}
	m.center = linalg.Centering{RowMeans: means, Mean: h.Mean}
	switch {
	case h.D > 0:
		if m.x, err = mr.Mat("x", n, h.D); err != nil {
			return nil, err
		}
	case h.D < 0 || mr.Has("x"):
		return nil, mr.Errorf("d = %d with%s training inputs", h.D, map[bool]string{true: "", false: "out"}[mr.Has("x")])
	}
	if err := m.status.Code.UnmarshalText([]byte(h.Status)); err != nil {
		return nil, mr.Errorf("status: %v", err)
	}
	m.status.Test = h.Test
	if err := positiveTop(mr, m.values, h.Q); err != nil {
		return nil, err
	}
	m.fitted = true
	return m, nil
}

// positiveTop checks λ_1 ≥ … ≥ λ_q > 0 (Transform divides by them).
func positiveTop(mr *modelfile.Reader, values []float64, q int) error {
	for p := 0; p < q; p++ {
		if !(values[p] > 0) || (p > 0 && values[p] > values[p-1]) {
			return mr.Errorf("eigenvalue %d is %g: want λ_1 ≥ … ≥ λ_q > 0", p+1, values[p])
		}
	}
	return nil
}

// checkLatent checks the header's N (2 to maxN), q, σ² and eigenvalue
// count (at most maxValues) before any array is read.
func (h modelHeader) checkLatent(mr *modelfile.Reader, maxValues, maxN int) error {
	if h.N < 2 || h.Q < 1 || h.Values < h.Q || h.Values > maxValues || h.N > maxN {
		return mr.Errorf("N = %d, q = %d, %d eigenvalues", h.N, h.Q, h.Values)
	}
	if !(h.Sigma2 >= 0) || math.IsInf(h.Sigma2, 0) || !(h.Trace >= 0) || math.IsInf(h.Trace, 0) {
		return mr.Errorf("σ² = %g, trace = %g", h.Sigma2, h.Trace)
	}
	return nil
}

// Save writes the fitted model to w (see the format above).
func (m *Primal) Save(w io.Writer) error {
	if !m.fitted {
		return ErrNotFitted
	}
	h := modelHeader{Format: formatPrimal, Version: ModelVersion, N: m.n, D: m.d, Q: m.q, Sigma2: m.sigma2,
		Trace: m.trace, Values: len(m.values), AllPairs: true}
	mw := modelfile.NewWriter(w, h)
	mw.Vec("values", m.values)
	mw.Vec("mean", m.mean)
	mw.Mat("v", m.v)
	mw.Mat("w", m.w)
	if err := mw.Close(); err != nil {
		return fmt.Errorf("ppca: Save: %w", err)
	}
	return nil
}

// LoadPrimal reads a model written by Primal.Save (errors wrap
// ErrModelFile).
func LoadPrimal(r io.Reader) (*Primal, error) {
	var h modelHeader
	mr, err := modelfile.Open(r, ErrModelFile, &h)
	if err != nil {
		return nil, err // it names the model kind already
	}
	if err := mr.Check(h.Format, h.Version, formatPrimal, ModelVersion); err != nil {
		return nil, err
	}
	if h.D < 1 || h.D > 1<<16 || h.Values != h.D {
		return nil, mr.Errorf("d = %d, %d eigenvalues", h.D, h.Values)
	}
	// The primal's N is a count of training points, no array's size.
	if err := h.checkLatent(mr, h.D, math.MaxInt); err != nil {
		return nil, err
	}
	m := &Primal{Q: h.Q, Sigma2: h.Sigma2, d: h.D}
	m.latent = latent{n: h.N, q: h.Q, sigma2: h.Sigma2, trace: h.Trace}
	if m.values, err = mr.Vec("values", h.D); err != nil {
		return nil, err
	}
	if m.mean, err = mr.Vec("mean", h.D); err != nil {
		return nil, err
	}
	if m.v, err = mr.Mat("v", h.D, h.D); err != nil {
		return nil, err
	}
	if m.w, err = mr.Mat("w", h.D, h.Q); err != nil {
		return nil, err
	}
	if err := positiveTop(mr, m.values, h.Q); err != nil {
		return nil, err
	}
	m.fitted = true
	return m, nil
}
