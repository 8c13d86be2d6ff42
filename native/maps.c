// Element maps and half-storage kernels that run on any x86-64 processor:
// each is compiled twice, for AVX2+FMA and for the baseline (SSE2), and
// kd_has_avx2 tells the Go side which one to call. Generic vector types of
// four doubles are lowered to two SSE2 registers on the baseline.
#include <string.h>
#include <stddef.h>
#include <immintrin.h>

typedef double kd_v4 __attribute__((vector_size(32)));
typedef long long kd_l4 __attribute__((vector_size(32)));
typedef float kd_f4 __attribute__((vector_size(16)));

int kd_has_avx2(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

#define KD_AVX2 __attribute__((target("avx2,fma")))
#define KD_BASE

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
            for (int l = 0; l < rest; l++) row[j + l] = (O)e[l];                     \
        }                                                                            \
    }                                                                                \
}

#define KD_LOAD4_F64(dst, p) memcpy(&(dst), (p), sizeof(dst))
#define KD_STORE4_F64(p, e) memcpy((p), &(e), sizeof(e))
// Four doubles rounded to floats (to nearest) and stored.
#define KD_STORE4_F32(p, e) do { kd_f4 f_ = __builtin_convertvector((e), kd_f4);         \
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

// KD_NARROW defines dst[i·ldd + j] = (float)src[i·lds + j] for i < m, j < n.
#define KD_NARROW(ATTR, NAME)                                                        \
ATTR void NAME(int m, int n, const double *src, int lds, float *dst, int ldd) {      \
    for (int i = 0; i < m; i++) {                                                    \
        const double *s = src + (size_t)i * lds;                                     \
        float *d = dst + (size_t)i * ldd;                                            \
        for (int j = 0; j < n; j++) d[j] = (float)s[j];                              \
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

// KD_TSYMV defines the contribution of one stored tile to y = A·x for a
// symmetric A kept as float32 t×t tiles of its upper triangle (row-major
// inside the tile): y_I += A_IJ·x_J and, when offdiag ≠ 0, y_J += A_IJᵀ·x_I,
// in float64 arithmetic. Each entry is loaded once and used twice. Four
// rows go together so that each load and store of y_J serves four rows.
// t must be a multiple of 4. NAME (the row form) adds a row of tiles
// stored one after another (tile j meets x_J and y_J at j·t); only the
// first can be on the diagonal (diag ≠ 0: offdiag = 0 for it).
// Four floats at p widened to doubles: one vcvtps2pd from memory on AVX2;
// the generic conversion elsewhere.
#define KD_CVT4_AVX2(dst, p) (dst) = (kd_v4)_mm256_cvtps_pd(_mm_loadu_ps(p))
#define KD_CVT4_BASE(dst, p) do { kd_f4 f_; memcpy(&f_, (p), sizeof f_);                \
                                  (dst) = __builtin_convertvector(f_, kd_v4); } while (0)

#define KD_TSYMV(ATTR, NAME, CVT4, ETYPE, PFMASK)                                    \
ATTR static void NAME##_tile(int t, const ETYPE *a, const double *xi,                \
                             const double *xj, double *yi, double *yj,               \
                             int offdiag) {                                          \
    for (int r = 0; r < t; r += 4) {                                                 \
        const ETYPE *row0 = a + (size_t)r * t;                                       \
        kd_v4 acc0 = {0, 0, 0, 0}, acc1 = acc0, acc2 = acc0, acc3 = acc0;            \
        kd_v4 b0, b1, b2, b3;                                                        \
        for (int l = 0; l < 4; l++) {                                                \
            b0[l] = xi[r]; b1[l] = xi[r + 1]; b2[l] = xi[r + 2]; b3[l] = xi[r + 3];  \
        }                                                                            \
        const ETYPE *next = row0 + (r + 12 < t ? 12 * t : 0);                        \
        for (int c = 0; c < t; c += 4) {                                             \
            if ((c & (PFMASK)) == 0) {                                               \
                /* The next four rows, a cache line each, ahead of use. */           \
                __builtin_prefetch(next + c, 0, 0);                                  \
                __builtin_prefetch(next + t + c, 0, 0);                              \
                __builtin_prefetch(next + 2 * t + c, 0, 0);                          \
                __builtin_prefetch(next + 3 * t + c, 0, 0);                          \
            }                                                                        \
            kd_v4 v0, v1, v2, v3;                                                    \
            CVT4(v0, row0 + c);                                                      \
            CVT4(v1, row0 + t + c);                                                  \
            CVT4(v2, row0 + 2 * t + c);                                              \
            CVT4(v3, row0 + 3 * t + c);                                              \
            kd_v4 xv;                                                                \
            memcpy(&xv, xj + c, sizeof xv);                                          \
            acc0 += v0 * xv; acc1 += v1 * xv; acc2 += v2 * xv; acc3 += v3 * xv;     \
            if (offdiag) {                                                           \
                kd_v4 yv;                                                            \
                memcpy(&yv, yj + c, sizeof yv);                                      \
                yv += v0 * b0 + v1 * b1 + v2 * b2 + v3 * b3;                         \
                memcpy(yj + c, &yv, sizeof yv);                                      \
            }                                                                        \
        }                                                                            \
        yi[r] += acc0[0] + acc0[1] + acc0[2] + acc0[3];                              \
        yi[r + 1] += acc1[0] + acc1[1] + acc1[2] + acc1[3];                          \
        yi[r + 2] += acc2[0] + acc2[1] + acc2[2] + acc2[3];                          \
        yi[r + 3] += acc3[0] + acc3[1] + acc3[2] + acc3[3];                          \
    }                                                                                \
}                                                                                    \
ATTR void NAME(int t, int tiles, const ETYPE *a, const double *xi, const double *xj, \
               double *yi, double *yj, int diag) {                                   \
    for (int j = 0; j < tiles; j++) {                                                \
        NAME##_tile(t, a + (size_t)j * t * t, xi, xj + (size_t)j * t, yi,            \
                    yj + (size_t)j * t, !(diag && j == 0));                          \
    }                                                                                \
}

