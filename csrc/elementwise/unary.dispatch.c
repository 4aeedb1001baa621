/* @targets base sse41 avx2 avx512bw */
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

/* STEP vectors a step from i while i + STEP * SB_W <= size, each stored with STORE (vstore, or vstream): the loads,
   then the operations, then the stores, so that neighbouring vectors overlap. */
#define UNARY_STEPS(STEP, EXPR, STORE)                                              \
    for (; i + (STEP) * SB_W <= size; i += (STEP) * SB_W) {                         \
        vf y[STEP];                                                                 \
        _Pragma("GCC unroll 8")                                                     \
        for (int k = 0; k < (STEP); ++k) {                                          \
            vf x = vkeep(vload(src + i + k * SB_W));                                \
            y[k] = (EXPR);                                                          \
        }                                                                           \
        _Pragma("GCC unroll 8")                                                     \
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
            ring[v].x = vkeep(vload(src + i + v * SB_W));                           \
            ring[v].state = START(ring[v].x);                                       \
        }                                                                           \
        for (v = 0; v + UNARY_AHEAD < n; ++v) {                                     \
            vf x = vkeep(vload(src + i + (v + UNARY_AHEAD) * SB_W));                \
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

/* A kernel: the loops (UNARY_LOOPS) from dst's first vector-aligned float on, where no store straddles two cache lines,
   for a streamed call (vstream needs it) and, for the operations bound by moving data (ALIGN 1), where src lies as dst
   does within a vector (in place, always), so that no load straddles either. NumPy aligns its arrays to 16 bytes, so
   half the vectors of 32 bytes and three in four of 64 bytes straddled, and each such access took two: floor of 1K
   floats at 16 bytes past 32-byte alignment, 29 ns at avx2 and 26 at avx512bw, 25 and 18 from the aligned float; at 64K
   floats (in L2), 2.28 and 1.96 us at avx2. Where src lies otherwise its loads would straddle instead, which costs more
   from L2 than the stores did (64K floats, src aligned: 1.97 -> 2.14 us). The arithmetic-bound operations start at dst
   (exp and tanh of 1K floats at avx2 ran 7% slower, round and sign 10%: the two vectors below ahead of the loop). The
   vectors at 0 and at head, dst's first aligned float, and the last vector where the floats from head on do not fill
   whole vectors (a masked move for the partial one, or two memcpy calls below AVX2), are all loaded before any store
   (in place, the loops overwrite floats they read) and stored around the loops; the lanes where they overlap get the
   same value twice, every operation being lane-wise. A call streams (TOUCHED floats per element moved,
   sb_streaming_bytes() or more) only from an aligned float, and not where its stores would stall the loads
   (vstream_stalls). */
#define UNARY_KERNEL_BODIES(NAME, TOUCHED, ALIGN, EXPR, STREAMED, CACHED)           \
    UNARY_LOOPS(NAME##_loops, EXPR, STREAMED, CACHED)                               \
    static void NAME(const float * src, size_t size, float * dst)                   \
    {                                                                               \
        const size_t head = vstream_head(dst);                                      \
        const int stream = head < SB_W && TOUCHED * size * sizeof(float) >= sb_streaming_bytes() \
            && !vstream_stalls(src, dst);                                           \
        size_t i = 0, end = size;                                                   \
        vf last = vset1(0.0f);                                                      \
        if (((ALIGN && vsame_offset(src, dst)) || stream) && head && head < SB_W && size >= head + SB_W) { \
            vf x = vkeep(vload(src));                                               \
            vf first = (EXPR);                                                      \
            x = vkeep(vload(src + head));                                           \
            vf second = (EXPR);                                                     \
            if ((size - head) % SB_W) {                                             \
                x = vkeep(vload(src + size - SB_W));                                \
                last = (EXPR);                                                      \
                end = size - (size - head) % SB_W;                                  \
            }                                                                       \
            vstore(dst, first);                                                     \
            vstore(dst + head, second);                                             \
            i = head + SB_W;                                                        \
        }                                                                           \
        NAME##_loops(src + i, end - i, dst + i, stream && (i || head == 0));        \
        if (end < size)                                                             \
            vstore(dst + size - SB_W, last);                                        \
    }

/* The loops of a kernel over [0, size): with `stream` (dst is then aligned) the body through STREAMED (vstream
   stores), else through CACHED (vstore); EXPR does the rest and the tail. They start at 0: entered with a start only
   known at run time, GCC's loop carried two more induction variables (round at avx2, 64K floats: 30% slower). */
#define UNARY_LOOPS(NAME, EXPR, STREAMED, CACHED)                                   \
    SB_INLINE void NAME(const float * src, size_t size, float * dst, int stream)    \
    {                                                                               \
        size_t i = 0;                                                               \
        if (stream) {                                                               \
            STREAMED                                                                \
            vstream_fence();                                                        \
        } else {                                                                    \
            CACHED                                                                  \
        }                                                                           \
        for (; i + SB_W <= size; i += SB_W) {                                       \
            vf x = vkeep(vload(src + i));                                           \
            vstore(dst + i, (EXPR));                                                \
        }                                                                           \
        if (i < size) {                                                             \
            vf x = vload_n(src + i, size - i);                                      \
            vstore_n(dst + i, (EXPR), size - i);                                    \
        }                                                                           \
    }

/* The operations bound by moving the data (a few instructions a vector), where the loop's own instructions and the
   front end bound the time: SHORT_STEP vectors a step, streamed two a step (four lines a step measured 4-7% slower at
   4M floats at avx512bw). Eight, not four: a loop of four (68 bytes at avx2) took a cycle more per step when it began
   in the first 12 bytes of a 64-byte line (abs of 1K floats: 30 against 23 ns; where the linker puts it is luck),
   one of eight ran at 22.4-22.6 ns from every start (a harness over the 16 starts 4 bytes apart). TOUCHED: floats of
   memory a call moves per element, 2 (read and written), 1 for zero, which reads nothing. Zero's 4M-float output
   alone fits the last-level cache, which regular stores keep it in: 175 -> 147 us and 188 -> 181 us in two
   interleaved runs at avx512 (upstream 149 and 178). */
#define SHORT_STEP 8
#define UNARY_KERNEL_MOVING(NAME, TOUCHED, EXPR)                                    \
    UNARY_KERNEL_BODIES(NAME, TOUCHED, 1, EXPR, UNARY_STEPS(2, EXPR, vstream),      \
        UNARY_STEPS(SHORT_STEP, EXPR, vstore))

/* The operations bound by their arithmetic: STEP vectors a step (4 for those of a few instructions, which run at a
   vector a cycle or at the divider's pace however dst is placed: round, sign, rcp, sqrt; round at 64K floats in L2 at
   avx2 took 2.50 us so, 2.79 with 2; the rest 2), or OP's two stages OP_start and OP_finish (its state type OP_state)
   pipelined as above. */
#define UNARY_KERNEL(NAME, STEP, EXPR)                                              \
    UNARY_KERNEL_BODIES(NAME, 2, 0, EXPR, UNARY_STEPS(2, EXPR, vstream), UNARY_STEPS(STEP, EXPR, vstore))
#define UNARY_KERNEL_STAGED(NAME, OP)                                               \
    UNARY_KERNEL_BODIES(NAME, 2, 0, OP(x), UNARY_STAGES(OP##_state, OP##_start, OP##_finish, vstream), \
        UNARY_STAGES(OP##_state, OP##_start, OP##_finish, vstore))

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

UNARY_KERNEL_MOVING(unary_abs, 2, vabs(x))
UNARY_KERNEL_MOVING(unary_ceil, 2, vround_mode(x, SB_ROUND_CEIL))
UNARY_KERNEL_STAGED(unary_cos, vcos)
#if SB_VM_AVX2 /* eight pieces of degree 6: a long chain (vmath.h, "Two stages") */
UNARY_KERNEL_STAGED(unary_erf, verf)
#else
UNARY_KERNEL(unary_erf, 2, verf(x))
#endif
UNARY_KERNEL(unary_exp, 2, vexp(x))
UNARY_KERNEL_MOVING(unary_floor, 2, vround_mode(x, SB_ROUND_FLOOR))
UNARY_KERNEL(unary_log, 2, vlog(x))
UNARY_KERNEL_MOVING(unary_neg, 2, vfloat_bits(vbits(x) ^ vset1i((int32_t)0x80000000u)))
UNARY_KERNEL_MOVING(unary_not, 2, vfloat_bits(~vbits(x)))
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

UNARY_KERNEL_MOVING(unary_zero, 1, ((void)x, vset1(0.0f)))

void SB_FN(unary)(const float * src, size_t size, SimdSynetUnaryOperation32fType type, float * dst)
{
    static void (* const kernels[])(const float *, size_t, float *) = {
        unary_abs, unary_ceil, unary_cos, unary_erf, unary_exp, unary_floor, unary_log, unary_neg, unary_not,
        unary_rcp, unary_round, unary_rsqrt, unary_sign, unary_sin, unary_sqrt, unary_tanh, unary_zero,
    };
    if ((unsigned)type < sizeof(kernels) / sizeof(kernels[0]))
        kernels[type](src, size, dst);
}
