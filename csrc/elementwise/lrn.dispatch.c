/* @targets base sse41 avx2 avx512bw */
/*
 * lrn.dispatch.c: SimdSynetLrnLayerCrossChannels's kernel, compiled once per ISA.
 *
 * As upstream: dst[c, s] = src[c, s] * Pow(k0 + k1 * sum, k2), sum = sum of src[i, s]^2 over i in
 * [max(0, c - half), min(channels, c + half + 1)), Pow(b, e) = exp(log(b) * e) (so a negative base gives NaN),
 * with no division by the window size. The window sum is direct (not running), in float32. Unlike upstream, NHWC
 * is correct for every channel count (channels < 2*half + 1 included): the squares of one pixel go to a zero-padded
 * scratch row, so windows never read outside the pixel.
 */
#include <stdlib.h>

#include "simd_synet.h"
#include "internal/vmath.h"

/* 1/sqrt(x) for x in [2^-100, 2^100]: the ISA's estimate (relative error below 2^-14 at AVX-512, 1.5 * 2^-12 at
   SSE/AVX) and one Newton step, r * (1.5 - x/2 * r^2), which squares the error: within a few ulp. */
SB_INLINE vf lrn_rsqrt(vf x)
{
#if SB_ISA_AT_LEAST(3) && !defined(SB_EMULATED_UNIT)
    vf r = (vf)_mm512_rsqrt14_ps((__m512)x);
#elif SB_ISA_AT_LEAST(2) && !SB_ISA_AT_LEAST(3)
    vf r = (vf)_mm256_rsqrt_ps((__m256)x);
#elif SB_ISA_AT_LEAST(1) && !SB_ISA_AT_LEAST(3)
    vf r = (vf)_mm_rsqrt_ps((__m128)x);
#else
    vf r = vset1(1.0f) / vsqrt(x);
#endif
    return r * vfmadd((x * vset1(-0.5f)) * r, r, vset1(1.5f));
}

/* The lanes of y where fast is clear replaced by exp(log(base) * k2). Out of line and cold: inlined, the general
   formula's code (vlog's table, vexp) steers the register allocation of the loops around it (NHWC measured 3-5%
   slower with it inlined, though it never runs there). */
static __attribute__((noinline, cold)) vf lrn_pow_slow(vf base, vf k2, vi fast, vf y)
{
    return vselect(fast, y, vexp(vlog(base) * k2));
}

/* base^k2. k2 == -0.75 (Caffe's and ONNX's beta 0.75, the exponent every network uses): base^-1 * base^(1/4)
   = r^2 / sqrt(r), r = 1/sqrt(base), through the reciprocal square root estimate, several times cheaper than
   exp(log()) and within a few ulp of base^-0.75 (exp(log()) is within ~1.5 ulp; the contract allows rel 2e-5).
   Bases outside [2^-100, 2^100] (0, inf, NaN, negative, extreme magnitudes) take exp(log()), so every special
   value comes out exactly as the general formula gives it. */
SB_INLINE vf lrn_pow(vf base, vf k2, const int three_quarters)
{
    if (!three_quarters)
        return vexp(vlog(base) * k2);
    vi fast = (base >= vset1(7.88860905e-31f)) & (base <= vset1(1.26765060e+30f));
    vf r = lrn_rsqrt(vselect(fast, base, vset1(1.0f)));
    vf y = r * r * lrn_rsqrt(r);
    if (__builtin_expect(!sb_vm_all(fast), 0))
        y = lrn_pow_slow(base, k2, fast, y);
    return y;
}

SB_INLINE vf lrn_scale(vf x, vf sum, vf k0, vf k1, vf k2, const int three_quarters)
{
    return x * lrn_pow(vfmadd(k1, sum, k0), k2, three_quarters);
}

