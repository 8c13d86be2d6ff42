package gonum

import (
	"gonum.org/v1/gonum/blas"

	klapack "github.com/kdual/kdual/lapack"
)

// Orthogonal factorisations and least squares. The QR factorisation of a
// row-major A is the LQ factorisation of its column-major view Aᵀ with the
// same Householder vectors and scalars (Aᵀ = L Q' gives A = Q'ᵀ Lᵀ, and
// Q'ᵀ = H_0 ⋯ H_{k-1}), so Dgeqrf is dgelqf on the view and the Q-forming
// and Q-applying routines swap in the same way, with the side flipped.

// Dgeqrf computes the QR factorisation of the m×n matrix A: dgelqf on the
// view, no copy; a square A of order ≥ squareQR is transposed in place for
// dgeqrf instead.
func (impl Implementation) Dgeqrf(m, n int, a []float64, lda int, tau, work []float64, lwork int) {
	switch {
	case m < 0:
		panic(mLT0)
	case n < 0:
		panic(nLT0)
	case lda < max(1, n):
		panic(badLdA)
	case lwork < max(1, n) && lwork != -1:
		panic(badLWork)
	case len(work) < max(1, lwork):
		panic(shortWork)
	}
	k := min(m, n)
	if k == 0 {
		work[0] = 1
		return
	}
	if lwork == -1 {
		impl.Implementation.Dgeqrf(m, n, a, lda, tau, work, -1)
		return
	}
	if len(a) < (m-1)*lda+n {
		panic(shortA)
	}
	if len(tau) != k {
		panic(badLenTau)
	}
	ws := klapack.NewWorkspace(work[:lwork])
	if m == n && n >= squareQR {
		transposeSquare(n, a, lda)
		ws.Dgeqrf(n, n, a, lda, tau)
		transposeSquare(n, a, lda)
		return
	}
	ws.Dgelqf(n, m, a, lda, tau)
}

// squareQR is the order from which a square QR factorisation, and forming
// its Q, transposes A in place and runs dgeqrf (dorgqr) rather than dgelqf
// (dorglq) on the view: OpenBLAS's LQ routines are slower than its QR ones
// by more than the two in-place transposes cost (docs/measurements.md).
const squareQR = 256

// Dgelqf computes the LQ factorisation of the m×n matrix A: dgeqrf on the
// view, no copy.
func (impl Implementation) Dgelqf(m, n int, a []float64, lda int, tau, work []float64, lwork int) {
	switch {
	case m < 0:
		panic(mLT0)
	case n < 0:
		panic(nLT0)
	case lda < max(1, n):
		panic(badLdA)
	case lwork < max(1, m) && lwork != -1:
		panic(badLWork)
	case len(work) < max(1, lwork):
		panic(shortWork)
	}
	k := min(m, n)
	if k == 0 {
		work[0] = 1
		return
	}
	if lwork == -1 {
		impl.Implementation.Dgelqf(m, n, a, lda, tau, work, -1)
		return
	}
	if len(a) < (m-1)*lda+n {
		panic(shortA)
	}
	if len(tau) < k {
		panic(shortTau)
	}
	klapack.NewWorkspace(work[:lwork]).Dgeqrf(n, m, a, lda, tau[:k])
}

// Dorgqr forms the m×n matrix Q with orthonormal columns from the k
// reflectors of Dgeqrf: dorglq on the view, no copy; a square Q of order
// ≥ squareQR is formed by dorgqr between two in-place transposes.
func (impl Implementation) Dorgqr(m, n, k int, a []float64, lda int, tau, work []float64, lwork int) {
	switch {
	case m < 0:
		panic(mLT0)
	case n < 0:
		panic(nLT0)
	case n > m:
		panic(nGTM)
	case k < 0:
		panic(kLT0)
	case k > n:
		panic(kGTN)
	case lda < max(1, n) && lwork != -1:
		panic(badLdA)
	case lwork < max(1, n) && lwork != -1:
		panic(badLWork)
	case len(work) < max(1, lwork):
		panic(shortWork)
	}
	if n == 0 {
		work[0] = 1
		return
	}
	if lwork == -1 {
		impl.Implementation.Dorgqr(m, n, k, a, lda, tau, work, -1)
		return
	}
	switch {
	case len(a) < (m-1)*lda+n:
		panic(shortA)
	case len(tau) != k:
		panic(badLenTau)
	}
	ws := klapack.NewWorkspace(work[:lwork])
	if m == n && n >= squareQR {
		transposeSquare(n, a, lda)
		ws.Dorgqr(n, n, k, a, lda, tau[:k])
		transposeSquare(n, a, lda)
		return
	}
	ws.Dorglq(n, m, k, a, lda, tau[:k])
}