KD_TSYMV(KD_AVX2, kd_tsymv_avx2, KD_CVT4_AVX2, float, 15)
KD_TSYMV(KD_BASE, kd_tsymv_base, KD_CVT4_BASE, float, 15)

// The same for float64 tiles: four doubles loaded as they are, a cache
// line prefetched every 8 of them (PFMASK: every 16 floats above;
// KD_LOAD4_F64 is defined with the maps).
KD_TSYMV(KD_AVX2, kd_tsymv64_avx2, KD_LOAD4_F64, double, 7)
KD_TSYMV(KD_BASE, kd_tsymv64_base, KD_LOAD4_F64, double, 7)

// KD_TSYMM defines the contribution of one tile of a symmetric matrix to
// Y = A·X for a block X of bp columns (bp a multiple of 4; X and Y
// row-major with stride bp), in float64 arithmetic. The tile is m×n, rows
// of stride lda, element type T. Off the diagonal (diag = 0):
// Y_I += A_IJ·X_J and Y_J += A_IJᵀ·X_I. On the diagonal (diag ≠ 0, m = n,
// xi = xj, yi = yj): only the tile's upper triangle is read, each entry
// above the diagonal used both ways. Rows go four at a time against one
// column of the tile and eight columns of X (two vectors: sixteen FMAs per
// step; the four rows of X_I are read from L1, the eight sums of Y_I stay
// in registers); a last group of four columns, if bp is not a multiple of
// eight, goes four rows against one vector. Each group of four rows of
// the tile is read from L1 for every group of columns of X. NAME (the row
// form) adds a row of tiles: tile j (j < tiles) starts at a + j·step, is
// t columns wide (the last one last) and meets X_J and Y_J at row j·t;
// only the first tile can be on the diagonal. One call serves a whole row
// of tiles: a call per tile from parallel goroutines ran 25–35 % slower
// here (the Go scheduler wakes a spinning thread whenever a long C call
// holds a processor).
#define KD_TSYMM(ATTR, NAME, T)                                                      \
ATTR static void NAME##_tile(int m, int n, const T *a, int lda, int bp,              \
                             const double *xi, const double *xj, double *yi,         \
                             double *yj, int diag) {                                 \
    int r = 0;                                                                       \
    for (; r + 4 <= m; r += 4) {                                                     \
        const T *a0 = a + (size_t)r * lda, *a1 = a0 + lda, *a2 = a1 + lda,           \
                *a3 = a2 + lda;                                                      \
        const T *rows[4] = {a0, a1, a2, a3};                                         \
        int c0 = diag ? r + 4 : 0;                                                   \
        int g = 0;                                                                   \
        for (; g + 8 <= bp; g += 8) {                                                \
            const double *x0 = xi + (size_t)r * bp + g;                              \
            kd_v4 s[8], xr[8];                                                       \
            for (int q = 0; q < 8; q++) s[q] = (kd_v4){0, 0, 0, 0};                  \
            if (diag) {                                                              \
                /* The 4×4 block on the diagonal, upper triangle. */                 \
                for (int q = 0; q < 4; q++) {                                        \
                    memcpy(&xr[2 * q], x0 + (size_t)q * bp, sizeof xr[0]);           \
                    memcpy(&xr[2 * q + 1], x0 + (size_t)q * bp + 4, sizeof xr[0]);   \
                }                                                                    \
                for (int p = 0; p < 4; p++) {                                        \
                    double v = rows[p][r + p];                                       \
                    s[2 * p] += v * xr[2 * p];                                       \
                    s[2 * p + 1] += v * xr[2 * p + 1];                               \
                    for (int q = p + 1; q < 4; q++) {                                \
                        v = rows[p][r + q];                                          \
                        s[2 * p] += v * xr[2 * q];                                   \
                        s[2 * p + 1] += v * xr[2 * q + 1];                           \
                        s[2 * q] += v * xr[2 * p];                                   \
                        s[2 * q + 1] += v * xr[2 * p + 1];                           \
                    }                                                                \
                }                                                                    \
            }                                                                        \
            for (int c = c0; c < n; c++) {                                           \
                double v0 = a0[c], v1 = a1[c], v2 = a2[c], v3 = a3[c];               \
                const double *px = xj + (size_t)c * bp + g;                          \
                double *py = yj + (size_t)c * bp + g;                                \
                kd_v4 xv, xw, yv, yw, t;                                             \
                memcpy(&xv, px, sizeof xv); memcpy(&xw, px + 4, sizeof xw);          \
                memcpy(&yv, py, sizeof yv); memcpy(&yw, py + 4, sizeof yw);          \
                s[0] += v0 * xv; s[1] += v0 * xw; s[2] += v1 * xv; s[3] += v1 * xw;  \
                s[4] += v2 * xv; s[5] += v2 * xw; s[6] += v3 * xv; s[7] += v3 * xw;  \
                memcpy(&t, x0, sizeof t); yv += v0 * t;                              \
                memcpy(&t, x0 + 4, sizeof t); yw += v0 * t;                          \
                memcpy(&t, x0 + bp, sizeof t); yv += v1 * t;                         \
                memcpy(&t, x0 + bp + 4, sizeof t); yw += v1 * t;                     \
                memcpy(&t, x0 + 2 * bp, sizeof t); yv += v2 * t;                     \
                memcpy(&t, x0 + 2 * bp + 4, sizeof t); yw += v2 * t;                 \
                memcpy(&t, x0 + 3 * bp, sizeof t); yv += v3 * t;                     \
                memcpy(&t, x0 + 3 * bp + 4, sizeof t); yw += v3 * t;                 \
                memcpy(py, &yv, sizeof yv); memcpy(py + 4, &yw, sizeof yw);          \
            }                                                                        \
            for (int q = 0; q < 4; q++) {                                            \
                double *py = yi + (size_t)(r + q) * bp + g;                          \
                kd_v4 t;                                                             \
                memcpy(&t, py, sizeof t); t += s[2 * q]; memcpy(py, &t, sizeof t);   \
                memcpy(&t, py + 4, sizeof t); t += s[2 * q + 1];                     \
                memcpy(py + 4, &t, sizeof t);                                        \
            }                                                                        \
        }                                                                            \
        for (; g < bp; g += 4) {                                                     \
            kd_v4 x0, x1, x2, x3;                                                    \
            memcpy(&x0, xi + (size_t)r * bp + g, sizeof x0);                         \
            memcpy(&x1, xi + (size_t)(r + 1) * bp + g, sizeof x1);                   \
            memcpy(&x2, xi + (size_t)(r + 2) * bp + g, sizeof x2);                   \
            memcpy(&x3, xi + (size_t)(r + 3) * bp + g, sizeof x3);                   \
            kd_v4 s0 = {0, 0, 0, 0}, s1 = s0, s2 = s0, s3 = s0;                      \
            if (diag) {                                                              \
                kd_v4 *acc[4] = {&s0, &s1, &s2, &s3};                                \
                kd_v4 xr[4] = {x0, x1, x2, x3};                                      \
                for (int p = 0; p < 4; p++) {                                        \
                    *acc[p] += (double)rows[p][r + p] * xr[p];                       \
                    for (int q = p + 1; q < 4; q++) {                                \
                        double v = rows[p][r + q];                                   \
                        *acc[p] += v * xr[q];                                        \
                        *acc[q] += v * xr[p];                                        \
                    }                                                                \
                }                                                                    \
            }                                                                        \
            for (int c = c0; c < n; c++) {                                           \
                double v0 = a0[c], v1 = a1[c], v2 = a2[c], v3 = a3[c];               \
                kd_v4 xv, yv;                                                        \
                memcpy(&xv, xj + (size_t)c * bp + g, sizeof xv);                     \
                memcpy(&yv, yj + (size_t)c * bp + g, sizeof yv);                     \
                s0 += v0 * xv; s1 += v1 * xv; s2 += v2 * xv; s3 += v3 * xv;         \
                yv += v0 * x0 + v1 * x1 + v2 * x2 + v3 * x3;                         \
                memcpy(yj + (size_t)c * bp + g, &yv, sizeof yv);                     \
            }                                                                        \
            kd_v4 t;                                                                 \
            memcpy(&t, yi + (size_t)r * bp + g, sizeof t); t += s0;                  \
            memcpy(yi + (size_t)r * bp + g, &t, sizeof t);                           \
            memcpy(&t, yi + (size_t)(r + 1) * bp + g, sizeof t); t += s1;            \
            memcpy(yi + (size_t)(r + 1) * bp + g, &t, sizeof t);                     \
            memcpy(&t, yi + (size_t)(r + 2) * bp + g, sizeof t); t += s2;            \
            memcpy(yi + (size_t)(r + 2) * bp + g, &t, sizeof t);                     \
            memcpy(&t, yi + (size_t)(r + 3) * bp + g, sizeof t); t += s3;            \
            memcpy(yi + (size_t)(r + 3) * bp + g, &t, sizeof t);                     \
        }                                                                            \
    }                                                                                \
    for (; r < m; r++) {                                                             \
        const T *row = a + (size_t)r * lda;                                          \
        int c0 = diag ? r + 1 : 0;                                                   \
        for (int g = 0; g < bp; g += 4) {                                            \
            kd_v4 x0, s = {0, 0, 0, 0};                                              \
            memcpy(&x0, xi + (size_t)r * bp + g, sizeof x0);                         \
            if (diag) s += (double)row[r] * x0;                                      \
            for (int c = c0; c < n; c++) {                                           \
                double v = row[c];                                                   \
                kd_v4 xv, yv;                                                        \
                memcpy(&xv, xj + (size_t)c * bp + g, sizeof xv);                     \
                memcpy(&yv, yj + (size_t)c * bp + g, sizeof yv);                     \
                s += v * xv;                                                         \
                yv += v * x0;                                                        \
                memcpy(yj + (size_t)c * bp + g, &yv, sizeof yv);                     \
            }                                                                        \
            kd_v4 t;                                                                 \
            memcpy(&t, yi + (size_t)r * bp + g, sizeof t); t += s;                   \
            memcpy(yi + (size_t)r * bp + g, &t, sizeof t);                           \
        }                                                                            \
    }                                                                                \
}                                                                                    \
ATTR void NAME(int m, int t, int tiles, int last, const T *a, long step, int lda,    \
               int bp, const double *xi, const double *xj, double *yi, double *yj,   \
               int diag) {                                                           \
    for (int j = 0; j < tiles; j++) {                                                \
        NAME##_tile(m, j == tiles - 1 ? last : t, a + j * step, lda, bp, xi,          \
                    xj + (size_t)j * t * bp, yi, yj + (size_t)j * t * bp,            \
                    diag && j == 0);                                                 \
    }                                                                                \
}

