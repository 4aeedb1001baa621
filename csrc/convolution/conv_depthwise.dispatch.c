/*
 * conv_depthwise.dispatch.c: direct depthwise convolution (group == srcC == dstC), compiled once per ISA.
 *
 * NHWC: weights [kY][kX][C]; one output pixel at a time, vectors over channels (tail through partial loads).
 * NCHW: weights [C][1][kY][kX]; one plane at a time, vectors over the output row. The columns whose taps all lie
 * inside the image are computed with vectors; the few border columns test each tap.
 * Both accumulate the taps from zero, then the epilogue adds the bias and applies the activation to the block
 * just written (dst is never read before it is written).
 */
#include "convolution/conv.h"
#include <stdlib.h>

#include "convolution/conv_epilogue.h"

typedef struct {
    const conv_ctx * c;
    const float * src;
    float * dst;
} dw_arg;

/* The taps [range[2d], range[2d+1]) of every output d along one axis that read inside the image (computed once per
   call instead of per output: two integer divisions each). NULL without memory. */
static size_t * tap_ranges(size_t count, size_t stride, size_t pad, size_t dilation, size_t size, size_t kernel)
{
    size_t * range = (size_t *)malloc(2 * count * sizeof(size_t));
    if (range)
        for (size_t d = 0; d < count; ++d)
            conv_valid_range((ptrdiff_t)(d * stride) - (ptrdiff_t)pad, dilation, size, kernel, range + 2 * d,
                range + 2 * d + 1);
    return range;
}

/* Lanes 0, 2, 4, ... of the 2*SB_W floats at p: the inputs of SB_W outputs at stride 2. Reads p[2*SB_W - 1]. */
SB_INLINE vf vload_even(const float * p)
{
    vf a = vload(p), b = vload(p + SB_W);
#if SB_W == 4
    return __builtin_shufflevector(a, b, 0, 2, 4, 6);
#elif SB_W == 8
    return __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14);
#else
    return __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
#endif
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

/* Output rows [begin, end) of all images (row index = b*dstH + dy), NHWC. */
static void dw_nhwc_rows(void * arg, size_t begin, size_t end)
{
    const dw_arg * a = (const dw_arg *)arg;
    const conv_ctx * c = a->c;
    const SimdConvolutionParameters * p = &c->p;
    size_t C = p->srcC, kY = p->kernelY, kX = p->kernelX;
    sb_epilogue e = conv_group_epilogue(c, 0, 0);
    const float * w = c->weight;
    size_t * xr = tap_ranges(p->dstW, p->strideX, p->padX, p->dilationX, p->srcW, kX);
    for (size_t r = begin; r < end; ++r) {
        size_t b = r / p->dstH, dy = r % p->dstH;
        const float * src = a->src + b * p->srcH * p->srcW * C;
        float * row = a->dst + r * p->dstW * C;
        size_t ky0, ky1;
        conv_valid_range((ptrdiff_t)dy * (ptrdiff_t)p->strideY - (ptrdiff_t)p->padY, p->dilationY, p->srcH, kY,
            &ky0, &ky1);
        for (size_t dx = 0; dx < p->dstW; ++dx) {
            size_t kx0, kx1;
            taps_of(xr, dx, p->strideX, p->padX, p->dilationX, p->srcW, kX, &kx0, &kx1);
            size_t sy0 = dy * p->strideY - p->padY, sx0 = dx * p->strideX - p->padX; /* wrap, fixed by the taps */
            float * out = row + dx * C;
            size_t ch = 0;
            for (; ch + 2 * SB_W <= C; ch += 2 * SB_W) {
                vf s0 = vset1(0.0f), s1 = vset1(0.0f);
                for (size_t ky = ky0; ky < ky1; ++ky) {
                    const float * line = src + (sy0 + ky * p->dilationY) * p->srcW * C + ch;
                    const float * wl = w + ky * kX * C + ch;
                    for (size_t kx = kx0; kx < kx1; ++kx) {
                        const float * s = line + (sx0 + kx * p->dilationX) * C;
                        s0 = vfmadd(vload(s), vload(wl + kx * C), s0);
                        s1 = vfmadd(vload(s + SB_W), vload(wl + kx * C + SB_W), s1);
                    }
                }
                vstore(out + ch, s0);
                vstore(out + ch + SB_W, s1);
            }
            for (; ch < C; ch += SB_W) {
                /* The last partial vector moves back to end at C (same operations on the overlap) when C >= SB_W. */
                if (C - ch < SB_W && C >= SB_W)
                    ch = C - SB_W;
                size_t n = C - ch < SB_W ? C - ch : SB_W;
                vf s0 = vset1(0.0f);
                for (size_t ky = ky0; ky < ky1; ++ky) {
                    const float * line = src + (sy0 + ky * p->dilationY) * p->srcW * C + ch;
                    const float * wl = w + ky * kX * C + ch;
                    for (size_t kx = kx0; kx < kx1; ++kx) {
                        const float * s = line + (sx0 + kx * p->dilationX) * C;
                        s0 = n == SB_W ? vfmadd(vload(s), vload(wl + kx * C), s0)
                                       : vfmadd(vload_n(s, n), vload_n(wl + kx * C, n), s0);
                    }
                }
                if (n == SB_W)
                    vstore(out + ch, s0);
                else
                    vstore_n(out + ch, s0, n);
            }
        }
        sb_epilogue_block(row, C, p->dstW, C, 0, 0, &e);
    }
    free(xr);
}

