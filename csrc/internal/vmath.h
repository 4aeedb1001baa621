/*
 * vmath.h: vector elementary functions over `vf`, for *.dispatch.c sources (include after internal/target.h).
 *
 *   vf vexp(vf x);   vf vlog(vf x);   vf verf(vf x);   vf vtanh(vf x);   vf vsin(vf x);   vf vcos(vf x);
 *   vsin, vcos, (below AVX-512) vtanh and (AVX2) verf also in two stages, F_start and F_finish ("Two stages" below).
 *
 * Each is lane-wise (a lane's result never depends on the lane count, so tails computed through vload_n/vstore_n
 * match the body) and written once for every ISA; ISAs with FMA fuse the polynomial steps, so the last bit can
 * differ between ISAs, never between lanes of one call. Accuracy against the exact result over all 2^32 inputs at
 * every ISA: tools/ulp_exhaustive.py (README, "The unary contract", has the measured maxima). The contract:
 *
 *   vexp   <= 1.5 ulp wherever the result is normal; exp(0) == 1 exactly; subnormal results are scaled with
 *          one rounding; x > 88.7228 -> +inf (also +inf), x < -103.98 -> +0 (also -inf).
 *   vlog   <= 1.5 ulp for every x > 0 (subnormals included); log(1) == +0, log(+-0) = -inf,
 *          log(x < 0) = NaN, log(+inf) = +inf.
 *   verf   <= 1.5 ulp; odd (erf(-0) == -0); erf(+-inf) = +-1.
 *   vtanh  <= 1.5 ulp; odd (tanh(-0) == -0); tanh(+-inf) = +-1.
 *   vsin, vcos  <= 1.5 ulp for every finite x: |x| <= 6000 by exact float-float argument reduction
 *          (five-part pi/2); lanes with larger |x| are recomputed with the C library's sinf/cosf (correctly reduced
 *          for every float, so large arguments stay right at a scalar cost); sin(-0) == -0; +-inf -> NaN.
 *   NaN input gives NaN output in every function.
 *
 * The polynomial coefficients were fitted for this file (weighted minimax on Chebyshev nodes, float64), then
 * rounded to float32 and checked in float32 arithmetic; tools/fit_pieces.py fits and prints the tables of the
 * piecewise erf and tanh and of log's reduction.
 */
#ifndef SB_VMATH_H
#define SB_VMATH_H

#include <math.h>

/* 1 if any lane of a comparison mask is set. */
SB_INLINE int sb_vm_any(vi mask)
{
#if SB_ISA_AT_LEAST(3)
    return _mm512_test_epi32_mask((__m512i)mask, (__m512i)mask) != 0;
#elif SB_ISA_AT_LEAST(2)
    return !_mm256_testz_si256((__m256i)mask, (__m256i)mask);
#elif defined(__SSE2__)
    return _mm_movemask_ps((__m128)mask) != 0;
#else
    int any = 0;
    for (int i = 0; i < SB_W; ++i) any |= mask[i];
    return any != 0;
#endif
}

/* Two stages. A function F with a long dependency chain also comes as F_start(x) -> F_state and
   F_finish(x, state) -> y, F(x) being F_finish(x, F_start(x)), so that a loop over many vectors can run the start of
   a later vector beside the finish of an earlier one (unary.dispatch.c, UNARY_KERNEL_STAGED): issued in program
   order, the finish of a vector waits for its start, and the waiting instructions fill the core's scheduler before
   independent work can begin. Written for sin, cos and tanh below AVX-512 (a division) and for AVX2's erf (eight
   pieces of degree 6, whose lookups and chain of multiply-adds split after the first two: at 64 K floats 7% faster
   than one stage with src and dst aligned, 4% with them 16 and 32 bytes past a cache line, 0% with both 16 past;
   splits after one and two measured the same); the others are bound by their instruction count, where the state's
   trip through memory cost more than the overlap gave (exp, log and the AVX-512 piecewise erf and tanh: 10-50%
   slower). Each vector of state is a store and a load more per vector: erf's state holding its clamped |x| as well
   ran 10% slower than a finish computing |x| again. */

/* magnitude with sign's sign, for a magnitude whose sign bit is clear (>= +0, or a NaN made from |x|): one or (a
   ternary logic op at AVX-512) where a copysign also clears the magnitude's bit. */
SB_INLINE vf sb_vm_or_sign(vf magnitude, vf sign)
{
    return vfloat_bits(vbits(magnitude) | (vbits(sign) & vset1i((int32_t)0x80000000u)));
}


/* AVX-512 instructions that do a whole step in one (scalef, getexp/getmant, fixupimm, rcp14, the 32-entry permute
   of erf's and tanh's tables), in native avx512bw
   units only: the emulation build (target.h, SB_EMULATED_UNIT) runs the generic code at 16 lanes instead. */
#if SB_ISA_AT_LEAST(3) && !defined(SB_EMULATED_UNIT)
#define SB_VM_AVX512 1
#else
#define SB_VM_AVX512 0
#endif
/* An 8-lane AVX2 unit (vpermps and the other 256-bit instructions apply to vf as it is). */
#define SB_VM_AVX2 (SB_ISA_AT_LEAST(2) && !SB_ISA_AT_LEAST(3))

/* x + x (a quiet NaN) where x is NaN, else y. */
SB_INLINE vf sb_vm_nan_through(vf x, vf y)
{
    return vselect(x != x, x + x, y);
}

/* 1 if every lane of a comparison mask is set. */
SB_INLINE int sb_vm_all(vi mask)
{
#if SB_ISA_AT_LEAST(3)
    return _mm512_test_epi32_mask((__m512i)~mask, (__m512i)~mask) == 0;
#elif SB_ISA_AT_LEAST(2)
    return _mm256_movemask_ps((__m256)mask) == 0xff;
#elif defined(__SSE2__)
    return _mm_movemask_ps((__m128)mask) == 0xf;
#else
    int all = 1;
    for (int i = 0; i < SB_W; ++i) all &= mask[i] != 0;
    return all;
#endif
}

/* 1 if a > b in some lane (NaN compares false); at AVX-512 straight from the comparison's mask register, where
   sb_vm_any on a vector comparison would first turn the mask into a vector and test that. */
SB_INLINE int sb_vm_any_gt(vf a, vf b)
{
#if SB_VM_AVX512
    return _mm512_cmp_ps_mask((__m512)a, (__m512)b, _CMP_GT_OQ) != 0;
#else
    return sb_vm_any(a > b);
#endif
}

#if SB_VM_AVX2
/* Each lane of c where mask's sign bit is set, else of s: one vblendvps, in assembly because GCC turns
   _mm256_blendv_ps into a select on mask < 0 and, for a mask that feeds several blends, computes that comparison
   (a vpcmpgtd more a vector). */
SB_INLINE vf sb_vm_blend_on_sign(vi mask, vf c, vf s)
{
    vf r;
    __asm__("vblendvps %[m], %[c], %[s], %[r]" : [r] "=x"(r) : [m] "x"(mask), [c] "xm"(c), [s] "x"(s));
    return r;
}
#endif

