package gram

import (
	"math"
	"sync/atomic"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/native"
)

// Exact inner products in float32 for data on an integer grid.
//
// Many data sets are integers in disguise: 8-bit images scaled by 1/255
// (Fashion-MNIST), counts, one-hot features — possibly centred afterwards.
// When every entry is x_ij = lo_j + c·k_ij with integers k_ij (up to the
// rounding of the arithmetic that produced x), the squared distances of a
// distance kernel are c²·‖k_i − k_j‖² and need only the integer inner
// products of k shifted by any integer vector s. If every row of
// k′ = k − s has ‖k′_i‖² < 2²⁴, each product k′_ia·k′_ja and every partial
// sum of a row's products is an integer of magnitude at most
// Σ_a |k′_ia·k′_ja| ≤ ‖k′_i‖·‖k′_j‖ < 2²⁴ (Cauchy–Schwarz), so it is exact in
// float32: OpenBLAS sgemm returns the exact integer inner products,
// whatever its blocking, summation order or use of FMA. The norms are exact
// integers in float64 and ‖k′_i‖² + ‖k′_j‖² − 2⟨k′_i, k′_j⟩ is exact in
// float64; the distance is one multiplication by c² (folded into the
// element map's scale). The kernel entries are then those of the snapped
// data lo_j + c·k_ij to the rounding of the map, at sgemm's rate — about
// twice dgemm's where OpenBLAS has single-precision kernels as wide as its
// double ones.
//
// The snap moves an entry by at most 16u·(|lo_j| + |hi_j| + |lo*| + |hi*|)
// (u = 2⁻⁵³, [lo_j, hi_j] the column's range, * the widest column, which
// fixes c): a few roundings of the magnitudes the data were computed
// from, the size of the error that centring the data (or shifting them by
// their mean, as the float64 path does) makes anyway. Data that are not on
// a grid fail the check at their first off-grid entry.

// grid is an integer grid the data lie on: entry (i, j) is
// lo[j] + step·(k + mid[j]) for the integer k stored (k = k_ij − mid_j).
type grid struct {
	step float64
	lo   []float64 // column minima
	mid  []int32   // the integer shift of each column: half its range
	span []int32   // the steps each column spans (its largest level)
	tol  []float64 // how far an entry may be from its grid point
}

// gridMaxLevels bounds the grid's resolution: a column spanning more steps
// has squared norms far beyond 2²⁴ unless d is tiny, and a step read off a
// sample that fine is more likely rounding noise than a grid.
const gridMaxLevels = 1 << 14

// gridSample is how many rows the grid step is read from.
const gridSample = 1024

// gridNormLimit is the bound ‖k′_i‖² < 2²⁴ that makes float32 products exact.
const gridNormLimit = 1 << 24

// gridOf returns the grid the columns' ranges (one pass over x) and its
// first rows suggest (newGrid), not yet checked on every entry.
func gridOf(x blas64.General, workers int, bd native.Build) *grid {
	n, d := x.Rows, x.Cols
	if n < 2 || d < 1 {
		return nil
	}
	// Pass 1: column ranges, by fixed blocks of rows in parallel.
	const block = 256
	blocks := (n + block - 1) / block
	los := make([]float64, blocks*d)
	his := make([]float64, blocks*d)
	par.Blocks(workers, blocks, func(b0, b1 int) {
		for b := b0; b < b1; b++ {
			lo, hi := los[b*d:(b+1)*d], his[b*d:(b+1)*d]
			i0 := b * block
			copy(lo, x.Data[i0*x.Stride:i0*x.Stride+d])
			copy(hi, lo)
			if rows := min(i0+block, n) - i0 - 1; rows > 0 {
				bd.ColumnRange(rows, d, x.Data[(i0+1)*x.Stride:], x.Stride, lo, hi)
			}
		}
	})
	lo, hi := los[:d], his[:d]
	for b := 1; b < blocks; b++ {
		for j := range lo {
			lo[j] = math.Min(lo[j], los[b*d+j])
			hi[j] = math.Max(hi[j], his[b*d+j])
		}
	}
	return newGrid(lo, hi, n, d, func(i int) []float64 { return x.Data[i*x.Stride : i*x.Stride+d] })
}

