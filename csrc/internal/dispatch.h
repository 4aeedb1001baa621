/*
 * dispatch.h: how an exported function reaches the kernel of the selected ISA.
 *
 * Every *.dispatch.c kernel source is compiled once per ISA (build_simd.py generates one small translation unit
 * per source and ISA, see internal/target.h). Inside such a source, SB_FN(name) expands to sb_<name>_<isa>.
 * The family's API file, compiled once, declares the variants with SB_DECLARE and calls through SB_TABLE.
 */
#ifndef SB_DISPATCH_H
#define SB_DISPATCH_H

#include <stddef.h>

enum { SB_ISA_BASE, SB_ISA_SSE41, SB_ISA_AVX2, SB_ISA_AVX512BW, SB_ISA_AVX512VNNI, SB_ISA_COUNT };

#if defined(__x86_64__) || defined(_M_X64)
#define SB_X86 1
#else
#define SB_X86 0
#endif

/* The ISA selected for calls made now (an atomic read). */
int sb_isa(void);

#define SB_CAT2_(a, b) a##b
#define SB_CAT2(a, b) SB_CAT2_(a, b)

#if SB_X86
#define SB_DECLARE(name, ret, args) \
    ret sb_##name##_base args; ret sb_##name##_sse41 args; ret sb_##name##_avx2 args; \
    ret sb_##name##_avx512bw args; ret sb_##name##_avx512vnni args
#define SB_TABLE(name) \
    { sb_##name##_base, sb_##name##_sse41, sb_##name##_avx2, sb_##name##_avx512bw, sb_##name##_avx512vnni }
#else
#define SB_DECLARE(name, ret, args) ret sb_##name##_base args
#define SB_TABLE(name) { sb_##name##_base, sb_##name##_base, sb_##name##_base, sb_##name##_base, sb_##name##_base }
#endif

/* The variant of kernel `name` for the selected ISA, from a table declared with SB_TABLE. */
#define SB_PICK(table) ((table)[sb_isa()])

/* Contexts: every object returned by an ...Init starts with this header so that SimdRelease can free any of them. */
typedef struct sb_context {
    void (*release)(struct sb_context * self);
} sb_context;

/* Threads for the parallel parts of a call: SimdSetThreadNumber's value, clamped to [1, hardware threads]. */
size_t sb_thread_number(void);

/* Runs body(arg, begin, end) over [0, n) split into at most sb_thread_number() contiguous ranges, each a multiple of
   `grain` (except the last). Runs inline on the calling thread when one range suffices. */
void sb_parallel_for(size_t n, size_t grain, void (*body)(void * arg, size_t begin, size_t end), void * arg);

#endif /* SB_DISPATCH_H */