/* c0 + c1 t + ... + cN t^N (t2 = t * t). With FMA (avx2 and later), Estrin's scheme: pairs c_i + c_(i+1) t first,
   then powers of t2, so the dependency chain is about half as long as Horner's; the long chains, not the
   instruction count, bound these functions (the core keeps only so many instructions in flight). Without FMA,
   Horner's rule: its fewer roundings keep erf within 1.4 ulp there, where Estrin's unfused steps reach 1.5. */
#if SB_ISA_AT_LEAST(2)
#define SB_VM_PAIR(i, j) vfmadd(vset1(c##j), t, vset1(c##i))
SB_INLINE vf sb_vm_poly4(vf t, vf t2, float c0, float c1, float c2, float c3, float c4)
{
    return vfmadd(vfmadd(vset1(c4), t2, SB_VM_PAIR(2, 3)), t2, SB_VM_PAIR(0, 1));
}

SB_INLINE vf sb_vm_poly5(vf t, vf t2, float c0, float c1, float c2, float c3, float c4, float c5)
{
    return vfmadd(vfmadd(SB_VM_PAIR(4, 5), t2, SB_VM_PAIR(2, 3)), t2, SB_VM_PAIR(0, 1));
}

SB_INLINE vf sb_vm_poly6(vf t, vf t2, float c0, float c1, float c2, float c3, float c4, float c5, float c6)
{
    return vfmadd(vfmadd(vset1(c6), t2, SB_VM_PAIR(4, 5)), t2 * t2, vfmadd(SB_VM_PAIR(2, 3), t2, SB_VM_PAIR(0, 1)));
}

SB_INLINE vf sb_vm_poly7(vf t, vf t2, float c0, float c1, float c2, float c3, float c4, float c5, float c6,
    float c7)
{
    return vfmadd(vfmadd(SB_VM_PAIR(6, 7), t2, SB_VM_PAIR(4, 5)), t2 * t2,
        vfmadd(SB_VM_PAIR(2, 3), t2, SB_VM_PAIR(0, 1)));
}
#undef SB_VM_PAIR
#else
#define SB_VM_STEP(p, c) vfmadd(p, t, vset1(c))
SB_INLINE vf sb_vm_poly4(vf t, vf t2, float c0, float c1, float c2, float c3, float c4)
{
    (void)t2;
    return SB_VM_STEP(SB_VM_STEP(SB_VM_STEP(SB_VM_STEP(vset1(c4), c3), c2), c1), c0);
}

SB_INLINE vf sb_vm_poly5(vf t, vf t2, float c0, float c1, float c2, float c3, float c4, float c5)
{
    return SB_VM_STEP(sb_vm_poly4(t, t2, c1, c2, c3, c4, c5), c0);
}

SB_INLINE vf sb_vm_poly6(vf t, vf t2, float c0, float c1, float c2, float c3, float c4, float c5, float c6)
{
    return SB_VM_STEP(sb_vm_poly5(t, t2, c1, c2, c3, c4, c5, c6), c0);
}

SB_INLINE vf sb_vm_poly7(vf t, vf t2, float c0, float c1, float c2, float c3, float c4, float c5, float c6,
    float c7)
{
    return SB_VM_STEP(sb_vm_poly6(t, t2, c1, c2, c3, c4, c5, c6, c7), c0);
}
#undef SB_VM_STEP
#endif

/* exp(x) = 2^(n/S) * exp(r), r = x - n*ln2/S, |r| <= ln2/(2S), in S = 2^bits steps per power of 2. The functions
   below take bits as a constant: SB_VM_EXP_STEP_BITS for vexp, where a permute looks T = 2^(j/S) (j = n mod S) up so
   that exp(r) takes a shorter polynomial (fewer multiply-adds, and a shorter chain through them): 3 at AVX2 (degree 4
   instead of 6: 10% faster at 64 K floats; at most 0.909 ulp over all inputs, was 0.901), 4 at AVX-512 (degree 3:
   20% faster; 1.000 ulp, was 0.901: T's rounding is most of it); 0 elsewhere, and for tanh (below). */
#if SB_VM_AVX512
#define SB_VM_EXP_STEP_BITS 4
static const float sb_vm_exp2_sixteenths[16] __attribute__((aligned(64))) = {
    1.0f, 1.04427373f, 1.09050775f, 1.13878858f, 1.18920708f, 1.24185777f, 1.29683959f, 1.35425556f,
    1.41421354f, 1.47682619f, 1.54221082f, 1.61049032f, 1.68179286f, 1.75625217f, 1.83400810f, 1.91520655f,
};
#elif SB_VM_AVX2
#define SB_VM_EXP_STEP_BITS 3
static const float sb_vm_exp2_eighths[8] __attribute__((aligned(32))) = {
    1.0f, 1.09050775f, 1.18920708f, 1.29683959f, 1.41421354f, 1.54221082f, 1.68179286f, 1.83400810f,
};
#else
#define SB_VM_EXP_STEP_BITS 0
#endif

/* exp(r) * 2^(j/S) for |r| <= ln2/(2S), j = n mod S from sb_vm_exp_n's t; NaN stays NaN.
   - S = 8 (AVX2) and 16 (AVX-512): T + (T r) Q(r), T = 2^(j/S) rounded (up to half an ulp of T), Q = 1 + r (1/2 +
     r (c3 + r c4)) fitted to 0.003 ulp on |r| <= ln2/16, or 1 + r (c2 + r c3) to 0.03 ulp on |r| <= ln2/32; r == 0
     gives T exactly.
   - S = 1 with FMA (tanh below AVX-512): 1 + r Q(r), Q of degree 5 in Estrin's form (pairs in r, then r^2): six
     multiply-adds and r^2, within 0.85 ulp on |r| <= ln2/2. By Horner's rule (no r^2, within 0.72 ulp) its six
     multiply-adds made one chain, which on Zen 4 filled the scheduler: tanh is 1.07x faster at avx2 in Estrin's
     form, with the same exhaustive maximum (1.362 ulp).
   - Without FMA the unfused steps of that form err by up to 1.18 ulp and run 3% slower, so they keep
     1 + (r + r^2 P(r)) (0.99 ulp). r == 0 gives exactly 1. */
SB_INLINE vf sb_vm_exp_small(vf r, vf t, const int bits)
{
    (void)t;
#if SB_VM_AVX512
    if (bits == 4) {
        vf table = (vf)_mm512_permutexvar_ps((__m512i)t, _mm512_load_ps(sb_vm_exp2_sixteenths));
        vf q = vfmadd(vfmadd(vset1(0.166667551f), r, vset1(0.500016153f)), r, vset1(1.0f));
        return vfmadd(table * r, q, table);
    }
#endif
#if SB_VM_AVX2
    if (bits == 3) {
        vf table = (vf)_mm256_permutevar8x32_ps(_mm256_load_ps(sb_vm_exp2_eighths), (__m256i)t);
        vf q = vfmadd(vfmadd(vfmadd(vset1(0.0416623093f), r, vset1(0.166680276f)), r, vset1(0.5f)), r, vset1(1.0f));
        return vfmadd(table * r, q, table);
    }
#endif
#if SB_ISA_AT_LEAST(2)
    vf r2 = r * r;
    vf high = vfmadd(vfmadd(vset1(0.00138629926f), r, vset1(0.00836867094f)), r2,
        vfmadd(vset1(0.0416675247f), r, vset1(0.166665211f)));
    vf q = vfmadd(high, r2, vfmadd(vset1(0.49999997f), r, vset1(1.0f)));
    return vfmadd(r, q, vset1(1.0f));
#else
    vf r2 = r * r;
    vf p = sb_vm_poly4(r, r2, 0.4999999403953552f, 0.1666652113199234f, 0.04166838899254799f,
        0.008368710055947304f, 0.0013814611593261361f);
    return vfmadd(r2, p, r) + vset1(1.0f);
#endif
}

