/* @targets base sse41 avx2 avx512bw */
/*
 * conv_winograd.dispatch.c: Winograd F(2x2,3x3) and F(4x4,3x3) for 3x3, stride 1, dilation 1, group 1, compiled
 * once per ISA.
 *
 * With an output tile of R x R (R = 2 or 4) and an input tile of N x N (N = R + 2), the output is cut into tiles
 * (tH x tW = T tiles per image; the last row/column of tiles may stick out of the output and is clipped when
 * written). Each tile reads the N x N input patch starting at (R*ty - padY, R*tx - padX); reads outside the image are
 * zeros.
 *   V = Bt d B       (input transform, per tile and input channel)
 *   M_k = V_k x U_k  (N*N GEMMs, one per element k of the transformed tile; U = G g Gt was made at SetParams)
 *   Y = At M A       (output transform), then bias + activation, written to dst.
 * F(2x2) does 16 multiplies per 4 outputs (2.25x fewer than direct), F(4x4) 36 per 16 (4x fewer) with larger
 * transforms and more rounding (about 6e-5 relative error against float64 for F(4x4,3x3) on data in [-1, 1],
 * against 2e-6 for direct/GEMM; docs/guide/tolerance.md).
 * Layout (KK = N*N): V[KK][T][C], U[KK][C][D], M[KK][T][D], vectors over channels; the planes of V and M lie
 * conv_winograd_plane floats apart (conv.h), an odd number of cache lines. 64->64 at 56x56, F(4x4), one thread:
 * 744 -> 710 us at avx512vnni, 796 -> 768 at avx2 against tile-major V[T][KK][C] (contiguous transforms, strided
 * GEMM rows), which in turn beat unpadded planes by 6-8%. An NCHW call transposes its source to NHWC, runs the same
 * steps into an NHWC copy of the output and transposes that back: two passes over C + D planes cost far less than
 * the transforms lose when vectors run over tiles (a row of tiles is often shorter than a vector, and NCHW tiles need
 * strided gathers). Measured with F(4x4), one thread, AVX-512: 64->64 at 56x56 199 GFLOP/s through NHWC against 107
 * with vectors over tiles; 256->256 at 14x14, 140 against 77.
 * Scratch (the Forward buf): KK planes of V and of M, plus H*W*C + dstH*dstW*D for NCHW. Tiles are processed in blocks
 * (transform, KK GEMMs, transform back per block), which keeps a block's V and M in cache and lets threads take whole
 * blocks.
 *
 * Every function below takes R as an argument and is always inlined into the two entry points, so each is compiled
 * for a constant R.
 */
#include "convolution/conv.h"
#include "convolution/conv_epilogue.h"
#include "convolution/conv_transpose.h"

/* Loops over a tile's vectors are unrolled completely, or its arrays of vectors live on the stack and each vector
   makes a round trip through memory between the transform and the loads or stores. */
#define WINO_UNROLL _Pragma("GCC unroll 36")

typedef struct {
    const conv_ctx * c;
    const float * src;
    float * V;
    float * M;
    float * dst;
    size_t tH, tW;
    size_t TB; /* tiles per block */
    size_t planeV, planeM; /* floats between the planes of V and of M (conv_winograd_plane) */
} wino_arg;

/* One dimension of Bt d B: t = Bt d for an input column d[0..N). */
SB_INLINE void wino_bt(const int R, const vf * d, vf * t)
{
    if (R == 2) {
        t[0] = d[0] - d[2];
        t[1] = d[1] + d[2];
        t[2] = d[2] - d[1];
        t[3] = d[1] - d[3];
    } else {
        /* Bt = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1] */
        vf four = vset1(4.0f), five = vset1(5.0f), two = vset1(2.0f);
        vf a = d[4] - four * d[2], b = d[3] - four * d[1];
        vf c = d[4] - d[2], e = two * (d[3] - d[1]);
        t[0] = four * d[0] - five * d[2] + d[4];
        t[1] = a + b;
        t[2] = a - b;
        t[3] = c + e;
        t[4] = c - e;
        t[5] = four * d[1] - five * d[3] + d[5];
    }
}

