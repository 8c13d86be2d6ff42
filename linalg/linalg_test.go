package linalg

import (
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/testmat"
	"github.com/kdual/kdual/lapack"
	"github.com/kdual/kdual/status"
)

// withSpectrum returns Q·diag(λ)·Qᵀ with a seeded random orthogonal Q.
func withSpectrum(seed uint64, lambda []float64) *mat.SymDense {
	return testmat.WithSpectrum(rand.New(rand.NewPCG(seed, 99)), lambda)
}

func decreasing(l []float64) []float64 {
	s := append([]float64(nil), l...)
	sort.Sort(sort.Reverse(sort.Float64Slice(s)))
	return s
}

func maxAbs(l []float64) float64 {
	m := 0.0
	for _, v := range l {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

// eigenChecks asserts the scaled residual ‖AV − VΛ‖_F/(n‖A‖₂) ≤ 1e-12 and
// ‖VᵀV − I‖_max ≤ 1e-12.
func eigenChecks(t *testing.T, a *mat.SymDense, e *Eigen, anorm float64) {
	t.Helper()
	n := a.SymmetricDim()
	var av, vl mat.Dense
	av.Mul(a, e.Vectors)
	vl.Apply(func(i, j int, v float64) float64 { return v * e.Values[j] }, e.Vectors)
	av.Sub(&av, &vl)
	require.LessOrEqual(t, mat.Norm(&av, 2)/(float64(n)*math.Max(anorm, 1e-300)), 1e-12, "residual")
	var vtv mat.Dense
	vtv.Mul(e.Vectors.T(), e.Vectors)
	k := len(e.Values)
	for i := 0; i < k; i++ {
		vtv.Set(i, i, vtv.At(i, i)-1)
	}
	require.LessOrEqual(t, mat.Norm(&vtv, math.Inf(1)), 1e-12*float64(k), "orthogonality")
}

var knownSpectra = map[string][]float64{
	"n=1":            {-2.5},
	"n=2":            {1, -3},
	"fast decay":     geometricSpectrum(60, 0.5),
	"slow decay":     harmonicSpectrum(80),
	"clustered":      {3, 3, 3, 3, 3 * (1 + 1e-13), 2, 2, 2, 1, 1, 1, 1, 1, 0, 0, 0, -1, -1},
	"negative":       {-1, -2, -3, -4, -5, -6, 0.5, 0.25, -7, -100},
	"order SmallSym": geometricSpectrum(SmallSym, 0.97),
}

func geometricSpectrum(n int, r float64) []float64 {
	l := make([]float64, n)
	for i := range l {
		l[i] = math.Pow(r, float64(i))
	}
	return l
}

func harmonicSpectrum(n int) []float64 {
	l := make([]float64, n)
	for i := range l {
		l[i] = 1 / float64(i+1)
	}
	return l
}

// Both of SymEig's paths — the package's own tridiagonal reduction up to
// SmallSym, LAPACK's dsyevr and dsyevd above it (forced here by
// tridiagMax = 0) — on every known spectrum; the reduction's top values by
// dsterf and by bisection (forced by bisectRatio) alike.
func TestSymEigKnownSpectra(t *testing.T) {
	defer func(m, r int) { tridiagMax, bisectRatio = m, r }(tridiagMax, bisectRatio)
	for _, path := range []struct {
		name     string
		max, bis int
	}{{"native reduction", SmallSym, 40}, {"native reduction, bisection", SmallSym, 1},
		{"native reduction, dsterf", SmallSym, 1 << 30}, {"lapack", 0, 40}} {
		tridiagMax, bisectRatio = path.max, path.bis
		testSymEigKnownSpectra(t, path.name)
	}
}

// Matrices whose tridiagonal form splits (a diagonal matrix: every
// off-diagonal entry zero; two decoupled blocks with known spectra), on
// both paths (the reduction's values by dsterf and by bisection), for
// top-k subsets that take values from several blocks and
// cut through a repeated value: the values, orthonormal vectors and
// residuals as for any other matrix.
func TestSymEigSplitTridiagonal(t *testing.T) {
	defer func(m, r int) { tridiagMax, bisectRatio = m, r }(tridiagMax, bisectRatio)
	diag := mat.NewSymDense(7, nil)
	for i, v := range []float64{5, 1, 3, -2, 3, 2, 0.5} {
		diag.SetSym(i, i, v)
	}
	blocks := mat.NewSymDense(12, nil)
	for b, lambda := range [][]float64{{4, 2.5, 1, 0.25, -1, 3}, {3.5, 2.5, 0.5, 2, -3, 1.5}} {
		sub := withSpectrum(uint64(b+3), lambda)
		for i := 0; i < 6; i++ {
			for j := i; j < 6; j++ {
				blocks.SetSym(6*b+i, 6*b+j, sub.At(i, j))
			}
		}
	}
	for _, path := range [][2]int{{SmallSym, 1 << 30}, {SmallSym, 1}, {0, 40}} {
		max := path[0]
		tridiagMax, bisectRatio = max, path[1]
		for name, c := range map[string]struct {
			a    *mat.SymDense
			want []float64
		}{
			"diagonal": {diag, []float64{5, 3, 3, 2, 1, 0.5, -2}},
			"blocks":   {blocks, []float64{4, 3.5, 3, 2.5, 2.5, 2, 1.5, 1, 0.5, 0.25, -1, -3}},
		} {
			for _, k := range []int{1, 2, 3, 5} {
				e, err := SymEig(c.a, k)
				require.NoError(t, err, "%s k %d", name, k)
				for i := 0; i < k; i++ {
					require.InDelta(t, c.want[i], e.Values[i], 1e-13, "%s max %d k %d value %d", name, max, k, i)
				}
				eigenChecks(t, c.a, e, 5)
			}
		}
	}
}

// A large cluster through the k-th value: the centred identity I − 11ᵀ/n
// (eigenvalue 1 n − 1 times, then 0), where LAPACK's RANGE = 'I' finds
// nothing at these orders, and the same matrix with one larger value on
// top; on both paths, for top-k subsets and all pairs.
func TestSymEigLargeCluster(t *testing.T) {
	defer func(m int) { tridiagMax = m }(tridiagMax)
	for _, max := range []int{SmallSym, 0} {
		tridiagMax = max
		for _, n := range []int{120, 250} {
			for _, top := range []float64{1, 4} {
				a := mat.NewSymDense(n, nil)
				for i := 0; i < n; i++ {
					for j := i; j < n; j++ {
						v := -1 / float64(n)
						if i == j {
							v++
						}
						a.SetSym(i, j, v)
					}
				}
				// top > 1: e₁ − mean has eigenvalue 1 + (top − 1)·‖u‖²
				// with u the unit vector along it.
				u := mat.NewVecDense(n, nil)
				u.SetVec(0, 1)
				for i := 0; i < n; i++ {
					u.SetVec(i, u.AtVec(i)-1/float64(n))
				}
				u.ScaleVec(1/mat.Norm(u, 2), u)
				for i := 0; i < n; i++ {
					for j := i; j < n; j++ {
						a.SetSym(i, j, a.At(i, j)+(top-1)*u.AtVec(i)*u.AtVec(j))
					}
				}
				for _, k := range []int{1, 2, 5, 0} {
					e, err := SymEig(a, k)
					require.NoError(t, err, "max %d n %d top %g k %d", max, n, top, k)
					want := 1.0
					if top > 1 {
						want = top
					}
					require.InDelta(t, want, e.Values[0], 1e-13*float64(n)*top)
					for i := 1; i < len(e.Values)-1; i++ {
						require.InDelta(t, 1, e.Values[i], 1e-13*float64(n)*top)
					}
					eigenChecks(t, a, e, top)
				}
			}
		}
	}
}

// Scaling by a power of two scales the eigenvalues exactly and leaves the
// vectors: far below and above 1, where the reduction's norms would
// underflow or overflow (entries down to subnormal), on both paths; an
// eigenvalue past float64's range is an error, not +Inf.
func TestSymEigExtremeScales(t *testing.T) {
	defer func(m int) { tridiagMax = m }(tridiagMax)
	lambda := []float64{5, 3, 2, 1.5, 1, 0.5, 0.25, 0.125, -1, -2}
	base := withSpectrum(9, lambda)
	want := decreasing(lambda)
	n := len(lambda)
	for _, max := range []int{SmallSym, 0} {
		tridiagMax = max
		for _, p := range []int{-1060, -1000, -600, 600, 1000} {
			a := mat.NewSymDense(n, nil)
			for i := 0; i < n; i++ {
				for j := i; j < n; j++ {
					a.SetSym(i, j, math.Ldexp(base.At(i, j), p))
				}
			}
			tol := 1e-13 * float64(n)
			if p < -1022 {
				tol = 1e-3 // subnormal entries keep a few digits only
			}
			for _, k := range []int{3, 0} {
				e, err := SymEig(a, k)
				require.NoError(t, err, "2^%d k %d", p, k)
				for i := range e.Values {
					require.InDelta(t, want[i], math.Ldexp(e.Values[i], -p), tol*5, "2^%d k %d value %d", p, k, i)
				}
				if p >= -1022 {
					var back Eigen
					back.Values = make([]float64, len(e.Values))
					for i, v := range e.Values {
						back.Values[i] = math.Ldexp(v, -p)
					}
					back.Vectors = e.Vectors
					eigenChecks(t, base, &back, 5)
				}
			}
		}
		huge := mat.NewSymDense(4, nil)
		for i := 0; i < 4; i++ {
			for j := i; j < 4; j++ {
				huge.SetSym(i, j, 1e308)
			}
		}
		_, err := SymEig(huge, 1)
		require.ErrorIs(t, err, status.ErrInvalid)
		require.ErrorContains(t, err, "past float64's range")
	}
}

func testSymEigKnownSpectra(t *testing.T, path string) {
	for name, lambda := range knownSpectra {
		t.Run(path+"/"+name, func(t *testing.T) {
			a := withSpectrum(uint64(len(lambda)), lambda)
			before := symCopy(a)
			want := decreasing(lambda)
			norm := maxAbs(lambda)
			n := len(lambda)
			full, err := SymEig(a, 0)
			require.NoError(t, err)
			require.True(t, mat.Equal(a, before), "input modified")
			require.Len(t, full.Values, n)
			for i := range want {
				require.InDelta(t, want[i], full.Values[i], 1e-13*float64(n)*norm)
			}
			eigenChecks(t, a, full, norm)
			assertSignsFixed(t, full.Vectors)

			// Top-k through dsyevr agrees with the full solve.
			for _, k := range []int{1, n / 2, n - 1} {
				if k < 1 || k >= n {
					continue
				}
				top, err := SymEig(a, k)
				require.NoError(t, err)
				require.Len(t, top.Values, k)
				for i := 0; i < k; i++ {
					require.InDelta(t, full.Values[i], top.Values[i], 1e-13*float64(n)*norm)
				}
				eigenChecks(t, a, top, norm)
				assertSignsFixed(t, top.Vectors)
			}

			// Agreement with gonum's pure-Go solver.
			var ge mat.EigenSym
			require.True(t, ge.Factorize(a, true))
			gv := ge.Values(nil)
			sort.Float64s(gv)
			for i := range gv {
				require.InDelta(t, gv[n-1-i], full.Values[i], 1e-12*float64(n)*norm)
			}
			vals, err := SymEigValues(a, 0)
			require.NoError(t, err)
			for i := range vals {
				require.InDelta(t, full.Values[i], vals[i], 1e-13*float64(n)*norm)
			}
		})
	}
}

// Where the spectrum is simple the eigenvectors are unique up to sign, so
// after sign fixing they must agree with gonum's (signs fixed the same way).
func TestSymEigMatchesGonumVectors(t *testing.T) {
	lambda := []float64{10, 8, 6, 4, 2, -1, -3, 0.5}
	a := withSpectrum(7, lambda)
	e, err := SymEig(a, 0)
	require.NoError(t, err)
	var ge mat.EigenSym
	require.True(t, ge.Factorize(a, true))
	var gv mat.Dense
	ge.VectorsTo(&gv)
	vals := ge.Values(nil)
	n := len(lambda)
	for c := 0; c < n; c++ {
		// gonum returns ascending values: column n−1−c is ours c.
		require.InDelta(t, vals[n-1-c], e.Values[c], 1e-12*10)
		col := mat.Col(nil, n-1-c, &gv)
		fixVecSign(col)
		for i := 0; i < n; i++ {
			require.InDelta(t, col[i], e.Vectors.At(i, c), 1e-12*float64(n))
		}
	}
}

func fixVecSign(v []float64) {
	best := 0.0
	for _, x := range v {
		if math.Abs(x) > math.Abs(best) {
			best = x
		}
	}
	if best < 0 {
		for i := range v {
			v[i] = -v[i]
		}
	}
}

func assertSignsFixed(t *testing.T, v *mat.Dense) {
	t.Helper()
	r, c := v.Dims()
	for j := 0; j < c; j++ {
		best := 0.0
		for i := 0; i < r; i++ {
			if x := v.At(i, j); math.Abs(x) > math.Abs(best) {
				best = x
			}
		}
		require.Greater(t, best, 0.0, "column %d", j)
	}
}

func TestSymEigBadInput(t *testing.T) {
	a := withSpectrum(1, []float64{3, 2, 1})
	for _, k := range []int{-1, 4} {
		_, err := SymEig(a, k)
		require.ErrorIs(t, err, status.ErrInvalid, "k=%d", k)
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		b := symCopy(a)
		b.SetSym(0, 2, bad)
		_, err := SymEig(b, 0)
		require.ErrorIs(t, err, status.ErrInvalid)
		_, err = SymEig(b, 1)
		require.ErrorIs(t, err, status.ErrInvalid)
	}
	_, err := SymEig(&mat.SymDense{}, 0)
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = SymEig(nil, 0)
	require.ErrorIs(t, err, status.ErrInvalid)
}

func TestQR(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	for _, shape := range [][2]int{{1, 1}, {5, 5}, {40, 7}, {7, 1}} {
		m, n := shape[0], shape[1]
		a := mat.NewDense(m, n, nil)
		a.Apply(func(_, _ int, _ float64) float64 { return rng.NormFloat64() }, a)
		before := mat.DenseCopyOf(a)
		q, r, err := QR(a)
		require.NoError(t, err)
		require.True(t, mat.Equal(a, before))
		var qr mat.Dense
		qr.Mul(q, r)
		qr.Sub(&qr, a)
		require.LessOrEqual(t, mat.Norm(&qr, 1), 1e-13*float64(m)*mat.Norm(a, 1))
		var qtq mat.Dense
		qtq.Mul(q.T(), q)
		for i := 0; i < n; i++ {
			qtq.Set(i, i, qtq.At(i, i)-1)
			for j := 0; j < i; j++ {
				require.Zero(t, r.At(i, j))
			}
		}
		require.LessOrEqual(t, mat.Norm(&qtq, math.Inf(1)), 1e-14*float64(m))

		var o Orthonormalizer
		c := mat.DenseCopyOf(a)
		rr := make([]float64, n*n)
		require.NoError(t, o.InPlaceR(c, rr))
		var cr mat.Dense
		cr.Mul(c, mat.NewDense(n, n, rr))
		cr.Sub(&cr, a)
		require.LessOrEqual(t, mat.Norm(&cr, 1), 1e-13*float64(m)*mat.Norm(a, 1), "A = QR from InPlaceR")
		b := mat.DenseCopyOf(a)
		require.NoError(t, o.InPlace(b))
		// Same span: the projection of a onto b's columns reproduces a.
		var p, bp mat.Dense
		p.Mul(b.T(), a)
		bp.Mul(b, &p)
		bp.Sub(&bp, a)
		require.LessOrEqual(t, mat.Norm(&bp, 1), 1e-13*float64(m)*mat.Norm(a, 1))
	}
	_, _, err := QR(mat.NewDense(2, 3, nil))
	require.ErrorIs(t, err, status.ErrInvalid)
	nan := mat.NewDense(3, 2, nil)
	nan.Set(1, 1, math.NaN())
	_, _, err = QR(nan)
	require.ErrorIs(t, err, status.ErrInvalid)
	var o Orthonormalizer
	require.ErrorIs(t, o.InPlace(mat.NewDense(2, 3, nil)), status.ErrInvalid)
	// A square matrix is the largest allowed: its Q is orthogonal.
	sq := mat.NewDense(3, 3, []float64{2, 1, 0, 1, 3, 1, 0, 1, 4})
	require.NoError(t, o.InPlace(sq))
	var qtq mat.Dense
	qtq.Mul(sq.T(), sq)
	for i := 0; i < 3; i++ {
		qtq.Set(i, i, qtq.At(i, i)-1)
	}
	require.Less(t, mat.Norm(&qtq, math.Inf(1)), 1e-14)
}

// TestReduceCongruent checks L·C·Lᵀ = A for C = L⁻¹·A·L⁻ᵀ (L lower
// triangular with a garbage upper triangle, which must not be read), that
// C is exactly symmetric, and the refusals.
func TestReduceCongruent(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 17))
	for _, n := range []int{1, 5, 70} {
		lambda := make([]float64, n)
		for k := range lambda {
			lambda[k] = float64(k%5-2) + 0.1*float64(k)
		}
		a := withSpectrum(uint64(n), lambda)
		l := mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				switch {
				case j < i:
					l.Set(i, j, r.NormFloat64()/float64(n)) // well conditioned
				case j == i:
					l.Set(i, i, 1+r.Float64())
				default:
					l.Set(i, j, math.NaN()) // not read
				}
			}
		}
		c := mat.NewSymDense(n, nil)
		c.CopySym(a)
		require.NoError(t, ReduceCongruent(c, l))
		lo := mat.NewTriDense(n, mat.Lower, nil)
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				lo.SetTri(i, j, l.At(i, j))
			}
		}
		var p, back mat.Dense
		p.Mul(lo, c)
		back.Mul(&p, lo.T())
		back.Sub(&back, a)
		require.LessOrEqual(t, mat.Norm(&back, 1), 1e-12*mat.Norm(a, 1)*float64(n), "n = %d", n)
		raw := c.RawSymmetric()
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				require.Equal(t, raw.Data[i*raw.Stride+j], raw.Data[j*raw.Stride+i])
			}
		}
	}
	a := mat.NewSymDense(2, []float64{1, 0, 0, 1})
	require.ErrorIs(t, ReduceCongruent(a, mat.NewDense(3, 3, nil)), status.ErrInvalid)
	require.ErrorIs(t, ReduceCongruent(a, mat.NewDense(2, 2, []float64{1, 0, 0.5, 0})), status.ErrInvalid)
	require.ErrorIs(t, ReduceCongruent(a, mat.NewDense(2, 2, []float64{1, 0, math.Inf(1), 1})), status.ErrInvalid)
	a.SetSym(0, 1, math.NaN())
	require.ErrorIs(t, ReduceCongruent(a, mat.NewDense(2, 2, []float64{1, 0, 0, 1})), status.ErrInvalid)
}

