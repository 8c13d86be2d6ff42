// kd_tile32.h: the float32 tile of kdual's packed products (syrk32.c,
// gemm32.c), and the threads their runs start. Operands are packed in
// panels of 16 rows, point by point (panel q: for each point p the 16
// values of rows 16q … 16q+15, 64 bytes), panels KD_PANEL(kc) floats
// apart for blocks of kc points.
#ifndef KD_TILE32_H
#define KD_TILE32_H

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "kd_simd.h"

typedef float kd_s16 __attribute__((vector_size(64)));

#define KD_S512 __attribute__((target("avx512f,fma")))

// KD_PANEL is the floats from one packed panel to the next: kc points of
// 16 values and one line more, so that panels do not start a power of two
// apart (the three column panels and the row panel a tile reads would
// otherwise fall in the same cache sets).
#define KD_PANEL(kc) ((size_t)(kc) * 16 + 16)

// KD_TILE32(ATTR, NAME) defines NAME, the tile of 8 rows × 48 columns:
// for p < kc, the 8 rows' values at ap[16p … 16p+7] against the three
// column panels' lines b0, b1, b2 + 16p, 24 accumulators of 16 floats, one
// rounding per multiply-add (fused where ATTR has FMA), in point order;
// then rows × cols of them (rows ≤ 8, cols ≤ 48) stored into c[r·ldc + j]
// when first, added to it otherwise.
#define KD_TILE32(ATTR, NAME)                                                           \
static inline ATTR void NAME(const float *ap, const float *b0, const float *b1, const float *b2, int kc, \
                             float *c, long ldc, int rows, int cols, int first) {        \
    kd_s16 s00 = {0}, s01 = {0}, s02 = {0}, s10 = {0}, s11 = {0}, s12 = {0};            \
    kd_s16 s20 = {0}, s21 = {0}, s22 = {0}, s30 = {0}, s31 = {0}, s32 = {0};            \
    kd_s16 s40 = {0}, s41 = {0}, s42 = {0}, s50 = {0}, s51 = {0}, s52 = {0};            \
    kd_s16 s60 = {0}, s61 = {0}, s62 = {0}, s70 = {0}, s71 = {0}, s72 = {0};            \
    for (int p = 0; p < kc; p++) {                                                      \
        kd_s16 x0, x1, x2;                                                              \
        memcpy(&x0, b0 + 16 * (size_t)p, 64);                                           \
        memcpy(&x1, b1 + 16 * (size_t)p, 64);                                           \
        memcpy(&x2, b2 + 16 * (size_t)p, 64);                                           \
        const float *ar = ap + 16 * (size_t)p;                                          \
        s00 += ar[0] * x0; s01 += ar[0] * x1; s02 += ar[0] * x2;                        \
        s10 += ar[1] * x0; s11 += ar[1] * x1; s12 += ar[1] * x2;                        \
        s20 += ar[2] * x0; s21 += ar[2] * x1; s22 += ar[2] * x2;                        \
        s30 += ar[3] * x0; s31 += ar[3] * x1; s32 += ar[3] * x2;                        \
        s40 += ar[4] * x0; s41 += ar[4] * x1; s42 += ar[4] * x2;                        \
        s50 += ar[5] * x0; s51 += ar[5] * x1; s52 += ar[5] * x2;                        \
        s60 += ar[6] * x0; s61 += ar[6] * x1; s62 += ar[6] * x2;                        \
        s70 += ar[7] * x0; s71 += ar[7] * x1; s72 += ar[7] * x2;                        \
    }                                                                                   \
    kd_s16 acc[8][3] = {{s00, s01, s02}, {s10, s11, s12}, {s20, s21, s22},              \
                        {s30, s31, s32}, {s40, s41, s42}, {s50, s51, s52},              \
                        {s60, s61, s62}, {s70, s71, s72}};                              \
    for (int r = 0; r < rows; r++) {                                                    \
        float *cr = c + (size_t)r * ldc;                                                \
        for (int v = 0; v < 3; v++) {                                                   \
            int n = cols - 16 * v;                                                      \
            if (n <= 0) break;                                                          \
            if (n > 16) n = 16;                                                         \
            float *d = cr + 16 * v;                                                     \
            if (n == 16) {                                                              \
                kd_s16 o = acc[r][v];                                                   \
                if (!first) {                                                           \
                    kd_s16 old;                                                         \
                    memcpy(&old, d, 64);                                                \
                    o += old;                                                           \
                }                                                                       \
                memcpy(d, &o, 64);                                                      \
            } else if (first) {                                                         \
                for (int l = 0; l < n; l++) d[l] = acc[r][v][l];                        \
            } else {                                                                    \
                for (int l = 0; l < n; l++) d[l] += acc[r][v][l];                       \
            }                                                                           \
        }                                                                               \
    }                                                                                   \
}

// kd_threads_start starts threads − 1 threads running fn(arg) (fewer
// where the system refuses one or the memory for their handles) and
// returns how many it started, their handles in *tid for kd_threads_join.
static inline int kd_threads_start(pthread_t **tid, int threads, void *(*fn)(void *), void *arg) {
    *tid = threads > 1 ? malloc(sizeof(pthread_t) * (size_t)(threads - 1)) : NULL;
    int started = 0;
    for (int t = 0; *tid && t < threads - 1; t++) {
        if (pthread_create(&(*tid)[t], NULL, fn, arg) != 0) break;
        started++;
    }
    return started;
}

// kd_threads_join joins the started threads and frees their handles.
static inline void kd_threads_join(pthread_t *tid, int started) {
    for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
    free(tid);
}

#endif
