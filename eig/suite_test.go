package eig

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/testmat"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// The shared suite: every solver must pass it.

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
	{"randomized", func(tol float64) Solver { return Randomized{Tol: tol} }, false},
	{"randomized-qr", func(tol float64) Solver { return Randomized{Tol: tol, Normalizer: NormQR, PowerIters: 2} }, false},
	{"auto", func(tol float64) Solver { return Auto{Tol: tol} }, false},
}

type problem struct {
	name   string
	lambda []float64
	k      int
	// dominatedByNegative: more than l − k eigenvalues exceed λ_k in
	// magnitude (outside the randomized solver's scope).
	dominatedByNegative bool
}

func spectrum(n int, f func(i int) float64) []float64 {
	l := make([]float64, n)
	for i := range l {
		l[i] = f(i)
	}
	return l
}

var problems = []problem{
	{"fast decay", spectrum(300, func(i int) float64 { return math.Pow(0.7, float64(i)) }), 10, false},
	{"slow decay", spectrum(300, func(i int) float64 { return 1 / float64(i+1) }), 8, false},
	{"clustered", spectrum(250, func(i int) float64 {
		switch {
		case i < 4:
			return 10 + 1e-9*float64(i) // a tight cluster at the top
		case i < 8:
			return 5
		}
		return 1 / float64(i)
	}), 6, false},
	{"flat with one gap", spectrum(300, func(i int) float64 {
		if i < 5 {
			return 2
		}
		return 1
	}), 5, false},
	{"negative", spectrum(200, func(i int) float64 { return 3 - 0.1*float64(i) }), 4, true},
	{"indefinite, large negative", spectrum(200, func(i int) float64 {
		if i == 0 {
			return -50 // largest in magnitude, smallest algebraically
		}
		return 1 / float64(i)
	}), 3, false},
	{"k=1", spectrum(150, func(i int) float64 { return 1 / math.Sqrt(float64(i+1)) }), 1, false},
	{"k=n-1", spectrum(40, func(i int) float64 { return float64(40 - i) }), 39, false},
	{"tiny n=1", []float64{2.5}, 1, false},
	{"tiny n=3", []float64{1, -2, 0.5}, 2, false},
}

// symWithSpectrum returns Q·diag(λ)·Qᵀ (both triangles stored).
func symWithSpectrum(seed uint64, lambda []float64) *mat.SymDense {
	return testmat.WithSpectrum(rand.New(rand.NewPCG(seed, 5)), lambda)
}