func TestCholesky(t *testing.T) {
	lambda := []float64{9, 4, 2, 1, 0.5, 0.1}
	a := withSpectrum(11, lambda)
	var c Cholesky
	require.ErrorIs(t, func() error { _, err := c.Solve(mat.NewDense(6, 1, nil)); return err }(), status.ErrInvalid)
	require.NoError(t, c.Factorize(a))
	require.Equal(t, 6, c.Size())
	// UᵀU = A
	u := c.UTo()
	var utu mat.Dense
	utu.Mul(u.T(), u)
	utu.Sub(&utu, a)
	require.LessOrEqual(t, mat.Norm(&utu, 1), 1e-14*6*9)
	logdet := 0.0
	for _, l := range lambda {
		logdet += math.Log(l)
	}
	require.InDelta(t, logdet, c.LogDet(), 1e-12*6)

	rng := rand.New(rand.NewPCG(5, 5))
	b := mat.NewDense(6, 3, nil)
	b.Apply(func(_, _ int, _ float64) float64 { return rng.NormFloat64() }, b)
	x, err := c.Solve(b)
	require.NoError(t, err)
	var r mat.Dense
	r.Mul(a, x)
	r.Sub(&r, b)
	// Backward-stable solve: ‖AX − B‖ ≲ n·ε·‖A‖‖X‖.
	require.LessOrEqual(t, mat.Norm(&r, 1), 1e-14*6*9*mat.Norm(x, 1)*10)
	xv, err := c.SolveVec(mat.Col(nil, 1, b))
	require.NoError(t, err)
	for i := range xv {
		require.InDelta(t, x.At(i, 1), xv[i], 1e-13*mat.Norm(x, 1))
	}
	_, err = c.SolveVec([]float64{1, 2})
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = c.Solve(mat.NewDense(5, 1, nil))
	require.ErrorIs(t, err, status.ErrInvalid)

	// Indefinite and singular matrices: errors, not panics.
	err = c.Factorize(withSpectrum(2, []float64{1, 1, -1}))
	require.ErrorIs(t, err, lapack.ErrNotPositiveDefinite)
	require.Zero(t, c.Size())
	singular := mat.NewSymDense(2, []float64{1, 2, 2, 4}) // rank one, exactly
	err = c.Factorize(singular)
	require.True(t, errors.Is(err, lapack.ErrNotPositiveDefinite), "%v", err)
}

