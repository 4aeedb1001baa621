/*
 * throughput_ceiling.c: how fast this CPU can run the inner loops of the inner-product kernels (the multiply-adds and
 * one operand load each, nothing else), so that a kernel's GFLOP/s or GOP/s can be read against what the instructions
 * allow. It prints the fp32 multiply-add rate and each uint8 x int8 form's rate, and their ratios: issue #5's "int8
 * at least 3x the fp32 GEMM" cannot be met by any kernel when the ceiling ratio is below 3.
 *
 *     gcc -O2 -march=native tools/throughput_ceiling.c -o build/ceiling && build/ceiling
 *
 * Vectors are 512-bit when the compiler targets AVX-512BW (-march=native on such a CPU), else 256-bit (AVX2).
 * Forms, per vector of uint8 x int8 bytes (ops = 2 per multiply-add, as the benchmark counts them):
 *   saturating:  pmaddubsw (pairs, int16 saturation) + pmaddwd by ones + paddd  (every ISA)
 *   saturating:  pmaddubsw + vpdpwssd by ones                                     (AVX-512 VNNI)
 *   precise:     vpdpbusd                                                          (AVX-512 VNNI)
 *   precise:     2 x pmaddwd + 2 x paddd on operands already widened to int16     (without VNNI)
 *
 * It also times one read of the 8.2 MB of weights of the inner product's M = 1 case (N = 1000, K = 2048): a GEMV
 * reads each weight once for one multiply-add, so that read is its floor on one thread, whatever the kernel, and
 * the GFLOP/s it implies is the most any M = 1 kernel (ours, OpenBLAS's) can reach on this machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STEPS 20000000L

#if defined(__AVX512BW__)
#define BITS 512
#define ZERO "vpxord "
#else
#define BITS 256
#define ZERO "vpxor "
#endif

/* Each form's loop is written in assembly: compiled from intrinsics, GCC kept some accumulators in memory at -O2 (and
   others at -O1 and -O3), which would measure the stack, not the instructions. 8 accumulators (registers 8-15) cover
   the 4-5 cycle latencies of two multiply units; register 0 holds 16-bit ones, 1 the shared operand, 2-7 temporaries;
   every accumulator's other operand is loaded from L1 (as a kernel loads it), from a block of eight vectors at
   (%rax). */
#if BITS == 512
#define R(n) "%%zmm" #n
#define VL "64"
#else
#define R(n) "%%ymm" #n
#define VL "32"
#endif
#define M(i) #i "*" VL "(%%rax)"

/* One step of each form for accumulator A (register 8 + i), temporary T. */
#define SATURATING(i, A, T) "vpmaddubsw " M(i) ", " R(1) ", " R(T) "\n vpmaddwd " R(0) ", " R(T) ", " R(T) \
    "\n vpaddd " R(T) ", " R(A) ", " R(A) "\n"
/* Precise without VNNI: both operands widened to int16 once for all the rows or columns they meet (here, loaded
   widened), then two pmaddwd per vector of bytes. */
#define PRECISE_WIDENED(i, A, T) "vpmaddwd " M(i) ", " R(1) ", " R(T) "\n vpaddd " R(T) ", " R(A) ", " R(A) \
    "\n vpmaddwd " M(i) ", " R(1) ", " R(T) "\n vpaddd " R(T) ", " R(A) ", " R(A) "\n"
#define SATURATING_VNNI(i, A, T) "vpmaddubsw " M(i) ", " R(1) ", " R(T) "\n vpdpwssd " R(0) ", " R(T) ", " R(A) "\n"
#define PRECISE_VNNI(i, A, T) "vpdpbusd " M(i) ", " R(1) ", " R(A) "\n"
#define FP32(i, A, T) "vfmadd231ps " M(i) ", " R(1) ", " R(A) "\n"

#define CLEAR(i, A, T) ZERO R(A) ", " R(A) ", " R(A) "\n" /* zeros: no denormal operand slows a unit */
#define EIGHT(F) F(0, 8, 2) F(1, 9, 3) F(2, 10, 4) F(3, 11, 5) F(4, 12, 6) F(5, 13, 7) F(6, 14, 2) F(7, 15, 3)

/* The thread's own CPU time: on a shared machine the wall clock also counts the time other work holds the core,
   which made the ceiling read a third of the core's under load. */
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static unsigned char block[8 * BITS / 8] __attribute__((aligned(64)));

