/*
 * api.c: the GatherElements context, plain C except the vector paths at AVX2 and AVX-512 (after
 * InternalBufferSize): indices checked a block at a time by vector comparisons before an unchecked copy, and at
 * AVX-512 short rows of 32-bit data indexed along the last axis gathered from registers by permutes.
 * Hardware gathers were measured slower than the scalar copy (1.2x the time on 8x512x256 along axis 1 at AVX-512).
 *
 * Contract (upstream's docs): src is [O][srcCount][inner], idx and dst are [O][idxCount][inner], O = prod(outer);
 * dst[o,c,i] = src[o, idx[o,c,i] (+ srcCount if negative), i]. Data 32f (copied as raw 32-bit words, so NaN
 * payloads survive), 8u and 16b; index 32i and 64i; any other pair makes Init return NULL, as upstream does.
 * Unlike upstream, an index outside [-srcCount, srcCount) is not read out of bounds: its output element is 0
 * (simdbind refuses such indices before calling).
 * A constant index (indexConst) is read once, by SetIndex, into positions along the axis in the fewest bytes that
 * hold srcCount (1 up to 254 elements, 2 up to 65534, else 4); InternalBufferSize is their size, and Forward reads
 * them instead of its idx argument, which the contract requires to be the index SetIndex was given (upstream reads
 * only part of it then). A call then reads a quarter or an eighth of the index bytes, with no sign
 * correction or range check: on 16x196x49 along axis 2 with int64 indices, 0.82x the time at AVX2 and 0.42x at
 * AVX-512 (its register permute reads the positions a byte each).
 */
#include <stdint.h>
#include <stdlib.h>

#include "simd_synet.h"
#include "internal/dispatch.h"
#include "internal/memory.h"

typedef struct {
    sb_context base;
    size_t data_size, index_size, outer, src_count, inner, idx_count;
    int index_const;
    /* SetIndex's index as positions: each index corrected (+srcCount if negative), or srcCount where it lies outside
       [-srcCount, srcCount) (its output element is then 0); position_size bytes each; NULL before SetIndex. */
    void * positions;
    size_t position_size, position_bytes;
    int all_inside; /* no position is srcCount */
} gather_context;

static void gather_release(sb_context * self)
{
    sb_free(((gather_context *)self)->positions);
    sb_free(self);
}

SIMD_API void * SimdSynetGatherElementsInit(SimdTensorDataType dataType, SimdTensorDataType indexType,
    SimdBool indexConst, size_t indexUsers, const size_t * outer, size_t outerSize, size_t srcCount, size_t inner,
    size_t idxCount)
{
    (void)indexConst;
    (void)indexUsers;
    sb_clear_error();
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
    gather_context * ctx = (gather_context *)sb_alloc_zeroed(1, sizeof(gather_context));
    if (ctx == NULL) {
        sb_fail_no_memory();
        return NULL;
    }
    ctx->base.release = gather_release;
    ctx->data_size = data_size;
    ctx->index_size = index_size;
    ctx->outer = count;
    ctx->src_count = srcCount;
    ctx->inner = inner;
    ctx->idx_count = idxCount;
    ctx->index_const = indexConst != SimdFalse;
    return ctx;
}

/* The `count` positions of idx (TI) into `positions` (TP); all_inside cleared where one lies outside [0, n). */
#define GATHER_POSITIONS_OF(TI, TP)                                                                                 \
    do {                                                                                                            \
        const TI * x = (const TI *)idx;                                                                             \
        TP * p = (TP *)positions;                                                                                   \
        for (size_t i = 0; i < count; ++i) {                                                                        \
            int64_t v = (int64_t)x[i];                                                                              \
            v += v < 0 ? (int64_t)n : 0;                                                                            \
            int inside = (uint64_t)v < n;                                                                           \
            p[i] = (TP)(inside ? (uint64_t)v : n);                                                                  \
            all_inside &= inside;                                                                                   \
        }                                                                                                           \
    } while (0)

