package stiefel

import (
	"context"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/internal/testmat"
	"github.com/kdual/kdual/status"
)

// traceObjective is f(A) = −½Tr(AᵀBA), G = −BA: its minimisers span the
// top-s eigenvectors of B (the RKM and KPCA problem).
type traceObjective struct{ b mat.Matrix }

func (o traceObjective) Eval(a, grad *mat.Dense) float64 {
	grad.Mul(o.b, a)
	f := 0.0
	for i, v := range grad.RawMatrix().Data {
		f += v * a.RawMatrix().Data[i]
	}
	grad.Scale(-1, grad)
	return -0.5 * f
}

func spectrum(m int) []float64 {
	lam := make([]float64, m)
	for i := range lam {
		// A gap after the 5th: 10, 9, …, 6, then 3, 2.9, …
		if i < 5 {
			lam[i] = float64(10 - i)
		} else {
			lam[i] = 3 * math.Pow(0.97, float64(i-5))
		}
	}
	return lam
}

func traceOf(b mat.Matrix, a *mat.Dense) float64 {
	var ba mat.Dense
	ba.Mul(b, a)
	t := 0.0
	for i, v := range ba.RawMatrix().Data {
		t += v * a.RawMatrix().Data[i]
	}
	return t
}

// Over 10 000 steps the iterate stays on the manifold (‖AᵀA − I‖ ≤ 1e-10 at
// every step) and reaches Tr(AᵀBA) ≥ (1 − 1e-6)·Σ_{i≤s} λ_i.
func TestCayleyAdamTrace(t *testing.T) {
	const m, s = 60, 5
	lam := spectrum(m)
	b := testmat.WithSpectrum(dataset.NewRand(1), lam)
	want := 0.0
	for _, v := range lam[:s] {
		want += v
	}
	worst := 0.0
	res, err := Minimize(traceObjective{b}, m, s, nil, Settings{
		MaxIter: 10000, Tol: -1,
		Callback: func(_ int, _ float64, a *mat.Dense) bool {
			worst = math.Max(worst, Defect(a))
			return false
		},
	})
	require.NoError(t, err)
	require.Equal(t, 10000, res.Iterations)
	require.LessOrEqual(t, worst, 1e-10)
	require.GreaterOrEqual(t, traceOf(b, res.A), (1-1e-6)*want)
	require.LessOrEqual(t, traceOf(b, res.A), want*(1+1e-12))
}

// With the default tolerance the iteration stops on a small Riemannian
// gradient, for Adam and for SGD with momentum.
func TestConvergesBothMethods(t *testing.T) {
	const m, s = 40, 4
	lam := spectrum(m)
	b := testmat.WithSpectrum(dataset.NewRand(2), lam)
	want := lam[0] + lam[1] + lam[2] + lam[3]
	for _, method := range []Method{Adam, SGD} {
		res, err := Minimize(traceObjective{b}, m, s, nil, Settings{Method: method, Tol: 1e-7, Seed: 3})
		require.NoError(t, err, "method %d", method)
		require.True(t, res.Status.Converged(), "status %v", res.Status)
		require.InDelta(t, want, traceOf(b, res.A), 1e-9*want)
		require.LessOrEqual(t, Defect(res.A), 1e-10)
	}
}

// A start off the manifold, even slightly (orthonormal columns moved by
// 10⁻³), is orthonormalised first: the iterates stay on it and reach the
// optimum.
func TestStartOffTheManifold(t *testing.T) {
	const m, s = 30, 3
	lam := spectrum(m)
	b := testmat.WithSpectrum(dataset.NewRand(4), lam)
	r := dataset.NewRand(5)
	a0 := mat.NewDense(m, s, nil)
	for i := 0; i < s; i++ {
		a0.Set(i, i, 1)
	}
	for i := 0; i < m; i++ {
		for j := 0; j < s; j++ {
			a0.Set(i, j, a0.At(i, j)+1e-3*r.NormFloat64())
		}
	}
	require.Greater(t, Defect(a0), 1e-4)
	res, err := Minimize(traceObjective{b}, m, s, a0, Settings{Method: Adam, Tol: 1e-7, Seed: 3})
	require.NoError(t, err)
	require.LessOrEqual(t, Defect(res.A), 1e-10)
	want := lam[0] + lam[1] + lam[2]
	require.InDelta(t, want, traceOf(b, res.A), 1e-8*want)
}

