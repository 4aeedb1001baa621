/* @targets base sse41 avx2 avx512bw */
/*
 * conv_gemm.dispatch.c: the GEMM-based convolution algorithms, compiled once per ISA.
 *
 * GemmNN (every geometry): each image is unrolled, then multiplied by the weights with the shared GEMM, whose
 * epilogue adds the bias and applies the activation while the output tile is still in cache.
 *   NCHW: im2col, rows (c*kY + ky)*kX + kx, columns dy*dstW + dx; dst[dstC][dstHW] = W[dstC][K] x im2col[K][dstHW]
 *         per group. The im2col is made in chunks of pixels, in the GEMM's compact panel layout, each multiplied at
 *         once (cache-hot, no packing pass of the GEMM's own).
 *   NHWC: im2row, buf[dy*dstW + dx][g][ky][kx][ci]; dst[dstHW][dstC] = buf[dstHW][K] x W[K][dstC] per group.
 * NhwcDirect (group 1, 16 to 32 channels): no im2row; the GEMM reads each tap's rows from the source (NCHW: from
 *         the planes, the channel the strided index, unless they alias in L1, then from an NHWC copy), into NHWC
 *         output rows (NCHW: each transposed into place).
 * Direct1x1 (1x1, stride 1, pad 0): the source already is the GEMM operand, no unrolling.
 */
#include "convolution/conv.h"
#include <stdlib.h>

#include "convolution/conv_epilogue.h"
#include "convolution/conv_transpose.h"

typedef struct {
    const conv_ctx * c;
    const float * src;
    float * buf; /* the row of pixel pix0 */
    size_t pix0;
} unroll_arg;

/* dst[0, n) = src[0, n) with vectors (short copies: a libc call per tap cost more than the copy). */
SB_INLINE void copy_floats(float * dst, const float * src, size_t n)
{
    size_t i = 0;
    for (; i + 2 * SB_W <= n; i += 2 * SB_W) {
        vf a = vload(src + i), b = vload(src + i + SB_W);
        vstore(dst + i, a);
        vstore(dst + i + SB_W, b);
    }
    for (; i + SB_W <= n; i += SB_W)
        vstore(dst + i, vload(src + i));
    if (i < n)
        vstore_n(dst + i, vload_n(src + i, n - i), n - i);
}

/* im2row pixels [begin, end) of one NHWC image. */
static void im2row_pixels(void * arg, size_t begin, size_t end)
{
    const unroll_arg * a = (const unroll_arg *)arg;
    const SimdConvolutionParameters * p = &a->c->p;
    size_t G = p->group, srcCg = p->srcC / G, kY = p->kernelY, kX = p->kernelX;
    size_t Kg = kY * kX * srcCg, K = Kg * G;
    for (size_t pix = begin; pix < end; ++pix) {
        size_t dy = pix / p->dstW, dx = pix % p->dstW;
        float * out = a->buf + (pix - a->pix0) * K;
        for (size_t ky = 0; ky < kY; ++ky) {
            ptrdiff_t sy = (ptrdiff_t)(dy * p->strideY + ky * p->dilationY) - (ptrdiff_t)p->padY;
            for (size_t kx = 0; kx < kX; ++kx) {
                ptrdiff_t sx = (ptrdiff_t)(dx * p->strideX + kx * p->dilationX) - (ptrdiff_t)p->padX;
                int inside = sy >= 0 && sy < (ptrdiff_t)p->srcH && sx >= 0 && sx < (ptrdiff_t)p->srcW;
                const float * s = inside ? a->src + ((size_t)sy * p->srcW + (size_t)sx) * p->srcC : NULL;
                for (size_t g = 0; g < G; ++g) {
                    float * o = out + g * Kg + (ky * kX + kx) * srcCg;
                    if (inside)
                        copy_floats(o, s + g * srcCg, srcCg);
                    else
                        memset(o, 0, srcCg * sizeof(float));
                }
            }
        }
    }
}

