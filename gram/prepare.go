package gram

import (
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/internal/scratch"
	"github.com/kdual/kdual/native"
)

// gridMinRows is the fewest rows for which Prepare looks for an integer
// grid (GridAuto): snapping costs a pass over the data, and the float32
// products it buys save part of the Gram's n²d/2 multiply-adds; below
// about 250 rows the pass costs more than it saves (docs/measurements.md).
const gridMinRows = 256

// Data is what Prepare reads: r rows of c float64s, row i returned by
// RawRowView (len c, not modified). *mat.Dense is one.
type Data interface {
	Dims() (r, c int)
	RawRowView(i int) []float64
}

// Source is data prepared for the Gram engine by Prepare: checked finite
// and held in every form the element map and the options need, so that
// the kernel builds from it (GramInto, Tiles32, Tiles64Band, Rows) read
// only those forms, never the data given to Prepare (except data read in
// place, see Prepare).
type Source struct {
	s    *gramSource
	copy *mat.Dense
}

// Prepare reads the rows of x once, in one pass: it checks every entry
// finite (else an error wrapping ErrInvalid that names the first entry
// that is not) and, for the maps with an inner-product form (every map
// but MapExpL1), no larger than √(max float64 / 8d) (else ErrInvalid:
// the squared norms and distances would overflow), gathers the column sums, ranges and largest magnitude,
// for maps other than distances the rows' squared norms (distance maps
// take them from the shifted rows below), the first rows (for the grid's
// step), and
// with keepCopy copies every row (Source.Copy: an exact copy a model may
// keep). From what that pass gathered:
//   - a distance map (MapExpSq, MapExpDist) on float64 products, o.Grid
//     allowing it, whose column ranges and first rows suggest an integer
//     grid (grid.go) has its rows snapped to it: exact float32 integers
//     replace them (read from the copy, or a second read of x); on an
//     8-bit grid with the integer path wanted (GramOptions.Int8) the same
//     pass packs the levels for native.Int8Map;
//   - a distance map otherwise has its rows shifted by their column
//     means (distances do not change, and ‖x‖² + ‖y‖² − 2⟨x, y⟩ cancels
//     less) into a new array with their squared norms (from the copy, or
//     a second read of x), unless the means are within 1e-12 of the
//     largest entry (x centred already);
//   - other maps, and data centred already, keep the rows as they are:
//     the copy, or x itself read in place by the products (a *mat.Dense
//     that is not copied must then not change while the Source is used;
//     other Data are always copied);
//   - float32 products (o.Products) round the prepared rows to float32.
//
// So x is read at most twice before the first kernel entry (once with
// keepCopy), three times only when its first rows lie on a grid that a
// later row leaves. The maps without an inner-product form (MapExpL1)
// keep the rows as they are, in float64, whatever o.Products says.
func Prepare(x Data, em ElementMap, o GramOptions, keepCopy bool) (*Source, error) {
	if err := em.Check(); err != nil {
		return nil, err
	}
	if m, ok := x.(*mat.Dense); x == nil || ok && (m == nil || m.IsEmpty()) {
		return nil, invalidf("Prepare: empty data")
	}
	n, d := x.Dims()
	if n < 1 || d < 1 {
		return nil, invalidf("Prepare: empty data")
	}
	dense, inPlace := x.(*mat.Dense)
	keepCopy = keepCopy || !inPlace
	s := &gramSource{em: em, workers: o.Workers, build: o.build()}
	s.inner, s.mp = o.resolve()
	var cp []float64
	if keepCopy {
		cp = make([]float64, n*d)
	}
	grid := em.distance() && o.gridWanted() && o.gridFaster() && (n >= gridMinRows || o.Grid == GridOn)
	sc, err := scan(s.build, x, n, d, o.Workers, cp, grid && cp == nil, !em.distance())
	if err != nil {
		return nil, err
	}
	if em.Kind != MapExpL1 && !(sc.big <= maxEntry(d)) {
		return nil, invalidf("the data's largest entry is %g: squared norms and distances of %d such entries overflow float64 (scale the data)", sc.big, d)
	}
	src := &Source{s: s}
	var rows func(i int) []float64
	if cp != nil {
		src.copy = mat.NewDense(n, d, cp)
		rows = func(i int) []float64 { return cp[i*d : (i+1)*d] }
		s.x = blas64.General{Rows: n, Cols: d, Stride: d, Data: cp}
	} else {
		raw := dense.RawMatrix()
		rows = x.RawRowView
		s.x = blas64.General{Rows: n, Cols: d, Stride: raw.Stride, Data: raw.Data}
	}
	if grid {
		sample := rows
		if cp == nil {
			sample = func(i int) []float64 { return sc.sample[i*d : (i+1)*d] }
		}
		if g := newGrid(sc.lo, sc.hi, n, d, sample); g != nil {
			if g.bits8() && d <= native.Int8MaxDim && o.int8Wanted() {
				// Levels for the integer kernel rows, packed with the
				// float32 integers in the same pass.
				if pts, x32, norms := g.snapPack8(s.build, n, d, rows); pts != nil {
					s.setGrid(g, x32, norms)
					s.i8 = pts
					return src, nil
				}
			} else if g, x32, norms := g.snapAll(n, d, rows, o.Workers); g != nil {
				s.setGrid(g, x32, norms)
				return src, nil
			}
		}
	}
	if em.distance() {
		shift := make([]float64, d)
		for j := range shift {
			shift[j] = sc.sums[j] / float64(n)
		}
		if floats.Norm(shift, math.Inf(1)) <= 1e-12*sc.big {
			// Centred already (to rounding): shifting would change
			// nothing but cost a copy of the data.
			clear(shift)
			s.norms = rowNorms(n, d, rows, o.Workers)
		} else {
			s.norms = make([]float64, n)
			s.x = shiftedCopy(n, d, rows, shift, s.norms, o.Workers)
			s.lent = s.x.Data
		}
		s.shiftBy = shift
	} else {
		s.norms = sc.norms
	}
	if o.Products == ProductsFloat32 && em.Kind != MapExpL1 {
		if err := CheckFloat32Range("Prepare", sc.big, d); err != nil {
			return nil, err
		}
		s.narrow32(o.Workers)
	}
	return src, nil
}

