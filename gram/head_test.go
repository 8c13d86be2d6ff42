package gram

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/exp/rand"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// headData returns n×d pixel rows (pixelData of pixelInts, scaled by
// 1/255) whose rows from h on are noisy copies of earlier ones (shifted
// by N(0, 0.02²) in every entry, so off the grid), with the integers.
func headData(seed uint64, n, d, h int) (*mat.Dense, []int64) {
	k := pixelInts(seed, n, d)
	for j := 0; j < d; j++ {
		k[j], k[d+j] = 255, 0 // both ends of every column's range
	}
	x := pixelData(k, n, d, false)
	rng := rand.New(rand.NewSource(seed + 1))
	for i := h; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, x.At(i, j)+0.02*rng.NormFloat64())
		}
	}
	return x, k
}

// Data whose first rows only lie on an 8-bit grid: KernelRows finds the
// head exactly where the grid ends, computes the entries among its rows
// from the exact integer distances and every other entry as the source's
// products do, within their entry bound (float64 and float32, Gaussian
// and Laplace, rectangles across the head's end, the SSE2 build as the
// AVX2 one), and leaves its input unchanged; a head shorter than
// headMinRows, the integer path off, or a map of no distance give no
// head.
func TestKernelRowsIntegerHead(t *testing.T) {
	const n, d, h = 1400, 29, 1100
	x, k := headData(3, n, d, h)
	before := mat.DenseCopyOf(x)
	for _, prec := range []ProductPrecision{ProductsFloat64, ProductsFloat32} {
		for _, kern := range []Kernel{{Kind: Gaussian, Sigma: 1.5}, {Kind: Laplace, Sigma: 3}} {
			for _, baseline := range []bool{false, true} {
				o := GramOptions{Int8: GridOn, Products: prec, Baseline: baseline}
				kr, err := NewKernelRows(x, kern.ElementMap(d), o)
				require.NoError(t, err)
				require.Equal(t, h, kr.IntegerHead(), "%v %v: the head ends where the grid does", prec, kern.Kind)
				require.False(t, kr.Int8())
				plain, err := NewKernelRows(x, kern.ElementMap(d), GramOptions{Int8: GridOff, Products: prec, Baseline: baseline})
				require.NoError(t, err)
				require.Equal(t, 0, plain.IntegerHead())
				require.Equal(t, plain.Bytes()+kr.head.i8.Bytes()+8*int64(h), kr.Bytes(), "the head's levels and norms are counted")
				for _, r := range [][4]int{{0, 100, 0, n}, {1000, 1300, 900, 1400}, {1050, 1100, 1099, 1101}, {1200, 1400, 0, 64}, {5, 6, 1100, 1400}} {
					i0, i1, j0, j1 := r[0], r[1], r[2], r[3]
					ld := j1 - j0 + 3
					got := make([]float64, (i1-i0)*ld)
					ref := make([]float64, (i1-i0)*ld)
					kr.Block(got, ld, i0, i1, j0, j1)
					plain.Block(ref, ld, i0, i1, j0, j1)
					for i := i0; i < i1; i++ {
						for j := j0; j < j1; j++ {
							v, w := got[(i-i0)*ld+j-j0], ref[(i-i0)*ld+j-j0]
							switch {
							case i == j:
								require.Equal(t, 1.0, v)
							case i < h && j < h:
								want := exactKernel(kern, sqDist(k[i*d:(i+1)*d], k[j*d:(j+1)*d]))
								require.InDelta(t, want, v, 4e-15*want, "head (%d,%d) %v %v", i, j, prec, kern.Kind)
								require.InDelta(t, w, v, plain.EntryBound(i, j, w)+1e-12*w, "head (%d,%d) against the source's products", i, j)
							default:
								// The source's products on another block of
								// points: OpenBLAS's kernels may round an entry
								// differently by the block's shape (its Haswell
								// kernels do), within each one's entry bound.
								require.InDelta(t, w, v, 2*plain.EntryBound(i, j, w), "(%d,%d) off the head: the source's products", i, j)
							}
						}
					}
				}
			}
		}
	}
	require.True(t, mat.Equal(before, x), "finding the head modified the data")

	gauss := Kernel{Kind: Gaussian, Sigma: 1.5}
	short, _ := headData(3, n, d, headMinRows-1)
	kr, err := NewKernelRows(short, gauss.ElementMap(d), GramOptions{Int8: GridOn})
	require.NoError(t, err)
	require.Equal(t, 0, kr.IntegerHead(), "a head shorter than headMinRows")
	kr, err = NewKernelRows(x, Kernel{Kind: Polynomial, Degree: 2, Gamma: 1}.ElementMap(d), GramOptions{Int8: GridOn})
	require.NoError(t, err)
	require.Equal(t, 0, kr.IntegerHead(), "not a distance kernel")
	// Data on the grid throughout: the whole source is integer (float64
	// products) or the head is every row (float32 products, which do not
	// look for a grid).
	all, _ := headData(3, n, d, n)
	kr, err = NewKernelRows(all, gauss.ElementMap(d), GramOptions{Int8: GridOn, Grid: GridOn})
	require.NoError(t, err)
	require.True(t, kr.Int8())
	require.Equal(t, n, kr.IntegerHead())
	kr, err = NewKernelRows(all, gauss.ElementMap(d), GramOptions{Int8: GridOn, Products: ProductsFloat32})
	require.NoError(t, err)
	require.False(t, kr.Int8())
	require.Equal(t, n, kr.IntegerHead())
}

// firstOff finds the first row with an entry off the lattice, at any
// number of workers, and n when there is none.
func TestGridFirstOff(t *testing.T) {
	const n, d = 3000, 7
	x, _ := headData(9, n, d, n)
	g := gridOf(blasOf(x), 1, GramOptions{}.build())
	require.NotNil(t, g)
	for _, workers := range []int{1, 2, 5} {
		require.Equal(t, n, g.firstOff(blasOf(x), workers))
		for _, at := range []int{2999, 1777, 3, 0} {
			y := mat.DenseCopyOf(x)
			y.Set(at, 4, y.At(at, 4)+0.3/255)
			y.Set(min(at+5, n-1), 2, math.NaN())
			require.Equal(t, at, g.firstOff(blasOf(y), workers), "workers %d", workers)
		}
	}
}

// blasOf is x's rows as a blas64.General.
func blasOf(x *mat.Dense) blas64.General {
	raw := x.RawMatrix()
	return blas64.General{Rows: raw.Rows, Cols: raw.Cols, Stride: raw.Stride, Data: raw.Data}
}

// firstOff's tolerance is the column's plus 16u·(|v| + |lo|) of the entry
// itself: an entry far beyond the head's range, on the lattice but for
// 12u·|v| (a few of its own ulps), is on it, and one off by 40u·|v| is
// not.
func TestGridFirstOffOwnRounding(t *testing.T) {
	const n, d = 400, 7
	const u = 1.0 / (1 << 53)
	x, _ := headData(9, n, d, n)
	g := gridOf(blasOf(x), 1, GramOptions{}.build())
	require.NotNil(t, g)
	for _, c := range []struct {
		rel  float64
		want int
	}{{12, n}, {40, 250}} {
		y := mat.DenseCopyOf(x)
		v := g.lo[4] + g.step*1e6
		y.Set(250, 4, v+c.rel*u*math.Abs(v))
		require.Equal(t, c.want, g.firstOff(blasOf(y), 2), "off by %g·u·|v|", c.rel)
	}
}
