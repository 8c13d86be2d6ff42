// Products with a float32 matrix stored transposed (Fᵀ·W, F·x) on any
// x86-64 processor: compiled for AVX2+FMA and for the baseline (SSE2).
#include "kd_simd.h"


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
