/* api.c: the exported functions of the elementwise family; each forwards to the kernel of the selected ISA. */
#include "simd_synet.h"
#include "internal/kernels.h"
#include "internal/memory.h"

static sb_eltwise_fn * const eltwise_table[SB_ISA_COUNT] = SB_TABLE(eltwise);

SIMD_API void SimdSynetEltwiseLayerForward(float const * const * src, const float * weight, size_t count, size_t size,
    SimdSynetEltwiseOperationType type, float * dst)
{
    if (count < 2 || type < SimdSynetEltwiseOperationProduct || type > SimdSynetEltwiseOperationMin)
        return;
    SB_PICK(eltwise_table)(src, weight, count, size, type, dst);
}

static sb_unary_fn * const unary_table[SB_ISA_COUNT] = SB_TABLE(unary);

SIMD_API void SimdSynetUnaryOperation32f(const float * src, size_t size, SimdSynetUnaryOperation32fType type,
    float * dst)
{
    if (type < SimdSynetUnaryOperation32fAbs || type > SimdSynetUnaryOperation32fZero)
        return;
    SB_PICK(unary_table)(src, size, type, dst);
}

static sb_softmax32f_fn * const softmax32f_table[SB_ISA_COUNT] = SB_TABLE(softmax32f);

SIMD_API void SimdSynetSoftmax32f(const float * src, size_t outer, size_t count, size_t inner, float * dst)
{
    SB_PICK(softmax32f_table)(src, outer, count, inner, dst);
}

/* The pre-v7.0.160 name of SimdSynetSoftmax32f (the header declares it): the same function. */
SIMD_API void SimdSynetSoftmaxLayerForward(const float * src, size_t outer, size_t count, size_t inner, float * dst)
{
    SB_PICK(softmax32f_table)(src, outer, count, inner, dst);
}

static sb_softmax16b_fn * const softmax16b_table[SB_ISA_COUNT] = SB_TABLE(softmax16b);

SIMD_API void SimdSynetSoftmax16b(const uint16_t * src, size_t outer, size_t count, size_t inner, uint16_t * dst)
{
    SB_PICK(softmax16b_table)(src, outer, count, inner, dst);
}

static sb_lrn_fn * const lrn_table[SB_ISA_COUNT] = SB_TABLE(lrn);

SIMD_API void SimdSynetLrnLayerCrossChannels(const float * src, size_t half, size_t channels, size_t spatial,
    const float * k, float * dst, SimdTensorFormatType format)
{
    sb_clear_error(); /* NHWC needs a row buffer: without it the call fails, dst unwritten (internal/memory.h) */
    if (format != SimdTensorFormatNchw && format != SimdTensorFormatNhwc)
        return;
    SB_PICK(lrn_table)(src, half, channels, spatial, k, dst, format);
}

static sb_shuffle_fn * const shuffle_table[SB_ISA_COUNT] = SB_TABLE(shuffle);

SIMD_API void SimdSynetShuffleLayerForward(const float * src0, const float * src1, size_t channels0, size_t channels1,
    size_t spatial, float * dst0, float * dst1, SimdTensorFormatType format, int type)
{
    if ((format != SimdTensorFormatNchw && format != SimdTensorFormatNhwc) || (type != 0 && type != 1) ||
        channels0 % 2 != 0 || channels1 % 2 != 0)
        return;
    SB_PICK(shuffle_table)(src0, src1, channels0, channels1, spatial, dst0, dst1, format, type);
}