SIMD_API void SimdSynetGatherElementsSetIndex(const void * context, const uint8_t * idx)
{
    /* The API passes the context as const; it is the mutable object Init made. */
    gather_context * ctx = (gather_context *)(uintptr_t)context;
    if (ctx == NULL || idx == NULL || !ctx->index_const)
        return;
    sb_free(ctx->positions);
    ctx->positions = NULL;
    ctx->position_bytes = 0;
    const size_t n = ctx->src_count, rows = ctx->idx_count * ctx->inner;
    const size_t size = n < UINT8_MAX ? 1 : n < UINT16_MAX ? 2 : n < UINT32_MAX ? 4 : 0;
    if (size == 0 || rows == 0 || ctx->idx_count > SIZE_MAX / ctx->inner || ctx->outer > SIZE_MAX / rows / size)
        return; /* Forward reads idx as before */
    const size_t count = ctx->outer * rows;
    void * positions = sb_alloc(count, size);
    if (positions == NULL)
        return; /* optional (internal/memory.h): Forward reads idx as before */
    int all_inside = 1;
    if (ctx->index_size == 4) {
        if (size == 1) GATHER_POSITIONS_OF(int32_t, uint8_t);
        else if (size == 2) GATHER_POSITIONS_OF(int32_t, uint16_t);
        else GATHER_POSITIONS_OF(int32_t, uint32_t);
    } else {
        if (size == 1) GATHER_POSITIONS_OF(int64_t, uint8_t);
        else if (size == 2) GATHER_POSITIONS_OF(int64_t, uint16_t);
        else GATHER_POSITIONS_OF(int64_t, uint32_t);
    }
    ctx->positions = positions;
    ctx->position_size = size;
    ctx->position_bytes = count * size;
    ctx->all_inside = all_inside;
}

SIMD_API size_t SimdSynetGatherElementsInternalBufferSize(const void * context)
{
    return context == NULL ? 0 : ((const gather_context *)context)->position_bytes;
}

/* The vector paths, at AVX2 and above, for every data type: indices are checked a block of 16 at a time by vector
   comparisons, and a block found all inside [0, n) (the usual case) has its source offsets (index * inner + column)
   computed in vectors and stored to a small buffer, which a loop of an offset load, a data load and a store per
   element copies from, with no multiply; the other blocks, and the last partial one, take the checked scalar loop.
   Measured at AVX2 (32-bit data): 1.4x faster than the same check followed by a copy that multiplies in the loop on
   8x512x256 along axis 1; on 16x196x49 along axis 2, reading the index back from the buffer took 0.75x the time of
   reading it again from idx, and blocks of 16 beat blocks of 32 and 64 on both shapes.
   At AVX-512 only, rows of 32-bit data with inner == 1 and fewer than 64 source elements are gathered from
   registers by permutes (below). The AVX2 counterpart (eight 8-lane permutes and seven blends per 8 outputs) and
   AVX2 hardware gathers both took about 1.7x the time of the offset copy there; AVX-512 hardware gathers took 1.2x
   the time of the scalar copy on 8x512x256. The vector code is built with target attributes in this file (not
   per-ISA units); the AVX-512 code never in the emulation build, whose CPUs lack AVX-512. */
#if SB_X86 && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define GATHER_AVX2 __attribute__((target("avx2")))
#define GATHER_BLOCK 16

/* The 16 offsets of the block of indices at x (inner == 1: the indices themselves; else index * inner + the block's
   column k, `lane` + 0..15), or 0 when an index lies outside [0, n) (1 <= n, n * inner <= INT32_MAX): v and n - 1 - v
   both have a clear sign bit exactly when v is in range (the subtraction overflows only when v is already negative). */
