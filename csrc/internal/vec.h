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

#include "internal/bf16.h"

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
#elif SB_ISA_AT_LEAST(2)
/* Masked too (vmaskmovps: no fault on the lanes left out), without the call and the trip through the stack. */
SB_INLINE __m256i sb_lanes_below(size_t n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
SB_INLINE vf vload_n(const float * p, size_t n) { return (vf)_mm256_maskload_ps(p, sb_lanes_below(n)); }
SB_INLINE void vstore_n(float * p, vf v, size_t n) { _mm256_maskstore_ps(p, sb_lanes_below(n), (__m256)v); }
#else
SB_INLINE vf vload_n(const float * p, size_t n) { vf v = {0}; memcpy(&v, p, n * sizeof(float)); return v; }
SB_INLINE void vstore_n(float * p, vf v, size_t n) { memcpy(p, &v, n * sizeof(float)); }
#endif

/* vkeep(v): v (any vector type), held in a register. GCC folds the load behind a vector into each instruction
   that reads it as a memory operand, so a vector read by k instructions is loaded k times, and a load that straddles
   two cache lines (as most vectors of a 16-byte-aligned NumPy array do at AVX2 and AVX-512) is split each time:
   kernels that load a vector once for several operations wrap it in vkeep (unary round at 64K floats: 0.052 ->
   0.034 ns an element; the NHWC depthwise 3x3 block, whose column loads each feed three multiply-adds: 1.20-1.24x
   at avx512bw). An empty asm, no instruction; not in the emulation build, whose 512-bit vectors have no register. */
#if (defined(__x86_64__) || defined(__i386__)) && !defined(SB_EMULATED_UNIT)
#define vkeep(v) __extension__({ __typeof__(v) sb_kept_ = (v); __asm__("" : "+v"(sb_kept_)); sb_kept_; })
#else
#define vkeep(v) (v)
#endif
/* Non-temporal stores for an output written once per call and too big for the cache (sb_streaming_bytes): the
   line goes to memory without first being read into the cache. vstream needs p aligned to SB_W floats
   (vstream_head(p) floats of an output come before that); vstream_fence() after the last one orders them before
   the call returns. The emulation build's 16-lane units store plainly (there are no 512-bit registers). */
SB_INLINE void vstream(float * p, vf v)
{
#if defined(SB_EMULATED_UNIT)
    vstore(p, v);
#elif SB_ISA_AT_LEAST(3)
    _mm512_stream_ps(p, (__m512)v);
#elif SB_ISA_AT_LEAST(2)
    _mm256_stream_ps(p, (__m256)v);
#elif defined(__SSE2__)
    _mm_stream_ps(p, (__m128)v);
#else
    vstore(p, v);
#endif
}

SB_INLINE void vstream_fence(void)
{
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

/* How many floats from p to the first address vstream takes (0 .. SB_W - 1); SB_W when p is not float-aligned. */
SB_INLINE size_t vstream_head(const float * p)
{
    const uintptr_t a = (uintptr_t)p, bytes = SB_W * sizeof(float);
    return a % sizeof(float) ? SB_W : (bytes - a % bytes) % bytes / sizeof(float);
}

/* 1 if streaming to dst (vstream from its first aligned float) while reading src in step would stall the loads: a
   load that crosses a 32-byte block, issued a few vectors after a streamed store whose address is the same in its
   low 12 bits (dst 80 to 336 bytes past src, modulo 4096), waits for that store to leave the write-combining buffer.
   Measured on Zen 4 (EPYC 9004), exp of 4M floats, streamed / stored plainly: 1.36-2.07 / 0.88-0.99 ms at avx512bw,
   up to 3.9 / 1.06 ms at avx2; at every other placement streaming was as fast or faster (abs: 1.2x). The window
   tested here, (0, 512] bytes, is wider than the one measured, for cores that run further ahead. */
SB_INLINE int vstream_stalls(const float * src, const float * dst)
{
    const uintptr_t block = SB_W * sizeof(float) < 32 ? SB_W * sizeof(float) : 32; /* what a load moves at once */
    const uintptr_t ahead = ((uintptr_t)dst - (uintptr_t)src) % 4096;
    return ((uintptr_t)src - (uintptr_t)dst) % block != 0 && ahead != 0 && ahead <= 512;
}

/* 1 if a and b lie at the same offset within a vector: loops aligned to one are aligned to the other too. */
SB_INLINE int vsame_offset(const float * a, const float * b)
{
    return ((uintptr_t)a - (uintptr_t)b) % (SB_W * sizeof(float)) == 0;
}

SB_INLINE vi vloadi(const int32_t * p) { return *(const vi_mem *)p; }
SB_INLINE void vstorei(int32_t * p, vi v) { *(vi_mem *)p = v; }
SB_INLINE vb vloadb(const uint8_t * p) { return *(const vb_mem *)p; }
SB_INLINE void vstoreb(uint8_t * p, vb v) { *(vb_mem *)p = v; }
/* The first `bytes` of p (a constant: 4, 8 or 16) in a vector's low bytes, the others 0, and a vector's first `bytes`
   stored: one movd, movq or movdqu each (a 128-bit move zeroes the register's upper bits), where vload_n/vstore_n
   take a mask or a call, and GCC spells a fixed-size memcpy into a wider vector as stores and a stalled reload. */
#if defined(__SSE2__) && !defined(SB_EMULATED_UNIT)
SB_INLINE vb vload_bytes(const void * p, size_t bytes)
{
    __m128i x;
    if (bytes == 4) {
        int32_t v;
        memcpy(&v, p, 4);
        x = _mm_cvtsi32_si128(v);
    } else if (bytes == 8)
        x = _mm_loadl_epi64((const __m128i *)p);
    else
        x = _mm_loadu_si128((const __m128i *)p);
#if SB_W == 16
    return (vb)_mm512_zextsi128_si512(x);
#elif SB_W == 8
    return (vb)_mm256_zextsi128_si256(x);
#else
    return (vb)x;
#endif
}
SB_INLINE void vstore_bytes(void * p, vb v, size_t bytes)
{
#if SB_W == 16
    const __m128i x = _mm512_castsi512_si128((__m512i)v);
#elif SB_W == 8
    const __m128i x = _mm256_castsi256_si128((__m256i)v);
#else
    const __m128i x = (__m128i)v;
#endif
    if (bytes == 4) {
        const int32_t v32 = _mm_cvtsi128_si32(x);
        memcpy(p, &v32, 4);
    } else if (bytes == 8)
        _mm_storel_epi64((__m128i *)p, x);
    else
        _mm_storeu_si128((__m128i *)p, x);
}
#else
SB_INLINE vb vload_bytes(const void * p, size_t bytes) { vb v = {0}; memcpy(&v, p, bytes); return v; }
SB_INLINE void vstore_bytes(void * p, vb v, size_t bytes) { memcpy(p, &v, bytes); }
#endif

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

/* Upstream's Max/Min: a > b ? a : b and a < b ? a : b, so a NaN in either operand yields b, and so does a pair of
   zeros: exactly what maxps/minps compute (GCC does not find them from the comparison-and-select spelling). */
SB_INLINE vf vmax(vf a, vf b)
{
#if SB_ISA_AT_LEAST(3)
    return (vf)_mm512_max_ps((__m512)a, (__m512)b);
#elif SB_ISA_AT_LEAST(2)
    return (vf)_mm256_max_ps((__m256)a, (__m256)b);
#elif defined(__SSE2__)
    return (vf)_mm_max_ps((__m128)a, (__m128)b);
#else
    return vselect(a > b, a, b);
#endif
}

SB_INLINE vf vmin(vf a, vf b)
{
#if SB_ISA_AT_LEAST(3)
    return (vf)_mm512_min_ps((__m512)a, (__m512)b);
#elif SB_ISA_AT_LEAST(2)
    return (vf)_mm256_min_ps((__m256)a, (__m256)b);
#elif defined(__SSE2__)
    return (vf)_mm_min_ps((__m128)a, (__m128)b);
#else
    return vselect(a < b, a, b);
#endif
}

/* Unsigned bytes: the plain maximum. */
SB_INLINE vb vmaxb(vb a, vb b)
{
#if SB_ISA_AT_LEAST(3)
    return (vb)_mm512_max_epu8((__m512i)a, (__m512i)b);
#elif SB_ISA_AT_LEAST(2)
    return (vb)_mm256_max_epu8((__m256i)a, (__m256i)b);
#elif defined(__SSE2__)
    return (vb)_mm_max_epu8((__m128i)a, (__m128i)b);
#else
    vb m = (vb)(a > b);
    return (a & m) | (b & ~m);
#endif
}

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

/* The sum of v's lanes by halves: log2(SB_W) dependent adds where a left-to-right sum (the only order GCC may take
   for it without -ffast-math) takes SB_W, which was most of a 4 x 16 inner product's call (21 ns, 64 cycles of
   latency at AVX-512). Its callers' tolerances allow any order (the inner products, softmax's denominator). */
SB_INLINE float vreduce_add(vf v)
{
#if SB_W == 16
    v += __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15);
    v += __builtin_shufflevector(v, v, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7);
    v += __builtin_shufflevector(v, v, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
    v += __builtin_shufflevector(v, v, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
#elif SB_W == 8
    v += __builtin_shufflevector(v, v, 4, 5, 6, 7, 4, 5, 6, 7);
    v += __builtin_shufflevector(v, v, 2, 3, 2, 3, 2, 3, 2, 3);
    v += __builtin_shufflevector(v, v, 1, 1, 1, 1, 1, 1, 1, 1);
#else
    v += __builtin_shufflevector(v, v, 2, 3, 2, 3);
    v += __builtin_shufflevector(v, v, 1, 1, 1, 1);
#endif
    return v[0];
}

/* The lane sums of a, b, c and d in that order, each by the tree of hadd: within each 128-bit lane (0 + 1) + (2 + 3),
   then the lanes added, low first (and at 16 lanes the two 256-bit halves before that). Four at once: 3 hadds and
   one add where four vreduce_add take 24 instructions (a 4 x 16 inner-product layer: 11.8 -> 10.4 ns at avx2). */
SB_INLINE void vreduce_add4(vf a, vf b, vf c, vf d, float sums[4])
{
#if SB_ISA_AT_LEAST(1) && SB_W >= 8
#if SB_W == 16
#define SB_FOLD(v) ((__m256)(__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) \
                            + __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15)))
    __m256 a8 = SB_FOLD(a), b8 = SB_FOLD(b), c8 = SB_FOLD(c), d8 = SB_FOLD(d);
#undef SB_FOLD
#else
    __m256 a8 = (__m256)a, b8 = (__m256)b, c8 = (__m256)c, d8 = (__m256)d;
#endif
    __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a8, b8), _mm256_hadd_ps(c8, d8));
    _mm_storeu_ps(sums, _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
#elif SB_ISA_AT_LEAST(1)
    _mm_storeu_ps(sums, _mm_hadd_ps(_mm_hadd_ps((__m128)a, (__m128)b), _mm_hadd_ps((__m128)c, (__m128)d)));
#else
    sums[0] = vreduce_add(a), sums[1] = vreduce_add(b), sums[2] = vreduce_add(c), sums[3] = vreduce_add(d);
#endif
}

