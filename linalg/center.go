package linalg

import (
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/par"
)

// Centering holds the statistics of a training kernel matrix K needed to
// centre it and the kernel rows of new points the same way: the row means
// m_j = (1/n) Σ_i K_ij and the grand mean m̄ = (1/n) Σ_j m_j.
type Centering struct {
	RowMeans []float64
	Mean     float64
}

// CenterKernelInPlace centres the n×n kernel matrix k in place,
// K_ij ← K_ij − m_i − m_j + m̄ (that is, M K M with M = I − 11ᵀ/n), and
// returns the statistics for centring test kernels. Only the upper triangle
// of k is read; both triangles are written.
func CenterKernelInPlace(k *mat.SymDense) (Centering, error) {
	if k == nil || k.IsEmpty() {
		return Centering{}, invalidf("CenterKernelInPlace: empty matrix")
	}
	if err := CheckFinite("CenterKernelInPlace: k", k); err != nil {
		return Centering{}, err
	}
	n := k.SymmetricDim()
	raw := k.RawSymmetric()
	sums := make([]float64, n)
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+n]
		s := row[i]
		for j := i + 1; j < n; j++ {
			s += row[j]
			sums[j] += row[j]
		}
		sums[i] += s
	}
	c := Centering{RowMeans: sums}
	for i := range sums {
		sums[i] /= float64(n)
		c.Mean += sums[i]
	}
	c.Mean /= float64(n)
	means := c.RowMeans
	par.For(0, n, func(i int) float64 { return float64(n - i) }, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+n]
			shift := c.Mean - means[i]
			for j := i; j < n; j++ {
				row[j] += shift - means[j]
			}
		}
	})
	MirrorUpper(n, raw.Data, raw.Stride)
	return c, nil
}

// CenterCross centres, in place, the m×n kernel matrix kx between m new
// points (rows) and the n training points (columns) consistently with the
// training kernel: K_tj ← K_tj − (1/n)Σ_l K_tl − m_j + m̄.
func (c Centering) CenterCross(kx *mat.Dense) error {
	m, n := kx.Dims()
	if n != len(c.RowMeans) {
		return invalidf("CenterCross: kernel has %d columns, training kernel has %d", n, len(c.RowMeans))
	}
	if err := CheckFinite("CenterCross: k", kx); err != nil {
		return err
	}
	raw := kx.RawMatrix()
	for t := 0; t < m; t++ {
		c.centerRow(raw.Data[t*raw.Stride : t*raw.Stride+n])
	}
	return nil
}

// CenterVec centres one kernel row k(x, X) of length n in place.
func (c Centering) CenterVec(kx []float64) error {
	if len(kx) != len(c.RowMeans) {
		return invalidf("CenterVec: length %d, training kernel has %d", len(kx), len(c.RowMeans))
	}
	if err := CheckFiniteSlice("CenterVec: k", kx); err != nil {
		return err
	}
	c.centerRow(kx)
	return nil
}

func (c Centering) centerRow(row []float64) {
	mean := 0.0
	for _, v := range row {
		mean += v
	}
	shift := c.Mean - mean/float64(len(row))
	for j := range row {
		row[j] += shift - c.RowMeans[j]
	}
}

// CenterColumns subtracts each column's mean from the n×d matrix x in place
// and returns the means.
func CenterColumns(x *mat.Dense) []float64 {
	n, d := x.Dims()
	raw := x.RawMatrix()
	means := make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			means[j] += v
		}
	}
	for j := range means {
		means[j] /= float64(n)
	}
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+d]
		for j := range row {
			row[j] -= means[j]
		}
	}
	return means
}
