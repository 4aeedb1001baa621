/*
 * target.h: opens a translation unit that compiles one *.dispatch.c source for one ISA.
 *
 * The generated unit (CMakeLists.txt, from the ISA's row of internal/isa_list.h) defines the ISA's number SB_ISA_ID,
 * the kernel suffix SB_SUFFIX (_avx2), its whole target feature list SB_TARGET_FEATURES (none for base) and, for an
 * ISA the emulation build emulates, SB_EMULATED_FEATURES (the feature list its units compile for there), includes
 * this header, then the kernel source. The ISA is switched on with a target pragma rather than per-unit -m flags:
 * every unit builds with the same command line, and the special builds' flags (tools/emulate_avx512.sh) stay one
 * list. Every kernel's declaration comes with it (internal/kernels.h), so each definition is checked against it.
 */
#ifndef SB_TARGET_H
#define SB_TARGET_H

#include <immintrin.h>

#if !defined(SB_ISA_ID) || !defined(SB_SUFFIX)
#error "a kernel unit defines SB_ISA_ID and SB_SUFFIX before including target.h (CMakeLists.txt writes them)"
#endif

/* The emulation build (tools/emulate_avx512.sh, -DSB_EMULATE_AVX512): AVX-512 units compile for AVX2 and call the
   lane-by-lane intrinsics of emulate_avx512.h, so their code paths run on CPUs without AVX-512. */
#if defined(SB_EMULATE_AVX512) && defined(SB_EMULATED_FEATURES)
#undef SB_TARGET_FEATURES
#define SB_TARGET_FEATURES SB_EMULATED_FEATURES
#define SB_EMULATED_UNIT 1
#endif

#ifdef SB_TARGET_FEATURES
#if defined(__clang__)
#define SB_PRAGMA_(x) _Pragma(#x)
#define SB_PRAGMA(x) SB_PRAGMA_(x)
SB_PRAGMA(clang attribute push(__attribute__((target(SB_TARGET_FEATURES))), apply_to = function))
#elif defined(__GNUC__)
#define SB_PRAGMA_(x) _Pragma(#x)
#define SB_PRAGMA(x) SB_PRAGMA_(x)
SB_PRAGMA(GCC target(SB_TARGET_FEATURES))
#endif
#endif

#define SB_ISA_AT_LEAST(id) (SB_ISA_ID >= (id))

#ifdef SB_EMULATED_UNIT
#include "internal/emulate_avx512.h"
#endif

#include "internal/dispatch.h"
#include "internal/memory.h"

/* SB_FN(eltwise) is sb_eltwise_avx2 in the avx2 unit. */
#define SB_FN(name) SB_CAT2(sb_##name, SB_SUFFIX)

#include "internal/vec.h"
#include "internal/kernels.h"

#endif /* SB_TARGET_H */
