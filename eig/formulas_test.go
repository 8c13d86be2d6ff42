package eig

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
)

// The Krylov residual test against its documented formula:
// Tol·max(ε^{2/3}‖A‖, |θ|) with ε the machine epsilon 2⁻⁵² (ARPACK's
// dlamch('EPS')), floored at 64u‖A‖ (u = 2⁻⁵³).
func TestThresholdFormula(t *testing.T) {
	require.Equal(t, math.Pow(0x1p-52, 2.0/3), eps23)
	require.Equal(t, 0x1p-53, epsilon)
	for _, c := range []struct{ tol, theta, anorm float64 }{
		{1e-6, 5, 10}, {1e-6, 1e-12, 10}, {1e-3, -4, 4}, {1e-14, 2, 3}, {0, 1, 1}, {0.5, 0, 7},
	} {
		want := math.Max(c.tol*math.Max(math.Pow(0x1p-52, 2.0/3)*c.anorm, math.Abs(c.theta)), 64*0x1p-53*c.anorm)
		require.Equal(t, want, threshold(c.tol, c.theta, c.anorm), "%+v", c)
	}
	// The relative part dominates for a large θ, the ε^{2/3} part for a
	// small one, the rounding floor for a tiny tolerance.
	require.InDelta(t, 1e-6*5, threshold(1e-6, 5, 10), 1e-20)
	require.InDelta(t, 1e-2*eps23*10, threshold(1e-2, 1e-12, 10), 1e-28)
	require.InDelta(t, 64*epsilon*3, threshold(1e-20, 2, 3), 1e-30)
}

// oneRank is a Reduction over a single part: the distributed code path
// with nothing to reduce.
type oneRank struct{}

func (oneRank) Sum([]float64) error    { return nil }
func (oneRank) MaxAbs([]float64) error { return nil }

// The distributed sign rule on one part is the local one
// (linalg.FixSigns): the largest-magnitude entry of each column (the first
// of near-ties) is made positive.
func TestFixSignsDistributedMatchesLocal(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		v := randData(seed, 40, 6)
		// A column with a near-tie at the top and one negative at the top.
		v.Set(3, 1, -9)
		v.Set(7, 1, 9*(1-1e-14))
		v.Set(0, 0, -50)
		want := linalg.CopyOf(v)
		linalg.FixSigns(want)
		got := linalg.CopyOf(v)
		require.NoError(t, fixSigns(got, 0, 40, oneRank{}))
		require.True(t, mat.Equal(want, got), "seed %d", seed)
	}
}

// Randomized's default MaxIter is 500 subspace steps: a run that cannot
// converge stops after exactly q + 500 iterations.
func TestRandomizedDefaultMaxIter(t *testing.T) {
	a := symWithSpectrum(3, spectrum(60, func(i int) float64 { return 1 + 1e-9*float64(60-i) }))
	d, err := NewDense(a)
	require.NoError(t, err)
	res, err := Randomized{Tol: 1e-15, PowerIters: 2, Oversample: -1}.Solve(d, 5)
	require.ErrorIs(t, err, ErrNotConverged)
	require.Equal(t, 2+500, res.Iterations)
}

// The planner's memory estimates against the operators' own storage
// (Bytes), with the input X (n·d float64s) counted once: float32 tiles and
// the matrix-free operator (its scaled copy of X, the row norms, one
// panel) exactly as planned; float64 storage within the planned bytes and
// at most 20% below them (tiles rounded up to whole tiles).
func TestPlannedBytesAreTheOperatorsBytes(t *testing.T) {
	const n, d = 3000, 5
	x := randData(2, n, d)
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}
	type sized interface{ Bytes() int64 }
	input := int64(8 * n * d)
	for _, kind := range []OperatorKind{OperatorFloat64, OperatorFloat32, OperatorMatrixFree} {
		op, err := NewKernelOperator(x, k, kind, false, linalg.GramOptions{})
		require.NoError(t, err)
		s, ok := op.(sized)
		require.True(t, ok, "%v reports its bytes", kind)
		got := s.Bytes()
		switch kind {
		case OperatorFloat64:
			planned := memFloat64(n, d, 0) - input
			require.LessOrEqual(t, got, planned)
			require.LessOrEqual(t, planned, got*6/5)
		case OperatorFloat32:
			// The scaled float64 copy of X the tiles are built from is
			// freed after the build; the plan counts it.
			require.Equal(t, memFloat32(n, d, 0)-2*input, got)
		case OperatorMatrixFree:
			require.Equal(t, memMatrixFree(n, d, 0)-input, got)
		}
		for _, est := range []func(n, d, m int) int64{memFloat64, memFloat32, memMatrixFree} {
			require.Equal(t, int64(8*n*10), est(n, d, 10)-est(n, d, 0), "the basis")
		}
		Release(op)
	}
}
