package gram

import (
	"math"
	"slices"

	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/native"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// gramSource is the prepared data of a Gram computation: the rows of x
// (shifted by their mean for distance maps, which leaves every distance
// unchanged and reduces cancellation in ‖x‖² + ‖y‖² − 2⟨x, y⟩) and their
// squared norms.
type gramSource struct {
	x       blas64.General
	x32     []float32 // the rows rounded to float32 (ProductsFloat32), n×d
	scratch []float32 // sgemm output, reused (products is not concurrent)
	norms   []float64
	shiftBy []float64 // the vector subtracted from the rows (distance maps)
	lent    []float64 // x.Data when Prepare's shifted copy (Source.Release gives it back)
	// grid, when not nil, is the integer grid the rows lie on (grid.go):
	// x32 holds the shifted integers, norms their exact squared norms,
	// x.Data is nil and em.C is scaled by the grid step (squared for the
	// Gaussian) so that the map reads distances in grid units.
	grid *grid
	// owner32 is the matrix x32 is read in place from (NewKernelRows32):
	// its storage may be off-heap, unmapped once the matrix is
	// unreachable, so the source keeps it reachable while it reads x32.
	owner32 *linalg.Dense32
	// i8, when not nil, holds the grid's integers as 8-bit levels packed
	// for native.Int8Map (packInt8): KernelRows's products against rows
	// on the same 8-bit grid are then exact integer ones.
	i8      *native.Int8Points
	em      ElementMap
	inner   InnerPath
	mp      MapPath
	workers int          // GramOptions.Workers
	build   native.Build // GramOptions.Baseline
}

// newCrossSource prepares new points x (not the data a Source holds) for
// products against a prepared source: shifted by that source's shift
// (distance maps; nil: none) into a copy with their squared norms, or
// read in place; rounded to float32 for float32 products. x must be
// finite (callers check).
func newCrossSource(x *mat.Dense, em ElementMap, o GramOptions, shift []float64) *gramSource {
	n, d := x.Dims()
	raw := x.RawMatrix()
	s := &gramSource{em: em, workers: o.Workers, build: o.build()}
	s.inner, s.mp = o.resolve()
	rows := func(i int) []float64 { return raw.Data[i*raw.Stride : i*raw.Stride+d] }
	s.norms = make([]float64, n)
	if em.distance() && slices.ContainsFunc(shift, func(v float64) bool { return v != 0 }) {
		s.x = shiftedCopy(n, d, rows, shift, s.norms, o.Workers)
	} else {
		s.x = blas64.General{Rows: n, Cols: d, Stride: raw.Stride, Data: raw.Data}
		par.For(o.Workers, n, nil, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				v := 0.0
				for _, e := range rows(i) {
					v += e * e
				}
				s.norms[i] = v
			}
		})
	}
	if em.distance() {
		s.shiftBy = shift
	}
	if o.Products == ProductsFloat32 && em.Kind != MapExpL1 {
		s.narrow32(o.Workers)
	}
	return s
}

// narrow32 rounds the source's rows to float32 (x32) and sets the norms
// to the rounded rows' squared norms, which float32 products see.
func (s *gramSource) narrow32(workers int) {
	n, d := s.x.Rows, s.x.Cols
	s.x32 = make([]float32, n*d)
	s.build.Narrow(n, d, s.x.Data, s.x.Stride, s.x32, d)
	par.For(workers, n, nil, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v := 0.0
			for _, e := range s.x32[i*d : (i+1)*d] {
				v += float64(e) * float64(e)
			}
			s.norms[i] = v
		}
	})
}

// products32 sets out (stride ld) to the float32 inner products of rows
// [i0, i1) of a with rows [j0, j1) of b (sgemm into a float32 scratch of
// a, then widened).
func products32(a, b *gramSource, out []float64, ld, i0, i1, j0, j1 int) {
	m, n := i1-i0, j1-j0
	buf := sgemm32(a, b, i0, i1, j0, j1)
	par.Blocks(a.workers, m, func(lo, hi int) {
		a.build.Widen(hi-lo, n, buf[lo*n:], n, out[lo*ld:], ld)
	})
}

// setGrid makes s hold its rows as the grid's integers (findGrid's x32
// and norms), the map scaled to grid units.
func (s *gramSource) setGrid(g *grid, x32 []float32, norms []float64) {
	n, d := len(norms), len(x32)/max(len(norms), 1)
	s.grid, s.x32, s.norms = g, x32, norms
	s.x = blas64.General{Rows: n, Cols: d, Stride: d}
	s.em.C = g.scale(s.em)
}

