package gonum

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"

	klapack "github.com/kdual/kdual/lapack"
)

// Norms and permutations, all on the column-major view without a copy.

func checkNorm(norm lapack.MatrixNorm) {
	if norm != lapack.MaxRowSum && norm != lapack.MaxColumnSum && norm != lapack.Frobenius && norm != lapack.MaxAbs {
		panic(badNorm)
	}
}

// Dlange returns a norm of the m×n matrix A: dlange on the view with the
// 1- and ∞-norms swapped.
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
	return klapack.Dlange(normFlip(norm), n, m, a, lda)
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
