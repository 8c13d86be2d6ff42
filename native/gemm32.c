// C = A·Bᵀ for float32 matrices whose rows hold the summation index
// contiguously (A: m rows, B: n rows, both of depth d): the float32 inner
// products of a Nyström fit's landmarks with a chunk of points, before the
// kernel's map. A is packed once into panels of 16 rows over the whole
// depth (kd_syrk32_pack's layout: panel q holds, for each depth index p,
// the 16 values A[16q + r][p]); a task packs a block of 48 rows of B (three
// panels over a depth block of at most kc) and computes every row of A
// against it in tiles of 8 rows × 48 columns, 24 accumulators of 16 floats
// (kd_syrk32_tiles's loop). Each entry is the sum over the depth in order,
// one float32 rounding per multiply-add (fused in the AVX-512 form), values
// below 2⁻¹²⁶ flushed to zero, depth blocks after the first added to the
// entry: the same bits whatever thread computes the block.
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "kd_simd.h"

typedef float kd_g16 __attribute__((vector_size(64)));

#define KD_G512 __attribute__((target("avx512f,fma")))
#define KD_GPANEL(kc) ((size_t)(kc) * 16 + 16)

void kd_syrk32_pack_avx512(int k, int kc, const float *a, long lda, int q0, int q1, const double *shift,
                           double *sums, float *pk);
void kd_syrk32_pack_base(int k, int kc, const float *a, long lda, int q0, int q1, const double *shift,
                         double *sums, float *pk);

// kd_gemm32_tiles sets (first) or adds to c[i·ldc + j] for i < m, j < cols
// (≤ 48) the products of the A rows with the block's B rows over the depth
// block [p0, p0 + kc): pa holds A's panels over the whole depth d, pb the
// block's three panels over the depth block.
#define KD_GEMM32_TILES(ATTR, NAME)                                                     \
ATTR void NAME(int m, int d, const float *pa, const float *pb, int kc, int p0, int cols, float *c, \
               long ldc, int first) {                                                   \
    unsigned csr = kd_ftz_begin();                                                      \
    const float *b0 = pb, *b1 = b0 + KD_GPANEL(kc), *b2 = b1 + KD_GPANEL(kc);           \
    for (int i = 0; i < m; i += 8) {                                                    \
        const float *ap = pa + (size_t)(i / 16) * KD_GPANEL(d) + 16 * (size_t)p0 + (i % 16); \
        kd_g16 s00 = {0}, s01 = {0}, s02 = {0}, s10 = {0}, s11 = {0}, s12 = {0};        \
        kd_g16 s20 = {0}, s21 = {0}, s22 = {0}, s30 = {0}, s31 = {0}, s32 = {0};        \
        kd_g16 s40 = {0}, s41 = {0}, s42 = {0}, s50 = {0}, s51 = {0}, s52 = {0};        \
        kd_g16 s60 = {0}, s61 = {0}, s62 = {0}, s70 = {0}, s71 = {0}, s72 = {0};        \
        for (int p = 0; p < kc; p++) {                                                  \
            kd_g16 x0, x1, x2;                                                          \
            memcpy(&x0, b0 + 16 * p, 64);                                               \
            memcpy(&x1, b1 + 16 * p, 64);                                               \
            memcpy(&x2, b2 + 16 * p, 64);                                               \
            const float *ar = ap + 16 * (size_t)p;                                      \
            s00 += ar[0] * x0; s01 += ar[0] * x1; s02 += ar[0] * x2;                    \
            s10 += ar[1] * x0; s11 += ar[1] * x1; s12 += ar[1] * x2;                    \
            s20 += ar[2] * x0; s21 += ar[2] * x1; s22 += ar[2] * x2;                    \
            s30 += ar[3] * x0; s31 += ar[3] * x1; s32 += ar[3] * x2;                    \
            s40 += ar[4] * x0; s41 += ar[4] * x1; s42 += ar[4] * x2;                    \
            s50 += ar[5] * x0; s51 += ar[5] * x1; s52 += ar[5] * x2;                    \
            s60 += ar[6] * x0; s61 += ar[6] * x1; s62 += ar[6] * x2;                    \
            s70 += ar[7] * x0; s71 += ar[7] * x1; s72 += ar[7] * x2;                    \
        }                                                                               \
        kd_g16 acc[8][3] = {{s00, s01, s02}, {s10, s11, s12}, {s20, s21, s22},          \
                            {s30, s31, s32}, {s40, s41, s42}, {s50, s51, s52},          \
                            {s60, s61, s62}, {s70, s71, s72}};                          \
        int rows = m - i < 8 ? m - i : 8;                                               \
        for (int r = 0; r < rows; r++) {                                                \
            float *cr = c + (size_t)(i + r) * ldc;                                      \
            for (int v = 0; v < 3; v++) {                                               \
                int n = cols - 16 * v;                                                  \
                if (n <= 0) break;                                                      \
                if (n > 16) n = 16;                                                     \
                float *dst = cr + 16 * v;                                               \
                if (n == 16) {                                                          \
                    kd_g16 o = acc[r][v];                                               \
                    if (!first) {                                                       \
                        kd_g16 old;                                                     \
                        memcpy(&old, dst, 64);                                          \
                        o += old;                                                       \
                    }                                                                   \
                    memcpy(dst, &o, 64);                                                \
                } else if (first) {                                                     \
                    for (int l = 0; l < n; l++) dst[l] = acc[r][v][l];                  \
                } else {                                                                \
                    for (int l = 0; l < n; l++) dst[l] += acc[r][v][l];                 \
                }                                                                       \
            }                                                                           \
        }                                                                               \
    }                                                                                   \
    kd_ftz_end(csr);                                                                    \
}

