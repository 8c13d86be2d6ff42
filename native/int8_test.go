package native

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// Int8Map's kernels against exact integer distances: every (landmark,
// point) entry is exp(c·δ) of the exact squared distance in levels (or its
// square root), to the rounding of the exponential, for sizes that leave
// partial blocks of points, features and landmark rows, and for ranges
// that start and end inside blocks.
func TestInt8Map(t *testing.T) {
	const n, d, m = 200, 37, 13
	lev := make([][]uint8, n)
	seed := uint32(7)
	for i := range lev {
		lev[i] = make([]uint8, d)
		for a := range lev[i] {
			seed = seed*1664525 + 1013904223
			lev[i][a] = uint8(seed >> 24)
			if a%5 == 0 {
				lev[i][a] = 255 // the extremes of both operands
			} else if a%7 == 0 {
				lev[i][a] = 0
			}
		}
	}
	pts, err := PackInt8(n, d, func(i int, dst []uint8) { copy(dst, lev[i]) })
	require.NoError(t, err)
	require.Equal(t, 4, pts.Blocks())
	land := pts.NewInt8Landmarks(m, func(j int, dst []uint8) { copy(dst, lev[(j*31)%n]) })
	kernels := []Build{Baseline()}
	if HasInt8() {
		kernels = append(kernels, AVX2())
	}
	for _, laplace := range []bool{false, true} {
		c := -1.0 / 4e6
		if laplace {
			c = -1.0 / 400
		}
		for _, vnni := range kernels {
			for _, r := range [][2]int{{0, n}, {5, 190}, {64, 128}, {70, 71}} {
				lo, hi := r[0], r[1]
				out := make([]float64, m*(hi-lo))
				for i := range out {
					out[i] = -1
				}
				vnni.Int8Map(pts, land, lo, hi, c, laplace, out, hi-lo)
				out32 := make([]float32, m*(hi-lo))
				for i := range out32 {
					out32[i] = float32(0.25 * float64(1-2*(i%2)))
				}
				vnni.Int8MapAdd32(pts, land, lo, hi, c, laplace, out32, hi-lo)
				for j := 0; j < m; j++ {
					y := lev[(j*31)%n]
					for i := lo; i < hi; i++ {
						var sq int64
						for a, v := range lev[i] {
							e := int64(v) - int64(y[a])
							sq += e * e
						}
						dd := float64(sq)
						if laplace {
							dd = math.Sqrt(dd)
						}
						want := math.Exp(c * dd)
						got := out[j*(hi-lo)+i-lo]
						require.InDelta(t, want, got, 4e-16*want, "build %s laplace %v [%d,%d) landmark %d point %d", vnni.Name(), laplace, lo, hi, j, i)
						o := j*(hi-lo) + i - lo
						sum := want + 0.25*float64(1-2*(o%2))
						require.InDelta(t, sum, float64(out32[o]), 0x1p-24*math.Abs(sum)+1e-15, "Add32 build %s landmark %d point %d", vnni.Name(), j, i)
					}
				}
			}
		}
	}
	_, err = PackInt8(0, 3, nil)
	require.Error(t, err)
	_, err = PackInt8(3, Int8MaxDim+1, nil)
	require.Error(t, err)
	require.Panics(t, func() { AVX2().Int8Map(pts, land, 0, n, 1, false, make([]float64, m*n), n) })
	require.Panics(t, func() { AVX2().Int8Map(pts, land, 0, n+1, -1, false, make([]float64, m*(n+1)), n+1) })
	require.Panics(t, func() { AVX2().Int8MapAdd32(pts, land, 0, n, -1, false, make([]float32, m*n-1), n) })
}

// Snap8 on both builds: levels and the shifted squared norm of rows on an
// 8-bit grid; −1 for an entry off the grid, beyond 255 or below 0, NaN or
// infinite.
func TestSnap8(t *testing.T) {
	const d, step = 9, 1.0 / 255
	lo := []float64{0, 0.5, -1, 0, 0, 0, 2, 0, 0}
	tol := make([]float64, d)
	for j := range tol {
		tol[j] = 1e-13
	}
	mid := []int32{127, 10, 0, 127, 3, 127, 127, 1, 50}
	levels := []int{0, 255, 7, 128, 3, 254, 1, 2, 100}
	v := make([]float64, d)
	var want int64
	for j, k := range levels {
		v[j] = lo[j] + float64(k)*step
		want += int64(k-int(mid[j])) * int64(k-int(mid[j]))
	}
	for _, b := range Builds() {
		dst := make([]uint8, d)
		require.Equal(t, want, b.Snap8(v, lo, tol, mid, step, 1/step, dst), b.Name())
		for j, k := range levels {
			require.Equal(t, uint8(k), dst[j])
		}
		for _, bad := range []float64{lo[5] + 10.4*step, lo[3] + 256*step, lo[4] - step, math.NaN(), math.Inf(1)} {
			w := append([]float64(nil), v...)
			w[5] = bad
			require.Equal(t, int64(-1), b.Snap8(w, lo, tol, mid, step, 1/step, dst), "%s: %g", b.Name(), bad)
		}
	}
	require.Panics(t, func() { AVX2().Snap8(v, lo[:3], tol, mid, step, 1/step, make([]uint8, d)) })
}