void SB_FN(conv_forward_dw_nhwc)(const conv_ctx * c, const float * src, float * buf, float * dst)
{
    (void)buf;
    dw_arg a = {c, src, dst};
    size_t rows = c->batch * c->p.dstH;
    size_t work = c->p.dstW * c->p.dstC * c->p.kernelY * c->p.kernelX;
    sb_parallel_for(rows, work >= 4096 ? 1 : (4096 + work - 1) / work, dw_nhwc_rows, &a);
}

/* One output value from the taps that lie inside the image (border columns). */
static float dw_nchw_point(const SimdConvolutionParameters * p, const float * plane, const float * w, size_t ky0,
    size_t ky1, size_t dy, size_t dx, size_t kx0, size_t kx1)
{
    size_t sy0 = dy * p->strideY - p->padY, sx0 = dx * p->strideX - p->padX;
    vf s = vset1(0.0f); /* lane 0 only: the same fused multiply-add as the vector columns */
    for (size_t ky = ky0; ky < ky1; ++ky) {
        const float * line = plane + (sy0 + ky * p->dilationY) * p->srcW;
        for (size_t kx = kx0; kx < kx1; ++kx)
            s = vfmadd(vset1(line[sx0 + kx * p->dilationX]), vset1(w[ky * p->kernelX + kx]), s);
    }
    return s[0];
}

