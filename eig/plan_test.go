package eig

import (
	"math"
	"testing"

	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/status"

	"github.com/stretchr/testify/require"
)

// The planner's choice for budgets that force each operator, the
// precision rule, forced kinds and bad input.
func TestPlanOperator(t *testing.T) {
	const n, d, k = 60000, 784, 20
	gib := int64(1) << 30
	p, err := PlanOperator(PlanInput{N: n, D: d, K: k, Tol: 1e-4, Budget: 64 * gib})
	require.NoError(t, err)
	require.Equal(t, OperatorFloat64, p.Operator)
	require.Zero(t, p.StorageBound)
	require.Greater(t, p.Bytes, int64(4*n*n)) // one triangle in float64 tiles

	// 20 GiB: float64 fits but takes more than half of it; float32 half
	// storage meets the tolerance, so it is chosen; at tol 1e-8 it does
	// not, and float64 is.
	p, err = PlanOperator(PlanInput{N: n, D: d, K: k, Tol: 1e-4, Budget: 20 * gib})
	require.NoError(t, err)
	require.Equal(t, OperatorFloat32, p.Operator)
	require.Contains(t, p.Reason, "over half")
	p, err = PlanOperator(PlanInput{N: n, D: d, K: k, Tol: 1e-8, Budget: 20 * gib})
	require.NoError(t, err)
	require.Equal(t, OperatorFloat64, p.Operator)
	// The dense solver keeps float64 when it takes over half the budget.
	p, err = PlanOperator(PlanInput{N: 1000, D: 5, K: 3, Tol: 1e-2, Budget: 30 << 20, Dense: true})
	require.NoError(t, err)
	require.Equal(t, OperatorFloat64, p.Operator)
	require.Greater(t, p.Bytes, int64(15<<20))

	// 8 GiB: float64 (14.4 GB) does not fit, half-stored float32 (7.2 GB)
	// does, and u·√n = 1.5e-5 ≤ tol = 1e-4.
	p, err = PlanOperator(PlanInput{N: n, D: d, K: k, Tol: 1e-4, Budget: 8 * gib})
	require.NoError(t, err)
	require.Equal(t, OperatorFloat32, p.Operator)
	require.InDelta(t, Float32Unit*245, p.StorageBound, 1e-7)
	require.Less(t, p.Bytes, 8*gib)
	require.Contains(t, p.Reason, "float32")
	require.False(t, p.SingleBlocks, "not known to be nonnegative")
	// A nonnegative kernel: float32 block arithmetic too, its BlockRel
	// added to the bound; not when the sum exceeds the tolerance, nor for
	// stored float64.
	p, err = PlanOperator(PlanInput{N: n, D: d, K: k, Tol: 1e-4, Budget: 8 * gib, NonNegative: true})
	require.NoError(t, err)
	require.Equal(t, OperatorFloat32, p.Operator)
	require.True(t, p.SingleBlocks)
	require.InDelta(t, Float32Unit*245+gram.BlockRel, p.StorageBound, 1e-7)
	require.Contains(t, p.Reason, "float32 arithmetic")
	tight := Float32Unit*math.Sqrt(n) + gram.BlockRel/2
	p, err = PlanOperator(PlanInput{N: n, D: d, K: k, Tol: tight, Budget: 8 * gib, NonNegative: true})
	require.NoError(t, err)
	require.Equal(t, OperatorFloat32, p.Operator)
	require.False(t, p.SingleBlocks)
	slower := func() bool { return false }
	p, err = PlanOperator(PlanInput{N: n, D: d, K: k, Tol: 1e-4, Budget: 64 * gib, NonNegative: true, SingleFaster: slower})
	require.NoError(t, err)
	require.Equal(t, OperatorFloat64, p.Operator)
	require.False(t, p.SingleBlocks)

	// float64 fits in half the budget, but float32 tiles with float32
	// block arithmetic were measured faster: float32 for speed, when the
	// kernel is nonnegative, the tolerance takes u·√n + BlockRel, the
	// solver multiplies blocks and no dense solve is asked — and the
	// probe is asked only then.
	asked := 0
	faster := func() bool { asked++; return true }
	p, err = PlanOperator(PlanInput{N: 7000, D: d, K: k, Tol: 1e-4, Budget: 64 * gib, NonNegative: true, SingleFaster: faster})
	require.NoError(t, err)
	require.Equal(t, OperatorFloat32, p.Operator)
	require.True(t, p.SingleBlocks)
	require.InDelta(t, Float32Unit*math.Sqrt(7000)+gram.BlockRel, p.StorageBound, 1e-12)
	require.Contains(t, p.Reason, "faster here")
	require.Equal(t, 1, asked)
	for _, in := range []PlanInput{
		{N: 7000, D: d, K: k, Tol: 1e-4, Budget: 64 * gib, SingleFaster: faster},                                     // sign unknown
		{N: 7000, D: d, K: k, Tol: 1e-4, Budget: 64 * gib, NonNegative: true, Dense: true, SingleFaster: faster},     // dense solve
		{N: 7000, D: d, K: k, Tol: 1e-4, Budget: 64 * gib, NonNegative: true, OneVector: true, SingleFaster: faster}, // Lanczos
		{N: 7000, D: d, K: k, Tol: 1e-5, Budget: 64 * gib, NonNegative: true, SingleFaster: faster},                  // 5.0e-6 + 3.9e-6 ≤ 1e-5 …
		{N: 7000, D: d, K: k, Tol: 8e-6, Budget: 64 * gib, NonNegative: true, SingleFaster: faster},                  // … but not ≤ 8e-6
	} {
		before := asked
		p, err = PlanOperator(in)
		require.NoError(t, err)
		if in.Tol == 1e-5 {
			require.Equal(t, OperatorFloat32, p.Operator)
			continue
		}
		require.Equal(t, OperatorFloat64, p.Operator, "%+v", in)
		require.False(t, p.SingleBlocks)
		require.Equal(t, before, asked, "the probe is not asked when it cannot decide: %+v", in)
	}
	// A forced kind is not overridden.
	p, err = PlanOperator(PlanInput{N: 7000, D: d, K: k, Tol: 1e-4, Want: OperatorFloat64, NonNegative: true, SingleFaster: faster})
	require.NoError(t, err)
	require.Equal(t, OperatorFloat64, p.Operator)

	// The same budget with a tolerance the storage cannot meet: exact,
	// matrix-free, with wide blocks.
	p, err = PlanOperator(PlanInput{N: n, D: d, K: k, Tol: 1e-8, Budget: 8 * gib})
	require.NoError(t, err)
	require.Equal(t, OperatorMatrixFree, p.Operator)
	require.Equal(t, 60, p.Solver.(BlockKrylov).Block)
	require.Contains(t, p.Reason, "storage bound")

	// 6 GiB at n = 100 000: only matrix-free fits.
	p, err = PlanOperator(PlanInput{N: 100000, D: d, K: k, Tol: 1e-4, Budget: 6 * gib})
	require.NoError(t, err)
	require.Equal(t, OperatorMatrixFree, p.Operator)
	require.Less(t, p.Bytes, 6*gib)

	// Nothing fits.
	_, err = PlanOperator(PlanInput{N: n, D: d, K: k, Budget: 100 << 20})
	require.ErrorIs(t, err, status.ErrInvalid)

	// Forced kinds are taken as asked.
	for _, want := range []OperatorKind{OperatorFloat64, OperatorFloat32, OperatorMatrixFree} {
		p, err = PlanOperator(PlanInput{N: 1000, D: 5, K: 3, Want: want})
		require.NoError(t, err)
		require.Equal(t, want, p.Operator)
		kind, err := ParseOperatorKind(want.String())
		require.NoError(t, err)
		require.Equal(t, want, kind)
	}
	// The dense solver needs float64.
	p, err = PlanOperator(PlanInput{N: 1000, D: 5, K: 3, Dense: true})
	require.NoError(t, err)
	require.Equal(t, OperatorFloat64, p.Operator)
	require.Nil(t, p.Solver)
	_, err = PlanOperator(PlanInput{N: 1000, D: 5, K: 3, Dense: true, Want: OperatorMatrixFree})
	require.ErrorIs(t, err, status.ErrInvalid)

	for _, in := range []PlanInput{{N: 0, D: 1, K: 1}, {N: 5, D: 1, K: 6}, {N: 5, D: 0, K: 1}, {N: 5, D: 1, K: 1, Tol: -1}} {
		_, err := PlanOperator(in)
		require.ErrorIs(t, err, status.ErrInvalid, "%+v", in)
	}
	_, err = ParseOperatorKind("float16")
	require.ErrorIs(t, err, status.ErrInvalid)
	require.Greater(t, DefaultBudget(), int64(0))
}

