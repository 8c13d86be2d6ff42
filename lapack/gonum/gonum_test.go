package gonum

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
	native "gonum.org/v1/gonum/lapack/gonum"

	klapack "github.com/kdual/kdual/lapack"
)

func randomMatrix(r *rand.Rand, m, n, ld int) []float64 {
	a := make([]float64, max(0, (m-1)*ld+n))
	for i := range a {
		a[i] = r.NormFloat64()
	}
	return a
}

func maxDiff(a, b []float64) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i]))
	}
	return d
}

// The square QR path (in-place transposes around dgeqrf and dorgqr, taken
// from order squareQR) is above the sizes testlapack uses: compare it with
// gonum's own Dgeqrf and Dorgqr, entry by entry, with padding (lda > n)
// that must come back untouched.
func TestSquareQRAgreesWithGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{squareQR, squareQR + 37} {
		lda := n + 5
		a := randomMatrix(r, n, n, lda)
		ours, theirs := append([]float64(nil), a...), append([]float64(nil), a...)
		tauO, tauT := make([]float64, n), make([]float64, n)
		work := make([]float64, 64*n)
		impl.Dgeqrf(n, n, ours, lda, tauO, work, len(work))
		native.Implementation{}.Dgeqrf(n, n, theirs, lda, tauT, work, len(work))
		if d := maxDiff(ours, theirs); d > 1e-11*math.Sqrt(float64(n)) {
			t.Errorf("n=%d: Dgeqrf factors differ from gonum's by %g", n, d)
		}
		if d := maxDiff(tauO, tauT); d > 1e-12 {
			t.Errorf("n=%d: Dgeqrf tau differs from gonum's by %g", n, d)
		}
		for i := 0; i < n; i++ {
			for j := n; j < lda && i < n-1; j++ {
				if ours[i*lda+j] != a[i*lda+j] {
					t.Fatalf("n=%d: padding (%d,%d) changed", n, i, j)
				}
			}
		}
		impl.Dorgqr(n, n, n, ours, lda, tauO, work, len(work))
		native.Implementation{}.Dorgqr(n, n, n, theirs, lda, tauT, work, len(work))
		if d := maxDiff(ours, theirs); d > 1e-11*math.Sqrt(float64(n)) {
			t.Errorf("n=%d: Dorgqr Q differs from gonum's by %g", n, d)
		}
	}
}

// Large symmetric and general problems, above testlapack's sizes, against
// gonum's Go code: eigenvalues and singular values agree to rounding.
func TestLargeDriversAgreeWithGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	n := 300
	a := randomMatrix(r, n, n, n)
	sym := append([]float64(nil), a...)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			sym[i*n+j] = sym[j*n+i]
		}
	}
	wO, wT := make([]float64, n), make([]float64, n)
	work := make([]float64, 1)
	impl.Dsyev(lapack.EVCompute, blas.Upper, n, append([]float64(nil), sym...), n, wO, work, -1)
	work = make([]float64, int(work[0]))
	vecs := append([]float64(nil), sym...)
	if !impl.Dsyev(lapack.EVCompute, blas.Upper, n, vecs, n, wO, work, len(work)) {
		t.Fatal("Dsyev failed")
	}
	wk := make([]float64, 3*n)
	native.Implementation{}.Dsyev(lapack.EVNone, blas.Upper, n, append([]float64(nil), sym...), n, wT, wk, len(wk))
	if d := maxDiff(wO, wT); d > 1e-12*math.Abs(wT[n-1]) {
		t.Errorf("Dsyev eigenvalues differ from gonum's by %g", d)
	}
	// Residual ‖A v_j − λ_j v_j‖ with v_j the j-th column.
	for j := 0; j < n; j += 37 {
		res := 0.0
		for i := 0; i < n; i++ {
			s := -wO[j] * vecs[i*n+j]
			for k := 0; k < n; k++ {
				s += sym[i*n+k] * vecs[k*n+j]
			}
			res = math.Max(res, math.Abs(s))
		}
		if res > 1e-12*math.Abs(wT[n-1]) {
			t.Errorf("Dsyev eigenpair %d: residual %g", j, res)
		}
	}
	m := n + 40
	b := randomMatrix(r, m, n, n)
	sO, sT := make([]float64, n), make([]float64, n)
	work = make([]float64, 1)
	impl.Dgesvd(lapack.SVDNone, lapack.SVDNone, m, n, b, n, sO, nil, 1, nil, 1, work, -1)
	work = make([]float64, int(work[0]))
	impl.Dgesvd(lapack.SVDNone, lapack.SVDNone, m, n, append([]float64(nil), b...), n, sO, nil, 1, nil, 1, work, len(work))
	native.Implementation{}.Dgesvd(lapack.SVDNone, lapack.SVDNone, m, n, append([]float64(nil), b...), n, sT, nil, 1, nil, 1, work, len(work))
	if d := maxDiff(sO, sT); d > 1e-12*sT[0] {
		t.Errorf("Dgesvd singular values differ from gonum's by %g", d)
	}
}

