/* @targets base sse41 avx2 avx512bw */
/*
 * gemm.dispatch.c: the bundled float32 GEMM (internal/gemm.h), compiled once per ISA.
 *
 * Structure (GotoBLAS-like, simplified):
 * - Micro-kernel: MR rows x NR = NV vectors of C held in registers, one broadcast of A and NV loads of B per k,
 *   MR*NV fused multiply-adds (vfmadd). B is read from a packed panel ([kc][NR], zero-padded columns) or, for
 *   small M or a B small enough to stay in cache (INPLACE_B), straight from the caller's matrix (partial loads on
 *   the last panel only).
 * - Cache blocking: K in blocks of KC so that one B panel (KC x NR) stays in L1 while MC rows of A stream past it;
 *   C is written at the first K block and accumulated into at the following ones (it is never read before it was
 *   written by this call).
 * - Epilogue (bias + activation, internal/activation.h) on each C tile right after its last K block, while hot.
 * - Transposed B with few rows of A (GEMV-like, also SimdSynetInnerProductLayerForward) uses dot products along K
 *   instead: the rows of B are contiguous there. At AVX2 so does a transposed B with more rows of A (dot_block, over
 *   aligned copies of the rows), where packing it would copy all of B on every call.
 * - Threads: sb_parallel_for over column ranges (multiples of NR; each thread packs its own columns) or, when N is
 *   narrow, over row ranges.
 * Summation order depends on the ISA and on blocking, never on the thread count.
 */
#include <stdlib.h>
#include <string.h>

#include "simd_synet.h"
#include "internal/activation.h"
#include "internal/gemm.h"

/* MR rows x NV vectors of accumulators: 12 of 16 registers (sse41, avx2), 24 of 32 (avx512). */
#if SB_W == 16
#define MR 12
#else
#define MR 6
#endif
#if MR != 6 && MR != 8 && MR != 12
#error "kernel_packed covers MR in {6, 8, 12}"
#endif
#define NV 2
#define NR (NV * SB_W)
/* Rows a panel of one vector of columns takes at once: MR rows would leave MR accumulators, at MR = 6 fewer than the
   multiply-adds that must be in flight to hide their latency (two units, four cycles); twice the rows keep both
   units busy (the 8 output channels past the first 16 of MobileNet's 1x1 project to 24, at avx2: the conv ran at
   0.90x upstream). Rows of A read in place only: a pack_a panel holds MR rows. */
#if MR == 6
#define MR_NARROW 12
#else
#define MR_NARROW MR
#endif
/* CASE(m) for every row count below n (6, 8 or 12): the switches that give each count its own inlined kernel. */
#define SB_CASES_BELOW_6(CASE) CASE(1) CASE(2) CASE(3) CASE(4) CASE(5)
#define SB_CASES_BELOW_8(CASE) SB_CASES_BELOW_6(CASE) CASE(6) CASE(7)
#define SB_CASES_BELOW_12(CASE) SB_CASES_BELOW_8(CASE) CASE(8) CASE(9) CASE(10) CASE(11)
#define SB_CASES_BELOW_(n) SB_CASES_BELOW_##n
#define SB_CASES_BELOW(n) SB_CASES_BELOW_(n)
#define SB_MR_CASES SB_CASES_BELOW(MR)
#define SB_NARROW_CASES SB_CASES_BELOW(MR_NARROW)
/* B panel of KC x NR floats: 16 KiB, 32 KiB at AVX-512 (half the K blocks, so half the passes that reload C: 5% at
   M = 64..256, K = 1024; the 48 KiB L1 of the AVX-512 cores measured holds it with a 12-row block of A). */
#if SB_W == 16
#define KC 256
#else
#define KC (4096 / NR < 128 ? 128 : 4096 / NR)
#endif
#define KC_ONE (KC + KC / 2)                   /* K up to this: one K block, no short second one reloading C */
#define MC (MR * 16)
#define DOT_ROWS 4            /* transposed B with at most this many rows of A: dot products along K */
#define PARALLEL_WORK (1u << 20) /* multiply-adds below which one thread does the whole call */
/* B ([K][N], rows ldb apart) spanning at most this many floats is read in place by the micro-kernel instead of packed:
   it stays in L1/L2 whatever its layout, and packing it cost as much as a tenth of a small GEMM (Winograd's 64 x 64
   ones: an allocation and a 16 KiB copy for every 128 x 64 x 64 product). */
#define INPLACE_B (1u << 14)

SB_INLINE size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* Vector v of a row of B with nc valid columns (full: all NR columns are readable, e.g. a zero-padded panel). */
SB_INLINE vf load_b(const float * p, size_t v, size_t nc, const int full)
{
    size_t lo = v * SB_W;
    if (full || nc >= lo + SB_W)
        return vload(p + lo);
    if (nc > lo)
        return vload_n(p + lo, nc - lo);
    return vset1(0.0f);
}

SB_INLINE void store_c(float * c, vf x, size_t v, size_t nc, int accumulate)
{
    size_t lo = v * SB_W;
    if (nc >= lo + SB_W) {
        if (accumulate)
            x += vload(c + lo);
        vstore(c + lo, x);
    } else if (nc > lo) {
        size_t n = nc - lo;
        if (accumulate)
            x += vload_n(c + lo, n);
        vstore_n(c + lo, x, n);
    }
}

/* C[mr][nc] (accumulate ? += : =) the accumulators c, then the fused epilogue fe if any. */
SB_INLINE void kernel_finish(const int mr, const int nv, vf c[MR_NARROW][NV], float * C, size_t ldc, size_t nc,
    int accumulate, const sb_epilogue * fe, size_t row0, size_t col0)
{
    if (fe == NULL) {
        for (int i = 0; i < mr; ++i)
            for (int v = 0; v < nv; ++v)
                store_c(C + i * ldc, c[i][v], v, nc, accumulate);
        return;
    }
    /* Fused epilogue (the last K block): bias + Identity/Relu on the registers, in the order and with the formula
       of sb_epilogue_block (x = sum + bias, then Max(0, x)), so the result is the same, without a second pass. */
    const vf zero = vset1(0.0f);
    /* Copies of fe's fields: stores into C may alias them (the vector type may alias anything), so fe->bias read
       inside the loops was reloaded after every store. */
    const int relu = fe->activation == SimdConvolutionActivationRelu;
    const float * const bias = fe->bias;
    const int per_row = fe->bias_per_row;
    vf colb[NV];
    for (int v = 0; v < nv; ++v)
        colb[v] = bias && !per_row ? load_b(bias + col0, v, nc, 0) : zero;
    if (nc == (size_t)nv * SB_W && !accumulate) {
        /* A whole tile, straight-line code: the accumulators stay in registers (the loop below, with its exits at
           partial vectors, is not unrolled and goes through the stack). */
#pragma GCC unroll 16
        for (int i = 0; i < mr; ++i) {
            const vf rowb = bias && per_row ? vset1(bias[row0 + (size_t)i]) : zero;
#pragma GCC unroll 4
            for (int v = 0; v < nv; ++v) {
                vf x = c[i][v];
                if (bias)
                    x += per_row ? rowb : colb[v];
                if (relu)
                    x = vmax(zero, x);
                vstore(C + i * ldc + v * SB_W, x);
            }
        }
        return;
    }
    for (int i = 0; i < mr; ++i) {
        float * ci = C + i * ldc;
        for (int v = 0; v < nv; ++v) {
            size_t lo = (size_t)v * SB_W;
            if (nc <= lo)
                break;
            size_t n = nc - lo;
            vf x = c[i][v];
            if (accumulate)
                x += n >= SB_W ? vload(ci + lo) : vload_n(ci + lo, n);
            if (bias)
                x += per_row ? vset1(bias[row0 + (size_t)i]) : colb[v];
            if (relu)
                x = vmax(zero, x);
            if (n >= SB_W)
                vstore(ci + lo, x);
            else
                vstore_n(ci + lo, x, n);
        }
    }
}

