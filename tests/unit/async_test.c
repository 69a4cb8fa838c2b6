/* tests/unit/async_test.c: asynchronous acquisitions (park_mutex_lock_async,
 * park_sem_acquire_async(_until), park_rwlock_*_lock_async,
 * park_lazy_get_async and park_lazy_init_async), one behaviour per test.
 *
 * The behaviours every primitive shares (a continuation never runs on the
 * releasing thread, uncontended acquisitions are a shared completed task,
 * cancel and drop conserve the permit) are written once as scenarios over a
 * table of primitives and run for each of them by a test of its own.
 *
 * Threads and tasks are lined up by handshakes: "the task is queued" is
 * observed in the wait queue itself (park__wait_count of the primitive's
 * address), and a grant is waited for with park_task_wait. Continuations
 * check a thread-local flag that the test sets around the call that
 * releases the primitive: a continuation run within that call would see it
 * set. Nothing asserts on elapsed time except that a deadline is never
 * early. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include <park/park.h>
#include <park/pool.h>
#include <park/task.h>

#include "pool/pool.h"
#include "wait/wait.h"

#include "test.h"

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

/* The task is complete with err, also as seen by wait. */
static void assert_completed(park_task_t *t, int err)
{
    ASSERT_TRUE(park_task_done(t));
    ASSERT_EQ(park_task_result(t, NULL), err);
    ASSERT_EQ(park_task_wait(t, NULL), err);
}

/* Checked without reading the outcome (park_task_done is true only once it
 * is complete, so a false answer observes nothing). */
static void assert_pending(park_task_t *t)
{
    ASSERT_FALSE(park_task_done(t));
}

static void spin(uint64_t *rng, uint32_t max)
{
    for (volatile uint32_t k = test_rng_below(rng, max); k > 0; k--) {
    }
}

/* ---- continuations ---------------------------------------------------------------- */

static _Thread_local bool in_release; /* set around a call that releases a primitive */

struct cont {
    park_pool_t *pool;
    atomic_int runs;
    int err;
    void *result;
};

static void cont_fn(park_task_t *done, void *arg)
{
    struct cont *c = arg;
    if (in_release)
        test_fail(__FILE__, __LINE__, "a continuation ran within the releasing call");
    ASSERT_TRUE(park_pool_current() == c->pool);
    c->err = park_task_result(done, &c->result);
    atomic_fetch_add(&c->runs, 1);
}

static void then(park_task_t *t, struct cont *c, park_pool_t *pool)
{
    memset(c, 0, sizeof *c);
    c->pool = pool;
    ASSERT_EQ(park_task_then(t, pool, cont_fn, c), 0);
}

/* ---- the primitives, behind one table ------------------------------------------- */

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

static park_sem_t the_sem;
static park_mutex_t the_mutex;
static park_rwlock_t the_rwlock;

/* A semaphore of one permit: a granted task holds the only one. */
static struct prim sem_prim(void)
{
    ASSERT_EQ(park_sem_init(&the_sem, 1, 1), 0);
    return (struct prim){&the_sem, sem_hold, sem_put, sem_async, sem_put, sem_is_free};
}

static struct prim mutex_prim(void)
{
    park_mutex_init(&the_mutex);
    return (struct prim){&the_mutex, mutex_hold, mutex_put, mutex_async, mutex_put, mutex_is_free};
}

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

/* Holds p and makes a task that waits for it (queued, pending). */
static park_task_t *queue_behind_hold(const struct prim *p, park_pool_t *pool)
{
    p->hold(p->obj);
    size_t before = park__wait_count(p->obj);
    park_task_t *t = not_null(p->async(p->obj, pool));
    assert_pending(t);
    ASSERT_EQ(park__wait_count(p->obj), before + 1);
    return t;
}

/* ---- scenario: a granted continuation never runs on the releasing thread ------- */

struct release_job {
    const struct prim *p;
    atomic_bool done;
};

static void release_job_fn(void *arg)
{
    struct release_job *j = arg;
    in_release = true;
    j->p->drop_hold(j->p->obj);
    in_release = false;
    atomic_store(&j->done, true);
}

/* Even rounds release from the test's thread, odd rounds from the pool's
 * only worker, which then runs the continuation itself, but only after the
 * release has returned. */
static void continuation_never_runs_on_the_releasing_thread(struct prim p)
{
    park_pool_t *pool = pool_new(1);
    for (int k = 0; k < 40; k++) {
        park_task_t *t = queue_behind_hold(&p, pool);
        struct cont c;
        then(t, &c, pool);
        if (k % 2 == 0) {
            in_release = true;
            p.drop_hold(p.obj);
            in_release = false;
        } else {
            struct release_job j = {&p, false};
            ASSERT_EQ(park_pool_submit(pool, release_job_fn, &j), 0);
            AWAIT(atomic_load(&j.done));
        }
        AWAIT(atomic_load(&c.runs) == 1);
        ASSERT_EQ(c.err, 0);
        p.release(p.obj);
        park_task_release(t);
        ASSERT_TRUE(p.is_free(p.obj));
    }
    park_pool_destroy(pool);
}

TEST(sem_async_continuation_never_runs_on_the_releasing_thread)
{
    continuation_never_runs_on_the_releasing_thread(sem_prim());
}