// diagObjective is −½Tr(AᵀDA) for a diagonal D, matrix-free.
type diagObjective struct{ d []float64 }

func (o diagObjective) Eval(a, grad *mat.Dense) float64 {
	m, s := a.Dims()
	f := 0.0
	for i := 0; i < m; i++ {
		for j := 0; j < s; j++ {
			v := o.d[i] * a.At(i, j)
			grad.Set(i, j, -v)
			f += v * a.At(i, j)
		}
	}
	return -0.5 * f
}

// A step costs no m×m matrix: 50 steps at m = 20 000, s = 10 allocate far
// less than one m×m float64 matrix (3.2 GB).
func TestStepMemory(t *testing.T) {
	const m, s = 20000, 10
	d := make([]float64, m)
	for i := range d {
		d[i] = 1 / float64(i+1)
	}
	a0, err := RandomStart(m, s, 4)
	require.NoError(t, err)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := Minimize(diagObjective{d}, m, s, a0, Settings{MaxIter: 50, Tol: -1})
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.Equal(t, 50, res.Iterations)
	alloc := after.TotalAlloc - before.TotalAlloc
	// The workspace is a few m×2s buffers; re-orthonormalisations add one
	// m×s product each: bounded by 150 MB, against 3.2 GB for one m×m.
	require.Less(t, alloc, uint64(150<<20), "allocated %d bytes", alloc)
	require.LessOrEqual(t, Defect(res.A), 1e-10)
}

// The Cayley step is a retraction: with W skew-symmetric the fixed point
// (I + αW/2)^{-1}(I − αW/2)A has orthonormal columns; the iteration gets
// there at the contraction rate.
func TestCayleyFixedPoint(t *testing.T) {
	const m, s = 30, 3
	a, err := RandomStart(m, s, 5)
	require.NoError(t, err)
	w := newWorkspace(m, s)
	g, _ := RandomStart(m, s, 6)
	w.mom.Copy(g)
	w.setW(a, 1)
	alpha := 1 / w.normW()
	w.cayley(a, alpha, 60)
	require.Less(t, Defect(w.y), 1e-13)
	// Dense check of W's skew-symmetry and its Frobenius norm.
	wd := mat.NewDense(m, m, nil)
	wd.Mul(w.u, w.vv.T())
	var wt mat.Dense
	wt.Add(wd, wd.T())
	require.Less(t, mat.Norm(&wt, 2), 1e-12)
	require.InDelta(t, mat.Norm(wd, 2), w.normW(), 1e-12*mat.Norm(wd, 2))
}

type nanObjective struct{}

func (nanObjective) Eval(_, grad *mat.Dense) float64 {
	grad.Zero()
	return math.NaN()
}

