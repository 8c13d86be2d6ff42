package gram

import (
	"fmt"
	"math"

	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/native"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// KernelRows computes blocks of the kernel matrix of a fixed data set on
// demand, with the engine of Gram: the product of two row ranges by
// OpenBLAS dgemm (or native tiles), then the element map. It holds its own
// copy of the data (shifted by the column means for distance kernels) and
// the squared row norms: n·d + n float64s — or, for data on an integer grid
// (GramOptions.Grid, OnGrid), the grid's integers in n·d float32s and
// exact float32 products. Block is not safe for concurrent use (it calls
// OpenBLAS).
type KernelRows struct {
	s *gramSource
	// head, when not nil, holds the data's first head.x.Rows rows on an
	// 8-bit grid (head.go): Block computes the entries among them by
	// exact integer products.
	head         *gramSource
	crossScratch []float32 // Cross's sgemm output, reused
	// lm holds the integer rows [lmRows[0], lmRows[1]) as landmarks, kept
	// for the next Block on the same rows (a pass asks for one row range
	// against many column ranges).
	lm     *native.Int8Landmarks
	lmRows [2]int
}

// NewKernelRows prepares the rows of x (n×d) for the element map em (of a
// kernel, see package kernel): Prepare, then Rows. Rows that would be read
// in place (maps that do not shift them) are copied, so later changes to
// x cannot change the kernel.
func NewKernelRows(x *mat.Dense, em ElementMap, o GramOptions) (*KernelRows, error) {
	src, err := Prepare(x, em, o, !em.distance())
	if err != nil {
		return nil, err
	}
	return src.Rows(o), nil
}

// Rows returns blocks of the source's kernel on demand, by 8-bit integer
// products where the data lie on an 8-bit grid and o lets the integer path
// run (GramOptions.Int8) — or, for data that do not, among the longest
// head of rows that does (IntegerHead). The KernelRows reads the source's
// forms, which it shares: one Source, one KernelRows.
func (src *Source) Rows(o GramOptions) *KernelRows {
	src.s.packInt8(o)
	return &KernelRows{s: src.s, head: src.s.int8Head(o)}
}

// NewKernelRowsInt8 prepares the rows of x (n×d) like NewKernelRows when
// they lie on an 8-bit integer grid (every column spanning at most 255
// steps: 8-bit images, whatever their scale and offset) and o lets the
// integer path run (GramOptions.Int8): blocks by exact integer products,
// Int8 reporting true. Otherwise (data off the grid, NaN or ±Inf
// included) it returns nil and no error, having read x at most twice and
// kept nothing: callers then take another path
// (a float32 copy, say) without paying for a float64 one.
func NewKernelRowsInt8(x *mat.Dense, em ElementMap, o GramOptions) (*KernelRows, error) {
	if x == nil || x.IsEmpty() {
		return nil, invalidf("KernelRows: x: empty data")
	}
	if err := em.Check(); err != nil {
		return nil, err
	}
	if !em.distance() || !o.int8Wanted() {
		return nil, nil
	}
	n, d := x.Dims()
	if d > native.Int8MaxDim {
		return nil, nil
	}
	raw := x.RawMatrix()
	xg := blas64.General{Rows: n, Cols: d, Stride: raw.Stride, Data: raw.Data}
	g := gridOf(xg, o.Workers, o.build())
	if g == nil || !g.bits8() {
		return nil, nil
	}
	pts, norms := g.snapInt8(xg)
	if pts == nil {
		return nil, nil
	}
	s := &gramSource{em: em, workers: o.Workers, build: o.build(), grid: g, i8: pts, norms: norms}
	s.inner, s.mp = o.resolve()
	s.x = blas64.General{Rows: n, Cols: d, Stride: d}
	s.em.C = g.scale(em)
	return &KernelRows{s: s}, nil
}

// NewKernelRowsLevels8 prepares the rows of 8-bit data x (entries
// Step·level, levels 0 … 255) like NewKernelRowsInt8, reading the levels
// as they are — no float64 copy, no grid search: the grid is Step with
// levels 0 … 255 in every column. It returns nil and no error where the
// integer path does not apply (a map of no distance, o or the processor
// without it, more than native.Int8MaxDim columns, or squared norms about
// the grid's middle reaching 2²⁴); callers then take another path. The
// KernelRows keeps the packed levels (about n·d bytes), not x.
func NewKernelRowsLevels8(x *linalg.Levels8, em ElementMap, o GramOptions) (*KernelRows, error) {
	if err := x.Check("KernelRowsLevels8: x"); err != nil {
		return nil, err
	}
	if err := em.Check(); err != nil {
		return nil, err
	}
	n, d := x.Dims()
	if !em.distance() || !o.int8Wanted() || d > native.Int8MaxDim {
		return nil, nil
	}
	const top, mid = 255, 127
	if int64(d)*(top-mid)*(top-mid) >= gridNormLimit {
		return nil, nil
	}
	const u = 1.0 / (1 << 53)
	g := &grid{step: x.Step, lo: make([]float64, d), mid: make([]int32, d), span: make([]int32, d), tol: make([]float64, d)}
	for j := range g.mid {
		g.mid[j], g.span[j] = mid, top
		g.tol[j] = 32 * u * top * x.Step // newGrid's tolerance for columns spanning 0 … 255 steps
	}
	pts, err := native.PackInt8(n, d, func(i int, dst []uint8) { copy(dst, x.Data[i*d:(i+1)*d]) })
	if err != nil {
		return nil, err
	}
	norms := make([]float64, n)
	par.For(o.Workers, n, nil, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			var sq int64
			for _, v := range x.Data[i*d : (i+1)*d] {
				c := int64(v) - mid
				sq += c * c
			}
			norms[i] = float64(sq)
		}
	})
	s := &gramSource{em: em, workers: o.Workers, build: o.build(), grid: g, i8: pts, norms: norms}
	s.inner, s.mp = o.resolve()
	s.x = blas64.General{Rows: n, Cols: d, Stride: d}
	s.em.C = g.scale(em)
	return &KernelRows{s: s}, nil
}

