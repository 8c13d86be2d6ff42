// C = A·Bᵀ for float32 matrices whose rows hold the summation index
// contiguously (A: m rows, B: n rows, both of depth d): the float32 inner
// products of a Nyström fit's landmarks with a chunk of points, before the
// kernel's map. A is packed once into panels of 16 rows over the whole
// depth (kd_syrk32_pack's layout: panel q holds, for each depth index p,
// the 16 values A[16q + r][p]); a task packs a block of 48 rows of B (three
// panels over a depth block of at most kc) and computes every row of A
// against it in tiles of 8 rows × 48 columns, 24 accumulators of 16 floats
// (kd_tile32.h). Each entry is the sum over the depth in order,
// one float32 rounding per multiply-add (fused in the AVX-512 form), values
// below 2⁻¹²⁶ flushed to zero, depth blocks after the first added to the
// entry: the same bits whatever thread computes the block.
#include "kd_tile32.h"

KD_TILE32(KD_S512, kd_tile32_avx512)
KD_TILE32(, kd_tile32_base)

void kd_syrk32_pack_avx512(int k, int kc, const float *a, long lda, int q0, int q1, const double *shift,
                           double *sums, float *pk);
void kd_syrk32_pack_base(int k, int kc, const float *a, long lda, int q0, int q1, const double *shift,
                         double *sums, float *pk);

// kd_gemm32_tiles sets (first) or adds to c[i·ldc + j] for i < m, j < cols
// (≤ 48) the products of the A rows with the block's B rows over the depth
// block [p0, p0 + kc): pa holds A's panels over the whole depth d, pb the
// block's three panels over the depth block.
#define KD_GEMM32_TILES(ATTR, NAME, TILE)                                               \
static ATTR void NAME(int m, int d, const float *pa, const float *pb, int kc, int p0, int cols, float *c, \
                      long ldc, int first) {                                            \
    unsigned csr = kd_ftz_begin();                                                      \
    const float *b0 = pb, *b1 = b0 + KD_PANEL(kc), *b2 = b1 + KD_PANEL(kc);             \
    for (int i = 0; i < m; i += 8)                                                      \
        TILE(pa + (size_t)(i / 16) * KD_PANEL(d) + 16 * (size_t)p0 + (i % 16), b0, b1, b2, kc, \
             c + (size_t)i * ldc, ldc, m - i < 8 ? m - i : 8, cols, first);             \
    kd_ftz_end(csr);                                                                    \
}

KD_GEMM32_TILES(KD_S512, kd_gemm32_tiles_avx512, kd_tile32_avx512)
KD_GEMM32_TILES(, kd_gemm32_tiles_base, kd_tile32_base)

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
    float *pb = j->scratch + (size_t)me * 3 * KD_PANEL(j->kc);
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
    pthread_t *tid;
    int started = kd_threads_start(&tid, threads, kd_gemm_work, &j);
    kd_gemm_work(&j);
    kd_threads_join(tid, started);
}
