package gram

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/kdual/kdual/linalg"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/native"
	"github.com/kdual/kdual/paths"
	"github.com/kdual/kdual/status"
)

// MapKind names the element map of the Gram engine.
type MapKind int

const (
	// MapIdentity keeps the inner product g = ⟨x, y⟩ (the linear kernel).
	MapIdentity MapKind = iota
	// MapExpSq is exp(C·‖x − y‖²) (the Gaussian kernel, C = −1/(2σ²)).
	MapExpSq
	// MapExpDist is exp(C·‖x − y‖) (the Laplace kernel, C = −1/σ).
	MapExpDist
	// MapPower is (Gamma·g + Coef0)^Degree (the polynomial kernel).
	MapPower
	// MapTanh is tanh(Gamma·g + Coef0) (the sigmoid kernel).
	MapTanh
	// MapCosine is g/(‖x‖·‖y‖), and 0 when x or y is 0 (the cosine
	// kernel).
	MapCosine
	// MapExpL1 is exp(C·‖x − y‖₁) (scikit-learn's laplacian kernel). It
	// has no inner-product form: the engine computes the L1 distances
	// directly in float64 (O(d) per entry, no BLAS), whatever
	// GramOptions.Products says.
	MapExpL1
)

// ElementMap is the map the Gram engine applies to every inner product
// g = ⟨x, y⟩, given the squared norms of x and y. It is a plain value so
// that any kernel package can describe its kernels to the engine.
type ElementMap struct {
	Kind   MapKind
	C      float64 // scale of the exponent, ≤ 0 (MapExpSq, MapExpDist, MapExpL1)
	Gamma  float64 // MapPower, MapTanh
	Coef0  float64 // MapPower, MapTanh
	Degree int     // MapPower, ≥ 0
}

// distance reports whether the map depends on x and y only through
// ‖x − y‖: then the data may be shifted by any vector first, and the
// diagonal is exactly 1.
func (e ElementMap) distance() bool { return e.Kind == MapExpSq || e.Kind == MapExpDist }

// Shifted reports whether Prepare shifts the rows for e (the distance
// maps, which a shift leaves unchanged), into an array of its own unless
// the data are centred already; for other maps it reads the rows as given.
func (e ElementMap) Shifted() bool { return e.distance() }

// Check returns an error wrapping ErrInvalid when e cannot be applied.
func (e ElementMap) Check() error {
	switch e.Kind {
	case MapIdentity:
	case MapExpSq, MapExpDist, MapExpL1:
		if !(e.C <= 0) || math.IsInf(e.C, 0) {
			return invalidf("element map: exponent scale %g must be finite and ≤ 0", e.C)
		}
	case MapPower:
		if e.Degree < 0 || math.IsNaN(e.Gamma) || math.IsInf(e.Gamma, 0) || math.IsNaN(e.Coef0) || math.IsInf(e.Coef0, 0) {
			return invalidf("element map: power (%g·g + %g)^%d is not finite", e.Gamma, e.Coef0, e.Degree)
		}
	case MapTanh:
		if math.IsNaN(e.Gamma) || math.IsInf(e.Gamma, 0) || math.IsNaN(e.Coef0) || math.IsInf(e.Coef0, 0) {
			return invalidf("element map: tanh(%g·g + %g) is not finite", e.Gamma, e.Coef0)
		}
	case MapCosine:
	default:
		return invalidf("element map: unknown kind %d", int(e.Kind))
	}
	return nil
}

// apply maps one scalar (the portable reference of every path).
func (e ElementMap) apply(g, nx, ny float64) float64 {
	switch e.Kind {
	case MapExpSq:
		return math.Exp(e.C * math.Max(nx+ny-2*g, 0))
	case MapExpDist:
		return math.Exp(e.C * math.Sqrt(math.Max(nx+ny-2*g, 0)))
	case MapPower:
		return intPow(e.Gamma*g+e.Coef0, e.Degree)
	case MapTanh:
		return math.Tanh(e.Gamma*g + e.Coef0)
	case MapCosine:
		if nx == 0 || ny == 0 {
			return 0
		}
		return g / (math.Sqrt(nx) * math.Sqrt(ny))
	case MapExpL1:
		return math.Exp(e.C * g) // g is the L1 distance (l1Products)
	}
	return g
}

