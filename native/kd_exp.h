// kd_exp.h: the AVX-512 exponential shared by kernels.c and int8.c.
#ifndef KD_EXP_H
#define KD_EXP_H

#include <immintrin.h>

typedef double kd_v8 __attribute__((vector_size(64)));
typedef long long kd_l8 __attribute__((vector_size(64)));

// kd_exp8 is exp(x) for x ≤ 0, eight at a time: x = k·ln2 + r with
// |r| ≤ ln2/2, exp(r) by its Taylor series to degree 13 (remainder below
// 0.35¹⁴/14! < 1e-17 relative), times 2^k built in the exponent bits.
// Results below exp(−708) ≈ 3e-308 are flushed to zero.
__attribute__((target("avx512f,fma")))
static inline kd_v8 kd_exp8(kd_v8 x) {
    const double shifter = 0x1.8p52;
    // max(−708, x) lane-wise; vmaxpd returns its second operand, x, where
    // either is NaN, as x < −708 ? −708 : x does (a loop over the lanes
    // would be compiled lane by lane).
    kd_v8 xc = (kd_v8)_mm512_max_pd(_mm512_set1_pd(-708.0), (__m512d)x);
    kd_v8 t = xc * 1.4426950408889634 + shifter;  // round(x/ln2) in the low bits
    kd_v8 k = t - shifter;
    kd_v8 r = xc - k * 6.93147180369123816490e-01;  // ln2 high part
    r = r - k * 1.90821492927058770002e-10;         // ln2 low part
    kd_v8 p = r * (1.0 / 6227020800.0) + (1.0 / 479001600.0);
    p = p * r + (1.0 / 39916800.0);
    p = p * r + (1.0 / 3628800.0);
    p = p * r + (1.0 / 362880.0);
    p = p * r + (1.0 / 40320.0);
    p = p * r + (1.0 / 5040.0);
    p = p * r + (1.0 / 720.0);
    p = p * r + (1.0 / 120.0);
    p = p * r + (1.0 / 24.0);
    p = p * r + (1.0 / 6.0);
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    kd_l8 ki = (kd_l8)t - (kd_l8)((kd_v8){shifter, shifter, shifter, shifter, shifter, shifter, shifter, shifter});
    kd_l8 scale = (ki + 1023) << 52;
    kd_v8 res = p * (kd_v8)scale;
    kd_l8 keep = x >= -708.0;  // all ones where x is in range
    return (kd_v8)((kd_l8)res & keep);
}

#endif