// panicOf returns the message f panics with, or "" when it returns.
func panicOf(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

// Bad arguments panic with gonum's own messages, before any work is done.
func TestPanicsMatchGonum(t *testing.T) {
	type call func(l lapack.Float64)
	a := make([]float64, 16)
	short := make([]float64, 3)
	w := make([]float64, 64)
	iw := make([]int, 8)
	big := make([]float64, 4096)
	cases := map[string]call{
		"Dpotrf bad uplo":    func(l lapack.Float64) { l.Dpotrf('x', 4, a, 4) },
		"Dpotrf n<0":         func(l lapack.Float64) { l.Dpotrf(blas.Upper, -1, a, 4) },
		"Dpotrf lda":         func(l lapack.Float64) { l.Dpotrf(blas.Upper, 4, a, 3) },
		"Dpotrf short a":     func(l lapack.Float64) { l.Dpotrf(blas.Upper, 4, short, 4) },
		"Dpotri short a":     func(l lapack.Float64) { l.Dpotri(blas.Lower, 4, short, 4) },
		"Dpotrs ldb":         func(l lapack.Float64) { l.Dpotrs(blas.Lower, 4, 2, a, 4, a, 1) },
		"Dpocon anorm<0":     func(l lapack.Float64) { l.Dpocon(blas.Upper, 4, a, 4, -1, w, iw) },
		"Dpocon short work":  func(l lapack.Float64) { l.Dpocon(blas.Upper, 4, a, 4, 1, short, iw) },
		"Dpstrf piv":         func(l lapack.Float64) { l.Dpstrf(blas.Upper, 4, a, 4, iw[:3], -1, w) },
		"Dpbtrf kd<0":        func(l lapack.Float64) { l.Dpbtrf(blas.Upper, 4, -1, a, 4) },
		"Dpbtrf ldab":        func(l lapack.Float64) { l.Dpbtrf(blas.Upper, 4, 3, a, 3) },
		"Dpbtrs nrhs<0":      func(l lapack.Float64) { l.Dpbtrs(blas.Upper, 4, 1, -1, a, 2, a, 1) },
		"Dpbcon anorm<0":     func(l lapack.Float64) { l.Dpbcon(blas.Upper, 4, 1, a, 2, -1, w, iw) },
		"Dgetrf m<0":         func(l lapack.Float64) { l.Dgetrf(-1, 4, a, 4, iw) },
		"Dgetrf ipiv":        func(l lapack.Float64) { l.Dgetrf(4, 4, a, 4, iw[:3]) },
		"Dgetri lwork":       func(l lapack.Float64) { l.Dgetri(4, a, 4, iw[:4], w, 3) },
		"Dgetri short work":  func(l lapack.Float64) { l.Dgetri(4, a, 4, iw[:4], short, 4) },
		"Dgetrs trans":       func(l lapack.Float64) { l.Dgetrs('x', 4, 1, a, 4, iw[:4], a, 1) },
		"Dgetrs ipiv":        func(l lapack.Float64) { l.Dgetrs(blas.NoTrans, 4, 1, a, 4, iw[:3], a, 1) },
		"Dgecon norm":        func(l lapack.Float64) { l.Dgecon(lapack.Frobenius, 4, a, 4, 1, w, iw) },
		"Dgecon anorm<0":     func(l lapack.Float64) { l.Dgecon(lapack.MaxRowSum, 4, a, 4, -1, w, iw) },
		"Dgecon short iwork": func(l lapack.Float64) { l.Dgecon(lapack.MaxRowSum, 4, a, 4, 1, w, iw[:2]) },
		"Dtrtri diag":        func(l lapack.Float64) { l.Dtrtri(blas.Upper, 'x', 4, a, 4) },
		"Dtrtrs short b":     func(l lapack.Float64) { l.Dtrtrs(blas.Upper, blas.NoTrans, blas.Unit, 4, 2, a, 4, short, 2) },
		"Dtbtrs lda":         func(l lapack.Float64) { l.Dtbtrs(blas.Upper, blas.NoTrans, blas.Unit, 4, 2, 1, a, 2, a, 1) },
		"Dtrcon norm":        func(l lapack.Float64) { l.Dtrcon(lapack.MaxAbs, blas.Upper, blas.Unit, 4, a, 4, w, iw) },
		"Dgeqrf lwork":       func(l lapack.Float64) { l.Dgeqrf(4, 4, a, 4, w[:4], w, 3) },
		"Dgeqrf tau":         func(l lapack.Float64) { l.Dgeqrf(4, 4, a, 4, w[:3], w, 16) },
		"Dgelqf short tau":   func(l lapack.Float64) { l.Dgelqf(4, 4, a, 4, w[:3], w, 16) },
		"Dorgqr n>m":         func(l lapack.Float64) { l.Dorgqr(3, 4, 2, a, 4, w[:4], w, 16) },
		"Dorglq k>m":         func(l lapack.Float64) { l.Dorglq(3, 4, 4, a, 4, w[:4], w, 16) },
		"Dormqr side":        func(l lapack.Float64) { l.Dormqr('x', blas.NoTrans, 4, 4, 2, a, 4, w, a, 4, w, 16) },
		"Dormqr ldc":         func(l lapack.Float64) { l.Dormqr(blas.Left, blas.NoTrans, 4, 4, 2, a, 4, w, a, 3, w, 16) },
		"Dormlq k>n":         func(l lapack.Float64) { l.Dormlq(blas.Right, blas.Trans, 4, 3, 4, a, 4, w, a, 4, w, 16) },
		"Dgeqp3 jpvt":        func(l lapack.Float64) { l.Dgeqp3(4, 4, a, 4, []int{-2, 0, 0, 0}, w[:4], w, 16) },
		"Dgeqp3 lwork":       func(l lapack.Float64) { l.Dgeqp3(4, 4, a, 4, iw[:4], w[:4], w, 12) },
		"Dgels ldb":          func(l lapack.Float64) { l.Dgels(blas.NoTrans, 4, 4, 2, a, 4, a, 1, w, 16) },
		"Dgels short b":      func(l lapack.Float64) { l.Dgels(blas.NoTrans, 4, 4, 2, a, 4, short, 2, w, 16) },
		"Dgesvd overwrite": func(l lapack.Float64) {
			l.Dgesvd(lapack.SVDOverwrite, lapack.SVDNone, 4, 4, a, 4, w, a, 4, a, 4, w, 64)
		},
		"Dgesvd ldu":        func(l lapack.Float64) { l.Dgesvd(lapack.SVDAll, lapack.SVDNone, 4, 4, a, 4, w, a, 3, a, 4, w, 64) },
		"Dgesvd lwork":      func(l lapack.Float64) { l.Dgesvd(lapack.SVDNone, lapack.SVDNone, 4, 4, a, 4, w, a, 4, a, 4, w, 3) },
		"Dgesvd lwork wide": func(l lapack.Float64) { l.Dgesvd(lapack.SVDNone, lapack.SVDNone, 2, 8, a, 8, w, nil, 1, nil, 1, w, 12) },
		"Dsyev job":         func(l lapack.Float64) { l.Dsyev('x', blas.Upper, 4, a, 4, w, w, 64) },
		"Dsyev short a":     func(l lapack.Float64) { l.Dsyev(lapack.EVNone, blas.Upper, 4, a[:14], 4, w[:4], w, 64) },
		"Dgesvd short a": func(l lapack.Float64) {
			l.Dgesvd(lapack.SVDNone, lapack.SVDNone, 4, 4, a[:14], 4, w[:4], nil, 1, nil, 1, w, 64)
		},
		"Dgeev short a": func(l lapack.Float64) {
			l.Dgeev(lapack.LeftEVNone, lapack.RightEVNone, 4, a[:14], 4, w[:4], w[4:8], nil, 1, nil, 1, w, 64)
		},
		"Dggsvd3 short b": func(l lapack.Float64) {
			l.Dggsvd3(lapack.GSVDNone, lapack.GSVDNone, lapack.GSVDNone, 4, 4, 4, a, 4, a[:14], 4, w[:4], w[4:8], nil, 1, nil, 1, nil, 1, big, len(big), iw[:4])
		},
		"Dgetrf short a": func(l lapack.Float64) { l.Dgetrf(4, 4, a[:14], 4, iw[:4]) },
		"Dgetrf n<0":     func(l lapack.Float64) { l.Dgetrf(4, -1, a, 4, iw) },
		"Dgetrf lda":     func(l lapack.Float64) { l.Dgetrf(4, 4, a, 3, iw) },
		"Dgetrs short b": func(l lapack.Float64) { l.Dgetrs(blas.NoTrans, 4, 2, a, 4, iw[:4], a[:7], 2) },
		"Dsyev short w":  func(l lapack.Float64) { l.Dsyev(lapack.EVNone, blas.Upper, 4, a, 4, short, w, 64) },
		"Dgeev jobvl":    func(l lapack.Float64) { l.Dgeev('x', lapack.RightEVNone, 4, a, 4, w[:4], w[:4], nil, 1, nil, 1, w, 64) },
		"Dgeev ldvr": func(l lapack.Float64) {
			l.Dgeev(lapack.LeftEVNone, lapack.RightEVCompute, 4, a, 4, w[:4], w[:4], nil, 1, a, 3, w, 64)
		},
		"Dgeev wr": func(l lapack.Float64) {
			l.Dgeev(lapack.LeftEVNone, lapack.RightEVNone, 4, a, 4, w[:3], w[:4], nil, 1, nil, 1, w, 64)
		},
		"Dggsvd3 job": func(l lapack.Float64) {
			l.Dggsvd3('x', lapack.GSVDNone, lapack.GSVDNone, 4, 4, 4, a, 4, a, 4, w[:4], w[:4], nil, 1, nil, 1, nil, 1, w, 64, iw[:4])
		},
		"Dggsvd3 alpha": func(l lapack.Float64) {
			l.Dggsvd3(lapack.GSVDNone, lapack.GSVDNone, lapack.GSVDNone, 4, 4, 4, a, 4, a, 4, w[:3], w[:4], nil, 1, nil, 1, nil, 1, big, len(big), iw[:4])
		},
		"Dlange norm":       func(l lapack.Float64) { l.Dlange('x', 4, 4, a, 4, w) },
		"Dlange short work": func(l lapack.Float64) { l.Dlange(lapack.MaxColumnSum, 4, 4, a, 4, short) },
		"Dlansy short a":    func(l lapack.Float64) { l.Dlansy(lapack.MaxAbs, blas.Upper, 4, short, 4, w) },
		"Dlantr diag":       func(l lapack.Float64) { l.Dlantr(lapack.MaxAbs, blas.Upper, 'x', 4, 4, a, 4, w) },
		"Dlapmr k":          func(l lapack.Float64) { l.Dlapmr(true, 4, 4, a, 4, iw[:3]) },
		"Dlapmt ldx":        func(l lapack.Float64) { l.Dlapmt(true, 4, 4, a, 3, iw[:4]) },
	}
	for name, c := range cases {
		ours := panicOf(func() { c(impl) })
		theirs := panicOf(func() { c(native.Implementation{}) })
		if theirs == "" {
			t.Errorf("%s: case does not panic in gonum's implementation", name)
			continue
		}
		if ours != theirs {
			t.Errorf("%s: panic %q, gonum's %q", name, ours, theirs)
		}
	}
}

// The blocked, parallel transposes against the definition, for shapes below
// and above the parallel threshold, with padding (ld > columns) untouched.
func TestTransposes(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, sz := range [][2]int{{1, 1}, {3, 70}, {65, 64}, {300, 257}, {513, 129}} {
		m, n := sz[0], sz[1]
		lds, ldd := n+3, m+2
		src := randomMatrix(r, m, n, lds)
		dst := make([]float64, (n-1)*ldd+m+2)
		dst[len(dst)-1] = 42
		transpose(m, n, src, lds, dst, ldd)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				if dst[j*ldd+i] != src[i*lds+j] {
					t.Fatalf("%d×%d: transpose (%d,%d) wrong", m, n, i, j)
				}
			}
		}
		if dst[len(dst)-1] != 42 {
			t.Fatalf("%d×%d: transpose wrote past the matrix", m, n)
		}
		k := min(m, n)
		sq := append([]float64(nil), src...)
		transposeSquare(k, sq, lds)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				want := src[i*lds+j]
				if i < k && j < k {
					want = src[j*lds+i]
				}
				if sq[i*lds+j] != want {
					t.Fatalf("%d×%d: in-place transpose of the leading %d×%d block wrong at (%d,%d)", m, n, k, k, i, j)
				}
			}
		}
	}
}

