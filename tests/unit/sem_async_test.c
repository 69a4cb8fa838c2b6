/* tests/unit/sem_async_test.c: park_sem_acquire_async(_until) and
 * park_sem_acquire_n_async(_until) (lib/sem_async.c), one behaviour per
 * test; lined up as tests/unit/async_support.h says. */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>

#include <park/park.h>

#include "pool/pool.h" /* white box: park__pool_closing */
#include "wait/wait.h"

#include "async_support.h"
#include "sem_test.h"
#include "test.h"

static void spin(uint64_t *rng, uint32_t max)
{
    for (volatile uint32_t k = test_rng_below(rng, max); k > 0; k--) {
    }
}

static void sem_hold(void *o)
{
    ASSERT_TRUE(park_sem_try_acquire(o));
}

static void sem_put(void *o)
{
    ASSERT_EQ(park_sem_release(o, 1), 0);
}

static park_task_t *sem_async(void *o, park_pool_t *pool)
{
    return park_sem_acquire_async(o, pool);
}

static bool sem_is_free(void *o)
{
    return park_sem_count(o) == 1 && park__wait_count(o) == 0;
}

static park_sem_t the_sem;

/* A semaphore of one permit: a granted task holds the only one. */
static struct prim sem_prim(void)
{
    ASSERT_EQ(park_sem_init(&the_sem, 1, 1), 0);
    return (struct prim){&the_sem, sem_hold, sem_put, sem_async, sem_put, sem_is_free};
}

/* ---- the scenarios every primitive shares (async_support.c) ----------------------- */

TEST(sem_async_continuation_never_runs_on_the_releasing_thread)
{
    continuation_never_runs_on_the_releasing_thread(sem_prim());
}

TEST(sem_async_uncontended_is_a_shared_completed_task)
{
    uncontended_is_a_shared_completed_task(sem_prim());
}

TEST(sem_async_cancelled_waiter_takes_no_permit)
{
    cancelled_waiter_takes_nothing(sem_prim());
}

TEST(sem_async_cancel_after_grant_is_ealready_and_keeps_the_permit)
{
    cancel_after_grant_keeps_it(sem_prim());
}

/* A cancel that returned EALREADY told the holder the permit is the task's;
 * the holder gives it back by hand and drops the task without reading its
 * result. The drop must not give the permit back a second time. (Two
 * permits of room, so that a second release would not overflow.) */
TEST(sem_async_cancel_after_grant_then_drop_keeps_the_permit_for_the_holder)
{
    park_pool_t *pool = pool_new(1);
    park_sem_t s = PARK_SEM_INIT(0, 2);
    park_task_t *t = not_null(park_sem_acquire_async(&s, pool));
    ASSERT_EQ(park_sem_release(&s, 1), 0); /* granted to t */
    ASSERT_EQ(park_task_cancel(t), EALREADY);
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park_sem_release(&s, 1), 0); /* the holder's release */
    park_task_release(t);
    ASSERT_EQ(park_sem_count(&s), 1);
    park_pool_destroy(pool);
}

TEST(sem_async_cancel_at_completes_with_etimedout_and_takes_no_permit)
{
    cancel_at_times_out_and_takes_nothing(sem_prim());
}

TEST(sem_async_dropping_a_pending_acquisition_cancels_it)
{
    dropping_a_pending_acquisition_cancels_it(sem_prim());
}

TEST(sem_async_dropping_an_unobserved_grant_gives_the_permit_back)
{
    dropping_an_unobserved_grant_gives_it_back(sem_prim());
}

TEST(sem_async_dropping_an_observed_grant_keeps_the_permit)
{
    dropping_an_observed_grant_keeps_it(sem_prim());
}

/* A deadline does not keep a dropped acquisition alive: the last reference
 * the caller held is gone, so the permit released next must not go to it
 * (nor stay with it until the deadline). */
TEST(sem_async_dropping_a_pending_timed_acquisition_cancels_it)
{
    park_pool_t *pool = pool_new(1);
    park_sem_t s = PARK_SEM_INIT(0, 1);
    park_task_t *t = not_null(
        park_sem_acquire_async_until(&s, pool, park_deadline_in(3600 * 1000 * (uint64_t)MS)));
    assert_pending(t);
    park_task_release(t);
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    ASSERT_EQ(park_sem_count(&s), 1);
    ASSERT_EQ(park__wait_count(&s), 0);
    park_pool_destroy(pool);
}

