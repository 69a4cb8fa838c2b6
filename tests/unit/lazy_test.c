/* tests/unit/lazy_test.c: park_lazy and park_once, one behaviour per test.
 *
 * Threads are lined up by handshakes, never by sleeps: the initialiser of
 * a test can hold its run on a semaphore (the gate) until the test has
 * seen the callers it expects queued behind the run in the wait queue
 * itself (queued_on counts the waiters of the object's key). The only
 * timing asserted is that a timed get never gives up before its deadline
 * (and, generously, not seconds after), and that a waiter held asleep for
 * a millisecond counts its sleep as long (sleeps never end early). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <park/park.h>

#include "lazy_impl.h"
#include "wait/wait.h"

#include "test.h"

/* The state word, white-box (lib/lazy.c documents it). */
static uint32_t state_of(const uint32_t *state)
{
    return __atomic_load_n(state, __ATOMIC_ACQUIRE);
}

/* ---- the initialiser ------------------------------------------------------- */

/* Counts its runs and checks that they never overlap; runs 1..fail_runs
 * fail with err; runs 1..gated_runs wait for a permit of `gate` before
 * returning, so the test decides when a run ends. The value is &token. */
struct factory {
    atomic_int runs;
    atomic_int inside;
    int fail_runs;
    int err;
    int gated_runs;
    park_sem_t gate;
    pthread_t last_thread; /* that ran the initialiser */
    int token;
};

static void factory_init(struct factory *f, int fail_runs, int gated_runs)
{
    memset(f, 0, sizeof *f);
    f->fail_runs = fail_runs;
    f->err = EIO;
    f->gated_runs = gated_runs;
    ASSERT_EQ(park_sem_init(&f->gate, 0, 64), 0);
}

static int factory_run(struct factory *f, void **value)
{
    int run = atomic_fetch_add(&f->runs, 1) + 1;
    if (atomic_fetch_add(&f->inside, 1) != 0)
        test_fail(__FILE__, __LINE__, "two initialiser runs overlap");
    f->last_thread = pthread_self();
    if (run <= f->gated_runs)
        park_sem_acquire(&f->gate);
    atomic_fetch_sub(&f->inside, 1);
    if (run <= f->fail_runs)
        return f->err;
    if (value)
        *value = &f->token;
    return 0;
}

static int factory_lazy(void *arg, void **value)
{
    return factory_run(arg, value);
}

static int factory_once(void *arg)
{
    return factory_run(arg, NULL);
}

static void open_gate(struct factory *f)
{
    ASSERT_EQ(park_sem_release(&f->gate, 1), 0);
}

/* ---- callers --------------------------------------------------------------- */

/* A thread that makes one call (park_lazy_get, park_lazy_get_until when
 * timed, or park_once when o is set) and, with `again`, one more after an
 * error. */
struct caller {
    park_lazy_t *l;
    park_once_t *o;
    struct factory *f; /* park_once's argument */
    pthread_barrier_t *start;
    bool timed;
    park_time_t deadline;
    bool again;
    int result, result2;
    void *value, *value2;
    bool ready_after; /* park_lazy_ready right after the first call */
    park_time_t returned_at;
    atomic_bool done;
};

static int make_call(struct caller *c, void **value)
{
    if (c->o)
        return park_once(c->o, factory_once, c->f);
    if (c->timed)
        return park_lazy_get_until(c->l, value, c->deadline);
    return park_lazy_get(c->l, value);
}

static void *caller_main(void *arg)
{
    struct caller *c = arg;
    if (c->start)
        pthread_barrier_wait(c->start);
    c->result = make_call(c, &c->value);
    c->returned_at = park_now();
    if (c->l)
        c->ready_after = park_lazy_ready(c->l);
    if (c->again && c->result != 0)
        c->result2 = make_call(c, &c->value2);
    atomic_store(&c->done, true);
    return NULL;
}

static test_threads_t *start_caller(struct caller *c)
{
    return test_threads_start(1, caller_main, c, sizeof *c);
}

/* Starts the caller that will run the initialiser and returns once its
 * run (run number `run` of f) has begun. */
static test_threads_t *start_runner(struct caller *c, struct factory *f, int run)
{
    test_threads_t *t = start_caller(c);
    AWAIT(atomic_load(&f->runs) == run);
    return t;
}

/* Starts n callers one at a time, each queued behind the run on key before
 * the next starts. */
static void queue_callers(const void *key, struct caller *c, test_threads_t **t, int n)
{
    size_t base = park__wait_count(key);
    for (int i = 0; i < n; i++) {
        t[i] = start_caller(&c[i]);
        AWAIT(park__wait_count(key) == base + (size_t)i + 1);
    }
}

