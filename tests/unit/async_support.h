/* tests/unit/async_support.h: what the tests of the primitives'
 * asynchronous acquisitions (tests/unit/<primitive>_async_test.c) share.
 *
 * The behaviours every primitive with a permit shares (a continuation never
 * runs on the releasing thread, uncontended acquisitions are a shared
 * completed task, cancel and drop conserve the permit) are written once, in
 * async_support.c, as scenarios over a struct prim, and each primitive's
 * file runs them for its acquisitions, each by a test of its own.
 *
 * Threads and tasks are lined up by handshakes: "the task is queued" is
 * observed in the wait queue itself (park__wait_count of the primitive's
 * address), and a grant is waited for with park_task_wait. Continuations
 * check a thread-local flag that the scenarios set around the call that
 * releases the primitive: a continuation run within that call would see it
 * set. Nothing asserts on elapsed time except that a deadline is never
 * early. */
#ifndef PARK_TESTS_UNIT_ASYNC_SUPPORT_H
#define PARK_TESTS_UNIT_ASYNC_SUPPORT_H

#include <stdatomic.h>
#include <stdbool.h>

#include <park/pool.h>
#include <park/task.h>

park_pool_t *pool_new(unsigned threads);

park_task_t *not_null(park_task_t *t);

/* The task is complete with err, also as seen by wait. */
void assert_completed(park_task_t *t, int err);

/* Checked without reading the outcome (park_task_done is true only once it
 * is complete, so a false answer observes nothing). */
void assert_pending(park_task_t *t);

/* Set around a call that releases a primitive (or sets an event): a
 * continuation run within that call fails the test. */
extern _Thread_local bool in_release;

/* What a continuation saw: cont_fn, registered with c as its argument,
 * checks that it runs on c->pool and not within a releasing call, keeps
 * the task's outcome and counts its runs. */
struct cont {
    park_pool_t *pool;
    atomic_int runs;
    int err;
    void *result;
};

void cont_fn(park_task_t *done, void *arg);

/* Registers cont_fn on t for pool, with c (zeroed first). */
void then(park_task_t *t, struct cont *c, park_pool_t *pool);

/* One kind of acquisition: `hold` takes a blocking hold that keeps `async`
 * from completing at once, `drop_hold` releases it, `release` releases
 * what a granted task holds, and `is_free` is true (and changes nothing)
 * when nobody holds the primitive. */
struct prim {
    void *obj;
    void (*hold)(void *o);
    void (*drop_hold)(void *o);
    park_task_t *(*async)(void *o, park_pool_t *pool);
    void (*release)(void *o);
    bool (*is_free)(void *o);
};

/* The scenarios, each run on a fresh primitive (its prim_ function). */
void continuation_never_runs_on_the_releasing_thread(struct prim p);
void uncontended_is_a_shared_completed_task(struct prim p);
void cancelled_waiter_takes_nothing(struct prim p);
void cancel_after_grant_keeps_it(struct prim p);
void cancel_at_times_out_and_takes_nothing(struct prim p);
void dropping_a_pending_acquisition_cancels_it(struct prim p);
void dropping_an_unobserved_grant_gives_it_back(struct prim p);
void dropping_an_observed_grant_keeps_it(struct prim p);

#endif /* PARK_TESTS_UNIT_ASYNC_SUPPORT_H */
