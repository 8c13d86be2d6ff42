package gonum

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"

	klapack "github.com/kdual/kdual/lapack"
)

// Eigenvalue and singular value drivers.

// Dsyev computes all eigenvalues and optionally the eigenvectors of a
// symmetric matrix. It runs LAPACK's divide-and-conquer driver dsyevd (the
// same eigenpairs as dsyev, faster for vectors; NumPy's eigh uses it too)
// on the view with the other triangle; the eigenvectors come back in the
// columns of the view, that is the rows of A, and one in-place transpose
// puts them in the columns. The workspace query reports dsyevd's optimum; a
// smaller work is accepted and the rest allocated.
func (Implementation) Dsyev(jobz lapack.EVJob, uplo blas.Uplo, n int, a []float64, lda int, w, work []float64, lwork int) (ok bool) {
	switch {
	case jobz != lapack.EVNone && jobz != lapack.EVCompute:
		panic(badEVJob)
	case uplo != blas.Upper && uplo != blas.Lower:
		panic(badUplo)
	case n < 0:
		panic(nLT0)
	case lda < max(1, n):
		panic(badLdA)
	case lwork < max(1, 3*n-1) && lwork != -1:
		panic(badLWork)
	case len(work) < max(1, lwork):
		panic(shortWork)
	}
	if n == 0 {
		work[0] = 1
		return true
	}
	jz := byte('N')
	if jobz == lapack.EVCompute {
		jz = 'V'
	}
	if lwork == -1 {
		work[0] = float64(max(3*n-1, klapack.DsyevdWork(jz, n)))
		return true
	}
	switch {
	case len(a) < (n-1)*lda+n:
		panic(shortA)
	case len(w) < n:
		panic(shortW)
	}
	if nonFiniteTriangle(uplo, n, a, lda, true) {
		// gonum's contract: no eigenvalues from a NaN or an infinity
		// (LAPACK's dsyevd would return garbage or loop).
		fillNaN(w[:n])
		return false
	}
	err := klapack.NewWorkspace(work[:lwork]).Dsyevd(jz, uploFlip(uplo), n, a, lda, w)
	if err != nil {
		return false
	}
	if jz == 'V' {
		transposeSquare(n, a, lda)
	}
	return true
}

