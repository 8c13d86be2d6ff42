package kpca

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/approx"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

// Identical points have a centred kernel matrix that is zero but for
// rounding: every fit says it has rank 0 (a status.RankError, wrapping
// ErrInvalid) instead of returning its noise as components, whatever the
// kernel, solver or approximation; the same points spread by 10⁻³ (a real,
// small variance) still fit.
func TestIdenticalPointsHaveNoComponents(t *testing.T) {
	const n = 40
	same, spread := mat.NewDense(n, 3, nil), mat.NewDense(n, 3, nil)
	for i := 0; i < n; i++ {
		for j, v := range []float64{1, 0.5, 2} {
			same.Set(i, j, v)
			spread.Set(i, j, v+0.1*math.Sin(float64(7*i+3*j)))
		}
	}
	rank0 := func(err error, what string) {
		var re *status.RankError
		require.ErrorAs(t, err, &re, what)
		require.Zero(t, re.Rank, what)
		require.ErrorIs(t, err, status.ErrInvalid, what)
	}
	gauss := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}
	for _, k := range []kernel.Kernel{gauss, {Kind: kernel.Polynomial}, {Kind: kernel.Linear}} {
		for _, solver := range []string{"dense", "dca", "lanczos", "block", "randomized", "lbfgs"} {
			what := k.Kind.String() + " " + solver
			rank0((&KPCA{Components: 1, Kernel: k, Solver: byName(solver)}).Fit(same), what)
			m := &KPCA{Components: 1, Kernel: k, Solver: byName(solver)}
			require.NoError(t, m.Fit(spread), what)
			v, _ := m.Eigenvalues()
			require.Greater(t, v[0], 1e-9, what)
		}
		for _, a := range []approx.Method{approx.Nystrom{Rank: 8}, approx.Nystrom{Rank: 8, Float32: true}, approx.RFF{Features: 40}} {
			if _, rff := a.(approx.RFF); rff && k.Kind != kernel.Gaussian {
				continue
			}
			rank0((&KPCA{Components: 1, Kernel: k, Approx: a}).Fit(same), k.Kind.String())
			require.NoError(t, (&KPCA{Components: 1, Kernel: k, Approx: a}).Fit(spread), k.Kind.String())
		}
	}
	rows := &linalg.Levels8{Rows: 500, Cols: 4, Step: 1.0 / 255, Data: make([]uint8, 500*4)}
	for i := range rows.Data {
		rows.Data[i] = uint8(40 + i%4)
	}
	_, err := Stream{Components: 1, Kernel: gauss, Rank: 3, Step: rows.Step, Sample: 100, Chunk: 128}.Fit(rows)
	rank0(err, "stream")
	m := &KPCA{Components: 1, Kernel: gauss, Approx: approx.Nystrom{Rank: 3}}
	rank0(m.FitLevels8(context.Background(), rows), "FitLevels8")
}

// The linear kernel is homogeneous: data scaled by c give eigenvalues
// scaled by c² and scores by c (to rounding; c a power of two), centred
// or not, whatever the solver — far below and above 1, so that no rank
// test or stopping test hides an absolute threshold.
func TestLinearKernelScaleInvariance(t *testing.T) {
	x := gaussData(t, 60, 4, 77)
	for _, noCenter := range []bool{false, true} {
		for _, solver := range []string{"dense", "lanczos", "block", "randomized", "lbfgs", "dca"} {
			base := &KPCA{Components: 2, NoCenter: noCenter, Solver: byName(solver)}
			require.NoError(t, base.Fit(x))
			bv, _ := base.Eigenvalues()
			bs, _ := base.Scores()
			for _, p := range []int{-200, -30, 30, 200} {
				c := math.Ldexp(1, p)
				xs := mat.DenseCopyOf(x)
				xs.Scale(c, xs)
				m := &KPCA{Components: 2, NoCenter: noCenter, Solver: byName(solver)}
				what := fmt.Sprintf("%s centred %v 2^%d", solver, !noCenter, p)
				require.NoError(t, m.Fit(xs), what)
				v, _ := m.Eigenvalues()
				for i := range v {
					require.InDelta(t, bv[i], math.Ldexp(v[i], -2*p), 1e-8*bv[0], what)
				}
				s, _ := m.Scores()
				var back mat.Dense
				back.Scale(1/c, s)
				for j := 0; j < 2; j++ {
					// Signs may differ: compare |score| column by column.
					sign := math.Copysign(1, back.At(0, j)*bs.At(0, j))
					for i := 0; i < 60; i++ {
						require.InDelta(t, bs.At(i, j), sign*back.At(i, j), 1e-6*mat.Norm(bs, math.Inf(1)), what)
					}
				}
			}
		}
	}
}

// Float32 storage cannot hold a linear or polynomial kernel far from 1:
// where the plan would store float32 (a budget that float64 does not fit,
// a loose tolerance) it applies the kernel matrix-free instead, with the
// same eigenvalues as at scale 1 (scaled by c²), and a forced float32 is
// refused naming float32's range (it stored zeros, rank 0, or NaN).
func TestFloat32StorageRange(t *testing.T) {
	x := gaussData(t, 300, 4, 77)
	solver := Eigen{Solver: eig.BlockKrylov{Tol: 1e-5}}
	base := &KPCA{Components: 2, Kernel: kernel.Kernel{Kind: kernel.Linear}, Solver: solver, MemoryBudget: 5 << 18}
	require.NoError(t, base.Fit(x))
	require.Equal(t, "float32", base.Info().Operator, base.Info().PlanReason)
	bv, _ := base.Eigenvalues()
	for _, p := range []int{-100, 100} {
		xs := mat.DenseCopyOf(x)
		xs.Scale(math.Ldexp(1, p), xs)
		m := &KPCA{Components: 2, Kernel: kernel.Kernel{Kind: kernel.Linear}, Solver: solver, MemoryBudget: 5 << 18}
		require.NoError(t, m.Fit(xs), "2^%d", p)
		require.Equal(t, "matrix-free", m.Info().Operator, "2^%d: %s", p, m.Info().PlanReason)
		require.Contains(t, m.Info().PlanReason, "float32's range")
		v, _ := m.Eigenvalues()
		for i := range v {
			require.InDelta(t, bv[i], math.Ldexp(v[i], -2*p), 1e-5*bv[0], "2^%d", p)
		}
		forced := &KPCA{Components: 2, Kernel: kernel.Kernel{Kind: kernel.Linear}, Operator: eig.OperatorFloat32}
		err := forced.Fit(xs)
		require.ErrorIs(t, err, status.ErrInvalid, "2^%d", p)
		require.ErrorContains(t, err, "float32's range")
	}
	// The storage itself refuses such values when asked directly.
	xs := mat.DenseCopyOf(x)
	xs.Scale(math.Ldexp(1, 100), xs)
	_, err := eig.NewKernelOperator(xs, kernel.Kernel{Kind: kernel.Linear}, eig.OperatorFloat32, true, gram.GramOptions{})
	require.ErrorIs(t, err, status.ErrInvalid)
}