// Dorglq forms the m×n matrix Q with orthonormal rows from the k reflectors
// of Dgelqf: dorgqr on the view, no copy.
func (impl Implementation) Dorglq(m, n, k int, a []float64, lda int, tau, work []float64, lwork int) {
	switch {
	case m < 0:
		panic(mLT0)
	case n < m:
		panic(nLTM)
	case k < 0:
		panic(kLT0)
	case k > m:
		panic(kGTM)
	case lda < max(1, n):
		panic(badLdA)
	case lwork < max(1, m) && lwork != -1:
		panic(badLWork)
	case len(work) < max(1, lwork):
		panic(shortWork)
	}
	if m == 0 {
		work[0] = 1
		return
	}
	if lwork == -1 {
		impl.Implementation.Dorglq(m, n, k, a, lda, tau, work, -1)
		return
	}
	switch {
	case len(a) < (m-1)*lda+n:
		panic(shortA)
	case len(tau) < k:
		panic(shortTau)
	}
	klapack.NewWorkspace(work[:lwork]).Dorgqr(n, m, k, a, lda, tau[:k])
}

// Dormqr multiplies C by Q or Qᵀ from Dgeqrf: dormlq on the views of A and
// C with the side flipped, no copy.
func (impl Implementation) Dormqr(side blas.Side, trans blas.Transpose, m, n, k int, a []float64, lda int, tau, c []float64, ldc int, work []float64, lwork int) {
	left := side == blas.Left
	nq, nw := n, m
	if left {
		nq, nw = m, n
	}
	switch {
	case !left && side != blas.Right:
		panic(badSide)
	case trans != blas.NoTrans && trans != blas.Trans:
		panic(badTrans)
	case m < 0:
		panic(mLT0)
	case n < 0:
		panic(nLT0)
	case k < 0:
		panic(kLT0)
	case left && k > m:
		panic(kGTM)
	case !left && k > n:
		panic(kGTN)
	case lda < max(1, k):
		panic(badLdA)
	case ldc < max(1, n):
		panic(badLdC)
	case lwork < max(1, nw) && lwork != -1:
		panic(badLWork)
	case len(work) < max(1, lwork):
		panic(shortWork)
	}
	if m == 0 || n == 0 || k == 0 {
		work[0] = 1
		return
	}
	if lwork == -1 {
		impl.Implementation.Dormqr(side, trans, m, n, k, a, lda, tau, c, ldc, work, -1)
		return
	}
	switch {
	case len(a) < (nq-1)*lda+k:
		panic(shortA)
	case len(tau) != k:
		panic(badLenTau)
	case len(c) < (m-1)*ldc+n:
		panic(shortC)
	}
	klapack.NewWorkspace(work[:lwork]).Dormlq(sideFlip(side), transByte(trans), n, m, k, a, lda, tau[:k], c, ldc)
}

// Dormlq multiplies C by Q or Qᵀ from Dgelqf: dormqr on the views of A and
// C with the side flipped, no copy.
func (impl Implementation) Dormlq(side blas.Side, trans blas.Transpose, m, n, k int, a []float64, lda int, tau, c []float64, ldc int, work []float64, lwork int) {
	left := side == blas.Left
	nq, nw := n, m
	if left {
		nq, nw = m, n
	}
	switch {
	case !left && side != blas.Right:
		panic(badSide)
	case trans != blas.Trans && trans != blas.NoTrans:
		panic(badTrans)
	case m < 0:
		panic(mLT0)
	case n < 0:
		panic(nLT0)
	case k < 0:
		panic(kLT0)
	case left && k > m:
		panic(kGTM)
	case !left && k > n:
		panic(kGTN)
	case left && lda < max(1, m):
		panic(badLdA)
	case !left && lda < max(1, n):
		panic(badLdA)
	case lwork < max(1, nw) && lwork != -1:
		panic(badLWork)
	case len(work) < max(1, lwork):
		panic(shortWork)
	}
	if m == 0 || n == 0 || k == 0 {
		work[0] = 1
		return
	}
	if lwork == -1 {
		impl.Implementation.Dormlq(side, trans, m, n, k, a, lda, tau, c, ldc, work, -1)
		return
	}
	switch {
	case len(a) < (k-1)*lda+nq:
		panic(shortA)
	case len(tau) < k:
		panic(shortTau)
	case len(c) < (m-1)*ldc+n:
		panic(shortC)
	case ldc < max(1, n): // where gonum's Dlarfb checks it
		panic(badLdC)
	}
	klapack.NewWorkspace(work[:lwork]).Dormqr(sideFlip(side), transByte(trans), n, m, k, a, lda, tau[:k], c, ldc)
}

