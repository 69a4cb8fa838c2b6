/* tests/unit/latch_async_test.c: park_latch_wait_async(_until)
 * (lib/latch_async.c), one behaviour per test; lined up as
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

/* ---- latch: asynchronous waits ------------------------------------------------------- */

TEST(latch_wait_async_on_a_released_latch_is_a_shared_completed_task)
{
    park_latch_t l = PARK_LATCH_INIT(0);
    park_task_t *t = not_null(park_latch_wait_async(&l, NULL));
    park_task_t *u = not_null(park_latch_wait_async(&l, NULL));
    ASSERT_TRUE(t == u);
    ASSERT_TRUE(park_task_done(t));
    ASSERT_EQ(park_task_result(t, NULL), 0);
    park_task_release(t);
    park_task_release(u);
}

TEST(latch_wait_async_completes_at_zero_and_never_on_the_counting_thread)
{
    park_pool_t *pool = pool_new(1);
    park_latch_t l = PARK_LATCH_INIT(2);
    park_task_t *t = not_null(park_latch_wait_async(&l, pool));
    ASSERT_EQ(park__wait_count(&l), 1);
    struct cont c = {.pool = pool};
    ASSERT_EQ(park_task_then(t, pool, cont_fn, &c), 0);
    ASSERT_EQ(park_latch_count_down(&l, 1), 0);
    ASSERT_FALSE(park_task_done(t));
    in_release = true;
    ASSERT_EQ(park_latch_count_down(&l, 1), 0);
    in_release = false;
    ASSERT_EQ(park_task_wait(t, NULL), 0);
    AWAIT(atomic_load(&c.runs) == 1);
    ASSERT_EQ(c.err, 0);
    park_task_release(t);
    park_pool_destroy(pool);
}

TEST(latch_release_completes_async_and_blocking_waiters_together)
{
    enum { N = 3 };
    park_pool_t *pool = pool_new(1);
    park_latch_t l = PARK_LATCH_INIT(1);
    park_task_t *t[N];
    for (int i = 0; i < N; i++)
        t[i] = not_null(park_latch_wait_async(&l, pool));
    struct latch_waiter w[1];
    test_threads_t *th[1];
    memset(w, 0, sizeof w);
    queue_latch_waiters(&l, w, th, 1);
    ASSERT_EQ(park_latch_count_down(&l, 1), 0);
    for (int i = 0; i < N; i++) {
        ASSERT_EQ(park_task_wait(t[i], NULL), 0);
        park_task_release(t[i]);
    }
    join_all(th, 1);
    park_pool_destroy(pool);
}

TEST(latch_cancelled_async_waiter_leaves_the_queue_and_the_count)
{
    park_pool_t *pool = pool_new(1);
    park_latch_t l = PARK_LATCH_INIT(1);
    park_task_t *t = not_null(park_latch_wait_async(&l, pool));
    ASSERT_EQ(park_task_cancel(t), 0);
    ASSERT_EQ(park_task_wait(t, NULL), ECANCELED);
    ASSERT_EQ(park__wait_count(&l), 0);
    ASSERT_EQ(park_latch_count(&l), 1);
    ASSERT_EQ(park_latch_destroy(&l), 0);
    park_task_release(t);
    park_pool_destroy(pool);
}

TEST(latch_cancel_after_the_release_is_ealready)
{
    park_pool_t *pool = pool_new(1);
    park_latch_t l = PARK_LATCH_INIT(1);
    park_task_t *t = not_null(park_latch_wait_async(&l, pool));
    ASSERT_EQ(park_latch_count_down(&l, 1), 0);
    ASSERT_EQ(park_task_cancel(t), EALREADY);
    ASSERT_EQ(park_task_wait(t, NULL), 0);
    park_task_release(t);
    park_pool_destroy(pool);
}

TEST(latch_dropping_a_pending_async_wait_cancels_it)
{
    park_pool_t *pool = pool_new(1);
    park_latch_t l = PARK_LATCH_INIT(1);
    park_task_t *t = not_null(park_latch_wait_async(&l, pool));
    park_task_release(t);
    ASSERT_EQ(park__wait_count(&l), 0);
    ASSERT_EQ(park_latch_count_down(&l, 1), 0);
    ASSERT_TRUE(park_latch_try_wait(&l));
    park_pool_destroy(pool);
}

