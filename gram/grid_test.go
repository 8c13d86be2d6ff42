package gram

import (
	"math"
	"sync"
	"testing"

	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/native"
	"github.com/kdual/kdual/paths"
	"github.com/kdual/kdual/status"

	"github.com/stretchr/testify/require"
	"golang.org/x/exp/rand"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// pixelInts returns n×d integers in [0, 255] (seeded), mostly dark with
// bright patches like Fashion-MNIST.
func pixelInts(seed uint64, n, d int) []int64 {
	rng := rand.New(rand.NewSource(seed))
	k := make([]int64, n*d)
	for i := range k {
		if rng.Float64() >= 0.4 {
			k[i] = int64(rng.Intn(256))
		}
	}
	return k
}

// pixelData returns the integers as 8-bit images are usually given,
// scaled by 1/255; when centred, the columns' means are subtracted
// afterwards in float64 (then on the grid only to rounding).
func pixelData(k []int64, n, d int, centred bool) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for j := 0; j < d; j++ {
		var s int64
		for i := 0; i < n; i++ {
			s += k[i*d+j]
		}
		m := 0.0
		if centred {
			m = float64(s) / float64(n) / 255
		}
		for i := 0; i < n; i++ {
			x.Set(i, j, float64(k[i*d+j])/255-m)
		}
	}
	return x
}

// exactKernel is the kernel of two pixel rows from their integer squared
// distance d2 (exact), scaled by 1/255².
func exactKernel(k Kernel, d2 int64) float64 {
	r := float64(d2) / (255 * 255)
	if k.Kind == Laplace {
		return math.Exp(-math.Sqrt(r) / k.Sigma)
	}
	return math.Exp(-r / (2 * k.Sigma * k.Sigma))
}

// On data that are 8-bit pixels over 255 — as given, or centred by their
// column means — the engine finds the grid, its float32 products are the
// exact integer inner products (checked against int64 arithmetic, with
// rows of extreme norm), and every entry of the Gram matrix, its tiles,
// KernelRows and the cross kernel is within a few ulp of the kernel of
// the exact integer distances; the float64 path is within its own
// rounding of the same. The input is not modified.
func TestGridProductsExact(t *testing.T) {
	const n, d = 530, 784
	for _, centred := range []bool{false, true} {
		k := pixelInts(7, n, d)
		// Extreme rows: all 255, all 0, alternating — the largest norms
		// the shifted integers can have (784·128² < 2²⁴).
		for j := 0; j < d; j++ {
			for r, v := range []int64{255, 0, 255 * int64(j%2)} {
				k[r*d+j] = v
			}
		}
		x := pixelData(k, n, d, centred)
		before := mat.DenseCopyOf(x)
		raw := x.RawMatrix()
		g, x32, norms := findGrid(blas64.General{Rows: n, Cols: d, Stride: raw.Stride, Data: raw.Data}, 0)
		require.True(t, g != nil, "centred=%v: the grid is not found", centred)
		require.InDelta(t, 1.0/255, g.step, 1e-17)
		for i := 0; i < n; i++ {
			var sq int64
			for j := 0; j < d; j++ {
				// Row 1 is all zeros: the column minimum is level 0.
				v := int64(x32[i*d+j])
				require.Equal(t, k[i*d+j]-int64(g.mid[j]), v, "entry (%d,%d)", i, j)
				sq += v * v
			}
			require.Equal(t, float64(sq), norms[i])
			require.Less(t, sq, int64(gridNormLimit))
		}
		// The float32 products are the exact integer ones.
		s, _ := newGramSource(x, Kernel{Kind: Gaussian, Sigma: 3}.ElementMap(d), GramOptions{Grid: GridOn}, nil)
		require.NotNil(t, s.grid)
		out := make([]float64, 40*n)
		s.products(out, n, 0, 40, 0, n, false)
		for i := 0; i < 40; i++ {
			for j := 0; j < n; j++ {
				var dot int64
				for a := 0; a < d; a++ {
					dot += int64(x32[i*d+a]) * int64(x32[j*d+a])
				}
				require.Equal(t, float64(dot), out[i*n+j], "product (%d,%d)", i, j)
			}
		}
		dist := make([]int64, n*n) // exact integer squared distances
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				var d2 int64
				for a := 0; a < d; a++ {
					e := k[i*d+a] - k[j*d+a]
					d2 += e * e
				}
				dist[i*n+j], dist[j*n+i] = d2, d2
			}
		}
		for _, kern := range []Kernel{{Kind: Gaussian, Sigma: 3}, {Kind: Gaussian, Sigma: 11.5}, {Kind: Laplace, Sigma: 0.6822}, {Kind: Laplace, Sigma: 20}} {
			on, err := GramWith(x, kern, GramOptions{Grid: GridOn})
			require.NoError(t, err)
			off, err := GramWith(x, kern, GramOptions{Grid: GridOff})
			require.NoError(t, err)
			tiles, err := GramTiles32(x, kern.ElementMap(d), GramOptions{Grid: GridOn})
			require.NoError(t, err)
			require.Equal(t, 1.0/(1<<24), tiles.EntryRel, "exact products add nothing to the storage bound")
			kr, err := NewKernelRows(x, kern.ElementMap(d), GramOptions{Grid: GridOn})
			require.NoError(t, err)
			require.True(t, kr.OnGrid())
			require.Equal(t, ProductsFloat64, kr.Products())
			require.Zero(t, kr.MaxEntryRel())
			block := make([]float64, 50*n)
			kr.Block(block, n, 100, 150, 0, n)
			worstOn, worstOff, worstTiles, worstBlock := 0.0, 0.0, 0.0, 0.0
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					want := exactKernel(kern, dist[i*n+j])
					worstOn = math.Max(worstOn, math.Abs(on.At(i, j)-want)/want)
					worstOff = math.Max(worstOff, math.Abs(off.At(i, j)-want)/want)
					worstTiles = math.Max(worstTiles, math.Abs(tiles.At(i, j)-want)/want)
					if i >= 100 && i < 150 {
						worstBlock = math.Max(worstBlock, math.Abs(block[(i-100)*n+j]-on.At(i, j))/on.At(i, j))
					}
				}
			}
			tiles.Free()
			require.LessOrEqual(t, worstTiles, tiles.EntryRel+1e-13)
			require.LessOrEqual(t, worstBlock, 4e-16)
			// The map's exponential and the one rounding of c²·D: a few
			// ulp of the exponent (|C·d²| ≤ 60 here).
			require.Less(t, worstOn, 3e-14, "%v σ=%g centred=%v: grid path", kern.Kind, kern.Sigma, centred)
			require.Less(t, worstOff, 1e-11, "%v σ=%g centred=%v: float64 path", kern.Kind, kern.Sigma, centred)
			// Test points on the grid (exact products) and off it (float64).
			for _, shifted := range []bool{false, true} {
				y := mat.DenseCopyOf(x.Slice(200, 230, 0, d))
				if shifted {
					y.Apply(func(_, _ int, v float64) float64 { return v + 0.3/255 }, y)
				}
				c := make([]float64, 30*n)
				require.NoError(t, kr.Cross(c, n, y, 0, n))
				cg, err := CrossGramMapWith(y, x, kern.ElementMap(d), GramOptions{Grid: GridOn})
				require.NoError(t, err)
				// Off the grid the products are float64 ones of norms up
				// to 784·128² in grid units: near points (entries near 1)
				// cancel to about 1e-10 relative, as on the float64 path.
				tol := 1e-13
				if shifted {
					tol = 1e-10
				}
				worst := 0.0
				for i := 0; i < 30; i++ {
					for j := 0; j < n; j++ {
						want := kernelFormula(kern, y.RawRowView(i), x.RawRowView(j))
						worst = math.Max(worst, math.Max(math.Abs(c[i*n+j]-want), math.Abs(cg.At(i, j)-want))/want)
					}
				}
				require.LessOrEqual(t, worst, tol, "Cross and CrossGram, shifted=%v", shifted)
			}
		}
		require.True(t, mat.Equal(before, x), "the grid path modified its input")
	}
}