static void join_all(test_threads_t **t, int n)
{
    for (int i = 0; i < n; i++)
        test_threads_join(t[i]);
}

/* ---- park_lazy: basics ----------------------------------------------------- */

TEST(lazy_size_is_five_words_and_once_is_four_bytes)
{
    ASSERT_EQ(sizeof(park_lazy_t), 5 * sizeof(void *));
    ASSERT_EQ(sizeof(park_once_t), 4);
}

TEST(lazy_static_initializer_is_not_ready_and_the_first_get_runs_the_initialiser)
{
    struct factory f;
    factory_init(&f, 0, 0);
    park_lazy_t l = PARK_LAZY_INIT(factory_lazy, &f);
    ASSERT_FALSE(park_lazy_ready(&l));
    ASSERT_EQ(atomic_load(&f.runs), 0);
    void *v = NULL;
    ASSERT_EQ(park_lazy_get(&l, &v), 0);
    ASSERT_TRUE(v == &f.token);
    ASSERT_EQ(atomic_load(&f.runs), 1);
    ASSERT_TRUE(park_lazy_ready(&l));
}

TEST(lazy_init_makes_any_memory_a_lazy_not_yet_initialised)
{
    struct factory f;
    factory_init(&f, 0, 0);
    park_lazy_t l;
    memset(&l, 0xa5, sizeof l);
    park_lazy_init(&l, factory_lazy, &f);
    ASSERT_FALSE(park_lazy_ready(&l));
    void *v = NULL;
    ASSERT_EQ(park_lazy_get(&l, &v), 0);
    ASSERT_TRUE(v == &f.token);
    ASSERT_EQ(atomic_load(&f.runs), 1);
}

TEST(lazy_later_gets_return_the_value_without_running_again)
{
    struct factory f;
    factory_init(&f, 0, 0);
    park_lazy_t l = PARK_LAZY_INIT(factory_lazy, &f);
    for (int i = 0; i < 100; i++) {
        void *v = NULL;
        ASSERT_EQ(park_lazy_get(&l, &v), 0);
        ASSERT_TRUE(v == &f.token);
        v = NULL;
        ASSERT_EQ(park_lazy_get_until(&l, &v, 0), 0);
        ASSERT_TRUE(v == &f.token);
    }
    ASSERT_EQ(atomic_load(&f.runs), 1);
    /* Published: the state word is READY and nothing else. */
    ASSERT_EQ(state_of(&l.state_), PARK__LAZY_READY);
}

TEST(lazy_zeroed_memory_has_no_initialiser_and_every_get_is_einval)
{
    park_lazy_t l;
    memset(&l, 0, sizeof l);
    void *v = &l;
    ASSERT_EQ(park_lazy_get(&l, &v), EINVAL);
    ASSERT_EQ(park_lazy_get_until(&l, &v, PARK_FOREVER), EINVAL);
    ASSERT_EQ(park_lazy_get_until(&l, &v, 0), EINVAL);
    ASSERT_TRUE(v == &l);
    ASSERT_FALSE(park_lazy_ready(&l));
    ASSERT_EQ(state_of(&l.state_), 0);
}

TEST(lazy_init_with_a_null_initialiser_makes_every_get_einval)
{
    park_lazy_t l;
    park_lazy_init(&l, NULL, NULL);
    void *v = &l;
    ASSERT_EQ(park_lazy_get(&l, &v), EINVAL);
    ASSERT_TRUE(v == &l);
    ASSERT_FALSE(park_lazy_ready(&l));
}

static int null_value(void *arg, void **value)
{
    ++*(int *)arg;
    *value = NULL;
    return 0;
}

TEST(lazy_value_may_be_null)
{
    int runs = 0;
    park_lazy_t l = PARK_LAZY_INIT(null_value, &runs);
    void *v = &l;
    ASSERT_EQ(park_lazy_get(&l, &v), 0);
    ASSERT_TRUE(v == NULL);
    ASSERT_TRUE(park_lazy_ready(&l));
    v = &l;
    ASSERT_EQ(park_lazy_get(&l, &v), 0);
    ASSERT_TRUE(v == NULL);
    ASSERT_EQ(runs, 1);
}

