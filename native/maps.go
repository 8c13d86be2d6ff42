package native

/*
#cgo CFLAGS: -O3
int kd_has_avx2(void);
void kd_rbf_rows_avx2(int m, int n, double *out, int ldo, const double *ni, const double *nj, double c, int laplace);
void kd_rbf_rows_base(int m, int n, double *out, int ldo, const double *ni, const double *nj, double c, int laplace);
void kd_narrow_avx2(int m, int n, const double *src, int lds, float *dst, int ldd);
void kd_narrow_base(int m, int n, const double *src, int lds, float *dst, int ldd);
void kd_widen_avx2(int m, int n, const float *src, int lds, double *dst, int ldd);
void kd_widen_base(int m, int n, const float *src, int lds, double *dst, int ldd);
void kd_tsymv_avx2(int t, int tiles, const float *a, const double *xi, const double *xj, double *yi, double *yj, int diag);
void kd_tsymv_base(int t, int tiles, const float *a, const double *xi, const double *xj, double *yi, double *yj, int diag);
void kd_tsymv64_avx2(int t, int tiles, const double *a, const double *xi, const double *xj, double *yi, double *yj, int diag);
void kd_tsymv64_base(int t, int tiles, const double *a, const double *xi, const double *xj, double *yi, double *yj, int diag);
void kd_tsymm(int avx2, int f32, int m, int t, int tiles, int last, const void *a, long step, int lda, int bp, const double *xi, const double *xj, double *yi, double *yj, int diag);
void kd_tsymmt(int avx2, int f32, int m, int t, int tiles, int last, const void *a, long step, int lda, int nb, const double *xi, const double *xj, long ldx, double *yi, double *yj, long ldy, int diag);
void kd_tsymms_avx2(int m, int t, int tiles, int last, const float *a, long step, int lda, int bp, const float *xi, const float *xj, double *yi, double *yj, float *ys, int diag);
void kd_tsymm_avx512(int f32, int m, int t, int tiles, int last, const void *a, long step, int lda, int bp, const double *xi, const double *xj, double *yi, double *yj, int diag);
void kd_tsymms_avx512(int m, int t, int tiles, int last, const float *a, long step, int lda, int bp, const float *xi, const float *xj, double *yi, double *yj, float *ys, int diag);
int kd_has_avx512vl(void);
void kd_tsymv_avx512(int t, int tiles, const float *a, const double *xi, const double *xj, double *yi, double *yj, int diag);
void kd_tsymms_base(int m, int t, int tiles, int last, const float *a, long step, int lda, int bp, const float *xi, const float *xj, double *yi, double *yj, float *ys, int diag);
void kd_rbf_rows32_avx2(int m, int n, const float *src, int lds, double *out, int ldo, const double *ni, const double *nj, double c, int laplace);
void kd_rbf_rows32_base(int m, int n, const float *src, int lds, double *out, int ldo, const double *ni, const double *nj, double c, int laplace);
void kd_rbf_rows3232_avx2(int m, int n, const float *src, int lds, float *out, int ldo, const double *ni, const double *nj, double c, int laplace);
void kd_rbf_rows3232_base(int m, int n, const float *src, int lds, float *out, int ldo, const double *ni, const double *nj, double c, int laplace);
void kd_mt32_dot_avx2(int m, int n, const float *a, long lda, int bp, const double *xt, long ldx, double *yt, long ldy);
void kd_mt32_dot_base(int m, int n, const float *a, long lda, int bp, const double *xt, long ldx, double *yt, long ldy);
void kd_mt32_axpy_avx2(int m, int n, const float *a, long lda, int bp, const double *xt, long ldx, double *yt, long ldy);
void kd_mt32_axpy_base(int m, int n, const float *a, long lda, int bp, const double *xt, long ldx, double *yt, long ldy);
void kd_mt32_rows_avx512(int m, int n, const float *a, long lda, int bp, const double *xt, long ldx, double *yt, long ldy);
*/
import "C"

import (
	"fmt"
	"math"
	"strings"
	"unsafe"
)

