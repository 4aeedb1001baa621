/* @targets base sse41 avx2 avx512bw avx512vnni */
/*
 * inner_product_8i.dispatch.c: SimdSynetInnerProduct8i's kernel, compiled once per ISA of its @targets line: the
 * only kernel built for avx512vnni (the only one its instructions serve; the others run their avx512bw variant there).
 *
 * dst[i][j] = sum_k src[i][k] * weight[j][k], uint8 x int8 -> int32 (the int32 sum wraps, as upstream's does).
 * - precise ((compatibility & 12) == 0): every product exactly. AVX-512 VNNI uses vpdpbusd, which adds four u8*s8
 *   products to int32 without saturation. AVX-512BW loads both operands widened to int16, each half vector once for
 *   the whole register block, and uses pmaddwd (two products of |x| <= 32640 summed in int32: exact). SSE4.1 and
 *   AVX2 prepare the operands outside the loop instead (prepared_block: src split into 5 + 3 bits for M == 1; int16
 *   copies for M >= 2 at AVX2, where SSE4.1 keeps the widening loads). Without VNNI no exact form takes fewer than
 *   2 multiplies and 2 adds per 32 products (the saturating form: 2 and 1), so at AVX2 a compute-bound precise
 *   product stays below a saturating one.
 * - saturating (otherwise): the products of each pair (2m, 2m + 1) along K are summed and clamped to int16, then
 *   added in int32 (pmaddubsw, then pmaddwd with ones and paddd, or VNNI's vpdpwssd with ones: the same exact sum). K's tail is zero-padded to
 *   a whole vector, so an odd last product is paired with 0 and never clamped (|255 * -128| < 32768), which is the
 *   contract. Vector blocks start at multiples of 16 bytes, so pairs always start at even k.
 * Each output is one dot product along K; four rows of weight are processed together against SR rows of src (4 at
 * AVX-512, else 2), and threads split the rows of weight when the work is large.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "simd_synet.h"

#define PARALLEL_WORK (1u << 22)

SB_INLINE int32_t wrap_add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }

#if SB_ISA_AT_LEAST(1)

#if SB_ISA_AT_LEAST(3)
#define IB 64
typedef __m512i ivec;
SB_INLINE ivec iload(const void * p) { return _mm512_loadu_si512(p); }
SB_INLINE ivec izero(void) { return _mm512_setzero_si512(); }
SB_INLINE ivec iadd(ivec a, ivec b) { return _mm512_add_epi32(a, b); }
SB_INLINE ivec sat_pairs(ivec s, ivec w) { return _mm512_madd_epi16(_mm512_maddubs_epi16(s, w), _mm512_set1_epi16(1)); }
#if SB_ISA_AT_LEAST(4)
#define VNNI 1
SB_INLINE ivec precise_dot(ivec acc, ivec s, ivec w) { return _mm512_dpbusd_epi32(acc, s, w); }
#else
#define VNNI 0
#endif
SB_INLINE ivec iload_u16(const void * p) { return _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)p)); }
SB_INLINE ivec iload_s16(const void * p) { return _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)p)); }
SB_INLINE ivec imadd16(ivec a, ivec b) { return _mm512_madd_epi16(a, b); }
/* The four 128-bit lanes added: lane 0 of the result. */
SB_INLINE __m128i ilanes_add(ivec v)
{
    __m256i h = _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
    return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}
#elif SB_ISA_AT_LEAST(2)
#define IB 32
typedef __m256i ivec;
SB_INLINE ivec iload(const void * p) { return _mm256_loadu_si256((const __m256i *)p); }
SB_INLINE ivec izero(void) { return _mm256_setzero_si256(); }
SB_INLINE ivec iadd(ivec a, ivec b) { return _mm256_add_epi32(a, b); }
SB_INLINE ivec sat_pairs(ivec s, ivec w) { return _mm256_madd_epi16(_mm256_maddubs_epi16(s, w), _mm256_set1_epi16(1)); }
#define VNNI 0
SB_INLINE ivec iload_u16(const void * p) { return _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)p)); }
SB_INLINE ivec iload_s16(const void * p) { return _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)p)); }
SB_INLINE ivec imadd16(ivec a, ivec b) { return _mm256_madd_epi16(a, b); }
SB_INLINE __m128i ilanes_add(ivec v) { return _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)); }
SB_INLINE ivec iadd16(ivec a, ivec b) { return _mm256_add_epi16(a, b); }
SB_INLINE ivec iset16(int16_t v) { return _mm256_set1_epi16(v); }
SB_INLINE ivec imaddubs(ivec u, ivec s) { return _mm256_maddubs_epi16(u, s); }
SB_INLINE void istore(void * p, ivec v) { _mm256_storeu_si256((__m256i *)p, v); }
#else
#define IB 16
typedef __m128i ivec;
SB_INLINE ivec iload(const void * p) { return _mm_loadu_si128((const __m128i *)p); }
SB_INLINE ivec izero(void) { return _mm_setzero_si128(); }
SB_INLINE ivec iadd(ivec a, ivec b) { return _mm_add_epi32(a, b); }
SB_INLINE ivec sat_pairs(ivec s, ivec w) { return _mm_madd_epi16(_mm_maddubs_epi16(s, w), _mm_set1_epi16(1)); }
#define VNNI 0
SB_INLINE ivec iload_u16(const void * p) { return _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)p)); }
SB_INLINE ivec iload_s16(const void * p) { return _mm_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)p)); }
SB_INLINE ivec imadd16(ivec a, ivec b) { return _mm_madd_epi16(a, b); }
SB_INLINE __m128i ilanes_add(ivec v) { return v; }
SB_INLINE ivec iadd16(ivec a, ivec b) { return _mm_add_epi16(a, b); }
SB_INLINE ivec iset16(int16_t v) { return _mm_set1_epi16(v); }
SB_INLINE ivec imaddubs(ivec u, ivec s) { return _mm_maddubs_epi16(u, s); }
SB_INLINE void istore(void * p, ivec v) { _mm_storeu_si128((__m128i *)p, v); }
#endif

/* The int32 sums of a, b, c and d (wrapping), as the four lanes of one vector: each vector's 128-bit lanes added,
   then a tree of unpacks and adds; one store serves four outputs (a store and a scalar sum per output cost as
   much as a sixth of the M = 1 product). */
