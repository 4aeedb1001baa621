/*
 * inner_product_8i.dispatch.c: SimdSynetInnerProduct8i's kernel, compiled once per ISA (spec 3.9).
 *
 * dst[i][j] = sum_k src[i][k] * weight[j][k], uint8 x int8 -> int32 (the int32 sum wraps, as upstream's does).
 * - precise ((compatibility & 12) == 0): every product exactly. SSE4.1/AVX2/AVX-512BW load both operands widened to
 *   int16, each half vector once for the whole register block, and use pmaddwd (two products of |x| <= 32640 summed
 *   in int32: exact); AVX-512 VNNI uses vpdpbusd, which adds four u8*s8 products to int32 without saturation: exact
 *   as well.
 * - saturating (otherwise): the products of each pair (2m, 2m + 1) along K are summed and clamped to int16, then
 *   added in int32 (pmaddubsw then pmaddwd with ones, on every SIMD ISA including VNNI). K's tail is zero-padded to
 *   a whole vector, so an odd last product is paired with 0 and never clamped (|255 * -128| < 32768), which is the
 *   contract. Vector blocks start at multiples of 16 bytes, so pairs always start at even k.
 * Each output is one dot product along K; four rows of weight are processed together against SR rows of src (4 at
 * AVX-512, else 2), and threads split the rows of weight when the work is large.
 */
#include <stdint.h>
#include <string.h>

#include "simd_synet.h"

#define PARALLEL_WORK (1u << 22)

SB_INLINE int32_t wrap_add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }

#if SB_ISA_AT_LEAST(1)

#if SB_ISA_AT_LEAST(3)
#define IB 64
typedef __m512i ivec;
SB_INLINE ivec iload(const void * p) { return _mm512_loadu_si512(p); }
SB_INLINE ivec izero(void) { return _mm512_setzero_si512(); }
SB_INLINE ivec iadd(ivec a, ivec b) { return _mm512_add_epi32(a, b); }
SB_INLINE ivec sat_pairs(ivec s, ivec w) { return _mm512_madd_epi16(_mm512_maddubs_epi16(s, w), _mm512_set1_epi16(1)); }
#if SB_ISA_AT_LEAST(4)
#define VNNI 1
SB_INLINE ivec precise_dot(ivec acc, ivec s, ivec w) { return _mm512_dpbusd_epi32(acc, s, w); }
#else
#define VNNI 0
#endif
SB_INLINE ivec iload_u16(const void * p) { return _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)p)); }
SB_INLINE ivec iload_s16(const void * p) { return _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)p)); }
SB_INLINE ivec imadd16(ivec a, ivec b) { return _mm512_madd_epi16(a, b); }
SB_INLINE int32_t ireduce(ivec v)
{
    int32_t lanes[16];
    _mm512_storeu_si512(lanes, v);
    int32_t s = 0;
    for (int i = 0; i < 16; ++i) s = wrap_add(s, lanes[i]);
    return s;
}
#elif SB_ISA_AT_LEAST(2)
#define IB 32
typedef __m256i ivec;
SB_INLINE ivec iload(const void * p) { return _mm256_loadu_si256((const __m256i *)p); }
SB_INLINE ivec izero(void) { return _mm256_setzero_si256(); }
SB_INLINE ivec iadd(ivec a, ivec b) { return _mm256_add_epi32(a, b); }
SB_INLINE ivec sat_pairs(ivec s, ivec w) { return _mm256_madd_epi16(_mm256_maddubs_epi16(s, w), _mm256_set1_epi16(1)); }
#define VNNI 0
SB_INLINE ivec iload_u16(const void * p) { return _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)p)); }
SB_INLINE ivec iload_s16(const void * p) { return _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)p)); }
SB_INLINE ivec imadd16(ivec a, ivec b) { return _mm256_madd_epi16(a, b); }
SB_INLINE int32_t ireduce(ivec v)
{
    int32_t lanes[8];
    _mm256_storeu_si256((__m256i *)lanes, v);
    int32_t s = 0;
    for (int i = 0; i < 8; ++i) s = wrap_add(s, lanes[i]);
    return s;
}
#else
#define IB 16
typedef __m128i ivec;
SB_INLINE ivec iload(const void * p) { return _mm_loadu_si128((const __m128i *)p); }
SB_INLINE ivec izero(void) { return _mm_setzero_si128(); }
SB_INLINE ivec iadd(ivec a, ivec b) { return _mm_add_epi32(a, b); }
SB_INLINE ivec sat_pairs(ivec s, ivec w) { return _mm_madd_epi16(_mm_maddubs_epi16(s, w), _mm_set1_epi16(1)); }
#define VNNI 0
SB_INLINE ivec iload_u16(const void * p) { return _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)p)); }
SB_INLINE ivec iload_s16(const void * p) { return _mm_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)p)); }
SB_INLINE ivec imadd16(ivec a, ivec b) { return _mm_madd_epi16(a, b); }
SB_INLINE int32_t ireduce(ivec v)
{
    int32_t lanes[4];
    _mm_storeu_si128((__m128i *)lanes, v);
    return wrap_add(wrap_add(lanes[0], lanes[1]), wrap_add(lanes[2], lanes[3]));
}
#endif