// gaussGram is the Gaussian kernel matrix exp(−‖x_i − x_j‖²/(2σ²)) of the
// rows of x, written out, and the same kernel between the rows of y and x.
func gaussGram(x, y *mat.Dense, sigma float64) *mat.Dense {
	m, _ := y.Dims()
	n, d := x.Dims()
	out := mat.NewDense(m, n, nil)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for c := 0; c < d; c++ {
				v := y.At(i, c) - x.At(j, c)
				s += v * v
			}
			out.Set(i, j, math.Exp(-s/(2*sigma*sigma)))
		}
	}
	return out
}

func randData(seed uint64, n, d int) *mat.Dense {
	r := rand.New(rand.NewPCG(seed, 99))
	x := mat.NewDense(n, d, nil)
	x.Apply(func(_, _ int, _ float64) float64 { return r.NormFloat64() }, x)
	return x
}

func TestCenterKernel(t *testing.T) {
	x := randData(4, 120, 5)
	full := gaussGram(x, x, 1.5)
	g := mat.NewSymDense(120, nil)
	for i := 0; i < 120; i++ {
		for j := i; j < 120; j++ {
			g.SetSym(i, j, full.At(i, j))
		}
	}
	orig := symCopy(g)
	c, err := CenterKernelInPlace(g)
	require.NoError(t, err)
	n := 120
	raw := g.RawSymmetric()
	for i := 0; i < n; i++ {
		row, col := 0.0, 0.0
		for j := 0; j < n; j++ {
			row += raw.Data[i*raw.Stride+j]
			col += raw.Data[j*raw.Stride+i]
		}
		require.InDelta(t, 0, row, 1e-12*float64(n), "row %d", i)
		require.InDelta(t, 0, col, 1e-12*float64(n), "column %d", i)
	}
	// M K M computed with explicit products agrees.
	m := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			m.Set(i, j, -1/float64(n))
		}
		m.Set(i, i, 1-1/float64(n))
	}
	var mk, mkm mat.Dense
	mk.Mul(m, orig)
	mkm.Mul(&mk, m)
	mkm.Sub(&mkm, g)
	require.LessOrEqual(t, mat.Norm(&mkm, math.Inf(1)), 1e-12*float64(n))

	// Centring the training rows as test rows reproduces the centred kernel.
	kx := gaussGram(x, x, 1.5)
	require.NoError(t, c.CenterCross(kx))
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			require.InDelta(t, g.At(i, j), kx.At(i, j), 1e-12)
		}
	}
	v := mat.Row(nil, 3, orig)
	require.NoError(t, c.CenterVec(v))
	for j := 0; j < n; j++ {
		require.InDelta(t, g.At(3, j), v[j], 1e-12)
	}
	require.ErrorIs(t, c.CenterVec(v[:5]), status.ErrInvalid)
	require.ErrorIs(t, c.CenterCross(mat.NewDense(2, 5, nil)), status.ErrInvalid)
	_, err = CenterKernelInPlace(&mat.SymDense{})
	require.ErrorIs(t, err, status.ErrInvalid)
}