// Dgesvd computes the singular value decomposition A = U Σ Vᵀ with LAPACK's
// divide-and-conquer driver dgesdd (the one NumPy's svd calls; with vectors
// it was 20× faster than dgesvd at n = 2000 here, see docs/lapack.md). On the
// view, Aᵀ = V Σ Uᵀ, and column-major Uᵀ is row-major U: dgesdd's U and Vᵀ
// of the view are gonum's Vᵀ and U, written in place. dgesdd computes both
// sets of vectors or neither, with one job: for unequal jobU and jobVT it
// runs with the larger one and the unrequested part goes to a scratch
// buffer, so every job combination returns the same vectors as All/All.
// As in gonum, lapack.SVDOverwrite is not supported.
func (Implementation) Dgesvd(jobU, jobVT lapack.SVDJob, m, n int, a []float64, lda int, s, u []float64, ldu int, vt []float64, ldvt int, work []float64, lwork int) (ok bool) {
	if jobU == lapack.SVDOverwrite || jobVT == lapack.SVDOverwrite {
		panic(noSVDO)
	}
	wantua, wantus := jobU == lapack.SVDAll, jobU == lapack.SVDStore
	if !(wantua || wantus || jobU == lapack.SVDNone) {
		panic(badSVDJob)
	}
	wantva, wantvs := jobVT == lapack.SVDAll, jobVT == lapack.SVDStore
	if !(wantva || wantvs || jobVT == lapack.SVDNone) {
		panic(badSVDJob)
	}
	minmn := min(m, n)
	minwork := 1
	if minmn > 0 {
		minwork = max(3*minmn+max(m, n), 5*minmn)
	}
	switch {
	case m < 0:
		panic(mLT0)
	case n < 0:
		panic(nLT0)
	case lda < max(1, n):
		panic(badLdA)
	case ldu < 1, wantua && ldu < m, wantus && ldu < minmn:
		panic(badLdU)
	case ldvt < 1 || ((wantva || wantvs) && ldvt < n):
		panic(badLdVT)
	case lwork < minwork && lwork != -1:
		panic(badLWork)
	case len(work) < max(1, lwork):
		panic(shortWork)
	}
	if minmn == 0 {
		work[0] = 1
		return true
	}
	ju, jv := svdByte(jobU), svdByte(jobVT)
	jz := byte('N')
	switch {
	case ju == 'A' || jv == 'A':
		jz = 'A'
	case ju == 'S' || jv == 'S':
		jz = 'S'
	}
	if lwork == -1 {
		work[0] = float64(max(minwork, klapack.DgesddWork(jz, n, m)))
		return true
	}
	switch {
	case len(a) < (m-1)*lda+n:
		panic(shortA)
	case len(s) < minmn:
		panic(shortS)
	case (len(u) < (m-1)*ldu+m && wantua) || (len(u) < (m-1)*ldu+minmn && wantus):
		panic(shortU)
	case (len(vt) < (n-1)*ldvt+n && wantva) || (len(vt) < (minmn-1)*ldvt+n && wantvs):
		panic(shortVT)
	}
	if nonFinite(m, n, a, lda) {
		// gonum's contract: ok = false with NaN values (OpenBLAS's
		// dgesdd refuses a NaN as an illegal argument and never returns
		// on an infinity).
		fillNaN(s[:minmn])
		return false
	}
	// cols is how many singular vectors dgesdd writes with job jz.
	cols := func(full int) int {
		if jz == 'A' {
			return full
		}
		return minmn
	}
	// Vᵀ (gonum, row-major cols(n)×n) is dgesdd's U of the view (n×cols(n)).
	vtBuf, ldvtBuf := vt, ldvt
	if jv != jz && jz != 'N' {
		vtBuf, ldvtBuf = make([]float64, cols(n)*n), n
	}
	// U (gonum, row-major m×cols(m)) is dgesdd's Vᵀ of the view (cols(m)×m).
	uBuf, lduBuf := u, ldu
	if ju != jz && jz != 'N' {
		uBuf, lduBuf = make([]float64, m*cols(m)), cols(m)
	}
	err := klapack.NewWorkspace(work[:lwork]).Dgesdd(jz, n, m, a, lda, s, vtBuf, ldvtBuf, uBuf, lduBuf)
	if err != nil {
		return false
	}
	if jv == 'S' && jz == 'A' {
		for i := 0; i < minmn; i++ {
			copy(vt[i*ldvt:i*ldvt+n], vtBuf[i*n:i*n+n])
		}
	}
	if ju == 'S' && jz == 'A' {
		for i := 0; i < m; i++ {
			copy(u[i*ldu:i*ldu+minmn], uBuf[i*m:i*m+minmn])
		}
	}
	return true
}

func svdByte(j lapack.SVDJob) byte {
	switch j {
	case lapack.SVDAll:
		return 'A'
	case lapack.SVDStore:
		return 'S'
	}
	return 'N'
}

