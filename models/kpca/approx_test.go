package kpca

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kdual/kdual/eig/eigtest"
	"github.com/kdual/kdual/paths"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/approx"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// With m = n landmarks Nyström KPCA is exact KPCA: the same eigenvalues
// and scores (same signs); transform of the training points gives the
// training scores; the k×k path and the eigensolvers on eig.LowRank agree.
func TestNystromKPCAEqualsExact(t *testing.T) {
	x := gaussData(t, 150, 4, 31)
	exact := &KPCA{Components: 5, Kernel: rbf, Solver: Eigen{eig.DenseSolver{}}}
	require.NoError(t, exact.Fit(x))
	ev, _ := exact.Eigenvalues()
	es, _ := exact.Scores()
	for _, sv := range []Solver{nil, Eigen{eig.Lanczos{Tol: 1e-12}}, LBFGS{Tol: 1e-12}} {
		m := &KPCA{Components: 5, Kernel: rbf, Solver: sv, Approx: approx.Nystrom{Rank: 150, Block: 32}}
		require.NoError(t, m.Fit(x))
		info := m.Info()
		require.NotNil(t, info.Approx)
		require.Less(t, info.Approx.TraceError, 1e-10)
		v, _ := m.Eigenvalues()
		for i := range ev {
			require.InDelta(t, ev[i], v[i], 1e-8*ev[0], "λ_%d (%T)", i, sv)
		}
		sc, _ := m.Scores()
		var d mat.Dense
		d.Sub(sc, es)
		require.Less(t, mat.Norm(&d, math.Inf(1)), 1e-5*mat.Norm(es, math.Inf(1)), "%T", sv)
		z, err := m.Transform(x)
		require.NoError(t, err)
		requireNear(t, sc, z, 1e-8, "%T", sv)
	}
}

// At m < n the eigenvalues sit in the stated bound λ̂_i ≤ λ_i ≤ λ̂_i +
// tr(K − K̂), and the error shrinks as m grows; random-feature KPCA's
// eigenvalue error shrinks with the features.
func TestApproxKPCAErrors(t *testing.T) {
	x := gaussData(t, 300, 5, 32)
	exact := &KPCA{Components: 6, Kernel: rbf, Solver: Eigen{eig.DenseSolver{}}}
	require.NoError(t, exact.Fit(x))
	ev, _ := exact.Eigenvalues()
	worst := func(v []float64) float64 {
		w := 0.0
		for i := range ev {
			w = math.Max(w, math.Abs(v[i]-ev[i])/ev[i])
		}
		return w
	}
	prev := math.Inf(1)
	for _, mm := range []int{20, 40, 80} {
		m := &KPCA{Components: 6, Kernel: rbf, Approx: approx.Nystrom{Rank: mm, Seed: 1}}
		require.NoError(t, m.Fit(x))
		v, _ := m.Eigenvalues()
		bound := m.Info().Approx.EigenvalueBound
		for i := range ev {
			require.LessOrEqual(t, v[i], ev[i]*(1+1e-10), "λ̂_%d ≤ λ_%d", i, i)
			require.LessOrEqual(t, ev[i], v[i]+bound*(1+1e-10)+1e-12)
		}
		w := worst(v)
		require.Less(t, w, prev, "m = %d", mm)
		prev = w
	}
	errAt := func(features int) float64 {
		s := 0.0
		for seed := uint64(1); seed <= 4; seed++ {
			m := &KPCA{Components: 6, Kernel: rbf, Approx: approx.RFF{Features: features, Seed: seed}}
			require.NoError(t, m.Fit(x))
			v, _ := m.Eigenvalues()
			s += worst(v)
		}
		return s / 4
	}
	require.Less(t, errAt(2048), errAt(128)/2)
}

