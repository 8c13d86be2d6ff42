package gonum

import (
	klapack "github.com/kdual/kdual/lapack"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
)

// Triangular inverse, solves (full and band) and condition numbers.

// Dtrtri computes the inverse of a triangular matrix: dtrtri on the view
// with the other triangle, no copy.
func (Implementation) Dtrtri(uplo blas.Uplo, diag blas.Diag, n int, a []float64, lda int) (ok bool) {
	switch {
	case uplo != blas.Upper && uplo != blas.Lower:
		panic(badUplo)
	case diag != blas.NonUnit && diag != blas.Unit:
		panic(badDiag)
	case n < 0:
		panic(nLT0)
	case lda < max(1, n):
		panic(badLdA)
	}
	if n == 0 {
		return true
	}
	if len(a) < (n-1)*lda+n {
		panic(shortA)
	}
	return klapack.Dtrtri(uploFlip(uplo), diagByte(diag), n, a, lda) == nil
}

// Dtrtrs solves op(A) X = B for triangular A: dtrtrs on the view of A with
// the other triangle and the other op; B is copied to column-major unless it
// is one contiguous column.
func (Implementation) Dtrtrs(uplo blas.Uplo, trans blas.Transpose, diag blas.Diag, n, nrhs int, a []float64, lda int, b []float64, ldb int) (ok bool) {
	switch {
	case uplo != blas.Upper && uplo != blas.Lower:
		panic(badUplo)
	case trans != blas.NoTrans && trans != blas.Trans && trans != blas.ConjTrans:
		panic(badTrans)
	case diag != blas.NonUnit && diag != blas.Unit:
		panic(badDiag)
	case n < 0:
		panic(nLT0)
	case nrhs < 0:
		panic(nrhsLT0)
	case lda < max(1, n):
		panic(badLdA)
	case ldb < max(1, nrhs):
		panic(badLdB)
	}
	if n == 0 {
		return true
	}
	switch {
	case len(a) < (n-1)*lda+n:
		panic(shortA)
	case len(b) < (n-1)*ldb+nrhs:
		panic(shortB)
	}
	if nrhs == 0 {
		return singularDiag(diag, n, a, lda+1)
	}
	return onColumns(n, nrhs, b, ldb, func(bc []float64) error {
		return klapack.Dtrtrs(uploFlip(uplo), transFlip(trans), diagByte(diag), n, nrhs, a, lda, bc, n)
	}) == nil
}

// singularDiag reports false when a non-unit diagonal (stride inc) has an
// exact zero: the answer LAPACK gives for a solve with no right-hand sides.
func singularDiag(diag blas.Diag, n int, a []float64, inc int) bool {
	if diag == blas.Unit {
		return true
	}
	for i := 0; i < n; i++ {
		if a[i*inc] == 0 {
			return false
		}
	}
	return true
}

// Dtbtrs solves op(A) X = B for a triangular band matrix. gonum's row-major
// band storage of one triangle is LAPACK's column-major band storage of the
// other triangle of Aᵀ, so dtbtrs runs on the band in place with the other
// op; B is copied to column-major unless it is one contiguous column.
func (Implementation) Dtbtrs(uplo blas.Uplo, trans blas.Transpose, diag blas.Diag, n, kd, nrhs int, a []float64, lda int, b []float64, ldb int) (ok bool) {
	switch {
	case uplo != blas.Upper && uplo != blas.Lower:
		panic(badUplo)
	case trans != blas.NoTrans && trans != blas.Trans && trans != blas.ConjTrans:
		panic(badTrans)
	case diag != blas.NonUnit && diag != blas.Unit:
		panic(badDiag)
	case n < 0:
		panic(nLT0)
	case kd < 0:
		panic(kdLT0)
	case nrhs < 0:
		panic(nrhsLT0)
	case lda < kd+1:
		panic(badLdA)
	case ldb < max(1, nrhs):
		panic(badLdB)
	}
	if n == 0 {
		return true
	}
	switch {
	case len(a) < (n-1)*lda+kd+1:
		panic(shortA)
	case len(b) < (n-1)*ldb+nrhs:
		panic(shortB)
	}
	if nrhs == 0 {
		off := 0
		if uplo == blas.Lower {
			off = kd
		}
		return singularDiag(diag, n, a[off:], lda)
	}
	return onColumns(n, nrhs, b, ldb, func(bc []float64) error {
		return klapack.Dtbtrs(uploFlip(uplo), transFlip(trans), diagByte(diag), n, kd, nrhs, a, lda, bc, n)
	}) == nil
}

// Dtrcon estimates the reciprocal condition number of a triangular matrix:
// dtrcon on the view with the other triangle and the other norm (the 1-norm
// of A is the ∞-norm of Aᵀ), no copy.
func (Implementation) Dtrcon(norm lapack.MatrixNorm, uplo blas.Uplo, diag blas.Diag, n int, a []float64, lda int, work []float64, iwork []int) float64 {
	switch {
	case norm != lapack.MaxColumnSum && norm != lapack.MaxRowSum:
		panic(badNorm)
	case uplo != blas.Upper && uplo != blas.Lower:
		panic(badUplo)
	case diag != blas.NonUnit && diag != blas.Unit:
		panic(badDiag)
	case n < 0:
		panic(nLT0)
	case lda < max(1, n):
		panic(badLdA)
	}
	if n == 0 {
		return 1
	}
	switch {
	case len(a) < (n-1)*lda+n:
		panic(shortA)
	case len(work) < 3*n:
		panic(shortWork)
	case len(iwork) < n:
		panic(shortIWork)
	}
	return klapack.Dtrcon(normFlip(norm), uploFlip(uplo), diagByte(diag), n, a, lda)
}