/* v, in a register the compiler cannot see into (so that it keeps the value as computed). */
#if defined(__x86_64__) || defined(__i386__)
#define SB_OPAQUE(v) __asm__("" : "+r"(v))
#define SB_OPAQUE4(a, b, c, d) __asm__("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d))
#else
#define SB_OPAQUE(v) ((void)0)
#define SB_OPAQUE4(a, b, c, d) ((void)0)
#endif

/* C[mr][nc] (accumulate ? += : =) A[mr][kc] * B[kc][nc], row k of B at B + k * bs. A is row-major (lda), or with
   packed_a a panel of pack_a ((i, k) at A[k * MR + i]). Only the first nv vectors of columns are computed (nc <= nv *
   SB_W). mr, nv, full and packed_a are constants after inlining, so the accumulators live in registers. */
SB_INLINE void kernel(const int mr, const int nv, size_t kc, const float * A, size_t lda, const int packed_a,
    const float * B, size_t bs, float * C, size_t ldc, size_t nc, int accumulate, const int full,
    const sb_epilogue * fe, size_t row0, size_t col0)
{
    /* A read in place: row i at A_ROWS(i / 3) + (i % 3) * stride, four pointers three rows apart plus 0, 1 or 2
       strides, which x86 addresses as base + index * scale. With an address per row GCC kept too few registers for
       twelve rows and reloaded row offsets from the stack at every step of k (avx2, 3136 x 8 x 144 in twelve-row
       tiles: 55.7 -> 84 GFLOP/s; the 6 x 16 and the 12-row AVX-512 kernels 5-27% faster). The asm hides that they
       are sums of A and lda, which GCC would otherwise fold back into one address per row. */
    size_t stride = lda;
    SB_OPAQUE(stride);
    const float * rows0 = A, * rows3 = mr > 3 ? A + 3 * lda : A, * rows6 = mr > 6 ? A + 6 * lda : A,
        * rows9 = mr > 9 ? A + 9 * lda : A;                     /* only rows that exist */
    SB_OPAQUE4(rows0, rows3, rows6, rows9);
#define A_ROWS(b) ((b) == 0 ? rows0 : (b) == 1 ? rows3 : (b) == 2 ? rows6 : rows9)
#define A_AT(i, k) (packed_a ? A[(k) * MR + (i)] : (A_ROWS((i) / 3) + ((i) % 3) * stride)[k])
    /* No software prefetch of C's tile: on Zen 4 it cost 6% where kc is short (NHWC 1x1 24->144 at avx2: 265 ->
       250 us without it; Winograd 64->64 at avx512vnni 706 -> 681) and gained nothing where it is long (inner
       products of K = 1024, M = 64 and 256: within 1%). */
    vf c[MR_NARROW][NV];
    for (int i = 0; i < mr; ++i)
        for (int v = 0; v < nv; ++v)
            c[i][v] = vset1(0.0f);
    if (mr == 1 && full) {
        /* One row: four accumulator sets over k mod 4, so that the FMA latency is hidden (GEMV). */
        vf d[3][NV];
        for (int u = 0; u < 3; ++u)
            for (int v = 0; v < nv; ++v)
                d[u][v] = vset1(0.0f);
        size_t k = 0;
        for (; k + 4 <= kc; k += 4) {
            vf a0 = vset1(A_AT(0, k)), a1 = vset1(A_AT(0, k + 1)), a2 = vset1(A_AT(0, k + 2)),
               a3 = vset1(A_AT(0, k + 3));
            for (int v = 0; v < nv; ++v) {
                c[0][v] = vfmadd(a0, load_b(B + k * bs, v, nc, full), c[0][v]);
                d[0][v] = vfmadd(a1, load_b(B + (k + 1) * bs, v, nc, full), d[0][v]);
                d[1][v] = vfmadd(a2, load_b(B + (k + 2) * bs, v, nc, full), d[1][v]);
                d[2][v] = vfmadd(a3, load_b(B + (k + 3) * bs, v, nc, full), d[2][v]);
            }
        }
        for (; k < kc; ++k) {
            vf a0 = vset1(A_AT(0, k));
            for (int v = 0; v < nv; ++v)
                c[0][v] = vfmadd(a0, load_b(B + k * bs, v, nc, full), c[0][v]);
        }
        for (int v = 0; v < nv; ++v)
            c[0][v] += (d[0][v] + d[1][v]) + d[2][v];
    } else {
        for (size_t k = 0; k < kc; ++k) {
            const float * b = B + k * bs;
            vf bv[NV];
            for (int v = 0; v < nv; ++v)
                bv[v] = load_b(b, v, nc, full);
            for (int i = 0; i < mr; ++i) {
                vf a = vset1(A_AT(i, k));
                for (int v = 0; v < nv; ++v)
                    c[i][v] = vfmadd(a, bv[v], c[i][v]);
            }
        }
    }
#undef A_AT
#undef A_ROWS
    kernel_finish(mr, nv, c, C, ldc, nc, accumulate, fe, row0, col0);
}

/* fe: an epilogue to apply on the registers (sb_epilogue_fusable), else NULL; (row0, col0): C's place in the
   output, for the bias. bs: the panel's row stride, NR for zero-padded panels (full) or nc for a compact last one. */
/* kernel() for mr in 1 .. MR (1 .. MR_NARROW for one vector of columns), each count its own inlined kernel
   (accumulators in registers). */
