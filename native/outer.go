package native

/*
void kd_outer32_avx512(int r, int w, const float *f, long ldf, const double *mean, float *buf, int bp, const float *x, float *z, float *part);
void kd_outer32_avx2(int r, int w, const float *f, long ldf, const double *mean, float *buf, int bp, const float *x, float *z, float *part);
void kd_outer32_base(int r, int w, const float *f, long ldf, const double *mean, float *buf, int bp, const float *x, float *z, float *part);
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Outer32 adds F_B·(F_Bᵀ·X) to part (r×bp, row-major) for the chunk F_B
// of w points of a float32 feature matrix stored transposed — f holds r
// rows of stride ldf ≥ w, row e the chunk's values of feature e — centred
// by mean (nil: not centred; each value float32(f − μ_e), rounded once),
// and X (r×bp, row-major), bp 16 or 32. The chunk is first copied into buf
// (r×w) — centred there — and z (w×bp) holds F_Bᵀ·X; the products are in
// float32 arithmetic with subnormal results flushed to zero (each below
// 2⁻¹²⁶ in magnitude). Every entry of z is a sum of r products, and w
// products are added to every entry of part, each rounded once per
// addition (float32: errors of order r·u and w·u relative to the sums of
// absolute products, u = 2⁻²⁴). The AVX-512 form runs where b runs the
// float32-arithmetic block kernel in 512-bit form (WithWide's single: the
// rule of package paths), then AVX2, then the baseline: the same loop and
// order of operations per entry.
func (b Build) Outer32(r, w int, f []float32, ldf int, mean []float64, buf []float32, bp int, x, z, part []float32) {
	if r < 1 || w < 1 || ldf < w || (bp != 16 && bp != 32) || len(f) < (r-1)*ldf+w || (mean != nil && len(mean) < r) ||
		len(buf) < r*w || len(x) < r*bp || len(z) < w*bp || len(part) < r*bp {
		panic(fmt.Sprintf("native: Outer32: r %d, w %d, ldf %d, bp %d, len(f) %d, len(mean) %d, len(buf) %d, len(x) %d, len(z) %d, len(part) %d",
			r, w, ldf, bp, len(f), len(mean), len(buf), len(x), len(z), len(part)))
	}
	pf, px := (*C.float)(unsafe.Pointer(&f[0])), (*C.float)(unsafe.Pointer(&x[0]))
	pz, pp := (*C.float)(unsafe.Pointer(&z[0])), (*C.float)(unsafe.Pointer(&part[0]))
	pb := (*C.float)(unsafe.Pointer(&buf[0]))
	var pm *C.double
	if mean != nil {
		pm = (*C.double)(unsafe.Pointer(&mean[0]))
	}
	switch {
	case b.single512:
		C.kd_outer32_avx512(C.int(r), C.int(w), pf, C.long(ldf), pm, pb, C.int(bp), px, pz, pp)
	case b.avx2:
		C.kd_outer32_avx2(C.int(r), C.int(w), pf, C.long(ldf), pm, pb, C.int(bp), px, pz, pp)
	default:
		C.kd_outer32_base(C.int(r), C.int(w), pf, C.long(ldf), pm, pb, C.int(bp), px, pz, pp)
	}
}