func TestApproxKPCAErrorsTyped(t *testing.T) {
	x := gaussData(t, 40, 3, 33)
	m := &KPCA{Components: 5, Kernel: rbf, Approx: approx.Nystrom{Rank: 3}}
	var re *status.RankError
	require.ErrorAs(t, m.Fit(x), &re)
	require.Equal(t, 3, re.Rank)
	require.ErrorIs(t, (&KPCA{Components: 2, Kernel: rbf, FitInverse: true, Approx: approx.Nystrom{Rank: 10}}).Fit(x), status.ErrInvalid)
	require.ErrorIs(t, (&KPCA{Components: 2, Kernel: rbf, Approx: approx.Nystrom{Rank: 0}}).Fit(x), status.ErrInvalid)
	require.ErrorIs(t, (&KPCA{Components: 2, Kernel: rbf, Approx: approx.Nystrom{Rank: 41}}).Fit(x), status.ErrInvalid)
	require.ErrorIs(t, (&KPCA{Components: 2, Kernel: kernel.Kernel{Kind: kernel.Laplace, Sigma: 1}, Approx: approx.RFF{Features: 10}}).Fit(x), status.ErrInvalid)
	g, err := kernel.Gram(x, rbf)
	require.NoError(t, err)
	require.ErrorIs(t, (&KPCA{Components: 2, Approx: approx.Nystrom{Rank: 10}}).FitGram(g), status.ErrInvalid)
	ok := &KPCA{Components: 2, Kernel: rbf, Approx: approx.Nystrom{Rank: 10}}
	require.NoError(t, ok.Fit(x))
	_, err = ok.TransformGram(mat.NewDense(1, 40, nil))
	require.ErrorIs(t, err, status.ErrInvalid)
}

// Approximate models save and load like every other: the loaded model
// transforms bit for bit; the file is refused when its map is damaged.
func TestApproxSaveLoad(t *testing.T) {
	x := gaussData(t, 120, 4, 34)
	test := gaussData(t, 9, 4, 35)
	for _, a := range []approx.Method{approx.Nystrom{Rank: 30}, approx.Nystrom{Rank: 30, Sampler: approx.Uniform},
		approx.Nystrom{Rank: 30, Float32: true}, approx.RFF{Features: 64}} {
		m := &KPCA{Components: 3, Kernel: rbf, Approx: a}
		require.NoError(t, m.Fit(x))
		var buf bytes.Buffer
		require.NoError(t, m.Save(&buf))
		l, err := Load(bytes.NewReader(buf.Bytes()))
		require.NoError(t, err, "%T", a)
		z1, err := m.Transform(test)
		require.NoError(t, err)
		z2, err := l.Transform(test)
		require.NoError(t, err)
		require.True(t, mat.Equal(z1, z2), "%T", a)
		require.Equal(t, m.Info().Approx.Rank, l.Info().Approx.Rank)
		require.Equal(t, m.Info().Approx.Precision, l.Info().Approx.Precision)
		raw := buf.Bytes()
		for cut := 0; cut < len(raw); cut += max(1, len(raw)/50) {
			_, err := Load(bytes.NewReader(raw[:cut]))
			require.ErrorIs(t, err, ErrModelFile)
		}
	}
}

// CheckResidualsWith measures an approximate model against the exact
// kernel: tiny residuals with m = n landmarks, larger with fewer; the
// model keeps no training data, so CheckResiduals says what to call.
func TestApproxResiduals(t *testing.T) {
	x := gaussData(t, 100, 3, 36)
	full := &KPCA{Components: 3, Kernel: rbf, Approx: approx.Nystrom{Rank: 100}}
	require.NoError(t, full.Fit(x))
	res, l1, err := full.CheckResidualsWith(x)
	require.NoError(t, err)
	fv, _ := full.Eigenvalues()
	require.Equal(t, fv[0], l1, "the scale returned is the model's λ₁")
	for _, r := range res {
		require.Less(t, r, 1e-8*l1)
	}
	few := &KPCA{Components: 3, Kernel: rbf, Approx: approx.Nystrom{Rank: 10}}
	require.NoError(t, few.Fit(x))
	res2, _, err := few.CheckResidualsWith(x)
	require.NoError(t, err)
	require.Greater(t, res2[2], 1e-6*l1)
	// r_j = ‖K_c·v_j − λ_j·v_j‖ with K_c = H·K·H (H = I − 11ᵀ/n formed) and
	// v_j = scores_j/√λ_j, computed densely.
	g, err := kernel.Gram(x, rbf)
	require.NoError(t, err)
	const n = 100
	h := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			h.Set(i, j, -1.0/n)
		}
		h.Set(i, i, 1-1.0/n)
	}
	var kc, hk mat.Dense
	hk.Mul(h, g)
	kc.Mul(&hk, h)
	vals, _ := few.Eigenvalues()
	sc, _ := few.Scores()
	for j := 0; j < 3; j++ {
		v := mat.NewVecDense(n, nil)
		for i := 0; i < n; i++ {
			v.SetVec(i, sc.At(i, j)/math.Sqrt(vals[j]))
		}
		var kv mat.VecDense
		kv.MulVec(&kc, v)
		kv.AddScaledVec(&kv, -vals[j], v)
		require.InDelta(t, mat.Norm(&kv, 2), res2[j], 1e-9*l1, "r_%d", j)
	}
	_, _, err = few.CheckResiduals()
	require.ErrorIs(t, err, status.ErrInvalid)
	_, _, err = few.CheckResidualsWith(x.Slice(0, 50, 0, 3))
	require.ErrorIs(t, err, status.ErrInvalid)
}

