/* @targets base sse41 avx2 avx512bw */
/*
 * shuffle.dispatch.c: SimdSynetShuffleLayerForward's kernel, compiled once per ISA (bit-exact copies).
 *
 * type 0 (split): cat = concat(src0, src1) along channels; dst0 = cat[0::2], dst1 = cat[1::2].
 * type 1 (interleave, the inverse): inter[2i] = src0[i], inter[2i+1] = src1[i]; dst0 = inter[:channels0],
 * dst1 = inter[channels0:]. NCHW moves whole channel planes (memcpy); NHWC applies the mapping inside each pixel.
 * channels0 and channels1 must be even (the API refuses odd counts and invalid type/format: nothing is written).
 */
#include "simd_synet.h"

/* NHWC, one pixel: pairs (a[2k], a[2k+1]) of a channel run go to e[k] and o[k] (split) or back (interleave). */
SB_INLINE void split_pairs(const float * a, size_t pairs, float * e, float * o)
{
    for (size_t k = 0; k < pairs; ++k) {
        e[k] = a[2 * k];
        o[k] = a[2 * k + 1];
    }
}

SB_INLINE void join_pairs(const float * e, const float * o, size_t pairs, float * a)
{
    for (size_t k = 0; k < pairs; ++k) {
        a[2 * k] = e[k];
        a[2 * k + 1] = o[k];
    }
}

void SB_FN(shuffle)(const float * src0, const float * src1, size_t channels0, size_t channels1, size_t spatial,
    float * dst0, float * dst1, SimdTensorFormatType format, int type)
{
    size_t h0 = channels0 / 2, h1 = channels1 / 2, c = h0 + h1;
    if (format == SimdTensorFormatNchw) {
        size_t plane = spatial * sizeof(float);
        if (type == 0) {
            for (size_t k = 0; k < h0; ++k) {
                memcpy(dst0 + k * spatial, src0 + (2 * k) * spatial, plane);
                memcpy(dst1 + k * spatial, src0 + (2 * k + 1) * spatial, plane);
            }
            for (size_t k = 0; k < h1; ++k) {
                memcpy(dst0 + (h0 + k) * spatial, src1 + (2 * k) * spatial, plane);
                memcpy(dst1 + (h0 + k) * spatial, src1 + (2 * k + 1) * spatial, plane);
            }
        } else {
            for (size_t k = 0; k < h0; ++k) {
                memcpy(dst0 + (2 * k) * spatial, src0 + k * spatial, plane);
                memcpy(dst0 + (2 * k + 1) * spatial, src1 + k * spatial, plane);
            }
            for (size_t k = 0; k < h1; ++k) {
                memcpy(dst1 + (2 * k) * spatial, src0 + (h0 + k) * spatial, plane);
                memcpy(dst1 + (2 * k + 1) * spatial, src1 + (h0 + k) * spatial, plane);
            }
        }
    } else {
        for (size_t s = 0; s < spatial; ++s) {
            if (type == 0) {
                split_pairs(src0 + s * channels0, h0, dst0 + s * c, dst1 + s * c);
                split_pairs(src1 + s * channels1, h1, dst0 + s * c + h0, dst1 + s * c + h0);
            } else {
                join_pairs(src0 + s * c, src1 + s * c, h0, dst0 + s * channels0);
                join_pairs(src0 + s * c + h0, src1 + s * c + h0, h1, dst1 + s * channels1);
            }
        }
    }
}
