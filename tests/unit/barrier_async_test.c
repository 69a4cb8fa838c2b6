/* tests/unit/barrier_async_test.c: park_barrier_arrive_and_wait_async
 * (lib/barrier_async.c), one behaviour per test; lined up as
 * tests/unit/barrier_test.h says. Continuations check a thread-local flag
 * that the test sets around the call that releases the waiters. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <park/park.h>

#include "pool/pool.h" /* white box: park__pool_closing */
#include "wait/wait.h"

#include "async_support.h"
#include "barrier_test.h"
#include "test.h"

/* ---- barrier: asynchronous arrivals ---------------------------------------------------- */

TEST(barrier_async_arrival_that_completes_the_phase_is_complete_and_serial)
{
    struct phases p;
    memset(&p, 0, sizeof p);
    park_barrier_t b = PARK_BARRIER_INIT(1, count_phase, &p);
    park_task_t *t = not_null(park_barrier_arrive_and_wait_async(&b, NULL));
    ASSERT_TRUE(park_task_done(t));
    void *result = NULL;
    ASSERT_EQ(park_task_result(t, &result), 0);
    ASSERT_EQ((intptr_t)result, PARK_BARRIER_SERIAL);
    ASSERT_EQ(atomic_load(&p.completions), 1);
    ASSERT_TRUE(pthread_equal(p.completed_on, pthread_self()));
    park_task_release(t);
}

/* The arrival that completes a phase allocates nothing: every phase's
 * gets the same shared, completed task (here while the last one is still
 * held, so a fresh allocation could not have reused its memory), whose
 * continuations still run on their pool. The others get tasks of their
 * own. */
TEST(barrier_async_arrivals_that_complete_phases_share_one_completed_task)
{
    park_pool_t *pool = pool_new(1);
    park_barrier_t b = PARK_BARRIER_INIT(2, NULL, NULL);
    park_task_t *waiting[2], *completing[2];
    for (int phase = 0; phase < 2; phase++) {
        waiting[phase] = not_null(park_barrier_arrive_and_wait_async(&b, pool));
        ASSERT_FALSE(park_task_done(waiting[phase]));
        in_release = true;
        completing[phase] = not_null(park_barrier_arrive_and_wait_async(&b, pool));
        in_release = false;
        void *result = NULL;
        ASSERT_EQ(park_task_result(completing[phase], &result), 0);
        ASSERT_EQ((intptr_t)result, PARK_BARRIER_SERIAL);
        ASSERT_EQ(park_task_wait(waiting[phase], &result), 0);
        ASSERT_TRUE(result == NULL);
    }
    ASSERT_TRUE(completing[0] == completing[1]);
    ASSERT_TRUE(waiting[0] != waiting[1]);
    struct cont c;
    then(completing[1], &c, pool);
    AWAIT(atomic_load(&c.runs) == 1);
    ASSERT_EQ(c.err, 0);
    ASSERT_EQ((intptr_t)c.result, PARK_BARRIER_SERIAL);
    ASSERT_EQ(park_task_cancel(completing[1]), EALREADY);
    for (int phase = 0; phase < 2; phase++) {
        park_task_release(waiting[phase]);
        park_task_release(completing[phase]);
    }
    ASSERT_EQ(park_barrier_destroy(&b), 0);
    park_pool_destroy(pool);
}

TEST(barrier_async_arrival_completes_when_the_phase_ends_and_never_on_the_completing_thread)
{
    park_pool_t *pool = pool_new(1);
    park_barrier_t b = PARK_BARRIER_INIT(2, NULL, NULL);
    park_task_t *t = not_null(park_barrier_arrive_and_wait_async(&b, pool));
    ASSERT_FALSE(park_task_done(t));
    ASSERT_EQ(park__wait_count(&b), 1);
    struct cont c = {.pool = pool};
    ASSERT_EQ(park_task_then(t, pool, cont_fn, &c), 0);
    in_release = true;
    ASSERT_EQ(park_barrier_arrive_and_wait(&b), PARK_BARRIER_SERIAL);
    in_release = false;
    void *result = (void *)1;
    ASSERT_EQ(park_task_wait(t, &result), 0);
    ASSERT_TRUE(result == NULL);
    AWAIT(atomic_load(&c.runs) == 1);
    ASSERT_EQ(c.err, 0);
    park_task_release(t);
    park_pool_destroy(pool);
}

