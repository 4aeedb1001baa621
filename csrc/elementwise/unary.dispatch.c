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

/* STEP vectors a step from i while i + STEP * SB_W <= size, each stored with STORE (vstore, or vstream): the loads,
   then the operations, then the stores, so that neighbouring vectors overlap. */
#define UNARY_STEPS(STEP, EXPR, STORE)                                              \
    for (; i + (STEP) * SB_W <= size; i += (STEP) * SB_W) {                         \
        vf y[STEP];                                                                 \
        _Pragma("GCC unroll 4")                                                     \
        for (int k = 0; k < (STEP); ++k) {                                          \
            vf x = keep_in_register(vload(src + i + k * SB_W));                     \
            y[k] = (EXPR);                                                          \
        }                                                                           \
        _Pragma("GCC unroll 4")                                                     \
        for (int k = 0; k < (STEP); ++k)                                            \
            STORE(dst + i + k * SB_W, y[k]);                                        \
    }

/* A call that touches sb_streaming_bytes() or more streams its output: the floats before dst's first aligned vector
   go through the partial load/store of the tail, the body through vstream, two vectors a step (four lines a step
   measured 4-7% slower at 4M floats at avx512bw). The cached body takes STEP vectors a step: 4 for the operations of
   a few instructions, where the loop's own instructions and the front end bound the time (round at 64K floats in L2
   at avx2: 2.79 -> 2.50 us, as fast as upstream's one-instruction round), 2 for the long ones (internal/vmath.h),
   whose four-vector working set does not fit avx2's 16 registers. It has a loop of its own that starts at 0:
   entered with a start only known at run time, GCC's loop carried two more induction variables (round at avx2,
   64K floats: 30% slower). */
