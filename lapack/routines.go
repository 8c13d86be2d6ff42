package lapack

// #include "lapack.h"
import "C"

import "fmt"

// Workspace holds LAPACK work arrays between calls. The zero value is ready;
// a nil *Workspace allocates per call. A Workspace must not be used by two
// goroutines at once.
type Workspace struct {
	work  []float64
	iwork []int32
	query [1]float64
	iq    [1]int32
}

func (ws *Workspace) floats(n int) []float64 {
	if ws == nil {
		return make([]float64, n)
	}
	if len(ws.work) < n {
		ws.work = make([]float64, n)
	}
	return ws.work[:n]
}

func (ws *Workspace) ints(n int) []int32 {
	if ws == nil {
		return make([]int32, n)
	}
	if cap(ws.iwork) < n {
		ws.iwork = make([]int32, n)
	}
	return ws.iwork[:n]
}

func notConverged(what string) func(int) string {
	return func(info int) string { return fmt.Sprintf("%s (info %d)", what, info) }
}

// Dsyevd computes all eigenvalues, and with jobz = 'V' the eigenvectors, of
// the n×n symmetric matrix a (column-major, triangle uplo = 'U' or 'L') by
// divide and conquer. Eigenvalues go to w in ascending order; with jobz = 'V'
// a is overwritten by the orthonormal eigenvectors (column j for w[j]).
func Dsyevd(jobz, uplo byte, n int, a []float64, lda int, w []float64) error {
	return (*Workspace)(nil).Dsyevd(jobz, uplo, n, a, lda, w)
}

// Dsyevd is the package-level Dsyevd with reused workspace.
func (ws *Workspace) Dsyevd(jobz, uplo byte, n int, a []float64, lda int, w []float64) error {
	const r = "dsyevd"
	checkJob(r, jobz, "NV")
	checkJob(r, uplo, "UL")
	checkDim(r, "n", n)
	checkMatrix(r, "a", n, n, a, lda)
	checkLen(r, "w", len(w), n)
	if n == 0 {
		return nil
	}
	cj, cu := cchar(jobz), cchar(uplo)
	cn, clda := cint(n), cint(lda)
	var info C.int
	q, iq := make([]float64, 1), make([]int32, 1)
	lw, liw := C.int(-1), C.int(-1)
	C.dsyevd_(&cj, &cu, &cn, dptr(a), &clda, dptr(w), dptr(q), &lw, iptr(iq), &liw, &info, one, one)
	checkInfo(r, int(info), nil, nil)
	work := ws.floats(lworkFrom(q[0]))
	iwork := ws.ints(max(1, int(iq[0])))
	lw, liw = cint(len(work)), cint(len(iwork))
	C.dsyevd_(&cj, &cu, &cn, dptr(a), &clda, dptr(w), dptr(work), &lw, iptr(iwork), &liw, &info, one, one)
	return checkInfo(r, int(info), ErrNotConverged, notConverged("eigenvalue iteration failed to converge"))
}

// Dsyevr computes selected eigenvalues, and with jobz = 'V' eigenvectors, of
// the n×n symmetric matrix a (column-major, triangle uplo) by the MRRR
// algorithm. rng selects: 'A' all, 'V' the half-open interval (vl, vu],
// 'I' the il-th through iu-th smallest (1-based, 1 ≤ il ≤ iu ≤ n).
// It returns m, the number found: w[:m] ascending, and with jobz = 'V' the
// n×m eigenvectors in z (leading dimension ldz). a is destroyed. abstol ≤ 0
// lets LAPACK pick its default tolerance. isuppz may be nil (allocated).
func Dsyevr(jobz, rng, uplo byte, n int, a []float64, lda int, vl, vu float64, il, iu int,
	abstol float64, w, z []float64, ldz int, isuppz []int32) (int, error) {
	return (*Workspace)(nil).Dsyevr(jobz, rng, uplo, n, a, lda, vl, vu, il, iu, abstol, w, z, ldz, isuppz)
}