// onGrid prepares the rows of y (m×d) against s, whose data lie on an
// integer grid: y in the grid's units, as exact float32 integers when y
// lies on the grid too (its products with s are then exact float32 ones)
// and as float64 values otherwise. y is not modified.
func (s *gramSource) onGrid(y *mat.Dense) *gramSource {
	m, d := y.Dims()
	raw := y.RawMatrix()
	t := &gramSource{em: s.em, inner: s.inner, mp: s.mp, workers: s.workers, build: s.build, grid: s.grid}
	data := make([]float64, m*d)
	y32 := make([]float32, m*d)
	t.norms = make([]float64, m)
	if s.grid.snap(blas64.General{Rows: m, Cols: d, Stride: raw.Stride, Data: raw.Data}, data, y32, t.norms, s.workers) {
		t.x32 = y32
		t.x = blas64.General{Rows: m, Cols: d, Stride: d}
	} else {
		t.x = blas64.General{Rows: m, Cols: d, Stride: d, Data: data}
	}
	return t
}

func (s *gramSource) rows(i0, i1 int) blas64.General {
	return blas64.General{Rows: i1 - i0, Cols: s.x.Cols, Stride: s.x.Stride, Data: s.x.Data[i0*s.x.Stride:]}
}

// sgemm32 returns the float32 inner products of rows [i0, i1) of a with
// rows [j0, j1) of b, (i1−i0)×(j1−j0) row-major in a's reused scratch.
func sgemm32(a, b *gramSource, i0, i1, j0, j1 int) []float32 {
	m, n := i1-i0, j1-j0
	if cap(a.scratch) < m*n {
		a.scratch = make([]float32, m*n)
	}
	buf := a.scratch[:m*n]
	sgemm32Into(a, b, i0, i1, j0, j1, buf, n)
	return buf
}

// sgemm32Into sets buf (row stride ld) to the float32 inner products of
// rows [i0, i1) of a with rows [j0, j1) of b.
func sgemm32Into(a, b *gramSource, i0, i1, j0, j1 int, buf []float32, ld int) {
	m, n, d := i1-i0, j1-j0, a.x.Cols
	linalg.B32.Gemm(blas.NoTrans, blas.Trans, 1,
		blas32.General{Rows: m, Cols: d, Stride: d, Data: a.x32[i0*d:]},
		blas32.General{Rows: n, Cols: d, Stride: d, Data: b.x32[j0*d:]}, 0,
		blas32.General{Rows: m, Cols: n, Stride: ld, Data: buf})
}

// products sets out (stride ld) to the inner products of rows [i0, i1)
// with rows [j0, j1) of the source. When diag is true (i0 == j0, i1 ≤ j1)
// the square block [i0, i1)² is computed by dsyrk in its upper triangle
// only (its lower triangle is left unset) and the rest by dgemm. Calls
// OpenBLAS (its threads) or the native tiles (goroutines).
func (s *gramSource) products(out []float64, ld, i0, i1, j0, j1 int, diag bool) {
	m, n := i1-i0, j1-j0
	if m <= 0 || n <= 0 {
		return
	}
	if s.em.Kind == MapExpL1 {
		l1Products(s, s, out, ld, i0, i1, j0, j1, diag)
		return
	}
	d := s.x.Cols
	// sgemm and the native tiles fill the diagonal block's lower triangle
	// too: clear it, leaving it unset as dsyrk does (GramOptions.UpperOnly
	// wants zeros there, and the callers that mirror overwrite it).
	clearLower := func() {
		if diag {
			for r := 1; r < m; r++ {
				clear(out[r*ld : r*ld+r])
			}
		}
	}
	if s.x32 != nil {
		products32(s, s, out, ld, i0, i1, j0, j1)
		clearLower()
		return
	}
	if s.inner == InnerNative {
		tiles := tilesOf(m, n, diag)
		runTiles(s.workers, tiles, 0, func(t tile, _ []float64) {
			native.DotNT(t.i1-t.i0, t.j1-t.j0, d, s.x.Data[(i0+t.i0)*s.x.Stride:], s.x.Stride,
				s.x.Data[(j0+t.j0)*s.x.Stride:], s.x.Stride, out[t.i0*ld+t.j0:], ld)
		})
		clearLower()
		return
	}
	if diag {
		linalg.B64.Syrk(blas.NoTrans, 1, s.rows(i0, i1), 0, blas64.Symmetric{N: m, Stride: ld, Data: out, Uplo: blas.Upper})
		if n > m {
			linalg.B64.Gemm(blas.NoTrans, blas.Trans, 1, s.rows(i0, i1), s.rows(i0+m, j1), 0,
				blas64.General{Rows: m, Cols: n - m, Stride: ld, Data: out[m:]})
		}
		return
	}
	linalg.B64.Gemm(blas.NoTrans, blas.Trans, 1, s.rows(i0, i1), s.rows(j0, j1), 0,
		blas64.General{Rows: m, Cols: n, Stride: ld, Data: out})
}

