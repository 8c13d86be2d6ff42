package eig

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/kernel"
)

// Block Krylov on centred kernel matrices of low numerical or exact rank
// (a 3-dimensional cloud: Gaussian, linear — rank 3 — and cubic
// polynomial kernels), at sizes where its basis exhausts the Krylov space:
// the top eigenvalues of the dense solver to 10⁻⁹ of λ₁, orthonormal
// vectors, every block width. Rank-deficient blocks there once left the
// basis non-orthogonal (Ritz values 20 times too large, or a silent third
// eigenvalue of 10⁻⁵ for a zero one).
func TestBlockKrylovLowRank(t *testing.T) {
	for _, k := range []kernel.Kernel{{Kind: kernel.Gaussian, Sigma: 1}, {Kind: kernel.Linear}, {Kind: kernel.Polynomial}} {
		for _, n := range []int{40, 77, 400} {
			for _, spread := range []float64{0.1, 0.01} {
				x := mat.NewDense(n, 3, nil)
				for i := 0; i < n; i++ {
					for j, v := range []float64{1, 0.5, 2} {
						x.Set(i, j, v+spread*(math.Sin(float64(7*i+3*j))+0.3*math.Cos(float64(i*i%17+j))))
					}
				}
				want, err := DenseSolver{}.Solve(centredKernel(t, x, k), 3)
				require.NoError(t, err)
				for _, b := range []int{1, 4, 8, 32} {
					got, err := BlockKrylov{Block: b}.Solve(centredKernel(t, x, k), 3)
					require.NoError(t, err, "%v n=%d spread=%g b=%d", k.Kind, n, spread, b)
					for q := 0; q < 3; q++ {
						require.InDelta(t, want.Values[q], got.Values[q], 1e-9*want.Values[0], "%v n=%d spread=%g b=%d λ_%d", k.Kind, n, spread, b, q+1)
					}
					var g mat.Dense
					g.Mul(got.Vectors.T(), got.Vectors)
					for i := 0; i < 3; i++ {
						for j := 0; j < 3; j++ {
							require.InDelta(t, b2f(i == j), g.At(i, j), 1e-10, "%v n=%d b=%d VᵀV", k.Kind, n, b)
						}
					}
				}
			}
		}
	}
}

func centredKernel(t *testing.T, x *mat.Dense, k kernel.Kernel) Operator {
	op, err := NewKernelOperator(x, k, OperatorFloat64, true, gram.GramOptions{})
	require.NoError(t, err)
	return op
}

func b2f(v bool) float64 {
	if v {
		return 1
	}
	return 0
}
