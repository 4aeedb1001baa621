/* @targets base sse41 avx2 avx512bw */
/*
 * softmax.dispatch.c: SimdSynetSoftmax32f and SimdSynetSoftmax16b kernels, compiled once per ISA.
 *
 * The tensor is [outer][count][inner]; every (o, i) slice along count becomes exp(x - max) / sum, with the max
 * subtracted first (as upstream) and vexp (<= 1.5 ulp). Non-finite inputs get the mathematical limit:
 *   - a NaN anywhere in a slice makes the whole slice NaN;
 *   - otherwise, if the slice holds +inf, the +inf entries share the mass equally and the rest are 0
 *     ([3, inf, 2] -> [0, 1, 0]; [inf, inf, 1] -> [0.5, 0.5, 0]);
 *   - -inf entries give 0; a slice of only -inf has no limit and gives NaN (as 0/0).
 * Lanes run over `inner` (inner > 1), along the slice (inner == 1), or across slices (inner == 1 and count <= 8:
 * SB_W short rows at a time); tails use partial loads/stores of the same lane-wise code. bf16: exact widening, the float32 algorithm, round-to-nearest-even narrowing with upstream's bit
 * formula (internal/bf16.h), one slice at a time through a float32 buffer.
 */
#include <stdlib.h>

#include "simd_synet.h"
#include "internal/bf16.h"
#include "internal/vmath.h"

SB_INLINE vf load_bf16(const uint16_t * p) { return vbf16_to_f32(vloadh(p)); }
SB_INLINE vf load_bf16_n(const uint16_t * p, size_t n) { return vbf16_to_f32(vloadh_n(p, n)); }
SB_INLINE void store_bf16(uint16_t * p, vf v) { vstoreh(p, vf32_to_bf16(v)); }
SB_INLINE void store_bf16_n(uint16_t * p, vf v, size_t n) { vstoreh_n(p, vf32_to_bf16(v), n); }

/* exp(d) for d = x - max <= 0 (or NaN): vexp without its upper clamp, which nothing here can reach. */
SB_INLINE vf softmax_exp(vf d)
{
    return sb_vm_exp_in_range(vmax(vset1(-104.0f), d)); /* NaN passes: maxps returns its second operand */
}

/* e = exp(x - m), or for a lane whose max is +inf: 1 where x is +inf, else 0. `any_inf`: some lane's max is +inf
   (rare, so the plain exponential is a predictable branch away). */
SB_INLINE vf softmax_term(vf x, vf m, vi m_inf, int any_inf)
{
    if (__builtin_expect(any_inf, 0))
        return vselect(m_inf, vselect(x == vset1(INFINITY), vset1(1.0f), vset1(0.0f)), vexp(x - m));
    return softmax_exp(x - m);
}

/* ---- inner == 1: one contiguous slice of `count` values, lanes along the slice ------------------------------- */

/* The max pass skips NaN lanes (maxps returns its second operand, the running max): a NaN then reaches every output
   through its term exp(NaN - max), which makes the sum NaN. Only a +inf max replaces the terms by 0/1, so that case
   (rare) scans the slice for NaN explicitly. */
#define SB_SLICE_HAS_NAN(src, count, LOAD, LOAD_N)                                                                 \
    ({                                                                                                            \
        vi nan_ = vset1i(0);                                                                                      \
        size_t i_ = 0;                                                                                            \
        for (; i_ + SB_W <= (count); i_ += SB_W) { vf x_ = LOAD((src) + i_); nan_ |= x_ != x_; }                  \
        if (i_ < (count)) { vf x_ = LOAD_N((src) + i_, (count) - i_); nan_ |= x_ != x_; }                        \
        sb_vm_any(nan_);                                                                                          \
    })

/* The largest of the slice's count values (NaN lanes skipped, see above), through four running maxima: one would wait
   for each max before the next (max is exact, so the order of the pass cannot change it). */
#define SB_SLICE_MAX(src, count, LOAD, LOAD_N)                                                                     \
    ({                                                                                                            \
        vf m_ = vset1(-INFINITY), m1_ = m_, m2_ = m_, m3_ = m_;                                                   \
        size_t c_ = 0;                                                                                            \
        for (; c_ + 4 * SB_W <= (count); c_ += 4 * SB_W) {                                                        \
            m_ = vmax(LOAD((src) + c_), m_);                                                                      \
            m1_ = vmax(LOAD((src) + c_ + SB_W), m1_);                                                             \
            m2_ = vmax(LOAD((src) + c_ + 2 * SB_W), m2_);                                                         \
            m3_ = vmax(LOAD((src) + c_ + 3 * SB_W), m3_);                                                         \
        }                                                                                                         \
        for (; c_ + SB_W <= (count); c_ += SB_W)                                                                  \
            m_ = vmax(LOAD((src) + c_), m_);                                                                      \
        m_ = vmax(vmax(m_, m1_), vmax(m2_, m3_));                                                                 \
        if (c_ < (count))                                                                                         \
            m_ = vmax(vselect(vset1i((int32_t)c_) + sb_lane_index() < vset1i((int32_t)(count)),                   \
                LOAD_N((src) + c_, (count) - c_), vset1(-INFINITY)), m_);                                          \
        vreduce_max(m_);                                                                                          \
    })