SB_INLINE __m128i ireduce4(ivec a, ivec b, ivec c, ivec d)
{
    __m128i a4 = ilanes_add(a), b4 = ilanes_add(b), c4 = ilanes_add(c), d4 = ilanes_add(d);
    __m128i ab = _mm_add_epi32(_mm_unpacklo_epi32(a4, b4), _mm_unpackhi_epi32(a4, b4)); /* a0+a2 b0+b2 a1+a3 b1+b3 */
    __m128i cd = _mm_add_epi32(_mm_unpacklo_epi32(c4, d4), _mm_unpackhi_epi32(c4, d4));
    return _mm_add_epi32(_mm_unpacklo_epi64(ab, cd), _mm_unpackhi_epi64(ab, cd));
}

/* Rows of src per block: at AVX-512 (32 registers) 4 x 4 accumulators, so that each step loads 8 vectors for 16
   dot products instead of 6 for 8; 2 x 4 fits the 16 registers of SSE4.1/AVX2. */
#if SB_ISA_AT_LEAST(3)
#define SR 4
#else
#define SR 2
#endif

/* The first n (< IB) bytes at p, the rest zero. */
#if SB_ISA_AT_LEAST(3) && !defined(SB_EMULATED_UNIT) /* a masked load (not in the emulation header) */
#define ALIGN_W 1
SB_INLINE ivec iload_n(const void * p, size_t n) { return _mm512_maskz_loadu_epi8(((__mmask64)1 << n) - 1, p); }
#else
#define ALIGN_W 0
SB_INLINE ivec iload_n(const void * p, size_t n)
{
    uint8_t bytes[IB] = {0};
    memcpy(bytes, p, n);
    return iload(bytes);
}
#endif

/* dst[r * N + t] = the sum of acc[r][t]'s lanes (added to dst[r * N + t] when add), for r < rows and t < jn. */
SB_INLINE void store_dots(ivec acc[SR][4], const int rows, const int jn, int32_t * dst, size_t N, const int add)
{
    for (int r = 0; r < rows; ++r) {
        for (int t = jn; t < 4; ++t)
            acc[r][t] = izero();
        __m128i sums = ireduce4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
        int32_t * d = dst + r * N;
        if (jn == 4) {
            if (add)
                sums = _mm_add_epi32(sums, _mm_loadu_si128((const __m128i *)d));
            _mm_storeu_si128((__m128i *)d, sums);
        } else {
            int32_t lanes[4];
            _mm_storeu_si128((__m128i *)lanes, sums);
            for (int t = 0; t < jn; ++t)
                d[t] = add ? wrap_add(d[t], lanes[t]) : lanes[t];
        }
    }
}

SB_INLINE ivec step(ivec acc, ivec s, ivec w, const int precise)
{
#if VNNI
    /* vpdpwssd adds the two clamped pair sums of each int32 lane exactly: one instruction for pmaddwd + paddd */
    return precise ? precise_dot(acc, s, w) : _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(s, w), _mm512_set1_epi16(1));
#else
    (void)precise;
    return iadd(acc, sat_pairs(s, w));
#endif
}

/* Precise without VNNI: IB bytes of K for every (src row, weight row) pair of a block, each half vector loaded
   widened to int16 once for every row of the other operand (not once per pair), pairs of products summed by pmaddwd
   (exact: two products of |x| <= 32640 fit int32). s and w point at row 0, ls and lw are the row strides. */
SB_INLINE void widened_step(ivec acc[SR][4], const int rows, const int jn, const uint8_t * s, size_t ls,
    const int8_t * w, size_t lw)
{
    for (int h = 0; h < IB; h += IB / 2) {
        ivec x[SR];
        for (int r = 0; r < rows; ++r)
            x[r] = iload_u16(s + r * ls + h);
        for (int t = 0; t < jn; ++t) {
            ivec y = iload_s16(w + t * lw + h);
            for (int r = 0; r < rows; ++r)
                acc[r][t] = iadd(acc[r][t], imadd16(x[r], y));
        }
    }
}

/* dst[r * N + t] = dot(src row r, weight row t) for r < rows (<= SR) and t < jn (<= 4), all constants after
   inlining: each weight vector loaded once serves every row of src, each src vector every row of weight. */
SB_INLINE void dots(const int rows, const int jn, const uint8_t * s, const int8_t * w, size_t K, int32_t * dst,
    size_t N, const int precise)
{
    ivec acc[SR][4];
    for (int r = 0; r < rows; ++r)
        for (int t = 0; t < jn; ++t)
            acc[r][t] = izero();
    size_t k = 0;
    if (precise && !VNNI) {
        for (; k + IB <= K; k += IB)
            widened_step(acc, rows, jn, s + k, K, w + k, K);
        if (k < K) { /* K's tail, zero-padded */
            uint8_t xs[SR][IB] = {{0}};
            int8_t ws[4][IB] = {{0}};
            for (int r = 0; r < rows; ++r)
                memcpy(xs[r], s + r * K + k, K - k);
            for (int t = 0; t < jn; ++t)
                memcpy(ws[t], w + t * K + k, K - k);
            widened_step(acc, rows, jn, xs[0], IB, ws[0], IB);
        }
    } else {
#if ALIGN_W
        /* Weight rows off a 64-byte boundary (NumPy's large arrays start 16 bytes past one) split every load across
           two cache lines, which cost 15% at M = 1: a short first block (masked loads, zero-padded) aligns the rest
           when every row has the same offset. Its length is even, so the pairs (2m, 2m + 1) still start at even k. */
        size_t head = (size_t)(-(uintptr_t)w) % IB;
        if (head != 0 && head % 2 == 0 && K % IB == 0 && K > IB) {
            ivec x[SR];
            for (int r = 0; r < rows; ++r)
                x[r] = iload_n(s + r * K, head);
            for (int t = 0; t < jn; ++t) {
                ivec y = iload_n(w + t * K, head);
                for (int r = 0; r < rows; ++r)
                    acc[r][t] = step(acc[r][t], x[r], y, precise);
            }
            k = head;
        }
#endif
        for (; k + IB <= K; k += IB) {
            ivec x[SR];
            for (int r = 0; r < rows; ++r)
                x[r] = iload(s + r * K + k);
            for (int t = 0; t < jn; ++t) {
                ivec y = iload(w + t * K + k);
                for (int r = 0; r < rows; ++r)
                    acc[r][t] = step(acc[r][t], x[r], y, precise);
            }
        }
        if (k < K) {
            ivec x[SR];
            for (int r = 0; r < rows; ++r)
                x[r] = iload_n(s + r * K + k, K - k);
            for (int t = 0; t < jn; ++t) {
                ivec y = iload_n(w + t * K + k, K - k);
                for (int r = 0; r < rows; ++r)
                    acc[r][t] = step(acc[r][t], x[r], y, precise);
            }
        }
    }
    store_dots(acc, rows, jn, dst, N, 0);
}