SB_INLINE void kernel_rows(size_t mr, const int nv, size_t kc, const float * A, size_t lda, const int packed_a,
    const float * B, size_t bs, float * C, size_t ldc, size_t nc, int accumulate, const int full,
    const sb_epilogue * fe, size_t row0, size_t col0)
{
#define SB_KCASE(m) \
    case m: kernel(m, nv, kc, A, lda, packed_a, B, bs, C, ldc, nc, accumulate, full, fe, row0, col0); break;
    if (MR_NARROW > MR && nv == 1 && !packed_a) {
        switch (mr) {
        SB_NARROW_CASES(SB_KCASE)
        default: kernel(MR_NARROW, 1, kc, A, lda, 0, B, bs, C, ldc, nc, accumulate, full, fe, row0, col0); break;
        }
        return;
    }
    switch (mr) {
    SB_MR_CASES(SB_KCASE)
    default: kernel(MR, nv, kc, A, lda, packed_a, B, bs, C, ldc, nc, accumulate, full, fe, row0, col0); break;
    }
#undef SB_KCASE
}

/* One row of A times a whole zero-padded panel: one vector of accumulators for at most one vector of columns
   (kernel_packed's rule: the same sums, half the multiply-adds on zero padding). B streams from L3 or memory once
   here, and the hardware prefetcher keeps up with it: 1 x 2048 x 1000 on prepacked weights ran 1.24-1.29x slower
   on Zen 4 (avx2 and avx512vnni) when this fetched B 32 rows ahead in software, and no faster on Zen 5. Not
   inlined: inlined into its callers, that product measured 4-5% slower at avx512vnni. */
static __attribute__((noinline)) void gemv_panel(size_t kc, const float * A, const float * B, float * C, size_t nc,
    int accumulate, const sb_epilogue * fe, size_t row0, size_t col0)
{
    if (NV > 1 && nc <= SB_W)
        kernel(1, 1, kc, A, 0, 0, B, NR, C, 0, nc, accumulate, 1, fe, row0, col0);
    else
        kernel(1, NV, kc, A, 0, 0, B, NR, C, 0, nc, accumulate, 1, fe, row0, col0);
}

/* lda == 0: A is a panel of pack_a. full: all NR columns of every row of the panel are readable (zero-padded packed
   panels, or a whole panel), so the loads need no bounds. A panel of at most one vector of columns gets one vector
   of accumulators per row, not NV: the NV - 1 others would be multiply-adds on its zero padding (at NR = 16 the 24
   output channels of MobileNet's 1x1 project were computed as 32; at NR = 32 the 144 of its expand, as 160). */
static void kernel_packed(size_t mr, size_t kc, const float * A, size_t lda, const float * B, size_t bs, int full,
    float * C, size_t ldc, size_t nc, int accumulate, const sb_epilogue * fe, size_t row0, size_t col0)
{
#define SB_PACKED(nv)                                                                                                \
    if (lda == 0) {                                                                                                  \
        if (full)                                                                                                    \
            kernel_rows(mr, nv, kc, A, 0, 1, B, bs, C, ldc, nc, accumulate, 1, fe, row0, col0);                      \
        else                                                                                                         \
            kernel_rows(mr, nv, kc, A, 0, 1, B, bs, C, ldc, nc, accumulate, 0, fe, row0, col0);                      \
    } else {                                                                                                         \
        if (full)                                                                                                    \
            kernel_rows(mr, nv, kc, A, lda, 0, B, bs, C, ldc, nc, accumulate, 1, fe, row0, col0);                    \
        else                                                                                                         \
            kernel_rows(mr, nv, kc, A, lda, 0, B, bs, C, ldc, nc, accumulate, 0, fe, row0, col0);                    \
    }
    if (NV > 1 && nc <= SB_W) {
        SB_PACKED(1)
    } else {
        SB_PACKED(NV)
    }
#undef SB_PACKED
}

/* Rows [0, rows) x columns [0, kc) of A (lda) as panels of MR rows, kc * MR floats apart: (i, k) of panel p at
   dst[p * kc * MR + k * MR + i] (rows past the last of a short panel are not written, and not read). The kernel then
   broadcasts from one stream instead of MR rows lda apart: at lda = 1024 floats, the 12 rows of the AVX-512 kernel
   all fall into one set of an 8-way L1 and evict each other at every step (measured on the AVX-512 machine:
   inner product M = 64 and 256, N = K = 1024, 60 -> 85 GFLOP/s at avx512bw). */
static void pack_a(const float * A, size_t lda, size_t rows, size_t kc, float * dst)
{
    for (size_t i0 = 0; i0 < rows; i0 += MR, dst += kc * MR) {
        size_t mr = min_size(MR, rows - i0);
        for (size_t i = 0; i < mr; ++i) {
            const float * a = A + (i0 + i) * lda;
            for (size_t k = 0; k < kc; ++k)
                dst[k * MR + i] = a[k];
        }
    }
}

/* C[mr][nc] = sum over the taps t of A_t[mr][Kt] * rows [t*Kt, (t+1)*Kt) of a zero-padded panel B, where (i, k)
   of A_t is at taps[t][(row0 + i) * lda + k * ldk]; NULL taps are skipped. The accumulators stay in registers
   across the taps (gemm32f_packed_taps_serial). */
SB_INLINE void kernel_taps(const int mr, size_t T, const float * const * taps, size_t lda, size_t ldk, size_t Kt,
    const float * B, float * C, size_t ldc, size_t nc, const sb_epilogue * fe, size_t row0, size_t col0)
{
    vf c[MR_NARROW][NV];
    for (int i = 0; i < mr; ++i)
        for (int v = 0; v < NV; ++v)
            c[i][v] = vset1(0.0f);
    for (size_t t = 0; t < T; ++t) {
        if (taps[t] == NULL)
            continue;
        const float * A = taps[t] + row0 * lda, * b = B + t * Kt * NR;
        for (size_t k = 0; k < Kt; ++k, b += NR, A += ldk) {
            vf bv[NV];
            for (int v = 0; v < NV; ++v)
                bv[v] = vload(b + v * SB_W);
            for (int i = 0; i < mr; ++i) {
                vf a = vset1(A[i * lda]);
                for (int v = 0; v < NV; ++v)
                    c[i][v] = vfmadd(a, bv[v], c[i][v]);
            }
        }
    }
    kernel_finish(mr, NV, c, C, ldc, nc, 0, fe, row0, col0);
}

/* 1 if kernel() can apply the epilogue on its registers: no activation but Relu, or none (a bias only). */
SB_INLINE int sb_epilogue_fusable(const sb_epilogue * e)
{
    return e != NULL && (e->activation == SimdConvolutionActivationIdentity ||
        e->activation == SimdConvolutionActivationRelu);
}

/* Few rows of A, B read in place: C[mr][nc] = A[mr][K] * B[K][nc] with the C block (in L1) as the accumulator,
   four rows of B per pass, so B streams through once with unit stride. C is written by the first pass (k = 0) and
   only then read back. */
#define CB 512

