package gram

import (
	"fmt"
	"math"
	"sync"

	"github.com/kdual/kdual/linalg"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/native"
)

// gramPanelRows is the height of the row panels of the float64 Gram
// (dsyrk on the diagonal block, so nothing is computed twice): the
// smallest height as fast as larger ones (docs/measurements.md).
const gramPanelRows = 512

// gramChunkRows × gramChunkCols is the size of the chunks of the tiled
// Gram builds (gramBand): whole tiles, as many as fit; larger chunks give
// OpenBLAS larger, faster dgemm calls, up to this size
// (docs/measurements.md). Two chunks are in flight: 64 MB. (Variables
// only so that tests can make chunks small.)
var gramChunkRows, gramChunkCols = 1024, 4096

// GramMap returns the n×n matrix em(⟨x_i, x_j⟩, ‖x_i‖², ‖x_j‖²) of the
// rows of the n×d matrix x, with both triangles stored: the kernel matrix
// of the kernel whose element map em is (package kernel builds em from a
// kernel and calls this). x is not modified. A matrix larger than the
// machine's memory is refused (bigmem.Fits) before anything is computed.
//
// Cost: n²d flops for the inner products of the upper triangle, by panels
// of 512 rows (OpenBLAS dsyrk for the diagonal block, dgemm for the rest,
// or native.DotNT tiles where paths.Current says so), each panel then
// mapped element-wise (the vectorised exponential where paths says so)
// and mirrored into the lower triangle while recent, in parallel. For the
// distance maps (MapExpSq, MapExpDist) x is first shifted by its column
// means (distances do not change; ‖x‖² + ‖y‖² − 2⟨x, y⟩ cancels less) and
// the diagonal is exactly 1; data on an integer grid get exact float32
// products instead (GramOptions.Grid, grid.go), mapped straight from
// sgemm's panels.
func GramMap(x *mat.Dense, em ElementMap, o GramOptions) (*mat.SymDense, error) {
	src, err := Prepare(x, em, o, false)
	if err != nil {
		return nil, err
	}
	n, _ := x.Dims()
	if err := bigmem.Fits(fmt.Sprintf("gram: the %d×%d kernel matrix", n, n), 8, n, n); err != nil {
		return nil, err
	}
	data := make([]float64, n*n)
	bigmem.AdviseHuge(data)
	g := mat.NewSymDense(n, data)
	raw := g.RawSymmetric()
	if err := src.GramInto(o, raw.Data, raw.Stride); err != nil {
		return nil, err
	}
	return g, nil
}

// GramMapInto writes the n×n matrix em(⟨x_i, x_j⟩) of the rows of x into
// out (row-major, stride ld ≥ n, both triangles unless o.UpperOnly), by
// the panels described at GramMap: Prepare, then GramInto.
func GramMapInto(x *mat.Dense, em ElementMap, o GramOptions, out []float64, ld int) error {
	src, err := Prepare(x, em, o, false)
	if err != nil {
		return err
	}
	return src.GramInto(o, out, ld)
}