// findGrid refuses data that are not on a grid, or whose shifted integers
// could make a float32 product inexact, and the engine then computes the
// same kernel as with the grid switched off.
func TestGridRejects(t *testing.T) {
	general := func(x *mat.Dense) blas64.General {
		raw := x.RawMatrix()
		r, c := x.Dims()
		return blas64.General{Rows: r, Cols: c, Stride: raw.Stride, Data: raw.Data}
	}
	const n = 300
	// Rows 127 or 128 levels from the middle over 1100 columns:
	// 1100·127² ≥ 2²⁴ (row 0 puts level 1 in every column).
	wide := make([]int64, n*1100)
	for i := 0; i < n; i++ {
		for j := 0; j < 1100; j++ {
			wide[i*1100+j] = 255 * int64((i+j)%2)
			if i == 0 {
				wide[j] = 1
			}
		}
	}
	nudged := pixelData(pixelInts(3, n, 40), n, 40, false)
	nudged.Set(217, 13, nudged.At(217, 13)+1e-9)
	fine := mat.NewDense(n, 5, nil) // a grid of 1e-5: too many levels
	rng := rand.New(rand.NewSource(9))
	for i := range fine.RawMatrix().Data {
		fine.RawMatrix().Data[i] = float64(rng.Intn(100000)) / 100000
	}
	mixed := pixelData(pixelInts(4, n, 6), n, 6, false) // one column on a grid of 1/7
	for i := 0; i < n; i++ {
		mixed.Set(i, 5, float64(rng.Intn(7))/7)
	}
	cases := map[string]*mat.Dense{
		"random":        randData(5, n, 8),
		"norm ≥ 2^24":   pixelData(wide, n, 1100, false),
		"one entry off": nudged,
		"grid too fine": fine,
		"two grids":     mixed,
		"constant":      mat.NewDense(n, 3, nil),
		"one row":       pixelData(pixelInts(5, 1, 10), 1, 10, false),
	}
	// The same rows over 1000 columns (1000·128² < 2²⁴) are on the grid.
	g, _, _ := findGrid(general(pixelData(wide[:n*1000], n, 1000, false)), 0)
	require.True(t, g != nil, "1000 columns")
	for name, x := range cases {
		g, _, _ := findGrid(general(x), 0)
		require.True(t, g == nil, name)
		_, d := x.Dims()
		kern := Kernel{Kind: Gaussian, Sigma: 0.5 * math.Sqrt(float64(d))}
		on, err := GramWith(x, kern, GramOptions{Grid: GridOn})
		require.NoError(t, err)
		off, err := GramWith(x, kern, GramOptions{Grid: GridOff})
		require.NoError(t, err)
		require.True(t, mat.Equal(on, off), name)
	}
	// Float32 products never take the grid: their bound is float32's.
	x := pixelData(pixelInts(6, n, 30), n, 30, false)
	kr, err := NewKernelRows(x, Kernel{Kind: Gaussian, Sigma: 3}.ElementMap(30), GramOptions{Grid: GridOn, Products: ProductsFloat32})
	require.NoError(t, err)
	require.False(t, kr.OnGrid())
	require.Equal(t, ProductsFloat32, kr.Products())
	kr, err = NewKernelRows(x, Kernel{Kind: Gaussian, Sigma: 3}.ElementMap(30), GramOptions{Grid: GridOff})
	require.NoError(t, err)
	require.False(t, kr.OnGrid())
	kr, err = NewKernelRows(x, Kernel{Kind: Polynomial, Degree: 2, Coef0: 1}.ElementMap(30), GramOptions{Grid: GridOn})
	require.NoError(t, err)
	require.False(t, kr.OnGrid(), "only distance kernels")
}

