package kpca

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/approx"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/status"
)

// startRankMin is the smallest rank the Nyström start uses by default
// (see KPCA.StartRank; docs/operators.md has the passes it saved).
const startRankMin = 2000

// startRank is the rank of the Nyström start for blocks of b columns on n
// points: StartRank when set, else max(10·b, startRankMin), never more
// than n/2 (the start would then cost a large part of a pass).
func (k *KPCA) startRank(n, b int) int {
	r := k.StartRank
	if r == 0 {
		r = max(10*b, startRankMin)
	}
	return min(r, n/2)
}

// startBytes is what the Nyström start of rank r holds on n points of d
// features with blocks of b: the n×r features and the scores' n×b (float64),
// a float64 copy of the data and three r×r matrices.
func startBytes(n, d, r, b int) int64 {
	return 8 * (int64(n)*int64(r+b) + int64(n)*int64(d) + 3*int64(r)*int64(r))
}

// nystromStart returns the start block of the block Krylov solver paired
// with the matrix-free operator: the top b eigenvectors of the Nyström
// approximation K̂ = F·Fᵀ of rank r (randomly pivoted Cholesky, seeded;
// float32 features, approx.Nystrom.Float32: a start needs no more;
// centred as the fit is), as the scores of an approximate KPCA of x — their
// directions are what the solver needs. It returns nil and why when no
// start is made (StartRank negative, r < b, or the memory left by the
// operator, free bytes, is too small).
func (k *KPCA) nystromStart(ctx context.Context, x *mat.Dense, b int, seed uint64, free int64) (*mat.Dense, string, error) {
	n, d := x.Dims()
	if k.StartRank < 0 {
		return nil, "random start (StartRank < 0)", nil
	}
	r := k.startRank(n, b)
	if r < b {
		return nil, fmt.Sprintf("random start (a Nyström rank %d < the block %d)", r, b), nil
	}
	if need := startBytes(n, d, r, b); need > free {
		return nil, fmt.Sprintf("random start (a Nyström start of rank %d needs %d MiB, %d MiB left by the operator)", r, need>>20, free>>20), nil
	}
	if seed == 0 {
		seed = 1
	}
	c := b
	for {
		sub := KPCA{Components: c, Kernel: k.Kernel, NoCenter: k.NoCenter, Approx: approx.Nystrom{Rank: r, Seed: seed, Float32: true}}
		err := sub.FitContext(ctx, x)
		var re *status.RankError
		if errors.As(err, &re) && re.Rank >= 1 && re.Rank < c {
			// A kernel of low rank (linear or polynomial on few
			// features): its numerical range, the rest random.
			c = re.Rank
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, "", fmt.Errorf("Nyström start: %w", err)
			}
			return nil, fmt.Sprintf("random start (the Nyström start failed: %v)", err), nil
		}
		z, err := sub.Scores()
		if err != nil {
			return nil, "", fmt.Errorf("Nyström start: %w", err)
		}
		ai := sub.Info().Approx
		return z, fmt.Sprintf("Nyström start: top %d eigenvectors of a rank-%d approximation (trace error %.3g)", c, ai.Rank, ai.TraceError), nil
	}
}

// warmStart returns the solver to pair with the operator of plan: the
// planner's, with a Nyström start when it is block Krylov on the
// matrix-free operator and the fit's solver is auto (nil, Eigen{} or
// eig.Auto); why says what was done and seconds how long it took.
func (k *KPCA) warmStart(ctx context.Context, plan eig.Plan, x *mat.Dense) (eig.Solver, string, float64, error) {
	bk, ok := plan.Solver.(eig.BlockKrylov)
	if !ok || plan.Operator != eig.OperatorMatrixFree {
		return plan.Solver, "", 0, nil
	}
	e, ok := k.solverOf().(Eigen)
	if !ok {
		return plan.Solver, "", 0, nil
	}
	a, ok := e.Solver.(eig.Auto)
	if !ok && e.Solver != nil {
		return plan.Solver, "", 0, nil
	}
	t := time.Now()
	start, why, err := k.nystromStart(ctx, x, bk.Block, a.Seed, plan.Budget-plan.Bytes)
	if err != nil {
		return nil, "", 0, err
	}
	bk.Start = start
	return bk, why, time.Since(t).Seconds(), nil
}
