/*
 * ulp_exhaustive.c: every float32 input through SimdSynetUnaryOperation32f, against an exact reference.
 * Built and run by tools/ulp_exhaustive.py (a shared object it calls through ctypes, arguments as on a command line):
 *
 *   ulp_exhaustive LIBRARY OPS ISAS STEP OUTPUT
 *     LIBRARY  a Simd-compatible shared library (the bundled _bundled*.so or an upstream libSimd.so), or several,
 *              comma-separated: each is run at every ISA of ISAS (output ISA column "INDEX:ISA" then)
 *     OPS      comma-separated unary operations: exp,log,erf,tanh,sin,cos (ulp error against glibc's double
 *              functions) and rcp,sqrt,rsqrt,abs,neg,not,zero,ceil,floor,round,sign (bit-exact against the
 *              contract's scalar C expression)
 *     ISAS     comma-separated ISA numbers for SimdBindSetIsa (0 base .. 4 avx512vnni), or "native" for a library
 *              that chooses its own (upstream)
 *     STEP     visit every STEP-th bit pattern (1: all 2^32)
 *     OUTPUT   file the result lines are written to
 *
 * The reference of a chunk of inputs is computed once and every ISA is compared with it, so the cost is one double
 * evaluation per input and op plus one kernel call per ISA. glibc's double exp/log/erf/tanh/sin/cos err by less
 * than 1 double ulp, i.e. under 2^-28 float ulp, far below the resolution of the figures printed (three decimals).
 *
 * OUTPUT gets one line per (op, isa), tab-separated, for tools/ulp_exhaustive.py to format:
 *   ulp  OP ISA COUNT MAX_NORMAL X_BITS Y_BITS REF MAX_SUBNORMAL X_BITS OVER_1_5 SPECIAL FIRST_SPECIAL_X_BITS Y_BITS
 *   exact OP ISA COUNT MISMATCHES FIRST_X_BITS Y_BITS EXPECTED_BITS
 * MAX_NORMAL is the largest |y - exact| / ulp(exact) where the correctly rounded result is a normal float,
 * MAX_SUBNORMAL the same where it is subnormal (ulp 2^-149). SPECIAL counts the inputs whose result breaks a value
 * rule: NaN where the exact result is a number or the reverse, an infinity where the exact result rounds to a finite
 * float or the reverse, or a zero of the wrong sign where the exact result is a signed zero.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK ((size_t)1 << 24)
#define BLOCK ((size_t)1 << 14)

typedef void (*unary_fn)(const float *, size_t, int, float *);
typedef int (*set_isa_fn)(int);

static const char * const OP_NAMES[] = {"abs", "ceil", "cos", "erf", "exp", "floor", "log", "neg", "not", "rcp",
    "round", "rsqrt", "sign", "sin", "sqrt", "tanh", "zero"};
enum { ABS, CEIL, COS, ERF, EXP, FLOOR, LOG, NEG, NOT, RCP, ROUND, RSQRT, SIGN, SIN, SQRT, TANH, ZERO, OP_COUNT };

static uint32_t bits_of(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float float_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static int is_transcendental(int op)
{
    return op == EXP || op == LOG || op == ERF || op == TANH || op == SIN || op == COS;
}

static double reference(int op, float x)
{
    switch (op) {
    case EXP: return exp(x);
    case LOG: return log(x);
    case ERF: return erf(x);
    case TANH: return tanh(x);
    case SIN: return sin(x);
    default: return cos(x);
    }
}

/* The contract's scalar expression for the exact operations (README, "The unary contract"). */
static float exact_expected(int op, float x)
{
    switch (op) {
    case ABS: return float_of(bits_of(x) & 0x7fffffffu);
    case NEG: return float_of(bits_of(x) ^ 0x80000000u);
    case NOT: return float_of(~bits_of(x));
    case ZERO: return 0.0f;
    case CEIL: return ceilf(x);
    case FLOOR: return floorf(x);
    case ROUND: return roundf(x);
    case SIGN: return x < 0 ? -1.0f : (x == 0 ? 0.0f : 1.0f);
    case RCP: return 1.0f / x;
    case SQRT: return sqrtf(x);
    default: return 1.0f / sqrtf(x); /* RSQRT */
    }
}

/* Bit equality, except that any NaN matches any NaN where the operation computes (abs, neg and not move bits). */
static int exact_match(int op, float y, float e)
{
    if (op != ABS && op != NEG && op != NOT && isnan(e))
        return isnan(y);
    return bits_of(y) == bits_of(e);
}

typedef struct {
    uint64_t count, over, special, mismatches;
    double max_normal, max_subnormal;
    uint32_t normal_x, normal_y, subnormal_x, special_x, special_y, mismatch_x, mismatch_y, mismatch_e;
    double normal_ref;
    int has_normal, has_subnormal, has_special, has_mismatch;
} stats_t;