func TestCenterColumnsAndMirror(t *testing.T) {
	x := randData(3, 50, 6)
	means := CenterColumns(x)
	require.Len(t, means, 6)
	for j := 0; j < 6; j++ {
		s := 0.0
		for i := 0; i < 50; i++ {
			s += x.At(i, j)
		}
		require.InDelta(t, 0, s, 1e-12)
	}
	n := 200
	data := make([]float64, n*(n+5))
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			data[i*(n+5)+j] = float64(i*n + j)
		}
	}
	MirrorUpper(n, data, n+5)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			require.Equal(t, float64(j*n+i), data[i*(n+5)+j])
		}
	}
}

func symCopy(a *mat.SymDense) *mat.SymDense {
	s := mat.NewSymDense(a.SymmetricDim(), nil)
	s.CopySym(a)
	return s
}

// Eigen.Func gives matrix functions: (M^{1/2})² = M and M^{-1}·M = I on a
// matrix with a known spectrum; SymPart is (A + Aᵀ)/2.
func TestEigenFuncAndSymPart(t *testing.T) {
	a := withSpectrum(3, []float64{9, 4, 2, 1, 0.25})
	e, err := SymEig(a, 0)
	require.NoError(t, err)
	root := e.Func(math.Sqrt)
	var sq, id mat.Dense
	sq.Mul(root, root)
	require.True(t, mat.EqualApprox(&sq, a, 1e-12*9))
	id.Mul(e.Func(func(x float64) float64 { return 1 / x }), a)
	require.True(t, mat.EqualApprox(&id, mat.NewDiagDense(5, []float64{1, 1, 1, 1, 1}), 1e-12*36))

	g := mat.NewDense(2, 2, []float64{1, 2, 4, 3})
	s := SymPart(g)
	require.Equal(t, 3.0, s.At(0, 1))
	require.Equal(t, 3.0, s.At(1, 0))
	require.Equal(t, 1.0, s.At(0, 0))
}