// A cancelled context stops the Nyström rounds within one round.
func TestApproxCancel(t *testing.T) {
	x := gaussData(t, 400, 3, 37)
	ctx, progress, after := cancelAt("kernel", 16)
	m := &KPCA{Components: 2, Kernel: rbf, Approx: approx.Nystrom{Rank: 200, Block: 16}, Progress: progress}
	err := m.FitContext(ctx, x)
	requireStopped(t, m, err, "nystrom")
	require.LessOrEqual(t, (*after)["kernel"], 1)
	require.False(t, m.Fitted())
}

// Float32 features: the same model as float64 features within float32
// rounding, by the k×k path and by solvers on the float32 low-rank
// operator; new points (the training ones) map to the training scores.
func TestNystromKPCAFloat32(t *testing.T) {
	x := gaussData(t, 300, 5, 32)
	ref := &KPCA{Components: 6, Kernel: rbf, Approx: approx.Nystrom{Rank: 40, Sampler: approx.Uniform, Block: 16}}
	require.NoError(t, ref.Fit(x))
	rv, _ := ref.Eigenvalues()
	rs, _ := ref.Scores()
	for _, sv := range []Solver{nil, Eigen{eig.Lanczos{Tol: 1e-12}}, LBFGS{Tol: 1e-12}} {
		m := &KPCA{Components: 6, Kernel: rbf, Solver: sv,
			Approx: approx.Nystrom{Rank: 40, Sampler: approx.Uniform, Block: 16, Float32: true}}
		require.NoError(t, m.Fit(x))
		require.Equal(t, "float32", m.Info().Approx.Precision)
		v, _ := m.Eigenvalues()
		for i := range rv {
			require.InDelta(t, rv[i], v[i], 1e-5*rv[0], "λ_%d (%T)", i, sv)
		}
		sc, _ := m.Scores()
		var d mat.Dense
		d.Sub(sc, rs)
		require.Less(t, mat.Norm(&d, math.Inf(1)), 1e-3*mat.Norm(rs, math.Inf(1)), "%T", sv)
		z, err := m.Transform(x)
		require.NoError(t, err)
		requireNear(t, sc, z, 1e-4, "%T", sv)
	}
}

