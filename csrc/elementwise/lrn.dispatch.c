/*
 * lrn.dispatch.c: SimdSynetLrnLayerCrossChannels's kernel, compiled once per ISA.
 *
 * Spec 3.3: dst[c, s] = src[c, s] * Pow(k0 + k1 * sum, k2), sum = sum of src[i, s]^2 over i in
 * [max(0, c - half), min(channels, c + half + 1)), Pow(b, e) = exp(log(b) * e) (so a negative base gives NaN),
 * with no division by the window size. The window sum is direct (not running), in float32. Unlike upstream, NHWC
 * is correct for every channel count (channels < 2*half + 1 included): the squares of one pixel go to a zero-padded
 * scratch row, so windows never read outside the pixel.
 */
#include <stdlib.h>

#include "simd_synet.h"
#include "internal/vmath.h"

SB_INLINE vf lrn_scale(vf x, vf sum, vf k0, vf k1, vf k2)
{
    return x * vexp(vlog(vfmadd(k1, sum, k0)) * k2);
}

static void lrn_nchw(const float * src, size_t half, size_t channels, size_t spatial, const float * k, float * dst)
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
            vstore(d + j, lrn_scale(vload(s + j), sum0, k0, k1, k2));
            vstore(d + j + SB_W, lrn_scale(vload(s + j + SB_W), sum1, k0, k1, k2));
        }
        for (; j + SB_W <= spatial; j += SB_W) {
            vf sum = vset1(0.0f);
            for (size_t i = lo; i < hi; ++i) {
                vf v = vload(src + i * spatial + j);
                sum = vfmadd(v, v, sum);
            }
            vstore(d + j, lrn_scale(vload(s + j), sum, k0, k1, k2));
        }
        if (j < spatial) {
            size_t n = spatial - j;
            vf sum = vset1(0.0f);
            for (size_t i = lo; i < hi; ++i) {
                vf v = vload_n(src + i * spatial + j, n);
                sum = vfmadd(v, v, sum);
            }
            vstore_n(d + j, lrn_scale(vload_n(s + j, n), sum, k0, k1, k2), n);
        }
    }
}

/* Pixels whose squares are written before any of them is summed: the window loads are unaligned and overlap the
   square stores, so a load issued right after its pixel's stores cannot be forwarded from them and waits for them to
   reach the cache; a block of pixels puts other work between the two. */
#define LRN_NHWC_BLOCK 16

static void lrn_nhwc(const float * src, size_t half, size_t channels, size_t spatial, const float * k, float * dst,
    float * rows, size_t stride)
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
                    vstore(d + c, lrn_scale(vload(x + c), sum, k0, k1, k2));
                else
                    vstore_n(d + c, lrn_scale(vload_n(x + c, channels - c), sum, k0, k1, k2), channels - c);
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
        lrn_nchw(src, half, channels, spatial, k, dst);
    } else if (format == SimdTensorFormatNhwc) {
        size_t stride = channels + 2 * half + SB_W;
        float * rows = calloc(stride * LRN_NHWC_BLOCK, sizeof(float));
        if (rows == NULL)
            return;
        lrn_nhwc(src, half, channels, spatial, k, dst, rows, stride);
        free(rows);
    }
}
