/*
 * simdbind_ext.h: functions that only the bundled library exports (upstream Simd has no way to choose an ISA or
 * the streaming threshold). ISA numbers are the rows of internal/isa_list.h, 0 (base) up; SimdBindIsaName names them.
 */
#ifndef SIMDBIND_EXT_H
#define SIMDBIND_EXT_H

#include <stddef.h>

#ifndef SIMD_API
#define SIMD_API
#endif

/* Name of ISA number `isa`, or NULL past the last one. */
SIMD_API const char * SimdBindIsaName(int isa);
/* 1 if this CPU and OS can run ISA `isa` and the library was built with it, else 0. */
SIMD_API int SimdBindIsaSupported(int isa);
/* The ISA that free functions and newly created contexts use now. */
SIMD_API int SimdBindGetIsa(void);
/* Selects ISA `isa` for later calls; returns 0, or -1 (and changes nothing) if it is unsupported. */
SIMD_API int SimdBindSetIsa(int isa);
/* The streaming threshold: a unary operation or an eltwise that touches at least this many bytes in a call (inputs
   read plus output written) writes its output with non-temporal stores, which skip reading each destination line into a
   cache it would only pass through. Default: the size of one last-level cache. */
SIMD_API size_t SimdBindGetStreamingBytes(void);
SIMD_API void SimdBindSetStreamingBytes(size_t bytes);

/* Errors of the calling thread's last call of a function that can fail: 0 (it succeeded), or SIMDBIND_ERROR_NO_MEMORY
   (memory it needs could not be allocated; it wrote no output). The functions that can fail clear it at entry:
   SimdSynetConvolution32fInit, SetParams and Forward (Forward only without an external buffer),
   SimdSynetInnerProduct32fInit, SetParams and Forward, SimdSynetGatherElementsInit, SimdSynetLrnLayerCrossChannels.
   A thread-local status rather than new return values: the exported Simd functions keep upstream's signatures, so
   the same wrappers drive upstream builds, and a status per thread cannot be overwritten by another thread's call
   between a call and its check. Every other function either allocates nothing or computes the same values without
   its scratch memory (internal/memory.h). */
#define SIMDBIND_ERROR_NO_MEMORY 1
SIMD_API int SimdBindLastError(void);

/* For tests of the paths above: the `nth` allocation of the library from now on (1: the next one, on any thread)
   fails as if memory were exhausted; 0 disarms. Returns how many allocations were still to go before this call
   (0: the armed one has failed, or nothing was armed). */
SIMD_API size_t SimdBindFailAllocation(size_t nth);

/* Pins the calling thread's ISA: until the matching unpin, calls on this thread (free functions and contexts
   created) use the ISA selected when the outermost pin was taken, whatever SimdBindSetIsa sets meanwhile, so that
   an operation made of several calls (a batch one image at a time) runs at one ISA from start to end. Returns a
   token for SimdBindUnpinIsa: the thread's pin depth before this pin (SimdBindIsaPinDepth), which the unpin
   restores (pins nest; undoing a pin undoes those taken after it). SimdBindSetIsa on a thread undoes its pins. */
SIMD_API int SimdBindPinIsa(void);
SIMD_API void SimdBindUnpinIsa(int token);
SIMD_API int SimdBindIsaPinDepth(void);

#endif /* SIMDBIND_EXT_H */
