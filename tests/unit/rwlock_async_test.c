/* tests/unit/rwlock_async_test.c: park_rwlock_read_lock_async and
 * park_rwlock_write_lock_async (lib/rwlock_async.c), one behaviour per
 * test; lined up as tests/unit/async_support.h says. */
#include <errno.h>
#include <stdatomic.h>

#include <park/park.h>

#include "wait/wait.h"

#include "async_support.h"
#include "test.h"

static void rw_read_hold(void *o)
{
    park_rwlock_read_lock(o);
}

static void rw_read_put(void *o)
{
    park_rwlock_read_unlock(o);
}

static void rw_write_hold(void *o)
{
    park_rwlock_write_lock(o);
}

static void rw_write_put(void *o)
{
    park_rwlock_write_unlock(o);
}

static park_task_t *rw_read_async(void *o, park_pool_t *pool)
{
    return park_rwlock_read_lock_async(o, pool);
}

static park_task_t *rw_write_async(void *o, park_pool_t *pool)
{
    return park_rwlock_write_lock_async(o, pool);
}

static bool rw_is_free(void *o)
{
    if (!park_rwlock_try_write_lock(o))
        return false;
    park_rwlock_write_unlock(o);
    return park_rwlock_destroy(o) == 0;
}

static park_rwlock_t the_rwlock;

/* A reader task, held back by a writer. */
static struct prim rw_read_prim(void)
{
    park_rwlock_init(&the_rwlock);
    return (struct prim){&the_rwlock,   rw_write_hold, rw_write_put,
                         rw_read_async, rw_read_put,   rw_is_free};
}

/* A writer task, held back by a reader. */
static struct prim rw_write_prim(void)
{
    park_rwlock_init(&the_rwlock);
    return (struct prim){&the_rwlock,    rw_read_hold, rw_read_put,
                         rw_write_async, rw_write_put, rw_is_free};
}

/* ---- the scenarios every primitive shares (async_support.c) ----------------------- */

TEST(rwlock_read_async_continuation_never_runs_on_the_releasing_thread)
{
    continuation_never_runs_on_the_releasing_thread(rw_read_prim());
}

TEST(rwlock_write_async_continuation_never_runs_on_the_releasing_thread)
{
    continuation_never_runs_on_the_releasing_thread(rw_write_prim());
}

TEST(rwlock_read_async_uncontended_is_a_shared_completed_task)
{
    uncontended_is_a_shared_completed_task(rw_read_prim());
}

TEST(rwlock_write_async_uncontended_is_a_shared_completed_task)
{
    uncontended_is_a_shared_completed_task(rw_write_prim());
}

TEST(rwlock_read_async_uncontended_readers_share_the_lock)
{
    park_pool_t *pool = pool_new(1);
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    park_task_t *a = not_null(park_rwlock_read_lock_async(&rw, pool));
    park_task_t *b = not_null(park_rwlock_read_lock_async(&rw, pool));
    assert_completed(a, 0);
    assert_completed(b, 0);
    ASSERT_TRUE(a == b);
    ASSERT_FALSE(park_rwlock_try_write_lock(&rw));
    park_rwlock_read_unlock(&rw);
    park_rwlock_read_unlock(&rw);
    park_task_release(a);
    park_task_release(b);
    ASSERT_TRUE(rw_is_free(&rw));
    park_pool_destroy(pool);
}

TEST(rwlock_read_async_cancelled_waiter_leaves_the_lock_free)
{
    cancelled_waiter_takes_nothing(rw_read_prim());
}

TEST(rwlock_write_async_cancelled_waiter_leaves_the_lock_free)
{
    cancelled_waiter_takes_nothing(rw_write_prim());
}

TEST(rwlock_read_async_cancel_after_grant_is_ealready_and_keeps_the_hold)
{
    cancel_after_grant_keeps_it(rw_read_prim());
}

TEST(rwlock_write_async_cancel_after_grant_is_ealready_and_keeps_the_hold)
{
    cancel_after_grant_keeps_it(rw_write_prim());
}

TEST(rwlock_read_async_cancel_at_completes_with_etimedout_and_takes_nothing)
{
    cancel_at_times_out_and_takes_nothing(rw_read_prim());
}

TEST(rwlock_write_async_cancel_at_completes_with_etimedout_and_takes_nothing)
{
    cancel_at_times_out_and_takes_nothing(rw_write_prim());
}

TEST(rwlock_read_async_dropping_a_pending_acquisition_cancels_it)
{
    dropping_a_pending_acquisition_cancels_it(rw_read_prim());
}

TEST(rwlock_write_async_dropping_a_pending_acquisition_cancels_it)
{
    dropping_a_pending_acquisition_cancels_it(rw_write_prim());
}