/* The bits of 1.5 * 2^(23 - bits): adding it to a float below 2^(22 - bits) in magnitude rounds that to a multiple of
   1/S, S = 2^bits, and leaves n, the number of those steps, in the sum's low bits (the magic's own low 9 + bits bits
   are zero). */
#define SB_VM_EXP_MAGIC_BITS(bits) (0x4B400000u - ((uint32_t)(bits) << 23))

/* The multiple n/S of 1/S nearest x / ln2, as a float; *t = n/S + 1.5 * 2^(23 - bits), whose bits are
   SB_VM_EXP_MAGIC_BITS(bits) + n (the fused product plus the magic rounds once, at the same bit as x * S / ln2
   plus 1.5 * 2^23 would). n/S itself, not n, so that AVX-512's scalef takes it as it is: a multiply fewer there,
   exp at avx512bw 1.09x faster at 64 K floats on Zen 4, and bit for bit the same results. */
SB_INLINE vf sb_vm_exp_n(vf x, vf * t, const int bits)
{
    const vf magic = vset1(12582912.0f / (1 << bits));
    *t = vfmadd(x, vset1(1.44269504088896341f), magic);
    return *t - magic;
}

/* exp(x) = 2^(n/S) * exp(r), r = x - (n/S)*ln2, S = 2^SB_VM_EXP_STEP_BITS. Returns sb_vm_exp_small(r, t); *t
   and *q = n/S as sb_vm_exp_n's. NaN propagates through every step. */
SB_INLINE vf sb_vm_exp_reduced(vf x, vf * t, vf * q)
{
    const int bits = SB_VM_EXP_STEP_BITS;
    *q = sb_vm_exp_n(x, t, bits);
    /* ln2 = 0.693359375 - 2.12194440e-4; the first part (9 bits) times n/S (at most 12 bits: |n| <= 151 S) is
       exact, and so is x minus it */
    vf r = vfmadd(*q, vset1(-0.693359375f), x);
    r = vfmadd(*q, vset1(2.12194440e-4f), r);
    return sb_vm_exp_small(r, *t, bits);
}

#if !SB_VM_AVX512
/* y * 2^floor(n/S) where that power and the product are normal (sb_vm_exp_scale_fast's range; not NaN):
   bits(t) >> log2(S) << 23 is floor(n/S) << 23 (the magic has no bit in the low 9 + log2(S)), and adding it to y's
   exponent is the exact product. The sum is unsigned: sb_vm_exp_scale_fast computes it on every lane before it knows
   whether all are in range, and one out of range would overflow a signed one. */
SB_INLINE vf sb_vm_exp_scale(vf y, vf t, const int bits)
{
    return vfloat_bits((vi)((vu)vbits(y) + (((vu)vbits(t) >> bits) << 23)));
}

/* vexp's sb_vm_exp_scale(y, t) in *out, and 1 if every lane's n allows it (NaN does not): n in [-126 S + 1,
   128 S - 1], the whole range where the product is normal. y lies in [2^(-1/2S), 2^(1 - 1/2S)], below 1 only where
   j = 0, so its exponent plus floor(n/S) stays in [1, 254]: x from -87.25 to 88.72 at S = 8. A symmetric |n| <= 125 S
   sent the vectors with a lane in [-87.3, -86.6] or [86.6, 88.7] to the slow scaling, behind a branch that mispredicts
   on them: 4% of the vectors of U[-87, 88], and 23% of the time of 4 M floats read from memory at AVX2.
   The test is on t's bits, magic + n for n in range (t's bit patterns are ordered as t is, and NaN's and those of
   t far from magic fall outside): adding 2^31 - (magic + lo) maps [magic + lo, magic + hi] onto the smallest signed
   int32s, so one addition and one signed comparison find it (integer instructions, off the multiply-add units). */
SB_INLINE int sb_vm_exp_scale_fast(vf y, vf t, vf * out)
{
    const uint32_t S = 1u << SB_VM_EXP_STEP_BITS, magic = SB_VM_EXP_MAGIC_BITS(SB_VM_EXP_STEP_BITS);
    const uint32_t lo = magic - 126 * S + 1, hi = magic + 128 * S - 1;
    *out = sb_vm_exp_scale(y, t, SB_VM_EXP_STEP_BITS);
    vi shifted = (vi)((vu)vbits(t) + (0x80000000u - lo));
    return sb_vm_all(vset1i((int32_t)(0x80000000u + (hi - lo) + 1)) > shifted);
}
#endif

/* exp for xc in [-104, 88.75] or NaN; vexp clamps to that range, callers whose arguments lie in it already skip the
   clamp. */
SB_INLINE vf sb_vm_exp_in_range(vf xc)
{
    vf t, q;
    vf y = sb_vm_exp_reduced(xc, &t, &q);
#if SB_VM_AVX512
    /* y * 2^floor(n/S) with one rounding, overflow to +inf and gradual underflow included (scalef floors its
       exponent operand, q = n/S). */
    return (vf)_mm512_scalef_ps((__m512)y, (__m512)q);
#else
    vf fast;
    if (__builtin_expect(sb_vm_exp_scale_fast(y, t, &fast), 1))
        return fast;
    /* 2^floor(n/S) in two normal factors, of which only the second product can round. */
    vi ni = (vi)((vu)vbits(t) - SB_VM_EXP_MAGIC_BITS(SB_VM_EXP_STEP_BITS)) >> SB_VM_EXP_STEP_BITS;
    vi n1 = ni >> 1, n2 = ni - n1;
    y = y * vfloat_bits((n1 + 127) << 23);
    return y * vfloat_bits((n2 + 127) << 23);
#endif
}

SB_INLINE vf vexp(vf x)
{
    /* Clamped so that n fits the scaling; the operand order lets NaN through (maxps/minps return their second
       operand when the comparison fails). */
    vf clamped = vmin(vset1(88.75f), vmax(vset1(-104.0f), x));
#if SB_VM_AVX512
    return sb_vm_exp_in_range(clamped);
#else
    /* The clamp only matters where n is past the fast scaling's range, which that rejects anyway: most vectors skip
       it, and with it two steps of the dependency chain. */
    vf t, q, fast;
    vf y = sb_vm_exp_reduced(x, &t, &q);
    if (__builtin_expect(sb_vm_exp_scale_fast(y, t, &fast), 1))
        return fast;
    return sb_vm_exp_in_range(clamped);
#endif
}

