// AVX-512 forms of three half-storage kernels of maps.c: the block kernels
// KD_TSYMM (float64 arithmetic) and KD_TSYMMS (float32 arithmetic) and the
// one-vector kernel on float32 tiles (kd_tsymv_avx2). The same loops and,
// up to the width of the vectors, the same order of operations per entry
// of Y (but for KD_TSYMMS with blocks of 8, which pairs columns and keeps
// only the rounding bound), on 512-bit registers: eight columns of X fill one register of
// doubles, so a step of four tile rows against one tile column takes eight
// FMAs where the AVX2 form takes sixteen. Whether they are faster depends
// on the processor (some run 512-bit operations as two halves); which form
// runs is a written rule of package paths (Paths.WideSymm, WideSingle and
// WideSymv; docs/paths.md),
// never a timing. The tile functions' prologues repeat maps.c's on
// purpose: the two files are the two register widths of one loop.
#include <string.h>
#include <stddef.h>

#include "kd_simd.h"

typedef double kd_w8 __attribute__((vector_size(64)));
typedef float kd_s16 __attribute__((vector_size(64)));
typedef float kd_s8 __attribute__((vector_size(32)));

#define KD_W512 __attribute__((target("avx512f,avx512vl,avx512dq,fma"), optimize("unroll-loops")))

int kd_has_avx512vl(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma");
}

typedef double kd_w4 __attribute__((vector_size(32)));

#define KD_LD8(dst, p) memcpy(&(dst), (p), sizeof(kd_w8))
#define KD_ST8(p, v) memcpy((p), &(v), sizeof(kd_w8))
#define KD_LD4(dst, p) memcpy(&(dst), (p), sizeof(kd_w4))
#define KD_ST4(p, v) memcpy((p), &(v), sizeof(kd_w4))

// KD_WGROUP is one group of columns of X (g onwards, as many as the vector
// type VT holds doubles) against four tile rows r … r+3: the diagonal 4×4
// block when diag, then every tile column from c0; the row sums go into
// Y_I at the end. The first group asks for the next four rows' line every
// cache line of the tile (one thread 27–35 → 19–26 ms a pass of 8 vectors on the
// n = 7000 float64 matrix, two 16–20 → 13–15 ms; 16 rows ahead into L2 as
// well was no faster: docs/measurements.md).
#define KD_WGROUP(VT)                                                                \
    {                                                                                \
        const double *x0 = xi + (size_t)r * bp + g;                                  \
        VT xr[4], s[4];                                                              \
        for (int q = 0; q < 4; q++) {                                                \
            memcpy(&xr[q], x0 + (size_t)q * bp, sizeof(VT));                         \
            s[q] = (VT){0};                                                          \
        }                                                                            \
        if (diag) {                                                                  \
            for (int p = 0; p < 4; p++) {                                            \
                s[p] += (double)rows[p][r + p] * xr[p];                              \
                for (int q = p + 1; q < 4; q++) {                                    \
                    double v = rows[p][r + q];                                       \
                    s[p] += v * xr[q];                                               \
                    s[q] += v * xr[p];                                               \
                }                                                                    \
            }                                                                        \
        }                                                                            \
        VT s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3];                               \
        VT t0 = xr[0], t1 = xr[1], t2 = xr[2], t3 = xr[3];                           \
        for (int c = c0; c < n; c++) {                                               \
            if (g == 0 && ((c - c0) & (64 / (int)sizeof *a0 - 1)) == 0) {             \
                __builtin_prefetch(a0 + 4 * (size_t)lda + c);                        \
                __builtin_prefetch(a1 + 4 * (size_t)lda + c);                        \
                __builtin_prefetch(a2 + 4 * (size_t)lda + c);                        \
                __builtin_prefetch(a3 + 4 * (size_t)lda + c);                        \
            }                                                                        \
            double v0 = a0[c], v1 = a1[c], v2 = a2[c], v3 = a3[c];                   \
            double *py = yj + (size_t)c * bp + g;                                    \
            VT xv, yv;                                                               \
            memcpy(&xv, xj + (size_t)c * bp + g, sizeof xv);                         \
            memcpy(&yv, py, sizeof yv);                                              \
            s0 += v0 * xv; s1 += v1 * xv; s2 += v2 * xv; s3 += v3 * xv;              \
            yv += v0 * t0; yv += v1 * t1; yv += v2 * t2; yv += v3 * t3;              \
            memcpy(py, &yv, sizeof yv);                                              \
        }                                                                            \
        VT sq[4] = {s0, s1, s2, s3};                                                 \
        for (int q = 0; q < 4; q++) {                                                \
            double *py = yi + (size_t)(r + q) * bp + g;                              \
            VT t;                                                                    \
            memcpy(&t, py, sizeof t); t += sq[q]; memcpy(py, &t, sizeof t);          \
        }                                                                            \
    }

