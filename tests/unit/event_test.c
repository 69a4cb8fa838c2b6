/* tests/unit/event_test.c: park_event, one behaviour per test; its
 * asynchronous waits: event_async_test.c. Lined up as
 * tests/unit/event_test.h says. */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include <park/park.h>

#include "wait/wait.h"

#include "event_test.h"
#include "test.h"

/* ---- helpers ---------------------------------------------------------------------- */

static int count_done(struct waiter *w, int n)
{
    int done = 0;
    for (int i = 0; i < n; i++)
        done += atomic_load(&w[i].done);
    return done;
}

/* ---- initialisation ----------------------------------------------------------------- */

TEST(event_size_is_4_bytes)
{
    ASSERT_EQ(sizeof(park_event_t), 4);
}

TEST(event_zeroed_is_an_auto_reset_event_not_set)
{
    park_event_t e;
    memset(&e, 0, sizeof e);
    ASSERT_FALSE(park_event_is_set(&e));
    ASSERT_FALSE(park_event_try_wait(&e));
    park_event_set(&e);
    ASSERT_TRUE(park_event_try_wait(&e));
    ASSERT_FALSE(park_event_is_set(&e)); /* consumed: auto reset */
    ASSERT_EQ(park_event_destroy(&e), 0);
}

TEST(event_static_initialisers_give_the_kind_and_the_state)
{
    park_event_t m0 = PARK_EVENT_INIT_MANUAL(false), m1 = PARK_EVENT_INIT_MANUAL(true);
    park_event_t a0 = PARK_EVENT_INIT_AUTO(false), a1 = PARK_EVENT_INIT_AUTO(true);
    ASSERT_FALSE(park_event_is_set(&m0));
    ASSERT_TRUE(park_event_is_set(&m1));
    ASSERT_TRUE(park_event_try_wait(&m1));
    ASSERT_TRUE(park_event_try_wait(&m1)); /* manual: stays set */
    ASSERT_FALSE(park_event_is_set(&a0));
    ASSERT_TRUE(park_event_try_wait(&a1));
    ASSERT_FALSE(park_event_try_wait(&a1)); /* auto: consumed */
    park_event_set(&m0);
    ASSERT_TRUE(park_event_try_wait(&m0));
    ASSERT_TRUE(park_event_is_set(&m0));
}

TEST(event_init_gives_the_kind_and_the_state)
{
    park_event_t e;
    memset(&e, 0xa5, sizeof e);
    park_event_init(&e, true, true);
    ASSERT_TRUE(park_event_try_wait(&e));
    ASSERT_TRUE(park_event_try_wait(&e));
    park_event_init(&e, true, false);
    ASSERT_FALSE(park_event_try_wait(&e));
    park_event_init(&e, false, true);
    ASSERT_TRUE(park_event_try_wait(&e));
    ASSERT_FALSE(park_event_try_wait(&e));
    park_event_init(&e, false, false);
    ASSERT_FALSE(park_event_try_wait(&e));
    ASSERT_EQ(park_event_destroy(&e), 0);
}

/* ---- manual reset ------------------------------------------------------------------- */

TEST(event_manual_set_lets_every_later_wait_pass_until_reset)
{
    park_event_t e = PARK_EVENT_INIT_MANUAL(false);
    park_event_set(&e);
    for (int i = 0; i < 3; i++) {
        park_event_wait(&e);
        ASSERT_EQ(park_event_wait_until(&e, PARK_FOREVER), 0);
        ASSERT_TRUE(park_event_try_wait(&e));
    }
    park_event_reset(&e);
    ASSERT_FALSE(park_event_try_wait(&e));
    ASSERT_EQ(park_event_wait_until(&e, 0), ETIMEDOUT);
}