KD_TSYMM(KD_AVX2, kd_tsymm_f64_avx2, double)
KD_TSYMM(KD_BASE, kd_tsymm_f64_base, double)
KD_TSYMM(KD_AVX2, kd_tsymm_f32_avx2, float)
KD_TSYMM(KD_BASE, kd_tsymm_f32_base, float)

// kd_tsymm runs the row form of KD_TSYMM for float32 (f32 ≠ 0) or float64
// tiles, on the AVX2 build (avx2 ≠ 0) or the baseline.
void kd_tsymm(int avx2, int f32, int m, int t, int tiles, int last, const void *a, long step,
              int lda, int bp, const double *xi, const double *xj, double *yi, double *yj,
              int diag) {
    if (f32 && avx2) {
        kd_tsymm_f32_avx2(m, t, tiles, last, a, step, lda, bp, xi, xj, yi, yj, diag);
    } else if (f32) {
        kd_tsymm_f32_base(m, t, tiles, last, a, step, lda, bp, xi, xj, yi, yj, diag);
    } else if (avx2) {
        kd_tsymm_f64_avx2(m, t, tiles, last, a, step, lda, bp, xi, xj, yi, yj, diag);
    } else {
        kd_tsymm_f64_base(m, t, tiles, last, a, step, lda, bp, xi, xj, yi, yj, diag);
    }
}

