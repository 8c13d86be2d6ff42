package native

/*
void kd_gemm32_run(int wide, int threads, int m, int n, int d, int kc, const float *pa, const float *b, long ldb,
                   float *scratch, float *c, long ldc);
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Gemm32PackLen is the float32s of a matrix of m rows of depth d packed
// for Gemm32Run (Syrk32Pack's panels over the whole depth).
func Gemm32PackLen(m, d int) int { return Syrk32PackLen(m, d) }

// Gemm32PackA packs A — m rows of depth d, row r's values at
// a[r·lda : r·lda+d] — into pa (Gemm32PackLen(m, d) long) for Gemm32Run:
// Syrk32Pack of every panel, unshifted.
func Gemm32PackA(wide bool, m, d int, a []float32, lda int, pa []float32) {
	Syrk32Pack(wide, m, d, a, lda, 0, Syrk32Panels(m), nil, nil, pa)
}

// Gemm32ScratchLen is the float32s of Gemm32Run's scratch for threads
// threads and depth blocks of kc: three panels each.
func Gemm32ScratchLen(threads, kc int) int { return max(threads, 1) * 3 * (16*kc + 16) }

// Gemm32Run sets C (m×n at stride ldc in c) to A·Bᵀ: A packed in pa by
// Gemm32PackA (m rows of depth d), B the n rows of depth d at stride ldb
// in b. Blocks of 48 rows of B, each packed into the scratch of the
// thread that claims it over depth blocks of kc (Gemm32ScratchLen(threads,
// kc) long), then every row of A against it in tiles of 8 rows × 48
// columns: entry (i, j) is Σ_p A[i][p]·B[j][p] over each depth block in
// order with one float32 rounding per multiply-add (fused in the AVX-512
// form), values below 2⁻¹²⁶ flushed to zero, the depth blocks' sums added
// in order — the same bits whatever the threads — on threads threads of
// its own (the caller's and threads − 1 started for the call; fewer where
// the system refuses one), as Syrk32Run. wide runs the AVX-512 forms where
// HasWide.
func Gemm32Run(wide bool, threads, m, n, d, kc int, pa, b []float32, ldb int, scratch, c []float32, ldc int) {
	threads = max(threads, 1)
	if m < 1 || n < 1 || d < 1 || kc < 1 || len(pa) < Gemm32PackLen(m, d) || ldb < d || len(b) < (n-1)*ldb+d ||
		len(scratch) < Gemm32ScratchLen(threads, min(kc, d)) || ldc < n || len(c) < (m-1)*ldc+n {
		panic(fmt.Sprintf("native: Gemm32Run: m %d, n %d, d %d, kc %d, len(pa) %d, ldb %d, len(b) %d, len(scratch) %d for %d threads, ldc %d, len(c) %d",
			m, n, d, kc, len(pa), ldb, len(b), len(scratch), threads, ldc, len(c)))
	}
	w512 := C.int(0)
	if wide && hasWide {
		w512 = 1
	}
	C.kd_gemm32_run(w512, C.int(threads), C.int(m), C.int(n), C.int(d), C.int(min(kc, d)), (*C.float)(unsafe.Pointer(&pa[0])),
		(*C.float)(unsafe.Pointer(&b[0])), C.long(ldb), (*C.float)(unsafe.Pointer(&scratch[0])),
		(*C.float)(unsafe.Pointer(&c[0])), C.long(ldc))
}
