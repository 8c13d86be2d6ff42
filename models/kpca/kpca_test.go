package kpca

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/kdual/kdual/approx"
	"github.com/kdual/kdual/eig/eigtest"
	"github.com/kdual/kdual/internal/rng"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/lbfgs"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

func gaussData(t *testing.T, n, d int, seed uint64) *mat.Dense {
	t.Helper()
	x, err := dataset.StandardNormal(n, d, seed)
	require.NoError(t, err)
	return x
}

func centredGram(t *testing.T, x *mat.Dense, k kernel.Kernel) *mat.SymDense {
	t.Helper()
	g, err := kernel.Gram(x, k)
	require.NoError(t, err)
	_, err = linalg.CenterKernelInPlace(g)
	require.NoError(t, err)
	return g
}

var rbf = kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}

func TestDualCostGradientFiniteDifferences(t *testing.T) {
	g := centredGram(t, gaussData(t, 30, 4, 1), rbf)
	op, err := eig.NewDense(g)
	require.NoError(t, err)
	h := gaussData(t, 30, 3, 2)
	f, grad, err := DualCost(op, h)
	require.NoError(t, err)
	const step = 1e-6
	for i := 0; i < 30; i += 7 {
		for j := 0; j < 3; j++ {
			hp, hm := mat.DenseCopyOf(h), mat.DenseCopyOf(h)
			hp.Set(i, j, h.At(i, j)+step)
			hm.Set(i, j, h.At(i, j)-step)
			fp, _, err := DualCost(op, hp)
			require.NoError(t, err)
			fm, _, err := DualCost(op, hm)
			require.NoError(t, err)
			fd := (fp - fm) / (2 * step)
			// Central differences: error O(step²·f''') plus rounding
			// |f|·ε/step.
			require.InDelta(t, fd, grad.At(i, j), 1e-7*math.Max(1, math.Abs(f)), "(%d,%d)", i, j)
		}
	}
}

func TestDualOptimum(t *testing.T) {
	g := centredGram(t, gaussData(t, 60, 5, 3), rbf)
	op, err := eig.NewDense(g)
	require.NoError(t, err)
	e, err := linalg.SymEig(g, 4)
	require.NoError(t, err)
	h := mat.NewDense(60, 4, nil)
	want := 0.0
	for j := 0; j < 4; j++ {
		want -= 0.5 * e.Values[j]
		for i := 0; i < 60; i++ {
			h.Set(i, j, e.Vectors.At(i, j)*math.Sqrt(e.Values[j]))
		}
	}
	// Any rotation R gives the same optimum, with zero gradient.
	r, _, err := linalg.QR(gaussData(t, 4, 4, 9))
	require.NoError(t, err)
	var hr mat.Dense
	hr.Mul(h, r)
	f, grad, err := DualCost(op, &hr)
	require.NoError(t, err)
	require.InDelta(t, want, f, 1e-12*math.Abs(want))
	require.LessOrEqual(t, mat.Norm(grad, 2), 1e-10*mat.Norm(&hr, 2))
}

// subspaceSine returns sin of the largest principal angle between the
// column spans of the orthonormal-column matrices a and b.
func subspaceSine(a, b *mat.Dense) float64 {
	var ab mat.Dense
	ab.Mul(a.T(), b)
	var sv mat.SVD
	sv.Factorize(&ab, mat.SVDNone)
	v := sv.Values(nil)
	c := v[len(v)-1]
	return math.Sqrt(math.Max(0, 1-c*c))
}

func orthonormalCols(m *mat.Dense) *mat.Dense {
	q, _, err := linalg.QR(m)
	if err != nil {
		panic(err)
	}
	return q
}

func TestLBFGSMatchesDense(t *testing.T) {
	x := gaussData(t, 200, 6, 4)
	for _, start := range []Start{StartNormal, StartSketch} {
		dense := &KPCA{Components: 5, Kernel: rbf, Solver: byName("dense")}
		require.NoError(t, dense.Fit(x))
		var lastCost float64
		lb := &KPCA{Components: 5, Kernel: rbf, Solver: LBFGS{Start: start, Tol: 1e-14}}
		require.NoError(t, lb.Fit(x))
		dv, _ := dense.Eigenvalues()
		lv, _ := lb.Eigenvalues()
		dopt := 0.0
		for _, l := range dv {
			dopt -= 0.5 * l
		}
		lastCost = lb.Info().Cost
		eta := math.Abs(lastCost-dopt) / math.Abs(dopt)
		require.Less(t, eta, 1e-10, "η")
		for i := range dv {
			require.InDelta(t, dv[i], lv[i], 1e-8*dv[i], "λ_%d", i)
		}
		ds, _ := dense.Scores()
		ls, _ := lb.Scores()
		require.Less(t, subspaceSine(orthonormalCols(ds), orthonormalCols(ls)), 1e-6)
		// Passes: one per iteration, one for the start (two for the sketch),
		// one per failed line search.
		extra := 1
		if start == StartSketch {
			extra = 2
		}
		require.Equal(t, lb.Info().Iterations+extra+lb.Info().FailedSearches, lb.Info().Passes)

		// Out-of-sample: lbfgs and dense agree on new points (signs fixed).
		xt := gaussData(t, 20, 6, 5)
		zd, err := dense.Transform(xt)
		require.NoError(t, err)
		zl, err := lb.Transform(xt)
		require.NoError(t, err)
		for j := 0; j < 5; j++ {
			sgn := 1.0
			if mat.Dot(mat.NewVecDense(200, mat.Col(nil, j, ds)), mat.NewVecDense(200, mat.Col(nil, j, ls))) < 0 {
				sgn = -1
			}
			for i := 0; i < 20; i++ {
				require.InDelta(t, zd.At(i, j), sgn*zl.At(i, j), 1e-5*math.Sqrt(dv[0]), "test point %d comp %d", i, j)
			}
		}
	}
}

func TestTransformOfTrainingEqualsScores(t *testing.T) {
	x := gaussData(t, 80, 3, 6)
	for _, solver := range []string{"dense", "lbfgs", "lanczos"} {
		k := &KPCA{Components: 4, Kernel: rbf, Solver: byName(solver)}
		require.NoError(t, k.Fit(x))
		z, err := k.Transform(x)
		require.NoError(t, err)
		s, _ := k.Scores()
		require.True(t, mat.EqualApprox(z, s, 1e-9*mat.Norm(s, math.Inf(1))), solver)
	}
}