GATHER_AVX2 static inline int gather_offsets64_avx2(const int64_t * x, size_t n, size_t inner, size_t lane,
    uint64_t * off)
{
    const __m256i last = _mm256_set1_epi64x((long long)n - 1), scale = _mm256_set1_epi64x((long long)inner);
    __m256i v[4], bad = _mm256_setzero_si256();
    for (int k = 0; k < 4; ++k) {
        v[k] = _mm256_loadu_si256((const __m256i *)x + k);
        bad = _mm256_or_si256(bad, _mm256_or_si256(v[k], _mm256_sub_epi64(last, v[k])));
    }
    if (__builtin_expect(_mm256_movemask_pd(_mm256_castsi256_pd(bad)) != 0, 0))
        return 0;
    __m256i column = _mm256_add_epi64(_mm256_set1_epi64x((long long)lane), _mm256_setr_epi64x(0, 1, 2, 3));
    for (int k = 0; k < 4; ++k) { /* in range: v and inner fit in 32 bits, their product too */
        __m256i o = inner == 1 ? v[k] : _mm256_add_epi64(_mm256_mul_epu32(v[k], scale), column);
        _mm256_storeu_si256((__m256i *)off + k, o);
        column = _mm256_add_epi64(column, _mm256_set1_epi64x(4));
    }
    return 1;
}