// Build selects a build of the portable kernels of this file: Best()
// runs AVX2+FMA where the processor has them and SSE2 otherwise, and the
// AVX-512 forms of the block kernels (wide.c) by the rule Best states;
// Baseline() always runs
// SSE2 and AVX2() the AVX2 forms, so tests can check that all agree. The
// package-level functions use Best(). A Build is a value: nothing global
// changes when one is chosen.
type Build struct {
	avx2 bool
	// symm512 and single512: the AVX-512 forms of TileRowSymm64/32
	// and of TileRowSymmS32 (bp = 8 or a multiple of 16; other block
	// sizes run its AVX2 form).
	symm512, single512 bool
	// symv512: the AVX-512 form of TileRowSymv (tiles of a multiple of 8).
	symv512 bool
}

// detected is read once: the processor does not change.
var detected = C.kd_has_avx2() != 0

// Best is the default build on this processor: AVX2 (or SSE2), with the
// AVX-512 forms of the two block kernels where the processor has them and
// the AVX2 form of the one-vector kernel — the rule package paths states
// with its measurement (paths.Rules: WideSymm, WideSingle, WideSymv). No
// timing is involved; package paths's value can choose other forms
// (WithWide).
func Best() Build { return AVX2().WithWide(true, true, false) }

// Baseline is the SSE2 build, which every x86-64 processor runs.
func Baseline() Build { return Build{} }

// AVX2 is the AVX2 build without AVX-512 kernels (SSE2 where the processor
// lacks AVX2).
func AVX2() Build { return Build{avx2: detected} }

// Name is the instruction set of the build: "sse2" or "avx2+fma", then
// the kernels it runs in AVX-512, if any (e.g. "avx2+fma, avx-512:
// float64-arithmetic blocks, float32-arithmetic blocks, one vector").
func (b Build) Name() string {
	name := "sse2"
	if b.avx2 {
		name = "avx2+fma"
	}
	var wide []string
	for _, k := range []struct {
		on   bool
		what string
	}{{b.symm512, "float64-arithmetic blocks"}, {b.single512, "float32-arithmetic blocks"}, {b.symv512, "one vector"}} {
		if k.on {
			wide = append(wide, k.what)
		}
	}
	if len(wide) > 0 {
		name += ", avx-512: " + strings.Join(wide, ", ")
	}
	return name
}

// ISA names the instruction set the package-level kernels run on.
func ISA() string { return Best().Name() }

func checkRows(what string, m, n, ld, length int) {
	if m < 0 || n < 0 || ld < n || max(m, n, ld) > math.MaxInt32 {
		panic(fmt.Sprintf("native: %s: bad dimensions m=%d n=%d ld=%d", what, m, n, ld))
	}
	if m > 0 && n > 0 && length < (m-1)*ld+n {
		panic(fmt.Sprintf("native: %s: slice too short", what))
	}
}

// RBFMap maps, in place, the inner products g = out[i·ldo + j] (i < m,
// j < n) to exp(c·δ), δ = max(ni[i] + nj[j] − 2g, 0), or δ = √max(…) when
// laplace is true, like RBFTile, on any processor (AVX2 where present, SSE2
// otherwise). Safe for concurrent use on disjoint rows.
func RBFMap(m, n int, out []float64, ldo int, ni, nj []float64, c float64, laplace bool) {
	Best().RBFMap(m, n, out, ldo, ni, nj, c, laplace)
}

// RBFMap is the package-level RBFMap on build b.
func (b Build) RBFMap(m, n int, out []float64, ldo int, ni, nj []float64, c float64, laplace bool) {
	checkRows("RBFMap", m, n, ldo, len(out))
	if len(ni) < m || len(nj) < n || !(c <= 0) {
		panic(fmt.Sprintf("native: RBFMap: bad arguments len(ni)=%d len(nj)=%d c=%g", len(ni), len(nj), c))
	}
	if m == 0 || n == 0 {
		return
	}
	lap := C.int(0)
	if laplace {
		lap = 1
	}
	o := (*C.double)(unsafe.Pointer(&out[0]))
	pi, pj := (*C.double)(unsafe.Pointer(&ni[0])), (*C.double)(unsafe.Pointer(&nj[0]))
	if b.avx2 {
		C.kd_rbf_rows_avx2(C.int(m), C.int(n), o, C.int(ldo), pi, pj, C.double(c), lap)
		return
	}
	C.kd_rbf_rows_base(C.int(m), C.int(n), o, C.int(ldo), pi, pj, C.double(c), lap)
}