// With float32 products (on the grid, or asked for, for a distance kernel
// and for the polynomial one, which takes sgemm's panels unfused)
// GramOptions.UpperOnly still leaves the strict lower triangle zero (sgemm
// fills the diagonal blocks' lower halves), both triangles agree
// otherwise, and a distance kernel's diagonal is exactly 1 (float32
// products of a row with itself need not cancel exactly).
func TestGridUpperOnly(t *testing.T) {
	x := pixelData(pixelInts(8, 600, 20), 600, 20, true)
	for _, c := range []struct {
		k Kernel
		o GramOptions
	}{
		{Kernel{Kind: Laplace, Sigma: 3}, GramOptions{Grid: GridOn}},
		{Kernel{Kind: Gaussian, Sigma: 0.5}, GramOptions{Products: ProductsFloat32}},
		{Kernel{Kind: Polynomial, Degree: 2, Gamma: 0.3, Coef0: 1}, GramOptions{Products: ProductsFloat32}},
	} {
		full, err := GramWith(x, c.k, c.o)
		require.NoError(t, err)
		o := c.o
		o.UpperOnly = true
		up, err := GramWith(x, c.k, o)
		require.NoError(t, err)
		fr, ur := full.RawSymmetric(), up.RawSymmetric()
		for i := 0; i < 600; i++ {
			if c.k.Kind != Polynomial {
				require.Equal(t, 1.0, fr.Data[i*600+i], "%v diagonal", c.k.Kind)
			}
			for j := 0; j < 600; j++ {
				if j >= i {
					require.Equal(t, fr.Data[i*600+j], ur.Data[i*600+j])
				} else {
					require.Zero(t, ur.Data[i*600+j], "%v (%d,%d)", c.k.Kind, i, j)
					require.Equal(t, fr.Data[j*600+i], fr.Data[i*600+j])
				}
			}
		}
	}
}

// symmetricDiagTile copies the upper triangle over whatever the lower one
// holds and sets the diagonal to 1, in the used rows only.
func TestSymmetricDiagTile(t *testing.T) {
	const tt, rows = 6, 4
	tile := make([]float32, tt*tt)
	for i := range tile {
		tile[i] = float32(i)
	}
	symmetricDiagTile(tile, tt, rows)
	for r := 0; r < tt; r++ {
		for c := 0; c < tt; c++ {
			want := float32(r*tt + c)
			switch {
			case r < rows && r == c:
				want = 1
			case r < rows && c < r:
				want = float32(c*tt + r)
			}
			require.Equal(t, want, tile[r*tt+c], "(%d,%d)", r, c)
		}
	}
}

// GridAuto takes the grid exactly when the paths in force say so.
func TestGridAutoFollowsPaths(t *testing.T) {
	x := pixelData(pixelInts(3, gridMinRows, 10), gridMinRows, 10, false)
	em := Kernel{Kind: Gaussian, Sigma: 2}.ElementMap(10)
	kr, err := NewKernelRows(x, em, GramOptions{})
	require.NoError(t, err)
	require.Equal(t, paths.Current().Grid, kr.OnGrid())
	defer paths.Reset()
	for _, on := range []bool{false, true} {
		p := paths.Current()
		p.Grid = on
		require.NoError(t, paths.Set(p))
		kr, err := NewKernelRows(x, em, GramOptions{})
		require.NoError(t, err)
		require.Equal(t, on, kr.OnGrid())
		kr, err = NewKernelRows(x, em, GramOptions{Grid: GridOn})
		require.NoError(t, err)
		require.True(t, kr.OnGrid(), "GridOn whatever the paths")
	}
}

// GramOptions.SingleBlocks switches the float32 tiles' block arithmetic to
// float32 with float64 products too; without it only float32 products do.
func TestGramTiles32SingleBlocksAsked(t *testing.T) {
	x := pixelData(pixelInts(2, 300, 12), 300, 12, false)
	em := Kernel{Kind: Gaussian, Sigma: 2}.ElementMap(12)
	for _, c := range []struct {
		o    GramOptions
		want bool
	}{
		{GramOptions{}, false},
		{GramOptions{SingleBlocks: true}, true},
		{GramOptions{SingleBlocks: true, Grid: GridOff}, true},
		{GramOptions{Products: ProductsFloat32}, true},
	} {
		s, err := GramTiles32(x, em, c.o)
		require.NoError(t, err)
		require.Equal(t, c.want, s.SingleBlocks, "%+v", c.o)
		s.Free()
	}
}

