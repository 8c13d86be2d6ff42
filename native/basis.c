// Products of a tall float64 basis V (n×c, rows of stride ldv) with a
// narrow block — the projections of block Krylov's Gram–Schmidt — on any
// x86-64 processor: compiled for AVX2+FMA and for the baseline (SSE2).
// OpenBLAS's dgemm packs all of V for the few multiply-adds each of its
// entries takes here; these loops read V where it lies, a few hundred
// rows at a time (the caller's chunks), so that V's rows stay in L2 while
// every group of columns passes over them.
#include "kd_simd.h"

// KD_BASIS defines, for the rows i < n of V, W (n×b, stride ldw) and H
// (c×b, stride ldh):
//   vtw:    H[k][j] += Σ_i V[i][k]·W[i][j]   (H += Vᵀ·W)
//   submul: W[i][j] −= Σ_k V[i][k]·H[k][j]   (W −= V·H)
// vtw keeps four columns of V by eight of W in eight accumulators over i;
// submul four rows of W by eight columns over k. Each entry's sum runs
// over i (vtw) or k (submul) in ascending order, one multiply-add at a
// time (fused where the build has FMA), in every block and remainder loop
// alike.
#define KD_BASIS(ATTR, VTW, SUBMUL)                                                  \
ATTR void VTW(int n, int c, int b, const double *v, long ldv, const double *w,       \
              long ldw, double *h, long ldh) {                                       \
    int k = 0;                                                                       \
    for (; k + 4 <= c; k += 4) {                                                     \
        int j = 0;                                                                   \
        for (; j + 8 <= b; j += 8) {                                                 \
            kd_v4 z = {0, 0, 0, 0};                                                  \
            kd_v4 a00 = z, a01 = z, a10 = z, a11 = z, a20 = z, a21 = z, a30 = z,     \
                  a31 = z;                                                           \
            for (int i = 0; i < n; i++) {                                            \
                const double *vr = v + (long)i * ldv + k, *wr = w + (long)i * ldw + j; \
                kd_v4 x0, x1;                                                        \
                KD_LOAD4_F64(x0, wr); KD_LOAD4_F64(x1, wr + 4);                      \
                double b0 = vr[0], b1 = vr[1], b2 = vr[2], b3 = vr[3];               \
                a00 += b0 * x0; a01 += b0 * x1; a10 += b1 * x0; a11 += b1 * x1;     \
                a20 += b2 * x0; a21 += b2 * x1; a30 += b3 * x0; a31 += b3 * x1;     \
            }                                                                        \
            kd_v4 acc[4][2] = {{a00, a01}, {a10, a11}, {a20, a21}, {a30, a31}};      \
            for (int q = 0; q < 4; q++) {                                            \
                double *hr = h + (long)(k + q) * ldh + j;                            \
                for (int l = 0; l < 4; l++) {                                        \
                    hr[l] += acc[q][0][l];                                           \
                    hr[4 + l] += acc[q][1][l];                                       \
                }                                                                    \
            }                                                                        \
        }                                                                            \
        for (; j < b; j++)                                                           \
            for (int q = 0; q < 4; q++) {                                            \
                double s = 0;                                                        \
                for (int i = 0; i < n; i++) s += v[(long)i * ldv + k + q] * w[(long)i * ldw + j]; \
                h[(long)(k + q) * ldh + j] += s;                                     \
            }                                                                        \
    }                                                                                \
    for (; k < c; k++)                                                               \
        for (int j = 0; j < b; j++) {                                                \
            double s = 0;                                                            \
            for (int i = 0; i < n; i++) s += v[(long)i * ldv + k] * w[(long)i * ldw + j]; \
            h[(long)k * ldh + j] += s;                                               \
        }                                                                            \
}                                                                                    \
ATTR void SUBMUL(int n, int c, int b, const double *v, long ldv, const double *h,    \
                 long ldh, double *w, long ldw) {                                    \
    int i = 0;                                                                       \
    for (; i + 4 <= n; i += 4) {                                                     \
        const double *v0 = v + (long)i * ldv, *v1 = v0 + ldv, *v2 = v1 + ldv,        \
                     *v3 = v2 + ldv;                                                 \
        double *w0 = w + (long)i * ldw, *w1 = w0 + ldw, *w2 = w1 + ldw, *w3 = w2 + ldw; \
        int j = 0;                                                                   \
        for (; j + 8 <= b; j += 8) {                                                 \
            kd_v4 a00, a01, a10, a11, a20, a21, a30, a31;                            \
            KD_LOAD4_F64(a00, w0 + j); KD_LOAD4_F64(a01, w0 + j + 4);                \
            KD_LOAD4_F64(a10, w1 + j); KD_LOAD4_F64(a11, w1 + j + 4);                \
            KD_LOAD4_F64(a20, w2 + j); KD_LOAD4_F64(a21, w2 + j + 4);                \
            KD_LOAD4_F64(a30, w3 + j); KD_LOAD4_F64(a31, w3 + j + 4);                \
            for (int q = 0; q < c; q++) {                                            \
                kd_v4 y0, y1;                                                        \
                KD_LOAD4_F64(y0, h + (long)q * ldh + j);                             \
                KD_LOAD4_F64(y1, h + (long)q * ldh + j + 4);                         \
                double b0 = v0[q], b1 = v1[q], b2 = v2[q], b3 = v3[q];               \
                a00 -= b0 * y0; a01 -= b0 * y1; a10 -= b1 * y0; a11 -= b1 * y1;     \
                a20 -= b2 * y0; a21 -= b2 * y1; a30 -= b3 * y0; a31 -= b3 * y1;     \
            }                                                                        \
            memcpy(w0 + j, &a00, 32); memcpy(w0 + j + 4, &a01, 32);                  \
            memcpy(w1 + j, &a10, 32); memcpy(w1 + j + 4, &a11, 32);                  \
            memcpy(w2 + j, &a20, 32); memcpy(w2 + j + 4, &a21, 32);                  \
            memcpy(w3 + j, &a30, 32); memcpy(w3 + j + 4, &a31, 32);                  \
        }                                                                            \
        for (; j < b; j++) {                                                         \
            double *ws[4] = {w0, w1, w2, w3};                                        \
            const double *vs[4] = {v0, v1, v2, v3};                                  \
            for (int r = 0; r < 4; r++) {                                            \
                double s = ws[r][j];                                                 \
                for (int q = 0; q < c; q++) s -= vs[r][q] * h[(long)q * ldh + j];    \
                ws[r][j] = s;                                                        \
            }                                                                        \
        }                                                                            \
    }                                                                                \
    /* The last rows one at a time, with the same vector and scalar steps     \
       as the groups of four: every row's bits are the same wherever the       \
       caller cuts the rows. */                                                \
    for (; i < n; i++) {                                                         \
        const double *v0 = v + (long)i * ldv;                                    \
        double *w0 = w + (long)i * ldw;                                          \
        int j = 0;                                                               \
        for (; j + 8 <= b; j += 8) {                                             \
            kd_v4 a00, a01;                                                      \
            KD_LOAD4_F64(a00, w0 + j); KD_LOAD4_F64(a01, w0 + j + 4);            \
            for (int q = 0; q < c; q++) {                                        \
                kd_v4 y0, y1;                                                    \
                KD_LOAD4_F64(y0, h + (long)q * ldh + j);                         \
                KD_LOAD4_F64(y1, h + (long)q * ldh + j + 4);                     \
                double b0 = v0[q];                                               \
                a00 -= b0 * y0; a01 -= b0 * y1;                                  \
            }                                                                    \
            memcpy(w0 + j, &a00, 32); memcpy(w0 + j + 4, &a01, 32);              \
        }                                                                        \
        for (; j < b; j++) {                                                     \
            double s = w0[j];                                                    \
            for (int q = 0; q < c; q++) s -= v0[q] * h[(long)q * ldh + j];       \
            w0[j] = s;                                                           \
        }                                                                        \
    }                                                                            \
}

KD_BASIS(KD_AVX2, kd_vtw_avx2, kd_submul_avx2)
KD_BASIS(KD_BASE, kd_vtw_base, kd_submul_base)
