/* tests/unit/event_test.c: park_event, one behaviour per test.
 *
 * Threads are lined up by handshakes: "thread T waits" is observed in the
 * wait queue itself (park__wait_count of the event's address), so waiters
 * are queued in a known order and no verdict depends on a sleep; the only
 * timing asserted is that a timed wait never gives up before its deadline
 * (and, generously, not seconds after). Asynchronous waits are lined up
 * the same way, and their continuations check a thread-local flag that
 * the test sets around the call that sets the event. */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include <park/park.h>

#include "pool/pool.h" /* white box: park__pool_closing */
#include "wait/wait.h"

#include "test.h"

/* ---- helpers ---------------------------------------------------------------------- */

/* A thread that waits once (wait, or wait_until when timed). */
struct waiter {
    park_event_t *e;
    bool timed;
    uint64_t timeout_ns; /* timed: the deadline is this far from the thread's start */
    int result;
    atomic_bool done;
};

static void *waiter_main(void *arg)
{
    struct waiter *w = arg;
    w->result = w->timed ? park_event_wait_until(w->e, park_deadline_in(w->timeout_ns))
                         : (park_event_wait(w->e), 0);
    atomic_store(&w->done, true);
    return NULL;
}

/* Starts waiters w[0..n) one at a time, each queued before the next
 * starts, so w[0] is the oldest. */
static void queue_waiters(park_event_t *e, struct waiter *w, test_threads_t **t, int n)
{
    size_t base = park__wait_count(e);
    for (int i = 0; i < n; i++) {
        w[i].e = e;
        atomic_init(&w[i].done, false);
        t[i] = test_threads_start(1, waiter_main, &w[i], 0);
        AWAIT(park__wait_count(e) == base + (size_t)i + 1);
    }
}

static void join_all(test_threads_t **t, int n)
{
    for (int i = 0; i < n; i++)
        test_threads_join(t[i]);
}

static int count_done(struct waiter *w, int n)
{
    int done = 0;
    for (int i = 0; i < n; i++)
        done += atomic_load(&w[i].done);
    return done;
}

static park_pool_t *pool_new(unsigned threads)
{
    park_pool_t *pool = NULL;
    park_pool_config_t cfg = {.threads = threads};
    ASSERT_EQ(park_pool_create(&pool, &cfg), 0);
    return pool;
}

static park_task_t *not_null(park_task_t *t)
{
    ASSERT_TRUE(t != NULL);
    return t;
}

static _Thread_local bool in_set; /* set around a call that sets the event */

struct cont {
    park_pool_t *pool;
    atomic_int runs;
    int err;
};

static void cont_fn(park_task_t *done, void *arg)
{
    struct cont *c = arg;
    if (in_set)
        test_fail(__FILE__, __LINE__, "a continuation ran within the setting call");
    ASSERT_TRUE(park_pool_current() == c->pool);
    c->err = park_task_result(done, NULL);
    atomic_fetch_add(&c->runs, 1);
}

static void set_outside_continuations(park_event_t *e)
{
    in_set = true;
    park_event_set(e);
    in_set = false;
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