/* NHWC: `rows` output pixels from their unrolled (or, for 1x1, original) rows `u` (ldu), every group. */
static void gemm_rows(const conv_ctx * c, const float * u, size_t ldu, size_t rows, float * dst)
{
    const SimdConvolutionParameters * p = &c->p;
    size_t G = p->group, dstCg = p->dstC / G, Kg = p->kernelY * p->kernelX * (p->srcC / G);
    size_t packed = SB_FN(gemm32f_packed_size)(dstCg, Kg);
    for (size_t g = 0; g < G; ++g) {
        sb_epilogue e = conv_group_epilogue(c, g, 0);
        if (c->packed)
            SB_FN(gemm32f_packed)(rows, dstCg, Kg, u + g * Kg, ldu, c->packed + g * packed, dst + g * dstCg,
                p->dstC, &e);
        else
            SB_FN(gemm32f_nn)(rows, dstCg, Kg, u + g * Kg, ldu, c->weight + g * dstCg, p->dstC, dst + g * dstCg,
                p->dstC, &e);
    }
}

/* NCHW: dst of one image from its im2col (or, for 1x1, original) source `u`. */
static void gemm_image(const conv_ctx * c, const float * u, size_t ldu, float * dst)
{
    const SimdConvolutionParameters * p = &c->p;
    size_t G = p->group, srcCg = p->srcC / G, dstCg = p->dstC / G, N = p->dstH * p->dstW;
    size_t Kg = p->kernelY * p->kernelX * srcCg;
    (void)ldu;
    for (size_t g = 0; g < G; ++g) {
        sb_epilogue e = conv_group_epilogue(c, g, 1);
        SB_FN(gemm32f_nn)(dstCg, N, Kg, c->weight + g * dstCg * Kg, Kg, u + g * Kg * N, N, dst + g * dstCg * N, N,
            &e);
    }
}

#define NCHW_COLS_MAX 2048 /* pixels per chunk at most (a row of them is kept on the stack) */

/* NCHW GemmNN: the im2col rows of group g (channels from `plane0`) for output pixels [n0, n1), written straight in
   the GEMM's compact panel layout (gemm32f_panels_serial, panel width W): pixel n of row r goes to
   panels + q*Kg*W + r*w + lane, q = (n - n0) / W, lane = (n - n0) % W, w the width of panel q. */
