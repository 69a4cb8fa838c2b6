/* tests/unit/event_async_test.c: park_event_wait_async(_until)
 * (lib/event_async.c), one behaviour per test. Asynchronous waits are
 * lined up as tests/unit/event_test.h says, and their continuations check
 * a thread-local flag that the test sets around the call that sets the
 * event. */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include <park/park.h>

#include "pool/pool.h" /* white box: park__pool_closing */
#include "wait/wait.h"

#include "async_support.h"
#include "event_test.h"
#include "test.h"

static void set_outside_continuations(park_event_t *e)
{
    in_release = true;
    park_event_set(e);
    in_release = false;
}

/* ---- asynchronous waits --------------------------------------------------------------- */

TEST(event_wait_async_on_a_set_event_is_a_shared_completed_task)
{
    park_event_t m = PARK_EVENT_INIT_MANUAL(true), a = PARK_EVENT_INIT_AUTO(true);
    park_task_t *tm = not_null(park_event_wait_async(&m, NULL));
    park_task_t *ta = not_null(park_event_wait_async(&a, NULL));
    ASSERT_TRUE(tm == ta); /* the one shared task */
    ASSERT_TRUE(park_task_done(tm));
    ASSERT_EQ(park_task_result(tm, NULL), 0);
    ASSERT_TRUE(park_event_is_set(&m));
    ASSERT_FALSE(park_event_is_set(&a)); /* consumed */
    park_task_release(tm);
    park_task_release(ta);
}

TEST(event_wait_async_completes_when_set_and_never_on_the_setting_thread)
{
    for (int kind = 0; kind < 2; kind++) {
        park_pool_t *pool = pool_new(1);
        park_event_t e;
        park_event_init(&e, kind == 1, false);
        park_task_t *t = not_null(park_event_wait_async(&e, pool));
        ASSERT_FALSE(park_task_done(t));
        ASSERT_EQ(park__wait_count(&e), 1);
        struct cont c = {.pool = pool};
        ASSERT_EQ(park_task_then(t, pool, cont_fn, &c), 0);
        set_outside_continuations(&e);
        ASSERT_EQ(park_task_wait(t, NULL), 0);
        AWAIT(atomic_load(&c.runs) == 1);
        ASSERT_EQ(c.err, 0);
        ASSERT_EQ(park_event_is_set(&e), kind == 1);
        park_task_release(t);
        park_pool_destroy(pool);
    }
}

TEST(event_manual_set_completes_every_async_and_blocking_waiter)
{
    enum { N = 3 };
    park_pool_t *pool = pool_new(1);
    park_event_t e = PARK_EVENT_INIT_MANUAL(false);
    park_task_t *t[N];
    for (int i = 0; i < N; i++)
        t[i] = not_null(park_event_wait_async(&e, pool));
    struct waiter w[1];
    test_threads_t *th[1];
    memset(w, 0, sizeof w);
    queue_waiters(&e, w, th, 1);
    ASSERT_EQ(park__wait_count(&e), N + 1);
    park_event_set(&e);
    for (int i = 0; i < N; i++) {
        ASSERT_EQ(park_task_wait(t[i], NULL), 0);
        park_task_release(t[i]);
    }
    join_all(th, 1);
    ASSERT_EQ(park__wait_count(&e), 0);
    park_pool_destroy(pool);
}

TEST(event_auto_sets_go_to_thread_and_task_waiters_in_arrival_order)
{
    park_pool_t *pool = pool_new(1);
    park_event_t e = PARK_EVENT_INIT_AUTO(false);
    park_task_t *t0 = not_null(park_event_wait_async(&e, pool));
    struct waiter w[1];
    test_threads_t *th[1];
    memset(w, 0, sizeof w);
    queue_waiters(&e, w, th, 1);
    park_task_t *t2 = not_null(park_event_wait_async(&e, pool));

    park_event_set(&e);
    ASSERT_EQ(park_task_wait(t0, NULL), 0);
    ASSERT_FALSE(atomic_load(&w[0].done));
    ASSERT_FALSE(park_task_done(t2));
    park_event_set(&e);
    join_all(th, 1);
    ASSERT_FALSE(park_task_done(t2));
    park_event_set(&e);
    ASSERT_EQ(park_task_wait(t2, NULL), 0);
    ASSERT_FALSE(park_event_is_set(&e));
    park_task_release(t0);
    park_task_release(t2);
    park_pool_destroy(pool);
}

