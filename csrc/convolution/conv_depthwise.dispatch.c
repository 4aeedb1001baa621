/*
 * conv_depthwise.dispatch.c: direct depthwise convolution (group == srcC == dstC), compiled once per ISA.
 *
 * NHWC: weights [kY][kX][C]; one output pixel at a time, vectors over channels (tail through partial loads).
 * NCHW: weights [C][1][kY][kX]; one plane at a time, vectors over the output row. The columns whose taps all lie
 * inside the image are computed with vectors; the few border columns test each tap.
 * 3x3 kernels (dilation 1, stride 1 or 2), the common case, have their own interior blocks: the nine weights stay in
 * registers and every source vector loaded feeds every output whose taps cover it, with four independent
 * accumulators so that the multiply-adds' latency is hidden. Rows whose taps leave the image take the general path.
 * Every path sums the taps in the same (ky, kx) order from zero, so an output does not depend on the path.
 * Both accumulate the taps from zero, then the epilogue adds the bias and applies the activation to the block
 * just written (dst is never read before it is written).
 */
#include "convolution/conv.h"
#include <stdlib.h>

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

/* Bias and activation for NHWC output vectors, channels [ch, ch + n), applied while the sums are in registers:
   the operations of sb_epilogue_block (bias added, then the activation with the same parameters). */
typedef struct {
    const float * bias;
    const float * slopes; /* Prelu: one per channel */
    int act;
    vf p0, p1;
} dw_finish_t;

static dw_finish_t dw_finish_of(const sb_epilogue * e)
{
    int scalars = sb_activation_scalar_params(e->activation);
    dw_finish_t f = {e->bias, e->activation == SimdConvolutionActivationPrelu ? e->params : NULL, e->activation,
        vset1(scalars >= 1 ? e->params[0] : 0.0f), vset1(scalars >= 2 ? e->params[1] : 0.0f)};
    return f;
}

SB_INLINE void dw_finish_store(const dw_finish_t * f, float * out, vf x, size_t ch, size_t n, const int full)
{
    if (f->bias)
        x += full ? vload(f->bias + ch) : vload_n(f->bias + ch, n);
    vf q = f->slopes ? (full ? vload(f->slopes + ch) : vload_n(f->slopes + ch, n)) : f->p0;
    x = sb_activate(x, f->act, q, f->p1);
    if (full)
        vstore(out, x);
    else
        vstore_n(out, x, n);
}

/* NHWC, 3x3, dilation 1, stride S: DW_P output pixels of one row x one vector of channels. s points at the
   first pixel's top-left tap (channel ch), ls is the source row stride, w the weights of channel ch. Output q
   reads source columns q*S .. q*S + 2: each column is loaded once for all the outputs it feeds, each row's three
   weights once for all DW_P pixels (DW_P + 3 + (DW_P - 1) * S + 3 loads for 3 * DW_P multiply-adds a row). */
#define DW_P 4
SB_INLINE void dw3_nhwc_block(const float * s, size_t ls, size_t C, const float * w, float * out, const int S,
    const int full, size_t n, const dw_finish_t * f, size_t ch)
{
    vf acc[DW_P];
    DW_UNROLL
    for (int q = 0; q < DW_P; ++q)
        acc[q] = vset1(0.0f);
    _Pragma("GCC unroll 1") /* a loop: unrolled, the loads move up and run out of registers */
    for (int ky = 0; ky < 3; ++ky, s += ls, w += 3 * C) {
        vf wk[3];
        DW_UNROLL
        for (int kx = 0; kx < 3; ++kx)
            wk[kx] = full ? vload(w + kx * C) : vload_n(w + kx * C, n);
        const float * col = s;
        DW_UNROLL
        for (int j = 0; j < (DW_P - 1) * S + 3; ++j, col += C) {
            vf v = full ? vload(col) : vload_n(col, n);
            DW_UNROLL
            for (int q = 0; q < DW_P; ++q) {
                int kx = j - q * S;
                if (kx >= 0 && kx < 3)
                    acc[q] = vfmadd(v, wk[kx], acc[q]);
            }
        }
    }
    DW_UNROLL
    for (int q = 0; q < DW_P; ++q)
        dw_finish_store(f, out + q * C, acc[q], ch, n, full);
}

