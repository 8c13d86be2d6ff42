// The upper triangle of A·Aᵀ for a float32 matrix A of k rows (one
// feature each) over a block of kc points, for C_c·C_cᵀ of a Nyström
// fit: the rows' values of the block are packed into panels of 16 rows,
// point by point (panel q: for each point p the 16 values A[16q + r][p],
// 64 bytes), then tiles of 8 rows × 48 columns (three panels) are computed
// with 24 accumulators of 16 floats: per point, the three column panels'
// 64-byte lines are loaded and each of the 8 rows' values is broadcast
// against them (24 fused multiply-adds for 3 loads and 8 broadcasts). A
// tile's entries are sums over the block's points in point order, one
// rounding per addition (float32 arithmetic, flush-to-zero as in
// kd_ftz_begin), then stored (first block) or added to C (later blocks):
// each entry of C the same sum of the same roundings whatever thread
// computes its tile. Compiled for AVX-512 and for the baseline from one
// loop (GCC vector extensions: 16 floats a vector).
#include <immintrin.h>
#include <sched.h>
#include <string.h>
#include "kd_tile32.h"

KD_TILE32(KD_S512, kd_tile32_avx512)
KD_TILE32(, kd_tile32_base)

// kd_syrk32_pack writes panels [q0, q1) of the block: panel q holds, for
// p < kc, the value of row 16q + r at point p at pk[(q·kc + p)·16 + r] —
// 0 for rows r ≥ k. a points at the block's first point of row 0; rows
// lie lda floats apart. When shift is not NULL each value is row i's
// a − shift[i] computed in double and rounded once to float, and sums[i]
// gains those rounded values in double, point by point in order (the
// block's points after those of earlier calls).
static inline void kd_pack_square(const float *a, long lda, int r0, int rows, int p0, int np,
                                  const double *shift, double *sums, float *dst) {
    float t[16][16];
    for (int r = 0; r < 16; r++) {
        const float *src = a + (size_t)(r0 + r) * lda + p0;
        double sum = r < rows && sums ? sums[r0 + r] : 0.0;
        for (int p = 0; p < 16; p++) {
            float v = 0.0f;
            if (r < rows && p < np) {
                v = shift ? (float)((double)src[p] - shift[r0 + r]) : src[p];
                sum += (double)v;
            }
            t[p][r] = v;
        }
        if (r < rows && sums) sums[r0 + r] = sum;
    }
    memcpy(dst + (size_t)p0 * 16, t, sizeof(float) * 16 * (size_t)np);
}

void kd_syrk32_pack_base(int k, int kc, const float *a, long lda, int q0, int q1, const double *shift,
                         double *sums, float *pk) {
    for (int q = q0; q < q1; q++) {
        float *dst = pk + (size_t)q * KD_PANEL(kc);
        int r0 = 16 * q, rows = k - r0 < 16 ? k - r0 : 16;
        if (rows <= 0) {
            memset(dst, 0, sizeof(float) * (size_t)kc * 16);
            continue;
        }
        for (int p0 = 0; p0 < kc; p0 += 16)
            kd_pack_square(a, lda, r0, rows, p0, kc - p0 < 16 ? kc - p0 : 16, shift, sums, dst);
    }
}

