/* tests/unit/sem_test.h: what the tests of park_sem (sem_test.c) and of
 * its asynchronous acquisitions (sem_async_test.c) share: threads that
 * take one permit.
 *
 * Threads are ordered by handshakes. "Thread T is parked" is observed in the
 * wait queue itself (park__wait_count of the semaphore's address), so
 * waiters are queued in a known order and no verdict depends on a sleep;
 * the only timing asserted is that a timed acquire never gives up before
 * its deadline (and, generously, not seconds after). Sleeps are
 * choreography only: to make a waiter owed (it has waited about 1 ms), or
 * to give a wrong wake-up time to show. */
#ifndef PARK_TESTS_UNIT_SEM_TEST_H
#define PARK_TESTS_UNIT_SEM_TEST_H

#include <sched.h>
#include <stdatomic.h>

#include <park/park.h>

#include "wait/wait.h"

#include "test.h"

/* A thread that takes one permit (acquire, or acquire_until when timed). */
struct acquirer {
    park_sem_t *s;
    bool timed;
    park_time_t deadline;
    atomic_int *returned; /* optional: counts acquirers that returned */
    atomic_bool *go;      /* optional: the thread waits for it before acquiring */
    int result;
    park_time_t returned_at;
    atomic_bool done;
};

/* Lets a thread be created ahead of the moment it should act. */
static inline void await_go(atomic_bool *go)
{
    while (go && !atomic_load(go))
        sched_yield();
}

static inline void *acquirer_main(void *arg)
{
    struct acquirer *a = arg;
    await_go(a->go);
    if (a->timed) {
        a->result = park_sem_acquire_until(a->s, a->deadline);
    } else {
        park_sem_acquire(a->s);
        a->result = 0;
    }
    a->returned_at = park_now();
    atomic_store(&a->done, true);
    if (a->returned)
        atomic_fetch_add(a->returned, 1);
    return NULL;
}

static inline test_threads_t *start_acquirer(struct acquirer *a)
{
    return test_threads_start(1, acquirer_main, a, sizeof *a);
}

/* Starts n blocking acquirers one at a time, each queued before the next
 * starts, so a[0] is the oldest waiter. */
static inline void queue_acquirers(park_sem_t *s, struct acquirer *a, test_threads_t **t, int n,
                                   atomic_int *returned)
{
    size_t base = park__wait_count(s);
    for (int i = 0; i < n; i++) {
        a[i] = (struct acquirer){.s = s, .returned = returned};
        t[i] = start_acquirer(&a[i]);
        AWAIT(park__wait_count(s) == base + (size_t)i + 1);
    }
}

static inline void join_all(test_threads_t **t, int n)
{
    for (int i = 0; i < n; i++)
        test_threads_join(t[i]);
}

#endif /* PARK_TESTS_UNIT_SEM_TEST_H */