// Dsyevr is the package-level Dsyevr with reused workspace.
func (ws *Workspace) Dsyevr(jobz, rng, uplo byte, n int, a []float64, lda int, vl, vu float64, il, iu int,
	abstol float64, w, z []float64, ldz int, isuppz []int32) (int, error) {
	const r = "dsyevr"
	checkJob(r, jobz, "NV")
	checkJob(r, rng, "AVI")
	checkJob(r, uplo, "UL")
	checkDim(r, "n", n)
	checkMatrix(r, "a", n, n, a, lda)
	checkLen(r, "w", len(w), n)
	cols := checkRange(r, rng, n, vl, vu, il, iu)
	if jobz == 'V' {
		checkMatrix(r, "z", n, cols, z, ldz)
	} else if ldz < 1 {
		panicf("%s: ldz = %d < 1", r, ldz)
	}
	if n == 0 {
		return 0, nil
	}
	if isuppz == nil {
		isuppz = make([]int32, 2*max(1, cols))
	}
	checkLen(r, "isuppz", len(isuppz), 2*max(1, cols))
	cj, cr, cu := cchar(jobz), cchar(rng), cchar(uplo)
	cn, clda, cldz := cint(n), cint(lda), cint(ldz)
	cvl, cvu, cil, ciu, cabs := C.double(vl), C.double(vu), cint(il), cint(iu), C.double(abstol)
	if rng != 'I' {
		cil, ciu = 1, cint(max(1, n))
	}
	var m, info C.int
	q, iq := make([]float64, 1), make([]int32, 1)
	lw, liw := C.int(-1), C.int(-1)
	C.dsyevr_(&cj, &cr, &cu, &cn, dptr(a), &clda, &cvl, &cvu, &cil, &ciu, &cabs, &m, dptr(w),
		dptr(z), &cldz, iptr(isuppz), dptr(q), &lw, iptr(iq), &liw, &info, one, one, one)
	checkInfo(r, int(info), nil, nil)
	work := ws.floats(lworkFrom(q[0]))
	iwork := ws.ints(1 + max(1, int(iq[0])))[1:] // see ibPad
	lw, liw = cint(len(work)), cint(len(iwork))
	C.dsyevr_(&cj, &cr, &cu, &cn, dptr(a), &clda, &cvl, &cvu, &cil, &ciu, &cabs, &m, dptr(w),
		dptr(z), &cldz, iptr(isuppz), dptr(work), &lw, iptr(iwork), &liw, &info, one, one, one)
	err := checkInfo(r, int(info), ErrNotConverged, notConverged("internal error in the MRRR/bisection step"))
	return int(m), err
}

// checkRange validates a RANGE selection and returns the most eigenvectors it
// can produce (the columns z must hold).
func checkRange(r string, rng byte, n int, vl, vu float64, il, iu int) int {
	switch rng {
	case 'V':
		if !(vl < vu) {
			panicf("%s: need vl < vu, have %g, %g", r, vl, vu)
		}
	case 'I':
		if n == 0 {
			if il != 1 || iu != 0 {
				panicf("%s: with n = 0 need il = 1, iu = 0", r)
			}
			return 0
		}
		if il < 1 || il > iu || iu > n {
			panicf("%s: need 1 ≤ il ≤ iu ≤ n, have il=%d iu=%d n=%d", r, il, iu, n)
		}
		return iu - il + 1
	}
	return n
}

// Dstevr computes selected eigenvalues, and with jobz = 'V' eigenvectors, of
// the n×n symmetric tridiagonal matrix with diagonal d (length n) and
// off-diagonal e (length ≥ n−1; e[n−1] is workspace when n > 0, so e must
// have length n). rng is as for Dsyevr. d and e are destroyed. It returns m;
// w[:m] ascending and the n×m vectors in z.
func Dstevr(jobz, rng byte, n int, d, e []float64, vl, vu float64, il, iu int,
	abstol float64, w, z []float64, ldz int, isuppz []int32) (int, error) {
	return (*Workspace)(nil).Dstevr(jobz, rng, n, d, e, vl, vu, il, iu, abstol, w, z, ldz, isuppz)
}

