/* tests/unit/async_support.c: the helpers and scenarios of
 * tests/unit/async_support.h. */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include <park/park.h>

#include "wait/wait.h"

#include "async_support.h"
#include "test.h"

park_pool_t *pool_new(unsigned threads)
{
    park_pool_t *pool = NULL;
    park_pool_config_t cfg = {.threads = threads};
    ASSERT_EQ(park_pool_create(&pool, &cfg), 0);
    return pool;
}

park_task_t *not_null(park_task_t *t)
{
    ASSERT_TRUE(t != NULL);
    return t;
}

void assert_completed(park_task_t *t, int err)
{
    ASSERT_TRUE(park_task_done(t));
    ASSERT_EQ(park_task_result(t, NULL), err);
    ASSERT_EQ(park_task_wait(t, NULL), err);
}

void assert_pending(park_task_t *t)
{
    ASSERT_FALSE(park_task_done(t));
}

/* ---- continuations ---------------------------------------------------------------- */

_Thread_local bool in_release;

void cont_fn(park_task_t *done, void *arg)
{
    struct cont *c = arg;
    if (in_release)
        test_fail(__FILE__, __LINE__, "a continuation ran within the releasing call");
    ASSERT_TRUE(park_pool_current() == c->pool);
    c->err = park_task_result(done, &c->result);
    atomic_fetch_add(&c->runs, 1);
}

void then(park_task_t *t, struct cont *c, park_pool_t *pool)
{
    memset(c, 0, sizeof *c);
    c->pool = pool;
    ASSERT_EQ(park_task_then(t, pool, cont_fn, c), 0);
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
void continuation_never_runs_on_the_releasing_thread(struct prim p)
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

/* ---- scenario: uncontended, a shared completed task ---------------------------- */

void uncontended_is_a_shared_completed_task(struct prim p)
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

/* ---- scenario: a cancelled waiter takes nothing -------------------------------- */

void cancelled_waiter_takes_nothing(struct prim p)
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

/* ---- scenario: cancel after the grant keeps it --------------------------------- */

void cancel_after_grant_keeps_it(struct prim p)
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

/* ---- scenario: park_task_cancel_at on a pending acquisition -------------------- */

void cancel_at_times_out_and_takes_nothing(struct prim p)
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

/* ---- scenario: dropping the last reference ------------------------------------- */

void dropping_a_pending_acquisition_cancels_it(struct prim p)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *t = queue_behind_hold(&p, pool);
    park_task_release(t);
    ASSERT_EQ(park__wait_count(p.obj), 0);
    p.drop_hold(p.obj);
    ASSERT_TRUE(p.is_free(p.obj));
    park_pool_destroy(pool);
}

void dropping_an_unobserved_grant_gives_it_back(struct prim p)
{
    park_pool_t *pool = pool_new(1);
    park_task_t *t = queue_behind_hold(&p, pool);
    p.drop_hold(p.obj); /* granted to t, which nobody looks at */
    ASSERT_FALSE(p.is_free(p.obj));
    park_task_release(t);
    ASSERT_TRUE(p.is_free(p.obj));
    park_pool_destroy(pool);
}

void dropping_an_observed_grant_keeps_it(struct prim p)
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