TEST(lazy_initialiser_runs_on_the_first_callers_thread)
{
    struct factory f;
    factory_init(&f, 0, 0);
    park_lazy_t l = PARK_LAZY_INIT(factory_lazy, &f);
    void *v;
    ASSERT_EQ(park_lazy_get(&l, &v), 0);
    ASSERT_TRUE(pthread_equal(f.last_thread, pthread_self()));

    struct factory g;
    factory_init(&g, 0, 0);
    park_lazy_t m = PARK_LAZY_INIT(factory_lazy, &g);
    struct caller c = {.l = &m};
    pthread_t id;
    ASSERT_EQ(pthread_create(&id, NULL, caller_main, &c), 0);
    ASSERT_EQ(pthread_join(id, NULL), 0);
    ASSERT_EQ(c.result, 0);
    ASSERT_TRUE(pthread_equal(g.last_thread, id));
}

/* ---- park_lazy: failure and retry ------------------------------------------ */

TEST(lazy_failed_run_returns_its_error_and_leaves_the_lazy_not_initialised)
{
    struct factory f;
    factory_init(&f, 1, 0);
    park_lazy_t l = PARK_LAZY_INIT(factory_lazy, &f);
    void *v = &l;
    ASSERT_EQ(park_lazy_get(&l, &v), EIO);
    ASSERT_TRUE(v == &l);
    ASSERT_EQ(atomic_load(&f.runs), 1);
    ASSERT_FALSE(park_lazy_ready(&l));
    ASSERT_EQ(state_of(&l.state_), 0);
}

TEST(lazy_failed_run_then_a_succeeding_one_runs_exactly_twice)
{
    struct factory f;
    factory_init(&f, 1, 0);
    park_lazy_t l = PARK_LAZY_INIT(factory_lazy, &f);
    void *v = NULL;
    ASSERT_EQ(park_lazy_get(&l, &v), EIO);
    ASSERT_EQ(park_lazy_get(&l, &v), 0);
    ASSERT_TRUE(v == &f.token);
    ASSERT_EQ(atomic_load(&f.runs), 2);
    for (int i = 0; i < 100; i++) {
        v = NULL;
        ASSERT_EQ(park_lazy_get(&l, &v), 0);
        ASSERT_TRUE(v == &f.token);
    }
    ASSERT_EQ(atomic_load(&f.runs), 2);
    ASSERT_EQ(state_of(&l.state_), PARK__LAZY_READY);
}

static const int distinct_errors[] = {EIO, ENOENT, EAGAIN, ENOSPC, EPERM};
#define DISTINCT_ERRORS (int)(sizeof distinct_errors / sizeof distinct_errors[0])

/* Run i (from 0) fails with distinct_errors[i]; the run after them succeeds. */
static int fails_differently(void *arg, void **value)
{
    int run = (*(int *)arg)++;
    if (run < DISTINCT_ERRORS)
        return distinct_errors[run];
    *value = arg;
    return 0;
}

TEST(lazy_caches_no_error_every_get_runs_again_until_a_run_succeeds)
{
    int runs = 0;
    park_lazy_t l = PARK_LAZY_INIT(fails_differently, &runs);
    void *v = NULL;
    for (int i = 0; i < DISTINCT_ERRORS; i++) {
        ASSERT_EQ(park_lazy_get(&l, &v), distinct_errors[i]);
        ASSERT_EQ(runs, i + 1);
        ASSERT_FALSE(park_lazy_ready(&l));
    }
    ASSERT_EQ(park_lazy_get_until(&l, &v, 0), 0);
    ASSERT_TRUE(v == &runs);
    ASSERT_EQ(park_lazy_get(&l, &v), 0);
    ASSERT_EQ(runs, DISTINCT_ERRORS + 1);
}

TEST(lazy_callers_queued_behind_a_failed_run_all_get_its_error)
{
    enum { N = 4 };
    struct factory f;
    factory_init(&f, 1, 1);
    park_lazy_t l = PARK_LAZY_INIT(factory_lazy, &f);
    struct caller runner = {.l = &l};
    test_threads_t *rt = start_runner(&runner, &f, 1);
    struct caller c[N];
    test_threads_t *t[N];
    for (int i = 0; i < N; i++)
        c[i] = (struct caller){.l = &l};
    queue_callers(&l, c, t, N);
    ASSERT_FALSE(park_lazy_ready(&l));
    open_gate(&f);
    test_threads_join(rt);
    join_all(t, N);
    ASSERT_EQ(runner.result, EIO);
    for (int i = 0; i < N; i++) {
        ASSERT_EQ(c[i].result, EIO);
        ASSERT_TRUE(c[i].value == NULL);
    }
    ASSERT_EQ(atomic_load(&f.runs), 1);
    ASSERT_FALSE(park_lazy_ready(&l));
    ASSERT_EQ(state_of(&l.state_), 0);
    ASSERT_EQ(park__wait_count(&l), 0);
    /* Rolled back: the next call runs again. */
    void *v = NULL;
    ASSERT_EQ(park_lazy_get(&l, &v), 0);
    ASSERT_TRUE(v == &f.token);
    ASSERT_EQ(atomic_load(&f.runs), 2);
}

