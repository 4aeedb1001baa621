/*
 * conv_epilogue.h: bias + activation over a block of a convolution output that a kernel has just written, for the
 * direct (depthwise) algorithms; the GEMM-based ones get the same through the GEMM's epilogue.
 * Included by *.dispatch.c sources only (per-ISA code).
 */
#ifndef SB_CONV_EPILOGUE_H
#define SB_CONV_EPILOGUE_H

#include "convolution/conv.h"
#include "convolution/tmp_gemm.h"

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

/* C[i][j] (row stride ldc), 0 <= i < M, 0 <= j < N, becomes act(C[i][j] + bias[k]) where k is the output channel:
   row0 + i when ep->bias_per_row, else col0 + j (the same for Prelu's per-channel params). */
static void conv_epilogue_block(float * C, size_t M, size_t N, size_t ldc, size_t row0, size_t col0,
    const sb_epilogue * ep)
{
    if (!ep->bias)
        return;
    for (size_t i = 0; i < M; ++i)
        for (size_t j = 0; j < N; ++j)
            C[i * ldc + j] += ep->bias[ep->bias_per_row ? row0 + i : col0 + j];
}

#endif