SB_INLINE float vreduce_max(vf v)
{
    float m = v[0];
    for (int i = 1; i < SB_W; ++i) m = m > v[i] ? m : v[i];
    return m;
}

/* bf16: SB_W lanes of uint16 (the storage), converted exactly to vf and back with upstream's rounding. */
typedef uint16_t vh __attribute__((vector_size(SB_W * 2)));
typedef uint16_t vh_mem __attribute__((vector_size(SB_W * 2), aligned(2), may_alias));

SB_INLINE vh vloadh(const uint16_t * p) { return *(const vh_mem *)p; }
SB_INLINE void vstoreh(uint16_t * p, vh v) { *(vh_mem *)p = v; }
/* The first n < SB_W halves only, as vload_n/vstore_n: masked at AVX-512 (AVX512BW/VL's 16-bit masks); at AVX2 the
   whole pairs by a masked 32-bit move and an odd last half by itself (no 16-bit mask there); memcpy below. */
#if SB_ISA_AT_LEAST(3)
SB_INLINE vh vloadh_n(const uint16_t * p, size_t n)
{
    return (vh)_mm256_maskz_loadu_epi16((__mmask16)((1u << n) - 1), p);
}
SB_INLINE void vstoreh_n(uint16_t * p, vh v, size_t n)
{
    _mm256_mask_storeu_epi16(p, (__mmask16)((1u << n) - 1), (__m256i)v);
}
#elif SB_ISA_AT_LEAST(2)
SB_INLINE __m128i sb_pairs_below(size_t n)
{
    return _mm_cmpgt_epi32(_mm_set1_epi32((int)(n / 2)), _mm_setr_epi32(0, 1, 2, 3));
}
SB_INLINE vh vloadh_n(const uint16_t * p, size_t n)
{
    vh v = (vh)_mm_maskload_epi32((const int *)p, sb_pairs_below(n));
    if (n & 1)
        v[n - 1] = p[n - 1];
    return v;
}
SB_INLINE void vstoreh_n(uint16_t * p, vh v, size_t n)
{
    _mm_maskstore_epi32((int *)p, sb_pairs_below(n), (__m128i)v);
    if (n & 1)
        p[n - 1] = v[n - 1];
}
#else
SB_INLINE vh vloadh_n(const uint16_t * p, size_t n) { vh v = {0}; memcpy(&v, p, n * sizeof(uint16_t)); return v; }
SB_INLINE void vstoreh_n(uint16_t * p, vh v, size_t n) { memcpy(p, &v, n * sizeof(uint16_t)); }
#endif