TEST(mutex_async_continuation_never_runs_on_the_releasing_thread)
{
    continuation_never_runs_on_the_releasing_thread(mutex_prim());
}

TEST(rwlock_read_async_continuation_never_runs_on_the_releasing_thread)
{
    continuation_never_runs_on_the_releasing_thread(rw_read_prim());
}

TEST(rwlock_write_async_continuation_never_runs_on_the_releasing_thread)
{
    continuation_never_runs_on_the_releasing_thread(rw_write_prim());
}

/* ---- scenario: uncontended, a shared completed task ---------------------------- */

static void uncontended_is_a_shared_completed_task(struct prim p)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *t = not_null(p.async(p.obj, pool));
    assert_completed(t, 0);
    void *r = &r;
    ASSERT_EQ(park_task_result(t, &r), 0);
    ASSERT_TRUE(r == NULL);
    ASSERT_FALSE(p.is_free(p.obj)); /* the task holds it */
    ASSERT_TRUE(park_task_retain(t) == t);
    park_task_release(t);
    park_task_release(t); /* the caller's: harmless, the task is permanent */
    ASSERT_FALSE(p.is_free(p.obj));
    ASSERT_EQ(park_task_cancel(t), EALREADY);
    p.release(p.obj);
    ASSERT_TRUE(p.is_free(p.obj));

    park_task_t *u = not_null(p.async(p.obj, pool));
    ASSERT_TRUE(u == t); /* the same object each time */
    assert_completed(u, 0);
    /* A continuation on it runs on the pool, as on any completed task. */
    struct cont c;
    then(u, &c, pool);
    AWAIT(atomic_load(&c.runs) == 1);
    ASSERT_EQ(c.err, 0);
    park_task_release(u);
    p.release(p.obj);
    ASSERT_TRUE(p.is_free(p.obj));
    park_pool_destroy(pool);
}

TEST(sem_async_uncontended_is_a_shared_completed_task)
{
    uncontended_is_a_shared_completed_task(sem_prim());
}

TEST(mutex_async_uncontended_is_a_shared_completed_task)
{
    uncontended_is_a_shared_completed_task(mutex_prim());
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

/* ---- scenario: a cancelled waiter takes nothing -------------------------------- */

static void cancelled_waiter_takes_nothing(struct prim p)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *t = queue_behind_hold(&p, pool);
    struct cont c;
    then(t, &c, pool);
    ASSERT_EQ(park_task_cancel(t), 0);
    ASSERT_EQ(park_task_cancel(t), EALREADY);
    assert_completed(t, ECANCELED);
    ASSERT_EQ(park__wait_count(p.obj), 0);
    p.drop_hold(p.obj);
    ASSERT_TRUE(p.is_free(p.obj));
    AWAIT(atomic_load(&c.runs) == 1);
    ASSERT_EQ(c.err, ECANCELED);
    park_task_release(t);
    ASSERT_TRUE(p.is_free(p.obj));
    park_pool_destroy(pool);
}

TEST(sem_async_cancelled_waiter_takes_no_permit)
{
    cancelled_waiter_takes_nothing(sem_prim());
}

TEST(mutex_async_cancelled_waiter_leaves_the_mutex_free)
{
    cancelled_waiter_takes_nothing(mutex_prim());
}

TEST(rwlock_read_async_cancelled_waiter_leaves_the_lock_free)
{
    cancelled_waiter_takes_nothing(rw_read_prim());
}

TEST(rwlock_write_async_cancelled_waiter_leaves_the_lock_free)
{
    cancelled_waiter_takes_nothing(rw_write_prim());
}

/* ---- scenario: cancel after the grant keeps it --------------------------------- */

static void cancel_after_grant_keeps_it(struct prim p)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *t = queue_behind_hold(&p, pool);
    p.drop_hold(p.obj); /* granted to t */
    ASSERT_EQ(park_task_cancel(t), EALREADY);
    ASSERT_EQ(park_task_wait(t, NULL), 0);
    ASSERT_EQ(park_task_result(t, NULL), 0);
    ASSERT_FALSE(p.is_free(p.obj));
    park_task_release(t);
    ASSERT_FALSE(p.is_free(p.obj)); /* the holder must release it */
    p.release(p.obj);
    ASSERT_TRUE(p.is_free(p.obj));
    park_pool_destroy(pool);
}

TEST(sem_async_cancel_after_grant_is_ealready_and_keeps_the_permit)
{
    cancel_after_grant_keeps_it(sem_prim());
}

TEST(mutex_async_cancel_after_grant_is_ealready_and_keeps_the_lock)
{
    cancel_after_grant_keeps_it(mutex_prim());
}

TEST(rwlock_read_async_cancel_after_grant_is_ealready_and_keeps_the_hold)
{
    cancel_after_grant_keeps_it(rw_read_prim());
}

