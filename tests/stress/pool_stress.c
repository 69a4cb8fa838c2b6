/* tests/stress/pool_stress.c: park_pool and park_task under many threads.
 *
 * Oracles:
 *   - submissions from several outside threads, each doing a random
 *     fork-join tree (park_join or park_parallel_for) inside, run exactly
 *     once each, and the trees' leaves add up exactly;
 *   - complete, cancel and then race on one task whose references are
 *     dropped by the racers in random order: exactly one of complete and
 *     cancel returns 0, the continuation runs exactly once and sees the
 *     winner's outcome (AddressSanitizer checks the reference counting);
 *   - deadlines race completions: the task completes once, with ETIMEDOUT
 *     only when the deadline has passed;
 *   - pools created and destroyed at once with work in flight run every
 *     item that was accepted, and each armed delay ends with 0 or
 *     ECANCELED, its continuation run once;
 *   - a submission that lands while the workers are on their way to sleep
 *     still runs (a lost wake-up hangs, and the test fails);
 *   - more outside submitters at once than the pool has producer rings
 *     (white-box: PARK__MAX_PRODUCERS) each have every submission run once.
 * Every loop is bounded by an iteration count (scaled by PARK_STRESS_SCALE)
 * and by the harness watchdog. */
#include <park/park.h>
#include <park/pool.h>
#include <park/task.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "pool/pool.h"

#include "test.h"

static park_pool_t *pool_new(unsigned threads)
{
    park_pool_t *pool = NULL;
    park_pool_config_t cfg = {.threads = threads};
    ASSERT_EQ(park_pool_create(&pool, &cfg), 0);
    return pool;
}

static void yield_some(uint64_t *rng, uint32_t in)
{
    for (uint32_t k = test_rng_below(rng, in); k > 0; k--)
        sched_yield();
}

/* ---- outside submitters, fork-join inside ------------------------------------- */

#define SJ_SUBMITTERS 4
#define SJ_PER_SUBMITTER 25000
#define SJ_MAX_DEPTH 5
#define SJ_OUTSIDE_JOIN_EVERY 256 /* a submitter also joins from outside now and then */

struct sj {
    park_pool_t *pool;
    atomic_uint_fast64_t leaves;
    atomic_uint_fast64_t finished;
};

struct sj_item {
    struct sj *s;
    uint8_t depth;
    bool by_range; /* park_parallel_for instead of park_join */
    _Atomic uint8_t runs;
};

struct sj_node {
    struct sj *s;
    unsigned depth;
};

static void sj_node_run(void *arg)
{
    struct sj_node *n = arg;
    ASSERT_TRUE(park_pool_current() == n->s->pool);
    if (n->depth == 0) {
        atomic_fetch_add_explicit(&n->s->leaves, 1, memory_order_relaxed);
        return;
    }
    struct sj_node a = {n->s, n->depth - 1}, b = {n->s, n->depth - 1};
    park_join(n->s->pool, sj_node_run, &a, sj_node_run, &b);
}

static void sj_range(size_t lo, size_t hi, void *arg)
{
    struct sj *s = arg;
    atomic_fetch_add_explicit(&s->leaves, hi - lo, memory_order_relaxed);
}

static void sj_task(void *arg)
{
    struct sj_item *it = arg;
    if (atomic_fetch_add(&it->runs, 1) != 0)
        test_fail(__FILE__, __LINE__, "a submission ran twice");
    if (it->by_range) {
        park_parallel_for(it->s->pool, 0, (size_t)1 << it->depth, 1, sj_range, it->s);
    } else {
        struct sj_node root = {it->s, it->depth};
        sj_node_run(&root);
    }
    atomic_fetch_add(&it->s->finished, 1);
}

struct sj_submitter {
    struct sj *s;
    struct sj_item *items; /* this thread's */
    unsigned id;
    uint64_t per_thread;
    uint64_t expected_leaves;
};

