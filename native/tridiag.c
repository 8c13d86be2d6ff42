// The reduction of a small symmetric matrix to tridiagonal form by
// Householder reflectors, and the product of its orthogonal factor with a
// block of vectors, without BLAS: LAPACK's dsytd2 and dorm2l/dorm2r in
// their lower, unblocked form, with the level-2 steps (symv, syr2) and the
// reflector products written as loops over contiguous columns. OpenBLAS
// 0.3.21 runs dsymv on all its threads at every size, so LAPACK's own
// reduction wakes and synchronises them a few hundred times for a
// 150×150 matrix, and their spinning afterwards takes the second core
// from the rest of the fit (docs/measurements.md). Compiled for AVX2+FMA
// and the baseline from one source.
//
// Storage: a is column-major lower (a[i + j·lda], i ≥ j: column j of the
// lower triangle is contiguous; the strict upper triangle is neither read
// nor written). kd_sytrd overwrites it as dsytd2 with uplo = 'L' does: d
// the diagonal, e the subdiagonal of the tridiagonal T = Qᵀ·A·Q, Q = H(0)·
// H(1)···H(n−2), H(i) = I − tau[i]·v·vᵀ, v[i+1] = 1 and v[i+2:n] stored in
// a[i+2:n, i] (zero above).
#include "kd_simd.h"
#include <math.h>
#include <float.h>

