/*
 * api.c: the GatherElements context (spec 3.11), plain C except two AVX-512 paths for 32-bit data: short rows
 * indexed along the last axis, gathered from registers by permutes, and inner > 1, indices checked a block at a time
 * by vector comparisons (below). Hardware gathers were measured slower than the scalar loop (1.2x the time on
 * 8x512x256 along axis 1).
 *
 * Contract (seed page): src is [O][srcCount][inner], idx and dst are [O][idxCount][inner], O = prod(outer);
 * dst[o,c,i] = src[o, idx[o,c,i] (+ srcCount if negative), i]. Data 32f (copied as raw 32-bit words, so NaN
 * payloads survive), 8u and 16b; index 32i and 64i; any other pair makes Init return NULL, as upstream does.
 * Unlike upstream, an index outside [-srcCount, srcCount) is not read out of bounds: its output element is 0
 * (simdbind refuses such indices before calling). SetIndex has nothing to copy or precompute: Forward always
 * reads the idx it is given (upstream needs it too), so InternalBufferSize is 0.
 */
#include <stdint.h>
#include <stdlib.h>

#include "simd_synet.h"
#include "internal/dispatch.h"

typedef struct {
    sb_context base;
    size_t data_size, index_size, outer, src_count, inner, idx_count;
} gather_context;

static void gather_release(sb_context * self) { free(self); }

SIMD_API void * SimdSynetGatherElementsInit(SimdTensorDataType dataType, SimdTensorDataType indexType,
    SimdBool indexConst, size_t indexUsers, const size_t * outer, size_t outerSize, size_t srcCount, size_t inner,
    size_t idxCount)
{
    (void)indexConst;
    (void)indexUsers;
    size_t data_size, index_size, count = 1;
    switch (dataType) {
    case SimdTensorData32f: data_size = 4; break;
    case SimdTensorData8u: data_size = 1; break;
    case SimdTensorData16b: data_size = 2; break;
    default: return NULL;
    }
    switch (indexType) {
    case SimdTensorData32i: index_size = 4; break;
    case SimdTensorData64i: index_size = 8; break;
    default: return NULL;
    }
    if (outerSize != 0 && outer == NULL)
        return NULL;
    for (size_t i = 0; i < outerSize; ++i) {
        if (outer[i] != 0 && count > SIZE_MAX / outer[i])
            return NULL;
        count *= outer[i];
    }
    gather_context * ctx = (gather_context *)calloc(1, sizeof(gather_context));
    if (ctx == NULL)
        return NULL;
    ctx->base.release = gather_release;
    ctx->data_size = data_size;
    ctx->index_size = index_size;
    ctx->outer = count;
    ctx->src_count = srcCount;
    ctx->inner = inner;
    ctx->idx_count = idxCount;
    return ctx;
}

SIMD_API void SimdSynetGatherElementsSetIndex(const void * context, const uint8_t * idx)
{
    (void)context;
    (void)idx;
}

SIMD_API size_t SimdSynetGatherElementsInternalBufferSize(const void * context)
{
    (void)context;
    return 0;
}

/* A row of 32-bit data with inner == 1 and fewer than 64 source elements, at AVX-512: the row sits in four
   registers, zero past its n elements, and 16 outputs are two two-register permutes and a blend (bit 5 of the index
   picks the pair), where scalar code spends a load and a store per element. An index is corrected (+n if
   negative) and clamped to n at its own width (an int64 index before it is narrowed to 32 bits), so every index
   outside [-n, n) reads one of the zeros. The AVX-512 code is built with a target attribute in this file (not a
   per-ISA unit) and never in the emulation build, whose CPUs lack AVX-512. */
#if SB_X86 && (defined(__GNUC__) || defined(__clang__)) && !defined(SB_EMULATE_AVX512)
#include <immintrin.h>

#define GATHER_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

