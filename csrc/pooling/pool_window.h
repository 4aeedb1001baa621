/*
 * pool_vec.h: vector helpers of the pooling family (on top of internal/vec.h).
 *
 * - vh: SB_W lanes of uint16 (bf16 storage), converted exactly to vf and back with upstream's RNE formula.
 * - PV_EVEN(a, b, lanes) / PV_ODD(a, b, lanes): the even / odd lanes of the concatenation a:b (a stride-2
 *   deinterleave), for vectors of 4, 8, 16, 32 or 64 lanes; `lanes` must be a literal (it selects an index list).
 * - pv_window: the clipped pooling window of one output coordinate (spec 3.12.1 with signed arithmetic), computed
 *   without overflow for any size_t arguments.
 */
#ifndef SB_POOL_VEC_H
#define SB_POOL_VEC_H

#include <stdint.h>
#include <string.h>

typedef uint16_t vh __attribute__((vector_size(SB_W * 2)));
typedef uint16_t vh_mem __attribute__((vector_size(SB_W * 2), aligned(2), may_alias));

SB_INLINE vh vloadh(const uint16_t * p) { return *(const vh_mem *)p; }
SB_INLINE void vstoreh(uint16_t * p, vh v) { *(vh_mem *)p = v; }
SB_INLINE vh vloadh_n(const uint16_t * p, size_t n) { vh v = {0}; memcpy(&v, p, n * sizeof(uint16_t)); return v; }
SB_INLINE void vstoreh_n(uint16_t * p, vh v, size_t n) { memcpy(p, &v, n * sizeof(uint16_t)); }

/* Intrinsics below are single instructions with exactly the generic expression's semantics (GCC does not find
   them from the vector-extension spelling). SB_POOL_GENERIC forces the generic code (used to check the 16-lane
   logic on machines without AVX-512). */
#if !defined(SB_POOL_GENERIC) && SB_ISA_AT_LEAST(1)
#define PV_INTRINSICS 1
#else
#define PV_INTRINSICS 0
#endif

/* bf16 -> float32, exact: the bits shifted into the high half. */
SB_INLINE vf vbf16_to_f32(vh h)
{
#if PV_INTRINSICS && SB_ISA_AT_LEAST(3)
    return (vf)_mm512_slli_epi32(_mm512_cvtepu16_epi32((__m256i)h), 16);
#elif PV_INTRINSICS && SB_ISA_AT_LEAST(2)
    return (vf)_mm256_slli_epi32(_mm256_cvtepu16_epi32((__m128i)h), 16);
#else
    return (vf)(__builtin_convertvector(h, vu) << 16);
#endif
}

/* a > b ? a : b with upstream's NaN rule (a NaN in either operand gives b): exactly what MAXPS computes. */
SB_INLINE vf pv_max(vf a, vf b)
{
#if PV_INTRINSICS && SB_ISA_AT_LEAST(3)
    return (vf)_mm512_max_ps((__m512)a, (__m512)b);
#elif PV_INTRINSICS && SB_ISA_AT_LEAST(2)
    return (vf)_mm256_max_ps((__m256)a, (__m256)b);
#elif PV_INTRINSICS
    return (vf)_mm_max_ps((__m128)a, (__m128)b);
#else
    return vmax(a, b);
#endif
}