func maxAbs(l []float64) float64 {
	m := 0.0
	for _, v := range l {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

func TestSuite(t *testing.T) {
	const tol = 1e-9
	for _, pr := range problems {
		a := symWithSpectrum(uint64(len(pr.lambda)), pr.lambda)
		want := append([]float64(nil), pr.lambda...)
		sort.Sort(sort.Reverse(sort.Float64Slice(want)))
		anorm := maxAbs(pr.lambda)
		n := len(pr.lambda)
		for _, sv := range solvers {
			t.Run(pr.name+"/"+sv.name, func(t *testing.T) {
				dense, err := NewDense(a)
				require.NoError(t, err)
				counter := &Counting{Op: dense}
				res, err := sv.make(tol).Solve(counter, pr.k)
				if pr.dominatedByNegative && strings.HasPrefix(sv.name, "randomized") {
					// Outside the power method's scope (see Randomized):
					// it must say so, not return wrong pairs.
					require.ErrorIs(t, err, ErrNotConverged)
					require.Equal(t, counter.Passes, res.Passes)
					return
				}
				require.NoError(t, err)
				require.True(t, res.Status.Converged(), "status %v", res.Status)
				require.Equal(t, pr.k, res.NumConverged)
				require.Equal(t, counter.Passes, res.Passes, "passes")
				require.Equal(t, counter.MatVecs, res.MatVecs, "matvecs")
				require.Len(t, res.Values, pr.k)
				r, c := res.Vectors.Dims()
				require.Equal(t, [2]int{n, pr.k}, [2]int{r, c})

				// True residuals ‖Av − λv‖ ≤ tol·‖A‖ (the solvers' tests are
				// relative to |λ| ≤ ‖A‖, plus a rounding allowance).
				var av mat.Dense
				av.Mul(a, res.Vectors)
				for j := 0; j < pr.k; j++ {
					s := 0.0
					for i := 0; i < n; i++ {
						d := av.At(i, j) - res.Values[j]*res.Vectors.At(i, j)
						s += d * d
					}
					require.LessOrEqual(t, math.Sqrt(s), tol*anorm+1e-13*anorm*float64(n), "residual of pair %d", j)
				}
				// Orthonormal vectors.
				var vtv mat.Dense
				vtv.Mul(res.Vectors.T(), res.Vectors)
				for i := 0; i < pr.k; i++ {
					vtv.Set(i, i, vtv.At(i, i)-1)
				}
				require.LessOrEqual(t, mat.Norm(&vtv, math.Inf(1)), 1e-10)
				// Values agree with the known spectrum: a residual r bounds
				// the error of a well-separated eigenvalue by r²/gap and of
				// any by r.
				for j := 0; j < pr.k; j++ {
					require.InDelta(t, want[j], res.Values[j], tol*anorm+1e-12*anorm*float64(n), "value %d", j)
					if j > 0 {
						require.GreaterOrEqual(t, res.Values[j-1], res.Values[j])
					}
				}
				// Signs fixed: the largest-magnitude entry is positive.
				for j := 0; j < pr.k; j++ {
					best := 0.0
					for i := 0; i < n; i++ {
						if x := res.Vectors.At(i, j); math.Abs(x) > math.Abs(best) {
							best = x
						}
					}
					require.Greater(t, best, 0.0)
				}
				// Same seed, identical output.
				again, err := sv.make(tol).Solve(dense, pr.k)
				require.NoError(t, err)
				require.Equal(t, res.Values, again.Values)
				require.True(t, mat.Equal(res.Vectors, again.Vectors))
			})
		}
	}
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
			require.ErrorIs(t, err, ErrInvalid, "%s k=%d", sv.name, k)
		}
		_, err := sv.make(1e-8).Solve(nil, 1)
		require.ErrorIs(t, err, ErrInvalid)
		_, err = sv.make(1e-8).Solve(nanOp{700}, 2)
		require.ErrorIs(t, err, ErrInvalid, sv.name)
	}
	bad := mat.NewSymDense(3, nil)
	bad.SetSym(0, 1, math.Inf(1))
	_, err = NewDense(bad)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = NewFloat32(bad)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = NewFloat32Tiles(nil)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = NewCentered(nil)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = NewKernelOp(mat.NewDense(3, 2, []float64{1, 2, 3, math.NaN(), 5, 6}), kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}, linalg.GramOptions{})
	require.ErrorIs(t, err, ErrInvalid)
	_, err = Lanczos{Tol: -1}.Solve(d, 2)
	require.ErrorIs(t, err, ErrInvalid)
}

func TestNotConvergedCarriesPartialResult(t *testing.T) {
	a := symWithSpectrum(2, spectrum(400, func(i int) float64 { return 1 / float64(i+1) }))
	d, err := NewDense(a)
	require.NoError(t, err)
	for _, s := range []Solver{Lanczos{Tol: 1e-14, MaxRestarts: 1}, BlockKrylov{Tol: 1e-14, MaxRestarts: 1}, Randomized{Tol: 1e-14, MaxIter: 1, PowerIters: -1}} {
		res, err := s.Solve(d, 10)
		require.ErrorIs(t, err, ErrNotConverged, fmt.Sprintf("%T", s))
		var nc *NotConvergedError
		require.True(t, errors.As(err, &nc))
		require.Same(t, res, nc.Result)
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
	c := &Counting{Op: f}
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
