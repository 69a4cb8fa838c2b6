/* lib/pool/forkjoin.c: park_join and park_parallel_for, on the pool's
 * workers (lib/pool/pool.c: its state machine, the idle word and the
 * joiners; this file has none of its own).
 *
 * A worker's park_join pushes b on its own deque, runs a, and pops b back
 * unless a thief took it, then waits for the thief's latch, helping with
 * other work meanwhile (park__pool_wait_latch). From a thread that is not
 * one of the pool's workers, park_join submits the whole join to the pool
 * and waits. The records and latches live on the callers' stacks.
 * park_parallel_for halves its range by park_join down to the grain. */
#include "os/os.h"
#include "pool/pool.h"

typedef struct join_b {
    void (*fn)(void *);
    void *arg;
    park__latch_t done;
} join_b_t;

static void run_stolen_b(void *arg)
{
    join_b_t *b = arg;
    b->fn(b->arg);
    park__latch_set(&b->done); /* b may be gone after this */
}

static void join_in_worker(park__worker_t *w, void (*a)(void *), void *a_arg, void (*b)(void *),
                           void *b_arg)
{
    join_b_t jb = {b, b_arg, {0}};
    park__latch_init(&jb.done);
    if (!park__deque_push(&w->deque, run_stolen_b, &jb)) {
        a(a_arg); /* deque full: no parallelism to gain here */
        b(b_arg);
        return;
    }
    /* No fence (see the top of lib/pool/pool.c): a cheap look for
     * sleepers. */
    uint32_t v = atomic_load_explicit(&w->pool->idle, memory_order_relaxed);
    if (PARK__POOL_SLEEPERS(v) != 0 && PARK__POOL_SEARCHERS(v) == 0)
        park__pool_notify(w->pool);
    a(a_arg);
    park__job_t job;
    while (park__deque_pop(&w->deque, &job)) {
        if (job.arg == &jb) {
            b(b_arg);
            return;
        }
        park__pool_run_job(w, &job); /* pushed by a and left there (a submission) */
    }
    park__pool_wait_latch(&jb.done, PARK_FOREVER); /* b was stolen */
}

typedef struct join_outside {
    void (*a)(void *), *a_arg, (*b)(void *), *b_arg;
    park_pool_t *pool;
    park__latch_t done;
} join_outside_t;

static void run_join_outside(void *arg)
{
    join_outside_t *j = arg;
    park_join(j->pool, j->a, j->a_arg, j->b, j->b_arg);
    park__latch_set(&j->done);
}

void park_join(park_pool_t *pool, void (*a)(void *), void *a_arg, void (*b)(void *), void *b_arg)
{
    if (!a) {
        a = b;
        a_arg = b_arg;
        b = NULL;
    }
    if (!a)
        return;
    park__worker_t *w = park__pool_worker;
    if (w && w->pool == pool) {
        if (b)
            join_in_worker(w, a, a_arg, b, b_arg);
        else
            a(a_arg);
        return;
    }
    join_outside_t j = {a, a_arg, b, b_arg, pool, {0}};
    park__latch_init(&j.done);
    if (park_pool_submit(pool, run_join_outside, &j) != 0) {
        a(a_arg); /* shutting down (or no memory): run here */
        if (b)
            b(b_arg);
        return;
    }
    park__pool_wait_latch(&j.done, PARK_FOREVER);
}

typedef struct pfor {
    size_t lo, hi, grain;
    void (*body)(size_t, size_t, void *);
    void *arg;
    park_pool_t *pool;
} pfor_t;

static void pfor_run(void *arg)
{
    pfor_t *p = arg;
    if (p->hi - p->lo <= p->grain) {
        p->body(p->lo, p->hi, p->arg);
        return;
    }
    size_t mid = p->lo + (p->hi - p->lo) / 2;
    pfor_t left = *p, right = *p;
    left.hi = mid;
    right.lo = mid;
    park_join(p->pool, pfor_run, &left, pfor_run, &right);
}

void park_parallel_for(park_pool_t *pool, size_t begin, size_t end, size_t grain,
                       void (*body)(size_t lo, size_t hi, void *arg), void *arg)
{
    if (!body)
        park__misuse("park_parallel_for", pool, "body is NULL");
    if (begin >= end)
        return;
    pfor_t p = {begin, end, grain ? grain : 1, body, arg, pool};
    park_join(pool, pfor_run, &p, NULL, NULL);
}
