package gram

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/kdual/kdual/internal/rng"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/native"
	"github.com/kdual/kdual/paths"
	"github.com/kdual/kdual/status"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

func kernelFormula(k Kernel, x, y []float64) float64 {
	dot, d2 := 0.0, 0.0
	for i := range x {
		dot += x[i] * y[i]
		d2 += (x[i] - y[i]) * (x[i] - y[i])
	}
	switch k.Kind {
	case Gaussian:
		return math.Exp(-d2 / (2 * k.Sigma * k.Sigma))
	case Laplace:
		return math.Exp(-math.Sqrt(d2) / k.Sigma)
	case Polynomial:
		deg, g := k.Degree, k.Gamma
		if deg == 0 {
			deg = 3
		}
		if g == 0 {
			g = 1 / float64(len(x))
		}
		return math.Pow(g*dot+k.Coef0, float64(deg))
	}
	return dot
}

func randData(seed uint64, n, d int) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 17))
	x := mat.NewDense(n, d, nil)
	x.Apply(func(_, _ int, _ float64) float64 { return rng.NormFloat64() }, x)
	return x
}

var testKernels = []Kernel{
	{Kind: Linear},
	{Kind: Gaussian, Sigma: 2.5},
	{Kind: Laplace, Sigma: 4},
	{Kind: Polynomial},
	{Kind: Polynomial, Degree: 2, Gamma: 0.3, Coef0: 1},
}

func TestGramMatchesFormula(t *testing.T) {
	// n = 150 is above the parallel threshold, so the parallel map runs.
	x := randData(1, 150, 7)
	y := randData(2, 30, 7)
	for _, k := range testKernels {
		t.Run(k.Kind.String(), func(t *testing.T) {
			g, err := Gram(x, k)
			require.NoError(t, err)
			raw := g.RawSymmetric()
			c, err := CrossGram(y, x, k)
			require.NoError(t, err)
			for i := 0; i < 150; i++ {
				for j := 0; j < 150; j++ {
					want := kernelFormula(k, x.RawRowView(i), x.RawRowView(j))
					// Inner products by BLAS differ from the loop by rounding:
					// |Δ| ≤ d·ε·‖x‖‖y‖ propagated through the map.
					require.InDelta(t, want, raw.Data[i*raw.Stride+j], 1e-12*math.Max(1, math.Abs(want)), "(%d,%d)", i, j)
				}
			}
			for i := 0; i < 30; i++ {
				for j := 0; j < 150; j++ {
					want := kernelFormula(k, y.RawRowView(i), x.RawRowView(j))
					require.InDelta(t, want, c.At(i, j), 1e-12*math.Max(1, math.Abs(want)))
				}
			}
		})
	}
}

// A Gram matrix whose last panel holds one row (n = 1, and one more than
// a panel) has that row's entries by the formula like every other.
func TestGramPanelOfOneRow(t *testing.T) {
	for _, n := range []int{1, gramPanelRows + 1} {
		x := randData(3, n, 4)
		for _, k := range testKernels {
			g, err := Gram(x, k)
			require.NoError(t, err)
			for _, i := range []int{0, n - 1} {
				for j := 0; j < n; j += max(1, n/50) {
					want := kernelFormula(k, x.RawRowView(i), x.RawRowView(j))
					require.InDelta(t, want, g.At(i, j), 1e-12*math.Max(1, math.Abs(want)), "n = %d, %v (%d,%d)", n, k.Kind, i, j)
				}
				want := kernelFormula(k, x.RawRowView(i), x.RawRowView(n-1))
				require.InDelta(t, want, g.At(i, n-1), 1e-12*math.Max(1, math.Abs(want)), "n = %d, %v (%d,%d)", n, k.Kind, i, n-1)
			}
		}
	}
}