// Landmarks chosen on a sample: the default solver's F_cᵀF_c from the
// kernel rows (approx.NystromMap.TrainGram) and Lanczos on the features
// the map then forms give the same eigenvalues and scores; Transform of
// the training points gives the scores.
func TestNystromKPCASample(t *testing.T) {
	x := gaussData(t, 600, 5, 34)
	ny := approx.Nystrom{Rank: 30, Seed: 3, Float32: true, Sample: 150}
	ref := &KPCA{Components: 5, Kernel: rbf, Approx: ny}
	require.NoError(t, ref.Fit(x))
	require.Equal(t, 150, ref.Info().Approx.Sample)
	rv, _ := ref.Eigenvalues()
	rs, _ := ref.Scores()
	z, err := ref.Transform(x)
	require.NoError(t, err)
	requireNear(t, rs, z, 1e-4)
	m := &KPCA{Components: 5, Kernel: rbf, Solver: Eigen{eig.Lanczos{Tol: 1e-12}}, Approx: ny}
	require.NoError(t, m.Fit(x))
	v, _ := m.Eigenvalues()
	sc, _ := m.Scores()
	for i := range rv {
		require.InDelta(t, rv[i], v[i], 1e-5*rv[0], "λ_%d", i)
		// Columns agree up to sign.
		dot := 0.0
		for r := 0; r < 600; r++ {
			dot += sc.At(r, i) * rs.At(r, i)
		}
		sign := math.Copysign(1, dot)
		for r := 0; r < 600; r++ {
			require.InDelta(t, rs.At(r, i), sign*sc.At(r, i), 1e-3*mat.Norm(rs, math.Inf(1)), "score %d,%d", r, i)
		}
	}
}

// FitFloat32 on float32 data equals Fit with float32 features on the same
// rounded (mean-shifted) rows; it refuses an exact model.
func TestKPCAFitFloat32(t *testing.T) {
	x := gaussData(t, 250, 4, 33)
	n, d := x.Dims()
	mean := make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range x.RawRowView(i) {
			mean[j] += v
		}
	}
	x32, err := linalg.NewDense32(n, d)
	require.NoError(t, err)
	defer x32.Free()
	for j := range mean {
		mean[j] /= float64(n)
	}
	for i := 0; i < n; i++ {
		for j, v := range x.RawRowView(i) {
			x32.Data[i*d+j] = float32(v - mean[j])
		}
	}
	ny := approx.Nystrom{Rank: 30, Block: 8, Seed: 4}
	a := &KPCA{Components: 4, Kernel: rbf, Approx: approx.Nystrom{Rank: 30, Block: 8, Seed: 4, Float32: true}}
	require.NoError(t, a.Fit(x))
	b := &KPCA{Components: 4, Kernel: rbf, Approx: ny}
	require.NoError(t, b.FitFloat32(context.Background(), x32))
	av, _ := a.Eigenvalues()
	bv, _ := b.Eigenvalues()
	require.Equal(t, av, bv)
	as, _ := a.Scores()
	bs, _ := b.Scores()
	require.True(t, mat.Equal(as, bs))
	require.Equal(t, "float32", b.Info().Approx.Precision)
	exact := &KPCA{Components: 4, Kernel: rbf}
	require.ErrorIs(t, exact.FitFloat32(context.Background(), x32), status.ErrInvalid)
	require.ErrorIs(t, (&KPCA{Components: 400, Kernel: rbf, Approx: ny}).FitFloat32(context.Background(), x32), status.ErrInvalid)
	// No rows is empty data; one row has no component to fit (s < n).
	for rows, want := range map[int]string{0: "empty data", 1: "need 1 ≤ s < n = 1"} {
		one := &linalg.Dense32{Rows: rows, Cols: x32.Cols, Data: x32.Data[:rows*x32.Cols]}
		err := (&KPCA{Components: 1, Kernel: rbf, Approx: ny}).FitFloat32(context.Background(), one)
		require.ErrorIs(t, err, status.ErrInvalid, "%d rows", rows)
		require.Contains(t, err.Error(), want, "%d rows", rows)
	}
}

