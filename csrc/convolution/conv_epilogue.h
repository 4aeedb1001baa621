/*
 * conv_epilogue.h: bias + activation over a block of a convolution output that a kernel has just written, for the
 * direct (depthwise) algorithms; the GEMM-based ones get the same through the GEMM's epilogue.
 * Included by *.dispatch.c sources only (per-ISA code).
 */
#ifndef SB_CONV_EPILOGUE_H
#define SB_CONV_EPILOGUE_H

#include "convolution/conv.h"
#include "internal/activation.h" /* sb_epilogue_block */
#include "internal/gemm.h"

/* The epilogue of the output channels of group g: bias and Prelu slopes start at the group's first channel;
   per_row says whether channels run along GEMM rows (NCHW) or columns (NHWC). */
static inline sb_epilogue conv_group_epilogue(const conv_ctx * c, size_t g, int per_row)
{
    size_t first = g * (c->p.dstC / c->p.group);
    sb_epilogue e;
    e.bias = c->bias ? c->bias + first : NULL;
    e.bias_per_row = per_row;
    e.activation = (int)c->p.activation;
    e.params = c->params && c->p.activation == SimdConvolutionActivationPrelu ? c->params + first : c->params;
    e.params_per_row = per_row;
    return e;
}

#endif
