/*
 * parallel.c: sb_parallel_for, the only place that starts threads.
 *
 * Worker threads are started on first need and then kept: starting a thread costs ~260 us on the virtual machines
 * we measured (pthread_create + join), and a 2-thread convolution call may itself last only a few hundred
 * microseconds.
 *
 * - A call splits [0, n) into `threads` parts on grain boundaries. The split depends only on n, grain and the thread
 *   count, and kernels never let the summation order depend on it, so results never depend on which thread ran a
 *   part.
 * - Parts are claimed, not assigned: the calling thread runs part 0, then takes any part no worker has claimed yet.
 *   An empty 2-thread call with a sleeping worker took 167 us on average (44 us at best) on the 2-vCPU VM we
 *   measured: a futex wake of an idle vCPU goes through the hypervisor. A worker that arrives after the caller has
 *   taken every part costs nothing, where a fixed assignment made a 150 us call wait for it (2 threads ran
 *   0.42-0.96x as fast as one on 10 of 16 convolutions).
 * - Workers, and the caller waiting for them, spin for SPIN_NS before they sleep on a condition variable, so that
 *   back-to-back calls (the layers of a network) find them awake, as OpenMP's runtimes do for the same reason.
 * - The caller's MXCSR (SimdSetFastMode's flush-to-zero and denormals-are-zero bits) travels with the job: each
 *   thread has its own, and a part must compute as it would on the calling thread.
 * - One caller uses the workers at a time. A second Python thread calling while they are busy starts threads of its
 *   own for that call (the old, slower way), so calls never wait on each other. A call nested in a part of a
 *   multithreaded call runs serially on that part's thread.
 * - fork(): the child has no workers; pthread_atfork resets the pool there (and the parent's handlers hold its
 *   locks across the fork, so that the child never inherits them locked).
 * - A worker that cannot be started is not needed: the caller claims its part.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "internal/dispatch.h"

#if SB_X86
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

#define SB_MAX_THREADS 256

/* How long an idle worker (or the caller waiting for one) spins before it sleeps: longer than a wake-up costs
   (see above), short enough that a program calling now and then does not lose a core to it. */
#define SPIN_NS 1000000

typedef struct {
    void (*body)(void *, size_t, size_t);
    void * arg;
    size_t n, grain, blocks, threads;
    unsigned mxcsr;
} job_t;

static unsigned current_mxcsr(void)
{
#if SB_X86
    return _mm_getcsr();
#else
    return 0;
#endif
}

/* Set while this thread runs a part of a multithreaded call: a call nested in it runs serially, since the outer
   call already keeps every thread busy (a nested 2-thread GEMM per chunk of a 2-thread convolution made the
   convolution slower than on one thread). */
static _Thread_local int in_part;

