package bench

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdual/kdual/eig"
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