// Dgecon takes plain triangular solves (dtrsv) and falls back on dlatrs
// when they leave the safe range: both paths must give gonum's estimate —
// an LU factorisation of a random matrix (the plain solves), and factors
// whose solves overflow (a U with diagonal entries of 1e-200, where
// dlatrs scales).
func TestDgeconAgreesWithGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const n, lda = 120, 125
	a := randomMatrix(r, n, n, lda)
	ipiv := make([]int, n)
	impl.Dgetrf(n, n, a, lda, ipiv)
	tiny := randomMatrix(r, n, n, lda)
	for i := 0; i < n; i++ {
		tiny[i*lda+i] = 1e-200 * (1 + float64(i%3))
	}
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	klapack.Dtrsv('L', 'N', 'N', n, tiny, lda, ones)
	if solvedInRange(ones) {
		t.Fatal("the overflowing factors do not leave the plain solve's range")
	}
	// And the unit factor's solves overflowing too (its off-diagonal
	// entries of order 1e60): both dlatrs calls scale, each with its own
	// column norms, kept between the estimator's steps.
	steep := append([]float64(nil), tiny...)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			steep[i*lda+j] *= 1e60 // LAPACK's upper triangle, column-major
		}
	}
	for i := range ones {
		ones[i] = 1
	}
	klapack.Dtrsv('U', 'T', 'U', n, steep, lda, ones)
	if solvedInRange(ones) {
		t.Fatal("the steep unit factor does not leave the plain solve's range")
	}
	work, iwork := make([]float64, 4*n), make([]int, n)
	for _, c := range []struct {
		name string
		a    []float64
	}{{"lu", a}, {"overflowing", tiny}, {"both overflowing", steep}} {
		for _, norm := range []lapack.MatrixNorm{lapack.MaxColumnSum, lapack.MaxRowSum} {
			anorm := native.Implementation{}.Dlange(norm, n, n, c.a, lda, work)
			before := append([]float64(nil), c.a...)
			got := impl.Dgecon(norm, n, c.a, lda, anorm, work, iwork)
			want := native.Implementation{}.Dgecon(norm, n, c.a, lda, anorm, work, iwork)
			if maxDiff(before, c.a) != 0 {
				t.Fatalf("%s %c: the factors changed", c.name, norm)
			}
			if math.IsNaN(got) || math.Abs(got-want) > 1e-10*math.Abs(want) {
				t.Errorf("%s %c: rcond %g, gonum's %g", c.name, norm, got, want)
			}
		}
	}
}