func TestLinearKernelIsPCA(t *testing.T) {
	x := gaussData(t, 50, 4, 7)
	// Give the columns different scales so the spectrum is simple.
	for j, c := range []float64{5, 3, 2, 1} {
		for i := 0; i < 50; i++ {
			x.Set(i, j, c*x.At(i, j))
		}
	}
	k := &KPCA{Components: 3, Solver: LBFGS{Tol: 1e-14}}
	require.NoError(t, k.Fit(x))
	xc := mat.DenseCopyOf(x)
	linalg.CenterColumns(xc)
	var sv mat.SVD
	require.True(t, sv.Factorize(xc, mat.SVDThin))
	var u mat.Dense
	sv.UTo(&u)
	vals := sv.Values(nil)
	got, _ := k.Eigenvalues()
	scores, _ := k.Scores()
	for j := 0; j < 3; j++ {
		require.InDelta(t, vals[j]*vals[j], got[j], 1e-8*vals[0]*vals[0])
		// PCA scores U·S, up to sign.
		sgn := math.Copysign(1, u.At(0, j)*scores.At(0, j))
		for i := 0; i < 50; i++ {
			require.InDelta(t, u.At(i, j)*vals[j], sgn*scores.At(i, j), 1e-6*vals[0])
		}
	}
}

func TestDCA(t *testing.T) {
	x := gaussData(t, 120, 5, 8)
	sq := &KPCA{Components: 3, Kernel: rbf, Solver: byName("dense")}
	require.NoError(t, sq.Fit(x))
	hsq, _ := sq.Dual()
	sqVals, _ := sq.Eigenvalues()
	for _, kind := range []LossKind{Huber1, Huber2, HuberF} {
		// κ ≥ κ_max: the square loss again.
		kmax := KappaMax(hsq, kind)
		k := &KPCA{Components: 3, Kernel: rbf, Solver: DCA{Loss: Loss{Kind: kind, Param: 1.01 * kmax}}}
		require.NoError(t, k.Fit(x))
		v, _ := k.Eigenvalues()
		for i := range v {
			require.InDelta(t, sqVals[i], v[i], 1e-6*sqVals[0], "kind %d", kind)
		}
		// κ < κ_max: iterates stay in the ball.
		kappa := 0.6 * kmax
		k = &KPCA{Components: 3, Kernel: rbf, Solver: DCA{Loss: Loss{Kind: kind, Param: kappa}}}
		require.NoError(t, k.Fit(x))
		h, _ := k.Dual()
		require.LessOrEqual(t, KappaMax(h, kind), kappa*(1+1e-12))
	}
	// ε = 0: the square loss again.
	for _, kind := range []LossKind{EpsInf, Eps2} {
		k := &KPCA{Components: 3, Kernel: rbf, Solver: DCA{Loss: Loss{Kind: kind}}}
		require.NoError(t, k.Fit(x))
		v, _ := k.Eigenvalues()
		for i := range v {
			require.InDelta(t, sqVals[i], v[i], 1e-6*sqVals[0])
		}
	}
	// Sparsity grows with ε (ℓ²_ε: zero rows of H).
	prev := -1
	for _, eps := range []float64{0, 0.05, 0.1, 0.2, 0.3} {
		k := &KPCA{Components: 3, Kernel: rbf, Solver: DCA{Loss: Loss{Kind: Eps2, Param: eps}}}
		require.NoError(t, k.Fit(x))
		h, _ := k.Dual()
		zero := 0
		for i := 0; i < 120; i++ {
			if mat.Norm(h.RowView(i), 2) == 0 {
				zero++
			}
		}
		require.GreaterOrEqual(t, zero, prev, "ε=%g", eps)
		prev = zero
	}
	require.Greater(t, prev, 0, "the largest ε zeroes some rows")
	// A relative κ is that fraction of κ_max of the square-loss start.
	for _, kind := range []LossKind{Huber1, Huber2, HuberF} {
		rel := &KPCA{Components: 3, Kernel: rbf, Solver: DCA{Loss: Loss{Kind: kind, Param: 0.6, Relative: true}}}
		require.NoError(t, rel.Fit(x))
		abs := &KPCA{Components: 3, Kernel: rbf, Solver: DCA{Loss: Loss{Kind: kind, Param: 0.6 * KappaMax(hsq, kind)}}}
		require.NoError(t, abs.Fit(x))
		rv, _ := rel.Eigenvalues()
		av, _ := abs.Eigenvalues()
		for i := range rv {
			require.InDelta(t, av[i], rv[i], 1e-9*av[0], "kind %d", kind)
		}
	}
	// What would be ignored is refused: a parameter of the square loss, a
	// relative parameter of a loss other than Huber's; and bad values.
	for _, bad := range []Loss{{Kind: Square, Param: 0.5}, {Kind: Eps2, Param: 0.1, Relative: true}, {Kind: EpsInf, Relative: true},
		{Kind: Square, Relative: true}, {Kind: Huber1}, {Kind: Eps2, Param: -1}, {Kind: Huber2, Param: math.Inf(1)}, {Kind: LossKind(9), Param: 1}} {
		k := &KPCA{Components: 3, Kernel: rbf, Solver: DCA{Loss: bad}}
		require.ErrorIs(t, k.Fit(x), status.ErrInvalid, "%+v", bad)
	}
}

