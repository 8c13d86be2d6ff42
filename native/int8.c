// Kernel rows of 8-bit data by exact integer inner products (AVX-512 VNNI),
// mapped to the Gaussian or Laplace kernel in the same pass; see int8.go.
#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#include "kd_exp.h"

#define KD_I8_P 64 // points per packed block: four groups of sixteen
#define KD_I8_R 6  // landmark rows per register block

int kd_has_vnni512(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("fma");
}

// kd_i8_point returns the level of feature a of point i of block b in the
// packed layout (see int8.go): block b holds points 64b…64b+63, and for
// each group of four features a 256-byte stripe of four 16-point groups,
// each point's four levels adjacent.
static inline uint8_t kd_i8_at(const uint8_t *xp, int d4, int b, int i, int a) {
    return xp[(size_t)b * KD_I8_P * 4 * d4 + (size_t)(a / 4) * 256 + (i / 16) * 64 + (i % 16) * 4 + a % 4];
}

// kd_i8_map_base is the portable form of kd_i8_map_vnni: the same integer
// products (exact in int64), distances and map, one entry at a time.
void kd_i8_map_base(int t, int plo, int phi, int d4, const uint8_t *xp, const int8_t *y,
                    const int32_t *xs, const double *xn, const double *yn, double c, int laplace,
                    double *out, float *out32, int ldo) {
    for (int b = plo / KD_I8_P; b * KD_I8_P < phi; b++)
        for (int i = 0; i < KD_I8_P; i++) {
            int p = b * KD_I8_P + i;
            if (p < plo || p >= phi) continue;
            for (int j = 0; j < t; j++) {
                int64_t dot = 0;
                for (int a = 0; a < 4 * d4; a++) dot += (int64_t)kd_i8_at(xp, d4, b, i, a) * y[(size_t)j * 4 * d4 + a];
                double xy = (double)(dot + 128 * (int64_t)xs[p]);
                double dd = xn[p] + yn[j] - 2 * xy;
                dd = dd > 0 ? dd : 0;
                if (laplace) dd = __builtin_sqrt(dd);
                size_t o = (size_t)j * ldo + p - plo;
                double e = __builtin_exp(c * dd);
                if (out32)
                    out32[o] = (float)(e < 0x1p-126 ? 0.0 : e); // no subnormals (maps.c)
                else
                    out[o] = e;
            }
        }
}