// NewKernelRows32 prepares the rows of a float32 data set x (n×d) for
// the element map em without copying it: x is read in place by OpenBLAS
// sgemm (every product in float32, the norms and the map in float64, each
// entry within EntryBound of the exact kernel of the stored values) and
// must not change, nor be freed, while the KernelRows or a function it
// returned is in use (they keep x reachable); it is never written.
// Unlike NewKernelRows it does not shift the data by its mean (that would
// take a second copy): distance kernels are unchanged by a shift, but the
// bound grows with the row norms, so callers should store data centred
// near the origin.
func NewKernelRows32(x *linalg.Dense32, em ElementMap, o GramOptions) (*KernelRows, error) {
	if x == nil || x.Rows < 1 || x.Cols < 1 || len(x.Data) < x.Rows*x.Cols {
		return nil, invalidf("KernelRows32: x: empty data")
	}
	if err := em.Check(); err != nil {
		return nil, err
	}
	n, d := x.Dims()
	s := &gramSource{em: em, workers: o.Workers, build: o.build()}
	s.inner, s.mp = o.resolve()
	s.x = blas64.General{Rows: n, Cols: d, Stride: d}
	s.x32, s.owner32 = x.Data[:n*d], x
	if em.distance() {
		s.shiftBy = make([]float64, d)
	}
	s.norms = make([]float64, n)
	par.For(o.Workers, n, nil, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v := 0.0
			for _, e := range s.x32[i*d : (i+1)*d] {
				v += float64(e) * float64(e)
			}
			s.norms[i] = v
		}
	})
	// A NaN or an infinity makes its row's norm NaN or +Inf (float32
	// squares cannot overflow float64): the norms are the finiteness check.
	for _, v := range s.norms {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, linalg.CheckFinite32("KernelRows32: x", x)
		}
	}
	// The range from the norms (no pass of its own): every product and
	// squared norm is at most the largest squared norm ν, so the rule on
	// d·big² is applied to ν itself (big = √ν, d = 1).
	if err := CheckFloat32Range("KernelRows32", math.Sqrt(floats.Max(s.norms)), 1); err != nil {
		return nil, err
	}
	return &KernelRows{s: s}, nil
}

// N returns the number of rows.
func (k *KernelRows) N() int { return k.s.x.Rows }

// Dim returns the data dimension d.
func (k *KernelRows) Dim() int { return k.s.x.Cols }