// KD_TSYMMT defines the contribution of one tile of a symmetric matrix to
// Y = A·X for a small block of nb vectors held in transposed layout
// (vector g of X_I at xi + g·ldx, of X_J at xj + g·ldx; Y alike with ldy),
// in float64 arithmetic, for the block sizes (2 to 4) where KD_TSYMM's
// row-major block, padded to four columns, wastes its work. The tile is
// m×n, rows of stride lda, element type ETYPE; off the diagonal (diag = 0)
// Y_I += A_IJ·X_J and Y_J += A_IJᵀ·X_I; on it (m = n) only the upper
// triangle is read, each entry above the diagonal used both ways. As
// KD_TSYMV, it runs along the tile's rows: four rows against four columns
// of the tile, loaded once as four vectors, for two vectors of X at a time
// (eight row sums in registers, the entries of X_I broadcast once per row
// group); a third or odd vector goes on its own, with the four rows from
// L1. Columns past the last multiple of four and rows past the last
// multiple of four go one by one. NAME (the row form) adds a row of tiles
// as KD_TSYMM's does (tile j at a + j·step, X_J and Y_J at entry j·t).
// The tile function's vector loops are written out; GCC 12's loop
// vectoriser crashes on its scalar edges (an internal compiler error), so
// it is off for this function only.
#define KD_NO_AUTOVEC __attribute__((optimize("no-tree-loop-vectorize")))
#define KD_PREFETCH_ROWS(p, lda, c)                                                  \
    do {                                                                             \
        __builtin_prefetch((p) + (c), 0, 0);                                         \
        __builtin_prefetch((p) + (lda) + (c), 0, 0);                                 \
        __builtin_prefetch((p) + 2 * (size_t)(lda) + (c), 0, 0);                     \
        __builtin_prefetch((p) + 3 * (size_t)(lda) + (c), 0, 0);                     \
    } while (0)
