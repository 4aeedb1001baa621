/*
 * unary.dispatch.c: SimdSynetUnaryOperation32f's kernel, compiled once per ISA.
 *
 * Every operation is one lane-wise vector expression used for the body and, through vload_n/vstore_n, for the
 * tail, so one output never mixes two semantics. The contract (simdbind README, "unary"):
 *   abs    IEEE abs: clears the sign bit (abs(+-0) == +0)        neg    IEEE negation: flips the sign bit
 *   ceil, floor  IEEE ceil/floor for every float (|x| >= 2^23, +-inf, NaN unchanged; ceil(-0.5) == -0)
 *   round  half away from zero (C round) for every float; round(-0.3) == -0
 *   not    bitwise NOT of the float's bits                      rcp    1.0f / x (IEEE division)
 *   rsqrt  1.0f / sqrtf(x): two IEEE roundings, bit-exact with upstream's Base expression
 *   sign   x < 0 ? -1 : (x == 0 ? 0 : 1), so sign(NaN) == 1 and sign(-0) == +0
 *   sqrt   IEEE sqrt                                             zero   +0 for every input
 *   exp, log, erf, tanh, sin, cos  internal/vmath.h (<= 1.5 ulp, NaN/Inf as documented there)
 */
#include "simd_synet.h"
#include "internal/vmath.h"

/* v, held in a register from here on. GCC otherwise folds the load of x into each instruction that reads it (round:
   two), and a load that straddles two cache lines, as every vector of a 16-byte-aligned NumPy array does, is then
   split once per use: round at 64K floats took 0.052 ns/element there, 0.034 with this. */
SB_INLINE vf keep_in_register(vf v)
{
#if (defined(__x86_64__) || defined(__i386__)) && !defined(SB_EMULATED_UNIT) /* (emulated: no 512-bit registers) */
    __asm__("" : "+v"(v));
#endif
    return v;
}

/* Two vectors a step from i while i + 2 * SB_W <= size, each stored with STORE (vstore, or vstream). */
#define UNARY_PAIRS(EXPR, STORE)                                                    \
    for (; i + 2 * SB_W <= size; i += 2 * SB_W) {                                   \
        vf x0 = keep_in_register(vload(src + i));                                   \
        vf x1 = keep_in_register(vload(src + i + SB_W));                            \
        vf y0, y1;                                                                  \
        { vf x = x0; y0 = (EXPR); }                                                 \
        { vf x = x1; y1 = (EXPR); }                                                 \
        STORE(dst + i, y0);                                                         \
        STORE(dst + i + SB_W, y1);                                                  \
    }

/* A call that touches sb_streaming_bytes() or more streams its output: the floats before dst's first aligned vector
   go through the partial load/store of the tail, the body through vstream. The cached body has a loop of its own
   that starts at 0: entered with a start only known at run time, GCC's loop carried two more induction variables
   (round at avx2, 64K floats: 30% slower). */
#define UNARY_KERNEL(NAME, EXPR)                                                    \
    static void NAME(const float * src, size_t size, float * dst)                   \
    {                                                                               \
        size_t i = 0;                                                               \
        const size_t head = vstream_head(dst);                                      \
        if (2 * size * sizeof(float) >= sb_streaming_bytes() && head < SB_W         \
            && head <= size) {                                                      \
            if (head) {                                                             \
                vf x = vload_n(src, head);                                          \
                vstore_n(dst, (EXPR), head);                                        \
                i = head;                                                           \
            }                                                                       \
            UNARY_PAIRS(EXPR, vstream)                                              \
            vstream_fence();                                                        \
        } else {                                                                    \
            UNARY_PAIRS(EXPR, vstore)                                               \
        }                                                                           \
        for (; i + SB_W <= size; i += SB_W) {                                       \
            vf x = keep_in_register(vload(src + i));                                \
            vstore(dst + i, (EXPR));                                                \
        }                                                                           \
        if (i < size) {                                                             \
            vf x = vload_n(src + i, size - i);                                      \
            vstore_n(dst + i, (EXPR), size - i);                                    \
        }                                                                           \
    }

/* trunc(x + copysign(0.49999997f, x)): the sum reaches the next integer exactly when the fraction of |x| is >= 0.5
   (at +-0.5 the sum 1 - 2^-25 is a tie that rounds to even, to 1), and from 2^23 on the addend is below half an ulp
   so x comes back unchanged (+-inf and NaN too). Three instructions where a compare-and-select takes seven;
   tools/ulp_exhaustive.py checks it bit for bit against C round over all 2^32 inputs. */
