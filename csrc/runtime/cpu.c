/*
 * cpu.c: what this CPU and OS can run, the ISA selected for calls, and the general functions of the API
 * (version, CPU info, thread number, fast mode, release).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "simd_synet.h"
#include "simdbind_ext.h"
#include "internal/dispatch.h"
#include "internal/memory.h"

#if SB_X86
#include <cpuid.h>
#include <immintrin.h>
#endif

#ifndef SIMDBIND_VERSION
#define SIMDBIND_VERSION "0"
#endif

#define ISA_NAME_(arg, name, ...) #name,
static const char * const isa_names[SB_ISA_COUNT] = {SIMDBIND_ISAS(ISA_NAME_, ~)};
/* The SimdCpuInfoType member that reports each ISA, or -1. */
#define ISA_CPU_INFO_(arg, name, ENUM, cpu_info, ...) cpu_info,
static const int isa_cpu_info[SB_ISA_COUNT] = {SIMDBIND_ISAS(ISA_CPU_INFO_, ~)};

static int isa_supported[SB_ISA_COUNT];
_Atomic int sb_isa_selected = SB_ISA_BASE;
static _Atomic size_t thread_number = 1;
_Atomic size_t sb_streaming_threshold = (size_t)32 << 20; /* until detect() reads the last-level cache size */
static char cpu_model[64] = "unknown";
static pthread_once_t detect_once = PTHREAD_ONCE_INIT;

#if SB_X86
static uint64_t xgetbv0(void)
{
    uint32_t eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((uint64_t)edx << 32) | eax;
}

static void read_model(void)
{
    unsigned regs[12], max_ext = __get_cpuid_max(0x80000000u, NULL);
    if (max_ext < 0x80000004u)
        return;
    for (unsigned leaf = 0; leaf < 3; ++leaf)
        __get_cpuid(0x80000002u + leaf, &regs[leaf * 4], &regs[leaf * 4 + 1], &regs[leaf * 4 + 2], &regs[leaf * 4 + 3]);
    char text[49];
    memcpy(text, regs, 48);
    text[48] = 0;
    char * begin = text, * end = text + strlen(text);
    while (*begin == ' ') ++begin;
    while (end > begin && end[-1] == ' ') --end;
    *end = 0;
    if (*begin)
        snprintf(cpu_model, sizeof(cpu_model), "%s", begin);
}
#endif

/* One instance of the last-level data cache, from CPUID's deterministic cache parameters (leaf 4 on Intel,
   0x8000001D on AMD; one format), or 0. sysconf's L3 size is not it on AMD: that is the whole package's (384 MiB
   where each core complex has 32 MiB). */
#if SB_X86
static size_t llc_instance_bytes(void)
{
    unsigned a, b, c, d, leaf = 4;
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return 0;
    if (b == 0x68747541u) { /* "AuthenticAMD" */
        leaf = 0x8000001Du;
        if (__get_cpuid_max(0x80000000u, NULL) < leaf)
            return 0;
    } else if (a < leaf) {
        return 0;
    }
    size_t bytes = 0;
    unsigned level = 0;
    for (unsigned i = 0; i < 16; ++i) {
        __cpuid_count(leaf, i, a, b, c, d);
        unsigned type = a & 31, this_level = (a >> 5) & 7;
        if (type == 0)
            break;
        if (type == 2 || this_level < level) /* an instruction cache, or a nearer level */
            continue;
        level = this_level;
        bytes = (size_t)((b >> 22) + 1) * (((b >> 12) & 0x3ff) + 1) * ((b & 0xfff) + 1) * ((size_t)c + 1);
    }
    return bytes;
}
#endif