func TestGramBadInput(t *testing.T) {
	x := randData(1, 5, 3)
	// Element maps that cannot be applied (package kernel's tests cover
	// the kernels whose bandwidths produce them).
	for _, c := range []float64{1, math.NaN(), math.Inf(-1)} {
		for _, kind := range []MapKind{MapExpSq, MapExpDist} {
			_, err := GramMap(x, ElementMap{Kind: kind, C: c}, GramOptions{})
			require.ErrorIs(t, err, status.ErrInvalid, "C=%g", c)
		}
	}
	_, err := Gram(x, Kernel{Kind: KernelKind(42)})
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = Gram(x, Kernel{Kind: Polynomial, Degree: -1})
	require.ErrorIs(t, err, status.ErrInvalid)
	bad := mat.DenseCopyOf(x)
	bad.Set(2, 1, math.Inf(-1))
	_, err = Gram(bad, Kernel{Kind: Gaussian, Sigma: 1})
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = CrossGram(x, randData(1, 4, 2), Kernel{})
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = CrossGram(x, bad, Kernel{})
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = Gram(&mat.Dense{}, Kernel{})
	require.ErrorIs(t, err, status.ErrInvalid)
	// 2¹⁷ points: a 128 GiB matrix, refused before it is allocated.
	_, err = GramMap(mat.NewDense(1<<17, 1, nil), ElementMap{Kind: MapExpSq, C: -1}, GramOptions{})
	require.ErrorIs(t, err, status.ErrInvalid)
}

// Kernel rows of float32 data read in place: every entry (Block and Cross)
// within EntryBound of the Gaussian kernel of the stored values, the data
// never written; NaN data are refused.
func TestKernelRows32(t *testing.T) {
	x32, x := randDense32(t, 300, 20, 2, 0.2)
	defer x32.Free()
	before := append([]float32(nil), x32.Data...)
	em := ElementMap{Kind: MapExpSq, C: -1.0 / (2 * 16)}
	kr, err := NewKernelRows32(x32, em, GramOptions{})
	require.NoError(t, err)
	require.Equal(t, ProductsFloat32, kr.Products())
	exact := func(a, b []float64) float64 {
		d := 0.0
		for i := range a {
			d += (a[i] - b[i]) * (a[i] - b[i])
		}
		return math.Exp(em.C * d)
	}
	out := make([]float64, 40*300)
	kr.Block(out, 300, 10, 50, 0, 300)
	for i := 10; i < 50; i++ {
		for j := 0; j < 300; j++ {
			v := out[(i-10)*300+j]
			require.InDelta(t, exact(x.RawRowView(i), x.RawRowView(j)), v, kr.EntryBound(i, j, v)+1e-15)
		}
	}
	y := mat.DenseCopyOf(x.Slice(100, 130, 0, 20))
	cross := make([]float64, 30*300)
	require.NoError(t, kr.Cross(cross, 300, y, 0, 300))
	for i := 0; i < 30; i++ {
		for j := 0; j < 300; j++ {
			v := cross[i*300+j]
			require.InDelta(t, exact(y.RawRowView(i), x.RawRowView(j)), v, kr.EntryBound(100+i, j, v)+1e-15)
		}
	}
	require.Equal(t, before, x32.Data)
	x32.Data[5] = float32(math.NaN())
	_, err = NewKernelRows32(x32, em, GramOptions{})
	require.ErrorIs(t, err, status.ErrInvalid)
	x32.Data[5] = 1
	x32.Data[41*20+3] = float32(math.Inf(-1))
	_, err = NewKernelRows32(x32, em, GramOptions{})
	require.ErrorIs(t, err, status.ErrInvalid)
	require.Contains(t, err.Error(), "row 41 ")
	_, err = NewKernelRows32(&linalg.Dense32{}, em, GramOptions{})
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = NewKernelRows32(&linalg.Dense32{Rows: 0, Cols: 20, Data: x32.Data}, em, GramOptions{})
	require.ErrorIs(t, err, status.ErrInvalid, "no rows")
	_, err = NewKernelRows32(nil, em, GramOptions{})
	require.ErrorIs(t, err, status.ErrInvalid)
}

