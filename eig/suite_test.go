package eig

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/internal/testmat"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// The solvers for this package's own tests (the shared suite is in
// eigtest, run by shared_suite_test.go).

type namedSolver struct {
	name string
	// make returns the solver for tolerance tol.
	make func(tol float64) Solver
	// exact solvers meet a much tighter residual than tol asks.
	dense bool
}

var solvers = []namedSolver{
	{"dense", func(float64) Solver { return DenseSolver{} }, true},
	{"lanczos", func(tol float64) Solver { return Lanczos{Tol: tol} }, false},
	{"lanczos-small-ncv", func(tol float64) Solver { return Lanczos{Tol: tol, NCV: 12} }, false},
	{"block", func(tol float64) Solver { return BlockKrylov{Tol: tol} }, false},
	{"block-b3", func(tol float64) Solver { return BlockKrylov{Tol: tol, Block: 3} }, false},
	{"block-check-each", func(tol float64) Solver { return BlockKrylov{Tol: tol, Block: 4, CheckEachBlock: true} }, false},
	{"randomized", func(tol float64) Solver { return Randomized{Tol: tol} }, false},
	{"randomized-qr", func(tol float64) Solver { return Randomized{Tol: tol, Normalizer: NormQR, PowerIters: 2} }, false},
	{"auto", func(tol float64) Solver { return Auto{Tol: tol} }, false},
}

func spectrum(n int, f func(i int) float64) []float64 {
	l := make([]float64, n)
	for i := range l {
		l[i] = f(i)
	}
	return l
}

// symWithSpectrum returns Q·diag(λ)·Qᵀ (both triangles stored).
func symWithSpectrum(seed uint64, lambda []float64) *mat.SymDense {
	return testmat.WithSpectrum(rand.New(rand.NewPCG(seed, 5)), lambda)
}

func TestFloat32OperatorThroughSuite(t *testing.T) {
	lambda := spectrum(300, func(i int) float64 { return math.Pow(0.8, float64(i)) })
	a := symWithSpectrum(9, lambda)
	f32, err := NewFloat32(a)
	require.NoError(t, err)
	for _, sv := range solvers {
		// The operator is A rounded to float32: ‖A − A32‖ ≤ n·2⁻²⁴·max|a_ij|,
		// so the values agree with A's to that accuracy and the residuals
		// against A32 to the solver's tolerance.
		res, err := sv.make(1e-9).Solve(f32, 5)
		require.NoError(t, err, sv.name)
		for j := 0; j < 5; j++ {
			require.InDelta(t, lambda[j], res.Values[j], 300*6e-8, "%s value %d", sv.name, j)
		}
	}
}

// The float32 operator's matrix for the dense solver is the stored one,
// widened exactly: every entry equals float32(a_ij) (n = 300, two tiles
// per side, the last one partial), both triangles; the dense solve uses
// it without a pass, and a centred float32 operator gets M·A₃₂·M.
func TestFloat32SymMatrix(t *testing.T) {
	lambda := spectrum(300, func(i int) float64 { return math.Pow(0.8, float64(i)) })
	a := symWithSpectrum(9, lambda)
	f32, err := NewFloat32(a)
	require.NoError(t, err)
	w := f32.SymMatrix()
	require.Equal(t, 300, w.SymmetricDim())
	for i := 0; i < 300; i++ {
		for j := 0; j < 300; j++ {
			require.Equal(t, float64(float32(a.At(i, j))), w.At(i, j), "(%d, %d)", i, j)
		}
	}
	counted := &Counting{Op: f32}
	res, err := DenseSolver{}.Solve(counted, 5)
	require.NoError(t, err)
	require.Zero(t, counted.Passes, "no pass: the matrix is given")
	want, err := linalg.SymEig(w, 5)
	require.NoError(t, err)
	require.Equal(t, want.Values, res.Values)
	c, err := NewCentered(f32)
	require.NoError(t, err)
	require.NotNil(t, c.SymMatrix())
}

// A matrix-free operator whose output turns non-finite, and a breakdown.
type nanOp struct{ n int }