// RBFMap32 is RBFMap reading the inner products from the float32 block
// src (stride lds) and writing the map to out (stride ldo): widening and
// map in one pass, the same values as Widen then RBFMap.
func (b Build) RBFMap32(m, n int, src []float32, lds int, out []float64, ldo int, ni, nj []float64, c float64, laplace bool) {
	checkRows("RBFMap32", m, n, ldo, len(out))
	if !checkRBF32("RBFMap32", m, n, src, lds, ni, nj, c) {
		return
	}
	lap := cFlag(laplace)
	ps := (*C.float)(unsafe.Pointer(&src[0]))
	o := (*C.double)(unsafe.Pointer(&out[0]))
	pi, pj := (*C.double)(unsafe.Pointer(&ni[0])), (*C.double)(unsafe.Pointer(&nj[0]))
	if b.avx2 {
		C.kd_rbf_rows32_avx2(C.int(m), C.int(n), ps, C.int(lds), o, C.int(ldo), pi, pj, C.double(c), lap)
		return
	}
	C.kd_rbf_rows32_base(C.int(m), C.int(n), ps, C.int(lds), o, C.int(ldo), pi, pj, C.double(c), lap)
}

// RBFMap32To32 is RBFMap32 writing the map rounded to float32 into out
// (stride ldo): the values of RBFMap32 then Narrow, in one pass.
func (b Build) RBFMap32To32(m, n int, src []float32, lds int, out []float32, ldo int, ni, nj []float64, c float64, laplace bool) {
	checkRows("RBFMap32To32", m, n, ldo, len(out))
	if !checkRBF32("RBFMap32To32", m, n, src, lds, ni, nj, c) {
		return
	}
	lap := cFlag(laplace)
	ps := (*C.float)(unsafe.Pointer(&src[0]))
	o := (*C.float)(unsafe.Pointer(&out[0]))
	pi, pj := (*C.double)(unsafe.Pointer(&ni[0])), (*C.double)(unsafe.Pointer(&nj[0]))
	if b.avx2 {
		C.kd_rbf_rows3232_avx2(C.int(m), C.int(n), ps, C.int(lds), o, C.int(ldo), pi, pj, C.double(c), lap)
		return
	}
	C.kd_rbf_rows3232_base(C.int(m), C.int(n), ps, C.int(lds), o, C.int(ldo), pi, pj, C.double(c), lap)
}

// checkRBF32 panics on arguments of the float32-source maps that do not
// fit (norms, scale, source), and reports whether there is work (m, n > 0).
func checkRBF32(name string, m, n int, src []float32, lds int, ni, nj []float64, c float64) bool {
	if len(ni) < m || len(nj) < n || !(c <= 0) || lds < n || (m > 0 && n > 0 && len(src) < (m-1)*lds+n) {
		panic(fmt.Sprintf("native: %s: bad arguments len(src)=%d lds=%d len(ni)=%d len(nj)=%d c=%g", name, len(src), lds, len(ni), len(nj), c))
	}
	return m > 0 && n > 0
}

// cFlag is a Go bool as a C int flag.
func cFlag(v bool) C.int {
	if v {
		return 1
	}
	return 0
}

// Narrow sets dst[i·ldd + j] = float32(src[i·lds + j]) for i < m, j < n
// (rounded to nearest).
func Narrow(m, n int, src []float64, lds int, dst []float32, ldd int) {
	Best().Narrow(m, n, src, lds, dst, ldd)
}

// Narrow is the package-level Narrow on build b.
func (b Build) Narrow(m, n int, src []float64, lds int, dst []float32, ldd int) {
	checkRows("Narrow src", m, n, lds, len(src))
	checkRows("Narrow dst", m, n, ldd, len(dst))
	if m == 0 || n == 0 {
		return
	}
	s, d := (*C.double)(unsafe.Pointer(&src[0])), (*C.float)(unsafe.Pointer(&dst[0]))
	if b.avx2 {
		C.kd_narrow_avx2(C.int(m), C.int(n), s, C.int(lds), d, C.int(ldd))
		return
	}
	C.kd_narrow_base(C.int(m), C.int(n), s, C.int(lds), d, C.int(ldd))
}

// Widen sets dst[i·ldd + j] = float64(src[i·lds + j]) for i < m, j < n.
func Widen(m, n int, src []float32, lds int, dst []float64, ldd int) {
	Best().Widen(m, n, src, lds, dst, ldd)
}