/* bf16 -> float32, exact: the bits shifted into the high half (spelled as intrinsics: one widening move and one
   shift, where GCC's code for the generic spelling is longer). */
SB_INLINE vf vbf16_to_f32(vh h)
{
#if SB_ISA_AT_LEAST(3)
    return (vf)_mm512_slli_epi32(_mm512_cvtepu16_epi32((__m256i)h), 16);
#elif SB_ISA_AT_LEAST(2)
    return (vf)_mm256_slli_epi32(_mm256_cvtepu16_epi32((__m128i)h), 16);
#else
    return (vf)(__builtin_convertvector(h, vu) << 16);
#endif
}

/* float32 -> bf16, round to nearest even on the bit pattern (internal/bf16.h). */
SB_INLINE vh vf32_to_bf16(vf f) { return __builtin_convertvector(SB_BF16_ROUND((vu)f), vh); }

/* Stride-2 deinterleave: the even or odd lanes of the concatenation a:b of two vectors of `lanes` lanes (a literal:
   4, 8, 16, 32 or 64). SB_EVEN/SB_ODD give them in order. SB_EVENP/SB_ODDP give them in the lane order that x86 gets
   from one in-lane shuffle (shufps): 128-bit lane i holds outputs 2i, 2i+1 (from a) and L/2+2i, L/2+2i+1 (from b);
   SB_UNPERM restores the order, so a loop that folds many such vectors lane-wise restores it once, at its store.
   Byte vectors (32 and 64 lanes) use the natural order. */