// KD_TSYMMW is KD_TSYMM (maps.c) for bp a multiple of 4: Y_I += A_IJ·X_J
// and Y_J += A_IJᵀ·X_I in float64 arithmetic, four tile rows against one
// tile column and eight columns of X (one register; a last group of four
// in 256-bit registers), the four rows of X_I and their four row sums in
// registers (the single rows past the last multiple of four go four
// columns at a time); the diagonal tile (diag ≠ 0, m = n)
// reads its upper triangle, each entry above the diagonal both ways.
#define KD_TSYMMW(NAME, T)                                                           \
KD_W512 static void NAME##_tile(int m, int n, const T *a, int lda, int bp,           \
                                const double *xi, const double *xj, double *yi,      \
                                double *yj, int diag) {                              \
    int r = 0;                                                                       \
    for (; r + 4 <= m; r += 4) {                                                     \
        const T *a0 = a + (size_t)r * lda, *a1 = a0 + lda, *a2 = a1 + lda,           \
                *a3 = a2 + lda;                                                      \
        const T *rows[4] = {a0, a1, a2, a3};                                         \
        int c0 = diag ? r + 4 : 0;                                                   \
        int g = 0;                                                                   \
        for (; g + 8 <= bp; g += 8) KD_WGROUP(kd_w8)                              \
        /* A last group of four columns: 256-bit registers. */                       \
        if (g < bp) KD_WGROUP(kd_w4)                                              \
    }                                                                                \
    for (; r < m; r++) {                                                             \
        const T *row = a + (size_t)r * lda;                                          \
        int c0 = diag ? r + 1 : 0;                                                   \
        for (int g = 0; g < bp; g += 4) {                                            \
            kd_w4 x0, s = {0};                                                       \
            KD_LD4(x0, xi + (size_t)r * bp + g);                                     \
            if (diag) s += (double)row[r] * x0;                                      \
            for (int c = c0; c < n; c++) {                                           \
                double v = row[c];                                                   \
                kd_w4 xv, yv;                                                        \
                KD_LD4(xv, xj + (size_t)c * bp + g);                                 \
                KD_LD4(yv, yj + (size_t)c * bp + g);                                 \
                s += v * xv;                                                         \
                yv += v * x0;                                                        \
                KD_ST4(yj + (size_t)c * bp + g, yv);                                 \
            }                                                                        \
            kd_w4 t;                                                                 \
            KD_LD4(t, yi + (size_t)r * bp + g); t += s;                              \
            KD_ST4(yi + (size_t)r * bp + g, t);                                      \
        }                                                                            \
    }                                                                                \
}                                                                                    \
KD_W512 void NAME(int m, int t, int tiles, int last, const T *a, long step, int lda, \
                  int bp, const double *xi, const double *xj, double *yi,            \
                  double *yj, int diag) {                                            \
    for (int j = 0; j < tiles; j++) {                                                \
        NAME##_tile(m, j == tiles - 1 ? last : t, a + j * step, lda, bp, xi,          \
                    xj + (size_t)j * t * bp, yi, yj + (size_t)j * t * bp,            \
                    diag && j == 0);                                                 \
    }                                                                                \
}

KD_TSYMMW(kd_tsymm_f64_avx512, double)
KD_TSYMMW(kd_tsymm_f32_avx512, float)

// kd_tsymm_avx512 runs KD_TSYMMW for float32 (f32 ≠ 0) or float64 tiles;
// bp must be a multiple of 4.
void kd_tsymm_avx512(int f32, int m, int t, int tiles, int last, const void *a, long step, int lda,
                     int bp, const double *xi, const double *xj, double *yi, double *yj, int diag) {
    if (f32) {
        kd_tsymm_f32_avx512(m, t, tiles, last, a, step, lda, bp, xi, xj, yi, yj, diag);
    } else {
        kd_tsymm_f64_avx512(m, t, tiles, last, a, step, lda, bp, xi, xj, yi, yj, diag);
    }
}