// Kernel rows of 8-bit data by exact integer products
// (NewKernelRowsInt8, native.Int8Map): on pixels over 255 — as given or
// centred — every entry of Block (the data's own rows) and of Cross
// (new points on the grid) is within a few ulp of the kernel of the exact
// integer distances, on the VNNI kernel and on the portable loop; points
// beyond the data's range or off the grid fall back to float32 integers or
// float64 products and stay as accurate as those paths. Data that are not
// 8-bit, or Int8 off, give nil.
func TestKernelRowsInt8(t *testing.T) {
	const n, d = 300, 101
	k := pixelInts(11, n, d)
	for j := 0; j < d; j++ {
		k[j], k[d+j] = 255, 0 // both ends of every column's range
	}
	for _, centred := range []bool{false, true} {
		x := pixelData(k, n, d, centred)
		before := mat.DenseCopyOf(x)
		for _, baseline := range []bool{false, true} {
			for _, kern := range []Kernel{{Kind: Gaussian, Sigma: 2.5}, {Kind: Laplace, Sigma: 0.7}} {
				o := GramOptions{Int8: GridOn, Baseline: baseline}
				kr, err := NewKernelRowsInt8(x, kern.ElementMap(d), o)
				require.NoError(t, err)
				require.NotNil(t, kr, "centred=%v: the 8-bit grid is not found", centred)
				require.True(t, kr.Int8())
				require.True(t, kr.OnGrid())
				require.Equal(t, ProductsFloat64, kr.Products())
				require.Nil(t, kr.s.x32, "the integer path keeps no float32 copy")
				block := make([]float64, 70*n)
				kr.Block(block, n, 13, 83, 0, n) // rows and points inside packed blocks
				for i := 13; i < 83; i++ {
					for j := 0; j < n; j++ {
						want := exactKernel(kern, sqDist(k[i*d:(i+1)*d], k[j*d:(j+1)*d]))
						if i == j {
							want = 1
						}
						require.InDelta(t, want, block[(i-13)*n+j], 4e-15*want, "Block (%d,%d) %v baseline=%v", i, j, kern.Kind, baseline)
					}
				}
				// The kernel among scattered rows, and rows added to float32.
				idx := []int{5, 250, 13, 99, 299}
				am := make([]float64, len(idx)*len(idx))
				require.True(t, kr.Among(idx, am))
				add := make([]float32, 2*n+3)
				for i := range add {
					add[i] = 0.5
				}
				require.True(t, kr.Rows32(idx[1:3], add, n+3))
				for a, i := range idx {
					for b, j := range idx {
						want := exactKernel(kern, sqDist(k[i*d:(i+1)*d], k[j*d:(j+1)*d]))
						require.InDelta(t, want, am[a*len(idx)+b], 4e-15*want, "Among (%d,%d)", i, j)
					}
				}
				for a, i := range idx[1:3] {
					for j := 0; j < n; j++ {
						want := exactKernel(kern, sqDist(k[i*d:(i+1)*d], k[j*d:(j+1)*d]))
						require.InDelta(t, want, float64(add[a*(n+3)+j]), 0x1p-24*want, "Rows32 (%d,%d)", i, j)
					}
				}
				require.Equal(t, float32(0.5), add[n], "Rows32 wrote past a row")
				// New points: on the grid and in range (integer path),
				// one level beyond a column's range (float32 integers),
				// and off the grid (float64 values), each set apart (one
				// point off the grid takes the whole set to float64).
				for _, variant := range []string{"in range", "level 256", "off the grid"} {
					y := mat.DenseCopyOf(x.Slice(200, 210, 0, d))
					yk := append([]int64(nil), k[200*d:210*d]...)
					switch variant {
					case "level 256":
						y.Set(3, 5, y.At(3, 5)+1.0/255*float64(256-yk[3*d+5]))
						yk[3*d+5] = 256
					case "off the grid":
						y.Set(7, 9, y.At(7, 9)+0.3/255)
					}
					// A stride past the block's width and an out of
					// exactly its length (no room after the last row).
					ld := n - 33
					c := make([]float64, 9*ld+n-40)
					require.NoError(t, kr.Cross(c, ld, y, 20, n-20))
					for i := 0; i < 10; i++ {
						for j := 20; j < n-20; j++ {
							want := exactKernel(kern, sqDist(yk[i*d:(i+1)*d], k[j*d:(j+1)*d]))
							tol := 4e-15
							if variant == "off the grid" {
								want = kernelFormula(kern, y.RawRowView(i), x.RawRowView(j))
								tol = 1e-10
							}
							require.InDelta(t, want, c[i*ld+j-20], tol*want, "Cross %s (%d,%d) %v baseline=%v", variant, i, j, kern.Kind, baseline)
						}
					}
				}
			}
		}
		require.True(t, mat.Equal(before, x), "the integer path modified its input")
	}
	// Without the integer path: no Among; Rows32 by the grid's exact
	// float32 products, the same kernel to the float32 rounding.
	plain, err := NewKernelRows(pixelData(k, n, d, false), Kernel{Kind: Gaussian, Sigma: 2}.ElementMap(d), GramOptions{Int8: GridOff, Grid: GridOn})
	require.NoError(t, err)
	require.False(t, plain.Int8())
	require.True(t, plain.OnGrid())
	require.False(t, plain.Among([]int{1, 2}, make([]float64, 4)))
	row := make([]float32, n)
	require.True(t, plain.Rows32([]int{7}, row, n))
	for j := 0; j < n; j++ {
		want := exactKernel(Kernel{Kind: Gaussian, Sigma: 2}, sqDist(k[7*d:8*d], k[j*d:(j+1)*d]))
		require.InDelta(t, want, float64(row[j]), 0x1p-24*want+1e-300, "grid Rows32 (7,%d)", j)
	}
	// Not 8-bit: 300 levels in a column; off the grid; Int8 off.
	k9 := append([]int64(nil), k...)
	k9[5*d+3] = 300
	kr, err := NewKernelRowsInt8(pixelData(k9, n, d, false), Kernel{Kind: Gaussian, Sigma: 2}.ElementMap(d), GramOptions{Int8: GridOn})
	require.NoError(t, err)
	require.Nil(t, kr)
	off := pixelData(k, n, d, false)
	off.Set(7, 7, off.At(7, 7)+0.25/255)
	kr, err = NewKernelRowsInt8(off, Kernel{Kind: Gaussian, Sigma: 2}.ElementMap(d), GramOptions{Int8: GridOn})
	require.NoError(t, err)
	require.Nil(t, kr)
	kr, err = NewKernelRowsInt8(pixelData(k, n, d, false), Kernel{Kind: Gaussian, Sigma: 2}.ElementMap(d), GramOptions{Int8: GridOff})
	require.NoError(t, err)
	require.Nil(t, kr)
	kr, err = NewKernelRowsInt8(pixelData(k, n, d, false), Kernel{Kind: Polynomial, Degree: 2, Gamma: 1}.ElementMap(d), GramOptions{Int8: GridOn})
	require.NoError(t, err)
	require.Nil(t, kr, "not a distance kernel")
}

