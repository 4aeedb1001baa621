/*
 * conv_winograd.dispatch.c: Winograd F(2x2,3x3) for 3x3, stride 1, dilation 1, group 1, compiled once per ISA.
 *
 * The output is cut into 2x2 tiles (tH x tW = T tiles per image; the last row/column of tiles may stick out of an
 * odd-sized output and is clipped when written). Each tile reads a 4x4 input patch starting at
 * (2*ty - padY, 2*tx - padX); reads outside the image are zeros.
 *   V = Bt d B       (input transform, per tile and input channel)
 *   M_k = V_k x U_k  (16 GEMMs, one per element k of the 4x4 transformed tile; U = G g Gt was made at SetParams)
 *   Y = At M A       (output transform), then bias + activation, written to dst.
 * Layouts: NHWC V[16][T][C], U[16][C][D], M[16][T][D] (vectors over channels);
 *          NCHW V[16][C][T], U[16][D][C], M[16][D][T] (vectors over tiles along x, gathered with stride 2).
 * Scratch (the Forward buf): 16*T*(C + D) floats. Tiles are processed in blocks (transform, 16 GEMMs, transform back
 * per block), which keeps a block's V and M in cache and lets threads take whole blocks.
 */
#include "convolution/conv.h"
#include "convolution/conv_epilogue.h"

typedef struct {
    const conv_ctx * c;
    const float * src;
    float * V;
    float * M;
    float * dst;
    size_t tH, tW;
    size_t TB; /* tiles per block */
} wino_arg;

/* Rows of Bt d B from 4 rows of d: r0 - r2, r1 + r2, r2 - r1, r1 - r3. */
#define WINO_BT(d0, d1, d2, d3, t0, t1, t2, t3) \
    do { t0 = (d0) - (d2); t1 = (d1) + (d2); t2 = (d2) - (d1); t3 = (d1) - (d3); } while (0)

SB_INLINE void wino_input(vf d[4][4], vf v[16])
{
    vf t[4][4];
    for (int j = 0; j < 4; ++j)
        WINO_BT(d[0][j], d[1][j], d[2][j], d[3][j], t[0][j], t[1][j], t[2][j], t[3][j]);
    for (int i = 0; i < 4; ++i)
        WINO_BT(t[i][0], t[i][1], t[i][2], t[i][3], v[i * 4 + 0], v[i * 4 + 1], v[i * 4 + 2], v[i * 4 + 3]);
}

/* At M A: y[0][0..1], y[1][0..1]. */
SB_INLINE void wino_output(const vf m[16], vf y[2][2])
{
    vf t[2][4];
    for (int j = 0; j < 4; ++j) {
        t[0][j] = m[0 * 4 + j] + m[1 * 4 + j] + m[2 * 4 + j];
        t[1][j] = m[1 * 4 + j] - m[2 * 4 + j] - m[3 * 4 + j];
    }
    for (int i = 0; i < 2; ++i) {
        y[i][0] = t[i][0] + t[i][1] + t[i][2];
        y[i][1] = t[i][1] - t[i][2] - t[i][3];
    }
}

/* ---- NHWC ---------------------------------------------------------------------------------------------------- */
static void wino_nhwc_input(void * arg, size_t begin, size_t end)
{
    const wino_arg * a = (const wino_arg *)arg;
    const SimdConvolutionParameters * p = &a->c->p;
    size_t C = p->srcC, T = a->tH * a->tW;
    for (size_t t = begin; t < end; ++t) {
        ptrdiff_t y0 = (ptrdiff_t)(t / a->tW * 2) - (ptrdiff_t)p->padY;
        ptrdiff_t x0 = (ptrdiff_t)(t % a->tW * 2) - (ptrdiff_t)p->padX;
        const float * rows[4][4];
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) {
                ptrdiff_t y = y0 + i, x = x0 + j;
                rows[i][j] = y >= 0 && y < (ptrdiff_t)p->srcH && x >= 0 && x < (ptrdiff_t)p->srcW
                    ? a->src + ((size_t)y * p->srcW + (size_t)x) * C : NULL;
            }
        for (size_t ch = 0; ch < C; ch += SB_W) {
            size_t n = C - ch < SB_W ? C - ch : SB_W;
            vf d[4][4], v[16];
            for (int i = 0; i < 4; ++i)
                for (int j = 0; j < 4; ++j)
                    d[i][j] = rows[i][j] == NULL ? vset1(0.0f)
                        : n == SB_W ? vload(rows[i][j] + ch) : vload_n(rows[i][j] + ch, n);
            wino_input(d, v);
            for (int k = 0; k < 16; ++k) {
                float * out = a->V + ((size_t)k * T + t) * C + ch;
                if (n == SB_W)
                    vstore(out, v[k]);
                else
                    vstore_n(out, v[k], n);
            }
        }
    }
}