func TestPreimage(t *testing.T) {
	iris, err := dataset.Iris()
	require.NoError(t, err)
	k := &KPCA{Components: 4, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}, FitInverse: true, Alpha: 0.1}
	require.NoError(t, k.Fit(iris.X))
	z, err := k.Transform(iris.X)
	require.NoError(t, err)
	xr, err := k.InverseTransform(z)
	require.NoError(t, err)
	// The map is the ridge regression (K_Z + αI)⁻¹X applied through K_Z:
	// check the identity K_Z·A + αA = X on the training points.
	s, _ := k.Scores()
	kz, err := kernel.Gram(s, k.Kernel)
	require.NoError(t, err)
	var ka mat.Dense
	ka.Mul(kz, k.inverse.coef)
	var resid mat.Dense
	resid.Scale(0.1, k.inverse.coef)
	resid.Add(&resid, &ka)
	resid.Sub(&resid, iris.X)
	require.LessOrEqual(t, mat.Norm(&resid, math.Inf(1)), 1e-9*mat.Norm(iris.X, math.Inf(1)))
	// And it reconstructs: error well below the data's variance.
	var diff mat.Dense
	diff.Sub(xr, iris.X)
	xc := mat.DenseCopyOf(iris.X)
	linalg.CenterColumns(xc)
	require.Less(t, mat.Norm(&diff, 2), 0.3*mat.Norm(xc, 2))
}

// With InverseKernel the pre-image map is the same ridge regression on
// that kernel: (K'_Z + αI)·A = X for K'_Z of the scores under
// InverseKernel, and the map differs from the one on the fit's kernel.
func TestPreimageOwnKernel(t *testing.T) {
	iris, err := dataset.Iris()
	require.NoError(t, err)
	fit := kernel.Kernel{Kind: kernel.Gaussian, Gamma: 0.25}
	own := kernel.Kernel{Kind: kernel.Gaussian, Gamma: 1.0 / 3}
	k := &KPCA{Components: 3, Kernel: fit, FitInverse: true, Alpha: 0.1, InverseKernel: &own}
	require.NoError(t, k.Fit(iris.X))
	s, _ := k.Scores()
	kz, err := kernel.Gram(s, own)
	require.NoError(t, err)
	var resid mat.Dense
	resid.Mul(kz, k.inverse.coef)
	var reg mat.Dense
	reg.Scale(0.1, k.inverse.coef)
	resid.Add(&resid, &reg)
	resid.Sub(&resid, iris.X)
	require.LessOrEqual(t, mat.Norm(&resid, math.Inf(1)), 1e-9*mat.Norm(iris.X, math.Inf(1)))
	plain := &KPCA{Components: 3, Kernel: fit, FitInverse: true, Alpha: 0.1}
	require.NoError(t, plain.Fit(iris.X))
	a, err := k.InverseTransform(s)
	require.NoError(t, err)
	b, err := plain.InverseTransform(s)
	require.NoError(t, err)
	require.False(t, mat.EqualApprox(a, b, 1e-6))
	bad := &KPCA{Components: 3, Kernel: fit, FitInverse: true, InverseKernel: &kernel.Kernel{Kind: kernel.Gaussian}}
	require.ErrorIs(t, bad.Fit(iris.X), status.ErrInvalid)
}

func TestErrors(t *testing.T) {
	x := gaussData(t, 20, 3, 10)
	k := &KPCA{Components: 2, Kernel: rbf}
	_, err := k.Transform(x)
	require.ErrorIs(t, err, ErrNotFitted)
	_, err = k.Eigenvalues()
	require.ErrorIs(t, err, ErrNotFitted)
	for _, s := range []int{0, -1, 20, 21} {
		require.ErrorIs(t, (&KPCA{Components: s, Kernel: rbf}).Fit(x), status.ErrInvalid, "s=%d", s)
	}
	bad := mat.DenseCopyOf(x)
	bad.Set(3, 1, math.NaN())
	for _, solver := range []string{"dense", "lbfgs", "dca"} {
		require.ErrorIs(t, (&KPCA{Components: 2, Kernel: rbf, Solver: byName(solver)}).Fit(bad), status.ErrInvalid)
	}
	// The approximations too, on generic data and on an 8-bit grid (the
	// integer kernel rows' own check), NaN and ±Inf alike.
	grid := mat.NewDense(40, 3, nil)
	for i := 0; i < 40; i++ {
		for j := 0; j < 3; j++ {
			grid.Set(i, j, float64((i*7+j*13)%256)/255)
		}
	}
	for _, data := range []*mat.Dense{x, grid} {
		for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			bad := mat.DenseCopyOf(data)
			bad.Set(3, 1, v)
			for _, m := range []approx.Method{approx.Nystrom{Rank: 5}, approx.Nystrom{Rank: 5, Float32: true},
				approx.RFF{Features: 20}} {
				require.ErrorIs(t, (&KPCA{Components: 2, Kernel: rbf, Approx: m}).Fit(bad), status.ErrInvalid, "%v %T", v, m)
			}
		}
	}
	require.ErrorIs(t, (&KPCA{Components: 2, Solver: badSolver{}}).Fit(x), status.ErrInvalid)
	// Duplicate rows: rank-deficient G (rank 1 once centred); asking for
	// more components than its rank is a status.RankError naming the rank
	// (wrapping ErrInvalid), never NaN results, whatever the solver.
	dup := mat.NewDense(12, 2, nil)
	for i := 0; i < 12; i++ {
		dup.Set(i, 0, float64(i%2))
		dup.Set(i, 1, float64(i%2)*2)
	}
	for _, solver := range []string{"dense", "lbfgs", "dca", "lanczos", "block", "randomized"} {
		err := (&KPCA{Components: 3, Kernel: rbf, Solver: byName(solver)}).Fit(dup)
		var re *status.RankError
		require.ErrorAs(t, err, &re, solver)
		require.Equal(t, 1, re.Rank, solver)
		require.Equal(t, 3, re.Asked, solver)
		require.ErrorIs(t, err, status.ErrInvalid, solver)
	}
	require.ErrorIs(t, (&KPCA{Components: 2, Kernel: rbf, Solver: DCA{Loss: Loss{Kind: Huber1}}}).Fit(x), status.ErrInvalid)
	fitted := &KPCA{Components: 2, Kernel: rbf}
	require.NoError(t, fitted.Fit(x))
	_, err = fitted.InverseTransform(mat.NewDense(1, 2, nil))
	require.ErrorIs(t, err, ErrNotFitted)
	_, err = fitted.Transform(mat.NewDense(2, 5, nil))
	require.ErrorIs(t, err, status.ErrInvalid)
	require.Contains(t, err.Error(), "fitted on")
}