TEST(rwlock_write_async_cancel_after_grant_is_ealready_and_keeps_the_hold)
{
    cancel_after_grant_keeps_it(rw_write_prim());
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

/* ---- scenario: park_task_cancel_at on a pending acquisition -------------------- */

static void cancel_at_times_out_and_takes_nothing(struct prim p)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *t = queue_behind_hold(&p, pool);
    park_time_t deadline = park_deadline_in(2 * MS);
    ASSERT_EQ(park_task_cancel_at(t, deadline), 0);
    ASSERT_EQ(park_task_wait(t, NULL), ETIMEDOUT);
    ASSERT_GE(park_now(), deadline);
    assert_completed(t, ETIMEDOUT);
    ASSERT_EQ(park__wait_count(p.obj), 0);
    p.drop_hold(p.obj);
    ASSERT_TRUE(p.is_free(p.obj));
    park_task_release(t);
    ASSERT_TRUE(p.is_free(p.obj));
    park_pool_destroy(pool);
}

TEST(sem_async_cancel_at_completes_with_etimedout_and_takes_no_permit)
{
    cancel_at_times_out_and_takes_nothing(sem_prim());
}

TEST(mutex_async_cancel_at_completes_with_etimedout_and_leaves_the_mutex_free)
{
    cancel_at_times_out_and_takes_nothing(mutex_prim());
}

TEST(rwlock_read_async_cancel_at_completes_with_etimedout_and_takes_nothing)
{
    cancel_at_times_out_and_takes_nothing(rw_read_prim());
}

TEST(rwlock_write_async_cancel_at_completes_with_etimedout_and_takes_nothing)
{
    cancel_at_times_out_and_takes_nothing(rw_write_prim());
}

/* ---- scenario: dropping the last reference ------------------------------------- */

static void dropping_a_pending_acquisition_cancels_it(struct prim p)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *t = queue_behind_hold(&p, pool);
    park_task_release(t);
    ASSERT_EQ(park__wait_count(p.obj), 0);
    p.drop_hold(p.obj);
    ASSERT_TRUE(p.is_free(p.obj));
    park_pool_destroy(pool);
}

static void dropping_an_unobserved_grant_gives_it_back(struct prim p)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *t = queue_behind_hold(&p, pool);
    p.drop_hold(p.obj); /* granted to t, which nobody looks at */
    ASSERT_FALSE(p.is_free(p.obj));
    park_task_release(t);
    ASSERT_TRUE(p.is_free(p.obj));
    park_pool_destroy(pool);
}

static void dropping_an_observed_grant_keeps_it(struct prim p)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *t = queue_behind_hold(&p, pool);
    p.drop_hold(p.obj);
    ASSERT_EQ(park_task_wait(t, NULL), 0);
    park_task_release(t);
    ASSERT_FALSE(p.is_free(p.obj)); /* the holder's to release */
    p.release(p.obj);
    ASSERT_TRUE(p.is_free(p.obj));
    park_pool_destroy(pool);
}

TEST(sem_async_dropping_a_pending_acquisition_cancels_it)
{
    dropping_a_pending_acquisition_cancels_it(sem_prim());
}

TEST(mutex_async_dropping_a_pending_acquisition_cancels_it)
{
    dropping_a_pending_acquisition_cancels_it(mutex_prim());
}

TEST(rwlock_read_async_dropping_a_pending_acquisition_cancels_it)
{
    dropping_a_pending_acquisition_cancels_it(rw_read_prim());
}

TEST(rwlock_write_async_dropping_a_pending_acquisition_cancels_it)
{
    dropping_a_pending_acquisition_cancels_it(rw_write_prim());
}

TEST(sem_async_dropping_an_unobserved_grant_gives_the_permit_back)
{
    dropping_an_unobserved_grant_gives_it_back(sem_prim());
}

TEST(mutex_async_dropping_an_unobserved_grant_unlocks_the_mutex)
{
    dropping_an_unobserved_grant_gives_it_back(mutex_prim());
}

TEST(rwlock_read_async_dropping_an_unobserved_grant_releases_the_hold)
{
    dropping_an_unobserved_grant_gives_it_back(rw_read_prim());
}

TEST(rwlock_write_async_dropping_an_unobserved_grant_releases_the_hold)
{
    dropping_an_unobserved_grant_gives_it_back(rw_write_prim());
}

TEST(sem_async_dropping_an_observed_grant_keeps_the_permit)
{
    dropping_an_observed_grant_keeps_it(sem_prim());
}

TEST(mutex_async_dropping_an_observed_grant_keeps_the_lock)
{
    dropping_an_observed_grant_keeps_it(mutex_prim());
}

TEST(rwlock_read_async_dropping_an_observed_grant_keeps_the_hold)
{
    dropping_an_observed_grant_keeps_it(rw_read_prim());
}