static void *sj_submitter_main(void *arg)
{
    struct sj_submitter *sub = arg;
    uint64_t rng = test_rng_seed(sub->id);
    for (uint64_t i = 0; i < sub->per_thread; i++) {
        struct sj_item *it = &sub->items[i];
        it->s = sub->s;
        it->depth = (uint8_t)test_rng_below(&rng, SJ_MAX_DEPTH + 1);
        it->by_range = test_rng_below(&rng, 4) == 0;
        sub->expected_leaves += (uint64_t)1 << it->depth;
        ASSERT_EQ(park_pool_submit(sub->s->pool, sj_task, it), 0);
        if (test_rng_below(&rng, SJ_OUTSIDE_JOIN_EVERY) == 0) {
            struct sj_node a = {sub->s, 2}, b = {sub->s, 3};
            park_join(sub->s->pool, sj_node_run, &a, sj_node_run, &b);
            sub->expected_leaves += 4 + 8;
        }
        if (test_rng_below(&rng, 32) == 0)
            sched_yield();
    }
    return NULL;
}

TEST(pool_outside_submitters_with_joins_inside_run_every_task_once)
{
    struct sj s;
    memset(&s, 0, sizeof s);
    s.pool = pool_new(4);
    uint64_t per_thread = test_scaled(SJ_PER_SUBMITTER);
    uint64_t total = SJ_SUBMITTERS * per_thread;
    struct sj_item *items = calloc(total, sizeof items[0]);
    ASSERT_TRUE(items != NULL);
    struct sj_submitter sub[SJ_SUBMITTERS];
    for (unsigned i = 0; i < SJ_SUBMITTERS; i++)
        sub[i] = (struct sj_submitter){&s, items + i * per_thread, i, per_thread, 0};
    test_threads_join(test_threads_start(SJ_SUBMITTERS, sj_submitter_main, sub, sizeof sub[0]));
    AWAIT(atomic_load(&s.finished) == total);

    uint64_t expected = 0;
    for (unsigned i = 0; i < SJ_SUBMITTERS; i++)
        expected += sub[i].expected_leaves;
    for (uint64_t i = 0; i < total; i++)
        if (atomic_load(&items[i].runs) != 1)
            test_fail(__FILE__, __LINE__, "submission %" PRIu64 " ran %u times", i,
                      (unsigned)items[i].runs);
    ASSERT_EQ(atomic_load(&s.leaves), expected);
    park_pool_stats_t st;
    park_pool_stats(s.pool, &st);
    printf("     %" PRIu64 " submissions, %" PRIu64 " leaves; executed %" PRIu64 ", steals %" PRIu64
           ", parks %" PRIu64 ", spilled %" PRIu64 "\n",
           total, expected, st.executed, st.steals, st.parks, st.spilled);
    park_pool_destroy(s.pool);
    free(items);
}

/* ---- complete, cancel and then racing on one task ------------------------------ */

#define CR_ROUNDS 10000
enum { CR_COMPLETER, CR_CANCELLER, CR_REGISTRAR, CR_RACERS };

struct cr_round {
    int rc[2]; /* of complete and cancel */
    atomic_int cont_runs;
    int cont_err;
    void *cont_result;
};

struct cr {
    park_pool_t *pool;
    pthread_barrier_t go, end;
    uint64_t rounds;
    park_task_t *ref[CR_RACERS]; /* one reference per racer, this round */
    struct cr_round *rec;
    int token;
};

struct cr_thread {
    struct cr *c;
    unsigned id;
};

static void cr_cont(park_task_t *done, void *arg)
{
    struct cr_round *rec = arg;
    rec->cont_err = park_task_result(done, &rec->cont_result);
    atomic_fetch_add(&rec->cont_runs, 1);
}

static void *cr_thread_main(void *arg)
{
    struct cr_thread *t = arg;
    struct cr *c = t->c;
    uint64_t rng = test_rng_seed(t->id);
    for (uint64_t round = 0; round < c->rounds; round++) {
        pthread_barrier_wait(&c->go);
        park_task_t *task = c->ref[t->id];
        struct cr_round *rec = &c->rec[round];
        yield_some(&rng, 3);
        switch (t->id) {
        case CR_COMPLETER:
            rec->rc[0] = park_task_complete(task, 0, &c->token);
            break;
        case CR_CANCELLER:
            rec->rc[1] = park_task_cancel(task);
            break;
        default:
            ASSERT_EQ(park_task_then(task, c->pool, cr_cont, rec), 0);
            break;
        }
        yield_some(&rng, 2);
        park_task_release(task);
        pthread_barrier_wait(&c->end);
    }
    return NULL;
}

