/*
 * average.dispatch.c: SimdSynetPoolingAverage's kernel, compiled once per ISA.
 *
 * Semantics (seed page, spec 3.12.2): dst = sum(clipped window) / D, D = clipped area if excludePad, else
 * kernelY*kernelX. The sum runs in float32 in scan order (row-major over the window), then one division, exactly as
 * the page's pseudo-code; an empty window gives 0/0 = NaN with excludePad and 0 without.
 */
#include "simd_synet.h"
#include "pooling/pool_window.h"

#define PK_T float
#define PK_S float
#define PK_V vf
#define PK_L SB_W
#define PK_LOAD(p) vload(p)
#define PK_LOAD_N(p, n) vload_n(p, n)
#define PK_CVT(e) (e)
#define PK_INIT_V vset1(0.0f)
#define PK_INIT_S 0.0f
#define PK_OP_V(a, x) ((a) + (x))
#define PK_OP_S(a, x) ((a) + (x))
#define PK_STORE(p, a, d) vstore(p, (a) / vset1(d))
#define PK_STORE_N(p, a, d, n) vstore_n(p, (a) / vset1(d), n)
#define PK_FINAL(a, d) ((a) / (d))
#define PK_AVERAGE 1
#include "pooling/pool_kernel.h"

void SB_FN(pooling_average)(const float * src, size_t srcC, size_t srcH, size_t srcW, size_t kernelY,
    size_t kernelX, size_t strideY, size_t strideX, size_t padY, size_t padX, float * dst, size_t dstH, size_t dstW,
    SimdBool excludePad, SimdTensorFormatType format)
{
    pk_geometry g = {srcH, srcW, kernelY, kernelX, strideY, strideX, padY, padX, dstH, dstW, excludePad != 0};
    pk_pool2d(src, srcC, &g, dst, format == SimdTensorFormatNhwc);
}