// 8-bit data given as levels (NewKernelRowsLevels8) give the kernel of the
// exact integer distances, bit for bit the rows of the same data given in
// float64 (NewKernelRowsInt8), on the VNNI kernel and on the portable loop,
// without reading a float64 copy; bad levels are typed errors, and the
// cases the integer path does not take give nil.
// RangeRows32 gives, for any range of points and any stride, the values
// Rows32 gives for those points, bit for bit, on the integer path and on
// the grid's float32 products; it is nil for float64 products and panics
// on a range that does not fit. SerialRangeRows32 gives the same values
// on the integer path and is nil off it; RangeRows32Each is nil on it and
// gives the grid's float32 products' values off it.
func TestKernelRowsRangeRows32(t *testing.T) {
	const n, d = 300, 37
	x := pixelData(pixelInts(5, n, d), n, d, false)
	kern := Kernel{Kind: Gaussian, Sigma: 3}
	idx := []int{7, 0, 299, 150, 7}
	for _, baseline := range []bool{false, true} {
		kr, err := NewKernelRowsInt8(x, kern.ElementMap(d), GramOptions{Int8: GridOn, Baseline: baseline})
		require.NoError(t, err)
		require.True(t, kr.Int8())
		m := len(idx)
		full := make([]float32, m*n)
		require.True(t, kr.Rows32(idx, full, n))
		rows := kr.RangeRows32(idx)
		require.NotNil(t, rows)
		serial := kr.SerialRangeRows32(idx)
		require.NotNil(t, serial)
		for _, r := range [][2]int{{0, n}, {5, 77}, {63, 64}, {64, 129}, {n - 1, n}} {
			w := r[1] - r[0]
			ld := w + 3
			for _, f := range []func(p0, p1 int, out []float32, ld int){rows, serial} {
				out := make([]float32, (m-1)*ld+w)
				f(r[0], r[1], out, ld)
				for a := 0; a < m; a++ {
					require.Equal(t, full[a*n+r[0]:a*n+r[1]], out[a*ld:a*ld+w], "baseline %v, row %d, points [%d, %d)", baseline, a, r[0], r[1])
				}
			}
		}
		require.Panics(t, func() { serial(0, n+1, make([]float32, m*(n+1)), n+1) })
		require.Panics(t, func() { rows(10, 9, make([]float32, 100), 10) })
		require.Panics(t, func() { rows(0, n+1, make([]float32, m*(n+1)), n+1) })
		require.Panics(t, func() { rows(0, 10, make([]float32, 10*m-1), 10) })
		require.Nil(t, kr.RangeRows32(nil))
		require.Nil(t, kr.RangeRows32Each(idx), "integer products: SerialRangeRows32")
	}
	// Off the integer path, the grid's exact float32 products: the rows
	// Rows32 gives; float64 products: nil.
	off, err := NewKernelRows(x, kern.ElementMap(d), GramOptions{Int8: GridOff})
	require.NoError(t, err)
	require.False(t, off.Int8())
	full := make([]float32, len(idx)*n)
	require.True(t, off.Rows32(idx, full, n))
	out := make([]float32, len(idx)*40)
	off.RangeRows32(idx)(100, 140, out, 40)
	each := make([]float32, len(out))
	off.RangeRows32Each(idx)(100, 140, each, 40, func() func(q0, q1 int) { return func(q0, q1 int) {} })
	for a := range idx {
		require.Equal(t, full[a*n+100:a*n+140], out[a*40:(a+1)*40], "grid products, row %d", a)
		require.Equal(t, full[a*n+100:a*n+140], each[a*40:(a+1)*40], "grid products by blocks, row %d", a)
	}
	require.Nil(t, off.SerialRangeRows32(idx), "float32 products: OpenBLAS's threads")
	f64, err := NewKernelRows(x, kern.ElementMap(d), GramOptions{Int8: GridOff, Grid: GridOff})
	require.NoError(t, err)
	require.Nil(t, f64.RangeRows32(idx), "float64 products: nil")
}