func (o nanOp) Dim() int { return o.n }
func (o nanOp) Apply(dst, x *mat.Dense) error {
	dst.Copy(x)
	dst.Set(0, 0, math.NaN())
	return nil
}

func TestBadInput(t *testing.T) {
	a := symWithSpectrum(1, spectrum(50, func(i int) float64 { return float64(i) }))
	d, err := NewDense(a)
	require.NoError(t, err)
	for _, sv := range solvers {
		for _, k := range []int{0, -1, 51} {
			_, err := sv.make(1e-8).Solve(d, k)
			require.ErrorIs(t, err, status.ErrInvalid, "%s k=%d", sv.name, k)
		}
		_, err := sv.make(1e-8).Solve(nil, 1)
		require.ErrorIs(t, err, status.ErrInvalid)
		_, err = sv.make(1e-8).Solve(nanOp{700}, 2)
		require.ErrorIs(t, err, status.ErrInvalid, sv.name)
	}
	bad := mat.NewSymDense(3, nil)
	bad.SetSym(0, 1, math.Inf(1))
	_, err = NewDense(bad)
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = NewFloat32(bad)
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = NewFloat32Tiles(nil)
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = NewCentered(nil)
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = NewKernelOp(mat.NewDense(3, 2, []float64{1, 2, 3, math.NaN(), 5, 6}), kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}, gram.GramOptions{})
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = Lanczos{Tol: -1}.Solve(d, 2)
	require.ErrorIs(t, err, status.ErrInvalid)
}

func TestNotConvergedCarriesPartialResult(t *testing.T) {
	a := symWithSpectrum(2, spectrum(400, func(i int) float64 { return 1 / float64(i+1) }))
	d, err := NewDense(a)
	require.NoError(t, err)
	for _, s := range []Solver{Lanczos{Tol: 1e-14, MaxRestarts: 1}, BlockKrylov{Tol: 1e-14, MaxRestarts: 1}, Randomized{Tol: 1e-14, MaxIter: 1, PowerIters: -1}} {
		res, err := s.Solve(d, 10)
		require.ErrorIs(t, err, ErrNotConverged, fmt.Sprintf("%T", s))
		partial, ok := Partial(err)
		require.True(t, ok)
		require.Same(t, res, partial)
		st, ok := status.StatusOf(err)
		require.True(t, ok)
		require.Equal(t, status.IterationLimit, st.Code)
		require.Contains(t, st.Detail, "of 10 eigenpairs converged")
		require.False(t, res.Status.Converged())
		require.Less(t, res.NumConverged, 10)
		require.Len(t, res.Values, 10)
	}
}

// A rank-2 matrix: the Krylov space becomes invariant after two steps and
// the solver must restart with fresh directions instead of dividing by 0.
func TestInvariantSubspace(t *testing.T) {
	lambda := make([]float64, 200)
	lambda[0], lambda[1] = 3, 1
	a := symWithSpectrum(4, lambda)
	d, err := NewDense(a)
	require.NoError(t, err)
	for _, s := range []Solver{Lanczos{}, BlockKrylov{}, BlockKrylov{Block: 2}} {
		res, err := s.Solve(d, 4)
		require.NoError(t, err, fmt.Sprintf("%T", s))
		require.InDelta(t, 3, res.Values[0], 1e-10)
		require.InDelta(t, 1, res.Values[1], 1e-10)
		require.InDelta(t, 0, res.Values[2], 1e-10)
		var vtv mat.Dense
		vtv.Mul(res.Vectors.T(), res.Vectors)
		for i := 0; i < 4; i++ {
			vtv.Set(i, i, vtv.At(i, i)-1)
		}
		require.LessOrEqual(t, mat.Norm(&vtv, math.Inf(1)), 1e-10)
	}
}

func TestAutoRule(t *testing.T) {
	require.IsType(t, DenseSolver{}, Auto{}.Choose(600, 5))
	require.IsType(t, BlockKrylov{}, Auto{}.Choose(601, 5))
	require.IsType(t, DenseSolver{}, Auto{}.Choose(700, 141))
	require.IsType(t, DenseSolver{}, Auto{}.Choose(5000, 1001))
	require.IsType(t, BlockKrylov{}, Auto{}.Choose(5000, 20))
}

