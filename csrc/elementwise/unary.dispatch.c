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

/* Software pipelining for the long operations, written as two stages (internal/vmath.h): START(x) gives a state,
   FINISH(x, state) the result. The start of vector v + UNARY_AHEAD runs beside the finish of vector v, the states in
   between held in a ring on the stack. In program order, each vector's finish waited for its start, and the waiting
   instructions filled the scheduler before the next vectors' could begin; here a finish reads a state computed long
   before, so both chains run at once. At avx2, 64K floats, cycles per vector: sin 12.2 -> 10.5, cos 11.4 -> 10.0,
   tanh 13.3 -> 12.1, rsqrt 5.8 -> 4.7 (the square root alone: 4.3). x waits in the ring too (read again from src,
   it was a second load split across cache lines on NumPy's arrays), and the new state goes into the ring before the
   finish, which would otherwise hold it in registers and spill its own values (sin: 12.4 -> 10.9). Lane-wise
   arithmetic is unchanged, so are the results. In place works: every vector is read UNARY_AHEAD vectors before dst
   reaches it. */
#define UNARY_AHEAD 8
#define UNARY_STAGES(STATE, START, FINISH, STORE)                                   \
    {                                                                               \
        const size_t n = (size - i) / SB_W;                                         \
        struct { vf x; STATE state; } ring[UNARY_AHEAD];                            \
        size_t v = 0;                                                               \
        for (; v < n && v < UNARY_AHEAD; ++v) {                                     \
            ring[v].x = keep_in_register(vload(src + i + v * SB_W));                \
            ring[v].state = START(ring[v].x);                                       \
        }                                                                           \
        for (v = 0; v + UNARY_AHEAD < n; ++v) {                                     \
            vf x = keep_in_register(vload(src + i + (v + UNARY_AHEAD) * SB_W));     \
            STATE next = START(x);                                                  \
            vf x_done = ring[v % UNARY_AHEAD].x;                                    \
            STATE done = ring[v % UNARY_AHEAD].state;                               \
            ring[v % UNARY_AHEAD].x = x;                                            \
            ring[v % UNARY_AHEAD].state = next;                                     \
            STORE(dst + i + v * SB_W, FINISH(x_done, done));                        \
        }                                                                           \
        for (; v < n; ++v)                                                          \
            STORE(dst + i + v * SB_W, FINISH(ring[v % UNARY_AHEAD].x, ring[v % UNARY_AHEAD].state)); \
        i += n * SB_W;                                                              \
    }

/* A call that touches sb_streaming_bytes() or more streams its output: the floats before dst's first aligned vector
   go through the partial load/store of the tail, the body through STREAMED (vstream stores), the rest through CACHED
   (vstore); EXPR does the head and the tail. It has a loop of its own that starts at 0: entered with a start only
   known at run time, GCC's loop carried two more induction variables (round at avx2, 64K floats: 30% slower). */
#define UNARY_KERNEL_BODIES(NAME, TOUCHED, EXPR, STREAMED, CACHED)                  \
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
            STREAMED                                                                \
            vstream_fence();                                                        \
        } else {                                                                    \
            CACHED                                                                  \
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

/* The short operations: STEP vectors a step, 4 for those of a few instructions, where the loop's own instructions and
   the front end bound the time (round at 64K floats in L2 at avx2: 2.79 -> 2.50 us, as fast as upstream's
   one-instruction round); streamed two vectors a step (four lines a step measured 4-7% slower at 4M floats at
   avx512bw). */
#define UNARY_KERNEL_TOUCHING(NAME, STEP, TOUCHED, EXPR)                            \
    UNARY_KERNEL_BODIES(NAME, TOUCHED, EXPR, UNARY_STEPS(2, EXPR, vstream), UNARY_STEPS(STEP, EXPR, vstore))

/* The long ones, OP's two stages OP_start and OP_finish (its state type OP_state) pipelined as above. */
#define UNARY_KERNEL_STAGED(NAME, OP)                                               \
    UNARY_KERNEL_BODIES(NAME, 2, OP(x), UNARY_STAGES(OP##_state, OP##_start, OP##_finish, vstream), \
        UNARY_STAGES(OP##_state, OP##_start, OP##_finish, vstore))

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
   1.13-1.18x at AVX2 (64 K and 4 M floats), 1.25x at AVX-512 over the division. tools/ulp_exhaustive.py checks the
   result bit for bit against 1.0f / sqrtf(x) over all 2^32 inputs. The s the steps cannot take (+-0, +inf, NaN: the
   residual is NaN) take the estimate, which is exact there; at AVX-512 vfixupimmps sets them by class: +-0 -> +-inf,
   +inf -> +0, NaN -> NaN, 1 -> 1 (response codes 6, 8, 1/2, 10). The square root is the start of two stages
   (UNARY_KERNEL_STAGED), the reciprocal their finish. */
typedef vf op_rsqrt_state; /* the square root */
SB_INLINE vf op_rsqrt_start(vf x) { return vsqrt(x); }

SB_INLINE vf op_rsqrt_finish(vf x, vf s)
{
    (void)x;
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

SB_INLINE vf op_rsqrt(vf x) { return op_rsqrt_finish(x, op_rsqrt_start(x)); }

SB_INLINE vf op_sign(vf x)
{
    return vselect(x < vset1(0.0f), vset1(-1.0f), vselect(x == vset1(0.0f), vset1(0.0f), vset1(1.0f)));
}

UNARY_KERNEL(unary_abs, 4, vabs(x))
UNARY_KERNEL(unary_ceil, 4, vround_mode(x, SB_ROUND_CEIL))
UNARY_KERNEL_STAGED(unary_cos, vcos)
UNARY_KERNEL(unary_erf, 2, verf(x))
UNARY_KERNEL(unary_exp, 2, vexp(x))
UNARY_KERNEL(unary_floor, 4, vround_mode(x, SB_ROUND_FLOOR))
UNARY_KERNEL(unary_log, 2, vlog(x))
UNARY_KERNEL(unary_neg, 4, vfloat_bits(vbits(x) ^ vset1i((int32_t)0x80000000u)))
UNARY_KERNEL(unary_not, 4, vfloat_bits(~vbits(x)))
UNARY_KERNEL(unary_rcp, 4, vset1(1.0f) / x)
UNARY_KERNEL(unary_round, 4, op_round(x))
/* staged where the reciprocal runs on the multiply-add units, beside the square root (below AVX2 it divides) */
#if SB_VM_AVX2 || SB_VM_AVX512
UNARY_KERNEL_STAGED(unary_rsqrt, op_rsqrt)
#else
UNARY_KERNEL(unary_rsqrt, 2, op_rsqrt(x))
#endif
UNARY_KERNEL(unary_sign, 4, op_sign(x))
UNARY_KERNEL_STAGED(unary_sin, vsin)
UNARY_KERNEL(unary_sqrt, 4, vsqrt(x))
/* not staged at AVX-512, where it is piecewise: bound by its instruction count, staged it measured 50% slower */
#if SB_VM_AVX512
UNARY_KERNEL(unary_tanh, 2, vtanh(x))
#else
UNARY_KERNEL_STAGED(unary_tanh, vtanh)
#endif

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