SB_INLINE vf direct_step4(vf s, const float * a, const float * b, size_t ldb, size_t j)
{
    s = vfmadd(vset1(a[0]), vload(b + j), s);
    s = vfmadd(vset1(a[1]), vload(b + ldb + j), s);
    s = vfmadd(vset1(a[2]), vload(b + 2 * ldb + j), s);
    return vfmadd(vset1(a[3]), vload(b + 3 * ldb + j), s);
}

SB_INLINE vf direct_step4_n(vf s, const float * a, const float * b, size_t ldb, size_t j, size_t n)
{
    s = vfmadd(vset1(a[0]), vload_n(b + j, n), s);
    s = vfmadd(vset1(a[1]), vload_n(b + ldb + j, n), s);
    s = vfmadd(vset1(a[2]), vload_n(b + 2 * ldb + j, n), s);
    return vfmadd(vset1(a[3]), vload_n(b + 3 * ldb + j, n), s);
}

static void direct_block(size_t mr, size_t K, const float * A, size_t lda, const float * B, size_t ldb, float * C,
    size_t ldc, size_t nc)
{
    size_t body = nc - nc % SB_W, tail = nc % SB_W;
    const vf zero = vset1(0.0f);
    size_t k = 0;
    for (; k + 4 <= K; k += 4) {
        const float * b = B + k * ldb;
        for (size_t i = 0; i < mr; ++i) {
            const float * a = A + i * lda + k;
            float * c = C + i * ldc;
            size_t j = 0;
            if (k == 0) {
                for (; j < body; j += SB_W)
                    vstore(c + j, direct_step4(zero, a, b, ldb, j));
                if (tail)
                    vstore_n(c + j, direct_step4_n(zero, a, b, ldb, j, tail), tail);
            } else {
                for (; j < body; j += SB_W)
                    vstore(c + j, direct_step4(vload(c + j), a, b, ldb, j));
                if (tail)
                    vstore_n(c + j, direct_step4_n(vload_n(c + j, tail), a, b, ldb, j, tail), tail);
            }
        }
    }
    for (; k < K; ++k) {
        const float * b = B + k * ldb;
        for (size_t i = 0; i < mr; ++i) {
            vf a = vset1(A[i * lda + k]);
            float * c = C + i * ldc;
            size_t j = 0;
            for (; j < body; j += SB_W)
                vstore(c + j, vfmadd(a, vload(b + j), k == 0 ? zero : vload(c + j)));
            if (tail)
                vstore_n(c + j, vfmadd(a, vload_n(b + j, tail), k == 0 ? zero : vload_n(c + j, tail)), tail);
        }
    }
}

/* A SB_W x SB_W transpose in log2(SB_W) rounds of two-source shuffles that each stay one instruction at every ISA
   (unpcklps, unpcklpd, then 128-bit and 256-bit halves): round r combines rows i and i + 2^r (bit r of i clear)
   into TR_LO (row i) and TR_HI (row i + 2^r), interleaving blocks of 2^r floats. Row i then holds column
   TR_COL(i) (bits 0 and 1 of i swapped). The scalar copy it replaces cost more than the GEMM it fed at M = 64. */
#define TR_LO_4_1 0, 4, 1, 5
#define TR_HI_4_1 2, 6, 3, 7
#define TR_LO_4_2 0, 1, 4, 5
#define TR_HI_4_2 2, 3, 6, 7
#define TR_LO_8_1 0, 8, 1, 9, 4, 12, 5, 13
#define TR_HI_8_1 2, 10, 3, 11, 6, 14, 7, 15
#define TR_LO_8_2 0, 1, 8, 9, 4, 5, 12, 13
#define TR_HI_8_2 2, 3, 10, 11, 6, 7, 14, 15
#define TR_LO_8_4 0, 1, 2, 3, 8, 9, 10, 11
#define TR_HI_8_4 4, 5, 6, 7, 12, 13, 14, 15
#define TR_LO_16_1 0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29
#define TR_HI_16_1 2, 18, 3, 19, 6, 22, 7, 23, 10, 26, 11, 27, 14, 30, 15, 31
#define TR_LO_16_2 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29
#define TR_HI_16_2 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31
#define TR_LO_16_4 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27
#define TR_HI_16_4 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31
#define TR_LO_16_8 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23
#define TR_HI_16_8 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31
#define TR_IDX_(half, w, b) TR_##half##_##w##_##b
#define TR_IDX(half, w, b) TR_IDX_(half, w, b)
#define TR_COL(i) (((i) & ~3) | (((i) & 1) << 1) | (((i) >> 1) & 1))
#define TR_ROUND(r, b)                                                                                               \
    _Pragma("GCC unroll 16")                                                                                         \
    for (int i = 0; i < SB_W; ++i)                                                                                   \
        if (!(i & (b))) {                                                                                            \
            vf lo = __builtin_shufflevector(r[i], r[i + (b)], TR_IDX(LO, SB_W, b));                                  \
            vf hi = __builtin_shufflevector(r[i], r[i + (b)], TR_IDX(HI, SB_W, b));                                  \
            r[i] = lo, r[i + (b)] = hi;                                                                              \
        }

/* dst[t * NR + i] = src[i * ld + t] for i, t < SB_W: SB_W floats of SB_W rows of B, as SB_W rows of a panel. */
SB_INLINE void transpose_block(const float * src, size_t ld, float * dst)
{
    vf r[SB_W];
    for (int i = 0; i < SB_W; ++i)
        r[i] = vkeep(vload(src + i * ld)); /* one load for the round's two shuffles */
    TR_ROUND(r, 1)
    TR_ROUND(r, 2)
#if SB_W >= 8
    TR_ROUND(r, 4)
#endif
#if SB_W >= 16
    TR_ROUND(r, 8)
#endif
    for (int i = 0; i < SB_W; ++i)
        vstore(dst + TR_COL(i) * NR, r[i]);
}