TEST(rwlock_write_async_dropping_an_observed_grant_keeps_the_hold)
{
    dropping_an_observed_grant_keeps_it(rw_write_prim());
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

/* ---- lazy ---------------------------------------------------------------------------- */

/* A factory whose runs are tasks the test completes by hand. */
#define RUNS_MAX 4

struct factory {
    park_pool_t *pool;
    atomic_int calls;
    park_task_t *runs[RUNS_MAX];
};

static park_task_t *factory_fn(void *arg, park_pool_t *pool)
{
    struct factory *f = arg;
    ASSERT_TRUE(pool == f->pool);
    int i = atomic_fetch_add(&f->calls, 1);
    if (i >= RUNS_MAX)
        test_fail(__FILE__, __LINE__, "the factory was called %d times", i + 1);
    return park_task_retain(f->runs[i]);
}

static void factory_init(struct factory *f, park_pool_t *pool)
{
    memset(f, 0, sizeof *f);
    f->pool = pool;
    for (int i = 0; i < RUNS_MAX; i++)
        f->runs[i] = not_null(park_task_new());
}

static void factory_fini(struct factory *f)
{
    for (int i = 0; i < RUNS_MAX; i++)
        park_task_release(f->runs[i]);
}

static int make_value(void *arg, void **result)
{
    *result = arg;
    return 0;
}

/* A factory that runs make_value on the pool. */
static park_task_t *run_factory(void *arg, park_pool_t *pool)
{
    return park_task_run(pool, make_value, arg);
}

/* A blocking get on a thread of its own. */
struct getter {
    park_lazy_t *l;
    int err;
    void *value;
    atomic_bool done;
};

static void *getter_main(void *arg)
{
    struct getter *g = arg;
    g->err = park_lazy_get(g->l, &g->value);
    atomic_store(&g->done, true);
    return NULL;
}

TEST(lazy_init_async_get_async_gives_the_value_of_the_factorys_task)
{
    int token;
    park_pool_t *pool = pool_new(2);
    park_lazy_t l;
    park_lazy_init_async(&l, pool, run_factory, &token);
    ASSERT_FALSE(park_lazy_ready(&l));
    park_task_t *t = not_null(park_lazy_get_async(&l, pool));
    void *v = NULL;
    ASSERT_EQ(park_task_wait(t, &v), 0);
    ASSERT_TRUE(v == &token);
    ASSERT_TRUE(park_lazy_ready(&l));
    v = NULL;
    ASSERT_EQ(park_lazy_get(&l, &v), 0);
    ASSERT_TRUE(v == &token);
    park_task_release(t);
    park_pool_destroy(pool);
}

TEST(lazy_init_async_blocking_get_starts_the_run_and_waits_for_it)
{
    int token;
    park_pool_t *pool = pool_new(1);
    park_lazy_t l;
    park_lazy_init_async(&l, pool, run_factory, &token);
    void *v = NULL;
    ASSERT_EQ(park_lazy_get(&l, &v), 0);
    ASSERT_TRUE(v == &token);
    park_pool_destroy(pool);
}

struct async_getter {
    park_lazy_t *l;
    park_pool_t *pool;
    pthread_barrier_t *start;
    park_task_t *t;
};

static void *async_getter_main(void *arg)
{
    struct async_getter *g = arg;
    pthread_barrier_wait(g->start);
    g->t = not_null(park_lazy_get_async(g->l, g->pool));
    return NULL;
}

TEST(lazy_concurrent_get_async_and_get_share_one_run)
{
    enum { N = 8 };
    int token;
    park_pool_t *pool = pool_new(2);
    struct factory f;
    factory_init(&f, pool);
    park_lazy_t l;
    park_lazy_init_async(&l, pool, factory_fn, &f);
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, N + 1);
    struct async_getter a[N];
    for (int i = 0; i < N; i++)
        a[i] = (struct async_getter){&l, pool, &start, NULL};
    test_threads_t *ta = test_threads_start(N, async_getter_main, a, sizeof a[0]);
    pthread_barrier_wait(&start);
    test_threads_join(ta);
    pthread_barrier_destroy(&start);
    struct getter g = {&l, -1, NULL, false};
    test_threads_t *tg = test_threads_start(1, getter_main, &g, 0);
    AWAIT(park__wait_count(&l) == N + 1);
    ASSERT_EQ(atomic_load(&f.calls), 1);
    for (int i = 0; i < N; i++)
        assert_pending(a[i].t);
    ASSERT_EQ(park_task_complete(f.runs[0], 0, &token), 0);
    for (int i = 0; i < N; i++) {
        void *v = NULL;
        ASSERT_EQ(park_task_wait(a[i].t, &v), 0);
        ASSERT_TRUE(v == &token);
        park_task_release(a[i].t);
    }
    test_threads_join(tg);
    ASSERT_EQ(g.err, 0);
    ASSERT_TRUE(g.value == &token);
    ASSERT_EQ(atomic_load(&f.calls), 1);
    park_pool_destroy(pool);
    factory_fini(&f);
}

