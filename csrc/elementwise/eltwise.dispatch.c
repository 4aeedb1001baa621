/* @targets base sse41 avx2 avx512bw */
/*
 * eltwise.dispatch.c: SimdSynetEltwiseLayerForward's kernel, compiled once per ISA.
 *
 * Semantics (upstream's): dst = op(src[0], src[1]) then dst = op(dst, src[i]) for i >= 2; Max/Min are
 * a > b ? a : b and a < b ? a : b; Sum multiplies each input by its weight (fused on ISAs with FMA).
 * The fold runs over cache-sized blocks so that dst stays in L1 while all inputs stream through it.
 */
#include "simd_synet.h"

#define BLOCK 2048 /* floats of dst kept hot across the inputs: 8 KiB */
#define SMALL_CALL (4 * SB_W) /* floats up to which a call skips the placement analysis of eltwise_op */

SB_INLINE vf combine(vf acc, vf x, vf w, int type)
{
    switch (type) {
    case SimdSynetEltwiseOperationProduct: return acc * x;
    case SimdSynetEltwiseOperationSum: return vfmadd(x, w, acc);
    case SimdSynetEltwiseOperationMax: return vmax(acc, x);
    default: return vmin(acc, x);
    }
}

SB_INLINE vf first_two(vf a, vf b, vf wa, vf wb, int type)
{
    return type == SimdSynetEltwiseOperationSum ? vfmadd(b, wb, a * wa) : combine(a, b, wb, type);
}

/* The loads and stores of the passes below, chosen by constants of each inlined copy: the inputs through
   vload_stream in a call that streams (`far`), dst through vstream in its last pass (`stream`; dst + begin is then
   aligned). */
#define LOAD(p) (far ? vload_stream(p) : vload(p))
#define STORE(p, v) (stream ? vstream((p), (v)) : vstore((p), (v)))

/* dst[begin, end) = op(s0, s1), two vectors a step so that loads, the operation and stores of neighbouring vectors
   overlap. Every full vector goes through LOAD and STORE, the tail through the partial load/store, with the same
   lane-wise code. */
SB_INLINE void first_pass(const float * s0, const float * s1, vf w0, vf w1, size_t begin, size_t end, int type,
    int far, int stream, float * dst)
{
    size_t j = begin;
    for (; j + 2 * SB_W <= end; j += 2 * SB_W) {
        vf y0 = first_two(LOAD(s0 + j), LOAD(s1 + j), w0, w1, type);
        vf y1 = first_two(LOAD(s0 + j + SB_W), LOAD(s1 + j + SB_W), w0, w1, type);
        STORE(dst + j, y0);
        STORE(dst + j + SB_W, y1);
    }
    for (; j + SB_W <= end; j += SB_W)
        STORE(dst + j, first_two(LOAD(s0 + j), LOAD(s1 + j), w0, w1, type));
    if (j < end)
        vstore_n(dst + j, first_two(vload_n(s0 + j, end - j), vload_n(s1 + j, end - j), w0, w1, type), end - j);
}

/* dst[begin, end) = op(dst, s), stored as in first_pass. */
SB_INLINE void next_pass(const float * s, vf w, size_t begin, size_t end, int type, int far, int stream,
    float * dst)
{
    size_t j = begin;
    for (; j + SB_W <= end; j += SB_W)
        STORE(dst + j, combine(vload(dst + j), LOAD(s + j), w, type));
    if (j < end)
        vstore_n(dst + j, combine(vload_n(dst + j, end - j), vload_n(s + j, end - j), w, type), end - j);
}
#undef LOAD
#undef STORE

/* One block through every input; with `stream`, the inputs are read as streams and the last pass streams dst (the
   earlier ones keep it in L1). Inlined into a copy per operation (type is a constant in each): a switch left in the
   loop costs a third of the time of a 1K-float call. */
SB_INLINE void eltwise_block(float const * const * src, const float * weight, size_t count, size_t begin, size_t end,
    int type, int stream, float * dst)
{
    vf w0 = vset1(weight ? weight[0] : 0.0f), w1 = vset1(weight ? weight[1] : 0.0f);
    if (stream && count == 2)
        first_pass(src[0], src[1], w0, w1, begin, end, type, 1, 1, dst);
    else
        first_pass(src[0], src[1], w0, w1, begin, end, type, stream, 0, dst);
    for (size_t i = 2; i < count; ++i) {
        vf wi = vset1(weight ? weight[i] : 0.0f);
        if (stream && i + 1 == count)
            next_pass(src[i], wi, begin, end, type, 1, 1, dst);
        else
            next_pass(src[i], wi, begin, end, type, stream, 0, dst);
    }
}

