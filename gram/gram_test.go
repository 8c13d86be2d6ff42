package gram

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"testing"

	"github.com/kdual/kdual/internal/probe"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/paths"
	"github.com/kdual/kdual/status"

	"github.com/stretchr/testify/require"
	"golang.org/x/exp/rand"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/native"
)

// gramPathCases lists every engine path this processor can run: OpenBLAS
// or native inner products, Go or vectorised maps, and the vectorised map
// in its AVX2 and baseline builds.
func gramPathCases() []struct {
	name     string
	o        GramOptions
	portable bool
} {
	type c = struct {
		name     string
		o        GramOptions
		portable bool
	}
	cases := []c{
		{"auto", GramOptions{}, false},
		{"blas+go", GramOptions{Inner: InnerBLAS, Map: MapGo}, false},
		{"blas+native", GramOptions{Inner: InnerBLAS, Map: MapNative}, false},
		{"blas+native-sse2", GramOptions{Inner: InnerBLAS, Map: MapNative}, true},
	}
	if native.HasDotKernel() {
		cases = append(cases, c{"native+native", GramOptions{Inner: InnerNative, Map: MapNative}, false})
	}
	return cases
}

// Every path of the engine agrees with the kernel formula evaluated
// directly, at sizes that cross the 256-row panels and are not multiples
// of any vector width; both triangles are stored and equal; the data are
// unchanged. Data are offset from the origin so that the shift by the
// column means matters.
func TestGramEnginePathsMatchFormula(t *testing.T) {
	x := randData(31, 531, 9)
	x.Apply(func(_, j int, v float64) float64 { return v + 3*float64(j) }, x)
	y := randData(32, 37, 9)
	before := mat.DenseCopyOf(x)
	for _, pc := range gramPathCases() {
		for _, k := range testKernels {
			if k.Kind == Gaussian || k.Kind == Laplace {
				k.Sigma *= 2
			}
			t.Run(fmt.Sprintf("%s/%v", pc.name, k.Kind), func(t *testing.T) {
				o := pc.o
				o.Baseline = pc.portable
				g, err := GramWith(x, k, o)
				require.NoError(t, err)
				raw := g.RawSymmetric()
				for i := 0; i < 531; i += 3 {
					for j := 0; j < 531; j++ {
						want := kernelFormula(k, x.RawRowView(i), x.RawRowView(j))
						got := raw.Data[i*raw.Stride+j]
						require.InDelta(t, want, got, 1e-11*math.Max(1, math.Abs(want)), "(%d,%d)", i, j)
						require.Equal(t, got, raw.Data[j*raw.Stride+i], "symmetric storage (%d,%d)", i, j)
					}
				}
				if k.Kind == Gaussian || k.Kind == Laplace {
					for i := 0; i < 531; i++ {
						require.Equal(t, 1.0, raw.Data[i*raw.Stride+i])
					}
				}
				c, err := CrossGramMapWith(y, x, k.ElementMap(9), o)
				require.NoError(t, err)
				for i := 0; i < 37; i++ {
					for j := 0; j < 531; j += 5 {
						want := kernelFormula(k, y.RawRowView(i), x.RawRowView(j))
						require.InDelta(t, want, c.At(i, j), 1e-11*math.Max(1, math.Abs(want)))
					}
				}
			})
		}
	}
	require.True(t, mat.Equal(before, x), "Gram modified its input")
}

// The vectorised exponential agrees with math.Exp to a few ulp over the
// whole range the kernels use, in both builds, and flushes below −708.
func TestRBFMapAgainstMathExp(t *testing.T) {
	for _, portable := range []bool{false, true} {
		func() {
			b := native.Best()
			if portable {
				b = native.Baseline()
			}
			const n = 4001
			g := make([]float64, n)
			nj := make([]float64, n)
			for j := range g {
				nj[j] = 750 * float64(j) / float64(n-1) // δ from 0 to 750
			}
			b.RBFMap(1, n, g, n, []float64{0}, nj, -1, false)
			for j, v := range g {
				want := math.Exp(-nj[j])
				if nj[j] > 708 {
					want = 0
				}
				require.InDelta(t, want, v, 4e-16*want, "portable=%v δ=%g", portable, nj[j])
			}
		}()
	}
}

// The float32 tiles' build reports its progress panel by panel, in kernel
// entries of the upper triangle: never decreasing, never past the total,
// at each report the entries of the panels finished (so the diagonal
// panels count their triangles only), the total at the end — on a matrix
// of many tile rows, float64 and float32 products.
func TestGramTiles32Progress(t *testing.T) {
	const n = 2600
	x := randData(23, n, 5)
	total := int64(n) * (n + 1) / 2
	for _, prec := range []ProductPrecision{ProductsFloat64, ProductsFloat32} {
		var seen []int64
		o := GramOptions{Products: prec, Progress: func(done, tot int64) {
			require.Equal(t, total, tot)
			seen = append(seen, done)
		}}
		s, err := GramTiles32(x, testKernels[0].ElementMap(5), o)
		require.NoError(t, err)
		s.Free()
		require.Greater(t, len(seen), 2, "%v: reports", prec)
		for q, v := range seen {
			require.LessOrEqual(t, v, total, "%v: progress %d past the total", prec, q)
			if q > 0 {
				require.GreaterOrEqual(t, v, seen[q-1], "%v: progress %d went back", prec, q)
			}
		}
		require.Equal(t, total, seen[len(seen)-1])
	}
}

// The full kernel matrix's build (GramMap) reports its progress the same
// way: the upper triangle's n(n + 1)/2 entries as the total, never
// decreasing, the total at the end, and each report a whole number of
// panels' rows (i₀·n − i₀(i₀ − 1)/2 for the first row i₀ not yet done).
func TestGramMapProgress(t *testing.T) {
	const n = 1300
	x := randData(29, n, 5)
	total := int64(n) * (n + 1) / 2
	var seen []int64
	o := GramOptions{Progress: func(done, tot int64) {
		require.Equal(t, total, tot)
		seen = append(seen, done)
	}}
	_, err := GramMap(x, testKernels[0].ElementMap(5), o)
	require.NoError(t, err)
	require.Greater(t, len(seen), 2, "reports")
	rowsDone := func(i0 int64) int64 { return i0*n - i0*(i0-1)/2 }
	for q, v := range seen[:len(seen)-1] {
		i0 := sort.Search(n+1, func(i int) bool { return rowsDone(int64(i)) >= v })
		require.Equal(t, rowsDone(int64(i0)), v, "progress %d is not a whole number of rows", q)
		if q > 0 {
			require.Greater(t, v, seen[q-1], "progress %d did not advance", q)
		}
	}
	require.Equal(t, total, seen[len(seen)-1])
}