// Levels8 of some rows gives, through NewKernelRowsLevels8, the kernel
// values the full rows give among those points, bit for bit (the grid's
// offsets are invisible to a distance kernel); nil off the integer path.
func TestKernelRowsLevels8Subset(t *testing.T) {
	const n, d = 200, 29
	x := pixelData(pixelInts(8, n, d), n, d, true)
	for _, kern := range []Kernel{{Kind: Gaussian, Sigma: 2.5}, {Kind: Laplace, Sigma: 0.7}} {
		o := GramOptions{Int8: GridOn}
		kr, err := NewKernelRowsInt8(x, kern.ElementMap(d), o)
		require.NoError(t, err)
		idx := []int{3, 199, 0, 57, 58, 120}
		lv, ok := kr.Levels8(idx)
		require.True(t, ok)
		require.Equal(t, len(idx), lv.Rows)
		sub, err := NewKernelRowsLevels8(lv, kern.ElementMap(d), o)
		require.NoError(t, err)
		require.True(t, sub.Int8())
		m := len(idx)
		full := make([]float32, m*n)
		require.True(t, kr.Rows32(idx, full, n))
		own := make([]float32, m*m)
		all := make([]int, m)
		for a := range all {
			all[a] = a
		}
		require.True(t, sub.Rows32(all, own, m))
		for a := 0; a < m; a++ {
			for b, i := range idx {
				require.Equal(t, full[a*n+i], own[a*m+b], "%v: rows %d, %d", kern.Kind, idx[a], i)
			}
		}
	}
	off, err := NewKernelRows(x, Kernel{Kind: Gaussian, Sigma: 2.5}.ElementMap(d), GramOptions{Int8: GridOff})
	require.NoError(t, err)
	_, ok := off.Levels8([]int{1})
	require.False(t, ok)
}

func TestKernelRowsLevels8(t *testing.T) {
	const n, d = 200, 37
	k := pixelInts(5, n, d)
	k[3] = 0 // a column that does not reach 255: the levels' grid is 0 … 255 anyway
	lv := &linalg.Levels8{Rows: n, Cols: d, Step: 1.0 / 255, Data: make([]uint8, n*d)}
	for i, v := range k {
		lv.Data[i] = uint8(v)
	}
	before := append([]uint8(nil), lv.Data...)
	for _, baseline := range []bool{false, true} {
		for _, kern := range []Kernel{{Kind: Gaussian, Sigma: 2.5}, {Kind: Laplace, Sigma: 0.7}} {
			o := GramOptions{Int8: GridOn, Baseline: baseline}
			kr, err := NewKernelRowsLevels8(lv, kern.ElementMap(d), o)
			require.NoError(t, err)
			require.NotNil(t, kr)
			require.True(t, kr.Int8())
			// It keeps the packed levels (rows padded), not x: at least
			// n·d bytes, and under half the 8·n·d of a float64 copy.
			require.GreaterOrEqual(t, kr.Bytes(), int64(n*d))
			require.Less(t, kr.Bytes(), int64(4*n*d))
			ref, err := NewKernelRowsInt8(pixelData(k, n, d, false), kern.ElementMap(d), o)
			require.NoError(t, err)
			require.NotNil(t, ref)
			got, want := make([]float64, 50*n), make([]float64, 50*n)
			kr.Block(got, n, 100, 150, 0, n)
			ref.Block(want, n, 100, 150, 0, n)
			require.Equal(t, want, got, "%v baseline=%v", kern.Kind, baseline)
			for i := 100; i < 150; i++ {
				for j := 0; j < n; j += 7 {
					e := exactKernel(kern, sqDist(k[i*d:(i+1)*d], k[j*d:(j+1)*d]))
					if i == j {
						e = 1
					}
					require.InDelta(t, e, got[(i-100)*n+j], 4e-15*e)
				}
			}
			r32, w32 := make([]float32, 2*n), make([]float32, 2*n)
			require.True(t, kr.Rows32([]int{7, 190}, r32, n))
			require.True(t, ref.Rows32([]int{7, 190}, w32, n))
			require.Equal(t, w32, r32)
			// New points, one of them a level past 255 (off the 8-bit
			// range: the grid's float32 integers against the data's
			// norms): the kernel of the exact integer distances.
			yk := append([]int64(nil), k[20*d:23*d]...)
			yk[d+5] = 256
			y := mat.NewDense(3, d, nil)
			for i := 0; i < 3; i++ {
				for j := 0; j < d; j++ {
					y.Set(i, j, float64(yk[i*d+j])/255)
				}
			}
			c := make([]float64, 3*n)
			require.NoError(t, kr.Cross(c, n, y, 0, n))
			for i := 0; i < 3; i++ {
				for j := 0; j < n; j += 5 {
					e := exactKernel(kern, sqDist(yk[i*d:(i+1)*d], k[j*d:(j+1)*d]))
					require.InDelta(t, e, c[i*n+j], 4e-15*e+1e-300, "Cross (%d,%d) %v baseline=%v", i, j, kern.Kind, baseline)
				}
			}
		}
	}
	require.Equal(t, before, lv.Data, "the levels were modified")
	em := Kernel{Kind: Gaussian, Sigma: 2}.ElementMap(d)
	for _, bad := range []*linalg.Levels8{nil, {Rows: n, Cols: d, Step: 1.0 / 255, Data: lv.Data[:10]},
		{Rows: n, Cols: d, Step: 0, Data: lv.Data}, {Rows: n, Cols: d, Step: math.NaN(), Data: lv.Data}} {
		_, err := NewKernelRowsLevels8(bad, em, GramOptions{Int8: GridOn})
		require.ErrorIs(t, err, status.ErrInvalid)
	}
	kr, err := NewKernelRowsLevels8(lv, em, GramOptions{Int8: GridOff})
	require.NoError(t, err)
	require.Nil(t, kr, "Int8 off")
	kr, err = NewKernelRowsLevels8(lv, Kernel{Kind: Polynomial, Degree: 2, Gamma: 1}.ElementMap(d), GramOptions{Int8: GridOn})
	require.NoError(t, err)
	require.Nil(t, kr, "not a distance kernel")
	// Squared norms about the grid's middle (127) reach 2²⁴ from d = 1024
	// columns of levels 255: the integer path stops just there.
	for _, dd := range []int{1023, 1024} {
		wide := &linalg.Levels8{Rows: 3, Cols: dd, Step: 1.0 / 255, Data: make([]uint8, 3*dd)}
		for i := range wide.Data {
			wide.Data[i] = uint8(255 * (i % 2))
		}
		kr, err = NewKernelRowsLevels8(wide, Kernel{Kind: Gaussian, Sigma: 9}.ElementMap(dd), GramOptions{Int8: GridOn})
		require.NoError(t, err)
		require.Equal(t, dd < 1024, kr != nil, "d = %d", dd)
	}
}