/* One NHWC output pixel, channels [ch, ch + n), from the taps [ky0, ky1) x [kx0, kx1) inside the image. */
SB_INLINE vf dw_nhwc_point(const SimdConvolutionParameters * p, const float * src, const float * w, size_t ch,
    size_t n, size_t sy0, size_t sx0, size_t ky0, size_t ky1, size_t kx0, size_t kx1)
{
    size_t C = p->srcC;
    vf s = vset1(0.0f);
    for (size_t ky = ky0; ky < ky1; ++ky)
        for (size_t kx = kx0; kx < kx1; ++kx) {
            const float * x = src + ((sy0 + ky * p->dilationY) * p->srcW + sx0 + kx * p->dilationX) * C + ch;
            const float * wk = w + (ky * p->kernelX + kx) * C + ch;
            s = n == SB_W ? vfmadd(vload(x), vload(wk), s) : vfmadd(vload_n(x, n), vload_n(wk, n), s);
        }
    return s;
}

/* The output columns [*in0, *in1) whose every tap lies inside the image (the intersection over kx of the valid
   ranges); *in0 == *in1 when there are none. */
static void dw_inner_columns(const SimdConvolutionParameters * p, size_t * in0, size_t * in1)
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

SB_INLINE int dw_is_3x3(const SimdConvolutionParameters * p)
{
    return p->kernelY == 3 && p->kernelX == 3 && p->dilationY == 1 && p->dilationX == 1 &&
        (p->strideX == 1 || p->strideX == 2);
}

/* One NHWC output row whose three kernel rows all lie inside the image (3x3, see dw_is_3x3). Pixel blocks outside,
   channels inside: the source of a block is contiguous, and its weights (9 x C floats) stay in L1. */
static void dw3_nhwc_row(const SimdConvolutionParameters * p, const float * src, const float * weight, size_t sy0,
    const size_t * xr, size_t in0, size_t in1, const dw_finish_t * f, float * row)
{
    size_t C = p->srcC, sX = p->strideX, ls = p->srcW * C;
    for (size_t dx = 0; dx < p->dstW;) {
        size_t count = dx >= in0 && dx + DW_P <= in1 ? DW_P : 1; /* a block of the interior, or one pixel */
        const float * s = src + (sy0 * p->srcW + dx * sX - p->padX) * C;
        size_t kx0, kx1;
        if (count == 1)
            taps_of(xr, dx, sX, p->padX, 1, p->srcW, 3, &kx0, &kx1);
        for (size_t ch = 0; ch < C; ch += SB_W) {
            if (C - ch < SB_W && C >= SB_W) /* the last partial vector moves back to end at C (same operations) */
                ch = C - SB_W;
            size_t n = C - ch < SB_W ? C - ch : SB_W;
            float * out = row + dx * C + ch;
            if (count == 1) {
                vf v = dw_nhwc_point(p, src, weight, ch, n, sy0, dx * sX - p->padX, 0, 3, kx0, kx1);
                if (n == SB_W)
                    dw_finish_store(f, out, v, ch, n, 1);
                else
                    dw_finish_store(f, out, v, ch, n, 0);
            } else if (n == SB_W) {
                if (sX == 1)
                    dw3_nhwc_block(s + ch, ls, C, weight + ch, out, 1, 1, n, f, ch);
                else
                    dw3_nhwc_block(s + ch, ls, C, weight + ch, out, 2, 1, n, f, ch);
            } else {
                if (sX == 1)
                    dw3_nhwc_block(s + ch, ls, C, weight + ch, out, 1, 0, n, f, ch);
                else
                    dw3_nhwc_block(s + ch, ls, C, weight + ch, out, 2, 0, n, f, ch);
            }
        }
        dx += count;
    }
}