/* CPUID says what the CPU has; XGETBV says which register states the OS saves. Both are needed. */
static void detect(void)
{
    isa_supported[SB_ISA_BASE] = 1;
#if SB_X86
    unsigned a, b, c, d;
    read_model();
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return;
    int sse41 = (c >> 19) & 1, fma = (c >> 12) & 1, osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
    unsigned b7 = 0, c7 = 0;
    if (__get_cpuid_max(0, NULL) >= 7)
        __cpuid_count(7, 0, a, b7, c7, d);
    uint64_t xcr0 = osxsave ? xgetbv0() : 0;
    int os_avx = (xcr0 & 0x6) == 0x6, os_avx512 = (xcr0 & 0xE6) == 0xE6;
    int avx2 = (b7 >> 5) & 1, bmi1 = (b7 >> 3) & 1, bmi2 = (b7 >> 8) & 1;
    int avx512 = ((b7 >> 16) & 1) && ((b7 >> 17) & 1) && ((b7 >> 28) & 1) && ((b7 >> 30) & 1) && ((b7 >> 31) & 1);
    int vnni = (c7 >> 11) & 1;
    isa_supported[SB_ISA_SSE41] = sse41;
    isa_supported[SB_ISA_AVX2] = sse41 && avx && avx2 && fma && bmi1 && bmi2 && os_avx;
    isa_supported[SB_ISA_AVX512BW] = isa_supported[SB_ISA_AVX2] && avx512 && os_avx512;
    isa_supported[SB_ISA_AVX512VNNI] = isa_supported[SB_ISA_AVX512BW] && vnni;
#ifdef SB_EMULATE_AVX512
    /* tools/emulate_avx512.sh: an emulated ISA's units were compiled for the ISA it is emulated as
       (internal/isa_list.h, internal/emulate_avx512.h) */
#define ISA_EMULATED_AS_(arg, name, ENUM, cpu_info, linkage, EMULATED_AS, ...) \
    isa_supported[SB_ISA_##ENUM] = isa_supported[SB_ISA_##EMULATED_AS];
    SIMDBIND_ISAS(ISA_EMULATED_AS_, ~)
#endif
    const size_t llc = llc_instance_bytes();
    if (llc > 0)
        atomic_store(&sb_streaming_threshold, llc);
#endif
    int best = SB_ISA_BASE;
    for (int i = 0; i < SB_ISA_COUNT; ++i)
        if (isa_supported[i])
            best = i;
    atomic_store(&sb_isa_selected, best);
}

static void ensure_detected(void) { pthread_once(&detect_once, detect); }

__attribute__((constructor)) static void detect_at_load(void) { ensure_detected(); }

SIMD_API const char * SimdBindIsaName(int isa) { return isa >= 0 && isa < SB_ISA_COUNT ? isa_names[isa] : NULL; }

SIMD_API int SimdBindIsaSupported(int isa)
{
    ensure_detected();
    return isa >= 0 && isa < SB_ISA_COUNT && isa_supported[isa];
}

SIMD_API int SimdBindGetIsa(void)
{
    ensure_detected();
    return sb_isa();
}

_Atomic int sb_isa_pins = 0;
static _Thread_local int pinned_isa = -1; /* this thread's pin, or -1 */
static _Thread_local int pin_depth;       /* this thread's pins taken and not yet undone */

/* The calling thread leaves any pin it holds: a thread that selects an ISA means its own later calls to run there.
   A pin is only ever held around calls of the library, never around a selection, so this undoes only a pin whose
   unpin never came (Python can raise a Ctrl-C's exception just before an unpin). */
SIMD_API int SimdBindSetIsa(int isa)
{
    if (!SimdBindIsaSupported(isa))
        return -1;
    atomic_store(&sb_isa_selected, isa);
    if (pin_depth > 0) {
        pin_depth = 0;
        pinned_isa = -1;
        atomic_fetch_sub(&sb_isa_pins, 1);
    }
    return 0;
}

int sb_pinned_isa(void) { return pinned_isa; }

SIMD_API int SimdBindIsaPinDepth(void) { return pin_depth; }

SIMD_API int SimdBindPinIsa(void)
{
    if (pin_depth == 0) {
        pinned_isa = SimdBindGetIsa();
        atomic_fetch_add(&sb_isa_pins, 1);
    }
    return pin_depth++;
}

/* The token is the depth before the pin: restoring it undoes that pin and every pin taken after it, so an unpin
   that comes twice, or late, leaves the thread exactly as before its pin. */
SIMD_API void SimdBindUnpinIsa(int token)
{
    if (token < 0 || token >= pin_depth)
        return;
    pin_depth = token;
    if (token == 0) {
        pinned_isa = -1;
        atomic_fetch_sub(&sb_isa_pins, 1);
    }
}

static _Thread_local int last_error;

void sb_clear_error(void) { last_error = 0; }
void sb_fail_no_memory(void) { last_error = SIMDBIND_ERROR_NO_MEMORY; }
SIMD_API int SimdBindLastError(void) { return last_error; }

_Atomic size_t sb_alloc_countdown = 0;

SIMD_API size_t SimdBindFailAllocation(size_t nth) { return atomic_exchange(&sb_alloc_countdown, nth); }

SIMD_API size_t SimdBindGetStreamingBytes(void)
{
    ensure_detected();
    return sb_streaming_bytes();
}

SIMD_API void SimdBindSetStreamingBytes(size_t bytes)
{
    ensure_detected();
    atomic_store(&sb_streaming_threshold, bytes);
}

/* The API generation this library implements, then who made it. */
SIMD_API const char * SimdVersion(void) { return "7.1.162 (simdbind " SIMDBIND_VERSION ", bundled)"; }

SIMD_API const char * SimdCpuDesc(SimdCpuDescType type)
{
    ensure_detected();
    return type == SimdCpuDescModel ? cpu_model : NULL;
}

static uint64_t sysconf_or_zero(int name)
{
    long v = sysconf(name);
    return v > 0 ? (uint64_t)v : 0;
}

SIMD_API uint64_t SimdCpuInfo(SimdCpuInfoType type)
{
    ensure_detected();
    switch (type) {
    case SimdCpuInfoSockets: return 1;
    case SimdCpuInfoCores:
    case SimdCpuInfoThreads: return sysconf_or_zero(_SC_NPROCESSORS_ONLN);
#ifdef _SC_LEVEL1_DCACHE_SIZE
    case SimdCpuInfoCacheL1: return sysconf_or_zero(_SC_LEVEL1_DCACHE_SIZE);
    case SimdCpuInfoCacheL2: return sysconf_or_zero(_SC_LEVEL2_CACHE_SIZE);
    case SimdCpuInfoCacheL3: return sysconf_or_zero(_SC_LEVEL3_CACHE_SIZE);
#endif
    case SimdCpuInfoRam: return sysconf_or_zero(_SC_PHYS_PAGES) * sysconf_or_zero(_SC_PAGESIZE);
    default:
        for (int i = 0; i < SB_ISA_COUNT; ++i)
            if (isa_cpu_info[i] == (int)type)
                return isa_supported[i];
        return 0;
    }
}

SIMD_API void SimdRelease(void * context)
{
    if (context)
        ((sb_context *)context)->release((sb_context *)context);
}

static size_t hardware_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (size_t)n : 1;
}

size_t sb_thread_number(void) { return atomic_load_explicit(&thread_number, memory_order_relaxed); }

SIMD_API size_t SimdGetThreadNumber(void) { return sb_thread_number(); }

SIMD_API void SimdSetThreadNumber(size_t threadNumber)
{
    size_t limit = hardware_threads();
    atomic_store(&thread_number, threadNumber < 1 ? 1 : threadNumber > limit ? limit : threadNumber);
}

/* Fast mode is the calling thread's MXCSR flush-to-zero (bit 15) and denormals-are-zero (bit 6), as upstream. */
SIMD_API SimdBool SimdGetFastMode(void)
{
#if SB_X86
    return (_mm_getcsr() & 0x8040) ? SimdTrue : SimdFalse;
#else
    return SimdFalse;
#endif
}

SIMD_API void SimdSetFastMode(SimdBool value)
{
#if SB_X86
    unsigned csr = _mm_getcsr();
    _mm_setcsr(value ? (csr | 0x8040) : (csr & ~0x8040u));
#else
    (void)value;
#endif
}