/* Rows of src per block: at AVX-512 (32 registers) 4 x 4 accumulators, so that each step loads 8 vectors for 16
   dot products instead of 6 for 8; 2 x 4 fits the 16 registers of SSE4.1/AVX2. */
#if SB_ISA_AT_LEAST(3)
#define SR 4
#else
#define SR 2
#endif

/* The first n (< IB) bytes at p, the rest zero. */
SB_INLINE ivec iload_n(const void * p, size_t n)
{
    uint8_t bytes[IB] = {0};
    memcpy(bytes, p, n);
    return iload(bytes);
}

SB_INLINE ivec step(ivec acc, ivec s, ivec w, const int precise)
{
#if VNNI
    if (precise)
        return precise_dot(acc, s, w);
#endif
    (void)precise;
    return iadd(acc, sat_pairs(s, w));
}

/* Precise without VNNI: IB bytes of K for every (src row, weight row) pair of a block, each half vector loaded
   widened to int16 once for every row of the other operand (not once per pair), pairs of products summed by pmaddwd
   (exact: two products of |x| <= 32640 fit int32). s and w point at row 0, ls and lw are the row strides. */
SB_INLINE void widened_step(ivec acc[SR][4], const int rows, const int jn, const uint8_t * s, size_t ls,
    const int8_t * w, size_t lw)
{
    for (int h = 0; h < IB; h += IB / 2) {
        ivec x[SR];
        for (int r = 0; r < rows; ++r)
            x[r] = iload_u16(s + r * ls + h);
        for (int t = 0; t < jn; ++t) {
            ivec y = iload_s16(w + t * lw + h);
            for (int r = 0; r < rows; ++r)
                acc[r][t] = iadd(acc[r][t], imadd16(x[r], y));
        }
    }
}

/* dst[r * N + t] = dot(src row r, weight row t) for r < rows (<= SR) and t < jn (<= 4), all constants after
   inlining: each weight vector loaded once serves every row of src, each src vector every row of weight. */
SB_INLINE void dots(const int rows, const int jn, const uint8_t * s, const int8_t * w, size_t K, int32_t * dst,
    size_t N, const int precise)
{
    ivec acc[SR][4];
    for (int r = 0; r < rows; ++r)
        for (int t = 0; t < jn; ++t)
            acc[r][t] = izero();
    size_t k = 0;
    if (precise && !VNNI) {
        for (; k + IB <= K; k += IB)
            widened_step(acc, rows, jn, s + k, K, w + k, K);
        if (k < K) { /* K's tail, zero-padded */
            uint8_t xs[SR][IB] = {{0}};
            int8_t ws[4][IB] = {{0}};
            for (int r = 0; r < rows; ++r)
                memcpy(xs[r], s + r * K + k, K - k);
            for (int t = 0; t < jn; ++t)
                memcpy(ws[t], w + t * K + k, K - k);
            widened_step(acc, rows, jn, xs[0], IB, ws[0], IB);
        }
    } else {
        for (; k + IB <= K; k += IB) {
            ivec x[SR];
            for (int r = 0; r < rows; ++r)
                x[r] = iload(s + r * K + k);
            for (int t = 0; t < jn; ++t) {
                ivec y = iload(w + t * K + k);
                for (int r = 0; r < rows; ++r)
                    acc[r][t] = step(acc[r][t], x[r], y, precise);
            }
        }
        if (k < K) {
            ivec x[SR];
            for (int r = 0; r < rows; ++r)
                x[r] = iload_n(s + r * K + k, K - k);
            for (int t = 0; t < jn; ++t) {
                ivec y = iload_n(w + t * K + k, K - k);
                for (int r = 0; r < rows; ++r)
                    acc[r][t] = step(acc[r][t], x[r], y, precise);
            }
        }
    }
    for (int r = 0; r < rows; ++r)
        for (int t = 0; t < jn; ++t)
            dst[r * N + t] = ireduce(acc[r][t]);
}