/* Each caller that got the failed run's error calls again at once: that
 * call must not see the old error, it joins or starts the next run. */
TEST(lazy_call_after_a_waiter_saw_the_error_starts_a_new_run)
{
    enum { N = 4 };
    struct factory f;
    factory_init(&f, 1, 1);
    park_lazy_t l = PARK_LAZY_INIT(factory_lazy, &f);
    struct caller runner = {.l = &l, .again = true};
    test_threads_t *rt = start_runner(&runner, &f, 1);
    struct caller c[N];
    test_threads_t *t[N];
    for (int i = 0; i < N; i++)
        c[i] = (struct caller){.l = &l, .again = true};
    queue_callers(&l, c, t, N);
    open_gate(&f);
    test_threads_join(rt);
    join_all(t, N);
    ASSERT_EQ(runner.result, EIO);
    ASSERT_EQ(runner.result2, 0);
    ASSERT_TRUE(runner.value2 == &f.token);
    for (int i = 0; i < N; i++) {
        ASSERT_EQ(c[i].result, EIO);
        ASSERT_EQ(c[i].result2, 0);
        ASSERT_TRUE(c[i].value2 == &f.token);
    }
    ASSERT_EQ(atomic_load(&f.runs), 2);
}

/* ---- park_lazy: concurrency ------------------------------------------------ */

TEST(lazy_sixteen_concurrent_first_callers_run_the_initialiser_once_and_share_its_value)
{
    enum { N = 16 };
    struct factory f;
    factory_init(&f, 0, 1);
    park_lazy_t l = PARK_LAZY_INIT(factory_lazy, &f);
    pthread_barrier_t start;
    ASSERT_EQ(pthread_barrier_init(&start, NULL, N), 0);
    struct caller c[N];
    for (int i = 0; i < N; i++)
        c[i] = (struct caller){.l = &l, .start = &start};
    test_threads_t *t = test_threads_start(N, caller_main, c, sizeof c[0]);
    /* One of them runs (held at the gate); all the others queue behind it. */
    AWAIT(atomic_load(&f.runs) == 1 && park__wait_count(&l) == N - 1);
    ASSERT_FALSE(park_lazy_ready(&l));
    for (int i = 0; i < N; i++)
        ASSERT_FALSE(atomic_load(&c[i].done));
    open_gate(&f);
    test_threads_join(t);
    pthread_barrier_destroy(&start);
    /* Each was told only after the value was published. */
    for (int i = 0; i < N; i++) {
        ASSERT_EQ(c[i].result, 0);
        ASSERT_TRUE(c[i].value == &f.token);
        ASSERT_TRUE(c[i].ready_after);
    }
    ASSERT_EQ(atomic_load(&f.runs), 1);
    ASSERT_TRUE(park_lazy_ready(&l));
    ASSERT_EQ(state_of(&l.state_), PARK__LAZY_READY);
}

TEST(lazy_ready_is_false_while_the_initialiser_runs)
{
    struct factory f;
    factory_init(&f, 0, 1);
    park_lazy_t l = PARK_LAZY_INIT(factory_lazy, &f);
    struct caller runner = {.l = &l};
    test_threads_t *rt = start_runner(&runner, &f, 1);
    ASSERT_FALSE(park_lazy_ready(&l));
    ASSERT_EQ(state_of(&l.state_), PARK__LAZY_RUNNING);
    open_gate(&f);
    test_threads_join(rt);
    ASSERT_EQ(runner.result, 0);
    ASSERT_TRUE(park_lazy_ready(&l));
}

/* ---- park_lazy: re-entrancy ------------------------------------------------ */

struct reentrant {
    park_lazy_t *self;
    int get, get_until;
    bool ready;
    int token;
};

static int calls_itself(void *arg, void **value)
{
    struct reentrant *r = arg;
    void *v = NULL;
    r->get = park_lazy_get(r->self, &v);
    r->get_until = park_lazy_get_until(r->self, &v, PARK_FOREVER);
    r->ready = park_lazy_ready(r->self);
    *value = &r->token;
    return 0;
}