/* dots() for `rows` (1 .. SR) rows of src and jn (1 .. 4) rows of weight, each pair its own inlined kernel. */
SB_INLINE void dots_rows(const int rows, size_t jn, const uint8_t * s, const int8_t * w, size_t K, int32_t * d,
    size_t N, const int precise)
{
    switch (jn) {
    case 4: dots(rows, 4, s, w, K, d, N, precise); break;
    case 3: dots(rows, 3, s, w, K, d, N, precise); break;
    case 2: dots(rows, 2, s, w, K, d, N, precise); break;
    default: dots(rows, 1, s, w, K, d, N, precise); break;
    }
}

SB_INLINE void rows_block(size_t M, size_t N, size_t K, const uint8_t * src, const int8_t * weight, int32_t * dst,
    size_t j0, size_t j1, const int precise)
{
    for (size_t j = j0; j < j1; j += 4) {
        size_t jn = j1 - j < 4 ? j1 - j : 4;
        const int8_t * w = weight + j * K;
        size_t i = 0;
        for (; i + SR <= M; i += SR)
            dots_rows(SR, jn, src + i * K, w, K, dst + i * N + j, N, precise);
        switch (M - i) { /* the last rows, fewer than SR */
#if SR > 3
        case 3: dots_rows(3, jn, src + i * K, w, K, dst + i * N + j, N, precise); break;
        case 2: dots_rows(2, jn, src + i * K, w, K, dst + i * N + j, N, precise); break;
#endif
        case 1: dots_rows(1, jn, src + i * K, w, K, dst + i * N + j, N, precise); break;
        default: break;
        }
    }
}

#if !SB_ISA_AT_LEAST(3)
#define PRECISE_PREPARED 1
/* Precise without AVX-512. Widening bytes to int16 inside the loop (pmovzx/pmovsx) costs a shuffle per 16 products
   on top of pmaddwd + paddd, and shuffles, multiplies and adds share the core's four vector pipes: the operands are
   prepared outside the loop instead, in one buffer per call and thread.
   - M >= 2 (AVX2): src widened to int16 once, each block of weight rows widened once for all rows of src; the loop
     is then loads, pmaddwd and paddd only (exact: two products of |x| <= 32640 fit int32).
   - M == 1: each weight byte is used once, so widening it cannot be paid back. src (the operand every weight row
     meets) is split instead into lo = s & 31 and hi = s >> 5, and pmaddubsw takes the raw weight bytes: its pair
     sums are at most 31 * 128 * 2 = 7936 (lo) and 7 * 128 * 2 = 1792 (hi), so 4 lo and 16 hi results add in int16
     without saturating before pmaddwd (by 1 and by 32) moves them to int32: s * w = lo * w + 32 * hi * w exactly.
   Both buffers are zero past K (to whole vectors), so a padded product is 0 * w. */
#define WV (IB / 2) /* int16 per vector */
#define LO_STEPS 4
#define HI_STEPS 16

SB_INLINE size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }
#define SB_STR_(x) #x
#define SB_STR(x) SB_STR_(x)

#if SB_ISA_AT_LEAST(2) /* at SSE4.1 this path was slower than the dot products with widening loads */
/* rows x n int16 from the first kn bytes of rows rows of src (stride ls), zero from kn to n. */
SB_INLINE void widen_rows(const void * src, int is_signed, size_t rows, size_t ls, size_t kn, size_t n, int16_t * dst)
{
    for (size_t r = 0; r < rows; ++r) {
        const uint8_t * u = (const uint8_t *)src + r * ls;
        int16_t * d = dst + r * n;
        size_t k = 0;
        for (; k + WV <= kn; k += WV)
            istore(d + k, is_signed ? iload_s16(u + k) : iload_u16(u + k));
        for (; k < kn; ++k)
            d[k] = is_signed ? (int16_t)(int8_t)u[k] : (int16_t)u[k];
        for (; k < n; ++k)
            d[k] = 0;
    }
}

/* dots() on widened operands: rows (<= SR) rows of x (stride lx) against jn (<= 4) rows of w (stride lw), n int16
   each (a multiple of WV), added to dst when add. */
SB_INLINE void wide_dots(const int rows, const int jn, const int16_t * x, size_t lx, const int16_t * w, size_t lw,
    size_t n, int32_t * dst, size_t N, const int add)
{
    ivec acc[SR][4];
    for (int r = 0; r < rows; ++r)
        for (int t = 0; t < jn; ++t)
            acc[r][t] = izero();
    if (rows == 2 && jn == 4) {
        /* The common block in assembly: compiled from the loop below, GCC folded each weight load into both of its
           pmaddwd (10 loads a step where 6 do) or, keeping them in registers, spilled an accumulator to the stack
           and copied the others between registers every step (a third slower than this). */
        ivec xa, xb, y, p;
        size_t k = 0;
        __asm__(
            "1:\n\t"
            "vmovdqu (%[x0],%[k],2), %[xa]\n\t"
            "vmovdqu (%[x1],%[k],2), %[xb]\n\t"
#define SB_ROW(wt, a0, a1) "vmovdqu (%[" wt "],%[k],2), %[y]\n\t"                                               \
            "vpmaddwd %[y], %[xa], %[p]\n\t" "vpaddd %[p], %[" a0 "], %[" a0 "]\n\t"                             \
            "vpmaddwd %[y], %[xb], %[p]\n\t" "vpaddd %[p], %[" a1 "], %[" a1 "]\n\t"
            SB_ROW("w0", "a00", "a10") SB_ROW("w1", "a01", "a11") SB_ROW("w2", "a02", "a12") SB_ROW("w3", "a03", "a13")
#undef SB_ROW
            "add $" SB_STR(WV) ", %[k]\n\t"
            "cmp %[n], %[k]\n\t"
            "jb 1b"
            : [a00] "+x"(acc[0][0]), [a01] "+x"(acc[0][1]), [a02] "+x"(acc[0][2]), [a03] "+x"(acc[0][3]),
              [a10] "+x"(acc[1][0]), [a11] "+x"(acc[1][1]), [a12] "+x"(acc[1][2]), [a13] "+x"(acc[1][3]),
              [xa] "=&x"(xa), [xb] "=&x"(xb), [y] "=&x"(y), [p] "=&x"(p), [k] "+&r"(k)
            : [x0] "r"(x), [x1] "r"(x + lx), [w0] "r"(w), [w1] "r"(w + lw), [w2] "r"(w + 2 * lw),
              [w3] "r"(w + 3 * lw), [n] "r"(n)
            : "cc", "memory");
        store_dots(acc, rows, jn, dst, N, add);
        return;
    }
    for (size_t k = 0; k < n; k += WV) {
        ivec xs[SR];
        for (int r = 0; r < rows; ++r)
            xs[r] = iload(x + r * lx + k);
        for (int t = 0; t < jn; ++t) {
            ivec y = iload(w + t * lw + k);
            for (int r = 0; r < rows; ++r)
                acc[r][t] = iadd(acc[r][t], imadd16(xs[r], y));
        }
    }
    store_dots(acc, rows, jn, dst, N, add);
}

