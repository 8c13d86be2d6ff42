package lapack

// #include "lapack.h"
import "C"

import "fmt"

// This file binds the LU, Cholesky and triangular solvers, the condition
// estimators, the norms and the permutations that package lapack/gonum needs.
// All matrices are column-major; pivots are 0-based in Go.

func singular(i int) string { return fmt.Sprintf("diagonal entry %d of the factor is exactly zero", i) }

func notPD(i int) string { return fmt.Sprintf("the leading minor of order %d is not positive", i) }

// pivots32 converts 0-based Go pivots to LAPACK's 1-based 32-bit ones.
func pivots32(ipiv []int, n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(cint(ipiv[i] + 1))
	}
	return p
}

func checkNorm(r string, norm byte) { checkJob(r, norm, "MO1IF") }

// Dgetri overwrites a, holding the LU factors from Dgetrf with pivots ipiv,
// with the inverse of the original matrix. An exactly zero U[i,i] gives
// ErrSingular and leaves a unusable as an inverse.
func (ws *Workspace) Dgetri(n int, a []float64, lda int, ipiv []int) error {
	const r = "dgetri"
	checkDim(r, "n", n)
	checkMatrix(r, "a", n, n, a, lda)
	checkLen(r, "ipiv", len(ipiv), n)
	if n == 0 {
		return nil
	}
	cn, clda := cint(n), cint(lda)
	piv := pivots32(ipiv, n)
	var info C.int
	q := make([]float64, 1)
	lw := C.int(-1)
	C.dgetri_(&cn, dptr(a), &clda, iptr(piv), dptr(q), &lw, &info)
	checkInfo(r, int(info), nil, nil)
	work := ws.floats(lworkFrom(q[0]))
	lw = cint(len(work))
	C.dgetri_(&cn, dptr(a), &clda, iptr(piv), dptr(work), &lw, &info)
	return checkInfo(r, int(info), ErrSingular, singular)
}

// Dgetrs solves op(A) X = B (trans 'N', 'T' or 'C') with the LU factors and
// pivots from Dgetrf; b (n×nrhs) is overwritten by X.
func Dgetrs(trans byte, n, nrhs int, a []float64, lda int, ipiv []int, b []float64, ldb int) {
	const r = "dgetrs"
	checkJob(r, trans, "NTC")
	checkDim(r, "n", n)
	checkDim(r, "nrhs", nrhs)
	checkMatrix(r, "a", n, n, a, lda)
	checkLen(r, "ipiv", len(ipiv), n)
	checkMatrix(r, "b", n, nrhs, b, ldb)
	if n == 0 || nrhs == 0 {
		return
	}
	ct, cn, cr, clda, cldb := cchar(trans), cint(n), cint(nrhs), cint(lda), cint(ldb)
	piv := pivots32(ipiv, n)
	var info C.int
	C.dgetrs_(&ct, &cn, &cr, dptr(a), &clda, iptr(piv), dptr(b), &cldb, &info, one)
	checkInfo(r, int(info), nil, nil)
}

// Dgecon estimates the reciprocal condition number, in the 1-norm (norm 'O'
// or '1') or the ∞-norm ('I'), of a general matrix from its LU factors (from
// Dgetrf) and the norm anorm of the original matrix.
func Dgecon(norm byte, n int, a []float64, lda int, anorm float64) float64 {
	const r = "dgecon"
	checkJob(r, norm, "O1I")
	checkDim(r, "n", n)
	checkMatrix(r, "a", n, n, a, lda)
	if n == 0 {
		return 1
	}
	cnorm, cn, clda, can := cchar(norm), cint(n), cint(lda), C.double(anorm)
	work := make([]float64, 4*n)
	iwork := make([]int32, n)
	var rcond C.double
	var info C.int
	C.dgecon_(&cnorm, &cn, dptr(a), &clda, &can, &rcond, dptr(work), iptr(iwork), &info, one)
	checkInfo(r, int(info), nil, nil)
	return float64(rcond)
}

// Dpotri overwrites the Cholesky factor from Dpotrf (triangle uplo) with the
// same triangle of the inverse of the original matrix. A zero diagonal entry
// of the factor gives ErrSingular.
func Dpotri(uplo byte, n int, a []float64, lda int) error {
	const r = "dpotri"
	checkJob(r, uplo, "UL")
	checkDim(r, "n", n)
	checkMatrix(r, "a", n, n, a, lda)
	if n == 0 {
		return nil
	}
	cu, cn, clda := cchar(uplo), cint(n), cint(lda)
	var info C.int
	C.dpotri_(&cu, &cn, dptr(a), &clda, &info, one)
	return checkInfo(r, int(info), ErrSingular, singular)
}