KD_GEMM32_TILES(KD_G512, kd_gemm32_tiles_avx512)
KD_GEMM32_TILES(, kd_gemm32_tiles_base)

// kd_gemm32_block computes columns [j0, j0 + cols) of C (cols ≤ 48): the
// block's B rows packed into pb depth block by depth block, then the tiles.
static void kd_gemm32_block(int wide, int m, int d, int kc, const float *pa, const float *b, long ldb, int j0, int cols,
                     float *pb, float *c, long ldc) {
    for (int p0 = 0; p0 < d; p0 += kc) {
        int w = d - p0 < kc ? d - p0 : kc;
        const float *src = b + (size_t)j0 * ldb + p0;
        if (wide) {
            kd_syrk32_pack_avx512(cols, w, src, ldb, 0, 3, NULL, NULL, pb);
            kd_gemm32_tiles_avx512(m, d, pa, pb, w, p0, cols, c + j0, ldc, p0 == 0);
        } else {
            kd_syrk32_pack_base(cols, w, src, ldb, 0, 3, NULL, NULL, pb);
            kd_gemm32_tiles_base(m, d, pa, pb, w, p0, cols, c + j0, ldc, p0 == 0);
        }
    }
}

typedef struct {
    int wide, m, n, d, kc;
    const float *pa, *b;
    long ldb, ldc;
    float *c, *scratch;
    int next, ids;
} kd_gemm_job;

static void *kd_gemm_work(void *arg) {
    kd_gemm_job *j = arg;
    int me = __atomic_fetch_add(&j->ids, 1, __ATOMIC_RELAXED);
    float *pb = j->scratch + (size_t)me * 3 * KD_GPANEL(j->kc);
    for (;;) {
        int j0 = 48 * __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (j0 >= j->n) break;
        int cols = j->n - j0 < 48 ? j->n - j0 : 48;
        kd_gemm32_block(j->wide, j->m, j->d, j->kc, j->pa, j->b, j->ldb, j0, cols, pb, j->c, j->ldc);
    }
    return NULL;
}

// kd_gemm32_run sets C (m×n, stride ldc) to A·Bᵀ: pa A packed over the
// whole depth d, B's n rows of stride ldb from b, blocks of 48 columns
// claimed from a shared counter by threads threads — the calling one and
// threads − 1 it starts and joins (fewer where the system refuses one or
// the memory for their handles) — each packing its block into its own
// part of scratch (threads·3 panels over depth blocks of kc).
void kd_gemm32_run(int wide, int threads, int m, int n, int d, int kc, const float *pa, const float *b, long ldb,
                   float *scratch, float *c, long ldc) {
    kd_gemm_job j = {.wide = wide, .m = m, .n = n, .d = d, .kc = kc, .pa = pa, .b = b, .ldb = ldb, .ldc = ldc,
                     .c = c, .scratch = scratch};
    if (threads < 1) threads = 1;
    pthread_t *tid = threads > 1 ? malloc(sizeof(pthread_t) * (size_t)(threads - 1)) : NULL;
    int started = 0;
    for (int t = 0; tid && t < threads - 1; t++) {
        if (pthread_create(&tid[t], NULL, kd_gemm_work, &j) != 0) break;
        started++;
    }
    kd_gemm_work(&j);
    for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
    free(tid);
}