/* dst[kc][NR] = columns [n, n + nc) of rows [k0, k0 + kc) of B ([K][N], or [N][K] when trans), zero-padded. */
static void pack_panel(float * dst, const float * B, size_t ldb, int trans, size_t k0, size_t kc, size_t n, size_t nc)
{
    if (!trans) {
        for (size_t k = 0; k < kc; ++k) {
            const float * src = B + (k0 + k) * ldb + n;
            float * d = dst + k * NR;
            if (nc == NR) {
                for (int v = 0; v < NV; ++v)
                    vstore(d + v * SB_W, vload(src + v * SB_W));
            } else {
                memcpy(d, src, nc * sizeof(float));
                memset(d + nc, 0, (NR - nc) * sizeof(float));
            }
        }
    } else {
        if (nc < NR)
            for (size_t k = 0; k < kc; ++k)
                memset(dst + k * NR + nc, 0, (NR - nc) * sizeof(float));
        size_t j = 0;
        for (; j + SB_W <= nc; j += SB_W) {
            const float * src = B + (n + j) * ldb + k0;
            size_t k = 0;
            for (; k + SB_W <= kc; k += SB_W)
                transpose_block(src + k, ldb, dst + k * NR + j);
            for (; k < kc; ++k)
                for (size_t i = 0; i < SB_W; ++i)
                    dst[k * NR + j + i] = src[i * ldb + k];
        }
        for (; j + 4 <= nc; j += 4) { /* four rows of B at a time: four reads streams, 16-byte writes */
            const float * s0 = B + (n + j) * ldb + k0, * s1 = s0 + ldb, * s2 = s1 + ldb, * s3 = s2 + ldb;
            float * d = dst + j;
            for (size_t k = 0; k < kc; ++k, d += NR) {
                d[0] = s0[k];
                d[1] = s1[k];
                d[2] = s2[k];
                d[3] = s3[k];
            }
        }
        for (; j < nc; ++j) {
            const float * src = B + (n + j) * ldb + k0;
            for (size_t k = 0; k < kc; ++k)
                dst[k * NR + j] = src[k];
        }
    }
}

/* One step of dot_sums: n (<= SB_W) floats of K from k on; n == SB_W, a constant in the loop, loads whole vectors. */
SB_INLINE void dot_step(const int mr, const int jn, const float * a, size_t lda, const float * b, size_t ldb,
    size_t k, size_t n, vf s[3][4])
{
    vf x[3];
    for (int i = 0; i < mr; ++i)
        x[i] = n == SB_W ? vload(a + i * lda + k) : vload_n(a + i * lda + k, n);
    for (int t = 0; t < jn; ++t) {
        vf y = n == SB_W ? vload(b + t * ldb + k) : vload_n(b + t * ldb + k, n);
        for (int i = 0; i < mr; ++i)
            s[i][t] = vfmadd(x[i], y, s[i][t]);
    }
}

/* s[i][t] = the lane-wise partial sums of dot(row i of a, row t of b) along K, for i < mr (<= 3) and t < jn (<= 4):
   lane l sums the products of k = l mod SB_W, in order of k, whatever the block. */
SB_INLINE void dot_sums(const int mr, const int jn, const float * a, size_t lda, const float * b, size_t ldb,
    size_t K, vf s[3][4])
{
    for (int i = 0; i < mr; ++i)
        for (int t = 0; t < jn; ++t)
            s[i][t] = vset1(0.0f);
    size_t k = 0;
    for (; k + SB_W <= K; k += SB_W)
        dot_step(mr, jn, a, lda, b, ldb, k, SB_W, s);
    if (k < K)
        dot_step(mr, jn, a, lda, b, ldb, k, K - k, s);
}

/* c[t] = dot(a, row t of b) along K for t < jn (<= 4): one row of A against jn rows of B, the four sums reduced
   together (vreduce_add4: at AVX2 the order of dot_block's, so a row's outputs do not depend on M there). */
SB_INLINE void dot_rows(const int jn, const float * a, const float * b, size_t ldb, size_t K, float * c)
{
    vf s[3][4];
    float sums[4];
    dot_sums(1, jn, a, 0, b, ldb, K, s);
    for (int t = jn; t < 4; ++t) /* the columns past jn: reduced with the others, never stored */
        s[0][t] = vset1(0.0f);
    vreduce_add4(s[0][0], s[0][1], s[0][2], s[0][3], sums);
    memcpy(c, sums, (size_t)jn * sizeof(float));
}

#if SB_W == 8
/* AVX2, transposed B given per call: DOT_MR rows of A x 4 rows of B at a time, each pair a vector of partial sums
   along K (lane l sums the products of k = l mod 8), the four of a row of A reduced together by three hadds. The rows
   of A and each group of 4 rows of B are copied to 32-byte aligned rows first: NumPy's arrays start 16 bytes past a
   cache line, and loads that straddle two lines ran the kernel at 99 GFLOP/s instead of 130. The copies keep each
   output's order, which depends on K alone. M = 64 and 256, N = K = 1024, paired: 1080 and 4280 us where packing B
   into panels (a transposing copy of all 4 MB) took 1178 and 4450. */
#define DOT_MR 3 /* dot_sums takes up to 3 */
#define DOT_BLOCK_K 2048 /* the four rows of B: 32 KiB at most, in L1 while every row of A passes */
SB_INLINE void dot_block(const int mr, const int jn, const float * a, size_t lda, const float * b, size_t ldb,
    size_t K, float * c, size_t ldc)
{
    vf s[DOT_MR][4];
    dot_sums(mr, jn, a, lda, b, ldb, K, s);
    for (int t = jn; t < 4; ++t) /* the columns past jn: reduced with the others, never stored */
        for (int i = 0; i < mr; ++i)
            s[i][t] = vset1(0.0f);
    for (int i = 0; i < mr; ++i) {
        float sums[4];
        vreduce_add4(s[i][0], s[i][1], s[i][2], s[i][3], sums);
        memcpy(c + i * ldc, sums, (size_t)jn * sizeof(float));
    }
}

/* dot_block() for mr (1 .. DOT_MR) rows and jn (1 .. 4) columns, each pair its own inlined kernel. */
static void dot_blocks(size_t mr, size_t jn, const float * a, size_t lda, const float * b, size_t ldb, size_t K,
    float * c, size_t ldc)
{
#define SB_DOT_JN(m, t) case t: dot_block(m, t, a, lda, b, ldb, K, c, ldc); break;
#define SB_DOT_MR(m) case m: switch (jn) { SB_DOT_JN(m, 1) SB_DOT_JN(m, 2) SB_DOT_JN(m, 3) default: \
    dot_block(m, 4, a, lda, b, ldb, K, c, ldc); break; } break;
    switch (mr) {
    SB_DOT_MR(1)
    SB_DOT_MR(2)
    default: SB_DOT_MR(3)
    }
#undef SB_DOT_MR
#undef SB_DOT_JN
}

/* rows rows of n floats, ld apart, to dst (rows ldd apart). */
static void copy_rows(const float * src, size_t ld, size_t rows, size_t n, float * dst, size_t ldd)
{
    for (size_t r = 0; r < rows; ++r)
        memcpy(dst + r * ldd, src + r * ld, n * sizeof(float));
}
#endif

enum { MODE_PACKED, MODE_PACK, MODE_DIRECT, MODE_DOT, MODE_PANELS, MODE_INPLACE, MODE_DOT_BLOCKS };

typedef struct {
    int mode;
    size_t M, N, K;
    const float * A;
    size_t lda;
    const float * B; /* MODE_PACKED: the packed matrix */
    size_t ldb;
    int trans;
    float * C;
    size_t ldc;
    const sb_epilogue * e;
} gemm_job;