// Dstevr is the package-level Dstevr with reused workspace.
func (ws *Workspace) Dstevr(jobz, rng byte, n int, d, e []float64, vl, vu float64, il, iu int,
	abstol float64, w, z []float64, ldz int, isuppz []int32) (int, error) {
	const r = "dstevr"
	checkJob(r, jobz, "NV")
	checkJob(r, rng, "AVI")
	checkDim(r, "n", n)
	checkLen(r, "d", len(d), n)
	checkLen(r, "e", len(e), n)
	checkLen(r, "w", len(w), n)
	cols := checkRange(r, rng, n, vl, vu, il, iu)
	if jobz == 'V' {
		checkMatrix(r, "z", n, cols, z, ldz)
	} else if ldz < 1 {
		panicf("%s: ldz = %d < 1", r, ldz)
	}
	if n == 0 {
		return 0, nil
	}
	if isuppz == nil {
		isuppz = make([]int32, 2*max(1, cols))
	}
	checkLen(r, "isuppz", len(isuppz), 2*max(1, cols))
	cj, cr := cchar(jobz), cchar(rng)
	cn, cldz := cint(n), cint(ldz)
	cvl, cvu, cil, ciu, cabs := C.double(vl), C.double(vu), cint(il), cint(iu), C.double(abstol)
	if rng != 'I' {
		cil, ciu = 1, cint(n)
	}
	var m, info C.int
	q, iq := make([]float64, 1), make([]int32, 1)
	lw, liw := C.int(-1), C.int(-1)
	C.dstevr_(&cj, &cr, &cn, dptr(d), dptr(e), &cvl, &cvu, &cil, &ciu, &cabs, &m, dptr(w),
		dptr(z), &cldz, iptr(isuppz), dptr(q), &lw, iptr(iq), &liw, &info, one, one)
	checkInfo(r, int(info), nil, nil)
	work := ws.floats(lworkFrom(q[0]))
	iwork := ws.ints(1 + max(1, int(iq[0])))[1:] // see ibPad
	lw, liw = cint(len(work)), cint(len(iwork))
	C.dstevr_(&cj, &cr, &cn, dptr(d), dptr(e), &cvl, &cvu, &cil, &ciu, &cabs, &m, dptr(w),
		dptr(z), &cldz, iptr(isuppz), dptr(work), &lw, iptr(iwork), &liw, &info, one, one)
	err := checkInfo(r, int(info), ErrNotConverged, notConverged("internal error in the MRRR/bisection step"))
	return int(m), err
}

// Dsterf computes all eigenvalues of the n×n symmetric tridiagonal matrix
// with diagonal d and off-diagonal e (length ≥ n−1) by the Pal–Walker–Kahan
// QL/QR iteration (no vectors, O(n²)): d gets them in ascending order, e is
// destroyed.
func Dsterf(n int, d, e []float64) error {
	const r = "dsterf"
	checkDim(r, "n", n)
	checkLen(r, "d", len(d), n)
	checkLen(r, "e", len(e), max(n-1, 0))
	if n == 0 {
		return nil
	}
	cn := cint(n)
	var info C.int
	var pe *C.double
	if n > 1 {
		pe = dptr(e)
	}
	C.dsterf_(&cn, dptr(d), pe, &info)
	return checkInfo(r, int(info), ErrNotConverged, notConverged("off-diagonal entries did not converge to zero"))
}

// Dstebz computes by bisection the eigenvalues of the n×n symmetric
// tridiagonal matrix (d, e) selected by rng: 'A' all, 'V' those in
// (vl, vu], 'I' the il-th through iu-th smallest (1 ≤ il ≤ iu ≤ n), each to
// within abstol (≤ 0: about ulp·‖T‖). order 'E' returns them ascending
// over the whole matrix, 'B' grouped by the blocks the matrix splits into
// (ascending within each). w (length ≥ n) gets the m values, iblock
// (length ≥ n) the 1-based block of each, isplit (length ≥ n) the last
// 1-based row of each of the nsplit blocks — the form Dstein takes. d
// and e are not modified. LAPACK's info > 0 — values that bisection did
// not pin down, or for 'I' fewer values found than asked (non-monotonic
// arithmetic) — wraps ErrNotConverged; callers that need exactly
// iu − il + 1 values also check m.
func Dstebz(rng, order byte, n int, vl, vu float64, il, iu int, abstol float64, d, e, w []float64, iblock, isplit []int32) (m, nsplit int, err error) {
	const r = "dstebz"
	checkJob(r, rng, "AVI")
	checkJob(r, order, "EB")
	checkDim(r, "n", n)
	checkLen(r, "d", len(d), n)
	checkLen(r, "e", len(e), max(n-1, 0))
	checkLen(r, "w", len(w), n)
	checkLen(r, "iblock", len(iblock), n)
	checkLen(r, "isplit", len(isplit), n)
	if rng == 'I' && n > 0 && (il < 1 || il > iu || iu > n) {
		panicf("%s: il = %d, iu = %d outside 1 ≤ il ≤ iu ≤ n = %d", r, il, iu, n)
	}
	if n == 0 {
		return 0, 0, nil
	}
	work, iwork := make([]float64, 4*n), make([]int32, 3*n)
	cr, co := C.char(rng), C.char(order)
	cn, cil, ciu := cint(n), cint(il), cint(iu)
	cvl, cvu, cabs := C.double(vl), C.double(vu), C.double(abstol)
	var cm, cns, info C.int
	ee := e
	if n == 1 {
		ee = []float64{0}
	}
	ib := make([]int32, 1+n) // see ibPad
	C.dstebz_(&cr, &co, &cn, &cvl, &cvu, &cil, &ciu, &cabs, dptr(d), dptr(ee), &cm, &cns, dptr(w),
		iptr(ib[1:]), iptr(isplit), dptr(work), iptr(iwork), &info, one, one)
	copy(iblock, ib[1:])
	return int(cm), int(cns), checkInfo(r, int(info), ErrNotConverged, notConverged("eigenvalues that bisection did not pin down"))
}