// newGrid returns the integer grid that the column ranges [lo_j, hi_j] of
// n rows and their first rows (row(i), i < gridSample) suggest, or nil
// when they suggest none; it is not yet checked on every entry (snapAll).
func newGrid(lo, hi []float64, n, d int, row func(i int) []float64) *grid {
	if n < 2 || d < 1 {
		return nil
	}
	wide, width := 0, 0.0
	for j := range lo {
		if w := hi[j] - lo[j]; w > width {
			wide, width = j, w
		}
	}
	if !(width > 0) || math.IsInf(width, 0) {
		return nil // constant columns (or not finite: checked elsewhere)
	}
	// The step: the smallest positive offset from a column's minimum in
	// the first rows (offsets below 1e-9 of the column's range are
	// rounding), refined on the widest column as its range over the
	// number of steps it spans.
	//
	// The offsets are ≥ 0 (lo is the minimum) and finite, so their bits
	// order as int64s do: the minimum goes by integer compares, which the
	// compiler makes conditional moves (a branch on "is this entry at its
	// column's minimum" mispredicts on images about half the time).
	noise := make([]int64, d)
	for j := range noise {
		noise[j] = int64(math.Float64bits(1e-9 * (hi[j] - lo[j])))
	}
	lo, noise = lo[:d], noise[:d]
	best := int64(math.Float64bits(math.Inf(1)))
	for i := 0; i < min(n, gridSample); i++ {
		for j, v := range row(i)[:d] {
			off := int64(math.Float64bits(v - lo[j]))
			if off <= noise[j] {
				off = math.MaxInt64
			}
			best = min(best, off)
		}
	}
	step := math.Float64frombits(uint64(best))
	levels := math.Round(width / step)
	if !(levels >= 1 && levels <= gridMaxLevels) {
		return nil
	}
	step = width / levels
	const u = 1.0 / (1 << 53)
	slack := 16 * u * (math.Abs(lo[wide]) + math.Abs(hi[wide]))
	g := &grid{step: step, lo: append([]float64(nil), lo...), mid: make([]int32, d), span: make([]int32, d), tol: make([]float64, d)}
	tol := g.tol
	for j := range lo {
		span := math.Round((hi[j] - lo[j]) / step)
		if span > gridMaxLevels {
			return nil
		}
		g.mid[j], g.span[j] = int32(span)/2, int32(span)
		tol[j] = 16*u*(math.Abs(lo[j])+math.Abs(hi[j])) + slack
	}
	return g
}

// snapAll snaps the n rows (row(i), len d) to the grid and stores them:
// the shifted integers in x32 (n×d, row-major, allocated here) and their
// squared norms (exact), or nil when an entry is off the grid or a row's
// shifted squared norm reaches 2²⁴ (stopping everywhere at the first
// failure).
func (g *grid) snapAll(n, d int, rowOf func(i int) []float64, workers int) (*grid, []float32, []float64) {
	tol, step := g.tol, g.step
	x32 := make([]float32, n*d)
	norms := make([]float64, n)
	var off atomic.Bool
	inv := 1 / step
	lo, mid := g.lo[:d], g.mid[:d]
	tol = tol[:d]
	par.For(workers, n, nil, func(i0, i1 int) {
		for i := i0; i < i1 && !off.Load(); i++ {
			row := rowOf(i)[:d]
			dst := x32[i*d : (i+1)*d]
			var sq int64
			for j, v := range row {
				// The nearest level (a tie either way: the check below
				// decides): r ≥ 0 (lo is the column's minimum), so the
				// conversion's truncation is the floor of r/step + ½.
				r := v - lo[j]
				k := int64(r*inv + 0.5)
				if e := r - float64(k)*step; !(e <= tol[j] && e >= -tol[j]) {
					off.Store(true)
					return
				}
				kk := k - int64(mid[j])
				dst[j] = float32(kk)
				sq += kk * kk
			}
			if sq >= gridNormLimit {
				off.Store(true)
				return
			}
			norms[i] = float64(sq)
		}
	})
	if off.Load() {
		return nil, nil, nil
	}
	return g, x32, norms
}