static void wino_nhwc_output(void * arg, size_t begin, size_t end)
{
    const wino_arg * a = (const wino_arg *)arg;
    const SimdConvolutionParameters * p = &a->c->p;
    size_t D = p->dstC, T = a->tH * a->tW;
    sb_epilogue e = conv_group_epilogue(a->c, 0, 0);
    for (size_t t = begin; t < end; ++t) {
        size_t y0 = t / a->tW * 2, x0 = t % a->tW * 2;
        size_t ny = p->dstH - y0 < 2 ? 1 : 2, nx = p->dstW - x0 < 2 ? 1 : 2;
        for (size_t o = 0; o < D; o += SB_W) {
            size_t n = D - o < SB_W ? D - o : SB_W;
            vf m[16], y[2][2];
            for (int k = 0; k < 16; ++k) {
                const float * in = a->M + ((size_t)k * T + t) * D + o;
                m[k] = n == SB_W ? vload(in) : vload_n(in, n);
            }
            wino_output(m, y);
            for (size_t r = 0; r < ny; ++r)
                for (size_t s = 0; s < nx; ++s) {
                    float * out = a->dst + ((y0 + r) * p->dstW + x0 + s) * D + o;
                    if (n == SB_W)
                        vstore(out, y[r][s]);
                    else
                        vstore_n(out, y[r][s], n);
                }
        }
        for (size_t r = 0; r < ny; ++r)
            sb_epilogue_block(a->dst + ((y0 + r) * p->dstW + x0) * D, D, nx, D, 0, 0, &e);
    }
}

/* ---- NCHW ---------------------------------------------------------------------------------------------------- */
/* Lanes l < n: line[x0 + 2l] where 0 <= x0 + 2l < width, else 0. */
SB_INLINE vf gather2(const float * line, ptrdiff_t x0, ptrdiff_t width, size_t n)
{
    vf v = vset1(0.0f);
    if (n == SB_W && x0 >= 0 && x0 + 2 * (SB_W - 1) < width) {
        for (int l = 0; l < SB_W; ++l) /* fixed count: unrolled into lane inserts */
            v[l] = line[x0 + 2 * l];
    } else if (x0 >= 0 && x0 + 2 * (ptrdiff_t)(n - 1) < width) {
        for (size_t l = 0; l < n; ++l)
            v[l] = line[x0 + 2 * (ptrdiff_t)l];
    } else {
        for (size_t l = 0; l < n; ++l) {
            ptrdiff_t x = x0 + 2 * (ptrdiff_t)l;
            if (x >= 0 && x < width)
                v[l] = line[x];
        }
    }
    return v;
}

/* Tiles [t0, t1) of every input channel: the tiles of each tile row are taken SB_W at a time. */
static void wino_nchw_input(const wino_arg * a, size_t t0, size_t t1)
{
    const SimdConvolutionParameters * p = &a->c->p;
    size_t C = p->srcC, T = a->tH * a->tW;
    for (size_t ch = 0; ch < C; ++ch) {
        const float * plane = a->src + ch * p->srcH * p->srcW;
        for (size_t ty = t0 / a->tW; ty * a->tW < t1; ++ty) {
            size_t first = ty * a->tW < t0 ? t0 - ty * a->tW : 0;
            size_t last = (ty + 1) * a->tW > t1 ? t1 - ty * a->tW : a->tW;
            ptrdiff_t y0 = (ptrdiff_t)(ty * 2) - (ptrdiff_t)p->padY;
            for (size_t tx = first; tx < last; tx += SB_W) {
                size_t n = last - tx < SB_W ? last - tx : SB_W;
                ptrdiff_t x0 = (ptrdiff_t)(tx * 2) - (ptrdiff_t)p->padX;
                vf d[4][4], v[16];
                for (int i = 0; i < 4; ++i) {
                    ptrdiff_t y = y0 + i;
                    for (int j = 0; j < 4; ++j)
                        d[i][j] = y >= 0 && y < (ptrdiff_t)p->srcH
                            ? gather2(plane + (size_t)y * p->srcW, x0 + j, (ptrdiff_t)p->srcW, n) : vset1(0.0f);
                }
                wino_input(d, v);
                for (int k = 0; k < 16; ++k) {
                    float * out = a->V + ((size_t)k * C + ch) * T + ty * a->tW + tx;
                    if (n == SB_W)
                        vstore(out, v[k]);
                    else
                        vstore_n(out, v[k], n);
                }
            }
        }
    }
}