// The half-stored float32 matrix holds every entry of the float64 Gram
// rounded once (relative error ≤ 2⁻²⁴), zeros past n, and reads back
// symmetric through At.
func TestGramTiles32MatchesGram(t *testing.T) {
	x := randData(21, 600, 9)
	for _, k := range testKernels {
		for _, pc := range gramPathCases() {
			g, err := GramWith(x, k, pc.o)
			require.NoError(t, err)
			s, err := GramTiles32(x, k.ElementMap(cols(x)), pc.o)
			require.NoError(t, err)
			require.Equal(t, 3, s.NT)
			require.EqualValues(t, 4*6*256*256, s.Bytes())
			for i := 0; i < 600; i++ {
				for j := 0; j < 600; j++ {
					want := g.At(i, j)
					require.InDelta(t, want, s.At(i, j), 6e-8*math.Abs(want)+1e-300, "%v %s (%d,%d)", k, pc.name, i, j)
				}
			}
			last := s.Tile(2, 2)
			for r := 0; r < 256; r++ {
				for c := 0; c < 256; c++ {
					if 512+r >= 600 || 512+c >= 600 {
						require.Zero(t, last[r*256+c])
					}
				}
			}
			s.Free()
		}
	}
	_, err := GramTiles32(x, Kernel{Kind: Gaussian}.ElementMap(cols(x)), GramOptions{})
	require.ErrorIs(t, err, status.ErrInvalid)
	a, err := Gram(x, testKernels[1])
	require.NoError(t, err)
	s, err := TilesFromSym(a)
	require.NoError(t, err)
	for i := 0; i < 600; i += 7 {
		for j := 0; j < 600; j += 3 {
			require.InDelta(t, a.At(i, j), s.At(i, j), 6e-8*math.Abs(a.At(i, j)))
		}
	}
}

// KernelRows computes any block of the Gram matrix and test-kernel blocks
// of new points equal to CrossGram's, and keeps its own copy of the data.
func TestKernelRowsBlocks(t *testing.T) {
	x := randData(5, 300, 6)
	y := randData(6, 11, 6)
	for _, k := range testKernels {
		g, err := Gram(x, k)
		require.NoError(t, err)
		c, err := CrossGram(y, x, k)
		require.NoError(t, err)
		xc := mat.DenseCopyOf(x)
		kr, err := NewKernelRows(xc, k.ElementMap(cols(xc)), GramOptions{})
		require.NoError(t, err)
		xc.Zero()
		out := make([]float64, 40*100)
		kr.Block(out, 100, 250, 290, 200, 300)
		for i := 0; i < 40; i++ {
			for j := 0; j < 100; j++ {
				want := g.At(250+i, 200+j)
				require.InDelta(t, want, out[i*100+j], 1e-12*math.Max(1, math.Abs(want)))
			}
		}
		cross := make([]float64, 11*300)
		require.NoError(t, kr.Cross(cross, 300, y, 0, 300))
		for i := 0; i < 11; i++ {
			for j := 0; j < 300; j++ {
				require.InDelta(t, c.At(i, j), cross[i*300+j], 1e-12*math.Max(1, math.Abs(c.At(i, j))))
			}
		}
		require.ErrorIs(t, kr.Cross(cross, 300, randData(1, 2, 5), 0, 300), status.ErrInvalid)
		// Blocks of one row or one column, on either inner path (the
		// native tiles fall back to BLAS where the processor lacks them).
		for _, inner := range []InnerPath{InnerBLAS, InnerNative} {
			kr1, err := NewKernelRows(x, k.ElementMap(cols(x)), GramOptions{Inner: inner})
			require.NoError(t, err)
			row, col := make([]float64, 300), make([]float64, 40)
			for _, i := range []int{0, 250, 299} {
				kr1.Block(row, 300, i, i+1, 0, 300)
				kr1.Block(col, 1, 250, 290, i, i+1)
				for j := 0; j < 300; j++ {
					want := g.At(i, j)
					require.InDelta(t, want, row[j], 1e-12*math.Max(1, math.Abs(want)), "%v inner %v: row %d, column %d", k.Kind, inner, i, j)
				}
				for r := 0; r < 40; r++ {
					want := g.At(250+r, i)
					require.InDelta(t, want, col[r], 1e-12*math.Max(1, math.Abs(want)), "%v inner %v: row %d, column %d", k.Kind, inner, 250+r, i)
				}
			}
		}
	}
}

// Tune times every alternative, counts itself as a probe, and chooses the
// faster of each pair it timed; the rules stay in force until a program
// sets the tuned value.
func TestTune(t *testing.T) {
	before := probe.Count()
	p, tm := Tune()
	require.Greater(t, probe.Count(), before)
	require.Equal(t, "tuned", p.Source)
	require.Greater(t, tm.MapGo, 0.0)
	require.Greater(t, tm.MapNative, 0.0)
	require.Equal(t, tm.MapNative < tm.MapGo, p.MapNative)
	require.Greater(t, tm.SymmBLAS, 0.0)
	require.Greater(t, tm.SymmTiled, 0.0)
	require.Equal(t, tm.SymmTiled < tm.SymmBLAS, p.SymmNative)
	require.Greater(t, tm.SymmSingle, 0.0)
	require.Greater(t, tm.Symm64, 0.0)
	require.Equal(t, tm.SymmSingle < tm.Symm64, p.SingleBlocks)
	require.Greater(t, tm.GridDgemm, 0.0)
	require.Equal(t, tm.GridSgemm < tm.GridDgemm, p.Grid)
	if native.HasDotKernel() {
		require.Greater(t, tm.InnerBLAS, 0.0)
		require.Equal(t, tm.InnerNative < tm.InnerBLAS, p.InnerNative)
	} else {
		require.False(t, p.InnerNative)
		require.Zero(t, tm.InnerBLAS)
	}
	if native.HasWide() {
		require.Greater(t, tm.SyrkBLAS, 0.0)
		require.Greater(t, tm.SyrkNative, 0.0)
		require.Equal(t, tm.SyrkNative < tm.SyrkBLAS, p.SyrkNative)
		require.Greater(t, tm.GemmBLAS, 0.0)
		require.Greater(t, tm.GemmNative, 0.0)
		require.Equal(t, tm.GemmNative < tm.GemmBLAS, p.GemmNative)
		require.Equal(t, tm.Symm512 < wideMargin*tm.Symm2, p.WideSymm)
		require.Equal(t, tm.Single512 < wideMargin*tm.Single2, p.WideSingle)
		require.Equal(t, tm.Symv512 < wideMargin*tm.Symv2, p.WideSymv)
	}
	require.NoError(t, p.Check(paths.Detect()))
	require.Len(t, p.Reasons, len(paths.Known))
	timed := map[string]float64{"inner": tm.InnerNative + tm.InnerBLAS, "map": tm.MapNative + tm.MapGo, "grid": tm.GridSgemm + tm.GridDgemm,
		"int8": tm.Int8 + tm.Int8Sgemm, "symm": tm.SymmTiled + tm.SymmBLAS, "syrk": tm.SyrkNative + tm.SyrkBLAS,
		"gemm":   tm.GemmNative + tm.GemmBLAS,
		"single": tm.SymmSingle + tm.Symm64,
		"avx512": tm.Symm512 + tm.Symm2, "huge pages": tm.HugeSeconds + tm.SmallSeconds}
	for i, path := range paths.Known {
		c, _ := p.Choice(path)
		require.Equal(t, path, p.Reasons[i].Path)
		require.Equal(t, c, p.Reasons[i].Choice, "the tuned reasons follow the values")
		if timed[path] > 0 {
			require.Contains(t, p.Reasons[i].Why, "measured", path)
		} else {
			require.Contains(t, p.Reasons[i].Why, "not timed here", path)
			require.NotContains(t, p.Reasons[i].Why, "measured", path)
		}
	}
	require.Equal(t, "rules", paths.Current().Source, "Tune put its value in force")
}