static void im2col_panels(const conv_ctx * c, const float * plane0, size_t n0, size_t n1, size_t W, float * panels)
{
    float tmp[NCHW_COLS_MAX];
    const SimdConvolutionParameters * p = &c->p;
    size_t kY = p->kernelY, kX = p->kernelX, dstW = p->dstW, srcCg = p->srcC / p->group, Kg = srcCg * kY * kX;
    size_t sX = p->strideX, plane_size = p->srcH * p->srcW;
    /* The input rows the chunk reads: the source is read channel after channel, a few short lines of each (too
       scattered for the hardware prefetcher), so the next channel's lines are prefetched while this one is used. */
    ptrdiff_t ry0 = (ptrdiff_t)(n0 / dstW * p->strideY) - (ptrdiff_t)p->padY;
    ptrdiff_t ry1 = (ptrdiff_t)((n1 - 1) / dstW * p->strideY + (kY - 1) * p->dilationY) - (ptrdiff_t)p->padY;
    ry0 = ry0 < 0 ? 0 : ry0;
    ry1 = ry1 >= (ptrdiff_t)p->srcH ? (ptrdiff_t)p->srcH - 1 : ry1;
    for (size_t r = 0; r < Kg; ++r) {
        size_t ch = r / (kY * kX), ky = r / kX % kY, kx = r % kX;
        const float * plane = plane0 + ch * plane_size;
        if (ky == 0 && kx == 0 && ch + 1 < srcCg)
            for (ptrdiff_t y = ry0; y <= ry1; ++y) {
                const char * line = (const char *)(plane + plane_size + (size_t)y * p->srcW);
                for (size_t byte = 0; byte < p->srcW * sizeof(float); byte += 64)
                    __builtin_prefetch(line + byte);
            }
        ptrdiff_t offX = (ptrdiff_t)(kx * p->dilationX) - (ptrdiff_t)p->padX;
        ptrdiff_t offY = (ptrdiff_t)(ky * p->dilationY) - (ptrdiff_t)p->padY;
        size_t x0, x1, y0, y1;
        conv_valid_range(offX, sX, p->srcW, dstW, &x0, &x1);
        conv_valid_range(offY, p->strideY, p->srcH, p->dstH, &y0, &y1);
        /* Row r for pixels [n0, n1) into tmp, in runs of output rows, then copied into the panels (short runs cut
           at every panel edge would cost more in bookkeeping than the copy). */
        size_t dy = n0 / dstW, dx = n0 % dstW;
        for (size_t n = n0; n < n1;) {
            size_t run = dstW - dx < n1 - n ? dstW - dx : n1 - n; /* to the end of the output row */
            float * out = tmp + (n - n0);
            size_t end = dx + run;
            if (dy < y0 || dy >= y1) {
                memset(out, 0, run * sizeof(float));
            } else {
                const float * line = plane + (size_t)((ptrdiff_t)(dy * p->strideY) + offY) * p->srcW;
                size_t a = x0 < dx ? dx : x0 > end ? end : x0;
                size_t b = x1 < a ? a : x1 > end ? end : x1;
                if (a > dx) memset(out, 0, (a - dx) * sizeof(float));
                const float * s = line + (ptrdiff_t)(a * sX) + offX;
                float * o = out + (a - dx);
                size_t count = b - a, i = 0;
                /* Whole vectors while their reads stay in the source row: s[i*sX + sX*SB_W - 1] < line + srcW. */
                ptrdiff_t room = (ptrdiff_t)p->srcW - ((ptrdiff_t)(a * sX) + offX);
                if (sX == 1) {
                    for (; i + SB_W <= count; i += SB_W)
                        vstore(o + i, vload(s + i));
                } else if (sX == 2) {
                    for (; i + SB_W <= count && (ptrdiff_t)(2 * (i + SB_W)) <= room; i += SB_W)
                        vstore(o + i, vload_even(s + 2 * i));
                }
                for (; i < count; ++i)
                    o[i] = s[i * sX];
                if (end > b) memset(out + (b - dx), 0, (end - b) * sizeof(float));
            }
            n += run;
            dx = 0;
            ++dy;
        }
        for (size_t j = 0, q = 0; j < n1 - n0; j += W, ++q) {
            size_t w = n1 - n0 - j < W ? n1 - n0 - j : W;
            float * o = panels + q * Kg * W + r * w;
            if (w == W)
                for (size_t v = 0; v < W; v += SB_W)
                    vstore(o + v, vload(tmp + j + v));
            else
                memcpy(o, tmp + j, w * sizeof(float));
        }
    }
}

typedef struct {
    const conv_ctx * c;
    const float * src;
    float * buf;
    float * dst;
    size_t cols; /* pixels per chunk, a multiple of the panel width */
} nchw_arg;

/* NCHW GemmNN: chunks of output pixels; each chunk (all groups in turn) is unrolled into its own part of buf and
   multiplied at once while it is in cache, with no separate packing pass. Every output element's sum is the same
   whatever the chunking, so results do not depend on the thread count. */