TEST(event_manual_set_releases_every_queued_waiter)
{
    enum { N = 4 };
    park_event_t e = PARK_EVENT_INIT_MANUAL(false);
    struct waiter w[N];
    test_threads_t *t[N];
    memset(w, 0, sizeof w);
    queue_waiters(&e, w, t, N);
    ASSERT_EQ(count_done(w, N), 0);
    park_event_set(&e);
    join_all(t, N);
    ASSERT_EQ(count_done(w, N), N);
    ASSERT_EQ(park__wait_count(&e), 0);
    ASSERT_TRUE(park_event_is_set(&e));
    ASSERT_EQ(park_event_destroy(&e), 0);
}

/* A waiter learns that it passed from the set that released it, not from
 * the word: a reset right after the set strands nobody it released. */
TEST(event_manual_reset_right_after_a_set_strands_no_waiter_it_released)
{
    enum { N = 3 };
    park_event_t e = PARK_EVENT_INIT_MANUAL(false);
    struct waiter w[N];
    test_threads_t *t[N];
    memset(w, 0, sizeof w);
    queue_waiters(&e, w, t, N);
    park_event_set(&e);
    park_event_reset(&e);
    join_all(t, N);
    ASSERT_EQ(count_done(w, N), N);
    ASSERT_FALSE(park_event_is_set(&e));
    ASSERT_EQ(park__wait_count(&e), 0);
}

TEST(event_manual_set_on_a_set_event_changes_nothing)
{
    park_event_t e = PARK_EVENT_INIT_MANUAL(true);
    park_event_set(&e);
    ASSERT_TRUE(park_event_is_set(&e));
    park_event_reset(&e);
    ASSERT_FALSE(park_event_is_set(&e));
}

/* ---- auto reset --------------------------------------------------------------------- */

TEST(event_auto_set_without_waiters_stays_set_until_one_wait_consumes_it)
{
    park_event_t e = PARK_EVENT_INIT_AUTO(false);
    park_event_set(&e);
    ASSERT_TRUE(park_event_is_set(&e));
    ASSERT_TRUE(park_event_is_set(&e)); /* is_set consumes nothing */
    park_event_wait(&e);
    ASSERT_FALSE(park_event_is_set(&e));
    ASSERT_EQ(park_event_wait_until(&e, 0), ETIMEDOUT);
}

TEST(event_auto_sets_do_not_add_up)
{
    park_event_t e = PARK_EVENT_INIT_AUTO(false);
    park_event_set(&e);
    park_event_set(&e);
    ASSERT_TRUE(park_event_try_wait(&e));
    ASSERT_FALSE(park_event_try_wait(&e));
}

TEST(event_auto_set_releases_exactly_one_of_several_waiters)
{
    enum { N = 3 };
    park_event_t e = PARK_EVENT_INIT_AUTO(false);
    struct waiter w[N];
    test_threads_t *t[N];
    memset(w, 0, sizeof w);
    queue_waiters(&e, w, t, N);
    for (int k = 1; k <= N; k++) {
        park_event_set(&e);
        AWAIT(count_done(w, N) == k);
        ASSERT_EQ(park__wait_count(&e), (size_t)(N - k));
        ASSERT_FALSE(park_event_is_set(&e)); /* handed over, not stored */
        test_sleep_ns(2 * MS);               /* nobody else passes */
        ASSERT_EQ(count_done(w, N), k);
    }
    join_all(t, N);
}

TEST(event_auto_set_goes_to_the_oldest_waiter)
{
    enum { N = 3 };
    park_event_t e = PARK_EVENT_INIT_AUTO(false);
    struct waiter w[N];
    test_threads_t *t[N];
    memset(w, 0, sizeof w);
    queue_waiters(&e, w, t, N);
    for (int k = 0; k < N; k++) {
        park_event_set(&e);
        AWAIT(atomic_load(&w[k].done));
        ASSERT_EQ(count_done(w, N), k + 1);
    }
    join_all(t, N);
}

TEST(event_auto_two_sets_with_one_waiter_release_it_and_leave_the_event_set_once)
{
    park_event_t e = PARK_EVENT_INIT_AUTO(false);
    struct waiter w[1];
    test_threads_t *t[1];
    memset(w, 0, sizeof w);
    queue_waiters(&e, w, t, 1);
    park_event_set(&e);
    park_event_set(&e);
    join_all(t, 1);
    ASSERT_TRUE(park_event_try_wait(&e));
    ASSERT_FALSE(park_event_try_wait(&e));
}