TEST(task_complete_cancel_and_then_races_complete_once_and_continue_once)
{
    struct cr c;
    memset(&c, 0, sizeof c);
    c.pool = pool_new(2);
    c.rounds = test_scaled(CR_ROUNDS);
    c.rec = calloc(c.rounds, sizeof c.rec[0]);
    ASSERT_TRUE(c.rec != NULL);
    ASSERT_EQ(pthread_barrier_init(&c.go, NULL, CR_RACERS + 1), 0);
    ASSERT_EQ(pthread_barrier_init(&c.end, NULL, CR_RACERS + 1), 0);
    struct cr_thread t[CR_RACERS];
    for (unsigned i = 0; i < CR_RACERS; i++)
        t[i] = (struct cr_thread){&c, i};
    test_threads_t *th = test_threads_start(CR_RACERS, cr_thread_main, t, sizeof t[0]);
    uint64_t rng = test_rng_seed(99);
    uint64_t by_complete = 0;
    for (uint64_t round = 0; round < c.rounds; round++) {
        park_task_t *task = park_task_new();
        ASSERT_TRUE(task != NULL);
        for (unsigned i = 0; i < CR_RACERS; i++)
            c.ref[i] = park_task_retain(task);
        bool release_early = test_rng_below(&rng, 2);
        if (release_early)
            park_task_release(task); /* only the racers hold it */
        pthread_barrier_wait(&c.go);
        pthread_barrier_wait(&c.end);
        struct cr_round *rec = &c.rec[round];
        if (rec->rc[0] == 0) {
            ASSERT_EQ(rec->rc[1], EALREADY);
            by_complete++;
        } else {
            ASSERT_EQ(rec->rc[0], EALREADY);
            ASSERT_EQ(rec->rc[1], 0);
        }
        if (!release_early)
            park_task_release(task);
    }
    test_threads_join(th);
    park_pool_destroy(c.pool); /* runs every continuation still queued */
    for (uint64_t round = 0; round < c.rounds; round++) {
        struct cr_round *rec = &c.rec[round];
        if (atomic_load(&rec->cont_runs) != 1)
            test_fail(__FILE__, __LINE__, "round %" PRIu64 ": the continuation ran %d times", round,
                      atomic_load(&rec->cont_runs));
        if (rec->rc[0] == 0) {
            ASSERT_EQ(rec->cont_err, 0);
            ASSERT_TRUE(rec->cont_result == &c.token);
        } else {
            ASSERT_EQ(rec->cont_err, ECANCELED);
            ASSERT_TRUE(rec->cont_result == NULL);
        }
    }
    printf("     %" PRIu64 " rounds: %" PRIu64 " won by complete, %" PRIu64 " by cancel\n",
           c.rounds, by_complete, c.rounds - by_complete);
    pthread_barrier_destroy(&c.go);
    pthread_barrier_destroy(&c.end);
    free(c.rec);
}

/* ---- deadlines racing completions ----------------------------------------------- */

#define DR_ROUNDS 3000
#define DR_WINDOW_NS (300u * US) /* deadlines and completions fall in this window */

struct dr_round {
    atomic_int runs;
    int err;    /* seen by the continuation */
    int expect; /* 0 if the completion won, else ETIMEDOUT */
};

static void dr_cont(park_task_t *done, void *arg)
{
    struct dr_round *rec = arg;
    rec->err = park_task_result(done, NULL);
    atomic_fetch_add(&rec->runs, 1);
}