// SymMulUpper and the half-stored products agree with gonum's product for
// blocks of 1 to 9 columns, at sizes that are not multiples of the tile or
// of 4, in the AVX2 and the baseline builds; SymMulUpper reads only the
// upper triangle (the lower one holds garbage here).
func TestSymmetricProductsAgree(t *testing.T) {
	for _, portable := range []bool{false, true} {
		func() {
			build := native.Best()
			if portable {
				build = native.Baseline()
			}
			for _, n := range []int{1, 7, 257, 530} {
				a := mat.NewSymDense(n, nil)
				raw := a.RawSymmetric()
				x := randData(uint64(n), n, 9)
				for i := 0; i < n; i++ {
					for j := 0; j < n; j++ {
						if j >= i {
							raw.Data[i*raw.Stride+j] = x.At(j, 0)*x.At(i, 1) + x.At(i, 0)*x.At(j, 1) + float64(i+j)/float64(n)
						} else {
							raw.Data[i*raw.Stride+j] = math.NaN() // never read
						}
					}
				}
				tiles, err := NewSymTiles32(n)
				require.NoError(t, err)
				for i := 0; i < n; i++ {
					for j := i; j < n; j++ {
						I, J := i/256, j/256
						v := float32(a.At(i, j))
						tl := tiles.Tile(I, J)
						tl[(i-I*256)*256+(j-J*256)] = v
						if I == J {
							tl[(j-J*256)*256+(i-I*256)] = v
						}
					}
				}
				for _, b := range []int{1, 2, 4, 5, 7, 9} {
					xb := randData(uint64(b), n, b)
					var want mat.Dense
					want.Mul(a, xb)
					got := mat.NewDense(n, b, nil)
					SymMulUpperOn(build, a, xb, got)
					tol := 1e-12 * math.Max(1, mat.Norm(&want, math.Inf(1)))
					require.True(t, mat.EqualApprox(&want, got, tol), "SymMulUpper n=%d b=%d portable=%v", n, b, portable)
					got32 := mat.NewDense(n, b, nil)
					tiles.MulBlockOn(build, got32, xb)
					// float32 storage: |Δ| ≤ 2⁻²⁴·Σ|a||x| ≤ 6e-8·‖A‖∞‖x‖∞.
					tol32 := 6e-8*mat.Norm(a, math.Inf(1))*mat.Norm(xb, math.Inf(1)) + tol
					require.True(t, mat.EqualApprox(&want, got32, tol32), "MulBlock n=%d b=%d", n, b)
					// float32 arithmetic (blocks of more than 6 columns):
					// within BlockRel·(|A|·|x|) more, and the same result
					// as float64 arithmetic for narrower blocks.
					tiles.SingleBlocks = true
					single := mat.NewDense(n, b, nil)
					tiles.MulBlockOn(build, single, xb)
					tiles.SingleBlocks = false
					tolS := BlockRel*mat.Norm(a, math.Inf(1))*mat.Norm(xb, math.Inf(1)) + tol32
					require.True(t, mat.EqualApprox(&want, single, tolS), "MulBlock single n=%d b=%d", n, b)
					if b <= symmTMax32 {
						require.True(t, mat.Equal(got32, single), "MulBlock single n=%d b=%d: not the float64 path", n, b)
					} else if n > 7 {
						require.False(t, mat.Equal(got32, single), "MulBlock single n=%d b=%d: the float64 path", n, b)
					}
					if b == 1 {
						y := make([]float64, n)
						tiles.MulVecOn(build, y, xb.RawMatrix().Data)
						for i := range y {
							require.InDelta(t, want.At(i, 0), y[i], tol32, "MulVec n=%d", n)
						}
					}
				}
				tiles.Free()
			}
		}()
	}
}

// UpperOnly leaves the lower triangle zero and the upper one equal to the
// full Gram's, on every engine path (the native inner products compute
// whole diagonal tiles, and must clear their lower halves as sgemm's
// diagonal blocks are).
func TestGramUpperOnly(t *testing.T) {
	x := randData(3, 600, 5)
	k := Kernel{Kind: Laplace, Sigma: 3}
	for _, pc := range gramPathCases() {
		o := pc.o
		o.Baseline = pc.portable
		full, err := GramWith(x, k, o)
		require.NoError(t, err)
		o.UpperOnly = true
		up, err := GramWith(x, k, o)
		require.NoError(t, err)
		fr, ur := full.RawSymmetric(), up.RawSymmetric()
		for i := 0; i < 600; i++ {
			for j := 0; j < 600; j++ {
				if j >= i {
					require.Equal(t, fr.Data[i*600+j], ur.Data[i*600+j], pc.name)
				} else {
					require.Zero(t, ur.Data[i*600+j], "%s (%d, %d)", pc.name, i, j)
				}
			}
		}
	}
}

