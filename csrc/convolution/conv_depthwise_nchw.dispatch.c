/* @targets base sse41 avx2 avx512bw */
/*
 * conv_depthwise_nchw.dispatch.c: direct depthwise convolution (group == srcC == dstC), NCHW, compiled once per ISA.
 *
 * Weights [C][1][kY][kX]; one plane at a time, vectors along the output row over the columns whose taps all lie
 * inside the image, the border columns tap by tap. 3x3 kernels (dilation 1, x-stride 1 or 2), on rows whose three
 * kernel rows are inside: the nine weights stay in registers, and blocks of up to four rows (y-stride 1 or 2) and
 * two vectors share every source load (at AVX-512 the border columns too, through masked lanes); at x-stride 2 the
 * plane is first split by column parity so that every tap reads consecutive floats.
 * See conv_depthwise.h.
 */
#include "convolution/conv_depthwise.h"

/* 3x3 register blocks: up to DW_ROWS output rows x 2 vectors, at most DW_SUMS sums (each its own chain of
   multiply-adds) beside the nine weights: 16 vector registers hold 4 of them, the 32 of AVX-512 8. Four rows
   instead of two: 1.28x at stride 1 and 1.39x at stride 2 (avx2, 128 and 144 channels of 56x56), where a 28-float
   output row at stride 2 left one or two chains per block. */
#define DW_ROWS 4
#if SB_ISA_AT_LEAST(3)
#define DW_SUMS 8
#else
#define DW_SUMS 4
#endif

/* One output value from the taps that lie inside the image (border columns). */
static float dw_nchw_point(const SimdConvolutionParameters * p, const float * plane, const float * w, size_t ky0,
    size_t ky1, size_t dy, size_t dx, size_t kx0, size_t kx1)
{
    size_t sy0 = dy * p->strideY - p->padY, sx0 = dx * p->strideX - p->padX;
    vf s = vset1(0.0f); /* lane 0 only: the same fused multiply-add as the vector columns */
    for (size_t ky = ky0; ky < ky1; ++ky) {
        const float * line = plane + (sy0 + ky * p->dilationY) * p->srcW;
        for (size_t kx = kx0; kx < kx1; ++kx)
            s = vfmadd(vset1(line[sx0 + kx * p->dilationX]), vset1(w[ky * p->kernelX + kx]), s);
    }
    return s[0];
}

/* NCHW, 3x3, dilation 1: R output rows x V vectors of one plane. tap[kx] points at the source vector that tap kx
   of the first output row reads in its top kernel row; source rows are ls apart, and output row r starts r * SY
   source rows lower (SY: the stride along y). w holds the nine weights broadcast, out the first output (rows ld
   apart). A source vector is loaded once for every output row it feeds; the R * V sums are independent chains of
   multiply-adds (one chain alone waits on each result). With EDGE (AVX-512 only), bit l of ok[kx * 2 + v] (and
   lane l of inside[kx * 2 + v], all ones) marks a lane whose tap kx reads inside the row: the others are neither
   loaded (masked loads do not fault) nor added, so a vector over border columns computes them with the same
   operations as dw3_nchw_point. */
SB_INLINE void dw3_nchw_block(const float * const * tap, size_t ls, const vf * w, float * out, size_t ld, const int R,
    const int V, const int SY, const int EDGE, const unsigned * ok, const vi * inside, size_t last_lanes)
{
    vf acc[DW_ROWS][2];
    DW_UNROLL
    for (int r = 0; r < R; ++r)
        DW_UNROLL
        for (int v = 0; v < V; ++v)
            acc[r][v] = vset1(0.0f);
    DW_UNROLL
    for (int i = 0; i < (R - 1) * SY + 3; ++i)
        DW_UNROLL
        for (int kx = 0; kx < 3; ++kx)
            DW_UNROLL
            for (int v = 0; v < V; ++v) {
                const float * at = tap[kx] + (size_t)i * ls + v * SB_W;
#if SB_ISA_AT_LEAST(3)
                vf x = vkeep(EDGE ? (vf)_mm512_maskz_loadu_ps((__mmask16)ok[kx * 2 + v], at) : vload(at));
#else
                vf x = vkeep(vload(at));
#endif
                DW_UNROLL
                for (int r = 0; r < R; ++r) {
                    int ky = i - r * SY;
                    if (ky >= 0 && ky < 3) {
#if SB_ISA_AT_LEAST(3) && !defined(SB_EMULATED_UNIT)
                        acc[r][v] = EDGE ? (vf)_mm512_mask3_fmadd_ps((__m512)x, (__m512)w[ky * 3 + kx],
                            (__m512)acc[r][v], (__mmask16)ok[kx * 2 + v]) : vfmadd(x, w[ky * 3 + kx], acc[r][v]);
#else
                        vf sum = vfmadd(x, w[ky * 3 + kx], acc[r][v]);
                        acc[r][v] = EDGE ? vselect(inside[kx * 2 + v], sum, acc[r][v]) : sum;
#endif
                    }
                }
            }
    DW_UNROLL
    for (int r = 0; r < R; ++r)
        DW_UNROLL
        for (int v = 0; v < V; ++v) {
            if (EDGE && v == V - 1 && last_lanes < SB_W)
                vstore_n(out + r * ld + v * SB_W, acc[r][v], last_lanes);
            else
                vstore(out + r * ld + v * SB_W, acc[r][v]);
        }
}

