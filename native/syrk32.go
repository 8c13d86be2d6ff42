package native

/*
void kd_syrk32_pack_avx512(int k, int kc, const float *a, long lda, int q0, int q1, const double *shift, double *sums, float *pk);
void kd_syrk32_pack_base(int k, int kc, const float *a, long lda, int q0, int q1, const double *shift, double *sums, float *pk);
void kd_syrk32_tiles_avx512(int k, int kc, const float *pk, int r0, int r1, float *c, long ldc, int first);
void kd_syrk32_tiles_base(int k, int kc, const float *pk, int r0, int r1, float *c, long ldc, int first);
void kd_syrk32_run(int wide, int threads, int k, int kc, int w, const float *a, long lda, const double *shift,
                   double *sums, float *pk, float *c, long ldc, int rows, int *next);
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Syrk32Block is the columns of a column block of Syrk32Tiles: three
// panels of 16 rows.
const Syrk32Block = 48

// Syrk32Panels returns the panels a packed block of k rows holds: enough
// for every column block, ⌈k/48⌉·3.
func Syrk32Panels(k int) int { return (k + Syrk32Block - 1) / Syrk32Block * 3 }

// Syrk32PackLen is the float32s of a packed block of kc points of k rows:
// Syrk32Panels(k) panels of 16·kc values, each followed by 16 unused ones
// (so that panels do not start a power of two apart).
func Syrk32PackLen(k, kc int) int { return Syrk32Panels(k) * (16*kc + 16) }

// Syrk32Pack packs panels [q0, q1) of a block of kc points of k rows —
// row r's values at a[r·lda : r·lda+kc] — for Syrk32Tiles: panel q holds,
// for each point p, the values of rows 16q … 16q+15 at
// pk[q·(16·kc+16) + 16·p …] (0 for rows ≥ k). With shift (len ≥ k;
// nil: the values as they are) each packed value of row r is
// float32(float64(a) − shift[r]), rounded once, and sums[r] gains the packed values of its row in float64, point
// by point in order: over the blocks of a product packed in order, the
// row sums of the shifted values in point order, as a plain loop adds
// them. wide runs the AVX-512 form (where HasWide; the baseline
// otherwise): both write the same values and sums. Safe for concurrent
// use on disjoint panel ranges.
func Syrk32Pack(wide bool, k, kc int, a []float32, lda, q0, q1 int, shift, sums []float64, pk []float32) {
	panels := Syrk32Panels(k)
	if k < 1 || kc < 1 || lda < kc || len(a) < (k-1)*lda+kc || q0 < 0 || q1 > panels || q0 > q1 || len(pk) < Syrk32PackLen(k, kc) ||
		(shift != nil && (len(shift) < k || len(sums) < k)) {
		panic(fmt.Sprintf("native: Syrk32Pack: k %d, kc %d, lda %d, len(a) %d, panels [%d, %d) of %d, len(pk) %d, len(shift) %d, len(sums) %d",
			k, kc, lda, len(a), q0, q1, panels, len(pk), len(shift), len(sums)))
	}
	if q0 == q1 {
		return
	}
	pa, pp := (*C.float)(unsafe.Pointer(&a[0])), (*C.float)(unsafe.Pointer(&pk[0]))
	var ps, pt *C.double
	if shift != nil {
		ps, pt = (*C.double)(unsafe.Pointer(&shift[0])), (*C.double)(unsafe.Pointer(&sums[0]))
	}
	if wide && hasWide {
		C.kd_syrk32_pack_avx512(C.int(k), C.int(kc), pa, C.long(lda), C.int(q0), C.int(q1), ps, pt, pp)
	} else {
		C.kd_syrk32_pack_base(C.int(k), C.int(kc), pa, C.long(lda), C.int(q0), C.int(q1), ps, pt, pp)
	}
}

// Syrk32Tiles computes the rows [r0, r1) of the upper triangle of A·Aᵀ
// over a packed block of kc points (pk, every panel packed by
// Syrk32Pack), r0 a multiple of 8 and r1 one too or k: the entries
// c[i·ldc + j] for r0 ≤ i < r1 and j ≥ 48·⌊i/48⌋, j < k — the triangle's
// entries of those rows and some below its diagonal inside the diagonal
// 48×48 blocks (scratch for a caller that reads the upper triangle) —
// stored when first, added to otherwise. Each entry is the block's
// Σ_p A[i][p]·A[j][p] in point order, one float32 rounding per
// multiply-add (fused in the AVX-512 form), values below 2⁻¹²⁶ flushed to
// zero, then one rounding where it is added to c: the same bits whatever
// the split of the rows. wide runs the AVX-512 form where HasWide, the
// baseline otherwise. Safe for concurrent use on disjoint row ranges.
func Syrk32Tiles(wide bool, k, kc int, pk []float32, r0, r1 int, c []float32, ldc int, first bool) {
	if k < 1 || kc < 1 || len(pk) < Syrk32PackLen(k, kc) || r0 < 0 || r0%8 != 0 || r1 > k || r0 > r1 || (r1%8 != 0 && r1 != k) ||
		ldc < k || len(c) < (k-1)*ldc+k {
		panic(fmt.Sprintf("native: Syrk32Tiles: k %d, kc %d, len(pk) %d, rows [%d, %d), ldc %d, len(c) %d",
			k, kc, len(pk), r0, r1, ldc, len(c)))
	}
	if r0 == r1 {
		return
	}
	f := C.int(0)
	if first {
		f = 1
	}
	pp, pc := (*C.float)(unsafe.Pointer(&pk[0])), (*C.float)(unsafe.Pointer(&c[0]))
	if wide && hasWide {
		C.kd_syrk32_tiles_avx512(C.int(k), C.int(kc), pp, C.int(r0), C.int(r1), pc, C.long(ldc), f)
	} else {
		C.kd_syrk32_tiles_base(C.int(k), C.int(kc), pp, C.int(r0), C.int(r1), pc, C.long(ldc), f)
	}
}

// Syrk32Run computes the upper triangle of A·Aᵀ over w points — A the k
// rows of stride lda in a, each value shifted as Syrk32Pack says when
// shift is not nil (sums then gaining each row's shifted values in point
// order) — into c (stride ldc): blocks of kc points packed into pk
// (Syrk32PackLen(k, kc) long) as Syrk32Pack does, then Syrk32Tiles on
// every row in tasks of rows rows (a positive multiple of 8), the first
// block stored and the others added, on threads threads of its own (the
// caller's and threads − 1 started for the call; fewer where the system
// refuses one). The same bits whatever the threads: every entry is
// Syrk32Tiles's sums block after block. wide runs the AVX-512 forms where
// HasWide.
func Syrk32Run(wide bool, threads, k, kc, w int, a []float32, lda int, shift, sums []float64, pk, c []float32, ldc, rows int) {
	if k < 1 || kc < 1 || w < 1 || lda < w || len(a) < (k-1)*lda+w || len(pk) < Syrk32PackLen(k, min(kc, w)) ||
		(shift != nil && (len(shift) < k || len(sums) < k)) || ldc < k || len(c) < (k-1)*ldc+k || rows < 8 || rows%8 != 0 {
		panic(fmt.Sprintf("native: Syrk32Run: k %d, kc %d, w %d, lda %d, len(a) %d, len(pk) %d, len(shift) %d, len(sums) %d, ldc %d, len(c) %d, rows %d",
			k, kc, w, lda, len(a), len(pk), len(shift), len(sums), ldc, len(c), rows))
	}
	var ps, pt *C.double
	if shift != nil {
		ps, pt = (*C.double)(unsafe.Pointer(&shift[0])), (*C.double)(unsafe.Pointer(&sums[0]))
	}
	w512 := C.int(0)
	if wide && hasWide {
		w512 = 1
	}
	kc = min(kc, w)
	next := make([]int32, 2*((w+kc-1)/kc)) // each block's two task counters
	C.kd_syrk32_run(w512, C.int(max(threads, 1)), C.int(k), C.int(kc), C.int(w), (*C.float)(unsafe.Pointer(&a[0])), C.long(lda),
		ps, pt, (*C.float)(unsafe.Pointer(&pk[0])), (*C.float)(unsafe.Pointer(&c[0])), C.long(ldc), C.int(rows), (*C.int)(unsafe.Pointer(&next[0])))
}
