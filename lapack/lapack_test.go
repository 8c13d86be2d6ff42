package lapack

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdual/kdual/native"
)

// cm is a column-major test matrix with a padded leading dimension; the
// padding is poisoned with NaN so that a stride bug shows up as NaN.
type cm struct {
	r, c, ld int
	d        []float64
}

func newCM(r, c int) *cm {
	ld := r + 3
	d := make([]float64, ld*max(c, 1))
	for i := range d {
		d[i] = math.NaN()
	}
	for j := 0; j < c; j++ {
		for i := 0; i < r; i++ {
			d[j*ld+i] = 0
		}
	}
	return &cm{r, c, ld, d}
}

func (m *cm) at(i, j int) float64     { return m.d[j*m.ld+i] }
func (m *cm) set(i, j int, v float64) { m.d[j*m.ld+i] = v }

func (m *cm) clone() *cm {
	d := append([]float64(nil), m.d...)
	return &cm{m.r, m.c, m.ld, d}
}

func mul(a, b *cm, ta, tb bool) *cm {
	ar, ac := a.r, a.c
	if ta {
		ar, ac = ac, ar
	}
	br, bc := b.r, b.c
	if tb {
		br, bc = bc, br
	}
	if ac != br {
		panic("shape")
	}
	get := func(m *cm, t bool, i, j int) float64 {
		if t {
			return m.at(j, i)
		}
		return m.at(i, j)
	}
	out := newCM(ar, bc)
	for i := 0; i < ar; i++ {
		for j := 0; j < bc; j++ {
			s := 0.0
			for l := 0; l < ac; l++ {
				s += get(a, ta, i, l) * get(b, tb, l, j)
			}
			out.set(i, j, s)
		}
	}
	return out
}

func maxAbsDiff(a, b *cm) float64 {
	d := 0.0
	for j := 0; j < a.c; j++ {
		for i := 0; i < a.r; i++ {
			d = math.Max(d, math.Abs(a.at(i, j)-b.at(i, j)))
		}
	}
	return d
}

func frob(a *cm) float64 {
	s := 0.0
	for j := 0; j < a.c; j++ {
		for i := 0; i < a.r; i++ {
			s += a.at(i, j) * a.at(i, j)
		}
	}
	return math.Sqrt(s)
}

func randCM(rng *rand.Rand, r, c int) *cm {
	m := newCM(r, c)
	for j := 0; j < c; j++ {
		for i := 0; i < r; i++ {
			m.set(i, j, rng.NormFloat64())
		}
	}
	return m
}

// orthogonal returns a random n×n orthogonal matrix by modified
// Gram–Schmidt on a Gaussian matrix (pure Go, independent of LAPACK).
func orthogonal(rng *rand.Rand, n int) *cm {
	q := randCM(rng, n, n)
	for j := 0; j < n; j++ {
		for p := 0; p < j; p++ {
			dot := 0.0
			for i := 0; i < n; i++ {
				dot += q.at(i, p) * q.at(i, j)
			}
			for i := 0; i < n; i++ {
				q.set(i, j, q.at(i, j)-dot*q.at(i, p))
			}
		}
		nrm := 0.0
		for i := 0; i < n; i++ {
			nrm += q.at(i, j) * q.at(i, j)
		}
		nrm = math.Sqrt(nrm)
		for i := 0; i < n; i++ {
			q.set(i, j, q.at(i, j)/nrm)
		}
	}
	return q
}

// symWithSpectrum returns Q diag(lambda) Qᵀ with the triangle opposite to
// keep poisoned with NaN, so the test proves LAPACK reads only uplo.
func symWithSpectrum(rng *rand.Rand, lambda []float64, keep byte) *cm {
	n := len(lambda)
	q := orthogonal(rng, n)
	ql := q.clone()
	for j := 0; j < n; j++ {
		for i := 0; i < n; i++ {
			ql.set(i, j, q.at(i, j)*lambda[j])
		}
	}
	a := mul(ql, q, false, true)
	for j := 0; j < n; j++ {
		for i := 0; i < n; i++ {
			if (keep == 'U' && i > j) || (keep == 'L' && i < j) {
				a.set(i, j, math.NaN())
			}
		}
	}
	return a
}

func fullSym(a *cm, uplo byte) *cm {
	f := a.clone()
	for j := 0; j < a.c; j++ {
		for i := 0; i < a.r; i++ {
			if (uplo == 'U' && i > j) || (uplo == 'L' && i < j) {
				f.set(i, j, a.at(j, i))
			}
		}
	}
	return f
}

var spectra = map[string][]float64{
	"n=1":       {3},
	"n=2":       {2, -1},
	"decay":     geometric(40, 0.7),
	"clustered": {5, 5, 5, 5 + 1e-12, 1, 1, 1, 1, -1, -1, -1, 0.5, 0.5, 0.5, 0.5, 2},
	"negative":  {-1, -2, -3, -4, -5, -6, -7, -8, 9, 10},
	"zeros":     {0, 0, 0, 1, 2, 0, 0},
}

func geometric(n int, r float64) []float64 {
	l := make([]float64, n)
	v := 1.0
	for i := range l {
		l[i] = v
		v *= r
	}
	return l
}

func sortedAsc(l []float64) []float64 {
	s := append([]float64(nil), l...)
	sort.Float64s(s)
	return s
}