/* NCHW, 3x3: one border output of R rows (as in dw3_nchw_block) from the taps [kx0, kx1) that lie inside the row,
   lane 0 of the vectors: the same multiply-adds in the same order as the interior. */
SB_INLINE void dw3_nchw_point(const float * line, size_t ls, const vf * w, float * out, size_t ld, const int R,
    const int SY, size_t kx0, size_t kx1)
{
    vf acc[DW_ROWS];
    DW_UNROLL
    for (int r = 0; r < R; ++r)
        acc[r] = vset1(0.0f);
    DW_UNROLL
    for (int i = 0; i < (R - 1) * SY + 3; ++i)
        for (size_t kx = kx0; kx < kx1; ++kx) {
            vf x = vset1(line[(size_t)i * ls + kx]);
            DW_UNROLL
            for (int r = 0; r < R; ++r) {
                int ky = i - r * SY;
                if (ky >= 0 && ky < 3)
                    acc[r] = vfmadd(x, w[ky * 3 + kx], acc[r]);
            }
        }
    for (int r = 0; r < R; ++r)
        out[(size_t)r * ld] = acc[r][0];
}

/* The even and the odd columns of each row of a plane, each in its own row of `half` floats (split[2*y] and
   split[2*y + 1]): at stride 2 along x, the outputs of a vector then read consecutive floats of one of them. */
static void dw_split_columns(const float * plane, size_t H, size_t W, size_t half, float * split)
{
    for (size_t y = 0; y < H; ++y) {
        const float * row = plane + y * W;
        float * even = split + 2 * y * half, * odd = even + half;
        size_t j = 0;
#if SB_ISA_AT_LEAST(3) && !defined(SB_EMULATED_UNIT)
        /* AVX-512: 8 outputs a step from two 256-bit loads. A 64-byte load at an odd row of a 56-wide plane always
           splits a cache line, and the 16-lane form of this loop measured 1.15x slower on the whole layer. */
        for (int last = 0; 2 * j + 16 <= W; j += 8) {
            __m256 a = _mm256_loadu_ps(row + 2 * j), b = _mm256_loadu_ps(row + 2 * j + 8);
            _mm256_storeu_ps(even + j, _mm256_castpd_ps(_mm256_permute4x64_pd(
                _mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8)));
            _mm256_storeu_ps(odd + j, _mm256_castpd_ps(_mm256_permute4x64_pd(
                _mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8)));
            if (!last && 2 * j + 16 < W && 2 * (j + 8) + 16 > W && 2 * (j + 8) + 1 < W) {
                j = (W - 16) / 2 - 8; /* one more step, moved back to end at the row's end, as below */
                last = 1;
            }
        }
#endif
        for (; 2 * j + 2 * SB_W <= W; j += SB_W) {
            vstore(even + j, vload_even(row + 2 * j));
            vstore(odd + j, vload_odd(row + 2 * j));
        }
        if (j > 0 && 2 * j + 1 < W) { /* one more pair of vectors, moved back to end at the row's end (or one
                                         float before it when W is odd): no long scalar tail at 16 lanes */
            j = (W - 2 * SB_W) / 2;
            vstore(even + j, vload_even(row + 2 * j));
            vstore(odd + j, vload_odd(row + 2 * j));
            j += SB_W;
        }
        for (; 2 * j < W; ++j) {
            even[j] = row[2 * j];
            odd[j] = 2 * j + 1 < W ? row[2 * j + 1] : 0.0f;
        }
    }
}