#define KD_HSUM4(v) ((v)[0] + (v)[1] + (v)[2] + (v)[3])
#define KD_BCAST4(x) ((kd_v4){(x), (x), (x), (x)})
#define KD_TSYMMT(ATTR, NAME, LOAD4, ETYPE, PFMASK)                                          \
ATTR KD_NO_AUTOVEC static void NAME##_tile(int m, int n, const ETYPE *a, int lda, int nb,          \
                             const double *xi, const double *xj, long ldx,           \
                             double *yi, double *yj, long ldy, int diag) {           \
    int r = 0;                                                                       \
    for (; r + 4 <= m; r += 4) {                                                     \
        const ETYPE *a0 = a + (size_t)r * lda, *a1 = a0 + lda, *a2 = a1 + lda,       \
                    *a3 = a2 + lda;                                                  \
        const ETYPE *rows[4] = {a0, a1, a2, a3};                                     \
        const ETYPE *next = r + 12 <= m ? a0 + 8 * (size_t)lda : a0;                 \
        int c0 = diag ? r + 4 : 0;                                                   \
        for (int g = 0; g < nb; g += 2) {                                            \
            int two = g + 1 < nb;                                                    \
            const double *p0 = xi + g * ldx + r, *u0 = xj + g * ldx;                 \
            double *w0 = yj + g * ldy, s[2][4] = {{0, 0, 0, 0}, {0, 0, 0, 0}};       \
            if (diag) {                                                              \
                /* The 4×4 block on the diagonal, upper triangle. */                 \
                for (int v = 0; v < 1 + two; v++) {                                  \
                    const double *pv = p0 + v * ldx;                                 \
                    for (int p = 0; p < 4; p++) {                                    \
                        s[v][p] += (double)rows[p][r + p] * pv[p];                   \
                        for (int q = p + 1; q < 4; q++) {                            \
                            double e = rows[p][r + q];                               \
                            s[v][p] += e * pv[q];                                    \
                            s[v][q] += e * pv[p];                                    \
                        }                                                            \
                    }                                                                \
                }                                                                    \
            }                                                                        \
            int c = c0;                                                              \
            if (two) {                                                               \
                const double *p1 = p0 + ldx, *u1 = u0 + ldx;                         \
                double *w1 = w0 + ldy;                                               \
                kd_v4 b00 = KD_BCAST4(p0[0]), b10 = KD_BCAST4(p0[1]),                \
                      b20 = KD_BCAST4(p0[2]), b30 = KD_BCAST4(p0[3]),                \
                      b01 = KD_BCAST4(p1[0]), b11 = KD_BCAST4(p1[1]),                \
                      b21 = KD_BCAST4(p1[2]), b31 = KD_BCAST4(p1[3]);                \
                kd_v4 z = {0, 0, 0, 0};                                              \
                kd_v4 s00 = z, s10 = z, s20 = z, s30 = z, s01 = z, s11 = z, s21 = z, \
                      s31 = z;                                                       \
                for (; c + 4 <= n; c += 4) {                                         \
                    /* Rows r + 8 … r + 11, a line each, ahead of use. */            \
                    if (g == 0 && (c & (PFMASK)) == 0) KD_PREFETCH_ROWS(next, lda, c);\
                    kd_v4 v0, v1, v2, v3, xv, xw, yv, yw;                            \
                    LOAD4(v0, a0 + c); LOAD4(v1, a1 + c);                            \
                    LOAD4(v2, a2 + c); LOAD4(v3, a3 + c);                            \
                    memcpy(&xv, u0 + c, sizeof xv); memcpy(&xw, u1 + c, sizeof xw);  \
                    s00 += v0 * xv; s10 += v1 * xv; s20 += v2 * xv; s30 += v3 * xv;  \
                    s01 += v0 * xw; s11 += v1 * xw; s21 += v2 * xw; s31 += v3 * xw;  \
                    memcpy(&yv, w0 + c, sizeof yv); memcpy(&yw, w1 + c, sizeof yw);  \
                    yv += v0 * b00 + v1 * b10 + v2 * b20 + v3 * b30;                 \
                    yw += v0 * b01 + v1 * b11 + v2 * b21 + v3 * b31;                 \
                    memcpy(w0 + c, &yv, sizeof yv); memcpy(w1 + c, &yw, sizeof yw);  \
                }                                                                    \
                s[0][0] += KD_HSUM4(s00); s[0][1] += KD_HSUM4(s10);                  \
                s[0][2] += KD_HSUM4(s20); s[0][3] += KD_HSUM4(s30);                  \
                s[1][0] += KD_HSUM4(s01); s[1][1] += KD_HSUM4(s11);                  \
                s[1][2] += KD_HSUM4(s21); s[1][3] += KD_HSUM4(s31);                  \
            } else {                                                                 \
                kd_v4 b0 = KD_BCAST4(p0[0]), b1 = KD_BCAST4(p0[1]),                  \
                      b2 = KD_BCAST4(p0[2]), b3 = KD_BCAST4(p0[3]);                  \
                kd_v4 z = {0, 0, 0, 0};                                              \
                kd_v4 s0 = z, s1 = z, s2 = z, s3 = z;                                \
                for (; c + 4 <= n; c += 4) {                                         \
                    if (g == 0 && (c & (PFMASK)) == 0) KD_PREFETCH_ROWS(next, lda, c);\
                    kd_v4 v0, v1, v2, v3, xv, yv;                                    \
                    LOAD4(v0, a0 + c); LOAD4(v1, a1 + c);                            \
                    LOAD4(v2, a2 + c); LOAD4(v3, a3 + c);                            \
                    memcpy(&xv, u0 + c, sizeof xv);                                  \
                    s0 += v0 * xv; s1 += v1 * xv; s2 += v2 * xv; s3 += v3 * xv;      \
                    memcpy(&yv, w0 + c, sizeof yv);                                  \
                    yv += v0 * b0 + v1 * b1 + v2 * b2 + v3 * b3;                     \
                    memcpy(w0 + c, &yv, sizeof yv);                                  \
                }                                                                    \
                s[0][0] += KD_HSUM4(s0); s[0][1] += KD_HSUM4(s1);                    \
                s[0][2] += KD_HSUM4(s2); s[0][3] += KD_HSUM4(s3);                    \
            }                                                                        \
            for (; c < n; c++) {                                                     \
                for (int v = 0; v < 1 + two; v++) {                                  \
                    const double *pv = p0 + v * ldx;                                 \
                    double xc = xj[(g + v) * ldx + c], acc = 0;                      \
                    for (int p = 0; p < 4; p++) {                                    \
                        double e = rows[p][c];                                       \
                        s[v][p] += e * xc;                                           \
                        acc += e * pv[p];                                            \
                    }                                                                \
                    yj[(g + v) * ldy + c] += acc;                                    \
                }                                                                    \
            }                                                                        \
            for (int v = 0; v < 1 + two; v++)                                        \
                for (int p = 0; p < 4; p++) yi[(g + v) * ldy + r + p] += s[v][p];    \
        }                                                                            \
    }                                                                                \
    for (; r < m; r++) {                                                             \
        const ETYPE *row = a + (size_t)r * lda;                                      \
        int c0 = diag ? r + 1 : 0;                                                   \
        for (int g = 0; g < nb; g++) {                                               \
            double xr = xi[g * ldx + r], acc = diag ? (double)row[r] * xr : 0;       \
            for (int c = c0; c < n; c++) {                                           \
                double e = row[c];                                                   \
                acc += e * xj[g * ldx + c];                                          \
                yj[g * ldy + c] += e * xr;                                           \
            }                                                                        \
            yi[g * ldy + r] += acc;                                                  \
        }                                                                            \
    }                                                                                \
}                                                                                    \
ATTR void NAME(int m, int t, int tiles, int last, const ETYPE *a, long step, int lda, \
               int nb, const double *xi, const double *xj, long ldx, double *yi,     \
               double *yj, long ldy, int diag) {                                     \
    for (int j = 0; j < tiles; j++) {                                                \
        NAME##_tile(m, j == tiles - 1 ? last : t, a + j * step, lda, nb, xi,          \
                    xj + (size_t)j * t, ldx, yi, yj + (size_t)j * t, ldy,            \
                    j == 0 && diag);                                                 \
    }                                                                                \
}

KD_TSYMMT(KD_AVX2, kd_tsymmt_f64_avx2, KD_LOAD4_F64, double, 7)
KD_TSYMMT(KD_BASE, kd_tsymmt_f64_base, KD_LOAD4_F64, double, 7)
KD_TSYMMT(KD_AVX2, kd_tsymmt_f32_avx2, KD_CVT4_AVX2, float, 15)
KD_TSYMMT(KD_BASE, kd_tsymmt_f32_base, KD_CVT4_BASE, float, 15)

