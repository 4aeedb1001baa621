/* @targets base sse41 avx2 avx512bw */
/*
 * max16b.dispatch.c: SimdSynetPoolingMax16b's kernel, compiled once per ISA.
 *
 * Semantics (upstream's Base code): each bf16 is widened exactly to float32, folded like Max32f from -FLT_MAX,
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
#if SB_W == 16
/* NHWC chunks of 2*SB_W channels folded as bf16 bit patterns, without widening: a maximum of bf16 values is one of
   them. As signed integers the non-negative patterns (+0 .. +inf, then +NaN) are in float order, and as unsigned
   ones the negative patterns (-0 .. -inf, then -NaN) are in reverse float order; so the largest non-negative pattern
   (signed maximum), if there is one, else the negative one of least magnitude (unsigned minimum, from -inf, which
   also stands for the empty window: bf16(-FLT_MAX)) is what the float fold keeps, for inputs without NaN. Two
   cases differ, and PK_NINEXACT sends them back to the float fold: a NaN anywhere (the fold keeps a NaN only as the
   window's last element, and restarts from the element after it), seen by the signed maximum above +inf or the
   unsigned maximum above -inf; and a maximum of +0 with a negative element present, which may be a -0 after the
   last +0 (equal values: the fold keeps the later one). One load and 3 integer operations per 32 channels, where the
   widening fold takes 2 widening loads, 2 shifts and 2 maximums: measured 44 -> 34 us on a 3x3/2 layer (64x112x112)
   and 24 -> 20 us on a 2x2/2 one (256x56x56). */
typedef struct { vs16 smax; vu16 umin, umax; } max16b_keys;
SB_INLINE max16b_keys max16b_fold(max16b_keys a, const uint16_t * p)
{
    vu16 x = vkeep(vloadu16(p)); /* one load for the three operations below */
    return (max16b_keys){vmax_s16(a.smax, (vs16)x), vmin_u16(a.umin, x), vmax_u16(a.umax, x)};
}
SB_INLINE vu16 max16b_result(max16b_keys a)
{
    vu16 negative = (vu16)(a.smax >> 15);
    return ((vu16)a.smax & ~negative) | (a.umin & negative);
}
/* Nonzero when some lane of a is one of those cases (at avx512bw, the mask of those lanes). */
#if defined(SB_EMULATED_UNIT)
SB_INLINE uint32_t max16b_inexact(max16b_keys a)
{
    vs16 bad = (a.smax > 0x7F80) | (vs16)(a.umax > 0xFF80) | ((a.smax == 0) & (vs16)(a.umax >= 0x8000));
    uint32_t any = 0;
    for (int i = 0; i < 2 * SB_W; ++i)
        any |= (uint16_t)bad[i];
    return any;
}
#else
SB_INLINE __mmask32 max16b_inexact(max16b_keys a)
{
    const __m512i smax = (__m512i)a.smax, umax = (__m512i)a.umax;
    return _mm512_cmpgt_epi16_mask(smax, _mm512_set1_epi16(0x7F80))
        | _mm512_cmpgt_epu16_mask(umax, _mm512_set1_epi16((short)0xFF80))
        | _mm512_mask_cmpge_epu16_mask(_mm512_cmpeq_epi16_mask(smax, _mm512_setzero_si512()), umax,
            _mm512_set1_epi16((short)0x8000));
}
#endif
#define PK_NL (2 * SB_W)
typedef max16b_keys pk_nv;
#define PK_NINIT ((max16b_keys){(vs16){0} + INT16_MIN, (vu16){0} + (uint16_t)0xFF80, (vu16){0}})
#define PK_NFOLD(a, p) max16b_fold(a, p)
#define PK_NINEXACT(a) max16b_inexact(a)
#define PK_NSTORE(p, a, d) vstoreu16(p, max16b_result(a))
#define PK_NHWC_UNROLL_2X2 1
#else
/* NHWC chunks of 2*SB_W channels as even and odd halves (vloadh_pairs), folded from -inf rather than -FLT_MAX:
   no bf16 lies strictly between the two, and both round to the same bf16 (0xFF80), so every fold gives the same
   bf16 result, and the maximum, being a bf16 value, narrows by truncation. The integer fold above measured 12%
   faster than these pairs at avx2 on the 3x3 layer but 12% slower on the 2x2 one (its check, without mask
   registers, costs about as much as its fold there). */
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