#if SB_VM_AVX512 || SB_VM_AVX2
/* log at AVX-512 and AVX2, by table: x = 2^e * m, m in [1, 2); entry i of N covers m in [1 + i/N, 1 + (i+1)/N)
   (N = 32 at AVX-512, a two-table vpermt2ps; 8 at AVX2, a vpermps) and holds invc ~ 1/c, c near its middle, and
   log(c)_hi, log(c) on the grid 2^-17. log(x) = e*ln2 + log(c) + log1p(r), r = m*invc - 1 (one fused rounding),
   log1p(r) = r + r^2 P(r): P of degree 2 for r in [-1/64, 1/32) at AVX-512, 4 for [-1/16, 1/8) at AVX2. These
   functions are bound by their instruction count: one polynomial in m - 1 over [sqrt(1/2), sqrt(2)) took 22 at
   AVX-512 and 33 at AVX2 (with twice the dependency chain) where a table of three rows took 16 and 23. The first
   entry has c = 1 (r = m - 1), the last c = 2 (r = m/2 - 1), both exact, so that log keeps its relative accuracy
   next to x = 1 on both sides (below 1, e*ln2 and log(2) cancel exactly). hi = e*ln2_hi + log(c)_hi is exact for
   every float's e. The low parts need no third row: each invc is chosen so that log(c) = log(c)_hi * (1 + alpha)
   within min(log(c), ln2 - log(c)) * 2^-31, alpha = ln2_lo / ln2_hi, and so e*ln2_lo + log(c)_lo = hi * alpha, one
   multiply where a lookup was (1.15-1.17x faster at AVX-512, 1.03-1.04x at AVX2; the maximum error 1.041 ulp at
   AVX-512 and 1.032 at AVX2, from 1.021 at both). The low part joins r^2 P before r does, so that the sum rounds
   twice at r's scale and once at the result's. The AVX2 table holds the exponent field's bias of 127 too.
   tools/fit_pieces.py log (and log-avx2) computes the tables and P and prints their error. */
#if SB_VM_AVX512
#define SB_VM_LOG_ENTRY(row, i) (vf)_mm512_permutex2var_ps(_mm512_load_ps(row), (__m512i)(i), \
    _mm512_load_ps((row) + 16))
static const float sb_vm_log_entries[2][32] __attribute__((aligned(64))) = {
    {1.0f, 0.956750691f, 0.927802801f, 0.902329266f, 0.878258407f, 0.85496664f, 0.829959095f, 0.809527814f, 0.791414857f, 0.772097349f, 0.752223372f, 0.734747648f, 0.719986796f, 0.704462886f, 0.689805031f, 0.674628139f, 0.659870744f, 0.646535218f, 0.634136498f, 0.621344745f, 0.609512806f, 0.597897053f, 0.587819695f, 0.576287508f, 0.565192819f, 0.555395424f, 0.547273099f, 0.536716521f, 0.527770996f, 0.521387517f, 0.512337744f, 0.5f},
    {0.0f, 0.0442123413f, 0.0749359131f, 0.102775574f, 0.129814148f, 0.156692505f, 0.186378479f, 0.211303711f, 0.233932495f, 0.258644104f, 0.284721375f, 0.308227539f, 0.328521729f, 0.350318909f, 0.37134552f, 0.393592834f, 0.415710449f, 0.436126709f, 0.455490112f, 0.475868225f, 0.495094299f, 0.514335632f, 0.531333923f, 0.551147461f, 0.570587158f, 0.58807373f, 0.602806091f, 0.622283936f, 0.639091492f, 0.651260376f, 0.668769836f, 0.693145752f},
};
#else
#define SB_VM_LOG_ENTRY(row, i) (vf)_mm256_permutevar8x32_ps(_mm256_load_ps(row), (__m256i)(i))
static const float sb_vm_log_entries[2][8] __attribute__((aligned(32))) = {
    {1.0f, 0.842733264f, 0.762008369f, 0.694462478f, 0.640252113f, 0.594014108f, 0.55069083f, 0.5f},
    {-88.0295105f, -87.8584061f, -87.7577133f, -87.6648941f, -87.5836182f, -87.5086594f, -87.43293f, -87.3363647f},
};
#endif

/* log(2^e * m) for m in [1, 2); index's low bits are the top bits of m's fraction (the permute reads only those). */
SB_INLINE vf sb_vm_log_table(vf m, vf e, vi index)
{
    vf r = vfmadd(m, SB_VM_LOG_ENTRY(sb_vm_log_entries[0], index), vset1(-1.0f));
    vf r2 = r * r;
#if SB_VM_AVX512
    vf p = vfmadd(vset1(-0.244035736f), r2, vfmadd(vset1(0.33336705f), r, vset1(-0.500001192f)));
#else
    vf p = sb_vm_poly4(r, r2, -0.499999851f, 0.333334625f, -0.250123948f, 0.200087771f, -0.144701377f);
#endif
    vf hi = vfmadd(e, vset1(0.693145752f), SB_VM_LOG_ENTRY(sb_vm_log_entries[1], index));   /* exact */
    return hi + (r + vfmadd(p, r2, hi * vset1(2.06104824e-06f)));                         /* the low part */
}
#endif

#if !SB_VM_AVX512
/* log(x) = e*ln2 + log1p(f), x = 2^e * (1 + f), 1 + f in [sqrt(1/2), sqrt(2)); log1p(f) = f - f^2/2 + f^3 Q(f). */
SB_INLINE vf sb_vm_log_reduced(vf m, vf ef)
{
    vf f = m - vset1(1.0f);                               /* exact */
    vf f2 = f * f;
    vf q = sb_vm_poly7(f, f2, 0.3333333134651184f, -0.250008225440979f, 0.20001226663589478f,
        -0.16623355448246002f, 0.14201760292053223f, -0.1316019743680954f, 0.12761563062667847f,
        -0.07634437829256058f);
    vf y = vfmadd(f2 * f, q, ef * vset1(-2.12194440e-4f));
    y = vfmadd(f2, vset1(-0.5f), y);
    return vfmadd(ef, vset1(0.693359375f), f + y);
}

/* log of positive normal x given as bits (x's, or x * 2^23's for subnormal x, with exponent_offset 23). */
SB_INLINE vf sb_vm_log_bits(vi bits, vi exponent_offset)
{
#if SB_VM_AVX2
    vf m = vfloat_bits((bits & vset1i(0x007fffff)) | vset1i(0x3f800000));
    vi e = (vi)((vu)bits >> 23) - exponent_offset;        /* biased: the table holds -127*ln2 */
    return sb_vm_log_table(m, __builtin_convertvector(e, vf), bits >> 20);
#else
    vi mant = (bits & vset1i(0x007fffff)) + vset1i(0x3f800000 - 0x3f3504f3);
    vi e = ((bits >> 23) & vset1i(0xff)) - vset1i(127) - exponent_offset;
    e = e + (mant >> 23);                                 /* 1 when the mantissa is >= sqrt(2): use m/2 */
    vf m = vfloat_bits((mant & vset1i(0x007fffff)) + vset1i(0x3f3504f3));
    return sb_vm_log_reduced(m, __builtin_convertvector(e, vf));
#endif
}
#endif