/* ---- semaphore: order -------------------------------------------------------------- */

/* The first of ts[0..n) that is complete and not yet marked done, or -1. */
static int find_completed(park_task_t **ts, const bool *done, int n)
{
    for (int i = 0; i < n; i++)
        if (!done[i] && park_task_done(ts[i]))
            return i;
    return -1;
}

/* Waits until one of ts[0..n) not yet done completes; marks it and returns
 * its index. */
static int next_completed(park_task_t **ts, bool *done, int n)
{
    int found;
    AWAIT((found = find_completed(ts, done, n)) >= 0);
    done[found] = true;
    return found;
}

TEST(sem_async_waiters_are_granted_in_arrival_order_skipping_a_cancelled_one)
{
    enum { N = 5 };
    park_pool_t *pool = pool_new(1);
    park_sem_t s = PARK_SEM_INIT(0, N);
    park_task_t *t[N];
    bool done[N] = {false};
    for (int i = 0; i < N; i++) {
        t[i] = not_null(park_sem_acquire_async(&s, pool));
        assert_pending(t[i]);
        ASSERT_EQ(park__wait_count(&s), (size_t)i + 1);
    }
    ASSERT_EQ(park_task_cancel(t[1]), 0);
    assert_completed(t[1], ECANCELED);
    done[1] = true;
    static const int order[] = {0, 2, 3, 4};
    for (int k = 0; k < 4; k++) {
        ASSERT_EQ(park_sem_release(&s, 1), 0);
        ASSERT_EQ(next_completed(t, done, N), order[k]);
        ASSERT_EQ(park_task_wait(t[order[k]], NULL), 0);
        for (int i = 0; i < N; i++)
            ASSERT_EQ(park_task_done(t[i]), done[i]);
        ASSERT_EQ(park_sem_count(&s), 0);
    }
    for (int i = 0; i < N; i++)
        park_task_release(t[i]);
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park_sem_release(&s, 4), 0);
    ASSERT_EQ(park_sem_count(&s), 4);
    park_pool_destroy(pool);
}

struct blocked {
    park_sem_t *s;
    atomic_bool done;
};

static void *blocked_main(void *arg)
{
    struct blocked *b = arg;
    park_sem_acquire(b->s);
    atomic_store(&b->done, true);
    return NULL;
}

TEST(sem_blocking_and_async_waiters_share_one_fifo_queue)
{
    park_pool_t *pool = pool_new(1);
    park_sem_t s = PARK_SEM_INIT(0, 4);
    struct blocked a = {&s, false}, b = {&s, false};
    test_threads_t *ta = test_threads_start(1, blocked_main, &a, 0);
    AWAIT(park__wait_count(&s) == 1);
    park_task_t *t1 = not_null(park_sem_acquire_async(&s, pool));
    ASSERT_EQ(park__wait_count(&s), 2);
    test_threads_t *tb = test_threads_start(1, blocked_main, &b, 0);
    AWAIT(park__wait_count(&s) == 3);
    park_task_t *t2 = not_null(park_sem_acquire_async(&s, pool));
    ASSERT_EQ(park__wait_count(&s), 4);

    ASSERT_EQ(park_sem_release(&s, 1), 0);
    test_threads_join(ta);
    ASSERT_FALSE(park_task_done(t1));
    ASSERT_FALSE(atomic_load(&b.done));
    ASSERT_FALSE(park_task_done(t2));

    ASSERT_EQ(park_sem_release(&s, 1), 0);
    ASSERT_EQ(park_task_wait(t1, NULL), 0);
    ASSERT_FALSE(atomic_load(&b.done));
    ASSERT_FALSE(park_task_done(t2));

    ASSERT_EQ(park_sem_release(&s, 1), 0);
    test_threads_join(tb);
    ASSERT_FALSE(park_task_done(t2));

    ASSERT_EQ(park_sem_release(&s, 1), 0);
    ASSERT_EQ(park_task_wait(t2, NULL), 0);
    ASSERT_EQ(park_sem_count(&s), 0);
    park_task_release(t1);
    park_task_release(t2);
    ASSERT_EQ(park_sem_release(&s, 4), 0);
    ASSERT_EQ(park_sem_destroy(&s), 0);
    park_pool_destroy(pool);
}

/* ---- semaphore: deadlines ---------------------------------------------------------- */

