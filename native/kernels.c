// Small C kernels, used where they were measured faster than the OpenBLAS
// build at hand (see kernels.go).
#include <string.h>
#include <stddef.h>

#include "kd_exp.h" // kd_v8, kd_exp8

#define KD_MR 4
#define KD_NR 4
#define KD_W 8

#define KD_LOAD_D(dst, src) memcpy(&(dst), (src), sizeof(kd_v8))
#define KD_LOAD_F(dst, src) do { kd_f8 f_; memcpy(&f_, (src), sizeof f_); \
                                 (dst) = __builtin_convertvector(f_, kd_v8); } while (0)

// KD_DOT_NT defines NAME, which sets out[i*ldo + j] = Σ_k a[i*lda + k]·b[j*ldb + k]
// for i < m, j < n: out = A·Bᵀ for row-major A (m×d, element type TA, read
// with LOADA into float64 lanes) and B (n×d, float64), whose rows are
// contiguous in k. A 4×4 block of dot products is kept in sixteen 8-wide
// accumulators (24 of the 32 zmm registers with the loads); every product
// and sum is in float64.
#define KD_DOT_NT(NAME, TA, LOADA)                                                  \
__attribute__((target("avx512f,fma")))                                             \
void NAME(int m, int n, int d, const TA *a, int lda, const double *b, int ldb,      \
          double *out, int ldo) {                                                   \
    for (int i = 0; i < m; i += KD_MR) {                                           \
        int mr = m - i < KD_MR ? m - i : KD_MR;                                    \
        for (int j = 0; j < n; j += KD_NR) {                                       \
            int nr = n - j < KD_NR ? n - j : KD_NR;                                \
            if (mr == KD_MR && nr == KD_NR) {                                      \
                kd_v8 acc[KD_MR][KD_NR];                                           \
                memset(acc, 0, sizeof acc);                                        \
                int k = 0;                                                         \
                for (; k + KD_W <= d; k += KD_W) {                                 \
                    kd_v8 av[KD_MR], bv[KD_NR];                                    \
                    for (int r = 0; r < KD_MR; r++)                                \
                        LOADA(av[r], a + (size_t)(i + r) * lda + k);               \
                    for (int c = 0; c < KD_NR; c++)                                \
                        KD_LOAD_D(bv[c], b + (size_t)(j + c) * ldb + k);           \
                    for (int r = 0; r < KD_MR; r++)                                \
                        for (int c = 0; c < KD_NR; c++)                            \
                            acc[r][c] += av[r] * bv[c];                            \
                }                                                                  \
                for (int r = 0; r < KD_MR; r++) {                                  \
                    const TA *x = a + (size_t)(i + r) * lda;                       \
                    for (int c = 0; c < KD_NR; c++) {                              \
                        const double *y = b + (size_t)(j + c) * ldb;               \
                        double s = 0;                                              \
                        for (int l = 0; l < KD_W; l++) s += acc[r][c][l];          \
                        for (int kk = k; kk < d; kk++) s += (double)x[kk] * y[kk]; \
                        out[(size_t)(i + r) * ldo + j + c] = s;                    \
                    }                                                              \
                }                                                                  \
                continue;                                                          \
            }                                                                      \
            /* Edge block: one row of A at a time against nr ≤ 4 rows of B. */     \
            for (int r = 0; r < mr; r++) {                                         \
                const TA *x = a + (size_t)(i + r) * lda;                           \
                kd_v8 v[KD_NR];                                                    \
                memset(v, 0, sizeof v);                                            \
                int k = 0;                                                         \
                for (; k + KD_W <= d; k += KD_W) {                                 \
                    kd_v8 p;                                                       \
                    LOADA(p, x + k);                                               \
                    for (int c = 0; c < nr; c++) {                                 \
                        kd_v8 q;                                                   \
                        KD_LOAD_D(q, b + (size_t)(j + c) * ldb + k);               \
                        v[c] += p * q;                                             \
                    }                                                              \
                }                                                                  \
                for (int c = 0; c < nr; c++) {                                     \
                    const double *y = b + (size_t)(j + c) * ldb;                   \
                    double s = 0;                                                  \
                    for (int l = 0; l < KD_W; l++) s += v[c][l];                   \
                    for (int kk = k; kk < d; kk++) s += (double)x[kk] * y[kk];     \
                    out[(size_t)(i + r) * ldo + j + c] = s;                        \
                }                                                                  \
            }                                                                      \
        }                                                                          \
    }                                                                              \
}

typedef float kd_f8 __attribute__((vector_size(32)));

KD_DOT_NT(kd_dgemm_nt_avx512, double, KD_LOAD_D)
KD_DOT_NT(kd_sdot_nt_avx512, float, KD_LOAD_F)

int kd_has_avx512(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
}