// The small problem goes to Lanczos when it is large and s small against
// it (topEig's measured rule), to LAPACK otherwise: both give the same
// eigenvalues, scores and transform, and the model says which ran and that
// Lanczos's stopping test passed.
func TestApproxSmallProblemSolvers(t *testing.T) {
	x := gaussData(t, 400, 6, 35)
	defer func(m, f int) { lanczosMin, lanczosFraction = m, f }(lanczosMin, lanczosFraction)
	fit := func(min int, f32 bool) *KPCA {
		lanczosMin = min
		m := &KPCA{Components: 4, Kernel: rbf, Approx: approx.Nystrom{Rank: 120, Seed: 3, Float32: f32}}
		require.NoError(t, m.Fit(x))
		return m
	}
	for _, f32 := range []bool{false, true} {
		dense, lz := fit(1<<30, f32), fit(100, f32)
		require.Equal(t, "dense (k×k)", dense.Info().Solver)
		require.Equal(t, "lanczos (k×k)", lz.Info().Solver)
		require.Equal(t, status.Converged, lz.Info().Status.Code)
		require.Contains(t, lz.Info().Status.Test, "‖Av − θv‖ ≤ max(1e-10")
		dv, _ := dense.Eigenvalues()
		lv, _ := lz.Eigenvalues()
		for i := range dv {
			require.InDelta(t, dv[i], lv[i], 1e-9*dv[0], "λ_%d", i)
		}
		ds, _ := dense.Scores()
		ls, _ := lz.Scores()
		var d mat.Dense
		d.Sub(ds, ls)
		require.Less(t, mat.Norm(&d, math.Inf(1)), 1e-6*mat.Norm(ds, math.Inf(1)))
		y := x.Slice(0, 30, 0, 6).(*mat.Dense)
		dz, err := dense.Transform(y)
		require.NoError(t, err)
		lzz, err := lz.Transform(y)
		require.NoError(t, err)
		d.Reset()
		d.Sub(dz, lzz)
		require.Less(t, mat.Norm(&d, math.Inf(1)), 1e-6*mat.Norm(dz, math.Inf(1)))
		// s too large against the rank: LAPACK.
		lanczosMin = 100
		many := &KPCA{Components: 20, Kernel: rbf, Approx: approx.Nystrom{Rank: 120, Seed: 3, Float32: f32}}
		require.NoError(t, many.Fit(x))
		require.Equal(t, "dense (k×k)", many.Info().Solver)
	}
}

// Both forms of the approximate fit — the r×r feature covariance (r ≤ n)
// and the n×n feature Gram matrix (r > n: more random features than
// points) — give the same model: eigenvalues, training scores, and
// Transform of the training rows equal to their scores; centred and not.
func TestApproxFeatureFormsAgree(t *testing.T) {
	x := gaussData(t, 60, 3, 41)
	for _, center := range []bool{true, false} {
		// The same 200 random features, seen through both forms by
		// fitting all 60 points (r > n) and 240 copies of them (r ≤ n, the
		// covariance of four copies is four times the one of one).
		wide := &KPCA{Components: 4, Kernel: rbf, NoCenter: !center, Approx: approx.RFF{Features: 200, Seed: 5}}
		require.NoError(t, wide.Fit(x))
		ev, _ := wide.Eigenvalues()
		sc, _ := wide.Scores()
		z, err := wide.Transform(x)
		require.NoError(t, err)
		requireNear(t, sc, z, 1e-9, "r > n, centred %v", center)

		four := mat.NewDense(240, 3, nil)
		for i := 0; i < 240; i++ {
			four.SetRow(i, x.RawRowView(i%60))
		}
		tall := &KPCA{Components: 4, Kernel: rbf, NoCenter: !center, Approx: approx.RFF{Features: 200, Seed: 5}}
		require.NoError(t, tall.Fit(four))
		tv, _ := tall.Eigenvalues()
		for j := range ev {
			require.InDelta(t, 4*ev[j], tv[j], 1e-9*4*ev[0], "λ_%d, centred %v", j, center)
		}
		z4, err := tall.Transform(x)
		require.NoError(t, err)
		for i := 0; i < 60; i++ {
			for j := 0; j < 4; j++ {
				require.InDelta(t, math.Abs(sc.At(i, j)), math.Abs(z4.At(i, j)), 1e-8*mat.Norm(sc, math.Inf(1)), "score (%d, %d), centred %v", i, j, center)
			}
		}
	}
}

// topEig's rule: Lanczos for at least 500 rows and s ≤ rows/10, LAPACK
// otherwise; both give the same top eigenvalues.
func TestTopEigRule(t *testing.T) {
	for _, c := range []struct {
		r, s    int
		lanczos bool
	}{{500, 50, true}, {500, 51, false}, {499, 10, false}, {600, 60, true}} {
		lambda := make([]float64, c.r)
		for i := range lambda {
			lambda[i] = math.Pow(float64(i+1), -1.6)
		}
		a := eigtest.WithSpectrum(uint64(c.r+c.s), lambda)
		e, info, err := topEig(a, c.s)
		require.NoError(t, err)
		require.Equal(t, c.lanczos, strings.HasPrefix(info.Solver, "lanczos"), "%d rows, s = %d: %s", c.r, c.s, info.Solver)
		for i := 0; i < c.s; i++ {
			require.InDelta(t, lambda[i], e.Values[i], 1e-9, "%d rows, s = %d: λ_%d", c.r, c.s, i)
		}
	}
}