#define KD_TRIDIAG(ATTR, NAME)                                                        \
/* ‖x‖₂ of n values, scaled by the largest magnitude (no overflow). */               \
ATTR static double NAME##_nrm2(int n, const double *x) {                              \
    double big = 0;                                                                   \
    for (int i = 0; i < n; i++) big = fmax(big, fabs(x[i]));                          \
    if (big == 0) return 0;                                                           \
    double s = 0, inv = 1 / big;                                                      \
    for (int i = 0; i < n; i++) { double t = x[i] * inv; s += t * t; }                \
    return big * sqrt(s);                                                             \
}                                                                                     \
/* dlarfg: the reflector taking (alpha, x[0:m]) to (beta, 0): returns tau,    */      \
/* leaves beta in *alpha and v[1:] in x.                                      */      \
ATTR static double NAME##_larfg(int m, double *alpha, double *x) {                    \
    if (m <= 0) return 0;                                                             \
    double xnorm = NAME##_nrm2(m, x);                                                 \
    if (xnorm == 0) return 0;                                                         \
    double beta = -copysign(hypot(*alpha, xnorm), *alpha);                            \
    const double safmin = DBL_MIN / DBL_EPSILON;                                      \
    int knt = 0;                                                                      \
    if (fabs(beta) < safmin) {                                                        \
        const double rs = 1 / safmin;                                                 \
        do {                                                                          \
            knt++;                                                                    \
            for (int i = 0; i < m; i++) x[i] *= rs;                                   \
            beta *= rs;                                                               \
            *alpha *= rs;                                                             \
        } while (fabs(beta) < safmin && knt < 20);                                    \
        xnorm = NAME##_nrm2(m, x);                                                    \
        beta = -copysign(hypot(*alpha, xnorm), *alpha);                               \
    }                                                                                 \
    double tau = (beta - *alpha) / beta, sc = 1 / (*alpha - beta);                    \
    for (int i = 0; i < m; i++) x[i] *= sc;                                           \
    for (int j = 0; j < knt; j++) beta *= safmin;                                     \
    *alpha = beta;                                                                    \
    return tau;                                                                       \
}                                                                                     \
ATTR void NAME##_sytrd(int n, double *a, long lda, double *d, double *e, double *tau,  \
                       double *y) {                                                   \
    for (int i = 0; i + 1 < n; i++) {                                                 \
        double *col = a + i + (long)i * lda; /* a[i:n, i] */                          \
        const int m = n - i - 1;             /* the trailing block's order */         \
        double taui = NAME##_larfg(m - 1, &col[1], col + 2);                          \
        e[i] = col[1];                                                                \
        if (taui != 0) {                                                              \
            double *v = col + 1;             /* v[0:m], v[0] = 1 */                   \
            double *b = a + (i + 1) + (long)(i + 1) * lda; /* trailing, lower */     \
            v[0] = 1;                                                                 \
            /* y = taui·B·v (B symmetric, lower columns): column j adds its */        \
            /* diagonal and below-diagonal part to y[j] (a dot) and v[j]·b[:,j] */    \
            /* to y[j+1:] (an axpy). */                                               \
            for (int j = 0; j < m; j++) y[j] = 0;                                     \
            for (int j = 0; j < m; j++) {                                             \
                const double *bj = b + (long)j * lda;                                 \
                const double vj = v[j];                                               \
                kd_v4 acc = {0}, vjv = {vj, vj, vj, vj};                              \
                int r = j + 1;                                                        \
                for (; r + 4 <= m; r += 4) {                                          \
                    kd_v4 bv, vv, yv;                                                 \
                    memcpy(&bv, bj + r, 32); memcpy(&vv, v + r, 32);                  \
                    memcpy(&yv, y + r, 32);                                           \
                    acc += bv * vv;                                                   \
                    yv += bv * vjv;                                                   \
                    memcpy(y + r, &yv, 32);                                           \
                }                                                                     \
                double s = (acc[0] + acc[1]) + (acc[2] + acc[3]);                     \
                for (; r < m; r++) {                                                  \
                    s += bj[r] * v[r];                                                \
                    y[r] += bj[r] * vj;                                               \
                }                                                                     \
                y[j] += s + bj[j] * vj;                                               \
            }                                                                         \
            double dot = 0;                                                           \
            for (int j = 0; j < m; j++) { y[j] *= taui; dot += y[j] * v[j]; }         \
            /* w = y − ½·taui·(yᵀv)·v, then B −= v·wᵀ + w·vᵀ */                       \
            const double alpha = -0.5 * taui * dot;                                   \
            for (int j = 0; j < m; j++) y[j] += alpha * v[j];                         \
            for (int j = 0; j < m; j++) {                                             \
                double *bj = b + (long)j * lda;                                       \
                const double vj = v[j], wj = y[j];                                    \
                for (int r = j; r < m; r++) bj[r] -= v[r] * wj + y[r] * vj;           \
            }                                                                         \
            v[0] = e[i];                                                              \
        }                                                                             \
        d[i] = col[0];                                                                \
        tau[i] = taui;                                                                \
    }                                                                                 \
    if (n > 0) d[n - 1] = a[(n - 1) + (long)(n - 1) * lda];                           \
}                                                                                     \
/* z (n×k, column-major, ldz) := Q·z for the Q of kd_sytrd's a and tau:       */      \
/* H(n−2) first, H(0) last, each z[i+1:n, c] −= tau·(vᵀz[i+1:n, c])·v.        */      \
ATTR void NAME##_ormtr(int n, int k, const double *a, long lda, const double *tau,    \
                       double *z, long ldz) {                                         \
    for (int i = n - 2; i >= 0; i--) {                                                \
        const double t = tau[i];                                                      \
        if (t == 0) continue;                                                         \
        const double *v = a + (i + 1) + (long)i * lda; /* v[0] = 1 implied */        \
        const int m = n - i - 1;                                                      \
        for (int c = 0; c < k; c++) {                                                 \
            double *zc = z + (i + 1) + (long)c * ldz;                                 \
            kd_v4 acc = {0};                                                          \
            int r = 1;                                                                \
            for (; r + 4 <= m; r += 4) {                                              \
                kd_v4 vv, zv;                                                         \
                memcpy(&vv, v + r, 32); memcpy(&zv, zc + r, 32);                      \
                acc += vv * zv;                                                       \
            }                                                                         \
            double s = (acc[0] + acc[1]) + (acc[2] + acc[3]);                         \
            for (; r < m; r++) s += v[r] * zc[r];                                     \
            s += zc[0];                                                               \
            s *= t;                                                                   \
            zc[0] -= s;                                                               \
            for (int r = 1; r < m; r++) zc[r] -= s * v[r];                            \
        }                                                                             \
    }                                                                                 \
}

KD_TRIDIAG(KD_AVX2, kd_tri_avx2)
KD_TRIDIAG(KD_BASE, kd_tri_base)
