/* @targets base sse41 avx2 */
/*
 * max8u.dispatch.c: SimdSynetPoolingMax8u's kernel, compiled once per ISA of its @targets line. Not for AVX-512:
 * its loops measured 10-15% slower with 64-byte vectors on both benchmark layers (NHWC 64x112x112 3x3/2 and
 * 256x56x56 2x2/2), so avx512bw runs the avx2 variant.
 *
 * Semantics (upstream's Base code): the maximum over the clipped window starting from 0, so an empty window
 * gives 0. Vectors hold 4*SB_W bytes.
 */
#include "simd_synet.h"
#include "pooling/pool_window.h"

SB_INLINE vb vloadb_n(const uint8_t * p, size_t n) { vb v = {0}; memcpy(&v, p, n); return v; }
SB_INLINE void vstoreb_n(uint8_t * p, vb v, size_t n) { memcpy(p, &v, n); }

#define PK_T uint8_t
#define PK_S uint8_t
#define PK_V vb
#if SB_W == 8
#define PK_L 32
#else
#define PK_L 16
#endif
#define PK_LOAD(p) vloadb(p)
#define PK_LOAD_N(p, n) vloadb_n(p, n)
#define PK_CVT(e) (e)
#define PK_INIT_V ((vb){0})
#define PK_INIT_S ((uint8_t)0)
#define PK_OP_V(a, x) vmaxb(a, x)
#define PK_OP_S(a, x) ((uint8_t)((a) > (x) ? (a) : (x)))
#define PK_STORE(p, a, d) vstoreb(p, a)
#define PK_STORE_N(p, a, d, n) vstoreb_n(p, a, n)
#define PK_LOAD_BYTES(p, bytes) vload_bytes(p, bytes)
#define PK_STORE_BYTES(p, a, d, bytes) vstore_bytes(p, a, bytes)
#define PK_FINAL(a, d) (a)
#define PK_AVERAGE 0
#include "pooling/pool_kernel.h"

void SB_FN(pooling_max8u)(const uint8_t * src, size_t srcC, size_t srcH, size_t srcW, size_t kernelY,
    size_t kernelX, size_t strideY, size_t strideX, size_t padY, size_t padX, uint8_t * dst, size_t dstH,
    size_t dstW, SimdTensorFormatType format)
{
    pk_geometry g = {srcH, srcW, kernelY, kernelX, strideY, strideX, padY, padX, dstH, dstW, 0};
    pk_pool2d(src, srcC, &g, dst, format == SimdTensorFormatNhwc);
}