/* MODE_DOT over rows [m0, m1) and columns [n0, n1) (K > 0): dot products along K, 4 columns at a time; e: the
   active epilogue or NULL. */
static void dot_range(const gemm_job * j, size_t m0, size_t m1, size_t n0, size_t n1, const sb_epilogue * e)
{
    const size_t K = j->K, lda = j->lda, ldc = j->ldc;
    for (size_t n = n0; n < n1; n += 4) {
        size_t jn = min_size(4, n1 - n);
        const float * b = j->B + n * j->ldb;
        for (size_t i = m0; i < m1; ++i) {
            float * c = j->C + i * ldc + n;
            switch (jn) {
            case 4: dot_rows(4, j->A + i * lda, b, j->ldb, K, c); break;
            case 3: dot_rows(3, j->A + i * lda, b, j->ldb, K, c); break;
            case 2: dot_rows(2, j->A + i * lda, b, j->ldb, K, c); break;
            default: dot_rows(1, j->A + i * lda, b, j->ldb, K, c); break;
            }
        }
        sb_epilogue_block(j->C + m0 * ldc + n, ldc, m1 - m0, jn, m0, n, e);
    }
}

/* K == 0, an empty sum, over rows [m0, m1) and columns [n0, n1): C = epilogue(0). */
static void zero_range(const gemm_job * j, size_t m0, size_t m1, size_t n0, size_t n1, const sb_epilogue * e)
{
    for (size_t i = m0; i < m1; ++i)
        memset(j->C + i * j->ldc + n0, 0, (n1 - n0) * sizeof(float));
    sb_epilogue_block(j->C + m0 * j->ldc + n0, j->ldc, m1 - m0, n1 - n0, m0, n0, e);
}

#if SB_W == 8
/* MODE_DOT_BLOCKS over rows [m0, m1) and columns [n0, n1) (K > 0): aligned copies of each 4 rows of B and, where
   at least 16 columns pay for it, of the rows of A; without memory, the rows in place (slower; the copies never
   change a sum). */
static void dot_blocks_range(const gemm_job * j, size_t m0, size_t m1, size_t n0, size_t n1, const sb_epilogue * e)
{
    const size_t K = j->K, lda = j->lda, ldc = j->ldc;
    float * C = j->C;
    const size_t ld = (K + SB_W - 1) / SB_W * SB_W;
    float * a_rows = n1 - n0 >= 16 ? (float *)sb_alloc_aligned(32, (m1 - m0) * ld, sizeof(float)) : NULL;
    float * b_rows = (float *)sb_alloc_aligned(32, 4 * ld, sizeof(float));
    if (a_rows)
        copy_rows(j->A + m0 * lda, lda, m1 - m0, K, a_rows, ld);
    const float * a = a_rows ? a_rows : j->A + m0 * lda;
    const size_t la = a_rows ? ld : lda;
    for (size_t n = n0; n < n1; n += 4) {
        size_t jn = min_size(4, n1 - n);
        const float * b = j->B + n * j->ldb;
        size_t lb = j->ldb;
        if (b_rows) {
            copy_rows(b, lb, jn, K, b_rows, ld);
            b = b_rows;
            lb = ld;
        }
        for (size_t i = m0; i < m1; i += DOT_MR)
            dot_blocks(min_size(DOT_MR, m1 - i), jn, a + (i - m0) * la, la, b, lb, K, C + i * ldc + n, ldc);
        sb_epilogue_block(C + m0 * ldc + n, ldc, m1 - m0, jn, m0, n, e);
    }
    sb_free(a_rows);
    sb_free(b_rows);
}
#endif

/* MODE_DIRECT over rows [m0, m1) and columns [n0, n1) (K > 0): blocks of MR rows x CB columns straight from the
   caller's A and B. */
static void direct_range(const gemm_job * j, size_t m0, size_t m1, size_t n0, size_t n1, const sb_epilogue * e)
{
    const size_t K = j->K, lda = j->lda, ldc = j->ldc;
    for (size_t i = m0; i < m1; i += MR) {
        size_t mr = min_size(MR, m1 - i);
        for (size_t n = n0; n < n1; n += CB) {
            size_t nc = min_size(CB, n1 - n);
            direct_block(mr, K, j->A + i * lda, lda, j->B + n, j->ldb, j->C + i * ldc + n, ldc, nc);
            sb_epilogue_block(j->C + i * ldc + n, ldc, mr, nc, i, n, e);
        }
    }
}

/* One K block [k0, k0 + kc) of the panel modes, and what is done after it. */
typedef struct {
    size_t k0, kc;
    int last;                /* the last K block: the epilogue follows */
    int fuse;                /* the epilogue is fused into the micro-kernel's stores */
    const sb_epilogue * e;   /* the active epilogue, or NULL */
    const float * apack;     /* the block of A packed (pack_a), or NULL: A in place */
} k_block;

/* The B panel of columns [n, n + nc) in K block b as the micro-kernel reads it: its address, the distance *bs
   between its rows and whether it is zero-padded to NR columns (*full). MODE_PACK: panel p of the packed `buffer`,
   or without it the panel packed into `one_panel` now. */
static const float * b_panel(const gemm_job * j, const k_block * b, size_t n, size_t nc, size_t p,
    const float * buffer, float * one_panel, size_t * bs, int * full)
{
    *bs = NR;
    *full = 1; /* packed panels are zero-padded */
    switch (j->mode) {
    case MODE_PANELS: /* compact panels: rows of nc floats */
        *bs = nc;
        *full = nc == NR;
        return j->B + (n / NR) * j->K * NR + b->k0 * nc;
    case MODE_INPLACE: /* the caller's B: rows ldb apart, N columns readable */
        *bs = j->ldb;
        *full = nc == NR;
        return j->B + b->k0 * j->ldb + n;
    case MODE_PACK:
        if (buffer != NULL)
            return buffer + p * b->kc * NR;
        pack_panel(one_panel, j->B, j->ldb, j->trans, b->k0, b->kc, n, nc);
        return one_panel;
    default: /* MODE_PACKED */
        return j->B + (n / NR) * j->K * NR + b->k0 * NR;
    }
}

