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
void kd_tsymv_avx2(int t, const float *a, const double *xi, const double *xj, double *yi, double *yj, int offdiag);
void kd_tsymv_base(int t, const float *a, const double *xi, const double *xj, double *yi, double *yj, int offdiag);
void kd_tsymv64_avx2(int t, const double *a, const double *xi, const double *xj, double *yi, double *yj, int offdiag);
void kd_tsymv64_base(int t, const double *a, const double *xi, const double *xj, double *yi, double *yj, int offdiag);
void kd_tsymm_f64_avx2(int m, int n, const double *a, int lda, int bp, const double *xi, const double *xj, double *yi, double *yj, int diag);
void kd_tsymm_f64_base(int m, int n, const double *a, int lda, int bp, const double *xi, const double *xj, double *yi, double *yj, int diag);
void kd_tsymm_f32_avx2(int m, int n, const float *a, int lda, int bp, const double *xi, const double *xj, double *yi, double *yj, int diag);
void kd_tsymm_f32_base(int m, int n, const float *a, int lda, int bp, const double *xi, const double *xj, double *yi, double *yj, int diag);
void kd_rbf_rows32_avx2(int m, int n, const float *src, int lds, double *out, int ldo, const double *ni, const double *nj, double c, int laplace);
void kd_rbf_rows32_base(int m, int n, const float *src, int lds, double *out, int ldo, const double *ni, const double *nj, double c, int laplace);
void kd_mt32_dot_avx2(int m, int n, const float *a, long lda, int bp, const double *xt, long ldx, double *yt, long ldy);
void kd_mt32_dot_base(int m, int n, const float *a, long lda, int bp, const double *xt, long ldx, double *yt, long ldy);
void kd_mt32_axpy_avx2(int m, int n, const float *a, long lda, int bp, const double *xt, long ldx, double *yt, long ldy);
void kd_mt32_axpy_base(int m, int n, const float *a, long lda, int bp, const double *xt, long ldx, double *yt, long ldy);
*/
import "C"

import (
	"fmt"
	"math"
	"unsafe"
)

// Build selects a build of the portable kernels of this file: Best()
// runs AVX2+FMA where the processor has them and SSE2 otherwise;
// Baseline() always runs SSE2, so tests can check that both agree. The
// package-level functions use Best(). A Build is a value: nothing global
// changes when one is chosen.
type Build struct{ avx2 bool }

// detected is read once: the processor does not change.
var detected = C.kd_has_avx2() != 0

// Best is the fastest build this processor runs.
func Best() Build { return Build{avx2: detected} }

// Baseline is the SSE2 build, which every x86-64 processor runs.
func Baseline() Build { return Build{} }