// InnerPath chooses how the Gram engine computes inner products.
type InnerPath int

const (
	// InnerAuto uses the choice of package paths (Paths.InnerNative).
	InnerAuto InnerPath = iota
	// InnerBLAS uses OpenBLAS dsyrk/dgemm on panels of rows.
	InnerBLAS
	// InnerNative uses native.DotNT on 64×64 tiles (AVX-512 processors only).
	InnerNative
)

func (p InnerPath) String() string {
	switch p {
	case InnerAuto:
		return "auto"
	case InnerBLAS:
		return "blas"
	case InnerNative:
		return "native"
	}
	return fmt.Sprintf("InnerPath(%d)", int(p))
}

// MapPath chooses how the Gram engine evaluates exponential maps.
type MapPath int

const (
	// MapAuto uses the choice of package paths (Paths.MapNative).
	MapAuto MapPath = iota
	// MapGo evaluates math.Exp element by element.
	MapGo
	// MapNative uses the vectorised exponential of package native.
	MapNative
)

func (p MapPath) String() string {
	switch p {
	case MapAuto:
		return "auto"
	case MapGo:
		return "go"
	case MapNative:
		return "native"
	}
	return fmt.Sprintf("MapPath(%d)", int(p))
}

// GramOptions tunes the Gram engine. The zero value uses the paths in
// force (paths.Current: written rules unless a program set others).
type GramOptions struct {
	Inner InnerPath
	Map   MapPath
	// Products chooses the arithmetic of the inner products (float64 by
	// default).
	Products ProductPrecision
	// UpperOnly leaves the strict lower triangle of the storage zero
	// instead of mirroring the upper one into it: a valid mat.SymDense
	// (which reads the upper triangle only), for consumers that never read
	// the raw lower triangle (eig.Dense); it saves a pass over n² entries.
	UpperOnly bool
	// Workers is the number of goroutines of the element map, mirror and
	// native tiles (OpenBLAS uses its own threads); 0 means GOMAXPROCS.
	Workers int
	// Baseline runs the native kernels' SSE2 build even where AVX2 is
	// present (tests check that both builds agree).
	Baseline bool
	// Context, when not nil, is checked before every panel (at most
	// 512 rows of the Gram matrix, or one 256×2048 chunk of GramTiles32,
	// or one panel of a KernelRows product): when it has ended the build
	// stops and returns status.Cancelled(context.Cause(ctx)).
	Context context.Context
	// Progress, when not nil, is called after every panel with the
	// entries computed so far and the total (both in units of one kernel
	// entry), from the goroutine that called the build.
	Progress func(done, total int64)
	// SingleBlocks has float32 tiles (GramTiles32) multiply blocks in
	// float32 arithmetic (SymTiles32.SingleBlocks) whatever the products'
	// precision: for callers whose tolerance covers BlockRel (see
	// eig.Plan.SingleBlocks).
	SingleBlocks bool
	// Grid chooses whether distance kernels with float64 products run on
	// exact float32 products when the data lie on an integer grid (see
	// grid.go): GridAuto by package paths's rule (Paths.Grid).
	Grid GridPath
	// Int8 chooses whether KernelRows on an 8-bit grid (every column
	// spanning at most 255 steps) computes its blocks by exact integer
	// products (native.Int8Map, AVX-512 VNNI) instead of float32 ones:
	// GridAuto where the processor has VNNI and package paths says so
	// (Paths.Int8); GridOn also without VNNI (a portable loop: for tests).
	Int8 GridPath
}

// GridPath chooses whether the Gram engine uses exact float32 inner
// products for data on an integer grid (8-bit images, counts; grid.go
// states the condition and the proof of exactness).
type GridPath int