TEST(lazy_get_from_inside_its_own_initialiser_is_edeadlk)
{
    struct reentrant r = {0};
    park_lazy_t l = PARK_LAZY_INIT(calls_itself, &r);
    r.self = &l;
    void *v = NULL;
    ASSERT_EQ(park_lazy_get(&l, &v), 0);
    ASSERT_TRUE(v == &r.token);
    ASSERT_EQ(r.get, EDEADLK);
    ASSERT_EQ(r.get_until, EDEADLK);
    ASSERT_FALSE(r.ready);
    ASSERT_TRUE(park_lazy_ready(&l));
}

struct nested {
    park_lazy_t *outer, *inner;
    int inner_result; /* outer's initialiser: get(inner) */
    void *inner_value;
    int outer_from_inner; /* inner's initialiser: get(outer) */
    int token_outer, token_inner;
};

static int outer_fn(void *arg, void **value)
{
    struct nested *n = arg;
    n->inner_result = park_lazy_get(n->inner, &n->inner_value);
    *value = &n->token_outer;
    return 0;
}

static int inner_fn(void *arg, void **value)
{
    struct nested *n = arg;
    void *v;
    n->outer_from_inner = park_lazy_get(n->outer, &v);
    *value = &n->token_inner;
    return 0;
}

TEST(lazy_initialiser_may_get_another_lazy_whose_initialiser_gets_the_first_edeadlk)
{
    struct nested n = {0};
    park_lazy_t outer = PARK_LAZY_INIT(outer_fn, &n);
    park_lazy_t inner = PARK_LAZY_INIT(inner_fn, &n);
    n.outer = &outer;
    n.inner = &inner;
    void *v = NULL;
    ASSERT_EQ(park_lazy_get(&outer, &v), 0);
    ASSERT_TRUE(v == &n.token_outer);
    ASSERT_EQ(n.inner_result, 0);
    ASSERT_TRUE(n.inner_value == &n.token_inner);
    ASSERT_EQ(n.outer_from_inner, EDEADLK);
    ASSERT_TRUE(park_lazy_ready(&inner));
    /* The frames are gone: nothing is still "running here". */
    ASSERT_EQ(park_lazy_get(&inner, &v), 0);
    ASSERT_TRUE(v == &n.token_inner);
}

/* ---- park_lazy: waiting for a run ----------------------------------------- */

TEST(lazy_waiter_that_sleeps_through_a_long_run_halves_the_yield_budget)
{
    struct factory f;
    factory_init(&f, 0, 1);
    park_lazy_t l = PARK_LAZY_INIT(factory_lazy, &f);
    struct caller runner = {.l = &l};
    test_threads_t *rt = start_runner(&runner, &f, 1);
    atomic_store(&park__lazy_yields, PARK__ADAPT_MAX);
    struct caller c[1] = {{.l = &l}};
    test_threads_t *t[1];
    queue_callers(&l, c, t, 1);
    /* It yields its budget's worth, then sleeps (its sleep is timed from
     * before it is marked asleep); the run goes on well beyond
     * PARK__ADAPT_SHORT_NS after that. */
    AWAIT(park__wait_first_asleep(&l));
    test_sleep_ns(20 * PARK__ADAPT_SHORT_NS);
    ASSERT_FALSE(atomic_load(&c[0].done));

    open_gate(&f);
    test_threads_join(rt);
    join_all(t, 1);
    ASSERT_EQ(c[0].result, 0);
    ASSERT_TRUE(c[0].value == &f.token);
    ASSERT_EQ(atomic_load(&park__lazy_yields), PARK__ADAPT_MAX / 2);
}

/* ---- park_lazy: deadlines -------------------------------------------------- */

TEST(lazy_get_until_times_out_the_caller_only_and_the_run_goes_on)
{
    struct factory f;
    factory_init(&f, 0, 1);
    park_lazy_t l = PARK_LAZY_INIT(factory_lazy, &f);
    struct caller runner = {.l = &l};
    test_threads_t *rt = start_runner(&runner, &f, 1);
    struct caller c[1] = {{.l = &l}};
    test_threads_t *t[1];
    queue_callers(&l, c, t, 1);

    park_time_t deadline = park_deadline_in(20 * MS);
    void *v = &l;
    ASSERT_EQ(park_lazy_get_until(&l, &v, deadline), ETIMEDOUT);
    park_time_t now = park_now();
    ASSERT_GE(now, deadline);
    ASSERT_LT(now - deadline, LATE_NS);
    ASSERT_TRUE(v == &l);
    /* The other caller still waits, the run still runs. */
    ASSERT_EQ(park__wait_count(&l), 1);
    ASSERT_FALSE(atomic_load(&c[0].done));
    ASSERT_FALSE(atomic_load(&runner.done));
    ASSERT_EQ(state_of(&l.state_), PARK__LAZY_RUNNING | PARK__LAZY_WAITERS);

    open_gate(&f);
    test_threads_join(rt);
    join_all(t, 1);
    ASSERT_EQ(runner.result, 0);
    ASSERT_EQ(c[0].result, 0);
    ASSERT_TRUE(c[0].value == &f.token);
    ASSERT_EQ(park_lazy_get(&l, &v), 0);
    ASSERT_TRUE(v == &f.token);
    ASSERT_EQ(atomic_load(&f.runs), 1);
}