/* wide_dots() for 2 rows of x and 6 of w, in assembly: 12 accumulators, 8 loads and 24 vector operations a step,
   within the core's 4 vector pipes and 6 instructions a cycle (2 x 4 takes 25 instructions for 16 operations). */
static void wide_dots_2x6(const int16_t * x, size_t lx, const int16_t * w, size_t lw, size_t n, int32_t * dst,
    size_t N, const int add)
{
    /* ymm12-15 are the two x rows, the weight vector and the product (clobbered, so that the 12 accumulators can
       be plain outputs: GCC allows 30 operands, and an in-out one counts twice) */
    ivec a[2][6];
    size_t k = 0, lk = lw; /* w + t * lw + k, as row 0, 2 or 4's base indexed by k or by lw + k */
    __asm__(
        "vpxor %[a00], %[a00], %[a00]\n\t" "vpxor %[a01], %[a01], %[a01]\n\t" "vpxor %[a02], %[a02], %[a02]\n\t"
        "vpxor %[a03], %[a03], %[a03]\n\t" "vpxor %[a04], %[a04], %[a04]\n\t" "vpxor %[a05], %[a05], %[a05]\n\t"
        "vpxor %[a10], %[a10], %[a10]\n\t" "vpxor %[a11], %[a11], %[a11]\n\t" "vpxor %[a12], %[a12], %[a12]\n\t"
        "vpxor %[a13], %[a13], %[a13]\n\t" "vpxor %[a14], %[a14], %[a14]\n\t" "vpxor %[a15], %[a15], %[a15]\n\t"
        "1:\n\t"
        "vmovdqu (%[x0],%[k],2), %%ymm12\n\t"
        "vmovdqu (%[x1],%[k],2), %%ymm13\n\t"
#define SB_ROW(addr, a0, a1) "vmovdqu " addr ", %%ymm14\n\t"                                                        \
        "vpmaddwd %%ymm14, %%ymm12, %%ymm15\n\t" "vpaddd %%ymm15, %[" a0 "], %[" a0 "]\n\t"                         \
        "vpmaddwd %%ymm14, %%ymm13, %%ymm15\n\t" "vpaddd %%ymm15, %[" a1 "], %[" a1 "]\n\t"
        SB_ROW("(%[w0],%[k],2)", "a00", "a10") SB_ROW("(%[w0],%[lk],2)", "a01", "a11")
        SB_ROW("(%[w2],%[k],2)", "a02", "a12") SB_ROW("(%[w2],%[lk],2)", "a03", "a13")
        SB_ROW("(%[w4],%[k],2)", "a04", "a14") SB_ROW("(%[w4],%[lk],2)", "a05", "a15")
#undef SB_ROW
        "add $" SB_STR(WV) ", %[k]\n\t"
        "add $" SB_STR(WV) ", %[lk]\n\t"
        "cmp %[n], %[k]\n\t"
        "jb 1b"
        : [a00] "=&x"(a[0][0]), [a01] "=&x"(a[0][1]), [a02] "=&x"(a[0][2]), [a03] "=&x"(a[0][3]),
          [a04] "=&x"(a[0][4]), [a05] "=&x"(a[0][5]), [a10] "=&x"(a[1][0]), [a11] "=&x"(a[1][1]),
          [a12] "=&x"(a[1][2]), [a13] "=&x"(a[1][3]), [a14] "=&x"(a[1][4]), [a15] "=&x"(a[1][5]),
          [k] "+&r"(k), [lk] "+&r"(lk)
        : [x0] "r"(x), [x1] "r"(x + lx), [w0] "r"(w), [w2] "r"(w + 2 * lw), [w4] "r"(w + 4 * lw), [n] "r"(n)
        : "xmm12", "xmm13", "xmm14", "xmm15", "cc", "memory");
    ivec lo[SR][4] = {{a[0][0], a[0][1], a[0][2], a[0][3]}, {a[1][0], a[1][1], a[1][2], a[1][3]}};
    ivec hi[SR][4] = {{a[0][4], a[0][5]}, {a[1][4], a[1][5]}};
    store_dots(lo, 2, 4, dst, N, add);
    store_dots(hi, 2, 2, dst + 4, N, add);
}

/* wide_dots() for `rows` rows of x and the jn rows of w in each group of 4 of a block of nb rows. Out of line per
   row count: inlined into the caller, the accumulators went through the stack. */
#define SB_WIDE_GROUPS(rows)                                                                                         \
    static __attribute__((noinline)) void wide_groups_##rows(size_t nb, const int16_t * x, size_t lx,             \
        const int16_t * w, size_t n, int32_t * dst, size_t N, const int add)                                      \
    {                                                                                                             \
        size_t t = 0;                                                                                             \
        if (rows == 2)                                                                      \
            for (; t + 6 <= nb; t += 6)                                                                           \
                wide_dots_2x6(x, lx, w + t * n, n, n, dst + t, N, add);                                           \
        for (; t < nb; t += 4) {                                                                                  \
            const int16_t * wt = w + t * n;                                                                       \
            switch (nb - t < 4 ? nb - t : 4) {                                                                    \
            case 4: wide_dots(rows, 4, x, lx, wt, n, n, dst + t, N, add); break;                                  \
            case 3: wide_dots(rows, 3, x, lx, wt, n, n, dst + t, N, add); break;                                  \
            case 2: wide_dots(rows, 2, x, lx, wt, n, n, dst + t, N, add); break;                                  \
            default: wide_dots(rows, 1, x, lx, wt, n, n, dst + t, N, add); break;                                 \
            }                                                                                                     \
        }                                                                                                         \
    }
SB_WIDE_GROUPS(1)
SB_WIDE_GROUPS(2)
#undef SB_WIDE_GROUPS