/* Rows [mb, me) of columns [n, n + nc) in K block b, against one B panel (b_panel's panel, bs, full). */
static void panel_rows(const gemm_job * j, const k_block * b, size_t mb, size_t me, size_t n, size_t nc,
    const float * panel, size_t bs, int full)
{
    const size_t lda = j->lda, ldc = j->ldc, k0 = b->k0, kc = b->kc;
    float * C = j->C;
    const size_t rows = NV > 1 && nc <= SB_W && !b->apack ? MR_NARROW : MR;
    const sb_epilogue * fe = b->last && b->fuse ? b->e : NULL;
    for (size_t i = mb, mr; i < me; i += mr) {
        mr = min_size(rows, me - i);
        /* A last row that MR-row blocks leave alone stays alone: kernel() sums a single row in another order, and
           a column must not depend on the panel it falls in. */
        if (mr == me - i && mr > MR && mr % MR == 1)
            --mr;
        if (j->mode == MODE_PACKED && mr == 1)
            gemv_panel(kc, j->A + i * lda + k0, panel, C + i * ldc + n, nc, k0 > 0, fe, i, n);
        else if (b->apack)
            kernel_packed(mr, kc, b->apack + (i - mb) * kc, 0, panel, bs, full, C + i * ldc + n, ldc, nc, k0 > 0,
                fe, i, n);
        else
            kernel_packed(mr, kc, j->A + i * lda + k0, lda, panel, bs, full, C + i * ldc + n, ldc, nc, k0 > 0, fe,
                i, n);
        if (b->last && !b->fuse)
            sb_epilogue_block(C + i * ldc + n, ldc, mr, nc, i, n, b->e);
    }
}

/* The panel modes (MODE_PACK, MODE_PACKED, MODE_PANELS, MODE_INPLACE) over rows [m0, m1) and columns [n0, n1)
   (K > 0): column blocks of nb_cols, K blocks of kc_max, row blocks of MC, then one B panel of NR columns at a
   time against MR rows of A. */
static void panels_range(const gemm_job * j, size_t m0, size_t m1, size_t n0, size_t n1, const sb_epilogue * e)
{
    const size_t K = j->K, lda = j->lda;
    const int mode = j->mode;
    float * buffer = NULL;
    /* MODE_PACK: columns in blocks of nb_cols whose packed K block (about 2^16 floats) stays in L2 while it is
       used, instead of packing the whole range (a copy of B through memory) first; same sums either way. Without
       memory for the block, each panel is packed into `one_panel` (on the stack: KC_ONE x NR floats, 48 KiB at
       most) right before each use: slower, and the same sums, where another mode would sum in another order. */
    size_t kc_pack = K <= KC_ONE ? K : KC;
    size_t nb_cols = n1 - n0;
    float one_panel[KC_ONE * NR] __attribute__((aligned(64)));
    if (mode == MODE_PACK) {
        size_t cap = ((size_t)1 << 16) / kc_pack / NR * NR;
        nb_cols = cap < NR ? NR : cap < nb_cols ? cap : nb_cols;
        size_t panels = (nb_cols + NR - 1) / NR;
        buffer = (float *)sb_alloc_aligned(64, kc_pack * panels * NR, sizeof(float));
    }
    /* K blocks keep a B panel in L1 while MC rows of A reuse it; a few rows of A cannot, so a prepacked B then
       streams each panel once, whole. */
    /* A K a little over KC in one block rather than a short second one that reloads all of C. */
    size_t kc_max = ((mode == MODE_PACKED || mode == MODE_PANELS) && m1 - m0 <= MR) || K <= KC_ONE ? K : KC;
    /* A is packed (pack_a) when its rows would collide in L1 (rows a multiple of 2 KiB apart put MR / 2 or more
       lines into one set of the 32 KiB 8-way L1 at every step: K = 1024 or 2048, as inner products often have) and
       a block of A serves at least four panels of B, which pays for the copy. Otherwise, or without memory, A is
       read in place: packing it for the two to four panels of a typical convolution cost 10-25% at avx512bw. */
    float * apack = NULL;
    if (lda % 512 == 0 && n1 - n0 >= 4 * NR && m1 - m0 >= MR) {
        size_t rows = min_size(MC, (m1 - m0 + MR - 1) / MR * MR);
        apack = (float *)sb_alloc_aligned(64, rows * kc_max, sizeof(float));
    }
    k_block b = {0, 0, 0, sb_epilogue_fusable(e), e, apack};
    for (size_t nb = n0; nb < n1; nb += nb_cols) {
        const size_t ne = min_size(nb + nb_cols, n1);
        for (b.k0 = 0; b.k0 < K; b.k0 += kc_max) {
            b.kc = min_size(kc_max, K - b.k0);
            b.last = b.k0 + b.kc == K;
            if (mode == MODE_PACK && buffer != NULL)
                for (size_t n = nb, p = 0; n < ne; n += NR, ++p)
                    pack_panel(buffer + p * b.kc * NR, j->B, j->ldb, j->trans, b.k0, b.kc, n, min_size(NR, ne - n));
            for (size_t mb = m0; mb < m1; mb += MC) {
                size_t me = min_size(mb + MC, m1);
                if (apack)
                    pack_a(j->A + mb * lda + b.k0, lda, me - mb, b.kc, apack);
                for (size_t n = nb, p = 0; n < ne; n += NR, ++p) {
                    size_t nc = min_size(NR, ne - n), bs;
                    int full;
                    const float * panel = b_panel(j, &b, n, nc, p, buffer, one_panel, &bs, &full);
                    panel_rows(j, &b, mb, me, n, nc, panel, bs, full);
                }
            }
        }
    }
    sb_free(apack);
    sb_free(buffer);
}

/* Rows [m0, m1) x columns [n0, n1) of the job; n0 is a multiple of NR (of 4 for the dot modes). */
static void run_range(const gemm_job * j, size_t m0, size_t m1, size_t n0, size_t n1)
{
    const sb_epilogue * e = sb_epilogue_active(j->e) ? j->e : NULL;
    if (m0 >= m1 || n0 >= n1)
        return;
    if (j->K == 0) {
        zero_range(j, m0, m1, n0, n1, e);
        return;
    }
    switch (j->mode) {
#if SB_W == 8
    case MODE_DOT_BLOCKS: dot_blocks_range(j, m0, m1, n0, n1, e); return;
#endif
    case MODE_DOT: dot_range(j, m0, m1, n0, n1, e); return;
    case MODE_DIRECT: direct_range(j, m0, m1, n0, n1, e); return;
    default: panels_range(j, m0, m1, n0, n1, e); return;
    }
}

static void body_columns(void * arg, size_t begin, size_t end)
{
    const gemm_job * j = (const gemm_job *)arg;
    run_range(j, 0, j->M, begin, end);
}

static void body_rows(void * arg, size_t begin, size_t end)
{
    const gemm_job * j = (const gemm_job *)arg;
    run_range(j, begin, end, 0, j->N);
}

/* 1 if a product of M x N x K runs on the calling thread alone (one thread set, or too little work to share). */
SB_INLINE int one_thread(size_t M, size_t N, size_t K)
{
    return sb_thread_number() <= 1 || (double)M * (double)N * (double)(K ? K : 1) < PARALLEL_WORK;
}