// Dgeqp3 computes the QR factorisation with column pivoting. Column
// pivoting of A would be row pivoting of the view, which LAPACK does not
// offer, so A is copied to column-major for dgeqp3 and back.
func (impl Implementation) Dgeqp3(m, n int, a []float64, lda int, jpvt []int, tau, work []float64, lwork int) {
	minmn := min(m, n)
	iws := 3*n + 1
	if minmn == 0 {
		iws = 1
	}
	switch {
	case m < 0:
		panic(mLT0)
	case n < 0:
		panic(nLT0)
	case lda < max(1, n):
		panic(badLdA)
	case lwork < iws && lwork != -1:
		panic(badLWork)
	case len(work) < max(1, lwork):
		panic(shortWork)
	}
	if minmn == 0 {
		work[0] = 1
		return
	}
	if lwork == -1 {
		impl.Implementation.Dgeqp3(m, n, a, lda, jpvt, tau, work, -1)
		return
	}
	switch {
	case len(a) < (m-1)*lda+n:
		panic(shortA)
	case len(jpvt) != n:
		panic(badLenJpvt)
	case len(tau) < minmn:
		panic(shortTau)
	}
	for _, v := range jpvt {
		if v < -1 || n <= v {
			panic(badJpvt)
		}
	}
	ac := colMajor(m, n, a, lda)
	klapack.NewWorkspace(work[:lwork]).Dgeqp3(m, n, ac, m, jpvt, tau[:minmn])
	fromColMajor(m, n, ac, a, lda)
}

// Dgels solves the least-squares or minimum-norm problem for op(A) X = B:
// dgels on the view of A with the other op (a QR of A is an LQ of Aᵀ), B
// copied to column-major and back.
func (impl Implementation) Dgels(trans blas.Transpose, m, n, nrhs int, a []float64, lda int, b []float64, ldb int, work []float64, lwork int) bool {
	mn := min(m, n)
	minwrk := mn + max(mn, nrhs)
	switch {
	case trans != blas.NoTrans && trans != blas.Trans && trans != blas.ConjTrans:
		panic(badTrans)
	case m < 0:
		panic(mLT0)
	case n < 0:
		panic(nLT0)
	case nrhs < 0:
		panic(nrhsLT0)
	case lda < max(1, n):
		panic(badLdA)
	case ldb < max(1, nrhs):
		panic(badLdB)
	case lwork < max(1, minwrk) && lwork != -1:
		panic(badLWork)
	case len(work) < max(1, lwork):
		panic(shortWork)
	}
	if mn == 0 || nrhs == 0 {
		// gonum's Dlaset, with its checks of b, as gonum's own does.
		impl.Implementation.Dlaset(blas.All, max(m, n), nrhs, 0, 0, b, ldb)
		work[0] = 1
		return true
	}
	if lwork == -1 {
		return impl.Implementation.Dgels(trans, m, n, nrhs, a, lda, b, ldb, work, -1)
	}
	switch {
	case len(a) < (m-1)*lda+n:
		panic(shortA)
	case len(b) < (max(m, n)-1)*ldb+nrhs:
		panic(shortB)
	}
	rows := max(m, n)
	bc := colMajor(rows, nrhs, b, ldb)
	err := klapack.NewWorkspace(work[:lwork]).Dgels(transFlip(trans), n, m, nrhs, a, lda, bc, rows)
	fromColMajor(rows, nrhs, bc, b, ldb)
	return err == nil
}