// Widen is the package-level Widen on build b.
func (b Build) Widen(m, n int, src []float32, lds int, dst []float64, ldd int) {
	checkRows("Widen src", m, n, lds, len(src))
	checkRows("Widen dst", m, n, ldd, len(dst))
	if m == 0 || n == 0 {
		return
	}
	s, d := (*C.float)(unsafe.Pointer(&src[0])), (*C.double)(unsafe.Pointer(&dst[0]))
	if b.avx2 {
		C.kd_widen_avx2(C.int(m), C.int(n), s, C.int(lds), d, C.int(ldd))
		return
	}
	C.kd_widen_base(C.int(m), C.int(n), s, C.int(lds), d, C.int(ldd))
}

// TileRowSymv adds a row of stored tiles' contribution to y = A·x for a
// symmetric A kept as float32 t×t tiles of its upper triangle: for each of
// the tiles (stored one after another in a, row-major inside each),
// y_I += A_IJ·x_J and, except for a first tile on the diagonal (diag),
// y_J += A_IJᵀ·x_I, all in float64. xi, yi are the row block of x and y
// (t entries); xj, yj the column blocks of the row's tiles, tile j's at
// j·t. t must be a positive multiple of 4. One call serves the whole row
// (see kd_tsymm in maps.c for why). Safe for concurrent use when the y
// blocks are disjoint.
func TileRowSymv(t, tiles int, a []float32, xi, xj, yi, yj []float64, diag bool) {
	Best().TileRowSymv(t, tiles, a, xi, xj, yi, yj, diag)
}

// TileRowSymv is the package-level TileRowSymv on build b.
func (b Build) TileRowSymv(t, tiles int, a []float32, xi, xj, yi, yj []float64, diag bool) {
	checkSymv("TileRowSymv", t, tiles, len(a), xi, xj, yi, yj)
	v := symmPointers(xi, xj, yi, yj, diag)
	pa := (*C.float)(unsafe.Pointer(&a[0]))
	if b.symv512 && t%8 == 0 {
		C.kd_tsymv_avx512(C.int(t), C.int(tiles), pa, v.xi, v.xj, v.yi, v.yj, v.diag)
		return
	}
	if b.avx2 {
		C.kd_tsymv_avx2(C.int(t), C.int(tiles), pa, v.xi, v.xj, v.yi, v.yj, v.diag)
		return
	}
	C.kd_tsymv_base(C.int(t), C.int(tiles), pa, v.xi, v.xj, v.yi, v.yj, v.diag)
}

// TileRowSymv64 is TileRowSymv for float64 tiles.
func TileRowSymv64(t, tiles int, a []float64, xi, xj, yi, yj []float64, diag bool) {
	Best().TileRowSymv64(t, tiles, a, xi, xj, yi, yj, diag)
}

// TileRowSymv64 is the package-level TileRowSymv64 on build b.
func (b Build) TileRowSymv64(t, tiles int, a []float64, xi, xj, yi, yj []float64, diag bool) {
	checkSymv("TileRowSymv64", t, tiles, len(a), xi, xj, yi, yj)
	v := symmPointers(xi, xj, yi, yj, diag)
	pa := (*C.double)(unsafe.Pointer(&a[0]))
	if b.avx2 {
		C.kd_tsymv64_avx2(C.int(t), C.int(tiles), pa, v.xi, v.xj, v.yi, v.yj, v.diag)
		return
	}
	C.kd_tsymv64_base(C.int(t), C.int(tiles), pa, v.xi, v.xj, v.yi, v.yj, v.diag)
}

func checkSymv(name string, t, tiles, alen int, xi, xj, yi, yj []float64) {
	if t <= 0 || t%4 != 0 || t > 1<<14 || tiles <= 0 || tiles > math.MaxInt32/t || alen < tiles*t*t ||
		len(xi) < t || len(yi) < t || len(xj) < tiles*t || len(yj) < tiles*t {
		panic(fmt.Sprintf("native: %s: bad arguments t=%d tiles=%d", name, t, tiles))
	}
}

// TileRow describes a row of tiles of a symmetric matrix's upper triangle
// for TileRowSymm64 and TileRowSymm32: Tiles tiles side by side, each M
// rows of stride Lda; tile j starts j·Step entries into the storage and is
// T columns wide, except the last, Last wide; its columns meet X_J and Y_J
// at row j·T. With Diag the first tile is on the diagonal (M = its width,
// X_I and the start of X_J the same block, Y_I and Y_J too) and only its
// upper triangle is read. Packed tiles have Step = T·T and Lda = T; a
// full row-major matrix has Step = T and Lda its stride.
type TileRow struct {
	M, T, Tiles, Last, Step, Lda int
	Diag                         bool
}