// Name is the instruction set of the build ("avx2+fma" or "sse2").
func (b Build) Name() string {
	if b.avx2 {
		return "avx2+fma"
	}
	return "sse2"
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
	if len(ni) < m || len(nj) < n || !(c <= 0) || lds < n || (m > 0 && n > 0 && len(src) < (m-1)*lds+n) {
		panic(fmt.Sprintf("native: RBFMap32: bad arguments len(src)=%d lds=%d len(ni)=%d len(nj)=%d c=%g", len(src), lds, len(ni), len(nj), c))
	}
	if m == 0 || n == 0 {
		return
	}
	lap := C.int(0)
	if laplace {
		lap = 1
	}
	ps := (*C.float)(unsafe.Pointer(&src[0]))
	o := (*C.double)(unsafe.Pointer(&out[0]))
	pi, pj := (*C.double)(unsafe.Pointer(&ni[0])), (*C.double)(unsafe.Pointer(&nj[0]))
	if b.avx2 {
		C.kd_rbf_rows32_avx2(C.int(m), C.int(n), ps, C.int(lds), o, C.int(ldo), pi, pj, C.double(c), lap)
		return
	}
	C.kd_rbf_rows32_base(C.int(m), C.int(n), ps, C.int(lds), o, C.int(ldo), pi, pj, C.double(c), lap)
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

// TileSymv adds one stored tile's contribution to y = A·x for a symmetric
// A kept as float32 t×t tiles of its upper triangle: yi += A_IJ·xj and,
// when offdiag, yj += A_IJᵀ·xi, all in float64. a holds the t×t tile
// row-major; xi, yi are the tile's row block of x and y, xj, yj its column
// block. t must be a positive multiple of 4. Safe for concurrent use when
// the y blocks are disjoint.
func TileSymv(t int, a []float32, xi, xj, yi, yj []float64, offdiag bool) {
	Best().TileSymv(t, a, xi, xj, yi, yj, offdiag)
}

// TileSymv is the package-level TileSymv on build b.
func (b Build) TileSymv(t int, a []float32, xi, xj, yi, yj []float64, offdiag bool) {
	if t <= 0 || t%4 != 0 || t > 1<<14 || len(a) < t*t || len(xi) < t || len(xj) < t || len(yi) < t || len(yj) < t {
		panic(fmt.Sprintf("native: TileSymv: bad arguments t=%d", t))
	}
	off := C.int(0)
	if offdiag {
		off = 1
	}
	pa := (*C.float)(unsafe.Pointer(&a[0]))
	pxi, pxj := (*C.double)(unsafe.Pointer(&xi[0])), (*C.double)(unsafe.Pointer(&xj[0]))
	pyi, pyj := (*C.double)(unsafe.Pointer(&yi[0])), (*C.double)(unsafe.Pointer(&yj[0]))
	if b.avx2 {
		C.kd_tsymv_avx2(C.int(t), pa, pxi, pxj, pyi, pyj, off)
		return
	}
	C.kd_tsymv_base(C.int(t), pa, pxi, pxj, pyi, pyj, off)
}

// TileSymv64 is TileSymv for a float64 tile.
func TileSymv64(t int, a []float64, xi, xj, yi, yj []float64, offdiag bool) {
	Best().TileSymv64(t, a, xi, xj, yi, yj, offdiag)
}

// TileSymv64 is the package-level TileSymv64 on build b.
func (b Build) TileSymv64(t int, a []float64, xi, xj, yi, yj []float64, offdiag bool) {
	if t <= 0 || t%4 != 0 || t > 1<<14 || len(a) < t*t || len(xi) < t || len(xj) < t || len(yi) < t || len(yj) < t {
		panic(fmt.Sprintf("native: TileSymv64: bad arguments t=%d", t))
	}
	off := C.int(0)
	if offdiag {
		off = 1
	}
	pa := (*C.double)(unsafe.Pointer(&a[0]))
	pxi, pxj := (*C.double)(unsafe.Pointer(&xi[0])), (*C.double)(unsafe.Pointer(&xj[0]))
	pyi, pyj := (*C.double)(unsafe.Pointer(&yi[0])), (*C.double)(unsafe.Pointer(&yj[0]))
	if b.avx2 {
		C.kd_tsymv64_avx2(C.int(t), pa, pxi, pxj, pyi, pyj, off)
		return
	}
	C.kd_tsymv64_base(C.int(t), pa, pxi, pxj, pyi, pyj, off)
}

func checkSymm(m, n, lda, alen, bp int, xi, xj, yi, yj []float64, diag bool) {
	if m < 0 || n < 0 || lda < n || bp <= 0 || bp%4 != 0 || max(m, n, lda, bp) > math.MaxInt32 ||
		(m > 0 && n > 0 && alen < (m-1)*lda+n) || len(xi) < m*bp || len(yi) < m*bp || len(xj) < n*bp || len(yj) < n*bp ||
		(diag && m != n) {
		panic(fmt.Sprintf("native: TileSymm: bad arguments m=%d n=%d lda=%d bp=%d diag=%v", m, n, lda, bp, diag))
	}
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

// TileSymm64 adds one tile's contribution to Y = A·X for a symmetric A
// and a block X of bp columns (bp a multiple of 4; X and Y row-major with
// stride bp), in float64: the m×n tile a (row stride lda) gives
// Y_I += A_IJ·X_J and Y_J += A_IJᵀ·X_I; with diag (a tile on the diagonal,
// m = n, xi and xj the same block, yi and yj too) only its upper triangle
// is read. Every entry is loaded once per call. Safe for concurrent use on
// disjoint outputs.
func TileSymm64(m, n int, a []float64, lda, bp int, xi, xj, yi, yj []float64, diag bool) {
	Best().TileSymm64(m, n, a, lda, bp, xi, xj, yi, yj, diag)
}

// TileSymm64 is the package-level TileSymm64 on build b.
func (b Build) TileSymm64(m, n int, a []float64, lda, bp int, xi, xj, yi, yj []float64, diag bool) {
	checkSymm(m, n, lda, len(a), bp, xi, xj, yi, yj, diag)
	if m == 0 || n == 0 {
		return
	}
	pa := (*C.double)(unsafe.Pointer(&a[0]))
	v := symmPointers(xi, xj, yi, yj, diag)
	if b.avx2 {
		C.kd_tsymm_f64_avx2(C.int(m), C.int(n), pa, C.int(lda), C.int(bp), v.xi, v.xj, v.yi, v.yj, v.diag)
		return
	}
	C.kd_tsymm_f64_base(C.int(m), C.int(n), pa, C.int(lda), C.int(bp), v.xi, v.xj, v.yi, v.yj, v.diag)
}

// TileSymm32 is TileSymm64 for a float32 tile (float64 arithmetic).
func TileSymm32(m, n int, a []float32, lda, bp int, xi, xj, yi, yj []float64, diag bool) {
	Best().TileSymm32(m, n, a, lda, bp, xi, xj, yi, yj, diag)
}

// TileSymm32 is the package-level TileSymm32 on build b.
func (b Build) TileSymm32(m, n int, a []float32, lda, bp int, xi, xj, yi, yj []float64, diag bool) {
	checkSymm(m, n, lda, len(a), bp, xi, xj, yi, yj, diag)
	if m == 0 || n == 0 {
		return
	}
	pa := (*C.float)(unsafe.Pointer(&a[0]))
	v := symmPointers(xi, xj, yi, yj, diag)
	if b.avx2 {
		C.kd_tsymm_f32_avx2(C.int(m), C.int(n), pa, C.int(lda), C.int(bp), v.xi, v.xj, v.yi, v.yj, v.diag)
		return
	}
	C.kd_tsymm_f32_base(C.int(m), C.int(n), pa, C.int(lda), C.int(bp), v.xi, v.xj, v.yi, v.yj, v.diag)
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

// MulT32Axpy adds Aᵀ·X to Y for the same A, X now with m entries a vector
// (rows of xt) and Y with n (rows of yt): MulT32Dot's transpose.
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
