/*
 * kernels.h: every kernel the exported functions dispatch to, with its signature (SB_KERNEL, internal/dispatch.h).
 *
 * Included by every kernel unit (internal/target.h) and by the API files, so the definition of each ISA's variant
 * and the table that calls it are checked against the same declaration. Kernels that serve an exported function
 * with its own arguments take that function's type. The others are declared where their types are: the GEMM's in
 * internal/gemm.h, a family's in its own header (convolution/conv.h), which the family's kernel sources and api.c
 * include, so that internal headers never depend on a family's.
 */
#ifndef SB_KERNELS_H
#define SB_KERNELS_H

#include "simd_synet.h"
#include "internal/dispatch.h"
#include "internal/gemm.h"        /* gemm32f_* */

/* elementwise/ */
SB_KERNEL(eltwise, SimdSynetEltwiseLayerForward);
SB_KERNEL(unary, SimdSynetUnaryOperation32f);
SB_KERNEL(softmax32f, SimdSynetSoftmax32f);
SB_KERNEL(softmax16b, SimdSynetSoftmax16b);
SB_KERNEL(lrn, SimdSynetLrnLayerCrossChannels);
SB_KERNEL(shuffle, SimdSynetShuffleLayerForward);

/* pooling/ */
SB_KERNEL(pooling_average, SimdSynetPoolingAverage);
SB_KERNEL(pooling_max32f, SimdSynetPoolingMax32f);
SB_KERNEL(pooling_max16b, SimdSynetPoolingMax16b);
SB_KERNEL(pooling_max8u, SimdSynetPoolingMax8u);

/* inner_product/: SimdSynetInnerProduct8i with its compatibility flags reduced to `precise` (pairs not saturated). */
SB_KERNEL(inner_product_8i, void(size_t M, size_t N, size_t K, const uint8_t * src, const int8_t * weight,
    int32_t * dst, int precise));

#endif /* SB_KERNELS_H */