// cols is the number of columns the row covers.
func (r TileRow) cols() int { return (r.Tiles-1)*r.T + r.Last }

// TileRowSymm64 adds a row of tiles' contribution to Y = A·X for a
// symmetric A and a block X of bp columns (bp a multiple of 4; X and Y
// row-major with stride bp), in float64: each tile gives
// Y_I += A_IJ·X_J and Y_J += A_IJᵀ·X_I (the diagonal tile its upper
// triangle both ways). xi, yi hold the row block (M rows), xj, yj the
// column blocks (r.cols() rows). Every entry is loaded once per call. Safe
// for concurrent use on disjoint outputs.
func TileRowSymm64(r TileRow, a []float64, bp int, xi, xj, yi, yj []float64) {
	Best().TileRowSymm64(r, a, bp, xi, xj, yi, yj)
}

// TileRowSymm64 is the package-level TileRowSymm64 on build b.
func (b Build) TileRowSymm64(r TileRow, a []float64, bp int, xi, xj, yi, yj []float64) {
	tileRowSymm(b, r, a, bp, xi, xj, yi, yj)
}

// TileRowSymm32 is TileRowSymm64 for float32 tiles (float64 arithmetic).
func TileRowSymm32(r TileRow, a []float32, bp int, xi, xj, yi, yj []float64) {
	Best().TileRowSymm32(r, a, bp, xi, xj, yi, yj)
}

// TileRowSymm32 is the package-level TileRowSymm32 on build b.
func (b Build) TileRowSymm32(r TileRow, a []float32, bp int, xi, xj, yi, yj []float64) {
	tileRowSymm(b, r, a, bp, xi, xj, yi, yj)
}

// tileRowSymm runs kd_tsymm for tiles of either element type on build b.
func tileRowSymm[T float32 | float64](b Build, r TileRow, a []T, bp int, xi, xj, yi, yj []float64) {
	if !checkSymm(r, len(a), bp, xi, xj, yi, yj) {
		return
	}
	avx2, f32 := kernelFlags(b, a)
	v := symmPointers(xi, xj, yi, yj, r.Diag)
	if b.symm512 {
		C.kd_tsymm_avx512(f32, C.int(r.M), C.int(r.T), C.int(r.Tiles), C.int(r.Last), unsafe.Pointer(&a[0]), C.long(r.Step), C.int(r.Lda),
			C.int(bp), v.xi, v.xj, v.yi, v.yj, v.diag)
		return
	}
	C.kd_tsymm(avx2, f32, C.int(r.M), C.int(r.T), C.int(r.Tiles), C.int(r.Last), unsafe.Pointer(&a[0]), C.long(r.Step), C.int(r.Lda),
		C.int(bp), v.xi, v.xj, v.yi, v.yj, v.diag)
}

// SymmSingleChunk is the longest float32 partial sum of TileRowSymmS32:
// each entry of Y is within (γ_SymmSingleChunk + 2⁻²⁴)·(|A|·|X|) of the
// product of the stored tiles with X (γ_k = k·2⁻²⁴/(1 − k·2⁻²⁴)), plus the
// float64 sums.
const SymmSingleChunk = 64

// TileRowSymmS32 is TileRowSymm32 in float32 arithmetic: X in float32
// (row-major, stride bp, a multiple of 8), Y in float64, ys a float32
// scratch of at least SymmSingleScratch(r.T, bp) entries (overwritten). It
// takes half the vector instructions per entry of TileRowSymm32 and
// converts no entry of the tiles; its rounding is kept to partial sums of
// at most SymmSingleChunk products, added into Y in float64. Safe for
// concurrent use on disjoint outputs and scratches.
func TileRowSymmS32(r TileRow, a []float32, bp int, xi, xj []float32, yi, yj []float64, ys []float32) {
	Best().TileRowSymmS32(r, a, bp, xi, xj, yi, yj, ys)
}

// SymmSingleScratch is the length of TileRowSymmS32's scratch for tiles of
// side t and bp columns: 2·(t + 1)·bp (the column sums and, for bp = 8, the
// tile's X_J with its columns paired).
func SymmSingleScratch(t, bp int) int { return 2 * (t + 1) * bp }

