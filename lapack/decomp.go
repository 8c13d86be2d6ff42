package lapack

// #include "lapack.h"
import "C"

// This file binds the orthogonal-factor products, pivoted QR, least squares
// and the general eigenvalue and generalised SVD drivers that package
// lapack/gonum needs, and workspace queries for the drivers whose workspace
// grows with n². All matrices are column-major; pivots are 0-based in Go.

// NewWorkspace returns a Workspace that starts with the caller's buffer: a
// call whose optimal work array fits in work uses it instead of allocating.
func NewWorkspace(work []float64) *Workspace { return &Workspace{work: work} }

// Dormqr overwrites the m×n matrix c with Q C, Qᵀ C, C Q or C Qᵀ (side 'L'
// or 'R', trans 'N' or 'T'), Q the product of k reflectors from Dgeqrf held
// in a and tau.
func (ws *Workspace) Dormqr(side, trans byte, m, n, k int, a []float64, lda int, tau, c []float64, ldc int) {
	ws.multiply("dormqr", side, trans, m, n, k, a, lda, tau, c, ldc, false)
}

// Dormlq is Dormqr for Q the product of k reflectors from Dgelqf.
func (ws *Workspace) Dormlq(side, trans byte, m, n, k int, a []float64, lda int, tau, c []float64, ldc int) {
	ws.multiply("dormlq", side, trans, m, n, k, a, lda, tau, c, ldc, true)
}

func (ws *Workspace) multiply(r string, side, trans byte, m, n, k int, a []float64, lda int, tau, c []float64, ldc int, lq bool) {
	checkJob(r, side, "LR")
	checkJob(r, trans, "NT")
	checkDim(r, "m", m)
	checkDim(r, "n", n)
	checkDim(r, "k", k)
	nq := m
	if side == 'R' {
		nq = n
	}
	if k > nq {
		panicf("%s: k = %d > %d", r, k, nq)
	}
	if lq {
		checkMatrix(r, "a", k, nq, a, lda)
	} else {
		checkMatrix(r, "a", nq, k, a, lda)
	}
	checkLen(r, "tau", len(tau), k)
	checkMatrix(r, "c", m, n, c, ldc)
	if m == 0 || n == 0 || k == 0 {
		return
	}
	cs, ct := cchar(side), cchar(trans)
	cm, cn, ck, clda, cldc := cint(m), cint(n), cint(k), cint(lda), cint(ldc)
	var info C.int
	q := make([]float64, 1)
	lw := C.int(-1)
	call := func(work []float64) {
		if lq {
			C.dormlq_(&cs, &ct, &cm, &cn, &ck, dptr(a), &clda, dptr(tau), dptr(c), &cldc, dptr(work), &lw, &info, one, one)
		} else {
			C.dormqr_(&cs, &ct, &cm, &cn, &ck, dptr(a), &clda, dptr(tau), dptr(c), &cldc, dptr(work), &lw, &info, one, one)
		}
		checkInfo(r, int(info), nil, nil)
	}
	call(q)
	work := ws.floats(lworkFrom(q[0]))
	lw = cint(len(work))
	call(work)
}

// Dgeqp3 computes the QR factorisation with column pivoting A P = Q R of the
// m×n matrix a. On entry jpvt[j] ≥ 0 makes column j a leading column and
// jpvt[j] < 0 a free one; on exit column j of A P was column jpvt[j] of A.
func (ws *Workspace) Dgeqp3(m, n int, a []float64, lda int, jpvt []int, tau []float64) {
	const r = "dgeqp3"
	checkDim(r, "m", m)
	checkDim(r, "n", n)
	checkMatrix(r, "a", m, n, a, lda)
	checkLen(r, "jpvt", len(jpvt), n)
	checkLen(r, "tau", len(tau), min(m, n))
	if n == 0 {
		return
	}
	p := make([]int32, n)
	for j := range p {
		if jpvt[j] >= 0 {
			p[j] = 1
		}
	}
	cm, cn, clda := cint(m), cint(n), cint(lda)
	var info C.int
	q := make([]float64, 1)
	lw := C.int(-1)
	C.dgeqp3_(&cm, &cn, dptr(a), &clda, iptr(p), dptr(tau), dptr(q), &lw, &info)
	checkInfo(r, int(info), nil, nil)
	work := ws.floats(lworkFrom(q[0]))
	lw = cint(len(work))
	C.dgeqp3_(&cm, &cn, dptr(a), &clda, iptr(p), dptr(tau), dptr(work), &lw, &info)
	checkInfo(r, int(info), nil, nil)
	for j := range p {
		jpvt[j] = int(p[j]) - 1
	}
}