// With float32 inner products every entry stays within its stated bound
// of the float64 kernel (Gaussian, Laplace, polynomial), through the
// tiles and through KernelRows, and the bound is not vacuous.
func TestFloat32ProductsWithinBound(t *testing.T) {
	x := randData(41, 400, 30)
	x.Apply(func(_, j int, v float64) float64 { return v + float64(j%3) }, x)
	o := GramOptions{Products: ProductsFloat32}
	out := make([]float64, 400*400)
	// within checks the float32 rows of em against the float64 matrix ref:
	// every entry within its bound, and the bound not far from the error.
	within := func(what string, em ElementMap, ref mat.Matrix) {
		kr, err := NewKernelRows(x, em, o)
		require.NoError(t, err)
		require.Equal(t, ProductsFloat32, kr.Products())
		kr.Block(out, 400, 0, 400, 0, 400)
		worst := 0.0
		for i := 0; i < 400; i++ {
			for j := 0; j < 400; j++ {
				v := out[i*400+j]
				b := kr.EntryBound(i, j, v) + 1e-13*math.Abs(v)
				require.LessOrEqual(t, math.Abs(v-ref.At(i, j)), b, "%s (%d,%d)", what, i, j)
				if b > 0 && i != j {
					worst = math.Max(worst, math.Abs(v-ref.At(i, j))/b)
				}
			}
		}
		require.Greater(t, worst, 1e-6, "%s: the bound is far from the error", what)
	}
	for _, k := range []Kernel{{Kind: Gaussian, Sigma: 6}, {Kind: Laplace, Sigma: 20}, {Kind: Polynomial, Degree: 2, Coef0: 1}} {
		g, err := Gram(x, k)
		require.NoError(t, err)
		within(k.Kind.String(), k.ElementMap(cols(x)), g)
		if k.Kind == Gaussian {
			s, err := GramTiles32(x, k.ElementMap(cols(x)), o)
			require.NoError(t, err)
			require.Less(t, s.EntryRel, 1e-2)
			for i := 0; i < 400; i++ {
				for j := 0; j < 400; j++ {
					require.LessOrEqual(t, math.Abs(s.At(i, j)-g.At(i, j)), s.EntryRel*g.At(i, j)*1.0001+1e-300)
				}
			}
			s.Free()
		}
	}
	// The maps without a kernel of this package's own.
	for _, em := range []ElementMap{{Kind: MapCosine}, {Kind: MapTanh, Gamma: 0.01, Coef0: 0.2}} {
		ref, err := GramMap(x, em, GramOptions{})
		require.NoError(t, err)
		within(fmt.Sprintf("map %d", em.Kind), em, ref)
	}
}

// An explicit worker count gives the same matrix, bit for bit, as the
// default (each entry is computed by one goroutine whatever their number).
func TestGramWorkersExplicit(t *testing.T) {
	x := randData(11, 700, 9)
	for _, k := range testKernels {
		one, err := GramWith(x, k, GramOptions{Workers: 1})
		require.NoError(t, err)
		many, err := GramWith(x, k, GramOptions{Workers: 3})
		require.NoError(t, err)
		def, err := GramWith(x, k, GramOptions{})
		require.NoError(t, err)
		require.True(t, mat.Equal(one, def), "%v", k.Kind)
		require.True(t, mat.Equal(many, def), "%v", k.Kind)
	}
}

// Bands of tile rows (one process's share of a matrix split by rows) hold
// exactly GramTiles32's entries, and the bands' products sum to the whole
// matrix's: MulBlock and MulVec, for splits [0,1)+[1,3) and one band per
// tile row.
func TestGramTiles32Bands(t *testing.T) {
	x := randData(23, 700, 6)
	em := Kernel{Kind: Gaussian, Sigma: 2}.ElementMap(cols(x))
	full, err := GramTiles32(x, em, GramOptions{})
	require.NoError(t, err)
	defer full.Free()
	xb := mat.NewDense(700, 5, randData(24, 700, 5).RawMatrix().Data)
	want := mat.NewDense(700, 5, nil)
	full.MulBlock(want, xb)
	wantV := make([]float64, 700)
	full.MulVec(wantV, xb.RawMatrix().Data[:700])
	for _, split := range [][]int{{0, 1, 3}, {0, 1, 2, 3}} {
		sum := mat.NewDense(700, 5, nil)
		sumV := make([]float64, 700)
		for p := 0; p+1 < len(split); p++ {
			band, err := GramTiles32Band(x, em, GramOptions{}, split[p], split[p+1])
			require.NoError(t, err)
			lo, hi := band.Rows()
			require.Equal(t, split[p]*256, lo)
			require.Equal(t, min(split[p+1]*256, 700), hi)
			for i := lo; i < hi; i++ {
				for j := i; j < 700; j += 3 {
					require.Equal(t, full.At(i, j), band.At(i, j), "entry (%d,%d)", i, j)
				}
			}
			part := mat.NewDense(700, 5, nil)
			band.MulBlock(part, xb)
			for i := 0; i < lo; i++ {
				require.Zero(t, mat.Norm(part.RowView(i), 2), "row %d above the band", i)
			}
			sum.Add(sum, part)
			pv := make([]float64, 700)
			band.MulVec(pv, xb.RawMatrix().Data[:700])
			for i := range sumV {
				sumV[i] += pv[i]
			}
			band.Free()
		}
		var d mat.Dense
		d.Sub(sum, want)
		require.Less(t, mat.Norm(&d, math.Inf(1)), 1e-12*mat.Norm(want, math.Inf(1)))
		for i := range sumV {
			require.InDelta(t, wantV[i], sumV[i], 1e-12*math.Abs(wantV[i])+1e-12)
		}
	}
	for _, bad := range [][2]int{{-1, 1}, {2, 2}, {0, 4}} {
		_, err := NewSymTiles32Band(700, bad[0], bad[1])
		require.ErrorIs(t, err, status.ErrInvalid, "band %v", bad)
	}
	// Chunks of one tile row by two tiles: the same entries.
	defer func(r, c int) { gramChunkRows, gramChunkCols = r, c }(gramChunkRows, gramChunkCols)
	gramChunkRows, gramChunkCols = 256, 512
	small, err := GramTiles32(x, em, GramOptions{})
	require.NoError(t, err)
	defer small.Free()
	for i := 0; i < 700; i++ {
		for j := i; j < 700; j++ {
			require.InDelta(t, full.At(i, j), small.At(i, j), 1e-7*math.Abs(full.At(i, j)), "entry (%d,%d)", i, j)
		}
	}
}