func normOf(l []float64) float64 {
	m := 0.0
	for _, v := range l {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

// checkEigen asserts ‖AV − VΛ‖_F/(n‖A‖) ≤ 1e-12 and ‖VᵀV − I‖_max ≤ 1e-12.
func checkEigen(t *testing.T, a *cm, w []float64, v *cm, anorm float64) {
	t.Helper()
	n, k := a.r, v.c
	av := mul(a, v, false, false)
	for j := 0; j < k; j++ {
		for i := 0; i < n; i++ {
			av.set(i, j, av.at(i, j)-v.at(i, j)*w[j])
		}
	}
	require.LessOrEqual(t, frob(av)/(float64(n)*math.Max(anorm, 1e-300)), 1e-12, "residual")
	vtv := mul(v, v, true, false)
	for i := 0; i < k; i++ {
		vtv.set(i, i, vtv.at(i, i)-1)
	}
	require.LessOrEqual(t, maxAbsDiff(vtv, newCM(k, k)), 1e-12, "orthogonality")
}

func TestDsyevdKnownSpectra(t *testing.T) {
	for name, lambda := range spectra {
		for _, uplo := range []byte{'U', 'L'} {
			t.Run(name+"/"+string(uplo), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(1, uint64(len(lambda))))
				a := symWithSpectrum(rng, lambda, uplo)
				full := fullSym(a, uplo)
				n := len(lambda)
				w := make([]float64, n)
				work := a.clone()
				var ws Workspace
				require.NoError(t, ws.Dsyevd('V', uplo, n, work.d, work.ld, w))
				want := sortedAsc(lambda)
				for i := range w {
					require.InDelta(t, want[i], w[i], 1e-13*float64(n)*normOf(lambda)+1e-300)
				}
				checkEigen(t, full, w, work, normOf(lambda))

				// values only, reusing the workspace
				w2 := make([]float64, n)
				work2 := a.clone()
				require.NoError(t, ws.Dsyevd('N', uplo, n, work2.d, work2.ld, w2))
				for i := range w2 {
					require.InDelta(t, w[i], w2[i], 1e-13*float64(n)*normOf(lambda)+1e-300)
				}
			})
		}
	}
}

func TestDsyevrIndexAndValueRanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	lambda := []float64{9, 7, 5, 3, 1, -1, -3, -5, 0.5, 0.25, 2.5, 4.5}
	n := len(lambda)
	want := sortedAsc(lambda)
	for _, uplo := range []byte{'U', 'L'} {
		a := symWithSpectrum(rng, lambda, uplo)
		full := fullSym(a, uplo)

		// RANGE='I': the top 4.
		k := 4
		work := a.clone()
		w := make([]float64, n)
		z := newCM(n, k)
		m, err := Dsyevr('V', 'I', uplo, n, work.d, work.ld, 0, 0, n-k+1, n, 0, w, z.d, z.ld, nil)
		require.NoError(t, err)
		require.Equal(t, k, m)
		for i := 0; i < k; i++ {
			require.InDelta(t, want[n-k+i], w[i], 1e-12*normOf(lambda))
		}
		checkEigen(t, full, w[:k], z, normOf(lambda))

		// RANGE='V': eigenvalues in (0, 4].
		work = a.clone()
		z = newCM(n, n)
		m, err = Dsyevr('V', 'V', uplo, n, work.d, work.ld, 0, 4, 0, 0, 0, w, z.d, z.ld, nil)
		require.NoError(t, err)
		require.Equal(t, 5, m) // 0.25, 0.5, 1, 2.5, 3
		z.c = m
		checkEigen(t, full, w[:m], z, normOf(lambda))

		// RANGE='A' values only.
		work = a.clone()
		m, err = Dsyevr('N', 'A', uplo, n, work.d, work.ld, 0, 0, 0, 0, 0, w, nil, 1, nil)
		require.NoError(t, err)
		require.Equal(t, n, m)
		for i := range want {
			require.InDelta(t, want[i], w[i], 1e-12*normOf(lambda))
		}
	}
}

func TestDstevrSecondDifference(t *testing.T) {
	// The n×n matrix tridiag(−1, 2, −1) has eigenvalues 2 − 2cos(jπ/(n+1)).
	n := 30
	d := make([]float64, n)
	e := make([]float64, n)
	for i := range d {
		d[i] = 2
		e[i] = -1
	}
	full := newCM(n, n)
	for i := 0; i < n; i++ {
		full.set(i, i, 2)
		if i+1 < n {
			full.set(i, i+1, -1)
			full.set(i+1, i, -1)
		}
	}
	w := make([]float64, n)
	z := newCM(n, 5)
	var ws Workspace
	m, err := ws.Dstevr('V', 'I', n, d, e, 0, 0, n-4, n, 0, w, z.d, z.ld, nil)
	require.NoError(t, err)
	require.Equal(t, 5, m)
	for i := 0; i < m; i++ {
		j := float64(n - 4 + i)
		require.InDelta(t, 2-2*math.Cos(j*math.Pi/float64(n+1)), w[i], 1e-13)
	}
	checkEigen(t, full, w[:m], z, 4)
}

func TestDgesddReconstructs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, shape := range [][2]int{{7, 4}, {4, 7}, {1, 5}, {6, 6}} {
		m, n := shape[0], shape[1]
		a := randCM(rng, m, n)
		work := a.clone()
		k := min(m, n)
		s := make([]float64, k)
		u, vt := newCM(m, k), newCM(k, n)
		require.NoError(t, Dgesdd('S', m, n, work.d, work.ld, s, u.d, u.ld, vt.d, vt.ld))
		for i := 1; i < k; i++ {
			require.GreaterOrEqual(t, s[i-1], s[i])
		}
		us := u.clone()
		for j := 0; j < k; j++ {
			for i := 0; i < m; i++ {
				us.set(i, j, u.at(i, j)*s[j])
			}
		}
		rec := mul(us, vt, false, false)
		require.LessOrEqual(t, maxAbsDiff(rec, a)/(float64(max(m, n))*s[0]), 1e-14)
		// values-only agrees
		work = a.clone()
		s2 := make([]float64, k)
		require.NoError(t, Dgesdd('N', m, n, work.d, work.ld, s2, nil, 1, nil, 1))
		for i := range s {
			require.InDelta(t, s[i], s2[i], 1e-13*s[0])
		}
	}
}

