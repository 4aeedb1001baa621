/*
 * dispatch.h: how an exported function reaches the kernel of the selected ISA.
 *
 * Every *.dispatch.c kernel source is compiled once per ISA its first line lists (@targets; one generated unit
 * per source and ISA, see internal/target.h). Inside such a source, SB_FN(name) expands to sb_<name>_<isa>.
 * Each kernel's signature is written once, with SB_KERNEL (internal/kernels.h lists them all); the family's API
 * file, compiled once, calls the variants through a table made with SB_TABLE.
 */
#ifndef SB_DISPATCH_H
#define SB_DISPATCH_H

#include <stdatomic.h>
#include <stddef.h>

#include "internal/isa_list.h"

#if defined(__x86_64__) || defined(_M_X64)
#define SB_X86 1
#else
#define SB_X86 0
#endif

/* The ISA selected for calls made now, and the bytes from which a call streams its output (SimdBindSetIsa's and
   SimdBindSetStreamingBytes's values; runtime/cpu.c owns them), read inline: a relaxed load is one move, where a
   call into cpu.c from every exported function and every unary and eltwise call cost 1.5-2 ns a call (floor of 17
   floats at avx2: 5.3 against 3.5 ns). The kernels run after the library's constructor has detected the CPU, so
   they need no detection check. */
extern _Atomic int sb_isa_selected;
extern _Atomic size_t sb_streaming_threshold;
/* A thread that pinned its ISA (SimdBindPinIsa) keeps it for its calls whatever the selection becomes. The pin
   lives in thread-local storage, whose address costs a call into the dynamic loader in a shared library: it is
   read only while some thread holds a pin (sb_isa_pins, a count the pinning thread itself raised, so it sees it),
   which leaves unpinned calls one load and one well-predicted branch slower. */
extern _Atomic int sb_isa_pins;
int sb_pinned_isa(void); /* the calling thread's pinned ISA, or -1 */
static inline int sb_isa(void)
{
    if (__builtin_expect(atomic_load_explicit(&sb_isa_pins, memory_order_relaxed) != 0, 0)) {
        int pinned = sb_pinned_isa();
        if (pinned >= 0)
            return pinned;
    }
    return atomic_load_explicit(&sb_isa_selected, memory_order_relaxed);
}
static inline size_t sb_streaming_bytes(void)
{
    return atomic_load_explicit(&sb_streaming_threshold, memory_order_relaxed);
}

#define SB_CAT2_(a, b) a##b
#define SB_CAT2(a, b) SB_CAT2_(a, b)

/* SB_KERNEL(name, signature): kernel `name` has the type of `signature`, a function type or a function whose type
   it shares (an exported one). Written once for both sides: a kernel unit declares its own ISA's variant, so a
   definition that drifts from the signature fails to compile; elsewhere every variant is declared, for SB_TABLE.
   A kernel source is built for the ISAs its @targets line lists, the required ones (base) and any optional ones
   (internal/isa_list.h): an optional variant is declared weak, one the source does not list has the address NULL,
   and SB_VARIANT runs the nearest variant below it instead (avx512vnni falls back to avx512bw, avx512bw to avx2). */
#define SB_KERNEL(name, signature) typedef __typeof__(signature) sb_##name##_fn SB_KERNEL_VARIANTS_(name)
#define SB_LINKAGE_required_
#define SB_LINKAGE_optional_ __attribute__((weak, visibility("hidden")))
#define SB_DECLARE_VARIANT_(name, isa, ENUM, cpu_info, linkage, ...) \
    ; extern sb_##name##_fn sb_##name##_##isa SB_LINKAGE_##linkage##_
#if defined(SB_SUFFIX)
#define SB_KERNEL_VARIANTS_(name) ; extern sb_##name##_fn SB_CAT2(sb_##name, SB_SUFFIX)
#elif SB_X86
#define SB_KERNEL_VARIANTS_(name) SIMDBIND_ISAS(SB_DECLARE_VARIANT_, name)
#else
#define SB_KERNEL_VARIANTS_(name) ; extern sb_##name##_fn sb_##name##_base
#endif

/* The variants of kernel `name`, indexed by ISA: static sb_<name>_fn * const table[SB_ISA_COUNT] = SB_TABLE(name).
   Elsewhere than on x86 only base is built, and it serves every ISA number. */
#if SB_X86
#define SB_VARIANT_OF_(name, isa, ...) sb_##name##_##isa,
#else
#define SB_VARIANT_OF_(name, isa, ...) sb_##name##_base,
#endif
#define SB_TABLE(name) { SIMDBIND_ISAS(SB_VARIANT_OF_, name) }

/* The variant of a table for ISA `isa` (isa evaluated once): its own, or else the nearest variant below it that the
   kernel source is built for (base always is); and the variant for the ISA selected now. */
#define SB_VARIANT(table, isa) __extension__({ \
    int sb_variant_isa_ = (isa); \
    while (sb_variant_isa_ > 0 && (table)[sb_variant_isa_] == NULL) \
        --sb_variant_isa_; \
    (table)[sb_variant_isa_]; })
#define SB_PICK(table) SB_VARIANT(table, sb_isa())

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