// The float64 bands hold the Gram matrix's entries (tile sides 512, 256
// and 96; chunks of the default size and of 2×3 tiles of side 96, so
// that a band spans several chunks of rows and columns) and their
// products, on both native builds and both block kernels, sum to G·x.
func TestGramTiles64Bands(t *testing.T) {
	// Random data, and 8-bit pixels on their integer grid (exact float32
	// products mapped straight into the tiles), against the float64 path.
	testGramTiles64Bands(t, randData(25, 530, 7), GramOptions{})
	testGramTiles64Bands(t, pixelData(pixelInts(25, 530, 40), 530, 40, true), GramOptions{Grid: GridOn})
	require.Equal(t, TileSize, TileSide64For(8*TileSize64-1))
	require.Equal(t, TileSize64, TileSide64For(8*TileSize64))
	for _, bad := range [][3]int{{6, 0, 1}, {256, 0, 4}, {256, 1, 1}} {
		_, err := NewSymTiles64Band(530, bad[0], bad[1], bad[2])
		require.ErrorIs(t, err, status.ErrInvalid, "%v", bad)
	}
	// A band's tiles: (I, J) for I a stored row and I ≤ J < NT, each its
	// own T² entries in order; any other (I, J) is refused, also past the
	// last column on a row whose next row's tiles would follow.
	b, err := NewSymTiles64Band(1000, 128, 2, 5) // NT = 8: rows 2, 3, 4
	require.NoError(t, err)
	next := 0
	for I := 2; I < 5; I++ {
		for J := I; J < 8; J++ {
			tile := b.Tile(I, J)
			require.Len(t, tile, 128*128)
			require.Equal(t, &b.Data[next], &tile[0], "tile (%d, %d)", I, J)
			next += 128 * 128
		}
	}
	require.Equal(t, len(b.Data), next)
	for _, ij := range [][2]int{{2, 8}, {3, 8}, {4, 8}, {1, 3}, {5, 6}, {3, 2}} {
		require.PanicsWithValue(t, fmt.Sprintf("linalg: SymTiles64: tile (%d, %d) is not stored (tile rows [2, 5))", ij[0], ij[1]),
			func() { b.Tile(ij[0], ij[1]) }, "tile %v", ij)
	}
}

func testGramTiles64Bands(t *testing.T, x *mat.Dense, o GramOptions) {
	em := Kernel{Kind: Laplace, Sigma: 3}.ElementMap(cols(x))
	g, err := GramMap(x, em, GramOptions{Grid: GridOff})
	require.NoError(t, err)
	xb := randData(26, 530, 6)
	var want mat.Dense
	want.Mul(g, xb)
	defer func(r, c int) { gramChunkRows, gramChunkCols = r, c }(gramChunkRows, gramChunkCols)
	for _, side := range []int{TileSize64, 256, 96, -96} {
		if side < 0 {
			side = -side
			gramChunkRows, gramChunkCols = 2*side, 3*side
		}
		nt := (530 + side - 1) / side
		for _, portable := range []bool{false, true} {
			build := native.Best()
			if portable {
				build = native.Baseline()
			}
			sum := mat.NewDense(530, 6, nil)
			for _, band := range [][2]int{{0, 1}, {1, nt}} {
				st, err := GramTiles64Band(x, em, o, side, band[0], band[1])
				require.NoError(t, err)
				lo, hi := st.Rows()
				for i := lo; i < hi; i++ {
					for j := i; j < 530; j += 5 {
						require.InDelta(t, g.At(i, j), st.At(i, j), 1e-14, "side %d (%d,%d)", side, i, j)
					}
				}
				part := mat.NewDense(530, 6, nil)
				st.MulBlockOn(build, part, xb)
				sum.Add(sum, part)
				// Three columns (the transposed-block kernel) give the
				// first three of the six-column product (the row-major one).
				p3 := mat.NewDense(530, 3, nil)
				st.MulBlockOn(build, p3, xb.Slice(0, 530, 0, 3).(*mat.Dense))
				for i := 0; i < 530; i++ {
					for c := 0; c < 3; c++ {
						require.InDelta(t, part.At(i, c), p3.At(i, c), 1e-12*(1+math.Abs(part.At(i, c))), "side %d b=3 (%d,%d)", side, i, c)
					}
				}
				// One vector through the tile symv equals the block's
				// first column.
				xv := mat.Col(nil, 0, xb)
				yv := make([]float64, 530)
				st.MulVecOn(build, yv, xv)
				for i := range yv {
					require.InDelta(t, part.At(i, 0), yv[i], 1e-12*(1+math.Abs(part.At(i, 0))), "side %d MulVec row %d", side, i)
				}
			}
			var d mat.Dense
			d.Sub(sum, &want)
			require.Less(t, mat.Norm(&d, math.Inf(1)), 1e-12*mat.Norm(&want, math.Inf(1)), "side %d portable %v", side, portable)
		}
	}
}

// Data already centred are read in place (the shift would be zero to
// rounding, so no copy), other data are shifted by their means; either
// way the Gram matrix and the kernel rows of new points match the kernel
// formula, and neither input is modified.
func TestGramSourceCentredInPlace(t *testing.T) {
	const n, d, sigma = 300, 5, 1.3
	em := Kernel{Kind: Gaussian, Sigma: sigma}.ElementMap(d)
	centred := randData(31, n, d)
	linalg.CenterColumns(centred)
	shifted := randData(32, n, d)
	for j := 0; j < d; j++ {
		for i := 0; i < n; i++ {
			shifted.Set(i, j, shifted.At(i, j)+float64(j+1))
		}
	}
	y := randData(33, 7, d)
	for _, c := range []struct {
		x       *mat.Dense
		inPlace bool
	}{{centred, true}, {shifted, false}} {
		before, yBefore := mat.DenseCopyOf(c.x), mat.DenseCopyOf(y)
		s, shift := newGramSource(c.x, em, GramOptions{}, nil)
		require.Equal(t, c.inPlace, &s.x.Data[0] == &c.x.RawMatrix().Data[0])
		require.Equal(t, shift, s.shiftBy)
		if c.inPlace {
			require.Equal(t, make([]float64, d), shift)
		}
		g, err := GramMap(c.x, em, GramOptions{})
		require.NoError(t, err)
		rows, err := NewKernelRows(c.x, em, GramOptions{})
		require.NoError(t, err)
		out := make([]float64, 7*n)
		require.NoError(t, rows.Cross(out, n, y, 0, n))
		for i := 0; i < n; i += 7 {
			for j := 0; j < n; j += 5 {
				var d2 float64
				for k := 0; k < d; k++ {
					v := c.x.At(i, k) - c.x.At(j, k)
					d2 += v * v
				}
				require.InDelta(t, math.Exp(-d2/(2*sigma*sigma)), g.At(i, j), 1e-14)
			}
		}
		for i := 0; i < 7; i++ {
			for j := 0; j < n; j += 3 {
				var d2 float64
				for k := 0; k < d; k++ {
					v := y.At(i, k) - c.x.At(j, k)
					d2 += v * v
				}
				require.InDelta(t, math.Exp(-d2/(2*sigma*sigma)), out[i*n+j], 1e-14)
			}
		}
		require.Equal(t, before, c.x)
		require.Equal(t, yBefore, y)
	}
}