/* M >= 2, weight rows [j0, j1); buf holds NB x KC int16 and M x KC more. For each block of KC of K, src is widened
   once into buf; each block of NB weight rows is widened once and meets every pair of src rows, 4 rows at a time,
   while it stays in L1. The partial sums of K's blocks add up in dst. */
#define NB 12
#define KC 1024
static void wide_block(size_t M, size_t N, size_t K, const uint8_t * src, const int8_t * weight, int32_t * dst,
    size_t j0, size_t j1, int16_t * buf)
{
    int16_t * wbuf = buf, * x = buf + NB * KC;
    for (size_t kc = 0; kc < K; kc += KC) {
        const size_t kn = K - kc < KC ? K - kc : KC, n = round_up(kn, WV);
        const int add = kc > 0;
        widen_rows(src + kc, 0, M, K, kn, n, x);
        for (size_t j = j0; j < j1; j += NB) {
            const size_t nb = j1 - j < NB ? j1 - j : NB;
            widen_rows(weight + j * K + kc, 1, nb, K, kn, n, wbuf);
            size_t i = 0;
            for (; i + SR <= M; i += SR)
                wide_groups_2(nb, x + i * n, n, wbuf, n, dst + i * N + j, N, add);
            if (i < M) /* SR == 2: one row left */
                wide_groups_1(nb, x + i * n, n, wbuf, n, dst + i * N + j, N, add);
        }
    }
}

#endif

/* One step of the split product: lo16/hi16 += pmaddubsw of the src parts at k with jn weight rows at w. */
SB_INLINE void split_step(const int jn, ivec lo16[4], ivec hi16[4], const uint8_t * lo, const uint8_t * hi,
    const int8_t * w, size_t lw)
{
    ivec xl = iload(lo), xh = iload(hi);
    for (int t = 0; t < jn; ++t) {
        ivec y = iload(w + t * lw);
        lo16[t] = iadd16(lo16[t], imaddubs(xl, y));
        hi16[t] = iadd16(hi16[t], imaddubs(xh, y));
    }
}

/* lo16/hi16 += the split products of `steps` (1 .. LO_STEPS) whole vectors of the jn weight rows at w (stride lw)
   from k on; parts interleaves src's parts by vector (lo at parts + 2k, hi at parts + 2k + IB). The next 4 rows
   (contiguous) are prefetched meanwhile, 4 vectors a step: each row starts a stream that the hardware prefetcher
   only picks up after a few misses. */
SB_INLINE void split_steps(const int jn, ivec lo16[4], ivec hi16[4], const uint8_t * parts, const int8_t * w,
    size_t lw, size_t k, int steps)
{
    size_t next = 4 * lw + 4 * k; /* bytes from w: the next rows' block, read at 4 vectors a step */
#if SB_ISA_AT_LEAST(2)
    if (jn == 4) {
        /* In assembly: compiled, each weight vector was loaded twice (once per pmaddubsw). */
        ivec xl, xh, y, p;
        const size_t end = k + (size_t)steps * IB;
        __asm__(
            "1:\n\t"
            "vmovdqu (%[parts],%[k],2), %[xl]\n\t"
            "vmovdqu " SB_STR(IB) "(%[parts],%[k],2), %[xh]\n\t"
            "prefetcht0 (%[w0],%[next])\n\t"
            "prefetcht0 64(%[w0],%[next])\n\t"
#define SB_ROW(wt, l, h) "vmovdqu (%[" wt "],%[k]), %[y]\n\t"                                                     \
            "vpmaddubsw %[y], %[xl], %[p]\n\t" "vpaddw %[p], %[" l "], %[" l "]\n\t"                             \
            "vpmaddubsw %[y], %[xh], %[p]\n\t" "vpaddw %[p], %[" h "], %[" h "]\n\t"
            SB_ROW("w0", "l0", "h0") SB_ROW("w1", "l1", "h1") SB_ROW("w2", "l2", "h2") SB_ROW("w3", "l3", "h3")
#undef SB_ROW
            "add $" SB_STR(IB) ", %[k]\n\t"
            "add $" SB_STR(4 * IB) ", %[next]\n\t"
            "cmp %[end], %[k]\n\t"
            "jb 1b"
            : [l0] "+x"(lo16[0]), [l1] "+x"(lo16[1]), [l2] "+x"(lo16[2]), [l3] "+x"(lo16[3]),
              [h0] "+x"(hi16[0]), [h1] "+x"(hi16[1]), [h2] "+x"(hi16[2]), [h3] "+x"(hi16[3]),
              [xl] "=&x"(xl), [xh] "=&x"(xh), [y] "=&x"(y), [p] "=&x"(p), [k] "+&r"(k), [next] "+&r"(next)
            : [parts] "r"(parts), [w0] "r"(w), [w1] "r"(w + lw), [w2] "r"(w + 2 * lw), [w3] "r"(w + 3 * lw),
              [end] "r"(end)
            : "cc", "memory");
        return;
    }
#endif
    for (int q = 0; q < steps; ++q, k += IB, next += 4 * IB) {
        for (int c = 0; c < 4 * IB; c += 64)
            _mm_prefetch((const char *)w + next + c, _MM_HINT_T0);
        split_step(jn, lo16, hi16, parts + 2 * k, parts + 2 * k + IB, w + k, lw);
    }
}

#if SB_ISA_AT_LEAST(2)
/* split_dots() for 4 weight rows over whole groups of HI_STEPS vectors, [0, end) bytes, in one block of assembly
   (ymm0-3 the int16 lo sums, ymm4-7 the hi sums, 12-15 src's parts, the weight vector and the product): entering
   and leaving a block per LO_STEPS vectors cost a fifth of the M = 1 time. Same arithmetic as split_steps(). */