// kd_tsymmt runs the row form of KD_TSYMMT for float32 (f32 ≠ 0) or
// float64 tiles, on the AVX2 build (avx2 ≠ 0) or the baseline.
void kd_tsymmt(int avx2, int f32, int m, int t, int tiles, int last, const void *a, long step,
               int lda, int nb, const double *xi, const double *xj, long ldx, double *yi,
               double *yj, long ldy, int diag) {
    if (f32 && avx2) {
        kd_tsymmt_f32_avx2(m, t, tiles, last, a, step, lda, nb, xi, xj, ldx, yi, yj, ldy, diag);
    } else if (f32) {
        kd_tsymmt_f32_base(m, t, tiles, last, a, step, lda, nb, xi, xj, ldx, yi, yj, ldy, diag);
    } else if (avx2) {
        kd_tsymmt_f64_avx2(m, t, tiles, last, a, step, lda, nb, xi, xj, ldx, yi, yj, ldy, diag);
    } else {
        kd_tsymmt_f64_base(m, t, tiles, last, a, step, lda, nb, xi, xj, ldx, yi, yj, ldy, diag);
    }
}

// KD_TSYMMS defines the contribution of one float32 tile of a symmetric
// matrix to Y = A·X in float32 arithmetic: X in float32 (row-major, stride
// bp, a multiple of 8), Y in float64. It is KD_TSYMM's loop (four rows of
// the tile against one column and eight columns of X, the row sums in
// registers) with half the vector instructions per entry and no
// conversion of the tile's entries: 1.4–1.6 times as fast in a C loop over
// the tiles of n = 20 480 on two threads here (b = 8 and 32), 63–68
// against 39–42 GFLOP/s at best. Rounding is kept to short chains: a row's sum
// goes into Y after at most KD_SCHUNK columns, and the column sums Y_J
// collect in ys (float32, n·bp entries, the caller's) for at most
// KD_SCHUNK rows before they are added into Y_J in float64 — every float32
// partial sum has at most KD_SCHUNK products, so each entry of Y is within
// (γ_64 + 2⁻²⁴)·(|A|·|X|) of the product of the stored tile with X (γ_k =
// k·2⁻²⁴/(1 − k·2⁻²⁴); the second term is X's rounding to float32), plus
// the float64 sums. The diagonal tile (diag ≠ 0, m = n) reads its upper
// triangle, each entry above the diagonal both ways.
#define KD_SCHUNK 64
typedef float kd_f8 __attribute__((vector_size(32)));
#define KD_F8_LO(v) __builtin_convertvector(__builtin_shufflevector((v), (v), 0, 1, 2, 3), kd_v4)
#define KD_F8_HI(v) __builtin_convertvector(__builtin_shufflevector((v), (v), 4, 5, 6, 7), kd_v4)
// KD_ADD8 adds the eight floats v into the eight doubles at p.
#define KD_ADD8(p, v)                                                                \
    do {                                                                             \
        kd_v4 lo_, hi_;                                                              \
        memcpy(&lo_, (p), sizeof lo_); memcpy(&hi_, (p) + 4, sizeof hi_);            \
        lo_ += KD_F8_LO(v); hi_ += KD_F8_HI(v);                                      \
        memcpy((p), &lo_, sizeof lo_); memcpy((p) + 4, &hi_, sizeof hi_);            \
    } while (0)
