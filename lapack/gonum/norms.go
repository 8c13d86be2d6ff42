package gonum

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"

	"github.com/kdual/kdual/internal/par"
	klapack "github.com/kdual/kdual/lapack"
)

// Norms and permutations, all on the column-major view without a copy.

func checkNorm(norm lapack.MatrixNorm) {
	if norm != lapack.MaxRowSum && norm != lapack.MaxColumnSum && norm != lapack.Frobenius && norm != lapack.MaxAbs {
		panic(badNorm)
	}
}

// Dlange returns a norm of the m×n matrix A: dlange on the view with the
// 1- and ∞-norms swapped; from langeParallelFrom entries on, the largest
// entry and the 1- and ∞-norms are summed in Go on parallel goroutines
// (langeParallel).
func (Implementation) Dlange(norm lapack.MatrixNorm, m, n int, a []float64, lda int, work []float64) float64 {
	checkNorm(norm)
	switch {
	case m < 0:
		panic(mLT0)
	case n < 0:
		panic(nLT0)
	case lda < max(1, n):
		panic(badLdA)
	}
	if m == 0 || n == 0 {
		return 0
	}
	switch {
	case len(a) < (m-1)*lda+n:
		panic(badLdA)
	case norm == lapack.MaxColumnSum && len(work) < n:
		panic(shortWork)
	}
	if norm != lapack.Frobenius && m*n >= langeParallelFrom {
		return langeParallel(norm, m, n, a, lda)
	}
	return klapack.Dlange(normFlip(norm), n, m, a, lda)
}

// langeParallelFrom is the entry count from which Dlange sums in parallel:
// dlange is one pass on one thread (inside every mat.LU), where two
// goroutines share the memory bandwidth (docs/measurements.md).
const langeParallelFrom = 1 << 18

// langeParallel is Dlange's largest entry, largest column sum or largest
// row sum on parallel goroutines: columns in bands for the column sums
// (each sum in row order, as dlange adds them), rows in bands otherwise. A
// NaN anywhere gives NaN, as dlange's DISNAN tests do.
func langeParallel(norm lapack.MatrixNorm, m, n int, a []float64, lda int) float64 {
	if norm == lapack.MaxColumnSum {
		const band = 128
		nb := (n + band - 1) / band
		best := make([]float64, nb)
		par.Each(0, nb, band, func(b int, sums []float64) {
			j0, j1 := b*band, min(b*band+band, n)
			sums = sums[:j1-j0]
			clear(sums)
			for i := 0; i < m; i++ {
				for k, v := range a[i*lda+j0 : i*lda+j1] {
					sums[k] += math.Abs(v)
				}
			}
			best[b] = maxOrNaN(sums)
		})
		return maxOrNaN(best)
	}
	const band = 64
	nb := (m + band - 1) / band
	best := make([]float64, nb)
	par.Each(0, nb, 0, func(b int, _ []float64) {
		v := 0.0
		for i := b * band; i < min(b*band+band, m); i++ {
			row := a[i*lda : i*lda+n]
			if norm == lapack.MaxAbs {
				v = maxAbsOrNaN(v, row)
				continue
			}
			s := 0.0
			for _, x := range row {
				s += math.Abs(x)
			}
			if !math.IsNaN(v) && !(s <= v) {
				v = s // a NaN sum is kept, and then nothing replaces it
			}
		}
		best[b] = v
	})
	return maxOrNaN(best)
}

// maxOrNaN is the largest of x, or NaN if any is NaN.
func maxOrNaN(x []float64) float64 {
	return maxAbsOrNaN(0, x)
}

// maxAbsOrNaN is the largest of v and |x_i|, or NaN if v or any x_i is NaN.
func maxAbsOrNaN(v float64, x []float64) float64 {
	if math.IsNaN(v) {
		return v
	}
	for _, e := range x {
		e = math.Abs(e)
		if e > v {
			v = e
		} else if math.IsNaN(e) {
			return e
		}
	}
	return v
}

// Dlansy returns a norm of the symmetric matrix in one triangle of A: dlansy
// on the view with the other triangle.
func (Implementation) Dlansy(norm lapack.MatrixNorm, uplo blas.Uplo, n int, a []float64, lda int, work []float64) float64 {
	checkNorm(norm)
	switch {
	case uplo != blas.Upper && uplo != blas.Lower:
		panic(badUplo)
	case n < 0:
		panic(nLT0)
	case lda < max(1, n):
		panic(badLdA)
	}
	if n == 0 {
		return 0
	}
	switch {
	case len(a) < (n-1)*lda+n:
		panic(shortA)
	case (norm == lapack.MaxColumnSum || norm == lapack.MaxRowSum) && len(work) < n:
		panic(shortWork)
	}
	return klapack.Dlansy(byte(norm), uploFlip(uplo), n, a, lda)
}

// Dlantr returns a norm of the m×n trapezoidal matrix A: dlantr on the view
// with the other triangle and the 1- and ∞-norms swapped.
func (Implementation) Dlantr(norm lapack.MatrixNorm, uplo blas.Uplo, diag blas.Diag, m, n int, a []float64, lda int, work []float64) float64 {
	checkNorm(norm)
	switch {
	case uplo != blas.Upper && uplo != blas.Lower:
		panic(badUplo)
	case diag != blas.Unit && diag != blas.NonUnit:
		panic(badDiag)
	case m < 0:
		panic(mLT0)
	case n < 0:
		panic(nLT0)
	case lda < max(1, n):
		panic(badLdA)
	}
	if min(m, n) == 0 {
		return 0
	}
	switch {
	case len(a) < (m-1)*lda+n:
		panic(shortA)
	case norm == lapack.MaxColumnSum && len(work) < n:
		panic(shortWork)
	}
	return klapack.Dlantr(normFlip(norm), uploFlip(uplo), diagByte(diag), n, m, a, lda)
}

// Dlapmr permutes the rows of X: the rows of X are the columns of the view,
// so this is dlapmt on the view.
func (Implementation) Dlapmr(forward bool, m, n int, x []float64, ldx int, k []int) {
	switch {
	case m < 0:
		panic(mLT0)
	case n < 0:
		panic(nLT0)
	case ldx < max(1, n):
		panic(badLdX)
	}
	if m == 0 || n == 0 {
		return
	}
	switch {
	case len(x) < (m-1)*ldx+n:
		panic(shortX)
	case len(k) != m:
		panic(badLenK)
	}
	if m == 1 {
		return
	}
	klapack.Dlapmt(forward, n, m, x, ldx, k)
}

// Dlapmt permutes the columns of X: dlapmr on the view.
func (Implementation) Dlapmt(forward bool, m, n int, x []float64, ldx int, k []int) {
	switch {
	case m < 0:
		panic(mLT0)
	case n < 0:
		panic(nLT0)
	case ldx < max(1, n):
		panic(badLdX)
	}
	if m == 0 || n == 0 {
		return
	}
	switch {
	case len(x) < (m-1)*ldx+n:
		panic(shortX)
	case len(k) != n:
		panic(badLenK)
	}
	if n == 1 {
		return
	}
	klapack.Dlapmr(forward, n, m, x, ldx, k)
}