GATHER_AVX2 static inline int gather_offsets32_avx2(const int32_t * x, size_t n, size_t inner, size_t lane,
    uint32_t * off)
{
    const __m256i last = _mm256_set1_epi32((int)n - 1), scale = _mm256_set1_epi32((int)inner);
    __m256i v[2], bad = _mm256_setzero_si256();
    for (int k = 0; k < 2; ++k) {
        v[k] = _mm256_loadu_si256((const __m256i *)x + k);
        bad = _mm256_or_si256(bad, _mm256_or_si256(v[k], _mm256_sub_epi32(last, v[k])));
    }
    if (__builtin_expect(_mm256_movemask_ps(_mm256_castsi256_ps(bad)) != 0, 0))
        return 0;
    __m256i column = _mm256_add_epi32(_mm256_set1_epi32((int)lane), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    for (int k = 0; k < 2; ++k) {
        __m256i o = inner == 1 ? v[k] : _mm256_add_epi32(_mm256_mullo_epi32(v[k], scale), column);
        _mm256_storeu_si256((__m256i *)off + k, o);
        column = _mm256_add_epi32(column, _mm256_set1_epi32(8));
    }
    return 1;
}

/* One outer position of TD data: inner == 1 is one row of count outputs, output c reading src[idx]; inner > 1 is
   count rows of inner outputs, output k of a row reading src[idx * inner + k]. TO is the offset type of TI's
   OFFSETS. The checked loop corrects an index (+n if negative) and writes 0 for one outside [0, n). */
#define GATHER_OFFSETS(TD, TI, TO, OFFSETS)                                                                         \
    do {                                                                                                            \
        const TD * s = (const TD *)src;                                                                             \
        TD * d = (TD *)dst;                                                                                         \
        const size_t rows = inner == 1 ? 1 : count, width = inner == 1 ? count : inner, step = inner != 1;          \
        const TI * xr = (const TI *)x;                                                                              \
        for (size_t r = 0; r < rows; ++r, xr += width, d += width) {                                                \
            size_t i = 0;                                                                                           \
            for (; i + GATHER_BLOCK <= width; i += GATHER_BLOCK) {                                                  \
                TO off[GATHER_BLOCK];                                                                               \
                if (__builtin_expect(OFFSETS(xr + i, n, inner, i, off), 1)) {                                       \
                    for (size_t k = 0; k < GATHER_BLOCK; ++k)                                                       \
                        d[i + k] = s[off[k]];                                                                       \
                    continue;                                                                                       \
                }                                                                                                   \
                for (size_t k = i; k < i + GATHER_BLOCK; ++k)                                                       \
                    GATHER_CHECKED(k);                                                                              \
            }                                                                                                       \
            for (; i < width; ++i)                                                                                  \
                GATHER_CHECKED(i);                                                                                  \
        }                                                                                                           \
    } while (0)
#define GATHER_CHECKED(k)                                                                                           \
    do {                                                                                                            \
        int64_t v = (int64_t)xr[k];                                                                                 \
        v += v < 0 ? (int64_t)n : 0;                                                                                \
        d[k] = (uint64_t)v < n ? s[(size_t)v * inner + (k) * step] : 0;                                             \
    } while (0)

GATHER_AVX2 static void gather_outer_offsets_avx2(const void * src, size_t n, size_t inner, const void * x,
    size_t index_size, size_t count, void * dst, size_t data_size)
{
    if (index_size == 4) {
        if (data_size == 4) GATHER_OFFSETS(uint32_t, int32_t, uint32_t, gather_offsets32_avx2);
        else if (data_size == 2) GATHER_OFFSETS(uint16_t, int32_t, uint32_t, gather_offsets32_avx2);
        else GATHER_OFFSETS(uint8_t, int32_t, uint32_t, gather_offsets32_avx2);
    } else {
        if (data_size == 4) GATHER_OFFSETS(uint32_t, int64_t, uint64_t, gather_offsets64_avx2);
        else if (data_size == 2) GATHER_OFFSETS(uint16_t, int64_t, uint64_t, gather_offsets64_avx2);
        else GATHER_OFFSETS(uint8_t, int64_t, uint64_t, gather_offsets64_avx2);
    }
}

#endif

#if SB_X86 && (defined(__GNUC__) || defined(__clang__)) && !defined(SB_EMULATE_AVX512)
#define GATHER_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

/* A row of 32-bit data with inner == 1 and fewer than 64 source elements, at AVX-512: the row sits in four
   registers, zero past its n elements, and 16 outputs are two two-register permutes and a blend (bit 5 of the index
   picks the pair), where scalar code spends a load and a store per element (measured 1.6x faster than the offset
   copy on 16x196x49 along axis 2). An index is corrected (+n if negative) and clamped to n at its own width (an
   int64 index before it is narrowed to 32 bits), so every index outside [-n, n) reads one of the zeros. */
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

/* The 16 (first `tail`) outputs at d of positions v in [0, n] from the row in r. */
GATHER_AVX512 static inline void gather_16(const __m512 * r, __m512i v, __mmask16 tail, float * d)
{
    __m512 low = _mm512_permutex2var_ps(r[0], v, r[1]), high = _mm512_permutex2var_ps(r[2], v, r[3]);
    _mm512_mask_storeu_ps(d, tail, _mm512_mask_blend_ps(_mm512_test_epi32_mask(v, _mm512_set1_epi32(32)), low, high));
}

/* The row of n < 64 elements at s in four registers, zero past n (masked loads: nothing past it is read). */
GATHER_AVX512 static inline void gather_row_load(const uint32_t * s, size_t n, __m512 * r)
{
    for (int k = 0; k < 4; ++k) {
        size_t first = (size_t)k * 16, m = n > first ? n - first : 0;
        r[k] = _mm512_maskz_loadu_ps(m >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << m) - 1),
            (const float *)s + (m ? first : 0));
    }
}

GATHER_AVX512 static void gather_row_permute(const uint32_t * s, size_t n, const void * x, size_t index_size,
    size_t count, uint32_t * d)
{
    __m512 r[4];
    gather_row_load(s, n, r);
    __m512i count32 = _mm512_set1_epi32((int)n), count64 = _mm512_set1_epi64((long long)n);
    __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    size_t c = 0;
    for (; c + 16 <= count; c += 16)
        gather_16(r, gather_indices(x, index_size, c, 0xFFFF, count32, count64, evens), 0xFFFF, (float *)d + c);
    if (c < count) {
        __mmask16 tail = (__mmask16)((1u << (count - c)) - 1);
        gather_16(r, gather_indices(x, index_size, c, tail, count32, count64, evens), tail, (float *)d + c);
    }
}