// Every solver reports how it ended as a status.Status: the eigensolvers
// and L-BFGS with the test that passed, a randomized run without a
// tolerance as FixedSchedule (never "converged"), and an L-BFGS run whose
// iteration limit came first as IterationLimit with a usable partial model
// and an error wrapping ErrNotConverged.
func TestStatusOfEverySolver(t *testing.T) {
	x := gaussData(t, 120, 5, 3)
	for _, c := range []struct {
		solver string
		code   status.Code
		test   string
	}{
		{"dense", status.Converged, ""},
		{"lanczos", status.Converged, ""},
		{"block", status.Converged, ""},
		{"randomized", status.FixedSchedule, ""},
		{"lbfgs", status.Converged, lbfgs.TestRelGrad},
		{"dca", status.Converged, testDCA},
	} {
		m := &KPCA{Kernel: rbf, Components: 4, Solver: byName(c.solver)}
		require.NoError(t, m.Fit(x), c.solver)
		st := m.Info().Status
		require.Equal(t, c.code, st.Code, "%s: %v", c.solver, st)
		// L-BFGS may also end by its function or rounding test (both
		// documented as converged), depending on the last bits of the
		// kernel products.
		if c.test != "" && st.Test != lbfgs.TestFunction && st.Test != lbfgs.TestRounding {
			require.Equal(t, c.test, st.Test, c.solver)
		}
		if c.code == status.Converged {
			require.NotEmpty(t, st.Test, "%s: a converged run names its test", c.solver)
		}
	}

	m := &KPCA{Kernel: rbf, Components: 4, Solver: LBFGS{MaxIter: 3}}
	err := m.Fit(x)
	require.ErrorIs(t, err, ErrNotConverged)
	require.True(t, m.Fitted())
	require.Equal(t, status.IterationLimit, m.Info().Status.Code)
	z, err := m.Transform(x)
	require.NoError(t, err)
	r, c := z.Dims()
	require.Equal(t, [2]int{120, 4}, [2]int{r, c})

	// DCA's iteration limit: the same, its objective still changing.
	d := &KPCA{Kernel: rbf, Components: 4, Solver: DCA{Loss: Loss{Kind: Huber1, Param: 0.01}, MaxIter: 2}}
	err = d.Fit(x)
	require.ErrorIs(t, err, ErrNotConverged)
	require.True(t, d.Fitted())
	require.Equal(t, status.IterationLimit, d.Info().Status.Code)
	require.Equal(t, testDCA, d.Info().Status.Test)
	require.Equal(t, 2, d.Info().Iterations)
	z, err = d.Transform(x)
	require.NoError(t, err)
	r, c = z.Dims()
	require.Equal(t, [2]int{120, 4}, [2]int{r, c})
	for _, v := range z.RawMatrix().Data {
		require.False(t, math.IsNaN(v) || math.IsInf(v, 0))
	}

	stopped := &KPCA{Kernel: rbf, Components: 4, Solver: LBFGS{
		Stop: func(iter int, _ float64) bool { return iter == 2 }}}
	err = stopped.Fit(x)
	require.ErrorIs(t, err, status.ErrStopped)
	require.True(t, stopped.Fitted())
	require.Equal(t, status.Stopped, stopped.Info().Status.Code)
}

// SolveDual's Stop sees the dual cost in G's unit at any kernel scale (the
// solver works in a unit 4^shift of its own): the last cost it is shown is
// the result's, and it decreases.
func TestSolveDualStopSeesTheCost(t *testing.T) {
	const n, s = 40, 3
	for _, c := range []float64{1e6, 1, 1e-6} {
		lambda := make([]float64, n)
		for i := range lambda {
			lambda[i] = c / float64(i+1)
		}
		op, err := eig.NewDense(eigtest.WithSpectrum(3, lambda))
		require.NoError(t, err)
		var costs []float64
		res, err := SolveDual(op, s, DualOptions{Start: StartNormal, Seed: 4,
			Stop: func(_ int, cost float64) bool { costs = append(costs, cost); return false }})
		require.NoError(t, err, "c = %g", c)
		require.NotEmpty(t, costs)
		require.InDelta(t, res.Cost, costs[len(costs)-1], 1e-12*math.Abs(res.Cost), "c = %g", c)
		require.LessOrEqual(t, costs[len(costs)-1], costs[0], "c = %g", c)
		want, err := OptimalCost(lambda[:s])
		require.NoError(t, err)
		require.InDelta(t, want, res.Cost, 1e-6*math.Abs(want), "c = %g", c)
	}
}

// Info names the solver that ran: an iterative solver hands a kernel
// matrix too small for its basis to LAPACK, and the fit says so.
func TestSolverNamesWhatRan(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{10, "dense"}, {120, "lanczos"}} {
		m := &KPCA{Kernel: rbf, Components: 3, Solver: byName("lanczos")}
		require.NoError(t, m.Fit(gaussData(t, c.n, 5, 3)))
		info := m.Info()
		require.Equal(t, c.want, info.Solver, "n = %d", c.n)
		if c.want == "dense" {
			require.Contains(t, info.SolverReason, "lanczos")
			require.Contains(t, info.Status.Test, "LAPACK")
		}
	}
}