const (
	// GridAuto uses them where package paths says so (Paths.Grid).
	GridAuto GridPath = iota
	// GridOff always computes float64 products.
	GridOff
	// GridOn uses them whenever the data qualify.
	GridOn
)

func (p GridPath) String() string {
	switch p {
	case GridAuto:
		return "auto"
	case GridOff:
		return "off"
	case GridOn:
		return "on"
	}
	return fmt.Sprintf("GridPath(%d)", int(p))
}

// gridWanted reports whether o lets a distance kernel with float64
// products try the integer grid.
func (o GramOptions) gridWanted() bool {
	return o.Products == ProductsFloat64 && o.Grid != GridOff
}

// gridFaster reports whether o takes the exact float32 products for data
// found on a grid: always for GridOn, else by the rule of package paths
// (Paths.Grid).
func (o GramOptions) gridFaster() bool {
	return o.Grid == GridOn || paths.Current().Grid
}

// int8Wanted reports whether o lets KernelRows take the integer path of
// an 8-bit grid: always for Int8 = GridOn, never for GridOff, else where
// the processor has VNNI and package paths says so (Paths.Int8).
func (o GramOptions) int8Wanted() bool {
	switch o.Int8 {
	case GridOn:
		return true
	case GridOff:
		return false
	}
	return native.HasInt8() && paths.Current().Int8
}

// cancelled returns the error of an ended context, nil while it runs.
func (o GramOptions) cancelled(where string) error {
	if o.Context == nil || o.Context.Err() == nil {
		return nil
	}
	return status.Cancelled(context.Cause(o.Context), where)
}

// build is the native build o asks for. The engine runs element maps and
// conversions, which have no AVX-512 forms: native.AVX2.
func (o GramOptions) build() native.Build {
	if o.Baseline {
		return native.Baseline()
	}
	return native.AVX2()
}

// ProductPrecision is the arithmetic of the Gram engine's inner products.
type ProductPrecision int

const (
	// ProductsFloat64 multiplies in float64 (dgemm): kernel entries are
	// correct to a few ulp of float64.
	ProductsFloat64 ProductPrecision = iota
	// ProductsFloat32 rounds the (shifted) data to float32 and multiplies
	// by OpenBLAS sgemm, at about twice dgemm's rate; the norms and the
	// map stay in float64. Each entry's error is bounded by
	// KernelRows.EntryBound (for the Gaussian kernel, relative to the
	// entry; the Laplace kernel's square root makes it weaker near zero
	// distance).
	ProductsFloat32
)

func (p ProductPrecision) String() string {
	switch p {
	case ProductsFloat64:
		return "float64"
	case ProductsFloat32:
		return "float32"
	}
	return fmt.Sprintf("ProductPrecision(%d)", int(p))
}

// resolve returns the concrete paths of o on this machine.
func (o GramOptions) resolve() (InnerPath, MapPath) {
	inner, mp := o.Inner, o.Map
	if inner == InnerAuto || mp == MapAuto {
		c := paths.Current()
		if inner == InnerAuto {
			inner = InnerBLAS
			if c.InnerNative {
				inner = InnerNative
			}
		}
		if mp == MapAuto {
			mp = MapGo
			if c.MapNative {
				mp = MapNative
			}
		}
	}
	if inner == InnerNative && !native.HasDotKernel() {
		inner = InnerBLAS
	}
	return inner, mp
}

