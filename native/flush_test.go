package native

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// flushed is what every float32 store of the maps gives a value v:
// float32(v), or 0 when |v| is below float32's smallest normal.
func flushed(v float64) float32 {
	if math.Abs(v) < 0x1p-126 {
		return 0
	}
	return float32(v)
}

// The maps that store float32 (RBFMap32To32, Int8Map32, Narrow) never store
// a subnormal: values below 2⁻¹²⁶ become 0, every other value is the
// float64 result rounded, on every build (vector bodies and tails).
func TestFloat32StoresHaveNoSubnormals(t *testing.T) {
	const m, n = 3, 23
	builds := []Build{Baseline(), AVX2()}
	// Squared distances spanning exp(−c·d) from 1 down past 2⁻¹⁴⁹.
	ni, nj := make([]float64, m), make([]float64, n)
	src := make([]float32, m*n)
	for i := 0; i < m; i++ {
		ni[i] = float64(10 * i)
		for j := 0; j < n; j++ {
			nj[j] = float64(9 * j)
			src[i*n+j] = 0
		}
	}
	const c = -0.5
	for _, b := range builds {
		for _, laplace := range []bool{false, true} {
			ref := make([]float64, m*n)
			b.RBFMap32(m, n, src, n, ref, n, ni, nj, c, laplace)
			out := make([]float32, m*n)
			b.RBFMap32To32(m, n, src, n, out, n, ni, nj, c, laplace)
			sub := 0
			for i, v := range out {
				require.Equal(t, flushed(ref[i]), v, "RBFMap32To32 entry %d (ref %g)", i, ref[i])
				if ref[i] > 0 && ref[i] < 0x1p-126 {
					sub++
				}
			}
			if !laplace {
				require.Positive(t, sub, "the test needs values in the subnormal range")
			}
		}
		vals := []float64{1, -1, 0x1p-126, -0x1p-126, 0x1p-127, -0x1p-130, 1e-40, 3e-45, 0, 0.5, 1e-38, 2e-38}
		dst := make([]float32, len(vals))
		b.Narrow(1, len(vals), vals, len(vals), dst, len(vals))
		for i, v := range vals {
			require.Equal(t, flushed(v), dst[i], "Narrow(%g)", v)
		}
		// As one column of strided rows (stride 3 in, 2 out), and no
		// columns at all.
		col := make([]float64, 3*len(vals))
		for i, v := range vals {
			col[3*i] = v
		}
		dst2 := make([]float32, 2*len(vals))
		b.Narrow(len(vals), 1, col, 3, dst2, 2)
		for i, v := range vals {
			require.Equal(t, flushed(v), dst2[2*i], "Narrow(%g) in a column", v)
			require.Zero(t, dst2[2*i+1])
		}
		b.Narrow(len(vals), 0, nil, 1, nil, 1)
	}
	// Int8Map32: one landmark against points at growing distances.
	const d = 8
	lev := func(i int, dst []uint8) {
		for a := range dst {
			dst[a] = uint8(min(255, 12*i))
		}
	}
	const np = 70
	pts, err := PackInt8(np, d, lev)
	require.NoError(t, err)
	land := pts.NewInt8Landmarks(1, func(_ int, dst []uint8) { lev(0, dst) })
	kernels := []Build{Baseline()}
	if HasInt8() {
		kernels = append(kernels, AVX2())
	}
	for _, b := range kernels {
		out := make([]float64, np)
		b.Int8Map(pts, land, 0, np, -1e-3, false, out, np)
		out32 := make([]float32, np)
		b.Int8Map32(pts, land, 0, np, -1e-3, false, out32, np)
		zeros := 0
		for i := range out {
			require.Equal(t, flushed(out[i]), out32[i], "Int8Map32 point %d (%g)", i, out[i])
			if out32[i] == 0 {
				zeros++
			}
		}
		require.Positive(t, zeros, "the test needs values below 2⁻¹²⁶")
	}
}