TEST(task_deadlines_racing_completions_complete_once)
{
    park_pool_t *pool = pool_new(2);
    uint64_t rounds = test_scaled(DR_ROUNDS), timed_out = 0;
    struct dr_round *rec = calloc(rounds, sizeof rec[0]);
    ASSERT_TRUE(rec != NULL);
    uint64_t rng = test_rng_seed(7);
    int token;
    for (uint64_t round = 0; round < rounds; round++) {
        park_task_t *t = park_task_new();
        ASSERT_TRUE(t != NULL);
        park_time_t start = park_now();
        park_time_t deadline = start + test_rng_below(&rng, DR_WINDOW_NS);
        ASSERT_EQ(park_task_cancel_at_on(t, pool, deadline), 0);
        ASSERT_EQ(park_task_then(t, pool, dr_cont, &rec[round]), 0);
        park_time_t at = start + test_rng_below(&rng, DR_WINDOW_NS);
        while (park_now() < at)
            sched_yield();
        int rc = park_task_complete(t, 0, &token);
        park_time_t after = park_now();
        void *r = NULL;
        if (rc == 0) {
            ASSERT_EQ(park_task_result(t, &r), 0);
            ASSERT_TRUE(r == &token);
            rec[round].expect = 0;
        } else {
            ASSERT_EQ(rc, EALREADY);
            ASSERT_EQ(park_task_result(t, &r), ETIMEDOUT);
            ASSERT_GE(after, deadline);
            rec[round].expect = ETIMEDOUT;
            timed_out++;
        }
        park_task_release(t);
    }
    park_pool_destroy(pool);
    for (uint64_t round = 0; round < rounds; round++) {
        ASSERT_EQ(atomic_load(&rec[round].runs), 1);
        ASSERT_EQ(rec[round].err, rec[round].expect);
    }
    printf("     %" PRIu64 " rounds: %" PRIu64 " timed out\n", rounds, timed_out);
    free(rec);
}

/* ---- pools created and destroyed with work in flight ----------------------------- */

#define CD_ROUNDS 150
#define CD_MAX_JOBS 300
#define CD_MAX_DELAYS 4

struct cd {
    park_pool_t *pool;
    atomic_uint accepted; /* items accepted from inside the pool */
    atomic_uint ran;
    atomic_uint delay_conts;
    atomic_uint delay_bad; /* continuations that saw neither 0 nor ECANCELED */
};

enum { CD_PLAIN, CD_JOIN, CD_SPAWN, CD_RUN, CD_RUN_DETACHED, CD_WAIT_DELAY, CD_KINDS };

struct cd_job {
    struct cd *c;
    int kind;
};

static void cd_count(void *arg)
{
    atomic_fetch_add(&((struct cd *)arg)->ran, 1);
}

static int cd_count_fn(void *arg, void **result)
{
    (void)result;
    cd_count(arg);
    return 0;
}

static void cd_task_cont(park_task_t *done, void *arg)
{
    struct cd *c = arg;
    int err = park_task_result(done, NULL);
    ASSERT_TRUE(err == 0 || err == EPIPE);
    cd_count(c);
}

static void cd_job_run(void *arg)
{
    struct cd_job *j = arg;
    struct cd *c = j->c;
    atomic_fetch_add(&c->ran, 1);
    switch (j->kind) {
    case CD_JOIN:
        atomic_fetch_add(&c->accepted, 2);
        park_join(c->pool, cd_count, c, cd_count, c);
        break;
    case CD_SPAWN: {
        int rc = park_pool_submit(c->pool, cd_count, c);
        if (rc == 0)
            atomic_fetch_add(&c->accepted, 1);
        else
            ASSERT_EQ(rc, EPIPE);
        break;
    }
    case CD_RUN: {
        /* Accepted or EPIPE; then(): 0 or EPIPE likewise. */
        park_task_t *t = park_task_run(c->pool, cd_count_fn, c);
        ASSERT_TRUE(t != NULL);
        int rc = park_task_then(t, c->pool, cd_task_cont, c);
        if (rc == 0)
            atomic_fetch_add(&c->accepted, 1);
        else
            ASSERT_EQ(rc, EPIPE);
        /* Count fn's run only if the task got to run it. */
        if (park_task_wait(t, NULL) == 0)
            atomic_fetch_add(&c->accepted, 1);
        park_task_release(t);
        break;
    }
    case CD_RUN_DETACHED: {
        /* Released at once: the run holds its own reference. Only a task
         * refused at creation (EPIPE) is complete before fn could run. */
        park_task_t *t = park_task_run(c->pool, cd_count_fn, c);
        ASSERT_TRUE(t != NULL);
        if (park_task_result(t, NULL) != EPIPE)
            atomic_fetch_add(&c->accepted, 1);
        park_task_release(t);
        break;
    }
    case CD_WAIT_DELAY: {
        /* Armed just before or while destroy shuts the timer down: it must
         * still end (0, ECANCELED, or EPIPE if refused), or destroy hangs. */
        park_task_t *d = park_task_delay(c->pool, 200 * US);
        ASSERT_TRUE(d != NULL);
        int err = park_task_wait(d, NULL);
        if (err != 0 && err != ECANCELED && err != EPIPE)
            test_fail(__FILE__, __LINE__, "a delay ended with %d", err);
        park_task_release(d);
        break;
    }
    default:
        break;
    }
}