SB_INLINE vf vlog(vf x)
{
#if SB_VM_AVX512
    /* getmant/getexp read subnormals as they are. The special inputs come out of the arithmetic itself, with no
       fixup by class (vfixupimmps shares the multiply-add pipes on Zen 4: 9% faster without it): getmant turns
       negative x and NaN into NaN (SIGN_nan; x + 0 first, so that -0 counts as +0), which r carries through;
       getexp gives -inf for +-0 and +inf for +inf, with m = 0 and 1: hi, lo and the sum are then -inf and +inf.
       x = 1 gives +0 (r, e and the first entry are 0), NaN keeps its payload (quieted). */
    __m512 m = _mm512_getmant_ps((__m512)(x + vset1(0.0f)), _MM_MANT_NORM_1_2, _MM_MANT_SIGN_nan);
    return sb_vm_log_table((vf)m, (vf)_mm512_getexp_ps((__m512)x), vbits((vf)m) >> 18);
#else
    /* Positive normal finite x (the common case) needs neither the subnormal scaling nor the special values. Adding
       0x7f800000 maps their bit patterns, 0x00800000 to 0x7f7fffff, to the int32s below -2^24 and every other
       pattern to -2^24 or above: one integer comparison finds them (two float ones and an and did). */
    vi bits = vbits(x);
    if (__builtin_expect(sb_vm_all(vset1i(-(1 << 24)) > (vi)((vu)bits + 0x7f800000u)), 1))
        return sb_vm_log_bits(bits, vset1i(0));
    vi tiny = x < vset1(1.17549435e-38f);                 /* subnormals (and <= 0, fixed below) scaled by 2^23 */
    vf y = sb_vm_log_bits(vbits(vselect(tiny, x * vset1(8388608.0f), x)), tiny & vset1i(23));
    y = vselect(x == vset1(INFINITY), x, y);
    y = vselect(x == vset1(0.0f), vset1(-INFINITY), y);
    y = vselect(x < vset1(0.0f), vset1(NAN), y);
    return sb_vm_nan_through(x, y);
#endif
}

/* Piecewise polynomials, where a permute looks a coefficient up for every lane at once: 32 pieces at AVX-512
   (two-table vpermt2ps), 8 at AVX2 (vpermps). erf (both) and tanh (AVX-512) are one polynomial each for every |x|
   there: no branch on the size of |x|, no exponential, no division. For a = |x| clamped to where f rounds to 1, piece
   k = min(round(a * scale), SB_VM_PIECES - 1) holds a polynomial P_k in t = a - k * width, and f = m + m * P_k(t):
       k < small:   m = a   (P_k ~ f(a)/a - 1: relative accuracy down to the subnormals, f(0) = 0)
       k >= small:  m = c   (P_k ~ f(a)/c - 1, whose rounding stays well below f's ulp)
   where c = (small - 1/2) * width is where the small pieces end, so that m = min(a, c): one instruction.
   table[j][k] is coefficient j of piece k; tools/fit_pieces.py fits and prints the tables, with each piece's error.
   The min is left out where a <= high cannot reach past the last piece.
   k and t need no division: k's float is round(a * scale) + 1.5 * 2^23, whose low bits index the permute, and
   t = a - k * width is exact (k * width has few bits; Sterbenz). NaN stays NaN (the clamp's min returns its second
   operand) through t. */
#if SB_VM_AVX512
#define SB_VM_PIECES 32
#define SB_VM_PIECE_MIN(k, last) (vi)_mm512_min_epi32((__m512i)(k), _mm512_set1_epi32(last))
#define SB_VM_COEFFICIENT(row, k) (vf)_mm512_permutex2var_ps(_mm512_load_ps(row), (__m512i)(k), \
    _mm512_load_ps((row) + 16))
#elif SB_VM_AVX2
#define SB_VM_PIECES 8
#define SB_VM_PIECE_MIN(k, last) (vi)_mm256_min_epi32((__m256i)(k), _mm256_set1_epi32(last))
#define SB_VM_COEFFICIENT(row, k) (vf)_mm256_permutevar8x32_ps(_mm256_load_ps(row), (__m256i)(k))
#endif

#ifdef SB_VM_PIECES
typedef struct {
    vf t, p; /* the argument within its piece, the polynomial's terms from the top down to coefficient `upto` */
    vi k;    /* the piece */
} sb_vm_pieces_state;

SB_INLINE sb_vm_pieces_state sb_vm_pieces_start(vf x, float high, float scale, float width,
    const float (*table)[SB_VM_PIECES], int degree, int upto)
{
    const vf magic = vset1(12582912.0f);
    sb_vm_pieces_state s;
    vf a = vmin(vset1(high), vabs(x));
    s.k = vbits(vfmadd(a, vset1(scale), magic));
    if (high * scale >= SB_VM_PIECES - 0.5f)
        s.k = SB_VM_PIECE_MIN(s.k, 0x4B400000 + SB_VM_PIECES - 1);
    s.t = vfmadd(vfloat_bits(s.k) - magic, vset1(-width), a);
    s.p = SB_VM_COEFFICIENT(table[degree], s.k);
    for (int j = degree - 1; j >= upto; --j)
        s.p = vfmadd(s.p, s.t, SB_VM_COEFFICIENT(table[j], s.k));
    return s;
}

/* a: |x|, or min(|x|, high) where the caller has it (m is the same: the small pieces end below high). */
SB_INLINE vf sb_vm_pieces_finish(vf x, vf a, sb_vm_pieces_state s, float width, const float (*table)[SB_VM_PIECES],
    int upto, int small)
{
    vf p = s.p;
    for (int j = upto - 1; j >= 0; --j)
        p = vfmadd(p, s.t, SB_VM_COEFFICIENT(table[j], s.k));
    vf m = vmin(a, vset1((small - 0.5f) * width));
    return sb_vm_or_sign(vfmadd(p, m, m), x);                        /* odd; also f(-0) == -0 */
}

SB_INLINE vf sb_vm_pieces(vf x, float high, float scale, float width, const float (*table)[SB_VM_PIECES],
    int degree, int small)
{
    vf a = vmin(vset1(high), vabs(x));                               /* the start's own a, once compiled */
    return sb_vm_pieces_finish(x, a, sb_vm_pieces_start(x, high, scale, width, table, degree, degree), width,
        table, degree, small);
}
#endif

