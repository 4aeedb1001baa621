/*
 * emulate_avx512.h: the AVX-512 intrinsics our kernels use, written lane by lane, for the emulation build only.
 *
 * tools/emulate_avx512.sh builds the bundled library with -DSB_EMULATE_AVX512: the avx512bw and avx512vnni units
 * then compile for AVX2 (target.h), with 16-lane generic vectors lowered by the compiler, and every _mm512_* call
 * below renamed to a plain C function that follows Intel's pseudo-code for that instruction. So the AVX-512 code
 * paths (16-lane bodies and tails, the int8 pair arithmetic, VNNI's dot product) run on a CPU without AVX-512.
 * It proves our logic at those widths against the documented instruction semantics; it cannot prove timing, nor
 * catch a misreading of an instruction shared by this file and the kernel. Never included in a normal build.
 */
#ifndef SB_EMULATE_AVX512_H
#define SB_EMULATE_AVX512_H

#include <math.h>
#include <stdint.h>
#include <string.h>

typedef float sbe_f32x16 __attribute__((vector_size(64)));
typedef int32_t sbe_i32x16 __attribute__((vector_size(64)));
typedef uint32_t sbe_u32x16 __attribute__((vector_size(64)));
typedef int16_t sbe_i16x32 __attribute__((vector_size(64)));
typedef uint8_t sbe_u8x64 __attribute__((vector_size(64)));
typedef int8_t sbe_i8x64 __attribute__((vector_size(64)));
typedef uint16_t sbe_u16x16 __attribute__((vector_size(32)));
typedef uint8_t sbe_u8x32 __attribute__((vector_size(32)));
typedef int8_t sbe_i8x32 __attribute__((vector_size(32)));

#define SBE static inline __attribute__((always_inline))

SBE __m512 sbe_set1_ps(float x) { sbe_f32x16 r; for (int i = 0; i < 16; ++i) r[i] = x; return (__m512)r; }
SBE __m512i sbe_set1_epi32(int x) { sbe_i32x16 r; for (int i = 0; i < 16; ++i) r[i] = x; return (__m512i)r; }
SBE __m512i sbe_set1_epi16(short x) { sbe_i16x32 r; for (int i = 0; i < 32; ++i) r[i] = x; return (__m512i)r; }
SBE __m512i sbe_setzero_si512(void) { return (__m512i)(sbe_i32x16){0}; }
SBE __m512i sbe_loadu_si512(const void * p) { __m512i r; memcpy(&r, p, 64); return r; }
SBE void sbe_storeu_si512(void * p, __m512i v) { memcpy(p, &v, 64); }

/* Lanes whose mask bit is clear are not touched in memory (and read as zero). */
SBE __m512 sbe_maskz_loadu_ps(unsigned mask, const void * p)
{
    sbe_f32x16 r = {0};
    for (int i = 0; i < 16; ++i)
        if (mask >> i & 1) r[i] = ((const float *)p)[i];
    return (__m512)r;
}

SBE void sbe_mask_storeu_ps(void * p, unsigned mask, __m512 v)
{
    sbe_f32x16 x = (sbe_f32x16)v;
    for (int i = 0; i < 16; ++i)
        if (mask >> i & 1) ((float *)p)[i] = x[i];
}

SBE __m256i sbe_maskz_loadu_epi16(unsigned mask, const void * p)
{
    uint16_t r[16] = {0};
    for (int i = 0; i < 16; ++i)
        if (mask >> i & 1) r[i] = ((const uint16_t *)p)[i];
    __m256i v;
    memcpy(&v, r, 32);
    return v;
}

SBE void sbe_mask_storeu_epi16(void * p, unsigned mask, __m256i v)
{
    uint16_t x[16];
    memcpy(x, &v, 32);
    for (int i = 0; i < 16; ++i)
        if (mask >> i & 1) ((uint16_t *)p)[i] = x[i];
}

/* One rounding per lane, as the instruction does. */
SBE __m512 sbe_fmadd_ps(__m512 a, __m512 b, __m512 c)
{
    sbe_f32x16 x = (sbe_f32x16)a, y = (sbe_f32x16)b, z = (sbe_f32x16)c, r;
    for (int i = 0; i < 16; ++i) r[i] = fmaf(x[i], y[i], z[i]);
    return (__m512)r;
}

