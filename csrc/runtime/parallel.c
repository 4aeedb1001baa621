/*
 * parallel.c: sb_parallel_for, the only place that starts threads.
 *
 * Worker threads are started on first need and then kept, waiting on a condition variable: starting a thread
 * costs ~260 us on the virtual machines we measured (pthread_create + join), waking a waiting one ~11 us, and
 * a 2-thread convolution call may itself last only a few hundred microseconds.
 *
 * - A call splits [0, n) into `threads` parts on grain boundaries; part 0 runs on the calling thread, part t on
 *   worker t. The split depends only on n, grain and the thread count, and kernels never let the summation
 *   order depend on it.
 * - One caller uses the workers at a time. A second Python thread calling while they are busy starts threads of its
 *   own for that call (the old, slower way), so calls never wait on each other. A call nested in a part of a
 *   multithreaded call runs serially on that part's thread.
 * - fork(): the child has no workers; pthread_atfork resets the pool there (and the parent's handlers hold its
 *   locks across the fork, so that the child never inherits them locked).
 * - A worker that cannot be started is not needed: its part runs on the calling thread.
 */
#include <pthread.h>
#include <stdlib.h>

#include "internal/dispatch.h"

#define SB_MAX_THREADS 256

typedef struct {
    void (*body)(void *, size_t, size_t);
    void * arg;
    size_t n, grain, blocks, threads;
} job_t;

/* Set while this thread runs a part of a multithreaded call: a call nested in it runs serially, since the outer
   call already keeps every thread busy (a nested 2-thread GEMM per chunk of a 2-thread convolution made the
   convolution slower than on one thread). */
static _Thread_local int in_part;

/* Part t of a job: whole grains, the last part ending at n. */
static void run_part(const job_t * job, size_t t)
{
    size_t b = job->blocks * t / job->threads * job->grain, e = job->blocks * (t + 1) / job->threads * job->grain;
    if (e > job->n)
        e = job->n;
    if (b < e) {
        int outer = in_part;
        in_part = 1;
        job->body(job->arg, b, e);
        in_part = outer;
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
static pthread_mutex_t pool_owner = PTHREAD_MUTEX_INITIALIZER; /* held by the caller using the workers */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;  /* guards everything below */
static pthread_cond_t pool_go = PTHREAD_COND_INITIALIZER, pool_done = PTHREAD_COND_INITIALIZER;
static size_t pool_workers;           /* workers 1 .. pool_workers exist */
static unsigned long pool_generation; /* incremented for each job */
static size_t pool_pending;           /* parts of the current job that workers have not finished */
static job_t pool_job;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

typedef struct {
    size_t index;
    unsigned long seen; /* the generation when the worker was started: it takes only later jobs */
} worker_start;

static void * worker_main(void * p)
{
    worker_start start = *(worker_start *)p;
    free(p);
    pthread_mutex_lock(&pool_lock);
    for (unsigned long seen = start.seen;;) {
        while (pool_generation == seen)
            pthread_cond_wait(&pool_go, &pool_lock);
        seen = pool_generation;
        if (start.index < pool_job.threads) {
            job_t job = pool_job;
            pthread_mutex_unlock(&pool_lock);
            run_part(&job, start.index);
            pthread_mutex_lock(&pool_lock);
            if (--pool_pending == 0)
                pthread_cond_signal(&pool_done);
        }
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
    pthread_cond_init(&pool_done, NULL);
    pool_workers = 0;
    pthread_mutex_unlock(&pool_lock); /* this thread locked them in before_fork */
    pthread_mutex_unlock(&pool_owner);
}

static void register_fork_handlers(void)
{
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

/* Starts workers up to `wanted` (pool_lock held); returns how many exist. */
static size_t start_workers(size_t wanted)
{
    while (pool_workers < wanted) {
        worker_start * start = (worker_start *)malloc(sizeof(worker_start));
        if (!start)
            break;
        *start = (worker_start){pool_workers + 1, pool_generation};
        pthread_t id;
        pthread_attr_t attr;
        int ok = pthread_attr_init(&attr) == 0;
        ok = ok && pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
            pthread_create(&id, &attr, worker_main, start) == 0;
        pthread_attr_destroy(&attr);
        if (!ok) {
            free(start);
            break;
        }
        ++pool_workers;
    }
    return pool_workers;
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
    job_t job = {body, arg, n, grain, blocks, threads};
    if (threads <= 1 || in_part) {
        body(arg, 0, n);
        return;
    }
    pthread_once(&pool_once, register_fork_handlers);
    if (pthread_mutex_trylock(&pool_owner) != 0) { /* another caller has the workers, or this is a nested call */
        run_with_new_threads(&job);
        return;
    }
    pthread_mutex_lock(&pool_lock);
    size_t workers = start_workers(threads - 1);
    pool_job = job;
    pool_pending = workers < threads - 1 ? workers : threads - 1;
    ++pool_generation;
    pthread_cond_broadcast(&pool_go);
    pthread_mutex_unlock(&pool_lock);
    run_part(&job, 0);
    for (size_t t = workers + 1; t < threads; ++t) /* parts whose worker could not be started */
        run_part(&job, t);
    pthread_mutex_lock(&pool_lock);
    while (pool_pending > 0)
        pthread_cond_wait(&pool_done, &pool_lock);
    pthread_mutex_unlock(&pool_lock);
    pthread_mutex_unlock(&pool_owner);
}