/* |y - e| in units of the float32 ulp at e (2^-149 below the normal range, the last binade's above FLT_MAX). */
static double ulp_error(float y, double e)
{
    int ex;
    frexp(e, &ex); /* |e| = m * 2^ex, m in [0.5, 1): ulp = 2^(ex - 24) */
    if (ex < -125) ex = -125;
    if (ex > 128) ex = 128;
    return fabs((double)y - e) / ldexp(1.0, ex - 24);
}

static void compare_ulp(const float * x, const double * ref, const float * y, size_t n, stats_t * s)
{
    for (size_t i = 0; i < n; ++i) {
        double e = ref[i];
        float r = (float)e, yi = y[i];
        int special, measured = 0;
        double err = 0.0;
        if (isnan(e) || isnan(yi))
            special = !(isnan(e) && isnan(yi));
        else if (isinf(r) || isinf(yi))
            special = bits_of(r) != bits_of(yi);
        else if (e == 0.0)
            special = bits_of(yi) != bits_of(r); /* exact signed zero: only that zero is right */
        else {
            special = 0;
            measured = 1;
            err = ulp_error(yi, e);
        }
        if (special) {
            if (!s->has_special) {
                s->has_special = 1;
                s->special_x = bits_of(x[i]);
                s->special_y = bits_of(yi);
            }
            s->special++;
            continue;
        }
        if (!measured)
            continue;
        if (err > 1.5) s->over++;
        if (fabsf(r) >= 1.17549435e-38f) {
            if (!s->has_normal || err > s->max_normal) {
                s->has_normal = 1;
                s->max_normal = err;
                s->normal_x = bits_of(x[i]);
                s->normal_y = bits_of(yi);
                s->normal_ref = e;
            }
        } else if (!s->has_subnormal || err > s->max_subnormal) {
            s->has_subnormal = 1;
            s->max_subnormal = err;
            s->subnormal_x = bits_of(x[i]);
        }
    }
    s->count += n;
}

static void compare_exact(int op, const float * x, const float * y, size_t n, stats_t * s)
{
    for (size_t i = 0; i < n; ++i) {
        float e = exact_expected(op, x[i]);
        if (!exact_match(op, y[i], e)) {
            if (!s->has_mismatch) {
                s->has_mismatch = 1;
                s->mismatch_x = bits_of(x[i]);
                s->mismatch_y = bits_of(y[i]);
                s->mismatch_e = bits_of(e);
            }
            s->mismatches++;
        }
    }
    s->count += n;
}

static void merge(stats_t * into, const stats_t * s)
{
    into->count += s->count;
    into->over += s->over;
    into->special += s->special;
    into->mismatches += s->mismatches;
    if (s->has_normal && (!into->has_normal || s->max_normal > into->max_normal)) {
        into->has_normal = 1;
        into->max_normal = s->max_normal;
        into->normal_x = s->normal_x;
        into->normal_y = s->normal_y;
        into->normal_ref = s->normal_ref;
    }
    if (s->has_subnormal && (!into->has_subnormal || s->max_subnormal > into->max_subnormal)) {
        into->has_subnormal = 1;
        into->max_subnormal = s->max_subnormal;
        into->subnormal_x = s->subnormal_x;
    }
    if (s->has_special && !into->has_special) {
        into->has_special = 1;
        into->special_x = s->special_x;
        into->special_y = s->special_y;
    }
    if (s->has_mismatch && !into->has_mismatch) {
        into->has_mismatch = 1;
        into->mismatch_x = s->mismatch_x;
        into->mismatch_y = s->mismatch_y;
        into->mismatch_e = s->mismatch_e;
    }
}

static int parse_list(const char * text, const char * const * names, int name_count, int * out, int max)
{
    int n = 0;
    char * copy = strdup(text), * save = NULL;
    for (char * tok = strtok_r(copy, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save)) {
        int v = -1;
        for (int i = 0; i < name_count && names; ++i)
            if (strcmp(tok, names[i]) == 0) v = i;
        if (!names) v = strcmp(tok, "native") == 0 ? -1 : atoi(tok);
        else if (v < 0) {
            fprintf(stderr, "unknown op %s\n", tok);
            n = -1;
            break;
        }
        out[n++] = v;
    }
    free(copy);
    return n;
}

/* Entry point, called through ctypes by tools/ulp_exhaustive.py: the bundled library is a Python extension module,
   loadable only inside a Python process. argv as described at the top (argv[0] unused). */
