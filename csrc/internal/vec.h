/*
 * vec.h: the vector vocabulary that kernel sources are written in, once for every ISA.
 *
 * Arithmetic uses GCC/Clang vector extensions, so the compiler emits SSE, AVX2 or AVX-512 code from the same source
 * (SB_W lanes: 4, 8 or 16 floats). Intrinsics appear only where the extensions have no spelling (fused multiply-add,
 * rounding, square root), each with a portable fallback. Lane-wise results never depend on the lane count, so a
 * tail computed through a partial load/store gets exactly the semantics of the body.
 */
#ifndef SB_VEC_H
#define SB_VEC_H

#include <stdint.h>
#include <string.h>
#include <math.h>

#if SB_ISA_AT_LEAST(3)
#define SB_W 16
#elif SB_ISA_AT_LEAST(2)
#define SB_W 8
#else
#define SB_W 4
#endif

typedef float vf __attribute__((vector_size(SB_W * 4)));
typedef int32_t vi __attribute__((vector_size(SB_W * 4)));
typedef uint32_t vu __attribute__((vector_size(SB_W * 4)));
typedef uint8_t vb __attribute__((vector_size(SB_W * 4)));
typedef float vf_mem __attribute__((vector_size(SB_W * 4), aligned(4), may_alias));
typedef int32_t vi_mem __attribute__((vector_size(SB_W * 4), aligned(4), may_alias));
typedef uint8_t vb_mem __attribute__((vector_size(SB_W * 4), aligned(1), may_alias));

#define SB_INLINE static inline __attribute__((always_inline))

/* Loads and stores, unaligned. The _n forms touch only the first n lanes of memory (n < SB_W); other lanes are 0. */
SB_INLINE vf vload(const float * p) { return *(const vf_mem *)p; }
SB_INLINE void vstore(float * p, vf v) { *(vf_mem *)p = v; }
#if SB_ISA_AT_LEAST(3)
/* Masked: lanes outside the mask are neither read nor written (no fault either), and a masked move costs about
   what a full one does, where a variable-length memcpy through the stack costs a call and a store-forwarding stall
   (measured: 3-7% on the MobileNet 1x1 expand convolution at avx512bw, whose 144 channels end in a partial vector). */
SB_INLINE vf vload_n(const float * p, size_t n) { return (vf)_mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1), p); }
SB_INLINE void vstore_n(float * p, vf v, size_t n) { _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1), (__m512)v); }
#else
SB_INLINE vf vload_n(const float * p, size_t n) { vf v = {0}; memcpy(&v, p, n * sizeof(float)); return v; }
SB_INLINE void vstore_n(float * p, vf v, size_t n) { memcpy(p, &v, n * sizeof(float)); }
#endif
SB_INLINE vi vloadi(const int32_t * p) { return *(const vi_mem *)p; }
SB_INLINE void vstorei(int32_t * p, vi v) { *(vi_mem *)p = v; }
SB_INLINE vb vloadb(const uint8_t * p) { return *(const vb_mem *)p; }
SB_INLINE void vstoreb(uint8_t * p, vb v) { *(vb_mem *)p = v; }

/* Broadcasts. Not (vf){0} + x: that costs an add and turns -0.0 into +0.0. */
SB_INLINE vf vset1(float x)
{
#if SB_ISA_AT_LEAST(3)
    return (vf)_mm512_set1_ps(x);
#elif SB_ISA_AT_LEAST(2)
    return (vf)_mm256_set1_ps(x);
#elif defined(__SSE2__)
    return (vf)_mm_set1_ps(x);
#else
    vf r;
    for (int i = 0; i < SB_W; ++i) r[i] = x;
    return r;
#endif
}

SB_INLINE vi vset1i(int32_t x)
{
#if SB_ISA_AT_LEAST(3)
    return (vi)_mm512_set1_epi32(x);
#elif SB_ISA_AT_LEAST(2)
    return (vi)_mm256_set1_epi32(x);
#elif defined(__SSE2__)
    return (vi)_mm_set1_epi32(x);
#else
    vi r;
    for (int i = 0; i < SB_W; ++i) r[i] = x;
    return r;
#endif
}
SB_INLINE vi vbits(vf v) { return (vi)v; }
SB_INLINE vf vfloat_bits(vi v) { return (vf)v; }

/* mask ? a : b, where mask lanes are all ones or all zeros (the result of a vector comparison). */
SB_INLINE vf vselect(vi mask, vf a, vf b) { return (vf)((mask & (vi)a) | (~mask & (vi)b)); }
SB_INLINE vi vselecti(vi mask, vi a, vi b) { return (mask & a) | (~mask & b); }

/* Upstream's Max/Min: a > b ? a : b and a < b ? a : b, so a NaN in either operand yields b (like maxps/minps). */
SB_INLINE vf vmax(vf a, vf b) { return vselect(a > b, a, b); }
SB_INLINE vf vmin(vf a, vf b) { return vselect(a < b, a, b); }

SB_INLINE vf vabs(vf a) { return (vf)((vi)a & vset1i(0x7fffffff)); }

/* a*b + c: one rounding where the ISA has FMA (avx2 and later), two elsewhere. */
SB_INLINE vf vfmadd(vf a, vf b, vf c)
{
#if SB_ISA_AT_LEAST(3)
    return (vf)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#elif SB_ISA_AT_LEAST(2)
    return (vf)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#else
    return a * b + c;
#endif
}