func TestQRAndLQ(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	m, n := 9, 5
	a := randCM(rng, m, n)
	f := a.clone()
	tau := make([]float64, n)
	var ws Workspace
	ws.Dgeqrf(m, n, f.d, f.ld, tau)
	r := newCM(n, n)
	for j := 0; j < n; j++ {
		for i := 0; i <= j; i++ {
			r.set(i, j, f.at(i, j))
		}
	}
	ws.Dorgqr(m, n, n, f.d, f.ld, tau)
	f.c = n
	require.LessOrEqual(t, maxAbsDiff(mul(f, r, false, false), a), 1e-13*frob(a))
	qtq := mul(f, f, true, false)
	for i := 0; i < n; i++ {
		qtq.set(i, i, qtq.at(i, i)-1)
	}
	require.LessOrEqual(t, maxAbsDiff(qtq, newCM(n, n)), 1e-14)

	// LQ of the 5×9 matrix aᵀ.
	b := newCM(n, m)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			b.set(j, i, a.at(i, j))
		}
	}
	g := b.clone()
	ws.Dgelqf(n, m, g.d, g.ld, tau)
	l := newCM(n, n)
	for j := 0; j < n; j++ {
		for i := j; i < n; i++ {
			l.set(i, j, g.at(i, j))
		}
	}
	ws.Dorglq(n, m, n, g.d, g.ld, tau)
	require.LessOrEqual(t, maxAbsDiff(mul(l, g, false, false), b), 1e-13*frob(a))
	qqt := mul(g, g, false, true)
	for i := 0; i < n; i++ {
		qqt.set(i, i, qqt.at(i, i)-1)
	}
	require.LessOrEqual(t, maxAbsDiff(qqt, newCM(n, n)), 1e-14)
}

// QR with column pivoting, A·P = Q·R: Q from Dorgqr is orthonormal and
// reproduces the pivoted columns, the pivots are a permutation, |R|'s
// diagonal does not increase, and a column marked leading stays first.
func TestDgeqp3(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	m, n := 8, 5
	a := randCM(rng, m, n)
	for i := 0; i < m; i++ {
		a.set(i, 3, 10*a.at(i, 3)) // the largest column: first unless one leads
	}
	for _, lead := range []int{-1, 2} {
		f := a.clone()
		jpvt := []int{-1, -1, -1, -1, -1}
		if lead >= 0 {
			jpvt[lead] = 0
		}
		tau := make([]float64, n)
		var ws Workspace
		ws.Dgeqp3(m, n, f.d, f.ld, jpvt, tau)
		seen := make([]bool, n)
		for _, p := range jpvt {
			require.False(t, seen[p], "%v", jpvt)
			seen[p] = true
		}
		if lead >= 0 {
			require.Equal(t, lead, jpvt[0])
		} else {
			require.Equal(t, 3, jpvt[0])
		}
		r := newCM(n, n)
		for j := 0; j < n; j++ {
			for i := 0; i <= j; i++ {
				r.set(i, j, f.at(i, j))
			}
		}
		first := 1 // the free columns, after a leading one, in order
		if lead >= 0 {
			first = 2
		}
		for j := first; j < n; j++ {
			require.LessOrEqual(t, math.Abs(r.at(j, j)), math.Abs(r.at(j-1, j-1))*(1+1e-12), "%v", jpvt)
		}
		ws.Dorgqr(m, n, n, f.d, f.ld, tau)
		f.c = n
		ap := newCM(m, n)
		for j, p := range jpvt {
			for i := 0; i < m; i++ {
				ap.set(i, j, a.at(i, p))
			}
		}
		require.LessOrEqual(t, maxAbsDiff(mul(f, r, false, false), ap), 1e-13*frob(a))
		qtq := mul(f, f, true, false)
		for i := 0; i < n; i++ {
			qtq.set(i, i, qtq.at(i, i)-1)
		}
		require.LessOrEqual(t, maxAbsDiff(qtq, newCM(n, n)), 1e-14)
	}
}

func TestCholeskySolve(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	lambda := []float64{10, 5, 3, 2, 1, 0.5}
	n := len(lambda)
	for _, uplo := range []byte{'U', 'L'} {
		a := symWithSpectrum(rng, lambda, uplo)
		full := fullSym(a, uplo)
		f := a.clone()
		require.NoError(t, Dpotrf(uplo, n, f.d, f.ld))
		b := randCM(rng, n, 3)
		x := b.clone()
		Dpotrs(uplo, n, 3, f.d, f.ld, x.d, x.ld)
		res := mul(full, x, false, false)
		// ‖AX − B‖ ≤ c·ε·‖A‖‖X‖ with a generous constant.
		require.LessOrEqual(t, maxAbsDiff(res, b), 1e-13*10*frob(x))
	}
	// Indefinite: error, not a panic, wrapping the sentinel.
	a := symWithSpectrum(rng, []float64{1, 2, -1, 3}, 'U')
	err := Dpotrf('U', 4, a.d, a.ld)
	require.Error(t, err)
	require.True(t, errors.Is(err, ErrNotPositiveDefinite))
	var le *Error
	require.True(t, errors.As(err, &le))
	require.Equal(t, "dpotrf", le.Routine)
	require.Greater(t, le.Info, 0)
}

func TestDsygvd(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	n := 8
	a := symWithSpectrum(rng, []float64{4, 3, 2, 1, 0, -1, -2, -3}, 'L')
	b := symWithSpectrum(rng, []float64{5, 4, 3, 2, 1.5, 1, 0.7, 0.3}, 'L')
	af, bf := fullSym(a, 'L'), fullSym(b, 'L')
	x, bw := a.clone(), b.clone()
	w := make([]float64, n)
	require.NoError(t, Dsygvd(1, 'V', 'L', n, x.d, x.ld, bw.d, bw.ld, w))
	ax := mul(af, x, false, false)
	bx := mul(bf, x, false, false)
	for j := 0; j < n; j++ {
		for i := 0; i < n; i++ {
			ax.set(i, j, ax.at(i, j)-w[j]*bx.at(i, j))
		}
	}
	require.LessOrEqual(t, frob(ax)/(float64(n)*frob(af)), 1e-13)
	// Xᵀ B X = I
	xbx := mul(x, bx, true, false)
	for i := 0; i < n; i++ {
		xbx.set(i, i, xbx.at(i, i)-1)
	}
	require.LessOrEqual(t, maxAbsDiff(xbx, newCM(n, n)), 1e-12)
	// B indefinite: ErrNotPositiveDefinite.
	bad := symWithSpectrum(rng, []float64{1, 1, 1, 1, 1, 1, 1, -1}, 'L')
	x = a.clone()
	err := Dsygvd(1, 'V', 'L', n, x.d, x.ld, bad.d, bad.ld, w)
	require.ErrorIs(t, err, ErrNotPositiveDefinite)
}