/* The tap masks of the blocks along an output row at AVX-512 (dw3_nchw_rows_of walks the row in the same blocks for
   every group of rows), computed once per call instead of once per block: bit l of ok[kx * 2 + v] is set when
   output lane l of vector v reads inside the row with tap kx and lies before dW. */
typedef struct {
    unsigned ok[6];
} dw_edge;

#if SB_ISA_AT_LEAST(3)
/* The next block from dx along a row of dW outputs (AVX-512): two vectors while a second one has outputs left (its
   lanes past dW neither loaded nor stored: a 28-wide row at stride 2 is one block of 2 * R sums, not two of R),
   else one, moved back to end at dW (same operations on the overlap). Returns V; *at is the block's first output. */
SB_INLINE int dw_block_at(size_t dx, size_t dW, size_t * at)
{
    int V = dx + SB_W < dW ? 2 : 1;
    *at = V == 1 && dx + SB_W > dW ? dW - SB_W : dx;
    return V;
}

static size_t dw_edge_count(size_t dW) { return dW / SB_W + 2; }

static void dw_edge_masks(const SimdConvolutionParameters * p, dw_edge * edges)
{
    size_t sX = p->strideX, W = p->srcW, dW = p->dstW, b = 0;
    ptrdiff_t first[3], last[3]; /* outputs [first[kx], last[kx]) read inside with tap kx */
    for (int kx = 0; kx < 3; ++kx) {
        ptrdiff_t o = (ptrdiff_t)p->padX - kx, hi = (ptrdiff_t)W - 1 + o; /* dx*sX >= o, dx*sX <= hi */
        first[kx] = o <= 0 ? 0 : (o + (ptrdiff_t)sX - 1) / (ptrdiff_t)sX;
        last[kx] = hi < 0 ? 0 : hi / (ptrdiff_t)sX + 1;
        if (last[kx] > (ptrdiff_t)dW)
            last[kx] = (ptrdiff_t)dW;
    }
    for (size_t dx = 0; dx < dW; ++b) {
        int V = dw_block_at(dx, dW, &dx);
        for (int kx = 0; kx < 3; ++kx)
            for (int v = 0; v < 2; ++v) {
                ptrdiff_t e = (ptrdiff_t)dx + v * SB_W, lo = first[kx] - e, hi = last[kx] - e;
                lo = lo < 0 ? 0 : lo > SB_W ? SB_W : lo;
                hi = hi < lo ? lo : hi > SB_W ? SB_W : hi;
                edges[b].ok[kx * 2 + v] = v < V ? (unsigned)(((1ull << hi) - 1) & ~((1ull << lo) - 1)) : 0;
            }
        dx += (size_t)V * SB_W;
    }
}
#endif

/* R (1, 2 or DW_ROWS; more than 1 at y-strides 1 and 2) NCHW output rows from dy on whose three kernel rows lie
   inside the image, 3x3 (dw_is_3x3), with at least one vector of interior columns [in0, in1). At stride 2 the
   interior reads split, the plane's columns by parity (dw_split_columns); the border columns always read the
   plane. */
