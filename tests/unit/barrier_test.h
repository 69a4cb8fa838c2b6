/* tests/unit/barrier_test.h: what the tests of park_latch and
 * park_barrier (barrier_test.c) and of their asynchronous wait and arrival
 * (latch_async_test.c, barrier_async_test.c) share: threads that wait on
 * a latch or arrive at a barrier once.
 *
 * Threads are lined up by handshakes: "thread T waits" is observed in the
 * wait queue itself (park__wait_count of the object's address), so no
 * verdict depends on a sleep; the only timing asserted is that a timed
 * wait never gives up before its deadline (and, generously, not seconds
 * after). */
#ifndef PARK_TESTS_UNIT_BARRIER_TEST_H
#define PARK_TESTS_UNIT_BARRIER_TEST_H

#include <pthread.h>
#include <stdatomic.h>

#include <park/park.h>

#include "wait/wait.h"

#include "test.h"

/* ---- latch: threads ------------------------------------------------------------------ */

enum latch_call { LATCH_WAIT, LATCH_WAIT_UNTIL, LATCH_ARRIVE_AND_WAIT };

struct latch_waiter {
    park_latch_t *l;
    enum latch_call call;
    uint64_t timeout_ns; /* LATCH_WAIT_UNTIL: the deadline from the thread's start */
    uint32_t n;          /* LATCH_ARRIVE_AND_WAIT */
    int result;
    atomic_bool done;
};

static inline void *latch_waiter_main(void *arg)
{
    struct latch_waiter *w = arg;
    switch (w->call) {
    case LATCH_WAIT:
        park_latch_wait(w->l);
        w->result = 0;
        break;
    case LATCH_WAIT_UNTIL:
        w->result = park_latch_wait_until(w->l, park_deadline_in(w->timeout_ns));
        break;
    case LATCH_ARRIVE_AND_WAIT:
        w->result = park_latch_arrive_and_wait(w->l, w->n);
        break;
    }
    atomic_store(&w->done, true);
    return NULL;
}

/* Starts waiters w[0..n) one at a time, each queued before the next. */
static inline void queue_latch_waiters(park_latch_t *l, struct latch_waiter *w, test_threads_t **t,
                                       int n)
{
    size_t base = park__wait_count(l);
    for (int i = 0; i < n; i++) {
        w[i].l = l;
        atomic_init(&w[i].done, false);
        t[i] = test_threads_start(1, latch_waiter_main, &w[i], 0);
        AWAIT(park__wait_count(l) == base + (size_t)i + 1);
    }
}

static inline void join_all(test_threads_t **t, int n)
{
    for (int i = 0; i < n; i++)
        test_threads_join(t[i]);
}

/* ---- barrier: helpers -------------------------------------------------------------- */

/* Counts completions and checks, in each, that no participant has left the
 * phase yet (the completion runs before anyone is released). */
struct phases {
    atomic_uint completions;
    atomic_uint returned; /* arrive_and_wait calls returned, all phases */
    unsigned returned_at_completion;
    pthread_t completed_on;
};

static inline void count_phase(void *arg)
{
    struct phases *p = arg;
    p->returned_at_completion = atomic_load(&p->returned);
    p->completed_on = pthread_self();
    atomic_fetch_add(&p->completions, 1);
}

struct participant {
    park_barrier_t *b;
    struct phases *p;
    int result;
    pthread_t self;
    atomic_bool done;
};

static inline void *participant_main(void *arg)
{
    struct participant *w = arg;
    w->self = pthread_self();
    w->result = park_barrier_arrive_and_wait(w->b);
    if (w->p)
        atomic_fetch_add(&w->p->returned, 1);
    atomic_store(&w->done, true);
    return NULL;
}

/* Starts participants w[0..n), each queued before the next. */
static inline void queue_participants(park_barrier_t *b, struct phases *p, struct participant *w,
                                      test_threads_t **t, int n)
{
    size_t base = park__wait_count(b);
    for (int i = 0; i < n; i++) {
        w[i].b = b;
        w[i].p = p;
        atomic_init(&w[i].done, false);
        t[i] = test_threads_start(1, participant_main, &w[i], 0);
        AWAIT(park__wait_count(b) == base + (size_t)i + 1);
    }
}

#endif /* PARK_TESTS_UNIT_BARRIER_TEST_H */