SB_INLINE vf vsqrt(vf a)
{
#if SB_ISA_AT_LEAST(3)
    return (vf)_mm512_sqrt_ps((__m512)a);
#elif SB_ISA_AT_LEAST(2)
    return (vf)_mm256_sqrt_ps((__m256)a);
#elif defined(__SSE2__)
    return (vf)_mm_sqrt_ps((__m128)a);
#else
    vf r;
    for (int i = 0; i < SB_W; ++i) r[i] = sqrtf(a[i]);
    return r;
#endif
}

/* Rounding to integral values in float, exact for every input (|x| >= 2^23, NaN and Inf are returned unchanged).
   mode: 0 nearest-even, 1 floor, 2 ceil, 3 trunc. */
#define SB_ROUND_NEAREST 0
#define SB_ROUND_FLOOR 1
#define SB_ROUND_CEIL 2
#define SB_ROUND_TRUNC 3

SB_INLINE vf vround_mode(vf a, int mode)
{
#if SB_ISA_AT_LEAST(3)
    switch (mode) {
    case 0: return (vf)_mm512_roundscale_ps((__m512)a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    case 1: return (vf)_mm512_roundscale_ps((__m512)a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    case 2: return (vf)_mm512_roundscale_ps((__m512)a, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    default: return (vf)_mm512_roundscale_ps((__m512)a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    }
#elif SB_ISA_AT_LEAST(2)
    switch (mode) {
    case 0: return (vf)_mm256_round_ps((__m256)a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    case 1: return (vf)_mm256_round_ps((__m256)a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    case 2: return (vf)_mm256_round_ps((__m256)a, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    default: return (vf)_mm256_round_ps((__m256)a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    }
#elif SB_ISA_AT_LEAST(1)
    switch (mode) {
    case 0: return (vf)_mm_round_ps((__m128)a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    case 1: return (vf)_mm_round_ps((__m128)a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    case 2: return (vf)_mm_round_ps((__m128)a, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    default: return (vf)_mm_round_ps((__m128)a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    }
#else
    /* Portable: truncate through int32 where |a| < 2^23 (every such float is exactly representable), then fix
       the direction; larger magnitudes, NaN and Inf are already integral and pass through. */
    const vf big = vset1(8388608.0f);
    vi small = vabs(a) < big;
    vf t = __builtin_convertvector(__builtin_convertvector(vselect(small, a, vset1(0.0f)), vi), vf);
    vf r;
    switch (mode) {
    case 0: {
        vf d = a - t; /* in (-1, 1), exact */
        vf half = vset1(0.5f), one = vset1(1.0f);
        vi odd = (__builtin_convertvector(t, vi) & 1) != 0;
        vi up = (d > half) | ((d == half) & odd);
        vi down = (d < -half) | ((d == -half) & odd);
        r = vselect(up, t + one, vselect(down, t - one, t));
        break;
    }
    case 1: r = vselect(t > a, t - vset1(1.0f), t); break;
    case 2: r = vselect(t < a, t + vset1(1.0f), t); break;
    default: r = t; break;
    }
    /* Keep the sign of zero results (-0.3 -> -0.0), as the hardware instructions do. */
    r = (vf)((vi)r | ((vi)a & vset1i((int32_t)0x80000000u)));
    return vselect(small, r, a);
#endif
}

SB_INLINE float vreduce_add(vf v)
{
    float s = 0.0f;
    for (int i = 0; i < SB_W; ++i) s += v[i];
    return s;
}

SB_INLINE float vreduce_max(vf v)
{
    float m = v[0];
    for (int i = 1; i < SB_W; ++i) m = m > v[i] ? m : v[i];
    return m;
}

/* Every other lane of the 2*SB_W floats at p, from lane 0 (vload_even) or lane 1 (vload_odd): the inputs of SB_W
   outputs at stride 2 (convolution). Reads p[0 .. 2*SB_W - 1]. At avx2, one in-lane shuffle and one swap of the
   middle 64-bit quarters, cheaper than the generic cross-lane permutes. */
#if SB_W == 8 && SB_ISA_AT_LEAST(2) && !SB_ISA_AT_LEAST(3)
#define SB_EVERY_OTHER(a, b, o) ((vf)_mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd( \
    _mm256_shuffle_ps((__m256)(a), (__m256)(b), (o) ? 0xDD : 0x88)), 0xD8)))
#elif SB_W == 4
#define SB_EVERY_OTHER(a, b, o) __builtin_shufflevector(a, b, o, 2 + o, 4 + o, 6 + o)
#elif SB_W == 8
#define SB_EVERY_OTHER(a, b, o) __builtin_shufflevector(a, b, o, 2 + o, 4 + o, 6 + o, 8 + o, 10 + o, 12 + o, 14 + o)
#else
#define SB_EVERY_OTHER(a, b, o) __builtin_shufflevector(a, b, o, 2 + o, 4 + o, 6 + o, 8 + o, 10 + o, 12 + o, 14 + o, \
    16 + o, 18 + o, 20 + o, 22 + o, 24 + o, 26 + o, 28 + o, 30 + o)
#endif
SB_INLINE vf vload_even(const float * p) { return SB_EVERY_OTHER(vload(p), vload(p + SB_W), 0); }
SB_INLINE vf vload_odd(const float * p) { return SB_EVERY_OTHER(vload(p), vload(p + SB_W), 1); }

#endif /* SB_VEC_H */