SB_INLINE void dw3_nchw_rows_of(const SimdConvolutionParameters * p, const float * plane, const float * split,
    size_t half, const float * weight, size_t dy, const int R, const int SY, const size_t * xr, size_t in0, size_t in1,
    const dw_edge * edges, float * row)
{
    size_t sX = p->strideX, W = p->srcW, dW = p->dstW, sy = dy * p->strideY - p->padY;
    vf w[9];
    DW_UNROLL
    for (int k = 0; k < 9; ++k)
        w[k] = vset1(weight[k]);
    /* Tap kx of output dx reads column c = dx*sX + kx - padX >= 0 (interior): plane column c at stride 1; at stride
       2, float c / 2 of the row of c's parity, i.e. dx + (kx - padX) / 2 rounded down. */
    const float * base[3];
    size_t ls = sX == 1 ? W : 2 * half;
    for (int kx = 0; kx < 3; ++kx) {
        if (sX == 1)
            base[kx] = plane + sy * W + (size_t)kx - p->padX; /* + dx: wraps back in range */
        else {
            ptrdiff_t o = (ptrdiff_t)kx - (ptrdiff_t)p->padX, down = o >= 0 ? o / 2 : -((1 - o) / 2);
            base[kx] = split + (2 * sy + (size_t)(o - 2 * down)) * half + (size_t)down;
        }
    }
#if SB_ISA_AT_LEAST(3)
    /* AVX-512: vectors over the whole row, the border columns included through masked taps (dw3_nchw_block's
       EDGE, masks from dw_edge_masks) instead of tap by tap: 1.17x at stride 1 on 56x56 planes (128 and 144
       channels), as fast at stride 2. */
    (void)xr;
    for (size_t dx = 0, b = 0; dx < dW; ++b) {
        int V = dw_block_at(dx, dW, &dx);
        size_t last_lanes = V == 2 && dx + 2 * SB_W > dW ? dW - dx - SB_W : SB_W;
        const float * tap[3] = {base[0] + dx, base[1] + dx, base[2] + dx};
        if (dx >= in0 && dx + (size_t)V * SB_W <= in1) {
            if (V == 2)
                dw3_nchw_block(tap, ls, w, row + dx, dW, R, 2, SY, 0, NULL, NULL, SB_W);
            else
                dw3_nchw_block(tap, ls, w, row + dx, dW, R, 1, SY, 0, NULL, NULL, SB_W);
        } else {
            const unsigned * ok = edges[b].ok;
            vi inside[6];
#ifdef SB_EMULATED_UNIT
            for (int k = 0; k < 6; ++k)
                for (int l = 0; l < SB_W; ++l)
                    inside[k][l] = (ok[k] >> l) & 1 ? -1 : 0;
#endif
            if (V == 2)
                dw3_nchw_block(tap, ls, w, row + dx, dW, R, 2, SY, 1, ok, inside, last_lanes);
            else
                dw3_nchw_block(tap, ls, w, row + dx, dW, R, 1, SY, 1, ok, inside, SB_W);
        }
        dx += (size_t)V * SB_W;
    }
#else
    (void)edges;
    for (size_t dx = in0; dx < in1;) {
        int V = 2 * R <= DW_SUMS && dx + 2 * SB_W <= in1 ? 2 : 1;
        if (V == 1 && dx + SB_W > in1) /* the last vector moves back to end at in1 (same operations on the overlap) */
            dx = in1 - SB_W;
        const float * tap[3] = {base[0] + dx, base[1] + dx, base[2] + dx};
        if (V == 2)
            dw3_nchw_block(tap, ls, w, row + dx, dW, R, 2, SY, 0, NULL, NULL, SB_W);
        else
            dw3_nchw_block(tap, ls, w, row + dx, dW, R, 1, SY, 0, NULL, NULL, SB_W);
        dx += (size_t)V * SB_W;
    }
    const float * top = plane + sy * W - p->padX; /* + dx * sX: wraps back in range */
    for (size_t dx = 0; dx < dW; ++dx) { /* the border columns */
        if (dx == in0)
            dx = in1;
        if (dx == dW)
            break;
        size_t kx0, kx1;
        taps_of(xr, dx, sX, p->padX, 1, W, 3, &kx0, &kx1);
        dw3_nchw_point(top + dx * sX, W, w, row + dx, dW, R, SY, kx0, kx1);
    }
#endif
}

/* dw3_nchw_rows_of with R (1, 2 or DW_ROWS) and the y-stride SY as constants: one copy per case. */
static void dw3_nchw_rows(const SimdConvolutionParameters * p, const float * plane, const float * split, size_t half,
    const float * weight, size_t dy, const int R, const size_t * xr, size_t in0, size_t in1, const dw_edge * edges,
    float * row)
{
    if (R == 1)
        dw3_nchw_rows_of(p, plane, split, half, weight, dy, 1, 1, xr, in0, in1, edges, row);
    else if (R == 2 && p->strideY == 1)
        dw3_nchw_rows_of(p, plane, split, half, weight, dy, 2, 1, xr, in0, in1, edges, row);
    else if (R == 2)
        dw3_nchw_rows_of(p, plane, split, half, weight, dy, 2, 2, xr, in0, in1, edges, row);
    else if (p->strideY == 1)
        dw3_nchw_rows_of(p, plane, split, half, weight, dy, DW_ROWS, 1, xr, in0, in1, edges, row);
    else
        dw3_nchw_rows_of(p, plane, split, half, weight, dy, DW_ROWS, 2, xr, in0, in1, edges, row);
}