// Dpocon estimates the reciprocal 1-norm condition number of a symmetric
// positive definite matrix from its Cholesky factor (Dpotrf, triangle uplo)
// and its 1-norm anorm.
func Dpocon(uplo byte, n int, a []float64, lda int, anorm float64) float64 {
	const r = "dpocon"
	checkJob(r, uplo, "UL")
	checkDim(r, "n", n)
	checkMatrix(r, "a", n, n, a, lda)
	if n == 0 {
		return 1
	}
	cu, cn, clda, can := cchar(uplo), cint(n), cint(lda), C.double(anorm)
	work := make([]float64, 3*n)
	iwork := make([]int32, n)
	var rcond C.double
	var info C.int
	C.dpocon_(&cu, &cn, dptr(a), &clda, &can, &rcond, dptr(work), iptr(iwork), &info, one)
	checkInfo(r, int(info), nil, nil)
	return float64(rcond)
}

// Dpbtrf computes the Cholesky factor of the n×n symmetric positive definite
// band matrix with kd super- (or sub-) diagonals in LAPACK band storage ab
// (kd+1 rows, leading dimension ldab), overwriting it.
func Dpbtrf(uplo byte, n, kd int, ab []float64, ldab int) error {
	const r = "dpbtrf"
	checkJob(r, uplo, "UL")
	checkDim(r, "n", n)
	checkDim(r, "kd", kd)
	checkMatrix(r, "ab", kd+1, n, ab, ldab)
	if n == 0 {
		return nil
	}
	cu, cn, ckd, cld := cchar(uplo), cint(n), cint(kd), cint(ldab)
	var info C.int
	C.dpbtrf_(&cu, &cn, &ckd, dptr(ab), &cld, &info, one)
	return checkInfo(r, int(info), ErrNotPositiveDefinite, notPD)
}

// Dpbtrs solves A X = B with the band Cholesky factor from Dpbtrf; b (n×nrhs)
// is overwritten by X.
func Dpbtrs(uplo byte, n, kd, nrhs int, ab []float64, ldab int, b []float64, ldb int) {
	const r = "dpbtrs"
	checkJob(r, uplo, "UL")
	checkDim(r, "n", n)
	checkDim(r, "kd", kd)
	checkDim(r, "nrhs", nrhs)
	checkMatrix(r, "ab", kd+1, n, ab, ldab)
	checkMatrix(r, "b", n, nrhs, b, ldb)
	if n == 0 || nrhs == 0 {
		return
	}
	cu, cn, ckd, cr, cld, cldb := cchar(uplo), cint(n), cint(kd), cint(nrhs), cint(ldab), cint(ldb)
	var info C.int
	C.dpbtrs_(&cu, &cn, &ckd, &cr, dptr(ab), &cld, dptr(b), &cldb, &info, one)
	checkInfo(r, int(info), nil, nil)
}

// Dpbcon estimates the reciprocal 1-norm condition number of a symmetric
// positive definite band matrix from its factor (Dpbtrf) and 1-norm anorm.
func Dpbcon(uplo byte, n, kd int, ab []float64, ldab int, anorm float64) float64 {
	const r = "dpbcon"
	checkJob(r, uplo, "UL")
	checkDim(r, "n", n)
	checkDim(r, "kd", kd)
	checkMatrix(r, "ab", kd+1, n, ab, ldab)
	if n == 0 {
		return 1
	}
	cu, cn, ckd, cld, can := cchar(uplo), cint(n), cint(kd), cint(ldab), C.double(anorm)
	work := make([]float64, 3*n)
	iwork := make([]int32, n)
	var rcond C.double
	var info C.int
	C.dpbcon_(&cu, &cn, &ckd, dptr(ab), &cld, &can, &rcond, dptr(work), iptr(iwork), &info, one)
	checkInfo(r, int(info), nil, nil)
	return float64(rcond)
}