// Accuracy by default: the dual L-BFGS fit with its default stopping test
// gives eigenvalues within 1e-8 relative and scores within 1e-6 of the
// dense solver (same sign convention, compared entry by entry) on digits
// and Fashion-MNIST, s = 20, Gaussian kernel with the median bandwidth.
func TestLBFGSDefaultAccuracy(t *testing.T) {
	digits, err := dataset.Digits()
	require.NoError(t, err)
	sets := map[string]*mat.Dense{"digits": digits.X}
	f, err := dataset.LoadFashion("", "train", 2000)
	if err != nil {
		t.Skipf("Fashion-MNIST not installed (%v); make test installs it", err)
	}
	sets["fashion"] = f.X
	for name, x := range sets {
		sigma, err := kernel.MedianDistance(x, 1000)
		require.NoError(t, err)
		k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: sigma}
		dense := &KPCA{Kernel: k, Components: 20, Solver: byName("dense")}
		require.NoError(t, dense.Fit(x))
		lb := &KPCA{Kernel: k, Components: 20, Solver: byName("lbfgs")}
		require.NoError(t, lb.Fit(x), name)
		require.True(t, lb.Info().Status.Converged(), "%s: %v", name, lb.Info().Status)
		dv, _ := dense.Eigenvalues()
		lv, _ := lb.Eigenvalues()
		for i := range dv {
			require.InDelta(t, dv[i], lv[i], 1e-8*dv[i], "%s: λ_%d", name, i)
		}
		ds, _ := dense.Scores()
		ls, _ := lb.Scores()
		var diff mat.Dense
		diff.Sub(ds, ls)
		require.Less(t, mat.Norm(&diff, math.Inf(1)), 1e-6*mat.Norm(ds, math.Inf(1)), name)
		require.Less(t, maxAbsEntry(&diff), 1e-6, "%s: scores", name)
		// Held-out rows (the training rows shifted by noise), measured as
		// the issue states: max |z − z_dense| / max |z_dense|.
		r, c := x.Dims()
		held := mat.NewDense(50, c, nil)
		for i := 0; i < 50; i++ {
			for j := 0; j < c; j++ {
				held.Set(i, j, x.At((i*37)%r, j)+0.01*math.Sin(float64(i*c+j)))
			}
		}
		dz, err := dense.Transform(held)
		require.NoError(t, err)
		lz, err := lb.Transform(held)
		require.NoError(t, err)
		diff.Reset()
		diff.Sub(dz, lz)
		require.Less(t, maxAbsEntry(&diff), 1e-6*maxAbsEntry(dz), "%s: held-out scores", name)
	}
}

func maxAbsEntry(a *mat.Dense) float64 {
	r, c := a.Dims()
	m := 0.0
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m = math.Max(m, math.Abs(a.At(i, j)))
		}
	}
	return m
}

// The dual formulas on a matrix with a known spectrum: d(V_sΛ_s^{1/2})
// equals d_opt = −½ Σ λ_i, η of it is 0, and OptimalCost refuses negative
// eigenvalues.
func TestDualFormulas(t *testing.T) {
	g := centredGram(t, gaussData(t, 60, 3, 8), rbf)
	e, err := linalg.SymEig(g, 4)
	require.NoError(t, err)
	dopt, err := OptimalCost(e.Values)
	require.NoError(t, err)
	want := 0.0
	for _, l := range e.Values {
		want -= l / 2
	}
	require.Equal(t, want, dopt)
	h, err := DualFromEigen(e.Values, e.Vectors)
	require.NoError(t, err)
	op, err := eig.NewDense(g)
	require.NoError(t, err)
	cost, _, err := DualCost(op, h)
	require.NoError(t, err)
	require.InDelta(t, dopt, cost, 1e-12*math.Abs(dopt))
	require.Less(t, Eta(cost, dopt), 1e-12)
	require.InDelta(t, 0.5, Eta(-1.5, -1), 1e-15)
	require.InDelta(t, 0.25, Eta(-2.5, -2), 1e-15) // relative to |d_opt|, not 1
	_, err = OptimalCost([]float64{1, -0.5})
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = DualFromEigen([]float64{1}, h)
	require.ErrorIs(t, err, status.ErrInvalid)
}

// A fitted model keeps the configuration of its fit: changing the exported
// fields afterwards neither panics nor changes what Transform returns, and
// TransformGram leaves the caller's kernel rows alone.
func TestConfigurationCopiedAtFit(t *testing.T) {
	x := gaussData(t, 80, 4, 9)
	m := &KPCA{Kernel: rbf, Components: 3}
	require.NoError(t, m.Fit(x))
	before, err := m.Transform(x)
	require.NoError(t, err)
	m.Components, m.Kernel, m.NoCenter = 10, kernel.Kernel{Kind: kernel.Laplace, Sigma: 0.1}, true
	after, err := m.Transform(x)
	require.NoError(t, err)
	require.True(t, mat.Equal(before, after))
	kx, err := kernel.CrossGram(x, x, rbf)
	require.NoError(t, err)
	keep := mat.DenseCopyOf(kx)
	z, err := m.TransformGram(kx)
	require.NoError(t, err)
	require.True(t, mat.Equal(kx, keep), "TransformGram modified its input")
	require.True(t, mat.EqualApprox(z, before, 1e-12))
	var nilModel *KPCA
	_, err = nilModel.Transform(x)
	require.ErrorIs(t, err, ErrNotFitted)
}

// φ(α) = d(H + αP) and φ′(α) from the line interface of the dual problem
// against central finite differences, at several α.
func TestDualLineDerivativeFiniteDifferences(t *testing.T) {
	g := centredGram(t, gaussData(t, 40, 3, 12), rbf)
	op, err := eig.NewDense(g)
	require.NoError(t, err)
	prob := newDualProblem(op, 3)
	h := gaussData(t, 40, 3, 13)
	p := gaussData(t, 40, 3, 14)
	grad := make([]float64, 40*3)
	x := append([]float64(nil), h.RawMatrix().Data...)
	f0 := prob.Func(x, grad)
	require.False(t, math.IsNaN(f0))
	prob.Direction(x, p.RawMatrix().Data)
	phi0, _ := prob.Line(0)
	require.InDelta(t, f0, phi0, 1e-12*math.Abs(f0))
	const step = 1e-6
	for _, alpha := range []float64{0, 0.05, 0.3} {
		_, dphi := prob.Line(alpha)
		up, _ := prob.Line(alpha + step)
		down, _ := prob.Line(alpha - step)
		fd := (up - down) / (2 * step)
		require.InDelta(t, fd, dphi, 1e-6*math.Max(1, math.Abs(fd)), "α = %g", alpha)
	}
}

// byName is the tests' solver table (the command line has the real one).
func byName(name string) Solver {
	switch name {
	case "dense":
		return Eigen{Solver: eig.DenseSolver{}}
	case "lanczos":
		return Eigen{Solver: eig.Lanczos{}}
	case "block":
		return Eigen{Solver: eig.BlockKrylov{}}
	case "randomized":
		return Eigen{Solver: eig.Randomized{}}
	case "lbfgs":
		return LBFGS{}
	case "dca":
		return DCA{}
	}
	return Eigen{}
}

// badSolver is a Solver the model does not know.
type badSolver struct{}

func (badSolver) Name() string { return "bad" }
func (badSolver) kpcaSolver()  {}