#if SB_VM_AVX512
/* erf: 32 pieces of width 1/8, degree 4, to 3.93 (erf rounds to 1 from 3.9192 on); at most 0.66 ulp in the fit. */
static const float sb_vm_erf_pieces[5][32] __attribute__((aligned(64))) = {
    {0.128379166f, 0.122529641f, 0.10530556f, 0.0776450932f, 0.0409997553f, -0.00281458837f, -0.0517924875f, -0.103914216f, -0.101119153f, -0.0523858853f, -0.0155731961f, 0.011381411f, 0.030512156f, 0.0436733142f, 0.0524497814f, 0.058122728f, 0.0616770834f, 0.0638357028f, 0.0651064366f, 0.0658315346f, 0.0662325844f, 0.0664476007f, 0.0665593371f, 0.0666156188f, 0.066643104f, 0.0666561127f, 0.0666620806f, 0.066664733f, 0.0666658729f, 0.0666663498f, 0.0666665435f, 0.066666618f},
    {2.11537696e-07f, -0.0931548551f, -0.181165561f, -0.259445876f, -0.324434102f, -0.373897165f, -0.407035083f, -0.424389303f, 0.442781687f, 0.33949253f, 0.252289444f, 0.181717247f, 0.126859054f, 0.0858370885f, 0.0562932938f, 0.0357821584f, 0.0220447183f, 0.0131634781f, 0.00761841936f, 0.00427353382f, 0.00232347194f, 0.00122437871f, 0.000625348359f, 0.000309568102f, 0.000148531413f, 6.90729867e-05f, 3.11333606e-05f, 1.36010212e-05f, 5.75896911e-06f, 2.36344613e-06f, 9.40100449e-07f, 3.76435395e-07f},
    {-0.376138985f, -0.365647942f, -0.335350335f, -0.288497925f, -0.229913503f, -0.165263876f, -0.100218475f, -0.0397284515f, -0.442782372f, -0.381929785f, -0.315362066f, -0.249861181f, -0.19028832f, -0.139484018f, -0.0985121727f, -0.0670915172f, -0.0440902747f, -0.0279733539f, -0.017142538f, -0.0101517662f, -0.00580863794f, -0.00321557815f, -0.00172020902f, -0.000887220609f, -0.000446103513f, -0.00021844072f, -0.000104822677f, -4.8594422e-05f, -1.90340561e-05f, -6.43615613e-06f, -1.60675961e-06f, 2.39076553e-06f},
    {0.000283353555f, 0.0552821793f, 0.104548641f, 0.142764241f, 0.166651845f, 0.17511487f, 0.169158936f, 0.151480243f, 0.147232309f, 0.172964647f, 0.178457022f, 0.168307722f, 0.147923663f, 0.122485042f, 0.0962026417f, 0.0719968975f, 0.051505819f, 0.035305053f, 0.0232283752f, 0.0146894492f, 0.0089386683f, 0.00523842406f, 0.00295878248f, 0.00161164079f, 0.000847008429f, 0.000429698499f, 0.000210501385f, 9.96102535e-05f, 4.5544195e-05f, 2.01255207e-05f, 8.59695228e-06f, -4.55877762e-06f},
    {0.110614732f, 0.106995039f, 0.0887766704f, 0.0631580129f, 0.032283742f, 0.00185257872f, -0.0245915391f, -0.0447596796f, 0.0740303174f, 0.0301167592f, -0.00636077719f, -0.0324008018f, -0.0475166403f, -0.0532225221f, -0.0515061393f, -0.0450881496f, -0.0365946926f, -0.0279567279f, -0.0201691352f, -0.0136082349f, -0.00923400559f, -0.00547217531f, -0.00338786701f, -0.00258826185f, -0.00101613591f, -6.8661655e-05f, 0.000437426294f, 0.000398545468f, -0.00030272812f, -0.00047006752f, -0.000407853368f, -0.000885636662f},
};

SB_INLINE vf verf(vf x) { return sb_vm_pieces(x, 3.93f, 8.0f, 0.125f, sb_vm_erf_pieces, 4, 8); }

/* tanh: 30 pieces of width 5/16, degree 5, to 9.1 (tanh rounds to 1 from 9.0109 on); at most 0.88 ulp in the
   fit. 3.2f is not 1/width exactly, so the pieces are fitted 1e-5 beyond their ends. */
static const float sb_vm_tanh_pieces[6][32] __attribute__((aligned(64))) = {
    {3.59265229e-10f, -0.0313288718f, -0.112640433f, -0.216990367f, -0.224426374f, -0.162674695f, -0.127730042f, -0.108446449f, -0.0979526415f, -0.0922854468f, -0.089237459f, -0.0876017958f, -0.0867250785f, -0.086255461f, -0.0860039964f, -0.0858693719f, -0.0857973024f, -0.0857587233f, -0.0857380703f, -0.0857270136f, -0.0857210979f, -0.0857179314f, -0.0857162401f, -0.0857153311f, -0.0857148468f, -0.0857145861f, -0.0857144445f, -0.08571437f, -0.0857143328f, -0.0857143104f, 0.0f, 0.0f},
    {-1.66066329e-07f, -0.192973763f, -0.311904639f, -0.343328685f, 0.256379306f, 0.147442654f, 0.0821006969f, 0.0448991247f, 0.0243128929f, 0.0130950902f, 0.0070327674f, 0.00377111975f, 0.00202047289f, 0.00108203711f, 0.000579332118f, 0.000310139789f, 0.000166018959f, 8.88672948e-05f, 4.75683082e-05f, 2.54617898e-05f, 1.36288018e-05f, 7.29499698e-06f, 3.9047377e-06f, 2.09005771e-06f, 1.11872782e-06f, 5.98812051e-07f, 3.20521025e-07f, 1.71562561e-07f, 9.18308203e-08f, 4.83418638e-08f, 0.0f, 0.0f},
    {-0.333320886f, -0.262389183f, -0.115386456f, 0.00513497368f, -0.217488036f, -0.135034099f, -0.0783289373f, -0.0437823385f, -0.0239873007f, -0.0130005088f, -0.00700537628f, -0.00376298255f, -0.00201861188f, -0.00108195085f, -0.000579342654f, -0.000309571013f, -0.000165434321f, -8.8390414e-05f, -4.75449924e-05f, -2.59607186e-05f, -1.39977637e-05f, -7.59471368e-06f, -3.57331669e-06f, -2.02556726e-06f, -8.28576901e-07f, -4.41738422e-07f, -5.59155922e-07f, -4.14550584e-07f, 9.32337656e-08f, 2.83634112e-08f, 0.0f, 0.0f},
    {-0.000341891136f, 0.137073815f, 0.156070784f, 0.0956179649f, 0.0990282744f, 0.0745188966f, 0.0473622121f, 0.0277281273f, 0.0155620445f, 0.00854241755f, 0.00463440316f, 0.00249850191f, 0.00134251709f, 0.000720073702f, 0.000385847758f, 0.000206653582f, 0.00011064783f, 5.92355391e-05f, 3.17095437e-05f, 1.69735304e-05f, 9.08557013e-06f, 4.86324734e-06f, 2.60313413e-06f, 1.39334259e-06f, 7.45809928e-07f, 3.99200133e-07f, 2.13678859e-07f, 1.14373321e-07f, 6.1220355e-08f, 1.38568998e-06f, 0.0f, 0.0f},
    {0.13759084f, 0.0669462755f, -0.028063627f, -0.055255428f, -0.0109675918f, -0.0230239145f, -0.0190227181f, -0.0124745285f, -0.00737959146f, -0.00417435542f, -0.00229793764f, -0.0012544787f, -0.000658302277f, -0.000342240615f, -0.000186976802f, -0.00012052097f, -7.4154399e-05f, -4.51964479e-05f, -1.66308528e-05f, 7.8429839e-06f, 7.53368568e-06f, 7.38089193e-06f, -1.21643579e-05f, -2.81193502e-06f, -9.88061038e-06f, -5.34660967e-06f, 7.71138366e-06f, 7.90383001e-06f, -6.09413519e-06f, 7.5412504e-06f, 0.0f, 0.0f},
    {-0.0245786104f, -0.0684916377f, -0.0415606797f, 0.00247641793f, -0.017703427f, -0.000405169383f, 0.00418127235f, 0.00387627236f, 0.00261483947f, 0.00156620808f, 0.000886241323f, 0.000489155645f, 0.000265593233f, 0.00014346739f, 7.72671483e-05f, 4.13854541e-05f, 2.22021154e-05f, 1.18913304e-05f, 6.36200684e-06f, 3.41146756e-06f, 1.82449401e-06f, 9.75910666e-07f, 5.22203436e-07f, 2.80112204e-07f, 1.49764702e-07f, 8.02691744e-08f, 4.28980584e-08f, 2.29840413e-08f, 1.2281534e-08f, 1.33109124e-05f, 0.0f, 0.0f},
};

