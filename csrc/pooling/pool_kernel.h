/*
 * pool_kernel.h: the pooling loops, written once and instantiated by each *.dispatch.c of this family for its
 * element type (float32 average, float32 max, bf16 max, uint8 max) and ISA.
 *
 * Semantics (upstream's): every output folds the elements of its clipped window (pv_window) in scan order, starting
 * from PK_INIT: row-major over (y, x) within each channel plane for NCHW, over (y, x) per channel for NHWC; the 3D
 * NCHW form folds planes in channel order, each row-major. Vector lanes hold independent outputs, and each lane
 * performs exactly the scalar fold, so the body, the overlapping last vector, the partial tails and the scalar
 * borders all give identical results.
 *
 * The including file defines:
 *   PK_T          element type in memory                 PK_S        scalar accumulator type
 *   PK_V          vector accumulator type                PK_L        lanes of PK_V (a literal: 4, 8, 16, 32 or 64)
 *   PK_LOAD(p)    PK_L elements -> PK_V                  PK_LOAD_N(p, n)   first n < PK_L elements (rest 0)
 *   PK_CVT(e)     one element -> PK_S                    PK_INIT_V / PK_INIT_S   the fold's start
 *   PK_OP_V(a, x) / PK_OP_S(a, x)   one fold step
 *   PK_STORE(p, a, d) / PK_STORE_N(p, a, d, n) / PK_FINAL(a, d)   result from accumulator and divisor d (float)
 *   optionally PK_LOAD_BYTES(p, bytes) -> PK_V, PK_STORE_BYTES(p, a, d, bytes): the first `bytes` (4, 8 or 16) of
 *                 a vector's elements as one move (vec.h's vload_bytes), for images of fewer channels than a vector
 *   PK_AVERAGE    1 if the divisor is used (average pooling), else 0
 * Nothing outside [src, src + C*H*W) is read and nothing outside the output is written, for any arguments.
 */
#ifndef PK_T
#error "define the PK_* macros before including pool_kernel.h"
#endif

typedef struct {
    size_t srcH, srcW, kernelY, kernelX, strideY, strideX, padY, padX, dstH, dstW;
    int exclude; /* average: divide by the clipped area rather than kernelY*kernelX */
} pk_geometry;

SB_INLINE float pk_divisor(const pk_geometry * g, size_t rows, size_t cols)
{
    return g->exclude ? (float)(rows * cols) : (float)g->kernelY * (float)g->kernelX;
}

/* One output element of the NCHW form: fold planes [0, planes) (plane stride `plane`) over the window. */
SB_INLINE PK_T pk_nchw_one(const PK_T * src, size_t planes, size_t plane, const pk_geometry * g, size_t yb,
    size_t ye, size_t dx)
{
    size_t xb, xe;
    pv_window(dx, g->strideX, g->padX, g->kernelX, g->srcW, &xb, &xe);
    PK_S acc = PK_INIT_S;
    for (size_t c = 0; c < planes; ++c)
        for (size_t y = yb; y < ye; ++y) {
            const PK_T * row = src + c * plane + y * g->srcW;
            for (size_t x = xb; x < xe; ++x)
                acc = PK_OP_S(acc, PK_CVT(row[x]));
        }
    (void)pk_divisor;
    return PK_FINAL(acc, (PK_AVERAGE ? pk_divisor(g, ye - yb, xe - xb) : 1.0f));
}

/* PK_L adjacent outputs dx0 .. dx0+PK_L-1 whose column windows lie inside the image, for stride S (1 or 2) and
   kernel width K; inlined with constant S and K for the common shapes so that the taps unroll and the stride-2
   pair loads are shared (tap k odd takes the odd lanes of the pair loaded for tap k-1). */
SB_INLINE void pk_nchw_vector_ks(const PK_T * src, size_t planes, size_t plane, const pk_geometry * g, size_t yb,
    size_t ye, size_t dx0, PK_T * dst, size_t S, size_t K)
{
    PK_V acc = PK_INIT_V;
    const size_t offset = dx0 * S - g->padX;
    for (size_t c = 0; c < planes; ++c)
        for (size_t y = yb; y < ye; ++y) {
            const PK_T * row = src + c * plane + y * g->srcW + offset;
            if (S == 1) {
                for (size_t k = 0; k < K; ++k)
                    acc = PK_OP_V(acc, PK_LOAD(row + k));
            } else { /* lanes in SB_EVENP order (the same for every tap), restored once before the store */
                for (size_t k = 0; k < K; ++k)
                    acc = PK_OP_V(acc, (k & 1) ? SB_ODDP(PK_LOAD(row + k - 1), PK_LOAD(row + k - 1 + PK_L), PK_L)
                                               : SB_EVENP(PK_LOAD(row + k), PK_LOAD(row + k + PK_L), PK_L));
            }
        }
    if (S != 1)
        acc = SB_UNPERM(acc, PK_L);
    PK_STORE(dst + dx0, acc, (PK_AVERAGE ? pk_divisor(g, ye - yb, K) : 1.0f));
}

