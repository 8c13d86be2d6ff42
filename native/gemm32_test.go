package native

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// Gemm32Run sets every entry of A·Bᵀ — exactly on small integers (both
// forms), within the float32 sum's bound on others — and nothing around
// them, with the same bits whatever the threads, at the edges of the
// tiles, of the panels and of the depth blocks.
func TestGemm32Run(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	fill := func(rows, ld, d int, integer bool) []float32 {
		v := make([]float32, (rows-1)*ld+d)
		for i := range v {
			if integer {
				v[i] = float32(r.IntN(9) - 4)
			} else {
				v[i] = float32(r.NormFloat64())
			}
		}
		return v
	}
	for _, c := range []struct{ m, n, d, kc int }{{1, 1, 1, 1}, {7, 47, 16, 16}, {37, 101, 70, 32}, {64, 96, 33, 1000}, {130, 49, 300, 128}} {
		lda, ldb, ldc := c.d+1, c.d+3, c.n+5
		for _, integer := range []bool{true, false} {
			a, b := fill(c.m, lda, c.d, integer), fill(c.n, ldb, c.d, integer)
			for _, wide := range []bool{false, true} {
				pa := make([]float32, Gemm32PackLen(c.m, c.d))
				Gemm32PackA(wide, c.m, c.d, a, lda, pa)
				var first []uint32
				for _, threads := range []int{1, 2, 3, 7} {
					out := make([]float32, c.m*ldc)
					for i := range out {
						out[i] = float32(math.NaN())
					}
					Gemm32Run(wide, threads, c.m, c.n, c.d, c.kc, pa, b, ldb, make([]float32, Gemm32ScratchLen(threads, min(c.kc, c.d))), out, ldc)
					for i := 0; i < c.m; i++ {
						for j := 0; j < ldc; j++ {
							got := out[i*ldc+j]
							if j >= c.n {
								require.True(t, math.IsNaN(float64(got)), "%+v: (%d, %d) past the row written", c, i, j)
								continue
							}
							exact, abs := 0.0, 0.0
							for p := 0; p < c.d; p++ {
								v := float64(a[i*lda+p]) * float64(b[j*ldb+p])
								exact += v
								abs += math.Abs(v)
							}
							if integer {
								require.Equal(t, float32(exact), got, "%+v wide %v: (%d, %d)", c, wide, i, j)
							} else {
								require.InDelta(t, exact, float64(got), float64(c.d+2)*0x1p-24*abs, "%+v wide %v: (%d, %d)", c, wide, i, j)
							}
						}
					}
					bits := make([]uint32, len(out))
					for i, v := range out {
						bits[i] = math.Float32bits(v)
					}
					if first == nil {
						first = bits
					} else {
						require.Equal(t, first, bits, "%+v wide %v: %d threads", c, wide, threads)
					}
				}
			}
		}
	}
	require.Panics(t, func() {
		Gemm32Run(false, 1, 2, 3, 4, 4, make([]float32, Gemm32PackLen(2, 4)), make([]float32, 12), 4, make([]float32, Gemm32ScratchLen(1, 4)), make([]float32, 6), 2)
	})
}