// TileRowSymmS32 is the package-level TileRowSymmS32 on build b.
func (b Build) TileRowSymmS32(r TileRow, a []float32, bp int, xi, xj []float32, yi, yj []float64, ys []float32) {
	cols := r.cols()
	if !validTileRow(r, len(a)) || bp <= 0 || bp%8 != 0 || bp > math.MaxInt32 || cols > math.MaxInt32/bp ||
		len(xi) < r.M*bp || len(yi) < r.M*bp || len(xj) < cols*bp || len(yj) < cols*bp || len(ys) < SymmSingleScratch(r.T, bp) {
		panic(fmt.Sprintf("native: TileRowSymmS32: bad arguments %+v bp=%d", r, bp))
	}
	if r.M == 0 {
		return
	}
	diag := C.int(0)
	if r.Diag {
		diag = 1
	}
	pa, pys := (*C.float)(unsafe.Pointer(&a[0])), (*C.float)(unsafe.Pointer(&ys[0]))
	pxi, pxj := (*C.float)(unsafe.Pointer(&xi[0])), (*C.float)(unsafe.Pointer(&xj[0]))
	pyi, pyj := (*C.double)(unsafe.Pointer(&yi[0])), (*C.double)(unsafe.Pointer(&yj[0]))
	if b.single512 && (bp == 8 || bp%16 == 0) {
		C.kd_tsymms_avx512(C.int(r.M), C.int(r.T), C.int(r.Tiles), C.int(r.Last), pa, C.long(r.Step), C.int(r.Lda),
			C.int(bp), pxi, pxj, pyi, pyj, pys, diag)
		return
	}
	if b.avx2 {
		C.kd_tsymms_avx2(C.int(r.M), C.int(r.T), C.int(r.Tiles), C.int(r.Last), pa, C.long(r.Step), C.int(r.Lda),
			C.int(bp), pxi, pxj, pyi, pyj, pys, diag)
		return
	}
	C.kd_tsymms_base(C.int(r.M), C.int(r.T), C.int(r.Tiles), C.int(r.Last), pa, C.long(r.Step), C.int(r.Lda),
		C.int(bp), pxi, pxj, pyi, pyj, pys, diag)
}

// TileRowSymmT64 is TileRowSymm64 for a small block of nb vectors held in
// transposed layout: vector g of the row block is xi[g·ldx:][:r.M], of the
// column blocks xj[g·ldx:][:r.cols()], and Y alike with ldy. It runs along
// the tile rows (four columns of the tile per load, two vectors at a
// time), so nb = 2 or 3 costs what it needs, where TileRowSymm64's
// row-major block pads them to four columns and multiplies a column of the
// tile at a time. Any nb ≥ 1 is correct. Safe for concurrent use on
// disjoint outputs.
func TileRowSymmT64(r TileRow, a []float64, nb int, xi, xj []float64, ldx int, yi, yj []float64, ldy int) {
	Best().TileRowSymmT64(r, a, nb, xi, xj, ldx, yi, yj, ldy)
}

// TileRowSymmT64 is the package-level TileRowSymmT64 on build b.
func (b Build) TileRowSymmT64(r TileRow, a []float64, nb int, xi, xj []float64, ldx int, yi, yj []float64, ldy int) {
	tileRowSymmT(b, r, a, nb, xi, xj, ldx, yi, yj, ldy)
}

// TileRowSymmT32 is TileRowSymmT64 for float32 tiles (float64 arithmetic).
func TileRowSymmT32(r TileRow, a []float32, nb int, xi, xj []float64, ldx int, yi, yj []float64, ldy int) {
	Best().TileRowSymmT32(r, a, nb, xi, xj, ldx, yi, yj, ldy)
}

// TileRowSymmT32 is the package-level TileRowSymmT32 on build b.
func (b Build) TileRowSymmT32(r TileRow, a []float32, nb int, xi, xj []float64, ldx int, yi, yj []float64, ldy int) {
	tileRowSymmT(b, r, a, nb, xi, xj, ldx, yi, yj, ldy)
}

// kernelFlags are the build and element-type flags of kd_tsymm and
// kd_tsymmt for tiles a on build b.
func kernelFlags[T float32 | float64](b Build, a []T) (avx2, f32 C.int) {
	if b.avx2 {
		avx2 = 1
	}
	if unsafe.Sizeof(a[0]) == 4 {
		f32 = 1
	}
	return avx2, f32
}