// The sign convention on exact ties: the first of the entries of largest
// magnitude (within SignTies) is made positive, whatever rounding says;
// unit vectors' entries, all below 1 in magnitude, by their sign alone.
func TestSignFlipsTies(t *testing.T) {
	v := mat.NewDense(4, 4, []float64{
		-3, 1, 0.1, 0.2,
		-1, -2, 0.5, -0.5,
		1, 2 * (1 + 1e-13), -0.4, 0.3, // the second column's top entries tie to 1e-13
		3 * (1 + 1e-13), 0, 0.3, 0.1,
	})
	want := []bool{true, true, false, true}
	require.Equal(t, want, SignFlips(v))
	// Any other mat.Matrix: the same test through At.
	require.Equal(t, want, SignFlips(struct{ mat.Matrix }{v}))
	FixSigns(v)
	require.Equal(t, 3.0, v.At(0, 0))
	require.Equal(t, 2.0, v.At(1, 1))
	require.Equal(t, 0.5, v.At(1, 2))
	require.Equal(t, 0.5, v.At(1, 3))
}

// CheckFinite scans rows in parallel and names the first bad entry in row
// order, whichever chunk finds one first.
func TestCheckFiniteNamesFirstBadEntry(t *testing.T) {
	r, c := 1000, 37
	a := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			a.Set(i, j, float64(i*c+j)*1e300)
		}
	}
	require.NoError(t, CheckFinite("a", a))
	a.Set(900, 3, math.Inf(-1))
	a.Set(611, 36, math.NaN())
	a.Set(611, 35, math.Inf(1))
	err := CheckFinite("a", a)
	require.ErrorIs(t, err, status.ErrInvalid)
	require.Contains(t, err.Error(), "a[611,35] = +Inf is not finite")
	require.Equal(t, -1, firstBadRow(0, nil))
	// A view with a stride wider than its columns: the columns outside it
	// are not read.
	v := a.Slice(0, 600, 0, 30).(*mat.Dense)
	require.NoError(t, CheckFinite("v", v))

	// CheckFinite32 the same way on float32 rows: finite data pass, the
	// lowest bad row is named, empty data are refused.
	f32, err := NewDense32(r, c)
	require.NoError(t, err)
	defer f32.Free()
	for i := range f32.Data {
		f32.Data[i] = float32(i) * 1e30
	}
	require.NoError(t, CheckFinite32("f", f32))
	f32.Data[900*c+3] = float32(math.Inf(-1))
	f32.Data[611*c+36] = float32(math.NaN())
	f32.Data[999*c] = float32(math.NaN())
	for range 20 {
		err = CheckFinite32("f", f32)
		require.ErrorIs(t, err, status.ErrInvalid)
		require.Contains(t, err.Error(), "f: row 611 is not finite")
	}
	require.ErrorIs(t, CheckFinite32("f", nil), status.ErrInvalid)
	require.ErrorIs(t, CheckFinite32("f", &Dense32{Rows: 0, Cols: 2}), status.ErrInvalid)
	require.ErrorIs(t, CheckFinite32("f", &Dense32{Rows: 2, Cols: 0}), status.ErrInvalid)
	require.ErrorIs(t, CheckFinite32("f", &Dense32{Rows: 2, Cols: 2, Data: make([]float32, 3)}), status.ErrInvalid)
}