// DefaultBudget is the documented formula: the process's memory less 10%
// and 512 MiB.
func TestDefaultBudgetFormula(t *testing.T) {
	total := bigmem.Total()
	require.Greater(t, total, int64(1<<30))
	require.Equal(t, total-total/10-512<<20, DefaultBudget())
}

// A forced operator that does not fit the budget is refused before
// anything is allocated, with the size it needs and what would fit; one
// that fits is taken as asked.
func TestPlanForcedOperatorWithinBudget(t *testing.T) {
	const mib = int64(1 << 20)
	in := PlanInput{N: 20000, D: 784, K: 20, Tol: 1e-6, Budget: 512 * mib}
	for _, want := range []OperatorKind{OperatorFloat64, OperatorFloat32} {
		in.Want = want
		_, err := PlanOperator(in)
		require.ErrorIs(t, err, status.ErrInvalid, "%v", want)
		require.Contains(t, err.Error(), "needs")
		require.Contains(t, err.Error(), "what fits: matrix-free")
	}
	in.Want = OperatorMatrixFree
	p, err := PlanOperator(in)
	require.NoError(t, err)
	require.Equal(t, OperatorMatrixFree, p.Operator)
	require.LessOrEqual(t, p.Bytes, in.Budget)
	in.Budget = mib
	_, err = PlanOperator(in)
	require.ErrorIs(t, err, status.ErrInvalid)
	require.Contains(t, err.Error(), "nothing fits")
	// A budget of one byte is a budget.
	in.Budget = 1
	_, err = PlanOperator(in)
	require.ErrorIs(t, err, status.ErrInvalid)
}