// sqDist is the squared distance of two rows of integers.
func sqDist(a, b []int64) int64 {
	var s int64
	for i := range a {
		e := a[i] - b[i]
		s += e * e
	}
	return s
}

// Prepare on an 8-bit grid with the integer path wanted packs the levels
// in the pass that snaps the rows: the same float32 integers and squared
// norms as snapAll, levels that are those integers plus the columns'
// shifts (the SSE2 build as the AVX2 one); with the integer path off it
// packs nothing. Rows off the grid, or on an 8-bit grid with a shifted
// squared norm of 2²⁴ or more, leave the source off it.
func TestPrepareInt8PacksInOnePass(t *testing.T) {
	const n, d = 300, 37
	for k, centred := range []bool{false, true, true} {
		x := pixelData(pixelInts(3, n, d), n, d, centred)
		em := ElementMap{Kind: MapExpSq, C: -1 / (2 * 1.7 * 1.7)}
		on, err := Prepare(x, em, GramOptions{Grid: GridOn, Int8: GridOn, Baseline: k == 2}, true)
		require.NoError(t, err)
		off, err := Prepare(x, em, GramOptions{Grid: GridOn, Int8: GridOff}, true)
		require.NoError(t, err)
		require.NotNil(t, on.s.i8, "centred %v", centred)
		require.Nil(t, off.s.i8)
		require.NotNil(t, off.s.grid)
		require.Equal(t, off.s.x32, on.s.x32)
		require.Equal(t, off.s.norms, on.s.norms)
		require.Equal(t, off.s.em.C, on.s.em.C)
		buf := make([]uint8, d)
		for i := 0; i < n; i++ {
			on.s.i8.Levels(i, buf)
			for a, v := range buf {
				require.Equal(t, on.s.x32[i*d+a], float32(int32(v)-on.s.grid.mid[a]), "row %d col %d", i, a)
			}
		}
	}
	x := pixelData(pixelInts(4, n, d), n, d, false)
	x.Set(17, 5, x.At(17, 5)+0.3/255)
	src, err := Prepare(x, ElementMap{Kind: MapExpSq, C: -0.1}, GramOptions{Grid: GridOn, Int8: GridOn}, true)
	require.NoError(t, err)
	require.Nil(t, src.s.i8)
	require.Nil(t, src.s.grid)
	// 8-bit rows whose shifted squared norm reaches 2²⁴ (1100 features
	// at a column's extreme, 128 levels from its middle): float32
	// products would not be exact, so the source stays off the grid.
	const wide = 1100
	k := pixelInts(5, n, wide)
	for a := 0; a < wide; a++ {
		k[a], k[wide+a] = 255, 0
	}
	src, err = Prepare(pixelData(k, n, wide, false), ElementMap{Kind: MapExpSq, C: -0.1}, GramOptions{Grid: GridOn, Int8: GridOn}, true)
	require.NoError(t, err)
	require.Nil(t, src.s.i8)
	require.Nil(t, src.s.grid)
}

