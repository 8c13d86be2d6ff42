package rkm

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
)

// A model of one view is kernel PCA: Γ holds the top s eigenvalues of the
// centred kernel matrix and H's columns its eigenvectors (K_c·H = H·Γ),
// in the dual setting and by Auto.
func TestOneViewIsKPCA(t *testing.T) {
	const n, s = 30, 3
	x := mat.NewDense(n, 3, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < 3; j++ {
			x.Set(i, j, math.Sin(float64(i*3+j)*1.3))
		}
	}
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}
	g, err := kernel.Gram(x, k)
	require.NoError(t, err)
	_, err = linalg.CenterKernelInPlace(g)
	require.NoError(t, err)
	e, err := linalg.SymEig(g, 0)
	require.NoError(t, err)
	for _, st := range []Setting{Dual, Auto} {
		m := &Model{Views: []View{{Kernel: k}}, Components: s, Setting: st}
		require.NoError(t, m.Fit([]*mat.Dense{x}), "setting %v", st)
		gamma, err := m.Gamma()
		require.NoError(t, err)
		h, err := m.H()
		require.NoError(t, err)
		var kh, hg mat.Dense
		kh.Mul(g, h)
		hg.Mul(h, gamma)
		for q := 0; q < s; q++ {
			require.InDelta(t, e.Values[q], gamma.At(q, q), 1e-10*e.Values[0], "setting %v γ_%d", st, q)
		}
		var d mat.Dense
		d.Sub(&kh, &hg)
		require.Less(t, mat.Norm(&d, math.Inf(1)), 1e-9*e.Values[0]*mat.Norm(h, math.Inf(1)), "setting %v: K_c·H = H·Γ", st)
	}
}
