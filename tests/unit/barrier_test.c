/* tests/unit/barrier_test.c: park_latch and park_barrier, one behaviour
 * per test; their asynchronous wait and arrival: latch_async_test.c and
 * barrier_async_test.c. Lined up as tests/unit/barrier_test.h says. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <park/park.h>

#include "wait/wait.h"

#include "barrier_test.h"
#include "test.h"

/* ---- latch: threads ------------------------------------------------------------------ */

static int latch_done(struct latch_waiter *w, int n)
{
    int done = 0;
    for (int i = 0; i < n; i++)
        done += atomic_load(&w[i].done);
    return done;
}

/* ---- latch: initialisation ------------------------------------------------------------- */

TEST(latch_size_is_4_bytes)
{
    ASSERT_EQ(sizeof(park_latch_t), 4);
}

TEST(latch_static_initialiser_sets_the_count)
{
    park_latch_t l = PARK_LATCH_INIT(3);
    ASSERT_EQ(park_latch_count(&l), 3);
    ASSERT_FALSE(park_latch_try_wait(&l));
    ASSERT_EQ(park_latch_count_down(&l, 3), 0);
    ASSERT_TRUE(park_latch_try_wait(&l));
    park_latch_t m = PARK_LATCH_INIT(PARK_LATCH_MAX);
    ASSERT_EQ(park_latch_count(&m), PARK_LATCH_MAX);
}

TEST(latch_zeroed_is_released)
{
    park_latch_t l;
    memset(&l, 0, sizeof l);
    ASSERT_TRUE(park_latch_try_wait(&l));
    park_latch_wait(&l);
    ASSERT_EQ(park_latch_wait_until(&l, 0), 0);
    ASSERT_EQ(park_latch_destroy(&l), 0);
}

TEST(latch_init_sets_the_count)
{
    park_latch_t l;
    memset(&l, 0xa5, sizeof l);
    ASSERT_EQ(park_latch_init(&l, 2), 0);
    ASSERT_EQ(park_latch_count(&l), 2);
    ASSERT_EQ(park_latch_init(&l, 0), 0);
    ASSERT_TRUE(park_latch_try_wait(&l));
    ASSERT_EQ(park_latch_init(&l, PARK_LATCH_MAX), 0);
    ASSERT_EQ(park_latch_count(&l), PARK_LATCH_MAX);
    ASSERT_EQ(park_latch_count_down(&l, PARK_LATCH_MAX), 0);
    ASSERT_TRUE(park_latch_try_wait(&l));
}

TEST(latch_init_above_max_is_einval_and_changes_nothing)
{
    park_latch_t l = PARK_LATCH_INIT(5);
    ASSERT_EQ(park_latch_init(&l, PARK_LATCH_MAX + 1u), EINVAL);
    ASSERT_EQ(park_latch_init(&l, UINT32_MAX), EINVAL);
    ASSERT_EQ(park_latch_count(&l), 5);
}

/* ---- latch: counting down ------------------------------------------------------------ */

TEST(latch_count_down_to_zero_releases_every_waiter)
{
    enum { N = 3 };
    park_latch_t l = PARK_LATCH_INIT(3);
    struct latch_waiter w[N];
    test_threads_t *t[N];
    memset(w, 0, sizeof w);
    queue_latch_waiters(&l, w, t, N);
    ASSERT_EQ(park_latch_count_down(&l, 1), 0);
    ASSERT_EQ(park_latch_count_down(&l, 1), 0);
    ASSERT_EQ(park_latch_count(&l), 1);
    ASSERT_EQ(park__wait_count(&l), N); /* still waiting */
    ASSERT_EQ(latch_done(w, N), 0);
    ASSERT_EQ(park_latch_count_down(&l, 1), 0);
    join_all(t, N);
    ASSERT_EQ(latch_done(w, N), N);
    ASSERT_TRUE(park_latch_try_wait(&l));
    ASSERT_EQ(park__wait_count(&l), 0);
    ASSERT_EQ(park_latch_destroy(&l), 0);
}

TEST(latch_count_down_beyond_the_count_is_einval_and_counts_nothing)
{
    park_latch_t l = PARK_LATCH_INIT(2);
    ASSERT_EQ(park_latch_count_down(&l, 3), EINVAL);
    ASSERT_EQ(park_latch_count_down(&l, UINT32_MAX), EINVAL);
    ASSERT_EQ(park_latch_count(&l), 2);
    ASSERT_EQ(park_latch_count_down(&l, 2), 0);
    ASSERT_EQ(park_latch_count_down(&l, 1), EINVAL);
    ASSERT_TRUE(park_latch_try_wait(&l));
}

