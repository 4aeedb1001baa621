/* bfloat16.c: the conversions between float32 and bfloat16 bit patterns: float32 to bf16 rounds to nearest
   even and keeps a NaN a NaN; bf16 to float32 is exact. */
#include "simd_synet.h"
#include "internal/bf16.h"

SIMD_API void SimdFloat32ToBFloat16(const float * src, size_t size, uint16_t * dst)
{
    for (size_t i = 0; i < size; ++i)
        dst[i] = sb_float_to_bf16(src[i]);
}

SIMD_API void SimdBFloat16ToFloat32(const uint16_t * src, size_t size, float * dst)
{
    for (size_t i = 0; i < size; ++i)
        dst[i] = sb_bf16_to_float(src[i]);
}