TEST(event_reset_drops_an_unconsumed_auto_set)
{
    park_event_t e = PARK_EVENT_INIT_AUTO(true);
    park_event_reset(&e);
    ASSERT_FALSE(park_event_is_set(&e));
    ASSERT_FALSE(park_event_try_wait(&e));
    park_event_reset(&e); /* on an event not set: nothing */
    ASSERT_FALSE(park_event_is_set(&e));
}

/* ---- timed waits -------------------------------------------------------------------- */

TEST(event_wait_until_a_passed_deadline_passes_a_set_event)
{
    park_event_t m = PARK_EVENT_INIT_MANUAL(true), a = PARK_EVENT_INIT_AUTO(true);
    ASSERT_EQ(park_event_wait_until(&m, 0), 0);
    ASSERT_EQ(park_event_wait_until(&m, park_now()), 0);
    ASSERT_EQ(park_event_wait_until(&a, 0), 0);
    ASSERT_FALSE(park_event_is_set(&a));
}

TEST(event_wait_until_a_passed_deadline_on_an_event_not_set_times_out_at_once)
{
    park_event_t m = PARK_EVENT_INIT_MANUAL(false), a = PARK_EVENT_INIT_AUTO(false);
    park_time_t start = park_now();
    ASSERT_EQ(park_event_wait_until(&m, 0), ETIMEDOUT);
    ASSERT_EQ(park_event_wait_until(&a, start), ETIMEDOUT);
    ASSERT_LT(park_now() - start, LATE_NS);
    ASSERT_EQ(park__wait_count(&m), 0);
    ASSERT_EQ(park__wait_count(&a), 0);
    ASSERT_EQ(park_event_destroy(&m), 0);
    ASSERT_EQ(park_event_destroy(&a), 0);
}

TEST(event_wait_until_a_near_deadline_times_out_not_before_it)
{
    park_event_t e = PARK_EVENT_INIT_AUTO(false);
    for (int i = 0; i < 5; i++) {
        park_time_t deadline = park_deadline_in((uint64_t)(i + 1) * MS);
        ASSERT_EQ(park_event_wait_until(&e, deadline), ETIMEDOUT);
        park_time_t now = park_now();
        ASSERT_GE(now, deadline);
        ASSERT_LT(now - deadline, LATE_NS);
    }
    ASSERT_EQ(park__wait_count(&e), 0);
    /* The timeouts left nothing behind: a set stays in the event. */
    park_event_set(&e);
    ASSERT_TRUE(park_event_is_set(&e));
}

TEST(event_wait_until_passes_when_set_before_the_deadline)
{
    park_event_t e = PARK_EVENT_INIT_AUTO(false);
    struct waiter w[1] = {{.timed = true, .timeout_ns = HANG_NS}};
    test_threads_t *t[1];
    queue_waiters(&e, w, t, 1);
    park_event_set(&e);
    join_all(t, 1);
    ASSERT_EQ(w[0].result, 0);
    ASSERT_FALSE(park_event_is_set(&e));
}

TEST(event_auto_set_after_the_oldest_waiter_timed_out_goes_to_the_next)
{
    park_event_t e = PARK_EVENT_INIT_AUTO(false);
    /* Long enough for the second waiter to queue behind it (slow threads
     * under sanitizers). */
    struct waiter w[2] = {{.timed = true, .timeout_ns = 300 * MS}, {.timed = false}};
    test_threads_t *t[2];
    queue_waiters(&e, w, t, 2);
    test_threads_join(t[0]);
    ASSERT_EQ(w[0].result, ETIMEDOUT);
    ASSERT_EQ(park__wait_count(&e), 1);
    park_event_set(&e);
    test_threads_join(t[1]);
    ASSERT_EQ(w[1].result, 0);
    ASSERT_FALSE(park_event_is_set(&e));
    ASSERT_EQ(park__wait_count(&e), 0);
}