// Dlange's parallel sums (from langeParallelFrom entries) agree with
// gonum's Dlange on a matrix with NaN-poisoned padding, in every norm and
// on odd shapes, and a NaN entry anywhere gives NaN, as dlange's DISNAN
// tests do.
func TestLangeParallelAgreesWithGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	// Entries of order 1 and far below (every norm under 1: no sum may
	// start from anything but 0).
	for _, sh := range [][3]float64{{700, 401, 1}, {257, 1100, 1}, {1, langeParallelFrom + 3, 1}, {300, 200, 1e-5}} {
		m, n := int(sh[0]), int(sh[1])
		lda := n + 3
		a := randomMatrix(r, m, n, lda)
		for i := range a {
			a[i] *= sh[2]
		}
		for i := 0; i < m-1; i++ {
			for j := n; j < lda; j++ {
				a[i*lda+j] = math.NaN()
			}
		}
		work := make([]float64, max(m, n))
		for _, norm := range []lapack.MatrixNorm{lapack.MaxAbs, lapack.MaxColumnSum, lapack.MaxRowSum, lapack.Frobenius} {
			got := impl.Dlange(norm, m, n, a, lda, work)
			want := native.Implementation{}.Dlange(norm, m, n, a, lda, work)
			if math.IsNaN(got) || math.Abs(got-want) > 1e-12*want {
				t.Errorf("%d×%d %c: %g, gonum's %g", m, n, norm, got, want)
			}
			if norm != lapack.Frobenius {
				// The parallel sums themselves, whatever the size rule.
				if got := langeParallel(norm, m, n, a, lda); math.Abs(got-want) > 1e-12*want {
					t.Errorf("%d×%d %c: parallel %g, gonum's %g", m, n, norm, got, want)
				}
			}
			for _, at := range [][2]int{{0, 0}, {m / 2, n - 1}, {m - 1, n / 3}} {
				b := append([]float64(nil), a...)
				b[at[0]*lda+at[1]] = math.NaN()
				if got := impl.Dlange(norm, m, n, b, lda, work); !math.IsNaN(got) {
					t.Errorf("%d×%d %c: NaN at %v gives %g", m, n, norm, at, got)
				}
			}
		}
	}
}

