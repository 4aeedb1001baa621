/*
 * api.c: the GatherElements context (spec 3.11), plain C: a gather of single elements has no arithmetic to
 * vectorize, and on x86 hardware gathers are not faster than scalar loads for it.
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

/* One (data, index) type pair. `value` is the index after the negative correction; outside [0, n) it yields 0. */
#define GATHER_LOOP(TD, TI)                                                                                     \
    do {                                                                                                        \
        const TD * s = (const TD *)src;                                                                         \
        const TI * x = (const TI *)idx;                                                                         \
        TD * d = (TD *)dst;                                                                                     \
        const size_t n = ctx->src_count, inner = ctx->inner, rows = ctx->idx_count * inner;                     \
        for (size_t o = 0; o < ctx->outer; ++o, s += n * inner, x += rows, d += rows) {                         \
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