// Bytes returns the bytes the data copy and norms take.
func (k *KernelRows) Bytes() int64 {
	b := 8*int64(len(k.s.x.Data)+len(k.s.norms)) + 4*int64(len(k.s.x32))
	if k.s.i8 != nil {
		b += k.s.i8.Bytes()
	}
	if k.head != nil {
		b += k.head.i8.Bytes() + 8*int64(len(k.head.norms))
	}
	return b
}

// Block sets out (row-major, stride ld) to the kernel values of rows
// [i0, i1) against rows [j0, j1). Entries on the diagonal of the matrix
// (i = j) of distance kernels are exactly 1. Entries among the integer
// head's rows (IntegerHead) come from exact integer products, the others
// from the source's products.
func (k *KernelRows) Block(out []float64, ld, i0, i1, j0, j1 int) {
	if i0 < 0 || j0 < 0 || i1 > k.N() || j1 > k.N() || ld < j1-j0 {
		panic(fmt.Sprintf("linalg: KernelRows.Block: rows [%d,%d) × [%d,%d) of %d, ld %d", i0, i1, j0, j1, k.N(), ld))
	}
	s := k.s
	h := k.head
	if s.i8 != nil {
		h = s
	}
	if h != nil && i0 < h.x.Rows && j0 < h.x.Rows && i1 > i0 && j1 > j0 {
		// The rectangle among the integer rows, then the columns right of
		// the head and the rows below it by the source's products.
		ie, je := min(i1, h.x.Rows), min(j1, h.x.Rows)
		if k.lm == nil || k.lmRows != [2]int{i0, ie} {
			k.lm, k.lmRows = h.i8.LandmarksIn(k.lm, i0, ie), [2]int{i0, ie}
		}
		crossInt8(h, h, k.lm, out[:(ie-i0-1)*ld+je-j0], ld, j0, je)
		if j1 > je {
			crossMapped(s, s, out[je-j0:], ld, i0, ie, je, j1, s.norms)
		}
		if i1 > ie {
			crossMapped(s, s, out[(ie-i0)*ld:], ld, ie, i1, j0, j1, s.norms)
		}
	} else {
		crossMapped(s, s, out, ld, i0, i1, j0, j1, s.norms)
	}
	if s.em.distance() {
		for i := max(i0, j0); i < min(i1, j1); i++ {
			out[(i-i0)*ld+i-j0] = 1
		}
	}
}

// Products returns the arithmetic of the inner products.
func (k *KernelRows) Products() ProductPrecision {
	if k.s.x32 != nil && k.s.grid == nil {
		return ProductsFloat32
	}
	return ProductsFloat64
}

// EntryBound bounds |k̃_ij − k_ij| for a computed entry v = k̃_ij: 0 with
// float64 products (rounding level); with float32 products, for the
// Gaussian kernel v·(e^{|C|β} − 1) where β = 2γ_d‖x_i‖‖x_j‖ +
// 2.01u(‖x_i‖ + ‖x_j‖)² bounds the error of the squared distance (γ_d =
// du/(1 − du), u = 2⁻²⁴, norms of the mean-shifted data), and for the
// Laplace kernel v·(e^{|C|√β} − 1).
func (k *KernelRows) EntryBound(i, j int, v float64) float64 {
	return k.s.entryBound(k.s.norms[i], k.s.norms[j], v)
}

// Arithmetic names how the inner products are computed: "int8" (exact
// integer products of an 8-bit grid), "grid" (exact float32 products of an
// integer grid), "float32" or "float64".
func (k *KernelRows) Arithmetic() string {
	switch {
	case k.s.i8 != nil:
		return "int8"
	case k.s.grid != nil:
		return "grid"
	case k.s.x32 != nil:
		return "float32"
	}
	return "float64"
}

// Among sets out (m×m row-major, m = len(idx)) to the kernel among the
// rows idx of the data, unit diagonal, and reports true, when the blocks
// come from exact integer products (Int8): the m points are packed anew
// (m·d bytes) and mapped against themselves. Other KernelRows leave out
// unchanged and report false (callers then gather the rows and call Gram).
func (k *KernelRows) Among(idx []int, out []float64) bool {
	s := k.s
	m := len(idx)
	if s.i8 == nil || m == 0 || len(out) < m*m {
		return false
	}
	pts, err := s.i8.Subset(idx)
	if err != nil {
		return false
	}
	land := pts.Landmarks(0, m)
	sub := &gramSource{em: s.em, workers: s.workers, build: s.build, grid: s.grid, i8: pts}
	crossInt8(s, sub, land, out[:m*m], m, 0, m)
	if s.em.distance() {
		for i := 0; i < m; i++ {
			out[i*m+i] = 1
		}
	}
	return true
}