static void run(gemm_job * j)
{
    if (j->M == 0 || j->N == 0)
        return;
    size_t threads = sb_thread_number();
    if (one_thread(j->M, j->N, j->K)) {
        run_range(j, 0, j->M, 0, j->N);
        return;
    }
    const int dot = j->mode == MODE_DOT || j->mode == MODE_DOT_BLOCKS;
    size_t grain = dot ? 4 : NR;
    if (dot || j->mode == MODE_DIRECT || j->N >= 2 * NR * threads || j->M < 2 * MR * threads)
        sb_parallel_for(j->N, grain, body_columns, j);
    else
        sb_parallel_for(j->M, MR, body_rows, j);
}

/* The mode of a gemm32f_nn call. */
static int nn_mode(size_t M, size_t K, size_t ldb)
{
    return M <= MR ? MODE_DIRECT : (double)K * (double)ldb <= INPLACE_B ? MODE_INPLACE : MODE_PACK;
}

void SB_FN(gemm32f_nn)(size_t M, size_t N, size_t K, const float * A, size_t lda, const float * B, size_t ldb,
    float * C, size_t ldc, const sb_epilogue * epilogue)
{
    gemm_job j = {nn_mode(M, K, ldb), M, N, K, A, lda, B, ldb, 0, C, ldc, epilogue};
    run(&j);
}

void SB_FN(gemm32f_nt)(size_t M, size_t N, size_t K, const float * A, size_t lda, const float * B, size_t ldb,
    float * C, size_t ldc, const sb_epilogue * epilogue)
{
#if SB_W == 8
    const int mode = M <= DOT_ROWS ? MODE_DOT : K <= DOT_BLOCK_K ? MODE_DOT_BLOCKS : MODE_PACK;
#else
    const int mode = M <= DOT_ROWS ? MODE_DOT : MODE_PACK;
#endif
    gemm_job j = {mode, M, N, K, A, lda, B, ldb, 1, C, ldc, epilogue};
    if (mode == MODE_DOT && M && N && K && one_thread(M, N, K)) {
        /* A few rows on one thread: straight to the dot products, without run()'s and run_range()'s setup (a 4 x 16
           layer at avx2: 12.2 -> 11.8 ns; upstream's 6-7) */
        dot_range(&j, 0, M, 0, N, sb_epilogue_active(epilogue) ? epilogue : NULL);
        return;
    }
    run(&j);
}

void SB_FN(gemm32f_nn_serial)(size_t M, size_t N, size_t K, const float * A, size_t lda, const float * B,
    size_t ldb, float * C, size_t ldc, const sb_epilogue * epilogue)
{
    gemm_job j = {nn_mode(M, K, ldb), M, N, K, A, lda, B, ldb, 0, C, ldc, epilogue};
    if (M && N)
        run_range(&j, 0, M, 0, N);
}

size_t SB_FN(gemm32f_packed_size)(size_t N, size_t K)
{
    return (N + NR - 1) / NR * NR * K;
}

void SB_FN(gemm32f_pack_b)(size_t N, size_t K, const float * B, size_t ldb, int transB, float * packed)
{
    for (size_t n = 0, p = 0; n < N; n += NR, ++p)
        pack_panel(packed + p * K * NR, B, ldb, transB, 0, K, n, min_size(NR, N - n));
}

void SB_FN(gemm32f_packed)(size_t M, size_t N, size_t K, const float * A, size_t lda, const float * packed,
    float * C, size_t ldc, const sb_epilogue * epilogue)
{
    if (M == 1 && N && K && one_thread(M, N, K)) {
        /* One row on one thread: what run_range does for it (one K block, one gemv_panel per panel), without its
           setup, which with run()'s took 44% of a 1 x 16 -> 4 product (an InnerProduct32f Forward: 25 ns, upstream's
           8; 8.7 ns now at avx2, with gemv_panel's own changes). */
        const sb_epilogue * e = sb_epilogue_active(epilogue) ? epilogue : NULL;
        const int fuse = sb_epilogue_fusable(e);
        for (size_t n = 0; n < N; n += NR) {
            const size_t nc = min_size(NR, N - n);
            gemv_panel(K, A, packed + (n / NR) * K * NR, C + n, nc, 0, fuse ? e : NULL, 0, n);
            if (!fuse)
                sb_epilogue_block(C + n, ldc, 1, nc, 0, n, e);
        }
        return;
    }
    gemm_job j = {MODE_PACKED, M, N, K, A, lda, packed, 0, 0, C, ldc, epilogue};
    run(&j);
}

void SB_FN(gemm32f_packed_taps_serial)(size_t M, size_t N, size_t T, const float * const * taps, size_t lda,
    size_t ldk, size_t Kt, const float * packed, float * C, size_t ldc, const sb_epilogue * epilogue)
{
    const sb_epilogue * e = sb_epilogue_active(epilogue) ? epilogue : NULL;
    const int fuse = sb_epilogue_fusable(e);
    size_t K = T * Kt, used = 0;
    for (size_t t = 0; t < T; ++t)
        used += taps[t] != NULL;
    if (M == 0 || N == 0)
        return;
    if (used == 0 || Kt == 0) { /* no tap: an empty sum */
        for (size_t i = 0; i < M; ++i)
            memset(C + i * ldc, 0, N * sizeof(float));
        sb_epilogue_block(C, ldc, M, N, 0, 0, e);
        return;
    }
    for (size_t i = 0; i < M; i += MR) {
        size_t mr = min_size(MR, M - i);
        for (size_t n = 0; n < N; n += NR) {
            size_t nc = min_size(NR, N - n);
            const float * panel = packed + (n / NR) * K * NR;
            const sb_epilogue * fe = fuse ? e : NULL;
            float * c = C + i * ldc + n;
            /* ldk == 1 (NHWC) as a constant: with a variable k stride its loop ran 3-5% slower. */
#define SB_TCALL(m) \
    (ldk == 1 ? kernel_taps(m, T, taps, lda, 1, Kt, panel, c, ldc, nc, fe, i, n) \
              : kernel_taps(m, T, taps, lda, ldk, Kt, panel, c, ldc, nc, fe, i, n))
#define SB_TCASE(m) case m: SB_TCALL(m); break;
            switch (mr) {
            SB_MR_CASES(SB_TCASE)
            default: SB_TCALL(MR); break;
            }
#undef SB_TCASE
#undef SB_TCALL
            if (!fuse)
                sb_epilogue_block(c, ldc, mr, nc, i, n, e);
        }
    }
}

size_t SB_FN(gemm32f_panel_width)(void)
{
    return NR;
}

void SB_FN(gemm32f_panels_serial)(size_t M, size_t N, size_t K, const float * A, size_t lda, const float * panels,
    float * C, size_t ldc, const sb_epilogue * epilogue)
{
    gemm_job j = {MODE_PANELS, M, N, K, A, lda, panels, 0, 0, C, ldc, epilogue};
    if (M && N)
        run_range(&j, 0, M, 0, N);
}
