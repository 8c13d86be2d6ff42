package kernel

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/internal/rng"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// RFF is a random Fourier feature map for the Gaussian kernel
// exp(−‖x−y‖²/(2σ²)) (Rahimi and Recht): with W (d×D) of independent
// N(0, 1/σ²) entries and b_j uniform on [0, 2π],
//
//	f(x) = √(2/D)·cos(Wᵀx + b),  E[f(x)ᵀf(y)] = exp(−‖x−y‖²/(2σ²)),
//
// with an error of order 1/√D. Normalize rescales every feature vector to
// unit norm (the kernel MvDA paper's choice), which makes f(x)ᵀf(x) = 1 like
// the Gaussian kernel itself.
type RFF struct {
	W         *mat.Dense
	B         []float64
	Normalize bool
}

// NewRFF draws a seeded map from R^d to R^D for bandwidth σ.
func NewRFF(d, features int, sigma float64, seed uint64) (*RFF, error) {
	if d < 1 || features < 1 {
		return nil, fmt.Errorf("kernel: RFF %d → %d features: both must be ≥ 1: %w", d, features, status.ErrInvalid)
	}
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return nil, fmt.Errorf("kernel: RFF bandwidth σ = %g: want a finite σ > 0: %w", sigma, status.ErrInvalid)
	}
	if err := bigmem.Fits(fmt.Sprintf("RFF's %d×%d frequencies", d, features), 8, d, features); err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	rng := rng.New(seed)
	w := mat.NewDense(d, features, nil)
	for i := range w.RawMatrix().Data {
		w.RawMatrix().Data[i] = rng.NormFloat64() / sigma
	}
	b := make([]float64, features)
	for j := range b {
		b[j] = 2 * math.Pi * rng.Float64()
	}
	return &RFF{W: w, B: b}, nil
}

// Dim is D, the number of features.
func (r *RFF) Dim() int { return len(r.B) }

// Map returns the n×D features of the rows of x (n×d).
func (r *RFF) Map(x *mat.Dense) (*mat.Dense, error) {
	if x == nil || x.IsEmpty() {
		return nil, fmt.Errorf("kernel: RFF of empty data: %w", status.ErrInvalid)
	}
	n, d := x.Dims()
	if wd, _ := r.W.Dims(); d != wd {
		return nil, fmt.Errorf("kernel: RFF built for d = %d, data has %d columns: %w", wd, d, status.ErrInvalid)
	}
	if err := linalg.CheckFinite("kernel: RFF input", x); err != nil {
		return nil, err
	}
	if err := bigmem.Fits(fmt.Sprintf("RFF: %d features of %d points", len(r.B), n), 8, n, len(r.B)); err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	f := mat.NewDense(n, len(r.B), nil)
	linalg.Mul(f, x, r.W)
	scale := math.Sqrt(2 / float64(len(r.B)))
	// The n·D cosines in parallel: single-threaded they took as long as the
	// product before them (docs/measurements.md).
	par.For(0, n, nil, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := f.RawRowView(i)
			norm := 0.0
			for j, v := range row {
				row[j] = scale * math.Cos(v+r.B[j])
				norm += row[j] * row[j]
			}
			if r.Normalize && norm > 0 {
				inv := 1 / math.Sqrt(norm)
				for j := range row {
					row[j] *= inv
				}
			}
		}
	})
	return f, nil
}