// ibPad: the dstebz of the LAPACK in OpenBLAS 0.3.21, asked for eigenvalues
// IL:IU (RANGE = 'I') of a matrix with a large cluster through them (the
// centred identity I − 11ᵀ/n at n = 120 or 250), discards extra values by
// setting IBLOCK(IW) = 0 with IW = 0 when none is left to discard: a
// 4-byte write just before IBLOCK (seen under valgrind; in Go it corrupted
// the heap). IBLOCK is the caller's array in dstebz and the start of IWORK
// in dsyevr and dstevr, so those get one int32 of room in front of it.

// Dstein computes by inverse iteration the eigenvectors of the n×n
// symmetric tridiagonal matrix (d, e) for its m eigenvalues w, given as
// Dstebz gives them: iblock[j] (1-based) is the block of w[j] and isplit
// the last (1-based) row of each block; within a block the values ascend.
// z (n×m, column-major, ldz ≥ n) gets the vectors; vectors of close values
// in one block are orthogonalised. A failure of some vectors to converge
// wraps ErrNotConverged.
func Dstein(n int, d, e []float64, m int, w []float64, iblock, isplit []int32, z []float64, ldz int) error {
	const r = "dstein"
	checkDim(r, "n", n)
	checkLen(r, "d", len(d), n)
	checkLen(r, "e", len(e), max(n-1, 0))
	if m < 0 || m > n {
		panicf("%s: m = %d outside 0..n = %d", r, m, n)
	}
	checkLen(r, "w", len(w), m)
	checkLen(r, "iblock", len(iblock), m)
	checkLen(r, "isplit", len(isplit), n)
	checkMatrix(r, "z", n, m, z, ldz)
	if n == 0 || m == 0 {
		return nil
	}
	work, iwork, ifail := make([]float64, 5*n), make([]int32, n), make([]int32, m)
	cn, cm, cldz := cint(n), cint(m), cint(ldz)
	var info C.int
	ee := e
	if n == 1 {
		ee = []float64{0}
	}
	C.dstein_(&cn, dptr(d), dptr(ee), &cm, dptr(w), iptr(iblock), iptr(isplit), dptr(z), &cldz,
		dptr(work), iptr(iwork), iptr(ifail), &info)
	return checkInfo(r, int(info), ErrNotConverged, notConverged("eigenvectors that did not converge"))
}

// Dgesdd computes the singular value decomposition A = U Σ Vᵀ of the m×n
// matrix a by divide and conquer. jobz: 'N' values only, 'S' the first
// min(m,n) columns of U and rows of Vᵀ, 'A' all of them. s gets the
// min(m,n) singular values in descending order; a is destroyed. u (m×ucol,
// ld ldu) and vt (vrow×n, ld ldvt) are unused with 'N' (pass ld 1).
func Dgesdd(jobz byte, m, n int, a []float64, lda int, s, u []float64, ldu int, vt []float64, ldvt int) error {
	return (*Workspace)(nil).Dgesdd(jobz, m, n, a, lda, s, u, ldu, vt, ldvt)
}

