// The chunk kernel of a product with F_cᵀF_c that never forms it: for a
// chunk of w points of a float32 feature matrix stored transposed (f: r
// rows, one feature each, of stride ldf; the chunk's w columns), first
// copied into buf (r×w, contiguous: in place the rows lie ldf floats
// apart, a page each at large n, and the first phase would visit every
// one of them for each group of points), centred on the way when mean is
// not NULL (each value (float)((double)f − μ_e), rounded once), then
//   z    = Fᵀ_chunk·X   (w×bp: z[j][c] = Σ_e f[e][j]·x[e][c]),
//   part += F_chunk·z   (r×bp: part[e][c] += Σ_j f[e][j]·z[j][c]),
// X r×bp row-major, bp a multiple of 16 (at most 32), in float32
// arithmetic with MXCSR's flush-to-zero bits set for the call (kd_ftz_begin:
// a subnormal product would take a microcode assist). The first phase
// keeps eight points × bp columns in accumulators over the r features, X's
// row loaded once per feature and the eight entries of f broadcast; the
// second four features × bp columns over the chunk's points, z's row (in
// L1) loaded once per point. The chunk's r×w entries are read twice, the
// second time from cache when the chunk fits (w = 128 points, 1 MB at
// r = 2000). Compiled for AVX-512, AVX2+FMA and the baseline from one
// loop (GCC vector extensions: 16 floats a vector).
#include "kd_simd.h"

// KD_OUTER_PF is how many rows ahead the centring copy asks for the chunk's
// lines: each row's w floats lie ldf apart from the next row's (a page
// apart at large n), too many streams for the hardware prefetcher, so
// without it the copy waited on one row's misses at a time (3 GB/s; 6 GB/s
// with four rows ahead into L1: docs/measurements.md).
#define KD_OUTER_PF 4

typedef float kd_o16 __attribute__((vector_size(64)));
typedef float kd_o8 __attribute__((vector_size(32)));
typedef double kd_od8 __attribute__((vector_size(64)));

#define KD_O512 __attribute__((target("avx512f,avx512vl,fma"), optimize("unroll-loops")))