// tileRowSymmT runs kd_tsymmt for tiles of either element type on build b.
func tileRowSymmT[T float32 | float64](b Build, r TileRow, a []T, nb int, xi, xj []float64, ldx int, yi, yj []float64, ldy int) {
	if !checkSymmT(r, len(a), nb, xi, xj, ldx, yi, yj, ldy) {
		return
	}
	avx2, f32 := kernelFlags(b, a)
	v := symmPointers(xi, xj, yi, yj, r.Diag)
	C.kd_tsymmt(avx2, f32, C.int(r.M), C.int(r.T), C.int(r.Tiles), C.int(r.Last), unsafe.Pointer(&a[0]), C.long(r.Step), C.int(r.Lda),
		C.int(nb), v.xi, v.xj, C.long(ldx), v.yi, v.yj, C.long(ldy), v.diag)
}

// checkSymmT panics unless the arguments of TileRowSymmT describe slices
// long enough; it reports whether there is anything to do.
func checkSymmT(r TileRow, alen, nb int, xi, xj []float64, ldx int, yi, yj []float64, ldy int) bool {
	cols := r.cols()
	if !validTileRow(r, alen) || nb <= 0 || nb > math.MaxInt32 || ldx < max(r.M, cols) || ldy < max(r.M, cols) ||
		len(xi) < (nb-1)*ldx+r.M || len(yi) < (nb-1)*ldy+r.M || len(xj) < (nb-1)*ldx+cols || len(yj) < (nb-1)*ldy+cols {
		panic(fmt.Sprintf("native: TileRowSymmT: bad arguments %+v nb=%d ldx=%d ldy=%d", r, nb, ldx, ldy))
	}
	return r.M > 0
}

// checkSymm panics unless the arguments of TileRowSymm describe slices
// long enough; it reports whether there is anything to do.
func checkSymm(r TileRow, alen, bp int, xi, xj, yi, yj []float64) bool {
	if !validTileRow(r, alen) || bp <= 0 || bp%4 != 0 || bp > math.MaxInt32 || r.cols() > math.MaxInt32/bp ||
		len(xi) < r.M*bp || len(yi) < r.M*bp || len(xj) < r.cols()*bp || len(yj) < r.cols()*bp {
		panic(fmt.Sprintf("native: TileRowSymm: bad arguments %+v bp=%d", r, bp))
	}
	return r.M > 0
}

// validTileRow reports whether r describes a row of tiles the kernels can
// take, within alen entries of storage: positive sizes within int32, a
// last tile no wider than the others, rows no shorter than a tile, and a
// diagonal first tile square.
func validTileRow(r TileRow, alen int) bool {
	first := r.T
	if r.Tiles == 1 {
		first = r.Last
	}
	return r.M >= 0 && r.T > 0 && r.Tiles > 0 && r.Last > 0 && r.Last <= r.T && r.Step >= 0 && r.Lda >= first &&
		max(r.M, r.T, r.Lda, r.Tiles) <= math.MaxInt32 && r.cols() <= math.MaxInt32 &&
		(r.M == 0 || (alen >= (r.Tiles-1)*r.Step+(r.M-1)*r.Lda+r.Last && (r.Tiles == 1 || alen >= (r.Tiles-2)*r.Step+(r.M-1)*r.Lda+r.T))) &&
		(!r.Diag || r.M == first)
}

// symmArgs are the block arguments of the tile product kernels.
type symmArgs struct {
	xi, xj, yi, yj *C.double
	diag           C.int
}

func symmPointers(xi, xj, yi, yj []float64, diag bool) symmArgs {
	v := symmArgs{
		xi: (*C.double)(unsafe.Pointer(&xi[0])), xj: (*C.double)(unsafe.Pointer(&xj[0])),
		yi: (*C.double)(unsafe.Pointer(&yi[0])), yj: (*C.double)(unsafe.Pointer(&yj[0])),
	}
	if diag {
		v.diag = 1
	}
	return v
}