// Dgesdd is the package-level Dgesdd with reused workspace.
func (ws *Workspace) Dgesdd(jobz byte, m, n int, a []float64, lda int, s, u []float64, ldu int, vt []float64, ldvt int) error {
	const r = "dgesdd"
	checkJob(r, jobz, "NSA")
	checkDim(r, "m", m)
	checkDim(r, "n", n)
	checkMatrix(r, "a", m, n, a, lda)
	mn := min(m, n)
	checkLen(r, "s", len(s), mn)
	switch jobz {
	case 'S':
		checkMatrix(r, "u", m, mn, u, ldu)
		checkMatrix(r, "vt", mn, n, vt, ldvt)
	case 'A':
		checkMatrix(r, "u", m, m, u, ldu)
		checkMatrix(r, "vt", n, n, vt, ldvt)
	default:
		if ldu < 1 || ldvt < 1 {
			panicf("%s: ldu and ldvt must be ≥ 1", r)
		}
	}
	if mn == 0 {
		return nil
	}
	cj := cchar(jobz)
	cm, cn, clda, cldu, cldvt := cint(m), cint(n), cint(lda), cint(ldu), cint(ldvt)
	var info C.int
	q := make([]float64, 1)
	lw := C.int(-1)
	iwork := ws.ints(8 * mn)
	C.dgesdd_(&cj, &cm, &cn, dptr(a), &clda, dptr(s), dptr(u), &cldu, dptr(vt), &cldvt, dptr(q), &lw, iptr(iwork), &info, one)
	checkInfo(r, int(info), nil, nil)
	work := ws.floats(lworkFrom(q[0]))
	lw = cint(len(work))
	C.dgesdd_(&cj, &cm, &cn, dptr(a), &clda, dptr(s), dptr(u), &cldu, dptr(vt), &cldvt, dptr(work), &lw, iptr(iwork), &info, one)
	return checkInfo(r, int(info), ErrNotConverged, notConverged("the bidiagonal SVD did not converge"))
}

// Dgeqrf computes the QR factorisation of the m×n matrix a: R in the upper
// triangle, the Householder vectors below it and their scalars in tau
// (length min(m,n)).
func Dgeqrf(m, n int, a []float64, lda int, tau []float64) {
	(*Workspace)(nil).Dgeqrf(m, n, a, lda, tau)
}

// Dgeqrf is the package-level Dgeqrf with reused workspace.
func (ws *Workspace) Dgeqrf(m, n int, a []float64, lda int, tau []float64) {
	ws.householder("dgeqrf", m, n, a, lda, tau, false)
}

// Dgelqf computes the LQ factorisation of the m×n matrix a: L in the lower
// triangle, the Householder vectors right of it and their scalars in tau.
func Dgelqf(m, n int, a []float64, lda int, tau []float64) {
	(*Workspace)(nil).Dgelqf(m, n, a, lda, tau)
}

// Dgelqf is the package-level Dgelqf with reused workspace.
func (ws *Workspace) Dgelqf(m, n int, a []float64, lda int, tau []float64) {
	ws.householder("dgelqf", m, n, a, lda, tau, true)
}

func (ws *Workspace) householder(r string, m, n int, a []float64, lda int, tau []float64, lq bool) {
	checkDim(r, "m", m)
	checkDim(r, "n", n)
	checkMatrix(r, "a", m, n, a, lda)
	checkLen(r, "tau", len(tau), min(m, n))
	if min(m, n) == 0 {
		return
	}
	cm, cn, clda := cint(m), cint(n), cint(lda)
	var info C.int
	q := make([]float64, 1)
	lw := C.int(-1)
	call := func(work []float64) {
		if lq {
			C.dgelqf_(&cm, &cn, dptr(a), &clda, dptr(tau), dptr(work), &lw, &info)
		} else {
			C.dgeqrf_(&cm, &cn, dptr(a), &clda, dptr(tau), dptr(work), &lw, &info)
		}
		checkInfo(r, int(info), nil, nil)
	}
	call(q)
	work := ws.floats(lworkFrom(q[0]))
	lw = cint(len(work))
	call(work)
}

// Dorgqr overwrites the m×n matrix a (m ≥ n ≥ k), holding k Householder
// vectors from Dgeqrf, with the first n columns of Q.
func Dorgqr(m, n, k int, a []float64, lda int, tau []float64) {
	(*Workspace)(nil).Dorgqr(m, n, k, a, lda, tau)
}

// Dorgqr is the package-level Dorgqr with reused workspace.
func (ws *Workspace) Dorgqr(m, n, k int, a []float64, lda int, tau []float64) {
	if !(m >= n && n >= k) {
		panicf("dorgqr: need m ≥ n ≥ k, have %d, %d, %d", m, n, k)
	}
	ws.generate("dorgqr", m, n, k, a, lda, tau, false)
}