// Dpstrf computes the Cholesky factorisation with complete pivoting
// Pᵀ A P = UᵀU ('U') or L Lᵀ ('L') of a symmetric positive semidefinite
// matrix, stopping at a pivot ≤ tol (tol < 0: n·ε·max A[k,k]). piv gets the
// 0-based permutation (P[piv[k], k] = 1). It returns the computed rank and
// full = true when the rank is n.
func Dpstrf(uplo byte, n int, a []float64, lda int, piv []int, tol float64) (rank int, full bool) {
	const r = "dpstrf"
	checkJob(r, uplo, "UL")
	checkDim(r, "n", n)
	checkMatrix(r, "a", n, n, a, lda)
	checkLen(r, "piv", len(piv), n)
	if n == 0 {
		return 0, true
	}
	cu, cn, clda, ctol := cchar(uplo), cint(n), cint(lda), C.double(tol)
	p := make([]int32, n)
	work := make([]float64, 2*n)
	var crank, info C.int
	C.dpstrf_(&cu, &cn, dptr(a), &clda, iptr(p), &crank, &ctol, dptr(work), &info, one)
	if info < 0 {
		checkInfo(r, int(info), nil, nil)
	}
	for i := range p {
		piv[i] = int(p[i]) - 1
	}
	return int(crank), info == 0
}

// Dtrtri overwrites the triangular matrix a (triangle uplo, diag 'N' or 'U'
// for a unit diagonal) with its inverse. A zero diagonal gives ErrSingular.
func Dtrtri(uplo, diag byte, n int, a []float64, lda int) error {
	const r = "dtrtri"
	checkJob(r, uplo, "UL")
	checkJob(r, diag, "NU")
	checkDim(r, "n", n)
	checkMatrix(r, "a", n, n, a, lda)
	if n == 0 {
		return nil
	}
	cu, cd, cn, clda := cchar(uplo), cchar(diag), cint(n), cint(lda)
	var info C.int
	C.dtrtri_(&cu, &cd, &cn, dptr(a), &clda, &info, one, one)
	return checkInfo(r, int(info), ErrSingular, singular)
}

// Dtrtrs solves op(A) X = B for triangular A; b (n×nrhs) is overwritten by
// X. A zero diagonal gives ErrSingular and leaves b unchanged.
func Dtrtrs(uplo, trans, diag byte, n, nrhs int, a []float64, lda int, b []float64, ldb int) error {
	const r = "dtrtrs"
	checkJob(r, uplo, "UL")
	checkJob(r, trans, "NTC")
	checkJob(r, diag, "NU")
	checkDim(r, "n", n)
	checkDim(r, "nrhs", nrhs)
	checkMatrix(r, "a", n, n, a, lda)
	checkMatrix(r, "b", n, nrhs, b, ldb)
	if n == 0 {
		return nil
	}
	cu, ct, cd := cchar(uplo), cchar(trans), cchar(diag)
	cn, cr, clda, cldb := cint(n), cint(nrhs), cint(lda), cint(ldb)
	var info C.int
	C.dtrtrs_(&cu, &ct, &cd, &cn, &cr, dptr(a), &clda, dptr(b), &cldb, &info, one, one, one)
	return checkInfo(r, int(info), ErrSingular, singular)
}

// Dtbtrs solves op(A) X = B for a triangular band matrix with kd off
// diagonals in LAPACK band storage; b (n×nrhs) is overwritten by X. A zero
// diagonal gives ErrSingular and leaves b unchanged.
func Dtbtrs(uplo, trans, diag byte, n, kd, nrhs int, ab []float64, ldab int, b []float64, ldb int) error {
	const r = "dtbtrs"
	checkJob(r, uplo, "UL")
	checkJob(r, trans, "NTC")
	checkJob(r, diag, "NU")
	checkDim(r, "n", n)
	checkDim(r, "kd", kd)
	checkDim(r, "nrhs", nrhs)
	checkMatrix(r, "ab", kd+1, n, ab, ldab)
	checkMatrix(r, "b", n, nrhs, b, ldb)
	if n == 0 {
		return nil
	}
	cu, ct, cd := cchar(uplo), cchar(trans), cchar(diag)
	cn, ckd, cr, cld, cldb := cint(n), cint(kd), cint(nrhs), cint(ldab), cint(ldb)
	var info C.int
	C.dtbtrs_(&cu, &ct, &cd, &cn, &ckd, &cr, dptr(ab), &cld, dptr(b), &cldb, &info, one, one, one)
	return checkInfo(r, int(info), ErrSingular, singular)
}