SB_INLINE void pk_nchw_vector(const PK_T * src, size_t planes, size_t plane, const pk_geometry * g, size_t yb,
    size_t ye, size_t dx0, PK_T * dst)
{
    const size_t S = g->strideX, K = g->kernelX;
    if (S == 2 && K == 3)
        pk_nchw_vector_ks(src, planes, plane, g, yb, ye, dx0, dst, 2, 3);
    else if (S == 2 && K == 2)
        pk_nchw_vector_ks(src, planes, plane, g, yb, ye, dx0, dst, 2, 2);
    else if (S == 1 && K == 3)
        pk_nchw_vector_ks(src, planes, plane, g, yb, ye, dx0, dst, 1, 3);
    else if (S == 1 && K == 2)
        pk_nchw_vector_ks(src, planes, plane, g, yb, ye, dx0, dst, 1, 2);
    else
        pk_nchw_vector_ks(src, planes, plane, g, yb, ye, dx0, dst, S, K);
}

/* One output plane of the NCHW form (2D: planes == 1; 3D max: the channel window's planes). */
static void pk_nchw_plane(const PK_T * src, size_t planes, const pk_geometry * g, PK_T * dst)
{
    const size_t plane = g->srcH * g->srcW, s = g->strideX, W = g->srcW, k = g->kernelX;
    /* Vector outputs dx0 need dx0*s >= padX (no left clipping) and a last column read of
       dx0*s - padX + (k - 1) + s*PK_L - 1 <= W - 1 (covers right clipping and the stride-2 pair load). */
    long first = -1, last = -1;
    if ((s == 1 || s == 2) && g->dstW >= PK_L && k <= W && W < ((size_t)1 << 40) && g->padX < W) {
        first = (long)((g->padX + s - 1) / s);
        long room = (long)W - 1 + (long)g->padX - (long)(k - 1) - (long)(s * PK_L - 1);
        last = room >= 0 ? room / (long)s : -1;
        if (last > (long)(g->dstW - PK_L)) last = (long)(g->dstW - PK_L);
    }
    for (size_t dy = 0; dy < g->dstH; ++dy) {
        size_t yb, ye;
        pv_window(dy, g->strideY, g->padY, g->kernelY, g->srcH, &yb, &ye);
        PK_T * out = dst + dy * g->dstW;
        size_t dx = 0;
        if (first >= 0 && last >= first) {
            for (; dx < (size_t)first; ++dx)
                out[dx] = pk_nchw_one(src, planes, plane, g, yb, ye, dx);
            for (; dx < (size_t)last; dx += PK_L)
                pk_nchw_vector(src, planes, plane, g, yb, ye, dx, out);
            pk_nchw_vector(src, planes, plane, g, yb, ye, (size_t)last, out); /* may overlap the previous one */
            dx = (size_t)last + PK_L;
        }
        for (; dx < g->dstW; ++dx)
            out[dx] = pk_nchw_one(src, planes, plane, g, yb, ye, dx);
    }
}

/* NHWC folds PK_NL channels at a time in a pk_nv. By default one PK_V of PK_L channels; a type whose elements
   widen (bf16) defines its own, wider chunk so that no lane crosses a 128-bit lane. The includer may define:
     PK_NL, pk_nv, PK_NINIT, PK_NFOLD(a, p) (a folded with the PK_NL elements at p), PK_NSTORE(p, a, d);
     PK_NINEXACT(a) for a chunk fold that is exact only for most inputs: zero when a holds exactly the fold of
     PK_OP_V, otherwise nonzero (any integer or mask type that | combines); then the chunks are folded again with
     PK_OP_V, PK_L channels at a time (PK_NL a multiple of PK_L), and only that result is stored. */
#ifndef PK_NL
#define PK_NL PK_L
typedef PK_V pk_nv;
#define PK_NINIT PK_INIT_V
#define PK_NFOLD(a, p) PK_OP_V(a, PK_LOAD(p))
#define PK_NSTORE(p, a, d) PK_STORE(p, a, d)
#endif