// Release gives the source's shifted rows (a distance map's, see Prepare)
// back to package scratch for a later Prepare. s must not be used
// afterwards, by its caller or by an operator built from it, and no
// matrix or row it produced may depend on its rows any more; Copy's
// matrix stays valid. A nil s is a no-op.
func (s *Source) Release() {
	if s == nil || s.s == nil {
		return
	}
	if s.s.lent != nil {
		scratch.Put(s.s.lent)
	}
	s.s = nil
}

// Copy returns the exact copy of the data that Prepare made (keepCopy, or
// data that were not a *mat.Dense), or nil. The engine reads it but never
// writes it.
func (s *Source) Copy() *mat.Dense { return s.copy }

// Dims returns the number of rows and columns of the prepared data.
func (s *Source) Dims() (n, d int) { return s.s.x.Rows, s.s.x.Cols }

// Map returns the element map the source was prepared for.
func (s *Source) Map() ElementMap { return s.s.em }

// CheckFloat32Range returns an error wrapping ErrInvalid when data whose
// largest entry in magnitude is big (d columns) would leave float32's
// normal range in float32 products: big below 2⁻⁶⁰ (squares near
// float32's subnormals, which keep few digits) or d·big² above 2¹²² (a
// product or a squared norm of shifted rows near float32's largest
// value). Zero data pass. what names the caller.
func CheckFloat32Range(what string, big float64, d int) error {
	if big == 0 {
		return nil
	}
	if big < 0x1p-60 || float64(d)*big*big > 0x1p122 || math.IsNaN(big) {
		return invalidf("%s: the data's largest entry is %g: float32 products of %d such entries leave float32's range (scale the data, or use float64 products)", what, big, d)
	}
	return nil
}