SB_INLINE vf op_round(vf x)
{
    vf h = vfloat_bits((vbits(x) & vset1i((int32_t)0x80000000u)) | vset1i(0x3effffff));
    return vround_mode(x + h, SB_ROUND_TRUNC);
}

/* 1.0f / sqrtf(x), both IEEE-rounded. At AVX-512 the division moves off the divider (which the square root keeps
   busy) to the multiply-add units: a 14-bit reciprocal estimate, one Newton step (about 2^-28), then Markstein's
   correction y + y * (1 - s*y), which rounds 1/s correctly except where s's significand is all ones: there 1/s
   lies just above the midpoint 2^k * (1 + 2^-24) and the correction can land on the midpoint and round down, so
   those lanes get the last bit set (the correct 2^k * (1 + 2^-23)). tools/ulp_exhaustive.py checks the result bit
   for bit against 1.0f / sqrtf(x) over all 2^32 inputs. The s classes the arithmetic cannot take are set by
   class: +-0 -> +-inf, +inf -> +0, NaN -> NaN, 1 -> 1 (vfixupimmps response codes 6, 8, 1/2, 10). */
SB_INLINE vf op_rsqrt(vf x)
{
    vf s = vsqrt(x);
#if SB_VM_AVX512
    vf y = (vf)_mm512_rcp14_ps((__m512)s);
    y = vfmadd(vfmadd(-s, y, vset1(1.0f)), y, y);
    y = vfmadd(vfmadd(-s, y, vset1(1.0f)), y, y);
    __mmask16 all_ones = _mm512_cmpeq_epi32_mask(_mm512_and_si512((__m512i)s, _mm512_set1_epi32(0x007fffff)),
        _mm512_set1_epi32(0x007fffff));
    y = (vf)_mm512_mask_or_epi32((__m512i)y, all_ones, (__m512i)y, _mm512_set1_epi32(1));
    return (vf)_mm512_fixupimm_ps((__m512)y, (__m512)s, _mm512_set1_epi32(0x0383A621), 0);
#else
    return vset1(1.0f) / s;
#endif
}

SB_INLINE vf op_sign(vf x)
{
    return vselect(x < vset1(0.0f), vset1(-1.0f), vselect(x == vset1(0.0f), vset1(0.0f), vset1(1.0f)));
}

UNARY_KERNEL(unary_abs, vabs(x))
UNARY_KERNEL(unary_ceil, vround_mode(x, SB_ROUND_CEIL))
UNARY_KERNEL(unary_cos, vcos(x))
UNARY_KERNEL(unary_erf, verf(x))
UNARY_KERNEL(unary_exp, vexp(x))
UNARY_KERNEL(unary_floor, vround_mode(x, SB_ROUND_FLOOR))
UNARY_KERNEL(unary_log, vlog(x))
UNARY_KERNEL(unary_neg, vfloat_bits(vbits(x) ^ vset1i((int32_t)0x80000000u)))
UNARY_KERNEL(unary_not, vfloat_bits(~vbits(x)))
UNARY_KERNEL(unary_rcp, vset1(1.0f) / x)
UNARY_KERNEL(unary_round, op_round(x))
UNARY_KERNEL(unary_rsqrt, op_rsqrt(x))
UNARY_KERNEL(unary_sign, op_sign(x))
UNARY_KERNEL(unary_sin, vsin(x))
UNARY_KERNEL(unary_sqrt, vsqrt(x))
UNARY_KERNEL(unary_tanh, vtanh(x))

UNARY_KERNEL(unary_zero, ((void)x, vset1(0.0f)))

void SB_FN(unary)(const float * src, size_t size, SimdSynetUnaryOperation32fType type, float * dst)
{
    static void (* const kernels[])(const float *, size_t, float *) = {
        unary_abs, unary_ceil, unary_cos, unary_erf, unary_exp, unary_floor, unary_log, unary_neg, unary_not,
        unary_rcp, unary_round, unary_rsqrt, unary_sign, unary_sin, unary_sqrt, unary_tanh, unary_zero,
    };
    if ((unsigned)type < sizeof(kernels) / sizeof(kernels[0]))
        kernels[type](src, size, dst);
}
