package kpca

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/status"
)

// cancelAt returns a context and a Progress callback that cancels it at
// the first report of stage with Done ≥ at, and counts the reports of
// each stage that come after the cancellation.
func cancelAt(stage string, at int64) (context.Context, func(Progress), *map[string]int) {
	ctx, cancel := context.WithCancel(context.Background())
	after := map[string]int{}
	done := false
	return ctx, func(p Progress) {
		if done {
			after[p.Stage]++
			return
		}
		if p.Stage == stage && p.Done >= at {
			cancel()
			done = true
		}
	}, &after
}

func requireStopped(t *testing.T, k *KPCA, err error, what string) {
	t.Helper()
	require.Error(t, err, what)
	require.ErrorIs(t, err, status.ErrStopped, what)
	require.ErrorIs(t, err, context.Canceled, what)
	require.Equal(t, status.Stopped, k.Info().Status.Code, what)
}

// A cancelled context stops the kernel build within one panel (1 000
// rows: two panels of 512), for each stored operator and the matrix-free
// one, and leaves the model unfitted with status Stopped.
func TestCancelDuringKernelBuild(t *testing.T) {
	x := gaussData(t, 1500, 4, 3)
	for _, op := range []eig.OperatorKind{eig.OperatorFloat64, eig.OperatorFloat32} {
		ctx, progress, after := cancelAt("kernel", 1)
		k := &KPCA{Components: 3, Kernel: rbf, Operator: op, Progress: progress}
		err := k.FitContext(ctx, x)
		requireStopped(t, k, err, op.String())
		require.False(t, k.Fitted(), op.String())
		require.LessOrEqual(t, (*after)["kernel"], 1, "panels computed after the cancellation (%v)", op)
		require.Zero(t, (*after)["solve"], op.String())
		_, err = k.Transform(x)
		require.ErrorIs(t, err, status.ErrNotFitted)
	}
	// An ended context before the fit: nothing is computed.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	k := &KPCA{Components: 3, Kernel: rbf, Operator: eig.OperatorMatrixFree}
	requireStopped(t, k, k.FitContext(ctx, x), "matrix-free")
}

// In the solve, every solver stops within one pass of the cancellation:
// the eigensolvers without a model, lbfgs and dca between iterations with
// their last iterate kept as a partial fit.
func TestCancelDuringSolve(t *testing.T) {
	x := gaussData(t, 300, 5, 4)
	for _, tc := range []struct {
		name    string
		solver  Solver
		partial bool
	}{
		{"lanczos", Eigen{eig.Lanczos{}}, false},
		{"block", Eigen{eig.BlockKrylov{Block: 4}}, false},
		{"lbfgs", LBFGS{}, true},
		{"dca", DCA{Loss: Loss{Kind: Huber1, Param: 0.01}}, true},
	} {
		at := int64(4)
		if tc.name == "dca" {
			at = 40 // past the square-loss start
		}
		ctx, progress, after := cancelAt("solve", at)
		k := &KPCA{Components: 3, Kernel: rbf, Solver: tc.solver, Progress: progress}
		err := k.FitContext(ctx, x)
		requireStopped(t, k, err, tc.name)
		require.LessOrEqual(t, (*after)["solve"], 1, "passes after the cancellation (%s)", tc.name)
		require.LessOrEqual(t, int64(k.Info().Passes), at+1, tc.name)
		require.Equal(t, tc.partial, k.Fitted(), tc.name)
		if tc.partial {
			z, err := k.Transform(x.Slice(0, 5, 0, 5).(*mat.Dense))
			require.NoError(t, err, tc.name)
			require.Equal(t, 5, z.RawMatrix().Rows)
			require.Contains(t, k.Info().Status.Detail, "iteration", tc.name)
		}
	}
}

// Fit without a context is FitContext with context.Background: the same
// result bit for bit, and Progress reports both stages in order.
func TestFitContextBackground(t *testing.T) {
	x := gaussData(t, 700, 3, 5)
	var stages []string
	k1 := &KPCA{Components: 2, Kernel: rbf, Progress: func(p Progress) {
		if len(stages) == 0 || stages[len(stages)-1] != p.Stage {
			stages = append(stages, p.Stage)
		}
		if p.Stage == "kernel" {
			require.LessOrEqual(t, p.Done, p.Total)
		}
	}}
	require.NoError(t, k1.FitContext(context.Background(), x))
	require.Equal(t, []string{"kernel", "solve"}, stages)
	k2 := &KPCA{Components: 2, Kernel: rbf}
	require.NoError(t, k2.Fit(x))
	s1, _ := k1.Scores()
	s2, _ := k2.Scores()
	require.True(t, mat.Equal(s1, s2))
	require.False(t, errors.Is(k1.Info().Status.Err(), status.ErrStopped))
}

// Inputs are mat.Matrix, as in gonum: a Slice or a transpose is accepted
// without a type assertion and gives what its copy gives; nil and empty
// inputs are typed errors; nothing is written to the arguments.
func TestMatrixInputs(t *testing.T) {
	big := gaussData(t, 90, 6, 7)
	view := big.Slice(10, 70, 1, 5) // 60×4, strided
	dense := mat.DenseCopyOf(view)
	before := mat.DenseCopyOf(big)
	a := &KPCA{Components: 3, Kernel: rbf, FitInverse: true}
	b := &KPCA{Components: 3, Kernel: rbf, FitInverse: true}
	require.NoError(t, a.Fit(view))
	require.NoError(t, b.Fit(dense))
	var tr mat.Dense
	tr.CloneFrom(dense.T())
	za, err := a.Transform(tr.T()) // a mat.Transpose
	require.NoError(t, err)
	zb, err := b.Transform(dense)
	require.NoError(t, err)
	require.True(t, mat.Equal(za, zb))
	xa, err := a.InverseTransform(za.Slice(0, 5, 0, 3))
	require.NoError(t, err)
	require.Equal(t, 5, xa.RawMatrix().Rows)
	require.True(t, mat.Equal(before, big), "the data were not written")
	for _, bad := range []func() error{
		func() error { _, err := a.Transform(nil); return err },
		func() error { _, err := a.InverseTransform(nil); return err },
		func() error { _, err := a.TransformGram(nil); return err },
		func() error { return (&KPCA{Components: 1}).Fit(nil) },
		func() error { return (&KPCA{Components: 1}).FitGram(nil) },
	} {
		require.ErrorIs(t, bad(), status.ErrInvalid)
	}
}