/* 16 indices from x + c (the first `tail` of them), corrected and clamped to [0, n]: n for every one outside. */
GATHER_AVX512 static inline __m512i gather_indices(const void * x, size_t index_size, size_t c, __mmask16 tail,
    __m512i count32, __m512i count64, __m512i evens)
{
    if (index_size == 4) {
        __m512i v = _mm512_maskz_loadu_epi32(tail, (const int32_t *)x + c);
        v = _mm512_add_epi32(v, _mm512_and_si512(_mm512_srai_epi32(v, 31), count32));
        return _mm512_min_epu32(v, count32);
    }
    __m512i a = _mm512_maskz_loadu_epi64((__mmask8)tail, (const int64_t *)x + c);
    __m512i b = _mm512_maskz_loadu_epi64((__mmask8)(tail >> 8), (const int64_t *)x + c + 8);
    a = _mm512_min_epu64(_mm512_add_epi64(a, _mm512_and_si512(_mm512_srai_epi64(a, 63), count64)), count64);
    b = _mm512_min_epu64(_mm512_add_epi64(b, _mm512_and_si512(_mm512_srai_epi64(b, 63), count64)), count64);
    return _mm512_permutex2var_epi32(a, evens, b); /* the low halves: every value fits in 32 bits now */
}

GATHER_AVX512 static inline void gather_16(const __m512 * r, const void * x, size_t index_size,
    size_t c, __mmask16 tail, __m512i count32, __m512i count64, __m512i evens, float * d)
{
    __m512i v = gather_indices(x, index_size, c, tail, count32, count64, evens);
    __m512 low = _mm512_permutex2var_ps(r[0], v, r[1]), high = _mm512_permutex2var_ps(r[2], v, r[3]);
    _mm512_mask_storeu_ps(d + c, tail,
        _mm512_mask_blend_ps(_mm512_test_epi32_mask(v, _mm512_set1_epi32(32)), low, high));
}

GATHER_AVX512 static void gather_row_permute(const uint32_t * s, size_t n, const void * x, size_t index_size,
    size_t count, uint32_t * d)
{
    __m512 r[4];
    for (int k = 0; k < 4; ++k) { /* masked loads: nothing past the row's n elements is read */
        size_t first = (size_t)k * 16, m = n > first ? n - first : 0;
        r[k] = _mm512_maskz_loadu_ps(m >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << m) - 1),
            (const float *)s + (m ? first : 0));
    }
    __m512i count32 = _mm512_set1_epi32((int)n), count64 = _mm512_set1_epi64((long long)n);
    __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    size_t c = 0;
    for (; c + 16 <= count; c += 16)
        gather_16(r, x, index_size, c, 0xFFFF, count32, count64, evens, (float *)d);
    if (c < count)
        gather_16(r, x, index_size, c, (__mmask16)((1u << (count - c)) - 1), count32, count64,
            evens, (float *)d);
}

/* 1 if the m (<= 64) indices at x (int32 or int64) all lie in [0, n). */
GATHER_AVX512 static inline int gather_block_plain(const void * x, size_t index_size, size_t m, size_t n)
{
    __mmask16 out = 0;
    if (index_size == 4) {
        __m512i count = _mm512_set1_epi32((int)n);
        for (size_t k = 0; k < m; k += 16) {
            __mmask16 tail = m - k >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (m - k)) - 1);
            out |= _mm512_mask_cmpge_epu32_mask(tail, _mm512_maskz_loadu_epi32(tail, (const int32_t *)x + k), count);
        }
    } else {
        __m512i count = _mm512_set1_epi64((long long)n);
        for (size_t k = 0; k < m; k += 8) {
            __mmask8 tail = m - k >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << (m - k)) - 1);
            out |= _mm512_mask_cmpge_epu64_mask(tail, _mm512_maskz_loadu_epi64(tail, (const int64_t *)x + k), count);
        }
    }
    return out == 0;
}

/* One outer position with inner > 1, 32-bit data: blocks of 64 outputs whose indices a vector comparison finds
   all inside [0, n) (the usual case) are copied by a loop of an index load, a multiply-add, a data load and a
   store per element, as few instructions as the unchecked copy; the others take the checked scalar loop. The
   loads land at random rows, mostly L1 misses: fewer instructions per element keep more of them in flight
   (measured 1.2x on 8x512x256 along axis 1; a hardware gather measured 1.2x slower than the scalar loop). */