/* Seconds for STEPS steps of the loop body `step` (eight accumulators each). */
#define TIMED(name, step)                                                                                             \
    static double name(void)                                                                                          \
    {                                                                                                                 \
        long n = STEPS;                                                                                               \
        const unsigned char * m = block;                                                                              \
        double t = now();                                                                                             \
        __asm__ volatile(                                                                                             \
            EIGHT(CLEAR) ZERO R(1) ", " R(1) ", " R(1) "\n"                                                           \
            "1:\n" EIGHT(step) "dec %%rcx\n jnz 1b\n"                                                                 \
            : "+c"(n) : "a"(m), "m"(block)                                                                            \
            : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",       \
              "xmm12", "xmm13", "xmm14", "xmm15", "cc");                                                              \
        return now() - t;                                                                                             \
    }

TIMED(time_fp32, FP32)
TIMED(time_saturating, SATURATING)
TIMED(time_precise_widened, PRECISE_WIDENED)
#if defined(__AVX512VNNI__) && BITS == 512
TIMED(time_saturating_vnni, SATURATING_VNNI)
TIMED(time_precise_vnni, PRECISE_VNNI)
#endif

#define GEMV_N 1000
#define GEMV_K 2048
#define GEMV_BYTES (GEMV_N * GEMV_K * 4)
#define READ(i, A, T) "vaddps " M(i) ", " R(A) ", " R(A) "\n"

/* Seconds to read GEMV_BYTES from w (a multiple of 8 vectors), each vector added into one of 8 accumulators. */
static double time_read(const unsigned char * w)
{
    long n = GEMV_BYTES / (8 * BITS / 8);
    double t = now();
    __asm__ volatile(
        EIGHT(CLEAR)
        "1:\n" EIGHT(READ) "add $(8*" VL "), %%rax\n dec %%rcx\n jnz 1b\n"
        : "+c"(n), "+a"(w) : : "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "cc", "memory");
    return now() - t;
}

typedef struct {
    const char * form;
    double (*timed)(void);
    double best; /* seconds */
} form_t;

static form_t forms[] = {
    {"fp32 multiply-add (vfmadd231ps)", time_fp32, 1e30},
    {"int8 saturating (pmaddubsw + pmaddwd + paddd)", time_saturating, 1e30},
    {"int8 precise, widened (2 x pmaddwd + paddd)", time_precise_widened, 1e30},
#if defined(__AVX512VNNI__) && BITS == 512
    {"int8 saturating (pmaddubsw + vpdpwssd)", time_saturating_vnni, 1e30},
    {"int8 precise (vpdpbusd)", time_precise_vnni, 1e30},
#endif
};
#define FORMS (sizeof(forms) / sizeof(forms[0]))

int main(void)
{
    /* Rounds over every form, best time of each: a clock that ramps up or a neighbour that steals the core shows in
       every form alike. */
    for (int round = 0; round < 5; ++round)
        for (size_t i = 0; i < FORMS; ++i) {
            double t = forms[i].timed();
            if (t < forms[i].best)
                forms[i].best = t;
        }
    double fp32 = 2.0 * (BITS / 32) * 8 * STEPS / forms[0].best * 1e-9;
    printf("%d-bit vectors, 8 accumulators, one thread, best of 5 rounds of %ld steps\n", BITS, STEPS);
    printf("%-46s %7.1f GFLOP/s\n", forms[0].form, fp32);
    for (size_t i = 1; i < FORMS; ++i) {
        double gops = 2.0 * (BITS / 8) * 8 * STEPS / forms[i].best * 1e-9; /* one multiply-add per byte */
        printf("%-46s %7.1f GOP/s  %.2fx fp32\n", forms[i].form, gops, gops / fp32);
    }
    /* Ones, written: untouched pages of a fresh allocation all map the one zero page, which stays in L1. */
    unsigned char * w = aligned_alloc(64, GEMV_BYTES);
    if (w == NULL)
        return 1;
    for (size_t i = 0; i < GEMV_BYTES / 4; ++i)
        memcpy(w + 4 * i, &(float){1.0f}, 4);
    double read = 1e30;
    for (int round = 0; round < 50; ++round) { /* from where the previous round left it: L3, where it fits */
        double t = time_read(w);
        if (t < read)
            read = t;
    }
    printf("read the M = 1 weights (%.1f MB) once: %.1f us, %.1f GB/s: an M = 1 inner product at most %.1f GFLOP/s\n",
        GEMV_BYTES * 1e-6, read * 1e6, GEMV_BYTES / read * 1e-9, 2.0 * GEMV_N * GEMV_K / read * 1e-9);
    free(w);
    return 0;
}