static void split_groups_4(ivec acc[4], const uint8_t * parts, const int8_t * w, size_t lw, size_t end)
{
    _Static_assert(IB == 32 && LO_STEPS == 4, "the offsets below are written for 4 steps of 32 bytes");
    const ivec ones = iset16(1), m32 = iset16(32);
    size_t k = 0, next = 4 * lw, c = 0;
    __asm__(
        "2:\n\t"
        "vpxor %%ymm4, %%ymm4, %%ymm4\n\t" "vpxor %%ymm5, %%ymm5, %%ymm5\n\t"
        "vpxor %%ymm6, %%ymm6, %%ymm6\n\t" "vpxor %%ymm7, %%ymm7, %%ymm7\n\t"
        "mov $" SB_STR(HI_STEPS / LO_STEPS) ", %[c]\n\t"
        "3:\n\t"
        "vpxor %%ymm0, %%ymm0, %%ymm0\n\t" "vpxor %%ymm1, %%ymm1, %%ymm1\n\t"
        "vpxor %%ymm2, %%ymm2, %%ymm2\n\t" "vpxor %%ymm3, %%ymm3, %%ymm3\n\t"
/* the LO_STEPS steps of one int16 group, vector q at byte offsets 2 * IB * q (src's lo part; hi IB further),
   4 * IB * q (the prefetch) and IB * q (the weights) */
#define SB_ROW(t, h, wd) "vmovdqu " wd "(%[w" #t "],%[k]), %%ymm14\n\t"                                            \
        "vpmaddubsw %%ymm14, %%ymm12, %%ymm15\n\t" "vpaddw %%ymm15, %%ymm" #t ", %%ymm" #t "\n\t"                 \
        "vpmaddubsw %%ymm14, %%ymm13, %%ymm15\n\t" "vpaddw %%ymm15, %%ymm" #h ", %%ymm" #h "\n\t"
#define SB_STEP(lo, hi, f0, f1, wd) "vmovdqu " lo "(%[parts],%[k],2), %%ymm12\n\t"                                  \
        "vmovdqu " hi "(%[parts],%[k],2), %%ymm13\n\t"                                                              \
        "prefetcht0 " f0 "(%[w0],%[next])\n\t" "prefetcht0 " f1 "(%[w0],%[next])\n\t"                             \
        SB_ROW(0, 4, wd) SB_ROW(1, 5, wd) SB_ROW(2, 6, wd) SB_ROW(3, 7, wd)
        SB_STEP("0", "32", "0", "64", "0") SB_STEP("64", "96", "128", "192", "32")
        SB_STEP("128", "160", "256", "320", "64") SB_STEP("192", "224", "384", "448", "96")
#undef SB_STEP
#undef SB_ROW
        "add $" SB_STR(LO_STEPS * IB) ", %[k]\n\t"
        "add $" SB_STR(4 * LO_STEPS * IB) ", %[next]\n\t"
        "vpmaddwd %[ones], %%ymm0, %%ymm0\n\t" "vpaddd %%ymm0, %[a0], %[a0]\n\t"
        "vpmaddwd %[ones], %%ymm1, %%ymm1\n\t" "vpaddd %%ymm1, %[a1], %[a1]\n\t"
        "vpmaddwd %[ones], %%ymm2, %%ymm2\n\t" "vpaddd %%ymm2, %[a2], %[a2]\n\t"
        "vpmaddwd %[ones], %%ymm3, %%ymm3\n\t" "vpaddd %%ymm3, %[a3], %[a3]\n\t"
        "dec %[c]\n\t"
        "jnz 3b\n\t"
        "vpmaddwd %[m32], %%ymm4, %%ymm4\n\t" "vpaddd %%ymm4, %[a0], %[a0]\n\t"
        "vpmaddwd %[m32], %%ymm5, %%ymm5\n\t" "vpaddd %%ymm5, %[a1], %[a1]\n\t"
        "vpmaddwd %[m32], %%ymm6, %%ymm6\n\t" "vpaddd %%ymm6, %[a2], %[a2]\n\t"
        "vpmaddwd %[m32], %%ymm7, %%ymm7\n\t" "vpaddd %%ymm7, %[a3], %[a3]\n\t"
        "cmp %[end], %[k]\n\t"
        "jb 2b"
        : [a0] "+x"(acc[0]), [a1] "+x"(acc[1]), [a2] "+x"(acc[2]), [a3] "+x"(acc[3]), [k] "+&r"(k),
          [next] "+&r"(next), [c] "+&r"(c)
        : [parts] "r"(parts), [w0] "r"(w), [w1] "r"(w + lw), [w2] "r"(w + 2 * lw), [w3] "r"(w + 3 * lw),
          [end] "r"(end), [ones] "m"(ones), [m32] "m"(m32)
        : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm12", "xmm13", "xmm14", "xmm15", "cc",
          "memory");
}
#endif

/* M == 1: dst[t] = dot(src, weight row t) for t < jn; parts holds src's parts (split_steps), zero-padded to whole
   vectors. */
SB_INLINE void split_dots(const int jn, const uint8_t * parts, const int8_t * w, size_t K, int32_t * dst)
{
    const ivec ones = iset16(1), thirty_two = iset16(32);
    ivec acc[4], lo16[4], hi16[4];
    for (int t = 0; t < jn; ++t)
        acc[t] = izero();
    const size_t full = K / IB * IB; /* bytes of each weight row read in place; the rest is copied, zero-padded */
    size_t k = 0;
#if SB_ISA_AT_LEAST(2)
    if (jn == 4 && full >= HI_STEPS * IB) {
        k = full / (HI_STEPS * IB) * (HI_STEPS * IB);
        split_groups_4(acc, parts, w, K, k);
    }
#endif
    while (k < full) {
        for (int t = 0; t < jn; ++t)
            hi16[t] = izero();
        for (int q = 0; q < HI_STEPS / LO_STEPS && k < full; ++q) {
            const int steps = full - k < LO_STEPS * IB ? (int)((full - k) / IB) : LO_STEPS;
            for (int t = 0; t < jn; ++t)
                lo16[t] = izero();
            split_steps(jn, lo16, hi16, parts, w, K, k, steps);
            k += (size_t)steps * IB;
            for (int t = 0; t < jn; ++t)
                acc[t] = iadd(acc[t], imadd16(lo16[t], ones));
        }
        for (int t = 0; t < jn; ++t)
            acc[t] = iadd(acc[t], imadd16(hi16[t], thirty_two));
    }
    if (k < K) {
        int8_t ws[4][IB] = {{0}};
        for (int t = 0; t < jn; ++t)
            memcpy(ws[t], w + t * K + k, K - k);
        for (int t = 0; t < jn; ++t)
            lo16[t] = hi16[t] = izero();
        split_step(jn, lo16, hi16, parts + 2 * k, parts + 2 * k + IB, ws[0], IB);
        for (int t = 0; t < jn; ++t)
            acc[t] = iadd(acc[t], iadd(imadd16(lo16[t], ones), imadd16(hi16[t], thirty_two)));
    }
    ivec rows1[SR][4];
    for (int t = 0; t < jn; ++t)
        rows1[0][t] = acc[t];
    store_dots(rows1, 1, jn, dst, 0, 0);
}