TEST(latch_count_down_beyond_the_count_with_waiters_is_einval_and_releases_nobody)
{
    park_latch_t l = PARK_LATCH_INIT(2);
    struct latch_waiter w[1];
    test_threads_t *t[1];
    memset(w, 0, sizeof w);
    queue_latch_waiters(&l, w, t, 1);
    ASSERT_EQ(park_latch_count_down(&l, 3), EINVAL);
    ASSERT_EQ(park_latch_count(&l), 2);
    ASSERT_EQ(park__wait_count(&l), 1);
    ASSERT_FALSE(atomic_load(&w[0].done));
    ASSERT_EQ(park_latch_count_down(&l, 2), 0);
    join_all(t, 1);
}

TEST(latch_count_down_of_zero_counts_nothing)
{
    park_latch_t l = PARK_LATCH_INIT(1);
    ASSERT_EQ(park_latch_count_down(&l, 0), 0);
    ASSERT_EQ(park_latch_count(&l), 1);
    struct latch_waiter w[1];
    test_threads_t *t[1];
    memset(w, 0, sizeof w);
    queue_latch_waiters(&l, w, t, 1);
    ASSERT_EQ(park_latch_count_down(&l, 0), 0); /* with a waiter: through the lock */
    ASSERT_EQ(park_latch_count(&l), 1);
    ASSERT_EQ(park__wait_count(&l), 1);
    ASSERT_EQ(park_latch_count_down(&l, 1), 0);
    join_all(t, 1);
    ASSERT_EQ(park_latch_count_down(&l, 0), 0); /* on a released latch */
    ASSERT_TRUE(park_latch_try_wait(&l));
}

TEST(latch_count_down_by_more_than_one_at_a_time)
{
    park_latch_t l = PARK_LATCH_INIT(10);
    struct latch_waiter w[1];
    test_threads_t *t[1];
    memset(w, 0, sizeof w);
    queue_latch_waiters(&l, w, t, 1);
    ASSERT_EQ(park_latch_count_down(&l, 4), 0);
    ASSERT_EQ(park_latch_count(&l), 6);
    ASSERT_EQ(park_latch_count_down(&l, 6), 0);
    join_all(t, 1);
    ASSERT_TRUE(park_latch_try_wait(&l));
}

TEST(latch_try_wait_is_false_until_the_count_reaches_zero)
{
    park_latch_t l = PARK_LATCH_INIT(2);
    ASSERT_FALSE(park_latch_try_wait(&l));
    ASSERT_EQ(park_latch_count_down(&l, 1), 0);
    ASSERT_FALSE(park_latch_try_wait(&l));
    ASSERT_EQ(park_latch_count_down(&l, 1), 0);
    ASSERT_TRUE(park_latch_try_wait(&l));
    ASSERT_TRUE(park_latch_try_wait(&l)); /* for good */
}

/* ---- latch: timed waits ------------------------------------------------------------- */

TEST(latch_wait_until_a_passed_deadline_passes_a_released_latch)
{
    park_latch_t l = PARK_LATCH_INIT(0);
    ASSERT_EQ(park_latch_wait_until(&l, 0), 0);
    ASSERT_EQ(park_latch_wait_until(&l, park_now()), 0);
}

TEST(latch_wait_until_a_passed_deadline_on_a_counting_latch_times_out_at_once)
{
    park_latch_t l = PARK_LATCH_INIT(1);
    park_time_t start = park_now();
    ASSERT_EQ(park_latch_wait_until(&l, 0), ETIMEDOUT);
    ASSERT_EQ(park_latch_wait_until(&l, start), ETIMEDOUT);
    ASSERT_LT(park_now() - start, LATE_NS);
    ASSERT_EQ(park__wait_count(&l), 0);
    ASSERT_EQ(park_latch_count(&l), 1);
    ASSERT_EQ(park_latch_destroy(&l), 0);
}

