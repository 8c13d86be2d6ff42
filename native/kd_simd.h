// kd_simd.h: the vector types and target attributes of the kernels that
// run on any x86-64 processor (maps.c, tiles.c, products32.c): each is
// compiled twice, for AVX2+FMA and for the baseline (SSE2).
#ifndef KD_SIMD_H
#define KD_SIMD_H

#include <string.h>
#include <stddef.h>
#include <immintrin.h>

typedef double kd_v4 __attribute__((vector_size(32)));
typedef long long kd_l4 __attribute__((vector_size(32)));
typedef float kd_f4 __attribute__((vector_size(16)));

#define KD_AVX2 __attribute__((target("avx2,fma")))
#define KD_BASE

// Four float32 values widened to a kd_v4.
#define KD_CVT4_AVX2(dst, p) (dst) = (kd_v4)_mm256_cvtps_pd(_mm_loadu_ps(p))
#define KD_CVT4_BASE(dst, p) do { kd_f4 f_; memcpy(&f_, (p), sizeof f_);                \
                                  (dst) = __builtin_convertvector(f_, kd_v4); } while (0)
// Four doubles loaded from unaligned memory.
#define KD_LOAD4_F64(dst, p) memcpy(&(dst), (p), sizeof(dst))

// kd_ftz_begin sets MXCSR's flush-to-zero and denormals-are-zero bits for
// the float32-arithmetic kernels and returns the previous MXCSR, which
// kd_ftz_end restores before the kernel returns to Go: a product of a
// small kernel entry (≥ 2⁻¹²⁶) and a vector entry can fall below 2⁻¹²⁶,
// and every subnormal result or operand takes a microcode assist on Intel
// processors (the float32 block product over the n = 60 000 protocol's
// kernel ran several times slower). Each flushed value is below 2⁻¹²⁶.
static inline unsigned kd_ftz_begin(void) {
    unsigned c = _mm_getcsr();
    _mm_setcsr(c | 0x8040);
    return c;
}
static inline void kd_ftz_end(unsigned c) { _mm_setcsr(c); }

#endif