/* One dimension of At m A: y = At m for a column m[0..N) of the product. */
SB_INLINE void wino_at(const int R, const vf * m, vf * y)
{
    if (R == 2) {
        y[0] = m[0] + m[1] + m[2];
        y[1] = m[1] - m[2] - m[3];
    } else {
        /* At = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1] */
        vf a = m[1] + m[2], b = m[1] - m[2], c = m[3] + m[4], e = m[3] - m[4];
        y[0] = m[0] + a + c;
        y[1] = b + vset1(2.0f) * e;
        y[2] = a + vset1(4.0f) * c;
        y[3] = b + vset1(8.0f) * e + m[5];
    }
}

/* v[i*N + j] = (Bt d B)[i][j]. */
SB_INLINE void wino_input(const int R, vf d[6][6], vf v[36])
{
    const int N = R + 2;
    vf t[6][6], column[6], out[6];
    WINO_UNROLL
    for (int j = 0; j < N; ++j) {
        WINO_UNROLL
        for (int i = 0; i < N; ++i)
            column[i] = d[i][j];
        wino_bt(R, column, out);
        WINO_UNROLL
        for (int i = 0; i < N; ++i)
            t[i][j] = out[i];
    }
    WINO_UNROLL
    for (int i = 0; i < N; ++i)
        wino_bt(R, t[i], v + i * N);
}

/* y[r][s] = (At m A)[r][s], m[i*N + j]. */
SB_INLINE void wino_output(const int R, const vf m[36], vf y[4][4])
{
    const int N = R + 2;
    vf t[4][6], column[6], out[4];
    WINO_UNROLL
    for (int j = 0; j < N; ++j) {
        WINO_UNROLL
        for (int i = 0; i < N; ++i)
            column[i] = m[i * N + j];
        wino_at(R, column, out);
        WINO_UNROLL
        for (int r = 0; r < R; ++r)
            t[r][j] = out[r];
    }
    WINO_UNROLL
    for (int r = 0; r < R; ++r)
        wino_at(R, t[r], y[r]);
}

/* One tile's channels [ch, ch + n) of its N x N input pixels (NULL: padding, none when `inside`), transformed into
   the KK vectors at out, out_k floats apart (one per plane of V). full (n == SB_W) and inside are constants after
   inlining. */
SB_INLINE void wino_tile_input(const int R, const int full, const int inside, const float * const pixels[6][6],
    size_t ch, size_t n, float * out, size_t out_k)
{
    const int N = R + 2;
    vf d[6][6], v[36];
    WINO_UNROLL
    for (int i = 0; i < N; ++i)
        WINO_UNROLL
        for (int j = 0; j < N; ++j)
            d[i][j] = !inside && pixels[i][j] == NULL ? vset1(0.0f)
                : full ? vload(pixels[i][j] + ch) : vload_n(pixels[i][j] + ch, n);
    wino_input(R, d, v);
    WINO_UNROLL
    for (int k = 0; k < N * N; ++k)
        if (full)
            vstore(out + k * out_k, v[k]);
        else
            vstore_n(out + k * out_k, v[k], n);
}

SB_INLINE void wino_nhwc_input(const int R, const wino_arg * a, size_t t0, size_t t1)
{
    const SimdConvolutionParameters * p = &a->c->p;
    const int N = R + 2;
    size_t C = p->srcC;
    for (size_t t = t0; t < t1; ++t) {
        ptrdiff_t y0 = (ptrdiff_t)(t / a->tW * R) - (ptrdiff_t)p->padY;
        ptrdiff_t x0 = (ptrdiff_t)(t % a->tW * R) - (ptrdiff_t)p->padX;
        const float * pixels[6][6];
        for (int i = 0; i < N; ++i)
            for (int j = 0; j < N; ++j) {
                ptrdiff_t y = y0 + i, x = x0 + j;
                pixels[i][j] = y >= 0 && y < (ptrdiff_t)p->srcH && x >= 0 && x < (ptrdiff_t)p->srcW
                    ? a->src + ((size_t)y * p->srcW + (size_t)x) * C : NULL;
            }
        int inside = y0 >= 0 && x0 >= 0 && y0 + N <= (ptrdiff_t)p->srcH && x0 + N <= (ptrdiff_t)p->srcW;
        float * out = a->V + t * C;
        size_t ch = 0;
        if (inside)
            for (; ch + SB_W <= C; ch += SB_W)
                wino_tile_input(R, 1, 1, pixels, ch, SB_W, out + ch, a->planeV);
        else
            for (; ch + SB_W <= C; ch += SB_W)
                wino_tile_input(R, 1, 0, pixels, ch, SB_W, out + ch, a->planeV);
        if (ch < C)
            wino_tile_input(R, 0, 0, pixels, ch, C - ch, out + ch, a->planeV);
    }
}