// CopyDense copies a strided view into contiguous rows of its own, leaves
// the source alone and returns nil for nil or empty input.
func TestCopyDense(t *testing.T) {
	x := randData(4, 700, 13)
	view := x.Slice(3, 650, 2, 11).(*mat.Dense)
	before := mat.DenseCopyOf(x)
	c := CopyDense(view)
	require.True(t, mat.Equal(view, c))
	require.Equal(t, 9, c.RawMatrix().Stride)
	c.Set(0, 0, 1e300)
	require.True(t, mat.Equal(before, x), "the source is not written")
	require.Nil(t, CopyDense(nil))
	require.Nil(t, CopyDense(&mat.Dense{}))
	// A copy whose buffer has no room past its last row (64 KB: a whole
	// number of pages): each block of rows writes its own rows only.
	big := randData(5, 1100, 12)
	v2 := big.Slice(0, 1024, 0, 8).(*mat.Dense)
	c2 := CopyDense(v2)
	require.True(t, mat.Equal(v2, c2))
	require.Equal(t, 1024*8, cap(c2.RawMatrix().Data))
}

// TriInverse: T·T⁻¹ = I to rounding for upper and lower factors with a
// wide spread of diagonal entries, the inverse triangular the same way
// (exact zeros in the other triangle), and the other triangle of the
// input never read (NaN there changes nothing).
func TestTriInverse(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 4))
	for _, n := range []int{1, 2, 7, 33} {
		for _, uplo := range []blas.Uplo{blas.Upper, blas.Lower} {
			a := make([]float64, n*n)
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					inTri := (uplo == blas.Upper && j >= i) || (uplo == blas.Lower && j <= i)
					switch {
					case i == j:
						a[i*n+j] = math.Pow(10, float64(i%5-2)) * (1 + rng.Float64())
					case inTri:
						a[i*n+j] = rng.NormFloat64() * 0.3
					default:
						a[i*n+j] = math.NaN()
					}
				}
			}
			inv := TriInverse(blas64.Triangular{Uplo: uplo, Diag: blas.NonUnit, N: n, Stride: n, Data: a})
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					if (uplo == blas.Upper && j < i) || (uplo == blas.Lower && j > i) {
						require.Equal(t, 0.0, inv.At(i, j), "n=%d %v (%d,%d)", n, uplo, i, j)
					}
					// (T·T⁻¹)_ij over the triangle's terms only.
					s, scale := 0.0, 0.0
					for k := 0; k < n; k++ {
						inTri := (uplo == blas.Upper && k >= i) || (uplo == blas.Lower && k <= i)
						if inTri {
							s += a[i*n+k] * inv.At(k, j)
							scale += math.Abs(a[i*n+k] * inv.At(k, j))
						}
					}
					want := 0.0
					if i == j {
						want = 1
					}
					require.InDelta(t, want, s, 64*float64(n)*0x1p-52*math.Max(scale, 1), "n=%d %v (%d,%d)", n, uplo, i, j)
				}
			}
		}
	}
}