// A Gram with float32 inner products multiplies blocks of more than six
// columns in float32 arithmetic (SingleBlocks), one with float64 products
// does not; bands of such a matrix sum to the whole matrix's product, and
// the product is within BlockRel·(|A|·|x|) of the float64 arithmetic's.
func TestGramTiles32SingleBlocks(t *testing.T) {
	x := randData(31, 600, 5)
	em := Kernel{Kind: Gaussian, Sigma: 2}.ElementMap(cols(x))
	f64, err := GramTiles32(x, em, GramOptions{})
	require.NoError(t, err)
	defer f64.Free()
	require.False(t, f64.SingleBlocks)
	full, err := GramTiles32(x, em, GramOptions{Products: ProductsFloat32})
	require.NoError(t, err)
	defer full.Free()
	require.True(t, full.SingleBlocks)
	xb := randData(32, 600, 9)
	want := mat.NewDense(600, 9, nil)
	full.MulBlock(want, xb)
	full.SingleBlocks = false
	exact := mat.NewDense(600, 9, nil)
	full.MulBlock(exact, xb)
	full.SingleBlocks = true
	// |A|·|x| ≤ ‖A‖∞·max|x| entry by entry (A is positive here).
	ainf := 0.0
	for i := 0; i < 600; i++ {
		r := 0.0
		for j := 0; j < 600; j++ {
			r += math.Abs(full.At(i, j))
		}
		ainf = math.Max(ainf, r)
	}
	require.True(t, mat.EqualApprox(want, exact, BlockRel*ainf*mat.Norm(xb, math.Inf(1))))
	require.False(t, mat.Equal(want, exact), "float32 arithmetic gave float64's result")
	sum := mat.NewDense(600, 9, nil)
	for _, band := range [][2]int{{0, 1}, {1, 3}} {
		st, err := GramTiles32Band(x, em, GramOptions{Products: ProductsFloat32}, band[0], band[1])
		require.NoError(t, err)
		require.True(t, st.SingleBlocks)
		part := mat.NewDense(600, 9, nil)
		st.MulBlock(part, xb)
		sum.Add(sum, part)
		st.Free()
	}
	require.True(t, mat.EqualApprox(sum, want, 1e-12*mat.Norm(want, math.Inf(1))))
}

// PanelSymm adds a panel of a symmetric matrix into both sides: over all
// panels of a matrix (on the diagonal and right of it, a last partial
// tile and slab, NaN below the diagonal) the sum is A·X, on every native
// build and any number of accumulators, which it leaves cleared; the same
// bits again for the same count.
func TestPanelSymm(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	const n, bp, rows, cols = 1100, 8, 512, 700
	a := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			a.SetSym(i, j, rng.NormFloat64())
		}
	}
	x := make([]float64, n*bp)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	want := mat.NewDense(n, bp, nil)
	want.Mul(a, mat.NewDense(n, bp, x))
	panel := make([]float64, rows*cols)
	pass := func(b native.Build, workers, step int) []float64 {
		acc := make([][]float64, workers)
		for w := range acc {
			acc[w] = make([]float64, rows*bp)
		}
		y := make([]float64, n*bp)
		for i0 := 0; i0 < n; i0 += step {
			i1 := min(i0+step, n)
			for j0 := i0; j0 < n; j0 += cols {
				j1 := min(j0+cols, n)
				for i := i0; i < i1; i++ {
					for j := j0; j < j1; j++ {
						v := math.NaN() // below the diagonal: never read
						if j >= i {
							v = a.At(i, j)
						}
						panel[(i-i0)*cols+j-j0] = v
					}
				}
				PanelSymmOn(b, panel, cols, i0, i1, j0, j1, x, y, bp, acc)
				for _, ac := range acc {
					require.Equal(t, 0.0, floats.Norm(ac, 1), "the accumulators cleared")
				}
			}
		}
		return y
	}
	// Row panels of 512 (whole tiles) and of 300 (diagonal panels not
	// whole tiles, their columns going past them).
	for _, b := range native.Builds() {
		for _, workers := range []int{1, 2, 3} {
			y, y300 := pass(b, workers, 512), pass(b, workers, 300)
			for i := 0; i < n; i++ {
				for c := 0; c < bp; c++ {
					require.InDelta(t, want.At(i, c), y300[i*bp+c], 1e-11, "%s workers %d rows of 300 (%d,%d)", b.Name(), workers, i, c)
				}
			}
			for i := 0; i < n; i++ {
				for c := 0; c < bp; c++ {
					require.InDelta(t, want.At(i, c), y[i*bp+c], 1e-11, "%s workers %d (%d,%d)", b.Name(), workers, i, c)
				}
			}
			require.Equal(t, y, pass(b, workers, 512), "%s workers %d: the same bits", b.Name(), workers)
		}
	}
}

// The Laplace cross kernel of points against themselves is exactly 1 on
// the diagonal and between duplicates (the distance of near duplicates
// recomputed from the rows), and every entry is exp(C·‖x − y‖) of the
// direct distance to rounding, far from the origin too.
func TestLaplaceCrossNearDuplicates(t *testing.T) {
	const n, d = 60, 9
	x := mat.NewDense(n, d, nil)
	r := rand.New(rand.NewSource(5))
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, 100+r.NormFloat64())
		}
	}
	x.SetRow(11, x.RawRowView(4))
	y := mat.DenseCopyOf(x.Slice(0, 20, 0, d))
	y.Set(5, 2, y.At(5, 2)+1e-9) // a near duplicate of row 5
	em := ElementMap{Kind: MapExpDist, C: -0.5}
	k, err := CrossGramMap(y, x, em)
	require.NoError(t, err)
	for i := 0; i < 20; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for e := 0; e < d; e++ {
				t := y.At(i, e) - x.At(j, e)
				s += t * t
			}
			want := math.Exp(-0.5 * math.Sqrt(s))
			require.InDelta(t, want, k.At(i, j), 1e-13, "(%d, %d)", i, j)
		}
		if i != 5 {
			require.Equal(t, 1.0, k.At(i, i), "row %d against itself", i)
		}
	}
	require.Equal(t, 1.0, k.At(4, 11), "a duplicate")
}