// The float32-arithmetic kernel (KD_TSYMMS in maps.c) on 512-bit
// registers, within its rounding bound: a row sum goes into Y (float64)
// after at most KD_WCHUNK columns, the column sums collect in ys (float32)
// for at most KD_WCHUNK rows. For bp a multiple of 16, sixteen columns of X
// fill a register, in maps.c's order. For bp = 8 a register holds two
// columns of X_J, interleaved (kd_tsymms8_tile below).
#define KD_WCHUNK 64
#define KD_ADD16W(p, v)                                                              \
    do {                                                                             \
        kd_w8 lo_, hi_;                                                              \
        KD_LD8(lo_, (p)); KD_LD8(hi_, (p) + 8);                                      \
        lo_ += __builtin_convertvector(__builtin_shufflevector((v), (v), 0, 1, 2, 3, 4, 5, 6, 7), kd_w8); \
        hi_ += __builtin_convertvector(__builtin_shufflevector((v), (v), 8, 9, 10, 11, 12, 13, 14, 15), kd_w8); \
        KD_ST8((p), lo_); KD_ST8((p) + 8, hi_);                                      \
    } while (0)
#define KD_ADD8W(p, v)                                                               \
    do {                                                                             \
        kd_w8 lo_;                                                                   \
        KD_LD8(lo_, (p));                                                            \
        lo_ += __builtin_convertvector((v), kd_w8);                                  \
        KD_ST8((p), lo_);                                                            \
    } while (0)
// The low and high halves of a 16-float register, and the pair (x, y) of
// 8-float registers as one.
#define KD_LO8(v) __builtin_shufflevector((v), (v), 0, 1, 2, 3, 4, 5, 6, 7)
#define KD_HI8(v) __builtin_shufflevector((v), (v), 8, 9, 10, 11, 12, 13, 14, 15)
#define KD_JOIN(x, y) __builtin_shufflevector((x), (y), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
// Entries k and k + 1 of v, each on eight lanes.
#define KD_PAIR(v, k) __builtin_shufflevector((v), (v), k, k, k, k, k, k, k, k,   \
                                              k + 1, k + 1, k + 1, k + 1, k + 1, k + 1, k + 1, k + 1)

KD_W512 static void kd_wflush(int n, int bp, float *ys, double *yj) {
    size_t k = 0, all = (size_t)n * bp;
    for (; k + 16 <= all; k += 16) {
        kd_s16 t;
        memcpy(&t, ys + k, sizeof t);
        KD_ADD16W(yj + k, t);
    }
    for (; k < all; k += 8) {
        kd_s8 t;
        memcpy(&t, ys + k, sizeof t);
        KD_ADD8W(yj + k, t);
    }
    memset(ys, 0, sizeof(float) * all);
}

// The 4×4 block on the diagonal (upper triangle), for eight columns g … g+7
// of X: added straight into Y_I.
KD_W512 static void kd_wdiag4(const float *a, int lda, int r, int bp, int g, const float *xi,
                              double *yi) {
    const float *rows[4] = {a + (size_t)r * lda, a + (size_t)(r + 1) * lda,
                            a + (size_t)(r + 2) * lda, a + (size_t)(r + 3) * lda};
    kd_s8 xr[4], d[4];
    for (int p = 0; p < 4; p++) memcpy(&xr[p], xi + (size_t)(r + p) * bp + g, sizeof xr[p]);
    for (int p = 0; p < 4; p++) d[p] = rows[p][r + p] * xr[p];
    for (int p = 0; p < 4; p++)
        for (int q = p + 1; q < 4; q++) {
            float v = rows[p][r + q];
            d[p] += v * xr[q];
            d[q] += v * xr[p];
        }
    for (int p = 0; p < 4; p++) KD_ADD8W(yi + (size_t)(r + p) * bp + g, d[p]);
}