// mapRows applies em in place to rows [r0, r1) and columns [c0, c1) of
// the row-major block buf (stride ld), whose row i has squared norm ni[i]
// and column j nj[j] (indices relative to the block). Safe for concurrent
// use on disjoint rows.
func mapRows(buf []float64, ld, r0, r1, c0, c1 int, ni, nj []float64, em ElementMap, path MapPath, b native.Build) {
	if em.Kind == MapIdentity || r1 <= r0 || c1 <= c0 {
		return
	}
	if em.distance() && path == MapNative {
		b.RBFMap(r1-r0, c1-c0, buf[r0*ld+c0:], ld, ni[r0:r1], nj[c0:c1], em.C, em.Kind == MapExpDist)
		return
	}
	for i := r0; i < r1; i++ {
		row := buf[i*ld+c0 : i*ld+c1]
		n := ni[i]
		for j, g := range row {
			row[j] = em.apply(g, n, nj[c0+j])
		}
	}
}

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
	// grid, when not nil, is the integer grid the rows lie on (grid.go):
	// x32 holds the shifted integers, norms their exact squared norms,
	// x.Data is nil and em.C is scaled by the grid step (squared for the
	// Gaussian) so that the map reads distances in grid units.
	grid *grid
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
		s.x32 = make([]float32, n*d)
		s.build.Narrow(n, d, s.x.Data, s.x.Stride, s.x32, d)
		par.For(o.Workers, n, nil, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				v := 0.0
				for _, e := range s.x32[i*d : (i+1)*d] {
					v += float64(e) * float64(e)
				}
				s.norms[i] = v
			}
		})
	}
	return s
}

// products32 sets out (stride ld) to the float32 inner products of rows
// [i0, i1) of a with rows [j0, j1) of b (sgemm into a float32 scratch of
// a, then widened).
func products32(a, b *gramSource, out []float64, ld, i0, i1, j0, j1 int) {
	m, n := i1-i0, j1-j0
	buf := sgemm32(a, b, i0, i1, j0, j1)
	par.For(a.workers, m, nil, func(lo, hi int) {
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
	par.For(s.workers, m, nil, func(lo, hi int) {
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

// gramPanelRows is the height of the row panels of the float64 Gram
// (dsyrk on the diagonal block, so nothing is computed twice): at
// n = 7000, d = 784 panels of 512 rows were faster than 256 and as fast as
// 1024 on the 2-core development machine.
const gramPanelRows = 512

// gramChunkRows × gramChunkCols is the size of the chunks of the tiled
// Gram builds (gramBand): whole tiles, as many as fit. Larger chunks give
// OpenBLAS larger dgemm calls: with 256-row tiles, 256 × 2048 products ran
// at 58 GFLOP/s here (n = 60 000, d = 784), 512 × 2048 at 72–81; a
// float32 Gram of Fashion-MNIST took 6.51–6.64 s at n = 20 000 with
// 512 × 2048 chunks against 5.58–5.86 s with 1024 × 4096 (2048 × 4096 and
// 1024 × 8192: 5.3–5.7 s, within the noise), and 1.04–1.08 against
// 0.92–0.98 s at n = 7000 (three alternated runs each). Two chunks are in
// flight: 64 MB. (Variables only so that tests can make chunks small.)
var gramChunkRows, gramChunkCols = 1024, 4096

// GramMap returns the n×n matrix em(⟨x_i, x_j⟩, ‖x_i‖², ‖x_j‖²) of the
// rows of the n×d matrix x, with both triangles stored: the kernel matrix
// of the kernel whose element map em is (package kernel builds em from a
// kernel and calls this). x is not modified.
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
				par.For(s.workers, i1-i0, nil, func(lo, hi int) {
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

// mirrorPanel copies the upper-triangle entries of rows [i0, i1) into the
// lower triangle (entry (i, j), j > i, into (j, i)), in parallel blocks of
// 64 columns: each block reads a 64-wide strip of the panel and writes
// contiguous row segments.
func mirrorPanel(data []float64, ld, i0, i1, n int) {
	const w = 64
	blocks := (n - i0 + w - 1) / w
	par.For(0, blocks, nil, func(lo, hi int) {
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
		par.For(a.workers, m, nil, func(lo, hi int) {
			a.build.RBFMap32(hi-lo, n, buf[lo*n:], n, out[lo*ld:], ld, a.norms[i0+lo:i0+hi], normsJ[j0:j1],
				a.em.C, a.em.Kind == MapExpDist)
		})
		return
	}
	crossProducts(a, b, out, ld, i0, i1, j0, j1)
	a.mapCross(out, ld, i0, i1, normsJ, j0, j1)
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