// Entries whose squared norms and distances would overflow are refused
// before any kernel value (they gave NaN distances that the map turned
// into kernel values of 1); up to √(max/8d) they build, and the Gaussian
// of such far-apart rows is the identity as its formula says. The L1 map
// has no squared norms and takes them.
func TestPrepareHugeEntries(t *testing.T) {
	const n, d = 6, 5
	x := randData(31, n, d)
	scale := func(f float64) *mat.Dense {
		y := mat.DenseCopyOf(x)
		y.Scale(f/mat.Norm(x, math.Inf(1)), y) // largest |x_ij| ≤ f
		return y
	}
	limit := maxEntry(d)
	gauss := ElementMap{Kind: MapExpSq, C: -1.0 / d}
	for _, em := range []ElementMap{gauss, {Kind: MapExpDist, C: -1}, {Kind: MapIdentity}, {Kind: MapPower, Gamma: 1, Coef0: 1, Degree: 2}} {
		_, err := GramMap(scale(4*limit), em, GramOptions{})
		require.ErrorIs(t, err, status.ErrInvalid, "%v", em.Kind)
		require.ErrorContains(t, err, "overflow float64", "%v", em.Kind)
	}
	// An entry just below the documented bound √(max/8d) builds.
	edge := mat.DenseCopyOf(x)
	edge.Set(2, 3, -math.Sqrt(math.MaxFloat64/(8*d))*(1-1e-12))
	_, err := GramMap(edge, gauss, GramOptions{})
	require.NoError(t, err)
	g, err := GramMap(scale(limit/4), gauss, GramOptions{})
	require.NoError(t, err)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			require.Equal(t, want, g.At(i, j), "(%d, %d)", i, j)
		}
	}
	_, err = GramMap(scale(1e300), ElementMap{Kind: MapExpL1, C: -1}, GramOptions{})
	require.NoError(t, err)
}

// Every element map, full and cross, against its formula computed directly
// from the rows (not through the engine's norms or products): the inner
// product maps to rounding of the products, the L1 map's distances exact
// to rounding; a zero row has cosine 0 with every row.
func TestElementMapsMatchFormulas(t *testing.T) {
	x := randData(51, 140, 6)
	y := randData(52, 25, 6)
	for j := 0; j < 6; j++ {
		x.Set(7, j, 0) // a zero row
	}
	formula := func(em ElementMap, a, b []float64) float64 {
		dot, d2, l1, na, nb := 0.0, 0.0, 0.0, 0.0, 0.0
		for i := range a {
			dot += a[i] * b[i]
			d2 += (a[i] - b[i]) * (a[i] - b[i])
			l1 += math.Abs(a[i] - b[i])
			na += a[i] * a[i]
			nb += b[i] * b[i]
		}
		switch em.Kind {
		case MapExpSq:
			return math.Exp(em.C * d2)
		case MapExpDist:
			return math.Exp(em.C * math.Sqrt(d2))
		case MapPower:
			return math.Pow(em.Gamma*dot+em.Coef0, float64(em.Degree))
		case MapTanh:
			return math.Tanh(em.Gamma*dot + em.Coef0)
		case MapCosine:
			if na == 0 || nb == 0 {
				return 0
			}
			return dot / math.Sqrt(na*nb)
		case MapExpL1:
			return math.Exp(em.C * l1)
		}
		return dot
	}
	maps := []ElementMap{{Kind: MapIdentity}, {Kind: MapExpSq, C: -0.1}, {Kind: MapExpDist, C: -0.3},
		{Kind: MapPower, Gamma: 0.2, Coef0: 1, Degree: 3}, {Kind: MapTanh, Gamma: 0.1, Coef0: -0.2},
		{Kind: MapCosine}, {Kind: MapExpL1, C: -0.15}}
	for _, em := range maps {
		g, err := GramMap(x, em, GramOptions{})
		require.NoError(t, err)
		c, err := CrossGramMap(y, x, em)
		require.NoError(t, err)
		for i := 0; i < 140; i++ {
			for j := 0; j < 140; j++ {
				want := formula(em, x.RawRowView(i), x.RawRowView(j))
				require.InDelta(t, want, g.At(i, j), 1e-12*math.Max(1, math.Abs(want)), "map %d (%d, %d)", em.Kind, i, j)
			}
		}
		for i := 0; i < 25; i++ {
			for j := 0; j < 140; j++ {
				want := formula(em, y.RawRowView(i), x.RawRowView(j))
				require.InDelta(t, want, c.At(i, j), 1e-12*math.Max(1, math.Abs(want)), "map %d cross (%d, %d)", em.Kind, i, j)
			}
		}
		// A block away from the first row and column.
		kr, err := NewKernelRows(x, em, GramOptions{})
		require.NoError(t, err)
		const i0, i1, j0, j1 = 10, 50, 30, 120
		out := make([]float64, (i1-i0)*(j1-j0))
		kr.Block(out, j1-j0, i0, i1, j0, j1)
		for i := i0; i < i1; i++ {
			for j := j0; j < j1; j++ {
				want := formula(em, x.RawRowView(i), x.RawRowView(j))
				require.InDelta(t, want, out[(i-i0)*(j1-j0)+j-j0], 1e-12*math.Max(1, math.Abs(want)), "map %d block (%d, %d)", em.Kind, i, j)
			}
		}
	}
}

// Float32 products need the data in float32's normal range: a largest
// entry of at least 2⁻⁶⁰ and d·big² of at most 2¹²² (CheckFloat32Range,
// at its edges); beyond them Prepare with float32 products and
// NewKernelRows32 refuse the data (they gave NaN kernel values or lost
// their digits to subnormals), while float64 products take it.
func TestFloat32Range(t *testing.T) {
	require.NoError(t, CheckFloat32Range("t", 0, 5))
	require.NoError(t, CheckFloat32Range("t", 0x1p-60, 5))
	require.Error(t, CheckFloat32Range("t", math.Nextafter(0x1p-60, 0), 5))
	require.NoError(t, CheckFloat32Range("t", 0x1p60, 4))
	require.ErrorIs(t, CheckFloat32Range("t", math.Nextafter(0x1p60, math.Inf(1)), 4), status.ErrInvalid)
	require.Error(t, CheckFloat32Range("t", math.NaN(), 4))
	x := randData(61, 50, 4)
	for _, p := range []int{-70, 70} {
		xs := mat.DenseCopyOf(x)
		xs.Scale(math.Ldexp(1, p), xs)
		em := ElementMap{Kind: MapExpSq, C: -math.Ldexp(0.1, -2*p)}
		_, err := GramMap(xs, em, GramOptions{Products: ProductsFloat32})
		require.ErrorIs(t, err, status.ErrInvalid, "2^%d", p)
		require.ErrorContains(t, err, "float32's range")
		g, err := GramMap(xs, em, GramOptions{})
		require.NoError(t, err, "2^%d float64", p)
		ref, err := GramMap(x, ElementMap{Kind: MapExpSq, C: -0.1}, GramOptions{})
		require.NoError(t, err)
		require.True(t, mat.EqualApprox(g, ref, 1e-12), "2^%d: the scaled Gaussian is the same kernel", p)
		x32, err := linalg.Dense32Of(xs)
		if err == nil {
			_, err = NewKernelRows32(x32, em, GramOptions{})
			require.ErrorIs(t, err, status.ErrInvalid, "2^%d rows32", p)
			x32.Free()
		}
	}
}

