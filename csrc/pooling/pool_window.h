/*
 * pool_window.h: pv_window, the clipped pooling window of one output coordinate (upstream's rule,
 * [y*stride - pad, y*stride - pad + kernel) clipped to the input, in signed arithmetic),
 * computed without overflow for any size_t arguments. The vectors are internal/vec.h's.
 */
#ifndef SB_POOL_WINDOW_H
#define SB_POOL_WINDOW_H

#include <stddef.h>
#include <stdint.h>

/* The window of output coordinate d along one axis: [d*stride - pad, d*stride - pad + kernel) clipped to [0, size),
   as [*begin, *end) with *begin <= *end (an empty window has *begin == *end). */
SB_INLINE void pv_window(size_t d, size_t stride, size_t pad, size_t kernel, size_t size, size_t * begin,
    size_t * end)
{
    size_t first, last; /* both shifted by +pad */
    /* d*stride + kernel overflows: the window starts beyond any addressable image. Checked with the overflow
       builtins, not a division: this runs once per output pixel of the NHWC loops. */
    if (__builtin_mul_overflow(d, stride, &first) || __builtin_add_overflow(first, kernel, &last)) {
        *begin = *end = size;
        return;
    }
    size_t b = first > pad ? first - pad : 0, e = last > pad ? last - pad : 0;
    if (b > size) b = size;
    if (e > size) e = size;
    if (e < b) e = b;
    *begin = b;
    *end = e;
}

#endif /* SB_POOL_WINDOW_H */