// Float32 products through the native map go from sgemm's float32 block
// straight through native.RBFMap32 (crossMapped); through the Go map they
// are widened first. Both, in both native builds, give the same kernel
// rows up to the exponentials' last bits, for Block, Cross and
// CrossGramMapWith.
func TestFloat32ProductsMapPathsAgree(t *testing.T) {
	x32, x := randDense32(t, 300, 20, 4, 0.2)
	defer x32.Free()
	y := mat.DenseCopyOf(x.Slice(40, 73, 0, 20))
	for _, em := range []ElementMap{{Kind: MapExpSq, C: -1.0 / 32}, {Kind: MapExpDist, C: -1.0 / 4}} {
		var ref []float64
		for _, o := range []GramOptions{{Map: MapGo}, {Map: MapNative}, {Map: MapNative, Baseline: true}} {
			kr, err := NewKernelRows32(x32, em, o)
			require.NoError(t, err)
			block := make([]float64, 50*300)
			kr.Block(block, 300, 200, 250, 0, 300)
			cross := make([]float64, 33*300)
			require.NoError(t, kr.Cross(cross, 300, y, 0, 300))
			o.Products = ProductsFloat32
			c, err := CrossGramMapWith(y, x, em, o)
			require.NoError(t, err)
			got := append(append(block, cross...), c.RawMatrix().Data...)
			if ref == nil {
				ref = got
				continue
			}
			for i := range ref {
				require.InDelta(t, ref[i], got[i], 1e-14*math.Max(1, math.Abs(ref[i])), "%v map %v baseline %v entry %d", em.Kind, o.Map, o.Baseline, i)
			}
		}
	}
}

func randDense32(t *testing.T, r, c int, seed uint64, off float64) (*linalg.Dense32, *mat.Dense) {
	t.Helper()
	g := rng.New(seed)
	m, err := linalg.NewDense32(r, c)
	require.NoError(t, err)
	w := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			v := float32(g.NormFloat64() + off)
			m.Data[i*c+j] = v
			w.Set(i, j, float64(v))
		}
	}
	return m, w
}

// findGrid is the grid search as Prepare runs it on a matrix: the ranges
// and first rows suggest a grid, every entry is then snapped to it.
// Both builds' range pass must suggest the same grid.
func findGrid(x blas64.General, workers int) (*grid, []float32, []float64) {
	g := gridOf(x, workers, native.AVX2())
	if gb := gridOf(x, workers, native.Baseline()); !reflect.DeepEqual(g, gb) {
		panic(fmt.Sprintf("gridOf: the AVX2 build's grid %+v, the baseline's %+v", g, gb))
	}
	if g == nil {
		return nil, nil, nil
	}
	return g.snapAll(x.Rows, x.Cols, func(i int) []float64 { return x.Data[i*x.Stride : i*x.Stride+x.Cols] }, workers)
}

// newGramSource is the source Prepare makes of x (for the tests that look
// inside it), with the shift it chose.
func newGramSource(x *mat.Dense, em ElementMap, o GramOptions, _ []float64) (*gramSource, []float64) {
	src, err := Prepare(x, em, o, false)
	if err != nil {
		panic(err)
	}
	return src.s, src.s.shiftBy
}