// topTridiag itself, by dsterf and by bisection (bisectRatio forced), on
// the second-difference matrix tridiag(−1, 2, −1) (eigenvalues 2 −
// 2cos(jπ/(n+1))) whole and split in two after row 17: it succeeds (no
// fallback to dstevr) and returns the top k values ascending, with vectors
// whose residuals ‖Tv − λv‖ are at rounding level; d and e are unchanged.
func TestTopTridiagBothForms(t *testing.T) {
	defer func(r int) { bisectRatio = r }(bisectRatio)
	const n = 40
	d, e := make([]float64, n), make([]float64, n)
	for i := range d {
		d[i] = 2
		e[i] = -1
	}
	want := func(m, j int) float64 { return 2 - 2*math.Cos(float64(j)*math.Pi/float64(m+1)) }
	split := append([]float64(nil), e...)
	split[16] = 0 // blocks of 17 and 23 rows
	splitValues := []float64{}
	for j := 1; j <= 17; j++ {
		splitValues = append(splitValues, want(17, j))
	}
	for j := 1; j <= 23; j++ {
		splitValues = append(splitValues, want(23, j))
	}
	sort.Float64s(splitValues)
	for _, ratio := range []int{1, 1 << 30} {
		bisectRatio = ratio
		for _, c := range []struct {
			name string
			e    []float64
			all  []float64 // every eigenvalue, ascending
		}{{"whole", e, nil}, {"split", split, splitValues}} {
			all := c.all
			if all == nil {
				for j := 1; j <= n; j++ {
					all = append(all, want(n, j))
				}
			}
			for _, k := range []int{1, 3, 7} {
				d0, e0 := append([]float64(nil), d...), append([]float64(nil), c.e...)
				w := make([]float64, n)
				z, ok := topTridiag('V', n, k, d, c.e, w)
				require.True(t, ok, "%s ratio %d k %d: fell back", c.name, ratio, k)
				require.Equal(t, d0, d)
				require.Equal(t, e0, c.e)
				for i := 0; i < k; i++ {
					lambda := all[n-k+i]
					require.InDelta(t, lambda, w[i], 1e-13, "%s ratio %d k %d value %d", c.name, ratio, k, i)
					v := z[i*n : (i+1)*n]
					norm, res := 0.0, 0.0
					for r := 0; r < n; r++ {
						tv := d[r] * v[r]
						if r > 0 {
							tv += c.e[r-1] * v[r-1]
						}
						if r+1 < n {
							tv += c.e[r] * v[r+1]
						}
						res = math.Max(res, math.Abs(tv-lambda*v[r]))
						norm += v[r] * v[r]
					}
					require.InDelta(t, 1, norm, 1e-12)
					require.Less(t, res, 1e-12, "%s ratio %d k %d vector %d", c.name, ratio, k, i)
				}
			}
		}
	}
}