// A counting wrapper hands its operator's matrix to the dense solver (no
// pass, no n³ materialisation); an operator without one is materialised in
// one pass of n matvecs.
func TestDenseThroughCounting(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	lam := []float64{5, 4, 3, 2, 1, 0.5}
	a := testmat.WithSpectrum(rng, lam)
	d, err := NewDense(mat.NewSymDense(6, append([]float64(nil), a.RawSymmetric().Data...)))
	require.NoError(t, err)
	res, err := DenseSolver{}.Solve(&Counting{Op: d}, 2)
	require.NoError(t, err)
	require.Zero(t, res.Passes)
	require.InDelta(t, 5, res.Values[0], 1e-12)
	f, err := NewFloat32(a)
	require.NoError(t, err)
	// The float32 operator gives its matrix (widened) too: no pass.
	res, err = DenseSolver{}.Solve(&Counting{Op: f}, 2)
	require.NoError(t, err)
	require.Zero(t, res.Passes)
	require.InDelta(t, 5, res.Values[0], 1e-5)
	// An operator without a matrix is applied to the identity once.
	c := &Counting{Op: struct{ Operator }{f}}
	res, err = DenseSolver{}.Solve(c, 2)
	require.NoError(t, err)
	require.Equal(t, 1, res.Passes)
	require.Equal(t, 6, res.MatVecs)
	require.InDelta(t, 5, res.Values[0], 1e-5)
}

// A randomized run without a tolerance has no stopping test: it must say
// FixedSchedule, never Converged, and report the true residuals. On a
// near-identity spectrum (the Laplace-kernel case) they are far from zero.
func TestRandomizedFixedScheduleReportsTrueResiduals(t *testing.T) {
	n, k := 300, 10
	a := symWithSpectrum(9, spectrum(n, func(i int) float64 { return 1 + 0.01/float64(i+1) }))
	d, err := NewDense(a)
	require.NoError(t, err)
	res, err := Randomized{}.Solve(d, k)
	require.NoError(t, err)
	require.Equal(t, status.FixedSchedule, res.Status.Code)
	require.False(t, res.Status.Converged())
	require.NoError(t, res.Status.Err())
	// The documented cost: 2q + 2 passes, q = 7 (k < 0.1·n), of l = k + 10
	// columns; nothing more without a tolerance.
	require.Equal(t, 2*7+2, res.Passes)
	require.Equal(t, (2*7+2)*(k+10), res.MatVecs)
	var av mat.Dense
	av.Mul(a, res.Vectors)
	worst := 0.0
	for j := 0; j < k; j++ {
		s := 0.0
		for i := 0; i < n; i++ {
			r := av.At(i, j) - res.Values[j]*res.Vectors.At(i, j)
			s += r * r
		}
		require.InDelta(t, math.Sqrt(s), res.Residuals[j], 1e-12, "pair %d", j)
		worst = math.Max(worst, math.Sqrt(s))
	}
	require.Greater(t, worst, 1e-6, "a near-identity spectrum is not resolved by 7 power steps")
	require.Less(t, res.NumConverged, k)
}

// Direct names what ran: LAPACK for the dense solver and for an iterative
// solver handed a problem its basis would span, never for an iterative
// solve of a problem large enough for it.
func TestDirectNamesWhatRan(t *testing.T) {
	lam := spectrum(200, func(i int) float64 { return math.Pow(0.9, float64(i)) })
	for _, size := range []int{8, 200} {
		a := symWithSpectrum(11, lam[:size])
		d, err := NewDense(a)
		require.NoError(t, err)
		for _, s := range solvers {
			res, err := s.make(1e-10).Solve(d, 3)
			require.NoError(t, err, s.name)
			wantDirect := s.dense || (size == 8 && s.name != "randomized" && s.name != "randomized-qr")
			if s.name == "auto" {
				wantDirect = size <= 600 // Auto's rule: dense up to 600 rows
			}
			require.Equal(t, wantDirect, res.Direct(), "%s at n = %d: %s", s.name, size, res.Status.Test)
		}
	}
	require.False(t, (*Result)(nil).Direct())
}