TEST(lazy_get_until_timing_out_as_the_only_waiter_leaves_the_run_unqueued)
{
    struct factory f;
    factory_init(&f, 0, 1);
    park_lazy_t l = PARK_LAZY_INIT(factory_lazy, &f);
    struct caller runner = {.l = &l};
    test_threads_t *rt = start_runner(&runner, &f, 1);
    void *v;
    ASSERT_EQ(park_lazy_get_until(&l, &v, park_deadline_in(5 * MS)), ETIMEDOUT);
    ASSERT_EQ(park__wait_count(&l), 0);
    ASSERT_EQ(state_of(&l.state_), PARK__LAZY_RUNNING);
    open_gate(&f);
    test_threads_join(rt);
    ASSERT_EQ(runner.result, 0);
    ASSERT_EQ(state_of(&l.state_), PARK__LAZY_READY);
}

TEST(lazy_get_until_past_deadline_on_a_running_lazy_times_out_at_once)
{
    struct factory f;
    factory_init(&f, 0, 1);
    park_lazy_t l = PARK_LAZY_INIT(factory_lazy, &f);
    struct caller runner = {.l = &l};
    test_threads_t *rt = start_runner(&runner, &f, 1);
    park_time_t start = park_now();
    void *v = &l;
    ASSERT_EQ(park_lazy_get_until(&l, &v, 0), ETIMEDOUT);
    ASSERT_EQ(park_lazy_get_until(&l, &v, start), ETIMEDOUT);
    ASSERT_LT(park_now() - start, LATE_NS);
    ASSERT_TRUE(v == &l);
    ASSERT_EQ(park__wait_count(&l), 0);
    open_gate(&f);
    test_threads_join(rt);
    ASSERT_EQ(runner.result, 0);
}

TEST(lazy_get_until_near_deadline_times_out_not_before_it)
{
    struct factory f;
    factory_init(&f, 0, 1);
    park_lazy_t l = PARK_LAZY_INIT(factory_lazy, &f);
    struct caller runner = {.l = &l};
    test_threads_t *rt = start_runner(&runner, &f, 1);
    static const uint64_t ahead_ns[] = {1000, 50000, 500000, MS, 2 * MS, 5 * MS, 10 * MS};
    for (size_t i = 0; i < sizeof ahead_ns / sizeof ahead_ns[0]; i++) {
        park_time_t deadline = park_deadline_in(ahead_ns[i]);
        void *v;
        ASSERT_EQ(park_lazy_get_until(&l, &v, deadline), ETIMEDOUT);
        park_time_t now = park_now();
        ASSERT_GE(now, deadline);
        ASSERT_LT(now - deadline, LATE_NS);
        ASSERT_EQ(park__wait_count(&l), 0);
    }
    open_gate(&f);
    test_threads_join(rt);
    ASSERT_EQ(runner.result, 0);
}

TEST(lazy_get_until_returns_the_value_when_the_run_ends_before_the_deadline)
{
    struct factory f;
    factory_init(&f, 0, 1);
    park_lazy_t l = PARK_LAZY_INIT(factory_lazy, &f);
    struct caller runner = {.l = &l};
    test_threads_t *rt = start_runner(&runner, &f, 1);
    struct caller c[1] = {{.l = &l, .timed = true, .deadline = park_deadline_in(HANG_NS)}};
    test_threads_t *t[1];
    queue_callers(&l, c, t, 1);
    open_gate(&f);
    test_threads_join(rt);
    join_all(t, 1);
    ASSERT_EQ(c[0].result, 0);
    ASSERT_TRUE(c[0].value == &f.token);
}

