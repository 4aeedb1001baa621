/*
 * max16b.dispatch.c: SimdSynetPoolingMax16b's kernel, compiled once per ISA.
 *
 * Semantics (seed page, spec 3.12.4): each bf16 is widened exactly to float32, folded like Max32f from -FLT_MAX,
 * and the result is rounded back with RNE. Inputs are exact bf16, so every output is a copy of an input element,
 * except an empty or all -inf window: bf16(-FLT_MAX) = 0xFF80 (-inf).
 */
#include <float.h>

#include "simd_synet.h"
#include "internal/bf16.h"
#include "pooling/pool_window.h"

#define PK_T uint16_t
#define PK_S float
#define PK_V vf
#define PK_L SB_W
#define PK_LOAD(p) vbf16_to_f32(vloadh(p))
#define PK_LOAD_N(p, n) vbf16_to_f32(vloadh_n(p, n))
#define PK_CVT(e) sb_bf16_to_float(e)
#define PK_INIT_V vset1(-FLT_MAX)
#define PK_INIT_S (-FLT_MAX)
#define PK_OP_V(a, x) vmax(a, x)
#define PK_OP_S(a, x) ((a) > (x) ? (a) : (x))
#define PK_STORE(p, a, d) vstoreh(p, vf32_to_bf16(a))
#define PK_STORE_N(p, a, d, n) vstoreh_n(p, vf32_to_bf16(a), n)
#define PK_FINAL(a, d) sb_float_to_bf16(a)
#define PK_AVERAGE 0
#if SB_W != 16
/* NHWC chunks of 2*SB_W channels as even and odd halves (vloadh_pairs), folded from -inf rather than -FLT_MAX:
   no bf16 lies strictly between the two, and both round to the same bf16 (0xFF80), so every fold gives the same
   bf16 result, and the maximum, being a bf16 value, narrows by truncation. Not at avx512bw: there its 64-byte
   loads measured as fast as widening 32-byte ones (vbf16_to_f32) on a 3x3 layer and 14% slower on a streaming
   2x2 one (256x56x56). */
typedef struct { vf even, odd; } max16b_pair;
SB_INLINE max16b_pair max16b_fold(max16b_pair a, const uint16_t * p)
{
    vu w = vloadh_pairs(p);
    return (max16b_pair){vmax(a.even, vbf16_even(w)), vmax(a.odd, vbf16_odd(w))};
}
#define PK_NL (2 * SB_W)
typedef max16b_pair pk_nv;
#define PK_NINIT ((max16b_pair){vset1(-INFINITY), vset1(-INFINITY)})
#define PK_NFOLD(a, p) max16b_fold(a, p)
#define PK_NSTORE(p, a, d) vstoreh_pairs(p, (a).even, (a).odd)
#define PK_NHWC_UNROLL_2X2 1
#endif
#include "pooling/pool_kernel.h"

void SB_FN(pooling_max16b)(const uint16_t * src, size_t srcC, size_t srcH, size_t srcW, size_t kernelY,
    size_t kernelX, size_t strideY, size_t strideX, size_t padY, size_t padX, uint16_t * dst, size_t dstH,
    size_t dstW, SimdTensorFormatType format)
{
    pk_geometry g = {srcH, srcW, kernelY, kernelX, strideY, strideX, padY, padX, dstH, dstW, 0};
    pk_pool2d(src, srcC, &g, dst, format == SimdTensorFormatNhwc);
}