// Dorglq overwrites the m×n matrix a (n ≥ m ≥ k), holding k Householder
// vectors from Dgelqf, with the first m rows of Q.
func Dorglq(m, n, k int, a []float64, lda int, tau []float64) {
	(*Workspace)(nil).Dorglq(m, n, k, a, lda, tau)
}

// Dorglq is the package-level Dorglq with reused workspace.
func (ws *Workspace) Dorglq(m, n, k int, a []float64, lda int, tau []float64) {
	if !(n >= m && m >= k) {
		panicf("dorglq: need n ≥ m ≥ k, have %d, %d, %d", m, n, k)
	}
	ws.generate("dorglq", m, n, k, a, lda, tau, true)
}

func (ws *Workspace) generate(r string, m, n, k int, a []float64, lda int, tau []float64, lq bool) {
	checkDim(r, "k", k)
	checkMatrix(r, "a", m, n, a, lda)
	checkLen(r, "tau", len(tau), k)
	if min(m, n) == 0 {
		return
	}
	cm, cn, ck, clda := cint(m), cint(n), cint(k), cint(lda)
	var info C.int
	q := make([]float64, 1)
	lw := C.int(-1)
	call := func(work []float64) {
		if lq {
			C.dorglq_(&cm, &cn, &ck, dptr(a), &clda, dptr(tau), dptr(work), &lw, &info)
		} else {
			C.dorgqr_(&cm, &cn, &ck, dptr(a), &clda, dptr(tau), dptr(work), &lw, &info)
		}
		checkInfo(r, int(info), nil, nil)
	}
	call(q)
	work := ws.floats(lworkFrom(q[0]))
	lw = cint(len(work))
	call(work)
}

// Dpotrf computes the Cholesky factor of the n×n symmetric positive definite
// matrix a (triangle uplo): A = UᵀU ('U') or A = LLᵀ ('L'), overwriting that
// triangle. A non-positive leading minor gives ErrNotPositiveDefinite.
func Dpotrf(uplo byte, n int, a []float64, lda int) error {
	const r = "dpotrf"
	checkJob(r, uplo, "UL")
	checkDim(r, "n", n)
	checkMatrix(r, "a", n, n, a, lda)
	if n == 0 {
		return nil
	}
	cu, cn, clda := cchar(uplo), cint(n), cint(lda)
	var info C.int
	C.dpotrf_(&cu, &cn, dptr(a), &clda, &info, one)
	return checkInfo(r, int(info), ErrNotPositiveDefinite, func(i int) string {
		return fmt.Sprintf("the leading minor of order %d is not positive", i)
	})
}

// Dpotrs solves A X = B with the Cholesky factor from Dpotrf; b (n×nrhs) is
// overwritten by X.
func Dpotrs(uplo byte, n, nrhs int, a []float64, lda int, b []float64, ldb int) {
	const r = "dpotrs"
	checkJob(r, uplo, "UL")
	checkDim(r, "n", n)
	checkDim(r, "nrhs", nrhs)
	checkMatrix(r, "a", n, n, a, lda)
	checkMatrix(r, "b", n, nrhs, b, ldb)
	if n == 0 || nrhs == 0 {
		return
	}
	cu, cn, cr, clda, cldb := cchar(uplo), cint(n), cint(nrhs), cint(lda), cint(ldb)
	var info C.int
	C.dpotrs_(&cu, &cn, &cr, dptr(a), &clda, dptr(b), &cldb, &info, one)
	checkInfo(r, int(info), nil, nil)
}

// Dsygst reduces the symmetric-definite generalised eigenproblem to
// standard form in place, with B's Cholesky factor from Dpotrf in b
// (triangle uplo): itype 1 sets the triangle uplo of a to inv(Uᵀ)·A·inv(U)
// (uplo 'U', B = UᵀU) or inv(L)·A·inv(Lᵀ) (uplo 'L', B = L·Lᵀ), itype 2
// and 3 to U·A·Uᵀ or Lᵀ·A·L. The other triangles of a and b are not read.
func Dsygst(itype int, uplo byte, n int, a []float64, lda int, b []float64, ldb int) {
	const r = "dsygst"
	if itype < 1 || itype > 3 {
		panicf("%s: itype %d not in 1..3", r, itype)
	}
	checkJob(r, uplo, "UL")
	checkDim(r, "n", n)
	checkMatrix(r, "a", n, n, a, lda)
	checkMatrix(r, "b", n, n, b, ldb)
	if n == 0 {
		return
	}
	ci, cu, cn, clda, cldb := cint(itype), cchar(uplo), cint(n), cint(lda), cint(ldb)
	var info C.int
	C.dsygst_(&ci, &cu, &cn, dptr(a), &clda, dptr(b), &cldb, &info, one)
	checkInfo(r, int(info), nil, nil)
}