/* float32 -> bf16 with round-to-nearest-even on the bit pattern, wrapping modulo 2^32 (spec 3.1 item 10). */
SB_INLINE vh vf32_to_bf16(vf f)
{
    vu u = (vu)f;
    return __builtin_convertvector((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16, vh);
}

/* Unsigned bytes: a > b ? a : b (plain maximum for integers). */
SB_INLINE vb vmaxb(vb a, vb b)
{
#if PV_INTRINSICS && SB_ISA_AT_LEAST(3)
    return (vb)_mm512_max_epu8((__m512i)a, (__m512i)b);
#elif PV_INTRINSICS && SB_ISA_AT_LEAST(2)
    return (vb)_mm256_max_epu8((__m256i)a, (__m256i)b);
#elif PV_INTRINSICS
    return (vb)_mm_max_epu8((__m128i)a, (__m128i)b);
#else
    vb m = (vb)(a > b);
    return (a & m) | (b & ~m);
#endif
}

#define PV_EVEN_IDX_4 0, 2, 4, 6
#define PV_EVEN_IDX_8 0, 2, 4, 6, 8, 10, 12, 14
#define PV_EVEN_IDX_16 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30
#define PV_EVEN_IDX_32 PV_EVEN_IDX_16, 32, 34, 36, 38, 40, 42, 44, 46, 48, 50, 52, 54, 56, 58, 60, 62
#define PV_EVEN_IDX_64 PV_EVEN_IDX_32, 64, 66, 68, 70, 72, 74, 76, 78, 80, 82, 84, 86, 88, 90, 92, 94, 96, 98, 100, \
    102, 104, 106, 108, 110, 112, 114, 116, 118, 120, 122, 124, 126
#define PV_ODD_IDX_4 1, 3, 5, 7
#define PV_ODD_IDX_8 1, 3, 5, 7, 9, 11, 13, 15
#define PV_ODD_IDX_16 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31
#define PV_ODD_IDX_32 PV_ODD_IDX_16, 33, 35, 37, 39, 41, 43, 45, 47, 49, 51, 53, 55, 57, 59, 61, 63
#define PV_ODD_IDX_64 PV_ODD_IDX_32, 65, 67, 69, 71, 73, 75, 77, 79, 81, 83, 85, 87, 89, 91, 93, 95, 97, 99, 101, \
    103, 105, 107, 109, 111, 113, 115, 117, 119, 121, 123, 125, 127
/* The same deinterleave in a lane order that x86 does in one in-lane shuffle (shufps/vshufps): 128-bit lane i
   holds outputs 2i, 2i+1 (from a) and L/2+2i, L/2+2i+1 (from b). PV_UNPERM restores output order before a store.
   Byte vectors (32 and 64 lanes) use the natural order. */
#define PV_EVENP_IDX_4 PV_EVEN_IDX_4
#define PV_ODDP_IDX_4 PV_ODD_IDX_4
#define PV_EVENP_IDX_8 0, 2, 8, 10, 4, 6, 12, 14
#define PV_ODDP_IDX_8 1, 3, 9, 11, 5, 7, 13, 15
#define PV_EVENP_IDX_16 0, 2, 16, 18, 4, 6, 20, 22, 8, 10, 24, 26, 12, 14, 28, 30
#define PV_ODDP_IDX_16 1, 3, 17, 19, 5, 7, 21, 23, 9, 11, 25, 27, 13, 15, 29, 31
#define PV_EVENP_IDX_32 PV_EVEN_IDX_32
#define PV_ODDP_IDX_32 PV_ODD_IDX_32
#define PV_EVENP_IDX_64 PV_EVEN_IDX_64
#define PV_ODDP_IDX_64 PV_ODD_IDX_64
#define PV_UNPERM_4(v) (v)
#define PV_UNPERM_8(v) __builtin_shufflevector(v, v, 0, 1, 4, 5, 2, 3, 6, 7)
#define PV_UNPERM_16(v) __builtin_shufflevector(v, v, 0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15)
#define PV_UNPERM_32(v) (v)
#define PV_UNPERM_64(v) (v)
#define PV_CAT_(a, b) a##b
#define PV_CAT(a, b) PV_CAT_(a, b)
#define PV_EVEN(a, b, lanes) __builtin_shufflevector(a, b, PV_CAT(PV_EVEN_IDX_, lanes))
#define PV_ODD(a, b, lanes) __builtin_shufflevector(a, b, PV_CAT(PV_ODD_IDX_, lanes))
#define PV_EVENP(a, b, lanes) __builtin_shufflevector(a, b, PV_CAT(PV_EVENP_IDX_, lanes))
#define PV_ODDP(a, b, lanes) __builtin_shufflevector(a, b, PV_CAT(PV_ODDP_IDX_, lanes))
#define PV_UNPERM(v, lanes) PV_CAT(PV_UNPERM_, lanes)(v)

/* The window of output coordinate d along one axis: [d*stride - pad, d*stride - pad + kernel) clipped to [0, size),
   as [*begin, *end) with *begin <= *end (an empty window has *begin == *end). */
SB_INLINE void pv_window(size_t d, size_t stride, size_t pad, size_t kernel, size_t size, size_t * begin,
    size_t * end)
{
    if (d != 0 && stride > (SIZE_MAX - kernel) / d) { /* starts beyond any addressable image */
        *begin = *end = size;
        return;
    }
    size_t first = d * stride, last = first + kernel; /* both shifted by +pad, no overflow */
    size_t b = first > pad ? first - pad : 0, e = last > pad ? last - pad : 0;
    if (b > size) b = size;
    if (e > size) e = size;
    if (e < b) e = b;
    *begin = b;
    *end = e;
}

#endif /* SB_POOL_VEC_H */