/* Part t of a job: whole grains, the last part ending at n, under the caller's MXCSR. */
static void run_part(const job_t * job, size_t t)
{
    size_t b = job->blocks * t / job->threads * job->grain, e = job->blocks * (t + 1) / job->threads * job->grain;
    if (e > job->n)
        e = job->n;
    if (b >= e)
        return;
    unsigned own = current_mxcsr();
#if SB_X86
    if (own != job->mxcsr)
        _mm_setcsr(job->mxcsr);
#endif
    int outer = in_part;
    in_part = 1;
    job->body(job->arg, b, e);
    in_part = outer;
#if SB_X86
    if (own != job->mxcsr)
        _mm_setcsr(own);
#endif
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Spins until done(arg) or SPIN_NS have passed; returns done(arg). */
static int spin_until(int (*done)(uint64_t), uint64_t arg)
{
    uint64_t start = now_ns();
    for (unsigned i = 1;; ++i) {
        if (done(arg))
            return 1;
        cpu_relax();
        if (i % 64 == 0 && now_ns() - start > SPIN_NS)
            return done(arg);
    }
}

/* -- the fallback: threads started for one call ---------------------------------------------------------------- */
typedef struct {
    const job_t * job;
    size_t t;
} one_part;

static void * run_one_part(void * p)
{
    one_part * q = (one_part *)p;
    run_part(q->job, q->t);
    return NULL;
}

static void run_with_new_threads(const job_t * job)
{
    one_part parts[SB_MAX_THREADS];
    pthread_t ids[SB_MAX_THREADS];
    int started[SB_MAX_THREADS];
    for (size_t t = 1; t < job->threads; ++t) {
        parts[t] = (one_part){job, t};
        started[t] = pthread_create(&ids[t], NULL, run_one_part, &parts[t]) == 0;
    }
    run_part(job, 0);
    for (size_t t = 1; t < job->threads; ++t) {
        if (started[t])
            pthread_join(ids[t], NULL);
        else
            run_part(job, t);
    }
}

/* -- the pool ------------------------------------------------------------------------------------------------- */
/* The claim word of the current job: its generation (bits 32-63), its part count (16-31) and the next part nobody
   has claimed (0-15). One compare-and-swap claims a part of exactly that job, so a worker that saw an older job
   can never take a part of a newer one. */
#define CLAIM(generation, threads, next) (((uint64_t)(generation) << 32) | ((uint64_t)(threads) << 16) | (next))
#define CLAIM_GENERATION(c) ((uint32_t)((c) >> 32))
#define CLAIM_THREADS(c) ((size_t)(((c) >> 16) & 0xffff))
#define CLAIM_NEXT(c) ((size_t)((c)&0xffff))

static pthread_mutex_t pool_owner = PTHREAD_MUTEX_INITIALIZER; /* held by the caller using the workers */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;  /* taken only to sleep and to wake sleepers */
static pthread_cond_t pool_go = PTHREAD_COND_INITIALIZER, pool_finished = PTHREAD_COND_INITIALIZER;
static _Atomic uint64_t pool_claim;
static _Atomic size_t pool_done;        /* parts of the current job finished */
static _Atomic int pool_sleepers;       /* workers waiting on pool_go */
static _Atomic int pool_caller_sleeps;  /* the caller waits on pool_finished */
static job_t pool_job;                  /* written by the owner only while no part of it can be claimed */
static size_t pool_workers;             /* workers 1 .. pool_workers exist (owner only) */
static uint32_t pool_generation;        /* owner only */
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void finish_part(size_t threads)
{
    if (atomic_fetch_add(&pool_done, 1) + 1 == threads && atomic_load(&pool_caller_sleeps)) {
        pthread_mutex_lock(&pool_lock);
        pthread_cond_signal(&pool_finished);
        pthread_mutex_unlock(&pool_lock);
    }
}

/* Claims and runs parts of job `generation` until none is left. */
static void claim_parts(uint32_t generation)
{
    uint64_t c = atomic_load(&pool_claim);
    while (CLAIM_GENERATION(c) == generation && CLAIM_NEXT(c) < CLAIM_THREADS(c)) {
        if (atomic_compare_exchange_weak(&pool_claim, &c, c + 1)) {
            run_part(&pool_job, CLAIM_NEXT(c)); /* the job cannot change before this part is finished */
            finish_part(CLAIM_THREADS(c));
            c = atomic_load(&pool_claim);
        }
    }
}

static int job_after(uint64_t seen) { return CLAIM_GENERATION(atomic_load(&pool_claim)) != (uint32_t)seen; }

static int job_finished(uint64_t threads) { return atomic_load(&pool_done) == threads; }

static void * worker_main(void * p)
{
    uint32_t seen = (uint32_t)(uintptr_t)p; /* the generation when the worker was started: it takes only later jobs */
    for (;;) {
        if (!spin_until(job_after, seen)) {
            pthread_mutex_lock(&pool_lock);
            atomic_fetch_add(&pool_sleepers, 1);
            while (!job_after(seen)) /* the owner reads pool_sleepers after it publishes a job: one sees the other */
                pthread_cond_wait(&pool_go, &pool_lock);
            atomic_fetch_sub(&pool_sleepers, 1);
            pthread_mutex_unlock(&pool_lock);
        }
        seen = CLAIM_GENERATION(atomic_load(&pool_claim));
        claim_parts(seen);
    }
    return NULL;
}

static void before_fork(void)
{
    pthread_mutex_lock(&pool_owner);
    pthread_mutex_lock(&pool_lock);
}

static void after_fork_parent(void)
{
    pthread_mutex_unlock(&pool_lock);
    pthread_mutex_unlock(&pool_owner);
}

static void after_fork_child(void)
{
    pthread_cond_init(&pool_go, NULL); /* may record the parent's waiting workers, which do not exist here */
    pthread_cond_init(&pool_finished, NULL);
    pool_workers = 0;
    atomic_store(&pool_sleepers, 0);
    pthread_mutex_unlock(&pool_lock); /* this thread locked them in before_fork */
    pthread_mutex_unlock(&pool_owner);
}

static void register_fork_handlers(void)
{
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

/* Starts workers up to `wanted` (pool owner only). */
static void start_workers(size_t wanted)
{
    while (pool_workers < wanted) {
        void * seen = (void *)(uintptr_t)pool_generation; /* passed in the pointer: nothing to allocate */
        pthread_t id;
        pthread_attr_t attr;
        int ok = pthread_attr_init(&attr) == 0;
        ok = ok && pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
            pthread_create(&id, &attr, worker_main, seen) == 0;
        pthread_attr_destroy(&attr);
        if (!ok)
            return;
        ++pool_workers;
    }
}

void sb_parallel_for(size_t n, size_t grain, void (*body)(void * arg, size_t begin, size_t end), void * arg)
{
    if (n == 0)
        return;
    if (grain == 0)
        grain = 1;
    size_t blocks = (n + grain - 1) / grain, threads = sb_thread_number();
    if (threads > blocks) threads = blocks;
    if (threads > SB_MAX_THREADS) threads = SB_MAX_THREADS;
    job_t job = {body, arg, n, grain, blocks, threads, current_mxcsr()};
    if (threads <= 1 || in_part) {
        body(arg, 0, n);
        return;
    }
    pthread_once(&pool_once, register_fork_handlers);
    if (pthread_mutex_trylock(&pool_owner) != 0) { /* another caller has the workers, or this is a nested call */
        run_with_new_threads(&job);
        return;
    }
    start_workers(threads - 1);
    pool_job = job;
    atomic_store(&pool_done, 0);
    uint32_t generation = ++pool_generation;
    atomic_store(&pool_claim, CLAIM(generation, threads, 1)); /* part 0 is the caller's */
    if (atomic_load(&pool_sleepers) > 0) {
        pthread_mutex_lock(&pool_lock);
        pthread_cond_broadcast(&pool_go);
        pthread_mutex_unlock(&pool_lock);
    }
    run_part(&pool_job, 0);
    finish_part(threads);
    claim_parts(generation);
    if (!spin_until(job_finished, threads)) {
        pthread_mutex_lock(&pool_lock);
        atomic_store(&pool_caller_sleeps, 1);
        while (!job_finished(threads)) /* a worker finishing the last part reads the flag after counting it */
            pthread_cond_wait(&pool_finished, &pool_lock);
        atomic_store(&pool_caller_sleeps, 0);
        pthread_mutex_unlock(&pool_lock);
    }
    pthread_mutex_unlock(&pool_owner);
}
