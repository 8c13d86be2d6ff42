// Products of symmetric matrices held in tiles of one triangle (float64
// and float32 storage), on any x86-64 processor: each compiled for
// AVX2+FMA and for the baseline (SSE2).
#include "kd_simd.h"

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
// of tiles: a call per tile from parallel goroutines was slower (the Go
// scheduler wakes a spinning thread whenever a long C call holds a
// processor) (docs/measurements.md).
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
// conversion of the tile's entries, so faster (docs/measurements.md). Rounding is kept
// to short chains: a row's sum
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
    unsigned csr_ = kd_ftz_begin();                                                  \
    memset(ys, 0, sizeof(float) * (size_t)t * bp);                                   \
    for (int j = 0; j < tiles; j++) {                                                \
        NAME##_tile(m, j == tiles - 1 ? last : t, a + j * step, lda, bp, xi,          \
                    xj + (size_t)j * t * bp, yi, yj + (size_t)j * t * bp, ys,        \
                    diag && !j);                                                     \
    }                                                                                \
    kd_ftz_end(csr_);                                                                \
}

// The loops are unrolled (GCC's unroll-loops), which was faster (docs/measurements.md).
#define KD_UNROLL __attribute__((optimize("unroll-loops")))
KD_TSYMMS(KD_AVX2 KD_UNROLL, kd_tsymms_avx2)
KD_TSYMMS(KD_BASE KD_UNROLL, kd_tsymms_base)
