/* tests/unit/mutex_async_test.c: park_mutex_lock_async (lib/mutex_async.c),
 * one behaviour per test; lined up as tests/unit/async_support.h says. */
#include <stdatomic.h>

#include <park/park.h>

#include "async_support.h"
#include "test.h"

static void mutex_hold(void *o)
{
    park_mutex_lock(o);
}

static void mutex_put(void *o)
{
    park_mutex_unlock(o);
}

static park_task_t *mutex_async(void *o, park_pool_t *pool)
{
    return park_mutex_lock_async(o, pool);
}

static bool mutex_is_free(void *o)
{
    if (!park_mutex_try_lock(o))
        return false;
    park_mutex_unlock(o);
    return park_mutex_destroy(o) == 0;
}

static park_mutex_t the_mutex;

static struct prim mutex_prim(void)
{
    park_mutex_init(&the_mutex);
    return (struct prim){&the_mutex, mutex_hold, mutex_put, mutex_async, mutex_put, mutex_is_free};
}

/* ---- the scenarios every primitive shares (async_support.c) ----------------------- */

TEST(mutex_async_continuation_never_runs_on_the_releasing_thread)
{
    continuation_never_runs_on_the_releasing_thread(mutex_prim());
}

TEST(mutex_async_uncontended_is_a_shared_completed_task)
{
    uncontended_is_a_shared_completed_task(mutex_prim());
}

TEST(mutex_async_cancelled_waiter_leaves_the_mutex_free)
{
    cancelled_waiter_takes_nothing(mutex_prim());
}

TEST(mutex_async_cancel_after_grant_is_ealready_and_keeps_the_lock)
{
    cancel_after_grant_keeps_it(mutex_prim());
}

TEST(mutex_async_cancel_at_completes_with_etimedout_and_leaves_the_mutex_free)
{
    cancel_at_times_out_and_takes_nothing(mutex_prim());
}

TEST(mutex_async_dropping_a_pending_acquisition_cancels_it)
{
    dropping_a_pending_acquisition_cancels_it(mutex_prim());
}

TEST(mutex_async_dropping_an_unobserved_grant_unlocks_the_mutex)
{
    dropping_an_unobserved_grant_gives_it_back(mutex_prim());
}

TEST(mutex_async_dropping_an_observed_grant_keeps_the_lock)
{
    dropping_an_observed_grant_keeps_it(mutex_prim());
}

/* ---- mutex: mutual exclusion ----------------------------------------------------- */

#define MX_ROUNDS 500

struct mx_oracle {
    park_mutex_t m;
    park_pool_t *pool;
    volatile unsigned inside; /* plain increments: guarded by m */
    unsigned long total;      /* guarded by m */
    atomic_int chains_left;
};

struct mx_user {
    struct mx_oracle *o;
    int rounds;
};

static void mx_critical(struct mx_oracle *o)
{
    for (int i = 0; i < 10; i++)
        o->inside++;
    if (o->inside != 10)
        test_fail(__FILE__, __LINE__, "two holders of the mutex: inside = %u", o->inside);
    for (int i = 0; i < 10; i++)
        o->inside--;
    o->total++;
}

static void mx_chain_step(park_task_t *done, void *arg)
{
    struct mx_user *u = arg;
    ASSERT_EQ(park_task_result(done, NULL), 0);
    mx_critical(u->o);
    park_mutex_unlock(&u->o->m); /* on a worker, not the locking thread */
    if (--u->rounds == 0) {
        atomic_fetch_sub(&u->o->chains_left, 1);
        return;
    }
    park_task_t *t = not_null(park_mutex_lock_async(&u->o->m, u->o->pool));
    ASSERT_EQ(park_task_then(t, u->o->pool, mx_chain_step, u), 0);
    park_task_release(t);
}

static void *mx_blocking_main(void *arg)
{
    struct mx_user *u = arg;
    for (; u->rounds > 0; u->rounds--) {
        park_mutex_lock(&u->o->m);
        mx_critical(u->o);
        park_mutex_unlock(&u->o->m);
    }
    return NULL;
}

TEST(mutex_async_and_blocking_lockers_exclude_each_other)
{
    enum { CHAINS = 3, BLOCKING = 2 };
    struct mx_oracle o = {.m = PARK_MUTEX_INIT, .pool = pool_new(2)};
    atomic_store(&o.chains_left, CHAINS);
    struct mx_user c[CHAINS], b[BLOCKING];
    for (int i = 0; i < BLOCKING; i++)
        b[i] = (struct mx_user){&o, MX_ROUNDS};
    test_threads_t *threads = test_threads_start(BLOCKING, mx_blocking_main, b, sizeof b[0]);
    for (int i = 0; i < CHAINS; i++) {
        c[i] = (struct mx_user){&o, MX_ROUNDS};
        park_task_t *t = not_null(park_mutex_lock_async(&o.m, o.pool));
        ASSERT_EQ(park_task_then(t, o.pool, mx_chain_step, &c[i]), 0);
        park_task_release(t);
    }
    test_threads_join(threads);
    AWAIT(atomic_load(&o.chains_left) == 0);
    park_mutex_lock(&o.m);
    ASSERT_EQ(o.total, (unsigned long)MX_ROUNDS * (CHAINS + BLOCKING));
    park_mutex_unlock(&o.m);
    ASSERT_TRUE(mutex_is_free(&o.m));
    park_pool_destroy(o.pool);
}

static const test_case_t tests[] = {
    TEST_ENTRY(mutex_async_continuation_never_runs_on_the_releasing_thread),
    TEST_ENTRY(mutex_async_uncontended_is_a_shared_completed_task),
    TEST_ENTRY(mutex_async_cancelled_waiter_leaves_the_mutex_free),
    TEST_ENTRY(mutex_async_cancel_after_grant_is_ealready_and_keeps_the_lock),
    TEST_ENTRY(mutex_async_cancel_at_completes_with_etimedout_and_leaves_the_mutex_free),
    TEST_ENTRY(mutex_async_dropping_a_pending_acquisition_cancels_it),
    TEST_ENTRY(mutex_async_dropping_an_unobserved_grant_unlocks_the_mutex),
    TEST_ENTRY(mutex_async_dropping_an_observed_grant_keeps_the_lock),
    TEST_ENTRY(mutex_async_and_blocking_lockers_exclude_each_other),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