// kd_i8_map_vnni sets out[j·ldo + p − plo] = exp(c·δ_jp) for landmark
// rows j < t and the points plo ≤ p < phi (or, when out32 is not NULL,
// the value rounded to float32 in out32 instead), δ the
// squared distance ‖x_p − y_j‖² in levels (laplace: its square root):
// x_p·y_j = Σ_a x_pa·(y_ja − 128) + 128·xs[p] by vpdpbusd (unsigned levels
// times signed y − 128, exact in int32: |·| ≤ d·255·128), then δ = xn[p] +
// yn[j] − 2·x_p·y_j exactly in float64, and kd_exp8. y holds t rows of
// 4·d4 signed bytes (the levels less 128) and is readable to a multiple
// of KD_I8_R rows (the caller pads it with zero rows). A block of 64 points
// by 6 landmarks keeps 24 accumulators in registers; its 50 KB of packed
// points (d = 784) stay in L2 while the landmark blocks pass over them.
__attribute__((target("avx512f,avx512bw,avx512vnni,fma")))
void kd_i8_map_vnni(int t, int plo, int phi, int d4, const uint8_t *xp, const int8_t *y,
                    const int32_t *xs, const double *xn, const double *yn, double c, int laplace,
                    double *out, float *out32, int ldo) {
    const size_t ys = (size_t)4 * d4;
    for (int b = plo / KD_I8_P; b * KD_I8_P < phi; b++) {
        const uint8_t *xb = xp + (size_t)b * KD_I8_P * 4 * d4;
        int p0 = b * KD_I8_P;
        for (int j0 = 0; j0 < t; j0 += KD_I8_R) {
            // 24 named accumulators: arrays indexed in loops end up on the
            // stack.
#define KD_Z4(r) __m512i a##r##0 = _mm512_setzero_si512(), a##r##1 = a##r##0, a##r##2 = a##r##0, a##r##3 = a##r##0
            KD_Z4(0); KD_Z4(1); KD_Z4(2); KD_Z4(3); KD_Z4(4); KD_Z4(5);
            const int8_t *yr = y + (size_t)j0 * ys;
            for (int k = 0; k < d4; k++) {
                const uint8_t *xk = xb + (size_t)k * 256;
                __m512i x0 = _mm512_loadu_si512(xk), x1 = _mm512_loadu_si512(xk + 64);
                __m512i x2 = _mm512_loadu_si512(xk + 128), x3 = _mm512_loadu_si512(xk + 192);
#define KD_ROW(r) do {                                                     \
                    int32_t w_;                                             \
                    memcpy(&w_, yr + (r) * ys + 4 * k, 4);                  \
                    __m512i yb_ = _mm512_set1_epi32(w_);                    \
                    a##r##0 = _mm512_dpbusd_epi32(a##r##0, x0, yb_);        \
                    a##r##1 = _mm512_dpbusd_epi32(a##r##1, x1, yb_);        \
                    a##r##2 = _mm512_dpbusd_epi32(a##r##2, x2, yb_);        \
                    a##r##3 = _mm512_dpbusd_epi32(a##r##3, x3, yb_);        \
                } while (0)
                KD_ROW(0); KD_ROW(1); KD_ROW(2); KD_ROW(3); KD_ROW(4); KD_ROW(5);
#undef KD_ROW
            }
            __m512i acc[KD_I8_R][4] = {{a00, a01, a02, a03}, {a10, a11, a12, a13}, {a20, a21, a22, a23},
                                       {a30, a31, a32, a33}, {a40, a41, a42, a43}, {a50, a51, a52, a53}};
#undef KD_Z4
            int rows = t - j0 < KD_I8_R ? t - j0 : KD_I8_R;
            for (int r = 0; r < rows; r++) {
                double *row = out32 ? NULL : out + (size_t)(j0 + r) * ldo;
                float *row32 = out32 ? out32 + (size_t)(j0 + r) * ldo : NULL;
                double ny = yn[j0 + r];
                for (int q = 0; q < 4; q++) {
                    __m512i v = _mm512_add_epi32(acc[r][q], _mm512_slli_epi32(_mm512_loadu_si512(xs + p0 + 16 * q), 7));
                    for (int h = 0; h < 2; h++) {
                        int p = p0 + 16 * q + 8 * h;
                        if (p >= phi) break;
                        if (p + 8 <= plo) continue;
                        __m256i half = h ? _mm512_extracti64x4_epi64(v, 1) : _mm512_castsi512_si256(v);
                        kd_v8 xy = (kd_v8)_mm512_cvtepi32_pd(half);
                        kd_v8 nx;
                        memcpy(&nx, xn + p, sizeof nx);
                        // δ ≥ 0 in registers (vmaxpd returns its second
                        // operand, +0, for a NaN or ±0 first one: dd > 0 ?
                        // dd : 0 lane by lane; a loop over a vector type's
                        // lanes compiles to an extract and an insert a lane).
                        __m512d dd = _mm512_max_pd((__m512d)(nx + ny - 2.0 * xy), _mm512_setzero_pd());
                        if (laplace) dd = _mm512_sqrt_pd(dd);
                        kd_v8 e = kd_exp8(c * (kd_v8)dd);
                        if (row32) {
                            // No subnormal float32 values (maps.c): lanes
                            // below 2⁻¹²⁶ (an ordered compare: NaN stays)
                            // become 0.
                            __mmask8 tiny = _mm512_cmp_pd_mask((__m512d)e, _mm512_set1_pd(0x1p-126), _CMP_LT_OQ);
                            e = (kd_v8)_mm512_maskz_mov_pd((__mmask8)~tiny, (__m512d)e);
                        }
                        if (row32 && p >= plo && p + 8 <= phi) {
                            _mm256_storeu_ps(row32 + (p - plo), _mm512_cvtpd_ps((__m512d)e));
                        } else if (row32) {
                            for (int l = 0; l < 8; l++)
                                if (p + l >= plo && p + l < phi) row32[p + l - plo] = (float)e[l];
                        } else if (p >= plo && p + 8 <= phi) {
                            memcpy(row + (p - plo), &e, sizeof e);
                        } else {
                            for (int l = 0; l < 8; l++)
                                if (p + l >= plo && p + l < phi) row[p + l - plo] = e[l];
                        }
                    }
                }
            }
        }
    }
}