// GramInto writes the n×n kernel matrix of the prepared rows into out
// (row-major, stride ld ≥ n, both triangles unless o.UpperOnly), by the
// panels described at GramMap; o's build fields (UpperOnly, Context,
// Progress) apply, its preparation fields were Prepare's. The only error
// is a cancelled o.Context (out is then partly written).
func (src *Source) GramInto(o GramOptions, out []float64, ld int) error {
	s := src.s
	n := s.x.Rows
	total, done := int64(n)*int64(n+1)/2, int64(0)
	panels := (n + gramPanelRows - 1) / gramPanelRows
	// A pipeline of one: while OpenBLAS computes the products of panel
	// p + 1, a goroutine maps and mirrors panel p (they touch disjoint
	// entries), so neither the map nor the mirror waits for the cores.
	// Float32 products of a distance map (float32 products, or exact ones
	// on an integer grid) stay in float32 panels, two in turn, and the map
	// reads them straight (native.RBFMap32): no widened copy.
	fused := s.x32 != nil && s.em.distance() && s.mp == MapNative
	if fused && s.int8Gram(o) {
		return src.gramInt8(o, out, ld)
	}
	var bufs [2][]float32
	var pending sync.WaitGroup
	for i0 := 0; i0 < n; i0 += gramPanelRows {
		i1 := min(i0+gramPanelRows, n)
		if err := o.cancelled(fmt.Sprintf("Gram panel %d of %d", i0/gramPanelRows+1, panels)); err != nil {
			pending.Wait()
			return err
		}
		panel := out[i0*ld+i0:]
		var buf []float32
		if fused {
			p := (i0 / gramPanelRows) % 2
			if bufs[p] == nil {
				bufs[p] = make([]float32, gramPanelRows*n)
			}
			buf = bufs[p]
			sgemm32Into(s, s, i0, i1, i0, n, buf, n-i0)
		} else {
			s.products(panel, ld, i0, i1, i0, n, true)
		}
		pending.Wait()
		if o.Progress != nil && i0 > 0 {
			o.Progress(done, total)
		}
		done += int64(i1-i0) * int64(2*n-i0-i1+1) / 2
		pending.Add(1)
		go func() {
			defer pending.Done()
			if fused {
				w := n - i0
				par.Blocks(s.workers, i1-i0, func(lo, hi int) {
					for r := lo; r < hi; r++ {
						s.build.RBFMap32(1, w-r, buf[r*w+r:], w-r, panel[r*ld+r:], w-r,
							s.norms[i0+r:], s.norms[i0+r:], s.em.C, s.em.Kind == MapExpDist)
						panel[r*ld+r] = 1
					}
				})
			} else {
				s.mapPanel(panel, ld, i0, i1, i0, n, true, s.norms[i0:])
			}
			if !o.UpperOnly {
				mirrorPanel(out, ld, i0, i1, n)
			}
		}()
	}
	pending.Wait()
	if o.Progress != nil {
		o.Progress(total, total)
	}
	return nil
}

// gramInt8 is GramInto on an 8-bit grid by exact integer products
// (native.Int8Map, products and map in one pass): each panel's rows are the
// landmarks of the packed levels, the columns right of the diagonal block
// written in place, the diagonal block through a scratch block of which
// only the upper triangle is copied (so that UpperOnly leaves the lower
// triangle untouched).
func (src *Source) gramInt8(o GramOptions, out []float64, ld int) error {
	s := src.s
	n := s.x.Rows
	total, done := int64(n)*int64(n+1)/2, int64(0)
	panels := (n + gramPanelRows - 1) / gramPanelRows
	diag := make([]float64, gramPanelRows*gramPanelRows)
	for i0 := 0; i0 < n; i0 += gramPanelRows {
		i1 := min(i0+gramPanelRows, n)
		if err := o.cancelled(fmt.Sprintf("Gram panel %d of %d", i0/gramPanelRows+1, panels)); err != nil {
			return err
		}
		m := i1 - i0
		y := s.int8Landmarks(s, i0, i1)
		panel := out[i0*ld+i0:]
		if i1 < n {
			crossInt8(s, s, y, panel[m:], ld, i1, n)
		}
		crossInt8(s, s, y, diag[:m*m], m, i0, i1)
		for r := 0; r < m; r++ {
			copy(panel[r*ld+r:r*ld+m], diag[r*m+r:r*m+m])
		}
		if !o.UpperOnly {
			mirrorPanel(out, ld, i0, i1, n)
		}
		done += int64(m) * int64(2*n-i0-i1+1) / 2
		if o.Progress != nil && i1 < n {
			o.Progress(done, total)
		}
	}
	if o.Progress != nil {
		o.Progress(total, total)
	}
	return nil
}

// int8Gram reports whether the Gram matrix of s goes by exact integer
// products: its rows on an 8-bit grid and o letting the integer path run
// (GramOptions.Int8), packing the levels on first use.
func (s *gramSource) int8Gram(o GramOptions) bool {
	if s.i8 == nil {
		s.packInt8(o)
	}
	return s.i8 != nil && o.int8Wanted()
}

