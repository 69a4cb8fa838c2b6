/* tests/unit/lazy_async_test.c: park_lazy_init_async and
 * park_lazy_get_async (lib/lazy_async.c), one behaviour per test; lined up
 * as tests/unit/async_support.h says. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <park/park.h>

#include "pool/pool.h" /* white box: park__pool_closing */
#include "wait/wait.h"

#include "async_support.h"
#include "test.h"

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

static const test_case_t tests[] = {
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
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