static void nchw_chunks(void * arg, size_t begin, size_t end)
{
    const nchw_arg * a = (const nchw_arg *)arg;
    const conv_ctx * c = a->c;
    const SimdConvolutionParameters * p = &c->p;
    size_t G = p->group, srcCg = p->srcC / G, dstCg = p->dstC / G, N = p->dstH * p->dstW;
    size_t Kg = p->kernelY * p->kernelX * srcCg, W = SB_FN(gemm32f_panel_width)();
    for (size_t chunk = begin; chunk < end; ++chunk) {
        size_t n0 = chunk * a->cols, n1 = n0 + a->cols < N ? n0 + a->cols : N;
        /* Every chunk of this range reuses the part of buf of the range's first one, which stays in cache (a
           fresh part per chunk would stream the whole unrolled image through memory once more). Ranges are
           disjoint, so are their parts. */
        float * panels = a->buf + begin * a->cols * Kg * G;
        for (size_t g = 0; g < G; ++g) {
            sb_epilogue e = conv_group_epilogue(c, g, 1);
            im2col_panels(c, a->src + g * srcCg * p->srcH * p->srcW, n0, n1, W, panels);
            SB_FN(gemm32f_panels_serial)(dstCg, n1 - n0, Kg, c->weight + g * dstCg * Kg, Kg, panels,
                a->dst + g * dstCg * N + n0, N, &e);
        }
    }
}

static void nchw_gemm_image(const conv_ctx * c, const float * src, float * buf, float * dst)
{
    const SimdConvolutionParameters * p = &c->p;
    size_t N = p->dstH * p->dstW, Kg = p->kernelY * p->kernelX * p->srcC / p->group;
    size_t W = SB_FN(gemm32f_panel_width)();
    /* A chunk's panels (Kg x cols floats) about 256 KiB: in L2 while the GEMM reads them. */
    size_t cols = ((size_t)1 << 16) / (Kg ? Kg : 1) / W * W;
    cols = cols < W ? W : cols > NCHW_COLS_MAX / W * W ? NCHW_COLS_MAX / W * W : cols;
    nchw_arg a = {c, src, buf, dst, cols};
    sb_parallel_for((N + cols - 1) / cols, 1, nchw_chunks, &a);
}

/* NHWC: output pixels in chunks, each unrolled (GemmNN) into its own rows of buf and multiplied right away while
   they are in cache. A chunk's GEMMs do about 2^20 multiply-adds, below the GEMM's own threading, so threads take
   whole chunks (one thread start per image instead of one per GEMM). */
typedef struct {
    const conv_ctx * c;
    const float * src;
    float * buf; /* NULL: 1x1, the source is the GEMM operand */
    float * dst;
    size_t rows;
} chunk_arg;

static void nhwc_chunks(void * arg, size_t begin, size_t end)
{
    const chunk_arg * a = (const chunk_arg *)arg;
    const conv_ctx * c = a->c;
    const SimdConvolutionParameters * p = &c->p;
    size_t N = p->dstH * p->dstW, K = p->kernelY * p->kernelX * p->srcC;
    for (size_t chunk = begin; chunk < end; ++chunk) {
        size_t m0 = chunk * a->rows, m1 = m0 + a->rows < N ? m0 + a->rows : N;
        if (a->buf) {
            /* As in nchw_chunks: the range's chunks reuse the rows of buf of its first chunk, in cache. */
            float * rows = a->buf + begin * a->rows * K;
            unroll_arg u = {c, a->src, rows, m0};
            im2row_pixels(&u, m0, m1);
            gemm_rows(c, rows, K, m1 - m0, a->dst + m0 * p->dstC);
        } else
            gemm_rows(c, a->src + m0 * p->srcC, p->srcC, m1 - m0, a->dst + m0 * p->dstC);
    }
}

/* NhwcDirect (group 1, packed weights): no im2row. For a fixed tap (ky, kx), the operand rows of consecutive
   output pixels of one row are the source pixels strideX apart: a GEMM straight on the source, whose k (the input
   channel) steps by 1 in NHWC and by a plane in NCHW. The taps' GEMMs add up into the output row
   (gemm32f_packed_taps), over the interior columns at once and each border column alone, taps outside the image
   skipped. An NCHW output row is made in NHWC in buf, then transposed into place while it is in L1. */