// mirrorPanel copies the upper-triangle entries of rows [i0, i1) into the
// lower triangle (entry (i, j), j > i, into (j, i)), in parallel blocks of
// 64 columns: each block reads a 64-wide strip of the panel and writes
// contiguous row segments.
func mirrorPanel(data []float64, ld, i0, i1, n int) {
	const w = 64
	blocks := (n - i0 + w - 1) / w
	par.Blocks(0, blocks, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			j0, j1 := i0+b*w, min(i0+(b+1)*w, n)
			for j := j0; j < j1; j++ {
				top := min(i1, j)
				if top <= i0 {
					continue
				}
				dst := data[j*ld+i0 : j*ld+top]
				for r := range dst {
					dst[r] = data[(i0+r)*ld+j]
				}
			}
		}
	})
}

// CrossGramMap returns the m×n matrix em(⟨x_i, y_j⟩, ‖x_i‖², ‖y_j‖²)
// between the rows of the m×d matrix x and the n×d matrix y: one OpenBLAS
// dgemm (or native tiles), then the element map in parallel. For the
// distance maps both are shifted by y's column means first. Neither input
// is modified.
func CrossGramMap(x, y *mat.Dense, em ElementMap) (*mat.Dense, error) {
	return CrossGramMapWith(x, y, em, GramOptions{})
}

// CrossGramMapWith is CrossGramMap with explicit engine options.
func CrossGramMapWith(x, y *mat.Dense, em ElementMap, o GramOptions) (*mat.Dense, error) {
	if err := checkData("CrossGram: x", x); err != nil {
		return nil, err
	}
	if y == nil || y.IsEmpty() {
		return nil, invalidf("CrossGram: y: empty data")
	}
	m, d := x.Dims()
	n, dy := y.Dims()
	if d != dy {
		return nil, invalidf("CrossGram: x has %d columns, y has %d", d, dy)
	}
	src, err := Prepare(y, em, o, false)
	if err != nil {
		return nil, err
	}
	sy := src.s
	var sx *gramSource
	if sy.grid != nil {
		sx = sy.onGrid(x)
	} else {
		sx = newCrossSource(x, em, o, sy.shiftBy)
	}
	if err := bigmem.Fits(fmt.Sprintf("gram: the %d×%d cross-kernel matrix", m, n), 8, m, n); err != nil {
		return nil, err
	}
	out := mat.NewDense(m, n, nil)
	raw := out.RawMatrix()
	crossMapped(sx, sy, raw.Data, raw.Stride, 0, m, 0, n, sy.norms)
	return out, nil
}

// crossProducts sets out to the inner products of rows [i0, i1) of a with
// rows [j0, j1) of b.
func crossProducts(a, b *gramSource, out []float64, ld, i0, i1, j0, j1 int) {
	if i1 <= i0 || j1 <= j0 {
		return
	}
	if a.em.Kind == MapExpL1 {
		l1Products(a, b, out, ld, i0, i1, j0, j1, false)
		return
	}
	d := a.x.Cols
	if a.x32 != nil && b.x32 != nil {
		products32(a, b, out, ld, i0, i1, j0, j1)
		return
	}
	if b.x.Data == nil {
		// b exists only as float32 integers (an integer grid) and a is
		// off the grid: float64 products with b's rows widened, a chunk
		// at a time.
		const chunk = 2048
		wide := make([]float64, min(chunk, j1-j0)*d)
		for c0 := j0; c0 < j1; c0 += chunk {
			c1 := min(c0+chunk, j1)
			par.For(a.workers, c1-c0, nil, func(lo, hi int) {
				a.build.Widen(hi-lo, d, b.x32[(c0+lo)*d:], d, wide[lo*d:], d)
			})
			linalg.B64.Gemm(blas.NoTrans, blas.Trans, 1, a.rows(i0, i1),
				blas64.General{Rows: c1 - c0, Cols: d, Stride: d, Data: wide}, 0,
				blas64.General{Rows: i1 - i0, Cols: c1 - c0, Stride: ld, Data: out[c0-j0:]})
		}
		return
	}
	if a.inner == InnerNative {
		runTiles(a.workers, tilesOf(i1-i0, j1-j0, false), 0, func(t tile, _ []float64) {
			native.DotNT(t.i1-t.i0, t.j1-t.j0, d, a.x.Data[(i0+t.i0)*a.x.Stride:], a.x.Stride,
				b.x.Data[(j0+t.j0)*b.x.Stride:], b.x.Stride, out[t.i0*ld+t.j0:], ld)
		})
		return
	}
	linalg.B64.Gemm(blas.NoTrans, blas.Trans, 1, a.rows(i0, i1), b.rows(j0, j1), 0,
		blas64.General{Rows: i1 - i0, Cols: j1 - j0, Stride: ld, Data: out})
}