/* One NCHW output row, any geometry: vectors over the interior columns [in0, in1), the border columns tap by tap. */
static void dw_nchw_row(const SimdConvolutionParameters * p, const float * plane, const float * w, size_t dy,
    size_t ky0, size_t ky1, const size_t * xr, size_t in0, size_t in1, float * row)
{
    size_t kX = p->kernelX, sX = p->strideX, kx0, kx1;
    for (size_t dx = 0; dx < in0; ++dx) {
        taps_of(xr, dx, sX, p->padX, p->dilationX, p->srcW, kX, &kx0, &kx1);
        row[dx] = dw_nchw_point(p, plane, w, ky0, ky1, dy, dx, kx0, kx1);
    }
    size_t base = dy * p->strideY - p->padY; /* wraps; every used row index is inside */
    /* Stride 2: a pair of loads covers the last tap's 2*SB_W floats only while they stay inside the row. */
#define even_ok(dx) ((dx) * 2 + (kX - 1) * p->dilationX + 2 * SB_W <= p->srcW + p->padX)
    size_t dx = in0;
    if (sX == 1) /* two vectors at a time: one weight broadcast feeds two multiply-adds */
        for (; dx + 2 * SB_W <= in1; dx += 2 * SB_W) {
            vf s0 = vset1(0.0f), s1 = vset1(0.0f);
            for (size_t ky = ky0; ky < ky1; ++ky) {
                const float * line = plane + (base + ky * p->dilationY) * p->srcW + dx - p->padX;
                const float * wk = w + ky * kX;
                for (size_t kx = 0; kx < kX; ++kx) {
                    vf wv = vset1(wk[kx]);
                    const float * x = line + kx * p->dilationX;
                    s0 = vfmadd(vload(x), wv, s0);
                    s1 = vfmadd(vload(x + SB_W), wv, s1);
                }
            }
            vstore(row + dx, s0);
            vstore(row + dx + SB_W, s1);
        }
    for (; dx < in1;) {
        /* Full vectors; the last one is moved back to end at in1 (it recomputes a few outputs with the very
           same operations) so that only rows narrower than a vector take the partial path. */
        size_t n = SB_W;
        if (dx + SB_W > in1) {
            if (in1 - in0 >= SB_W)
                dx = in1 - SB_W;
            else
                n = in1 - dx;
        }
        vf s = vset1(0.0f);
        for (size_t ky = ky0; ky < ky1; ++ky) {
            const float * line = plane + (base + ky * p->dilationY) * p->srcW;
            const float * wk = w + ky * kX;
            if (sX == 1 && n == SB_W) {
                for (size_t kx = 0; kx < kX; ++kx)
                    s = vfmadd(vload(line + (dx + kx * p->dilationX - p->padX)), vset1(wk[kx]), s);
            } else if (n == SB_W && sX == 2 && even_ok(dx)) {
                for (size_t kx = 0; kx < kX; ++kx)
                    s = vfmadd(vload_even(line + (dx * 2 + kx * p->dilationX - p->padX)), vset1(wk[kx]), s);
            } else if (n == SB_W) {
                for (size_t kx = 0; kx < kX; ++kx) {
                    const float * first = line + (dx * sX + kx * p->dilationX - p->padX);
                    vf x;
                    for (int i = 0; i < SB_W; ++i) /* fixed count: unrolled into lane inserts */
                        x[i] = first[(size_t)i * sX];
                    s = vfmadd(x, vset1(wk[kx]), s);
                }
            } else {
                for (size_t kx = 0; kx < kX; ++kx) {
                    const float * first = line + (dx * sX + kx * p->dilationX - p->padX);
                    vf x = vset1(0.0f);
                    for (size_t i = 0; i < n; ++i)
                        x[i] = first[i * sX];
                    s = vfmadd(x, vset1(wk[kx]), s);
                }
            }
        }
        if (n == SB_W)
            vstore(row + dx, s);
        else
            vstore_n(row + dx, s, n);
        dx += n;
    }
    for (size_t dx = in1; dx < p->dstW; ++dx) {
        taps_of(xr, dx, sX, p->padX, p->dilationX, p->srcW, kX, &kx0, &kx1);
        row[dx] = dw_nchw_point(p, plane, w, ky0, ky1, dy, dx, kx0, kx1);
    }
#undef even_ok
}

