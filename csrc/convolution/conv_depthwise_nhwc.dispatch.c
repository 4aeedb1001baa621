/* @targets base sse41 avx2 avx512bw */
/*
 * conv_depthwise_nhwc.dispatch.c: direct depthwise convolution (group == srcC == dstC), NHWC, compiled once per ISA.
 *
 * Weights [kY][kX][C]; vectors over channels (the last partial vector moves back to end at C, or is partial when
 * C is narrower than a vector). In general one output pixel at a time. 3x3 kernels (dilation 1, x-stride 1 or 2),
 * from the kernel rows inside the image: blocks of four pixels whose sources are loaded once for every pixel they
 * feed, with the bias and activation applied before the store; the pixels outside the blocks four channel vectors
 * at a time. See conv_depthwise.h.
 */
#include "convolution/conv_depthwise.h"

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

/* NHWC, 3x3, dilation 1, stride S: P output pixels of one row x one vector of channels (P = 8 at stride 1, 1.02-1.05x
   faster than 4 at avx512bw; 4 at stride 2, where 8 would need 17 column loads a row), from `rows` kernel rows (3,
   or fewer at the top and bottom of the image). s points at the first pixel's tap in the first kernel row used
   (channel ch), ls is the source row stride, w the weights of that kernel row and channel ch. Output q reads source
   columns q*S .. q*S + 2: each column is loaded once for all the outputs it feeds, each row's three weights once for
   all P pixels (3 + (P - 1) * S + 3 loads for 3 * P multiply-adds a row). */
#define DW_P 8 /* the largest P */
SB_INLINE void dw3_nhwc_block(const float * s, size_t ls, size_t C, const float * w, size_t rows, float * out,
    const int P, const int S, const int full, size_t n, const dw_finish_t * f, size_t ch)
{
    vf acc[DW_P];
    DW_UNROLL
    for (int q = 0; q < P; ++q)
        acc[q] = vset1(0.0f);
    _Pragma("GCC unroll 1") /* a loop: unrolled, the loads move up and run out of registers */
    for (size_t ky = 0; ky < rows; ++ky, s += ls, w += 3 * C) {
        vf wk[3];
        DW_UNROLL
        for (int kx = 0; kx < 3; ++kx)
            wk[kx] = full ? vload(w + kx * C) : vload_n(w + kx * C, n);
        const float * col = s;
        DW_UNROLL
        for (int j = 0; j < (P - 1) * S + 3; ++j, col += C) {
            vf v = vkeep(full ? vload(col) : vload_n(col, n)); /* once for the P * 3 / S outputs it feeds */
            DW_UNROLL
            for (int q = 0; q < P; ++q) {
                int kx = j - q * S;
                if (kx >= 0 && kx < 3)
                    acc[q] = vfmadd(v, wk[kx], acc[q]);
            }
        }
    }
    DW_UNROLL
    for (int q = 0; q < P; ++q)
        dw_finish_store(f, out + q * C, acc[q], ch, n, full);
}

/* One NHWC output pixel over all channels from the taps [ky0, ky1) x [kx0, kx1) inside the image, 3x3 (s points
   at the source pixel of tap (ky0, kx0), w at the weights of that tap), then the bias and activation. Four channel
   vectors at a time: each is one chain of dependent multiply-adds in (ky, kx) order, and four chains keep the
   multiply-add units busy where one would wait on each result. */
static void dw3_nhwc_pixel(const float * s, size_t ls, size_t C, const float * w, size_t rows, size_t cols,
    const dw_finish_t * f, float * out)
{
    size_t ch = 0;
    for (; ch + 4 * SB_W <= C; ch += 4 * SB_W) {
        vf acc[4] = {vset1(0.0f), vset1(0.0f), vset1(0.0f), vset1(0.0f)};
        for (size_t ky = 0; ky < rows; ++ky)
            for (size_t kx = 0; kx < cols; ++kx) {
                const float * x = s + ky * ls + kx * C + ch, * wk = w + (ky * 3 + kx) * C + ch;
                DW_UNROLL
                for (int v = 0; v < 4; ++v)
                    acc[v] = vfmadd(vload(x + v * SB_W), vload(wk + v * SB_W), acc[v]);
            }
        DW_UNROLL
        for (int v = 0; v < 4; ++v)
            dw_finish_store(f, out + ch + v * SB_W, acc[v], ch + v * SB_W, SB_W, 1);
    }
    for (; ch < C; ch += SB_W) {
        if (C - ch < SB_W && C >= SB_W) /* the last partial vector moves back to end at C (same operations) */
            ch = C - SB_W;
        size_t n = C - ch < SB_W ? C - ch : SB_W;
        vf acc = vset1(0.0f);
        for (size_t ky = 0; ky < rows; ++ky)
            for (size_t kx = 0; kx < cols; ++kx) {
                const float * x = s + ky * ls + kx * C + ch, * wk = w + (ky * 3 + kx) * C + ch;
                acc = n == SB_W ? vfmadd(vload(x), vload(wk), acc) : vfmadd(vload_n(x, n), vload_n(wk, n), acc);
            }
        if (n == SB_W)
            dw_finish_store(f, out + ch, acc, ch, n, 1);
        else
            dw_finish_store(f, out + ch, acc, ch, n, 0);
    }
}