// Rows32 on float32 data (NewKernelRows32) gives the rows Cross gives for
// the same points, rounded to float32 (the same products and map; within
// a float32 rounding), across a chunk of rows32Chunk points, without
// writing past a row's n entries (an output too short or a stride below
// n panics before any write); on the Go map path, and for data kept in
// float64 (whose Cross takes float64 products), it declines.
func TestRows32FloatProducts(t *testing.T) {
	const n, d = rows32Chunk + 301, 6
	x32, x := randDense32(t, n, d, 9, 0.3)
	defer x32.Free()
	idx := []int{0, 17, n - 1, 4000, rows32Chunk, 17}
	for _, em := range []ElementMap{{Kind: MapExpSq, C: -1.0 / 8}, {Kind: MapExpDist, C: -1.0 / 2}} {
		kr, err := NewKernelRows32(x32, em, GramOptions{})
		require.NoError(t, err)
		ld := n + 5
		out := make([]float32, len(idx)*ld)
		for i := range out {
			out[i] = -7
		}
		// Too short by one entry, or a stride below n: refused before a write.
		require.Panics(t, func() { kr.Rows32(idx, out[:(len(idx)-1)*ld+n-1], ld) })
		require.Panics(t, func() { kr.Rows32(idx, out, n-1) })
		require.Equal(t, float32(-7), out[0])
		require.True(t, kr.Rows32(idx, out[:(len(idx)-1)*ld+n], ld))
		y := mat.NewDense(len(idx), d, nil)
		for j, i := range idx {
			y.SetRow(j, x.RawRowView(i))
		}
		want := make([]float64, len(idx)*n)
		require.NoError(t, kr.Cross(want, n, y, 0, n))
		for j := range idx {
			for p := 0; p < n; p++ {
				w := want[j*n+p]
				require.InDelta(t, w, float64(out[j*ld+p]), 0x1p-23*w+1e-30, "%v row %d point %d", em.Kind, idx[j], p)
			}
			for p := n; p < ld && j < len(idx)-1; p++ {
				require.Equal(t, float32(-7), out[j*ld+p], "written past row %d", j)
			}
		}
		goMap, err := NewKernelRows32(x32, em, GramOptions{Map: MapGo})
		require.NoError(t, err)
		require.False(t, goMap.Rows32(idx, out, ld))
	}
	kr, err := NewKernelRows(x, ElementMap{Kind: MapExpSq, C: -1.0 / 8}, GramOptions{Products: ProductsFloat32, Grid: GridOff})
	require.NoError(t, err)
	require.False(t, kr.Rows32(idx, make([]float32, len(idx)*n), n))
}

// RangeRows32 on float32 products gives, for any range of points (one
// within a chunk of rows32Chunk points, one across the chunk's edge, the
// last point) and any stride, the values Rows32 gives for those points
// within the products' entry bound (OpenBLAS may round a product by the
// call's shape), and the same bits for the same range twice, for both
// distance kernels and both products (sgemm, and the packed kernel where
// the processor runs it: paths.Paths.GemmNative), Rows32 by either within
// the bound of sgemm's; it declines (nil) where Rows32 does: the Go map
// path, and data kept in float64.
func TestRangeRows32FloatProducts(t *testing.T) {
	const n, d = rows32Chunk + 301, 96
	x32, x := randDense32(t, n, d, 10, 0.3)
	defer x32.Free()
	idx := []int{3, n - 1, rows32Chunk, 3}
	defer paths.Reset()
	for _, packed := range []bool{false, native.HasWide()} {
		p := paths.Current()
		p.GemmNative = packed
		require.NoError(t, paths.Set(p))
		checkRangeRows32(t, x32, x, idx, packed)
	}
}