TEST(lazy_get_until_past_deadline_runs_the_initialiser_of_an_idle_lazy)
{
    struct factory f;
    factory_init(&f, 0, 0);
    park_lazy_t l = PARK_LAZY_INIT(factory_lazy, &f);
    void *v = NULL;
    ASSERT_EQ(park_lazy_get_until(&l, &v, 0), 0);
    ASSERT_TRUE(v == &f.token);
    ASSERT_EQ(atomic_load(&f.runs), 1);
    v = NULL;
    ASSERT_EQ(park_lazy_get_until(&l, &v, 0), 0);
    ASSERT_TRUE(v == &f.token);
    ASSERT_EQ(atomic_load(&f.runs), 1);
}

/* ---- park_once ------------------------------------------------------------- */

TEST(once_static_initializer_and_zeroed_memory_have_not_run)
{
    struct factory f;
    factory_init(&f, 0, 0);
    park_once_t a = PARK_ONCE_INIT;
    park_once_t b;
    memset(&b, 0, sizeof b);
    ASSERT_EQ(park_once(&a, factory_once, &f), 0);
    ASSERT_EQ(atomic_load(&f.runs), 1);
    ASSERT_EQ(park_once(&b, factory_once, &f), 0);
    ASSERT_EQ(atomic_load(&f.runs), 2);
}

TEST(once_runs_fn_once_however_often_called)
{
    struct factory f;
    factory_init(&f, 0, 0);
    park_once_t o = PARK_ONCE_INIT;
    for (int i = 0; i < 100; i++)
        ASSERT_EQ(park_once(&o, factory_once, &f), 0);
    ASSERT_EQ(atomic_load(&f.runs), 1);
    ASSERT_TRUE(pthread_equal(f.last_thread, pthread_self()));
    ASSERT_EQ(state_of(&o.state_), PARK__LAZY_READY);
}

TEST(once_failed_run_returns_its_error_and_the_next_call_runs_again)
{
    struct factory f;
    factory_init(&f, 2, 0);
    park_once_t o = PARK_ONCE_INIT;
    ASSERT_EQ(park_once(&o, factory_once, &f), EIO);
    ASSERT_EQ(state_of(&o.state_), 0);
    ASSERT_EQ(park_once(&o, factory_once, &f), EIO);
    ASSERT_EQ(park_once(&o, factory_once, &f), 0);
    ASSERT_EQ(park_once(&o, factory_once, &f), 0);
    ASSERT_EQ(atomic_load(&f.runs), 3);
}

TEST(once_callers_queued_behind_a_failed_run_all_get_its_error)
{
    enum { N = 4 };
    struct factory f;
    factory_init(&f, 1, 1);
    park_once_t o = PARK_ONCE_INIT;
    struct caller runner = {.o = &o, .f = &f};
    test_threads_t *rt = start_runner(&runner, &f, 1);
    struct caller c[N];
    test_threads_t *t[N];
    for (int i = 0; i < N; i++)
        c[i] = (struct caller){.o = &o, .f = &f};
    queue_callers(&o, c, t, N);
    open_gate(&f);
    test_threads_join(rt);
    join_all(t, N);
    ASSERT_EQ(runner.result, EIO);
    for (int i = 0; i < N; i++)
        ASSERT_EQ(c[i].result, EIO);
    ASSERT_EQ(atomic_load(&f.runs), 1);
    ASSERT_EQ(park_once(&o, factory_once, &f), 0);
    ASSERT_EQ(atomic_load(&f.runs), 2);
}

TEST(once_sixteen_concurrent_callers_run_fn_once)
{
    enum { N = 16 };
    struct factory f;
    factory_init(&f, 0, 1);
    park_once_t o = PARK_ONCE_INIT;
    pthread_barrier_t start;
    ASSERT_EQ(pthread_barrier_init(&start, NULL, N), 0);
    struct caller c[N];
    for (int i = 0; i < N; i++)
        c[i] = (struct caller){.o = &o, .f = &f, .start = &start};
    test_threads_t *t = test_threads_start(N, caller_main, c, sizeof c[0]);
    AWAIT(atomic_load(&f.runs) == 1 && park__wait_count(&o) == N - 1);
    open_gate(&f);
    test_threads_join(t);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < N; i++)
        ASSERT_EQ(c[i].result, 0);
    ASSERT_EQ(atomic_load(&f.runs), 1);
}

struct once_reentrant {
    park_once_t *self;
    int inner;
};

static int once_calls_itself(void *arg)
{
    struct once_reentrant *r = arg;
    r->inner = park_once(r->self, once_calls_itself, r);
    return 0;
}

TEST(once_call_from_inside_its_own_fn_is_edeadlk)
{
    park_once_t o = PARK_ONCE_INIT;
    struct once_reentrant r = {&o, -1};
    ASSERT_EQ(park_once(&o, once_calls_itself, &r), 0);
    ASSERT_EQ(r.inner, EDEADLK);
    ASSERT_EQ(park_once(&o, once_calls_itself, &r), 0);
}

