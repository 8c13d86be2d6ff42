package eig

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/blas/blas64"
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

// mulUpperRight is x·U in place for heights below, at and past its block
// of rows and for a row stride wider than the block: against the product
// formed entry by entry, U's strict lower triangle zero, and the columns
// past the block untouched.
func TestMulUpperRight(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 6))
	for _, n := range []int{1, 7, mulUpperRightRows, mulUpperRightRows + 1, 2*mulUpperRightRows + 37} {
		for _, b := range []int{1, 2, 8, 13} {
			ld := b + 3
			x := make([]float64, n*ld)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			u := make([]float64, b*b)
			for i := 0; i < b; i++ {
				for j := i; j < b; j++ {
					u[i*b+j] = rng.NormFloat64()
				}
			}
			want := append([]float64(nil), x...)
			for i := 0; i < n; i++ {
				for j := 0; j < b; j++ {
					s := 0.0
					for k := 0; k <= j; k++ {
						s += x[i*ld+k] * u[k*b+j]
					}
					want[i*ld+j] = s
				}
			}
			mulUpperRight(blas64.General{Rows: n, Cols: b, Stride: ld, Data: x}, blas64.General{Rows: b, Cols: b, Stride: b, Data: u})
			for i := range want {
				require.InDelta(t, want[i], x[i], 1e-13*float64(b), "n=%d b=%d entry %d", n, b, i)
			}
		}
	}
}