/* One NHWC output row, 3x3 (see dw_is_3x3), from the kernel rows [ky0, ky1) that lie inside the image; sy is the
   source row of kernel row ky0. Pixel blocks outside, channels inside: the source of a block is contiguous, and
   its weights (9 x C floats) stay in L1. Pixels outside the blocks (the border columns, and the interior columns
   that do not fill a block) go through dw3_nhwc_pixel. */
static void dw3_nhwc_row(const SimdConvolutionParameters * p, const float * src, const float * weight, size_t sy,
    size_t ky0, size_t ky1, const size_t * xr, size_t in0, size_t in1, const dw_finish_t * f, float * row)
{
    size_t C = p->srcC, sX = p->strideX, ls = p->srcW * C, rows = ky1 - ky0;
    const float * line = src + sy * ls, * w = weight + ky0 * 3 * C;
    for (size_t dx = 0; dx < p->dstW;) {
        size_t P = dx + 8 <= in1 && sX == 1 ? 8 : 4; /* 8 pixels share each column load at stride 1 */
        if (dx >= in0 && dx + P <= in1) { /* a block of the interior */
            const float * s = line + (dx * sX - p->padX) * C;
            float * out = row + dx * C;
            /* AVX-512: where a row of C floats spans whole vectors, every column of the block lies as s does within
               a vector, and on NumPy's 16-byte-aligned arrays each of its loads would straddle two cache lines; a
               partial vector of `lead` channels first brings the others to aligned loads, the last one partial too
               (a masked move costs about what a full one does there), where C has at least 8 vectors, so that the
               extra vector adds at most an eighth: 1.04-1.12x at 144 channels, 1.01-1.31x at 256 and 512 (64
               channels, 4 vectors: 0.97x). At AVX2, where half the loads straddle and a partial vector takes
               vmaskmovps, it measured 0.92x. Otherwise the last partial vector moves back to end at C. */
            const size_t head = !SB_ISA_AT_LEAST(3) || C < 8 * SB_W || C * sizeof(float) % (SB_W * sizeof(float)) ? 0
                : vstream_head(s);
            const size_t lead = head < SB_W ? head : 0; /* SB_W: s is not even float-aligned */
            for (size_t ch = 0, n; ch < C; ch += n) {
                if (lead)
                    n = ch == 0 ? lead : C - ch < SB_W ? C - ch : SB_W;
                else {
                    if (C - ch < SB_W && C >= SB_W)
                        ch = C - SB_W;
                    n = C - ch < SB_W ? C - ch : SB_W;
                }
                if (P == 8) {
                    if (n == SB_W)
                        dw3_nhwc_block(s + ch, ls, C, w + ch, rows, out + ch, 8, 1, 1, n, f, ch);
                    else
                        dw3_nhwc_block(s + ch, ls, C, w + ch, rows, out + ch, 8, 1, 0, n, f, ch);
                } else if (n == SB_W) {
                    if (sX == 1)
                        dw3_nhwc_block(s + ch, ls, C, w + ch, rows, out + ch, 4, 1, 1, n, f, ch);
                    else
                        dw3_nhwc_block(s + ch, ls, C, w + ch, rows, out + ch, 4, 2, 1, n, f, ch);
                } else {
                    if (sX == 1)
                        dw3_nhwc_block(s + ch, ls, C, w + ch, rows, out + ch, 4, 1, 0, n, f, ch);
                    else
                        dw3_nhwc_block(s + ch, ls, C, w + ch, rows, out + ch, 4, 2, 0, n, f, ch);
                }
            }
            dx += P;
        } else {
            size_t kx0, kx1;
            taps_of(xr, dx, sX, p->padX, 1, p->srcW, 3, &kx0, &kx1);
            dw3_nhwc_pixel(line + (dx * sX + kx0 - p->padX) * C, ls, C, w + kx0 * C, rows, kx1 - kx0, f,
                row + dx * C);
            dx += 1;
        }
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
    conv_inner_columns(p, &in0, &in1);
    int fast = dw_is_3x3(p);
    for (size_t r = begin; r < end; ++r) {
        size_t b = r / p->dstH, dy = r % p->dstH;
        const float * src = a->src + b * p->srcH * p->srcW * C;
        float * row = a->dst + r * p->dstW * C;
        size_t ky0, ky1;
        conv_valid_range((ptrdiff_t)dy * (ptrdiff_t)p->strideY - (ptrdiff_t)p->padY, p->dilationY, p->srcH, kY,
            &ky0, &ky1);
        if (fast && ky1 > ky0) {
            dw3_nhwc_row(p, src, w, dy * p->strideY + ky0 - p->padY, ky0, ky1, xr, in0, in1, &finish, row);
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
    sb_free(xr);
}

void SB_FN(conv_forward_dw_nhwc)(const conv_ctx * c, const float * src, float * buf, float * dst)
{
    (void)buf;
    dw_arg a = {c, src, dst};
    size_t rows = c->batch * c->p.dstH;
    size_t work = c->p.dstW * c->p.dstC * c->p.kernelY * c->p.kernelX;
    sb_parallel_for(rows, work >= 4096 ? 1 : (4096 + work - 1) / work, dw_nhwc_rows, &a);
}