#define SB_EVEN_IDX_4 0, 2, 4, 6
#define SB_EVEN_IDX_8 0, 2, 4, 6, 8, 10, 12, 14
#define SB_EVEN_IDX_16 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30
#define SB_EVEN_IDX_32 SB_EVEN_IDX_16, 32, 34, 36, 38, 40, 42, 44, 46, 48, 50, 52, 54, 56, 58, 60, 62
#define SB_EVEN_IDX_64 SB_EVEN_IDX_32, 64, 66, 68, 70, 72, 74, 76, 78, 80, 82, 84, 86, 88, 90, 92, 94, 96, 98, 100, \
    102, 104, 106, 108, 110, 112, 114, 116, 118, 120, 122, 124, 126
#define SB_ODD_IDX_4 1, 3, 5, 7
#define SB_ODD_IDX_8 1, 3, 5, 7, 9, 11, 13, 15
#define SB_ODD_IDX_16 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31
#define SB_ODD_IDX_32 SB_ODD_IDX_16, 33, 35, 37, 39, 41, 43, 45, 47, 49, 51, 53, 55, 57, 59, 61, 63
#define SB_ODD_IDX_64 SB_ODD_IDX_32, 65, 67, 69, 71, 73, 75, 77, 79, 81, 83, 85, 87, 89, 91, 93, 95, 97, 99, 101, \
    103, 105, 107, 109, 111, 113, 115, 117, 119, 121, 123, 125, 127