/* M == 1, weight rows [j0, j1); parts holds 2 x round_up(K, IB) bytes. */
static void split_block(size_t K, const uint8_t * src, const int8_t * weight, int32_t * dst, size_t j0, size_t j1,
    uint8_t * parts)
{
    const size_t KV = round_up(K, IB);
    for (size_t k = 0; k < KV; ++k) {
        uint8_t s = k < K ? src[k] : 0;
        parts[2 * k - k % IB] = s & 31;     /* vector k / IB's lo, at 2 * (k - k % IB) + k % IB */
        parts[2 * k - k % IB + IB] = s >> 5; /* and its hi, IB further */
    }
    for (size_t j = j0; j < j1; j += 4) {
        size_t jn = j1 - j < 4 ? j1 - j : 4;
        const int8_t * w = weight + j * K;
        switch (jn) {
        case 4: split_dots(4, parts, w, K, dst + j); break;
        case 3: split_dots(3, parts, w, K, dst + j); break;
        case 2: split_dots(2, parts, w, K, dst + j); break;
        default: split_dots(1, parts, w, K, dst + j); break;
        }
    }
}

/* The precise product of weight rows [j0, j1) through the prepared operands; 0 when the buffer cannot be allocated
   (the caller then takes the dot-product path). */
static int prepared_block(size_t M, size_t N, size_t K, const uint8_t * src, const int8_t * weight, int32_t * dst,
    size_t j0, size_t j1)
{
    if (M == 1) {
        uint8_t * parts = (uint8_t *)sb_alloc(2, round_up(K, IB));
        if (parts == NULL)
            return 0;
        split_block(K, src, weight, dst, j0, j1, parts);
        sb_free(parts);
        return 1;
    }
#if SB_ISA_AT_LEAST(2)
    int16_t * buf = (int16_t *)sb_alloc((NB + M) * KC, sizeof(int16_t));
    if (buf == NULL)
        return 0;
    wide_block(M, N, K, src, weight, dst, j0, j1, buf);
    sb_free(buf);
    return 1;
#else
    (void)N; /* SSE4.1, M >= 2: the dot products with widening loads */
    return 0;
#endif
}
#endif

#if SB_ISA_AT_LEAST(3) && !defined(SB_EMULATED_UNIT) /* intrinsics the emulation header does not provide */
#define PACKED 1
/* AVX-512 (precise: VNNI only), M >= PR: a register-blocked GEMM over weight packed per call. Each thread packs 32 rows of weight at a time
   (a panel) so that one zmm holds 16 outputs x 4 consecutive k (vpdpbusd's layout), then sweeps every row of src
   over the panel: PR rows x 2 vectors of accumulators, each step one 4-byte broadcast of src per row and two
   panel loads for 2*PR vpdpbusd (precise) or maddubs + vpdpwssd pairs (saturating: the pair (2m, 2m+1) of the
   contract is adjacent inside each 4-byte group, and vpdpwssd adds the two clamped pair sums to int32 exactly).
   No horizontal reductions, and the weight bytes are read once per call instead of once per PR rows of src (the
   dot-product form above is load-bound). K's tail and the panel's missing rows are zero-padded: a zero product
   changes neither sum, and an odd last product is paired with 0 exactly as the contract says. */
#define PR 12
#define PANEL 32

/* The panel of weight rows [j0, j0 + jn) (jn <= 32), K4 groups of 4 k: out[(g * 2 + h) * 64 + t * 4 + b] =
   weight[j0 + h * 16 + t][4 * g + b], zero where the row or k is past the end. */
/* 16 rows of 16 int32 (r[t] = row t) transposed in registers: r[g] becomes group g of every row. */
SB_INLINE void transpose16(__m512i r[16])
{
    __m512i t[16], u[16];
    for (int i = 0; i < 8; ++i) {
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; ++i) { /* 128-bit lane L of u[4i + c]: column 4L + c of rows 4i .. 4i + 3 */
        u[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    for (int c = 0; c < 4; ++c) {
        __m512i v1 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x44), v2 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xEE);
        __m512i w1 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x44), w2 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xEE);
        r[c] = _mm512_shuffle_i32x4(v1, w1, 0x88);
        r[4 + c] = _mm512_shuffle_i32x4(v1, w1, 0xDD);
        r[8 + c] = _mm512_shuffle_i32x4(v2, w2, 0x88);
        r[12 + c] = _mm512_shuffle_i32x4(v2, w2, 0xDD);
    }
}

/* The panel of weight rows [j0, j0 + jn) (jn <= 32), K4 groups of 4 k: out[(g * 2 + h) * 64 + t * 4 + b] =
   weight[j0 + h * 16 + t][4 * g + b], zero where the row or k is past the end. Whole halves of 16 rows go 64 bytes
   of K at a time through a register transpose (4-byte moves made the packing a quarter of the M = 64 call). */
static void pack_panel(const int8_t * weight, size_t K, size_t j0, size_t jn, size_t K4, int8_t * out)
{
    const size_t full = K / 4;
    if (jn < PANEL || full < K4)
        memset(out, 0, K4 * PANEL * 4);
    for (size_t h = 0; h < 2; ++h) {
        size_t t0 = h * 16, t1 = jn < t0 + 16 ? jn : t0 + 16, g = 0;
        if (t1 == t0 + 16)
            for (; g + 16 <= full; g += 16) {
                __m512i r[16];
                for (int t = 0; t < 16; ++t)
                    r[t] = _mm512_loadu_si512(weight + (j0 + t0 + t) * K + 4 * g);
                transpose16(r);
                for (int q = 0; q < 16; ++q)
                    _mm512_storeu_si512(out + ((g + q) * 2 + h) * 64, r[q]);
            }
        for (size_t t = t0; t < t1; ++t) { /* the rest: K's last groups, or a half with fewer than 16 rows */
            const int8_t * w = weight + (j0 + t) * K;
            int8_t * o = out + h * 64 + (t - t0) * 4;
            for (size_t q = g; q < full; ++q) /* a fixed-size copy: one 4-byte move */
                memcpy(o + q * 2 * 64, w + 4 * q, 4);
            if (full < K4)
                memcpy(o + full * 2 * 64, w + 4 * full, K - 4 * full);
        }
    }
}

/* 4 bytes of src row s at group g as an int32 for the broadcast, zero-padded past K. */
SB_INLINE int32_t src4(const uint8_t * s, size_t K, size_t g)
{
    int32_t v = 0;
    size_t k = 4 * g;
    memcpy(&v, s + k, K - k < 4 ? K - k : 4);
    return v;
}

