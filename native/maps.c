// Element maps and half-storage kernels that run on any x86-64 processor:
// each is compiled twice, for AVX2+FMA and for the baseline (SSE2), and
// kd_has_avx2 tells the Go side which one to call. Generic vector types of
// four doubles are lowered to two SSE2 registers on the baseline.
#include "kd_simd.h"

int kd_has_avx2(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}


// KD_EXP4 defines exp(x) for x ≤ 0, four at a time (the same reduction and
// Taylor polynomial of degree 13 as the AVX-512 kd_exp8): within 2 ulp of
// exp over [−708, 0]; below −708 the result is flushed to zero.
#define KD_EXP4(ATTR, NAME)                                                          \
ATTR static inline void NAME(kd_v4 *xp) {                                            \
    kd_v4 x = *xp;                                                                   \
    const double shifter = 0x1.8p52;                                                 \
    kd_l4 low = x < -708.0;                                                          \
    kd_v4 lim = {-708.0, -708.0, -708.0, -708.0};                                    \
    kd_v4 xc = (kd_v4)(((kd_l4)lim & low) | ((kd_l4)x & ~low));                      \
    kd_v4 t = xc * 1.4426950408889634 + shifter;                                     \
    kd_v4 k = t - shifter;                                                           \
    kd_v4 r = xc - k * 6.93147180369123816490e-01;                                   \
    r = r - k * 1.90821492927058770002e-10;                                          \
    kd_v4 p = r * (1.0 / 6227020800.0) + (1.0 / 479001600.0);                        \
    p = p * r + (1.0 / 39916800.0);                                                  \
    p = p * r + (1.0 / 3628800.0);                                                   \
    p = p * r + (1.0 / 362880.0);                                                    \
    p = p * r + (1.0 / 40320.0);                                                     \
    p = p * r + (1.0 / 5040.0);                                                      \
    p = p * r + (1.0 / 720.0);                                                       \
    p = p * r + (1.0 / 120.0);                                                       \
    p = p * r + (1.0 / 24.0);                                                        \
    p = p * r + (1.0 / 6.0);                                                         \
    p = p * r + 0.5;                                                                 \
    p = p * r + 1.0;                                                                 \
    p = p * r + 1.0;                                                                 \
    kd_l4 ki = (kd_l4)t - (kd_l4)((kd_v4){shifter, shifter, shifter, shifter});      \
    kd_l4 scale = (ki + 1023) << 52;                                                 \
    kd_v4 res = p * (kd_v4)scale;                                                    \
    kd_l4 keep = x >= -708.0;                                                        \
    *xp = (kd_v4)((kd_l4)res & keep);                                                \
}

KD_EXP4(KD_AVX2, kd_exp4_avx2)
KD_EXP4(KD_BASE, kd_exp4_base)

// The kernel maps (KD_RBF_SRC below) take m rows of inner products g
// (j < n) to exp(c·δ), δ = max(ni[i] + nj[j] − 2g, 0), or δ = √max(…) when
// laplace ≠ 0. c ≤ 0.
typedef double kd_v2 __attribute__((vector_size(16)));

// Vector square roots (of non-negative values), without libm calls.
KD_AVX2 static inline kd_v4 kd_sqrt4_avx2(kd_v4 x) { return __builtin_ia32_sqrtpd256(x); }
static inline void kd_sqrt4_base(kd_v4 *x) {
    kd_v2 lo = {(*x)[0], (*x)[1]}, hi = {(*x)[2], (*x)[3]};
    lo = __builtin_ia32_sqrtpd(lo);
    hi = __builtin_ia32_sqrtpd(hi);
    (*x)[0] = lo[0]; (*x)[1] = lo[1]; (*x)[2] = hi[0]; (*x)[3] = hi[1];
}
#define KD_SQRT_AVX2(d) (d) = kd_sqrt4_avx2(d)
#define KD_SQRT_BASE(d) kd_sqrt4_base(&(d))

// KD_RBF_SRC defines the map from a block src of inner products (element
// type T, stride lds, four loaded as doubles by LOAD4) to out (stride
// ldo); src may be out itself (the in-place map).
#define KD_RBF_SRC(ATTR, NAME, EXP, SQRT, T, LOAD4, O, STORE4)                       \
ATTR static void NAME(int m, int n, const T *src, int lds, O *out, int ldo,          \
                      const double *ni, const double *nj, double c, int laplace) {   \
    for (int i = 0; i < m; i++) {                                                    \
        const T *srow = src + (size_t)i * lds;                                       \
        O *row = out + (size_t)i * ldo;                                              \
        int j = 0;                                                                   \
        for (; j + 4 <= n; j += 4) {                                                 \
            kd_v4 g, y;                                                              \
            LOAD4(g, srow + j);                                                      \
            memcpy(&y, nj + j, sizeof y);                                            \
            kd_v4 d = ni[i] + y - 2.0 * g;                                           \
            d = (kd_v4)((kd_l4)d & (d > 0.0));                                       \
            if (laplace) SQRT(d);                                                    \
            kd_v4 e = c * d;                                                         \
            EXP(&e);                                                                 \
            STORE4(row + j, e);                                                      \
        }                                                                            \
        if (j < n) {                                                                 \
            kd_v4 d = {0, 0, 0, 0};                                                  \
            int rest = n - j;                                                        \
            for (int l = 0; l < rest; l++) {                                         \
                double v = ni[i] + nj[j + l] - 2.0 * (double)srow[j + l];            \
                v = v > 0 ? v : 0;                                                   \
                d[l] = v;                                                            \
            }                                                                        \
            if (laplace) SQRT(d);                                                    \
            kd_v4 e = c * d;                                                         \
            EXP(&e);                                                                 \
            for (int l = 0; l < rest; l++)                                           \
                row[j + l] = (O)(sizeof(O) == 4 && e[l] < 0x1p-126 ? 0.0 : e[l]);    \
        }                                                                            \
    }                                                                                \
}

