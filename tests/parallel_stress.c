/*
 * parallel_stress.c: sb_parallel_for (csrc/runtime/parallel.c) on its own, driven by test_parallel_pool.py.
 *
 *   parallel_stress THREADS CALLERS ROUNDS
 *
 * CALLERS threads each make ROUNDS calls with random n and grain, the library thread count set to THREADS, and
 * check that every index of [0, n) was visited exactly once and that a part's range ends on a grain boundary.
 * Some calls nest another call in each part (which must run serially), some come after a pause longer than the
 * pool's spin (so that workers sleep), and the first caller forks a child now and then, whose own calls must work
 * without the parent's workers. Exits 0 and prints "ok", or prints what went wrong and exits 1.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_N 1000

void sb_parallel_for(size_t n, size_t grain, void (*body)(void *, size_t, size_t), void * arg);

static size_t thread_number = 1;
size_t sb_thread_number(void) { return thread_number; }

typedef struct {
    _Atomic int hits[MAX_N];
    size_t n, grain;
    _Atomic int bad_range;
} call_t;

static void visit(void * p, size_t begin, size_t end)
{
    call_t * c = (call_t *)p;
    if (begin % c->grain != 0 || (end % c->grain != 0 && end != c->n) || begin >= end || end > c->n)
        atomic_store(&c->bad_range, 1);
    for (size_t i = begin; i < end; ++i)
        atomic_fetch_add(&c->hits[i], 1);
}

/* Each part runs a whole call of its own range: serially, on the part's thread. */
static void visit_nested(void * p, size_t begin, size_t end)
{
    call_t * c = (call_t *)p;
    call_t inner = {.n = end - begin, .grain = 1};
    sb_parallel_for(end - begin, 1, visit, &inner);
    for (size_t i = 0; i < end - begin; ++i)
        atomic_fetch_add(&c->hits[begin + i], atomic_load(&inner.hits[i]));
}

static int check(call_t * c)
{
    for (size_t i = 0; i < c->n; ++i)
        if (atomic_load(&c->hits[i]) != 1)
            return 0;
    return !atomic_load(&c->bad_range);
}

static int one_call(call_t * c, size_t n, size_t grain, int nested)
{
    for (size_t i = 0; i < n; ++i)
        atomic_store(&c->hits[i], 0);
    c->n = n;
    c->grain = grain ? grain : 1;
    atomic_store(&c->bad_range, 0);
    sb_parallel_for(n, grain, nested ? visit_nested : visit, c);
    return check(c);
}

static size_t rounds;

static void * caller(void * p)
{
    unsigned seed = (unsigned)(size_t)p;
    static call_t calls[8];
    call_t * c = &calls[(size_t)p % 8];
    for (size_t r = 0; r < rounds; ++r) {
        size_t n = (size_t)rand_r(&seed) % MAX_N, grain = (size_t)rand_r(&seed) % 9;
        int nested = r % 7 == 3;
        if (!one_call(c, n, grain, nested)) {
            printf("caller %zu round %zu: n %zu grain %zu nested %d: an index not visited exactly once\n",
                   (size_t)p, r, n, grain, nested);
            exit(1);
        }
        if (r % 500 == 250)
            usleep(2000 + (unsigned)rand_r(&seed) % 2000); /* past the spin: the workers go to sleep */
        if ((size_t)p == 1 && r % 2000 == 1000) {
            pid_t child = fork();
            if (child == 0)
                _exit(one_call(c, MAX_N, 3, 0) && one_call(c, MAX_N, 1, 1) ? 0 : 3);
            int status = 0;
            if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status)) {
                printf("caller 1 round %zu: the forked child's calls failed (status %d)\n", r, status);
                exit(1);
            }
        }
    }
    return NULL;
}

int main(int argc, char ** argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: parallel_stress THREADS CALLERS ROUNDS\n");
        return 2;
    }
    thread_number = (size_t)atoi(argv[1]);
    size_t callers = (size_t)atoi(argv[2]);
    rounds = (size_t)atoi(argv[3]);
    pthread_t ids[8];
    if (callers < 1 || callers > 8)
        return 2;
    for (size_t i = 0; i < callers; ++i)
        pthread_create(&ids[i], NULL, caller, (void *)(i + 1));
    for (size_t i = 0; i < callers; ++i)
        pthread_join(ids[i], NULL);
    printf("ok\n");
    return 0;
}