func TestErrors(t *testing.T) {
	_, err := Minimize(nanObjective{}, 5, 2, nil, Settings{})
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = Minimize(traceObjective{mat.NewDiagDense(5, nil)}, 5, 2, mat.NewDense(4, 2, nil), Settings{})
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = RandomStart(3, 4, 1)
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = Minimize(nil, 5, 2, nil, Settings{})
	require.ErrorIs(t, err, status.ErrInvalid)
	// A rank-deficient start cannot be orthonormalised.
	_, err = Minimize(traceObjective{mat.NewDiagDense(5, nil)}, 5, 2, mat.NewDense(5, 2, nil), Settings{})
	require.ErrorIs(t, err, status.ErrInvalid)
	// Too few steps: the partial result comes with ErrNotConverged.
	b := testmat.WithSpectrum(dataset.NewRand(7), spectrum(20))
	res, err := Minimize(traceObjective{b}, 20, 3, nil, Settings{MaxIter: 3})
	require.ErrorIs(t, err, ErrNotConverged)
	require.NotNil(t, res)
	require.Equal(t, status.IterationLimit, res.Status.Code)
	// Stopped by the caller: ErrStopped, not ErrNotConverged.
	res, err = Minimize(traceObjective{b}, 20, 3, nil, Settings{Callback: func(k int, _ float64, _ *mat.Dense) bool { return k == 4 }})
	require.ErrorIs(t, err, status.ErrStopped)
	require.NotErrorIs(t, err, ErrNotConverged)
	require.Equal(t, status.Stopped, res.Status.Code)
	require.Equal(t, 4, res.Iterations)
	// No tolerance: a fixed schedule, not a convergence claim.
	res, err = Minimize(traceObjective{b}, 20, 3, nil, Settings{MaxIter: 5, Tol: -1})
	require.NoError(t, err)
	require.Equal(t, status.FixedSchedule, res.Status.Code)
}

// The step bound: α‖W‖ ≤ 1 whatever the learning rate, and α = LR when
// LR is the smaller.
func TestStepBound(t *testing.T) {
	for _, nw := range []float64{0.3, 1, 7, 1e4} {
		a := stepSize(100, nw, 1e-8)
		require.LessOrEqual(t, a*nw, 1.0, "‖W‖ = %g", nw)
		require.InDelta(t, 1/(nw+1e-8), a, 1e-12/(nw+1e-8), "‖W‖ = %g", nw)
	}
	require.Equal(t, 100.0, stepSize(100, 1e-6, 1e-8))
	require.Equal(t, 1e-3, stepSize(1e-3, 5, 1e-8))
}

// scaledObjective multiplies an objective by c.
type scaledObjective struct {
	o Objective
	c float64
}

func (s scaledObjective) Eval(a, grad *mat.Dense) float64 {
	f := s.o.Eval(a, grad)
	grad.Scale(s.c, grad)
	return s.c * f
}

// Adam's first step is scale-free: with the bias corrections, the first
// moment over √v̂ is g/‖g‖ (1 − β₁ cancels), so W = G·Aᵀ − A·Gᵀ built from
// it has ‖W‖_F ≤ 2 and the step moves A by at most 2·LR, however large the
// gradient (objective scaled by 1 and 1e6).
func TestAdamFirstStepIsScaleFree(t *testing.T) {
	const m, s = 40, 4
	b := testmat.WithSpectrum(dataset.NewRand(2), spectrum(m))
	a0, err := RandomStart(m, s, 3)
	require.NoError(t, err)
	for _, c := range []float64{1, 1e6} {
		for _, lr := range []float64{1e-3, 1e-2} {
			res, err := Minimize(scaledObjective{traceObjective{b}, c}, m, s, a0, Settings{Tol: -1, MaxIter: 1, LR: lr})
			require.NoError(t, err)
			var d mat.Dense
			d.Sub(res.A, a0)
			require.LessOrEqual(t, mat.Norm(&d, 2), 2*lr, "scale %g, LR %g", c, lr)
			require.Greater(t, mat.Norm(&d, 2), 0.1*lr, "the step is not vanishing")
		}
	}
}

// The iterates do not depend on the objective's scale: scaled by a power
// of two from 2⁻²⁰⁰ to 2²⁰⁰, Adam and SGD take the same steps to the same
// point (bit for bit) in the same number of steps; Adam's absolute Eps
// once stalled it on gradients of 10⁻²⁴.
func TestIteratesScaleFree(t *testing.T) {
	const m, s = 40, 4
	b := testmat.WithSpectrum(dataset.NewRand(2), spectrum(m))
	for _, method := range []Method{Adam, SGD} {
		ref, err := Minimize(traceObjective{b}, m, s, nil, Settings{Method: method, Tol: 1e-7, Seed: 3})
		require.NoError(t, err)
		for _, p := range []int{-200, -40, 40, 200} {
			res, err := Minimize(scaledObjective{traceObjective{b}, math.Ldexp(1, p)}, m, s, nil, Settings{Method: method, Tol: 1e-7, Seed: 3})
			require.NoError(t, err, "method %d, 2^%d", method, p)
			require.Equal(t, ref.Iterations, res.Iterations, "method %d, 2^%d", method, p)
			require.True(t, mat.Equal(ref.A, res.A), "method %d, 2^%d", method, p)
		}
	}
}

