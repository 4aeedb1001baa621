/* @targets base sse41 avx2 avx512bw */
/*
 * average.dispatch.c: SimdSynetPoolingAverage's kernel, compiled once per ISA.
 *
 * Semantics (upstream's Base code): dst = sum(clipped window) / D, D = clipped area if excludePad, else
 * kernelY*kernelX. The sum runs in float32 in scan order (row-major over the window), then one division, exactly as
 * upstream's Base code; an empty window gives 0/0 = NaN with excludePad and 0 without.
 */
#include "simd_synet.h"
#include "pooling/pool_window.h"

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
#define PK_LOAD_BYTES(p, bytes) ((vf)vload_bytes(p, bytes))
#define PK_STORE_BYTES(p, a, d, bytes) vstore_bytes(p, (vb)((a) / vset1(d)), bytes)
#define PK_FINAL(a, d) ((a) / (d))
#define PK_AVERAGE 1
#include "pooling/pool_kernel.h"

#if SB_ISA_AT_LEAST(2)
/* 1 if d is a power of two whose reciprocal is a normal float: then x * (1/d) is x / d exactly (both round the
   same real, x scaled by a power of two), and a multiplication takes a fraction of a division's time. */
SB_INLINE int avg_power_of_two(float d)
{
    uint32_t bits;
    memcpy(&bits, &d, sizeof bits);
    return d >= 1.0f && d <= 0x1p126f && (bits & 0x7FFFFFu) == 0;
}

/* 2x2 windows (kernel 2x2, both rows inside): outputs [first, end) of one row from rows r0 and r0 + W, output dx
   starting at column 2*dx - pad. Per 8 outputs: two 8-float loads a row; the top row's pairs a + b by one
   horizontal add, the bottom row's c and d split into even and odd columns by in-lane shuffles (lanes in SB_EVENP
   order, hadd's too, restored by one permute before the store; hadd instead of two more shuffles and an add
   measured 1.1x). 256-bit, not 512-bit: a
   64-byte load at an odd row of a 56-wide plane always splits a cache line, and the 512-bit form measured 1.2x
   slower (256x56x56). The scan-order fold 0 + a + b + c + d equals (a + b + c + d) + 0: the leading zero only turns
   an all -0 window's -0 into +0, which the trailing one does too, fused with the scaling (a multiply-add by 1/d
   and 0 when d is a power of two, scale = 1/d; else scale = d). */
SB_INLINE void avg_2x2_8(const float * p0, size_t W, __m256 d, int by_reciprocal, float * out)
{
    const float * p1 = p0 + W;
    __m256 a0 = _mm256_loadu_ps(p0), a1 = _mm256_loadu_ps(p0 + 8);
    __m256 b0 = _mm256_loadu_ps(p1), b1 = _mm256_loadu_ps(p1 + 8);
    __m256 s = _mm256_hadd_ps(a0, a1);
    s = _mm256_add_ps(s, _mm256_shuffle_ps(b0, b1, 0x88));
    s = _mm256_add_ps(s, _mm256_shuffle_ps(b0, b1, 0xDD));
    s = by_reciprocal ? _mm256_fmadd_ps(s, d, _mm256_setzero_ps())
                      : _mm256_div_ps(_mm256_add_ps(s, _mm256_setzero_ps()), d);
    _mm256_storeu_ps(out, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), 0xD8)));
}

/* n <= 4 outputs. Fewer than 4 (rows narrower than 4 outputs): AVX-512 masks the loads and the store to them;
   AVX2 folds them one by one, the same operations in the same order. */
SB_INLINE void avg_2x2_4(const float * p0, size_t W, size_t n, __m128 d, int by_reciprocal, float * out)
{
    const float * p1 = p0 + W;
    __m128 a0, a1, b0, b1;
    if (n == 4) {
        a0 = _mm_loadu_ps(p0), a1 = _mm_loadu_ps(p0 + 4), b0 = _mm_loadu_ps(p1), b1 = _mm_loadu_ps(p1 + 4);
    } else {
#if SB_ISA_AT_LEAST(3) && !defined(SB_EMULATED_UNIT)
        __mmask8 m = (__mmask8)((1u << (2 * n)) - 1);
        a0 = _mm_maskz_loadu_ps(m, p0), a1 = _mm_maskz_loadu_ps((__mmask8)(m >> 4), p0 + 4);
        b0 = _mm_maskz_loadu_ps(m, p1), b1 = _mm_maskz_loadu_ps((__mmask8)(m >> 4), p1 + 4);
#else
        const float s = _mm_cvtss_f32(d);
        for (size_t k = 0; k < n; ++k) {
            float acc = ((p0[2 * k] + p0[2 * k + 1]) + p1[2 * k]) + p1[2 * k + 1];
            acc = acc + 0.0f; /* before the scaling: a tiny negative product rounds to -0, which must stay */
            out[k] = by_reciprocal ? acc * s : acc / s;
        }
        return;
#endif
    }
    __m128 s = _mm_hadd_ps(a0, a1);
    s = _mm_add_ps(s, _mm_shuffle_ps(b0, b1, 0x88));
    s = _mm_add_ps(s, _mm_shuffle_ps(b0, b1, 0xDD));
    s = by_reciprocal ? _mm_fmadd_ps(s, d, _mm_setzero_ps()) : _mm_div_ps(_mm_add_ps(s, _mm_setzero_ps()), d);
#if SB_ISA_AT_LEAST(3) && !defined(SB_EMULATED_UNIT)
    if (n < 4) {
        _mm_mask_storeu_ps(out, (__mmask8)((1u << n) - 1), s);
        return;
    }
#endif
    _mm_storeu_ps(out, s);
}

