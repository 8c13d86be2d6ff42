package gonum

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"

	klapack "github.com/kdual/kdual/lapack"
)

// Cholesky, LU and triangular factorisations, solves and condition numbers.

// Dpotrf computes the Cholesky factorisation of a symmetric positive
// definite matrix (gonum semantics). It runs LAPACK's dpotrf on the
// column-major view with the other triangle: no copy.
func (Implementation) Dpotrf(ul blas.Uplo, n int, a []float64, lda int) (ok bool) {
	switch {
	case ul != blas.Upper && ul != blas.Lower:
		panic(badUplo)
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
	if nonFiniteTriangle(ul, n, a, lda, false) {
		// gonum's Dpotrf fails on a NaN pivot; OpenBLAS's compares
		// pivots with ≤ 0 only and would say ok.
		return false
	}
	return klapack.Dpotrf(uploFlip(ul), n, a, lda) == nil
}

// Dpotri computes the inverse of a symmetric positive definite matrix from
// its Cholesky factor: dpotri on the view, no copy.
func (Implementation) Dpotri(ul blas.Uplo, n int, a []float64, lda int) (ok bool) {
	switch {
	case ul != blas.Upper && ul != blas.Lower:
		panic(badUplo)
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
	return klapack.Dpotri(uploFlip(ul), n, a, lda) == nil
}

// Dpotrs solves A X = B with the Cholesky factor from Dpotrf: dpotrs on the
// view of the factor; B is copied to column-major unless it is one
// contiguous column.
func (Implementation) Dpotrs(ul blas.Uplo, n, nrhs int, a []float64, lda int, b []float64, ldb int) {
	switch {
	case ul != blas.Upper && ul != blas.Lower:
		panic(badUplo)
	case n < 0:
		panic(nLT0)
	case nrhs < 0:
		panic(nrhsLT0)
	case lda < max(1, n):
		panic(badLdA)
	case ldb < max(1, nrhs):
		panic(badLdB)
	}
	if n == 0 || nrhs == 0 {
		return
	}
	switch {
	case len(a) < (n-1)*lda+n:
		panic(shortA)
	case len(b) < (n-1)*ldb+nrhs:
		panic(shortB)
	}
	onColumns(n, nrhs, b, ldb, func(bc []float64) error {
		klapack.Dpotrs(uploFlip(ul), n, nrhs, a, lda, bc, n)
		return nil
	})
}

// Dpocon estimates the reciprocal condition number of a symmetric positive
// definite matrix from its Cholesky factor: dpocon on the view, no copy.
func (Implementation) Dpocon(uplo blas.Uplo, n int, a []float64, lda int, anorm float64, work []float64, iwork []int) float64 {
	switch {
	case uplo != blas.Upper && uplo != blas.Lower:
		panic(badUplo)
	case n < 0:
		panic(nLT0)
	case lda < max(1, n):
		panic(badLdA)
	case anorm < 0:
		panic(negANorm)
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
	if r, done := conditionEdge(anorm); done {
		return r
	}
	return klapack.Dpocon(uploFlip(uplo), n, a, lda, anorm)
}

// onColumns runs solve on the right-hand sides B (n×nrhs, row-major, stride
// ldb) as a column-major n×nrhs matrix with leading dimension n: B itself
// when it is one contiguous column, else a copy that is written back when
// solve succeeds.
func onColumns(n, nrhs int, b []float64, ldb int, solve func(bc []float64) error) error {
	if nrhs == 1 && ldb == 1 {
		return solve(b)
	}
	bc := colMajor(n, nrhs, b, ldb)
	err := solve(bc)
	if err == nil {
		fromColMajor(n, nrhs, bc, b, ldb)
	}
	return err
}

// conditionEdge handles the norms for which no estimate is needed: a NaN
// norm gives NaN, a zero or infinite one gives 0.
func conditionEdge(anorm float64) (float64, bool) {
	switch {
	case math.IsNaN(anorm):
		return anorm, true
	case anorm == 0 || math.IsInf(anorm, 1):
		return 0, true
	}
	return 0, false
}

// Dpstrf computes the Cholesky factorisation with complete pivoting of a
// symmetric positive semidefinite matrix: dpstrf on the view, no copy;
// pivots are 0-based.
func (Implementation) Dpstrf(uplo blas.Uplo, n int, a []float64, lda int, piv []int, tol float64, work []float64) (rank int, ok bool) {
	switch {
	case uplo != blas.Upper && uplo != blas.Lower:
		panic(badUplo)
	case n < 0:
		panic(nLT0)
	case lda < max(1, n):
		panic(badLdA)
	}
	if n == 0 {
		return 0, true
	}
	switch {
	case len(a) < (n-1)*lda+n:
		panic(shortA)
	case len(piv) != n:
		panic(badLenPiv)
	case len(work) < 2*n:
		panic(shortWork)
	}
	return klapack.Dpstrf(uploFlip(uplo), n, a, lda, piv, tol)
}

// Dpbtrf computes the Cholesky factorisation of a symmetric positive
// definite band matrix. gonum's row-major upper band storage is, byte for
// byte, LAPACK's column-major lower band storage of the same (symmetric)
// matrix, so dpbtrf runs in place with the other triangle.
func (Implementation) Dpbtrf(uplo blas.Uplo, n, kd int, ab []float64, ldab int) (ok bool) {
	switch {
	case uplo != blas.Upper && uplo != blas.Lower:
		panic(badUplo)
	case n < 0:
		panic(nLT0)
	case kd < 0:
		panic(kdLT0)
	case ldab < kd+1:
		panic(badLdA)
	}
	if n == 0 {
		return true
	}
	if len(ab) < (n-1)*ldab+kd+1 {
		panic(shortAB)
	}
	return klapack.Dpbtrf(uploFlip(uplo), n, kd, ab, ldab) == nil
}

// Dpbtrs solves A X = B with the band Cholesky factor from Dpbtrf: dpbtrs
// on the band in place; B is copied to column-major unless it is one
// contiguous column.
func (Implementation) Dpbtrs(uplo blas.Uplo, n, kd, nrhs int, ab []float64, ldab int, b []float64, ldb int) {
	switch {
	case uplo != blas.Upper && uplo != blas.Lower:
		panic(badUplo)
	case n < 0:
		panic(nLT0)
	case kd < 0:
		panic(kdLT0)
	case nrhs < 0:
		panic(nrhsLT0)
	case ldab < kd+1:
		panic(badLdA)
	case ldb < max(1, nrhs):
		panic(badLdB)
	}
	if n == 0 || nrhs == 0 {
		return
	}
	switch {
	case len(ab) < (n-1)*ldab+kd+1:
		panic(shortAB)
	case len(b) < (n-1)*ldb+nrhs:
		panic(shortB)
	}
	onColumns(n, nrhs, b, ldb, func(bc []float64) error {
		klapack.Dpbtrs(uploFlip(uplo), n, kd, nrhs, ab, ldab, bc, n)
		return nil
	})
}

// Dpbcon estimates the reciprocal condition number of a symmetric positive
// definite band matrix from its factor: dpbcon on the band in place.
func (Implementation) Dpbcon(uplo blas.Uplo, n, kd int, ab []float64, ldab int, anorm float64, work []float64, iwork []int) float64 {
	switch {
	case uplo != blas.Upper && uplo != blas.Lower:
		panic(badUplo)
	case n < 0:
		panic(nLT0)
	case kd < 0:
		panic(kdLT0)
	case ldab < kd+1:
		panic(badLdA)
	case anorm < 0:
		panic(badNorm)
	}
	if n == 0 {
		return 1
	}
	switch {
	case len(ab) < (n-1)*ldab+kd+1:
		panic(shortAB)
	case len(work) < 3*n:
		panic(shortWork)
	case len(iwork) < n:
		panic(shortIWork)
	}
	if r, done := conditionEdge(anorm); done {
		return r
	}
	return klapack.Dpbcon(uploFlip(uplo), n, kd, ab, ldab, anorm)
}

// Dgetrf computes the LU factorisation with partial (row) pivoting. Row
// pivoting of A is column pivoting of the view Aᵀ, which LAPACK does not
// offer, so the matrix is transposed (in place when square), factored by
// dgetrf and transposed back; pivots are 0-based.
func (Implementation) Dgetrf(m, n int, a []float64, lda int, ipiv []int) (ok bool) {
	mn := min(m, n)
	switch {
	case m < 0:
		panic(mLT0)
	case n < 0:
		panic(nLT0)
	case lda < max(1, n):
		panic(badLdA)
	}
	if mn == 0 {
		return true
	}
	switch {
	case len(a) < (m-1)*lda+n:
		panic(shortA)
	case len(ipiv) != mn:
		panic(badLenIpiv)
	}
	if m == n {
		transposeSquare(n, a, lda)
		err := klapack.Dgetrf(n, n, a, lda, ipiv)
		transposeSquare(n, a, lda)
		return err == nil
	}
	ac := colMajor(m, n, a, lda)
	err := klapack.Dgetrf(m, n, ac, m, ipiv)
	fromColMajor(m, n, ac, a, lda)
	return err == nil
}

// Dgetri computes the inverse from the LU factors of Dgetrf: transposed in
// place, dgetri, transposed back.
func (impl Implementation) Dgetri(n int, a []float64, lda int, ipiv []int, work []float64, lwork int) (ok bool) {
	switch {
	case n < 0:
		panic(nLT0)
	case lda < max(1, n):
		panic(badLdA)
	case lwork < max(1, n) && lwork != -1:
		panic(badLWork)
	case len(work) < max(1, lwork):
		panic(shortWork)
	}
	if n == 0 {
		work[0] = 1
		return true
	}
	if lwork == -1 {
		return impl.Implementation.Dgetri(n, a, lda, ipiv, work, -1)
	}
	switch {
	case len(a) < (n-1)*lda+n:
		panic(shortA)
	case len(ipiv) != n:
		panic(badLenIpiv)
	case !pivotsInRange(ipiv, n):
		panic(badIpiv)
	}
	transposeSquare(n, a, lda)
	err := klapack.NewWorkspace(work[:lwork]).Dgetri(n, a, lda, ipiv)
	transposeSquare(n, a, lda)
	return err == nil
}

// Dgetrs solves op(A) X = B with the LU factors of Dgetrf: the factors and
// B are copied to column-major for dgetrs and X copied back.
func (Implementation) Dgetrs(trans blas.Transpose, n, nrhs int, a []float64, lda int, ipiv []int, b []float64, ldb int) {
	switch {
	case trans != blas.NoTrans && trans != blas.Trans && trans != blas.ConjTrans:
		panic(badTrans)
	case n < 0:
		panic(nLT0)
	case nrhs < 0:
		panic(nrhsLT0)
	case lda < max(1, n):
		panic(badLdA)
	case ldb < max(1, nrhs):
		panic(badLdB)
	}
	if n == 0 || nrhs == 0 {
		return
	}
	switch {
	case len(a) < (n-1)*lda+n:
		panic(shortA)
	case len(b) < (n-1)*ldb+nrhs:
		panic(shortB)
	case len(ipiv) != n:
		panic(badLenIpiv)
	case !pivotsInRange(ipiv, n):
		panic(badIpiv)
	}
	ac := colMajor(n, n, a, lda)
	onColumns(n, nrhs, b, ldb, func(bc []float64) error {
		klapack.Dgetrs(transByte(trans), n, nrhs, ac, n, ipiv, bc, n)
		return nil
	})
}

// Dgecon estimates the reciprocal condition number of a general matrix from
// its LU factors. It is LAPACK's dgecon run on the view without a copy: the
// same estimator (dlacn2) and robust triangular solves (dlatrs) from
// libopenblas, with the factors read as the view holds them (L as the unit
// upper triangle Lᵀ, U as the lower triangle Uᵀ, each solve with the other
// op).
func (Implementation) Dgecon(norm lapack.MatrixNorm, n int, a []float64, lda int, anorm float64, work []float64, iwork []int) float64 {
	switch {
	case norm != lapack.MaxColumnSum && norm != lapack.MaxRowSum:
		panic(badNorm)
	case n < 0:
		panic(nLT0)
	case lda < max(1, n):
		panic(badLdA)
	case anorm < 0:
		panic(negANorm)
	}
	if n == 0 {
		return 1
	}
	switch {
	case len(a) < (n-1)*lda+n:
		panic(shortA)
	case len(work) < 4*n:
		panic(shortWork)
	case len(iwork) < n:
		panic(shortIWork)
	}
	if r, done := conditionEdge(anorm); done {
		return r
	}
	const smlnum = 0x1p-1022 // dlamch('Safe minimum')
	kase1 := 1
	if norm == lapack.MaxRowSum {
		kase1 = 2
	}
	cnormL, cnormU, saved := work[:n], work[n:2*n], work[2*n:3*n]
	normin := byte('N')
	est := klapack.NewCond1(n)
	for {
		x, kase := est.Next()
		if kase == 0 {
			break
		}
		// The plain triangular solves first (dtrsv: dlatrs's careful
		// column loop and its norms took 2–3 times as long at n = 2000);
		// dlatrs, which scales to prevent overflow, only when they did
		// not give a finite result well inside the range.
		copy(saved, x)
		if kase == kase1 {
			// x ← U⁻¹ L⁻¹ x.
			klapack.Dtrsv('U', 'T', 'U', n, a, lda, x)
			klapack.Dtrsv('L', 'T', 'N', n, a, lda, x)
		} else {
			// x ← L⁻ᵀ U⁻ᵀ x.
			klapack.Dtrsv('L', 'N', 'N', n, a, lda, x)
			klapack.Dtrsv('U', 'N', 'U', n, a, lda, x)
		}
		if solvedInRange(x) {
			continue
		}
		copy(x, saved)
		var sl, su float64
		if kase == kase1 {
			sl = klapack.Dlatrs('U', 'T', 'U', normin, n, a, lda, x, cnormL)
			su = klapack.Dlatrs('L', 'T', 'N', normin, n, a, lda, x, cnormU)
		} else {
			su = klapack.Dlatrs('L', 'N', 'N', normin, n, a, lda, x, cnormU)
			sl = klapack.Dlatrs('U', 'N', 'U', normin, n, a, lda, x, cnormL)
		}
		normin = 'Y'
		if scale := sl * su; scale != 1 {
			big := 0.0
			for _, v := range x {
				big = math.Max(big, math.Abs(v))
			}
			if scale < big*smlnum || scale == 0 {
				return 0
			}
			klapack.Drscl(n, scale, x)
		}
	}
	ainvnm := est.Est()
	if ainvnm == 0 {
		return 0
	}
	return (1 / ainvnm) / anorm
}

// solvedInRange reports whether every entry of x is finite and at most
// 2^900 in magnitude, far below dlatrs's overflow threshold (about
// 2^969): the plain solve then did not overflow, and what dlatrs would
// have returned, x·s with its scale s (which Dgecon divides out again),
// is the same vector up to rounding.
func solvedInRange(x []float64) bool {
	const limit = 0x1p900
	for _, v := range x {
		if !(math.Abs(v) <= limit) {
			return false
		}
	}
	return true
}

// pivotsInRange reports whether every pivot index is in [0, n): LAPACK
// would read and write outside the matrix for any other (gonum's own
// implementation fails with a runtime error there).
func pivotsInRange(ipiv []int, n int) bool {
	for _, p := range ipiv {
		if p < 0 || p >= n {
			return false
		}
	}
	return true
}