#define KD_TSYMMS(ATTR, NAME)                                                        \
ATTR static void NAME##_flush(int n, int bp, float *ys, double *yj) {                \
    for (size_t k = 0; k < (size_t)n * bp; k += 8) {                                 \
        kd_f8 t;                                                                     \
        memcpy(&t, ys + k, sizeof t);                                                \
        KD_ADD8(yj + k, t);                                                          \
    }                                                                                \
    memset(ys, 0, sizeof(float) * (size_t)n * bp);                                   \
}                                                                                    \
ATTR static void NAME##_tile(int m, int n, const float *a, int lda, int bp,          \
                             const float *xi, const float *xj, double *yi,           \
                             double *yj, float *ys, int diag) {                      \
    int r = 0;                                                                       \
    for (; r + 4 <= m; r += 4) {                                                     \
        if (r > 0 && r % KD_SCHUNK == 0) NAME##_flush(n, bp, ys, yj);                \
        const float *a0 = a + (size_t)r * lda, *a1 = a0 + lda, *a2 = a1 + lda,       \
                    *a3 = a2 + lda;                                                  \
        int c0 = diag ? r + 4 : 0;                                                   \
        for (int g = 0; g < bp; g += 8) {                                            \
            kd_f8 x0, x1, x2, x3;                                                    \
            memcpy(&x0, xi + (size_t)r * bp + g, sizeof x0);                         \
            memcpy(&x1, xi + (size_t)(r + 1) * bp + g, sizeof x1);                   \
            memcpy(&x2, xi + (size_t)(r + 2) * bp + g, sizeof x2);                   \
            memcpy(&x3, xi + (size_t)(r + 3) * bp + g, sizeof x3);                   \
            if (diag) {                                                              \
                /* The 4×4 block on the diagonal, upper triangle. */                 \
                const float *rows[4] = {a0, a1, a2, a3};                             \
                kd_f8 xr[4] = {x0, x1, x2, x3}, d[4];                                \
                for (int p = 0; p < 4; p++) d[p] = rows[p][r + p] * xr[p];           \
                for (int p = 0; p < 4; p++)                                          \
                    for (int q = p + 1; q < 4; q++) {                                \
                        float v = rows[p][r + q];                                    \
                        d[p] += v * xr[q];                                           \
                        d[q] += v * xr[p];                                           \
                    }                                                                \
                for (int p = 0; p < 4; p++) KD_ADD8(yi + (size_t)(r + p) * bp + g, d[p]); \
            }                                                                        \
            for (int c = c0; c < n;) {                                               \
                int ce = c + KD_SCHUNK < n ? c + KD_SCHUNK : n;                      \
                kd_f8 z = {0}, s0 = z, s1 = z, s2 = z, s3 = z;                       \
                /* The same columns of the next four rows (the next    */        \
                /* tile's first ones after the last four), a cache line */        \
                /* at a time: block passes 17 % faster at n = 20 000.  */        \
                for (int p_ = 0; p_ < KD_SCHUNK; p_ += 16) {                         \
                    __builtin_prefetch(a0 + 4 * lda + c + p_);                       \
                    __builtin_prefetch(a1 + 4 * lda + c + p_);                       \
                    __builtin_prefetch(a2 + 4 * lda + c + p_);                       \
                    __builtin_prefetch(a3 + 4 * lda + c + p_);                       \
                }                                                                    \
                for (; c < ce; c++) {                                                \
                    float v0 = a0[c], v1 = a1[c], v2 = a2[c], v3 = a3[c];            \
                    kd_f8 xv, t;                                                     \
                    memcpy(&xv, xj + (size_t)c * bp + g, sizeof xv);                 \
                    s0 += v0 * xv; s1 += v1 * xv; s2 += v2 * xv; s3 += v3 * xv;      \
                    memcpy(&t, ys + (size_t)c * bp + g, sizeof t);                   \
                    t += v0 * x0 + v1 * x1 + v2 * x2 + v3 * x3;                      \
                    memcpy(ys + (size_t)c * bp + g, &t, sizeof t);                   \
                }                                                                    \
                KD_ADD8(yi + (size_t)r * bp + g, s0);                                \
                KD_ADD8(yi + (size_t)(r + 1) * bp + g, s1);                          \
                KD_ADD8(yi + (size_t)(r + 2) * bp + g, s2);                          \
                KD_ADD8(yi + (size_t)(r + 3) * bp + g, s3);                          \
            }                                                                        \
        }                                                                            \
    }                                                                                \
    if (r < m) NAME##_flush(n, bp, ys, yj);                                          \
    for (; r < m; r++) {                                                             \
        const float *row = a + (size_t)r * lda;                                      \
        int c0 = diag ? r + 1 : 0;                                                   \
        for (int g = 0; g < bp; g += 8) {                                            \
            kd_f8 x0;                                                                \
            memcpy(&x0, xi + (size_t)r * bp + g, sizeof x0);                         \
            if (diag) {                                                              \
                kd_f8 d = row[r] * x0;                                               \
                KD_ADD8(yi + (size_t)r * bp + g, d);                                 \
            }                                                                        \
            for (int c = c0; c < n;) {                                               \
                int ce = c + KD_SCHUNK < n ? c + KD_SCHUNK : n;                      \
                kd_f8 s = {0};                                                       \
                for (; c < ce; c++) {                                                \
                    float v = row[c];                                                \
                    kd_f8 xv, t;                                                     \
                    memcpy(&xv, xj + (size_t)c * bp + g, sizeof xv);                 \
                    s += v * xv;                                                     \
                    memcpy(&t, ys + (size_t)c * bp + g, sizeof t);                   \
                    t += v * x0;                                                     \
                    memcpy(ys + (size_t)c * bp + g, &t, sizeof t);                   \
                }                                                                    \
                KD_ADD8(yi + (size_t)r * bp + g, s);                                 \
            }                                                                        \
        }                                                                            \
    }                                                                                \
    NAME##_flush(n, bp, ys, yj);                                                     \
}                                                                                    \
ATTR void NAME(int m, int t, int tiles, int last, const float *a, long step, int lda,\
               int bp, const float *xi, const float *xj, double *yi, double *yj,     \
               float *ys, int diag) {                                                \
    memset(ys, 0, sizeof(float) * (size_t)t * bp);                                   \
    for (int j = 0; j < tiles; j++) {                                                \
        NAME##_tile(m, j == tiles - 1 ? last : t, a + j * step, lda, bp, xi,          \
                    xj + (size_t)j * t * bp, yi, yj + (size_t)j * t * bp, ys,        \
                    diag && !j);                                                     \
    }                                                                                \
}

// The loops are unrolled (GCC's unroll-loops): 69 → 76 GFLOP/s in a C
// loop over tiles on two threads here (n = 20 480, b = 8).
#define KD_UNROLL __attribute__((optimize("unroll-loops")))
KD_TSYMMS(KD_AVX2 KD_UNROLL, kd_tsymms_avx2)
KD_TSYMMS(KD_BASE KD_UNROLL, kd_tsymms_base)

// KD_MT32 defines the two products of a float32 matrix A (m×n, rows of
// stride lda) with blocks of bp float64 vectors held in transposed layout
// (bp rows of stride ld: row g is vector g), bp a multiple of 4, in
// float64 arithmetic:
//   dot:  yt[g][r] += Σ_c a[r][c]·xt[g][c]   (Y = A·X), r < m;
//   axpy: yt[g][c] += Σ_r a[r][c]·xt[g][r]   (Y = Aᵀ·X), c < n.
// Both run along A's contiguous rows: dot keeps two rows and four vectors
// in eight accumulators over c; axpy keeps eight columns and four vectors in
// eight accumulators over r, with X's entries broadcast from memory.
// KD_MT32_ROWS declares the four rows x0…x3 of X and y0…y3 of Y (both
// transposed, strides ldx and ldy) of the vectors g … g+3.
#define KD_MT32_ROWS(g)                                                              \
    const double *x0 = xt + (g) * ldx, *x1 = x0 + ldx, *x2 = x1 + ldx,               \
                 *x3 = x2 + ldx;                                                     \
    double *y0 = yt + (g) * ldy, *y1 = y0 + ldy, *y2 = y1 + ldy, *y3 = y2 + ldy;