SB_INLINE void panel_rows(const int rows, const uint8_t * src, size_t K, size_t K4, const int8_t * panel,
    int32_t * dst, size_t N, size_t jn, const int precise)
{
    __m512i acc[PR][2];
    for (int r = 0; r < rows; ++r)
        acc[r][0] = acc[r][1] = _mm512_setzero_si512();
    const __m512i ones = _mm512_set1_epi16(1);
    const size_t full = K / 4; /* groups read straight from src; the last partial one is padded */
    for (size_t g = 0; g < K4; ++g) {
        __m512i w0 = _mm512_loadu_si512(panel + g * 128), w1 = _mm512_loadu_si512(panel + g * 128 + 64);
        for (int r = 0; r < rows; ++r) {
            int32_t v;
            if (g < full)
                memcpy(&v, src + r * K + 4 * g, 4);
            else
                v = src4(src + r * K, K, g);
            __m512i x = _mm512_set1_epi32(v);
#if VNNI
            if (precise) {
                acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], x, w0);
                acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], x, w1);
            } else {
                acc[r][0] = _mm512_dpwssd_epi32(acc[r][0], _mm512_maddubs_epi16(x, w0), ones);
                acc[r][1] = _mm512_dpwssd_epi32(acc[r][1], _mm512_maddubs_epi16(x, w1), ones);
            }
#else
            (void)precise; /* saturating only (see body) */
            acc[r][0] = _mm512_add_epi32(acc[r][0], _mm512_madd_epi16(_mm512_maddubs_epi16(x, w0), ones));
            acc[r][1] = _mm512_add_epi32(acc[r][1], _mm512_madd_epi16(_mm512_maddubs_epi16(x, w1), ones));
#endif
        }
    }
    for (int r = 0; r < rows; ++r) {
        int32_t * d = dst + r * N;
        if (jn >= 32) {
            _mm512_storeu_si512(d, acc[r][0]);
            _mm512_storeu_si512(d + 16, acc[r][1]);
        } else if (jn > 16) {
            _mm512_storeu_si512(d, acc[r][0]);
            _mm512_mask_storeu_epi32(d + 16, (__mmask16)((1u << (jn - 16)) - 1), acc[r][1]);
        } else {
            _mm512_mask_storeu_epi32(d, (__mmask16)((1u << jn) - 1), acc[r][0]);
        }
    }
}

/* Rows of weight [j0, j1) against every row of src; returns 0 when the panel buffer cannot be allocated (the caller
   then takes the dot-product path). */
static int packed_block(size_t M, size_t N, size_t K, const uint8_t * src, const int8_t * weight, int32_t * dst,
    size_t j0, size_t j1, const int precise)
{
    const size_t K4 = (K + 3) / 4;
    int8_t * panel = (int8_t *)sb_alloc_aligned(64, K4 * PANEL, 4);
    if (panel == NULL)
        return 0;
    for (size_t j = j0; j < j1; j += PANEL) {
        size_t jn = j1 - j < PANEL ? j1 - j : PANEL;
        pack_panel(weight, K, j, jn, K4, panel);
        /* Rows in ceil(M / PR) blocks of near-equal size (64 = 6 x 10.7, not 5 x 12 + 4: a short last block
           leaves most of the registers idle for a whole sweep of the panel). */
        const size_t blocks = (M + PR - 1) / PR;
        for (size_t b = 0, i = 0; b < blocks; ++b) {
            const size_t rows = M / blocks + (b < M % blocks);
            const uint8_t * s = src + i * K;
            int32_t * d = dst + i * N + j;
            switch (rows) { /* each count its own inlined kernel */
#define SB_ROWS_CASE(n) case n: panel_rows(n, s, K, K4, panel, d, N, jn, precise); break;
            SB_ROWS_CASE(12) SB_ROWS_CASE(11) SB_ROWS_CASE(10) SB_ROWS_CASE(9) SB_ROWS_CASE(8) SB_ROWS_CASE(7)
            SB_ROWS_CASE(6) SB_ROWS_CASE(5) SB_ROWS_CASE(4) SB_ROWS_CASE(3) SB_ROWS_CASE(2) SB_ROWS_CASE(1)
#undef SB_ROWS_CASE
            default: break;
            }
            i += rows;
        }
    }
    sb_free(panel);
    return 1;
}
#endif

#else /* base: scalar, exactly the contract's loops */

SB_INLINE void rows_block(size_t M, size_t N, size_t K, const uint8_t * src, const int8_t * weight, int32_t * dst,
    size_t j0, size_t j1, const int precise)
{
    for (size_t i = 0; i < M; ++i) {
        const uint8_t * s = src + i * K;
        for (size_t j = j0; j < j1; ++j) {
            const int8_t * w = weight + j * K;
            int32_t sum = 0;
            if (precise) {
                for (size_t k = 0; k < K; ++k)
                    sum = wrap_add(sum, (int32_t)s[k] * (int32_t)w[k]);
            } else {
                size_t k = 0;
                for (; k + 2 <= K; k += 2) {
                    int32_t p = (int32_t)s[k] * w[k] + (int32_t)s[k + 1] * w[k + 1];
                    sum = wrap_add(sum, p < -32768 ? -32768 : p > 32767 ? 32767 : p);
                }
                if (k < K)
                    sum = wrap_add(sum, (int32_t)s[k] * w[k]);
            }
            dst[i * N + j] = sum;
        }
    }
}

#endif

typedef struct {
    size_t M, N, K;
    const uint8_t * src;
    const int8_t * weight;
    int32_t * dst;
    int precise;
} job8i;

static void body(void * arg, size_t begin, size_t end)
{
    const job8i * j = (const job8i *)arg;
#if defined(PRECISE_PREPARED)
    if (j->precise && prepared_block(j->M, j->N, j->K, j->src, j->weight, j->dst, begin, end))
        return;
#endif
#if defined(PACKED)
    if ((VNNI || !j->precise) && j->M >= PR && j->K >= 16 && packed_block(j->M, j->N, j->K, j->src, j->weight, j->dst, begin, end, j->precise))
        return;
#endif
    if (j->precise)
        rows_block(j->M, j->N, j->K, j->src, j->weight, j->dst, begin, end, 1);
    else
        rows_block(j->M, j->N, j->K, j->src, j->weight, j->dst, begin, end, 0);
}

void SB_FN(inner_product_8i)(size_t M, size_t N, size_t K, const uint8_t * src, const int8_t * weight, int32_t * dst,
    int precise)
{
    job8i j = {M, N, K, src, weight, dst, precise};
    if (M == 0 || N == 0)
        return;
    if ((double)M * N * K < PARALLEL_WORK)
        body(&j, 0, N);
    else
        sb_parallel_for(N, 32, body, &j); /* whole panels (VNNI) and whole blocks of 4 */
}