TEST(rwlock_read_async_dropping_an_unobserved_grant_releases_the_hold)
{
    dropping_an_unobserved_grant_gives_it_back(rw_read_prim());
}

TEST(rwlock_write_async_dropping_an_unobserved_grant_releases_the_hold)
{
    dropping_an_unobserved_grant_gives_it_back(rw_write_prim());
}

TEST(rwlock_read_async_dropping_an_observed_grant_keeps_the_hold)
{
    dropping_an_observed_grant_keeps_it(rw_read_prim());
}

TEST(rwlock_write_async_dropping_an_observed_grant_keeps_the_hold)
{
    dropping_an_observed_grant_keeps_it(rw_write_prim());
}

/* ---- rwlock ------------------------------------------------------------------------ */

TEST(rwlock_cancelling_the_only_waiting_writer_admits_the_readers_behind_it)
{
    park_pool_t *pool = pool_new(1);
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    park_rwlock_read_lock(&rw);
    park_task_t *w = not_null(park_rwlock_write_lock_async(&rw, pool));
    assert_pending(w);
    park_task_t *r = not_null(park_rwlock_read_lock_async(&rw, pool));
    assert_pending(r);
    ASSERT_EQ(park__wait_count(&rw), 2);
    ASSERT_FALSE(park_rwlock_try_read_lock(&rw));
    ASSERT_EQ(park_task_cancel(w), 0);
    assert_completed(w, ECANCELED);
    ASSERT_EQ(park_task_wait(r, NULL), 0);
    ASSERT_EQ(park__wait_count(&rw), 0);
    park_rwlock_read_unlock(&rw);
    ASSERT_FALSE(park_rwlock_try_write_lock(&rw)); /* the reader task still holds */
    park_rwlock_read_unlock(&rw);
    park_task_release(w);
    park_task_release(r);
    ASSERT_TRUE(rw_is_free(&rw));
    park_pool_destroy(pool);
}

TEST(rwlock_cancelling_one_of_two_waiting_writers_does_not_admit_the_readers)
{
    park_pool_t *pool = pool_new(1);
    park_rwlock_t rw = PARK_RWLOCK_INIT;
    park_rwlock_read_lock(&rw);
    park_task_t *w1 = not_null(park_rwlock_write_lock_async(&rw, pool));
    park_task_t *w2 = not_null(park_rwlock_write_lock_async(&rw, pool));
    park_task_t *r = not_null(park_rwlock_read_lock_async(&rw, pool));
    ASSERT_EQ(park__wait_count(&rw), 3);
    ASSERT_EQ(park_task_cancel(w1), 0);
    assert_completed(w1, ECANCELED);
    test_sleep_ns(20 * MS); /* give a wrongly admitted reader time to show */
    assert_pending(r);
    assert_pending(w2);
    ASSERT_FALSE(park_rwlock_try_read_lock(&rw));
    park_rwlock_read_unlock(&rw); /* the lock falls free: w2's turn */
    ASSERT_EQ(park_task_wait(w2, NULL), 0);
    assert_pending(r);
    park_rwlock_write_unlock(&rw); /* w2 done: the reader's turn */
    ASSERT_EQ(park_task_wait(r, NULL), 0);
    ASSERT_FALSE(park_rwlock_try_write_lock(&rw));
    park_rwlock_read_unlock(&rw);
    park_task_release(w1);
    park_task_release(w2);
    park_task_release(r);
    ASSERT_TRUE(rw_is_free(&rw));
    park_pool_destroy(pool);
}

/* Readers and writers, as tasks chained on a pool and as blocking threads:
 * a writer sees nobody else inside, a reader sees no writer. */
#define RW_ORACLE_ROUNDS 300

struct rw_oracle {
    park_rwlock_t rw;
    park_pool_t *pool;
    atomic_int readers;
    atomic_int writers;
    unsigned data; /* written only under a write hold */
    atomic_int chains_left;
};

struct rw_chain {
    struct rw_oracle *o;
    int rounds;
    bool write;
};

static void rw_enter(struct rw_oracle *o, bool write)
{
    if (write) {
        if (atomic_fetch_add(&o->writers, 1) != 0 || atomic_load(&o->readers) != 0)
            test_fail(__FILE__, __LINE__, "a writer is not alone");
        for (int i = 0; i < 10; i++)
            o->data++;
        atomic_fetch_sub(&o->writers, 1);
    } else {
        atomic_fetch_add(&o->readers, 1);
        if (atomic_load(&o->writers) != 0)
            test_fail(__FILE__, __LINE__, "a reader is inside with a writer");
        ASSERT_EQ(o->data % 10, 0);
        atomic_fetch_sub(&o->readers, 1);
    }
}