TEST(barrier_async_and_blocking_arrivals_share_a_phase)
{
    park_pool_t *pool = pool_new(1);
    struct phases p;
    memset(&p, 0, sizeof p);
    park_barrier_t b = PARK_BARRIER_INIT(3, count_phase, &p);
    park_task_t *t = not_null(park_barrier_arrive_and_wait_async(&b, pool));
    struct participant w[1];
    test_threads_t *th[1];
    memset(w, 0, sizeof w);
    queue_participants(&b, &p, w, th, 1);
    park_task_t *last = not_null(park_barrier_arrive_and_wait_async(&b, pool));
    void *result = NULL;
    ASSERT_EQ(park_task_result(last, &result), 0); /* complete on return */
    ASSERT_EQ((intptr_t)result, PARK_BARRIER_SERIAL);
    ASSERT_EQ(park_task_wait(t, &result), 0);
    ASSERT_TRUE(result == NULL);
    join_all(th, 1);
    ASSERT_EQ(w[0].result, 0);
    ASSERT_EQ(atomic_load(&p.completions), 1);
    park_task_release(t);
    park_task_release(last);
    park_pool_destroy(pool);
}

TEST(barrier_cancelling_an_async_arrival_stops_the_wait_and_keeps_the_arrival)
{
    park_pool_t *pool = pool_new(1);
    struct phases p;
    memset(&p, 0, sizeof p);
    park_barrier_t b = PARK_BARRIER_INIT(2, count_phase, &p);
    park_task_t *t = not_null(park_barrier_arrive_and_wait_async(&b, pool));
    ASSERT_EQ(park_task_cancel(t), 0);
    ASSERT_EQ(park_task_wait(t, NULL), ECANCELED);
    ASSERT_EQ(park__wait_count(&b), 0);
    ASSERT_EQ(park_barrier_destroy(&b), 0);
    /* The cancelled arrival still counts: one more completes the phase. */
    ASSERT_EQ(park_barrier_arrive_and_wait(&b), PARK_BARRIER_SERIAL);
    ASSERT_EQ(atomic_load(&p.completions), 1);
    park_task_release(t);
    park_pool_destroy(pool);
}

TEST(barrier_dropping_a_pending_async_arrival_keeps_the_arrival)
{
    park_pool_t *pool = pool_new(1);
    park_barrier_t b = PARK_BARRIER_INIT(2, NULL, NULL);
    park_task_t *t = not_null(park_barrier_arrive_and_wait_async(&b, pool));
    park_task_release(t);
    ASSERT_EQ(park__wait_count(&b), 0);
    ASSERT_EQ(park_barrier_arrive_and_wait(&b), PARK_BARRIER_SERIAL);
    park_pool_destroy(pool);
}

TEST(barrier_cancelling_an_async_arrival_after_its_phase_ended_is_ealready)
{
    park_pool_t *pool = pool_new(1);
    park_barrier_t b = PARK_BARRIER_INIT(2, NULL, NULL);
    park_task_t *t = not_null(park_barrier_arrive_and_wait_async(&b, pool));
    ASSERT_EQ(park_barrier_arrive_and_wait(&b), PARK_BARRIER_SERIAL);
    ASSERT_EQ(park_task_cancel(t), EALREADY);
    ASSERT_EQ(park_task_wait(t, NULL), 0);
    park_task_release(t);
    park_pool_destroy(pool);
}

static const test_case_t tests[] = {
    TEST_ENTRY(barrier_async_arrival_that_completes_the_phase_is_complete_and_serial),
    TEST_ENTRY(barrier_async_arrivals_that_complete_phases_share_one_completed_task),
    TEST_ENTRY(
        barrier_async_arrival_completes_when_the_phase_ends_and_never_on_the_completing_thread),
    TEST_ENTRY(barrier_async_and_blocking_arrivals_share_a_phase),
    TEST_ENTRY(barrier_cancelling_an_async_arrival_stops_the_wait_and_keeps_the_arrival),
    TEST_ENTRY(barrier_dropping_a_pending_async_arrival_keeps_the_arrival),
    TEST_ENTRY(barrier_cancelling_an_async_arrival_after_its_phase_ended_is_ealready),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