/* Tiles [t0, t1) of every output channel, then bias + activation over the output row pieces they cover. */
static void wino_nchw_output(const wino_arg * a, size_t t0, size_t t1)
{
    const SimdConvolutionParameters * p = &a->c->p;
    size_t D = p->dstC, T = a->tH * a->tW;
    sb_epilogue e = conv_group_epilogue(a->c, 0, 1);
    for (size_t o = 0; o < D; ++o) {
        float * plane = a->dst + o * p->dstH * p->dstW;
        for (size_t ty = t0 / a->tW; ty * a->tW < t1; ++ty) {
            size_t first = ty * a->tW < t0 ? t0 - ty * a->tW : 0;
            size_t last = (ty + 1) * a->tW > t1 ? t1 - ty * a->tW : a->tW;
            size_t y0 = ty * 2, ny = p->dstH - y0 < 2 ? 1 : 2;
            for (size_t tx = first; tx < last; tx += SB_W) {
                size_t n = last - tx < SB_W ? last - tx : SB_W;
                vf m[16], y[2][2];
                for (int k = 0; k < 16; ++k) {
                    const float * in = a->M + ((size_t)k * D + o) * T + ty * a->tW + tx;
                    m[k] = n == SB_W ? vload(in) : vload_n(in, n);
                }
                wino_output(m, y);
                size_t x0 = tx * 2, count = p->dstW - x0 < 2 * n ? p->dstW - x0 : 2 * n;
                for (size_t r = 0; r < ny; ++r) {
                    float * out = plane + (y0 + r) * p->dstW + x0;
                    if (count == 2 * SB_W) {
                        for (int l = 0; l < SB_W; ++l) { /* fixed count: interleaved stores, unrolled */
                            out[2 * l] = y[r][0][l];
                            out[2 * l + 1] = y[r][1][l];
                        }
                    } else {
                        float line[2 * SB_W];
                        for (size_t l = 0; l < n; ++l) {
                            line[2 * l] = y[r][0][l];
                            line[2 * l + 1] = y[r][1][l];
                        }
                        memcpy(out, line, count * sizeof(float));
                    }
                }
            }
            size_t x0 = first * 2, x1 = last * 2 < p->dstW ? last * 2 : p->dstW;
            for (size_t r = 0; r < ny; ++r)
                sb_epilogue_block(plane + (y0 + r) * p->dstW + x0, p->dstW, 1, x1 - x0, o, x0, &e);
        }
    }
}

/* Blocks [begin, end) of tiles: transform, 16 GEMMs small enough to stay on this thread and in cache, transform
   back. Blocks only touch their own rows (NHWC) or columns (NCHW) of V and M, so they run in parallel. */
static void wino_blocks(void * arg, size_t begin, size_t end)
{
    const wino_arg * a = (const wino_arg *)arg;
    const SimdConvolutionParameters * p = &a->c->p;
    size_t C = p->srcC, D = p->dstC, T = a->tH * a->tW;
    const float * U = a->c->packed;
    for (size_t block = begin; block < end; ++block) {
        size_t t0 = block * a->TB, t1 = t0 + a->TB < T ? t0 + a->TB : T, n = t1 - t0;
        if (p->srcF == SimdTensorFormatNhwc) {
            wino_nhwc_input((void *)a, t0, t1);
            for (size_t k = 0; k < 16; ++k)
                SB_FN(gemm32f_nn)(n, D, C, a->V + (k * T + t0) * C, C, U + k * C * D, D, a->M + (k * T + t0) * D, D,
                    NULL);
            wino_nhwc_output((void *)a, t0, t1);
        } else {
            wino_nchw_input(a, t0, t1);
            for (size_t k = 0; k < 16; ++k)
                SB_FN(gemm32f_nn)(D, n, C, U + k * D * C, C, a->V + k * C * T + t0, T, a->M + k * D * T + t0, T,
                    NULL);
            wino_nchw_output(a, t0, t1);
        }
    }
}

void SB_FN(conv_forward_winograd)(const conv_ctx * c, const float * src, float * buf, float * dst)
{
    const SimdConvolutionParameters * p = &c->p;
    size_t C = p->srcC, D = p->dstC, tH = (p->dstH + 1) / 2, tW = (p->dstW + 1) / 2, T = tH * tW;
    /* Tiles per block: the 16 GEMMs of a block do about 2^19 multiply-adds each block (below the GEMM's own
       threading, so threads split the blocks instead of being started 18 times per image; V and M of a block stay
       in L2), with at least 32 tiles per GEMM. Measured at avx2, 64->64 at 56x56: 128 tiles per block is as fast
       as one block on one thread and about twice as fast on two. */
    size_t TB = ((size_t)1 << 19) / (C * D);
    TB = TB < 32 ? 32 : TB > T ? T : TB;
    wino_arg a = {c, NULL, buf, buf + 16 * T * C, NULL, tH, tW, TB};
    for (size_t b = 0; b < c->batch; ++b) {
        a.src = src + b * C * p->srcH * p->srcW;
        a.dst = dst + b * D * p->dstH * p->dstW;
        sb_parallel_for((T + TB - 1) / TB, 1, wino_blocks, &a);
    }
}