SB_INLINE vf vtanh(vf x) { return sb_vm_pieces(x, 9.1f, 3.2f, 0.3125f, sb_vm_tanh_pieces, 5, 4); }
#elif defined(SB_VM_PIECES)
/* erf: 8 pieces of width 1/2, degree 6, the last from 3.25 to 3.93; at most 0.89 ulp in the fit. (tanh would need
   a degree near 14 in 8 pieces: it keeps the exponential below.) */
static const float sb_vm_erf_pieces[7][8] __attribute__((aligned(32))) = {
    {0.128379166f, 0.0409997553f, -0.157299206f, -0.227115884f, -0.203742191f, -0.200325564f, -0.200017676f, -0.200000599f},
    {9.90187559e-08f, -0.324434072f, -0.42759335f, 0.0951441377f, 0.0165335163f, 0.0017426383f, 0.000111410816f, 4.32074467e-06f},
    {-0.37612915f, -0.229913875f, 0.012485492f, -0.142716229f, -0.0330667086f, -0.0043563107f, -0.00033378214f, -1.48246691e-05f},
    {3.00219399e-05f, 0.166864231f, 0.125889972f, 0.111013904f, 0.0385876074f, 0.00667866319f, 0.000630208815f, 3.35319055e-05f},
    {0.112716593f, 0.0323626362f, -0.0566807762f, -0.0356773026f, -0.0275746174f, -0.00690677948f, -0.000848812168f, -5.89418996e-05f},
    {-3.43472166e-05f, -0.0489166304f, -0.0126935877f, -0.0122941537f, 0.010175501f, 0.00493956544f, 0.000847504067f, 7.3964562e-05f},
    {-0.0257768109f, -7.47526137e-05f, 0.0167073514f, 0.0152923102f, 0.000638872094f, -0.00214048894f, -0.000477481459f, -4.39211653e-05f},
};

/* Two stages (above): the start looks the piece up and takes the first two multiply-adds. */
typedef sb_vm_pieces_state verf_state;
SB_INLINE verf_state verf_start(vf x) { return sb_vm_pieces_start(x, 3.93f, 2.0f, 0.5f, sb_vm_erf_pieces, 6, 4); }
SB_INLINE vf verf_finish(vf x, verf_state s)
{
    return sb_vm_pieces_finish(x, vabs(x), s, 0.5f, sb_vm_erf_pieces, 4, 3);
}
SB_INLINE vf verf(vf x) { return verf_finish(x, verf_start(x)); }
#endif

#ifndef SB_VM_PIECES
/* erf without a permute (base, sse41, the emulated AVX-512 units): |x| < 0.921875: x + x * P(x^2); else
   sign(x) * (1 - exp(Q(|x|) - x^2)) with Q ~ log(erfc(x)) + x^2, |x| <= 4. A vector whose lanes are all small takes
   the first branch alone; any other computes both and blends them, without a branch on whether some lane is small:
   on mixed data that one mispredicts (measured when AVX-512 ran this code, on 4M floats of the benchmark's inputs:
   0.36 ns per element with it, 0.27 without; tanh below: 0.42 and 0.22). */
SB_INLINE vf sb_vm_erf_small(vf x)
{
    vf x2 = x * x;
    /* the constant term is 2/sqrt(pi) - 1: x + x*p keeps the leading bits exact */
    vf p = sb_vm_poly6(x2, x2 * x2, 0.12837917f, -0.3761262893676758f, 0.11283622682094574f,
        -0.026856092736124992f, 0.005194181110709906f, -0.0008076275698840618f, 8.125436579575762e-05f);
    return vfmadd(x, p, x);
}

SB_INLINE vf sb_vm_erf_large(vf x, vf ax)
{
    vf a = vmin(vset1(4.0f), ax);                    /* NaN stays NaN (second operand) and reaches the result */
    vf q = sb_vm_poly7(a, a * a, 0.0001751854142639786f, -1.1295173168182373f, 0.36665797233581543f,
        -0.10828544944524765f, 0.02512289397418499f, -0.004172380082309246f, 0.00043473445111885667f,
        -2.1118565200595185e-05f);
    return sb_vm_or_sign(vset1(1.0f) - sb_vm_exp_in_range(vfmadd(a, -a, q)), x);  /* log(erfc(a)): [-18, -1.6] */
}

SB_INLINE vf verf(vf x)
{
    vf ax = vabs(x);
    vi is_small = ax < vset1(0.921875f);                  /* false for NaN */
    if (sb_vm_all(is_small))
        return sb_vm_erf_small(x);
    return vselect(is_small, sb_vm_erf_small(x), sb_vm_erf_large(x, ax));
}

#endif

#if !SB_VM_AVX512
/* tanh below AVX-512, on a = |x|: a < 0.625: a + a^3 P(a^2); else 1 - 2 / (exp(2a) + 1), a clamped to 10
   (tanh == 1); x's sign joins last. Branches as erf's. P of degree 4: 0.08 ulp from tanh, 0.84 with the float
   evaluation (degree 5: 0.79), one multiply-add fewer. P by Horner, not Estrin (sb_vm_poly4): one multiply fewer
   (no a^4), and the staged loop is bound by the two multiply-add pipes while its ring hides the longer chain (avx2,
   64 K floats: 1.5% faster; tools/ulp_exhaustive.py: the same maximum, 1.362 ulp at 0.630005956 in the
   exponential's range). */
SB_INLINE vf sb_vm_tanh_small(vf a)
{
    vf a2 = a * a;
    vf p = vfmadd(vset1(-0.0057249353267252445f), a2, vset1(0.02065912075340748f));
    p = vfmadd(p, a2, vset1(-0.053746771067380905f));
    p = vfmadd(p, a2, vset1(0.13331542909145355f));
    p = vfmadd(p, a2, vset1(-0.3333328664302826f));
    return vfmadd(a * a2, p, a);
}

/* Two stages: the polynomial and the exponential; then the quotient and the choice. */
typedef struct {
    vf e, small; /* exp(2 min(|x|, 10)), tanh(|x|) by the polynomial */
} vtanh_state;

SB_INLINE vtanh_state vtanh_start(vf x)
{
    vf ax = vabs(x);
    vtanh_state s;
    s.small = sb_vm_tanh_small(ax);
    if (sb_vm_all(ax < vset1(0.625f))) {
        s.e = s.small;                                       /* every lane takes the polynomial */
        return s;
    }
    /* The min turns NaN into 10 (its second operand), so the exponential of 2|x| <= 20 needs no range check; NaN
       lanes take the polynomial, which keeps them NaN. */
    vf t, a2 = vset1(2.0f) * vmin(ax, vset1(10.0f));
    vf n = sb_vm_exp_n(a2, &t, 0);
    /* One rounded ln2 (1.9e-9 off) where exp takes two parts: |n| <= 29 here, so r is off by at most 5.5e-8 (one
       ulp of e), and at n = 2, next to the polynomial's end, where tanh's error peaks and e's reaches it a third, by
       3.8e-9 (0.02 ulp of tanh); one multiply-add fewer. S = 1: tanh's error peaks where it depends most on e, and
       the rounded 2^(j/8) of S = 8 took its maximum from 1.362 to 1.409 ulp for 1-2%. */
    s.e = sb_vm_exp_scale(sb_vm_exp_small(vfmadd(n, vset1(-0.693147182f), a2), t, 0), t, 0);
    return s;
}