/* The same row from SetIndex's one-byte positions (n < 64 <= UINT8_MAX: every position, n included, is a byte). */
GATHER_AVX512 static void gather_row_permute_positions(const uint32_t * s, size_t n, const uint8_t * p,
    size_t count, uint32_t * d)
{
    __m512 r[4];
    gather_row_load(s, n, r);
    size_t c = 0;
    for (; c + 16 <= count; c += 16)
        gather_16(r, _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p + c))), 0xFFFF, (float *)d + c);
    if (c < count) {
        __mmask16 tail = (__mmask16)((1u << (count - c)) - 1);
        gather_16(r, _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(tail, p + c)), tail, (float *)d + c);
    }
}

#endif

/* The path every outer position of a call takes (they all have the same shape). The vector paths need rows of at
   least one block of 16 outputs: below that the offset copy is the scalar loop behind a call, and the permute path
   loads its four registers for a handful of outputs (4x4 along axis 1: 27 ns through either, 15 in the scalar
   loop). The offsets are computed in 32 bits, so n * inner stays within INT32_MAX. */
enum { GATHER_SCALAR, GATHER_PERMUTE, GATHER_OFFSET_COPY };

static int gather_path(size_t n, size_t inner, size_t count, size_t data_size)
{
    if (n == 0 || n > (size_t)INT32_MAX || inner > (size_t)INT32_MAX / n || (inner == 1 ? count : inner) < 16)
        return GATHER_SCALAR;
    const int isa = sb_isa(); /* read once: the call's path is chosen at one ISA */
    (void)isa;
#ifdef GATHER_AVX512
    if (data_size == 4 && inner == 1 && n < 64 && isa >= SB_ISA_AVX512BW)
        return GATHER_PERMUTE;
#endif
#ifdef GATHER_AVX2
    if (isa >= SB_ISA_AVX2)
        return GATHER_OFFSET_COPY;
#endif
    (void)data_size;
    return GATHER_SCALAR;
}

/* One outer position through vector path `path` (not GATHER_SCALAR). */
static void gather_outer_fast(int path, const void * s, size_t n, size_t inner, const void * x, size_t index_size,
    size_t count, void * d, size_t data_size)
{
#ifdef GATHER_AVX512
    if (path == GATHER_PERMUTE) {
        gather_row_permute((const uint32_t *)s, n, x, index_size, count, (uint32_t *)d);
        return;
    }
#endif
#ifdef GATHER_AVX2
    gather_outer_offsets_avx2(s, n, inner, x, index_size, count, d, data_size);
#endif
    (void)path, (void)s, (void)n, (void)inner, (void)x, (void)index_size, (void)count, (void)d, (void)data_size;
}

/* Four elements an iteration for the row loops below (inner == 1), a few instructions an element: rolled, the copy
   from one-byte positions took 1.15 or 2 cycles an element by where the linker placed it (16x196x49 along axis 2 at
   avx2: 390 or 700 us, in two builds that differed elsewhere), the second where the loop straddled a 64-byte line of
   code. */
#define GATHER_UNROLLED _Pragma("GCC unroll 4")