// Dtrcon estimates the reciprocal condition number of a triangular matrix in
// the 1-norm (norm 'O' or '1') or the ∞-norm ('I').
func Dtrcon(norm, uplo, diag byte, n int, a []float64, lda int) float64 {
	const r = "dtrcon"
	checkJob(r, norm, "O1I")
	checkJob(r, uplo, "UL")
	checkJob(r, diag, "NU")
	checkDim(r, "n", n)
	checkMatrix(r, "a", n, n, a, lda)
	if n == 0 {
		return 1
	}
	cnorm, cu, cd, cn, clda := cchar(norm), cchar(uplo), cchar(diag), cint(n), cint(lda)
	work := make([]float64, 3*n)
	iwork := make([]int32, n)
	var rcond C.double
	var info C.int
	C.dtrcon_(&cnorm, &cu, &cd, &cn, dptr(a), &clda, &rcond, dptr(work), iptr(iwork), &info, one, one, one)
	checkInfo(r, int(info), nil, nil)
	return float64(rcond)
}

// Dlange returns a norm of the m×n matrix a: 'M' the largest |a_ij|, 'O' or
// '1' the largest column sum, 'I' the largest row sum, 'F' (or 'E') the
// Frobenius norm.
func Dlange(norm byte, m, n int, a []float64, lda int) float64 {
	const r = "dlange"
	checkNorm(r, norm)
	checkDim(r, "m", m)
	checkDim(r, "n", n)
	checkMatrix(r, "a", m, n, a, lda)
	if min(m, n) == 0 {
		return 0
	}
	cnorm, cm, cn, clda := cchar(norm), cint(m), cint(n), cint(lda)
	var work []float64
	if norm == 'I' {
		work = make([]float64, m)
	}
	return float64(C.dlange_(&cnorm, &cm, &cn, dptr(a), &clda, dptr(work), one))
}

// Dlansy returns a norm (as Dlange) of the symmetric matrix stored in the
// uplo triangle of a.
func Dlansy(norm, uplo byte, n int, a []float64, lda int) float64 {
	const r = "dlansy"
	checkNorm(r, norm)
	checkJob(r, uplo, "UL")
	checkDim(r, "n", n)
	checkMatrix(r, "a", n, n, a, lda)
	if n == 0 {
		return 0
	}
	cnorm, cu, cn, clda := cchar(norm), cchar(uplo), cint(n), cint(lda)
	var work []float64
	if norm != 'M' && norm != 'F' {
		work = make([]float64, n)
	}
	return float64(C.dlansy_(&cnorm, &cu, &cn, dptr(a), &clda, dptr(work), one, one))
}

// Dlantr returns a norm (as Dlange) of the m×n trapezoidal matrix in the uplo
// part of a, with a unit diagonal when diag is 'U'.
func Dlantr(norm, uplo, diag byte, m, n int, a []float64, lda int) float64 {
	const r = "dlantr"
	checkNorm(r, norm)
	checkJob(r, uplo, "UL")
	checkJob(r, diag, "NU")
	checkDim(r, "m", m)
	checkDim(r, "n", n)
	checkMatrix(r, "a", m, n, a, lda)
	if min(m, n) == 0 {
		return 0
	}
	cnorm, cu, cd, cm, cn, clda := cchar(norm), cchar(uplo), cchar(diag), cint(m), cint(n), cint(lda)
	var work []float64
	if norm == 'I' {
		work = make([]float64, m)
	}
	return float64(C.dlantr_(&cnorm, &cu, &cd, &cm, &cn, dptr(a), &clda, dptr(work), one, one, one))
}

// Dlapmr permutes the rows of the m×n matrix x by the 0-based permutation k
// (length m): forward moves row k[i] to row i, backward row i to row k[i].
func Dlapmr(forward bool, m, n int, x []float64, ldx int, k []int) {
	permute("dlapmr", forward, m, n, x, ldx, k, m, true)
}

// Dlapmt permutes the columns of the m×n matrix x by the 0-based permutation
// k (length n): forward moves column k[j] to column j, backward j to k[j].
func Dlapmt(forward bool, m, n int, x []float64, ldx int, k []int) {
	permute("dlapmt", forward, m, n, x, ldx, k, n, false)
}

func permute(r string, forward bool, m, n int, x []float64, ldx int, k []int, nk int, rows bool) {
	checkDim(r, "m", m)
	checkDim(r, "n", n)
	checkMatrix(r, "x", m, n, x, ldx)
	checkLen(r, "k", len(k), nk)
	if m == 0 || n == 0 {
		return
	}
	seen := make([]bool, nk)
	for _, v := range k[:nk] {
		if v < 0 || v >= nk || seen[v] {
			panicf("%s: k is not a permutation of 0..%d", r, nk-1)
		}
		seen[v] = true
	}
	kk := pivots32(k, nk)
	var f C.int
	if forward {
		f = 1
	}
	cm, cn, cld := cint(m), cint(n), cint(ldx)
	if rows {
		C.dlapmr_(&f, &cm, &cn, dptr(x), &cld, iptr(kk))
	} else {
		C.dlapmt_(&f, &cm, &cn, dptr(x), &cld, iptr(kk))
	}
}