TEST(lazy_failed_async_run_gives_its_error_to_its_waiters_and_the_next_call_retries)
{
    enum { N = 3 };
    int token;
    park_pool_t *pool = pool_new(1);
    struct factory f;
    factory_init(&f, pool);
    park_lazy_t l;
    park_lazy_init_async(&l, pool, factory_fn, &f);
    park_task_t *t[N];
    for (int i = 0; i < N; i++)
        t[i] = not_null(park_lazy_get_async(&l, pool));
    struct getter g = {&l, -1, NULL, false};
    test_threads_t *tg = test_threads_start(1, getter_main, &g, 0);
    AWAIT(park__wait_count(&l) == N + 1);
    ASSERT_EQ(park_task_complete(f.runs[0], EIO, NULL), 0);
    for (int i = 0; i < N; i++) {
        ASSERT_EQ(park_task_wait(t[i], NULL), EIO);
        park_task_release(t[i]);
    }
    test_threads_join(tg);
    ASSERT_EQ(g.err, EIO);
    ASSERT_FALSE(park_lazy_ready(&l));
    ASSERT_EQ(atomic_load(&f.calls), 1);

    park_task_t *u = not_null(park_lazy_get_async(&l, pool)); /* the next run */
    ASSERT_EQ(atomic_load(&f.calls), 2);
    ASSERT_EQ(park_task_complete(f.runs[1], 0, &token), 0);
    void *v = NULL;
    ASSERT_EQ(park_task_wait(u, &v), 0);
    ASSERT_TRUE(v == &token);
    park_task_release(u);
    ASSERT_TRUE(park_lazy_ready(&l));
    ASSERT_EQ(park_lazy_get(&l, &v), 0);
    ASSERT_EQ(atomic_load(&f.calls), 2);
    park_pool_destroy(pool);
    factory_fini(&f);
}

TEST(lazy_cancelling_one_get_async_does_not_cancel_the_run)
{
    int token;
    park_pool_t *pool = pool_new(1);
    struct factory f;
    factory_init(&f, pool);
    park_lazy_t l;
    park_lazy_init_async(&l, pool, factory_fn, &f);
    park_task_t *a = not_null(park_lazy_get_async(&l, pool));
    park_task_t *b = not_null(park_lazy_get_async(&l, pool));
    park_task_t *c = not_null(park_lazy_get_async(&l, pool));
    park_task_t *d = not_null(park_lazy_get_async(&l, pool));
    ASSERT_EQ(park__wait_count(&l), 4);
    ASSERT_EQ(park_task_cancel(b), 0);
    assert_completed(b, ECANCELED);
    park_task_release(d); /* dropped while pending: cancelled too */
    ASSERT_EQ(park__wait_count(&l), 2);
    assert_pending(f.runs[0]);
    assert_pending(a);
    assert_pending(c);
    ASSERT_EQ(park_task_complete(f.runs[0], 0, &token), 0);
    void *v = NULL;
    ASSERT_EQ(park_task_wait(a, &v), 0);
    ASSERT_TRUE(v == &token);
    v = NULL;
    ASSERT_EQ(park_task_wait(c, &v), 0);
    ASSERT_TRUE(v == &token);
    assert_completed(b, ECANCELED);
    ASSERT_EQ(atomic_load(&f.calls), 1);
    park_task_release(a);
    park_task_release(b);
    park_task_release(c);
    park_pool_destroy(pool);
    factory_fini(&f);
}

TEST(lazy_get_async_on_a_ready_lazy_is_complete_at_once_with_the_value)
{
    int token;
    park_pool_t *pool = pool_new(1);
    park_lazy_t l;
    park_lazy_init_async(&l, pool, run_factory, &token);
    void *v = NULL;
    ASSERT_EQ(park_lazy_get(&l, &v), 0);
    park_task_t *t = not_null(park_lazy_get_async(&l, pool));
    ASSERT_TRUE(park_task_done(t));
    v = NULL;
    ASSERT_EQ(park_task_result(t, &v), 0);
    ASSERT_TRUE(v == &token);
    park_task_release(t);
    park_pool_destroy(pool);
}

static _Thread_local bool on_caller; /* set by the test around get_async */

struct sync_init {
    atomic_int calls;
    bool ran_on_caller;
    int token;
};

static int sync_init_fn(void *arg, void **value)
{
    struct sync_init *s = arg;
    atomic_fetch_add(&s->calls, 1);
    s->ran_on_caller = on_caller;
    *value = &s->token;
    return 0;
}

TEST(lazy_get_async_on_a_synchronous_lazy_runs_it_on_the_caller)
{
    park_pool_t *pool = pool_new(1);
    struct sync_init s = {0, false, 0};
    park_lazy_t l = PARK_LAZY_INIT(sync_init_fn, &s);
    on_caller = true;
    park_task_t *t = not_null(park_lazy_get_async(&l, pool));
    on_caller = false;
    ASSERT_TRUE(s.ran_on_caller);
    ASSERT_TRUE(park_task_done(t));
    void *v = NULL;
    ASSERT_EQ(park_task_result(t, &v), 0);
    ASSERT_TRUE(v == &s.token);
    ASSERT_TRUE(park_lazy_ready(&l));
    ASSERT_EQ(atomic_load(&s.calls), 1);
    park_task_release(t);
    park_pool_destroy(pool);
}

struct reentry {
    park_lazy_t l;
    park_pool_t *pool;
    int inner_err;
};

static int reentry_fn(void *arg, void **value)
{
    struct reentry *r = arg;
    park_task_t *t = not_null(park_lazy_get_async(&r->l, r->pool));
    ASSERT_TRUE(park_task_done(t));
    r->inner_err = park_task_result(t, NULL);
    park_task_release(t);
    *value = r;
    return 0;
}

TEST(lazy_get_async_from_inside_its_synchronous_initialiser_is_edeadlk)
{
    park_pool_t *pool = pool_new(1);
    struct reentry r = {.pool = pool, .inner_err = -1};
    park_lazy_init(&r.l, reentry_fn, &r);
    void *v = NULL;
    ASSERT_EQ(park_lazy_get(&r.l, &v), 0);
    ASSERT_EQ(r.inner_err, EDEADLK);
    park_pool_destroy(pool);
}

