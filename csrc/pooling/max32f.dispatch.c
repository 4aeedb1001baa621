/* @targets base sse41 avx2 avx512bw */
/*
 * max32f.dispatch.c: SimdSynetPoolingMax32f's kernel (2D and 3D), compiled once per ISA.
 *
 * Semantics (upstream's Base code): the fold m = m > x ? m : x over the clipped window in scan order, starting
 * from -FLT_MAX (so an empty or all -inf window gives -FLT_MAX, and a NaN survives only as the last element).
 * 2D iff kernelC == 1, strideC == 1, padC == 0 and srcC == dstC; otherwise channels are pooled too, with the same
 * window rule. Scan order of 3D windows: (c, y, x) for NCHW, (y, x, c) for NHWC (each layout's memory order).
 */
#include <float.h>

#include "simd_synet.h"
#include "pooling/pool_window.h"

#define PK_T float
#define PK_S float
#define PK_V vf
#define PK_L SB_W
#define PK_LOAD(p) vload(p)
#define PK_LOAD_N(p, n) vload_n(p, n)
#define PK_CVT(e) (e)
#define PK_INIT_V vset1(-FLT_MAX)
#define PK_INIT_S (-FLT_MAX)
#define PK_OP_V(a, x) vmax(a, x)
#define PK_OP_S(a, x) ((a) > (x) ? (a) : (x))
#define PK_STORE(p, a, d) vstore(p, a)
#define PK_STORE_N(p, a, d, n) vstore_n(p, a, n)
#define PK_LOAD_BYTES(p, bytes) ((vf)vload_bytes(p, bytes))
#define PK_STORE_BYTES(p, a, d, bytes) vstore_bytes(p, (vb)(a), bytes)
#define PK_FINAL(a, d) (a)
#define PK_AVERAGE 0
#include "pooling/pool_kernel.h"

/* 3D NHWC: per output pixel and output channel, fold y, x, then the channel window. */
static void max3d_nhwc(const float * src, size_t srcC, const pk_geometry * g, size_t kernelC, size_t strideC,
    size_t padC, float * dst, size_t dstC)
{
    for (size_t dy = 0; dy < g->dstH; ++dy) {
        size_t yb, ye;
        pv_window(dy, g->strideY, g->padY, g->kernelY, g->srcH, &yb, &ye);
        for (size_t dx = 0; dx < g->dstW; ++dx) {
            size_t xb, xe;
            pv_window(dx, g->strideX, g->padX, g->kernelX, g->srcW, &xb, &xe);
            float * out = dst + (dy * g->dstW + dx) * dstC;
            for (size_t dc = 0; dc < dstC; ++dc) {
                size_t cb, ce;
                pv_window(dc, strideC, padC, kernelC, srcC, &cb, &ce);
                float m = -FLT_MAX;
                for (size_t y = yb; y < ye; ++y)
                    for (size_t x = xb; x < xe; ++x) {
                        const float * p = src + (y * g->srcW + x) * srcC;
                        for (size_t c = cb; c < ce; ++c)
                            m = m > p[c] ? m : p[c];
                    }
                out[dc] = m;
            }
        }
    }
}

void SB_FN(pooling_max32f)(const float * src, size_t srcC, size_t srcH, size_t srcW, size_t kernelC,
    size_t kernelY, size_t kernelX, size_t strideC, size_t strideY, size_t strideX, size_t padC, size_t padY,
    size_t padX, float * dst, size_t dstC, size_t dstH, size_t dstW, SimdTensorFormatType format)
{
    pk_geometry g = {srcH, srcW, kernelY, kernelX, strideY, strideX, padY, padX, dstH, dstW, 0};
    int nhwc = format == SimdTensorFormatNhwc;
    if (kernelC == 1 && strideC == 1 && padC == 0 && srcC == dstC) {
        pk_pool2d(src, srcC, &g, dst, nhwc);
        return;
    }
    if (nhwc) {
        max3d_nhwc(src, srcC, &g, kernelC, strideC, padC, dst, dstC);
        return;
    }
    for (size_t dc = 0; dc < dstC; ++dc) {
        size_t cb, ce;
        pv_window(dc, strideC, padC, kernelC, srcC, &cb, &ce);
        pk_nchw_plane(src + cb * srcH * srcW, ce - cb, &g, dst + dc * dstH * dstW);
    }
}
