package native

/*
#cgo CFLAGS: -O3
void kd_dgemm_nt_avx512(int m, int n, int d, const double *a, int lda,
                        const double *b, int ldb, double *out, int ldo);
int kd_has_avx512(void);
void kd_dsymv_band_avx512(int n, const double *a, int lda, const double *x, int i0, int i1, double *y);
void kd_ssymv_band_avx512(int n, const float *a, int lda, const double *x, int i0, int i1, double *y);
void kd_sdot_nt_avx512(int m, int n, int d, const float *a, int lda,
                       const double *b, int ldb, double *out, int ldo);
void kd_rbf_tile(int m, int n, double *out, int ldo, const double *ni, const double *nj,
                 double c, int laplace);
*/
import "C"

import (
	"fmt"
	"math"
	"unsafe"
)

// hasAVX512 is read once: the processor does not change.
var hasAVX512 = C.kd_has_avx512() != 0

// HasDotKernel reports whether DotNT runs on this processor (it needs
// AVX-512F and FMA). Callers use OpenBLAS otherwise.
//
// Why it exists: Debian's OpenBLAS 0.3.21 does not recognise every recent
// processor and then falls back to its SSE3 "Prescott" kernels (see
// CoreName); there this kernel is several times faster than OpenBLAS's
// dsyrk (docs/measurements.md).
func HasDotKernel() bool { return hasAVX512 }

// DotNT sets out[i·ldo + j] = Σ_k a[i·lda + k]·b[j·ldb + k] for i < m,
// j < n: the block out = A·Bᵀ of two row-major matrices with d columns.
// It is safe to call from several goroutines on disjoint outputs. It panics
// when HasDotKernel is false or a slice is too short (programmer errors).
func DotNT(m, n, d int, a []float64, lda int, b []float64, ldb int, out []float64, ldo int) {
	if !hasAVX512 {
		panic("native: DotNT needs AVX-512; check HasDotKernel first")
	}
	if m < 0 || n < 0 || d < 0 || lda < d || ldb < d || ldo < n {
		panic(fmt.Sprintf("native: DotNT: bad dimensions m=%d n=%d d=%d lda=%d ldb=%d ldo=%d", m, n, d, lda, ldb, ldo))
	}
	if m == 0 || n == 0 {
		return
	}
	if len(a) < (m-1)*lda+d || len(b) < (n-1)*ldb+d || len(out) < (m-1)*ldo+n {
		panic("native: DotNT: slice too short")
	}
	if max(m, n, lda, ldb, ldo) > math.MaxInt32 {
		panic("native: DotNT: dimension overflows a C int")
	}
	var ap, bp *C.double
	if d > 0 {
		ap, bp = (*C.double)(unsafe.Pointer(&a[0])), (*C.double)(unsafe.Pointer(&b[0]))
	}
	C.kd_dgemm_nt_avx512(C.int(m), C.int(n), C.int(d), ap, C.int(lda), bp, C.int(ldb),
		(*C.double)(unsafe.Pointer(&out[0])), C.int(ldo))
}

// RBFTile maps, in place, the inner products g = out[i·ldo + j] (i < m,
// j < n) of a tile to exp(c·δ), δ = max(ni[i] + nj[j] − 2g, 0), or
// δ = √max(…) when laplace is true: the Gaussian kernel with
// c = −1/(2σ²) or the Laplace kernel with c = −1/σ, given the squared row
// norms ni and nj. The exponential is vectorised (Taylor series of degree
// 13 after range reduction, within 2 ulp of math.Exp over the range used;
// values below exp(−708) are flushed to zero). Needs HasDotKernel.
func RBFTile(m, n int, out []float64, ldo int, ni, nj []float64, c float64, laplace bool) {
	if !hasAVX512 {
		panic("native: RBFTile needs AVX-512; check HasDotKernel first")
	}
	if m < 0 || n < 0 || ldo < n || len(ni) < m || len(nj) < n || !(c <= 0) {
		panic(fmt.Sprintf("native: RBFTile: bad arguments m=%d n=%d ldo=%d c=%g", m, n, ldo, c))
	}
	if m == 0 || n == 0 {
		return
	}
	if len(out) < (m-1)*ldo+n {
		panic("native: RBFTile: slice too short")
	}
	lap := C.int(0)
	if laplace {
		lap = 1
	}
	C.kd_rbf_tile(C.int(m), C.int(n), (*C.double)(unsafe.Pointer(&out[0])), C.int(ldo),
		(*C.double)(unsafe.Pointer(&ni[0])), (*C.double)(unsafe.Pointer(&nj[0])), C.double(c), lap)
}