// TestDsygst checks each reduction against its definition without
// inverses: for itype 1, L·C·Lᵀ = A (or Uᵀ·C·U = A); for 2 and 3, C is
// the product itself. Only the triangle uplo of the result is compared.
func TestDsygst(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 16))
	n := 9
	lambda := []float64{4, 3, 2, 1, 0.5, -1, -2, -3, -5}
	for _, uplo := range []byte{'U', 'L'} {
		b := symWithSpectrum(rng, []float64{6, 5, 4, 3, 2, 1.5, 1, 0.7, 0.3}, uplo)
		f := b.clone()
		require.NoError(t, Dpotrf(uplo, n, f.d, f.ld))
		// The factor alone: its other triangle zeroed.
		tri := newCM(n, n)
		for j := 0; j < n; j++ {
			for i := 0; i < n; i++ {
				if (uplo == 'U' && i <= j) || (uplo == 'L' && i >= j) {
					tri.set(i, j, f.at(i, j))
				}
			}
		}
		for itype := 1; itype <= 3; itype++ {
			a := symWithSpectrum(rng, lambda, uplo)
			af := fullSym(a, uplo)
			c := a.clone()
			Dsygst(itype, uplo, n, c.d, c.ld, f.d, f.ld)
			cf := fullSym(c, uplo)
			var got, want *cm
			switch {
			case itype == 1 && uplo == 'L': // L·C·Lᵀ = A
				got, want = mul(mul(tri, cf, false, false), tri, false, true), af
			case itype == 1: // Uᵀ·C·U = A
				got, want = mul(mul(tri, cf, true, false), tri, false, false), af
			case uplo == 'L': // C = Lᵀ·A·L
				got, want = cf, mul(mul(tri, af, true, false), tri, false, false)
			default: // C = U·A·Uᵀ
				got, want = cf, mul(mul(tri, af, false, false), tri, false, true)
			}
			require.LessOrEqual(t, maxAbsDiff(got, want), 1e-13*frob(want), "itype %d uplo %c", itype, uplo)
		}
	}
	require.Panics(t, func() { Dsygst(4, 'L', 1, []float64{1}, 1, []float64{1}, 1) })
	Dsygst(1, 'L', 0, nil, 1, nil, 1) // n = 0: nothing to do
}

func TestDgetrf(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, shape := range [][2]int{{6, 6}, {8, 5}, {4, 7}} {
		m, n := shape[0], shape[1]
		a := randCM(rng, m, n)
		f := a.clone()
		k := min(m, n)
		ipiv := make([]int, k)
		require.NoError(t, Dgetrf(m, n, f.d, f.ld, ipiv))
		l, u := newCM(m, k), newCM(k, n)
		for i := 0; i < m; i++ {
			for j := 0; j < k; j++ {
				switch {
				case i == j:
					l.set(i, j, 1)
				case i > j:
					l.set(i, j, f.at(i, j))
				}
			}
		}
		for i := 0; i < k; i++ {
			for j := i; j < n; j++ {
				u.set(i, j, f.at(i, j))
			}
		}
		lu := mul(l, u, false, false)
		// Undo the row interchanges in reverse order: A = P·L·U.
		for i := k - 1; i >= 0; i-- {
			p := ipiv[i]
			require.GreaterOrEqual(t, p, i)
			for j := 0; j < n; j++ {
				x, y := lu.at(i, j), lu.at(p, j)
				lu.set(i, j, y)
				lu.set(p, j, x)
			}
		}
		require.LessOrEqual(t, maxAbsDiff(lu, a), 1e-13*frob(a))
	}
	// An exactly singular matrix: ErrSingular, factorisation still done.
	s := newCM(3, 3)
	s.set(0, 0, 1)
	s.set(1, 1, 1)
	ipiv := make([]int, 3)
	err := Dgetrf(3, 3, s.d, s.ld, ipiv)
	require.ErrorIs(t, err, ErrSingular)
}

// An empty problem with RANGE='I' (il = 1, iu = 0, as LAPACK asks) finds
// nothing and succeeds.
func TestEmptyIndexRange(t *testing.T) {
	m, err := Dsyevr('V', 'I', 'U', 0, nil, 1, 0, 0, 1, 0, 0, nil, nil, 1, nil)
	require.NoError(t, err)
	require.Zero(t, m)
	m, err = Dstevr('N', 'I', 0, nil, nil, 0, 0, 1, 0, 0, nil, nil, 1, nil)
	require.NoError(t, err)
	require.Zero(t, m)
}