TEST(event_auto_cancelled_async_waiter_consumes_no_set)
{
    park_pool_t *pool = pool_new(1);
    park_event_t e = PARK_EVENT_INIT_AUTO(false);
    park_task_t *t = not_null(park_event_wait_async(&e, pool));
    ASSERT_EQ(park_task_cancel(t), 0);
    ASSERT_EQ(park_task_wait(t, NULL), ECANCELED);
    ASSERT_EQ(park__wait_count(&e), 0);
    park_event_set(&e);
    ASSERT_TRUE(park_event_is_set(&e)); /* stays in the event */
    park_task_release(t);
    ASSERT_TRUE(park_event_is_set(&e));
    park_pool_destroy(pool);
}

TEST(event_auto_cancel_after_the_set_is_ealready_and_the_task_keeps_it)
{
    park_pool_t *pool = pool_new(1);
    park_event_t e = PARK_EVENT_INIT_AUTO(false);
    park_task_t *t = not_null(park_event_wait_async(&e, pool));
    park_event_set(&e);
    ASSERT_EQ(park_task_cancel(t), EALREADY);
    ASSERT_EQ(park_task_wait(t, NULL), 0);
    ASSERT_FALSE(park_event_is_set(&e));
    park_task_release(t); /* observed: the set stays consumed */
    ASSERT_FALSE(park_event_is_set(&e));
    park_pool_destroy(pool);
}

TEST(event_auto_dropping_a_pending_async_wait_cancels_it)
{
    park_pool_t *pool = pool_new(1);
    park_event_t e = PARK_EVENT_INIT_AUTO(false);
    park_task_t *t = not_null(park_event_wait_async(&e, pool));
    park_task_release(t);
    ASSERT_EQ(park__wait_count(&e), 0);
    park_event_set(&e);
    ASSERT_TRUE(park_event_is_set(&e));
    park_pool_destroy(pool);
}

/* A set handed to a task that nobody holds any more, and whose outcome
 * nobody saw, goes back to the event. */
TEST(event_auto_dropping_an_unobserved_grant_sets_the_event_again)
{
    park_pool_t *pool = pool_new(1);
    park_event_t e = PARK_EVENT_INIT_AUTO(false);
    park_task_t *t = not_null(park_event_wait_async(&e, pool));
    park_event_set(&e);
    ASSERT_FALSE(park_event_is_set(&e));
    park_task_release(t);
    ASSERT_TRUE(park_event_is_set(&e));
    park_pool_destroy(pool);
}

TEST(event_manual_dropping_an_unobserved_grant_leaves_the_event_as_it_is)
{
    park_pool_t *pool = pool_new(1);
    park_event_t e = PARK_EVENT_INIT_MANUAL(false);
    park_task_t *t = not_null(park_event_wait_async(&e, pool));
    park_event_set(&e);
    park_event_reset(&e);
    park_task_release(t);
    ASSERT_FALSE(park_event_is_set(&e));
    park_pool_destroy(pool);
}

TEST(event_wait_async_until_a_passed_deadline_passes_a_set_event)
{
    park_pool_t *pool = pool_new(1);
    park_event_t e = PARK_EVENT_INIT_AUTO(true);
    park_task_t *t = not_null(park_event_wait_async_until(&e, pool, 0));
    ASSERT_TRUE(park_task_done(t));
    ASSERT_EQ(park_task_result(t, NULL), 0);
    ASSERT_FALSE(park_event_is_set(&e));
    park_task_release(t);
    park_pool_destroy(pool);
}

TEST(event_wait_async_until_a_passed_deadline_on_an_event_not_set_is_etimedout_at_once)
{
    park_pool_t *pool = pool_new(1);
    park_event_t e = PARK_EVENT_INIT_MANUAL(false);
    park_task_t *t = not_null(park_event_wait_async_until(&e, pool, park_now()));
    ASSERT_TRUE(park_task_done(t));
    ASSERT_EQ(park_task_result(t, NULL), ETIMEDOUT);
    ASSERT_EQ(park__wait_count(&e), 0);
    park_task_release(t);
    park_pool_destroy(pool);
}

TEST(event_wait_async_until_a_near_deadline_is_etimedout_not_before_it_and_consumes_nothing)
{
    park_pool_t *pool = pool_new(1);
    park_event_t e = PARK_EVENT_INIT_AUTO(false);
    park_time_t deadline = park_deadline_in(5 * MS);
    park_task_t *t = not_null(park_event_wait_async_until(&e, pool, deadline));
    ASSERT_EQ(park_task_wait(t, NULL), ETIMEDOUT);
    ASSERT_GE(park_now(), deadline);
    ASSERT_EQ(park__wait_count(&e), 0);
    park_event_set(&e);
    ASSERT_TRUE(park_event_is_set(&e));
    park_task_release(t);
    park_pool_destroy(pool);
}