// LBFGS.Tol is the stopping tolerance whatever its size: a looser one
// stops no later than a tighter one, and strictly earlier than the
// default's (10⁻⁸ on the gradient, 10⁻¹² on the objective).
func TestLBFGSTolIsUsed(t *testing.T) {
	x := gaussData(t, 200, 6, 4)
	iters := func(tol float64) int {
		k := &KPCA{Components: 5, Kernel: rbf, Solver: LBFGS{Tol: tol, Seed: 3}}
		require.NoError(t, k.Fit(x))
		return k.Info().Iterations
	}
	def := iters(0)
	loose, looser := iters(1e-3), iters(0.5)
	require.Less(t, loose, def)
	require.LessOrEqual(t, looser, loose)
	require.LessOrEqual(t, iters(1e-10), iters(1e-14))
}

// The DCA starts at the square-loss solution H = V_s Λ_s^{1/2}, which is a
// fixed point of H ← G·H·(HᵀGH)^{-1/2} with objective
// ½‖H‖² − Tr√(HᵀGH) = −½ Σ λ_j: with a loss that equals the square loss
// there (ε = 0, κ ≥ κ_max) the second iteration meets the stopping test
// and the reported objective is that closed form.
func TestDCAStartIsTheSquareLossFixedPoint(t *testing.T) {
	x := gaussData(t, 120, 5, 8)
	sq := &KPCA{Components: 3, Kernel: rbf, Solver: byName("dense")}
	require.NoError(t, sq.Fit(x))
	vals, _ := sq.Eigenvalues()
	hsq, _ := sq.Dual()
	want := -0.5 * (vals[0] + vals[1] + vals[2])
	for _, loss := range []Loss{{Kind: EpsInf}, {Kind: Eps2}, {Kind: Huber1, Param: 1.01 * KappaMax(hsq, Huber1)}, {Kind: HuberF, Param: 1.01 * KappaMax(hsq, HuberF)}} {
		k := &KPCA{Components: 3, Kernel: rbf, Solver: DCA{Loss: loss}}
		require.NoError(t, k.Fit(x))
		info := k.Info()
		require.Equal(t, 2, info.Iterations, "loss %+v", loss)
		require.InDelta(t, want, info.Cost, 1e-9*math.Abs(want), "loss %+v", loss)
	}
}

// Each loss's prox is the proximal map of its Ψ*: p = prox(y) minimises
// ½‖z − y‖² + Ψ*(z), so no z does better — checked against random points
// of Ψ*'s domain and against small perturbations of p, with Ψ* the closed
// forms ε‖H‖₁ (ℓ^∞_ε), ε Σᵢ‖hᵢ‖₂ (ℓ²_ε) and the indicator of the κ-ball
// of the Huber losses (entries, rows, Frobenius).
func TestProxIsTheProximalMap(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const n, s = 7, 3
	inBall := func(l Loss, z *mat.Dense) bool {
		switch l.Kind {
		case Huber1, Huber2, HuberF:
			return KappaMax(z, l.Kind) <= l.Param*(1+1e-12)
		}
		return true
	}
	conj := func(l Loss, z *mat.Dense) float64 {
		t := 0.0
		switch l.Kind {
		case EpsInf:
			for _, v := range z.RawMatrix().Data {
				t += math.Abs(v)
			}
		case Eps2:
			for i := 0; i < n; i++ {
				t += mat.Norm(z.RowView(i), 2)
			}
		}
		return l.Param * t
	}
	value := func(l Loss, z, y *mat.Dense) float64 {
		var d mat.Dense
		d.Sub(z, y)
		nd := mat.Norm(&d, 2)
		return 0.5*nd*nd + conj(l, z)
	}
	for _, l := range []Loss{{Kind: EpsInf, Param: 0.7}, {Kind: Eps2, Param: 1.1}, {Kind: Huber1, Param: 0.6}, {Kind: Huber2, Param: 0.9}, {Kind: HuberF, Param: 1.5}} {
		for trial := 0; trial < 20; trial++ {
			y := mat.NewDense(n, s, nil)
			for i := range y.RawMatrix().Data {
				y.RawMatrix().Data[i] = 1.5 * r.NormFloat64()
			}
			p := mat.DenseCopyOf(y)
			l.prox(p)
			require.True(t, inBall(l, p), "loss %+v: prox left the ball", l)
			require.InDelta(t, conj(l, p), l.conjugate(p), 1e-12*(1+conj(l, p)), "loss %+v: Ψ*", l)
			best := value(l, p, y)
			for k := 0; k < 200; k++ {
				z := mat.DenseCopyOf(p)
				step := 1e-3
				if k%2 == 0 {
					step = 1
				}
				for i := range z.RawMatrix().Data {
					z.RawMatrix().Data[i] += step * r.NormFloat64()
				}
				if l.Kind == Huber1 || l.Kind == Huber2 || l.Kind == HuberF {
					l.prox(z) // a point of the ball (the projection)
				}
				require.GreaterOrEqual(t, value(l, z, y), best-1e-12*(1+best), "loss %+v: a better point than the prox", l)
			}
		}
	}
}

// Components must be below n (the centred kernel has rank ≤ n − 1), on
// every entry point, and the refusal comes before any work: no kernel is
// built (n = 2000: a float64 kernel would be 32 MB).
func TestComponentsBelowNRefusedFirst(t *testing.T) {
	const n = 2000
	x := gaussData(t, n, 3, 12)
	x32, err := linalg.Dense32Of(x)
	require.NoError(t, err)
	defer x32.Free()
	g := mat.NewSymDense(6, nil)
	for i := 0; i < 6; i++ {
		g.SetSym(i, i, 1)
	}
	for _, s := range []int{0, n, n + 1} {
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		err := (&KPCA{Components: s, Kernel: rbf}).Fit(x)
		runtime.ReadMemStats(&ms1)
		require.ErrorIs(t, err, status.ErrInvalid, "s = %d", s)
		require.Contains(t, err.Error(), "Components")
		require.Less(t, ms1.TotalAlloc-ms0.TotalAlloc, uint64(1<<20), "s = %d: allocated before refusing", s)
		err = (&KPCA{Components: s, Kernel: rbf, Approx: approx.Nystrom{Rank: 10}}).FitFloat32(context.Background(), x32)
		require.ErrorIs(t, err, status.ErrInvalid, "FitFloat32, s = %d", s)
		require.Contains(t, err.Error(), "Components")
	}
	// FitGram too refuses the count first: before it reads the matrix (a
	// NaN in it is not what the error names).
	bad := mat.NewSymDense(6, nil)
	bad.SetSym(2, 4, math.NaN())
	for _, s := range []int{0, 6} {
		for _, m := range []*mat.SymDense{g, bad} {
			err := (&KPCA{Components: s}).FitGram(m)
			require.ErrorIs(t, err, status.ErrInvalid, "FitGram, s = %d", s)
			require.Contains(t, err.Error(), fmt.Sprintf("Components = %d, need 1 ≤ s < n = 6", s))
		}
	}
	require.NoError(t, (&KPCA{Components: 2, Kernel: rbf}).Fit(x.Slice(0, 3, 0, 3)))
}