// Rows32 sets out (len(idx) rows of stride ld ≥ N, float32) to the kernel
// rows of the data's rows idx against all N rows, each entry rounded once
// to float32, and reports true, when the blocks come from exact integer
// products (Int8) or from float32 products of a distance kernel on the
// native map path (the float32 copy of NewKernelRows32, or exact float32
// products on an integer grid): the values Cross gives for the same rows,
// rounded to float32, with no float64 block between. Other KernelRows
// leave out unchanged and report false.
//
// The float32 products go by OpenBLAS sgemm, or the packed kernel where
// PackedGemm says (packedProducts), on rows32Chunk points at a time
// straight into out, each chunk mapped in place (native.RBFMap32To32)
// while it is in cache: the data are packed once per call, not once per
// block of landmarks.
func (k *KernelRows) Rows32(idx []int, out []float32, ld int) bool {
	s := k.s
	m, n := len(idx), k.N()
	if (s.i8 == nil && !s.products32()) || m == 0 {
		return false
	}
	if ld < n || len(out) < (m-1)*ld+n {
		panic(fmt.Sprintf("linalg: KernelRows.Rows32: %d rows of %d, ld %d, len(out) %d", m, n, ld, len(out)))
	}
	if s.i8 == nil {
		s.rows32(idx, out, ld)
		return true
	}
	land := s.i8.LandmarksOf(idx)
	c, laplace := s.em.C, s.em.Kind == MapExpDist
	int8Ranges(s.workers, 0, n, func(p0, p1 int) {
		s.build.Int8Map32(s.i8, land, p0, p1, c, laplace, out[p0:], ld)
	})
	return true
}

// products32 reports whether Rows32 takes float32 products (where Cross
// takes them too): data held only in float32, or on an integer grid, for
// a distance kernel on the native map path.
func (s *gramSource) products32() bool {
	return s.x32 != nil && (s.x.Data == nil || s.grid != nil) && s.em.distance() && s.mp == MapNative
}

// RangeRows32 returns, where Rows32 computes the rows (exact integer
// products, or float32 products), a function that sets out (len(idx) rows
// of stride ld ≥ p1 − p0, float32) to the kernel rows of the data's rows
// idx against the points p0 ≤ p < p1. On integer products entry
// (a, p − p0) is the value Rows32 gives for row idx[a] and point p (a
// point's entries do not depend on the range); on float32 products it is
// within the products' entry bound (EntryBound) of it, OpenBLAS rounding
// a product differently by the shape of the call, and the same range
// gives the same bits every time. The landmarks are packed or gathered once, here;
// the function panics on a range or an out that does not fit. Other
// KernelRows return nil.
func (k *KernelRows) RangeRows32(idx []int) func(p0, p1 int, out []float32, ld int) {
	if k.s.i8 != nil {
		return k.rangeRows32(idx, k.s.workers)
	}
	each := k.RangeRows32Each(idx)
	if each == nil {
		return nil
	}
	return func(p0, p1 int, out []float32, ld int) { each(p0, p1, out, ld, nil) }
}

// RangeRows32Each is RangeRows32's function on float32 products with a
// consumer: each(p0, p1, out, ld, use) sets out to the same values as
// RangeRows32's function on the same range, and, when use is not nil,
// hands them over block by block while they are in cache: every goroutine
// that maps values calls use once for a function f, then f(q0, q1) for
// each block of points q0 ≤ p < q1 (at most RowsEachBlock of them, ranges
// that tile [p0, p1) between them) whose values — all len(idx) rows of
// them, at out[a·ld + q0 − p0 …] — are final, before it maps the next.
// Calls of f on different goroutines run concurrently. nil where the
// products are not float32 (integer products have SerialRangeRows32 for
// this: they need no shared buffer).
func (k *KernelRows) RangeRows32Each(idx []int) func(p0, p1 int, out []float32, ld int, use func() func(q0, q1 int)) {
	if k.s.i8 != nil || !k.s.products32() || len(idx) == 0 {
		return nil
	}
	m, n := len(idx), k.N()
	rows := k.s.rows32Ranges(idx)
	return func(p0, p1 int, out []float32, ld int, use func() func(q0, q1 int)) {
		checkRange(p0, p1, n, m, ld, len(out))
		rows(p0, p1, out, ld, use)
	}
}