#define UNARY_KERNEL_TOUCHING(NAME, STEP, TOUCHED, EXPR)                            \
    static void NAME(const float * src, size_t size, float * dst)                   \
    {                                                                               \
        size_t i = 0;                                                               \
        const size_t head = vstream_head(dst);                                      \
        if (TOUCHED * size * sizeof(float) >= sb_streaming_bytes() && head < SB_W   \
            && head <= size) {                                                      \
            if (head) {                                                             \
                vf x = vload_n(src, head);                                          \
                vstore_n(dst, (EXPR), head);                                        \
                i = head;                                                           \
            }                                                                       \
            UNARY_STEPS(2, EXPR, vstream)                                           \
            vstream_fence();                                                        \
        } else {                                                                    \
            UNARY_STEPS(STEP, EXPR, vstore)                                         \
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

/* TOUCHED: floats of memory a call moves per element, against the streaming threshold: 2 (read and written), 1 for
   zero, which reads nothing. Zero's 4M-float output alone fits the last-level cache, which regular stores keep it
   in: 175 -> 147 us and 188 -> 181 us in two interleaved runs at avx512 (upstream 149 and 178). */
#define UNARY_KERNEL(NAME, STEP, EXPR) UNARY_KERNEL_TOUCHING(NAME, STEP, 2, EXPR)

/* trunc(x + copysign(0.49999997f, x)): the sum reaches the next integer exactly when the fraction of |x| is >= 0.5
   (at +-0.5 the sum 1 - 2^-25 is a tie that rounds to even, to 1), and from 2^23 on the addend is below half an ulp
   so x comes back unchanged (+-inf and NaN too). Three instructions (vsign_of is one) where a compare-and-select
   takes seven; tools/ulp_exhaustive.py checks it bit for bit against C round over all 2^32 inputs. */
SB_INLINE vf op_round(vf x)
{
    return vround_mode(x + vsign_of(x, vfloat_bits(vset1i(0x3effffff))), SB_ROUND_TRUNC);
}

/* 1.0f / sqrtf(x), both IEEE-rounded. At AVX2 and AVX-512 the division moves off the divider (which the square
   root keeps busy) to the multiply-add units: a reciprocal estimate (12 bits at AVX2, 14 at AVX-512), one Newton
   step (about 2^-23 and 2^-28), then Markstein's correction y + y * (1 - s*y), which rounds 1/s correctly except
   where s's significand is all ones: there 1/s lies just above the midpoint 2^k * (1 + 2^-24) and the correction
   can land on the midpoint and round down, so those lanes get the last bit set (the correct 2^k * (1 + 2^-23)).
   1.13-1.18x at AVX2 (64 K and 4 M floats), 1.25x at AVX-512 over the division. tools/ulp_exhaustive.py checks the result bit for bit against
   1.0f / sqrtf(x) over all 2^32 inputs. The s the steps cannot take (+-0, +inf, NaN: the residual is NaN) take the
   estimate, which is exact there; at AVX-512 vfixupimmps sets them by class: +-0 -> +-inf, +inf -> +0, NaN -> NaN,
   1 -> 1 (response codes 6, 8, 1/2, 10). */
SB_INLINE vf op_rsqrt(vf x)
{
    vf s = vsqrt(x);
#if SB_VM_AVX512 || SB_VM_AVX2
#if SB_VM_AVX512
    vf estimate = (vf)_mm512_rcp14_ps((__m512)s);
#else
    vf estimate = (vf)_mm256_rcp_ps((__m256)s);
#endif
    vf y = vfmadd(vfmadd(-s, estimate, vset1(1.0f)), estimate, estimate);
    y = vfmadd(vfmadd(-s, y, vset1(1.0f)), y, y);
#if SB_VM_AVX512
    __mmask16 all_ones = _mm512_cmpeq_epi32_mask(_mm512_and_si512((__m512i)s, _mm512_set1_epi32(0x007fffff)),
        _mm512_set1_epi32(0x007fffff));
    y = (vf)_mm512_mask_or_epi32((__m512i)y, all_ones, (__m512i)y, _mm512_set1_epi32(1));
    return (vf)_mm512_fixupimm_ps((__m512)y, (__m512)s, _mm512_set1_epi32(0x0383A621), 0);
#else
    vi all_ones = (vbits(s) & vset1i(0x007fffff)) == vset1i(0x007fffff);
    y = vfloat_bits(vbits(y) | (all_ones & vset1i(1)));
    return (vf)_mm256_blendv_ps((__m256)y, (__m256)estimate, _mm256_cmp_ps((__m256)y, (__m256)y, _CMP_UNORD_Q));
#endif
#else
    return vset1(1.0f) / s;
#endif
}

SB_INLINE vf op_sign(vf x)
{
    return vselect(x < vset1(0.0f), vset1(-1.0f), vselect(x == vset1(0.0f), vset1(0.0f), vset1(1.0f)));
}

UNARY_KERNEL(unary_abs, 4, vabs(x))
UNARY_KERNEL(unary_ceil, 4, vround_mode(x, SB_ROUND_CEIL))
UNARY_KERNEL(unary_cos, 2, vcos(x))
UNARY_KERNEL(unary_erf, 2, verf(x))
UNARY_KERNEL(unary_exp, 2, vexp(x))
UNARY_KERNEL(unary_floor, 4, vround_mode(x, SB_ROUND_FLOOR))
UNARY_KERNEL(unary_log, 2, vlog(x))
UNARY_KERNEL(unary_neg, 4, vfloat_bits(vbits(x) ^ vset1i((int32_t)0x80000000u)))
UNARY_KERNEL(unary_not, 4, vfloat_bits(~vbits(x)))
UNARY_KERNEL(unary_rcp, 4, vset1(1.0f) / x)
UNARY_KERNEL(unary_round, 4, op_round(x))
UNARY_KERNEL(unary_rsqrt, 2, op_rsqrt(x))
UNARY_KERNEL(unary_sign, 4, op_sign(x))
UNARY_KERNEL(unary_sin, 2, vsin(x))
UNARY_KERNEL(unary_sqrt, 4, vsqrt(x))
UNARY_KERNEL(unary_tanh, 2, vtanh(x))

UNARY_KERNEL_TOUCHING(unary_zero, 4, 1, ((void)x, vset1(0.0f)))

void SB_FN(unary)(const float * src, size_t size, SimdSynetUnaryOperation32fType type, float * dst)
{
    static void (* const kernels[])(const float *, size_t, float *) = {
        unary_abs, unary_ceil, unary_cos, unary_erf, unary_exp, unary_floor, unary_log, unary_neg, unary_not,
        unary_rcp, unary_round, unary_rsqrt, unary_sign, unary_sin, unary_sqrt, unary_tanh, unary_zero,
    };
    if ((unsigned)type < sizeof(kernels) / sizeof(kernels[0]))
        kernels[type](src, size, dst);
}