// One row r past the last multiple of four (or any single row): eight
// columns g … g+7 at a time, chunks of KD_WCHUNK columns.
KD_W512 static void kd_wrow1(const float *row, int r, int n, int bp, const float *xi,
                             const float *xj, double *yi, float *ys, int diag) {
    int c0 = diag ? r + 1 : 0;
    for (int g = 0; g < bp; g += 8) {
        kd_s8 x0;
        memcpy(&x0, xi + (size_t)r * bp + g, sizeof x0);
        if (diag) {
            kd_s8 d = row[r] * x0;
            KD_ADD8W(yi + (size_t)r * bp + g, d);
        }
        for (int c = c0; c < n;) {
            int ce = c + KD_WCHUNK < n ? c + KD_WCHUNK : n;
            kd_s8 s = {0};
            for (; c < ce; c++) {
                float v = row[c];
                kd_s8 xv, t;
                memcpy(&xv, xj + (size_t)c * bp + g, sizeof xv);
                s += v * xv;
                memcpy(&t, ys + (size_t)c * bp + g, sizeof t);
                t += v * x0;
                memcpy(ys + (size_t)c * bp + g, &t, sizeof t);
            }
            KD_ADD8W(yi + (size_t)r * bp + g, s);
        }
    }
}

#define KD_WPREFETCH(a0, a1, a2, a3, lda, c)                                         \
    for (int p_ = 0; p_ < KD_WCHUNK; p_ += 16) {                                     \
        __builtin_prefetch((a0) + 4 * (size_t)(lda) + (c) + p_);                     \
        __builtin_prefetch((a1) + 4 * (size_t)(lda) + (c) + p_);                     \
        __builtin_prefetch((a2) + 4 * (size_t)(lda) + (c) + p_);                     \
        __builtin_prefetch((a3) + 4 * (size_t)(lda) + (c) + p_);                     \
    }

// The same lines KD_FAR rows further on, into L2 only: with the float32
// pair kernel's arithmetic at about half the time of reading its tiles, the
// near prefetch alone left one thread at 8.4 GB/s against 13–16 GB/s for a
// plain read of the same tiles in the same order; this one brings it to
// 10 GB/s (docs/measurements.md).
#define KD_FAR 16
#define KD_WPREFETCH_FAR(a0, a1, a2, a3, lda, c)                                     \
    for (int p_ = 0; p_ < KD_WCHUNK; p_ += 16) {                                     \
        __builtin_prefetch((a0) + KD_FAR * (size_t)(lda) + (c) + p_, 0, 2);          \
        __builtin_prefetch((a1) + KD_FAR * (size_t)(lda) + (c) + p_, 0, 2);          \
        __builtin_prefetch((a2) + KD_FAR * (size_t)(lda) + (c) + p_, 0, 2);          \
        __builtin_prefetch((a3) + KD_FAR * (size_t)(lda) + (c) + p_, 0, 2);          \
    }

// bp a multiple of 16.
KD_W512 static void kd_tsymms16_tile(int m, int n, const float *a, int lda, int bp,
                                     const float *xi, const float *xj, double *yi,
                                     double *yj, float *ys, int diag) {
    int r = 0;
    for (; r + 4 <= m; r += 4) {
        if (r > 0 && r % KD_WCHUNK == 0) kd_wflush(n, bp, ys, yj);
        const float *a0 = a + (size_t)r * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
        int c0 = diag ? r + 4 : 0;
        for (int g = 0; g < bp; g += 16) {
            kd_s16 x0, x1, x2, x3;
            memcpy(&x0, xi + (size_t)r * bp + g, sizeof x0);
            memcpy(&x1, xi + (size_t)(r + 1) * bp + g, sizeof x1);
            memcpy(&x2, xi + (size_t)(r + 2) * bp + g, sizeof x2);
            memcpy(&x3, xi + (size_t)(r + 3) * bp + g, sizeof x3);
            if (diag) {
                kd_wdiag4(a, lda, r, bp, g, xi, yi);
                kd_wdiag4(a, lda, r, bp, g + 8, xi, yi);
            }
            for (int c = c0; c < n;) {
                int ce = c + KD_WCHUNK < n ? c + KD_WCHUNK : n;
                kd_s16 z = {0}, s0 = z, s1 = z, s2 = z, s3 = z;
                if (g == 0) KD_WPREFETCH(a0, a1, a2, a3, lda, c);
                for (; c < ce; c++) {
                    float v0 = a0[c], v1 = a1[c], v2 = a2[c], v3 = a3[c];
                    kd_s16 xv, t;
                    memcpy(&xv, xj + (size_t)c * bp + g, sizeof xv);
                    s0 += v0 * xv; s1 += v1 * xv; s2 += v2 * xv; s3 += v3 * xv;
                    memcpy(&t, ys + (size_t)c * bp + g, sizeof t);
                    t += v0 * x0 + v1 * x1 + v2 * x2 + v3 * x3;
                    memcpy(ys + (size_t)c * bp + g, &t, sizeof t);
                }
                KD_ADD16W(yi + (size_t)r * bp + g, s0);
                KD_ADD16W(yi + (size_t)(r + 1) * bp + g, s1);
                KD_ADD16W(yi + (size_t)(r + 2) * bp + g, s2);
                KD_ADD16W(yi + (size_t)(r + 3) * bp + g, s3);
            }
        }
    }
    if (r < m) kd_wflush(n, bp, ys, yj);
    for (; r < m; r++) kd_wrow1(a + (size_t)r * lda, r, n, bp, xi, xj, yi, ys, diag);
    kd_wflush(n, bp, ys, yj);
}