// SerialRangeRows32 is RangeRows32's function on exact integer products
// (Int8), computed on the calling goroutine: for callers that run ranges
// in parallel themselves. nil elsewhere (float32 products run OpenBLAS's
// own threads: RangeRows32Each).
func (k *KernelRows) SerialRangeRows32(idx []int) func(p0, p1 int, out []float32, ld int) {
	if k.s.i8 == nil {
		return nil
	}
	return k.rangeRows32(idx, 1)
}

// rangeRows32 is RangeRows32 on exact integer products, on the given
// workers.
func (k *KernelRows) rangeRows32(idx []int, workers int) func(p0, p1 int, out []float32, ld int) {
	s := k.s
	if len(idx) == 0 {
		return nil
	}
	m, n := len(idx), k.N()
	land := s.i8.LandmarksOf(idx)
	c, laplace := s.em.C, s.em.Kind == MapExpDist
	return func(p0, p1 int, out []float32, ld int) {
		checkRange(p0, p1, n, m, ld, len(out))
		int8Ranges(workers, p0, p1, func(q0, q1 int) {
			s.build.Int8Map32(s.i8, land, q0, q1, c, laplace, out[q0-p0:], ld)
		})
	}
}

// checkRange panics unless points [p0, p1) lie within n and m rows of
// them at stride ld fit in size values (RangeRows32's functions).
func checkRange(p0, p1, n, m, ld, size int) {
	if p0 < 0 || p1 > n || p0 >= p1 || ld < p1-p0 || size < (m-1)*ld+p1-p0 {
		panic(fmt.Sprintf("gram: KernelRows.RangeRows32: points [%d, %d) of %d, %d rows of stride %d in %d values", p0, p1, n, m, ld, size))
	}
}

// Levels8 returns, when the blocks come from exact integer products
// (Int8) and the data's own grid has them, the data's rows idx as 8-bit
// levels on the grid's step (each column less its minimum, which a
// distance kernel does not see) and true: NewKernelRowsLevels8 on them
// gives the integer products and kernel values of these rows, without a
// float64 copy of them or a second grid scan. Otherwise nil and false.
func (k *KernelRows) Levels8(idx []int) (*linalg.Levels8, bool) {
	s := k.s
	if s.i8 == nil || s.grid == nil || len(idx) == 0 {
		return nil, false
	}
	d := s.i8.D
	out := &linalg.Levels8{Rows: len(idx), Cols: d, Step: s.grid.step, Data: make([]uint8, len(idx)*d)}
	par.Blocks(s.workers, len(idx), func(lo, hi int) {
		for a := lo; a < hi; a++ {
			s.i8.Levels(idx[a], out.Data[a*d:(a+1)*d])
		}
	})
	return out, true
}

// rows32Chunk is the points Rows32 multiplies and maps at once on the
// float32 path: 256 landmark rows of it are 8 MB of float32 products.
const rows32Chunk = 8192

// RowsEachBlock is the most points of a block RangeRows32Each hands
// over: their rows at k = 2000 landmarks are 2 MB of float32.
const RowsEachBlock = 256

// rows32 is Rows32 by float32 products (rows32Ranges on every point).
func (s *gramSource) rows32(idx []int, out []float32, ld int) {
	s.rows32Ranges(idx)(0, s.x.Rows, out, ld, nil)
}