// DotNT32 is DotNT for a float32 A: out = A·Bᵀ with A (m×d) stored in
// float32 and B (n×d) in float64, every product and sum in float64. It
// reads half the bytes of A that DotNT does. Needs HasDotKernel.
func DotNT32(m, n, d int, a []float32, lda int, b []float64, ldb int, out []float64, ldo int) {
	if !hasAVX512 {
		panic("native: DotNT32 needs AVX-512; check HasDotKernel first")
	}
	if m < 0 || n < 0 || d < 0 || lda < d || ldb < d || ldo < n || max(m, n, lda, ldb, ldo) > math.MaxInt32 {
		panic(fmt.Sprintf("native: DotNT32: bad dimensions m=%d n=%d d=%d lda=%d ldb=%d ldo=%d", m, n, d, lda, ldb, ldo))
	}
	if m == 0 || n == 0 {
		return
	}
	if len(a) < (m-1)*lda+d || len(b) < (n-1)*ldb+d || len(out) < (m-1)*ldo+n {
		panic("native: DotNT32: slice too short")
	}
	var ap *C.float
	var bp *C.double
	if d > 0 {
		ap, bp = (*C.float)(unsafe.Pointer(&a[0])), (*C.double)(unsafe.Pointer(&b[0]))
	}
	C.kd_sdot_nt_avx512(C.int(m), C.int(n), C.int(d), ap, C.int(lda), bp, C.int(ldb),
		(*C.double)(unsafe.Pointer(&out[0])), C.int(ldo))
}

func checkSymvBand(n, lda, alen, xlen, i0, i1, ylen int) {
	if n < 0 || lda < max(1, n) || i0 < 0 || i0 > i1 || i1 > n || xlen < n || ylen < n ||
		(n > 0 && alen < (n-1)*lda+n) || max(n, lda) > math.MaxInt32 {
		panic(fmt.Sprintf("native: SymvBand: bad arguments n=%d lda=%d rows [%d,%d)", n, lda, i0, i1))
	}
}

// SymvBand adds to y the contribution of rows [i0, i1) of the upper
// triangle of the symmetric n×n matrix a (row-major, stride lda) to A·x:
// y_i += Σ_{j≥i} a_ij x_j and y_j += a_ij x_i for j > i. Reading only the
// upper triangle halves the bytes a matrix-vector product moves. Bands run
// in parallel with private y accumulators that the caller sums. Needs
// HasDotKernel.
func SymvBand(n int, a []float64, lda int, x []float64, i0, i1 int, y []float64) {
	if !hasAVX512 {
		panic("native: SymvBand needs AVX-512; check HasDotKernel first")
	}
	checkSymvBand(n, lda, len(a), len(x), i0, i1, len(y))
	if i0 == i1 {
		return
	}
	C.kd_dsymv_band_avx512(C.int(n), (*C.double)(unsafe.Pointer(&a[0])), C.int(lda),
		(*C.double)(unsafe.Pointer(&x[0])), C.int(i0), C.int(i1), (*C.double)(unsafe.Pointer(&y[0])))
}

// SymvBand32 is SymvBand for a float32 matrix, in float64 arithmetic.
func SymvBand32(n int, a []float32, lda int, x []float64, i0, i1 int, y []float64) {
	if !hasAVX512 {
		panic("native: SymvBand32 needs AVX-512; check HasDotKernel first")
	}
	checkSymvBand(n, lda, len(a), len(x), i0, i1, len(y))
	if i0 == i1 {
		return
	}
	C.kd_ssymv_band_avx512(C.int(n), (*C.float)(unsafe.Pointer(&a[0])), C.int(lda),
		(*C.double)(unsafe.Pointer(&x[0])), C.int(i0), C.int(i1), (*C.double)(unsafe.Pointer(&y[0])))
}