// kd_syrk32_pack_avx512 is kd_syrk32_pack with each 16×16 square of a
// full panel transposed in registers (unpacks and lane shuffles), then
// shifted and summed 16 rows at a time (two vectors of doubles: for each
// point in order, the same operations per row as the loop); the last
// points of the block and a panel with rows ≥ k go through the loop.
KD_S512 void kd_syrk32_pack_avx512(int k, int kc, const float *a, long lda, int q0, int q1, const double *shift,
                                   double *sums, float *pk) {
    for (int q = q0; q < q1; q++) {
        if (16 * q + 16 > k) {
            kd_syrk32_pack_base(k, kc, a, lda, q, q + 1, shift, sums, pk);
            continue;
        }
        float *dst = pk + (size_t)q * KD_PANEL(kc);
        __m512d slo = _mm512_setzero_pd(), shi = slo, tlo = slo, thi = slo;
        if (shift) {
            slo = _mm512_loadu_pd(shift + 16 * q);
            shi = _mm512_loadu_pd(shift + 16 * q + 8);
            tlo = _mm512_loadu_pd(sums + 16 * q);
            thi = _mm512_loadu_pd(sums + 16 * q + 8);
        }
        int p0 = 0;
        for (; p0 + 16 <= kc; p0 += 16) {
            __m512 v[16], t[16];
            for (int r = 0; r < 16; r++) v[r] = _mm512_loadu_ps(a + (size_t)(16 * q + r) * lda + p0);
            for (int i = 0; i < 8; i++) {
                t[2 * i] = _mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]);
                t[2 * i + 1] = _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]);
            }
            for (int i = 0; i < 4; i++) {
                v[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[4 * i]), _mm512_castps_pd(t[4 * i + 2])));
                v[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[4 * i]), _mm512_castps_pd(t[4 * i + 2])));
                v[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[4 * i + 1]), _mm512_castps_pd(t[4 * i + 3])));
                v[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[4 * i + 1]), _mm512_castps_pd(t[4 * i + 3])));
            }
            for (int i = 0; i < 4; i++) {
                t[i] = _mm512_shuffle_f32x4(v[i], v[4 + i], 0x88);
                t[4 + i] = _mm512_shuffle_f32x4(v[i], v[4 + i], 0xdd);
                t[8 + i] = _mm512_shuffle_f32x4(v[8 + i], v[12 + i], 0x88);
                t[12 + i] = _mm512_shuffle_f32x4(v[8 + i], v[12 + i], 0xdd);
            }
            for (int i = 0; i < 4; i++) {
                v[i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0x88);
                v[8 + i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0xdd);
                v[4 + i] = _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0x88);
                v[12 + i] = _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0xdd);
            }
            for (int c = 0; c < 16; c++) {
                __m512 o = v[c];
                if (shift) {
                    __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(o));
                    __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(o), 1)));
                    __m256 flo = _mm512_cvtpd_ps(_mm512_sub_pd(lo, slo));
                    __m256 fhi = _mm512_cvtpd_ps(_mm512_sub_pd(hi, shi));
                    tlo = _mm512_add_pd(tlo, _mm512_cvtps_pd(flo));
                    thi = _mm512_add_pd(thi, _mm512_cvtps_pd(fhi));
                    o = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(flo)), _mm256_castps_pd(fhi), 1));
                }
                _mm512_storeu_ps(dst + (size_t)(p0 + c) * 16, o);
            }
        }
        if (shift) {
            _mm512_storeu_pd(sums + 16 * q, tlo);
            _mm512_storeu_pd(sums + 16 * q + 8, thi);
        }
        if (p0 < kc) kd_pack_square(a, lda, 16 * q, 16, p0, kc - p0, shift, sums, dst);
    }
}

// kd_syrk32_tiles computes the rows [r0, r1) (r0 a multiple of 8) of
// the upper triangle of A·Aᵀ over a block of kc points from the packed
// panels pk (kd_syrk32_pack, every panel packed): for each column block J
// (columns 48J … 48J + 47) that reaches the diagonal of a row, the tiles
// of 8 rows of [r0, r1) below 48J + 48 — the triangle's entries of those
// rows and, in the diagonal tiles, some below it (scratch) — stored into
// c[row·ldc + col] when first, added to it otherwise; columns ≥ k and
// rows ≥ k never. Column blocks are the outer loop: one block's panels
// (48·kc floats) serve every row tile of the range while the range's rows
// (its panels) stay in L2.
#define KD_SYRK32_TILES(ATTR, NAME, TILE)                                               \
ATTR void NAME(int k, int kc, const float *pk, int r0, int r1, float *c, long ldc, int first) { \
    unsigned csr = kd_ftz_begin();                                                      \
    int blocks = (k + 47) / 48;                                                         \
    for (int J = r0 / 48; J < blocks; J++) {                                            \
        const float *b0 = pk + (size_t)(3 * J) * KD_PANEL(kc);                           \
        const float *b1 = b0 + KD_PANEL(kc), *b2 = b1 + KD_PANEL(kc);                     \
        int c0 = 48 * J, cols = k - c0 < 48 ? k - c0 : 48;                              \
        int rend = c0 + 48 < r1 ? c0 + 48 : r1;                                         \
        for (int i = r0; i < rend; i += 8)                                              \
            TILE(pk + (size_t)(i / 16) * KD_PANEL(kc) + (i % 16), b0, b1, b2, kc,        \
                 c + (size_t)i * ldc + c0, ldc, k - i < 8 ? k - i : 8, cols, first);    \
    }                                                                                   \
    kd_ftz_end(csr);                                                                    \
}

