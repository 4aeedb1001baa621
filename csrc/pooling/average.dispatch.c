/*
 * average.dispatch.c: SimdSynetPoolingAverage's kernel, compiled once per ISA.
 *
 * Semantics (seed page, spec 3.12.2): dst = sum(clipped window) / D, D = clipped area if excludePad, else
 * kernelY*kernelX. The sum runs in float32 in scan order (row-major over the window), then one division, exactly as
 * the page's pseudo-code; an empty window gives 0/0 = NaN with excludePad and 0 without.
 */
#include "simd_synet.h"
#include "pooling/pool_vec.h"

#define PK_T float
#define PK_S float
#define PK_V vf
#define PK_L SB_W
#define PK_LOAD(p) vload(p)
#define PK_LOAD_N(p, n) vload_n(p, n)
#define PK_CVT(e) (e)
#define PK_INIT_V vset1(0.0f)
#define PK_INIT_S 0.0f
#define PK_OP_V(a, x) ((a) + (x))
#define PK_OP_S(a, x) ((a) + (x))
#define PK_STORE(p, a, d) vstore(p, (a) / vset1(d))
#define PK_STORE_N(p, a, d, n) vstore_n(p, (a) / vset1(d), n)
#define PK_FINAL(a, d) ((a) / (d))
#define PK_AVERAGE 1
#include "pooling/pool_kernel.h"

#if SB_ISA_AT_LEAST(3) && !defined(SB_EMULATED_UNIT)
/* NCHW with stride 2 at AVX-512: the shared loop (pool_kernel.h) spends most of a short row (28 outputs of a
   56-wide plane) outside its vector body (an overlapping second vector, a scalar last column, the window set-up of
   each call), which made the 256x56x56 k2s2 layer 2.5x slower than upstream. Here every column whose window is
   unclipped goes through 16-lane chunks, the last one masked, and the stride-2 deinterleave is one vpermt2ps per
   tap in output order. Lanes fold exactly the scalar sum (0 + taps in row-major order, then one division), so the
   results are those of pk_nchw_one, bit for bit. */

/* Columns [b, b + 32) of a row, only those below `limit` (= W - b; the rest read as 0 and never reach a stored
   lane), as the even (odd = 0) or odd (odd = 1) half, in output order. */
SB_INLINE __m512 avg_pair(const float * row, size_t b, size_t limit, int odd)
{
    const __m512i even_idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd_idx = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    __m512 lo, hi;
    if (limit >= 32) {
        lo = _mm512_loadu_ps(row + b);
        hi = _mm512_loadu_ps(row + b + 16);
    } else {
        uint32_t m = (uint32_t)(((uint64_t)1 << limit) - 1);
        lo = _mm512_maskz_loadu_ps((__mmask16)m, row + b);
        hi = _mm512_maskz_loadu_ps((__mmask16)(m >> 16), row + b + 16);
    }
    return _mm512_permutex2var_ps(lo, odd ? odd_idx : even_idx, hi);
}

/* Outputs dx0 .. dx0 + n - 1 (n <= 16) of one output row whose column windows are unclipped, kernel width K. */
SB_INLINE void avg_s2_chunk(const float * plane, const pk_geometry * g, size_t yb, size_t ye, size_t dx0,
    size_t n, float * out, size_t K)
{
    const size_t W = g->srcW, offset = dx0 * 2 - g->padX;
    __m512 acc = _mm512_setzero_ps();
    for (size_t y = yb; y < ye; ++y) {
        const float * row = plane + y * W;
        for (size_t k = 0; k < K; ++k) {
            size_t b = offset + (k & ~(size_t)1);
            acc = _mm512_add_ps(acc, avg_pair(row, b, W - b, (int)(k & 1)));
        }
    }
    __m512 q = _mm512_div_ps(acc, _mm512_set1_ps(pk_divisor(g, ye - yb, K)));
    if (n == 16)
        _mm512_storeu_ps(out + dx0, q);
    else
        _mm512_mask_storeu_ps(out + dx0, (__mmask16)((1u << n) - 1), q);
}