// A context cancelled during the run stops it after the step in progress,
// with the feasible current point, Status Stopped and an error wrapping
// ErrStopped and context.Canceled.
func TestContextStops(t *testing.T) {
	const m, s = 40, 3
	b := testmat.WithSpectrum(dataset.NewRand(2), spectrum(m))
	ctx, cancel := context.WithCancel(context.Background())
	last := 0
	res, err := Minimize(traceObjective{b}, m, s, nil, Settings{
		MaxIter: 1000, Tol: -1, Context: ctx,
		Callback: func(k int, _ float64, _ *mat.Dense) bool {
			last = k
			if k == 7 {
				cancel()
			}
			return false
		},
	})
	require.ErrorIs(t, err, status.ErrStopped)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 7, res.Iterations)
	require.Equal(t, 7, last)
	require.Equal(t, status.Stopped, res.Status.Code)
	require.LessOrEqual(t, Defect(res.A), 1e-10)
}

// The documented defaults, and the smallest valid settings accepted.
func TestDefaultsAndBounds(t *testing.T) {
	d := (&Settings{}).defaults()
	require.Equal(t, Settings{LR: 10, Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, CayleyIters: 2, ReorthTol: 1e-12, MaxIter: 10000, Tol: 1e-8, Seed: 1}, d)
	sgd := (&Settings{Method: SGD}).defaults()
	require.Equal(t, 0.01, sgd.LR)
	kept := Settings{LR: 3, Beta1: 0.5, Beta2: 0.7, Eps: 1e-6, CayleyIters: 1, ReorthTol: 1e-9, MaxIter: 7, Tol: -1, Seed: 4}
	require.Equal(t, kept, kept.defaults())
	// One Cayley iteration is valid; zero (after defaults: none given) and
	// negative counts, β outside [0, 1) and LR ≤ 0 are not.
	b := testmat.WithSpectrum(dataset.NewRand(3), spectrum(12))
	res, err := Minimize(traceObjective{b}, 12, 2, nil, Settings{CayleyIters: 1, MaxIter: 5, Tol: -1})
	require.NoError(t, err)
	require.Less(t, Defect(res.A), 1e-10)
	for _, bad := range []Settings{{CayleyIters: -1}, {Beta1: 1}, {Beta2: 1}, {Beta1: -0.1}, {LR: -1}} {
		_, err := Minimize(traceObjective{b}, 12, 2, nil, bad)
		require.ErrorIs(t, err, status.ErrInvalid, "%+v", bad)
	}
	_, err = RandomStart(0, 1, 1)
	require.ErrorIs(t, err, status.ErrInvalid)
	a, err := RandomStart(1, 1, 1)
	require.NoError(t, err)
	require.InDelta(t, 1, math.Abs(a.At(0, 0)), 1e-15)
}

// Orthonormalize gives the polar factor, and refuses columns dependent to
// 10⁻¹⁴ relative (AᵀA's eigenvalues), at any scale of A.
func TestOrthonormalizeScaleFree(t *testing.T) {
	for _, scale := range []float64{1e-6, 1, 1e6} {
		a := mat.NewDense(4, 2, []float64{1, 2, 0, 1, 1, 0, 2, 1})
		a.Scale(scale, a)
		require.NoError(t, Orthonormalize(a))
		require.Less(t, Defect(a), 1e-14)
		dep := mat.NewDense(4, 2, []float64{1, 1, 2, 2, 3, 3, 4, 4 + 1e-9})
		dep.Scale(scale, dep)
		require.ErrorIs(t, Orthonormalize(dep), status.ErrInvalid, "scale %g", scale)
	}
}