#define KD_OUTER32(ATTR, NAME)                                                          \
ATTR static inline __attribute__((always_inline)) void NAME##_q(int r, int w, const float *f, long ldf, int q, const float *x,   \
                          float *z, float *part) {                                      \
    const int bp = 16 * q;                                                              \
    int j = 0;                                                                          \
    for (; j + 8 <= w; j += 8) {                                                        \
        kd_o16 a[8][2];                                                                 \
        for (int p = 0; p < 8; p++) for (int h = 0; h < q; h++) a[p][h] = (kd_o16){0};  \
        for (int e = 0; e < r; e++) {                                                   \
            const float *fe = f + (long)e * ldf + j;                                    \
            kd_o16 xv[2];                                                               \
            for (int h = 0; h < q; h++) memcpy(&xv[h], x + (long)e * bp + 16 * h, 64);  \
            for (int p = 0; p < 8; p++) {                                               \
                float s = fe[p];                                                        \
                for (int h = 0; h < q; h++) a[p][h] += s * xv[h];                       \
            }                                                                           \
        }                                                                               \
        for (int p = 0; p < 8; p++)                                                     \
            for (int h = 0; h < q; h++) memcpy(z + (long)(j + p) * bp + 16 * h, &a[p][h], 64); \
    }                                                                                   \
    for (; j < w; j++) {                                                                \
        kd_o16 a[2] = {{0}, {0}};                                                       \
        for (int e = 0; e < r; e++) {                                                   \
            kd_o16 xv[2];                                                               \
            for (int h = 0; h < q; h++) memcpy(&xv[h], x + (long)e * bp + 16 * h, 64);  \
            float s = f[(long)e * ldf + j];                                             \
            for (int h = 0; h < q; h++) a[h] += s * xv[h];                              \
        }                                                                               \
        for (int h = 0; h < q; h++) memcpy(z + (long)j * bp + 16 * h, &a[h], 64);       \
    }                                                                                   \
    int e = 0;                                                                          \
    for (; e + 4 <= r; e += 4) {                                                        \
        kd_o16 a[4][2];                                                                 \
        for (int p = 0; p < 4; p++)                                                     \
            for (int h = 0; h < q; h++) memcpy(&a[p][h], part + (long)(e + p) * bp + 16 * h, 64); \
        const float *f0 = f + (long)e * ldf, *f1 = f0 + ldf, *f2 = f1 + ldf, *f3 = f2 + ldf; \
        for (int jj = 0; jj < w; jj++) {                                                \
            kd_o16 zv[2];                                                               \
            for (int h = 0; h < q; h++) memcpy(&zv[h], z + (long)jj * bp + 16 * h, 64); \
            float s0 = f0[jj], s1 = f1[jj], s2 = f2[jj], s3 = f3[jj];                   \
            for (int h = 0; h < q; h++) {                                               \
                a[0][h] += s0 * zv[h]; a[1][h] += s1 * zv[h];                           \
                a[2][h] += s2 * zv[h]; a[3][h] += s3 * zv[h];                           \
            }                                                                           \
        }                                                                               \
        for (int p = 0; p < 4; p++)                                                     \
            for (int h = 0; h < q; h++) memcpy(part + (long)(e + p) * bp + 16 * h, &a[p][h], 64); \
    }                                                                                   \
    for (; e < r; e++) {                                                                \
        kd_o16 a[2];                                                                    \
        for (int h = 0; h < q; h++) memcpy(&a[h], part + (long)e * bp + 16 * h, 64);    \
        const float *f0 = f + (long)e * ldf;                                            \
        for (int jj = 0; jj < w; jj++) {                                                \
            kd_o16 zv[2];                                                               \
            for (int h = 0; h < q; h++) memcpy(&zv[h], z + (long)jj * bp + 16 * h, 64); \
            for (int h = 0; h < q; h++) a[h] += f0[jj] * zv[h];                         \
        }                                                                               \
        for (int h = 0; h < q; h++) memcpy(part + (long)e * bp + 16 * h, &a[h], 64);    \
    }                                                                                   \
}                                                                                       \
ATTR void NAME(int r, int w, const float *f, long ldf, const double *mean, float *buf,     \
               int bp, const float *x, float *z, float *part) {                         \
    for (int e = 0; e < r; e++) {                                                       \
        const float *src = f + (long)e * ldf;                                           \
        float *dst = buf + (long)e * w;                                                 \
        if (e + KD_OUTER_PF < r)                                                        \
            for (int k = 0; k < w; k += 16)                                             \
                __builtin_prefetch(src + KD_OUTER_PF * ldf + k, 0, 3);                  \
        if (!mean) { memcpy(dst, src, (size_t)w * sizeof(float)); continue; }           \
        const double mu = mean[e];                                                      \
        int j = 0;                                                                      \
        for (; j + 8 <= w; j += 8) {                                                    \
            kd_o8 v; memcpy(&v, src + j, 32);                                           \
            kd_od8 d = __builtin_convertvector(v, kd_od8) - mu;                         \
            v = __builtin_convertvector(d, kd_o8); memcpy(dst + j, &v, 32);             \
        }                                                                               \
        for (; j < w; j++) dst[j] = (float)((double)src[j] - mu);                       \
    }                                                                                   \
    unsigned csr = kd_ftz_begin();                                                      \
    if (bp == 16) NAME##_q(r, w, buf, w, 1, x, z, part);                                \
    else NAME##_q(r, w, buf, w, 2, x, z, part);                                         \
    kd_ftz_end(csr);                                                                    \
}

KD_OUTER32(KD_O512, kd_outer32_avx512)
KD_OUTER32(KD_AVX2, kd_outer32_avx2)
KD_OUTER32(KD_BASE, kd_outer32_base)