// crossMapped sets out to the kernel values of rows [i0, i1) of a against
// rows [j0, j1) of b (normsJ b's squared norms): crossProducts then
// mapCross, except that float32 products of a distance map on the native
// map path go from sgemm's float32 block straight through
// native.RBFMap32 (the same values without the widened float64 copy).
func crossMapped(a, b *gramSource, out []float64, ld, i0, i1, j0, j1 int, normsJ []float64) {
	if b.i8 != nil && i1 > i0 && j1 > j0 {
		if y := a.int8Landmarks(b, i0, i1); y != nil {
			crossInt8(a, b, y, out[:(i1-i0-1)*ld+j1-j0], ld, j0, j1)
			return
		}
		b.ensureX32() // rows off the 8-bit range: float32 integers
	}
	if a.x32 != nil && b.x32 != nil && a.em.distance() && a.mp == MapNative && i1 > i0 && j1 > j0 {
		m, n := i1-i0, j1-j0
		buf := sgemm32(a, b, i0, i1, j0, j1)
		par.Blocks(a.workers, m, func(lo, hi int) {
			a.build.RBFMap32(hi-lo, n, buf[lo*n:], n, out[lo*ld:], ld, a.norms[i0+lo:i0+hi], normsJ[j0:j1],
				a.em.C, a.em.Kind == MapExpDist)
		})
		return
	}
	crossProducts(a, b, out, ld, i0, i1, j0, j1)
	a.mapCross(out, ld, i0, i1, normsJ, j0, j1)
	if a.em.Kind == MapExpDist && a.grid == nil && b.grid == nil && a.x.Data != nil && b.x.Data != nil {
		nearExact(a, b, out, ld, i0, i1, j0, j1, normsJ)
	}
}

// nearExact recomputes, from the rows themselves, the Laplace entries of
// out (rows [i0, i1) of a against rows [j0, j1) of b, float64 products)
// whose squared distance ‖x‖² + ‖y‖² − 2⟨x, y⟩ came out below
// 4·d·ε·(‖x‖² + ‖y‖²): at that size the formula's rounding (within about
// 2·d·ε·(‖x‖² + ‖y‖²)) is the distance's own order, and its square root —
// about 10⁻⁸·‖x‖ for a point against itself — would reach the kernel value.
// They become exp(C·√Σ(x − y)²): exactly 1 for a point against itself or
// its duplicate, as the Gram matrix's diagonal is. Such pairs are near
// duplicates, few in practice; each costs d multiply-adds.
func nearExact(a, b *gramSource, out []float64, ld, i0, i1, j0, j1 int, normsJ []float64) {
	d := a.x.Cols
	tau := 4 * float64(d) * 0x1p-52
	c := a.em.C
	if !(c < 0) || i1 <= i0 || j1 <= j0 {
		return
	}
	maxJ := floats.Max(normsJ[j0:j1])
	par.For(a.workers, i1-i0, nil, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := out[r*ld : r*ld+j1-j0]
			ni := a.norms[i0+r]
			// Entries below this value have a larger distance whatever
			// their column: one comparison each.
			floor := math.Exp(c * math.Sqrt(tau*(ni+maxJ)))
			x := a.x.Data[(i0+r)*a.x.Stride : (i0+r)*a.x.Stride+d]
			for q, v := range row {
				if !(v > floor) {
					continue
				}
				delta := math.Log(v) / c // the distance the map saw
				if delta*delta >= tau*(ni+normsJ[j0+q]) {
					continue
				}
				y := b.x.Data[(j0+q)*b.x.Stride : (j0+q)*b.x.Stride+d]
				s := 0.0
				for e, xv := range x {
					t := xv - y[e]
					s += t * t
				}
				row[q] = math.Exp(c * math.Sqrt(s))
			}
		}
	})
}