TEST(latch_wait_until_a_near_deadline_times_out_not_before_it)
{
    park_latch_t l = PARK_LATCH_INIT(1);
    for (int i = 0; i < 5; i++) {
        park_time_t deadline = park_deadline_in((uint64_t)(i + 1) * MS);
        ASSERT_EQ(park_latch_wait_until(&l, deadline), ETIMEDOUT);
        park_time_t now = park_now();
        ASSERT_GE(now, deadline);
        ASSERT_LT(now - deadline, LATE_NS);
    }
    ASSERT_EQ(park__wait_count(&l), 0);
    ASSERT_EQ(park_latch_count_down(&l, 1), 0);
    ASSERT_TRUE(park_latch_try_wait(&l));
}

TEST(latch_wait_until_passes_when_released_before_the_deadline)
{
    park_latch_t l = PARK_LATCH_INIT(1);
    struct latch_waiter w[1] = {{.call = LATCH_WAIT_UNTIL, .timeout_ns = HANG_NS}};
    test_threads_t *t[1];
    queue_latch_waiters(&l, w, t, 1);
    ASSERT_EQ(park_latch_count_down(&l, 1), 0);
    join_all(t, 1);
    ASSERT_EQ(w[0].result, 0);
}

TEST(latch_timed_out_waiter_leaves_the_others_waiting_and_the_count_intact)
{
    park_latch_t l = PARK_LATCH_INIT(2);
    /* The timed one queues last, so that the others are queued before
     * its deadline. */
    struct latch_waiter w[3] = {{.call = LATCH_WAIT},
                                {.call = LATCH_WAIT},
                                {.call = LATCH_WAIT_UNTIL, .timeout_ns = 50 * MS}};
    test_threads_t *t[3];
    queue_latch_waiters(&l, w, t, 3);
    test_threads_join(t[2]);
    ASSERT_EQ(w[2].result, ETIMEDOUT);
    ASSERT_EQ(park__wait_count(&l), 2);
    ASSERT_EQ(park_latch_count(&l), 2);
    ASSERT_EQ(park_latch_count_down(&l, 2), 0);
    test_threads_join(t[0]);
    test_threads_join(t[1]);
    ASSERT_EQ(park__wait_count(&l), 0);
}

/* ---- latch: arrive_and_wait ---------------------------------------------------------- */

TEST(latch_arrive_and_wait_counts_down_then_waits_for_the_rest)
{
    park_latch_t l = PARK_LATCH_INIT(3);
    struct latch_waiter w[2] = {{.call = LATCH_ARRIVE_AND_WAIT, .n = 1},
                                {.call = LATCH_ARRIVE_AND_WAIT, .n = 1}};
    test_threads_t *t[2];
    queue_latch_waiters(&l, w, t, 2);
    ASSERT_EQ(park_latch_count(&l), 1);
    ASSERT_EQ(latch_done(w, 2), 0);
    /* The last arrival reaches zero and returns without waiting. */
    ASSERT_EQ(park_latch_arrive_and_wait(&l, 1), 0);
    join_all(t, 2);
    ASSERT_EQ(w[0].result, 0);
    ASSERT_EQ(w[1].result, 0);
}

TEST(latch_arrive_and_wait_beyond_the_count_is_einval_and_does_not_wait)
{
    park_latch_t l = PARK_LATCH_INIT(1);
    ASSERT_EQ(park_latch_arrive_and_wait(&l, 2), EINVAL);
    ASSERT_EQ(park_latch_count(&l), 1);
    ASSERT_EQ(park__wait_count(&l), 0);
}

/* ---- latch: destroy ----------------------------------------------------------------- */

TEST(latch_destroy_without_waiters_returns_zero)
{
    park_latch_t l = PARK_LATCH_INIT(4);
    ASSERT_EQ(park_latch_destroy(&l), 0);
}

TEST(latch_destroy_of_null_returns_zero)
{
    ASSERT_EQ(park_latch_destroy(NULL), 0);
}

TEST(latch_destroy_with_a_waiter_is_ebusy_and_keeps_it_usable)
{
    park_latch_t l = PARK_LATCH_INIT(1);
    struct latch_waiter w[1];
    test_threads_t *t[1];
    memset(w, 0, sizeof w);
    queue_latch_waiters(&l, w, t, 1);
    ASSERT_EQ(park_latch_destroy(&l), EBUSY);
    ASSERT_EQ(park_latch_count_down(&l, 1), 0);
    join_all(t, 1);
    ASSERT_EQ(park_latch_destroy(&l), 0);
}

/* ---- barrier: initialisation --------------------------------------------------------- */

TEST(barrier_size_is_24_bytes)
{
    ASSERT_EQ(sizeof(park_barrier_t), 24);
}

