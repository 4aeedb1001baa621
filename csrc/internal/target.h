/*
 * target.h: opens a translation unit that compiles one *.dispatch.c source for one ISA.
 *
 * The generated unit (CMakeLists.txt) defines exactly one SB_TARGET_<ISA> macro, includes this header, then the
 * kernel source. The ISA is switched on with a target pragma rather than per-unit -m flags: every unit builds with
 * the same command line, and the special builds' flags (tools/emulate_avx512.sh) stay one list.
 * Every kernel's declaration comes with it (internal/kernels.h), so each definition is checked against it.
 */
#ifndef SB_TARGET_H
#define SB_TARGET_H

#include <immintrin.h>

#if defined(SB_TARGET_BASE)
#define SB_SUFFIX _base
#define SB_ISA_ID 0
#elif defined(SB_TARGET_SSE41)
#define SB_SUFFIX _sse41
#define SB_ISA_ID 1
#define SB_TARGET_FEATURES "sse4.1,popcnt"
#elif defined(SB_TARGET_AVX2)
#define SB_SUFFIX _avx2
#define SB_ISA_ID 2
#define SB_TARGET_FEATURES "sse4.1,popcnt,avx,avx2,fma,f16c,bmi,bmi2"
#elif defined(SB_TARGET_AVX512BW)
#define SB_SUFFIX _avx512bw
#define SB_ISA_ID 3
#define SB_TARGET_FEATURES "sse4.1,popcnt,avx,avx2,fma,f16c,bmi,bmi2,avx512f,avx512cd,avx512dq,avx512bw,avx512vl"
#elif defined(SB_TARGET_AVX512VNNI)
#define SB_SUFFIX _avx512vnni
#define SB_ISA_ID 4
#define SB_TARGET_FEATURES \
    "sse4.1,popcnt,avx,avx2,fma,f16c,bmi,bmi2,avx512f,avx512cd,avx512dq,avx512bw,avx512vl,avx512vnni"
#else
#error "define one SB_TARGET_<ISA> before including target.h"
#endif

/* The emulation build (tools/emulate_avx512.sh, -DSB_EMULATE_AVX512): AVX-512 units compile for AVX2 and call the
   lane-by-lane intrinsics of emulate_avx512.h, so their code paths run on CPUs without AVX-512. */
#if defined(SB_EMULATE_AVX512) && SB_ISA_ID >= 3
#undef SB_TARGET_FEATURES
#define SB_TARGET_FEATURES "sse4.1,popcnt,avx,avx2,fma,f16c,bmi,bmi2"
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