#ifdef PK_NINEXACT
/* n channels (a multiple of PK_L) from p folded with PK_OP_V over the window, as pk_nhwc_chunks describes. Out of
   line and cold: it runs only for the chunks PK_NINEXACT rejects. */
__attribute__((noinline, cold)) static void pk_nhwc_refold(const PK_T * p, size_t rs, size_t C, size_t R, size_t K,
    size_t n, float div, PK_T * out)
{
    for (size_t c = 0; c < n; c += PK_L) {
        PK_V a = PK_INIT_V;
        for (size_t y = 0; y < R; ++y)
            for (size_t x = 0; x < K; ++x)
                a = PK_OP_V(a, PK_LOAD(p + y * rs + x * C + c));
        PK_STORE(out + c, a, div);
    }
}
#endif

/* N (1, 2 or 4) chunks of channels from p (the window's first pixel, channel offset included) folded over the
   window's R rows (row stride rs) of K pixels (pixel stride C), in scan order per channel, and stored at out. N,
   and R and K for the unrolled shapes, are constants after inlining, so the accumulators stay in registers. */
SB_INLINE void pk_nhwc_chunks(const PK_T * p, size_t rs, size_t C, size_t R, size_t K, size_t N, float div,
    PK_T * out)
{
    pk_nv a0 = PK_NINIT, a1 = PK_NINIT, a2 = PK_NINIT, a3 = PK_NINIT;
    for (size_t y = 0; y < R; ++y)
        for (size_t x = 0; x < K; ++x) {
            const PK_T * q = p + y * rs + x * C;
            a0 = PK_NFOLD(a0, q);
            if (N > 1) a1 = PK_NFOLD(a1, q + PK_NL);
            if (N > 2) a2 = PK_NFOLD(a2, q + 2 * PK_NL), a3 = PK_NFOLD(a3, q + 3 * PK_NL);
        }
#ifdef PK_NINEXACT
    /* | rather than ||: one test and branch for all N chunks */
    if (PK_NINEXACT(a0) | (N > 1 ? PK_NINEXACT(a1) : 0) | (N > 2 ? PK_NINEXACT(a2) | PK_NINEXACT(a3) : 0)) {
        pk_nhwc_refold(p, rs, C, R, K, N * PK_NL, div, out);
        return;
    }
#endif
    PK_NSTORE(out, a0, div);
    if (N > 1) PK_NSTORE(out + PK_NL, a1, div);
    if (N > 2) PK_NSTORE(out + 2 * PK_NL, a2, div), PK_NSTORE(out + 3 * PK_NL, a3, div);
}

/* An image of PK_L to PK_NL - 1 channels (those of fewer go to pk_narrow_pixel; only a type whose chunk is wider than a
   vector has such images): PK_V vectors, the last one overlapping the one before (same values, written again). */
static void pk_nhwc_rest(const PK_T * src, size_t C, const pk_geometry * g, size_t yb, size_t ye, size_t xb,
    size_t xe, float div, PK_T * out)
{
    const size_t W = g->srcW;
    for (size_t c = 0; c < C; c += PK_L) {
        if (c + PK_L > C)
            c = C - PK_L;
        PK_V a = PK_INIT_V;
        for (size_t y = yb; y < ye; ++y)
            for (size_t x = xb; x < xe; ++x)
                a = PK_OP_V(a, PK_LOAD(src + (y * W + x) * C + c));
        PK_STORE(out + c, a, div);
    }
}

/* Every channel of one output pixel whose window is rows [yb, yb + R) and columns [xb, xb + K). */
SB_INLINE void pk_nhwc_pixel(const PK_T * src, size_t C, const pk_geometry * g, size_t yb, size_t R, size_t xb,
    size_t K, float div, PK_T * out)
{
    const size_t rs = g->srcW * C;
    const PK_T * p = src + yb * rs + xb * C;
    size_t c = 0;
    for (; c + 4 * PK_NL <= C; c += 4 * PK_NL)
        pk_nhwc_chunks(p + c, rs, C, R, K, 4, div, out + c);
    if (c + 2 * PK_NL <= C) {
        pk_nhwc_chunks(p + c, rs, C, R, K, 2, div, out + c);
        c += 2 * PK_NL;
    }
    if (c + PK_NL <= C) {
        pk_nhwc_chunks(p + c, rs, C, R, K, 1, div, out + c);
        c += PK_NL;
    }
    if (c < C) {
        if (C >= PK_NL) /* the last chunk again, overlapping: same values, written again */
            pk_nhwc_chunks(p + C - PK_NL, rs, C, R, K, 1, div, out + C - PK_NL);
        else
            pk_nhwc_rest(src, C, g, yb, yb + R, xb, xb + K, div, out);
    }
}