// The plain-solve range of Dgecon: finite entries up to 2^900 in
// magnitude, both signs, the bound itself included.
func TestSolvedInRange(t *testing.T) {
	require.True(t, solvedInRange([]float64{0, -1, 0x1p900, -0x1p900}))
	require.False(t, solvedInRange([]float64{1, math.Nextafter(0x1p900, math.Inf(1))}))
	require.False(t, solvedInRange([]float64{-math.Nextafter(0x1p900, math.Inf(1))}))
	require.False(t, solvedInRange([]float64{math.NaN()}))
	require.False(t, solvedInRange([]float64{math.Inf(-1)}))
	require.True(t, solvedInRange(nil))
}

// Dgels on small and thin problems (one row or one column, both
// transposes, one and two right-hand sides) against gonum's own.
func TestDgelsSmallAgreesWithGonum(t *testing.T) {
	for _, sh := range [][3]int{{3, 1, 1}, {1, 3, 2}, {2, 2, 1}, {4, 2, 2}, {1, 1, 1}} {
		m, n, nrhs := sh[0], sh[1], sh[2]
		for _, tr := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			rows := max(m, n)
			mk := func() ([]float64, []float64) {
				a := make([]float64, m*n)
				for i := range a {
					a[i] = 1 + float64(i%4) + 0.25*float64(i*i%7)
				}
				b := make([]float64, rows*nrhs)
				for i := range b {
					b[i] = float64(i%5) - 1.5
				}
				return a, b
			}
			work := make([]float64, 256)
			a1, b1 := mk()
			require.True(t, impl.Dgels(tr, m, n, nrhs, a1, n, b1, nrhs, work, len(work)))
			a2, b2 := mk()
			require.True(t, native.Implementation{}.Dgels(tr, m, n, nrhs, a2, n, b2, nrhs, work, len(work)))
			require.InDeltaSlice(t, b2, b1, 1e-12, "%d×%d, %d rhs, %c", m, n, nrhs, tr)
		}
	}
}