SBE __m512 sbe_sqrt_ps(__m512 a)
{
    sbe_f32x16 x = (sbe_f32x16)a, r;
    for (int i = 0; i < 16; ++i) r[i] = sqrtf(x[i]);
    return (__m512)r;
}

/* imm8 bits 1:0 pick the rounding (nearest even, down, up, toward zero); scale 0 (bits 7:4) is all we use. */
SBE __m512 sbe_roundscale_ps(__m512 a, int imm)
{
    sbe_f32x16 x = (sbe_f32x16)a, r;
    for (int i = 0; i < 16; ++i) {
        switch (imm & 3) {
        case 0: r[i] = nearbyintf(x[i]); break; /* the default rounding mode is round-to-nearest-even */
        case 1: r[i] = floorf(x[i]); break;
        case 2: r[i] = ceilf(x[i]); break;
        default: r[i] = truncf(x[i]); break;
        }
    }
    return (__m512)r;
}

/* MAXPS: the second operand when either is NaN or both are zeros of any sign. */
SBE __m512 sbe_max_ps(__m512 a, __m512 b)
{
    sbe_f32x16 x = (sbe_f32x16)a, y = (sbe_f32x16)b, r;
    for (int i = 0; i < 16; ++i) r[i] = x[i] > y[i] ? x[i] : y[i];
    return (__m512)r;
}

/* MINPS: likewise. */
SBE __m512 sbe_min_ps(__m512 a, __m512 b)
{
    sbe_f32x16 x = (sbe_f32x16)a, y = (sbe_f32x16)b, r;
    for (int i = 0; i < 16; ++i) r[i] = x[i] < y[i] ? x[i] : y[i];
    return (__m512)r;
}

SBE __m512i sbe_max_epu8(__m512i a, __m512i b)
{
    sbe_u8x64 x = (sbe_u8x64)a, y = (sbe_u8x64)b, r;
    for (int i = 0; i < 64; ++i) r[i] = x[i] > y[i] ? x[i] : y[i];
    return (__m512i)r;
}

SBE unsigned sbe_test_epi32_mask(__m512i a, __m512i b)
{
    sbe_i32x16 x = (sbe_i32x16)a, y = (sbe_i32x16)b;
    unsigned mask = 0;
    for (int i = 0; i < 16; ++i) mask |= (unsigned)((x[i] & y[i]) != 0) << i;
    return mask;
}

SBE __m512i sbe_slli_epi32(__m512i a, unsigned count)
{
    sbe_u32x16 x = (sbe_u32x16)a, r;
    for (int i = 0; i < 16; ++i) r[i] = count > 31 ? 0 : x[i] << count;
    return (__m512i)r;
}

SBE __m512i sbe_cvtepu16_epi32(__m256i a)
{
    sbe_u16x16 x = (sbe_u16x16)a;
    sbe_i32x16 r;
    for (int i = 0; i < 16; ++i) r[i] = x[i];
    return (__m512i)r;
}

SBE __m512i sbe_add_epi32(__m512i a, __m512i b)
{
    sbe_u32x16 x = (sbe_u32x16)a, y = (sbe_u32x16)b; /* wraps, as the instruction does */
    return (__m512i)(x + y);
}

/* PMADDUBSW: unsigned bytes of a times signed bytes of b, adjacent pairs summed with signed saturation to int16. */
SBE __m512i sbe_maddubs_epi16(__m512i a, __m512i b)
{
    sbe_u8x64 x = (sbe_u8x64)a;
    sbe_i8x64 y = (sbe_i8x64)b;
    sbe_i16x32 r;
    for (int i = 0; i < 32; ++i) {
        int32_t sum = x[2 * i] * y[2 * i] + x[2 * i + 1] * y[2 * i + 1];
        r[i] = (int16_t)(sum > 32767 ? 32767 : sum < -32768 ? -32768 : sum);
    }
    return (__m512i)r;
}

/* PMADDWD: int16 pairs multiplied and summed into int32 (wraps only for -32768 * -32768 twice). */
SBE __m512i sbe_madd_epi16(__m512i a, __m512i b)
{
    sbe_i16x32 x = (sbe_i16x32)a, y = (sbe_i16x32)b;
    sbe_u32x16 r;
    for (int i = 0; i < 16; ++i)
        r[i] = (uint32_t)((int32_t)x[2 * i] * y[2 * i]) + (uint32_t)((int32_t)x[2 * i + 1] * y[2 * i + 1]);
    return (__m512i)r;
}