func TestProgrammerErrorsPanicWithPrefix(t *testing.T) {
	a := make([]float64, 16)
	w := make([]float64, 4)
	cases := map[string]func(){
		"bad jobz":      func() { _ = Dsyevd('X', 'U', 4, a, 4, w) },
		"bad uplo":      func() { _ = Dsyevd('V', 'Q', 4, a, 4, w) },
		"short a":       func() { _ = Dsyevd('V', 'U', 5, a, 5, make([]float64, 5)) },
		"small lda":     func() { _ = Dsyevd('V', 'U', 4, a, 3, w) },
		"short w":       func() { _ = Dsyevd('V', 'U', 4, a, 4, w[:3]) },
		"negative n":    func() { _ = Dpotrf('U', -1, a, 1) },
		"bad il":        func() { _, _ = Dsyevr('V', 'I', 'U', 4, a, 4, 0, 0, 0, 2, 0, w, a, 4, nil) },
		"il at n = 0":   func() { _, _ = Dsyevr('V', 'I', 'U', 0, nil, 1, 0, 0, 1, 1, 0, nil, nil, 1, nil) },
		"stevr iu > n":  func() { _, _ = Dstevr('V', 'I', 2, w, w, 0, 0, 1, 3, 0, w, a, 2, nil) },
		"bad interval":  func() { _, _ = Dsyevr('V', 'V', 'U', 4, a, 4, 2, 1, 0, 0, 0, w, a, 4, nil) },
		"short z":       func() { _, _ = Dsyevr('V', 'A', 'U', 4, a, 4, 0, 0, 0, 0, 0, w, a[:10], 4, nil) },
		"short ipiv":    func() { _ = Dgetrf(4, 4, a, 4, make([]int, 2)) },
		"orgqr shape":   func() { Dorgqr(2, 4, 1, a, 4, w) },
		"bad itype":     func() { _ = Dsygvd(4, 'V', 'U', 2, a, 2, a, 2, w) },
		"gesdd short s": func() { _ = Dgesdd('N', 4, 4, a, 4, w[:2], nil, 1, nil, 1) },
		"getrs trans":   func() { Dgetrs('X', 4, 1, a, 4, make([]int, 4), w, 4) },
		"gecon norm":    func() { Dgecon('F', 4, a, 4, 1) },
		"pbtrf ldab":    func() { _ = Dpbtrf('U', 4, 2, a, 2) },
		"pstrf piv":     func() { Dpstrf('U', 4, a, 4, make([]int, 3), -1) },
		"trtrs diag":    func() { _ = Dtrtrs('U', 'N', 'X', 4, 1, a, 4, w, 4) },
		"tbtrs short b": func() { _ = Dtbtrs('U', 'N', 'N', 4, 1, 2, a, 2, w, 4) },
		"lange norm":    func() { Dlange('X', 4, 4, a, 4) },
		"lapmr not a permutation": func() {
			Dlapmr(true, 4, 4, a, 4, []int{0, 1, 1, 3})
		},
		"ormqr k":      func() { (*Workspace)(nil).Dormqr('L', 'N', 4, 4, 5, a, 4, w, a, 4) },
		"geqp3 jpvt":   func() { (*Workspace)(nil).Dgeqp3(4, 4, a, 4, make([]int, 3), w) },
		"gels shape b": func() { _ = (*Workspace)(nil).Dgels('N', 4, 2, 1, a, 4, w[:3], 4) },
		"geev ldvr":    func() { _, _ = (*Workspace)(nil).Dgeev('N', 'V', 4, a, 4, w, w, nil, 1, a, 3) },
		"ggsvd3 job": func() {
			_, _, _ = (*Workspace)(nil).Dggsvd3('X', 'N', 'N', 2, 2, 2, a, 2, a, 2, w, w, nil, 1, nil, 1, nil, 1, make([]int, 2))
		},
		"latrs normin": func() { Dlatrs('U', 'N', 'N', 'X', 4, a, 4, w, w) },
		"trsv short x": func() { Dtrsv('U', 'N', 'N', 4, a, 4, w[:3]) },
		"trsv uplo":    func() { Dtrsv('X', 'N', 'N', 4, a, 4, w) },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				r := recover()
				require.NotNil(t, r, "expected a panic")
				require.True(t, strings.HasPrefix(r.(string), "lapack: "), "message %q", r)
			}()
			f()
		})
	}
	// Checked here, before LAPACK sees it: ldz ≥ 1 without vectors too.
	require.PanicsWithValue(t, "lapack: dstevr: ldz = 0 < 1", func() { _, _ = Dstevr('N', 'A', 2, w, w, 0, 0, 0, 0, 0, w, nil, 0, nil) })
}

func TestZeroSizesAreNoOps(t *testing.T) {
	require.NoError(t, Dsyevd('V', 'U', 0, nil, 1, nil))
	m, err := Dsyevr('V', 'A', 'U', 0, nil, 1, 0, 0, 0, 0, 0, nil, nil, 1, nil)
	require.NoError(t, err)
	require.Equal(t, 0, m)
	require.NoError(t, Dpotrf('L', 0, nil, 1))
	require.NoError(t, Dgetrf(0, 3, nil, 1, nil))
	require.NoError(t, Dgesdd('N', 0, 3, nil, 1, nil, nil, 1, nil, 1))
	require.NoError(t, Dgetri(0, nil, 1, nil))
	require.NoError(t, Dtrtri('U', 'N', 0, nil, 1))
	require.Equal(t, 1.0, Dgecon('O', 0, nil, 1, 1))
	require.Equal(t, 0.0, Dlange('F', 0, 3, nil, 1))
	rank, full := Dpstrf('L', 0, nil, 1, nil, -1)
	require.Equal(t, 0, rank)
	require.True(t, full)
}

// The column-major bindings on a small known system: LU solve and inverse,
// Cholesky inverse, triangular solve, norms and a condition number against
// values worked by hand.
func TestNewBindingsOnKnownMatrices(t *testing.T) {
	// A = [4 1; 2 3] column-major; det 10, A⁻¹ = [0.3 -0.1; -0.2 0.4].
	a := []float64{4, 2, 1, 3}
	require.Equal(t, 5.0, Dlange('I', 2, 2, a, 2)) // max row sum: 4+1, 2+3
	require.Equal(t, 6.0, Dlange('O', 2, 2, a, 2)) // max column sum
	lu := append([]float64(nil), a...)
	ipiv := make([]int, 2)
	require.NoError(t, Dgetrf(2, 2, lu, 2, ipiv))
	b := []float64{5, 5} // A [1 1]ᵀ
	Dgetrs('N', 2, 1, lu, 2, ipiv, b, 2)
	require.InDeltaSlice(t, []float64{1, 1}, b, 1e-15)
	// κ₁(A) = ‖A‖₁‖A⁻¹‖₁ = 6 · 0.5; the estimator is exact for 2×2.
	require.InDelta(t, 1/3.0, Dgecon('O', 2, lu, 2, 6), 1e-15)
	require.NoError(t, Dgetri(2, lu, 2, ipiv))
	require.InDeltaSlice(t, []float64{0.3, -0.2, -0.1, 0.4}, lu, 1e-15)

	// S = [4 2; 2 3], S⁻¹ = [3 -2; -2 4]/8, lower triangle used.
	s := []float64{4, 2, 0, 3}
	require.NoError(t, Dpotrf('L', 2, s, 2))
	require.InDelta(t, 8/36.0, Dpocon('L', 2, s, 2, 6), 1e-15) // ‖S‖₁ = 6, ‖S⁻¹‖₁ = 6/8
	require.NoError(t, Dpotri('L', 2, s, 2))
	require.InDelta(t, 3/8.0, s[0], 1e-15)
	require.InDelta(t, -2/8.0, s[1], 1e-15)
	require.InDelta(t, 4/8.0, s[3], 1e-15)

	// Upper triangular U = [2 1; 0 4]: U x = [4 8] gives x = [1 2].
	u := []float64{2, 0, 1, 4}
	x := []float64{4, 8}
	require.NoError(t, Dtrtrs('U', 'N', 'N', 2, 1, u, 2, x, 2))
	require.InDeltaSlice(t, []float64{1, 2}, x, 1e-15)
	require.ErrorIs(t, Dtrtrs('U', 'N', 'N', 2, 1, []float64{0, 0, 1, 4}, 2, x, 2), ErrSingular)
}

