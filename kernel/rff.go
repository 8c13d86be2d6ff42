package kernel

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"

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
	f := mat.NewDense(n, len(r.B), nil)
	linalg.Mul(f, x, r.W)
	scale := math.Sqrt(2 / float64(len(r.B)))
	// The n·D cosines in parallel: single-threaded they took as long as the
	// product before them (n = 20 000, D = 2000: 1.0 s).
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

// Smoother maps centred kernel vectors back to input space with the kernel
// smoother x̂ = Σ_i w_i x_i / Σ_i w_i over the n training points (rows of
// x). kc holds one centred kernel vector per row (n columns) and rowMeans
// the training kernel's row means. A centred vector does not carry its own
// mean kernel value, so the un-centred values v_i = (k_c)_i + rowMeans_i are
// known only up to one additive constant; the weights fix it so that the
// smallest is zero, w_i = v_i − min_l v_l (exact when the kernel vanishes
// at the farthest training point, as a Gaussian narrower than the data
// does). nearest > 0 keeps only the nearest largest weights. A row whose
// weights sum to less than 1e-12 gets the training mean; the count of such
// rows is returned.
func Smoother(kc *mat.Dense, rowMeans []float64, x *mat.Dense, nearest int) (*mat.Dense, int, error) {
	n, d := x.Dims()
	rows, c := kc.Dims()
	if c != n || len(rowMeans) != n {
		return nil, 0, fmt.Errorf("kernel: smoother: %d kernel entries, %d row means, %d training points: %w", c, len(rowMeans), n, status.ErrInvalid)
	}
	if nearest < 0 || nearest > n {
		return nil, 0, fmt.Errorf("kernel: smoother: nearest = %d: want 0 (all) … %d: %w", nearest, n, status.ErrInvalid)
	}
	if err := linalg.CheckFinite("kernel: smoother input", kc); err != nil {
		return nil, 0, err
	}
	mean := make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range x.RawRowView(i) {
			mean[j] += v / float64(n)
		}
	}
	out := mat.NewDense(rows, d, nil)
	w := make([]float64, n)
	idx := make([]int, n)
	fallback := 0
	for r := 0; r < rows; r++ {
		lo := math.Inf(1)
		for i, v := range kc.RawRowView(r) {
			w[i] = v + rowMeans[i]
			lo = math.Min(lo, w[i])
			idx[i] = i
		}
		for i := range w {
			w[i] -= lo
		}
		if nearest > 0 && nearest < n {
			sort.Slice(idx, func(a, b int) bool { return w[idx[a]] > w[idx[b]] })
			for _, i := range idx[nearest:] {
				w[i] = 0
			}
		}
		sum := 0.0
		for _, v := range w {
			sum += v
		}
		dst := out.RawRowView(r)
		if sum < 1e-12 {
			copy(dst, mean)
			fallback++
			continue
		}
		for i, v := range w {
			if v == 0 {
				continue
			}
			for j, xv := range x.RawRowView(i) {
				dst[j] += v / sum * xv
			}
		}
	}
	return out, fallback, nil
}
