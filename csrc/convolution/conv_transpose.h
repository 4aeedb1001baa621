/*
 * conv_transpose.h: [rows][cols] -> [cols][rows] for the algorithms that run NCHW calls through their NHWC code:
 * channels x pixels to pixels x channels and back (Winograd), or an NHWC output row into its NCHW place
 * (NhwcDirect). Included by *.dispatch.c sources only (per-ISA code).
 */
#ifndef SB_CONV_TRANSPOSE_H
#define SB_CONV_TRANSPOSE_H

#include "internal/dispatch.h"

typedef struct {
    const float * src; /* [rows][cols] */
    float * dst;       /* [cols][rows], rows ldd floats apart */
    size_t rows, cols, ldd;
} transpose_arg;

/* Rows [begin, end) of dst (columns of src), in 8x8 blocks that keep both sides' cache lines in use; with SSE, each
   4x4 quarter as four loads, one register transpose and four stores (about 3x the scalar copy's speed). */
static void transpose_part(void * arg, size_t begin, size_t end)
{
    const transpose_arg * a = (const transpose_arg *)arg;
    size_t rows = a->rows, cols = a->cols;
    for (size_t c0 = begin; c0 < end; c0 += 8) {
        size_t nc = end - c0 < 8 ? end - c0 : 8;
        for (size_t r0 = 0; r0 < rows; r0 += 8) {
            size_t nr = rows - r0 < 8 ? rows - r0 : 8;
#if SB_ISA_AT_LEAST(1)
            if (nc == 8 && nr == 8) {
                for (size_t cq = c0; cq < c0 + 8; cq += 4)
                    for (size_t rq = r0; rq < r0 + 8; rq += 4) {
                        const float * s = a->src + rq * cols + cq;
                        __m128 x0 = _mm_loadu_ps(s), x1 = _mm_loadu_ps(s + cols);
                        __m128 x2 = _mm_loadu_ps(s + 2 * cols), x3 = _mm_loadu_ps(s + 3 * cols);
                        _MM_TRANSPOSE4_PS(x0, x1, x2, x3);
                        float * d = a->dst + cq * a->ldd + rq;
                        _mm_storeu_ps(d, x0);
                        _mm_storeu_ps(d + a->ldd, x1);
                        _mm_storeu_ps(d + 2 * a->ldd, x2);
                        _mm_storeu_ps(d + 3 * a->ldd, x3);
                    }
                continue;
            }
#endif
            for (size_t c = c0; c < c0 + nc; ++c)
                for (size_t r = r0; r < r0 + nr; ++r)
                    a->dst[c * a->ldd + r] = a->src[r * cols + c];
        }
    }
}

static void transpose(const float * src, size_t rows, size_t cols, float * dst)
{
    transpose_arg a = {src, dst, rows, cols, rows};
    sb_parallel_for(cols, 8, transpose_part, &a);
}

/* The same on the calling thread, into rows of dst ldd floats apart (a block of a larger matrix). */
static inline void transpose_serial(const float * src, size_t rows, size_t cols, float * dst, size_t ldd)
{
    transpose_arg a = {src, dst, rows, cols, ldd};
    transpose_part(&a, 0, cols);
}

#endif /* SB_CONV_TRANSPOSE_H */