/* One tile's channels [o, o + n) of the product (the KK vectors at in, in_k floats apart: one per plane of M),
   transformed back and written to its ny x nx output pixels from out (pixels D, rows dst_row floats apart), with the
   fused bias and Relu (see wino_nhwc_output). full (n == SB_W) and whole (a whole R x R tile) are constants after
   inlining. */
SB_INLINE void wino_tile_output(const int R, const int full, const int whole, const float * in, size_t in_k, size_t n,
    float * out, size_t D, size_t dst_row, size_t ny, size_t nx, const float * bias, int relu)
{
    const int N = R + 2;
    vf m[36], y[4][4];
    WINO_UNROLL
    for (int k = 0; k < N * N; ++k)
        m[k] = full ? vload(in + k * in_k) : vload_n(in + k * in_k, n);
    wino_output(R, m, y);
    const vf zero = vset1(0.0f), b = bias == NULL ? zero : full ? vload(bias) : vload_n(bias, n);
    if (whole) {
        ny = (size_t)R;
        nx = (size_t)R;
    }
    WINO_UNROLL
    for (size_t r = 0; r < ny; ++r)
        WINO_UNROLL
        for (size_t s = 0; s < nx; ++s) {
            vf x = y[r][s];
            if (bias != NULL)
                x += b;
            if (relu)
                x = vmax(zero, x);
            if (full)
                vstore(out + r * dst_row + s * D, x);
            else
                vstore_n(out + r * dst_row + s * D, x, n);
        }
}

SB_INLINE void wino_nhwc_output(const int R, const wino_arg * a, size_t t0, size_t t1)
{
    const SimdConvolutionParameters * p = &a->c->p;
    size_t D = p->dstC, dst_row = p->dstW * D;
    sb_epilogue e = conv_group_epilogue(a->c, 0, 0);
    /* A bias and Identity or Relu are applied on the registers before the store, with sb_epilogue_block's formula
       (x = sum + bias, then Max(0, x)), so the results are the same without a second pass over the tile. */
    const int fuse = e.activation == SimdConvolutionActivationIdentity || e.activation == SimdConvolutionActivationRelu;
    const int relu = e.activation == SimdConvolutionActivationRelu;
    const float * bias = fuse ? e.bias : NULL;
    for (size_t t = t0; t < t1; ++t) {
        size_t y0 = t / a->tW * R, x0 = t % a->tW * R;
        size_t ny = p->dstH - y0 < (size_t)R ? p->dstH - y0 : (size_t)R;
        size_t nx = p->dstW - x0 < (size_t)R ? p->dstW - x0 : (size_t)R;
        const float * in = a->M + t * D;
        float * out = a->dst + (y0 * p->dstW + x0) * D;
        int whole = ny == (size_t)R && nx == (size_t)R;
        size_t o = 0;
        for (; o + SB_W <= D; o += SB_W) {
            const float * b = bias ? bias + o : NULL;
            if (whole)
                wino_tile_output(R, 1, 1, in + o, a->planeM, SB_W, out + o, D, dst_row, ny, nx, b, relu);
            else
                wino_tile_output(R, 1, 0, in + o, a->planeM, SB_W, out + o, D, dst_row, ny, nx, b, relu);
        }
        if (o < D)
            wino_tile_output(R, 0, 0, in + o, a->planeM, D - o, out + o, D, dst_row, ny, nx, bias ? bias + o : NULL,
                relu);
        if (!fuse)
            for (size_t r = 0; r < ny; ++r)
                sb_epilogue_block(out + r * dst_row, D, nx, D, 0, 0, &e);
    }
}