TEST(barrier_init_with_zero_or_above_max_is_einval_and_changes_nothing)
{
    park_barrier_t b = PARK_BARRIER_INIT(1, NULL, NULL);
    park_barrier_t before = b;
    ASSERT_EQ(park_barrier_init(&b, 0, NULL, NULL), EINVAL);
    ASSERT_EQ(park_barrier_init(&b, PARK_BARRIER_MAX + 1u, NULL, NULL), EINVAL);
    ASSERT_EQ(park_barrier_init(&b, UINT32_MAX, NULL, NULL), EINVAL);
    ASSERT_EQ(memcmp(&b, &before, sizeof b), 0);
    ASSERT_EQ(park_barrier_arrive_and_wait(&b), PARK_BARRIER_SERIAL);
}

TEST(barrier_init_accepts_max)
{
    park_barrier_t b;
    ASSERT_EQ(park_barrier_init(&b, PARK_BARRIER_MAX, NULL, NULL), 0);
    ASSERT_EQ(park_barrier_destroy(&b), 0);
}

TEST(barrier_serial_is_negative_so_never_an_errno_value)
{
    ASSERT_LT(PARK_BARRIER_SERIAL, 0);
}

TEST(barrier_static_initialiser_sets_the_count_and_the_completion)
{
    struct phases p;
    memset(&p, 0, sizeof p);
    park_barrier_t b = PARK_BARRIER_INIT(1, count_phase, &p);
    ASSERT_EQ(park_barrier_arrive_and_wait(&b), PARK_BARRIER_SERIAL);
    ASSERT_EQ(atomic_load(&p.completions), 1);
}

/* ---- barrier: phases -------------------------------------------------------------- */

TEST(barrier_of_one_is_serial_in_every_phase_and_runs_the_completion_each_time)
{
    struct phases p;
    memset(&p, 0, sizeof p);
    park_barrier_t b;
    ASSERT_EQ(park_barrier_init(&b, 1, count_phase, &p), 0);
    for (unsigned i = 1; i <= 5; i++) {
        ASSERT_EQ(park_barrier_arrive_and_wait(&b), PARK_BARRIER_SERIAL);
        ASSERT_EQ(atomic_load(&p.completions), i);
        ASSERT_TRUE(pthread_equal(p.completed_on, pthread_self()));
    }
}

TEST(barrier_releases_nobody_until_the_last_arrives)
{
    enum { N = 3 };
    struct phases p;
    memset(&p, 0, sizeof p);
    park_barrier_t b;
    ASSERT_EQ(park_barrier_init(&b, N + 1, count_phase, &p), 0);
    struct participant w[N];
    test_threads_t *t[N];
    memset(w, 0, sizeof w);
    queue_participants(&b, &p, w, t, N);
    test_sleep_ns(2 * MS);
    for (int i = 0; i < N; i++)
        ASSERT_FALSE(atomic_load(&w[i].done));
    ASSERT_EQ(atomic_load(&p.completions), 0);
    ASSERT_EQ(park_barrier_arrive_and_wait(&b), PARK_BARRIER_SERIAL);
    join_all(t, N);
    for (int i = 0; i < N; i++)
        ASSERT_EQ(w[i].result, 0);
    ASSERT_EQ(atomic_load(&p.completions), 1);
    ASSERT_EQ(park__wait_count(&b), 0);
    ASSERT_EQ(park_barrier_destroy(&b), 0);
}

/* The last arrival runs the completion, on its own thread, before any
 * waiter returns; it is the serial one. */
TEST(barrier_completion_runs_on_the_completing_thread_before_anyone_is_released)
{
    enum { N = 3 };
    struct phases p;
    memset(&p, 0, sizeof p);
    park_barrier_t b;
    ASSERT_EQ(park_barrier_init(&b, N, count_phase, &p), 0);
    struct participant w[N];
    test_threads_t *t[N];
    memset(w, 0, sizeof w);
    queue_participants(&b, &p, w, t, N - 1);
    w[N - 1].b = &b; /* the last: it completes the phase */
    w[N - 1].p = &p;
    t[N - 1] = test_threads_start(1, participant_main, &w[N - 1], 0);
    join_all(t, N);
    ASSERT_EQ(atomic_load(&p.completions), 1);
    ASSERT_EQ(p.returned_at_completion, 0);
    ASSERT_TRUE(pthread_equal(p.completed_on, w[N - 1].self));
    ASSERT_EQ(w[N - 1].result, PARK_BARRIER_SERIAL);
    ASSERT_EQ(w[0].result, 0);
    ASSERT_EQ(w[1].result, 0);
}

