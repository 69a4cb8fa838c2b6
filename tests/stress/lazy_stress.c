/* tests/stress/lazy_stress.c: park_lazy and park_once under many threads.
 *
 * Each round builds a fresh object (new memory) and a plan: the first F
 * runs of its initialiser fail, run k with error RUN_ERROR(k), and each
 * run returns at once, yields a few times or sleeps a little, so that
 * callers arrive before, during and after runs. N threads leave a barrier
 * together and call get (or park_once) until it succeeds, some calls
 * timed with short or past deadlines.
 *
 * Oracles, per round:
 *   - runs never overlap, and there are exactly F + 1 of them: every
 *     failure is retried and the success is final;
 *   - a call returns 0 with the successful run's value, its own timeout
 *     (timed calls only), or the error of a run k it overlapped: run k
 *     began before the call ended, and run k + 1 (which a failure's
 *     rollback allows) began only after the call began: a caller never
 *     gets the error of a run that had already been superseded when it
 *     called, so no error is cached;
 *   - every failed run's error reached at least one caller (its runner);
 *   - afterwards the object is ready and no call runs anything.
 * A global sequence counter (seq_cst) orders call and run events. Bounded
 * by round counts (scaled by PARK_STRESS_SCALE) and the harness watchdog. */
#include <park/park.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define MAX_FAILS 5
#define RUN_ERROR(k) (1000 + (k)) /* run k's error: positive, no errno clash */
#define MAX_CALLS 96              /* logged calls per thread per round */
#define TIMED_CALLS 64            /* later calls are untimed, so a round ends */

static atomic_uint_fast64_t seq;

static uint64_t tick(void)
{
    return atomic_fetch_add(&seq, 1);
}

/* How a run behaves before it returns. */
enum { RUN_AT_ONCE, RUN_YIELDS, RUN_SLEEPS, RUN_KINDS };

/* One round's object, plan and record; fresh memory every round. */
struct round {
    park_lazy_t l;
    park_once_t o;
    bool use_once;
    int fail_runs;
    int kind[MAX_FAILS + 2]; /* per run, from 1 */
    atomic_int runs;
    atomic_int inside;
    uint64_t run_start[MAX_FAILS + 2]; /* seq at the start of run k */
    int token[MAX_FAILS + 2];          /* run k's value is &token[k] */
};

static int round_run(struct round *r, void **value)
{
    int k = atomic_fetch_add(&r->runs, 1) + 1;
    if (atomic_fetch_add(&r->inside, 1) != 0)
        test_fail(__FILE__, __LINE__, "two initialiser runs overlap");
    if (k > r->fail_runs + 1)
        test_fail(__FILE__, __LINE__, "run %d after the successful run %d", k, r->fail_runs + 1);
    r->run_start[k] = tick();
    switch (r->kind[k]) {
    case RUN_YIELDS:
        for (int i = 0; i < 3; i++)
            sched_yield();
        break;
    case RUN_SLEEPS:
        test_sleep_ns(50 * US);
        break;
    default:
        break;
    }
    atomic_fetch_sub(&r->inside, 1);
    if (k <= r->fail_runs)
        return RUN_ERROR(k);
    if (value)
        *value = &r->token[k];
    return 0;
}

static int round_lazy(void *arg, void **value)
{
    return round_run(arg, value);
}

static int round_once(void *arg)
{
    return round_run(arg, NULL);
}

struct call {
    uint64_t start, end;
    int result;
    bool timed;
    void *value;
};

struct worker;

struct stress {
    unsigned threads;
    uint64_t rounds;
    pthread_barrier_t begin, end;
    struct round *round; /* written by the main thread before `begin` */
    struct worker *workers;
};

struct worker {
    struct stress *s;
    unsigned id;
    uint64_t rng;
    struct call calls[MAX_CALLS];
    int ncalls;
    uint64_t timeouts;
};

static int one_call(struct round *r, bool timed, park_time_t deadline, void **value)
{
    if (r->use_once)
        return park_once(&r->o, round_once, r);
    if (timed)
        return park_lazy_get_until(&r->l, value, deadline);
    return park_lazy_get(&r->l, value);
}

