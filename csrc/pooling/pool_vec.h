/*
 * pool_vec.h: vector helpers of the pooling family (on top of internal/vec.h).
 *
 * - vh: SB_W lanes of uint16 (bf16 storage), converted exactly to vf and back with upstream's RNE formula.
 * - PV_EVEN(a, b, lanes): the even lanes of the concatenation a:b (a stride-2 deinterleave), for vectors of
 *   4, 8, 16, 32 or 64 lanes; `lanes` must be a literal so that it can select an index list.
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

/* bf16 -> float32, exact: the bits shifted into the high half. */
SB_INLINE vf vbf16_to_f32(vh h) { return (vf)(__builtin_convertvector(h, vu) << 16); }

/* float32 -> bf16 with round-to-nearest-even on the bit pattern, wrapping modulo 2^32 (spec 3.1 item 10). */
SB_INLINE vh vf32_to_bf16(vf f)
{
    vu u = (vu)f;
    return __builtin_convertvector((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16, vh);
}

/* Unsigned bytes: a > b ? a : b (plain maximum for integers). */
SB_INLINE vb vmaxb(vb a, vb b)
{
    vb m = (vb)(a > b);
    return (a & m) | (b & ~m);
}

#define PV_EVEN_IDX_4 0, 2, 4, 6
#define PV_EVEN_IDX_8 0, 2, 4, 6, 8, 10, 12, 14
#define PV_EVEN_IDX_16 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30
#define PV_EVEN_IDX_32 PV_EVEN_IDX_16, 32, 34, 36, 38, 40, 42, 44, 46, 48, 50, 52, 54, 56, 58, 60, 62
#define PV_EVEN_IDX_64 PV_EVEN_IDX_32, 64, 66, 68, 70, 72, 74, 76, 78, 80, 82, 84, 86, 88, 90, 92, 94, 96, 98, 100, \
    102, 104, 106, 108, 110, 112, 114, 116, 118, 120, 122, 124, 126
#define PV_CAT_(a, b) a##b
#define PV_CAT(a, b) PV_CAT_(a, b)
#define PV_EVEN(a, b, lanes) __builtin_shufflevector(a, b, PV_CAT(PV_EVEN_IDX_, lanes))

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