TEST(lazy_get_async_without_initialiser_is_einval)
{
    park_pool_t *pool = pool_new(1);
    park_lazy_t l;
    memset(&l, 0, sizeof l);
    park_task_t *t = not_null(park_lazy_get_async(&l, pool));
    assert_completed(t, EINVAL);
    park_task_release(t);
    park_pool_destroy(pool);
}

/* A factory that returns NULL (no run) until `fail` calls have been made,
 * then runs make_value; its first call waits until the test opens `gate`. */
struct null_factory {
    int fail;
    atomic_int calls;
    atomic_bool in_first;
    atomic_bool gate;
    int token;
};

static park_task_t *null_factory_fn(void *arg, park_pool_t *pool)
{
    struct null_factory *f = arg;
    int i = atomic_fetch_add(&f->calls, 1);
    if (i == 0) {
        atomic_store(&f->in_first, true);
        AWAIT(atomic_load(&f->gate));
    }
    if (i < f->fail)
        return NULL;
    return park_task_run(pool, make_value, &f->token);
}

TEST(lazy_factory_returning_null_fails_the_run_with_enomem_for_every_caller_and_the_next_retries)
{
    park_pool_t *pool = pool_new(1);
    struct null_factory f = {.fail = 1};
    park_lazy_t l;
    park_lazy_init_async(&l, pool, null_factory_fn, &f);
    atomic_store(&f.gate, true); /* no gate: the starter fails at once */
    park_task_t *t = not_null(park_lazy_get_async(&l, pool));
    ASSERT_EQ(park_task_wait(t, NULL), ENOMEM);
    park_task_release(t);
    ASSERT_EQ(atomic_load(&f.calls), 1);
    ASSERT_FALSE(park_lazy_ready(&l));
    void *v = NULL;
    ASSERT_EQ(park_lazy_get(&l, &v), 0); /* the next call runs again */
    ASSERT_TRUE(v == &f.token);
    ASSERT_EQ(atomic_load(&f.calls), 2);
    park_pool_destroy(pool);
}

TEST(lazy_factory_returning_null_fails_a_blocking_starter_with_enomem)
{
    park_pool_t *pool = pool_new(1);
    struct null_factory f = {.fail = 2};
    atomic_store(&f.gate, true);
    park_lazy_t l;
    park_lazy_init_async(&l, pool, null_factory_fn, &f);
    void *v = &f;
    ASSERT_EQ(park_lazy_get(&l, &v), ENOMEM);
    ASSERT_TRUE(v == &f); /* unchanged */
    ASSERT_EQ(park_lazy_get_until(&l, &v, park_deadline_in(1000 * (uint64_t)MS)), ENOMEM);
    ASSERT_EQ(atomic_load(&f.calls), 2);
    ASSERT_EQ(park__wait_count(&l), 0);
    ASSERT_EQ(park_lazy_get(&l, &v), 0);
    ASSERT_TRUE(v == &f.token);
    ASSERT_EQ(atomic_load(&f.calls), 3);
    park_pool_destroy(pool);
}

struct lazy_starter {
    park_lazy_t *l;
    park_pool_t *pool;
    park_task_t *t;
};

static void *lazy_starter_main(void *arg)
{
    struct lazy_starter *s = arg;
    s->t = not_null(park_lazy_get_async(s->l, s->pool));
    return NULL;
}

TEST(lazy_factory_returning_null_gives_enomem_to_the_callers_queued_while_it_ran)
{
    park_pool_t *pool = pool_new(1);
    struct null_factory f = {.fail = 1};
    park_lazy_t l;
    park_lazy_init_async(&l, pool, null_factory_fn, &f);
    struct lazy_starter s = {&l, pool, NULL};
    test_threads_t *ts = test_threads_start(1, lazy_starter_main, &s, 0);
    AWAIT(atomic_load(&f.in_first)); /* the run is started, its factory called */
    park_task_t *a = not_null(park_lazy_get_async(&l, pool));
    park_task_t *b = not_null(park_lazy_get_async(&l, pool));
    struct getter g = {&l, -1, NULL, false};
    test_threads_t *tg = test_threads_start(1, getter_main, &g, 0);
    AWAIT(park__wait_count(&l) == 4); /* the starter, a, b and g */
    atomic_store(&f.gate, true);
    test_threads_join(ts);
    test_threads_join(tg);
    ASSERT_EQ(park_task_wait(s.t, NULL), ENOMEM);
    ASSERT_EQ(park_task_wait(a, NULL), ENOMEM);
    ASSERT_EQ(park_task_wait(b, NULL), ENOMEM);
    ASSERT_EQ(g.err, ENOMEM);
    ASSERT_EQ(atomic_load(&f.calls), 1);
    park_task_release(s.t);
    park_task_release(a);
    park_task_release(b);
    void *v = NULL;
    ASSERT_EQ(park_lazy_get(&l, &v), 0);
    ASSERT_TRUE(v == &f.token);
    ASSERT_EQ(atomic_load(&f.calls), 2);
    park_pool_destroy(pool);
}

