/*
 * parallel.c: sb_parallel_for, the only place that starts threads.
 *
 * Threads are created per call rather than kept in a pool: no state survives a call, so the library stays
 * fork-safe and reentrant from several Python threads. Callers use it only for work large enough (a GEMM or a
 * convolution) that thread start-up (tens of microseconds) does not matter.
 */
#include <pthread.h>

#include "internal/dispatch.h"

typedef struct {
    void (*body)(void *, size_t, size_t);
    void * arg;
    size_t begin, end;
} part;

static void * run_part(void * p)
{
    part * q = (part *)p;
    q->body(q->arg, q->begin, q->end);
    return NULL;
}

#define SB_MAX_THREADS 256

void sb_parallel_for(size_t n, size_t grain, void (*body)(void * arg, size_t begin, size_t end), void * arg)
{
    if (n == 0)
        return;
    if (grain == 0)
        grain = 1;
    size_t blocks = (n + grain - 1) / grain, threads = sb_thread_number();
    if (threads > blocks) threads = blocks;
    if (threads > SB_MAX_THREADS) threads = SB_MAX_THREADS;
    if (threads <= 1) {
        body(arg, 0, n);
        return;
    }
    part parts[SB_MAX_THREADS];
    pthread_t ids[SB_MAX_THREADS];
    int started[SB_MAX_THREADS];
    for (size_t t = 0; t < threads; ++t) {
        size_t b = blocks * t / threads * grain, e = blocks * (t + 1) / threads * grain;
        parts[t] = (part){body, arg, b, e < n ? e : n};
    }
    /* Part 0 runs on the calling thread; a part whose thread cannot start runs here too, so work is never lost. */
    for (size_t t = 1; t < threads; ++t)
        started[t] = pthread_create(&ids[t], NULL, run_part, &parts[t]) == 0;
    run_part(&parts[0]);
    for (size_t t = 1; t < threads; ++t) {
        if (started[t])
            pthread_join(ids[t], NULL);
        else
            run_part(&parts[t]);
    }
}