TEST(sem_async_until_a_past_deadline_takes_a_free_permit)
{
    park_pool_t *pool = pool_new(1);
    park_sem_t s = PARK_SEM_INIT(1, 1);
    park_task_t *t = not_null(park_sem_acquire_async_until(&s, pool, 0));
    assert_completed(t, 0);
    ASSERT_EQ(park_sem_count(&s), 0);
    park_task_release(t);
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    park_pool_destroy(pool);
}

TEST(sem_async_until_a_past_deadline_on_an_empty_sem_is_etimedout_at_once)
{
    park_pool_t *pool = pool_new(1);
    park_sem_t s = PARK_SEM_INIT(0, 1);
    park_task_t *t = not_null(park_sem_acquire_async_until(&s, pool, 0));
    assert_completed(t, ETIMEDOUT);
    ASSERT_EQ(park__wait_count(&s), 0);
    park_task_release(t);
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    ASSERT_EQ(park_sem_count(&s), 1);
    park_pool_destroy(pool);
}

TEST(sem_async_until_a_near_deadline_is_etimedout_not_before_it_and_takes_nothing)
{
    park_pool_t *pool = pool_new(1);
    park_sem_t s = PARK_SEM_INIT(0, 1);
    park_time_t deadline = park_deadline_in(3 * MS);
    park_task_t *t = not_null(park_sem_acquire_async_until(&s, pool, deadline));
    ASSERT_EQ(park_task_wait(t, NULL), ETIMEDOUT);
    ASSERT_GE(park_now(), deadline);
    ASSERT_EQ(park__wait_count(&s), 0);
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    ASSERT_EQ(park_sem_count(&s), 1);
    park_task_release(t);
    ASSERT_EQ(park_sem_count(&s), 1);
    park_pool_destroy(pool);
}

TEST(sem_async_until_takes_a_permit_released_before_the_deadline)
{
    park_pool_t *pool = pool_new(1);
    park_sem_t s = PARK_SEM_INIT(0, 1);
    park_task_t *t = not_null(
        park_sem_acquire_async_until(&s, pool, park_deadline_in(3600 * 1000 * (uint64_t)MS)));
    assert_pending(t);
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    ASSERT_EQ(park_task_wait(t, NULL), 0);
    ASSERT_EQ(park_sem_count(&s), 0);
    park_task_release(t);
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    ASSERT_EQ(park_sem_count(&s), 1);
    park_pool_destroy(pool);
}

/* ---- semaphore: races -------------------------------------------------------------- */

#define RACES 10000
#define RACE_MAX_SPIN 3000

/* A second thread releases the semaphore's only permit in each round while
 * the test's thread cancels the task queued for it. */
struct release_race {
    park_sem_t s;
    atomic_uint round; /* round k starts when it reaches k + 1 */
    atomic_uint released;
};

static void *release_racer(void *arg)
{
    struct release_race *r = arg;
    uint64_t rng = test_rng_seed(7);
    for (unsigned k = 0; k < RACES; k++) {
        for (unsigned n = 0; atomic_load(&r->round) != k + 1; n++)
            if (n > 1000)
                sched_yield();
        spin(&rng, RACE_MAX_SPIN);
        if (park_sem_release(&r->s, 1) != 0)
            test_fail(__FILE__, __LINE__, "release of the held permit failed");
        atomic_store(&r->released, k + 1);
    }
    return NULL;
}

TEST(sem_async_release_racing_cancel_conserves_permits)
{
    park_pool_t *pool = pool_new(1);
    struct release_race r = {PARK_SEM_INIT(1, 1), 0, 0};
    ASSERT_TRUE(park_sem_try_acquire(&r.s)); /* the permit the racer releases */
    test_threads_t *racer = test_threads_start(1, release_racer, &r, 0);
    uint64_t rng = test_rng_seed(8);
    unsigned cancelled = 0, granted = 0;
    for (unsigned k = 0; k < RACES; k++) {
        park_task_t *t = not_null(park_sem_acquire_async(&r.s, pool));
        assert_pending(t);
        atomic_store(&r.round, k + 1);
        spin(&rng, RACE_MAX_SPIN);
        int rc = park_task_cancel(t);
        for (unsigned n = 0; atomic_load(&r.released) != k + 1; n++)
            if (n > 1000)
                sched_yield();
        if (rc == 0) {
            /* Took nothing: the permit is in the count; take it back. */
            ASSERT_EQ(park_task_wait(t, NULL), ECANCELED);
            ASSERT_TRUE(park_sem_try_acquire(&r.s));
            cancelled++;
        } else {
            /* Granted first: the task holds it, and so the test again. */
            ASSERT_EQ(rc, EALREADY);
            ASSERT_EQ(park_task_wait(t, NULL), 0);
            ASSERT_EQ(park_sem_count(&r.s), 0);
            granted++;
        }
        ASSERT_EQ(park__wait_count(&r.s), 0);
        park_task_release(t);
        ASSERT_EQ(park_sem_count(&r.s), 0);
    }
    test_threads_join(racer);
    ASSERT_EQ(cancelled + granted, RACES);
    ASSERT_EQ(park_sem_release(&r.s, 1), 0);
    ASSERT_EQ(park_sem_count(&r.s), 1);
    ASSERT_EQ(park_sem_destroy(&r.s), 0);
    park_pool_destroy(pool);
}

