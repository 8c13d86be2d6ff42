package bench

import (
	"io"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/eig/eigtest"
)

func TestRandSymSpectrum(t *testing.T) {
	a, lambda, err := RandSym(60, 3)
	require.NoError(t, err)
	op, err := eig.NewDense(a)
	require.NoError(t, err)
	res, err := eig.DenseSolver{}.Solve(op, 60)
	require.NoError(t, err)
	for i, l := range lambda {
		require.InDelta(t, l, res.Values[i], 1e-13)
	}
	_, _, err = RandSym(0, 1)
	require.Error(t, err)
}

func TestEtaAndEigenEta(t *testing.T) {
	require.InDelta(t, 0.1, Eta(-0.9, -1), 1e-15)
	p := &KPCAProblem{Data: "randn", N: 100, D: 5, S: 3, Kernel: "gaussian", Bandwidth: "median"}
	b, err := p.Build()
	require.NoError(t, err)
	// The converged eigenpairs score η ≈ 0; a poor approximation does not.
	res, err := eig.DenseSolver{}.Solve(b.Op, 3)
	require.NoError(t, err)
	eta, err := EigenEta(b.Op, res, p.DOpt)
	require.NoError(t, err)
	require.Less(t, eta, 1e-12)
	res.Values[0] *= 0.5
	eta, err = EigenEta(b.Op, res, p.DOpt)
	require.NoError(t, err)
	require.Greater(t, eta, 1e-3)
	require.False(t, math.IsNaN(eta))
	_, err = (&KPCAProblem{Data: "nope", N: 10, S: 2, Kernel: "gaussian"}).Build()
	require.Error(t, err)
}

func TestTablesTinyTask(t *testing.T) {
	rows, err := Tables([]TableTask{{Name: "tiny", Data: "randn", N: 150}}, "laplace", []float64{1e-2, 1e-4}, 200, 200, 1, io.Discard)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	for _, r := range rows {
		require.NotNil(t, r.SVD, "the full eigendecomposition ran")
		for _, res := range []KPCAResult{r.Ours, r.Lanczos, r.Block} {
			require.NotNil(t, res.Seconds, res.Solver)
			require.Less(t, res.Eta, r.Delta, res.Solver)
		}
	}
	var buf strings.Builder
	WriteTables(&buf, rows)
	require.Equal(t, 4, strings.Count(buf.String(), "\n"))
	require.Contains(t, buf.String(), "| tiny | 150 | laplace | 0.01 |")
}

// Every timed decomposition, on both of gonum's LAPACKs, returns a result
// whose residual is at rounding level; bad names are errors.
func TestLAPACKTimingsCheckTheirResults(t *testing.T) {
	for _, impl := range []string{"openblas", "gonum"} {
		res, err := LAPACK(60, LAPACKOps, impl, 3)
		require.NoError(t, err)
		require.Len(t, res, len(LAPACKOps))
		for i, r := range res {
			require.Equal(t, LAPACKOps[i], r.Op)
			require.Equal(t, impl, r.Impl)
			require.Less(t, r.Check, 1e-12, "%s on %s", r.Op, impl)
		}
	}
	_, err := LAPACK(60, []string{"qr"}, "netlib", 1)
	require.Error(t, err)
	_, err = LAPACK(60, []string{"schur"}, "openblas", 1)
	require.Error(t, err)
	_, err = LAPACK(0, []string{"qr"}, "openblas", 1)
	require.Error(t, err)
}

// The benchmark's full-spectrum reference solver runs eig's shared suite.
func TestFullDenseSharedSuite(t *testing.T) {
	eigtest.Run(t, eigtest.Solver{Name: "bench-full-dense", New: func(float64) eig.Solver { return fullDense{} },
		MaxPasses: func(int, int, float64) int { return 1 }})
}
