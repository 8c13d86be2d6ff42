// Column ranges of a row-major float64 matrix (the grid search's first
// pass, gram/grid.go): compiled for AVX2 and for the baseline (SSE2).
#include "kd_simd.h"

// kd_colrange_* lower lo[j] to x[i][j] where x[i][j] < lo[j] and raise
// hi[j] to x[i][j] where x[i][j] > hi[j], for rows i < rows (stride ld)
// and columns j < d. A NaN entry changes nothing (its comparisons are
// false), and a NaN already in lo[j] or hi[j] stays: vminpd(x, lo) returns
// lo when either is NaN, and x only when x < lo.
KD_AVX2 void kd_colrange_avx2(int rows, int d, const double *x, long ld, double *lo, double *hi) {
    for (int i = 0; i < rows; i++) {
        const double *r = x + (size_t)i * ld;
        int j = 0;
        for (; j + 4 <= d; j += 4) {
            __m256d v = _mm256_loadu_pd(r + j);
            _mm256_storeu_pd(lo + j, _mm256_min_pd(v, _mm256_loadu_pd(lo + j)));
            _mm256_storeu_pd(hi + j, _mm256_max_pd(v, _mm256_loadu_pd(hi + j)));
        }
        for (; j < d; j++) {
            double v = r[j];
            if (v < lo[j]) lo[j] = v;
            if (v > hi[j]) hi[j] = v;
        }
    }
}

KD_BASE void kd_colrange_base(int rows, int d, const double *x, long ld, double *lo, double *hi) {
    for (int i = 0; i < rows; i++) {
        const double *r = x + (size_t)i * ld;
        for (int j = 0; j < d; j++) {
            double v = r[j];
            if (v < lo[j]) lo[j] = v;
            if (v > hi[j]) hi[j] = v;
        }
    }
}