/* A factory whose task has already failed: the run ends on the pool as
 * soon as its continuation runs, usually before the starter could have
 * queued behind it afterwards. */
struct failed_factory {
    atomic_int calls;
};

static park_task_t *failed_factory_fn(void *arg, park_pool_t *pool)
{
    (void)pool;
    struct failed_factory *f = arg;
    atomic_fetch_add(&f->calls, 1);
    park_task_t *t = park_task_new();
    if (t)
        park_task_complete(t, EIO, NULL);
    return t;
}

TEST(lazy_starter_of_a_run_that_fails_at_once_gets_its_error_and_starts_no_other_run)
{
    enum { ROUNDS = 200 };
    park_pool_t *pool = pool_new(2);
    struct failed_factory f = {0};
    park_lazy_t l;
    park_lazy_init_async(&l, pool, failed_factory_fn, &f);
    for (int i = 0; i < ROUNDS; i++) {
        park_task_t *t = not_null(park_lazy_get_async(&l, pool));
        ASSERT_EQ(park_task_wait(t, NULL), EIO);
        park_task_release(t);
        ASSERT_EQ(atomic_load(&f.calls), 2 * i + 1);
        void *v = NULL;
        ASSERT_EQ(park_lazy_get(&l, &v), EIO);
        ASSERT_EQ(atomic_load(&f.calls), 2 * i + 2);
    }
    ASSERT_FALSE(park_lazy_ready(&l));
    park_pool_destroy(pool);
}

/* Calls on an asynchronous lazy from a job that runs during
 * park_pool_destroy's drain: the factory's run can no longer be scheduled
 * on the closing pool. */
struct closing_lazy {
    park_pool_t *pool;
    park_lazy_t l;
    atomic_int calls;
    int async_err, async_again_err, get_err;
};

static park_task_t *counting_run_factory(void *arg, park_pool_t *pool)
{
    struct closing_lazy *c = arg;
    atomic_fetch_add(&c->calls, 1);
    return park_task_run(pool, make_value, c);
}

static void closing_lazy_job(void *arg)
{
    struct closing_lazy *c = arg;
    AWAIT(park__pool_closing(c->pool));
    park_task_t *t = not_null(park_lazy_get_async(&c->l, c->pool));
    ASSERT_TRUE(park_task_done(t));
    c->async_err = park_task_result(t, NULL);
    park_task_release(t);
    t = not_null(park_lazy_get_async(&c->l, c->pool)); /* retried, fails again */
    c->async_again_err = park_task_wait(t, NULL);
    park_task_release(t);
    void *v = NULL;
    c->get_err = park_lazy_get(&c->l, &v);
}

