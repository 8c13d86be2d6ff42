package linalg

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// BasisTMul and BasisSubMul against gonum's products, within the
// float64 bound of each entry's sum (a few n·u of Σ|v||w|), on every
// shape their kernels split (columns by fours, the block by eights, rows
// by fours and by chunks, views with strides), and with the same bits on
// one goroutine as on several.
func TestBasisProducts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	fill := func(r, c int) *mat.Dense {
		m := mat.NewDense(r, c+3, nil) // wider: the view has a stride
		for i := 0; i < r; i++ {
			for j := 0; j < c+3; j++ {
				m.Set(i, j, rng.NormFloat64())
			}
		}
		return m.Slice(0, r, 1, 1+c).(*mat.Dense)
	}
	abs := func(m mat.Matrix) *mat.Dense {
		var a mat.Dense
		a.Apply(func(_, _ int, v float64) float64 { return math.Abs(v) }, m)
		return &a
	}
	for _, n := range []int{1, 3, 5, 257, 4500} {
		for _, c := range []int{1, 3, 4, 7, 68} {
			for _, b := range []int{2, 3, 8, 13} {
				v, w, h := fill(n, c), fill(n, b), fill(c, b)
				got := mat.NewDense(c, b, nil)
				BasisTMul(got, v, w)
				var want, bound mat.Dense
				want.Mul(v.T(), w)
				bound.Mul(abs(v).T(), abs(w))
				for k := 0; k < c; k++ {
					for j := 0; j < b; j++ {
						require.LessOrEqual(t, math.Abs(got.At(k, j)-want.At(k, j)), 4*float64(n)*0x1p-53*bound.At(k, j),
							"vᵀw n %d c %d b %d (%d, %d)", n, c, b, k, j)
					}
				}
				w0 := mat.DenseCopyOf(w)
				BasisSubMul(w, v, h)
				var vh, vhBound mat.Dense
				vh.Mul(v, h)
				vhBound.Mul(abs(v), abs(h))
				for i := 0; i < n; i++ {
					for j := 0; j < b; j++ {
						require.LessOrEqual(t, math.Abs(w.At(i, j)-(w0.At(i, j)-vh.At(i, j))),
							4*float64(c+1)*0x1p-53*(vhBound.At(i, j)+math.Abs(w0.At(i, j))), "w − vh n %d c %d b %d", n, c, b)
					}
				}
			}
		}
	}
	// The same bits on one goroutine and on four.
	v, w, h := fill(50000, 68), fill(50000, 8), fill(68, 8)
	one, four := mat.NewDense(68, 8, nil), mat.NewDense(68, 8, nil)
	w1, w4 := mat.DenseCopyOf(w), mat.DenseCopyOf(w)
	prev := runtime.GOMAXPROCS(1)
	BasisTMul(one, v, w)
	BasisSubMul(w1, v, h)
	runtime.GOMAXPROCS(4)
	BasisTMul(four, v, w)
	BasisSubMul(w4, v, h)
	runtime.GOMAXPROCS(prev)
	require.Equal(t, one.RawMatrix().Data, four.RawMatrix().Data)
	require.Equal(t, w1.RawMatrix().Data, w4.RawMatrix().Data)
}