// A row exactly at every column's middle level has a shifted squared norm
// of 0, a valid value: the integer path packs it like any other row (the
// same levels as snapped), the matrix's diagonal entry for it 1.
func TestPrepareInt8RowAtTheMiddle(t *testing.T) {
	const n, d = 200, 16
	k := pixelInts(6, n, d)
	for j := 0; j < d; j++ {
		k[j], k[d+j] = 0, 254 // every column spans 0…254: middle 127
	}
	for j := 0; j < d; j++ {
		k[7*d+j] = 127
	}
	x := pixelData(k, n, d, false)
	em := ElementMap{Kind: MapExpSq, C: -1 / (2 * 1.3 * 1.3)}
	src, err := Prepare(x, em, GramOptions{Grid: GridOn, Int8: GridOn}, true)
	require.NoError(t, err)
	require.NotNil(t, src.s.grid)
	for j := 0; j < d; j++ {
		require.Equal(t, int32(127), src.s.grid.mid[j], "column %d", j)
	}
	require.NotNil(t, src.s.i8, "a row at the middle took the source off the integer path")
	require.Zero(t, src.s.norms[7])
	buf := make([]uint8, d)
	src.s.i8.Levels(7, buf)
	for j, v := range buf {
		require.Equal(t, uint8(127), v, "column %d", j)
	}
}

// The grid search takes its column ranges by blocks of 256 rows: at row
// counts on either side of a whole number of blocks it finds the grid and
// snaps every entry back to its value; and the kernel rows of data whose
// products are exact (on the grid) or float64 add nothing to an entry's
// bound.
func TestGridWholeBlocks(t *testing.T) {
	const d = 9
	ints := pixelInts(5, 513, d)
	for _, n := range []int{255, 256, 257, 512, 513} {
		x := pixelData(ints[:n*d], n, d, false)
		g, snapped, _ := findGrid(blasOf(x), 2)
		require.NotNil(t, g, "n = %d", n)
		require.Len(t, snapped, n*d, "n = %d", n)
		for i := 0; i < n; i++ {
			for j := 0; j < d; j++ {
				back := g.lo[j] + g.step*float64(snapped[i*d+j]+float32(g.mid[j]))
				require.InDelta(t, x.At(i, j), back, 1e-12, "n = %d entry (%d, %d)", n, i, j)
			}
		}
	}
	x := pixelData(ints[:300*d], 300, d, false)
	for _, c := range []struct {
		grid GridPath
		on   bool
	}{{GridOn, true}, {GridOff, false}} {
		kr, err := NewKernelRows(x, Kernel{Kind: Gaussian, Sigma: 2}.ElementMap(d), GramOptions{Grid: c.grid})
		require.NoError(t, err)
		require.Equal(t, c.on, kr.OnGrid())
		require.Equal(t, ProductsFloat64, kr.Products())
		require.Zero(t, kr.EntryBound(0, 1, 0.5), "grid %v", c.grid)
	}
}

// Images scaled by 1/255 have every column's range at most 1, and the
// border pixels are often constant: the grid is found whichever columns
// are constant or narrow (the widest column refines the step), and every
// entry snaps back.
func TestGridUnitRangeConstantColumns(t *testing.T) {
	const n, d = 400, 12
	ints := pixelInts(8, n, d)
	for _, dead := range [][]int{{0}, {0, 1, 2}, {0, 11}} {
		k := append([]int64(nil), ints...)
		for i := 0; i < n; i++ {
			for _, j := range dead {
				k[i*d+j] = 0
			}
			k[i*d+5] = min(k[i*d+5], 17) // a narrow column: 0…17 of 255
		}
		x := pixelData(k, n, d, false)
		g, snapped, _ := findGrid(blasOf(x), 2)
		require.NotNil(t, g, "constant columns %v", dead)
		require.InDelta(t, 1.0/255, g.step, 1e-15, "constant columns %v", dead)
		for i := 0; i < n; i++ {
			for j := 0; j < d; j++ {
				back := g.lo[j] + g.step*float64(snapped[i*d+j]+float32(g.mid[j]))
				require.InDelta(t, x.At(i, j), back, 1e-12, "entry (%d, %d)", i, j)
			}
		}
	}
}

// int8Ranges partitions [j0, j1): every point once, each range's ends at
// packed-block boundaries but for j0 and j1, on any number of workers.
func TestInt8RangesPartition(t *testing.T) {
	const blk = native.Int8Block
	for _, c := range [][2]int{{0, 1}, {0, blk}, {3, blk + 1}, {blk - 1, blk + 1}, {5, 7*blk + 3}, {2 * blk, 9 * blk}, {17, 40*blk - 5}} {
		for _, workers := range []int{1, 2, 3, 8} {
			var mu sync.Mutex
			seen := make([]int, c[1]-c[0])
			int8Ranges(workers, c[0], c[1], func(p0, p1 int) {
				mu.Lock()
				defer mu.Unlock()
				require.Less(t, p0, p1)
				require.True(t, p0 == c[0] || p0%blk == 0, "range [%d, %d) of %v", p0, p1, c)
				require.True(t, p1 == c[1] || p1%blk == 0, "range [%d, %d) of %v", p0, p1, c)
				for p := p0; p < p1; p++ {
					seen[p-c[0]]++
				}
			})
			for i, k := range seen {
				require.Equal(t, 1, k, "%v, %d workers: point %d", c, workers, c[0]+i)
			}
		}
	}
}