func checkRangeRows32(t *testing.T, x32 *linalg.Dense32, x *mat.Dense, idx []int, packed bool) {
	n, m := x32.Rows, len(idx)
	for _, em := range []ElementMap{{Kind: MapExpSq, C: -1.0 / 8}, {Kind: MapExpDist, C: -1.0 / 2}} {
		kr, err := NewKernelRows32(x32, em, GramOptions{})
		require.NoError(t, err)
		full := make([]float32, m*n)
		require.True(t, kr.Rows32(idx, full, n))
		if packed {
			q := paths.Current()
			q.GemmNative = false
			require.NoError(t, paths.Set(q))
			ref := make([]float32, m*n)
			require.True(t, kr.Rows32(idx, ref, n))
			q.GemmNative = true
			require.NoError(t, paths.Set(q))
			for a := 0; a < m; a++ {
				for p := 0; p < n; p++ {
					want := float64(ref[a*n+p])
					tol := 2*kr.EntryBound(idx[a], p, want) + 0x1p-23*want + 1e-30
					require.InDelta(t, want, float64(full[a*n+p]), tol, "%v packed row %d, point %d", em.Kind, a, p)
				}
			}
		}
		rows := kr.RangeRows32(idx)
		require.NotNil(t, rows)
		for _, r := range [][2]int{{0, n}, {5, 77}, {rows32Chunk - 40, rows32Chunk + 9}, {n - 1, n}} {
			w := r[1] - r[0]
			ld := w + 3
			out := make([]float32, (m-1)*ld+w)
			rows(r[0], r[1], out, ld)
			again := make([]float32, len(out))
			rows(r[0], r[1], again, ld)
			require.Equal(t, out, again, "%v points [%d, %d) twice", em.Kind, r[0], r[1])
			for a := 0; a < m; a++ {
				for p := r[0]; p < r[1]; p++ {
					want := float64(full[a*n+p])
					// Each within the products' entry bound of the exact
					// value, and each rounded once to float32.
					tol := 2*kr.EntryBound(idx[a], p, want) + 0x1p-23*want + 1e-30
					require.InDelta(t, want, float64(out[a*ld+p-r[0]]), tol, "%v row %d, point %d", em.Kind, a, p)
				}
			}
		}
		require.Panics(t, func() { rows(0, n+1, make([]float32, m*(n+1)), n+1) })
		goMap, err := NewKernelRows32(x32, em, GramOptions{Map: MapGo})
		require.NoError(t, err)
		require.Nil(t, goMap.RangeRows32(idx))
	}
	kr, err := NewKernelRows(x, ElementMap{Kind: MapExpSq, C: -1.0 / 8}, GramOptions{Products: ProductsFloat32, Grid: GridOff})
	require.NoError(t, err)
	require.Nil(t, kr.RangeRows32(idx))
}

// gridOf's column ranges are the columns' true minima and maxima, with
// the extremes in the first row of a later block of rows (where each
// block's pass starts): lo is the minimum, and lo + step·span the maximum.
func TestGridOfRanges(t *testing.T) {
	const n, d = 700, 5
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, float64((i*7+j*3)%11)*0.5)
		}
	}
	x.Set(256, 2, -20)  // first row of the second block
	x.Set(512, 3, 37.5) // first row of the third
	for _, workers := range []int{1, 3} {
		g := gridOf(blasOf(x), workers, native.AVX2())
		require.NotNil(t, g)
		for j := 0; j < d; j++ {
			lo, hi := math.Inf(1), math.Inf(-1)
			for i := 0; i < n; i++ {
				lo, hi = math.Min(lo, x.At(i, j)), math.Max(hi, x.At(i, j))
			}
			require.Equal(t, lo, g.lo[j], "column %d minimum", j)
			require.InDelta(t, hi, g.lo[j]+g.step*float64(g.span[j]), 1e-12, "column %d maximum", j)
		}
	}
}