// Dgetri is the Workspace method with a fresh workspace.
func Dgetri(n int, a []float64, lda int, ipiv []int) error {
	return (*Workspace)(nil).Dgetri(n, a, lda, ipiv)
}

// Cond1 is the state of LAPACK's reverse-communication 1-norm estimator
// dlacn2 for an n×n operator B (Higham's method, as dgecon uses it).
type Cond1 struct {
	n     int
	v, x  []float64
	isgn  []int32
	isave [3]int32
	kase  C.int
	est   C.double
}

// NewCond1 starts an estimate of ‖B‖₁ for an n×n B.
func NewCond1(n int) *Cond1 {
	checkDim("dlacn2", "n", n)
	return &Cond1{n: n, v: make([]float64, max(1, n)), x: make([]float64, max(1, n)), isgn: make([]int32, max(1, n))}
}

// Next advances the estimator. It returns the vector x to overwrite with
// B x (kase 1) or Bᵀ x (kase 2), or kase 0 when the estimate Est is final.
func (c *Cond1) Next() (x []float64, kase int) {
	cn := cint(c.n)
	C.dlacn2_(&cn, dptr(c.v), dptr(c.x), iptr(c.isgn), &c.est, &c.kase, (*C.int)(&c.isave[0]))
	return c.x[:c.n], int(c.kase)
}

// Est is the current estimate of ‖B‖₁.
func (c *Cond1) Est() float64 { return float64(c.est) }

// Dlatrs solves op(A) x = s·b for triangular A with the scale s ≤ 1 chosen
// to prevent overflow (LAPACK's robust triangular solve); x holds b on entry
// and x on exit, and s is returned. cnorm (length n) holds the column norms
// of the off-diagonal part of A: computed when normin is 'N', read when 'Y'.
func Dlatrs(uplo, trans, diag, normin byte, n int, a []float64, lda int, x, cnorm []float64) float64 {
	const r = "dlatrs"
	checkJob(r, uplo, "UL")
	checkJob(r, trans, "NTC")
	checkJob(r, diag, "NU")
	checkJob(r, normin, "NY")
	checkDim(r, "n", n)
	checkMatrix(r, "a", n, n, a, lda)
	checkLen(r, "x", len(x), n)
	checkLen(r, "cnorm", len(cnorm), n)
	if n == 0 {
		return 1
	}
	cu, ct, cd, cnm := cchar(uplo), cchar(trans), cchar(diag), cchar(normin)
	cn, clda := cint(n), cint(lda)
	var scale C.double
	var info C.int
	C.dlatrs_(&cu, &ct, &cd, &cnm, &cn, dptr(a), &clda, dptr(x), &scale, dptr(cnorm), &info, one, one, one, one)
	checkInfo(r, int(info), nil, nil)
	return float64(scale)
}

// Dtrsv solves op(A) x = b for triangular A (BLAS dtrsv, no protection
// against overflow: Dlatrs is the robust solve); x holds b on entry and x
// on exit.
func Dtrsv(uplo, trans, diag byte, n int, a []float64, lda int, x []float64) {
	const r = "dtrsv"
	checkJob(r, uplo, "UL")
	checkJob(r, trans, "NTC")
	checkJob(r, diag, "NU")
	checkDim(r, "n", n)
	checkMatrix(r, "a", n, n, a, lda)
	checkLen(r, "x", len(x), n)
	if n == 0 {
		return
	}
	cu, ct, cd := cchar(uplo), cchar(trans), cchar(diag)
	cn, clda, inc := cint(n), cint(lda), C.int(1)
	C.dtrsv_(&cu, &ct, &cd, &cn, dptr(a), &clda, dptr(x), &inc, one, one, one)
}

// Drscl scales x by 1/sa without overflow or underflow in forming 1/sa.
func Drscl(n int, sa float64, x []float64) {
	checkDim("drscl", "n", n)
	checkLen("drscl", "x", len(x), n)
	if n == 0 {
		return
	}
	cn, csa, inc := cint(n), C.double(sa), C.int(1)
	C.drscl_(&cn, &csa, dptr(x), &inc)
}