// A cancelled build says where it stopped: the panel and how many there
// are (⌈n/512⌉), with the context's cause.
func TestGramMapCancelledNamesThePanel(t *testing.T) {
	const n = 1300 // three panels of 512 rows
	x := randData(31, n, 5)
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("enough")
	var calls int
	o := GramOptions{Context: ctx, Progress: func(done, tot int64) {
		if calls++; calls == 1 {
			cancel(cause)
		}
	}}
	_, err := GramMap(x, testKernels[0].ElementMap(5), o)
	require.ErrorIs(t, err, status.ErrStopped)
	require.ErrorIs(t, err, cause)
	require.Contains(t, err.Error(), "Gram panel 3 of 3")
}

// KernelRows.Bytes counts its float64 copy of the data and the norms, and
// the float32 copy where the products are float32.
func TestKernelRowsBytes(t *testing.T) {
	const n, d = 300, 6
	x := randData(5, n, d)
	em := Kernel{Kind: Gaussian, Sigma: 2}.ElementMap(d)
	for _, c := range []struct {
		o    GramOptions
		want int64
	}{{GramOptions{}, 8 * (n*d + n)}, {GramOptions{Products: ProductsFloat32}, 8*(n*d+n) + 4*n*d}} {
		kr, err := NewKernelRows(x, em, c.o)
		require.NoError(t, err)
		require.Equal(t, c.want, kr.Bytes(), "%+v", c.o)
	}
}

// EntryBound is the closed form its doc comment states, on float32
// products: with β = 2γ_d·√(ni·nj) + 2.01u(√ni + √nj)², v·(e^{|C|β} − 1)
// for the Gaussian map, v·(e^{|C|√β} − 1) for the Laplace one,
// 2(γ_d + 2.01u) for the cosine, |γ|(γ_d + 2.01u)·√(ni·nj) for the
// sigmoid, e = (γ_d + 2.01u)·√(ni·nj) for the linear map and
// p·(|γ|√(ni·nj) + |c₀| + |γ|e)^(p−1)·|γ|e for the polynomial of degree p;
// 0 on float64 products.
func TestEntryBoundClosedForms(t *testing.T) {
	const n, d = 40, 7
	x := randData(8, n, d)
	const u = 1.0 / (1 << 24)
	gd := float64(d) * u / (1 - float64(d)*u)
	for _, em := range []ElementMap{{Kind: MapExpSq, C: -0.2}, {Kind: MapExpDist, C: -0.4}, {Kind: MapCosine}, {Kind: MapTanh, Gamma: -0.3, Coef0: 0.1},
		{Kind: MapIdentity}, {Kind: MapPower, Gamma: -0.5, Coef0: 1.5, Degree: 3}} {
		kr, err := NewKernelRows(x, em, GramOptions{Products: ProductsFloat32, Grid: GridOff, Int8: GridOff})
		require.NoError(t, err)
		f64, err := NewKernelRows(x, em, GramOptions{})
		require.NoError(t, err)
		for _, p := range [][2]int{{0, 1}, {5, 5}, {3, 39}} {
			ni, nj := kr.s.norms[p[0]], kr.s.norms[p[1]]
			ri, rj := math.Sqrt(ni), math.Sqrt(nj)
			beta := 2*gd*ri*rj + 2.01*u*(ri+rj)*(ri+rj)
			v := 0.7
			var want float64
			switch em.Kind {
			case MapExpSq:
				want = v * math.Expm1(0.2*beta)
			case MapExpDist:
				want = v * math.Expm1(0.4*math.Sqrt(beta))
			case MapCosine:
				want = 2 * (gd + 2.01*u)
			case MapTanh:
				want = 0.3 * (gd + 2.01*u) * ri * rj
			case MapIdentity:
				want = (gd + 2.01*u) * ri * rj
			case MapPower:
				e := (gd + 2.01*u) * ri * rj
				want = 3 * math.Pow(0.5*ri*rj+1.5+0.5*e, 2) * 0.5 * e
			}
			require.InDelta(t, want, kr.EntryBound(p[0], p[1], v), 1e-14*want, "map %d, rows %v", em.Kind, p)
			require.Zero(t, f64.EntryBound(p[0], p[1], v))
		}
	}
}

// SqDistances holds ‖x_i − x_j‖² in both triangles, a zero diagonal, no
// negative entry (rounding of the norms' formula clamped), at any scale —
// also where every distance is far below 1 — within the formula's
// rounding, 2·d·ε·(‖x_i‖² + ‖x_j‖²), of the direct sum; bad data is a
// typed error.
func TestSqDistances(t *testing.T) {
	const n, d = 40, 6
	base := randData(41, n, d)
	for c := 0; c < d; c++ {
		base.Set(7, c, base.At(3, c))
	}
	for _, scale := range []float64{1e-4, 1, 1e3} {
		x := mat.NewDense(n, d, nil)
		x.Scale(scale, base)
		d2, err := SqDistances(x)
		require.NoError(t, err)
		require.Equal(t, n, d2.SymmetricDim())
		for i := 0; i < n; i++ {
			require.Zero(t, d2.At(i, i))
			for j := 0; j < n; j++ {
				want, ni, nj := 0.0, 0.0, 0.0
				for c := 0; c < d; c++ {
					e := x.At(i, c) - x.At(j, c)
					want += e * e
					ni += x.At(i, c) * x.At(i, c)
					nj += x.At(j, c) * x.At(j, c)
				}
				got := d2.At(i, j)
				require.GreaterOrEqual(t, got, 0.0)
				require.Equal(t, got, d2.RawSymmetric().Data[j*n+i], "both triangles (%d, %d)", i, j)
				require.InDelta(t, want, got, 4*d*0x1p-52*(ni+nj), "scale %g (%d, %d)", scale, i, j)
			}
		}
		require.InDelta(t, 0, d2.At(3, 7), 4*d*0x1p-52*2*mat.Norm(x.RowView(3), 2)*mat.Norm(x.RowView(3), 2))
	}
	_, err := SqDistances(mat.NewDense(2, 2, []float64{1, math.NaN(), 0, 1}))
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = SqDistances(&mat.Dense{})
	require.ErrorIs(t, err, status.ErrInvalid)
}
