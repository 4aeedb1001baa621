/*
 * isa_list.h: the ISAs of the bundled library, lowest first. The one list: everything else is derived from it.
 *
 *   C        the ISA numbers (SB_ISA_<ENUM>, the index of the row), their names (SimdBindIsaName), the kernel
 *            variants each table holds (internal/dispatch.h), SimdCpuInfo's ISA flags (runtime/cpu.c)
 *   CMake    which ISAs the machine builds, the target features and the number of each kernel unit
 *            (CMakeLists.txt reads the rows below with a regex: keep one row a line, in this form)
 *   Python   simdbind.ISAS, through the enum sb_isa_id that csrc/cffi_modules.py declares from these rows
 *
 * SIMDBIND_ISAS(X, arg) expands X(arg, name, ENUM, cpu_info, linkage, EMULATED_AS, "target features") per row:
 *   name, ENUM       its two spellings (the kernel suffix _<name>, the constant SB_ISA_<ENUM>); ENUM is name in
 *                    upper case
 *   cpu_info         upstream's SimdCpuInfoType member that reports it (simd_synet.h), -1 for none
 *   linkage          required: every kernel source is built for it; optional: a source may leave it out, and an
 *                    exported function then runs the nearest variant below (internal/dispatch.h)
 *   EMULATED_AS      the ISA whose instructions its units use in the emulation build (tools/emulate_avx512.sh,
 *                    internal/emulate_avx512.h); its own ENUM when it is not emulated
 *   target features  what its units' target pragma adds to the row above's (internal/target.h: CMakeLists.txt
 *                    writes each unit's whole list); each ISA includes the ones below it
 */
#ifndef SB_ISA_LIST_H
#define SB_ISA_LIST_H

#define SIMDBIND_ISAS(X, arg) \
    X(arg, base, BASE, -1, required, BASE, "") \
    X(arg, sse41, SSE41, SimdCpuInfoSse41, optional, SSE41, "sse4.1,popcnt") \
    X(arg, avx2, AVX2, SimdCpuInfoAvx2, optional, AVX2, "avx,avx2,fma,f16c,bmi,bmi2") \
    X(arg, avx512bw, AVX512BW, SimdCpuInfoAvx512bw, optional, AVX2, "avx512f,avx512cd,avx512dq,avx512bw,avx512vl") \
    X(arg, avx512vnni, AVX512VNNI, SimdCpuInfoAvx512vnni, optional, AVX2, "avx512vnni")

/* The ISA numbers, SB_ISA_BASE = 0 up, and their count. */
#define SB_ISA_ENUMERATOR_(arg, name, ENUM, ...) SB_ISA_##ENUM,
typedef enum { SIMDBIND_ISAS(SB_ISA_ENUMERATOR_, ~) SB_ISA_COUNT } sb_isa_id;

#endif /* SB_ISA_LIST_H */