/* One output pixel of an image with fewer channels than a vector (C < PK_L): one vector, its first C lanes the
   pixel's channels, folded over the window's R rows of K pixels from (yb, xb). Where a pixel is 4, 8 or 16 bytes
   (`bytes`, a constant) and the includer has PK_LOAD_BYTES, each window pixel is loaded and the output stored by one
   move of exactly that size. Otherwise (bytes == 0) it loads PK_L elements from each window pixel and stores PK_L
   at the output pixel wherever the arrays hold that many from there (the extra lanes read the next pixels' elements,
   and write values that the output pixels after this one, written later, overwrite), a partial move only at the
   arrays' ends, chosen once per output pixel (a choice per load cost more than the loads). No mask, and no scalar
   fold channel by channel as before; with pk_nhwc_rows' fixed 2x2 and 3x3 windows, avx2 / avx512bw on Zen 4: 4
   channels of a 4x4 image in 2x2 windows, float32 max 68 / 61 -> 28 / 28 ns, average 60 / 65 -> 28 / 34, uint8 max
   68 / 68 -> 22 / 22, bf16 max 73 / 63 -> 36 / 36; 3 channels of 224x224 in 3x3 windows, stride 2, float32 max
   252 / 219 -> 39 / 63 us, average 292 / 178 -> 46 / 33, uint8 max 346 / 342 -> 45 / 45, bf16 max 184 / 151 -> 54 /
   76. */
SB_INLINE void pk_narrow_pixel(const PK_T * src, size_t C, const pk_geometry * g, size_t yb, size_t R, size_t xb,
    size_t K, float div, PK_T * out, PK_T * dst_end, size_t bytes)
{
    const size_t rs = g->srcW * C, total = g->srcH * rs;
    /* whole vectors from every window pixel when the last one has PK_L elements left (one test per output pixel) */
    const int whole = R && K && (yb + R - 1) * rs + (xb + K - 1) * C + PK_L <= total;
    PK_V a = PK_INIT_V;
    for (size_t y = 0; y < R; ++y)
        for (size_t x = 0, at = (yb + y) * rs + xb * C; x < K; ++x, at += C)
#ifdef PK_LOAD_BYTES
            a = PK_OP_V(a, bytes ? PK_LOAD_BYTES(src + at, bytes) : whole ? PK_LOAD(src + at) : PK_LOAD_N(src + at, C));
#else
            a = PK_OP_V(a, whole ? PK_LOAD(src + at) : PK_LOAD_N(src + at, C));
#endif
#ifdef PK_LOAD_BYTES
    if (bytes)
        PK_STORE_BYTES(out, a, div, bytes);
    else
#endif
    if ((size_t)(dst_end - out) >= PK_L)
        PK_STORE(out, a, div);
    else
        PK_STORE_N(out, a, div, C);
}

/* bytes for the pixel kernels below: every channel in chunks (pk_nhwc_pixel), not one narrow vector. */
#define PK_WIDE ((size_t)-1)

/* One output pixel, its window's R rows of K pixels from (yb, xb): by chunks of channels (bytes == PK_WIDE) or as
   one narrow vector (pk_narrow_pixel). */
SB_INLINE void pk_nhwc_any_pixel(const PK_T * src, size_t C, const pk_geometry * g, size_t yb, size_t R, size_t xb,
    size_t K, float div, PK_T * out, PK_T * dst_end, size_t bytes)
{
    if (bytes == PK_WIDE)
        pk_nhwc_pixel(src, C, g, yb, R, xb, K, div, out);
    else
        pk_narrow_pixel(src, C, g, yb, R, xb, K, div, out, dst_end, bytes);
}

/* Output pixels [dx0, dx1) of one row, all with column windows of width K starting at dx*strideX - padX. */
SB_INLINE void pk_nhwc_run(const PK_T * src, size_t C, const pk_geometry * g, size_t yb, size_t R, size_t dx0,
    size_t dx1, size_t K, float div, PK_T * out, PK_T * dst_end, size_t bytes)
{
    for (size_t dx = dx0; dx < dx1; ++dx)
        pk_nhwc_any_pixel(src, C, g, yb, R, dx * g->strideX - g->padX, K, div, out + dx * C, dst_end, bytes);
}

