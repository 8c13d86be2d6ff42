package native

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// ColumnRange on both builds is the comparison loop it replaces, bit for
// bit: odd widths (the vector body and its tail), a stride, entries that
// are NaN, ±Inf, −0 and +0, a NaN already in the running minimum, and
// values past the last column and row that it must not read into the
// result.
func TestColumnRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0}
	for _, d := range []int{1, 3, 4, 5, 8, 13, 784} {
		rows, ld := 37, d+3
		x := make([]float64, rows*ld)
		for i := range x {
			x[i] = rng.NormFloat64()
			if rng.IntN(20) == 0 {
				x[i] = special[rng.IntN(len(special))]
			}
		}
		for i := 0; i < rows; i++ {
			for j := d; j < ld; j++ {
				x[i*ld+j] = -1e300 // outside the columns: never read into lo
			}
		}
		seed := func() ([]float64, []float64) {
			lo, hi := make([]float64, d), make([]float64, d)
			for j := range lo {
				lo[j], hi[j] = x[j], x[j]
			}
			if d > 2 {
				lo[2] = math.NaN()
			}
			return lo, hi
		}
		wantLo, wantHi := seed()
		for i := 1; i < rows; i++ {
			for j := 0; j < d; j++ {
				if v := x[i*ld+j]; v < wantLo[j] {
					wantLo[j] = v
				}
				if v := x[i*ld+j]; v > wantHi[j] {
					wantHi[j] = v
				}
			}
		}
		for _, b := range []Build{Baseline(), AVX2()} {
			lo, hi := seed()
			b.ColumnRange(rows-1, d, x[ld:], ld, lo, hi)
			for j := 0; j < d; j++ {
				require.Equal(t, math.Float64bits(wantLo[j]), math.Float64bits(lo[j]), "%s d=%d lo[%d] %g %g", b.Name(), d, j, wantLo[j], lo[j])
				require.Equal(t, math.Float64bits(wantHi[j]), math.Float64bits(hi[j]), "%s d=%d hi[%d]", b.Name(), d, j)
			}
			// No rows: lo and hi as they were, whatever x is.
			b.ColumnRange(0, d, nil, ld, lo, hi)
			for j := 0; j < d; j++ {
				require.Equal(t, math.Float64bits(wantLo[j]), math.Float64bits(lo[j]), "%s d=%d: no rows changed lo", b.Name(), d)
				require.Equal(t, math.Float64bits(wantHi[j]), math.Float64bits(hi[j]), "%s d=%d: no rows changed hi", b.Name(), d)
			}
		}
	}
}