// Dsygvd solves the generalised symmetric-definite eigenproblem selected by
// itype (1: A x = λ B x, 2: A B x = λ x, 3: B A x = λ x) for n×n a and b
// (triangle uplo), B positive definite. Eigenvalues go to w ascending; with
// jobz = 'V' a holds the B-orthonormal eigenvectors. b is overwritten by its
// Cholesky factor. info > n (B not positive definite) gives
// ErrNotPositiveDefinite; 0 < info ≤ n gives ErrNotConverged.
func Dsygvd(itype int, jobz, uplo byte, n int, a []float64, lda int, b []float64, ldb int, w []float64) error {
	return (*Workspace)(nil).Dsygvd(itype, jobz, uplo, n, a, lda, b, ldb, w)
}

// Dsygvd is the package-level Dsygvd with reused workspace.
func (ws *Workspace) Dsygvd(itype int, jobz, uplo byte, n int, a []float64, lda int, b []float64, ldb int, w []float64) error {
	const r = "dsygvd"
	if itype < 1 || itype > 3 {
		panicf("%s: itype %d not in 1..3", r, itype)
	}
	checkJob(r, jobz, "NV")
	checkJob(r, uplo, "UL")
	checkDim(r, "n", n)
	checkMatrix(r, "a", n, n, a, lda)
	checkMatrix(r, "b", n, n, b, ldb)
	checkLen(r, "w", len(w), n)
	if n == 0 {
		return nil
	}
	ci, cj, cu := cint(itype), cchar(jobz), cchar(uplo)
	cn, clda, cldb := cint(n), cint(lda), cint(ldb)
	var info C.int
	q, iq := make([]float64, 1), make([]int32, 1)
	lw, liw := C.int(-1), C.int(-1)
	C.dsygvd_(&ci, &cj, &cu, &cn, dptr(a), &clda, dptr(b), &cldb, dptr(w), dptr(q), &lw, iptr(iq), &liw, &info, one, one)
	checkInfo(r, int(info), nil, nil)
	work := ws.floats(lworkFrom(q[0]))
	iwork := ws.ints(max(1, int(iq[0])))
	lw, liw = cint(len(work)), cint(len(iwork))
	C.dsygvd_(&ci, &cj, &cu, &cn, dptr(a), &clda, dptr(b), &cldb, dptr(w), dptr(work), &lw, iptr(iwork), &liw, &info, one, one)
	if int(info) > n {
		return checkInfo(r, int(info), ErrNotPositiveDefinite, func(i int) string {
			return fmt.Sprintf("the leading minor of order %d of B is not positive", i-n)
		})
	}
	return checkInfo(r, int(info), ErrNotConverged, notConverged("the eigenvalue iteration failed to converge"))
}

// Dgetrf computes the LU factorisation with partial pivoting A = P L U of the
// m×n matrix a, overwriting it with L (unit diagonal, below) and U. ipiv
// (length min(m,n)) gets 0-based pivot rows: row i was swapped with ipiv[i].
// An exactly zero U[i,i] gives ErrSingular; the factorisation is still
// complete and usable then.
func Dgetrf(m, n int, a []float64, lda int, ipiv []int) error {
	const r = "dgetrf"
	checkDim(r, "m", m)
	checkDim(r, "n", n)
	checkMatrix(r, "a", m, n, a, lda)
	mn := min(m, n)
	checkLen(r, "ipiv", len(ipiv), mn)
	if mn == 0 {
		return nil
	}
	cm, cn, clda := cint(m), cint(n), cint(lda)
	piv := make([]int32, mn)
	var info C.int
	C.dgetrf_(&cm, &cn, dptr(a), &clda, iptr(piv), &info)
	for i, p := range piv {
		ipiv[i] = int(p) - 1
	}
	return checkInfo(r, int(info), ErrSingular, func(i int) string {
		return fmt.Sprintf("U(%d,%d) is exactly zero", i, i)
	})
}