/* One output pixel whose column window is clipped (or any, computed by pv_window). */
static void pk_nhwc_clipped(const PK_T * src, size_t C, const pk_geometry * g, size_t yb, size_t R, size_t dx,
    PK_T * out, PK_T * dst_end, size_t bytes)
{
    size_t xb, xe;
    pv_window(dx, g->strideX, g->padX, g->kernelX, g->srcW, &xb, &xe);
    pk_nhwc_any_pixel(src, C, g, yb, R, xb, xe - xb, PK_AVERAGE ? pk_divisor(g, R, xe - xb) : 1.0f, out + dx * C,
        dst_end, bytes);
}

/* 2D NHWC: every output pixel folds its window per channel (bytes: see pk_nhwc_any_pixel). The columns whose windows
   lie inside the image are found once per call and run with the window's shape fixed per row (unrolled for 3x3, and
   for 2x2 where the includer defines PK_NHWC_UNROLL_2X2 or the pixels are narrow: on a 256-channel float32 layer the
   unrolled 2x2 measured 5-10% slower than the loop, on bf16 pairs 6% faster); only the border columns compute their
   windows one by one. */
SB_INLINE void pk_nhwc_rows(const PK_T * src, size_t C, const pk_geometry * g, PK_T * dst, size_t bytes)
{
    const size_t W = g->srcW, sx = g->strideX, kx = g->kernelX, pad = g->padX;
    PK_T * const dst_end = dst + g->dstH * g->dstW * C;
    /* Unclipped: dx*sx >= pad and dx*sx - pad + kx <= W, i.e. first <= dx < end; empty when none (or when the
       bounds do not fit in size_t, so that dx*sx below cannot overflow either, or for a zero stride). */
    size_t first = 0, end = 0, room;
    if (sx != 0 && kx <= W && !__builtin_add_overflow(W - kx, pad, &room)) {
        first = pad / sx + (pad % sx != 0);
        end = room / sx + 1;
        if (end > g->dstW)
            end = g->dstW;
        if (end < first)
            end = first;
    }
#ifdef PK_NHWC_UNROLL_2X2
    const int unroll_2x2 = 1;
#else
    const int unroll_2x2 = bytes != PK_WIDE;
#endif
    for (size_t dy = 0; dy < g->dstH; ++dy) {
        size_t yb, ye;
        pv_window(dy, g->strideY, g->padY, g->kernelY, g->srcH, &yb, &ye);
        const size_t R = ye - yb;
        PK_T * out = dst + dy * g->dstW * C;
        const size_t left = first < g->dstW ? first : g->dstW;
        for (size_t dx = 0; dx < left; ++dx)
            pk_nhwc_clipped(src, C, g, yb, R, dx, out, dst_end, bytes);
        const float div = PK_AVERAGE ? pk_divisor(g, R, kx) : 1.0f;
        if (R == 3 && kx == 3)
            pk_nhwc_run(src, C, g, yb, 3, first, end, 3, div, out, dst_end, bytes);
        else if (unroll_2x2 && R == 2 && kx == 2)
            pk_nhwc_run(src, C, g, yb, 2, first, end, 2, div, out, dst_end, bytes);
        else
            pk_nhwc_run(src, C, g, yb, R, first, end, kx, div, out, dst_end, bytes);
        for (size_t dx = end > left ? end : left; dx < g->dstW; ++dx)
            pk_nhwc_clipped(src, C, g, yb, R, dx, out, dst_end, bytes);
    }
}

static void pk_nhwc(const PK_T * src, size_t C, const pk_geometry * g, PK_T * dst)
{
    if (C >= PK_L) {
        pk_nhwc_rows(src, C, g, dst, PK_WIDE);
        return;
    }
#ifdef PK_LOAD_BYTES
    switch (C * sizeof(PK_T)) {
    case 4: pk_nhwc_rows(src, C, g, dst, 4); return;
    case 8: pk_nhwc_rows(src, C, g, dst, 8); return;
    case 16: pk_nhwc_rows(src, C, g, dst, 16); return;
    }
#endif
    pk_nhwc_rows(src, C, g, dst, 0);
}

/* 2D over every channel, either layout. */
static void pk_pool2d(const PK_T * src, size_t C, const pk_geometry * g, PK_T * dst, int nhwc)
{
    if (nhwc) {
        pk_nhwc(src, C, g, dst);
        return;
    }
    for (size_t c = 0; c < C; ++c)
        pk_nchw_plane(src + c * g->srcH * g->srcW, 1, g, dst + c * g->dstH * g->dstW);
}
