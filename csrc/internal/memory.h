/*
 * memory.h: every allocation of the bundled library, and the rule for when one fails.
 *
 * Every C source allocates through sb_alloc / sb_alloc_zeroed / sb_alloc_aligned and frees with sb_free (a test
 * greps csrc/ for any other allocator). Sizes are element counts times element sizes, checked for overflow here
 * (an overflowing size fails like an exhausted heap). When one returns NULL, the caller does exactly one of:
 *
 *  1. Optional scratch (copies that only make a kernel faster: GEMM panels, tap tables, int8 panels, softmax's
 *     float32 slice, worker threads): take the path that needs none. It computes the same values, so the result
 *     cannot depend on memory; tests/test_memory_limit.py compares every call under a memory limit with the
 *     unlimited result bit for bit.
 *  2. Required memory (a context, transformed weights, copies a context keeps, a row buffer without which a
 *     kernel cannot run): fail visibly. Init returns NULL; every function that can fail clears the calling
 *     thread's error at entry and sets SIMDBIND_ERROR_NO_MEMORY (sb_fail_no_memory) before it returns without
 *     writing any output, so a caller that checks SimdBindLastError() after the call never takes a result that
 *     was not computed. A context whose SetParams failed stays failed (its Forward writes nothing and fails
 *     again) until a SetParams succeeds.
 *
 * SimdBindFailAllocation makes any one allocation fail on purpose, so that tests reach every one of these paths.
 *
 * Silently skipping work, or running with part of the parameters (no bias, no transform), is never allowed.
 */
#ifndef SB_MEMORY_H
#define SB_MEMORY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "simdbind_ext.h"

/* Allocations left before the one SimdBindFailAllocation armed fails (0: none armed; runtime/cpu.c). */
extern _Atomic size_t sb_alloc_countdown;

/* Whether this allocation is the one to fail: one relaxed load while nothing is armed. The countdown never goes
   below 0 (a compare-and-swap, where concurrent decrements could wrap it). */
static inline int sb_alloc_injected_failure(void)
{
    size_t left = atomic_load_explicit(&sb_alloc_countdown, memory_order_relaxed);
    while (left != 0)
        if (atomic_compare_exchange_weak(&sb_alloc_countdown, &left, left - 1))
            return left == 1;
    return 0;
}

/* count * size bytes (uninitialised), or NULL (also when the product overflows). */
static inline void * sb_alloc(size_t count, size_t size)
{
    if ((size != 0 && count > SIZE_MAX / size) || sb_alloc_injected_failure())
        return NULL;
    const size_t bytes = count * size;
    return malloc(bytes != 0 ? bytes : 1);
}

/* count * size zeroed bytes, or NULL. */
static inline void * sb_alloc_zeroed(size_t count, size_t size)
{
    if ((size != 0 && count > SIZE_MAX / size) || sb_alloc_injected_failure())
        return NULL;
    return count != 0 && size != 0 ? calloc(count, size) : calloc(1, 1);
}

/* count * size bytes aligned to `align` (a power of two), the size rounded up to it as aligned_alloc requires;
   or NULL. */
static inline void * sb_alloc_aligned(size_t align, size_t count, size_t size)
{
    if ((size != 0 && count > SIZE_MAX / size) || sb_alloc_injected_failure())
        return NULL;
    size_t bytes = count * size;
    if (bytes > SIZE_MAX - (align - 1))
        return NULL;
    bytes = (bytes + align - 1) & ~(align - 1);
    return aligned_alloc(align, bytes ? bytes : align);
}

static inline void sb_free(void * p) { free(p); }

/* The calling thread's status (runtime/cpu.c): cleared at the entry of each function that can fail, set when it
   fails (see SimdBindLastError in simdbind_ext.h). */
void sb_clear_error(void);
void sb_fail_no_memory(void);

#endif /* SB_MEMORY_H */