TEST(barrier_without_completion_releases_the_phase)
{
    park_barrier_t b;
    ASSERT_EQ(park_barrier_init(&b, 2, NULL, NULL), 0);
    struct participant w[1];
    test_threads_t *t[1];
    memset(w, 0, sizeof w);
    queue_participants(&b, NULL, w, t, 1);
    ASSERT_EQ(park_barrier_arrive_and_wait(&b), PARK_BARRIER_SERIAL);
    join_all(t, 1);
    ASSERT_EQ(w[0].result, 0);
}

/* ---- barrier: arrive_and_drop ------------------------------------------------------- */

TEST(barrier_arrive_and_drop_counts_for_this_phase_and_lowers_the_next)
{
    struct phases p;
    memset(&p, 0, sizeof p);
    park_barrier_t b;
    ASSERT_EQ(park_barrier_init(&b, 3, count_phase, &p), 0);
    struct participant w[1];
    test_threads_t *t[1];
    memset(w, 0, sizeof w);
    queue_participants(&b, &p, w, t, 1);
    ASSERT_EQ(park_barrier_arrive_and_drop(&b), 0); /* 1 of 3 left */
    ASSERT_FALSE(atomic_load(&w[0].done));
    ASSERT_EQ(park_barrier_arrive_and_wait(&b), PARK_BARRIER_SERIAL);
    join_all(t, 1);
    /* Later phases expect 2. */
    queue_participants(&b, &p, w, t, 1);
    ASSERT_EQ(park_barrier_arrive_and_wait(&b), PARK_BARRIER_SERIAL);
    join_all(t, 1);
    ASSERT_EQ(atomic_load(&p.completions), 2);
}

TEST(barrier_arrive_and_drop_that_completes_the_phase_is_serial_and_releases_it)
{
    struct phases p;
    memset(&p, 0, sizeof p);
    park_barrier_t b;
    ASSERT_EQ(park_barrier_init(&b, 2, count_phase, &p), 0);
    struct participant w[1];
    test_threads_t *t[1];
    memset(w, 0, sizeof w);
    queue_participants(&b, &p, w, t, 1);
    ASSERT_EQ(park_barrier_arrive_and_drop(&b), PARK_BARRIER_SERIAL);
    ASSERT_EQ(atomic_load(&p.completions), 1);
    ASSERT_TRUE(pthread_equal(p.completed_on, pthread_self()));
    join_all(t, 1);
    ASSERT_EQ(w[0].result, 0);
    /* The one left is alone from now on. */
    ASSERT_EQ(park_barrier_arrive_and_wait(&b), PARK_BARRIER_SERIAL);
    ASSERT_EQ(atomic_load(&p.completions), 2);
}

/* ---- barrier: misuse ----------------------------------------------------------------- */

static void arrive_at_zeroed_barrier(void *arg)
{
    (void)arg;
    park_barrier_t b;
    memset(&b, 0, sizeof b);
    (void)park_barrier_arrive_and_wait(&b);
}

static void drop_everyone_then_arrive(void *arg)
{
    (void)arg;
    park_barrier_t b;
    ASSERT_EQ(park_barrier_init(&b, 1, NULL, NULL), 0);
    ASSERT_EQ(park_barrier_arrive_and_drop(&b), PARK_BARRIER_SERIAL);
    (void)park_barrier_arrive_and_drop(&b);
}

static park_barrier_t reentered;

static void arrive_again(void *arg)
{
    (void)arg;
    (void)park_barrier_arrive_and_wait(&reentered);
}

static void arrive_from_the_completion(void *arg)
{
    (void)arg;
    ASSERT_EQ(park_barrier_init(&reentered, 1, arrive_again, NULL), 0);
    (void)park_barrier_arrive_and_wait(&reentered);
}

TEST(barrier_arrival_beyond_the_phase_count_aborts_with_a_message)
{
    test_expect_abort(arrive_at_zeroed_barrier, NULL, "park_barrier_arrive_and_wait(");
    test_expect_abort(arrive_at_zeroed_barrier, NULL, "more arrivals than the phase expects");
    test_expect_abort(drop_everyone_then_arrive, NULL, "park_barrier_arrive_and_drop(");
    test_expect_abort(arrive_from_the_completion, NULL, "more arrivals than the phase expects");
}