// The dual starts: StartNormal is Ω, the seeded standard normal n×s
// block, in the problem's unit (2^k·Ω, 4^k nearest G's mean Rayleigh
// quotient on Ω); StartSketch is G·Ω scaled so that ‖H₀‖²_F = Tr(ΩᵀGΩ)/s (an
// estimate of Tr G, so an upper bound of the optimum's ‖H*‖²_F = Σ λ_i),
// at any kernel scale (‖GΩ‖ below 1 included).
func TestDualStarts(t *testing.T) {
	const n, s = 40, 3
	data, err := rng.StandardNormal(n, s, 9)
	require.NoError(t, err)
	omega := mat.NewDense(n, s, data)
	// λ_i = c/i at two scales: ‖GΩ‖ above 1 and far below it.
	for _, c := range []float64{100, 1e-6} {
		lambda := make([]float64, n)
		for i := range lambda {
			lambda[i] = c / float64(i+1)
		}
		a := eigtest.WithSpectrum(7, lambda)
		op, err := eig.NewDense(a)
		require.NoError(t, err)
		var h0 *mat.Dense
		capture := func(h *mat.Dense) { h0 = h }
		_, err = SolveDual(op, s, DualOptions{Start: StartNormal, Seed: 9, MaxIter: 1, StartOut: capture})
		if err != nil {
			require.ErrorIs(t, err, ErrNotConverged)
		}
		// StartNormal is Ω in the problem's unit: 2^k·Ω with k =
		// ⌊log₂(τ)/2 + ½⌋, τ = Tr(ΩᵀGΩ)/‖Ω‖²_F.
		var g0, q mat.Dense
		g0.Mul(a, omega)
		q.Mul(omega.T(), &g0)
		tau := mat.Trace(&q) / math.Pow(mat.Norm(omega, 2), 2)
		e := int(math.Floor(math.Log2(tau)/2 + 0.5))
		var want mat.Dense
		want.Scale(math.Ldexp(1, e), omega)
		require.True(t, mat.Equal(&want, h0), "StartNormal is 2^%d·Ω (τ = %g)", e, tau)
		_, err = SolveDual(op, s, DualOptions{Start: StartSketch, Seed: 9, MaxIter: 1, StartOut: capture})
		if err != nil {
			require.ErrorIs(t, err, ErrNotConverged)
		}
		var y, oy mat.Dense
		y.Mul(a, omega)
		oy.Mul(omega.T(), &y)
		tr := mat.Trace(&oy)
		nh := mat.Norm(h0, 2)
		require.InDelta(t, tr/s, nh*nh, 1e-10*tr, "scale %g", c)
		// H₀ is a positive multiple of G·Ω.
		k := h0.At(0, 0) / y.At(0, 0)
		require.Greater(t, k, 0.0)
		var d mat.Dense
		d.Scale(k, &y)
		d.Sub(&d, h0)
		require.Less(t, mat.Norm(&d, math.Inf(1)), 1e-12*mat.Norm(h0, math.Inf(1)), "scale %g", c)
	}
}

// KappaMax against its definitions, with the extreme in the first row and
// column (where an off-by-one would miss it).
func TestKappaMaxDefinitions(t *testing.T) {
	h := mat.NewDense(3, 2, []float64{-7, 1, 2, 3, 0.5, -4})
	require.Equal(t, 7.0, KappaMax(h, Huber1))
	require.InDelta(t, math.Sqrt(50), KappaMax(h, Huber2), 1e-15)
	require.InDelta(t, math.Sqrt(49+1+4+9+0.25+16), KappaMax(h, HuberF), 1e-14)
	require.Equal(t, 0.0, KappaMax(h, Square))
}

// The solvers' zero-valued options are their documented defaults: DCA Tol
// 1e-9 and MaxIter 10 000, LBFGS MaxIter 10 000 and Seed 1 (same bits as
// spelled out; another value differs).
func TestKPCASolverDefaultsAreDocumented(t *testing.T) {
	x := gaussData(t, 120, 5, 8)
	fit := func(sv Solver) *mat.Dense {
		k := &KPCA{Components: 3, Kernel: rbf, Solver: sv}
		require.NoError(t, k.Fit(x))
		h, _ := k.Dual()
		return h
	}
	loss := Loss{Kind: Huber1, Param: 0.5, Relative: true}
	for _, c := range []struct{ zero, spelled, other Solver }{
		{DCA{Loss: loss}, DCA{Loss: loss, Tol: 1e-9, MaxIter: 10000}, DCA{Loss: loss, Tol: 1e-6}},
		{LBFGS{}, LBFGS{MaxIter: 10000, Seed: 1}, LBFGS{Seed: 2}},
	} {
		z := fit(c.zero)
		require.True(t, mat.Equal(z, fit(c.spelled)), "%#v against %#v", c.zero, c.spelled)
		require.False(t, mat.Equal(z, fit(c.other)), "%#v against %#v", c.zero, c.other)
	}
}

