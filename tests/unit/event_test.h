/* tests/unit/event_test.h: what the tests of park_event (event_test.c)
 * and of its asynchronous waits (event_async_test.c) share: threads that
 * wait once.
 *
 * Threads are lined up by handshakes: "thread T waits" is observed in the
 * wait queue itself (park__wait_count of the event's address), so waiters
 * are queued in a known order and no verdict depends on a sleep; the only
 * timing asserted is that a timed wait never gives up before its deadline
 * (and, generously, not seconds after). */
#ifndef PARK_TESTS_UNIT_EVENT_TEST_H
#define PARK_TESTS_UNIT_EVENT_TEST_H

#include <stdatomic.h>

#include <park/park.h>

#include "wait/wait.h"

#include "test.h"

/* A thread that waits once (wait, or wait_until when timed). */
struct waiter {
    park_event_t *e;
    bool timed;
    uint64_t timeout_ns; /* timed: the deadline is this far from the thread's start */
    int result;
    atomic_bool done;
};

static inline void *waiter_main(void *arg)
{
    struct waiter *w = arg;
    w->result = w->timed ? park_event_wait_until(w->e, park_deadline_in(w->timeout_ns))
                         : (park_event_wait(w->e), 0);
    atomic_store(&w->done, true);
    return NULL;
}

/* Starts waiters w[0..n) one at a time, each queued before the next
 * starts, so w[0] is the oldest. */
static inline void queue_waiters(park_event_t *e, struct waiter *w, test_threads_t **t, int n)
{
    size_t base = park__wait_count(e);
    for (int i = 0; i < n; i++) {
        w[i].e = e;
        atomic_init(&w[i].done, false);
        t[i] = test_threads_start(1, waiter_main, &w[i], 0);
        AWAIT(park__wait_count(e) == base + (size_t)i + 1);
    }
}

static inline void join_all(test_threads_t **t, int n)
{
    for (int i = 0; i < n; i++)
        test_threads_join(t[i]);
}

#endif /* PARK_TESTS_UNIT_EVENT_TEST_H */
