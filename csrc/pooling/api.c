/* api.c: the exported pooling functions; each forwards to the kernel of the selected ISA. */
#include "simd_synet.h"
#include "internal/kernels.h"

static sb_pooling_average_fn * const average_table[SB_ISA_COUNT] = SB_TABLE(pooling_average);
static sb_pooling_max32f_fn * const max32f_table[SB_ISA_COUNT] = SB_TABLE(pooling_max32f);
static sb_pooling_max16b_fn * const max16b_table[SB_ISA_COUNT] = SB_TABLE(pooling_max16b);
static sb_pooling_max8u_fn * const max8u_table[SB_ISA_COUNT] = SB_TABLE(pooling_max8u);

/* Only the two documented formats are computed; any other value leaves dst untouched. */
static int known_format(SimdTensorFormatType format)
{
    return format == SimdTensorFormatNchw || format == SimdTensorFormatNhwc;
}

SIMD_API void SimdSynetPoolingAverage(const float * src, size_t srcC, size_t srcH, size_t srcW, size_t kernelY,
    size_t kernelX, size_t strideY, size_t strideX, size_t padY, size_t padX, float * dst, size_t dstH, size_t dstW,
    SimdBool excludePad, SimdTensorFormatType format)
{
    if (!known_format(format))
        return;
    SB_PICK(average_table)(src, srcC, srcH, srcW, kernelY, kernelX, strideY, strideX, padY, padX, dst, dstH, dstW,
        excludePad, format);
}

SIMD_API void SimdSynetPoolingMax32f(const float * src, size_t srcC, size_t srcH, size_t srcW, size_t kernelC,
    size_t kernelY, size_t kernelX, size_t strideC, size_t strideY, size_t strideX, size_t padC, size_t padY,
    size_t padX, float * dst, size_t dstC, size_t dstH, size_t dstW, SimdTensorFormatType format)
{
    if (!known_format(format))
        return;
    SB_PICK(max32f_table)(src, srcC, srcH, srcW, kernelC, kernelY, kernelX, strideC, strideY, strideX, padC, padY,
        padX, dst, dstC, dstH, dstW, format);
}

SIMD_API void SimdSynetPoolingMax16b(const uint16_t * src, size_t srcC, size_t srcH, size_t srcW, size_t kernelY,
    size_t kernelX, size_t strideY, size_t strideX, size_t padY, size_t padX, uint16_t * dst, size_t dstH,
    size_t dstW, SimdTensorFormatType format)
{
    if (!known_format(format))
        return;
    SB_PICK(max16b_table)(src, srcC, srcH, srcW, kernelY, kernelX, strideY, strideX, padY, padX, dst, dstH, dstW,
        format);
}

SIMD_API void SimdSynetPoolingMax8u(const uint8_t * src, size_t srcC, size_t srcH, size_t srcW, size_t kernelY,
    size_t kernelX, size_t strideY, size_t strideX, size_t padY, size_t padX, uint8_t * dst, size_t dstH,
    size_t dstW, SimdTensorFormatType format)
{
    if (!known_format(format))
        return;
    SB_PICK(max8u_table)(src, srcC, srcH, srcW, kernelY, kernelX, strideY, strideX, padY, padX, dst, dstH, dstW,
        format);
}