#define GATHER_BLOCK 64
#define GATHER_PLAIN(TI)                                                                                            \
    for (size_t c = 0; c < count * inner; c += inner)                                                               \
        for (size_t i0 = 0; i0 < inner; i0 += GATHER_BLOCK) {                                                       \
            const size_t m = inner - i0 < GATHER_BLOCK ? inner - i0 : GATHER_BLOCK;                                 \
            const TI * xi = (const TI *)x + c + i0;                                                                 \
            const uint32_t * si = s + i0;                                                                           \
            uint32_t * out = d + c + i0;                                                                            \
            if (__builtin_expect(gather_block_plain(xi, sizeof(TI), m, n), 1)) {                                    \
                for (size_t k = 0; k < m; ++k)                                                                      \
                    out[k] = si[(size_t)xi[k] * inner + k];                                                         \
                continue;                                                                                           \
            }                                                                                                       \
            for (size_t k = 0; k < m; ++k) {                                                                        \
                int64_t v = (int64_t)xi[k];                                                                         \
                v += v < 0 ? (int64_t)n : 0;                                                                        \
                out[k] = (uint64_t)v < n ? si[(size_t)v * inner + k] : 0;                                           \
            }                                                                                                       \
        }

GATHER_AVX512 static void gather_outer_inner(const uint32_t * s, size_t n, size_t inner, const void * x,
    size_t index_size, size_t count, uint32_t * d)
{
    if (index_size == 4) {
        GATHER_PLAIN(int32_t)
    } else {
        GATHER_PLAIN(int64_t)
    }
}

#endif

/* One outer position through an AVX-512 path, or 0 when none applies (then the scalar loop runs). */
static int gather_outer_fast(const void * s, size_t n, size_t inner, const void * x, size_t index_size, size_t count,
    void * d, size_t data_size)
{
#ifdef GATHER_AVX512
    if (data_size == 4 && sb_isa() >= SB_ISA_AVX512BW) {
        if (inner == 1 && n < 64) {
            gather_row_permute((const uint32_t *)s, n, x, index_size, count, (uint32_t *)d);
            return 1;
        }
        if (inner > 1 && n <= (size_t)INT32_MAX) { /* int32 indices compare as unsigned: negatives above n */
            gather_outer_inner((const uint32_t *)s, n, inner, x, index_size, count, (uint32_t *)d);
            return 1;
        }
    }
#endif
    (void)s, (void)n, (void)inner, (void)x, (void)index_size, (void)count, (void)d, (void)data_size;
    return 0;
}

/* One (data, index) type pair. `value` is the index after the negative correction; outside [0, n) it yields 0. */
#define GATHER_LOOP(TD, TI)                                                                                     \
    do {                                                                                                        \
        const TD * s = (const TD *)src;                                                                         \
        const TI * x = (const TI *)idx;                                                                         \
        TD * d = (TD *)dst;                                                                                     \
        const size_t n = ctx->src_count, inner = ctx->inner, rows = ctx->idx_count * inner;                     \
        for (size_t o = 0; o < ctx->outer; ++o, s += n * inner, x += rows, d += rows) {                         \
            if (gather_outer_fast(s, n, inner, x, sizeof(TI), ctx->idx_count, d, sizeof(TD)))                   \
                continue;                                                                                       \
            if (inner == 1) {                                                                                   \
                for (size_t c = 0; c < rows; ++c) {                                                             \
                    int64_t v = (int64_t)x[c];                                                                  \
                    v += v < 0 ? (int64_t)n : 0;                                                                \
                    d[c] = (uint64_t)v < n ? s[v] : (TD)0; /* negative after correction: out of range too */    \
                }                                                                                               \
                continue;                                                                                       \
            }                                                                                                   \
            for (size_t c = 0; c < rows; c += inner)                                                            \
                for (size_t i = 0; i < inner; ++i) {                                                            \
                    int64_t v = (int64_t)x[c + i];                                                              \
                    v += v < 0 ? (int64_t)n : 0;                                                                \
                    d[c + i] = (uint64_t)v < n ? s[(size_t)v * inner + i] : (TD)0;                              \
                }                                                                                               \
        }                                                                                                       \
    } while (0)

SIMD_API void SimdSynetGatherElementsForward(void * context, const uint8_t * src, const uint8_t * idx,
    uint8_t * dst)
{
    const gather_context * ctx = (const gather_context *)context;
    if (ctx == NULL || src == NULL || idx == NULL || dst == NULL)
        return;
    if (ctx->index_size == 4) {
        if (ctx->data_size == 4) GATHER_LOOP(uint32_t, int32_t);
        else if (ctx->data_size == 2) GATHER_LOOP(uint16_t, int32_t);
        else GATHER_LOOP(uint8_t, int32_t);
    } else {
        if (ctx->data_size == 4) GATHER_LOOP(uint32_t, int64_t);
        else if (ctx->data_size == 2) GATHER_LOOP(uint16_t, int64_t);
        else GATHER_LOOP(uint8_t, int64_t);
    }
}