TEST(lazy_factory_that_cannot_be_scheduled_fails_the_run_with_epipe_and_destroy_returns)
{
    struct closing_lazy c = {.pool = pool_new(1)};
    park_lazy_init_async(&c.l, c.pool, counting_run_factory, &c);
    ASSERT_EQ(park_pool_submit(c.pool, closing_lazy_job, &c), 0);
    park_pool_destroy(c.pool); /* returns: the job did not loop */
    ASSERT_EQ(c.async_err, EPIPE);
    ASSERT_EQ(c.async_again_err, EPIPE);
    ASSERT_EQ(c.get_err, EPIPE);
    ASSERT_EQ(atomic_load(&c.calls), 3); /* once per call: each call retried */
    ASSERT_FALSE(park_lazy_ready(&c.l));
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

static const test_case_t tests[] = {
    TEST_ENTRY(sem_async_continuation_never_runs_on_the_releasing_thread),
    TEST_ENTRY(mutex_async_continuation_never_runs_on_the_releasing_thread),
    TEST_ENTRY(rwlock_read_async_continuation_never_runs_on_the_releasing_thread),
    TEST_ENTRY(rwlock_write_async_continuation_never_runs_on_the_releasing_thread),
    TEST_ENTRY(sem_async_uncontended_is_a_shared_completed_task),
    TEST_ENTRY(mutex_async_uncontended_is_a_shared_completed_task),
    TEST_ENTRY(rwlock_read_async_uncontended_is_a_shared_completed_task),
    TEST_ENTRY(rwlock_write_async_uncontended_is_a_shared_completed_task),
    TEST_ENTRY(rwlock_read_async_uncontended_readers_share_the_lock),
    TEST_ENTRY(sem_async_cancelled_waiter_takes_no_permit),
    TEST_ENTRY(mutex_async_cancelled_waiter_leaves_the_mutex_free),
    TEST_ENTRY(rwlock_read_async_cancelled_waiter_leaves_the_lock_free),
    TEST_ENTRY(rwlock_write_async_cancelled_waiter_leaves_the_lock_free),
    TEST_ENTRY(sem_async_cancel_after_grant_is_ealready_and_keeps_the_permit),
    TEST_ENTRY(mutex_async_cancel_after_grant_is_ealready_and_keeps_the_lock),
    TEST_ENTRY(rwlock_read_async_cancel_after_grant_is_ealready_and_keeps_the_hold),
    TEST_ENTRY(rwlock_write_async_cancel_after_grant_is_ealready_and_keeps_the_hold),
    TEST_ENTRY(sem_async_cancel_at_completes_with_etimedout_and_takes_no_permit),
    TEST_ENTRY(mutex_async_cancel_at_completes_with_etimedout_and_leaves_the_mutex_free),
    TEST_ENTRY(rwlock_read_async_cancel_at_completes_with_etimedout_and_takes_nothing),
    TEST_ENTRY(rwlock_write_async_cancel_at_completes_with_etimedout_and_takes_nothing),
    TEST_ENTRY(sem_async_dropping_a_pending_acquisition_cancels_it),
    TEST_ENTRY(mutex_async_dropping_a_pending_acquisition_cancels_it),
    TEST_ENTRY(rwlock_read_async_dropping_a_pending_acquisition_cancels_it),
    TEST_ENTRY(rwlock_write_async_dropping_a_pending_acquisition_cancels_it),
    TEST_ENTRY(sem_async_dropping_an_unobserved_grant_gives_the_permit_back),
    TEST_ENTRY(mutex_async_dropping_an_unobserved_grant_unlocks_the_mutex),
    TEST_ENTRY(rwlock_read_async_dropping_an_unobserved_grant_releases_the_hold),
    TEST_ENTRY(rwlock_write_async_dropping_an_unobserved_grant_releases_the_hold),
    TEST_ENTRY(sem_async_dropping_an_observed_grant_keeps_the_permit),
    TEST_ENTRY(mutex_async_dropping_an_observed_grant_keeps_the_lock),
    TEST_ENTRY(rwlock_read_async_dropping_an_observed_grant_keeps_the_hold),
    TEST_ENTRY(rwlock_write_async_dropping_an_observed_grant_keeps_the_hold),
    TEST_ENTRY(sem_async_waiters_are_granted_in_arrival_order_skipping_a_cancelled_one),
    TEST_ENTRY(sem_blocking_and_async_waiters_share_one_fifo_queue),
    TEST_ENTRY(sem_async_until_a_past_deadline_takes_a_free_permit),
    TEST_ENTRY(sem_async_until_a_past_deadline_on_an_empty_sem_is_etimedout_at_once),
    TEST_ENTRY(sem_async_until_a_near_deadline_is_etimedout_not_before_it_and_takes_nothing),
    TEST_ENTRY(sem_async_until_takes_a_permit_released_before_the_deadline),
    TEST_ENTRY(sem_async_release_racing_cancel_conserves_permits),
    TEST_ENTRY(sem_async_until_timeout_racing_release_conserves_permits),
    TEST_ENTRY(sem_async_continuation_that_releases_and_acquires_again_does_not_deadlock),
    TEST_ENTRY(rwlock_cancelling_the_only_waiting_writer_admits_the_readers_behind_it),
    TEST_ENTRY(rwlock_cancelling_one_of_two_waiting_writers_does_not_admit_the_readers),
    TEST_ENTRY(rwlock_async_writers_exclude_readers_and_each_other),
    TEST_ENTRY(mutex_async_and_blocking_lockers_exclude_each_other),
    TEST_ENTRY(lazy_init_async_get_async_gives_the_value_of_the_factorys_task),
    TEST_ENTRY(lazy_init_async_blocking_get_starts_the_run_and_waits_for_it),
    TEST_ENTRY(lazy_concurrent_get_async_and_get_share_one_run),
    TEST_ENTRY(lazy_failed_async_run_gives_its_error_to_its_waiters_and_the_next_call_retries),
    TEST_ENTRY(lazy_cancelling_one_get_async_does_not_cancel_the_run),
    TEST_ENTRY(lazy_get_async_on_a_ready_lazy_is_complete_at_once_with_the_value),
    TEST_ENTRY(lazy_get_async_on_a_synchronous_lazy_runs_it_on_the_caller),
    TEST_ENTRY(lazy_get_async_from_inside_its_synchronous_initialiser_is_edeadlk),
    TEST_ENTRY(lazy_get_async_without_initialiser_is_einval),
    TEST_ENTRY(
        lazy_factory_returning_null_fails_the_run_with_enomem_for_every_caller_and_the_next_retries),
    TEST_ENTRY(lazy_factory_returning_null_fails_a_blocking_starter_with_enomem),
    TEST_ENTRY(lazy_factory_returning_null_gives_enomem_to_the_callers_queued_while_it_ran),
    TEST_ENTRY(lazy_starter_of_a_run_that_fails_at_once_gets_its_error_and_starts_no_other_run),
    TEST_ENTRY(lazy_factory_that_cannot_be_scheduled_fails_the_run_with_epipe_and_destroy_returns),
    TEST_ENTRY(sem_async_dropping_a_pending_timed_acquisition_cancels_it),
    TEST_ENTRY(sem_async_cancel_after_grant_then_drop_keeps_the_permit_for_the_holder),
    TEST_ENTRY(sem_async_until_with_a_deadline_and_no_pool_is_einval_and_takes_nothing),
    TEST_ENTRY(sem_async_until_forever_needs_no_pool),
    TEST_ENTRY(sem_async_until_on_a_pool_shutting_down_is_etimedout_at_once_and_takes_nothing),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