/* A second thread releases the only permit close to the deadline of the
 * timed acquisition of each round. */
#define TIMEOUT_RACES 2000
#define TIMEOUT_MAX_NS 100000u /* deadlines 0 to 100 us ahead */
#define TIMEOUT_JITTER_NS 40000u

struct timeout_race {
    park_sem_t s;
    atomic_uint round;
    atomic_uint released;
    _Atomic park_time_t deadline;
};

static void *timeout_racer(void *arg)
{
    struct timeout_race *r = arg;
    uint64_t rng = test_rng_seed(9);
    for (unsigned k = 0; k < TIMEOUT_RACES; k++) {
        for (unsigned n = 0; atomic_load(&r->round) != k + 1; n++)
            if (n > 1000)
                sched_yield();
        park_time_t at = atomic_load(&r->deadline) + test_rng_below(&rng, 2 * TIMEOUT_JITTER_NS);
        at = at > TIMEOUT_JITTER_NS ? at - TIMEOUT_JITTER_NS : 0;
        while (park_now() < at) {
        }
        if (park_sem_release(&r->s, 1) != 0)
            test_fail(__FILE__, __LINE__, "release of the held permit failed");
        atomic_store(&r->released, k + 1);
    }
    return NULL;
}

TEST(sem_async_until_timeout_racing_release_conserves_permits)
{
    park_pool_t *pool = pool_new(1);
    struct timeout_race r = {PARK_SEM_INIT(1, 1), 0, 0, 0};
    ASSERT_TRUE(park_sem_try_acquire(&r.s));
    test_threads_t *racer = test_threads_start(1, timeout_racer, &r, 0);
    uint64_t rng = test_rng_seed(10);
    unsigned timed_out = 0, granted = 0;
    for (unsigned k = 0; k < TIMEOUT_RACES; k++) {
        park_time_t deadline = park_deadline_in(test_rng_below(&rng, TIMEOUT_MAX_NS));
        atomic_store(&r.deadline, deadline);
        park_task_t *t = not_null(park_sem_acquire_async_until(&r.s, pool, deadline));
        atomic_store(&r.round, k + 1);
        int rc = park_task_wait(t, NULL);
        for (unsigned n = 0; atomic_load(&r.released) != k + 1; n++)
            if (n > 1000)
                sched_yield();
        if (rc == ETIMEDOUT) {
            ASSERT_GE(park_now(), deadline);
            ASSERT_TRUE(park_sem_try_acquire(&r.s));
            timed_out++;
        } else {
            ASSERT_EQ(rc, 0);
            ASSERT_EQ(park_sem_count(&r.s), 0);
            granted++;
        }
        ASSERT_EQ(park__wait_count(&r.s), 0);
        park_task_release(t);
        ASSERT_EQ(park_sem_count(&r.s), 0);
    }
    test_threads_join(racer);
    ASSERT_EQ(timed_out + granted, TIMEOUT_RACES);
    ASSERT_EQ(park_sem_release(&r.s, 1), 0);
    ASSERT_EQ(park_sem_count(&r.s), 1);
    park_pool_destroy(pool);
}

/* ---- semaphore: continuations that release and acquire again ------------------- */

#define CHAIN_ROUNDS 200

struct chain {
    park_sem_t *s;
    park_pool_t *pool;
    atomic_int *inside;
    int rounds;
    atomic_bool finished;
};

