/*
 * eltwise.dispatch.c: SimdSynetEltwiseLayerForward's kernel, compiled once per ISA.
 *
 * Semantics (spec 3.2): dst = op(src[0], src[1]) then dst = op(dst, src[i]) for i >= 2; Max/Min are
 * a > b ? a : b and a < b ? a : b; Sum multiplies each input by its weight (fused on ISAs with FMA).
 * The fold runs over cache-sized blocks so that dst stays in L1 while all inputs stream through it.
 */
#include "simd_synet.h"

#define BLOCK 2048 /* floats of dst kept hot across the inputs: 8 KiB */

SB_INLINE vf combine(vf acc, vf x, vf w, int type)
{
    switch (type) {
    case SimdSynetEltwiseOperationProduct: return acc * x;
    case SimdSynetEltwiseOperationSum: return vfmadd(x, w, acc);
    case SimdSynetEltwiseOperationMax: return vmax(acc, x);
    default: return vmin(acc, x);
    }
}

SB_INLINE vf first_two(vf a, vf b, vf wa, vf wb, int type)
{
    return type == SimdSynetEltwiseOperationSum ? vfmadd(b, wb, a * wa) : combine(a, b, wb, type);
}

/* One block: every full vector and the tail go through the same lane-wise code. Inlined into a copy per operation
   (type is a constant in each): a switch left in the loop costs a third of the time of a 1K-float call. Two vectors
   a step so that loads, the operation and stores of neighbouring vectors overlap. */
SB_INLINE void eltwise_block(float const * const * src, const float * weight, size_t count, size_t begin, size_t end,
    int type, float * dst)
{
    vf w0 = vset1(weight ? weight[0] : 0.0f), w1 = vset1(weight ? weight[1] : 0.0f);
    const float * s0 = src[0], * s1 = src[1];
    size_t j = begin;
    for (; j + 2 * SB_W <= end; j += 2 * SB_W) {
        vf y0 = first_two(vload(s0 + j), vload(s1 + j), w0, w1, type);
        vf y1 = first_two(vload(s0 + j + SB_W), vload(s1 + j + SB_W), w0, w1, type);
        vstore(dst + j, y0);
        vstore(dst + j + SB_W, y1);
    }
    for (; j + SB_W <= end; j += SB_W)
        vstore(dst + j, first_two(vload(s0 + j), vload(s1 + j), w0, w1, type));
    if (j < end)
        vstore_n(dst + j, first_two(vload_n(s0 + j, end - j), vload_n(s1 + j, end - j), w0, w1, type), end - j);
    for (size_t i = 2; i < count; ++i) {
        vf wi = vset1(weight ? weight[i] : 0.0f);
        const float * s = src[i];
        for (j = begin; j + SB_W <= end; j += SB_W)
            vstore(dst + j, combine(vload(dst + j), vload(s + j), wi, type));
        if (j < end)
            vstore_n(dst + j, combine(vload_n(dst + j, end - j), vload_n(s + j, end - j), wi, type), end - j);
    }
}

SB_INLINE void eltwise_op(float const * const * src, const float * weight, size_t count, size_t size, int type,
    float * dst)
{
    for (size_t begin = 0; begin < size; begin += BLOCK)
        eltwise_block(src, weight, count, begin, begin + BLOCK < size ? begin + BLOCK : size, type, dst);
}

void SB_FN(eltwise)(float const * const * src, const float * weight, size_t count, size_t size,
    SimdSynetEltwiseOperationType type, float * dst)
{
    switch (type) {
    case SimdSynetEltwiseOperationProduct: eltwise_op(src, NULL, count, size, type, dst); break;
    case SimdSynetEltwiseOperationSum: eltwise_op(src, weight, count, size, type, dst); break;
    case SimdSynetEltwiseOperationMax: eltwise_op(src, NULL, count, size, type, dst); break;
    default: eltwise_op(src, NULL, count, size, SimdSynetEltwiseOperationMin, dst); break;
    }
}