TEST(latch_wait_async_until_a_passed_deadline_on_a_counting_latch_is_etimedout_at_once)
{
    park_pool_t *pool = pool_new(1);
    park_latch_t l = PARK_LATCH_INIT(1);
    park_task_t *t = not_null(park_latch_wait_async_until(&l, pool, park_now()));
    ASSERT_TRUE(park_task_done(t));
    ASSERT_EQ(park_task_result(t, NULL), ETIMEDOUT);
    ASSERT_EQ(park__wait_count(&l), 0);
    park_task_release(t);
    t = not_null(park_latch_wait_async_until(&l, pool, 0));
    ASSERT_EQ(park_task_result(t, NULL), ETIMEDOUT);
    park_task_release(t);
    ASSERT_EQ(park_latch_count_down(&l, 1), 0);
    t = not_null(park_latch_wait_async_until(&l, pool, 0)); /* released: passes */
    ASSERT_TRUE(park_task_done(t));
    ASSERT_EQ(park_task_result(t, NULL), 0);
    park_task_release(t);
    park_pool_destroy(pool);
}

TEST(latch_wait_async_until_a_near_deadline_is_etimedout_not_before_it)
{
    park_pool_t *pool = pool_new(1);
    park_latch_t l = PARK_LATCH_INIT(1);
    park_time_t deadline = park_deadline_in(5 * MS);
    park_task_t *t = not_null(park_latch_wait_async_until(&l, pool, deadline));
    ASSERT_EQ(park_task_wait(t, NULL), ETIMEDOUT);
    ASSERT_GE(park_now(), deadline);
    ASSERT_EQ(park__wait_count(&l), 0);
    ASSERT_EQ(park_latch_count(&l), 1);
    park_task_release(t);
    park_pool_destroy(pool);
}

TEST(latch_wait_async_until_passes_when_released_before_the_deadline)
{
    park_pool_t *pool = pool_new(1);
    park_latch_t l = PARK_LATCH_INIT(1);
    park_task_t *t = not_null(
        park_latch_wait_async_until(&l, pool, park_deadline_in(3600 * 1000 * (uint64_t)MS)));
    ASSERT_EQ(park_latch_count_down(&l, 1), 0);
    ASSERT_EQ(park_task_wait(t, NULL), 0);
    park_task_release(t);
    park_pool_destroy(pool);
}

TEST(latch_wait_async_until_with_a_deadline_and_no_pool_is_einval)
{
    park_latch_t l = PARK_LATCH_INIT(1);
    park_task_t *t = not_null(park_latch_wait_async_until(&l, NULL, park_deadline_in(MS)));
    ASSERT_TRUE(park_task_done(t));
    ASSERT_EQ(park_task_result(t, NULL), EINVAL);
    ASSERT_EQ(park__wait_count(&l), 0);
    park_task_release(t);
}

struct closing {
    park_pool_t *pool;
    park_latch_t l;
    int err;
};

static void closing_job(void *arg)
{
    struct closing *c = arg;
    AWAIT(park__pool_closing(c->pool));
    park_task_t *t = not_null(
        park_latch_wait_async_until(&c->l, c->pool, park_deadline_in(60000 * (uint64_t)MS)));
    ASSERT_TRUE(park_task_done(t));
    c->err = park_task_result(t, NULL);
    park_task_release(t);
}

TEST(latch_wait_async_until_on_a_pool_shutting_down_is_etimedout_at_once)
{
    struct closing c = {.pool = pool_new(1), .l = PARK_LATCH_INIT(1), .err = -1};
    ASSERT_EQ(park_pool_submit(c.pool, closing_job, &c), 0);
    park_pool_destroy(c.pool);
    ASSERT_EQ(c.err, ETIMEDOUT);
    ASSERT_EQ(park__wait_count(&c.l), 0);
}

static const test_case_t tests[] = {
    TEST_ENTRY(latch_wait_async_on_a_released_latch_is_a_shared_completed_task),
    TEST_ENTRY(latch_wait_async_completes_at_zero_and_never_on_the_counting_thread),
    TEST_ENTRY(latch_release_completes_async_and_blocking_waiters_together),
    TEST_ENTRY(latch_cancelled_async_waiter_leaves_the_queue_and_the_count),
    TEST_ENTRY(latch_cancel_after_the_release_is_ealready),
    TEST_ENTRY(latch_dropping_a_pending_async_wait_cancels_it),
    TEST_ENTRY(latch_wait_async_until_a_passed_deadline_on_a_counting_latch_is_etimedout_at_once),
    TEST_ENTRY(latch_wait_async_until_a_near_deadline_is_etimedout_not_before_it),
    TEST_ENTRY(latch_wait_async_until_passes_when_released_before_the_deadline),
    TEST_ENTRY(latch_wait_async_until_with_a_deadline_and_no_pool_is_einval),
    TEST_ENTRY(latch_wait_async_until_on_a_pool_shutting_down_is_etimedout_at_once),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