static void chain_step(park_task_t *done, void *arg)
{
    struct chain *c = arg;
    ASSERT_EQ(park_task_result(done, NULL), 0);
    if (atomic_fetch_add(c->inside, 1) != 0)
        test_fail(__FILE__, __LINE__, "two holders of a one-permit semaphore");
    atomic_fetch_sub(c->inside, 1);
    ASSERT_EQ(park_sem_release(c->s, 1), 0);
    if (--c->rounds == 0) {
        atomic_store(&c->finished, true);
        return;
    }
    park_task_t *t = not_null(park_sem_acquire_async(c->s, c->pool));
    ASSERT_EQ(park_task_then(t, c->pool, chain_step, c), 0);
    park_task_release(t);
}

TEST(sem_async_continuation_that_releases_and_acquires_again_does_not_deadlock)
{
    enum { CHAINS = 3 };
    park_sem_t s = PARK_SEM_INIT(1, 1);
    atomic_int inside = 0;
    for (unsigned threads = 1; threads <= 2; threads++) {
        park_pool_t *pool = pool_new(threads);
        struct chain c[CHAINS];
        for (int i = 0; i < CHAINS; i++) {
            c[i] = (struct chain){&s, pool, &inside, CHAIN_ROUNDS, false};
            park_task_t *t = not_null(park_sem_acquire_async(&s, pool));
            ASSERT_EQ(park_task_then(t, pool, chain_step, &c[i]), 0);
            park_task_release(t);
        }
        for (int i = 0; i < CHAINS; i++)
            AWAIT(atomic_load(&c[i].finished));
        ASSERT_EQ(park_sem_count(&s), 1);
        park_pool_destroy(pool);
    }
    ASSERT_EQ(park_sem_destroy(&s), 0);
}

/* ---- deadlines without a pool ------------------------------------------------------- */

TEST(sem_async_until_with_a_deadline_and_no_pool_is_einval_and_takes_nothing)
{
    park_sem_t s = PARK_SEM_INIT(1, 1);
    park_task_t *t = not_null(park_sem_acquire_async_until(&s, NULL, park_deadline_in(MS)));
    assert_completed(t, EINVAL);
    park_task_release(t);
    t = not_null(park_sem_acquire_async_until(&s, NULL, 0)); /* passed: still no pool */
    assert_completed(t, EINVAL);
    park_task_release(t);
    ASSERT_EQ(park_sem_count(&s), 1);
}

TEST(sem_async_until_forever_needs_no_pool)
{
    park_sem_t s = PARK_SEM_INIT(1, 1);
    park_task_t *t = not_null(park_sem_acquire_async_until(&s, NULL, PARK_FOREVER));
    assert_completed(t, 0);
    park_task_release(t);
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park_sem_release(&s, 1), 0);
}

/* A timed acquisition made from a job that runs during park_pool_destroy's
 * drain: the closing pool's timer cannot keep its deadline. */
struct closing_sem {
    park_pool_t *pool;
    park_sem_t s;
    int err;
};

static void closing_sem_job(void *arg)
{
    struct closing_sem *c = arg;
    AWAIT(park__pool_closing(c->pool));
    park_task_t *t = not_null(
        park_sem_acquire_async_until(&c->s, c->pool, park_deadline_in(60000 * (uint64_t)MS)));
    ASSERT_TRUE(park_task_done(t));
    c->err = park_task_result(t, NULL);
    park_task_release(t);
}

TEST(sem_async_until_on_a_pool_shutting_down_is_etimedout_at_once_and_takes_nothing)
{
    struct closing_sem c = {.pool = pool_new(1), .s = PARK_SEM_INIT(0, 1), .err = -1};
    ASSERT_EQ(park_pool_submit(c.pool, closing_sem_job, &c), 0);
    park_pool_destroy(c.pool);
    ASSERT_EQ(c.err, ETIMEDOUT);
    ASSERT_EQ(park__wait_count(&c.s), 0);
    ASSERT_EQ(park_sem_release(&c.s, 1), 0);
    ASSERT_EQ(park_sem_count(&c.s), 1);
}

/* ---- several permits at once ---------------------------------------------------- */