/* The lane-wise sum of the slice's terms softmax_term(x, vm, m_inf, any_inf), stored to dst when STORE_TERMS; two
   terms a step into the one sum, in the order of one a step. */
#define SB_SLICE_TERMS(src, count, dst, LOAD, LOAD_N, STORE, STORE_N, STORE_TERMS, vm, m_inf, any_inf)             \
    ({                                                                                                            \
        vf sum_ = vset1(0.0f);                                                                                    \
        size_t c_ = 0;                                                                                            \
        for (; c_ + 2 * SB_W <= (count); c_ += 2 * SB_W) {                                                        \
            vf e0_ = softmax_term(LOAD((src) + c_), vm, m_inf, any_inf);                                          \
            vf e1_ = softmax_term(LOAD((src) + c_ + SB_W), vm, m_inf, any_inf);                                   \
            sum_ += e0_;                                                                                          \
            sum_ += e1_;                                                                                          \
            if (STORE_TERMS) { STORE((dst) + c_, e0_); STORE((dst) + c_ + SB_W, e1_); }                           \
        }                                                                                                         \
        for (; c_ + SB_W <= (count); c_ += SB_W) {                                                                \
            vf e_ = softmax_term(LOAD((src) + c_), vm, m_inf, any_inf);                                           \
            sum_ += e_;                                                                                           \
            if (STORE_TERMS) STORE((dst) + c_, e_);                                                               \
        }                                                                                                         \
        if (c_ < (count)) {                                                                                       \
            vf e_ = softmax_term(LOAD_N((src) + c_, (count) - c_), vm, m_inf, any_inf);                           \
            e_ = vselect(vset1i((int32_t)c_) + sb_lane_index() < vset1i((int32_t)(count)), e_, vset1(0.0f));      \
            sum_ += e_;                                                                                           \
            if (STORE_TERMS) STORE_N((dst) + c_, e_, (count) - c_);                                               \
        }                                                                                                         \
        sum_;                                                                                                     \
    })

#define ROW_KERNEL(NAME, T, LOAD, LOAD_N, STORE, STORE_N, STORE_TERMS)                                            \
    static void NAME(const T * src, size_t count, T * dst)                                                        \
    {                                                                                                             \
        size_t c;                                                                                                 \
        float mx = SB_SLICE_MAX(src, count, LOAD, LOAD_N);                                                        \
        if (__builtin_expect(mx == INFINITY, 0) && SB_SLICE_HAS_NAN(src, count, LOAD, LOAD_N)) {                   \
            for (c = 0; c + SB_W <= count; c += SB_W) STORE(dst + c, vset1(NAN));                                 \
            if (c < count) STORE_N(dst + c, vset1(NAN), count - c);                                               \
            return;                                                                                               \
        }                                                                                                         \
        vf vm = vset1(mx);                                                                                        \
        vi m_inf = vm == vset1(INFINITY);                                                                         \
        int any_inf = mx == INFINITY;                                                                             \
        vf sum = SB_SLICE_TERMS(src, count, dst, LOAD, LOAD_N, STORE, STORE_N, STORE_TERMS, vm, m_inf, any_inf);  \
        vf k = vset1(1.0f / vreduce_add(sum));                                                                    \
        for (c = 0; c + SB_W <= count; c += SB_W)                                                                 \
            STORE(dst + c, (STORE_TERMS ? LOAD((const T *)dst + c) : softmax_term(LOAD(src + c), vm, m_inf, any_inf)) * k); \
        if (c < count)                                                                                            \
            STORE_N(dst + c,                                                                                      \
                (STORE_TERMS ? LOAD_N((const T *)dst + c, count - c) : softmax_term(LOAD_N(src + c, count - c), vm, m_inf, any_inf)) * k, \
                count - c);                                                                                       \
    }

/* ---- inner > 1: lanes across `inner`, the slice strided by `inner` ------------------------------------------ */