// Dgeev computes the eigenvalues and optionally the left and right
// eigenvectors of a general matrix. The Hessenberg QR algorithm on Aᵀ would
// order and normalise differently, so A is copied to column-major for dgeev
// and the eigenvectors (and the Schur form left in A) transposed back.
func (impl Implementation) Dgeev(jobvl lapack.LeftEVJob, jobvr lapack.RightEVJob, n int, a []float64, lda int, wr, wi []float64, vl []float64, ldvl int, vr []float64, ldvr int, work []float64, lwork int) (first int) {
	wantvl := jobvl == lapack.LeftEVCompute
	wantvr := jobvr == lapack.RightEVCompute
	minwrk := max(1, 3*n)
	if wantvl || wantvr {
		minwrk = max(1, 4*n)
	}
	switch {
	case jobvl != lapack.LeftEVCompute && jobvl != lapack.LeftEVNone:
		panic(badLeftEVJob)
	case jobvr != lapack.RightEVCompute && jobvr != lapack.RightEVNone:
		panic(badRightEVJob)
	case n < 0:
		panic(nLT0)
	case lda < max(1, n):
		panic(badLdA)
	case ldvl < 1 || (ldvl < n && wantvl):
		panic(badLdVL)
	case ldvr < 1 || (ldvr < n && wantvr):
		panic(badLdVR)
	case lwork < minwrk && lwork != -1:
		panic(badLWork)
	case len(work) < lwork:
		panic(shortWork)
	}
	if n == 0 {
		work[0] = 1
		return 0
	}
	jl, jr := byte('N'), byte('N')
	if wantvl {
		jl = 'V'
	}
	if wantvr {
		jr = 'V'
	}
	// gonum's own runs its workspace queries before it checks the
	// lengths of a and the outputs, and those queries panic on some short
	// slices (and on an empty work): the same panics here.
	if lwork == -1 {
		impl.Implementation.Dgeev(jobvl, jobvr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr, work, -1)
		work[0] = float64(max(minwrk, klapack.DgeevWork(jl, jr, n)))
		return 0
	}
	var query [1]float64
	impl.Implementation.Dgeev(jobvl, jobvr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr, query[:], -1)
	switch {
	case len(a) < (n-1)*lda+n:
		panic(shortA)
	case len(wr) != n:
		panic(badLenWr)
	case len(wi) != n:
		panic(badLenWi)
	case len(vl) < (n-1)*ldvl+n && wantvl:
		panic(shortVL)
	case len(vr) < (n-1)*ldvr+n && wantvr:
		panic(shortVR)
	}
	if nonFinite(n, n, a, lda) {
		// No eigenvalue of a matrix with a NaN or an infinity: none is
		// valid (first = n), so mat.Eigen says ok = false.
		fillNaN(wr)
		fillNaN(wi)
		return n
	}
	ac := colMajor(n, n, a, lda)
	var vlc, vrc []float64
	if wantvl {
		vlc = make([]float64, n*n)
	}
	if wantvr {
		vrc = make([]float64, n*n)
	}
	first, err := klapack.NewWorkspace(work[:lwork]).Dgeev(jl, jr, n, ac, n, wr, wi, vlc, n, vrc, n)
	fromColMajor(n, n, ac, a, lda)
	if err != nil {
		return first
	}
	if wantvl {
		fromColMajor(n, n, vlc, vl, ldvl)
	}
	if wantvr {
		fromColMajor(n, n, vrc, vr, ldvr)
	}
	return 0
}

