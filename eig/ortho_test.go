package eig

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// orthoBlock's law on blocks of every kind: Q orthonormal to rounding and
// Q·R = X with R upper triangular, whether CholQR2 takes the block (well
// conditioned, columns of very different norms) or Gram–Schmidt does (a
// column nearly in the span of the others); a column exactly in the span
// leaves R's diagonal at rounding level, for repairBlock.
func TestOrthoBlockLaw(t *testing.T) {
	const n, b = 500, 8
	rng := rand.New(rand.NewPCG(3, 5))
	for _, c := range []struct {
		name              string
		build             func(x *mat.Dense)
		cholQR, deficient bool
	}{
		{"random", func(x *mat.Dense) {}, true, false},
		{"scaled columns", func(x *mat.Dense) {
			for i := 0; i < n; i++ {
				for j := 0; j < b; j++ {
					x.Set(i, j, x.At(i, j)*math.Pow(10, -float64(j)))
				}
			}
		}, true, false},
		{"nearly dependent", func(x *mat.Dense) {
			for i := 0; i < n; i++ {
				x.Set(i, 5, x.At(i, 2)+1e-6*x.At(i, 5))
			}
		}, false, false},
		{"dependent", func(x *mat.Dense) {
			for i := 0; i < n; i++ {
				x.Set(i, 6, 2*x.At(i, 1)-x.At(i, 3))
			}
		}, false, true},
	} {
		x := mat.NewDense(n, b, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < b; j++ {
				x.Set(i, j, rng.NormFloat64())
			}
		}
		c.build(x)
		x0 := mat.DenseCopyOf(x)
		scale := mat.Norm(x0, 2)
		rr := make([]float64, b*b)
		took, err := cholQR2(mat.DenseCopyOf(x), make([]float64, b*b), Local{})
		require.NoError(t, err)
		require.Equal(t, c.cholQR, took, c.name)
		require.NoError(t, orthoBlock(x, rr, Local{}), c.name)
		r := mat.NewDense(b, b, rr)
		for i := 0; i < b; i++ {
			for j := 0; j < i; j++ {
				require.Zero(t, r.At(i, j), "%s: R not upper triangular", c.name)
			}
		}
		var qr mat.Dense
		qr.Mul(x, r)
		qr.Sub(&qr, x0)
		require.LessOrEqual(t, mat.Norm(&qr, 2), 1e-13*scale, "%s: X ≠ Q·R", c.name)
		if c.deficient {
			require.LessOrEqual(t, math.Abs(r.At(6, 6)), 1e-13*scale, c.name)
			continue
		}
		var qtq mat.Dense
		qtq.Mul(x.T(), x)
		for i := 0; i < b; i++ {
			qtq.Set(i, i, qtq.At(i, i)-1)
		}
		require.LessOrEqual(t, mat.Norm(&qtq, 2), 1e-13, "%s: QᵀQ ≠ I", c.name)
	}
}