#define COLUMN_KERNEL(NAME, T, LOAD, LOAD_N, STORE, STORE_N, STORE_TERMS)                                         \
    static void NAME(const T * src, size_t count, size_t inner, T * dst)                                          \
    {                                                                                                             \
        for (size_t i = 0; i < inner; i += SB_W) {                                                                \
            size_t n = inner - i < SB_W ? inner - i : SB_W;                                                       \
            vf m = vset1(-INFINITY);                                                                              \
            vi nan = vset1i(0);                                                                                   \
            for (size_t c = 0; c < count; ++c) {                                                                  \
                vf x = n == SB_W ? LOAD(src + c * inner + i) : LOAD_N(src + c * inner + i, n);                    \
                nan |= x != x;                                                                                    \
                m = vmax(x, m);                                                                                         \
            }                                                                                                     \
            vi m_inf = m == vset1(INFINITY);                                                                      \
            int any_inf = sb_vm_any(m_inf);                                                                       \
            vf sum = vset1(0.0f);                                                                                 \
            for (size_t c = 0; c < count; ++c) {                                                                  \
                vf e = softmax_term(n == SB_W ? LOAD(src + c * inner + i) : LOAD_N(src + c * inner + i, n), m, m_inf, any_inf); \
                sum += e;                                                                                         \
                if (STORE_TERMS) {                                                                                \
                    if (n == SB_W) STORE(dst + c * inner + i, e); else STORE_N(dst + c * inner + i, e, n);        \
                }                                                                                                 \
            }                                                                                                     \
            vf k = vselect(nan, vset1(NAN), vset1(1.0f) / sum);                                                   \
            for (size_t c = 0; c < count; ++c) {                                                                  \
                T * d = dst + c * inner + i;                                                                      \
                vf e = STORE_TERMS ? (n == SB_W ? LOAD((const T *)d) : LOAD_N((const T *)d, n))                   \
                    : softmax_term(n == SB_W ? LOAD(src + c * inner + i) : LOAD_N(src + c * inner + i, n), m, m_inf, any_inf); \
                if (n == SB_W) STORE(d, e * k); else STORE_N(d, e * k, n);                                        \
            }                                                                                                     \
        }                                                                                                         \
    }

SB_INLINE vi sb_lane_index(void)
{
    vi index;
    for (int i = 0; i < SB_W; ++i) index[i] = i;
    return index;
}

/* ---- inner == 1 and a short slice: lanes across SB_W slices (rows), gathered into a [count][SB_W] block ------- */

#define SHORT_ROWS_MAX 8

#define SHORT_ROWS_KERNEL(NAME, T, TO_FLOAT, FROM_FLOAT)                                                          \
    static void NAME(const T * src, size_t rows, size_t count, T * dst)                                          \
    {                                                                                                             \
        float block[SHORT_ROWS_MAX][SB_W];                                                                        \
        for (size_t r = 0; r < rows; r += SB_W) {                                                                 \
            size_t n = rows - r < SB_W ? rows - r : SB_W;                                                         \
            const T * s = src + r * count;                                                                        \
            for (size_t c = 0; c < count; ++c) {                                                                  \
                for (size_t l = 0; l < n; ++l) block[c][l] = TO_FLOAT(s[l * count + c]);                          \
                for (size_t l = n; l < SB_W; ++l) block[c][l] = 0.0f;                                             \
            }                                                                                                     \
            vf m = vset1(-INFINITY);                                                                              \
            vi nan = vset1i(0);                                                                                   \
            for (size_t c = 0; c < count; ++c) {                                                                  \
                vf x = vload(block[c]);                                                                           \
                nan |= x != x;                                                                                    \
                m = vmax(x, m);                                                                                         \
            }                                                                                                     \
            vi m_inf = m == vset1(INFINITY);                                                                      \
            int any_inf = sb_vm_any(m_inf);                                                                       \
            vf sum = vset1(0.0f);                                                                                 \
            for (size_t c = 0; c < count; ++c) {                                                                  \
                vf e = softmax_term(vload(block[c]), m, m_inf, any_inf);                                                   \
                sum += e;                                                                                         \
                vstore(block[c], e);                                                                              \
            }                                                                                                     \
            vf k = vselect(nan, vset1(NAN), vset1(1.0f) / sum);                                                   \
            T * d = dst + r * count;                                                                              \
            for (size_t c = 0; c < count; ++c) {                                                                  \
                vstore(block[c], vload(block[c]) * k);                                                            \
                for (size_t l = 0; l < n; ++l) d[l * count + c] = FROM_FLOAT(block[c][l]);                        \
            }                                                                                                     \
        }                                                                                                         \
    }

#define SB_IDENTITY(x) (x)
SHORT_ROWS_KERNEL(short32f, float, SB_IDENTITY, SB_IDENTITY)
SHORT_ROWS_KERNEL(short16b, uint16_t, sb_bf16_to_float, sb_float_to_bf16)