#define SB_EVENP_IDX_4 SB_EVEN_IDX_4
#define SB_ODDP_IDX_4 SB_ODD_IDX_4
#define SB_EVENP_IDX_8 0, 2, 8, 10, 4, 6, 12, 14
#define SB_ODDP_IDX_8 1, 3, 9, 11, 5, 7, 13, 15
#define SB_EVENP_IDX_16 0, 2, 16, 18, 4, 6, 20, 22, 8, 10, 24, 26, 12, 14, 28, 30
#define SB_ODDP_IDX_16 1, 3, 17, 19, 5, 7, 21, 23, 9, 11, 25, 27, 13, 15, 29, 31
#define SB_EVENP_IDX_32 SB_EVEN_IDX_32
#define SB_ODDP_IDX_32 SB_ODD_IDX_32
#define SB_EVENP_IDX_64 SB_EVEN_IDX_64
#define SB_ODDP_IDX_64 SB_ODD_IDX_64
#define SB_UNPERM_4(v) (v)
#define SB_UNPERM_8(v) __builtin_shufflevector(v, v, 0, 1, 4, 5, 2, 3, 6, 7)
#define SB_UNPERM_16(v) __builtin_shufflevector(v, v, 0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15)
#define SB_UNPERM_32(v) (v)
#define SB_UNPERM_64(v) (v)
#define SB_EVENP(a, b, lanes) __builtin_shufflevector(a, b, SB_CAT2(SB_EVENP_IDX_, lanes))
#define SB_ODDP(a, b, lanes) __builtin_shufflevector(a, b, SB_CAT2(SB_ODDP_IDX_, lanes))
#define SB_UNPERM(v, lanes) SB_CAT2(SB_UNPERM_, lanes)(v)
#define SB_EVEN(a, b, lanes) __builtin_shufflevector(a, b, SB_CAT2(SB_EVEN_IDX_, lanes))
#define SB_ODD(a, b, lanes) __builtin_shufflevector(a, b, SB_CAT2(SB_ODD_IDX_, lanes))

/* Every other float from p, from lane 0 or 1: the inputs of SB_W outputs at stride 2. Reads p[0 .. 2*SB_W - 1].
   At avx2, SB_UNPERM(SB_EVENP(...)) spelled as intrinsics: from the generic spelling of either form GCC emits
   slower cross-lane permutes. */
#if SB_W == 8 && SB_ISA_AT_LEAST(2) && !SB_ISA_AT_LEAST(3)
#define SB_EVERY_OTHER_AVX2_(p, imm) ((vf)_mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd( \
    _mm256_shuffle_ps((__m256)vload(p), (__m256)vload((p) + SB_W), (imm))), 0xD8)))
SB_INLINE vf vload_even(const float * p) { return SB_EVERY_OTHER_AVX2_(p, 0x88); }
SB_INLINE vf vload_odd(const float * p) { return SB_EVERY_OTHER_AVX2_(p, 0xDD); }
#else
SB_INLINE vf vload_even(const float * p) { return SB_EVEN(vload(p), vload(p + SB_W), SB_W); }
SB_INLINE vf vload_odd(const float * p) { return SB_ODD(vload(p), vload(p + SB_W), SB_W); }
#endif

/* bf16 in pairs: 2*SB_W elements as SB_W 32-bit words, element 2i in the low half of word i and 2i+1 in the high
   half. Each half widens exactly to float32 with one shift or one mask and no lane crossing, where vbf16_to_f32
   needs a widening move per SB_W elements; vstoreh_pairs joins them back. Its narrowing truncates: exact only for
   floats that are bf16 values already (the low 16 bits zero), such as a maximum of widened bf16 elements. */