// checkMT32 panics unless the arguments of MulT32Dot (dot) or MulT32Axpy
// describe slices long enough: xt has bp rows of stride ldx over the
// columns (dot) or rows (axpy) of A, yt the other.
func checkMT32(dot bool, m, n int, alen, lda, bp int, xt []float64, ldx int, yt []float64, ldy int) {
	xn, yn := n, m
	if !dot {
		xn, yn = m, n
	}
	if m < 0 || n < 0 || lda < max(1, n) || bp <= 0 || bp%4 != 0 || ldx < max(1, xn) || ldy < max(1, yn) ||
		max(m, n, bp) > math.MaxInt32 ||
		(m > 0 && n > 0 && (alen < (m-1)*lda+n || len(xt) < (bp-1)*ldx+xn || len(yt) < (bp-1)*ldy+yn)) {
		panic(fmt.Sprintf("native: MulT32: bad arguments m=%d n=%d lda=%d bp=%d ldx=%d ldy=%d", m, n, lda, bp, ldx, ldy))
	}
}

// MulT32Dot adds A·X to Y for a float32 m×n matrix A (rows of stride lda)
// and blocks of bp float64 vectors in transposed layout: row g of xt
// (stride ldx, n entries) is vector g of X, row g of yt (stride ldy, m
// entries) receives vector g of A·X. bp is a multiple of 4. The arithmetic
// is float64 (A's entries widened exactly). Safe for concurrent use on
// disjoint outputs.
func (b Build) MulT32Dot(m, n int, a []float32, lda, bp int, xt []float64, ldx int, yt []float64, ldy int) {
	checkMT32(true, m, n, len(a), lda, bp, xt, ldx, yt, ldy)
	if m == 0 || n == 0 {
		return
	}
	pa := (*C.float)(unsafe.Pointer(&a[0]))
	px, py := (*C.double)(unsafe.Pointer(&xt[0])), (*C.double)(unsafe.Pointer(&yt[0]))
	if b.avx2 {
		C.kd_mt32_dot_avx2(C.int(m), C.int(n), pa, C.long(lda), C.int(bp), px, C.long(ldx), py, C.long(ldy))
		return
	}
	C.kd_mt32_dot_base(C.int(m), C.int(n), pa, C.long(lda), C.int(bp), px, C.long(ldx), py, C.long(ldy))
}

// MulT32Rows adds Aᵀ·X to Y like MulT32Axpy, reading A in place with a
// wide row stride (lda ≫ n: the stored Fᵀ of a feature map, whose rows
// run over every point): blocks of rows pass along sixteen columns at a
// time, so each row is read as one contiguous run and nothing is copied.
// Each entry of Y is one FMA chain over A's rows that starts from its value
// on entry: on a zero Y, MulT32Axpy's bits but for the sign of a zero. It
// runs only in AVX-512 (ok false, and nothing done, on builds without the
// float64-arithmetic block kernel in AVX-512: callers then copy blocks for
// MulT32Axpy).
func (b Build) MulT32Rows(m, n int, a []float32, lda, bp int, xt []float64, ldx int, yt []float64, ldy int) (ok bool) {
	checkMT32(false, m, n, len(a), lda, bp, xt, ldx, yt, ldy)
	if !b.symm512 {
		return false
	}
	if m == 0 || n == 0 {
		return true
	}
	pa := (*C.float)(unsafe.Pointer(&a[0]))
	px, py := (*C.double)(unsafe.Pointer(&xt[0])), (*C.double)(unsafe.Pointer(&yt[0]))
	C.kd_mt32_rows_avx512(C.int(m), C.int(n), pa, C.long(lda), C.int(bp), px, C.long(ldx), py, C.long(ldy))
	return true
}

// MulT32Axpy adds Aᵀ·X to Y for the same A, X now with m entries a vector
// (rows of xt) and Y with n (rows of yt): MulT32Dot's transpose. In the
// AVX2 form each entry of Y gets one FMA chain over A's rows, added to it
// at the end; the SSE2 baseline, without FMA, rounds each product.
func (b Build) MulT32Axpy(m, n int, a []float32, lda, bp int, xt []float64, ldx int, yt []float64, ldy int) {
	checkMT32(false, m, n, len(a), lda, bp, xt, ldx, yt, ldy)
	if m == 0 || n == 0 {
		return
	}
	pa := (*C.float)(unsafe.Pointer(&a[0]))
	px, py := (*C.double)(unsafe.Pointer(&xt[0])), (*C.double)(unsafe.Pointer(&yt[0]))
	if b.avx2 {
		C.kd_mt32_axpy_avx2(C.int(m), C.int(n), pa, C.long(lda), C.int(bp), px, C.long(ldx), py, C.long(ldy))
		return
	}
	C.kd_mt32_axpy_base(C.int(m), C.int(n), pa, C.long(lda), C.int(bp), px, C.long(ldx), py, C.long(ldy))
}