#define KD_STORE4_F64(p, e) memcpy((p), &(e), sizeof(e))
// Four doubles rounded to floats (to nearest) and stored.
// Values below float32's smallest normal 2⁻¹²⁶ are stored as zero: subnormal
// float32 entries make every later product with them take a microcode assist
// on Intel processors (a float32 block product 19 times slower on the one
// measured, docs/operators.md), and hold fewer than 24 bits.
#define KD_STORE4_F32(p, e) do { kd_v4 n_ = (kd_v4)((kd_l4)(e) & ((e) >= 0x1p-126));       \
                                 kd_f4 f_ = __builtin_convertvector(n_, kd_f4);            \
                                 memcpy((p), &f_, sizeof f_); } while (0)
KD_RBF_SRC(KD_AVX2, kd_rbf_src64_avx2, kd_exp4_avx2, KD_SQRT_AVX2, double, KD_LOAD4_F64, double, KD_STORE4_F64)
KD_RBF_SRC(KD_BASE, kd_rbf_src64_base, kd_exp4_base, KD_SQRT_BASE, double, KD_LOAD4_F64, double, KD_STORE4_F64)

// The in-place map of m rows of inner products g = out[i·ldo + j].
KD_AVX2 void kd_rbf_rows_avx2(int m, int n, double *out, int ldo, const double *ni,
                              const double *nj, double c, int laplace) {
    kd_rbf_src64_avx2(m, n, out, ldo, out, ldo, ni, nj, c, laplace);
}
void kd_rbf_rows_base(int m, int n, double *out, int ldo, const double *ni,
                      const double *nj, double c, int laplace) {
    kd_rbf_src64_base(m, n, out, ldo, out, ldo, ni, nj, c, laplace);
}

// KD_NARROW defines dst[i·ldd + j] = (float)src[i·lds + j] for i < m, j < n,
// values of magnitude below 2⁻¹²⁶ stored as zero (see KD_STORE4_F32).
#define KD_NARROW(ATTR, NAME)                                                        \
ATTR void NAME(int m, int n, const double *src, int lds, float *dst, int ldd) {      \
    for (int i = 0; i < m; i++) {                                                    \
        const double *s = src + (size_t)i * lds;                                     \
        float *d = dst + (size_t)i * ldd;                                            \
        for (int j = 0; j < n; j++)                                                  \
            d[j] = (float)(s[j] < 0x1p-126 && s[j] > -0x1p-126 ? 0.0 : s[j]);        \
    }                                                                                \
}

KD_NARROW(KD_AVX2, kd_narrow_avx2)
KD_NARROW(KD_BASE, kd_narrow_base)

// KD_WIDEN defines dst[i·ldd + j] = src[i·lds + j] for i < m, j < n.
#define KD_WIDEN(ATTR, NAME)                                                         \
ATTR void NAME(int m, int n, const float *src, int lds, double *dst, int ldd) {      \
    for (int i = 0; i < m; i++) {                                                    \
        const float *s = src + (size_t)i * lds;                                      \
        double *d = dst + (size_t)i * ldd;                                           \
        for (int j = 0; j < n; j++) d[j] = (double)s[j];                             \
    }                                                                                \
}

KD_WIDEN(KD_AVX2, kd_widen_avx2)
KD_WIDEN(KD_BASE, kd_widen_base)

// The map straight from float32 inner products (widening and map in one
// pass).
KD_RBF_SRC(KD_AVX2, kd_rbf_src32_avx2, kd_exp4_avx2, KD_SQRT_AVX2, float, KD_CVT4_AVX2, double, KD_STORE4_F64)
KD_RBF_SRC(KD_BASE, kd_rbf_src32_base, kd_exp4_base, KD_SQRT_BASE, float, KD_CVT4_BASE, double, KD_STORE4_F64)
// ... and to float32 storage: products, map and narrowing in one pass.
KD_RBF_SRC(KD_AVX2, kd_rbf_src3232_avx2, kd_exp4_avx2, KD_SQRT_AVX2, float, KD_CVT4_AVX2, float, KD_STORE4_F32)
KD_RBF_SRC(KD_BASE, kd_rbf_src3232_base, kd_exp4_base, KD_SQRT_BASE, float, KD_CVT4_BASE, float, KD_STORE4_F32)
void kd_rbf_rows3232_avx2(int m, int n, const float *src, int lds, float *out, int ldo,
                          const double *ni, const double *nj, double c, int laplace) {
    kd_rbf_src3232_avx2(m, n, src, lds, out, ldo, ni, nj, c, laplace);
}
void kd_rbf_rows3232_base(int m, int n, const float *src, int lds, float *out, int ldo,
                          const double *ni, const double *nj, double c, int laplace) {
    kd_rbf_src3232_base(m, n, src, lds, out, ldo, ni, nj, c, laplace);
}
void kd_rbf_rows32_avx2(int m, int n, const float *src, int lds, double *out, int ldo,
                        const double *ni, const double *nj, double c, int laplace) {
    kd_rbf_src32_avx2(m, n, src, lds, out, ldo, ni, nj, c, laplace);
}
void kd_rbf_rows32_base(int m, int n, const float *src, int lds, double *out, int ldo,
                        const double *ni, const double *nj, double c, int laplace) {
    kd_rbf_src32_base(m, n, src, lds, out, ldo, ni, nj, c, laplace);
}