static void cd_delay_cont(park_task_t *done, void *arg)
{
    struct cd *c = arg;
    int err = park_task_result(done, NULL);
    if (err != 0 && err != ECANCELED)
        atomic_fetch_add(&c->delay_bad, 1);
    atomic_fetch_add(&c->delay_conts, 1);
}

TEST(pool_create_and_destroy_with_work_in_flight_runs_what_was_accepted)
{
    uint64_t rounds = test_scaled(CD_ROUNDS), rng = test_rng_seed(3);
    struct cd_job *jobs = calloc(CD_MAX_JOBS, sizeof jobs[0]);
    ASSERT_TRUE(jobs != NULL);
    uint64_t total_ran = 0;
    for (uint64_t round = 0; round < rounds; round++) {
        struct cd c;
        memset(&c, 0, sizeof c);
        c.pool = pool_new(1 + test_rng_below(&rng, 4));
        unsigned n = test_rng_below(&rng, CD_MAX_JOBS + 1);
        for (unsigned i = 0; i < n; i++) {
            jobs[i] = (struct cd_job){&c, (int)test_rng_below(&rng, CD_KINDS)};
            ASSERT_EQ(park_pool_submit(c.pool, cd_job_run, &jobs[i]), 0);
        }
        unsigned delays = test_rng_below(&rng, CD_MAX_DELAYS + 1);
        park_task_t *d[CD_MAX_DELAYS];
        for (unsigned i = 0; i < delays; i++) {
            d[i] = park_task_delay(c.pool, test_rng_below(&rng, 2 * MS));
            ASSERT_TRUE(d[i] != NULL);
            ASSERT_EQ(park_task_then(d[i], c.pool, cd_delay_cont, &c), 0);
        }
        park_pool_destroy(c.pool);
        ASSERT_EQ(atomic_load(&c.ran), n + atomic_load(&c.accepted));
        ASSERT_EQ(atomic_load(&c.delay_conts), delays);
        ASSERT_EQ(atomic_load(&c.delay_bad), 0);
        for (unsigned i = 0; i < delays; i++) {
            int err = park_task_result(d[i], NULL);
            ASSERT_TRUE(err == 0 || err == ECANCELED);
            park_task_release(d[i]);
        }
        total_ran += atomic_load(&c.ran);
    }
    printf("     %" PRIu64 " pools, %" PRIu64 " items run\n", rounds, total_ran);
    free(jobs);
}

/* ---- submissions racing workers going to sleep ---------------------------------- */

#define WK_ROUNDS 10000
#define WK_MAX_GAP_NS (100u * US) /* a worker spins a while before it sleeps */

enum { WK_SUBMIT, WK_JOIN, WK_TASK, WK_KINDS };

static void wk_count(void *arg)
{
    atomic_fetch_add((atomic_uint *)arg, 1);
}

static int wk_task(void *arg, void **result)
{
    (void)result;
    wk_count(arg);
    return 0;
}

/* Waits (yielding, bounded) until *ran reaches n. */
static void wk_await(atomic_uint *ran, unsigned n)
{
    park_time_t give_up = park_now() + HANG_NS;
    while (atomic_load(ran) < n) {
        if (park_now() > give_up)
            test_fail(__FILE__, __LINE__, "submission %u never ran: a lost wake-up", n);
        sched_yield();
    }
}