/* ---- barrier: destroy ---------------------------------------------------------------- */

TEST(barrier_destroy_without_waiters_returns_zero)
{
    park_barrier_t b = PARK_BARRIER_INIT(2, NULL, NULL);
    ASSERT_EQ(park_barrier_destroy(&b), 0);
}

TEST(barrier_destroy_of_null_returns_zero)
{
    ASSERT_EQ(park_barrier_destroy(NULL), 0);
}

TEST(barrier_destroy_with_a_waiter_is_ebusy_and_keeps_it_usable)
{
    park_barrier_t b = PARK_BARRIER_INIT(2, NULL, NULL);
    struct participant w[1];
    test_threads_t *t[1];
    memset(w, 0, sizeof w);
    queue_participants(&b, NULL, w, t, 1);
    ASSERT_EQ(park_barrier_destroy(&b), EBUSY);
    ASSERT_EQ(park_barrier_arrive_and_wait(&b), PARK_BARRIER_SERIAL);
    join_all(t, 1);
    ASSERT_EQ(park_barrier_destroy(&b), 0);
}

static const test_case_t tests[] = {
    TEST_ENTRY(latch_size_is_4_bytes),
    TEST_ENTRY(latch_static_initialiser_sets_the_count),
    TEST_ENTRY(latch_zeroed_is_released),
    TEST_ENTRY(latch_init_sets_the_count),
    TEST_ENTRY(latch_init_above_max_is_einval_and_changes_nothing),
    TEST_ENTRY(latch_count_down_to_zero_releases_every_waiter),
    TEST_ENTRY(latch_count_down_beyond_the_count_is_einval_and_counts_nothing),
    TEST_ENTRY(latch_count_down_beyond_the_count_with_waiters_is_einval_and_releases_nobody),
    TEST_ENTRY(latch_count_down_of_zero_counts_nothing),
    TEST_ENTRY(latch_count_down_by_more_than_one_at_a_time),
    TEST_ENTRY(latch_try_wait_is_false_until_the_count_reaches_zero),
    TEST_ENTRY(latch_wait_until_a_passed_deadline_passes_a_released_latch),
    TEST_ENTRY(latch_wait_until_a_passed_deadline_on_a_counting_latch_times_out_at_once),
    TEST_ENTRY(latch_wait_until_a_near_deadline_times_out_not_before_it),
    TEST_ENTRY(latch_wait_until_passes_when_released_before_the_deadline),
    TEST_ENTRY(latch_timed_out_waiter_leaves_the_others_waiting_and_the_count_intact),
    TEST_ENTRY(latch_arrive_and_wait_counts_down_then_waits_for_the_rest),
    TEST_ENTRY(latch_arrive_and_wait_beyond_the_count_is_einval_and_does_not_wait),
    TEST_ENTRY(latch_destroy_without_waiters_returns_zero),
    TEST_ENTRY(latch_destroy_of_null_returns_zero),
    TEST_ENTRY(latch_destroy_with_a_waiter_is_ebusy_and_keeps_it_usable),
    TEST_ENTRY(barrier_size_is_24_bytes),
    TEST_ENTRY(barrier_init_with_zero_or_above_max_is_einval_and_changes_nothing),
    TEST_ENTRY(barrier_init_accepts_max),
    TEST_ENTRY(barrier_serial_is_negative_so_never_an_errno_value),
    TEST_ENTRY(barrier_static_initialiser_sets_the_count_and_the_completion),
    TEST_ENTRY(barrier_of_one_is_serial_in_every_phase_and_runs_the_completion_each_time),
    TEST_ENTRY(barrier_releases_nobody_until_the_last_arrives),
    TEST_ENTRY(barrier_completion_runs_on_the_completing_thread_before_anyone_is_released),
    TEST_ENTRY(barrier_without_completion_releases_the_phase),
    TEST_ENTRY(barrier_arrive_and_drop_counts_for_this_phase_and_lowers_the_next),
    TEST_ENTRY(barrier_arrive_and_drop_that_completes_the_phase_is_serial_and_releases_it),
    TEST_ENTRY(barrier_arrival_beyond_the_phase_count_aborts_with_a_message),
    TEST_ENTRY(barrier_destroy_without_waiters_returns_zero),
    TEST_ENTRY(barrier_destroy_of_null_returns_zero),
    TEST_ENTRY(barrier_destroy_with_a_waiter_is_ebusy_and_keeps_it_usable),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