// Store32Range returns an error wrapping ErrInvalid when the values of
// the map em on rows whose squared norms are at most maxNorm may leave
// float32's normal range in float32 storage (SymTiles32): a bound on
// |k(x, y)| — maxNorm for the linear map, (|γ|·maxNorm + |c₀|)^degree for
// the polynomial one — above 2¹²⁰, or positive and below 2⁻¹⁰⁰ (values
// flushed to float32's subnormals or to zero). The maps bounded by 1 (the
// exponential, tanh and cosine maps) always pass.
func Store32Range(em ElementMap, maxNorm float64) error {
	var b float64
	switch em.Kind {
	case MapIdentity:
		b = maxNorm
	case MapPower:
		b = math.Pow(math.Abs(em.Gamma)*maxNorm+math.Abs(em.Coef0), float64(em.Degree))
	default:
		return nil
	}
	if b > 0x1p120 || (b > 0 && b < 0x1p-100) || math.IsNaN(b) {
		return invalidf("kernel values up to %g leave float32's range in float32 storage (store them in float64, apply the kernel matrix-free, or scale the data)", b)
	}
	return nil
}

// maxEntry is the largest |x_ij| whose rows' squared norms and squared
// distances stay finite: with the rows shifted by their means (entries up
// to 2·|x|) and ‖x‖² + ‖y‖² added, 8·d·|x|² must not overflow.
func maxEntry(d int) float64 { return math.Sqrt(math.MaxFloat64 / (8 * float64(d))) }

// scanned is what Prepare's one pass over the data gathers.
type scanned struct {
	sums, lo, hi []float64 // column sums, minima and maxima
	norms        []float64 // the rows' squared norms (when asked for)
	big          float64   // the largest |x_ij|
	sample       []float64 // the first min(n, gridSample) rows (sampled only)
}