// kd_rbf_tile maps a tile of inner products g = out[i·ldo + j] (i < m,
// j < n) to exp(c·δ) with δ = max(ni[i] + nj[j] − 2g, 0) (Gaussian) or
// δ = √max(…) (laplace ≠ 0). c ≤ 0.
__attribute__((target("avx512f,fma")))
void kd_rbf_tile(int m, int n, double *out, int ldo, const double *ni, const double *nj,
                 double c, int laplace) {
    for (int i = 0; i < m; i++) {
        double *row = out + (size_t)i * ldo;
        int j = 0;
        for (; j + 8 <= n; j += 8) {
            kd_v8 g, y;
            memcpy(&g, row + j, sizeof g);
            memcpy(&y, nj + j, sizeof y);
            // δ ≥ 0 by vmaxpd (its second operand, +0, for a NaN or ±0
            // first one, as d > 0 ? d : 0): a loop over the lanes of a
            // vector type compiles to an extract and an insert a lane.
            __m512d d = _mm512_max_pd((__m512d)(ni[i] + y - 2.0 * g), _mm512_setzero_pd());
            if (laplace) d = _mm512_sqrt_pd(d);
            kd_v8 e = kd_exp8(c * (kd_v8)d);
            memcpy(row + j, &e, sizeof e);
        }
        if (j < n) {
            kd_v8 d = {0};
            int rest = n - j;
            for (int l = 0; l < rest; l++) {
                double v = ni[i] + nj[j + l] - 2.0 * row[j + l];
                v = v > 0 ? v : 0;
                d[l] = laplace ? __builtin_sqrt(v) : v;
            }
            kd_v8 e = kd_exp8(c * d);
            for (int l = 0; l < rest; l++) row[j + l] = e[l];
        }
    }
}

// KD_SYMV_BAND defines the band kernel of y = A·x for a symmetric A of
// which only the upper triangle is read: rows [i0, i1) contribute
// s_i = Σ_{j≥i} a_ij x_j to y_i and a_ij·x_i to y_j (j > i). Each matrix
// entry is loaded once and used twice, so a pass reads n²/2 entries instead
// of n². y is the caller's private accumulator for this band (zeroed by the
// caller); the bands' accumulators are summed afterwards. Eight rows go
// together so that each load and store of y serves eight matrix rows.
#define KD_SR 8
#define KD_SYMV_BAND(NAME, T, LOADA)                                              \
__attribute__((target("avx512f,fma")))                                           \
void NAME(int n, const T *a, int lda, const double *x, int i0, int i1, double *y) { \
    int i = i0;                                                                  \
    for (; i + KD_SR <= i1; i += KD_SR) {                                        \
        const T *rows[KD_SR];                                                    \
        double s[KD_SR];                                                         \
        kd_v8 acc[KD_SR], xb[KD_SR];                                             \
        for (int r = 0; r < KD_SR; r++) {                                        \
            rows[r] = a + (size_t)(i + r) * lda;                                 \
            s[r] = 0;                                                            \
            for (int l = 0; l < 8; l++) { acc[r][l] = 0; xb[r][l] = x[i + r]; }  \
        }                                                                        \
        for (int r = 0; r < KD_SR; r++)                                          \
            for (int c = r; c < KD_SR; c++) {                                    \
                double v = (double)rows[r][i + c];                               \
                s[r] += v * x[i + c];                                            \
                if (c != r) y[i + c] += v * x[i + r];                            \
            }                                                                    \
        int j = i + KD_SR;                                                       \
        for (; j + 8 <= n; j += 8) {                                             \
            kd_v8 xv, yv;                                                        \
            memcpy(&xv, x + j, sizeof xv);                                       \
            memcpy(&yv, y + j, sizeof yv);                                       \
            for (int r = 0; r < KD_SR; r++) {                                    \
                kd_v8 v;                                                         \
                LOADA(v, rows[r] + j);                                           \
                acc[r] += v * xv;                                                \
                yv += v * xb[r];                                                 \
            }                                                                    \
            memcpy(y + j, &yv, sizeof yv);                                       \
        }                                                                        \
        for (int r = 0; r < KD_SR; r++)                                          \
            for (int l = 0; l < 8; l++) s[r] += acc[r][l];                       \
        for (; j < n; j++) {                                                     \
            double yj = 0;                                                       \
            for (int r = 0; r < KD_SR; r++) {                                    \
                double v = rows[r][j];                                           \
                s[r] += v * x[j];                                                \
                yj += v * x[i + r];                                              \
            }                                                                    \
            y[j] += yj;                                                          \
        }                                                                        \
        for (int r = 0; r < KD_SR; r++) y[i + r] += s[r];                        \
    }                                                                            \
    for (; i < i1; i++) {                                                        \
        const T *row = a + (size_t)i * lda;                                      \
        double s = (double)row[i] * x[i];                                        \
        for (int j = i + 1; j < n; j++) {                                        \
            double v = row[j];                                                   \
            s += v * x[j];                                                       \
            y[j] += v * x[i];                                                    \
        }                                                                        \
        y[i] += s;                                                               \
    }                                                                            \
}

KD_SYMV_BAND(kd_dsymv_band_avx512, double, KD_LOAD_D)
KD_SYMV_BAND(kd_ssymv_band_avx512, float, KD_LOAD_F)