// PermutedLInPlace leaves P·L of Y = P·L·U (partial pivoting): Y = Z·U for
// an upper triangular U, every |Z_ij| ≤ 1, and Z's rows, put in pivot
// order, a unit lower trapezoid; the buffers are reused across shapes.
func TestPermutedL(t *testing.T) {
	var lu LUNormalizer
	r := rand.New(rand.NewPCG(5, 6))
	for _, shape := range [][2]int{{7, 3}, {5, 5}, {40, 8}, {3, 1}} {
		n, l := shape[0], shape[1]
		y := mat.NewDense(n, l, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < l; j++ {
				y.Set(i, j, r.NormFloat64())
			}
		}
		z := mat.DenseCopyOf(y)
		lu.PermutedLInPlace(z)
		for _, v := range z.RawMatrix().Data {
			require.LessOrEqual(t, math.Abs(v), 1+1e-15, "%v", shape)
		}
		// U = Z⁺·Y, then Y − Z·U and U's strict lower triangle vanish.
		var u, res mat.Dense
		require.NoError(t, u.Solve(z, y))
		res.Mul(z, &u)
		res.Sub(&res, y)
		require.Less(t, mat.Norm(&res, 2), 1e-12*mat.Norm(y, 2), "%v", shape)
		for i := 0; i < l; i++ {
			for j := 0; j < i; j++ {
				require.InDelta(t, 0, u.At(i, j), 1e-12*mat.Norm(y, 2), "%v: U(%d,%d)", shape, i, j)
			}
		}
		// Column j has a 1 in a row whose entries right of j are 0: the
		// pivot rows, each used once.
		used := map[int]bool{}
		for j := 0; j < l; j++ {
			row := -1
			for i := 0; i < n && row < 0; i++ {
				if used[i] || z.At(i, j) != 1 {
					continue
				}
				row = i
				for c := j + 1; c < l; c++ {
					if z.At(i, c) != 0 {
						row = -1
					}
				}
			}
			require.GreaterOrEqual(t, row, 0, "%v: no pivot row for column %d", shape, j)
			used[row] = true
		}
	}
}

// DenseOf returns a *mat.Dense itself (the same storage), a copy of any
// other matrix — a transpose, a symmetric matrix, of one row or one
// column as well as larger — and nil for nil or empty input.
func TestDenseOf(t *testing.T) {
	d := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
	require.Same(t, d, DenseOf(d))
	row := mat.NewDense(1, 3, []float64{7, 8, 9})
	for _, a := range []mat.Matrix{d.T(), row.T(), row.T().T(), mat.NewSymDense(1, []float64{2}), mat.NewSymDense(2, []float64{1, 2, 2, 5})} {
		got := DenseOf(a)
		require.NotNil(t, got)
		require.True(t, mat.Equal(a, got))
		if _, ok := a.(*mat.Dense); !ok {
			got.Set(0, 0, -1)
			require.NotEqual(t, -1.0, a.At(0, 0), "a copy")
		}
	}
	require.Nil(t, DenseOf(nil))
	require.Nil(t, DenseOf(&mat.Dense{}))
	require.Nil(t, DenseOf((*mat.Dense)(nil)))
	require.Nil(t, DenseOf(mat.NewDense(1, 3, nil).Slice(0, 1, 1, 1)))
}