typedef struct {
    const conv_ctx * c;
    const float * src;
    float * dst;
    float * rows; /* NCHW: the NHWC output rows (dstH x dstW x dstC), else NULL */
    int nhwc_src; /* NCHW: the source is an NHWC copy */
    size_t in0, in1; /* the interior columns */
} direct_arg;

/* Taps of output (dy, columns from dx on) for the pixels whose taps lie inside for every kx in [kx0, kx1):
   taps[ky*kX + kx] points at channel 0 of the source pixel of the first column (pixels `pixel` floats apart),
   NULL outside the image. */
static void direct_taps(const SimdConvolutionParameters * p, const float * src, size_t pixel, size_t dy, size_t dx,
    size_t kx0, size_t kx1, const float ** taps)
{
    size_t ky0, ky1;
    conv_valid_range((ptrdiff_t)(dy * p->strideY) - (ptrdiff_t)p->padY, p->dilationY, p->srcH, p->kernelY, &ky0,
        &ky1);
    for (size_t ky = 0; ky < p->kernelY; ++ky)
        for (size_t kx = 0; kx < p->kernelX; ++kx) {
            const float ** t = taps + ky * p->kernelX + kx;
            *t = NULL;
            if (ky >= ky0 && ky < ky1 && kx >= kx0 && kx < kx1) {
                size_t sy = dy * p->strideY + ky * p->dilationY - p->padY;
                size_t sx = dx * p->strideX + kx * p->dilationX - p->padX;
                *t = src + (sy * p->srcW + sx) * pixel;
            }
        }
}

static void nhwc_direct_rows(void * arg, size_t begin, size_t end)
{
    const direct_arg * a = (const direct_arg *)arg;
    const conv_ctx * c = a->c;
    const SimdConvolutionParameters * p = &c->p;
    size_t T = p->kernelY * p->kernelX, C = p->srcC, D = p->dstC, dstHW = p->dstH * p->dstW;
    /* NHWC: pixels C floats apart, channels 1; NCHW planes: pixels 1 apart, channels a plane. */
    int planes = a->rows && !a->nhwc_src;
    size_t pixel = planes ? 1 : C, channel = planes ? p->srcH * p->srcW : 1, lda = p->strideX * pixel;
    const float * taps[CONV_DIRECT_TAPS];
    sb_epilogue e = conv_group_epilogue(c, 0, 0);
    for (size_t dy = begin; dy < end; ++dy) {
        float * row = (a->rows ? a->rows : a->dst) + dy * p->dstW * D;
        if (a->in1 > a->in0) {
            direct_taps(p, a->src, pixel, dy, a->in0, 0, p->kernelX, taps);
            SB_FN(gemm32f_packed_taps_serial)(a->in1 - a->in0, D, T, taps, lda, channel, C, c->packed,
                row + a->in0 * D, D, &e);
        }
        for (size_t dx = 0; dx < p->dstW; ++dx) { /* the border columns, one at a time */
            if (dx == a->in0)
                dx = a->in1;
            if (dx >= p->dstW)
                break;
            size_t kx0, kx1;
            conv_valid_range((ptrdiff_t)(dx * p->strideX) - (ptrdiff_t)p->padX, p->dilationX, p->srcW, p->kernelX,
                &kx0, &kx1);
            direct_taps(p, a->src, pixel, dy, dx, kx0, kx1, taps);
            SB_FN(gemm32f_packed_taps_serial)(1, D, T, taps, lda, channel, C, c->packed, row + dx * D, D, &e);
        }
        if (a->rows)
            transpose_serial(row, p->dstW, D, a->dst + dy * p->dstW, dstHW);
    }
}

