/*
 * simdbind_ext.h: functions that only the bundled library exports (upstream Simd has no way to choose an ISA or
 * the streaming threshold). ISA numbers are the indices of the names "base", "sse41", "avx2", "avx512bw",
 * "avx512vnni".
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

#endif /* SIMDBIND_EXT_H */