/* The steps of a row of outputs [first, end): 8 at a time, then the rest 4 at a time (a 28-wide row: 3 x 8 + 4,
   where 8-wide steps alone would compute 32); the last 4-step overlaps the previous one when it can, else its
   loads and store are masked. The same for every row, so computed once. */
typedef struct {
    size_t first, full_end, tail[2], tail_n[2], tails;
} avg_row_plan;

SB_INLINE avg_row_plan avg_plan(size_t first, size_t end)
{
    avg_row_plan r;
    r.first = first;
    r.full_end = first + ((end - first) & ~(size_t)7);
    r.tails = 0;
    for (size_t dx = r.full_end; dx < end; dx += 4) {
        if (end - dx < 4 && end - first >= 4)
            dx = end - 4;
        r.tail[r.tails] = dx;
        r.tail_n[r.tails++] = end - dx < 4 ? end - dx : 4;
    }
    return r;
}

SB_INLINE void avg_s2_2x2(const float * r0, size_t W, size_t pad, const avg_row_plan * plan, float scale,
    int by_reciprocal, float * out)
{
    const __m256 d = _mm256_set1_ps(scale);
    for (size_t dx = plan->first; dx < plan->full_end; dx += 8)
        avg_2x2_8(r0 + (2 * dx - pad), W, d, by_reciprocal, out + dx);
    for (size_t t = 0; t < plan->tails; ++t)
        avg_2x2_4(r0 + (2 * plan->tail[t] - pad), W, plan->tail_n[t], _mm256_castps256_ps128(d), by_reciprocal,
            out + plan->tail[t]);
}

/* 2x2 windows at stride 2 without padding, every window inside the image (dstH <= H/2, dstW <= W/2), NCHW: every
   output row is the same steps with divisor 4, so a row is only its steps (the general loop's per-row work costs
   about as much as a 28-wide row's arithmetic). Returns 0 (nothing written) for any other geometry. */
static int avg_2x2_s2(const float * src, size_t C, const pk_geometry * g, float * dst)
{
    const size_t H = g->srcH, W = g->srcW, dstH = g->dstH, dstW = g->dstW;
    if (g->kernelY != 2 || g->kernelX != 2 || g->strideY != 2 || g->strideX != 2 || g->padY || g->padX ||
        dstH > H / 2 || dstW > W / 2 || dstW == 0)
        return 0;
#if !SB_ISA_AT_LEAST(3)
    if (dstW >= 8) {
        /* avx2, rows of 8 or more outputs: 8 at a time, the last 8 overlapping the previous step (same values,
           written again), so that a row is one short loop without avg_plan's tails: with 16 registers their set-up
           per row spilled the loop's, which cost more than the overlapping step (1.4x on 256x56x56). At avx512bw
           the tails spill nothing and measured 2-3% faster than this loop. */
        const __m256 quarter = _mm256_set1_ps(0.25f);
        const size_t last = dstW - 8;
        for (size_t c = 0; c < C; ++c) {
            const float * plane = src + c * H * W;
            float * out = dst + c * dstH * dstW;
            for (size_t i = 0; i < dstH; ++i, out += dstW) {
                const float * r0 = plane + 2 * i * W;
                for (size_t dx = 0; dx < last; dx += 8)
                    avg_2x2_8(r0 + 2 * dx, W, quarter, 1, out + dx);
                avg_2x2_8(r0 + 2 * last, W, quarter, 1, out + last);
            }
        }
        return 1;
    }
#endif
    const avg_row_plan plan = avg_plan(0, dstW);
    for (size_t c = 0; c < C; ++c) {
        const float * plane = src + c * H * W;
        float * out = dst + c * dstH * dstW;
        for (size_t i = 0; i < dstH; ++i)
            avg_s2_2x2(plane + 2 * i * W, W, 0, &plan, 0.25f, 1, out + i * dstW);
    }
    return 1;
}

