/*
 * conv_depthwise.h: what the two depthwise sources share (conv_depthwise_nhwc.dispatch.c and
 * conv_depthwise_nchw.dispatch.c): the call's argument, the taps that fall inside the image and the 3x3 test.
 * Included by *.dispatch.c sources only (per-ISA code).
 *
 * Both layouts: the taps that lie inside the image are summed in (ky, kx) order from zero on every path (general,
 * 3x3 blocks, borders), so an output does not depend on the path; then the bias and the activation are applied to
 * what was just written (dst is never read before it is written).
 */
#ifndef SB_CONV_DEPTHWISE_H
#define SB_CONV_DEPTHWISE_H

#include <stdlib.h>

#include "convolution/conv.h"
#include "convolution/conv_epilogue.h"

/* Loops over register blocks must be unrolled completely, or the blocks' arrays of vectors live on the stack. */
#define DW_UNROLL _Pragma("GCC unroll 32")

typedef struct {
    const conv_ctx * c;
    const float * src;
    float * dst;
} dw_arg;

/* The taps [range[2d], range[2d+1]) of every output d along one axis that read inside the image (computed once per
   call instead of per output: two integer divisions each). NULL without memory. */
static inline size_t * tap_ranges(size_t count, size_t stride, size_t pad, size_t dilation, size_t size, size_t kernel)
{
    size_t * range = (size_t *)sb_alloc(2 * count, sizeof(size_t));
    if (range)
        for (size_t d = 0; d < count; ++d)
            conv_valid_range((ptrdiff_t)(d * stride) - (ptrdiff_t)pad, dilation, size, kernel, range + 2 * d,
                range + 2 * d + 1);
    return range;
}

/* Taps [*t0, *t1) of output d along one axis: from the precomputed table, or computed when it is missing. */
SB_INLINE void taps_of(const size_t * table, size_t d, size_t stride, size_t pad, size_t dilation, size_t size,
    size_t kernel, size_t * t0, size_t * t1)
{
    if (table) {
        *t0 = table[2 * d];
        *t1 = table[2 * d + 1];
    } else
        conv_valid_range((ptrdiff_t)(d * stride) - (ptrdiff_t)pad, dilation, size, kernel, t0, t1);
}

SB_INLINE int dw_is_3x3(const SimdConvolutionParameters * p)
{
    return p->kernelY == 3 && p->kernelX == 3 && p->dilationY == 1 && p->dilationX == 1 &&
        (p->strideX == 1 || p->strideX == 2);
}

#endif /* SB_CONV_DEPTHWISE_H */