typedef uint32_t vu_mem2 __attribute__((vector_size(SB_W * 4), aligned(2), may_alias));
SB_INLINE vu vloadh_pairs(const uint16_t * p) { return *(const vu_mem2 *)p; }
SB_INLINE vf vbf16_even(vu w) { return (vf)(w << 16); }
SB_INLINE vf vbf16_odd(vu w) { return (vf)(w & 0xFFFF0000u); }
SB_INLINE void vstoreh_pairs(uint16_t * p, vf even, vf odd)
{
    *(vu_mem2 *)p = ((vu)even >> 16) | ((vu)odd & 0xFFFF0000u);
}

/* 16-bit integer lanes, 2*SB_W per vector: bf16 bit patterns compared as integers (a maximum of bf16 values is one
   of them, so it needs no widening). Signed maximum, unsigned minimum and maximum: one instruction each at avx512bw,
   spelled as intrinsics there; elsewhere a comparison and a select. */
typedef int16_t vs16 __attribute__((vector_size(SB_W * 4)));
typedef uint16_t vu16 __attribute__((vector_size(SB_W * 4)));
typedef uint16_t vu16_mem __attribute__((vector_size(SB_W * 4), aligned(2), may_alias));
SB_INLINE vu16 vloadu16(const uint16_t * p) { return *(const vu16_mem *)p; }
SB_INLINE void vstoreu16(uint16_t * p, vu16 v) { *(vu16_mem *)p = v; }
#if SB_ISA_AT_LEAST(3) && !defined(SB_EMULATED_UNIT)
SB_INLINE vs16 vmax_s16(vs16 a, vs16 b) { return (vs16)_mm512_max_epi16((__m512i)a, (__m512i)b); }
SB_INLINE vu16 vmin_u16(vu16 a, vu16 b) { return (vu16)_mm512_min_epu16((__m512i)a, (__m512i)b); }
SB_INLINE vu16 vmax_u16(vu16 a, vu16 b) { return (vu16)_mm512_max_epu16((__m512i)a, (__m512i)b); }
#else
SB_INLINE vs16 vmax_s16(vs16 a, vs16 b) { vs16 m = (vs16)(a > b); return (a & m) | (b & ~m); }
SB_INLINE vu16 vmin_u16(vu16 a, vu16 b) { vu16 m = (vu16)(a < b); return (a & m) | (b & ~m); }
SB_INLINE vu16 vmax_u16(vu16 a, vu16 b) { vu16 m = (vu16)(a > b); return (a & m) | (b & ~m); }
#endif

/* m with the sign bit of s: (s & -0.0) | m, for m >= +0 (a constant in practice). One instruction where the and/or
   spelling takes two: a blend on each lane's top bit, which is all blendvps reads (sse41, avx2), or a ternary logic
   op (avx512; the emulation header lacks it). */
SB_INLINE vf vsign_of(vf s, vf m)
{
#if SB_ISA_AT_LEAST(3) && !defined(SB_EMULATED_UNIT)
    return (vf)_mm512_ternarylogic_epi32((__m512i)s, _mm512_set1_epi32((int32_t)0x80000000u), (__m512i)m, 0xEA);
#elif SB_ISA_AT_LEAST(2) && !SB_ISA_AT_LEAST(3)
    return (vf)_mm256_blendv_ps((__m256)m, (__m256)-m, (__m256)s);
#elif SB_ISA_AT_LEAST(1) && !SB_ISA_AT_LEAST(2)
    return (vf)_mm_blendv_ps((__m128)m, (__m128)-m, (__m128)s);
#else
    return vfloat_bits((vbits(s) & vset1i((int32_t)0x80000000u)) | vbits(m));
#endif
}

/* An unaligned load for the loops that stream from memory (vstream's). At avx512 it reads two 256-bit halves: a
   512-bit load across two cache lines, as is every one when p is not 64-byte aligned, made the streaming eltwise
   loop at 4M floats 1.4-1.5x slower (AMD Zen 5); the halves run at the speed of aligned loads. */
SB_INLINE vf vload_stream(const float * p)
{
#if SB_ISA_AT_LEAST(3) && !defined(SB_EMULATED_UNIT)
    return (vf)_mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(p)), _mm256_loadu_ps(p + 8), 1);
#else
    return vload(p);
#endif
}

#endif /* SB_VEC_H */