// rows32Ranges gathers the landmarks' float32 rows and norms once and
// returns a function that sets out (stride ld) to their kernel rows
// against the points p0 ≤ p < p1 (entry (a, p − p0)): the products (sgemm,
// or the packed kernel: PackedGemm) and the in-place map rows32Chunk
// points at a time from p0 — the map by blocks
// of landmarks, or, with use (RangeRows32Each), by blocks of
// RowsEachBlock points, each handed to its goroutine's consumer once
// mapped. The map is elementwise, so both give the same values.
func (s *gramSource) rows32Ranges(idx []int) func(p0, p1 int, out []float32, ld int, use func() func(q0, q1 int)) {
	m, d := len(idx), s.x.Cols
	// The landmarks as a source of their own (their float32 rows).
	land := &gramSource{x: blas64.General{Rows: m, Cols: d, Stride: d}, x32: make([]float32, m*d)}
	ni := make([]float64, m)
	for j, i := range idx {
		copy(land.x32[j*d:(j+1)*d], s.x32[i*d:(i+1)*d])
		ni[j] = s.norms[i]
	}
	c, laplace := s.em.C, s.em.Kind == MapExpDist
	products := func(q0, w int, blk []float32, ld int) { sgemm32Into(land, s, 0, m, q0, q0+w, blk, ld) }
	if PackedGemm() {
		products = packedProducts(m, d, land.x32, s.x32, s.workers)
	}
	return func(p0, p1 int, out []float32, ld int, use func() func(q0, q1 int)) {
		for q0 := p0; q0 < p1; q0 += rows32Chunk {
			w := min(rows32Chunk, p1-q0)
			blk := out[q0-p0:]
			products(q0, w, blk, ld)
			if use == nil {
				par.Blocks(s.workers, m, func(lo, hi int) {
					b := blk[lo*ld:]
					s.build.RBFMap32To32(hi-lo, w, b, ld, b, ld, ni[lo:hi], s.norms[q0:q0+w], c, laplace)
				})
				continue
			}
			par.Blocks(s.workers, (w+RowsEachBlock-1)/RowsEachBlock, func(lo, hi int) {
				f := use()
				for b := lo; b < hi; b++ {
					j0, j1 := b*RowsEachBlock, min((b+1)*RowsEachBlock, w)
					v := blk[j0:]
					s.build.RBFMap32To32(m, j1-j0, v, ld, v, ld, ni, s.norms[q0+j0:q0+j1], c, laplace)
					f(q0+j0, q0+j1)
				}
			})
		}
	}
}

// Int8 reports whether the blocks against rows on the data's 8-bit grid
// (the data's own rows, and new points within its range) come from exact
// integer products (GramOptions.Int8, native.Int8Map): the entries are
// then the kernel of the snapped data to the rounding of the map.
func (k *KernelRows) Int8() bool { return k.s.i8 != nil }

// IntegerHead returns how many leading rows have their kernel among
// themselves computed by exact integer products: N() when Int8, the
// rows of the integer head for data whose first rows only lie on an 8-bit
// grid (head.go), 0 otherwise.
func (k *KernelRows) IntegerHead() int {
	switch {
	case k.s.i8 != nil:
		return k.N()
	case k.head != nil:
		return k.head.x.Rows
	}
	return 0
}

// OnGrid reports whether the data lie on an integer grid and the inner
// products are exact float32 ones (GramOptions.Grid): the entries are
// then as accurate as with float64 products, and Products says float64.
func (k *KernelRows) OnGrid() bool { return k.s.grid != nil }

// MaxEntryRel is the largest relative entry bound over all pairs for the
// Gaussian and Laplace kernels (0 with float64 products, +Inf for kernels
// whose bound is not relative).
func (k *KernelRows) MaxEntryRel() float64 { return k.s.maxEntryRel() }

// Cross sets out (row-major, stride ld) to the kernel values between the
// rows of y (m×d, new points) and rows [j0, j1) of the data: the test
// kernel block. y is not modified.
func (k *KernelRows) Cross(out []float64, ld int, y *mat.Dense, j0, j1 int) error {
	if err := checkData("KernelRows.Cross: y", y); err != nil {
		return err
	}
	m, d := y.Dims()
	if d != k.Dim() {
		return invalidf("KernelRows.Cross: y has %d columns, the data %d", d, k.Dim())
	}
	var sy *gramSource
	if k.s.grid != nil {
		sy = k.s.onGrid(y)
	} else {
		o := GramOptions{Inner: k.s.inner, Map: k.s.mp, Workers: k.s.workers}
		if k.s.x.Data == nil {
			o.Products = ProductsFloat32 // the data exist only in float32
		}
		sy = newCrossSource(y, k.s.em, o, k.s.shiftBy)
	}
	sy.scratch = k.crossScratch
	crossMapped(sy, k.s, out, ld, 0, m, j0, j1, k.s.norms)
	k.crossScratch = sy.scratch // reused: fresh pages are slow to touch
	return nil
}