// The stored pairing checks after every block from checkEachMin rows, the
// matrix-free one always (with the ‖A‖ test).
func TestPlanCheckEachBlockRule(t *testing.T) {
	for _, c := range []struct {
		n    int
		want OperatorKind
		each bool
	}{{checkEachMin - 1, OperatorFloat64, false}, {checkEachMin, OperatorFloat64, true}, {checkEachMin, OperatorMatrixFree, true}} {
		p, err := PlanOperator(PlanInput{N: c.n, D: 10, K: 5, Want: c.want, Budget: 1 << 34})
		if err != nil {
			t.Fatal(err)
		}
		bk, ok := p.Solver.(BlockKrylov)
		if !ok || bk.CheckEachBlock != c.each || bk.NormTest != (c.want == OperatorMatrixFree) {
			t.Errorf("n = %d, %v: %+v", c.n, c.want, p.Solver)
		}
	}
}

// The budget's edge: float64 storage is chosen at a budget of exactly its
// bytes, and not one byte below; likewise float32 half storage where its
// bound meets the tolerance, and the matrix-free operator where nothing
// stored fits.
func TestPlanBudgetEdge(t *testing.T) {
	const n, d, k = 60000, 784, 20
	for _, c := range []struct {
		want OperatorKind
		tol  float64
	}{{OperatorFloat64, 1e-8}, {OperatorFloat32, 1e-4}, {OperatorMatrixFree, 1e-8}} {
		forced, err := PlanOperator(PlanInput{N: n, D: d, K: k, Tol: c.tol, Budget: 1 << 40, Want: c.want})
		require.NoError(t, err)
		p, err := PlanOperator(PlanInput{N: n, D: d, K: k, Tol: c.tol, Budget: forced.Bytes})
		require.NoError(t, err)
		require.Equal(t, c.want, p.Operator, p.Reason)
		require.Equal(t, forced.Bytes, p.Bytes)
		p, err = PlanOperator(PlanInput{N: n, D: d, K: k, Tol: c.tol, Budget: forced.Bytes - 1})
		if err == nil {
			require.NotEqual(t, c.want, p.Operator, p.Reason)
			require.LessOrEqual(t, p.Bytes, forced.Bytes-1)
		}
	}
}