/* Planes [begin, end) of all images (plane index = b*C + c), NCHW. */
static void dw_nchw_planes(void * arg, size_t begin, size_t end)
{
    const dw_arg * a = (const dw_arg *)arg;
    const conv_ctx * c = a->c;
    const SimdConvolutionParameters * p = &c->p;
    size_t C = p->srcC, kY = p->kernelY, kX = p->kernelX, sX = p->strideX;
    size_t in0, in1;
    conv_inner_columns(p, &in0, &in1);
    int fast = dw_is_3x3(p) && in1 - in0 >= SB_W; /* 3x3 rows need a vector of interior columns */
    size_t half = (p->srcW + 1) / 2;
    float * split = fast && sX == 2 ? (float *)sb_alloc(2 * p->srcH * half, sizeof(float)) : NULL;
    if (sX == 2 && !split)
        fast = 0; /* no memory for the split plane: the general path */
    dw_edge * edges = NULL;
#if SB_ISA_AT_LEAST(3)
    if (fast) {
        edges = (dw_edge *)sb_alloc(dw_edge_count(p->dstW), sizeof(dw_edge));
        if (edges)
            dw_edge_masks(p, edges);
        else
            fast = 0; /* no memory for the masks: the general path */
    }
#endif
    size_t * yr = tap_ranges(p->dstH, p->strideY, p->padY, p->dilationY, p->srcH, kY);
    size_t * xr = tap_ranges(p->dstW, sX, p->padX, p->dilationX, p->srcW, kX);
    sb_epilogue e = conv_group_epilogue(c, 0, 1);
    for (size_t q = begin; q < end; ++q) {
        size_t ch = q % C;
        const float * plane = a->src + q * p->srcH * p->srcW;
        const float * w = c->weight + ch * kY * kX;
        float * out = a->dst + q * p->dstH * p->dstW;
        if (split)
            dw_split_columns(plane, p->srcH, p->srcW, half, split);
        for (size_t dy = 0; dy < p->dstH;) {
            size_t ky0, ky1;
            taps_of(yr, dy, p->strideY, p->padY, p->dilationY, p->srcH, kY, &ky0, &ky1);
            if (fast && ky0 == 0 && ky1 == 3) {
                /* Rows from dy on whose three kernel rows are all inside: up to DW_ROWS of them (or 2, or 1) go
                   together, independent sums sharing their source rows. */
                int full = 1;
                while (full < DW_ROWS && p->strideY <= 2 && dy + (size_t)full < p->dstH) {
                    size_t ky2, ky3;
                    taps_of(yr, dy + (size_t)full, p->strideY, p->padY, 1, p->srcH, 3, &ky2, &ky3);
                    if (ky2 != 0 || ky3 != 3)
                        break;
                    ++full;
                }
                int R = full == DW_ROWS ? DW_ROWS : full >= 2 ? 2 : 1;
                dw3_nchw_rows(p, plane, split, half, w, dy, R, xr, in0, in1, edges, out + dy * p->dstW);
                dy += (size_t)R;
            } else {
                dw_nchw_row(p, plane, w, dy, ky0, ky1, xr, in0, in1, out + dy * p->dstW);
                dy += 1;
            }
        }
        sb_epilogue_block(out, p->dstH * p->dstW, 1, p->dstH * p->dstW, ch, 0, &e);
    }
    sb_free(split);
    sb_free(edges);
    sb_free(yr);
    sb_free(xr);
}

void SB_FN(conv_forward_dw_nchw)(const conv_ctx * c, const float * src, float * buf, float * dst)
{
    (void)buf;
    dw_arg a = {c, src, dst};
    size_t work = c->p.dstH * c->p.dstW * c->p.kernelY * c->p.kernelX;
    sb_parallel_for(c->batch * c->p.srcC, work >= 4096 ? 1 : (4096 + work - 1) / work, dw_nchw_planes, &a);
}