/* The fold of every input at the vector of floats [j, j + SB_W), in the order and with the operations of the passes. */
SB_INLINE vf eltwise_vector(float const * const * src, const float * weight, size_t count, size_t j, int type)
{
    vf w0 = vset1(weight ? weight[0] : 0.0f), w1 = vset1(weight ? weight[1] : 0.0f);
    vf y = first_two(vload(src[0] + j), vload(src[1] + j), w0, w1, type);
    for (size_t i = 2; i < count; ++i)
        y = combine(y, vload(src[i] + j), vset1(weight ? weight[i] : 0.0f), type);
    return y;
}

/* The blocks start at dst's first vector-aligned float, head, where no store straddles two cache lines, when every
   input lies as dst does within a vector (then no load straddles either; otherwise the loads would straddle instead, as
   unary.dispatch.c measured) or the call streams. NumPy aligns its arrays to 16 bytes; two inputs of 1K floats summed
   at 16 bytes past a 32-byte boundary: 46 -> 41 ns at avx2, 37 -> 23 at avx512bw. The floats before head come from the
   vector at 0 and, where the floats from head on do not fill whole vectors, the last ones from the last vector (a
   masked move per input for the partial one, memcpy calls below AVX2): both are folded before the blocks run (in place,
   the blocks overwrite inputs they read) and stored after them (the lanes the blocks wrote get the same value twice). A
   call that touches sb_streaming_bytes() or more (the inputs and dst) streams dst from an aligned float. Without
   streaming each line of dst is first read into the cache, a fourth stream of memory traffic for two inputs: two inputs
   of 4M floats took 0.75-0.95 ms at every placement of the arrays, streamed 0.60-0.72 ms (avx2 and avx512bw), about a
   memcpy of the same bytes. Not where the streamed stores would stall an input's loads (vstream_stalls). */
SB_INLINE void eltwise_op(float const * const * src, const float * weight, size_t count, size_t size, int type,
    float * dst)
{
    if (size <= SMALL_CALL) { /* where the inputs and dst lie costs less than finding out */
        eltwise_block(src, weight, count, 0, size, type, 0, dst);
        return;
    }
    const size_t head = vstream_head(dst);
    int together = 1, stalls = 0;
    for (size_t i = 0; i < count; ++i) {
        together &= vsame_offset(src[i], dst);
        stalls |= vstream_stalls(src[i], dst);
    }
    const int streamed = (count + 1) * size * sizeof(float) >= sb_streaming_bytes() && !stalls;
    size_t begin = 0, end = size;
    vf first = vset1(0.0f), last = vset1(0.0f);
    if ((together || streamed) && head && head < SB_W && size >= head + SB_W) {
        first = eltwise_vector(src, weight, count, 0, type);
        begin = head;
        if ((size - head) % SB_W) {
            last = eltwise_vector(src, weight, count, size - SB_W, type);
            end = size - (size - head) % SB_W;
        }
    }
    const int stream = (begin || head == 0) && streamed;
    for (size_t j = begin; j < end; j += BLOCK)
        eltwise_block(src, weight, count, j, j + BLOCK < end ? j + BLOCK : end, type, stream, dst);
    if (stream)
        vstream_fence();
    if (begin)
        vstore(dst, first);
    if (end < size)
        vstore(dst + size - SB_W, last);
}

void SB_FN(eltwise)(float const * const * src, const float * weight, size_t count, size_t size,
    SimdSynetEltwiseOperationType type, float * dst)
{
    switch (type) {
    case SimdSynetEltwiseOperationProduct: eltwise_op(src, NULL, count, size, type, dst); break;
    case SimdSynetEltwiseOperationSum: eltwise_op(src, weight, count, size, type, dst); break;
    case SimdSynetEltwiseOperationMax: eltwise_op(src, NULL, count, size, type, dst); break;
    default: eltwise_op(src, NULL, count, size, SimdSynetEltwiseOperationMin, dst); break;
    }
}