// TestDtrsv checks op(A)·x = b for every triangle, op and diagonal kind on a
// padded (NaN-poisoned) column-major matrix whose other triangle is NaN,
// against the product formed from the triangle, and that Dlatrs gives the
// same solution with scale 1.
func TestDtrsv(t *testing.T) {
	const n = 37
	rng := rand.New(rand.NewPCG(5, 6))
	for _, uplo := range []byte{'U', 'L'} {
		for _, trans := range []byte{'N', 'T'} {
			for _, diag := range []byte{'N', 'U'} {
				a := newCM(n, n)
				for j := 0; j < n; j++ {
					for i := 0; i < n; i++ {
						in := (uplo == 'U' && i < j) || (uplo == 'L' && i > j)
						switch {
						case i == j && diag == 'U':
							a.set(i, j, math.NaN()) // never read
						case i == j:
							a.set(i, j, 2+rng.Float64())
						case in:
							a.set(i, j, rng.Float64()-0.5)
						default:
							a.set(i, j, math.NaN())
						}
					}
				}
				// t(i, j) is op(A)'s entry.
				at := func(i, j int) float64 {
					if trans == 'T' {
						i, j = j, i
					}
					if i == j {
						if diag == 'U' {
							return 1
						}
						return a.at(i, i)
					}
					if (uplo == 'U' && i < j) || (uplo == 'L' && i > j) {
						return a.at(i, j)
					}
					return 0
				}
				want := make([]float64, n)
				for i := range want {
					want[i] = rng.NormFloat64()
				}
				b := make([]float64, n)
				for i := 0; i < n; i++ {
					for j := 0; j < n; j++ {
						b[i] += at(i, j) * want[j]
					}
				}
				x := append([]float64(nil), b...)
				Dtrsv(uplo, trans, diag, n, a.d, a.ld, x)
				for i := range x {
					require.InDelta(t, want[i], x[i], 1e-12*(1+math.Abs(want[i])), "%c%c%c x[%d]", uplo, trans, diag, i)
				}
				y := append([]float64(nil), b...)
				s := Dlatrs(uplo, trans, diag, 'N', n, a.d, a.ld, y, make([]float64, n))
				require.Equal(t, 1.0, s)
				for i := range y {
					require.InDelta(t, x[i], y[i], 1e-13*(1+math.Abs(x[i])), "%c%c%c dlatrs x[%d]", uplo, trans, diag, i)
				}
			}
		}
	}
}