// KD_SNAP8_PACK defines NAME, which snaps the d values v of a row onto an
// 8-bit grid — level k_j = ⌊(v_j − lo_j)·inv + ½⌋, which must lie within
// tol_j of v_j (|v_j − lo_j − k_j·step| ≤ tol_j) and in 0…255 — and writes
// the levels into the packed layout of one point (dst = its block plus its
// offset: feature j at dst[(j/4)·256 + j%4]), with the level sum and
// squared norm in *sum and *norm and, when x32 is not NULL, the shifted
// integers k_j − mid_j as floats in x32[0…d). It returns Σ (k_j − mid_j)²,
// or −1 when an entry is off the grid (NaN included: its comparisons fail;
// x32 is then unspecified).
#define KD_SNAP8_PACK(NAME, ATTR)                                                     \
ATTR long long NAME(int d, const double *v, const double *lo, const double *tol,       \
                    const int *mid, double step, double inv, uint8_t *dst,             \
                    int *sum, double *norm, float *x32) {                              \
    long long sq = 0, s = 0, nn = 0;                                                   \
    int bad = 0;                                                                       \
    for (int j = 0; j < d; j++) {                                                      \
        double r = v[j] - lo[j];                                                       \
        double k = __builtin_floor(r * inv + 0.5);                                     \
        bad |= !(__builtin_fabs(r - k * step) <= tol[j]) | !(k >= 0) | !(k <= 255);    \
        int ki = bad ? 0 : (int)k;                                                     \
        dst[(j >> 2) * 256 + (j & 3)] = (uint8_t)ki;                                   \
        long long c = ki - mid[j];                                                     \
        if (x32)                                                                       \
            x32[j] = (float)c;                                                         \
        sq += c * c;                                                                   \
        s += ki;                                                                       \
        nn += (long long)ki * ki;                                                      \
    }                                                                                  \
    *sum = (int)s;                                                                     \
    *norm = (double)nn;                                                                \
    return bad ? -1 : sq;                                                              \
}

KD_SNAP8_PACK(kd_snap8_pack_base, )

// kd_snap8_pack_avx2 is KD_SNAP8_PACK four features at a time: floor,
// the checks and the conversion in 256-bit registers, each group of four
// levels stored as one 32-bit word (the four bytes are adjacent in the
// packed layout), the sums in 32-bit lanes (|Σ| ≤ d·255² < 2³¹ for the
// d ≤ Int8MaxDim the caller allows). The tail of d mod 4 features goes
// through the scalar form.
__attribute__((target("avx2,fma")))
long long kd_snap8_pack_avx2(int d, const double *v, const double *lo, const double *tol,
                             const int *mid, double step, double inv, uint8_t *dst,
                             int *sum, double *norm, float *x32) {
    const __m256d vinv = _mm256_set1_pd(inv), vstep = _mm256_set1_pd(step), half = _mm256_set1_pd(0.5);
    const __m256d zero = _mm256_setzero_pd(), top = _mm256_set1_pd(255.0);
    const __m256d absmask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
    __m128i vs = _mm_setzero_si128(), vn = _mm_setzero_si128(), vq = _mm_setzero_si128();
    __m256d ok = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
    int j = 0;
    for (; j + 4 <= d; j += 4) {
        __m256d r = _mm256_sub_pd(_mm256_loadu_pd(v + j), _mm256_loadu_pd(lo + j));
        __m256d k = _mm256_floor_pd(_mm256_fmadd_pd(r, vinv, half));
        __m256d off = _mm256_and_pd(_mm256_fnmadd_pd(k, vstep, r), absmask);
        ok = _mm256_and_pd(ok, _mm256_cmp_pd(off, _mm256_loadu_pd(tol + j), _CMP_LE_OQ));
        ok = _mm256_and_pd(ok, _mm256_cmp_pd(k, zero, _CMP_GE_OQ));
        ok = _mm256_and_pd(ok, _mm256_cmp_pd(k, top, _CMP_LE_OQ));
        __m128i ki = _mm256_cvttpd_epi32(_mm256_and_pd(k, ok)); // 0 where a check failed
        __m128i c = _mm_sub_epi32(ki, _mm_loadu_si128((const __m128i *)(mid + j)));
        vs = _mm_add_epi32(vs, ki);
        vn = _mm_add_epi32(vn, _mm_mullo_epi32(ki, ki));
        vq = _mm_add_epi32(vq, _mm_mullo_epi32(c, c));
        if (x32)
            _mm_storeu_ps(x32 + j, _mm_cvtepi32_ps(c));
        __m128i b8 = _mm_packus_epi16(_mm_packus_epi32(ki, ki), _mm_setzero_si128());
        int w = _mm_cvtsi128_si32(b8);
        memcpy(dst + (j >> 2) * 256, &w, 4);
    }
    int lanes[4];
    long long s = 0, nn = 0, sq = 0;
    _mm_storeu_si128((__m128i *)lanes, vs);
    for (int l = 0; l < 4; l++) s += lanes[l];
    _mm_storeu_si128((__m128i *)lanes, vn);
    for (int l = 0; l < 4; l++) nn += lanes[l];
    _mm_storeu_si128((__m128i *)lanes, vq);
    for (int l = 0; l < 4; l++) sq += lanes[l];
    int bad = _mm256_movemask_pd(ok) != 0xf;
    if (j < d) {
        int ts;
        double tn;
        long long tq = kd_snap8_pack_base(d - j, v + j, lo + j, tol + j, mid + j, step, inv, dst + (j >> 2) * 256, &ts, &tn,
                                           x32 ? x32 + j : 0);
        bad |= tq < 0;
        s += ts;
        nn += (long long)tn;
        sq += tq < 0 ? 0 : tq;
    }
    *sum = (int)s;
    *norm = (double)nn;
    return bad ? -1 : sq;
}