// RangeRows32Each gives RangeRows32's values on float32 products for any
// range (within a chunk, across a chunk's edge, the whole), with or
// without a consumer; with one, the blocks handed over tile the range,
// none longer than RowsEachBlock, each final when handed over (its values
// then are the range's last), and every goroutine asks use once before
// its first block. It declines where RangeRows32 has nothing to hand over:
// integer products (SerialRangeRows32), float64 data, the Go map.
func TestRangeRows32Each(t *testing.T) {
	const n, d = rows32Chunk + 301, 64
	x32, x := randDense32(t, n, d, 10, 0.3)
	defer x32.Free()
	idx := []int{7, n - 2, rows32Chunk + 1, 0, 7}
	m := len(idx)
	kr, err := NewKernelRows32(x32, ElementMap{Kind: MapExpSq, C: -1.0 / 8}, GramOptions{})
	require.NoError(t, err)
	rows, each := kr.RangeRows32(idx), kr.RangeRows32Each(idx)
	require.NotNil(t, each)
	for _, r := range [][2]int{{0, n}, {3, 300}, {rows32Chunk - 2*RowsEachBlock - 5, rows32Chunk + RowsEachBlock + 3}, {n - 1, n}} {
		w := r[1] - r[0]
		ld := w + 5
		want := make([]float32, (m-1)*ld+w)
		rows(r[0], r[1], want, ld)
		plain := make([]float32, len(want))
		each(r[0], r[1], plain, ld, nil)
		require.Equal(t, want, plain, "points [%d, %d) without a consumer", r[0], r[1])
		out := make([]float32, len(want))
		seen := make([]float32, len(want))
		var mu sync.Mutex
		var blocks [][2]int
		uses := 0
		each(r[0], r[1], out, ld, func() func(q0, q1 int) {
			mu.Lock()
			uses++
			mu.Unlock()
			return func(q0, q1 int) {
				for a := 0; a < m; a++ {
					copy(seen[a*ld+q0-r[0]:a*ld+q1-r[0]], out[a*ld+q0-r[0]:a*ld+q1-r[0]])
				}
				mu.Lock()
				blocks = append(blocks, [2]int{q0, q1})
				mu.Unlock()
			}
		})
		require.Equal(t, want, out, "points [%d, %d) with a consumer", r[0], r[1])
		require.Equal(t, want, seen, "points [%d, %d): the values handed over", r[0], r[1])
		require.GreaterOrEqual(t, uses, 1)
		sort.Slice(blocks, func(i, j int) bool { return blocks[i][0] < blocks[j][0] })
		at := r[0]
		for _, b := range blocks {
			require.Equal(t, at, b[0], "blocks tile [%d, %d)", r[0], r[1])
			require.True(t, b[1] > b[0] && b[1]-b[0] <= RowsEachBlock, "block %v", b)
			at = b[1]
		}
		require.Equal(t, r[1], at)
	}
	require.Panics(t, func() { each(0, n+1, make([]float32, m*(n+1)), n+1, nil) })
	require.Panics(t, func() { each(5, 5, make([]float32, m), 1, nil) })
	goMap, err := NewKernelRows32(x32, ElementMap{Kind: MapExpSq, C: -1.0 / 8}, GramOptions{Map: MapGo})
	require.NoError(t, err)
	require.Nil(t, goMap.RangeRows32Each(idx))
	f64, err := NewKernelRows(x, ElementMap{Kind: MapExpSq, C: -1.0 / 8}, GramOptions{Products: ProductsFloat32, Grid: GridOff})
	require.NoError(t, err)
	require.Nil(t, f64.RangeRows32Each(idx))
	require.Nil(t, kr.RangeRows32Each(nil))
}

// The kernel rows of off-heap float32 data keep it mapped: with no other
// reference to the matrix left, collections (whose cleanups would unmap
// it) change nothing in the rows a range function computes afterwards.
func TestKernelRows32KeepsItsData(t *testing.T) {
	const n, d = 700, 24
	idx := []int{5, 600, 9}
	each := func() func(p0, p1 int, out []float32, ld int, use func() func(q0, q1 int)) {
		x32, _ := randDense32(t, n, d, 12, 0.2)
		kr, err := NewKernelRows32(x32, ElementMap{Kind: MapExpSq, C: -1.0 / 16}, GramOptions{})
		require.NoError(t, err)
		return kr.RangeRows32Each(idx) // the only way left to the data
	}()
	require.NotNil(t, each)
	first := make([]float32, len(idx)*n)
	each(0, n, first, n, nil)
	for i := 0; i < 3; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond) // cleanups run on their own goroutine
	}
	again := make([]float32, len(idx)*n)
	each(0, n, again, n, nil)
	require.Equal(t, first, again)
}