// An approximate model maps points, not kernel rows: TransformGram is
// refused.
func TestApproxTransformGramRefused(t *testing.T) {
	x := gaussData(t, 40, 3, 5)
	m := &KPCA{Components: 2, Kernel: rbf, Approx: approx.Nystrom{Rank: 10}}
	require.NoError(t, m.Fit(x))
	_, err := m.TransformGram(mat.NewDense(2, 40, nil))
	require.ErrorIs(t, err, status.ErrInvalid)
	require.Contains(t, err.Error(), "approximate")
}

// A fit on 8-bit levels (FitLevels8) is the fit on the same values in
// float64 with Float32 features: the same eigenvalues to the float32
// features' rounding, whichever kernel rows run (exact integer products or
// the float32 fallback); bad data are typed errors.
func TestKPCAFitLevels8(t *testing.T) {
	const n, d = 400, 20
	r := rand.New(rand.NewPCG(7, 8))
	lv := &linalg.Levels8{Rows: n, Cols: d, Step: 1.0 / 255, Data: make([]uint8, n*d)}
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		c := r.IntN(4) // four clusters of noisy levels
		for j := 0; j < d; j++ {
			v := uint8(min(255, max(0, 60*c+j*3+r.IntN(40))))
			lv.Data[i*d+j] = v
			x.Set(i, j, float64(v)/255)
		}
	}
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 0.5}
	ny := approx.Nystrom{Rank: 60, Block: 16, Seed: 2}
	a := &KPCA{Components: 5, Kernel: k, Approx: approx.Nystrom{Rank: 60, Block: 16, Seed: 2, Float32: true}}
	require.NoError(t, a.Fit(x))
	b := &KPCA{Components: 5, Kernel: k, Approx: ny}
	require.NoError(t, b.FitLevels8(context.Background(), lv))
	av, _ := a.Eigenvalues()
	bv, _ := b.Eigenvalues()
	for i := range av {
		require.InDelta(t, av[i], bv[i], 1e-5*av[0], "eigenvalue %d", i)
	}
	// Without the integer path: the float32 copy and sgemm, the same
	// eigenvalues to float32 rounding.
	p := paths.Current()
	off := p
	off.Int8 = false
	require.NoError(t, paths.Set(off))
	c := &KPCA{Components: 5, Kernel: k, Approx: ny}
	err := c.FitLevels8(context.Background(), lv)
	require.NoError(t, paths.Set(p))
	require.NoError(t, err)
	require.Equal(t, "float32", c.Info().Approx.Products)
	cv, _ := c.Eigenvalues()
	for i := range av {
		require.InDelta(t, av[i], cv[i], 1e-4*av[0], "eigenvalue %d (float32 rows)", i)
	}
	require.Equal(t, "float32", b.Info().Approx.Precision)
	// Landmarks chosen among a sample of the rows: the same sample, the
	// same fit as the float64 data's.
	as := &KPCA{Components: 5, Kernel: k, Approx: approx.Nystrom{Rank: 60, Block: 16, Seed: 2, Float32: true, Sample: 150}}
	require.NoError(t, as.Fit(x))
	bs := &KPCA{Components: 5, Kernel: k, Approx: approx.Nystrom{Rank: 60, Block: 16, Seed: 2, Sample: 150}}
	require.NoError(t, bs.FitLevels8(context.Background(), lv))
	require.Equal(t, 150, bs.Info().Approx.Sample)
	asv, _ := as.Eigenvalues()
	bsv, _ := bs.Eigenvalues()
	for i := range asv {
		require.InDelta(t, asv[i], bsv[i], 1e-5*asv[0], "eigenvalue %d, landmarks on a sample", i)
	}
	require.Equal(t, a.Info().Approx.Products, b.Info().Approx.Products)
	require.Equal(t, a.Info().Approx.Rank, b.Info().Approx.Rank)
	// The model transforms float64 points like the one fitted on them.
	za, err := a.Transform(x.Slice(0, 10, 0, d).(*mat.Dense))
	require.NoError(t, err)
	zb, err := b.Transform(x.Slice(0, 10, 0, d).(*mat.Dense))
	require.NoError(t, err)
	require.True(t, mat.EqualApprox(za, zb, 1e-4*math.Sqrt(av[0])))
	for _, bad := range []*linalg.Levels8{nil, {Rows: n, Cols: d, Step: -1, Data: lv.Data}, {Rows: n, Cols: d, Step: 1, Data: lv.Data[:5]}} {
		require.ErrorIs(t, (&KPCA{Components: 5, Kernel: k, Approx: ny}).FitLevels8(context.Background(), bad), status.ErrInvalid)
	}
	require.ErrorIs(t, (&KPCA{Components: 5, Kernel: k}).FitLevels8(context.Background(), lv), status.ErrInvalid)
}