TEST(once_null_fn_is_einval_until_a_run_has_succeeded)
{
    struct factory f;
    factory_init(&f, 0, 0);
    park_once_t o = PARK_ONCE_INIT;
    ASSERT_EQ(park_once(&o, NULL, NULL), EINVAL);
    ASSERT_EQ(state_of(&o.state_), 0);
    ASSERT_EQ(park_once(&o, factory_once, &f), 0);
    ASSERT_EQ(park_once(&o, NULL, NULL), 0);
    ASSERT_EQ(atomic_load(&f.runs), 1);
}

TEST(once_fn_of_the_caller_that_starts_the_run_is_the_one_that_runs)
{
    struct factory f, g;
    factory_init(&f, 0, 0);
    factory_init(&g, 0, 0);
    park_once_t o = PARK_ONCE_INIT;
    ASSERT_EQ(park_once(&o, factory_once, &f), 0);
    ASSERT_EQ(park_once(&o, factory_once, &g), 0);
    ASSERT_EQ(atomic_load(&f.runs), 1);
    ASSERT_EQ(atomic_load(&g.runs), 0);
}

static const test_case_t tests[] = {
    TEST_ENTRY(lazy_size_is_five_words_and_once_is_four_bytes),
    TEST_ENTRY(lazy_static_initializer_is_not_ready_and_the_first_get_runs_the_initialiser),
    TEST_ENTRY(lazy_init_makes_any_memory_a_lazy_not_yet_initialised),
    TEST_ENTRY(lazy_later_gets_return_the_value_without_running_again),
    TEST_ENTRY(lazy_zeroed_memory_has_no_initialiser_and_every_get_is_einval),
    TEST_ENTRY(lazy_init_with_a_null_initialiser_makes_every_get_einval),
    TEST_ENTRY(lazy_value_may_be_null),
    TEST_ENTRY(lazy_initialiser_runs_on_the_first_callers_thread),
    TEST_ENTRY(lazy_failed_run_returns_its_error_and_leaves_the_lazy_not_initialised),
    TEST_ENTRY(lazy_failed_run_then_a_succeeding_one_runs_exactly_twice),
    TEST_ENTRY(lazy_caches_no_error_every_get_runs_again_until_a_run_succeeds),
    TEST_ENTRY(lazy_callers_queued_behind_a_failed_run_all_get_its_error),
    TEST_ENTRY(lazy_call_after_a_waiter_saw_the_error_starts_a_new_run),
    TEST_ENTRY(lazy_sixteen_concurrent_first_callers_run_the_initialiser_once_and_share_its_value),
    TEST_ENTRY(lazy_ready_is_false_while_the_initialiser_runs),
    TEST_ENTRY(lazy_get_from_inside_its_own_initialiser_is_edeadlk),
    TEST_ENTRY(lazy_initialiser_may_get_another_lazy_whose_initialiser_gets_the_first_edeadlk),
    TEST_ENTRY(lazy_waiter_that_sleeps_through_a_long_run_halves_the_yield_budget),
    TEST_ENTRY(lazy_get_until_times_out_the_caller_only_and_the_run_goes_on),
    TEST_ENTRY(lazy_get_until_timing_out_as_the_only_waiter_leaves_the_run_unqueued),
    TEST_ENTRY(lazy_get_until_past_deadline_on_a_running_lazy_times_out_at_once),
    TEST_ENTRY(lazy_get_until_near_deadline_times_out_not_before_it),
    TEST_ENTRY(lazy_get_until_returns_the_value_when_the_run_ends_before_the_deadline),
    TEST_ENTRY(lazy_get_until_past_deadline_runs_the_initialiser_of_an_idle_lazy),
    TEST_ENTRY(once_static_initializer_and_zeroed_memory_have_not_run),
    TEST_ENTRY(once_runs_fn_once_however_often_called),
    TEST_ENTRY(once_failed_run_returns_its_error_and_the_next_call_runs_again),
    TEST_ENTRY(once_callers_queued_behind_a_failed_run_all_get_its_error),
    TEST_ENTRY(once_sixteen_concurrent_callers_run_fn_once),
    TEST_ENTRY(once_call_from_inside_its_own_fn_is_edeadlk),
    TEST_ENTRY(once_null_fn_is_einval_until_a_run_has_succeeded),
    TEST_ENTRY(once_fn_of_the_caller_that_starts_the_run_is_the_one_that_runs),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