// bp = 8 by column pairs: a register holds columns c and c + 1 of X_J
// (and of ys) interleaved, lane 2q + h being component q of column c + h,
// so the tile entries a[c] and a[c+1] reach every pair of lanes by one
// 64-bit broadcast load (no shuffle); X_I's rows are held with each
// component twice. A row's sums keep the even and the odd columns apart
// in the two lanes of a pair (added at the end of a chunk). xs is the
// tile's X_J interleaved (n rounded up to even, the missing column zero).
#define KD_BPAIR(p) ({ double d_; memcpy(&d_, (p), sizeof d_); kd_w8 b_ = {d_, d_, d_, d_, d_, d_, d_, d_}; (kd_s16)b_; })
#define KD_DUP(x) __builtin_shufflevector((x), (x), 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7)
#define KD_EVEN(v) __builtin_shufflevector((v), (v), 0, 2, 4, 6, 8, 10, 12, 14)
#define KD_ODD(v) __builtin_shufflevector((v), (v), 1, 3, 5, 7, 9, 11, 13, 15)

KD_W512 static void kd_pairs_in(int n, const float *xj, float *xs) {
    for (int c = 0; c < n; c += 2) {
        kd_s8 e, o = {0};
        memcpy(&e, xj + (size_t)c * 8, sizeof e);
        if (c + 1 < n) memcpy(&o, xj + (size_t)(c + 1) * 8, sizeof o);
        kd_s16 p = __builtin_shufflevector(e, o, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
        memcpy(xs + (size_t)c * 8, &p, sizeof p);
    }
}

KD_W512 static void kd_pairs_flush(int n, float *ys, double *yj) {
    for (int c = 0; c < n; c += 2) {
        kd_s16 t;
        memcpy(&t, ys + (size_t)c * 8, sizeof t);
        KD_ADD8W(yj + (size_t)c * 8, KD_EVEN(t));
        if (c + 1 < n) KD_ADD8W(yj + (size_t)(c + 1) * 8, KD_ODD(t));
    }
    memset(ys, 0, sizeof(float) * (size_t)((n + 1) & ~1) * 8);
}

// The pair of entries (lo, hi) on every pair of lanes.
KD_W512 static inline kd_s16 kd_pair_of(float lo, float hi) {
    kd_s16 v = {lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi};
    return v;
}

// One row r (any row): columns c0 … n − 1 by pairs, chunks of KD_WCHUNK
// columns; a column without its partner (c0 odd, or n odd) is paired
// with zero.
KD_W512 static void kd_prow1(const float *row, int r, int n, const float *xi, const float *xs,
                             double *yi, float *ys, int diag) {
    int c0 = diag ? r + 1 : 0;
    kd_s8 x0;
    memcpy(&x0, xi + (size_t)r * 8, sizeof x0);
    kd_s16 w0 = KD_DUP(x0);
    if (diag) {
        kd_s8 d = row[r] * x0;
        KD_ADD8W(yi + (size_t)r * 8, d);
    }
    for (int c = c0 & ~1; c < n;) {
        int ce = c + KD_WCHUNK < n ? c + KD_WCHUNK : n;
        kd_s16 s = {0};
        for (; c < ce; c += 2) {
            kd_s16 v = kd_pair_of(c < c0 ? 0 : row[c], c + 1 < n ? row[c + 1] : 0), xv, t;
            memcpy(&xv, xs + (size_t)c * 8, sizeof xv);
            s += v * xv;
            memcpy(&t, ys + (size_t)c * 8, sizeof t);
            t += v * w0;
            memcpy(ys + (size_t)c * 8, &t, sizeof t);
        }
        KD_ADD8W(yi + (size_t)r * 8, KD_EVEN(s) + KD_ODD(s));
    }
}

KD_W512 static void kd_tsymms8_tile(int m, int n, const float *a, int lda, const float *xi,
                                    const float *xj, double *yi, double *yj, float *ys,
                                    int diag) {
    float *xs = ys + (size_t)((n + 1) & ~1) * 8;
    kd_pairs_in(n, xj, xs);
    int r = 0;
    for (; r + 4 <= m; r += 4) {
        if (r > 0 && r % KD_WCHUNK == 0) kd_pairs_flush(n, ys, yj);
        const float *a0 = a + (size_t)r * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
        int c0 = diag ? r + 4 : 0;
        kd_s8 x0, x1, x2, x3;
        memcpy(&x0, xi + (size_t)r * 8, sizeof x0);
        memcpy(&x1, xi + (size_t)(r + 1) * 8, sizeof x1);
        memcpy(&x2, xi + (size_t)(r + 2) * 8, sizeof x2);
        memcpy(&x3, xi + (size_t)(r + 3) * 8, sizeof x3);
        kd_s16 w0 = KD_DUP(x0), w1 = KD_DUP(x1), w2 = KD_DUP(x2), w3 = KD_DUP(x3);
        if (diag) kd_wdiag4(a, lda, r, 8, 0, xi, yi);
        for (int c = c0; c < n;) {
            int ce = c + KD_WCHUNK < n ? c + KD_WCHUNK : n;
            kd_s16 z = {0}, s0 = z, s1 = z, s2 = z, s3 = z;
            KD_WPREFETCH(a0, a1, a2, a3, lda, c);
            KD_WPREFETCH_FAR(a0, a1, a2, a3, lda, c);
#define KD_PSTEP(v0, v1, v2, v3, k)                                                  \
            {                                                                        \
                kd_s16 xv, t;                                                        \
                memcpy(&xv, xs + (size_t)(c + k) * 8, sizeof xv);                    \
                s0 += v0 * xv; s1 += v1 * xv; s2 += v2 * xv; s3 += v3 * xv;          \
                memcpy(&t, ys + (size_t)(c + k) * 8, sizeof t);                      \
                t += v0 * w0; t += v1 * w1; t += v2 * w2; t += v3 * w3;              \
                memcpy(ys + (size_t)(c + k) * 8, &t, sizeof t);                      \
            }
#define KD_PSTEPM(k) KD_PSTEP(KD_BPAIR(a0 + c + k), KD_BPAIR(a1 + c + k), KD_BPAIR(a2 + c + k), KD_BPAIR(a3 + c + k), k)
            for (; c + 16 <= ce; c += 16) {
                KD_PSTEPM(0) KD_PSTEPM(2) KD_PSTEPM(4) KD_PSTEPM(6)
                KD_PSTEPM(8) KD_PSTEPM(10) KD_PSTEPM(12) KD_PSTEPM(14)
            }
            for (; c + 2 <= ce; c += 2) KD_PSTEPM(0)
            if (c < ce) { // n odd: the last column, paired with zero
                kd_s16 v0 = kd_pair_of(a0[c], 0), v1 = kd_pair_of(a1[c], 0),
                       v2 = kd_pair_of(a2[c], 0), v3 = kd_pair_of(a3[c], 0);
                KD_PSTEP(v0, v1, v2, v3, 0)
                c++;
            }
#undef KD_PSTEPM
#undef KD_PSTEP
            KD_ADD8W(yi + (size_t)r * 8, KD_EVEN(s0) + KD_ODD(s0));
            KD_ADD8W(yi + (size_t)(r + 1) * 8, KD_EVEN(s1) + KD_ODD(s1));
            KD_ADD8W(yi + (size_t)(r + 2) * 8, KD_EVEN(s2) + KD_ODD(s2));
            KD_ADD8W(yi + (size_t)(r + 3) * 8, KD_EVEN(s3) + KD_ODD(s3));
        }
    }
    if (r < m) kd_pairs_flush(n, ys, yj);
    for (; r < m; r++) kd_prow1(a + (size_t)r * lda, r, n, xi, xs, yi, ys, diag);
    kd_pairs_flush(n, ys, yj);
}

// kd_tsymms_avx512 is the row form (maps.c's kd_tsymms_avx2) for bp = 8
// or a multiple of 16.
KD_W512 void kd_tsymms_avx512(int m, int t, int tiles, int last, const float *a, long step,
                              int lda, int bp, const float *xi, const float *xj, double *yi,
                              double *yj, float *ys, int diag) {
    unsigned csr = kd_ftz_begin(); // kd_simd.h
    memset(ys, 0, sizeof(float) * (size_t)(bp == 8 ? (t + 1) & ~1 : t) * bp);
    for (int j = 0; j < tiles; j++) {
        int n = j == tiles - 1 ? last : t;
        const float *aj = a + j * step, *xjj = xj + (size_t)j * t * bp;
        double *yjj = yj + (size_t)j * t * bp;
        if (bp == 8) {
            kd_tsymms8_tile(m, n, aj, lda, xi, xjj, yi, yjj, ys, diag && !j);
        } else {
            kd_tsymms16_tile(m, n, aj, lda, bp, xi, xjj, yi, yjj, ys, diag && !j);
        }
    }
    kd_ftz_end(csr);
}

// kd_tsymv_avx512 is maps.c's kd_tsymv_avx2 (one vector against a row of
// float32 tiles, float64 arithmetic) on 512-bit registers: eight entries
// of four tile rows widened and multiplied at a time. t must be a multiple
// of 8.
KD_W512 static void kd_tsymv512_tile(int t, const float *a, const double *xi, const double *xj,
                                     double *yi, double *yj, int offdiag) {
    for (int r = 0; r < t; r += 4) {
        const float *row0 = a + (size_t)r * t;
        kd_w8 acc0 = {0}, acc1 = acc0, acc2 = acc0, acc3 = acc0;
        kd_w8 b0 = acc0 + xi[r], b1 = acc0 + xi[r + 1], b2 = acc0 + xi[r + 2],
              b3 = acc0 + xi[r + 3];
        const float *next = row0 + (r + 12 < t ? 12 * t : 0);
        for (int c = 0; c < t; c += 8) {
            if ((c & 15) == 0) {
                __builtin_prefetch(next + c, 0, 0);
                __builtin_prefetch(next + t + c, 0, 0);
                __builtin_prefetch(next + 2 * t + c, 0, 0);
                __builtin_prefetch(next + 3 * t + c, 0, 0);
            }
            kd_s8 f0, f1, f2, f3;
            memcpy(&f0, row0 + c, sizeof f0);
            memcpy(&f1, row0 + t + c, sizeof f1);
            memcpy(&f2, row0 + 2 * t + c, sizeof f2);
            memcpy(&f3, row0 + 3 * t + c, sizeof f3);
            kd_w8 v0 = __builtin_convertvector(f0, kd_w8), v1 = __builtin_convertvector(f1, kd_w8),
                  v2 = __builtin_convertvector(f2, kd_w8), v3 = __builtin_convertvector(f3, kd_w8);
            kd_w8 xv;
            KD_LD8(xv, xj + c);
            acc0 += v0 * xv; acc1 += v1 * xv; acc2 += v2 * xv; acc3 += v3 * xv;
            if (offdiag) {
                kd_w8 yv;
                KD_LD8(yv, yj + c);
                yv += v0 * b0 + v1 * b1 + v2 * b2 + v3 * b3;
                KD_ST8(yj + c, yv);
            }
        }
        kd_w8 acc[4] = {acc0, acc1, acc2, acc3};
        for (int q = 0; q < 4; q++) {
            kd_w8 v = acc[q];
            yi[r + q] += ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
        }
    }
}

KD_W512 void kd_tsymv_avx512(int t, int tiles, const float *a, const double *xi, const double *xj,
                             double *yi, double *yj, int diag) {
    for (int j = 0; j < tiles; j++) {
        kd_tsymv512_tile(t, a + (size_t)j * t * t, xi, xj + (size_t)j * t, yi, yj + (size_t)j * t,
                         !(diag && j == 0));
    }
}

#define KD_AX_FMA(v) do { __m512d b_ = _mm512_set1_pd(x##v[r]);          \
        l##v = _mm512_fmadd_pd(lo, b_, l##v); h##v = _mm512_fmadd_pd(hi, b_, h##v); } while (0)

// kd_mt32_rows_avx512 adds Aᵀ·X to Y like kd_mt32_axpy_avx2 (products32.c: a
// float32 A, m×n, and bp float64 vectors in transposed layout), for an A
// read in place with a wide row stride (the stored Fᵀ of a feature map:
// rows of n points): blocks of KD_RW_R rows pass along sixteen columns at
// a time, so each row is read as one contiguous run of columns, and Y's
// sixteen-column strips (eight vectors at a time, four for the last group
// when bp mod 8 is 4) are loaded before and stored after each block of
// rows. Each entry of Y is one FMA chain over r = 0 … m − 1 that starts
// from its value on entry (on Y = 0, kd_mt32_axpy_avx2's values). Columns
// past the last multiple of sixteen take the same chain in scalar FMAs.
// Each block first prefetches its rows KD_RW_PF columns ahead: sixteen
// rows a page apart defeat the hardware prefetchers (without it the loads
// of A stalled, at a third of the rate of memory; docs/measurements.md).
#define KD_RW_R 16
#define KD_RW_PF 128
#define KD_RW_LOAD(v) __m512d l##v = _mm512_loadu_pd(yt + (size_t)(g + v) * ldy + c),                 \
                              h##v = _mm512_loadu_pd(yt + (size_t)(g + v) * ldy + c + 8)
// KD_RW_WIDEN loads sixteen floats of row r at column c, widened to
// doubles in lo (columns c … c+7) and hi (c+8 … c+15).
#define KD_RW_WIDEN(r)                                                                                 \
    __m512 f = _mm512_loadu_ps(a + (size_t)(r) * lda + c);                                            \
    __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(f));                                          \
    __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(f), 1)))