// mapPanel applies the element map to rows [i0, i1) × columns [j0, j1)
// held in out (stride ld, out[0] is entry (i0, j0)), in parallel. When
// upper is true only the entries with j ≥ i are mapped (and, for distance
// maps, the diagonal is set to exactly 1).
func (s *gramSource) mapPanel(out []float64, ld, i0, i1, j0, j1 int, upper bool, normsJ []float64) {
	m := i1 - i0
	par.Blocks(s.workers, m, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			c0 := 0
			if upper {
				c0 = max(0, i0+r-j0)
			}
			mapRows(out[r*ld:], ld, 0, 1, c0, j1-j0, s.norms[i0+r:], normsJ, s.em, s.mp, s.build)
			if upper && s.em.distance() && i0+r >= j0 && i0+r < j1 {
				out[r*ld+i0+r-j0] = 1
			}
		}
	})
}

// mapCross maps the block of rows [i0, i1) of s against columns with
// squared norms normsJ[j0:j1], held in out (stride ld, out[0] = (i0, j0)).
func (s *gramSource) mapCross(out []float64, ld, i0, i1 int, normsJ []float64, j0, j1 int) {
	par.For(s.workers, i1-i0, nil, func(lo, hi int) {
		mapRows(out, ld, lo, hi, 0, j1-j0, s.norms[i0:], normsJ[j0:], s.em, s.mp, s.build)
	})
}

// gammaF32 is γ_d = d·u/(1 − d·u) for float32's u = 2⁻²⁴: the bound of the
// relative error of a float32 inner product of length d (Higham, Thm. 3.5).
func gammaF32(d int) float64 {
	const u = 1.0 / (1 << 24)
	du := float64(d) * u
	return du / (1 - du)
}

// entryBound bounds |k̃ − k| for the entry k̃ = v computed between rows of
// squared norms ni and nj (of the shifted data) when the products are in
// float32; 0 for float64 products (rounding level). The squared distance
// is off by at most β = 2γ_d·√(ni·nj) (the sgemm product) + 2.01·u·(√ni +
// √nj)² (rounding the data to float32), so the Gaussian entry by at most
// v·(e^{|C|β} − 1) and the Laplace one, through |√a − √b| ≤ √|a − b|, by
// v·(e^{|C|√β} − 1); the polynomial and linear maps by the propagated
// product error |p′|·β/2, the sigmoid map by |γ| times the product error
// (|tanh′| ≤ 1) and the cosine map by 2(γ_d + 2.01·u); the L1 map's
// distances are float64 (0).
func (s *gramSource) entryBound(ni, nj, v float64) float64 {
	if s.x32 == nil || s.grid != nil {
		return 0
	}
	const u = 1.0 / (1 << 24)
	ri, rj := math.Sqrt(ni), math.Sqrt(nj)
	beta := 2*gammaF32(s.x.Cols)*ri*rj + 2.01*u*(ri+rj)*(ri+rj)
	c := math.Abs(s.em.C)
	switch s.em.Kind {
	case MapExpSq:
		return v * math.Expm1(c*beta)
	case MapExpDist:
		return v * math.Expm1(c*math.Sqrt(beta))
	case MapCosine:
		if ni == 0 || nj == 0 {
			return 0
		}
		return 2 * (gammaF32(s.x.Cols) + 2.01*u)
	case MapTanh:
		// |tanh′| ≤ 1: the product error times |γ|.
		return math.Abs(s.em.Gamma) * (gammaF32(s.x.Cols)*ri*rj + 2.01*u*ri*rj)
	case MapPower:
		g := math.Abs(s.em.Gamma)
		inner := gammaF32(s.x.Cols)*ri*rj + 2.01*u*ri*rj
		base := math.Abs(s.em.Gamma*math.Sqrt(ni*nj)) + math.Abs(s.em.Coef0)
		deg := float64(s.em.Degree)
		return deg * math.Pow(base+g*inner, math.Max(deg-1, 0)) * g * inner
	}
	return gammaF32(s.x.Cols)*ri*rj + 2.01*u*ri*rj
}

// maxEntryRel is the largest relative entry bound of a distance kernel
// over all pairs (from the largest row norm), e^{|C|β_max} − 1 (Gaussian)
// or e^{|C|√β_max} − 1 (Laplace); for other maps it is +Inf (their
// bound is absolute, see entryBound).
func (s *gramSource) maxEntryRel() float64 {
	if s.x32 == nil || s.grid != nil {
		return 0
	}
	if !s.em.distance() {
		return math.Inf(1)
	}
	nmax := 0.0
	for _, v := range s.norms {
		nmax = math.Max(nmax, v)
	}
	return s.entryBound(nmax, nmax, 1)
}