/* Also without a pool, and with a deadline: the argument is checked first. */
TEST(sem_async_acquire_n_of_zero_or_beyond_max_is_a_task_completed_with_einval)
{
    park_pool_t *pool = pool_new(1);
    park_sem_t s = PARK_SEM_INIT(0, 3);
    park_task_t *t[] = {
        not_null(park_sem_acquire_n_async(&s, 0, pool)),
        not_null(park_sem_acquire_n_async(&s, 4, pool)),
        not_null(park_sem_acquire_n_async(&s, 0, NULL)),
        not_null(park_sem_acquire_n_async_until(&s, 4, pool, PARK_FOREVER)),
        not_null(park_sem_acquire_n_async_until(&s, 0, pool, park_deadline_in(HANG_NS))),
        not_null(park_sem_acquire_n_async_until(&s, UINT32_MAX, NULL, 0)),
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        ASSERT_TRUE(park_task_done(t[i]));
        ASSERT_EQ(park_task_wait(t[i], NULL), EINVAL);
        park_task_release(t[i]);
    }
    ASSERT_EQ(park__wait_count(&s), 0);
    ASSERT_EQ(park_sem_count(&s), 0);
    park_pool_destroy(pool);
}

/* A task of three is handed nothing until all three are there. */
static void async_acquire_n_completes_only_with_all_n(park_sem_t *s)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *t = not_null(park_sem_acquire_n_async(s, 3, pool));
    ASSERT_FALSE(park_task_done(t));
    for (int i = 0; i < 2; i++) {
        ASSERT_EQ(park_sem_release(s, 1), 0);
        ASSERT_FALSE(park_task_done(t));
        ASSERT_EQ(park_sem_count(s), 0); /* a task is owed: they are gathered */
    }
    ASSERT_EQ(park_sem_release(s, 2), 0);
    ASSERT_EQ(park_task_wait(t, NULL), 0);
    park_task_release(t);
    ASSERT_EQ(park_sem_count(s), 1);
    ASSERT_EQ(park_sem_release(s, 3), 0); /* the task's holder gives them back */
    ASSERT_EQ(park_sem_count(s), 4);
    park_pool_destroy(pool);
}

TEST(sem_async_acquire_n_completes_only_with_all_n)
{
    park_sem_t s = PARK_SEM_INIT(0, 4);
    async_acquire_n_completes_only_with_all_n(&s);
}

TEST(sem_fifo_async_acquire_n_completes_only_with_all_n)
{
    park_sem_t s = PARK_SEM_INIT_FIFO(0, 4);
    async_acquire_n_completes_only_with_all_n(&s);
}

TEST(sem_async_acquire_n_of_free_permits_is_a_shared_completed_task)
{
    park_sem_t s = PARK_SEM_INIT(4, 4);
    park_task_t *t = not_null(park_sem_acquire_n_async(&s, 3, NULL));
    ASSERT_TRUE(park_task_done(t));
    ASSERT_EQ(park_task_wait(t, NULL), 0);
    ASSERT_EQ(park_sem_count(&s), 1);
    park_task_t *u = not_null(park_sem_acquire_async(&s, NULL));
    ASSERT_TRUE(u == t); /* the same permanent object */
    park_task_release(u);
    park_task_release(t); /* the permits stay the caller's */
    ASSERT_EQ(park_sem_count(&s), 0);
    ASSERT_EQ(park__wait_count(&s), 0);
}

/* A cancelled (or dropped) task of three that had gathered two gives them
 * back, and the waiter of one behind it is served from them. */
static void cancelled_async_large_waiter_gives_back(park_sem_t *s, bool drop)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *t = not_null(park_sem_acquire_n_async(s, 3, pool));
    AWAIT(park__wait_count(s) == 1);
    struct acquirer a[1];
    test_threads_t *th[1];
    queue_acquirers(s, a, th, 1, NULL);
    ASSERT_EQ(park_sem_release(s, 2), 0);
    ASSERT_EQ(park_sem_count(s), 0); /* gathered by the task */
    ASSERT_FALSE(atomic_load(&a[0].done));
    if (drop) {
        park_task_release(t);
    } else {
        ASSERT_EQ(park_task_cancel(t), 0);
        ASSERT_EQ(park_task_wait(t, NULL), ECANCELED);
        park_task_release(t);
    }
    join_all(th, 1);
    ASSERT_EQ(park_sem_count(s), 1);
    ASSERT_EQ(park__wait_count(s), 0);
    ASSERT_EQ(park_sem_release(s, 1), 0); /* the thread's */
    ASSERT_EQ(park_sem_count(s), 2);
    ASSERT_EQ(park_sem_destroy(s), 0);
    park_pool_destroy(pool);
}

TEST(sem_cancelled_async_large_waiter_gives_back_the_permits_it_gathered)
{
    park_sem_t s = PARK_SEM_INIT(0, 4);
    cancelled_async_large_waiter_gives_back(&s, false);
}