#define KD_RW_STORE(v) do { _mm512_storeu_pd(yt + (size_t)(g + v) * ldy + c, l##v);                    \
                            _mm512_storeu_pd(yt + (size_t)(g + v) * ldy + c + 8, h##v); } while (0)

KD_W512 void kd_mt32_rows_avx512(int m, int n, const float *a, long lda, int bp, const double *xt, long ldx,
                                 double *yt, long ldy) {
    int n16 = n / 16 * 16;
    for (int r0 = 0; r0 < m; r0 += KD_RW_R) {
        int r1 = r0 + KD_RW_R < m ? r0 + KD_RW_R : m;
        for (int c = 0; c < n16; c += 16) {
            for (int r = r0; r < r1; r++) _mm_prefetch((const char *)(a + (size_t)r * lda + c + KD_RW_PF), _MM_HINT_T0);
            for (int g = 0; g < bp;) {
                const double *x0 = xt + (size_t)g * ldx, *x1 = x0 + ldx, *x2 = x1 + ldx, *x3 = x2 + ldx;
                if (bp - g >= 8) {
                    const double *x4 = x3 + ldx, *x5 = x4 + ldx, *x6 = x5 + ldx, *x7 = x6 + ldx;
                    KD_RW_LOAD(0); KD_RW_LOAD(1); KD_RW_LOAD(2); KD_RW_LOAD(3);
                    KD_RW_LOAD(4); KD_RW_LOAD(5); KD_RW_LOAD(6); KD_RW_LOAD(7);
                    for (int r = r0; r < r1; r++) {
                        KD_RW_WIDEN(r);
                        KD_AX_FMA(0); KD_AX_FMA(1); KD_AX_FMA(2); KD_AX_FMA(3);
                        KD_AX_FMA(4); KD_AX_FMA(5); KD_AX_FMA(6); KD_AX_FMA(7);
                    }
                    KD_RW_STORE(0); KD_RW_STORE(1); KD_RW_STORE(2); KD_RW_STORE(3);
                    KD_RW_STORE(4); KD_RW_STORE(5); KD_RW_STORE(6); KD_RW_STORE(7);
                    g += 8;
                    continue;
                }
                KD_RW_LOAD(0); KD_RW_LOAD(1); KD_RW_LOAD(2); KD_RW_LOAD(3);
                for (int r = r0; r < r1; r++) {
                    KD_RW_WIDEN(r);
                    KD_AX_FMA(0); KD_AX_FMA(1); KD_AX_FMA(2); KD_AX_FMA(3);
                }
                KD_RW_STORE(0); KD_RW_STORE(1); KD_RW_STORE(2); KD_RW_STORE(3);
                g += 4;
            }
        }
        for (int c = n16; c < n; c++)
            for (int g = 0; g < bp; g++) {
                double *y = yt + (size_t)g * ldy + c;
                const double *x = xt + (size_t)g * ldx;
                double s = *y;
                for (int r = r0; r < r1; r++) s = __builtin_fma((double)a[(size_t)r * lda + c], x[r], s);
                *y = s;
            }
    }
}