// The top eigenpairs of F_cᵀF_c by block Krylov on products with F (the
// rule's large problems, taken here by lowering its thresholds; a basis
// smaller than the matrix) are those
// of the formed matrix: eigenvalues within the stopping test's 10⁻⁵·λ₁,
// the same scores to that accuracy, the solver and its passes named, and
// the test's status converged.
func TestApproxProductsSolver(t *testing.T) {
	x := gaussData(t, 3000, 6, 41)
	ny := approx.Nystrom{Rank: 300, Block: 32, Seed: 3, Float32: true}
	a := &KPCA{Components: 6, Kernel: rbf, Approx: ny}
	require.NoError(t, a.Fit(x))
	require.NotContains(t, a.Info().Solver, "products")
	// The rule: rank, points per landmark, components, and the fast form.
	fastNow := productsFast
	for _, fast := range []bool{false, true} {
		productsFast = func() bool { return fast }
		require.Equal(t, fast, productsWanted(1<<20, 2000, 20), "fast form %v", fast)
		require.False(t, productsWanted(1<<20, 1000, 20), "rank below the rule")
		require.False(t, productsWanted(90000, 2000, 20), "fewer than 50 points a landmark")
		require.False(t, productsWanted(1<<20, 2000, 30), "more components than the block leaves")
	}
	productsFast = fastNow
	rank, rows, fast := productsRank, productsRows, productsFast
	productsRank, productsRows, productsFast = 10, 10, func() bool { return true }
	defer func() { productsRank, productsRows, productsFast = rank, rows, fast }()
	b := &KPCA{Components: 6, Kernel: rbf, Approx: ny}
	require.NoError(t, b.Fit(x))
	info := b.Info()
	require.Equal(t, "block (k×k, by products with F)", info.Solver)
	require.Equal(t, status.Converged, info.Status.Code)
	require.GreaterOrEqual(t, info.Passes, 1)
	require.Less(t, info.Passes, 300/productsBlock, "a Krylov basis smaller than the matrix")
	require.Equal(t, 300, info.Approx.Rank)
	av, _ := a.Eigenvalues()
	bv, _ := b.Eigenvalues()
	for i := range av {
		require.InDelta(t, av[i], bv[i], 1e-5*av[0], "eigenvalue %d", i)
	}
	as, _ := a.Scores()
	bs, _ := b.Scores()
	require.True(t, mat.EqualApprox(as, bs, 1e-3*math.Sqrt(av[0])), "scores")
	// Not centred: the same agreement.
	a.NoCenter, b.NoCenter = true, true
	require.NoError(t, b.Fit(x))
	productsRank, productsRows, productsFast = rank, rows, fast
	require.NoError(t, a.Fit(x))
	av, _ = a.Eigenvalues()
	bv, _ = b.Eigenvalues()
	for i := range av {
		require.InDelta(t, av[i], bv[i], 1e-5*av[0], "eigenvalue %d, not centred", i)
	}
}