static void rw_chain_step(park_task_t *done, void *arg)
{
    struct rw_chain *c = arg;
    ASSERT_EQ(park_task_result(done, NULL), 0);
    rw_enter(c->o, c->write);
    if (c->write)
        park_rwlock_write_unlock(&c->o->rw);
    else
        park_rwlock_read_unlock(&c->o->rw);
    if (--c->rounds == 0) {
        atomic_fetch_sub(&c->o->chains_left, 1);
        return;
    }
    park_task_t *t = not_null(c->write ? park_rwlock_write_lock_async(&c->o->rw, c->o->pool)
                                       : park_rwlock_read_lock_async(&c->o->rw, c->o->pool));
    ASSERT_EQ(park_task_then(t, c->o->pool, rw_chain_step, c), 0);
    park_task_release(t);
}

static void *rw_blocking_main(void *arg)
{
    struct rw_chain *c = arg;
    for (; c->rounds > 0; c->rounds--) {
        if (c->write)
            park_rwlock_write_lock(&c->o->rw);
        else
            park_rwlock_read_lock(&c->o->rw);
        rw_enter(c->o, c->write);
        if (c->write)
            park_rwlock_write_unlock(&c->o->rw);
        else
            park_rwlock_read_unlock(&c->o->rw);
    }
    return NULL;
}

TEST(rwlock_async_writers_exclude_readers_and_each_other)
{
    enum { CHAINS = 4, BLOCKING = 2 };
    struct rw_oracle o = {.rw = PARK_RWLOCK_INIT, .pool = pool_new(2)};
    atomic_store(&o.chains_left, CHAINS);
    struct rw_chain c[CHAINS], b[BLOCKING];
    for (int i = 0; i < BLOCKING; i++)
        b[i] = (struct rw_chain){&o, RW_ORACLE_ROUNDS, i == 0};
    test_threads_t *threads = test_threads_start(BLOCKING, rw_blocking_main, b, sizeof b[0]);
    for (int i = 0; i < CHAINS; i++) {
        c[i] = (struct rw_chain){&o, RW_ORACLE_ROUNDS, i % 2 == 0};
        park_task_t *t = not_null(c[i].write ? park_rwlock_write_lock_async(&o.rw, o.pool)
                                             : park_rwlock_read_lock_async(&o.rw, o.pool));
        ASSERT_EQ(park_task_then(t, o.pool, rw_chain_step, &c[i]), 0);
        park_task_release(t);
    }
    test_threads_join(threads);
    AWAIT(atomic_load(&o.chains_left) == 0);
    ASSERT_EQ(o.data, 10u * RW_ORACLE_ROUNDS * (CHAINS / 2 + 1));
    ASSERT_TRUE(rw_is_free(&o.rw));
    park_pool_destroy(o.pool);
}

static const test_case_t tests[] = {
    TEST_ENTRY(rwlock_read_async_continuation_never_runs_on_the_releasing_thread),
    TEST_ENTRY(rwlock_write_async_continuation_never_runs_on_the_releasing_thread),
    TEST_ENTRY(rwlock_read_async_uncontended_is_a_shared_completed_task),
    TEST_ENTRY(rwlock_write_async_uncontended_is_a_shared_completed_task),
    TEST_ENTRY(rwlock_read_async_uncontended_readers_share_the_lock),
    TEST_ENTRY(rwlock_read_async_cancelled_waiter_leaves_the_lock_free),
    TEST_ENTRY(rwlock_write_async_cancelled_waiter_leaves_the_lock_free),
    TEST_ENTRY(rwlock_read_async_cancel_after_grant_is_ealready_and_keeps_the_hold),
    TEST_ENTRY(rwlock_write_async_cancel_after_grant_is_ealready_and_keeps_the_hold),
    TEST_ENTRY(rwlock_read_async_cancel_at_completes_with_etimedout_and_takes_nothing),
    TEST_ENTRY(rwlock_write_async_cancel_at_completes_with_etimedout_and_takes_nothing),
    TEST_ENTRY(rwlock_read_async_dropping_a_pending_acquisition_cancels_it),
    TEST_ENTRY(rwlock_write_async_dropping_a_pending_acquisition_cancels_it),
    TEST_ENTRY(rwlock_read_async_dropping_an_unobserved_grant_releases_the_hold),
    TEST_ENTRY(rwlock_write_async_dropping_an_unobserved_grant_releases_the_hold),
    TEST_ENTRY(rwlock_read_async_dropping_an_observed_grant_keeps_the_hold),
    TEST_ENTRY(rwlock_write_async_dropping_an_observed_grant_keeps_the_hold),
    TEST_ENTRY(rwlock_cancelling_the_only_waiting_writer_admits_the_readers_behind_it),
    TEST_ENTRY(rwlock_cancelling_one_of_two_waiting_writers_does_not_admit_the_readers),
    TEST_ENTRY(rwlock_async_writers_exclude_readers_and_each_other),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
