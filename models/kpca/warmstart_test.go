package kpca

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
)

// The matrix-free fit with the auto solver starts block Krylov from a
// Nyström approximation: the same eigenvalues as LAPACK's (within the
// stopping test, Tol·λ₁ per residual), in no more passes than a random
// start, Info saying which start ran; StartRank < 0, a budget too small
// for the start and a solver named by the caller start at random.
func TestMatrixFreeNystromStart(t *testing.T) {
	x := gaussData(t, 900, 8, 5)
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 3}
	ref, err := linalg.SymEig(centredGram(t, x, k), 6)
	require.NoError(t, err)
	const tol = 1e-8
	fit := func(m *KPCA) *KPCA {
		t.Helper()
		require.NoError(t, m.Fit(x))
		vals, err := m.Eigenvalues()
		require.NoError(t, err)
		for i, v := range vals {
			// A residual r moves the Ritz value by at most r.
			require.InDelta(t, ref.Values[i], v, 2*tol*ref.Values[0], "λ_%d (%s)", i, m.Info().Start)
		}
		return m
	}
	warm := fit(&KPCA{Components: 6, Kernel: k, Operator: eig.OperatorMatrixFree, Solver: Eigen{Solver: eig.Auto{Tol: tol}}})
	require.Contains(t, warm.Info().Start, "Nyström start")
	require.Contains(t, warm.Info().Start, "rank-450") // min(max(10·32, 2000), n/2)
	require.Contains(t, warm.Info().Status.Test, "‖A‖")
	cold := fit(&KPCA{Components: 6, Kernel: k, Operator: eig.OperatorMatrixFree, StartRank: -1, Solver: Eigen{Solver: eig.Auto{Tol: tol}}})
	require.Contains(t, cold.Info().Start, "random start")
	require.LessOrEqual(t, warm.Info().Passes, cold.Info().Passes)
	small := fit(&KPCA{Components: 6, Kernel: k, Operator: eig.OperatorMatrixFree, StartRank: 40, Solver: Eigen{Solver: eig.Auto{Tol: tol}}})
	require.Contains(t, small.Info().Start, "rank-40")

	// The budget: what the operator leaves must hold the start.
	plan, err := eig.PlanOperator(eig.PlanInput{N: 900, D: 8, K: 6, Tol: tol, Want: eig.OperatorMatrixFree, Budget: 1 << 30})
	require.NoError(t, err)
	tight := plan.Bytes + startBytes(900, 8, 450, 32) - 1
	m := fit(&KPCA{Components: 6, Kernel: k, Operator: eig.OperatorMatrixFree, MemoryBudget: tight, Solver: Eigen{Solver: eig.Auto{Tol: tol}}})
	require.Contains(t, m.Info().Start, "random start")
	require.Contains(t, m.Info().Start, "MiB left")

	// Another solver, or a stored operator: no start is made.
	for _, m := range []*KPCA{
		{Components: 6, Kernel: k, Operator: eig.OperatorMatrixFree, Solver: Eigen{Solver: eig.BlockKrylov{Tol: tol}}},
		{Components: 6, Kernel: k, Operator: eig.OperatorFloat64, Solver: Eigen{Solver: eig.Auto{Tol: tol}}},
	} {
		require.Empty(t, fit(m).Info().Start)
	}
	require.Equal(t, 450, (&KPCA{}).startRank(900, 32))
	// The start's bytes as documented: n×r features and n×b scores, a copy
	// of the n×d data, three r×r matrices, float64 each.
	require.Equal(t, int64(8*(1000*(100+8)+1000*10+3*100*100)), startBytes(1000, 10, 100, 8))
	require.Equal(t, 2000, (&KPCA{}).startRank(100000, 60))
	require.Equal(t, 3000, (&KPCA{}).startRank(100000, 300))
	// The start's time is part of the solve's.
	require.Positive(t, warm.Info().StartSeconds)
	require.LessOrEqual(t, warm.Info().StartSeconds, warm.Info().SolveSeconds)
	require.LessOrEqual(t, cold.Info().StartSeconds, cold.Info().SolveSeconds)
}

// A kernel of low rank (linear on 4 features: rank 4, blocks of 32) starts
// from its numerical range and still converges to LAPACK's eigenvalues.
func TestMatrixFreeStartLowRankKernel(t *testing.T) {
	x := gaussData(t, 400, 4, 8)
	k := kernel.Kernel{Kind: kernel.Linear}
	ref, err := linalg.SymEig(centredGram(t, x, k), 3)
	require.NoError(t, err)
	m := &KPCA{Components: 3, Kernel: k, Operator: eig.OperatorMatrixFree, Solver: Eigen{Solver: eig.Auto{Tol: 1e-9}}}
	require.NoError(t, m.Fit(x))
	require.Contains(t, m.Info().Start, "Nyström start: top 4 eigenvectors")
	vals, err := m.Eigenvalues()
	require.NoError(t, err)
	for i, v := range vals {
		require.InDelta(t, ref.Values[i], v, 1e-8*ref.Values[0])
	}
}

// An indefinite kernel has no Nyström approximation: the matrix-free fit
// starts at random and says why.
func TestMatrixFreeStartIndefiniteKernel(t *testing.T) {
	x := gaussData(t, 300, 5, 9)
	k := kernel.Kernel{Kind: kernel.Sigmoid, Gamma: 0.1}
	m := &KPCA{Components: 3, Kernel: k, Operator: eig.OperatorMatrixFree, Solver: Eigen{Solver: eig.Auto{Tol: 1e-8}}}
	require.NoError(t, m.Fit(x))
	require.Contains(t, m.Info().Start, "random start (the Nyström start failed")
}

// A centred kernel of rank 0 (the linear kernel on 200 copies of one
// point) gives no start, and the reason names the rank, not a request for
// no components.
func TestNystromStartRankZero(t *testing.T) {
	x := gaussData(t, 200, 3, 10)
	for i := 0; i < 200; i++ {
		x.SetRow(i, []float64{1, 2, 3})
	}
	m := &KPCA{Components: 2, Kernel: kernel.Kernel{Kind: kernel.Linear}}
	start, why, err := m.nystromStart(context.Background(), x, 4, 1, 1<<40)
	require.NoError(t, err)
	require.Nil(t, start)
	require.Contains(t, why, "random start (the Nyström start failed")
	require.Contains(t, why, "numerical rank 0", why)
}