/* One (data, index) type pair. `value` is the index after the negative correction; outside [0, n) it yields 0. */
#define GATHER_LOOP(TD, TI)                                                                                     \
    do {                                                                                                        \
        const TD * s = (const TD *)src;                                                                         \
        const TI * x = (const TI *)idx;                                                                         \
        TD * d = (TD *)dst;                                                                                     \
        const size_t n = ctx->src_count, inner = ctx->inner, rows = ctx->idx_count * inner;                     \
        const int path = gather_path(n, inner, ctx->idx_count, sizeof(TD));                                     \
        for (size_t o = 0; o < ctx->outer; ++o, s += n * inner, x += rows, d += rows) {                         \
            if (path != GATHER_SCALAR) {                                                                        \
                gather_outer_fast(path, s, n, inner, x, sizeof(TI), ctx->idx_count, d, sizeof(TD));             \
                continue;                                                                                       \
            }                                                                                                   \
            if (inner == 1) {                                                                                   \
                GATHER_UNROLLED for (size_t c = 0; c < rows; ++c) {                                             \
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

/* One data type through SetIndex's positions (TP): no sign correction, and no range check where all lie inside. */
#define GATHER_FROM_POSITIONS(TD, TP)                                                                           \
    do {                                                                                                        \
        const TD * s = (const TD *)src;                                                                         \
        const TP * p = (const TP *)ctx->positions;                                                              \
        TD * d = (TD *)dst;                                                                                     \
        const size_t n = ctx->src_count, inner = ctx->inner, rows = ctx->idx_count * inner;                     \
        const int permute = gather_path(n, inner, ctx->idx_count, sizeof(TD)) == GATHER_PERMUTE;                \
        for (size_t o = 0; o < ctx->outer; ++o, s += n * inner, p += rows, d += rows) {                         \
            if (permute)                                                                                        \
                GATHER_PERMUTE_POSITIONS(s, n, p, rows, d);                                                     \
            else if (ctx->all_inside && inner == 1)                                                             \
                GATHER_UNROLLED for (size_t c = 0; c < rows; ++c)                                               \
                    d[c] = s[p[c]];                                                                             \
            else if (ctx->all_inside)                                                                           \
                for (size_t c = 0; c < rows; c += inner)                                                        \
                    for (size_t i = 0; i < inner; ++i)                                                          \
                        d[c + i] = s[(size_t)p[c + i] * inner + i];                                             \
            else                                                                                                \
                for (size_t c = 0; c < rows; c += inner)                                                        \
                    for (size_t i = 0; i < inner; ++i)                                                          \
                        d[c + i] = p[c + i] < n ? s[(size_t)p[c + i] * inner + i] : (TD)0;                      \
        }                                                                                                       \
    } while (0)
/* The permute path takes 32-bit data and one-byte positions only (gather_path, n < 64). */
#ifdef GATHER_AVX512
#define GATHER_PERMUTE_POSITIONS(s, n, p, rows, d)                                                              \
    gather_row_permute_positions((const uint32_t *)(s), n, (const uint8_t *)(p), rows, (uint32_t *)(d))
#else
#define GATHER_PERMUTE_POSITIONS(s, n, p, rows, d) ((void)0)
#endif

SIMD_API void SimdSynetGatherElementsForward(void * context, const uint8_t * src, const uint8_t * idx,
    uint8_t * dst)
{
    const gather_context * ctx = (const gather_context *)context;
    if (ctx == NULL || src == NULL || idx == NULL || dst == NULL)
        return;
    if (ctx->positions != NULL) {
        switch (ctx->data_size * 8 + ctx->position_size) {
        case 4 * 8 + 1: GATHER_FROM_POSITIONS(uint32_t, uint8_t); break;
        case 4 * 8 + 2: GATHER_FROM_POSITIONS(uint32_t, uint16_t); break;
        case 4 * 8 + 4: GATHER_FROM_POSITIONS(uint32_t, uint32_t); break;
        case 2 * 8 + 1: GATHER_FROM_POSITIONS(uint16_t, uint8_t); break;
        case 2 * 8 + 2: GATHER_FROM_POSITIONS(uint16_t, uint16_t); break;
        case 2 * 8 + 4: GATHER_FROM_POSITIONS(uint16_t, uint32_t); break;
        case 1 * 8 + 1: GATHER_FROM_POSITIONS(uint8_t, uint8_t); break;
        case 1 * 8 + 2: GATHER_FROM_POSITIONS(uint8_t, uint16_t); break;
        default: GATHER_FROM_POSITIONS(uint8_t, uint32_t); break;
        }
        return;
    }
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