#define KD_MT32(ATTR, DOT, AXPY, CVT4)                                               \
ATTR void DOT(int m, int n, const float *a, long lda, int bp, const double *xt,       \
              long ldx, double *yt, long ldy) {                                      \
    for (int g = 0; g < bp; g += 4) {                                                \
        KD_MT32_ROWS(g)                                                              \
        int r = 0;                                                                   \
        for (; r + 2 <= m; r += 2) {                                                 \
            const float *a0 = a + r * lda, *a1 = a0 + lda;                           \
            kd_v4 z = {0, 0, 0, 0};                                                  \
            kd_v4 p00 = z, p01 = z, p02 = z, p03 = z, p10 = z, p11 = z, p12 = z,     \
                  p13 = z;                                                           \
            int c = 0;                                                               \
            for (; c + 4 <= n; c += 4) {                                             \
                kd_v4 v0, v1, w0, w1, w2, w3;                                        \
                CVT4(v0, a0 + c); CVT4(v1, a1 + c);                                  \
                memcpy(&w0, x0 + c, sizeof w0); memcpy(&w1, x1 + c, sizeof w1);     \
                memcpy(&w2, x2 + c, sizeof w2); memcpy(&w3, x3 + c, sizeof w3);     \
                p00 += v0 * w0; p01 += v0 * w1; p02 += v0 * w2; p03 += v0 * w3;     \
                p10 += v1 * w0; p11 += v1 * w1; p12 += v1 * w2; p13 += v1 * w3;     \
            }                                                                        \
            double s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0,    \
                   s13 = 0;                                                          \
            for (; c < n; c++) {                                                     \
                double v0 = a0[c], v1 = a1[c];                                       \
                s00 += v0 * x0[c]; s01 += v0 * x1[c]; s02 += v0 * x2[c];             \
                s03 += v0 * x3[c]; s10 += v1 * x0[c]; s11 += v1 * x1[c];             \
                s12 += v1 * x2[c]; s13 += v1 * x3[c];                                \
            }                                                                        \
            y0[r] += s00 + (p00[0] + p00[1]) + (p00[2] + p00[3]);                    \
            y1[r] += s01 + (p01[0] + p01[1]) + (p01[2] + p01[3]);                    \
            y2[r] += s02 + (p02[0] + p02[1]) + (p02[2] + p02[3]);                    \
            y3[r] += s03 + (p03[0] + p03[1]) + (p03[2] + p03[3]);                    \
            y0[r + 1] += s10 + (p10[0] + p10[1]) + (p10[2] + p10[3]);                \
            y1[r + 1] += s11 + (p11[0] + p11[1]) + (p11[2] + p11[3]);                \
            y2[r + 1] += s12 + (p12[0] + p12[1]) + (p12[2] + p12[3]);                \
            y3[r + 1] += s13 + (p13[0] + p13[1]) + (p13[2] + p13[3]);                \
        }                                                                            \
        for (; r < m; r++) {                                                         \
            const float *a0 = a + r * lda;                                           \
            double s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                   \
            for (int c = 0; c < n; c++) {                                            \
                double v = a0[c];                                                    \
                s0 += v * x0[c]; s1 += v * x1[c]; s2 += v * x2[c]; s3 += v * x3[c]; \
            }                                                                        \
            y0[r] += s0; y1[r] += s1; y2[r] += s2; y3[r] += s3;                      \
        }                                                                            \
    }                                                                                \
}                                                                                    \
ATTR void AXPY(int m, int n, const float *a, long lda, int bp, const double *xt,      \
               long ldx, double *yt, long ldy) {                                     \
    for (int g = 0; g < bp; g += 4) {                                                \
        KD_MT32_ROWS(g)                                                              \
        int c = 0;                                                                   \
        for (; c + 8 <= n; c += 8) {                                                 \
            kd_v4 z = {0, 0, 0, 0};                                                  \
            kd_v4 q00 = z, q01 = z, q10 = z, q11 = z, q20 = z, q21 = z, q30 = z,     \
                  q31 = z;                                                           \
            for (int r = 0; r < m; r++) {                                            \
                const float *ar = a + r * lda + c;                                   \
                kd_v4 v0, v1;                                                        \
                CVT4(v0, ar); CVT4(v1, ar + 4);                                      \
                double b0 = x0[r], b1 = x1[r], b2 = x2[r], b3 = x3[r];               \
                q00 += v0 * b0; q01 += v1 * b0; q10 += v0 * b1; q11 += v1 * b1;     \
                q20 += v0 * b2; q21 += v1 * b2; q30 += v0 * b3; q31 += v1 * b3;     \
            }                                                                        \
            kd_v4 t;                                                                 \
            memcpy(&t, y0 + c, sizeof t); t += q00; memcpy(y0 + c, &t, sizeof t);    \
            memcpy(&t, y0 + c + 4, sizeof t); t += q01; memcpy(y0 + c + 4, &t, sizeof t); \
            memcpy(&t, y1 + c, sizeof t); t += q10; memcpy(y1 + c, &t, sizeof t);    \
            memcpy(&t, y1 + c + 4, sizeof t); t += q11; memcpy(y1 + c + 4, &t, sizeof t); \
            memcpy(&t, y2 + c, sizeof t); t += q20; memcpy(y2 + c, &t, sizeof t);    \
            memcpy(&t, y2 + c + 4, sizeof t); t += q21; memcpy(y2 + c + 4, &t, sizeof t); \
            memcpy(&t, y3 + c, sizeof t); t += q30; memcpy(y3 + c, &t, sizeof t);    \
            memcpy(&t, y3 + c + 4, sizeof t); t += q31; memcpy(y3 + c + 4, &t, sizeof t); \
        }                                                                            \
        for (; c < n; c++) {                                                         \
            double s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                   \
            for (int r = 0; r < m; r++) {                                            \
                double v = a[r * lda + c];                                           \
                s0 += v * x0[r]; s1 += v * x1[r]; s2 += v * x2[r]; s3 += v * x3[r]; \
            }                                                                        \
            y0[c] += s0; y1[c] += s1; y2[c] += s2; y3[c] += s3;                      \
        }                                                                            \
    }                                                                                \
}

KD_MT32(KD_AVX2, kd_mt32_dot_avx2, kd_mt32_axpy_avx2, KD_CVT4_AVX2)
KD_MT32(KD_BASE, kd_mt32_dot_base, kd_mt32_axpy_base, KD_CVT4_BASE)

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