/* Planes [begin, end) of all images (plane index = b*C + c), NCHW. */
static void dw_nchw_planes(void * arg, size_t begin, size_t end)
{
    const dw_arg * a = (const dw_arg *)arg;
    const conv_ctx * c = a->c;
    const SimdConvolutionParameters * p = &c->p;
    size_t C = p->srcC, kY = p->kernelY, kX = p->kernelX, sX = p->strideX;
    /* Columns whose every tap is inside: the intersection over kx of the valid ranges. */
    size_t in0 = 0, in1 = p->dstW;
    for (size_t kx = 0; kx < kX; ++kx) {
        size_t b0, b1;
        conv_valid_range((ptrdiff_t)(kx * p->dilationX) - (ptrdiff_t)p->padX, sX, p->srcW, p->dstW, &b0, &b1);
        if (b0 > in0) in0 = b0;
        if (b1 < in1) in1 = b1;
    }
    if (in0 > in1) in0 = in1;
    size_t * yr = tap_ranges(p->dstH, p->strideY, p->padY, p->dilationY, p->srcH, kY);
    size_t * xr = tap_ranges(p->dstW, sX, p->padX, p->dilationX, p->srcW, kX);
    sb_epilogue e = conv_group_epilogue(c, 0, 1);
    for (size_t q = begin; q < end; ++q) {
        size_t ch = q % C;
        const float * plane = a->src + q * p->srcH * p->srcW;
        const float * w = c->weight + ch * kY * kX;
        float * out = a->dst + q * p->dstH * p->dstW;
        for (size_t dy = 0; dy < p->dstH; ++dy) {
            size_t ky0, ky1, kx0, kx1;
            taps_of(yr, dy, p->strideY, p->padY, p->dilationY, p->srcH, kY, &ky0, &ky1);
            float * row = out + dy * p->dstW;
            for (size_t dx = 0; dx < in0; ++dx) {
                taps_of(xr, dx, sX, p->padX, p->dilationX, p->srcW, kX, &kx0, &kx1);
                row[dx] = dw_nchw_point(p, plane, w, ky0, ky1, dy, dx, kx0, kx1);
            }
            size_t base = dy * p->strideY - p->padY; /* wraps; every used row index is inside */
            /* Stride 2: a pair of loads covers the last tap's 2*SB_W floats only while they stay inside the row. */
#define even_ok(dx) ((dx) * 2 + (kX - 1) * p->dilationX + 2 * SB_W <= p->srcW + p->padX)
            size_t dx = in0;
            if (sX == 1) /* two vectors at a time: one weight broadcast feeds two multiply-adds */
                for (; dx + 2 * SB_W <= in1; dx += 2 * SB_W) {
                    vf s0 = vset1(0.0f), s1 = vset1(0.0f);
                    for (size_t ky = ky0; ky < ky1; ++ky) {
                        const float * line = plane + (base + ky * p->dilationY) * p->srcW + dx - p->padX;
                        const float * wk = w + ky * kX;
                        for (size_t kx = 0; kx < kX; ++kx) {
                            vf wv = vset1(wk[kx]);
                            const float * x = line + kx * p->dilationX;
                            s0 = vfmadd(vload(x), wv, s0);
                            s1 = vfmadd(vload(x + SB_W), wv, s1);
                        }
                    }
                    vstore(row + dx, s0);
                    vstore(row + dx + SB_W, s1);
                }
            for (; dx < in1;) {
                /* Full vectors; the last one is moved back to end at in1 (it recomputes a few outputs with the very
                   same operations) so that only rows narrower than a vector take the partial path. */
                size_t n = SB_W;
                if (dx + SB_W > in1) {
                    if (in1 - in0 >= SB_W)
                        dx = in1 - SB_W;
                    else
                        n = in1 - dx;
                }
                vf s = vset1(0.0f);
                for (size_t ky = ky0; ky < ky1; ++ky) {
                    const float * line = plane + (base + ky * p->dilationY) * p->srcW;
                    const float * wk = w + ky * kX;
                    if (sX == 1 && n == SB_W) {
                        for (size_t kx = 0; kx < kX; ++kx)
                            s = vfmadd(vload(line + (dx + kx * p->dilationX - p->padX)), vset1(wk[kx]), s);
                    } else if (n == SB_W && sX == 2 && even_ok(dx)) {
                        for (size_t kx = 0; kx < kX; ++kx)
                            s = vfmadd(vload_even(line + (dx * 2 + kx * p->dilationX - p->padX)), vset1(wk[kx]), s);
                    } else if (n == SB_W) {
                        for (size_t kx = 0; kx < kX; ++kx) {
                            const float * first = line + (dx * sX + kx * p->dilationX - p->padX);
                            vf x;
                            for (int i = 0; i < SB_W; ++i) /* fixed count: unrolled into lane inserts */
                                x[i] = first[(size_t)i * sX];
                            s = vfmadd(x, vset1(wk[kx]), s);
                        }
                    } else {
                        for (size_t kx = 0; kx < kX; ++kx) {
                            const float * first = line + (dx * sX + kx * p->dilationX - p->padX);
                            vf x = vset1(0.0f);
                            for (size_t i = 0; i < n; ++i)
                                x[i] = first[i * sX];
                            s = vfmadd(x, vset1(wk[kx]), s);
                        }
                    }
                }
                if (n == SB_W)
                    vstore(row + dx, s);
                else
                    vstore_n(row + dx, s, n);
                dx += n;
            }
            for (size_t dx = in1; dx < p->dstW; ++dx) {
                taps_of(xr, dx, sX, p->padX, p->dilationX, p->srcW, kX, &kx0, &kx1);
                row[dx] = dw_nchw_point(p, plane, w, ky0, ky1, dy, dx, kx0, kx1);
            }
        }
        sb_epilogue_block(out, p->dstH * p->dstW, 1, p->dstH * p->dstW, ch, 0, &e);
    }
#undef even_ok
    free(yr);
    free(xr);
}

void SB_FN(conv_forward_dw_nchw)(const conv_ctx * c, const float * src, float * buf, float * dst)
{
    (void)buf;
    dw_arg a = {c, src, dst};
    size_t work = c->p.dstH * c->p.dstW * c->p.kernelY * c->p.kernelX;
    sb_parallel_for(c->batch * c->p.srcC, work >= 4096 ? 1 : (4096 + work - 1) / work, dw_nchw_planes, &a);
}
