/*
 * conv.h: the FP32 convolution context shared by csrc/convolution/api.c and the per-ISA algorithm sources.
 *
 * A context records the parameters, the batch, the ISA selected at Init and the algorithm chosen for the shape.
 * Every algorithm has one entry point per ISA with the signature conv_forward_sig; api.c calls the variant of the
 * ISA recorded at Init, so a context keeps its algorithm and its numerics whatever ISA is selected later.
 *
 * Geometry (as upstream's): output (dy, dx) with tap (ky, kx) reads input row dy*strideY + ky*dilationY - padY and
 * column dx*strideX + kx*dilationX - padX; taps outside the image read zero. The end pads only size the output.
 */
#ifndef SB_CONVOLUTION_CONV_H
#define SB_CONVOLUTION_CONV_H

#include <stddef.h>

#include "simd_synet.h"
#include "internal/dispatch.h"

enum {
    CONV_ALGO_GEMM,        /* im2col (NCHW) or im2row (NHWC) + GEMM, every geometry */
    CONV_ALGO_1X1,         /* 1x1, stride 1, pad 0: the source is already the GEMM operand */
    CONV_ALGO_DW_NHWC,     /* depthwise, NHWC: vectors over channels */
    CONV_ALGO_DW_NCHW,     /* depthwise, NCHW: vectors over the output row */
    CONV_ALGO_WINOGRAD2,   /* Winograd F(2x2,3x3): 3x3, stride 1, dilation 1, group 1 */
    CONV_ALGO_WINOGRAD4,   /* Winograd F(4x4,3x3): the same shapes, larger outputs */
    CONV_ALGO_DIRECT_NHWC, /* NHWC, group 1, 16 to 32 channels: the GEMM reads each tap's rows from the source */
    CONV_ALGO_COUNT
};

/* NhwcDirect takes kernels of up to this many taps (8x8: its per-row array of tap pointers). */
#define CONV_DIRECT_TAPS 64

/* Whether NhwcDirect reads an NCHW source in place (else it transposes it to NHWC first). In place, a block of
   output pixels reads one cache line of every channel plane per tap; when the plane size is a multiple of 4 KiB,
   or of 1 or 2 KiB with many channels, those lines fall in a few sets of a 64-set L1 and evict each other. Measured
   (avx2, 3x3 stride 2 32->64 at 112x112 and 110x110, 7x7 stride 2 16->64 at 224x224 and 220x220): in place is
   1.08x, 1.21x, 0.77x and 1.02x the transposes; at 224x224 all 16 planes map to one set. So: in place while no set
   of 64 gets more of the planes' lines than an 8-way L1 holds. */
static inline int conv_direct_in_place(const SimdConvolutionParameters * p)
{
    unsigned char per_set[64] = {0};
    size_t plane = p->srcH * p->srcW * sizeof(float);
    for (size_t c = 0; c < p->srcC; ++c)
        if (++per_set[c * plane / 64 % 64] > 8)
            return 0;
    return 1;
}

typedef struct conv_ctx {
    sb_context base; /* first: SimdRelease frees any context through it */
    SimdConvolutionParameters p;
    size_t batch;
    int isa;  /* the ISA selected when Init ran */
    int algo; /* CONV_ALGO_* */
    /* Set by SetParams: the caller's arrays (kept, not copied), and the transformed weights of algorithms that
       need them (Winograd), owned by the context. */
    const float * weight;
    int no_memory; /* the last SetParams failed for memory: Forward fails (internal/memory.h) */
    const float * bias;
    const float * params;
    float * packed;
    size_t packed_size;
    /* Scratch used when Forward gets buf == NULL: allocated on first use, ExternalBufferSize floats. */
    float * buffer;
    size_t buffer_size;
    char info[48];
} conv_ctx;

/* The algorithms' entry points: dst from src, with buf as scratch (ExternalBufferSize floats). */
typedef void conv_forward_sig(const conv_ctx * ctx, const float * src, float * buf, float * dst);
SB_KERNEL(conv_forward_gemm, conv_forward_sig);
SB_KERNEL(conv_forward_1x1, conv_forward_sig);
SB_KERNEL(conv_forward_dw_nhwc, conv_forward_sig);
SB_KERNEL(conv_forward_dw_nchw, conv_forward_sig);
SB_KERNEL(conv_forward_winograd2, conv_forward_sig);
SB_KERNEL(conv_forward_winograd4, conv_forward_sig);
SB_KERNEL(conv_forward_direct_nhwc, conv_forward_sig);
/* Transforms the weights for the algorithms that keep their own copy; returns the new array (sb_alloc) or NULL. */
SB_KERNEL(conv_pack_nhwc, float *(const conv_ctx * ctx, const float * weight, size_t * size));

/* Winograd's V ([KK][T][C]) and M ([KK][T][D]) are KK planes of T rows of `width` floats, this many floats apart: an
   odd number of cache lines, so the KK vectors of one tile that a transform stores (loads) fall in KK different L1
   sets. T * width floats apart, many can share a set: 64->64 at 56x56 (F(4x4): 196 * 64 floats, 12.25 pages) puts
   every fourth plane at one page offset, 9 of a tile's 36 vectors in each of four sets of the 8-way L1. */
static inline size_t conv_winograd_plane(size_t T, size_t width)
{
    return ((T * width + 15) / 16 | 1) * 16;
}

/* The outputs d in [*begin, *end) of a row (or column) whose tap reads input index d*stride + offset inside
   [0, size); outputs outside the range read padding. */
static inline void conv_valid_range(ptrdiff_t offset, size_t stride, size_t size, size_t count, size_t * begin,
    size_t * end)
{
    ptrdiff_t s = (ptrdiff_t)stride;
    ptrdiff_t lo = offset < 0 ? (-offset + s - 1) / s : 0;
    ptrdiff_t last = (ptrdiff_t)size - 1 - offset;
    ptrdiff_t hi = last < 0 ? 0 : last / s + 1;
    if (hi > (ptrdiff_t)count) hi = (ptrdiff_t)count;
    if (lo > hi) lo = hi;
    *begin = (size_t)lo;
    *end = (size_t)hi;
}

/* The output columns [*in0, *in1) whose every tap lies inside the image (the intersection over kx of the valid
   ranges); *in0 == *in1 when there are none. */
static inline void conv_inner_columns(const SimdConvolutionParameters * p, size_t * in0, size_t * in1)
{
    *in0 = 0;
    *in1 = p->dstW;
    for (size_t kx = 0; kx < p->kernelX; ++kx) {
        size_t b0, b1;
        conv_valid_range((ptrdiff_t)(kx * p->dilationX) - (ptrdiff_t)p->padX, p->strideX, p->srcW, p->dstW, &b0,
            &b1);
        if (b0 > *in0) *in0 = b0;
        if (b1 < *in1) *in1 = b1;
    }
    if (*in0 > *in1) *in0 = *in1;
}

#endif /* SB_CONVOLUTION_CONV_H */