SB_INLINE void avg_s2_row(const float * plane, const pk_geometry * g, size_t yb, size_t ye, size_t first,
    size_t end, float * out, size_t K)
{
    for (size_t dx = first; dx < end; dx += 16)
        avg_s2_chunk(plane, g, yb, ye, dx, end - dx < 16 ? end - dx : 16, out, K);
}

/* pv_window without its overflow guard (a 64-bit division per call, a third of this path's time on the
   256x56x56 layer), for callers that checked once that d*stride + kernel cannot overflow for any output d. */
SB_INLINE void avg_window(size_t d, size_t stride, size_t pad, size_t kernel, size_t size, size_t * begin,
    size_t * end)
{
    size_t first = d * stride, last = first + kernel; /* both shifted by +pad */
    size_t b = first > pad ? first - pad : 0, e = last > pad ? last - pad : 0;
    if (b > size) b = size;
    if (e > size) e = size;
    if (e < b) e = b;
    *begin = b;
    *end = e;
}

/* The scalar fold of one output whose column window is clipped (pk_nchw_one with avg_window). */
SB_INLINE float avg_one(const float * plane, const pk_geometry * g, size_t yb, size_t ye, size_t dx)
{
    size_t xb, xe;
    avg_window(dx, g->strideX, g->padX, g->kernelX, g->srcW, &xb, &xe);
    float acc = 0.0f;
    for (size_t y = yb; y < ye; ++y)
        for (size_t x = xb; x < xe; ++x)
            acc = acc + plane[y * g->srcW + x];
    return acc / pk_divisor(g, ye - yb, xe - xb);
}

/* One plane; returns 0 (nothing written) when the geometry is not one this path takes. */
static int avg_nchw_s2_plane(const float * plane, const pk_geometry * g, float * dst)
{
    const size_t W = g->srcW, K = g->kernelX;
    if (g->strideX != 2 || K == 0 || K > W || W >= ((size_t)1 << 40) || g->padX >= W)
        return 0;
    if (g->dstH && g->strideY > (SIZE_MAX - g->kernelY) / g->dstH) /* avg_window's precondition, rows */
        return 0;
    /* Unclipped columns: dx*2 >= padX and dx*2 - padX + K - 1 <= W - 1. */
    size_t first = (g->padX + 1) / 2, end = (W - K + g->padX) / 2 + 1;
    if (end > g->dstW)
        end = g->dstW;
    if (end <= first)
        return 0;
    for (size_t dy = 0; dy < g->dstH; ++dy) {
        size_t yb, ye;
        avg_window(dy, g->strideY, g->padY, g->kernelY, g->srcH, &yb, &ye);
        float * out = dst + dy * g->dstW;
        for (size_t dx = 0; dx < first; ++dx)
            out[dx] = avg_one(plane, g, yb, ye, dx);
        if (K == 2)
            avg_s2_row(plane, g, yb, ye, first, end, out, 2);
        else if (K == 3)
            avg_s2_row(plane, g, yb, ye, first, end, out, 3);
        else
            avg_s2_row(plane, g, yb, ye, first, end, out, K);
        for (size_t dx = end; dx < g->dstW; ++dx) /* dx < dstW < 2^62 (dst holds them): no overflow */
            out[dx] = avg_one(plane, g, yb, ye, dx);
    }
    return 1;
}
#endif

void SB_FN(pooling_average)(const float * src, size_t srcC, size_t srcH, size_t srcW, size_t kernelY,
    size_t kernelX, size_t strideY, size_t strideX, size_t padY, size_t padX, float * dst, size_t dstH, size_t dstW,
    SimdBool excludePad, SimdTensorFormatType format)
{
    pk_geometry g = {srcH, srcW, kernelY, kernelX, strideY, strideX, padY, padX, dstH, dstW, excludePad != 0};
#if SB_ISA_AT_LEAST(3) && !defined(SB_EMULATED_UNIT)
    if (format != SimdTensorFormatNhwc && srcC != 0 && avg_nchw_s2_plane(src, &g, dst)) {
        for (size_t c = 1; c < srcC; ++c)
            avg_nchw_s2_plane(src + c * srcH * srcW, &g, dst + c * dstH * dstW);
        return;
    }
#endif
    pk_pool2d(src, srcC, &g, dst, format == SimdTensorFormatNhwc);
}