SB_INLINE void lrn_nchw(const float * src, size_t half, size_t channels, size_t spatial, const float * k, float * dst,
    const int three_quarters)
{
    vf k0 = vset1(k[0]), k1 = vset1(k[1]), k2 = vset1(k[2]);
    for (size_t c = 0; c < channels; ++c) {
        size_t lo = c > half ? c - half : 0, hi = c + half + 1 < channels ? c + half + 1 : channels;
        const float * s = src + c * spatial;
        float * d = dst + c * spatial;
        size_t j = 0;
        /* Two vectors at a time: two independent chains through the long exp(log()) latency. */
        for (; j + 2 * SB_W <= spatial; j += 2 * SB_W) {
            vf sum0 = vset1(0.0f), sum1 = vset1(0.0f);
            for (size_t i = lo; i < hi; ++i) {
                vf v0 = vload(src + i * spatial + j), v1 = vload(src + i * spatial + j + SB_W);
                sum0 = vfmadd(v0, v0, sum0);
                sum1 = vfmadd(v1, v1, sum1);
            }
            vstore(d + j, lrn_scale(vload(s + j), sum0, k0, k1, k2, three_quarters));
            vstore(d + j + SB_W, lrn_scale(vload(s + j + SB_W), sum1, k0, k1, k2, three_quarters));
        }
        for (; j + SB_W <= spatial; j += SB_W) {
            vf sum = vset1(0.0f);
            for (size_t i = lo; i < hi; ++i) {
                vf v = vload(src + i * spatial + j);
                sum = vfmadd(v, v, sum);
            }
            vstore(d + j, lrn_scale(vload(s + j), sum, k0, k1, k2, three_quarters));
        }
        if (j < spatial) {
            size_t n = spatial - j;
            vf sum = vset1(0.0f);
            for (size_t i = lo; i < hi; ++i) {
                vf v = vload_n(src + i * spatial + j, n);
                sum = vfmadd(v, v, sum);
            }
            vstore_n(d + j, lrn_scale(vload_n(s + j, n), sum, k0, k1, k2, three_quarters), n);
        }
    }
}

/* Pixels whose squares are written before any of them is summed: the window loads are unaligned and overlap the
   square stores, so a load issued right after its pixel's stores cannot be forwarded from them and waits for them to
   reach the cache; a block of pixels puts other work between the two. */
#define LRN_NHWC_BLOCK 16

SB_INLINE void lrn_nhwc(const float * src, size_t half, size_t channels, size_t spatial, const float * k, float * dst,
    float * rows, size_t stride, const int three_quarters)
{
    /* rows[p * stride ...]: half zeros, pixel p's squares, half + SB_W zeros. */
    vf k0 = vset1(k[0]), k1 = vset1(k[1]), k2 = vset1(k[2]);
    for (size_t s0 = 0; s0 < spatial; s0 += LRN_NHWC_BLOCK) {
        size_t pixels = spatial - s0 < LRN_NHWC_BLOCK ? spatial - s0 : LRN_NHWC_BLOCK;
        for (size_t p = 0; p < pixels; ++p) {
            const float * x = src + (s0 + p) * channels;
            float * squares = rows + p * stride + half;
            size_t c = 0;
            for (; c + SB_W <= channels; c += SB_W) {
                vf v = vload(x + c);
                vstore(squares + c, v * v);
            }
            if (c < channels) {
                vf v = vload_n(x + c, channels - c);
                vstore_n(squares + c, v * v, channels - c);
            }
        }
        for (size_t p = 0; p < pixels; ++p) {
            const float * x = src + (s0 + p) * channels;
            const float * row = rows + p * stride;
            float * d = dst + (s0 + p) * channels;
            for (size_t c = 0; c < channels; c += SB_W) {
                vf sum = vset1(0.0f);
                for (size_t i = 0; i <= 2 * half; ++i)
                    sum += vload(row + c + i); /* lanes past `channels` read zeros or unused squares; never stored */
                if (c + SB_W <= channels)
                    vstore(d + c, lrn_scale(vload(x + c), sum, k0, k1, k2, three_quarters));
                else
                    vstore_n(d + c, lrn_scale(vload_n(x + c, channels - c), sum, k0, k1, k2, three_quarters), channels - c);
            }
        }
    }
}

void SB_FN(lrn)(const float * src, size_t half, size_t channels, size_t spatial, const float * k, float * dst,
    SimdTensorFormatType format)
{
    if (channels == 0 || spatial == 0)
        return;
    /* A window wider than the channels is the same as one that covers them all. */
    if (half >= channels)
        half = channels - 1;
    if (format == SimdTensorFormatNchw) {
        if (k[2] == -0.75f)
            lrn_nchw(src, half, channels, spatial, k, dst, 1);
        else
            lrn_nchw(src, half, channels, spatial, k, dst, 0);
    } else if (format == SimdTensorFormatNhwc) {
        size_t stride = channels + 2 * half + SB_W;
        float * rows = (float *)sb_alloc_zeroed(stride * LRN_NHWC_BLOCK, sizeof(float));
        if (rows == NULL) {
            sb_fail_no_memory();
            return;
        }
        if (k[2] == -0.75f)
            lrn_nhwc(src, half, channels, spatial, k, dst, rows, stride, 1);
        else
            lrn_nhwc(src, half, channels, spatial, k, dst, rows, stride, 0);
        sb_free(rows);
    }
}