// Dggsvd3 computes the generalised singular value decomposition of A and B:
// both are copied to column-major for dggsvd3 and copied back with U, V and
// Q; iwork gets 0-based indices.
func (impl Implementation) Dggsvd3(jobU, jobV, jobQ lapack.GSVDJob, m, n, p int, a []float64, lda int, b []float64, ldb int, alpha, beta, u []float64, ldu int, v []float64, ldv int, q []float64, ldq int, work []float64, lwork int, iwork []int) (k, l int, ok bool) {
	wantu := jobU == lapack.GSVDU
	wantv := jobV == lapack.GSVDV
	wantq := jobQ == lapack.GSVDQ
	switch {
	case !wantu && jobU != lapack.GSVDNone:
		panic(badGSVDJob + "U")
	case !wantv && jobV != lapack.GSVDNone:
		panic(badGSVDJob + "V")
	case !wantq && jobQ != lapack.GSVDNone:
		panic(badGSVDJob + "Q")
	case m < 0:
		panic(mLT0)
	case n < 0:
		panic(nLT0)
	case p < 0:
		panic(pLT0)
	case lda < max(1, n):
		panic(badLdA)
	case ldb < max(1, n):
		panic(badLdB)
	case ldu < 1, wantu && ldu < m:
		panic(badLdU)
	case ldv < 1, wantv && ldv < p:
		panic(badLdV)
	case ldq < 1, wantq && ldq < n:
		panic(badLdQ)
	case len(iwork) < n:
		panic(shortWork)
	case lwork < 1 && lwork != -1:
		panic(badLWork)
	case len(work) < max(1, lwork):
		panic(shortWork)
	}
	if lwork == -1 {
		return impl.Implementation.Dggsvd3(jobU, jobV, jobQ, m, n, p, a, lda, b, ldb, alpha, beta, u, ldu, v, ldv, q, ldq, work, -1, iwork)
	}
	// gonum's own runs its workspace query (which panics on some
	// inconsistent sizes) before it checks the lengths: the same here.
	var query [1]float64
	impl.Implementation.Dggsvd3(jobU, jobV, jobQ, m, n, p, a, lda, b, ldb, alpha, beta, u, ldu, v, ldv, q, ldq, query[:], -1, iwork)
	switch {
	case len(a) < (m-1)*lda+n:
		panic(shortA)
	case len(b) < (p-1)*ldb+n:
		panic(shortB)
	case wantu && len(u) < (m-1)*ldu+m:
		panic(shortU)
	case wantv && len(v) < (p-1)*ldv+p:
		panic(shortV)
	case wantq && len(q) < (n-1)*ldq+n:
		panic(shortQ)
	case len(alpha) != n:
		panic(badLenAlpha)
	case len(beta) != n:
		panic(badLenBeta)
	}
	if nonFinite(m, n, a, lda) || nonFinite(p, n, b, ldb) {
		// gonum's contract: ok = false (gonum's own dggsvd3 says its
		// Jacobi iterations did not converge; LAPACK's returns
		// finite-looking values from a NaN).
		fillNaN(alpha)
		fillNaN(beta)
		return 0, 0, false
	}
	ac := colMajor(m, n, a, lda)
	bc := colMajor(p, n, b, ldb)
	var uc, vc, qc []float64
	ju, jv, jq := byte('N'), byte('N'), byte('N')
	if wantu {
		ju, uc = 'U', make([]float64, max(1, m*m))
	}
	if wantv {
		jv, vc = 'V', make([]float64, max(1, p*p))
	}
	if wantq {
		jq, qc = 'Q', make([]float64, max(1, n*n))
	}
	k, l, err := klapack.NewWorkspace(work[:lwork]).Dggsvd3(ju, jv, jq, m, n, p, ac, max(1, m), bc, max(1, p),
		alpha, beta, uc, max(1, m), vc, max(1, p), qc, max(1, n), iwork[:n])
	fromColMajor(m, n, ac, a, lda)
	fromColMajor(p, n, bc, b, ldb)
	if wantu {
		fromColMajor(m, m, uc, u, ldu)
	}
	if wantv {
		fromColMajor(p, p, vc, v, ldv)
	}
	if wantq {
		fromColMajor(n, n, qc, q, ldq)
	}
	return k, l, err == nil
}

// nonFinite reports whether the m×n row-major matrix a holds a NaN or an
// infinity.
func nonFinite(m, n int, a []float64, lda int) bool {
	for i := 0; i < m; i++ {
		for _, v := range a[i*lda : i*lda+n] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return true
			}
		}
	}
	return false
}

// nonFiniteTriangle is nonFinite on the uplo triangle of the n×n matrix a
// (the part LAPACK reads); with inf false only NaN counts.
func nonFiniteTriangle(uplo blas.Uplo, n int, a []float64, lda int, inf bool) bool {
	for i := 0; i < n; i++ {
		row := a[i*lda+i : i*lda+n]
		if uplo == blas.Lower {
			row = a[i*lda : i*lda+i+1]
		}
		for _, v := range row {
			if math.IsNaN(v) || (inf && math.IsInf(v, 0)) {
				return true
			}
		}
	}
	return false
}

func fillNaN(v []float64) {
	for i := range v {
		v[i] = math.NaN()
	}
}