/* Blocks [begin, end) of tiles: transform, KK GEMMs small enough to stay on this thread and in cache, transform
   back. Blocks only touch their own rows of V and M, so they run in parallel. */
SB_INLINE void wino_blocks(const int R, const wino_arg * a, size_t begin, size_t end)
{
    const SimdConvolutionParameters * p = &a->c->p;
    const size_t KK = (size_t)(R + 2) * (size_t)(R + 2);
    size_t C = p->srcC, D = p->dstC, T = a->tH * a->tW;
    const float * U = a->c->packed;
    for (size_t block = begin; block < end; ++block) {
        size_t t0 = block * a->TB, t1 = t0 + a->TB < T ? t0 + a->TB : T, n = t1 - t0;
        wino_nhwc_input(R, a, t0, t1);
        for (size_t k = 0; k < KK; ++k)
            SB_FN(gemm32f_nn)(n, D, C, a->V + k * a->planeV + t0 * C, C, U + k * C * D, D,
                a->M + k * a->planeM + t0 * D, D, NULL);
        wino_nhwc_output(R, a, t0, t1);
    }
}

static void wino2_blocks(void * arg, size_t begin, size_t end) { wino_blocks(2, (const wino_arg *)arg, begin, end); }
static void wino4_blocks(void * arg, size_t begin, size_t end) { wino_blocks(4, (const wino_arg *)arg, begin, end); }

SB_INLINE void wino_forward(const int R, const conv_ctx * c, const float * src, float * buf, float * dst)
{
    const SimdConvolutionParameters * p = &c->p;
    const size_t KK = (size_t)(R + 2) * (size_t)(R + 2);
    size_t C = p->srcC, D = p->dstC, tH = (p->dstH + R - 1) / R, tW = (p->dstW + R - 1) / R, T = tH * tW;
    /* Tiles per block: each of the KK GEMMs of a block does about 2^19 multiply-adds, below the GEMM's own
       threading, so threads split the blocks instead of being started KK+2 times per image, and V and M of a block
       stay in L2, with at least 32 tiles per GEMM. Measured at avx2, 64->64 at 56x56: F2x2 with 128 tiles per block
       is as fast as one block on one thread and about twice as fast on two. For F4x4 the same tile count beat
       16/36 of it (the same multiply-adds per block) by 5-10% at 56x56 and 112x112 (avx2 and avx512bw). */
    size_t TB = ((size_t)1 << 19) / (C * D);
    TB = TB < 32 ? 32 : TB > T ? T : TB;
    size_t srcHW = p->srcH * p->srcW, dstHW = p->dstH * p->dstW;
    int nchw = p->srcF == SimdTensorFormatNchw;
    size_t planeV = conv_winograd_plane(T, C), planeM = conv_winograd_plane(T, D);
    float * src_nhwc = buf + KK * (planeV + planeM), * dst_nhwc = src_nhwc + srcHW * C;
    wino_arg a = {c, NULL, buf, buf + KK * planeV, NULL, tH, tW, TB, planeV, planeM};
    for (size_t b = 0; b < c->batch; ++b) {
        a.src = src + b * C * srcHW;
        a.dst = dst + b * D * dstHW;
        if (nchw) {
            transpose(a.src, C, srcHW, src_nhwc);
            a.src = src_nhwc;
            a.dst = dst_nhwc;
        }
        sb_parallel_for((T + TB - 1) / TB, 1, R == 2 ? wino2_blocks : wino4_blocks, &a);
        if (nchw)
            transpose(dst_nhwc, dstHW, D, dst + b * D * dstHW);
    }
}

void SB_FN(conv_forward_winograd2)(const conv_ctx * c, const float * src, float * buf, float * dst)
{
    wino_forward(2, c, src, buf, dst);
}

void SB_FN(conv_forward_winograd4)(const conv_ctx * c, const float * src, float * buf, float * dst)
{
    wino_forward(4, c, src, buf, dst);
}