static void worker_round(struct worker *w, struct round *r)
{
    w->ncalls = 0;
    for (;;) {
        if (w->ncalls == MAX_CALLS)
            test_fail(__FILE__, __LINE__, "more than %d calls in one round", MAX_CALLS);
        struct call *c = &w->calls[w->ncalls++];
        c->timed = w->ncalls <= TIMED_CALLS && !r->use_once && test_rng_below(&w->rng, 4) == 0;
        /* Deadlines from already passed to a little after a sleeping run. */
        park_time_t deadline = park_now() + test_rng_below(&w->rng, 80 * US) - 10 * US;
        c->value = NULL;
        c->start = tick();
        c->result = one_call(r, c->timed, deadline, &c->value);
        c->end = tick();
        if (c->result == 0)
            return;
        w->timeouts += c->result == ETIMEDOUT;
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct stress *s = w->s;
    for (uint64_t i = 0; i < s->rounds; i++) {
        pthread_barrier_wait(&s->begin);
        worker_round(w, s->round);
        pthread_barrier_wait(&s->end);
    }
    return NULL;
}

static void check_call(const struct round *r, const struct call *c)
{
    int success = r->fail_runs + 1;
    if (c->result == 0) {
        if (!r->use_once && c->value != &r->token[success])
            test_fail(__FILE__, __LINE__, "a get returned a value not made by the successful run");
        ASSERT_GT(c->end, r->run_start[success]);
        return;
    }
    if (c->result == ETIMEDOUT) {
        ASSERT_TRUE(c->timed);
        return;
    }
    int k = c->result - RUN_ERROR(0);
    if (k < 1 || k > r->fail_runs)
        test_fail(__FILE__, __LINE__, "unexpected result %d", c->result);
    /* The call overlapped run k, and run k had not been superseded by
     * run k + 1 when the call began. */
    ASSERT_GT(c->end, r->run_start[k]);
    ASSERT_LT(c->start, r->run_start[k + 1]);
}

/* Returns how many callers other than the runners got a run's error. */
static uint64_t check_round(struct stress *s, struct round *r)
{
    ASSERT_EQ(atomic_load(&r->runs), r->fail_runs + 1);
    int errors_seen[MAX_FAILS + 2] = {0};
    for (unsigned t = 0; t < s->threads; t++) {
        const struct worker *w = &s->workers[t];
        for (int i = 0; i < w->ncalls; i++) {
            check_call(r, &w->calls[i]);
            int k = w->calls[i].result - RUN_ERROR(0);
            if (k >= 1 && k <= r->fail_runs)
                errors_seen[k]++;
        }
    }
    uint64_t shared = 0;
    for (int k = 1; k <= r->fail_runs; k++) {
        ASSERT_GE(errors_seen[k], 1);
        shared += (uint64_t)errors_seen[k] - 1;
    }
    /* Final: nothing runs again. */
    void *v = NULL;
    if (r->use_once) {
        ASSERT_EQ(park_once(&r->o, round_once, r), 0);
    } else {
        ASSERT_TRUE(park_lazy_ready(&r->l));
        ASSERT_EQ(park_lazy_get(&r->l, &v), 0);
        ASSERT_TRUE(v == &r->token[r->fail_runs + 1]);
    }
    ASSERT_EQ(atomic_load(&r->runs), r->fail_runs + 1);
    return shared;
}

static struct round *new_round(uint64_t *rng, bool use_once)
{
    struct round *r = calloc(1, sizeof *r);
    ASSERT_TRUE(r != NULL);
    r->use_once = use_once;
    if (use_once)
        r->o = (park_once_t)PARK_ONCE_INIT;
    else
        park_lazy_init(&r->l, round_lazy, r);
    r->fail_runs = (int)test_rng_below(rng, MAX_FAILS + 1);
    for (int k = 1; k <= r->fail_runs + 1; k++)
        r->kind[k] = (int)test_rng_below(rng, RUN_KINDS);
    return r;
}

static void run_stress(unsigned threads, uint64_t rounds)
{
    struct stress s;
    memset(&s, 0, sizeof s);
    s.threads = threads;
    s.rounds = rounds;
    ASSERT_EQ(pthread_barrier_init(&s.begin, NULL, threads + 1), 0);
    ASSERT_EQ(pthread_barrier_init(&s.end, NULL, threads + 1), 0);
    s.workers = calloc(threads, sizeof *s.workers);
    ASSERT_TRUE(s.workers != NULL);
    for (unsigned i = 0; i < threads; i++)
        s.workers[i] = (struct worker){.s = &s, .id = i, .rng = test_rng_seed(i + 1)};
    test_threads_t *t = test_threads_start(threads, worker_main, s.workers, sizeof s.workers[0]);

    uint64_t rng = test_rng_seed(0), runs = 0, failures = 0, shared = 0, calls = 0, timeouts = 0;
    for (uint64_t i = 0; i < rounds; i++) {
        s.round = new_round(&rng, i % 3 == 2);
        pthread_barrier_wait(&s.begin);
        pthread_barrier_wait(&s.end);
        shared += check_round(&s, s.round);
        runs += (uint64_t)s.round->fail_runs + 1;
        failures += (uint64_t)s.round->fail_runs;
        for (unsigned w = 0; w < threads; w++)
            calls += (uint64_t)s.workers[w].ncalls;
        free(s.round);
    }
    test_threads_join(t);
    for (unsigned w = 0; w < threads; w++)
        timeouts += s.workers[w].timeouts;
    printf("     %" PRIu64 " rounds x %u threads: %" PRIu64 " runs (%" PRIu64 " failed, their"
           " errors also told to %" PRIu64 " waiting callers), %" PRIu64 " calls, %" PRIu64
           " timed out\n",
           rounds, threads, runs, failures, shared, calls, timeouts);
    free(s.workers);
    pthread_barrier_destroy(&s.begin);
    pthread_barrier_destroy(&s.end);
}

TEST(lazy_racing_first_callers_with_random_failures_run_once_per_failure_plus_one)
{
    run_stress(8, test_scaled(3000));
}

TEST(lazy_sixteen_racing_first_callers_with_random_failures_on_two_cores)
{
    run_stress(16, test_scaled(800));
}

/* ---- freeing an asynchronous lazy once its value is out ------------------ */

/* Tasks queued behind a run: once the first has the value and the others
 * are dropped, nothing of the lazy is in use and it is freed at once. The
 * run's end still completes the queued tasks: it must not read the lazy
 * for their value after publishing it (ASan: use after free; TSan: a
 * race with free). */
#define FREE_WAITERS 16

static int slow_value(void *arg, void **result)
{
    test_sleep_ns(200 * US);
    *result = arg;
    return 0;
}

static park_task_t *slow_factory(void *arg, park_pool_t *pool)
{
    return park_task_run(pool, slow_value, arg);
}

TEST(lazy_async_freed_as_soon_as_its_value_is_out_is_not_touched_again)
{
    park_pool_t *pool = NULL;
    park_pool_config_t cfg = {.threads = 2};
    ASSERT_EQ(park_pool_create(&pool, &cfg), 0);
    uint64_t rounds = test_scaled(300);
    for (uint64_t i = 0; i < rounds; i++) {
        park_lazy_t *l = malloc(sizeof *l);
        ASSERT_TRUE(l != NULL);
        park_lazy_init_async(l, pool, slow_factory, l);
        park_task_t *t[FREE_WAITERS];
        for (int k = 0; k < FREE_WAITERS; k++) {
            t[k] = park_lazy_get_async(l, pool);
            ASSERT_TRUE(t[k] != NULL);
        }
        void *v = NULL;
        ASSERT_EQ(park_task_wait(t[0], &v), 0);
        ASSERT_TRUE(v == l);
        for (int k = 0; k < FREE_WAITERS; k++)
            park_task_release(t[k]);
        free(l);
    }
    park_pool_destroy(pool);
}

static const test_case_t tests[] = {
    TEST_ENTRY(lazy_async_freed_as_soon_as_its_value_is_out_is_not_touched_again),
    TEST_ENTRY(lazy_racing_first_callers_with_random_failures_run_once_per_failure_plus_one),
    TEST_ENTRY(lazy_sixteen_racing_first_callers_with_random_failures_on_two_cores),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