// snap expresses the rows of y (m×d) in the grid's units:
// (y_ij − lo_j)/step − mid_j, into dst (m×d row-major float64), with the
// squared norms, and reports whether every row lies on the grid with a
// squared norm below 2²⁴ (then dst holds exact integers and y32, when not
// nil, their float32 copy).
func (g *grid) snap(y blas64.General, dst []float64, y32 []float32, norms []float64, workers int) bool {
	m, d := y.Rows, y.Cols
	var off atomic.Bool
	par.For(workers, m, nil, func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			row := y.Data[i*y.Stride : i*y.Stride+d]
			out := dst[i*d : (i+1)*d]
			on := true
			for j, v := range row {
				r := v - g.lo[j]
				k := math.Round(r / g.step)
				if !(math.Abs(r-k*g.step) <= g.tol[j]) {
					on = false
				}
				out[j] = k - float64(g.mid[j])
			}
			if !on {
				// Off the grid: the real values in grid units.
				for j, v := range row {
					out[j] = (v-g.lo[j])/g.step - float64(g.mid[j])
				}
			}
			sq := 0.0
			for _, r := range out {
				sq += r * r
			}
			norms[i] = sq
			if !on || !(sq < gridNormLimit) {
				off.Store(true)
			}
		}
	})
	if off.Load() {
		return false
	}
	if y32 != nil {
		for i, v := range dst[:m*d] {
			y32[i] = float32(v)
		}
	}
	return true
}

// scale returns em's exponent scale for distances in grid units:
// C·step² for the Gaussian (squared distances), C·step for the Laplace
// kernel.
func (g *grid) scale(em ElementMap) float64 {
	if em.Kind == MapExpDist {
		return em.C * g.step
	}
	return em.C * g.step * g.step
}

// bits8 reports whether every column spans at most 255 steps, so that the
// levels k_ij + mid_j (0 … span_j) fit a byte: 8-bit images and the like,
// whose kernel rows native.Int8Map computes with exact integer products.
func (g *grid) bits8() bool {
	for _, s := range g.span {
		if s > 255 {
			return false
		}
	}
	return true
}

// packInt8 packs the source's grid integers as 8-bit levels for
// native.Int8Map when its grid is 8-bit and o lets the integer path run
// (GramOptions.Int8); the source keeps its float32 integers for sources
// off the 8-bit range.
func (s *gramSource) packInt8(o GramOptions) {
	if s.grid == nil || s.x32 == nil || !s.grid.bits8() || s.x.Cols > native.Int8MaxDim || !o.int8Wanted() {
		return
	}
	n, d := s.x.Rows, s.x.Cols
	mid := s.grid.mid
	p, err := native.PackInt8(n, d, func(i int, dst []uint8) {
		for a, v := range s.x32[i*d : (i+1)*d] {
			dst[a] = uint8(int32(v) + mid[a])
		}
	})
	if err == nil {
		s.i8 = p
	}
}

// snapInt8 is snapAll for an 8-bit grid: the levels k_ij + mid_j go
// straight into native.Int8Map's packing (n·d bytes, no float32 copy), with
// the squared norms of the shifted integers; nil when an entry is off the
// grid.
func (g *grid) snapInt8(x blas64.General) (*native.Int8Points, []float64) {
	n, d := x.Rows, x.Cols
	return native.AVX2().PackSnap8(n, d, func(i int) []float64 { return x.Data[i*x.Stride : i*x.Stride+d] }, g.lo, g.tol, g.mid, g.step, nil)
}