// Dsterf gives tridiag(−1, 2, −1)'s eigenvalues 2 − 2cos(jπ/(n+1)) in
// ascending order; Dstein's vectors for the top three (one block) and for
// values of a split matrix (two blocks, values ascending within each) have
// residual ‖Tv − λv‖ and orthogonality at rounding level.
func TestDsterfDsteinSecondDifference(t *testing.T) {
	n := 30
	d, e := make([]float64, n), make([]float64, n-1)
	for i := range d {
		d[i] = 2
	}
	for i := range e {
		e[i] = -1
	}
	vals := append([]float64(nil), d...)
	require.NoError(t, Dsterf(n, vals, append([]float64(nil), e...)))
	for j := 1; j <= n; j++ {
		require.InDelta(t, 2-2*math.Cos(float64(j)*math.Pi/float64(n+1)), vals[j-1], 1e-13)
	}
	check := func(d, e []float64, w []float64, z []float64) {
		m := len(w)
		for c := 0; c < m; c++ {
			v := z[c*n : (c+1)*n]
			for i := 0; i < n; i++ {
				tv := d[i] * v[i]
				if i > 0 {
					tv += e[i-1] * v[i-1]
				}
				if i+1 < n {
					tv += e[i] * v[i+1]
				}
				require.InDelta(t, w[c]*v[i], tv, 1e-12, "residual, vector %d row %d", c, i)
			}
			for c2 := 0; c2 <= c; c2++ {
				dot := 0.0
				for i := 0; i < n; i++ {
					dot += v[i] * z[c2*n+i]
				}
				want := 0.0
				if c2 == c {
					want = 1
				}
				require.InDelta(t, want, dot, 1e-12, "orthogonality %d, %d", c, c2)
			}
		}
	}
	isplit := make([]int32, n)
	isplit[0] = int32(n)
	w := vals[n-3:]
	z := make([]float64, n*3)
	require.NoError(t, Dstein(n, d, e, 3, w, []int32{1, 1, 1}, isplit, z, n))
	check(d, e, w, z)
	// Split after row 10: blocks of 10 and 20 rows; the top value of each.
	es := append([]float64(nil), e...)
	es[9] = 0
	v1 := append([]float64(nil), d[:10]...)
	require.NoError(t, Dsterf(10, v1, append([]float64(nil), es[:9]...)))
	v2 := append([]float64(nil), d[10:]...)
	require.NoError(t, Dsterf(20, v2, append([]float64(nil), es[10:]...)))
	clear(isplit)
	isplit[0], isplit[1] = 10, int32(n)
	w = []float64{v1[9], v2[18], v2[19]}
	z = make([]float64, n*3)
	require.NoError(t, Dstein(n, d, es, 3, w, []int32{1, 2, 2}, isplit, z, n))
	check(d, es, w, z)
	// Dstebz: the top three of the whole matrix (one block) by bisection are
	// the closed forms, ascending, d and e untouched; on the split matrix
	// the top three come grouped by block (order 'B') with the blocks and
	// split points Dstein takes, and its vectors for them pass the same
	// checks; all values ('A') are Dsterf's.
	bw, bb, bs := make([]float64, n), make([]int32, n), make([]int32, n)
	d0, e0 := append([]float64(nil), d...), append([]float64(nil), e...)
	m, ns, err := Dstebz('I', 'E', n, 0, 0, n-2, n, 0, d, e, bw, bb, bs)
	require.NoError(t, err)
	require.Equal(t, 3, m)
	require.Equal(t, 1, ns)
	require.Equal(t, d0, d)
	require.Equal(t, e0, e)
	for c := 0; c < 3; c++ {
		j := n - 2 + c
		require.InDelta(t, 2-2*math.Cos(float64(j)*math.Pi/float64(n+1)), bw[c], 1e-13, "value %d", j)
	}
	m, ns, err = Dstebz('I', 'B', n, 0, 0, n-2, n, 0, d, es, bw, bb, bs)
	require.NoError(t, err)
	require.Equal(t, 3, m)
	require.Equal(t, 2, ns)
	require.Equal(t, []int32{10, int32(n)}, bs[:2])
	require.Equal(t, []int32{1, 2, 2}, bb[:3])
	require.InDelta(t, v1[9], bw[0], 1e-13)
	require.InDelta(t, v2[18], bw[1], 1e-13)
	require.InDelta(t, v2[19], bw[2], 1e-13)
	z = make([]float64, n*3)
	require.NoError(t, Dstein(n, d, es, 3, bw[:3], bb[:3], bs, z, n))
	check(d, es, bw[:3], z)
	m, _, err = Dstebz('A', 'E', n, 0, 0, 0, 0, 0, d, e, bw, bb, bs)
	require.NoError(t, err)
	require.Equal(t, n, m)
	for j := 1; j <= n; j++ {
		require.InDelta(t, vals[j-1], bw[j-1], 1e-13)
	}
	// Every vector (m = n) passes the same checks; m = n + 1 is refused.
	z = make([]float64, n*n)
	require.NoError(t, Dstein(n, d, e, n, bw, bb, bs, z, n))
	check(d, e, bw, z)
	require.Panics(t, func() { _ = Dstein(n, d, e, n+1, bw, bb, bs, z, n) })
	require.Panics(t, func() { _, _, _ = Dstebz('I', 'E', n, 0, 0, 0, 2, 0, d, e, bw, bb, bs) }, "il < 1")
	require.Panics(t, func() { _, _, _ = Dstebz('X', 'E', n, 0, 0, 1, 2, 0, d, e, bw, bb, bs) }, "range")
	// LAPACK's convention for no rows: il = 1, iu = 0 by index, no values.
	m, ns, err = Dstebz('I', 'E', 0, 0, 0, 1, 0, 0, nil, nil, nil, nil, nil)
	require.NoError(t, err)
	require.Equal(t, [2]int{0, 0}, [2]int{m, ns})
}

// The smallest systems are solved, not skipped: Dpotrf and Dpotrs on
// 1×1 and on one right-hand side.
func TestCholeskySolveSmallest(t *testing.T) {
	a := []float64{4}
	require.NoError(t, Dpotrf('L', 1, a, 1))
	b := []float64{8, -2}
	Dpotrs('L', 1, 2, a, 1, b, 1)
	require.Equal(t, []float64{2, -0.5}, b)
	a2 := []float64{4, 2, 2, 5} // L = [2 0; 1 2]
	require.NoError(t, Dpotrf('U', 2, a2, 2))
	x := []float64{6, 7} // A·(1, 1) = (6, 7)
	Dpotrs('U', 2, 1, a2, 2, x, 2)
	require.InDeltaSlice(t, []float64{1, 1}, x, 1e-15)
}

// Without vectors the leading dimensions of the unused outputs must still
// be at least 1 (LAPACK's own rule): 1 runs, 0 panics before the call.
func TestUnusedLeadingDimensions(t *testing.T) {
	a := []float64{2, 1, 1, 3}
	s := make([]float64, 2)
	require.NoError(t, Dgesdd('N', 2, 2, append([]float64(nil), a...), 2, s, nil, 1, nil, 1))
	require.InDeltaSlice(t, []float64{(5 + math.Sqrt(5)) / 2, (5 - math.Sqrt(5)) / 2}, s, 1e-14)
	require.Panics(t, func() { _ = Dgesdd('N', 2, 2, append([]float64(nil), a...), 2, s, nil, 0, nil, 1) })
	require.Panics(t, func() { _ = Dgesdd('N', 2, 2, append([]float64(nil), a...), 2, s, nil, 1, nil, 0) })
	w := make([]float64, 2)
	_, err := Dsyevr('N', 'A', 'U', 2, append([]float64(nil), a...), 2, 0, 0, 0, 0, 0, w, nil, 1, nil)
	require.NoError(t, err)
	require.InDeltaSlice(t, []float64{(5 - math.Sqrt(5)) / 2, (5 + math.Sqrt(5)) / 2}, w, 1e-14)
	require.Panics(t, func() {
		_, _ = Dsyevr('N', 'A', 'U', 2, append([]float64(nil), a...), 2, 0, 0, 0, 0, 0, w, nil, 0, nil)
	})
}