// Dgels solves the least-squares or minimum-norm problem for op(A) X = B
// (trans 'N' or 'T') with a QR or LQ factorisation of the m×n matrix a of
// full rank; b (max(m,n)×nrhs) holds B on entry and X on exit. A rank
// deficient factor gives ErrSingular.
func (ws *Workspace) Dgels(trans byte, m, n, nrhs int, a []float64, lda int, b []float64, ldb int) error {
	const r = "dgels"
	checkJob(r, trans, "NT")
	checkDim(r, "m", m)
	checkDim(r, "n", n)
	checkDim(r, "nrhs", nrhs)
	checkMatrix(r, "a", m, n, a, lda)
	checkMatrix(r, "b", max(m, n), nrhs, b, ldb)
	if min(m, n, nrhs) == 0 {
		return nil
	}
	ct := cchar(trans)
	cm, cn, cr, clda, cldb := cint(m), cint(n), cint(nrhs), cint(lda), cint(ldb)
	var info C.int
	q := make([]float64, 1)
	lw := C.int(-1)
	C.dgels_(&ct, &cm, &cn, &cr, dptr(a), &clda, dptr(b), &cldb, dptr(q), &lw, &info, one)
	checkInfo(r, int(info), nil, nil)
	work := ws.floats(lworkFrom(q[0]))
	lw = cint(len(work))
	C.dgels_(&ct, &cm, &cn, &cr, dptr(a), &clda, dptr(b), &cldb, dptr(work), &lw, &info, one)
	return checkInfo(r, int(info), ErrSingular, singular)
}

// Dgeev computes the eigenvalues (wr + i·wi) of the n×n general matrix a and,
// with jobvl or jobvr 'V', its left or right eigenvectors in vl or vr (LAPACK's
// packing of complex pairs). a is destroyed. If the QR iteration fails it
// returns first > 0 and ErrNotConverged: wr[first:], wi[first:] hold the
// eigenvalues that converged and no eigenvectors were computed.
func (ws *Workspace) Dgeev(jobvl, jobvr byte, n int, a []float64, lda int, wr, wi, vl []float64, ldvl int, vr []float64, ldvr int) (first int, err error) {
	const r = "dgeev"
	checkJob(r, jobvl, "NV")
	checkJob(r, jobvr, "NV")
	checkDim(r, "n", n)
	checkMatrix(r, "a", n, n, a, lda)
	checkLen(r, "wr", len(wr), n)
	checkLen(r, "wi", len(wi), n)
	if jobvl == 'V' {
		checkMatrix(r, "vl", n, n, vl, ldvl)
	} else {
		ldvl = max(ldvl, 1)
	}
	if jobvr == 'V' {
		checkMatrix(r, "vr", n, n, vr, ldvr)
	} else {
		ldvr = max(ldvr, 1)
	}
	if n == 0 {
		return 0, nil
	}
	cl, cr := cchar(jobvl), cchar(jobvr)
	cn, clda, cldl, cldr := cint(n), cint(lda), cint(ldvl), cint(ldvr)
	var info C.int
	q := make([]float64, 1)
	lw := C.int(-1)
	C.dgeev_(&cl, &cr, &cn, dptr(a), &clda, dptr(wr), dptr(wi), dptr(vl), &cldl, dptr(vr), &cldr, dptr(q), &lw, &info, one, one)
	checkInfo(r, int(info), nil, nil)
	work := ws.floats(lworkFrom(q[0]))
	lw = cint(len(work))
	C.dgeev_(&cl, &cr, &cn, dptr(a), &clda, dptr(wr), dptr(wi), dptr(vl), &cldl, dptr(vr), &cldr, dptr(work), &lw, &info, one, one)
	err = checkInfo(r, int(info), ErrNotConverged, notConverged("the QR algorithm failed to compute all eigenvalues"))
	return int(info), err
}