#endif

#if SB_ISA_AT_LEAST(3) && !defined(SB_EMULATED_UNIT)
/* NCHW with stride 2 at AVX-512: the shared loop (pool_kernel.h) spends most of a short row (28 outputs of a
   56-wide plane) outside its vector body (an overlapping second vector, a scalar last column, the window set-up of
   each call, a 64-bit division in pv_window), which made the 256x56x56 k2s2 layer 2.5x slower than upstream.
   Here the row windows are computed once per call for all planes, every column whose window is unclipped goes
   through 16-lane chunks (loads masked to the row, the last store masked), the kernel shapes 2x2, 3x3 and 3x2 are
   straight-line code, and the stride-2 deinterleave is one vpermt2ps per tap in output order. Lanes fold exactly
   the scalar sum (0 + taps in row-major order, then one division), so the results are pk_nchw_one's bit for bit. */

/* Columns [b, b + 32) of a row that lie inside it (b < W), as a load mask. */
SB_INLINE uint32_t avg_mask(size_t W, size_t b)
{
    return W - b >= 32 ? 0xFFFFFFFFu : (uint32_t)(((uint64_t)1 << (W - b)) - 1);
}

/* The even (odd = 0) or odd (odd = 1) lanes of the 32 floats at p = row + b, in output order; only the columns
   below W are read (the rest read as 0 and only ever reach an unstored output). */
SB_INLINE __m512 avg_half(const float * p, size_t W, size_t b, int odd)
{
    const __m512i even_idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd_idx = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    uint32_t m = avg_mask(W, b);
    __m512 lo = _mm512_maskz_loadu_ps((__mmask16)m, p), hi = _mm512_maskz_loadu_ps((__mmask16)(m >> 16), p + 16);
    return _mm512_permutex2var_ps(lo, odd ? odd_idx : even_idx, hi);
}

/* n (<= 16) outputs whose column windows start at columns offset, offset + 2, ... of rows [yb, yb + R) of the
   plane (kernel width K; R and K are constants after inlining for the common kernels). */
SB_INLINE void avg_s2_chunk(const float * plane, size_t W, size_t yb, size_t R, size_t K, size_t offset, size_t n,
    __m512 divisor, int by_reciprocal, float * out)
{
    __m512 acc = _mm512_setzero_ps();
    for (size_t y = yb; y < yb + R; ++y) {
        const float * row = plane + y * W + offset;
        for (size_t k = 0; k < K; ++k) {
            size_t k2 = k & ~(size_t)1;
            acc = _mm512_add_ps(acc, avg_half(row + k2, W, offset + k2, (int)(k & 1)));
        }
    }
    /* divisor holds 1/d when d is a power of two (avg_power_of_two) */
    acc = by_reciprocal ? _mm512_mul_ps(acc, divisor) : _mm512_div_ps(acc, divisor);
    if (n == 16)
        _mm512_storeu_ps(out, acc);
    else
        _mm512_mask_storeu_ps(out, (__mmask16)((1u << n) - 1), acc);
}

/* Outputs [first, end) of one row, in chunks of 16. Every load is masked to the row: a masked load costs what a
   plain one does, and one loop without a plain/masked split measured 15% faster. */
SB_INLINE void avg_s2_row(const float * plane, size_t W, size_t pad, size_t yb, size_t R, size_t K, size_t first,
    size_t end, float divisor, float * out)
{
    const int by_reciprocal = avg_power_of_two(divisor);
    const __m512 d = _mm512_set1_ps(by_reciprocal ? 1.0f / divisor : divisor);
    if (by_reciprocal)
        for (size_t dx = first; dx < end; dx += 16)
            avg_s2_chunk(plane, W, yb, R, K, dx * 2 - pad, end - dx < 16 ? end - dx : 16, d, 1, out + dx);
    else
        for (size_t dx = first; dx < end; dx += 16)
            avg_s2_chunk(plane, W, yb, R, K, dx * 2 - pad, end - dx < 16 ? end - dx : 16, d, 0, out + dx);
}

/* pv_window without its overflow guard (a 64-bit division per call), for callers that checked once that
   d*stride + kernel cannot overflow for any output d. */
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

#define AVG_ROW_BLOCK 64