static void wk_run(unsigned threads)
{
    park_pool_t *pool = pool_new(threads);
    uint64_t rounds = test_scaled(WK_ROUNDS), rng = test_rng_seed(threads);
    atomic_uint ran = 0;
    for (unsigned k = 1; k <= rounds; k++) {
        switch (test_rng_below(&rng, WK_KINDS)) {
        case WK_SUBMIT:
            ASSERT_EQ(park_pool_submit(pool, wk_count, &ran), 0);
            wk_await(&ran, k);
            break;
        case WK_JOIN:
            park_join(pool, wk_count, &ran, NULL, NULL);
            ASSERT_EQ(atomic_load(&ran), k);
            break;
        default: {
            park_task_t *t = park_task_run(pool, wk_task, &ran);
            ASSERT_TRUE(t != NULL);
            ASSERT_EQ(park_task_wait(t, NULL), 0);
            park_task_release(t);
            break;
        }
        }
        /* Land the next submission somewhere on the workers' way to sleep. */
        park_time_t until = park_now() + test_rng_below(&rng, WK_MAX_GAP_NS);
        while (park_now() < until)
            sched_yield();
    }
    park_pool_stats_t st;
    park_pool_stats(pool, &st);
    printf("     %u workers: %" PRIu64 " rounds, %" PRIu64 " parks\n", threads, rounds, st.parks);
    park_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&ran), rounds);
}

TEST(pool_submissions_racing_workers_going_to_sleep_are_never_lost)
{
    wk_run(1);
    wk_run(2);
}

/* ---- more outside submitters than producer rings -------------------------------- */

#define MP_THREADS (PARK__MAX_PRODUCERS + 8)
#define MP_PER_THREAD 200

struct mp {
    park_pool_t *pool;
    pthread_barrier_t all_started, all_submitted;
    _Atomic uint8_t *runs; /* MP_PER_THREAD per thread */
};

struct mp_thread {
    struct mp *m;
    unsigned id;
};

static void mp_item(void *arg)
{
    _Atomic uint8_t *run = arg;
    if (atomic_fetch_add(run, 1) != 0)
        test_fail(__FILE__, __LINE__, "a submission ran twice");
}

static void *mp_thread_main(void *arg)
{
    struct mp_thread *t = arg;
    struct mp *m = t->m;
    /* Every submitter is alive before any submits, so the producer rings
     * run out and the last ones share the workers' rings. */
    pthread_barrier_wait(&m->all_started);
    for (unsigned i = 0; i < MP_PER_THREAD; i++)
        ASSERT_EQ(park_pool_submit(m->pool, mp_item, &m->runs[t->id * MP_PER_THREAD + i]), 0);
    pthread_barrier_wait(&m->all_submitted);
    return NULL;
}

TEST(pool_more_outside_submitters_than_producer_rings_each_run_once)
{
    struct mp m;
    memset(&m, 0, sizeof m);
    m.pool = pool_new(2);
    m.runs = calloc((size_t)MP_THREADS * MP_PER_THREAD, sizeof m.runs[0]);
    ASSERT_TRUE(m.runs != NULL);
    ASSERT_EQ(pthread_barrier_init(&m.all_started, NULL, MP_THREADS), 0);
    ASSERT_EQ(pthread_barrier_init(&m.all_submitted, NULL, MP_THREADS), 0);
    static struct mp_thread t[MP_THREADS];
    for (unsigned i = 0; i < MP_THREADS; i++)
        t[i] = (struct mp_thread){&m, i};
    test_threads_join(test_threads_start(MP_THREADS, mp_thread_main, t, sizeof t[0]));
    park_pool_destroy(m.pool); /* runs everything submitted */
    for (size_t i = 0; i < (size_t)MP_THREADS * MP_PER_THREAD; i++)
        if (atomic_load(&m.runs[i]) != 1)
            test_fail(__FILE__, __LINE__, "submission %zu of thread %zu ran %u times",
                      i % MP_PER_THREAD, i / MP_PER_THREAD, (unsigned)m.runs[i]);
    pthread_barrier_destroy(&m.all_started);
    pthread_barrier_destroy(&m.all_submitted);
    free(m.runs);
}

static const test_case_t tests[] = {
    TEST_ENTRY(pool_outside_submitters_with_joins_inside_run_every_task_once),
    TEST_ENTRY(task_complete_cancel_and_then_races_complete_once_and_continue_once),
    TEST_ENTRY(pool_create_and_destroy_with_work_in_flight_runs_what_was_accepted),
    TEST_ENTRY(pool_submissions_racing_workers_going_to_sleep_are_never_lost),
    TEST_ENTRY(pool_more_outside_submitters_than_producer_rings_each_run_once),
    TEST_ENTRY(task_deadlines_racing_completions_complete_once),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