SB_INLINE vf vtanh_finish(vf x, vtanh_state s)
{
    vi is_large = vabs(x) >= vset1(0.625f);                /* false for NaN */
    vf y = vselect(is_large, vset1(1.0f) - vset1(2.0f) / (s.e + vset1(1.0f)), s.small);
    /* y >= +0 (NaN from |x|), so x's sign is one or; tanh(-0) == -0 comes with it */
    return sb_vm_or_sign(y, x);
}

SB_INLINE vf vtanh(vf x) { return vtanh_finish(x, vtanh_start(x)); }
#endif

/* The lanes of y where |x| > 6000 replaced by the C library's sinf/cosf. Out of line and cold: a call inlined into a
   kernel's loop makes the compiler keep the loop's constants on the stack (every vector register is caller-saved). */
static __attribute__((noinline, cold)) vf sb_vm_sincos_big(vf x, vf y, int offset)
{
    for (int i = 0; i < SB_W; ++i)
        if (fabsf(x[i]) > 6000.0f)
            y[i] = offset ? cosf(x[i]) : sinf(x[i]);
    return y;
}

/* sin(x) for quadrant offset 0, cos(x) = sin(x + pi/2) for offset 1: x = n*pi/2 + r, |r| <= pi/4. Two stages (see
   "Two stages" above): the reduction, then the polynomial. */
typedef struct {
    vf r, rl; /* the reduced argument in float-float */
    vi q;     /* its quadrant n + offset in the low bits, above them those of 1.5 * 2^23 (the rounding's magic) */
} sb_vm_sincos_state;

SB_INLINE sb_vm_sincos_state sb_vm_sincos_start(vf x, int offset)
{
    /* sin on v = |x| (it is odd, and the arithmetic below is symmetric, so the magnitudes are those of x): x's sign
       then joins the quadrant's in one bit operation, and sin(-0) == -0 comes with it. cos on x itself (measured
       3% faster than on |x|). */
    vf v = offset ? x : vabs(x);
    /* t = v * 2/pi + 1.5 * 2^23 + offset, rounded to an integer: n = t - magic is v * 2/pi rounded to the nearest
       integer (a tie can go either way, which leaves |r| the same), and t's low bits are the quadrant n + offset */
    const vf magic = vset1(12582912.0f + offset);
    vf t = vfmadd(v, vset1(0.636619772367581343f), magic);
    vf n = t - magic;
    /* pi/2 = C1 + C2 + C3 + C45; C1..C3 have <= 12 significant bits, so n*Ci is exact for |n| < 2^12, and
       r_hi = v - n*C1 - n*C2 is exact too (a multiple of ulp(v) below 2). r + rl carries the reduced argument in
       float-float so that no rounding of the reduction reaches the result. C45, the rest in one float (in two it
       costs a multiply and an add more), errs by 8.3e-20: at most 0.034 ulp of r over every |x| <= 6000 (the
       smallest |r| there is 4.2e-9, at x = 252.898209). */
    vf rh = vfmadd(n, vset1(-1.5703125f), v);
    rh = vfmadd(n, vset1(-0.0004837512969970703f), rh);
    vf nc3 = n * vset1(7.549533620476723e-08f);
    sb_vm_sincos_state s;
    s.r = rh - nc3;
    s.rl = (rh - s.r) - nc3;
    s.rl = vfmadd(n, vset1(-2.563344e-12f), s.rl);
    s.q = vbits(t);
    return s;
}

SB_INLINE vf sb_vm_sincos_finish(vf x, sb_vm_sincos_state s, int offset)
{
    vf r = s.r, rl = s.rl, r2 = r * r;
    /* Each lane needs one of the two polynomials, sin(r + rl) ~ r + (r^3 S(r^2) + rl) or
       cos(r + rl) ~ 1 + (r^4 C(r^2) + (-r^2/2 - r*rl)): one evaluation whose coefficients, powers and terms are
       chosen per lane (blends) does the multiply-adds of one, with the roundings of each. */
#if SB_VM_AVX512
    __mmask16 odd = _mm512_test_epi32_mask((__m512i)s.q, _mm512_set1_epi32(1));
#define SB_VM_PICK(c, s) (vf)_mm512_mask_blend_ps(odd, (__m512)(s), (__m512)(c))
#elif SB_VM_AVX2
    vi odd = (vi)((vu)s.q << 31);
#define SB_VM_PICK(c, s) sb_vm_blend_on_sign(odd, (c), (s))
#else
    vi odd = (s.q & 1) != 0;
#define SB_VM_PICK(c, s) vselect(odd, (c), (s))
#endif
    vf p = SB_VM_PICK(vset1(2.4433154976577498e-05f), vset1(-0.00019515282474458218f));
    p = vfmadd(p, r2, SB_VM_PICK(vset1(-0.0013887316454201937f), vset1(0.00833216030150652f)));
    p = vfmadd(p, r2, SB_VM_PICK(vset1(0.04166664555668831f), vset1(-0.16666655242443085f)));
    vf power = r2 * SB_VM_PICK(r2, r);
    vf low = SB_VM_PICK(vfmadd(r2, vset1(-0.5f), -(r * rl)), rl);
    vf y = SB_VM_PICK(vset1(1.0f), r) + vfmadd(power, p, low);
#undef SB_VM_PICK
    vi sign = (vi)((vu)s.q << 30);                        /* bit 1 of q: the quadrants where the sign flips */
    if (!offset)
        sign ^= vbits(x);
    y = vfloat_bits(vbits(y) ^ (sign & vset1i((int32_t)0x80000000u)));
    /* sin tests t = magic + n from v = |x| instead of |x|, which it would compute again: every |x| > 6000 has
       n >= 3820 (|x| * 2/pi > 3819.72); NaN compares false, as before. cos has n of x itself, of either sign. */
    int big = offset ? sb_vm_any_gt(vabs(x), vset1(6000.0f)) : sb_vm_any_gt(vfloat_bits(s.q), vset1(12586731.0f));
    if (__builtin_expect(big, 0))
        y = sb_vm_sincos_big(x, y, offset);
    return y;
}

typedef sb_vm_sincos_state vsin_state, vcos_state;
SB_INLINE sb_vm_sincos_state vsin_start(vf x) { return sb_vm_sincos_start(x, 0); }
SB_INLINE vf vsin_finish(vf x, sb_vm_sincos_state s) { return sb_vm_sincos_finish(x, s, 0); }
SB_INLINE sb_vm_sincos_state vcos_start(vf x) { return sb_vm_sincos_start(x, 1); }
SB_INLINE vf vcos_finish(vf x, sb_vm_sincos_state s) { return sb_vm_sincos_finish(x, s, 1); }
SB_INLINE vf vsin(vf x) { return vsin_finish(x, vsin_start(x)); }
SB_INLINE vf vcos(vf x) { return vcos_finish(x, vcos_start(x)); }

#endif /* SB_VMATH_H */
