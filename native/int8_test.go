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
				vnni.Int8Map32(pts, land, lo, hi, c, laplace, out32, hi-lo)
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
						require.Equal(t, float32(got), out32[j*(hi-lo)+i-lo], "Map32 build %s landmark %d point %d", vnni.Name(), j, i)
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
	require.Panics(t, func() { AVX2().Int8Map32(pts, land, 0, n, -1, false, make([]float32, m*n-1), n) })
}

// PackSnap8 packs rows of grid values as PackInt8 packs their levels
// (same levels, sums and norms, so the same kernel), with Snap8's shifted
// norms and, when asked, the shifted integers as float32; nil when a row
// is off the grid.
func TestPackSnap8(t *testing.T) {
	const n, d, step = 130, 11, 0.5
	lo := make([]float64, d)
	tol := make([]float64, d)
	mid := make([]int32, d)
	for j := range lo {
		lo[j], tol[j], mid[j] = float64(j)-3, 1e-12, int32(j*20)
	}
	lev := func(i, j int) int { return (i*31 + j*17) % 256 }
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = make([]float64, d)
		for j := range rows[i] {
			rows[i][j] = lo[j] + float64(lev(i, j))*step
		}
	}
	want, err := PackInt8(n, d, func(i int, dst []uint8) {
		for j := range dst {
			dst[j] = uint8(lev(i, j))
		}
	})
	require.NoError(t, err)
	for _, b := range Builds() {
		x32 := make([]float32, n*d)
		p, shifted := b.PackSnap8(n, d, func(i int) []float64 { return rows[i] }, lo, tol, mid, step, x32)
		require.NotNil(t, p, b.Name())
		bare, _ := b.PackSnap8(n, d, func(i int) []float64 { return rows[i] }, lo, tol, mid, step, nil)
		require.Equal(t, p.packed, bare.packed)
		require.Equal(t, want.packed, p.packed)
		require.Equal(t, want.sums, p.sums)
		require.Equal(t, want.norms, p.norms)
		for i := 0; i < n; i++ {
			var sq int64
			for j := 0; j < d; j++ {
				c := int64(lev(i, j)) - int64(mid[j])
				sq += c * c
				require.Equal(t, float32(c), x32[i*d+j], "%s: x32[%d, %d]", b.Name(), i, j)
			}
			require.Equal(t, float64(sq), shifted[i])
		}
		for _, v := range []float64{lo[4] + 10.3*step, lo[4] + 256*step, lo[4] - step, math.NaN(), math.Inf(1)} {
			bad := append([]float64(nil), rows[77]...)
			bad[4] = v
			p, _ = b.PackSnap8(n, d, func(i int) []float64 {
				if i == 77 {
					return bad
				}
				return rows[i]
			}, lo, tol, mid, step, x32)
			require.Nil(t, p, "%s: %g", b.Name(), v)
		}
	}
}

// Landmarks and LandmarksOf read from the packing are the landmarks
// NewInt8Landmarks makes of the same levels (every remainder of D mod 4:
// the padding stays zero), for ranges inside one block and across blocks
// and for points in any order; Levels reads each point back.
func TestInt8PointsLandmarks(t *testing.T) {
	for _, d := range []int{1, 2, 3, 4, 5, 11, 784} {
		const n = 150
		lev := func(i, j int) uint8 { return uint8((i*37 + j*101 + i*j) % 256) }
		p, err := PackInt8(n, d, func(i int, dst []uint8) {
			for j := range dst {
				dst[j] = lev(i, j)
			}
		})
		require.NoError(t, err)
		var reused *Int8Landmarks
		for _, r := range [][2]int{{0, 1}, {0, n}, {3, 70}, {63, 65}, {128, 150}, {149, 150}} {
			got := p.Landmarks(r[0], r[1])
			want := p.NewInt8Landmarks(r[1]-r[0], func(j int, dst []uint8) {
				for a := range dst {
					dst[a] = lev(r[0]+j, a)
				}
			})
			require.Equal(t, want.T, got.T, "d %d range %v", d, r)
			require.Equal(t, want.rows, got.rows, "d %d range %v", d, r)
			require.Equal(t, want.norms, got.norms, "d %d range %v", d, r)
			// In the storage of the previous range (larger, then
			// smaller: the padding rows zero again).
			prev := reused
			reused = p.LandmarksIn(reused, r[0], r[1])
			if prev != nil && cap(prev.rows) >= len(want.rows) {
				require.Same(t, prev, reused, "d %d range %v: the storage reused", d, r)
			}
			require.Equal(t, want.T, reused.T, "d %d range %v", d, r)
			require.Equal(t, want.rows, reused.rows, "d %d range %v (reused)", d, r)
			require.Equal(t, want.norms, reused.norms, "d %d range %v (reused)", d, r)
		}
		require.Panics(t, func() { p.LandmarksIn(nil, 5, 5) })
		require.Panics(t, func() { p.Landmarks(5, 5) })
		require.Panics(t, func() { p.Landmarks(0, n+1) })
		// Any points in any order, repeats included; and Levels gives
		// each point's levels back.
		idx := []int{149, 0, 64, 63, 7, 7, 128, 100}
		got := p.LandmarksOf(idx)
		want := p.NewInt8Landmarks(len(idx), func(j int, dst []uint8) {
			for a := range dst {
				dst[a] = lev(idx[j], a)
			}
		})
		require.Equal(t, want.rows, got.rows, "d %d", d)
		require.Equal(t, want.norms, got.norms, "d %d", d)
		buf := make([]uint8, d+1)
		for i := 0; i < n; i++ {
			buf[d] = 77
			p.Levels(i, buf)
			for a := 0; a < d; a++ {
				require.Equal(t, lev(i, a), buf[a], "d %d point %d level %d", d, i, a)
			}
			require.Equal(t, uint8(77), buf[d], "d %d: Levels wrote past d", d)
		}
		// A dst of exactly d levels is enough; one short, or a point out
		// of range, panics.
		exact := make([]uint8, d)
		p.Levels(n-1, exact)
		for a := 0; a < d; a++ {
			require.Equal(t, lev(n-1, a), exact[a], "d %d: exact dst, level %d", d, a)
		}
		require.Panics(t, func() { p.Levels(0, exact[:d-1]) })
		require.Panics(t, func() { p.Levels(n, exact) })
		require.Panics(t, func() { p.Levels(-1, exact) })
		require.Panics(t, func() { p.LandmarksOf(nil) })
		require.Panics(t, func() { p.LandmarksOf([]int{0, n}) })
		require.Panics(t, func() { p.LandmarksOf([]int{-1}) })
	}
}
