/* api.c: the exported functions of the elementwise family; each forwards to the kernel of the selected ISA. */
#include "simd_synet.h"
#include "internal/dispatch.h"

typedef void (*eltwise_fn)(float const * const *, const float *, size_t, size_t, SimdSynetEltwiseOperationType,
    float *);
SB_DECLARE(eltwise, void, (float const * const *, const float *, size_t, size_t, SimdSynetEltwiseOperationType,
    float *));
static const eltwise_fn eltwise_table[SB_ISA_COUNT] = SB_TABLE(eltwise);

SIMD_API void SimdSynetEltwiseLayerForward(float const * const * src, const float * weight, size_t count, size_t size,
    SimdSynetEltwiseOperationType type, float * dst)
{
    if (count < 2 || type < SimdSynetEltwiseOperationProduct || type > SimdSynetEltwiseOperationMin)
        return;
    SB_PICK(eltwise_table)(src, weight, count, size, type, dst);
}

typedef void (*unary_fn)(const float *, size_t, SimdSynetUnaryOperation32fType, float *);
SB_DECLARE(unary, void, (const float *, size_t, SimdSynetUnaryOperation32fType, float *));
static const unary_fn unary_table[SB_ISA_COUNT] = SB_TABLE(unary);

SIMD_API void SimdSynetUnaryOperation32f(const float * src, size_t size, SimdSynetUnaryOperation32fType type,
    float * dst)
{
    if (type < SimdSynetUnaryOperation32fAbs || type > SimdSynetUnaryOperation32fZero)
        return;
    SB_PICK(unary_table)(src, size, type, dst);
}

typedef void (*softmax32f_fn)(const float *, size_t, size_t, size_t, float *);
SB_DECLARE(softmax32f, void, (const float *, size_t, size_t, size_t, float *));
static const softmax32f_fn softmax32f_table[SB_ISA_COUNT] = SB_TABLE(softmax32f);

SIMD_API void SimdSynetSoftmax32f(const float * src, size_t outer, size_t count, size_t inner, float * dst)
{
    SB_PICK(softmax32f_table)(src, outer, count, inner, dst);
}

/* The pre-v7.0.160 name of SimdSynetSoftmax32f (the header declares it): the same function. */
SIMD_API void SimdSynetSoftmaxLayerForward(const float * src, size_t outer, size_t count, size_t inner, float * dst)
{
    SB_PICK(softmax32f_table)(src, outer, count, inner, dst);
}

typedef void (*softmax16b_fn)(const uint16_t *, size_t, size_t, size_t, uint16_t *);
SB_DECLARE(softmax16b, void, (const uint16_t *, size_t, size_t, size_t, uint16_t *));
static const softmax16b_fn softmax16b_table[SB_ISA_COUNT] = SB_TABLE(softmax16b);

SIMD_API void SimdSynetSoftmax16b(const uint16_t * src, size_t outer, size_t count, size_t inner, uint16_t * dst)
{
    SB_PICK(softmax16b_table)(src, outer, count, inner, dst);
}

typedef void (*lrn_fn)(const float *, size_t, size_t, size_t, const float *, float *, SimdTensorFormatType);
SB_DECLARE(lrn, void, (const float *, size_t, size_t, size_t, const float *, float *, SimdTensorFormatType));
static const lrn_fn lrn_table[SB_ISA_COUNT] = SB_TABLE(lrn);

SIMD_API void SimdSynetLrnLayerCrossChannels(const float * src, size_t half, size_t channels, size_t spatial,
    const float * k, float * dst, SimdTensorFormatType format)
{
    if (format != SimdTensorFormatNchw && format != SimdTensorFormatNhwc)
        return;
    SB_PICK(lrn_table)(src, half, channels, spatial, k, dst, format);
}

typedef void (*shuffle_fn)(const float *, const float *, size_t, size_t, size_t, float *, float *,
    SimdTensorFormatType, int);
SB_DECLARE(shuffle, void, (const float *, const float *, size_t, size_t, size_t, float *, float *,
    SimdTensorFormatType, int));
static const shuffle_fn shuffle_table[SB_ISA_COUNT] = SB_TABLE(shuffle);

SIMD_API void SimdSynetShuffleLayerForward(const float * src0, const float * src1, size_t channels0, size_t channels1,
    size_t spatial, float * dst0, float * dst1, SimdTensorFormatType format, int type)
{
    if ((format != SimdTensorFormatNchw && format != SimdTensorFormatNhwc) || (type != 0 && type != 1) ||
        channels0 % 2 != 0 || channels1 % 2 != 0)
        return;
    SB_PICK(shuffle_table)(src0, src1, channels0, channels1, spatial, dst0, dst1, format, type);
}