/* Output rows [begin, end) of all images (row index = b*dstH + dy), NHWC. */
static void dw_nhwc_rows(void * arg, size_t begin, size_t end)
{
    const dw_arg * a = (const dw_arg *)arg;
    const conv_ctx * c = a->c;
    const SimdConvolutionParameters * p = &c->p;
    size_t C = p->srcC, kY = p->kernelY, kX = p->kernelX;
    sb_epilogue e = conv_group_epilogue(c, 0, 0);
    dw_finish_t finish = dw_finish_of(&e);
    const float * w = c->weight;
    size_t * xr = tap_ranges(p->dstW, p->strideX, p->padX, p->dilationX, p->srcW, kX);
    size_t in0, in1;
    dw_inner_columns(p, &in0, &in1);
    int fast = dw_is_3x3(p);
    for (size_t r = begin; r < end; ++r) {
        size_t b = r / p->dstH, dy = r % p->dstH;
        const float * src = a->src + b * p->srcH * p->srcW * C;
        float * row = a->dst + r * p->dstW * C;
        size_t ky0, ky1;
        conv_valid_range((ptrdiff_t)dy * (ptrdiff_t)p->strideY - (ptrdiff_t)p->padY, p->dilationY, p->srcH, kY,
            &ky0, &ky1);
        if (fast && ky0 == 0 && ky1 == 3) {
            dw3_nhwc_row(p, src, w, dy * p->strideY - p->padY, xr, in0, in1, &finish, row);
            continue;
        }
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

/* Lanes 1, 3, 5, ... of the 2*SB_W floats at p. */
SB_INLINE vf vload_odd(const float * p)
{
    vf a = vload(p), b = vload(p + SB_W);
#if SB_W == 4
    return __builtin_shufflevector(a, b, 1, 3, 5, 7);
#elif SB_W == 8
    return __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15);
#else
    return __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
#endif
}

/* NCHW, 3x3, dilation 1: R output rows x V vectors of one plane. tap[kx] points at the source vector that tap kx
   of the first output row reads in its top kernel row; source rows are ls apart (R == 2: stride 1 along y, the second
   output row starts one source row lower). w holds the nine weights broadcast, out the first output (rows ld apart).
   A source vector is loaded once for every output row it feeds. */
SB_INLINE void dw3_nchw_block(const float * const * tap, size_t ls, const vf * w, float * out, size_t ld, const int R,
    const int V)
{
    vf acc[2][2];
    DW_UNROLL
    for (int r = 0; r < R; ++r)
        DW_UNROLL
        for (int v = 0; v < V; ++v)
            acc[r][v] = vset1(0.0f);
    DW_UNROLL
    for (int i = 0; i < R + 2; ++i)
        DW_UNROLL
        for (int kx = 0; kx < 3; ++kx)
            DW_UNROLL
            for (int v = 0; v < V; ++v) {
                vf x = vload(tap[kx] + (size_t)i * ls + v * SB_W);
                DW_UNROLL
                for (int r = 0; r < R; ++r) {
                    int ky = i - r;
                    if (ky >= 0 && ky < 3)
                        acc[r][v] = vfmadd(x, w[ky * 3 + kx], acc[r][v]);
                }
            }
    DW_UNROLL
    for (int r = 0; r < R; ++r)
        DW_UNROLL
        for (int v = 0; v < V; ++v)
            vstore(out + r * ld + v * SB_W, acc[r][v]);
}

/* NCHW, 3x3: one border output of R rows (as in dw3_nchw_block) from the taps [kx0, kx1) that lie inside the row,
   lane 0 of the vectors: the same multiply-adds in the same order as the interior. */
SB_INLINE void dw3_nchw_point(const float * line, size_t ls, const vf * w, float * out, size_t ld, const int R,
    size_t kx0, size_t kx1)
{
    vf acc[2] = {vset1(0.0f), vset1(0.0f)};
    DW_UNROLL
    for (int i = 0; i < R + 2; ++i)
        for (size_t kx = kx0; kx < kx1; ++kx) {
            vf x = vset1(line[(size_t)i * ls + kx]);
            DW_UNROLL
            for (int r = 0; r < R; ++r) {
                int ky = i - r; /* R == 2 only at stride 1 */
                if (ky >= 0 && ky < 3)
                    acc[r] = vfmadd(x, w[ky * 3 + kx], acc[r]);
            }
        }
    for (int r = 0; r < R; ++r)
        out[(size_t)r * ld] = acc[r][0];
}

/* The even and the odd columns of each row of a plane, each in its own row of `half` floats (split[2*y] and
   split[2*y + 1]): at stride 2 along x, the outputs of a vector then read consecutive floats of one of them. */
static void dw_split_columns(const float * plane, size_t H, size_t W, size_t half, float * split)
{
    for (size_t y = 0; y < H; ++y) {
        const float * row = plane + y * W;
        float * even = split + 2 * y * half, * odd = even + half;
        size_t j = 0;
        for (; 2 * j + 2 * SB_W <= W; j += SB_W) {
            vstore(even + j, vload_even(row + 2 * j));
            vstore(odd + j, vload_odd(row + 2 * j));
        }
        for (; 2 * j < W; ++j) {
            even[j] = row[2 * j];
            odd[j] = 2 * j + 1 < W ? row[2 * j + 1] : 0.0f;
        }
    }
}

/* R (1 or 2, 2 only at stride 1) NCHW output rows from dy on whose three kernel rows lie inside the image, 3x3
   (dw_is_3x3), with at least one vector of interior columns [in0, in1). At stride 2 the interior reads split, the
   plane's columns by parity (dw_split_columns); the border columns always read the plane. */
static void dw3_nchw_rows(const SimdConvolutionParameters * p, const float * plane, const float * split, size_t half,
    const float * weight, size_t dy, const int R, const size_t * xr, size_t in0, size_t in1, float * row)
{
    size_t sX = p->strideX, W = p->srcW, dW = p->dstW, sy = dy * p->strideY - p->padY;
    vf w[9];
    DW_UNROLL
    for (int k = 0; k < 9; ++k)
        w[k] = vset1(weight[k]);
    /* Tap kx of output dx reads column c = dx*sX + kx - padX >= 0 (interior): plane column c at stride 1; at stride
       2, float c / 2 of the row of c's parity, i.e. dx + (kx - padX) / 2 rounded down. */
    const float * base[3];
    size_t ls = sX == 1 ? W : 2 * half;
    for (int kx = 0; kx < 3; ++kx) {
        if (sX == 1)
            base[kx] = plane + sy * W + (size_t)kx - p->padX; /* + dx: wraps back in range */
        else {
            ptrdiff_t o = (ptrdiff_t)kx - (ptrdiff_t)p->padX, down = o >= 0 ? o / 2 : -((1 - o) / 2);
            base[kx] = split + (2 * sy + (size_t)(o - 2 * down)) * half + (size_t)down;
        }
    }
    for (size_t dx = in0; dx < in1;) {
        int V = dx + 2 * SB_W <= in1 ? 2 : 1;
        if (V == 1 && dx + SB_W > in1) /* the last vector moves back to end at in1 (same operations on the overlap) */
            dx = in1 - SB_W;
        const float * tap[3] = {base[0] + dx, base[1] + dx, base[2] + dx};
        if (R == 2)
            V == 2 ? dw3_nchw_block(tap, ls, w, row + dx, dW, 2, 2) : dw3_nchw_block(tap, ls, w, row + dx, dW, 2, 1);
        else
            V == 2 ? dw3_nchw_block(tap, ls, w, row + dx, dW, 1, 2) : dw3_nchw_block(tap, ls, w, row + dx, dW, 1, 1);
        dx += (size_t)V * SB_W;
    }
    const float * top = plane + sy * W - p->padX; /* + dx * sX: wraps back in range */
    for (size_t dx = 0; dx < dW; ++dx) { /* the border columns */
        if (dx == in0)
            dx = in1;
        if (dx == dW)
            break;
        size_t kx0, kx1;
        taps_of(xr, dx, sX, p->padX, 1, W, 3, &kx0, &kx1);
        if (R == 2)
            dw3_nchw_point(top + dx * sX, W, w, row + dx, dW, 2, kx0, kx1);
        else
            dw3_nchw_point(top + dx * sX, W, w, row + dx, dW, 1, kx0, kx1);
    }
}

/* One NCHW output row, any geometry: vectors over the interior columns [in0, in1), the border columns tap by tap. */
static void dw_nchw_row(const SimdConvolutionParameters * p, const float * plane, const float * w, size_t dy,
    size_t ky0, size_t ky1, const size_t * xr, size_t in0, size_t in1, float * row)
{
    size_t kX = p->kernelX, sX = p->strideX, kx0, kx1;
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
#undef even_ok
}

/* Planes [begin, end) of all images (plane index = b*C + c), NCHW. */
static void dw_nchw_planes(void * arg, size_t begin, size_t end)
{
    const dw_arg * a = (const dw_arg *)arg;
    const conv_ctx * c = a->c;
    const SimdConvolutionParameters * p = &c->p;
    size_t C = p->srcC, kY = p->kernelY, kX = p->kernelX, sX = p->strideX;
    size_t in0, in1;
    dw_inner_columns(p, &in0, &in1);
    int fast = dw_is_3x3(p) && in1 - in0 >= SB_W; /* 3x3 rows need a vector of interior columns */
    size_t half = (p->srcW + 1) / 2;
    float * split = fast && sX == 2 ? (float *)malloc(2 * p->srcH * half * sizeof(float)) : NULL;
    if (sX == 2 && !split)
        fast = 0; /* no memory for the split plane: the general path */
    size_t * yr = tap_ranges(p->dstH, p->strideY, p->padY, p->dilationY, p->srcH, kY);
    size_t * xr = tap_ranges(p->dstW, sX, p->padX, p->dilationX, p->srcW, kX);
    sb_epilogue e = conv_group_epilogue(c, 0, 1);
    for (size_t q = begin; q < end; ++q) {
        size_t ch = q % C;
        const float * plane = a->src + q * p->srcH * p->srcW;
        const float * w = c->weight + ch * kY * kX;
        float * out = a->dst + q * p->dstH * p->dstW;
        if (split)
            dw_split_columns(plane, p->srcH, p->srcW, half, split);
        for (size_t dy = 0; dy < p->dstH;) {
            size_t ky0, ky1;
            taps_of(yr, dy, p->strideY, p->padY, p->dilationY, p->srcH, kY, &ky0, &ky1);
            if (fast && ky0 == 0 && ky1 == 3) {
                size_t ky2 = 0, ky3 = 0; /* the next row's taps: a pair of rows shares source rows at stride 1 */
                if (p->strideY == 1 && sX == 1 && dy + 1 < p->dstH)
                    taps_of(yr, dy + 1, 1, p->padY, 1, p->srcH, 3, &ky2, &ky3);
                int R = ky2 == 0 && ky3 == 3 ? 2 : 1;
                dw3_nchw_rows(p, plane, split, half, w, dy, R, xr, in0, in1, out + dy * p->dstW);
                dy += (size_t)R;
            } else {
                dw_nchw_row(p, plane, w, dy, ky0, ky1, xr, in0, in1, out + dy * p->dstW);
                dy += 1;
            }
        }
        sb_epilogue_block(out, p->dstH * p->dstW, 1, p->dstH * p->dstW, ch, 0, &e);
    }
    free(split);
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
