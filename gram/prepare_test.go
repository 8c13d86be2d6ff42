package gram

import (
	"math"
	"testing"

	"github.com/kdual/kdual/internal/scratch"
	"github.com/kdual/kdual/native"
	"github.com/kdual/kdual/status"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// countingData is Data that counts how often each row is read.
type countingData struct {
	x     *mat.Dense
	reads []int
}

func newCounting(x *mat.Dense) *countingData {
	n, _ := x.Dims()
	return &countingData{x: x, reads: make([]int, n)}
}

func (c *countingData) Dims() (int, int) { return c.x.Dims() }

func (c *countingData) RawRowView(i int) []float64 {
	c.reads[i]++
	return c.x.RawRowView(i)
}

func (c *countingData) maxReads() int {
	m := 0
	for _, r := range c.reads {
		m = max(m, r)
	}
	return m
}

// The data are read once by Prepare — checked, copied, their sums,
// ranges, norms and first rows gathered in one pass — and never again:
// every kernel build from the source (the float64 Gram, the float32 and
// float64 tiles, kernel rows and their blocks) reads only the prepared
// forms, for distance maps (shifted, on a grid), the others, float32
// products and the L1 map; the kernels equal those of GramMap on the
// matrix itself. Non-finite data are refused in that one read, naming
// the first entry.
func TestPrepareReadsOnce(t *testing.T) {
	const n, d = 160, 12
	data := map[string]*mat.Dense{
		"gaussian data": randData(41, n, d),
		"pixels":        pixelData(pixelInts(42, n, d), n, d, false),
	}
	maps := []ElementMap{{Kind: MapExpSq, C: -0.02}, {Kind: MapExpDist, C: -0.1}, {Kind: MapPower, Gamma: 0.1, Coef0: 1, Degree: 2},
		{Kind: MapTanh, Gamma: 0.01, Coef0: 0.5}, {Kind: MapCosine}, {Kind: MapExpL1, C: -0.05}, {Kind: MapIdentity}}
	for name, x := range data {
		for _, em := range maps {
			for _, o := range []GramOptions{{}, {Products: ProductsFloat32}, {Grid: GridOn}} {
				for _, keep := range []bool{false, true} {
					c := newCounting(x)
					src, err := Prepare(c, em, o, keep)
					require.NoError(t, err)
					require.Equal(t, 1, c.maxReads(), "%s %v: Prepare", name, em.Kind)
					want, err := GramMap(x, em, o)
					require.NoError(t, err)
					got := make([]float64, n*n)
					require.NoError(t, src.GramInto(o, got, n))
					tiles, err := src.Tiles32(o)
					require.NoError(t, err)
					t64, err := src.Tiles64Band(o, 64, 0, (n+63)/64)
					require.NoError(t, err)
					blk := make([]float64, n*n)
					src.Rows(o).Block(blk, n, 0, n, 0, n)
					require.Equal(t, 1, c.maxReads(), "%s %v: the builds read the data again", name, em.Kind)
					same := true
					var dBlk, d64, d32 float64
					for i := 0; i < n; i++ {
						for j := 0; j < n; j++ {
							w := want.At(i, j)
							same = same && w == got[i*n+j]
							scale := math.Max(1, math.Abs(w))
							dBlk = math.Max(dBlk, math.Abs(w-blk[i*n+j])/scale)
							d64 = math.Max(d64, math.Abs(w-t64.At(i, j))/scale)
							d32 = math.Max(d32, math.Abs(w-tiles.At(i, j))/scale)
						}
					}
					require.True(t, same, "%s %v: GramInto differs from GramMap", name, em.Kind)
					// Float32 products by sgemm on the rows' blocks against
					// the Gram's ssyrk: OpenBLAS's kernels may round them
					// differently (its Haswell kernels do).
					rowsTol := 1e-12
					if o.Products == ProductsFloat32 {
						rowsTol = 1e-6
					}
					require.Less(t, dBlk, rowsTol, "%s %v: rows", name, em.Kind)
					require.Less(t, d64, 1e-12, "%s %v: float64 tiles", name, em.Kind)
					require.Less(t, d32, 1e-6, "%s %v: float32 tiles", name, em.Kind)
					if keep {
						require.True(t, mat.Equal(x, src.Copy()), "the copy is exact")
					}
				}
			}
		}
	}
	bad := randData(43, n, d)
	bad.Set(120, 3, math.Inf(-1))
	bad.Set(150, 1, math.NaN())
	c := newCounting(bad)
	_, err := Prepare(c, ElementMap{Kind: MapExpSq, C: -1}, GramOptions{}, false)
	require.ErrorIs(t, err, status.ErrInvalid)
	require.ErrorContains(t, err, "x[120,3] = -Inf is not finite")
	require.LessOrEqual(t, c.maxReads(), 2) // the row named is read once more for its value
	for _, x := range []Data{nil, (*mat.Dense)(nil), &mat.Dense{}, emptyData{4, 0}, emptyData{0, 3}} {
		_, err := Prepare(x, ElementMap{}, GramOptions{}, false)
		require.ErrorIs(t, err, status.ErrInvalid, "%v", x)
	}
}

// emptyData is Data of r rows and c columns, one of them zero (a mat.Dense
// cannot have a zero dimension).
type emptyData struct{ r, c int }

func (e emptyData) Dims() (int, int)         { return e.r, e.c }
func (e emptyData) RawRowView(int) []float64 { return nil }

// TestPrepareNonFiniteBlocks: the first non-finite entry in row-major
// order is named whichever block of rows it lies in, on data read in place
// and through the Data interface; finite entries whose column sum
// overflows are not taken for non-finite ones; the column ranges equal the
// plain loop's.
func TestPrepareNonFiniteBlocks(t *testing.T) {
	const n, d = 700, 9 // three blocks of scan's 256 rows
	cases := []struct {
		set  map[[2]int]float64
		want string
	}{
		{map[[2]int]float64{{400, 5}: math.NaN()}, "x[400,5] = NaN"},
		{map[[2]int]float64{{300, 2}: math.Inf(-1), {10, 2}: math.Inf(1)}, "x[10,2] = +Inf"},
		{map[[2]int]float64{{699, 8}: math.Inf(-1), {600, 0}: math.NaN()}, "x[600,0] = NaN"},
		{map[[2]int]float64{{3, 1}: 1e308, {4, 1}: 1e308, {5, 1}: -1e308}, ""},
	}
	for _, c := range cases {
		x := randData(44, n, d)
		for at, v := range c.set {
			x.Set(at[0], at[1], v)
		}
		for _, data := range []Data{x, newCounting(x)} {
			src, err := Prepare(data, ElementMap{Kind: MapExpSq, C: -0.5}, GramOptions{}, false)
			if c.want != "" {
				require.ErrorIs(t, err, status.ErrInvalid)
				require.ErrorContains(t, err, c.want)
				continue
			}
			// Entries this large are refused for their squared norms,
			// not as non-finite; the L1 map, without them, takes them.
			require.ErrorContains(t, err, "overflow float64")
			require.NotContains(t, err.Error(), "not finite")
			src, err = Prepare(data, ElementMap{Kind: MapExpL1, C: -0.5}, GramOptions{}, false)
			require.NoError(t, err)
			require.NotNil(t, src)
		}
	}
	x := randData(45, n, d)
	x.Set(7, 3, math.Copysign(0, -1))
	for _, cp := range [][]float64{nil, make([]float64, n*d)} {
		sc, err := scan(native.Best(), newCounting(x), n, d, 0, cp, false, true)
		require.NoError(t, err)
		for j := 0; j < d; j++ {
			lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
			for i := 0; i < n; i++ {
				e := x.At(i, j)
				if e < lo {
					lo = e
				}
				if e > hi {
					hi = e
				}
			}
			for b := 0; b*256 < n; b++ {
				part := 0.0
				for i := b * 256; i < min(n, (b+1)*256); i++ {
					part += x.At(i, j)
				}
				sum += part
			}
			require.Equal(t, math.Float64bits(lo), math.Float64bits(sc.lo[j]), "column %d minimum", j)
			require.Equal(t, math.Float64bits(hi), math.Float64bits(sc.hi[j]), "column %d maximum", j)
			require.Equal(t, sum, sc.sums[j], "column %d sum", j)
		}
		for i := 0; i < n; i++ {
			v := 0.0
			for j := 0; j < d; j++ {
				v += x.At(i, j) * x.At(i, j)
			}
			require.Equal(t, v, sc.norms[i], "row %d norm", i)
		}
		if cp != nil {
			require.Equal(t, x.RawMatrix().Data, cp)
		}
	}
}

// Release gives a distance map's shifted rows back to package scratch (a
// later buffer of that size is served from them, at least once in ten
// tries) and leaves the Source unusable; the model's copy stays valid, and
// a Source whose rows are the copy or x itself gives nothing back.
func TestSourceRelease(t *testing.T) {
	x := randData(31, 300, 20) // not centred: shifted into a copy of 6000 entries
	em := Kernel{Kind: Gaussian, Sigma: 2}.ElementMap(20)
	o := GramOptions{Grid: GridOff}
	reused := false
	for try := 0; try < 10 && !reused; try++ {
		src, err := Prepare(x, em, o, true)
		require.NoError(t, err)
		lent := src.s.lent
		require.NotNil(t, lent, "the shifted rows are lent")
		cp := src.Copy()
		src.Release()
		require.Nil(t, src.s)
		require.True(t, mat.Equal(cp, x), "the copy stays valid")
		b := scratch.Float64s(len(lent))
		reused = &b[:1][0] == &lent[:1][0]
		scratch.Put(b)
	}
	require.True(t, reused, "the shifted rows never came back")
	lin, err := Prepare(x, Kernel{Kind: Linear}.ElementMap(20), o, false)
	require.NoError(t, err)
	require.Nil(t, lin.s.lent, "a linear map reads x in place")
	lin.Release()
	(*Source)(nil).Release()
}

// γ_d = d·u/(1 − d·u) for float32's u = 2⁻²⁴ (Higham's bound on a float32
// inner product of length d): closed forms at d·u = ½ and ¼, and its
// series d·u + (d·u)² + … for small d.
func TestGammaF32ClosedForm(t *testing.T) {
	require.Equal(t, 1.0, gammaF32(1<<23))
	require.Equal(t, 1.0/3, gammaF32(1<<22))
	du := 784.0 / (1 << 24)
	require.InDelta(t, du+du*du, gammaF32(784), 2*du*du*du) // du + du² + du³ + …
}

// BlockRel is γ_k for the float32 block's partial sums of k =
// native.SymmSingleChunk products plus x's own rounding to float32, u.
func TestBlockRelIsGammaPlusU(t *testing.T) {
	const u = 1.0 / (1 << 24)
	require.InDelta(t, gammaF32(native.SymmSingleChunk)+u, BlockRel, 1e-18)
	require.Greater(t, BlockRel, gammaF32(native.SymmSingleChunk))
}

// Store32Range bounds |k(x, y)| by maxNorm (linear) or (|γ|·maxNorm +
// |c₀|)^degree (polynomial) and refuses bounds above 2¹²⁰ or positive
// below 2⁻¹⁰⁰; the maps bounded by 1 always pass.
func TestStore32Range(t *testing.T) {
	lin := ElementMap{Kind: MapIdentity}
	poly := func(g, c float64, deg int) ElementMap {
		return ElementMap{Kind: MapPower, Gamma: g, Coef0: c, Degree: deg}
	}
	for _, c := range []struct {
		em      ElementMap
		maxNorm float64
		ok      bool
	}{
		{lin, 0x1p120, true}, {lin, 0x1p121, false}, {lin, 0, true}, {lin, 0x1p-100, true},
		{lin, 0x1p-101, false}, {lin, math.NaN(), false},
		{poly(0x1p30, 0, 2), 0x1p30, true}, {poly(0x1p30, 0, 2), 0x1p31, false},
		{poly(-0x1p40, 0, 2), 0x1p40, false}, {poly(0, -0x1p70, 2), 1, false}, {poly(0, 0x1p50, 3), 1, false},
		{poly(0x1p-30, 0, 2), 0x1p-10, true}, {poly(0x1p-30, 0, 3), 0x1p-10, false},
		{poly(0x1p-30, 1, 3), 0x1p-10, true}, {poly(0x1p100, 0x1p100, 0), 0x1p100, true},
		{poly(1, 1, 3), 0x1p39, true}, {poly(1, 1, 3), 0x1p41, false},
		{ElementMap{Kind: MapExpSq, C: -1}, 0x1p200, true}, {ElementMap{Kind: MapTanh, Gamma: 1}, 0x1p200, true},
		{ElementMap{Kind: MapCosine}, 0x1p200, true},
	} {
		err := Store32Range(c.em, c.maxNorm)
		if c.ok {
			require.NoError(t, err, "%+v at %g", c.em, c.maxNorm)
		} else {
			require.ErrorIs(t, err, status.ErrInvalid, "%+v at %g", c.em, c.maxNorm)
			require.ErrorContains(t, err, "float32's range")
		}
	}
}

// mapRows on an empty range of rows or columns — at the block's end
// included — leaves the block alone, on every path.
func TestMapRowsEmptyRanges(t *testing.T) {
	const ld = 4
	ni, nj := []float64{1, 2}, []float64{1, 2, 3, 4}
	for _, path := range []MapPath{MapNative, MapGo} {
		for _, em := range []ElementMap{{Kind: MapExpSq, C: -1}, {Kind: MapTanh, Gamma: 1}} {
			buf := []float64{1, 2, 3, 4, 5, 6, 7, 8}
			mapRows(buf, ld, 2, 2, 1, 3, ni, nj, em, path, native.Best())
			mapRows(buf, ld, 0, 2, 4, 4, ni, nj, em, path, native.Best())
			mapRows(buf, ld, 1, 0, 0, 4, ni, nj, em, path, native.Best())
			require.Equal(t, []float64{1, 2, 3, 4, 5, 6, 7, 8}, buf, "%v %v", path, em.Kind)
		}
	}
}