ROW_KERNEL(row32f, float, vload, vload_n, vstore, vstore_n, 1)
COLUMN_KERNEL(column32f, float, vload, vload_n, vstore, vstore_n, 1)
ROW_KERNEL(row16b, uint16_t, load_bf16, load_bf16_n, store_bf16, store_bf16_n, 0)
COLUMN_KERNEL(column16b, uint16_t, load_bf16, load_bf16_n, store_bf16, store_bf16_n, 0)

void SB_FN(softmax32f)(const float * src, size_t outer, size_t count, size_t inner, float * dst)
{
    if (count == 0 || inner == 0)
        return;
    size_t slice = count * inner;
    if (inner == 1 && count <= SHORT_ROWS_MAX) {
        short32f(src, outer, count, dst);
        return;
    }
    for (size_t o = 0; o < outer; ++o) {
        if (inner == 1)
            row32f(src + o * slice, count, dst + o * slice);
        else
            column32f(src + o * slice, count, inner, dst + o * slice);
    }
}

/* inner == 1 bf16 row through a float32 row buffer: widening fused into the max pass, narrowing into the scaling
   pass (the same arithmetic as row32f on the widened row). */
static void row16b_buffered(const uint16_t * src, size_t count, uint16_t * dst, float * buf)
{
    /* the max pass widens into buf as it reads */
#define SB_LOAD_KEPT(p) ({ const uint16_t * p_ = (p); vf x_ = load_bf16(p_); vstore(buf + (p_ - src), x_); x_; })
#define SB_LOAD_KEPT_N(p, n)                                                                                      \
    ({ const uint16_t * p_ = (p); vf x_ = load_bf16_n(p_, n); vstore_n(buf + (p_ - src), x_, n); x_; })
    float mx = SB_SLICE_MAX(src, count, SB_LOAD_KEPT, SB_LOAD_KEPT_N);
#undef SB_LOAD_KEPT
#undef SB_LOAD_KEPT_N
    size_t c;
    if (__builtin_expect(mx == INFINITY, 0) && SB_SLICE_HAS_NAN(buf, count, vload, vload_n)) {
        for (c = 0; c + SB_W <= count; c += SB_W) store_bf16(dst + c, vset1(NAN));
        if (c < count) store_bf16_n(dst + c, vset1(NAN), count - c);
        return;
    }
    vf vm = vset1(mx);
    vi m_inf = vm == vset1(INFINITY);
    int any_inf = mx == INFINITY;
    vf sum = SB_SLICE_TERMS(buf, count, buf, vload, vload_n, vstore, vstore_n, 1, vm, m_inf, any_inf);
    vf k = vset1(1.0f / vreduce_add(sum));
    for (c = 0; c + SB_W <= count; c += SB_W)
        store_bf16(dst + c, vload(buf + c) * k);
    if (c < count)
        store_bf16_n(dst + c, vload_n(buf + c, count - c) * k, count - c);
}

static void widen(const uint16_t * src, size_t n, float * dst)
{
    size_t i = 0;
    for (; i + SB_W <= n; i += SB_W)
        vstore(dst + i, load_bf16(src + i));
    if (i < n)
        vstore_n(dst + i, load_bf16_n(src + i, n - i), n - i);
}

static void narrow(const float * src, size_t n, uint16_t * dst)
{
    size_t i = 0;
    for (; i + SB_W <= n; i += SB_W)
        store_bf16(dst + i, vload(src + i));
    if (i < n)
        store_bf16_n(dst + i, vload_n(src + i, n - i), n - i);
}

#define BF16_BUFFER_MAX ((size_t)1 << 20) /* floats (4 MiB): larger slices recompute exp instead */

void SB_FN(softmax16b)(const uint16_t * src, size_t outer, size_t count, size_t inner, uint16_t * dst)
{
    if (count == 0 || inner == 0)
        return;
    size_t slice = count * inner;
    if (inner == 1 && count <= SHORT_ROWS_MAX) {
        short16b(src, outer, count, dst);
        return;
    }
    /* One slice at a time through a float32 buffer (exact widening, the float32 kernel in place, RNE narrowing),
       so every exponential is computed once; for huge slices (or without memory) the bf16 kernels recompute them. */
    float * buffer = slice <= BF16_BUFFER_MAX ? sb_alloc(slice, sizeof(float)) : NULL;
    for (size_t o = 0; o < outer; ++o) {
        if (buffer != NULL) {
            if (inner == 1) {
                row16b_buffered(src + o * slice, count, dst + o * slice, buffer);
            } else {
                widen(src + o * slice, slice, buffer);
                column32f(buffer, count, inner, buffer);
                narrow(buffer, slice, dst + o * slice);
            }
        } else if (inner == 1) {
            row16b(src + o * slice, count, dst + o * slice);
        } else {
            column16b(src + o * slice, count, inner, dst + o * slice);
        }
    }
    sb_free(buffer);
}