TEST(event_wait_async_until_passes_when_set_before_the_deadline)
{
    park_pool_t *pool = pool_new(1);
    park_event_t e = PARK_EVENT_INIT_AUTO(false);
    park_task_t *t = not_null(
        park_event_wait_async_until(&e, pool, park_deadline_in(3600 * 1000 * (uint64_t)MS)));
    park_event_set(&e);
    ASSERT_EQ(park_task_wait(t, NULL), 0);
    ASSERT_FALSE(park_event_is_set(&e));
    park_task_release(t);
    park_pool_destroy(pool);
}

TEST(event_wait_async_until_with_a_deadline_and_no_pool_is_einval_and_consumes_nothing)
{
    park_event_t e = PARK_EVENT_INIT_AUTO(false);
    park_task_t *t = not_null(park_event_wait_async_until(&e, NULL, park_deadline_in(MS)));
    ASSERT_TRUE(park_task_done(t));
    ASSERT_EQ(park_task_result(t, NULL), EINVAL);
    ASSERT_EQ(park__wait_count(&e), 0);
    park_task_release(t);
}

TEST(event_wait_async_until_forever_needs_no_pool)
{
    park_event_t e = PARK_EVENT_INIT_AUTO(false);
    park_task_t *t = not_null(park_event_wait_async_until(&e, NULL, PARK_FOREVER));
    ASSERT_FALSE(park_task_done(t));
    park_event_set(&e);
    ASSERT_EQ(park_task_wait(t, NULL), 0);
    ASSERT_FALSE(park_event_is_set(&e));
    park_task_release(t);
}

/* A timed wait made from a job that runs during park_pool_destroy's drain:
 * the closing pool's timer cannot keep its deadline. */
struct closing {
    park_pool_t *pool;
    park_event_t e;
    int err;
};

static void closing_job(void *arg)
{
    struct closing *c = arg;
    AWAIT(park__pool_closing(c->pool));
    park_task_t *t = not_null(
        park_event_wait_async_until(&c->e, c->pool, park_deadline_in(60000 * (uint64_t)MS)));
    ASSERT_TRUE(park_task_done(t));
    c->err = park_task_result(t, NULL);
    park_task_release(t);
}

TEST(event_wait_async_until_on_a_pool_shutting_down_is_etimedout_at_once_and_consumes_nothing)
{
    struct closing c = {.pool = pool_new(1), .e = PARK_EVENT_INIT_AUTO(false), .err = -1};
    ASSERT_EQ(park_pool_submit(c.pool, closing_job, &c), 0);
    park_pool_destroy(c.pool);
    ASSERT_EQ(c.err, ETIMEDOUT);
    ASSERT_EQ(park__wait_count(&c.e), 0);
    park_event_set(&c.e);
    ASSERT_TRUE(park_event_is_set(&c.e));
}

static const test_case_t tests[] = {
    TEST_ENTRY(event_wait_async_on_a_set_event_is_a_shared_completed_task),
    TEST_ENTRY(event_wait_async_completes_when_set_and_never_on_the_setting_thread),
    TEST_ENTRY(event_manual_set_completes_every_async_and_blocking_waiter),
    TEST_ENTRY(event_auto_sets_go_to_thread_and_task_waiters_in_arrival_order),
    TEST_ENTRY(event_auto_cancelled_async_waiter_consumes_no_set),
    TEST_ENTRY(event_auto_cancel_after_the_set_is_ealready_and_the_task_keeps_it),
    TEST_ENTRY(event_auto_dropping_a_pending_async_wait_cancels_it),
    TEST_ENTRY(event_auto_dropping_an_unobserved_grant_sets_the_event_again),
    TEST_ENTRY(event_manual_dropping_an_unobserved_grant_leaves_the_event_as_it_is),
    TEST_ENTRY(event_wait_async_until_a_passed_deadline_passes_a_set_event),
    TEST_ENTRY(event_wait_async_until_a_passed_deadline_on_an_event_not_set_is_etimedout_at_once),
    TEST_ENTRY(
        event_wait_async_until_a_near_deadline_is_etimedout_not_before_it_and_consumes_nothing),
    TEST_ENTRY(event_wait_async_until_passes_when_set_before_the_deadline),
    TEST_ENTRY(event_wait_async_until_with_a_deadline_and_no_pool_is_einval_and_consumes_nothing),
    TEST_ENTRY(event_wait_async_until_forever_needs_no_pool),
    TEST_ENTRY(
        event_wait_async_until_on_a_pool_shutting_down_is_etimedout_at_once_and_consumes_nothing),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