// scan is Prepare's pass over x: by fixed blocks of rows (their size set
// by n alone) in parallel, each block's sums and ranges combined in block
// order, so the results are the same bits whatever the number of cores.
// It copies every row into cp when cp is not nil, the first rows into
// the sample when sample is set, and with norms sets the rows' squared
// norms. The ranges come from native.ColumnRange (the bits of `if e <
// lo[j]`), the sums add each row in row order; a NaN or infinite entry
// is found through its column's sum over the block (NaN or ±Inf), the
// block then searched entry by entry (as it also is when finite entries'
// sum overflows).
func scan(nb native.Build, x Data, n, d, workers int, cp []float64, sample, norms bool) (scanned, error) {
	block := max(256, (n+255)/256)
	blocks := (n + block - 1) / block
	sums := make([]float64, blocks*d)
	los := make([]float64, blocks*d)
	his := make([]float64, blocks*d)
	bigs := make([]float64, blocks)
	bad := make([]int, blocks)          // 1 + the flat index of the block's first non-finite entry
	badValue := make([]float64, blocks) // and its value
	var sc scanned
	if norms {
		sc.norms = make([]float64, n)
	}
	if sample {
		sc.sample = make([]float64, min(n, gridSample)*d)
	}
	par.Blocks(workers, blocks, func(b0, b1 int) {
		for b := b0; b < b1; b++ {
			sum, lo, hi := sums[b*d:(b+1)*d], los[b*d:(b+1)*d], his[b*d:(b+1)*d]
			for j := range lo {
				lo[j], hi[j] = math.Inf(1), math.Inf(-1)
			}
			i0, i1 := b*block, min((b+1)*block, n)
			raw, dense := rawOf(x)
			for i := i0; i < i1; i++ {
				row := x.RawRowView(i)[:d]
				switch {
				case !dense:
					nb.ColumnRange(1, d, row, d, lo, hi)
				case (i-i0)%scanRows == 0:
					// The next rows at once, read again below while in cache.
					nb.ColumnRange(min(scanRows, i1-i), d, raw.Data[i*raw.Stride:], raw.Stride, lo, hi)
				}
				floats.Add(sum, row) // sum[j] += row[j], in row order
				if sc.norms != nil {
					sc.norms[i] = sqNorm(row)
				}
				if cp != nil {
					copy(cp[i*d:(i+1)*d], row)
				}
				if sc.sample != nil && i < gridSample {
					copy(sc.sample[i*d:(i+1)*d], row)
				}
			}
			// A NaN or an infinity makes its column's sum NaN or ±Inf;
			// so may finite entries whose sum overflows: only then is
			// the block searched entry by entry.
			top, finite := 0.0, true
			for j := range lo {
				top = math.Max(top, math.Max(math.Abs(lo[j]), math.Abs(hi[j])))
				finite = finite && !math.IsNaN(sum[j]) && !math.IsInf(sum[j], 0)
			}
			if !finite {
				bad[b], badValue[b] = firstBad(x, i0, i1, d)
			}
			bigs[b] = top
		}
	})
	for b := 0; b < blocks; b++ {
		if bad[b] != 0 {
			i, j := (bad[b]-1)/d, (bad[b]-1)%d
			return sc, invalidf("x[%d,%d] = %g is not finite", i, j, badValue[b])
		}
	}
	sc.sums, sc.lo, sc.hi = sums[:d], los[:d], his[:d]
	for b := 1; b < blocks; b++ {
		floats.Add(sc.sums, sums[b*d:(b+1)*d])
		for j := 0; j < d; j++ {
			sc.lo[j] = math.Min(sc.lo[j], los[b*d+j])
			sc.hi[j] = math.Max(sc.hi[j], his[b*d+j])
		}
	}
	sc.big = floats.Max(bigs)
	return sc, nil
}

// scanRows is the rows of a *mat.Dense whose ranges scan takes in one
// native call (at d = 784, 100 KB: in cache for the sums and the copy).
const scanRows = 16

// rawOf returns x's storage when it is a *mat.Dense.
func rawOf(x Data) (blas64.General, bool) {
	if m, ok := x.(*mat.Dense); ok {
		return m.RawMatrix(), true
	}
	return blas64.General{}, false
}

// firstBad returns 1 + the flat index of the first entry of rows [i0, i1)
// of x (d columns) that is NaN or infinite, and that entry; 0 if none is.
func firstBad(x Data, i0, i1, d int) (int, float64) {
	for i := i0; i < i1; i++ {
		for j, e := range x.RawRowView(i)[:d] {
			if math.IsNaN(e) || math.IsInf(e, 0) {
				return 1 + i*d + j, e
			}
		}
	}
	return 0, 0
}

// rowNorms returns the rows' squared norms, in parallel.
func rowNorms(n, d int, rows func(i int) []float64, workers int) []float64 {
	norms := make([]float64, n)
	par.For(workers, n, nil, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			norms[i] = sqNorm(rows(i)[:d])
		}
	})
	return norms
}

// sqNorm is Σ row[j]², summed in order.
func sqNorm(row []float64) float64 {
	v := 0.0
	for _, e := range row {
		v += e * e
	}
	return v
}

// shiftedCopy returns the rows minus shift in a new n×d array, setting
// norms to their squared norms, in parallel.
func shiftedCopy(n, d int, rows func(i int) []float64, shift, norms []float64, workers int) blas64.General {
	data := scratch.Float64s(n * d)
	par.For(workers, n, nil, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst := data[i*d : (i+1)*d]
			v := 0.0
			for j, e := range rows(i)[:d] {
				e -= shift[j]
				dst[j] = e
				v += e * e
			}
			norms[i] = v
		}
	})
	return blas64.General{Rows: n, Cols: d, Stride: d, Data: data}
}