KD_SYRK32_TILES(KD_S512, kd_syrk32_tiles_avx512, kd_tile32_avx512)
KD_SYRK32_TILES(, kd_syrk32_tiles_base, kd_tile32_base)

// kd_syrk32_run computes the upper triangle of A·Aᵀ over w points (A: k
// rows of stride lda from a, shifted and summed as kd_syrk32_pack says
// when shift is not NULL) into c, in blocks of kc points packed into pk
// (kd_syrk32_pack's layout), on threads threads: the calling one and
// threads − 1 it starts for the call and joins before returning (fewer
// where the system refuses one or the memory for their handles). For each block every thread claims
// groups of four panels to pack, then tasks of rows rows (a multiple of
// 8) to compute, from shared counters, with a barrier after each phase;
// tasks write disjoint panels and rows of c, so the result is the same
// bits whatever the threads. Its own threads, as OpenBLAS's: goroutines
// that each spend milliseconds in C hold every P of the Go runtime in a
// call, and its monitor then polls them every 20 µs (docs/measurements.md).
typedef struct {
    int k, kc, w, rows, wide;
    const float *a;
    long lda, ldc;
    const double *shift;
    double *sums;
    float *pk, *c;
    int threads, go, bar_count, bar_sense;
    int *next; // two counters a block
} kd_syrk_job;

static void kd_syrk_barrier(kd_syrk_job *j, int *sense) {
    *sense = !*sense;
    if (__atomic_add_fetch(&j->bar_count, 1, __ATOMIC_ACQ_REL) == j->threads) {
        __atomic_store_n(&j->bar_count, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&j->bar_sense, *sense, __ATOMIC_RELEASE);
        return;
    }
    for (int spins = 0; __atomic_load_n(&j->bar_sense, __ATOMIC_ACQUIRE) != *sense; spins++) {
        if (spins < 4096)
            __builtin_ia32_pause();
        else
            sched_yield();
    }
}

static void *kd_syrk_work(void *arg) {
    kd_syrk_job *j = arg;
    while (!__atomic_load_n(&j->go, __ATOMIC_ACQUIRE)) sched_yield();
    int sense = 0, panels = (j->k + 47) / 48 * 3;
    for (int p0 = 0, b = 0; p0 < j->w; p0 += j->kc, b++) {
        int kc = j->w - p0 < j->kc ? j->w - p0 : j->kc;
        for (;;) {
            int q0 = 4 * __atomic_fetch_add(&j->next[2 * b], 1, __ATOMIC_RELAXED);
            if (q0 >= panels) break;
            int q1 = q0 + 4 < panels ? q0 + 4 : panels;
            if (j->wide)
                kd_syrk32_pack_avx512(j->k, kc, j->a + p0, j->lda, q0, q1, j->shift, j->sums, j->pk);
            else
                kd_syrk32_pack_base(j->k, kc, j->a + p0, j->lda, q0, q1, j->shift, j->sums, j->pk);
        }
        kd_syrk_barrier(j, &sense);
        for (;;) {
            long r0 = (long)j->rows * __atomic_fetch_add(&j->next[2 * b + 1], 1, __ATOMIC_RELAXED);
            if (r0 >= j->k) break;
            int r1 = r0 + j->rows < j->k ? (int)r0 + j->rows : j->k;
            if (j->wide)
                kd_syrk32_tiles_avx512(j->k, kc, j->pk, (int)r0, r1, j->c, j->ldc, p0 == 0);
            else
                kd_syrk32_tiles_base(j->k, kc, j->pk, (int)r0, r1, j->c, j->ldc, p0 == 0);
        }
        kd_syrk_barrier(j, &sense);
    }
    return NULL;
}

// next holds two zeroed counters for each block of kc points.
void kd_syrk32_run(int wide, int threads, int k, int kc, int w, const float *a, long lda, const double *shift,
                   double *sums, float *pk, float *c, long ldc, int rows, int *next) {
    kd_syrk_job j = {.k = k, .kc = kc, .w = w, .rows = rows, .wide = wide, .a = a, .lda = lda, .ldc = ldc,
                     .shift = shift, .sums = sums, .pk = pk, .c = c, .next = next};
    pthread_t *tid;
    int started = kd_threads_start(&tid, threads, kd_syrk_work, &j);
    j.threads = started + 1;
    __atomic_store_n(&j.go, 1, __ATOMIC_RELEASE);
    kd_syrk_work(&j);
    kd_threads_join(tid, started);
}
