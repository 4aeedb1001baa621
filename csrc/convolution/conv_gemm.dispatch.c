/*
 * conv_gemm.dispatch.c: the GEMM-based convolution algorithms, compiled once per ISA.
 *
 * GemmNN (every geometry): each image is unrolled, then multiplied by the weights with the shared GEMM, whose
 * epilogue adds the bias and applies the activation while the output tile is still in cache.
 *   NCHW: im2col, buf[(c*kY + ky)*kX + kx][dy*dstW + dx]; dst[dstC][dstHW] = W[dstC][K] x buf[K][dstHW] per group.
 *   NHWC: im2row, buf[dy*dstW + dx][g][ky][kx][ci]; dst[dstHW][dstC] = buf[dstHW][K] x W[K][dstC] per group.
 * Direct1x1 (1x1, stride 1, pad 0): the source already is the GEMM operand, no unrolling.
 */
#include "convolution/conv.h"
#include <stdlib.h>

#include "convolution/conv_epilogue.h"

typedef struct {
    const conv_ctx * c;
    const float * src;
    float * buf;
} unroll_arg;

/* im2col rows [begin, end) of one NCHW image. */
static void im2col_rows(void * arg, size_t begin, size_t end)
{
    const unroll_arg * a = (const unroll_arg *)arg;
    const SimdConvolutionParameters * p = &a->c->p;
    size_t kY = p->kernelY, kX = p->kernelX, N = p->dstH * p->dstW;
    for (size_t r = begin; r < end; ++r) {
        size_t ch = r / (kY * kX), ky = r / kX % kY, kx = r % kX;
        const float * plane = a->src + ch * p->srcH * p->srcW;
        float * out = a->buf + r * N;
        ptrdiff_t offX = (ptrdiff_t)(kx * p->dilationX) - (ptrdiff_t)p->padX;
        ptrdiff_t offY = (ptrdiff_t)(ky * p->dilationY) - (ptrdiff_t)p->padY;
        size_t x0, x1, y0, y1;
        conv_valid_range(offX, p->strideX, p->srcW, p->dstW, &x0, &x1);
        conv_valid_range(offY, p->strideY, p->srcH, p->dstH, &y0, &y1);
        if (y0 > 0) memset(out, 0, y0 * p->dstW * sizeof(float));
        for (size_t dy = y0; dy < y1; ++dy) {
            float * row = out + dy * p->dstW;
            const float * line = plane + (size_t)((ptrdiff_t)(dy * p->strideY) + offY) * p->srcW;
            if (x0 > 0) memset(row, 0, x0 * sizeof(float));
            if (p->strideX == 1 && x1 > x0)
                memcpy(row + x0, line + (size_t)((ptrdiff_t)x0 + offX), (x1 - x0) * sizeof(float));
            else
                for (size_t dx = x0; dx < x1; ++dx)
                    row[dx] = line[(size_t)((ptrdiff_t)(dx * p->strideX) + offX)];
            if (x1 < p->dstW) memset(row + x1, 0, (p->dstW - x1) * sizeof(float));
        }
        if (y1 < p->dstH) memset(out + y1 * p->dstW, 0, (p->dstH - y1) * p->dstW * sizeof(float));
    }
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
        float * out = a->buf + pix * K;
        for (size_t ky = 0; ky < kY; ++ky) {
            ptrdiff_t sy = (ptrdiff_t)(dy * p->strideY + ky * p->dilationY) - (ptrdiff_t)p->padY;
            for (size_t kx = 0; kx < kX; ++kx) {
                ptrdiff_t sx = (ptrdiff_t)(dx * p->strideX + kx * p->dilationX) - (ptrdiff_t)p->padX;
                int inside = sy >= 0 && sy < (ptrdiff_t)p->srcH && sx >= 0 && sx < (ptrdiff_t)p->srcW;
                const float * s = inside ? a->src + ((size_t)sy * p->srcW + (size_t)sx) * p->srcC : NULL;
                for (size_t g = 0; g < G; ++g) {
                    float * o = out + g * Kg + (ky * kX + kx) * srcCg;
                    if (inside)
                        memcpy(o, s + g * srcCg, srcCg * sizeof(float));
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
            unroll_arg u = {c, a->src, a->buf};
            im2row_pixels(&u, m0, m1);
            gemm_rows(c, a->buf + m0 * K, K, m1 - m0, a->dst + m0 * p->dstC);
        } else
            gemm_rows(c, a->src + m0 * p->srcC, p->srcC, m1 - m0, a->dst + m0 * p->dstC);
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
    size_t K = p->kernelY * p->kernelX * p->srcC;
    for (size_t b = 0; b < c->batch; ++b) {
        if (p->srcF == SimdTensorFormatNchw) {
            unroll_arg a = {c, src + b * srcSize, buf};
            sb_parallel_for(K, 1, im2col_rows, &a);
            gemm_image(c, buf, K, dst + b * dstSize);
        } else
            nhwc_image(c, src + b * srcSize, buf, dst + b * dstSize);
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
    float * buffer = (float *)malloc(G * packed * sizeof(float));
    if (buffer == NULL)
        return NULL;
    for (size_t g = 0; g < G; ++g)
        SB_FN(gemm32f_pack_b)(dstCg, Kg, weight + g * dstCg, p->dstC, 0, buffer + g * packed);
    *size = G * packed;
    return buffer;
}