/* VPDPBUSD: per int32 lane, acc + the four products of unsigned bytes of a and signed bytes of b, no saturation. */
SBE __m512i sbe_dpbusd_epi32(__m512i acc, __m512i a, __m512i b)
{
    sbe_u32x16 s = (sbe_u32x16)acc;
    sbe_u8x64 x = (sbe_u8x64)a;
    sbe_i8x64 y = (sbe_i8x64)b;
    for (int i = 0; i < 16; ++i) {
        int32_t dot = 0;
        for (int j = 0; j < 4; ++j) dot += x[4 * i + j] * y[4 * i + j];
        s[i] += (uint32_t)dot;
    }
    return (__m512i)s;
}

/* VPDPWSSD: per int32 lane, acc + the two products of its signed int16 pairs, no saturation (the sum wraps). */
SBE __m512i sbe_dpwssd_epi32(__m512i acc, __m512i a, __m512i b)
{
    sbe_u32x16 s = (sbe_u32x16)acc;
    sbe_i16x32 x = (sbe_i16x32)a, y = (sbe_i16x32)b;
    for (int i = 0; i < 16; ++i)
        s[i] += (uint32_t)((int32_t)x[2 * i] * y[2 * i]) + (uint32_t)((int32_t)x[2 * i + 1] * y[2 * i + 1]);
    return (__m512i)s;
}

SBE __m512i sbe_cvtepu8_epi16(__m256i a)
{
    sbe_u8x32 x = (sbe_u8x32)a;
    sbe_i16x32 r;
    for (int i = 0; i < 32; ++i) r[i] = x[i];
    return (__m512i)r;
}

SBE __m512i sbe_cvtepi8_epi16(__m256i a)
{
    sbe_i8x32 x = (sbe_i8x32)a;
    sbe_i16x32 r;
    for (int i = 0; i < 32; ++i) r[i] = x[i];
    return (__m512i)r;
}

SBE __m256i sbe_castsi512_si256(__m512i a) { __m256i r; memcpy(&r, &a, 32); return r; }

SBE __m256i sbe_extracti64x4_epi64(__m512i a, int index)
{
    __m256i r;
    memcpy(&r, (const char *)&a + 32 * (index & 1), 32);
    return r;
}

#define _mm512_set1_ps sbe_set1_ps
#define _mm512_set1_epi32 sbe_set1_epi32
#define _mm512_set1_epi16 sbe_set1_epi16
#define _mm512_setzero_si512 sbe_setzero_si512
#define _mm512_loadu_si512 sbe_loadu_si512
#define _mm512_storeu_si512 sbe_storeu_si512
#define _mm512_maskz_loadu_ps sbe_maskz_loadu_ps
#define _mm512_mask_storeu_ps sbe_mask_storeu_ps
#define _mm256_maskz_loadu_epi16 sbe_maskz_loadu_epi16
#define _mm256_mask_storeu_epi16 sbe_mask_storeu_epi16
#define _mm512_fmadd_ps sbe_fmadd_ps
#define _mm512_sqrt_ps sbe_sqrt_ps
#undef _mm512_roundscale_ps
#define _mm512_roundscale_ps sbe_roundscale_ps
#define _mm512_max_ps sbe_max_ps
#define _mm512_min_ps sbe_min_ps
#define _mm512_max_epu8 sbe_max_epu8
#define _mm512_test_epi32_mask sbe_test_epi32_mask
#undef _mm512_slli_epi32
#define _mm512_slli_epi32 sbe_slli_epi32
#define _mm512_cvtepu16_epi32 sbe_cvtepu16_epi32
#define _mm512_add_epi32 sbe_add_epi32
#define _mm512_maddubs_epi16 sbe_maddubs_epi16
#define _mm512_madd_epi16 sbe_madd_epi16
#define _mm512_dpbusd_epi32 sbe_dpbusd_epi32
#define _mm512_dpwssd_epi32 sbe_dpwssd_epi32
#define _mm512_cvtepu8_epi16 sbe_cvtepu8_epi16
#define _mm512_cvtepi8_epi16 sbe_cvtepi8_epi16
#define _mm512_castsi512_si256 sbe_castsi512_si256
#undef _mm512_extracti64x4_epi64
#define _mm512_extracti64x4_epi64 sbe_extracti64x4_epi64

#endif /* SB_EMULATE_AVX512_H */