static void nhwc_image(const conv_ctx * c, const float * src, float * buf, float * dst)
{
    const SimdConvolutionParameters * p = &c->p;
    size_t N = p->dstH * p->dstW, K = p->kernelY * p->kernelX * p->srcC;
    size_t per_row = K * (p->dstC / p->group); /* multiply-adds of one output pixel */
    size_t rows = ((size_t)1 << 20) / (per_row ? per_row : 1);
    rows = rows < 16 ? 16 : rows > 1024 ? 1024 : rows;
    chunk_arg a = {c, src, buf, dst, rows};
    sb_parallel_for((N + rows - 1) / rows, 1, nhwc_chunks, &a);
}

void SB_FN(conv_forward_gemm)(const conv_ctx * c, const float * src, float * buf, float * dst)
{
    const SimdConvolutionParameters * p = &c->p;
    size_t srcSize = p->srcC * p->srcH * p->srcW, dstSize = p->dstC * p->dstH * p->dstW;
    for (size_t b = 0; b < c->batch; ++b) {
        if (p->srcF == SimdTensorFormatNchw)
            nchw_gemm_image(c, src + b * srcSize, buf, dst + b * dstSize);
        else
            nhwc_image(c, src + b * srcSize, buf, dst + b * dstSize);
    }
}

/* NhwcDirect (api.c chooses it; SetParams packed the weights, or Forward is not called). An NCHW call reads its
   source in place (conv_direct_in_place) or from an NHWC copy at the end of buf, and makes its output rows in buf. */
void SB_FN(conv_forward_direct_nhwc)(const conv_ctx * c, const float * src, float * buf, float * dst)
{
    const SimdConvolutionParameters * p = &c->p;
    size_t srcHW = p->srcH * p->srcW, srcSize = p->srcC * srcHW, dstSize = p->dstC * p->dstH * p->dstW;
    int nchw = p->srcF == SimdTensorFormatNchw, copy = nchw && !conv_direct_in_place(p);
    direct_arg d = {c, NULL, NULL, nchw ? buf : NULL, copy, 0, 0};
    conv_inner_columns(p, &d.in0, &d.in1);
    for (size_t b = 0; b < c->batch; ++b) {
        d.src = src + b * srcSize;
        d.dst = dst + b * dstSize;
        if (copy) {
            transpose(d.src, p->srcC, srcHW, buf + dstSize);
            d.src = buf + dstSize;
        }
        sb_parallel_for(p->dstH, 1, nhwc_direct_rows, &d);
    }
}

void SB_FN(conv_forward_1x1)(const conv_ctx * c, const float * src, float * buf, float * dst)
{
    const SimdConvolutionParameters * p = &c->p;
    size_t srcSize = p->srcC * p->srcH * p->srcW, dstSize = p->dstC * p->dstH * p->dstW;
    (void)buf;
    for (size_t b = 0; b < c->batch; ++b) {
        if (p->srcF == SimdTensorFormatNchw)
            gemm_image(c, src + b * srcSize, p->srcC, dst + b * dstSize);
        else
            nhwc_image(c, src + b * srcSize, NULL, dst + b * dstSize);
    }
}

/* NHWC: the weights of each group as the GEMM's packed B (layout of this ISA), made once at SetParams. */
float * SB_FN(conv_pack_nhwc)(const conv_ctx * c, const float * weight, size_t * size)
{
    const SimdConvolutionParameters * p = &c->p;
    size_t G = p->group, dstCg = p->dstC / G, Kg = p->kernelY * p->kernelX * p->srcC / G;
    size_t packed = SB_FN(gemm32f_packed_size)(dstCg, Kg);
    float * buffer = (float *)sb_alloc(G * packed, sizeof(float));
    if (buffer == NULL)
        return NULL;
    for (size_t g = 0; g < G; ++g)
        SB_FN(gemm32f_pack_b)(dstCg, Kg, weight + g * dstCg, p->dstC, 0, buffer + g * packed);
    *size = G * packed;
    return buffer;
}