// A large cluster through IL:IU: the centred identity I − 11ᵀ/n and its
// tridiagonal form. OpenBLAS 0.3.21's dstebz then writes
// IBLOCK(0) (ibPad): the int32 before iblock stays as it was, and the
// routines that call dstebz on their IWORK leave Go's heap intact (a
// collection after each call; the corruption made it fail).
func TestClusterStaysInBounds(t *testing.T) {
	for _, n := range []int{120, 250} {
		a := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				a[i*n+j] = -1 / float64(n)
			}
			a[i*n+i]++
		}
		d, e, tau := make([]float64, n), make([]float64, n), make([]float64, n)
		native.AVX2().SymTridiag(n, slices.Clone(a), n, d, e, tau)
		for _, k := range []int{1, 2, 5} {
			buf := make([]int32, n+1)
			buf[0] = 12345
			bw, bs := make([]float64, n), make([]int32, n)
			// (It may also say that bisection did not converge: info 2.)
			_, _, _ = Dstebz('I', 'E', n, 0, 0, n-k+1, n, 0, d, e[:n-1], bw, buf[1:], bs)
			require.Equal(t, int32(12345), buf[0], "n %d k %d: dstebz wrote before iblock", n, k)
			w, z := make([]float64, n), make([]float64, n*k)
			_, err := Dsyevr('V', 'I', 'L', n, slices.Clone(a), n, 0, 0, n-k+1, n, 0, w, z, n, nil)
			require.NoError(t, err)
			de, ee := slices.Clone(d), slices.Clone(e)
			_, err = Dstevr('V', 'I', n, de, ee, 0, 0, n-k+1, n, 0, w, z, n, nil)
			require.NoError(t, err)
			runtime.GC()
		}
	}
}

// Dpbcon on the 1-D Laplacian tridiag(−1, 2, −1) of order 6 (band
// storage, 'U'): its estimate of 1/(‖A‖₁‖A⁻¹‖₁) lies within a factor 3 of
// the exact value and never below it (LAPACK's estimator bounds ‖A⁻¹‖₁
// from below); order 0 is perfectly conditioned (1), and order 1 gives
// 1/(anorm·(1/a)) exactly.
func TestDpbconLaplacian(t *testing.T) {
	const n, kd, ld = 6, 1, 2
	ab := make([]float64, ld*n)
	for j := 0; j < n; j++ {
		ab[j*ld+1] = 2
		if j > 0 {
			ab[j*ld] = -1
		}
	}
	require.NoError(t, Dpbtrf('U', n, kd, ab, ld))
	// ‖A‖₁ = 4; (A⁻¹)_ij = min(i,j)·(n+1−max(i,j))/(n+1), 1-based.
	inv := 0.0
	for j := 1; j <= n; j++ {
		col := 0.0
		for i := 1; i <= n; i++ {
			col += float64(min(i, j)*(n+1-max(i, j))) / float64(n+1)
		}
		inv = math.Max(inv, col)
	}
	exact := 1 / (4 * inv)
	got := Dpbcon('U', n, kd, ab, ld, 4)
	require.GreaterOrEqual(t, got, exact*(1-1e-12))
	require.LessOrEqual(t, got, 3*exact)
	require.Equal(t, 1.0, Dpbcon('U', 0, kd, nil, ld, 0))
	one := []float64{0, 4}
	require.NoError(t, Dpbtrf('U', 1, kd, one, ld))
	require.InDelta(t, 0.5, Dpbcon('U', 1, kd, one, ld, 8), 1e-15) // a = 4, anorm 8: 1/(8·¼)
}

// Dtrcon: an empty matrix is perfectly conditioned (rcond 1, as LAPACK
// sets for n = 0), and a 2×2 triangle gives 1/(‖A‖‖A⁻¹‖) in the 1- and
// ∞-norms (the estimator reaches the inverse's norm on this one).
func TestDtrconClosedForms(t *testing.T) {
	require.Equal(t, 1.0, Dtrcon('O', 'U', 'N', 0, nil, 1))
	// Row-major [[2, 1], [0, 4]]: column-major it is the lower triangle
	// L = [[2, 0], [1, 4]], whose 1-norm is 4 (columns 3 and 4) and whose
	// inverse [[0.5, 0], [−0.125, 0.25]] has 1-norm 0.625 (columns 0.625
	// and 0.25); ∞-norms 5 (rows 2 and 5) and 0.5 (rows 0.5 and 0.375).
	a := []float64{2, 1, 0, 4}
	require.InDelta(t, 1/(4*0.625), Dtrcon('O', 'L', 'N', 2, a, 2), 1e-15)
	require.InDelta(t, 1/(5*0.5), Dtrcon('I', 'L', 'N', 2, a, 2), 1e-15)
}

// DsyevdWork is at least LAPACK's documented minimum workspace: 1 for
// n ≤ 1 (n = 0 answered without asking LAPACK), else 2n + 1 without
// vectors and 1 + 6n + 2n² with them.
func TestDsyevdWorkMinimum(t *testing.T) {
	for _, job := range []byte{'N', 'V'} {
		require.Equal(t, 1, DsyevdWork(job, 0))
		require.GreaterOrEqual(t, DsyevdWork(job, 1), 1)
	}
	for _, n := range []int{2, 5, 40} {
		require.GreaterOrEqual(t, DsyevdWork('V', n), 1+6*n+2*n*n, "n = %d, vectors", n)
		require.GreaterOrEqual(t, DsyevdWork('N', n), 2*n+1, "n = %d", n)
	}
}

// Dgeev of a 1×1 matrix is its entry (and its right vector 1); of a 0×0
// matrix, nothing.
func TestDgeevOneByOne(t *testing.T) {
	wr, wi, vr := []float64{0}, []float64{7}, []float64{0}
	first, err := (*Workspace)(nil).Dgeev('N', 'V', 1, []float64{-2.5}, 1, wr, wi, nil, 1, vr, 1)
	require.NoError(t, err)
	require.Zero(t, first)
	require.Equal(t, -2.5, wr[0])
	require.Zero(t, wi[0])
	require.Equal(t, 1.0, math.Abs(vr[0]))
	first, err = (*Workspace)(nil).Dgeev('N', 'N', 0, nil, 1, nil, nil, nil, 1, nil, 1)
	require.NoError(t, err)
	require.Zero(t, first)
}