/* dots() for `rows` (1 .. SR) rows of src and jn (1 .. 4) rows of weight, each pair its own inlined kernel. */
SB_INLINE void dots_rows(const int rows, size_t jn, const uint8_t * s, const int8_t * w, size_t K, int32_t * d,
    size_t N, const int precise)
{
    switch (jn) {
    case 4: dots(rows, 4, s, w, K, d, N, precise); break;
    case 3: dots(rows, 3, s, w, K, d, N, precise); break;
    case 2: dots(rows, 2, s, w, K, d, N, precise); break;
    default: dots(rows, 1, s, w, K, d, N, precise); break;
    }
}

SB_INLINE void rows_block(size_t M, size_t N, size_t K, const uint8_t * src, const int8_t * weight, int32_t * dst,
    size_t j0, size_t j1, const int precise)
{
    for (size_t j = j0; j < j1; j += 4) {
        size_t jn = j1 - j < 4 ? j1 - j : 4;
        const int8_t * w = weight + j * K;
        size_t i = 0;
        for (; i + SR <= M; i += SR)
            dots_rows(SR, jn, src + i * K, w, K, dst + i * N + j, N, precise);
        switch (M - i) { /* the last rows, fewer than SR */
#if SR > 3
        case 3: dots_rows(3, jn, src + i * K, w, K, dst + i * N + j, N, precise); break;
        case 2: dots_rows(2, jn, src + i * K, w, K, dst + i * N + j, N, precise); break;
#endif
        case 1: dots_rows(1, jn, src + i * K, w, K, dst + i * N + j, N, precise); break;
        default: break;
        }
    }
}

#else /* base: scalar, exactly the contract's loops */

SB_INLINE void rows_block(size_t M, size_t N, size_t K, const uint8_t * src, const int8_t * weight, int32_t * dst,
    size_t j0, size_t j1, const int precise)
{
    for (size_t i = 0; i < M; ++i) {
        const uint8_t * s = src + i * K;
        for (size_t j = j0; j < j1; ++j) {
            const int8_t * w = weight + j * K;
            int32_t sum = 0;
            if (precise) {
                for (size_t k = 0; k < K; ++k)
                    sum = wrap_add(sum, (int32_t)s[k] * (int32_t)w[k]);
            } else {
                size_t k = 0;
                for (; k + 2 <= K; k += 2) {
                    int32_t p = (int32_t)s[k] * w[k] + (int32_t)s[k + 1] * w[k + 1];
                    sum = wrap_add(sum, p < -32768 ? -32768 : p > 32767 ? 32767 : p);
                }
                if (k < K)
                    sum = wrap_add(sum, (int32_t)s[k] * w[k]);
            }
            dst[i * N + j] = sum;
        }
    }
}

#endif

typedef struct {
    size_t M, N, K;
    const uint8_t * src;
    const int8_t * weight;
    int32_t * dst;
    int precise;
} job8i;

static void body(void * arg, size_t begin, size_t end)
{
    const job8i * j = (const job8i *)arg;
    if (j->precise)
        rows_block(j->M, j->N, j->K, j->src, j->weight, j->dst, begin, end, 1);
    else
        rows_block(j->M, j->N, j->K, j->src, j->weight, j->dst, begin, end, 0);
}

void SB_FN(inner_product_8i)(size_t M, size_t N, size_t K, const uint8_t * src, const int8_t * weight, int32_t * dst,
    int precise)
{
    job8i j = {M, N, K, src, weight, dst, precise};
    if (M == 0 || N == 0)
        return;
    if ((double)M * N * K < PARALLEL_WORK)
        body(&j, 0, N);
    else
        sb_parallel_for(N, 4, body, &j);
}