TEST(sem_fifo_cancelled_async_large_waiter_gives_back_the_permits_it_gathered)
{
    park_sem_t s = PARK_SEM_INIT_FIFO(0, 4);
    cancelled_async_large_waiter_gives_back(&s, false);
}

TEST(sem_dropped_async_large_waiter_gives_back_the_permits_it_gathered)
{
    park_sem_t s = PARK_SEM_INIT(0, 4);
    cancelled_async_large_waiter_gives_back(&s, true);
}

TEST(sem_timed_out_async_large_waiter_gives_back_the_permits_it_gathered)
{
    park_pool_t *pool = pool_new(1);
    park_sem_t s = PARK_SEM_INIT_FIFO(1, 4); /* one gathered as it queues */
    park_task_t *t =
        not_null(park_sem_acquire_n_async_until(&s, 3, pool, park_deadline_in(20 * MS)));
    ASSERT_EQ(park_sem_release(&s, 1), 0);
    ASSERT_EQ(park_task_wait(t, NULL), ETIMEDOUT);
    park_task_release(t);
    ASSERT_EQ(park_sem_count(&s), 2);
    ASSERT_EQ(park__wait_count(&s), 0);
    park_pool_destroy(pool);
}

static const test_case_t tests[] = {
    TEST_ENTRY(sem_async_continuation_never_runs_on_the_releasing_thread),
    TEST_ENTRY(sem_async_uncontended_is_a_shared_completed_task),
    TEST_ENTRY(sem_async_cancelled_waiter_takes_no_permit),
    TEST_ENTRY(sem_async_cancel_after_grant_is_ealready_and_keeps_the_permit),
    TEST_ENTRY(sem_async_cancel_at_completes_with_etimedout_and_takes_no_permit),
    TEST_ENTRY(sem_async_dropping_a_pending_acquisition_cancels_it),
    TEST_ENTRY(sem_async_dropping_an_unobserved_grant_gives_the_permit_back),
    TEST_ENTRY(sem_async_dropping_an_observed_grant_keeps_the_permit),
    TEST_ENTRY(sem_async_waiters_are_granted_in_arrival_order_skipping_a_cancelled_one),
    TEST_ENTRY(sem_blocking_and_async_waiters_share_one_fifo_queue),
    TEST_ENTRY(sem_async_until_a_past_deadline_takes_a_free_permit),
    TEST_ENTRY(sem_async_until_a_past_deadline_on_an_empty_sem_is_etimedout_at_once),
    TEST_ENTRY(sem_async_until_a_near_deadline_is_etimedout_not_before_it_and_takes_nothing),
    TEST_ENTRY(sem_async_until_takes_a_permit_released_before_the_deadline),
    TEST_ENTRY(sem_async_release_racing_cancel_conserves_permits),
    TEST_ENTRY(sem_async_until_timeout_racing_release_conserves_permits),
    TEST_ENTRY(sem_async_continuation_that_releases_and_acquires_again_does_not_deadlock),
    TEST_ENTRY(sem_async_dropping_a_pending_timed_acquisition_cancels_it),
    TEST_ENTRY(sem_async_cancel_after_grant_then_drop_keeps_the_permit_for_the_holder),
    TEST_ENTRY(sem_async_until_with_a_deadline_and_no_pool_is_einval_and_takes_nothing),
    TEST_ENTRY(sem_async_until_forever_needs_no_pool),
    TEST_ENTRY(sem_async_until_on_a_pool_shutting_down_is_etimedout_at_once_and_takes_nothing),
    TEST_ENTRY(sem_async_acquire_n_of_zero_or_beyond_max_is_a_task_completed_with_einval),
    TEST_ENTRY(sem_async_acquire_n_completes_only_with_all_n),
    TEST_ENTRY(sem_fifo_async_acquire_n_completes_only_with_all_n),
    TEST_ENTRY(sem_async_acquire_n_of_free_permits_is_a_shared_completed_task),
    TEST_ENTRY(sem_cancelled_async_large_waiter_gives_back_the_permits_it_gathered),
    TEST_ENTRY(sem_fifo_cancelled_async_large_waiter_gives_back_the_permits_it_gathered),
    TEST_ENTRY(sem_dropped_async_large_waiter_gives_back_the_permits_it_gathered),
    TEST_ENTRY(sem_timed_out_async_large_waiter_gives_back_the_permits_it_gathered),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