// snapPack8 is snapAll for an 8-bit grid whose levels go to native.Int8Map:
// one pass in C gives the packed levels with the shifted integers (x32) and
// their squared norms, the same values snapAll computes, or nil when an
// entry is off the grid or a shifted squared norm reaches 2²⁴. b is the
// build that runs it (GramOptions.Baseline: SSE2).
func (g *grid) snapPack8(b native.Build, n, d int, rowOf func(i int) []float64) (*native.Int8Points, []float32, []float64) {
	x32 := make([]float32, n*d)
	pts, norms := b.PackSnap8(n, d, rowOf, g.lo, g.tol, g.mid, g.step, x32)
	if pts == nil {
		return nil, nil, nil
	}
	for _, v := range norms {
		if v >= gridNormLimit {
			return nil, nil, nil
		}
	}
	return pts, x32, norms
}

// ensureX32 gives an 8-bit grid source packed by snapInt8 its float32
// integers (k_ij − mid_j, from the packed levels) when a product needs
// them: sources off the 8-bit range against it (native.Int8Map cannot
// take them). Not safe for concurrent use, as KernelRows is not.
func (s *gramSource) ensureX32() {
	if s.x32 != nil || s.i8 == nil {
		return
	}
	n, d := s.x.Rows, s.x.Cols
	x32 := make([]float32, n*d)
	mid := s.grid.mid
	par.For(s.workers, n, nil, func(lo, hi int) {
		buf := make([]uint8, d)
		for i := lo; i < hi; i++ {
			s.i8.Levels(i, buf)
			for a, v := range buf {
				x32[i*d+a] = float32(int32(v) - mid[a])
			}
		}
	})
	s.x32 = x32
}

// int8Landmarks returns rows [i0, i1) of s (on the grid of b, as onGrid
// gives them) as landmarks of b's packed levels, or nil when a row has a
// level outside 0…255 (a point beyond the data's range in some column).
func (s *gramSource) int8Landmarks(b *gramSource, i0, i1 int) *native.Int8Landmarks {
	if s == b {
		// The data's own rows: their levels are packed already.
		return b.i8.Landmarks(i0, i1)
	}
	if s.x32 == nil || s.grid != b.grid {
		return nil
	}
	d := s.x.Cols
	mid := b.grid.mid
	for i := i0; i < i1; i++ {
		for a, v := range s.x32[i*d : (i+1)*d] {
			if l := int32(v) + mid[a]; l < 0 || l > 255 {
				return nil
			}
		}
	}
	return b.i8.NewInt8Landmarks(i1-i0, func(j int, dst []uint8) {
		for a, v := range s.x32[(i0+j)*d : (i0+j+1)*d] {
			dst[a] = uint8(int32(v) + mid[a])
		}
	})
}

// crossInt8 is crossMapped by native.Int8Map: the points [j0, j1) of b in
// parallel ranges of whole packed blocks.
func crossInt8(a, b *gramSource, y *native.Int8Landmarks, out []float64, ld, j0, j1 int) {
	c, laplace := a.em.C, a.em.Kind == MapExpDist
	int8Ranges(a.workers, j0, j1, func(p0, p1 int) {
		a.build.Int8Map(b.i8, y, p0, p1, c, laplace, out[p0-j0:], ld)
	})
}

// int8Ranges runs f on parallel ranges [p0, p1) covering [j0, j1), split
// at packed blocks: par.For over the blocks' points, its chunks rounded to
// whole blocks (a partition still, some chunks empty), so that the work is
// parallel from two blocks on.
func int8Ranges(workers, j0, j1 int, f func(p0, p1 int)) {
	const blk = native.Int8Block
	first, last := j0/blk, (j1+blk-1)/blk
	par.For(workers, (last-first)*blk, nil, func(lo, hi int) {
		b0, b1 := first+(lo+blk-1)/blk, first+(hi+blk-1)/blk
		p0, p1 := max(j0, b0*blk), min(j1, b1*blk)
		if p0 < p1 {
			f(p0, p1)
		}
	})
}