/* Every plane; returns 0 (nothing written) when the geometry is not one this path takes. */
static int avg_nchw_s2(const float * src, size_t C, const pk_geometry * geometry, float * dst)
{
    /* A local copy: the vector stores (may_alias types) would otherwise make the compiler reload every field. */
    const pk_geometry local = *geometry, * g = &local;
    const size_t W = g->srcW, K = g->kernelX, pad = g->padX, H = g->srcH, dstH = g->dstH, dstW = g->dstW;
    if (g->strideX != 2 || K == 0 || K > W || W >= ((size_t)1 << 40) || pad >= W)
        return 0;
    if (dstH && g->strideY > (SIZE_MAX - g->kernelY) / dstH) /* avg_window's precondition, rows */
        return 0;
    /* Unclipped columns: dx*2 >= pad and dx*2 - pad + K - 1 <= W - 1. */
    size_t first = (pad + 1) / 2, end = (W - K + pad) / 2 + 1;
    if (end > dstW)
        end = dstW;
    if (end <= first)
        return 0;
    size_t ybs[AVG_ROW_BLOCK], rows[AVG_ROW_BLOCK];
    float divisors[AVG_ROW_BLOCK];
    float scales[AVG_ROW_BLOCK]; /* 1/divisor where that is exact (avg_power_of_two), else the divisor */
    int reciprocal[AVG_ROW_BLOCK];
    const avg_row_plan plan = avg_plan(first, end);
    for (size_t dy0 = 0; dy0 < dstH; dy0 += AVG_ROW_BLOCK) {
        const size_t count = dstH - dy0 < AVG_ROW_BLOCK ? dstH - dy0 : AVG_ROW_BLOCK;
        for (size_t i = 0; i < count; ++i) {
            size_t yb, ye;
            avg_window(dy0 + i, g->strideY, g->padY, g->kernelY, H, &yb, &ye);
            ybs[i] = yb, rows[i] = ye - yb, divisors[i] = pk_divisor(g, ye - yb, K);
            reciprocal[i] = avg_power_of_two(divisors[i]);
            scales[i] = reciprocal[i] ? 1.0f / divisors[i] : divisors[i];
        }
        for (size_t c = 0; c < C; ++c) {
            const float * plane = src + c * H * W;
            for (size_t i = 0; i < count; ++i) {
                const size_t yb = ybs[i], R = rows[i];
                float * out = dst + (c * dstH + dy0 + i) * dstW;
                for (size_t dx = 0; dx < first; ++dx)
                    out[dx] = avg_one(plane, g, yb, yb + R, dx);
                if (K == 2 && R == 2)
                    avg_s2_2x2(plane + yb * W, W, pad, &plan, scales[i], reciprocal[i], out);
                else if (K == 3 && R == 3)
                    avg_s2_row(plane, W, pad, yb, 3, 3, first, end, divisors[i], out);
                else if (K == 3 && R == 2)
                    avg_s2_row(plane, W, pad, yb, 2, 3, first, end, divisors[i], out);
                else
                    avg_s2_row(plane, W, pad, yb, R, K, first, end, divisors[i], out);
                for (size_t dx = end; dx < dstW; ++dx) /* dx < dstW < 2^62 (dst holds them): no overflow */
                    out[dx] = avg_one(plane, g, yb, yb + R, dx);
            }
        }
    }
    return 1;
}
#endif

#if SB_ISA_AT_LEAST(3)
/* NHWC at avx512bw runs the avx2 kernel: the same loops with 16-lane vectors measured 15% slower on a 64-channel
   3x3/2 layer (112x112) and no faster on a 256-channel 2x2/2 one (56x56). */
extern sb_pooling_average_fn sb_pooling_average_avx2;
#endif

void SB_FN(pooling_average)(const float * src, size_t srcC, size_t srcH, size_t srcW, size_t kernelY,
    size_t kernelX, size_t strideY, size_t strideX, size_t padY, size_t padX, float * dst, size_t dstH, size_t dstW,
    SimdBool excludePad, SimdTensorFormatType format)
{
#if SB_ISA_AT_LEAST(3)
    if (format == SimdTensorFormatNhwc) {
        sb_pooling_average_avx2(src, srcC, srcH, srcW, kernelY, kernelX, strideY, strideX, padY, padX, dst, dstH,
            dstW, excludePad, format);
        return;
    }
#endif
    pk_geometry g = {srcH, srcW, kernelY, kernelX, strideY, strideX, padY, padX, dstH, dstW, excludePad != 0};
#if SB_ISA_AT_LEAST(2)
    if (format != SimdTensorFormatNhwc && avg_2x2_s2(src, srcC, &g, dst))
        return;
#endif
#if SB_ISA_AT_LEAST(3) && !defined(SB_EMULATED_UNIT)
    if (format != SimdTensorFormatNhwc && avg_nchw_s2(src, srcC, &g, dst))
        return;
#endif
    pk_pool2d(src, srcC, &g, dst, format == SimdTensorFormatNhwc);
}