TEST(event_manual_set_after_a_waiter_timed_out_releases_the_others)
{
    park_event_t e = PARK_EVENT_INIT_MANUAL(false);
    /* The timed one queues last, so that the others are queued before its
     * deadline. */
    struct waiter w[3] = {
        {.timed = false}, {.timed = false}, {.timed = true, .timeout_ns = 50 * MS}};
    test_threads_t *t[3];
    queue_waiters(&e, w, t, 3);
    test_threads_join(t[2]);
    ASSERT_EQ(w[2].result, ETIMEDOUT);
    ASSERT_EQ(park__wait_count(&e), 2);
    park_event_set(&e);
    test_threads_join(t[0]);
    test_threads_join(t[1]);
    ASSERT_EQ(park__wait_count(&e), 0);
}

/* ---- destroy ------------------------------------------------------------------------ */

TEST(event_destroy_without_waiters_returns_zero)
{
    park_event_t m = PARK_EVENT_INIT_MANUAL(true), a = PARK_EVENT_INIT_AUTO(true);
    ASSERT_EQ(park_event_destroy(&m), 0);
    ASSERT_EQ(park_event_destroy(&a), 0);
}

TEST(event_destroy_of_null_returns_zero)
{
    ASSERT_EQ(park_event_destroy(NULL), 0);
}

TEST(event_destroy_with_a_waiter_is_ebusy_and_keeps_it_usable)
{
    park_event_t e = PARK_EVENT_INIT_AUTO(false);
    struct waiter w[1];
    test_threads_t *t[1];
    memset(w, 0, sizeof w);
    queue_waiters(&e, w, t, 1);
    ASSERT_EQ(park_event_destroy(&e), EBUSY);
    park_event_set(&e);
    join_all(t, 1);
    ASSERT_EQ(park_event_destroy(&e), 0);
}

static const test_case_t tests[] = {
    TEST_ENTRY(event_size_is_4_bytes),
    TEST_ENTRY(event_zeroed_is_an_auto_reset_event_not_set),
    TEST_ENTRY(event_static_initialisers_give_the_kind_and_the_state),
    TEST_ENTRY(event_init_gives_the_kind_and_the_state),
    TEST_ENTRY(event_manual_set_lets_every_later_wait_pass_until_reset),
    TEST_ENTRY(event_manual_set_releases_every_queued_waiter),
    TEST_ENTRY(event_manual_reset_right_after_a_set_strands_no_waiter_it_released),
    TEST_ENTRY(event_manual_set_on_a_set_event_changes_nothing),
    TEST_ENTRY(event_auto_set_without_waiters_stays_set_until_one_wait_consumes_it),
    TEST_ENTRY(event_auto_sets_do_not_add_up),
    TEST_ENTRY(event_auto_set_releases_exactly_one_of_several_waiters),
    TEST_ENTRY(event_auto_set_goes_to_the_oldest_waiter),
    TEST_ENTRY(event_auto_two_sets_with_one_waiter_release_it_and_leave_the_event_set_once),
    TEST_ENTRY(event_reset_drops_an_unconsumed_auto_set),
    TEST_ENTRY(event_wait_until_a_passed_deadline_passes_a_set_event),
    TEST_ENTRY(event_wait_until_a_passed_deadline_on_an_event_not_set_times_out_at_once),
    TEST_ENTRY(event_wait_until_a_near_deadline_times_out_not_before_it),
    TEST_ENTRY(event_wait_until_passes_when_set_before_the_deadline),
    TEST_ENTRY(event_auto_set_after_the_oldest_waiter_timed_out_goes_to_the_next),
    TEST_ENTRY(event_manual_set_after_a_waiter_timed_out_releases_the_others),
    TEST_ENTRY(event_destroy_without_waiters_returns_zero),
    TEST_ENTRY(event_destroy_of_null_returns_zero),
    TEST_ENTRY(event_destroy_with_a_waiter_is_ebusy_and_keeps_it_usable),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