int ulp_exhaustive(int argc, char ** argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: ulp_exhaustive LIBRARY OPS ISAS STEP OUTPUT\n");
        return 2;
    }
    enum { MAX_LIBS = 8, MAX_RUNS = 40 };
    void * libs[MAX_LIBS];
    unary_fn unary[MAX_LIBS];
    set_isa_fn set_isa[MAX_LIBS];
    int lib_count = 0;
    char * paths = strdup(argv[1]), * save = NULL;
    for (char * path = strtok_r(paths, ",", &save); path && lib_count < MAX_LIBS; path = strtok_r(NULL, ",", &save)) {
        void * lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            fprintf(stderr, "%s\n", dlerror());
            return 2;
        }
        libs[lib_count] = lib;
        unary[lib_count] = (unary_fn)dlsym(lib, "SimdSynetUnaryOperation32f");
        set_isa[lib_count] = (set_isa_fn)dlsym(lib, "SimdBindSetIsa");
        if (!unary[lib_count]) {
            fprintf(stderr, "%s has no SimdSynetUnaryOperation32f\n", path);
            return 2;
        }
        lib_count++;
    }
    free(paths);
    int ops[OP_COUNT], isas[8];
    int op_count = parse_list(argv[2], OP_NAMES, OP_COUNT, ops, OP_COUNT);
    int isa_count = parse_list(argv[3], NULL, 0, isas, 8);
    if (op_count < 0)
        return 2;
    uint64_t step = strtoull(argv[4], NULL, 10);
    if (step == 0) step = 1;
    /* runs: every (library, ISA) pair */
    int run_lib[MAX_RUNS], run_isa[MAX_RUNS], runs = 0;
    for (int l = 0; l < lib_count; ++l)
        for (int k = 0; k < isa_count && runs < MAX_RUNS; ++k) {
            if (isas[k] >= 0 && (!set_isa[l] || set_isa[l](isas[k]) != 0)) {
                fprintf(stderr, "ISA %d cannot be selected in library %d\n", isas[k], l);
                return 2;
            }
            run_lib[runs] = l;
            run_isa[runs++] = isas[k];
        }
    FILE * out = fopen(argv[5], "w");
    if (!out) {
        fprintf(stderr, "cannot write %s\n", argv[5]);
        return 2;
    }

    float * x = malloc(CHUNK * sizeof(float));
    double * ref = malloc(CHUNK * sizeof(double));
    float * y = malloc(CHUNK * sizeof(float));
    size_t blocks = CHUNK / BLOCK;
    stats_t * block_stats = malloc(blocks * sizeof(stats_t));
    for (int o = 0; o < op_count; ++o) {
        int op = ops[o];
        stats_t total[MAX_RUNS];
        memset(total, 0, sizeof(total));
        uint64_t next = 0, end = (uint64_t)1 << 32;
        while (next < end) {
            size_t n = 0;
            for (; n < CHUNK && next < end; ++n, next += step)
                x[n] = float_of((uint32_t)next);
            if (is_transcendental(op)) {
#pragma omp parallel for schedule(dynamic, 1)
                for (size_t i = 0; i < n; i += BLOCK) {
                    size_t m = n - i < BLOCK ? n - i : BLOCK;
                    for (size_t j = 0; j < m; ++j) ref[i + j] = reference(op, x[i + j]);
                }
            }
            for (int k = 0; k < runs; ++k) {
                unary_fn fn = unary[run_lib[k]];
                if (run_isa[k] >= 0) set_isa[run_lib[k]](run_isa[k]);
                memset(block_stats, 0, blocks * sizeof(stats_t));
#pragma omp parallel for schedule(dynamic, 1)
                for (size_t i = 0; i < n; i += BLOCK) {
                    size_t m = n - i < BLOCK ? n - i : BLOCK;
                    fn(x + i, m, op, y + i);
                    if (is_transcendental(op))
                        compare_ulp(x + i, ref + i, y + i, m, &block_stats[i / BLOCK]);
                    else
                        compare_exact(op, x + i, y + i, m, &block_stats[i / BLOCK]);
                }
                for (size_t b = 0; b < blocks; ++b) merge(&total[k], &block_stats[b]);
            }
        }
        for (int k = 0; k < runs; ++k) {
            const stats_t * s = &total[k];
            char name[16], isa[32];
            if (run_isa[k] < 0) snprintf(name, sizeof(name), "native");
            else snprintf(name, sizeof(name), "%d", run_isa[k]);
            if (lib_count > 1) snprintf(isa, sizeof(isa), "%d:%s", run_lib[k], name);
            else snprintf(isa, sizeof(isa), "%s", name);
            if (is_transcendental(op))
                fprintf(out, "ulp\t%s\t%s\t%llu\t%.6f\t%08x\t%08x\t%.17g\t%.6f\t%08x\t%llu\t%llu\t%08x\t%08x\n", OP_NAMES[op],
                    isa, (unsigned long long)s->count, s->max_normal, s->normal_x, s->normal_y, s->normal_ref,
                    s->max_subnormal, s->subnormal_x, (unsigned long long)s->over, (unsigned long long)s->special,
                    s->special_x, s->special_y);
            else
                fprintf(out, "exact\t%s\t%s\t%llu\t%llu\t%08x\t%08x\t%08x\n", OP_NAMES[op], isa,
                    (unsigned long long)s->count, (unsigned long long)s->mismatches, s->mismatch_x, s->mismatch_y,
                    s->mismatch_e);
            fflush(out);
        }
    }
    fclose(out);
    free(block_stats);
    free(y);
    free(ref);
    free(x);
    for (int l = 0; l < lib_count; ++l)
        dlclose(libs[l]);
    return 0;
}