// Dggsvd3 computes the generalised SVD of the m×n matrix a and the p×n matrix
// b (see LAPACK's DGGSVD3): it returns k and l, with k+l the effective rank
// of [A; B], alpha and beta (length n), and with jobu/jobv/jobq 'U'/'V'/'Q'
// the orthogonal u (m×m), v (p×p) and q (n×n). iwork (length n) gets the
// 0-based sorting permutation of alpha. A Jacobi sweep that does not
// converge gives ErrNotConverged.
func (ws *Workspace) Dggsvd3(jobu, jobv, jobq byte, m, n, p int, a []float64, lda int, b []float64, ldb int,
	alpha, beta, u []float64, ldu int, v []float64, ldv int, q []float64, ldq int, iwork []int) (k, l int, err error) {
	const r = "dggsvd3"
	checkJob(r, jobu, "UN")
	checkJob(r, jobv, "VN")
	checkJob(r, jobq, "QN")
	checkDim(r, "m", m)
	checkDim(r, "n", n)
	checkDim(r, "p", p)
	checkMatrix(r, "a", m, n, a, lda)
	checkMatrix(r, "b", p, n, b, ldb)
	checkLen(r, "alpha", len(alpha), n)
	checkLen(r, "beta", len(beta), n)
	checkLen(r, "iwork", len(iwork), n)
	if jobu == 'U' {
		checkMatrix(r, "u", m, m, u, ldu)
	} else {
		ldu = max(ldu, 1)
	}
	if jobv == 'V' {
		checkMatrix(r, "v", p, p, v, ldv)
	} else {
		ldv = max(ldv, 1)
	}
	if jobq == 'Q' {
		checkMatrix(r, "q", n, n, q, ldq)
	} else {
		ldq = max(ldq, 1)
	}
	cu, cv, cq := cchar(jobu), cchar(jobv), cchar(jobq)
	cm, cn, cp := cint(m), cint(n), cint(p)
	clda, cldb, cldu, cldv, cldq := cint(max(lda, 1)), cint(max(ldb, 1)), cint(ldu), cint(ldv), cint(ldq)
	var ck, cl, info C.int
	iw := make([]int32, max(1, n))
	qw := make([]float64, 1)
	lw := C.int(-1)
	C.dggsvd3_(&cu, &cv, &cq, &cm, &cn, &cp, &ck, &cl, dptr(a), &clda, dptr(b), &cldb, dptr(alpha), dptr(beta),
		dptr(u), &cldu, dptr(v), &cldv, dptr(q), &cldq, dptr(qw), &lw, iptr(iw), &info, one, one, one)
	checkInfo(r, int(info), nil, nil)
	work := ws.floats(lworkFrom(qw[0]))
	lw = cint(len(work))
	C.dggsvd3_(&cu, &cv, &cq, &cm, &cn, &cp, &ck, &cl, dptr(a), &clda, dptr(b), &cldb, dptr(alpha), dptr(beta),
		dptr(u), &cldu, dptr(v), &cldv, dptr(q), &cldq, dptr(work), &lw, iptr(iw), &info, one, one, one)
	err = checkInfo(r, int(info), ErrNotConverged, notConverged("the Jacobi-type procedure did not converge"))
	for i := 0; i < n; i++ {
		iwork[i] = int(iw[i]) - 1
	}
	return int(ck), int(cl), err
}

// DsyevdWork returns the optimal float64 workspace of Dsyevd for an n×n
// matrix (the integer workspace is allocated inside).
func DsyevdWork(jobz byte, n int) int {
	checkJob("dsyevd", jobz, "NV")
	if n == 0 {
		return 1
	}
	cj, cu, cn := cchar(jobz), cchar('L'), cint(n)
	var info C.int
	q, iq := make([]float64, 1), make([]int32, 1)
	lw, liw := C.int(-1), C.int(-1)
	C.dsyevd_(&cj, &cu, &cn, nil, &cn, nil, dptr(q), &lw, iptr(iq), &liw, &info, one, one)
	checkInfo("dsyevd", int(info), nil, nil)
	return lworkFrom(q[0])
}

// DgesddWork returns the optimal float64 workspace of Dgesdd.
func DgesddWork(jobz byte, m, n int) int {
	checkJob("dgesdd", jobz, "NSA")
	if min(m, n) == 0 {
		return 1
	}
	cj, cm, cn := cchar(jobz), cint(m), cint(n)
	ldu, ldvt := cint(max(1, m)), cint(max(1, n))
	var info C.int
	q := make([]float64, 1)
	lw := C.int(-1)
	C.dgesdd_(&cj, &cm, &cn, nil, &ldu, nil, nil, &ldu, nil, &ldvt, dptr(q), &lw, nil, &info, one)
	checkInfo("dgesdd", int(info), nil, nil)
	return lworkFrom(q[0])
}

// DgeevWork returns the optimal float64 workspace of Dgeev.
func DgeevWork(jobvl, jobvr byte, n int) int {
	checkJob("dgeev", jobvl, "NV")
	checkJob("dgeev", jobvr, "NV")
	if n == 0 {
		return 1
	}
	cl, cr, cn := cchar(jobvl), cchar(jobvr), cint(n)
	var info C.int
	q := make([]float64, 1)
	lw := C.int(-1)
	C.dgeev_(&cl, &cr, &cn, nil, &cn, nil, nil, nil, &cn, nil, &cn, dptr(q), &lw, &info, one, one)
	checkInfo("dgeev", int(info), nil, nil)
	return lworkFrom(q[0])
}