// Calls of order zero succeed at once, as gonum's own routines do, with
// work[0] = 1 — the least workspace, which reference LAPACK writes there
// for N = 0 (gonum's Dsyev leaves work alone) — whatever work held.
func TestZeroOrderWorkspace(t *testing.T) {
	calls := map[string]func(l lapack.Float64, work []float64) bool{
		"Dsyev": func(l lapack.Float64, w []float64) bool {
			return l.Dsyev(lapack.EVCompute, blas.Upper, 0, nil, 1, nil, w, 1)
		},
		"Dgesvd": func(l lapack.Float64, w []float64) bool {
			return l.Dgesvd(lapack.SVDNone, lapack.SVDNone, 0, 3, nil, 3, nil, nil, 1, nil, 1, w, 1)
		},
		"Dgetri": func(l lapack.Float64, w []float64) bool { return l.Dgetri(0, nil, 1, nil, w, 1) },
		"Dgeqrf": func(l lapack.Float64, w []float64) bool { l.Dgeqrf(0, 0, nil, 1, nil, w, 1); return true },
		"Dgelqf": func(l lapack.Float64, w []float64) bool { l.Dgelqf(0, 0, nil, 1, nil, w, 1); return true },
		"Dorgqr": func(l lapack.Float64, w []float64) bool { l.Dorgqr(0, 0, 0, nil, 1, nil, w, 1); return true },
		"Dorglq": func(l lapack.Float64, w []float64) bool { l.Dorglq(0, 0, 0, nil, 1, nil, w, 1); return true },
		"Dormqr": func(l lapack.Float64, w []float64) bool {
			l.Dormqr(blas.Left, blas.NoTrans, 0, 0, 0, nil, 1, nil, nil, 1, w, 1)
			return true
		},
		"Dormlq": func(l lapack.Float64, w []float64) bool {
			l.Dormlq(blas.Left, blas.NoTrans, 0, 0, 0, nil, 1, nil, nil, 1, w, 1)
			return true
		},
	}
	for name, call := range calls {
		ours, theirs := []float64{-7}, []float64{-7}
		okO := call(impl, ours)
		okT := call(native.Implementation{}, theirs)
		require.Equal(t, okT, okO, name)
		require.True(t, okO, name)
		require.Equal(t, 1.0, ours[0], name)
	}
}
