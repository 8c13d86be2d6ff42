package kernel

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// The kernel smoother: the pre-image of a point of kernel space as a
// weighted mean of training points (ppca's and rkm's pre-images; kpca's
// learned pre-images are kernel ridge regression, models/kpca).

// DiagonalMean is the mean diagonal tr(K)/n of a kernel matrix K from its
// doubly centred form K_c (symmetric n×n) and the centring's statistics:
// K_ii = (K_c)_ii + 2r_i − μ and the r_i average to μ, so tr(K)/n =
// tr(K_c)/n + μ. It is Smoother's scale.
func DiagonalMean(kc *mat.SymDense, c linalg.Centering) float64 {
	return mat.Trace(kc)/float64(kc.SymmetricDim()) + c.Mean
}

// Smoother maps centred kernel vectors back to input space with the kernel
// smoother x̂ = Σ_i w_i x_i / Σ_i w_i over the n training points (rows of
// x). kc holds one centred kernel vector per row (n columns) and rowMeans
// the training kernel's row means. A centred vector does not carry its own
// mean kernel value, so the un-centred values v_i = (k_c)_i + rowMeans_i are
// known only up to one additive constant; the weights fix it so that the
// smallest is zero, w_i = v_i − min_l v_l (exact when the kernel vanishes
// at the farthest training point, as a Gaussian narrower than the data
// does). nearest > 0 keeps only the nearest largest weights. scale is the
// training kernel's mean diagonal tr(K)/n (1 for the exponential kernels):
// a row whose weights sum to less than 1e-12·scale gets the training mean
// (its kernel vector is rounding), and the count of such rows is returned.
func Smoother(kc *mat.Dense, rowMeans []float64, x *mat.Dense, nearest int, scale float64) (*mat.Dense, int, error) {
	n, d := x.Dims()
	rows, c := kc.Dims()
	if c != n || len(rowMeans) != n {
		return nil, 0, fmt.Errorf("kernel: smoother: %d kernel entries, %d row means, %d training points: %w", c, len(rowMeans), n, status.ErrInvalid)
	}
	if !(scale >= 0) || math.IsInf(scale, 0) {
		return nil, 0, fmt.Errorf("kernel: smoother: scale %g: want the kernel's mean diagonal, finite and ≥ 0: %w", scale, status.ErrInvalid)
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
		if !(sum >= 1e-12*scale) || sum == 0 {
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