// The dual L-BFGS on a row-distributed operator (3 in-process parts, the
// stand-in for MPI) is the one-process solve up to the order of its sums:
// every part the same iterations and cost, the cost the one-process cost,
// and the parts' rows of H together the one-process H up to the rotation
// the dual cost leaves free (H·Hᵀ compared).
func TestSolveDualDistributed(t *testing.T) {
	const n, s = 120, 3
	lambda := make([]float64, n)
	for i := range lambda {
		lambda[i] = math.Pow(0.8, float64(i))
	}
	a := eigtest.WithSpectrum(4, lambda)
	op, err := eig.NewDense(a)
	require.NoError(t, err)
	for _, start := range []Start{StartNormal, StartSketch} {
		o := DualOptions{Start: start, Seed: 5, Tol: 1e-12}
		want, err := SolveDual(op, s, o)
		require.NoError(t, err)
		bounds := []int{0, 37, 80, n}
		got := make([]*DualResult, 3)
		errs := make([]error, 3)
		eigtest.RunParts(a, bounds, func(id int, p *eigtest.Part) {
			got[id], errs[id] = SolveDual(p, s, o)
		})
		h := mat.NewDense(n, s, nil)
		for id := 0; id < 3; id++ {
			require.NoError(t, errs[id], "part %d", id)
			require.Equal(t, got[0].Iterations, got[id].Iterations, "part %d", id)
			require.Equal(t, got[0].Cost, got[id].Cost, "part %d", id)
			require.InDelta(t, want.Cost, got[id].Cost, 1e-10*math.Abs(want.Cost), "part %d", id)
			r, _ := got[id].H.Dims()
			require.Equal(t, bounds[id+1]-bounds[id], r)
			h.Slice(bounds[id], bounds[id+1], 0, s).(*mat.Dense).Copy(got[id].H)
		}
		var hh, ww, d mat.Dense
		hh.Mul(h, h.T())
		ww.Mul(want.H, want.H.T())
		d.Sub(&hh, &ww)
		require.Less(t, mat.Norm(&d, math.Inf(1)), 1e-6*mat.Norm(&ww, math.Inf(1)), "start %v", start)
	}
}

// The DCA stopping test is relative, |F_k − F_{k−1}| ≤ Tol·|F_k|: a loose
// Tol stops at the second iteration whatever the objective's scale (the
// kernel scaled by 10⁻⁶ and 10⁶), a tight one later.
func TestDCAStopIsRelative(t *testing.T) {
	x := gaussData(t, 120, 5, 8)
	loss := Loss{Kind: Huber1, Param: 0.6, Relative: true}
	iters := func(scale, tol float64) int {
		g, err := kernel.Gram(x, rbf)
		require.NoError(t, err)
		g.ScaleSym(scale, g)
		k := &KPCA{Components: 3, Solver: DCA{Loss: loss, Tol: tol}}
		require.NoError(t, k.FitGram(g))
		return k.Info().Iterations
	}
	for _, scale := range []float64{1e-6, 1, 1e6} {
		require.Equal(t, 2, iters(scale, 0.9), "scale %g", scale)
		require.Greater(t, iters(scale, 1e-12), 2, "scale %g", scale)
	}
}

// A fit's temporaries (the shifted rows, the kernel matrix, its centred
// copy, LAPACK's work copy) are reused by later fits: a fit repeated after
// fits of other data, of other sizes and kernels gives the same bits, and
// an earlier model is untouched by the fits after it (its Transform of its
// own data gives the same bits before and after them).
func TestRepeatedFitsShareNoState(t *testing.T) {
	shifted := func(n, d int, seed uint64, by float64) *mat.Dense {
		x := gaussData(t, n, d, seed)
		r := x.RawMatrix()
		for i := range r.Data {
			r.Data[i] += by
		}
		return x
	}
	type fitted struct {
		m *KPCA
		x *mat.Dense
		z *mat.Dense // Transform(x) right after the fit
	}
	fit := func(x *mat.Dense, k kernel.Kernel) fitted {
		m := &KPCA{Components: 5, Kernel: k}
		require.NoError(t, m.Fit(x))
		z, err := m.Transform(x)
		require.NoError(t, err)
		return fitted{m, x, z}
	}
	a := shifted(150, 40, 31, 3)
	all := []fitted{
		fit(a, rbf),
		fit(shifted(150, 40, 32, -7), rbf),
		fit(shifted(120, 40, 33, 1), kernel.Kernel{Kind: kernel.Laplace, Sigma: 5}),
		fit(shifted(200, 30, 34, 0.5), rbf),
	}
	again := fit(a, rbf)
	v0, _ := all[0].m.Eigenvalues()
	v1, _ := again.m.Eigenvalues()
	require.Equal(t, v0, v1)
	s0, _ := all[0].m.Scores()
	s1, _ := again.m.Scores()
	require.True(t, mat.Equal(s0, s1), "scores of the repeated fit differ")
	for i, f := range all {
		z, err := f.m.Transform(f.x)
		require.NoError(t, err)
		require.True(t, mat.Equal(z, f.z), "model %d's Transform changed after later fits", i)
	}
}

// Transform of the training points gives the fit's scores to rounding for
// the Laplace kernel too — its square root would otherwise turn the
// rounding of a point's distance to itself (about ε·‖x‖²) into errors of
// about 10⁻⁸ — including duplicated rows and data far from the origin.
func TestLaplaceTransformOfTrainingPoints(t *testing.T) {
	x := gaussData(t, 200, 6, 41)
	x.SetRow(7, x.RawRowView(3)) // a duplicate
	for i := 0; i < 200; i++ {
		for j, v := range x.RawRowView(i) {
			x.Set(i, j, v+10*float64(j+1))
		}
	}
	for _, k := range []kernel.Kernel{{Kind: kernel.Laplace, Sigma: 3}, {Kind: kernel.Gaussian, Sigma: 3}} {
		m := &KPCA{Components: 5, Kernel: k}
		require.NoError(t, m.Fit(x))
		sc, err := m.Scores()
		require.NoError(t, err)
		z, err := m.Transform(x)
		require.NoError(t, err)
		requireNear(t, sc, z, 1e-11, "%v", k.Kind)
	}
}

// requireNear asserts ‖got − want‖∞ < rel·‖want‖∞ (row sums).
func requireNear(t *testing.T, want, got mat.Matrix, rel float64, msgAndArgs ...any) {
	t.Helper()
	var d mat.Dense
	d.Sub(got, want)
	require.Less(t, mat.Norm(&d, math.Inf(1)), rel*mat.Norm(want, math.Inf(1)), msgAndArgs...)
}
