/* tests/unit/pool_test.c: park_pool, park_join and park_parallel_for, one
 * behaviour per test.
 *
 * Threads are lined up by handshakes. "park_pool_destroy has begun" is
 * observed by a job on the pool that submits no-ops until a submission
 * fails with EPIPE (the moment destroy is called, submissions fail), so
 * the job runs its checks while the main thread is inside destroy and no
 * worker ever calls destroy. The only sleeps are choreography (letting a
 * pool go idle); the one resource check is the CPU an idle pool burns over
 * a second, with a generous bound. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <park/park.h>
#include <park/pool.h>

#include "test.h"

static park_pool_t *pool_new(unsigned threads)
{
    park_pool_t *pool = NULL;
    park_pool_config_t cfg = {.threads = threads};
    ASSERT_EQ(park_pool_create(&pool, &cfg), 0);
    ASSERT_TRUE(pool != NULL);
    return pool;
}

static unsigned online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    ASSERT_GT(n, 0);
    return (unsigned)n;
}

/* ---- small jobs --------------------------------------------------------------- */

/* Counts its runs in *(atomic_uint *)arg. */
static void count(void *arg)
{
    atomic_fetch_add((atomic_uint *)arg, 1);
}

/* Records where it ran. */
struct where {
    atomic_int runs;
    park_pool_t *pool; /* park_pool_current() there */
    pthread_t thread;
};

static void record_where(void *arg)
{
    struct where *w = arg;
    w->pool = park_pool_current();
    w->thread = pthread_self();
    atomic_fetch_add(&w->runs, 1);
}

/* Submits no-ops to the pool, from one of its workers, until a submission
 * fails with EPIPE: park_pool_destroy has begun. Returns how many were
 * accepted (each of them still runs). */
static unsigned await_destroy_begun(park_pool_t *pool, atomic_uint *ran)
{
    unsigned accepted = 0;
    for (;;) {
        int rc = park_pool_submit(pool, count, ran);
        if (rc == EPIPE)
            return accepted;
        ASSERT_EQ(rc, 0);
        accepted++;
        test_sleep_ns(200 * US);
    }
}

/* ---- create, threads, current, stats ------------------------------------------ */

TEST(pool_create_with_zero_threads_starts_one_per_online_cpu)
{
    park_pool_t *pool = pool_new(0);
    ASSERT_EQ(park_pool_threads(pool), online_cpus());
    park_pool_destroy(pool);
}

TEST(pool_create_with_null_config_starts_one_per_online_cpu)
{
    park_pool_t *pool = NULL;
    ASSERT_EQ(park_pool_create(&pool, NULL), 0);
    ASSERT_EQ(park_pool_threads(pool), online_cpus());
    park_pool_destroy(pool);
}

TEST(pool_create_starts_the_threads_asked_for)
{
    for (unsigned n = 1; n <= 5; n++) {
        park_pool_t *pool = pool_new(n);
        ASSERT_EQ(park_pool_threads(pool), n);
        park_pool_destroy(pool);
    }
}

TEST(pool_create_with_more_than_4096_threads_is_einval)
{
    park_pool_t *pool = NULL;
    park_pool_config_t cfg = {.threads = 4097};
    ASSERT_EQ(park_pool_create(&pool, &cfg), EINVAL);
    cfg.threads = UINT32_MAX;
    ASSERT_EQ(park_pool_create(&pool, &cfg), EINVAL);
}

TEST(pool_current_is_null_outside_any_pool)
{
    ASSERT_TRUE(park_pool_current() == NULL);
    park_pool_t *pool = pool_new(1);
    ASSERT_TRUE(park_pool_current() == NULL);
    park_pool_destroy(pool);
    ASSERT_TRUE(park_pool_current() == NULL);
}

TEST(pool_current_is_the_pool_inside_its_worker)
{
    park_pool_t *a = pool_new(1), *b = pool_new(1);
    struct where wa, wb;
    memset(&wa, 0, sizeof wa);
    memset(&wb, 0, sizeof wb);
    ASSERT_EQ(park_pool_submit(a, record_where, &wa), 0);
    ASSERT_EQ(park_pool_submit(b, record_where, &wb), 0);
    park_pool_destroy(a);
    park_pool_destroy(b);
    ASSERT_EQ(atomic_load(&wa.runs), 1);
    ASSERT_EQ(atomic_load(&wb.runs), 1);
    ASSERT_TRUE(wa.pool == a);
    ASSERT_TRUE(wb.pool == b);
    ASSERT_FALSE(pthread_equal(wa.thread, pthread_self()));
}

TEST(pool_stats_count_executed_submissions)
{
    enum { N = 100 };
    park_pool_t *pool = pool_new(2);
    park_pool_stats_t st;
    park_pool_stats(pool, &st);
    ASSERT_EQ(st.executed, 0);
    ASSERT_EQ(st.steals, 0);
    ASSERT_EQ(st.spilled, 0);
    atomic_uint ran = 0;
    for (int i = 0; i < N; i++)
        ASSERT_EQ(park_pool_submit(pool, count, &ran), 0);
    AWAIT(atomic_load(&ran) == N);
    /* The counter may be bumped just after the item returns. */
    AWAIT((park_pool_stats(pool, &st), st.executed >= N));
    ASSERT_EQ(st.executed, N);
    park_pool_destroy(pool);
}

/* ---- submit ------------------------------------------------------------------- */

TEST(pool_submit_runs_the_function_once_on_a_worker)
{
    park_pool_t *pool = pool_new(2);
    struct where w;
    memset(&w, 0, sizeof w);
    ASSERT_EQ(park_pool_submit(pool, record_where, &w), 0);
    AWAIT(atomic_load(&w.runs) == 1);
    ASSERT_TRUE(w.pool == pool);
    park_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&w.runs), 1);
}

/* From a worker, submit goes to the worker's own deque. */
struct spawner {
    park_pool_t *pool;
    atomic_uint ran;
    unsigned n;
};

static void spawn(void *arg)
{
    struct spawner *s = arg;
    for (unsigned i = 0; i < s->n; i++)
        ASSERT_EQ(park_pool_submit(s->pool, count, &s->ran), 0);
}

TEST(pool_submit_from_a_worker_runs_every_function_once)
{
    park_pool_t *pool = pool_new(2);
    /* More than a deque holds, so some spill to the shared queue. */
    struct spawner s = {.pool = pool, .n = 3000};
    ASSERT_EQ(park_pool_submit(pool, spawn, &s), 0);
    AWAIT(atomic_load(&s.ran) == s.n);
    park_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&s.ran), s.n);
}

#define SUBMITTERS 4
#define PER_SUBMITTER 100000

static atomic_uint_fast64_t flood_ran;

static void flood_job(void *arg)
{
    if (atomic_fetch_add_explicit((_Atomic uint8_t *)arg, 1, memory_order_relaxed) != 0)
        test_fail(__FILE__, __LINE__, "a submitted function ran twice");
    atomic_fetch_add(&flood_ran, 1);
}

struct submitter {
    park_pool_t *pool;
    _Atomic uint8_t *runs; /* this thread's PER_SUBMITTER counters */
};

static void *submitter_main(void *arg)
{
    struct submitter *s = arg;
    for (unsigned i = 0; i < PER_SUBMITTER; i++)
        ASSERT_EQ(park_pool_submit(s->pool, flood_job, &s->runs[i]), 0);
    return NULL;
}

TEST(pool_submissions_from_4_outside_threads_each_run_once)
{
    park_pool_t *pool = pool_new(2);
    _Atomic uint8_t *runs = calloc(SUBMITTERS * PER_SUBMITTER, sizeof runs[0]);
    ASSERT_TRUE(runs != NULL);
    atomic_store(&flood_ran, 0);
    struct submitter s[SUBMITTERS];
    for (unsigned i = 0; i < SUBMITTERS; i++)
        s[i] = (struct submitter){pool, runs + i * PER_SUBMITTER};
    test_threads_join(test_threads_start(SUBMITTERS, submitter_main, s, sizeof s[0]));
    AWAIT(atomic_load(&flood_ran) == SUBMITTERS * PER_SUBMITTER);
    for (unsigned i = 0; i < SUBMITTERS * PER_SUBMITTER; i++)
        if (atomic_load_explicit(&runs[i], memory_order_relaxed) != 1)
            test_fail(__FILE__, __LINE__, "submission %u of thread %u ran %u times",
                      i % PER_SUBMITTER, i / PER_SUBMITTER, (unsigned)runs[i]);
    park_pool_stats_t st;
    AWAIT((park_pool_stats(pool, &st), st.executed >= SUBMITTERS * PER_SUBMITTER));
    printf("     executed %" PRIu64 ", steals %" PRIu64 ", parks %" PRIu64 ", spilled %" PRIu64
           "\n",
           st.executed, st.steals, st.parks, st.spilled);
    park_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&flood_ran), SUBMITTERS * PER_SUBMITTER);
    free(runs);
}

/* ---- idle ----------------------------------------------------------------------- */

static uint64_t cpu_ns(void)
{
    struct rusage ru;
    ASSERT_EQ(getrusage(RUSAGE_SELF, &ru), 0);
    return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
           ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

static void pf_noop(size_t lo, size_t hi, void *arg)
{
    (void)lo;
    (void)hi;
    (void)arg;
}

/* The target is under 1 % of a CPU; the bound is 5 % to absorb the
 * sanitizers' own threads and the harness watchdog, and is still far below
 * what one spinning or polling worker would burn. */
#define IDLE_CPU_BOUND_NS (50 * (uint64_t)MS)

TEST(pool_idle_burns_almost_no_cpu)
{
    park_pool_t *pool = pool_new(0);
    park_parallel_for(pool, 0, 10000, 1, pf_noop, NULL); /* every worker was busy */
    test_sleep_ns(100 * MS);                             /* ... and now goes idle */
    uint64_t before = cpu_ns();
    test_sleep_ns(1000 * MS);
    uint64_t used = cpu_ns() - before;
    printf("     %u idle workers: %.2f ms of CPU in 1 s\n", park_pool_threads(pool),
           (double)used / MS);
    ASSERT_LT(used, IDLE_CPU_BOUND_NS);
    park_pool_destroy(pool);
}

TEST(pool_runs_a_submission_after_idling)
{
    park_pool_t *pool = pool_new(2);
    atomic_uint ran = 0;
    for (unsigned round = 1; round <= 5; round++) {
        test_sleep_ns(50 * MS); /* every worker goes to sleep */
        ASSERT_EQ(park_pool_submit(pool, count, &ran), 0);
        AWAIT(atomic_load(&ran) == round);
    }
    park_pool_destroy(pool);
}

TEST(pool_join_from_outside_runs_after_idling)
{
    park_pool_t *pool = pool_new(2);
    for (int round = 0; round < 3; round++) {
        test_sleep_ns(50 * MS);
        struct where a, b;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        park_join(pool, record_where, &a, record_where, &b);
        ASSERT_EQ(atomic_load(&a.runs), 1);
        ASSERT_EQ(atomic_load(&b.runs), 1);
    }
    park_pool_destroy(pool);
}

/* ---- destroy ------------------------------------------------------------------ */

/* Holds the only worker of a pool until destroy has begun. */
struct holder {
    park_pool_t *pool;
    atomic_bool running;
    atomic_uint probes_ran;
    unsigned probes; /* accepted before destroy began */
};

static void hold_until_destroy(void *arg)
{
    struct holder *h = arg;
    atomic_store(&h->running, true);
    h->probes = await_destroy_begun(h->pool, &h->probes_ran);
}

TEST(pool_destroy_runs_all_queued_work)
{
    enum { N = 20000 }; /* more than the rings hold: some go to the overflow list */
    park_pool_t *pool = pool_new(1);
    struct holder h = {.pool = pool};
    ASSERT_EQ(park_pool_submit(pool, hold_until_destroy, &h), 0);
    AWAIT(atomic_load(&h.running));
    atomic_uint ran = 0;
    for (int i = 0; i < N; i++)
        ASSERT_EQ(park_pool_submit(pool, count, &ran), 0);
    park_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&ran), N);
    ASSERT_EQ(atomic_load(&h.probes_ran), h.probes);
}

/* Queued work that forks more work: the joins run during the drain. */
struct forker {
    park_pool_t *pool;
    atomic_uint leaves;
    atomic_uint submit_epipe;
};

static void fork_leaf(void *arg)
{
    atomic_fetch_add(&((struct forker *)arg)->leaves, 1);
}

static void fork_two(void *arg)
{
    struct forker *f = arg;
    park_join(f->pool, fork_leaf, f, fork_leaf, f);
    /* Destroy has begun (the holder ran first): no new submissions. */
    if (park_pool_submit(f->pool, fork_leaf, f) == EPIPE)
        atomic_fetch_add(&f->submit_epipe, 1);
}

TEST(pool_destroy_runs_the_joins_of_queued_work)
{
    enum { N = 200 };
    park_pool_t *pool = pool_new(1);
    struct holder h = {.pool = pool};
    struct forker f = {.pool = pool};
    ASSERT_EQ(park_pool_submit(pool, hold_until_destroy, &h), 0);
    AWAIT(atomic_load(&h.running));
    for (int i = 0; i < N; i++)
        ASSERT_EQ(park_pool_submit(pool, fork_two, &f), 0);
    park_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&f.leaves), 2 * N);
    ASSERT_EQ(atomic_load(&f.submit_epipe), N);
}

/* A job that sees destroy begin, then checks submissions from inside and
 * from an outside thread, and a join from inside. */
struct late {
    park_pool_t *pool;
    atomic_uint probes_ran;
    unsigned probes;
    int inside_rc;
    atomic_bool destroy_seen;
    atomic_bool outside_done;
    int outside_rc;
    atomic_uint must_not_run;
    struct where ja, jb;
};

static void late_job(void *arg)
{
    struct late *l = arg;
    l->probes = await_destroy_begun(l->pool, &l->probes_ran);
    l->inside_rc = park_pool_submit(l->pool, count, &l->must_not_run);
    atomic_store(&l->destroy_seen, true);
    AWAIT(atomic_load(&l->outside_done)); /* keeps destroy from returning meanwhile */
    park_join(l->pool, record_where, &l->ja, record_where, &l->jb);
}

static void *late_outsider(void *arg)
{
    struct late *l = arg;
    AWAIT(atomic_load(&l->destroy_seen));
    l->outside_rc = park_pool_submit(l->pool, count, &l->must_not_run);
    atomic_store(&l->outside_done, true);
    return NULL;
}

TEST(pool_submit_after_destroy_began_is_epipe_and_does_not_run)
{
    struct late l;
    memset(&l, 0, sizeof l);
    l.pool = pool_new(2);
    test_threads_t *t = test_threads_start(1, late_outsider, &l, sizeof l);
    ASSERT_EQ(park_pool_submit(l.pool, late_job, &l), 0);
    park_pool_destroy(l.pool);
    test_threads_join(t);
    ASSERT_EQ(l.inside_rc, EPIPE);
    ASSERT_EQ(l.outside_rc, EPIPE);
    ASSERT_EQ(atomic_load(&l.must_not_run), 0);
    ASSERT_EQ(atomic_load(&l.probes_ran), l.probes);
}

TEST(pool_join_inside_the_pool_works_during_destroy)
{
    struct late l;
    memset(&l, 0, sizeof l);
    l.pool = pool_new(1);
    test_threads_t *t = test_threads_start(1, late_outsider, &l, sizeof l);
    ASSERT_EQ(park_pool_submit(l.pool, late_job, &l), 0);
    park_pool_destroy(l.pool);
    test_threads_join(t);
    ASSERT_EQ(atomic_load(&l.ja.runs), 1);
    ASSERT_EQ(atomic_load(&l.jb.runs), 1);
}

TEST(pool_destroy_of_an_idle_pool_returns)
{
    for (unsigned n = 1; n <= 4; n++) {
        park_pool_t *pool = pool_new(n);
        park_pool_destroy(pool);
    }
}

/* ---- join ----------------------------------------------------------------------- */

TEST(pool_join_from_outside_runs_both_on_the_pool_and_waits)
{
    park_pool_t *pool = pool_new(2);
    struct where a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    park_join(pool, record_where, &a, record_where, &b);
    ASSERT_EQ(atomic_load(&a.runs), 1);
    ASSERT_EQ(atomic_load(&b.runs), 1);
    ASSERT_TRUE(a.pool == pool);
    ASSERT_TRUE(b.pool == pool);
    park_pool_destroy(pool);
}

TEST(pool_join_from_outside_with_one_function_runs_it_and_waits)
{
    park_pool_t *pool = pool_new(1);
    struct where a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    park_join(pool, record_where, &a, NULL, NULL);
    ASSERT_EQ(atomic_load(&a.runs), 1);
    ASSERT_TRUE(a.pool == pool);
    park_join(pool, NULL, NULL, record_where, &b);
    ASSERT_EQ(atomic_load(&b.runs), 1);
    ASSERT_TRUE(b.pool == pool);
    park_join(pool, NULL, NULL, NULL, NULL);
    park_pool_destroy(pool);
}

/* From a worker: a runs on the calling worker, b on some worker. */
struct inner_join {
    park_pool_t *pool;
    pthread_t caller;
    struct where a, b, only_a, only_b;
    atomic_bool done;
};

static void inner_join_job(void *arg)
{
    struct inner_join *j = arg;
    j->caller = pthread_self();
    park_join(j->pool, record_where, &j->a, record_where, &j->b);
    ASSERT_EQ(atomic_load(&j->a.runs), 1);
    ASSERT_EQ(atomic_load(&j->b.runs), 1);
    park_join(j->pool, record_where, &j->only_a, NULL, NULL);
    ASSERT_EQ(atomic_load(&j->only_a.runs), 1);
    park_join(j->pool, NULL, NULL, record_where, &j->only_b);
    ASSERT_EQ(atomic_load(&j->only_b.runs), 1);
    park_join(j->pool, NULL, NULL, NULL, NULL);
    atomic_store(&j->done, true);
}

TEST(pool_join_from_a_worker_runs_a_on_the_caller_and_both_before_returning)
{
    park_pool_t *pool = pool_new(2);
    struct inner_join j;
    memset(&j, 0, sizeof j);
    j.pool = pool;
    ASSERT_EQ(park_pool_submit(pool, inner_join_job, &j), 0);
    AWAIT(atomic_load(&j.done));
    ASSERT_TRUE(pthread_equal(j.a.thread, j.caller));
    ASSERT_TRUE(j.a.pool == pool);
    ASSERT_TRUE(j.b.pool == pool);
    ASSERT_TRUE(j.only_b.pool == pool);
    park_pool_destroy(pool);
}

/* From a worker of another pool, park_join is an outside join: both run on
 * the pool asked for, and the caller helps its own pool meanwhile. */
struct cross_join {
    park_pool_t *target;
    struct where a, b;
    atomic_bool done;
};

static void cross_join_job(void *arg)
{
    struct cross_join *j = arg;
    park_join(j->target, record_where, &j->a, record_where, &j->b);
    ASSERT_EQ(atomic_load(&j->a.runs), 1);
    ASSERT_EQ(atomic_load(&j->b.runs), 1);
    atomic_store(&j->done, true);
}

TEST(pool_join_from_a_worker_of_another_pool_runs_both_on_the_pool_asked_for)
{
    park_pool_t *from = pool_new(1), *target = pool_new(1);
    struct cross_join j;
    memset(&j, 0, sizeof j);
    j.target = target;
    ASSERT_EQ(park_pool_submit(from, cross_join_job, &j), 0);
    AWAIT(atomic_load(&j.done));
    ASSERT_TRUE(j.a.pool == target);
    ASSERT_TRUE(j.b.pool == target);
    park_pool_destroy(from);
    park_pool_destroy(target);
}

/* Fibonacci by fork-join; below `serial` it recurses without joining. */
struct fib {
    park_pool_t *pool;
    unsigned n, serial;
    uint64_t out; /* plain: park_join orders it */
};

static uint64_t fib_serial(unsigned n)
{
    return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

static void fib_join(void *arg)
{
    struct fib *f = arg;
    if (f->n < 2 || f->n < f->serial) {
        f->out = fib_serial(f->n);
        return;
    }
    struct fib a = {f->pool, f->n - 1, f->serial, 0}, b = {f->pool, f->n - 2, f->serial, 0};
    park_join(f->pool, fib_join, &a, fib_join, &b);
    f->out = a.out + b.out;
}

static void fib_check(unsigned threads, unsigned n, unsigned serial)
{
    park_pool_t *pool = pool_new(threads);
    struct fib f = {pool, n, serial, 0};
    park_join(pool, fib_join, &f, NULL, NULL);
    ASSERT_EQ(f.out, fib_serial(n));
    park_pool_destroy(pool);
}

TEST(pool_fib_by_join_without_cutoff_equals_serial_result)
{
    fib_check(2, 25, 0);
}

TEST(pool_fib_by_join_with_cutoff_equals_serial_result)
{
    fib_check(4, 30, 16);
}

TEST(pool_fib_by_join_on_one_worker_equals_serial_result)
{
    fib_check(1, 20, 0);
}

/* fib from the main thread straight away: the outer join is from outside. */
TEST(pool_fib_by_join_called_from_outside_at_the_top_equals_serial_result)
{
    park_pool_t *pool = pool_new(2);
    struct fib a = {pool, 20, 0, 0}, b = {pool, 19, 0, 0};
    park_join(pool, fib_join, &a, fib_join, &b);
    ASSERT_EQ(a.out + b.out, fib_serial(21));
    park_pool_destroy(pool);
}

/* One branch 30 joins deep: a recurses, b is trivial (or a little fib). */
#define NEST_DEPTH 30

struct nest {
    park_pool_t *pool;
    unsigned depth;
    unsigned b_fib;
    atomic_uint *b_runs;
    unsigned *deepest;
};

static void nest_b(void *arg)
{
    struct nest *n = arg;
    if (n->b_fib) {
        struct fib f = {n->pool, n->b_fib, 0, 0};
        fib_join(&f);
        ASSERT_EQ(f.out, fib_serial(n->b_fib));
    }
    atomic_fetch_add(n->b_runs, 1);
}

static void nest_a(void *arg)
{
    struct nest *n = arg;
    ASSERT_TRUE(park_pool_current() == n->pool);
    if (n->depth == NEST_DEPTH) {
        *n->deepest = n->depth;
        return;
    }
    struct nest child = *n;
    child.depth = n->depth + 1;
    park_join(n->pool, nest_a, &child, nest_b, n);
}

static void nest_check(unsigned threads, unsigned b_fib)
{
    park_pool_t *pool = pool_new(threads);
    atomic_uint b_runs = 0;
    unsigned deepest = 0;
    struct nest top = {pool, 0, b_fib, &b_runs, &deepest};
    park_join(pool, nest_a, &top, NULL, NULL);
    ASSERT_EQ(deepest, NEST_DEPTH);
    ASSERT_EQ(atomic_load(&b_runs), NEST_DEPTH);
    park_pool_destroy(pool);
}

TEST(pool_nested_join_to_depth_30_completes)
{
    nest_check(2, 0);
}

TEST(pool_nested_join_to_depth_30_completes_on_one_worker)
{
    nest_check(1, 0);
}

TEST(pool_nested_join_to_depth_30_with_forking_siblings_completes)
{
    nest_check(4, 12);
}

/* ---- parallel_for --------------------------------------------------------------- */

struct cover {
    size_t begin, end, grain;
    _Atomic uint8_t *hits; /* per index, from begin */
    atomic_size_t calls;
};

static void cover_body(size_t lo, size_t hi, void *arg)
{
    struct cover *c = arg;
    size_t most = c->grain ? c->grain : 1;
    if (!(c->begin <= lo && lo < hi && hi <= c->end && hi - lo <= most))
        test_fail(__FILE__, __LINE__, "body called with [%zu, %zu) for [%zu, %zu) with grain %zu",
                  lo, hi, c->begin, c->end, c->grain);
    for (size_t i = lo; i < hi; i++)
        atomic_fetch_add_explicit(&c->hits[i - c->begin], 1, memory_order_relaxed);
    atomic_fetch_add(&c->calls, 1);
}

static void cover_run(park_pool_t *pool, size_t begin, size_t end, size_t grain)
{
    struct cover c = {.begin = begin, .end = end, .grain = grain};
    c.hits = calloc(end - begin + 1, sizeof c.hits[0]);
    ASSERT_TRUE(c.hits != NULL);
    park_parallel_for(pool, begin, end, grain, cover_body, &c);
    for (size_t i = begin; i < end; i++)
        if (atomic_load_explicit(&c.hits[i - begin], memory_order_relaxed) != 1)
            test_fail(__FILE__, __LINE__, "[%zu, %zu) grain %zu: index %zu covered %u times", begin,
                      end, grain, i, (unsigned)c.hits[i - begin]);
    size_t most = grain ? grain : 1;
    ASSERT_GE(atomic_load(&c.calls), (end - begin + most - 1) / most);
    free(c.hits);
}

static const struct {
    size_t begin, end, grain;
} cover_cases[] = {
    {0, 1000, 1},
    {0, 1000, 0},
    {3, 1003, 7},
    {0, 1, 1},
    {0, 1, 0},
    {10, 11, 5},
    {0, 10, 100},
    {5, 6, 1000},
    {100, 228, 128},
    {0, 129, 128},
    {0, 100000, 64},
    {7, 50007, 1},
    {(size_t)-1000, (size_t)-1, 3},
};

TEST(pool_parallel_for_from_outside_covers_every_index_once)
{
    park_pool_t *pool = pool_new(2);
    for (size_t k = 0; k < sizeof cover_cases / sizeof cover_cases[0]; k++)
        cover_run(pool, cover_cases[k].begin, cover_cases[k].end, cover_cases[k].grain);
    park_pool_destroy(pool);
}

struct cover_inside {
    park_pool_t *pool;
    atomic_bool done;
};

static void cover_inside_job(void *arg)
{
    struct cover_inside *c = arg;
    for (size_t k = 0; k < sizeof cover_cases / sizeof cover_cases[0]; k++)
        cover_run(c->pool, cover_cases[k].begin, cover_cases[k].end, cover_cases[k].grain);
    atomic_store(&c->done, true);
}

TEST(pool_parallel_for_from_a_worker_covers_every_index_once)
{
    park_pool_t *pool = pool_new(3);
    struct cover_inside c = {.pool = pool};
    ASSERT_EQ(park_pool_submit(pool, cover_inside_job, &c), 0);
    AWAIT(atomic_load(&c.done));
    park_pool_destroy(pool);
}

TEST(pool_parallel_for_on_an_empty_range_calls_nothing)
{
    park_pool_t *pool = pool_new(2);
    for (size_t grain = 0; grain < 3; grain++) {
        struct cover c = {.begin = 5, .end = 5, .grain = grain};
        park_parallel_for(pool, 5, 5, grain, cover_body, &c);
        park_parallel_for(pool, 0, 0, grain, cover_body, &c);
        ASSERT_EQ(atomic_load(&c.calls), 0);
    }
    park_pool_destroy(pool);
}

TEST(pool_parallel_for_with_grain_larger_than_the_range_calls_body_once)
{
    park_pool_t *pool = pool_new(2);
    struct cover c = {.begin = 10, .end = 20, .grain = 64};
    c.hits = calloc(10, sizeof c.hits[0]);
    park_parallel_for(pool, 10, 20, 64, cover_body, &c);
    ASSERT_EQ(atomic_load(&c.calls), 1);
    free(c.hits);
    park_pool_destroy(pool);
}

TEST(pool_parallel_for_with_grain_zero_calls_body_per_index)
{
    park_pool_t *pool = pool_new(2);
    struct cover c = {.begin = 0, .end = 300, .grain = 0};
    c.hits = calloc(300, sizeof c.hits[0]);
    park_parallel_for(pool, 0, 300, 0, cover_body, &c);
    ASSERT_EQ(atomic_load(&c.calls), 300);
    free(c.hits);
    park_pool_destroy(pool);
}

/* ---- misuse ---------------------------------------------------------------------------- */

static void count_run(void *arg)
{
    atomic_fetch_add((atomic_int *)arg, 1);
}

TEST(pool_submit_of_a_null_function_is_einval_and_queues_nothing)
{
    park_pool_t *pool = pool_new(1);
    atomic_int runs = 0;
    ASSERT_EQ(park_pool_submit(pool, NULL, &runs), EINVAL);
    ASSERT_EQ(park_pool_submit(pool, count_run, &runs), 0);
    park_pool_destroy(pool);
    ASSERT_EQ(atomic_load(&runs), 1);
}

TEST(pool_submit_to_a_null_pool_is_einval)
{
    atomic_int runs = 0;
    ASSERT_EQ(park_pool_submit(NULL, count_run, &runs), EINVAL);
    ASSERT_EQ(atomic_load(&runs), 0);
}

TEST(pool_destroy_of_null_does_nothing)
{
    park_pool_destroy(NULL);
}

/* Run by the tests below, each in a process of its own. */
static void destroy_own_pool(void *pool)
{
    park_pool_destroy(pool);
}

TEST(child_destroy_from_own_worker)
{
    park_pool_t *pool = pool_new(1);
    park_join(pool, destroy_own_pool, pool, NULL, NULL); /* waits: the worker aborts */
}

TEST(child_destroy_twice)
{
    park_pool_t *pool = pool_new(1);
    park_pool_destroy(pool);
    park_pool_destroy(pool);
}

TEST(child_parallel_for_null_body)
{
    park_pool_t *pool = pool_new(1);
    park_parallel_for(pool, 0, 10, 1, NULL, NULL);
}

TEST(pool_destroy_from_its_own_worker_aborts_with_a_message)
{
    test_expect_abort_in_child("child_destroy_from_own_worker", "park_pool_destroy(");
    test_expect_abort_in_child("child_destroy_from_own_worker", "own workers");
}

TEST(pool_destroy_twice_aborts_with_a_message)
{
    test_expect_abort_in_child("child_destroy_twice", "park_pool_destroy(");
    test_expect_abort_in_child("child_destroy_twice", "not a live pool");
}

TEST(pool_parallel_for_with_a_null_body_aborts_with_a_message)
{
    test_expect_abort_in_child("child_parallel_for_null_body", "park_parallel_for(");
    test_expect_abort_in_child("child_parallel_for_null_body", "body is NULL");
}

static const test_case_t tests[] = {
    TEST_ENTRY(pool_create_with_zero_threads_starts_one_per_online_cpu),
    TEST_ENTRY(pool_create_with_null_config_starts_one_per_online_cpu),
    TEST_ENTRY(pool_create_starts_the_threads_asked_for),
    TEST_ENTRY(pool_create_with_more_than_4096_threads_is_einval),
    TEST_ENTRY(pool_current_is_null_outside_any_pool),
    TEST_ENTRY(pool_current_is_the_pool_inside_its_worker),
    TEST_ENTRY(pool_stats_count_executed_submissions),
    TEST_ENTRY(pool_submit_runs_the_function_once_on_a_worker),
    TEST_ENTRY(pool_submit_from_a_worker_runs_every_function_once),
    TEST_ENTRY(pool_submissions_from_4_outside_threads_each_run_once),
    TEST_ENTRY(pool_idle_burns_almost_no_cpu),
    TEST_ENTRY(pool_runs_a_submission_after_idling),
    TEST_ENTRY(pool_join_from_outside_runs_after_idling),
    TEST_ENTRY(pool_destroy_runs_all_queued_work),
    TEST_ENTRY(pool_destroy_runs_the_joins_of_queued_work),
    TEST_ENTRY(pool_submit_after_destroy_began_is_epipe_and_does_not_run),
    TEST_ENTRY(pool_join_inside_the_pool_works_during_destroy),
    TEST_ENTRY(pool_destroy_of_an_idle_pool_returns),
    TEST_ENTRY(pool_join_from_outside_runs_both_on_the_pool_and_waits),
    TEST_ENTRY(pool_join_from_outside_with_one_function_runs_it_and_waits),
    TEST_ENTRY(pool_join_from_a_worker_runs_a_on_the_caller_and_both_before_returning),
    TEST_ENTRY(pool_join_from_a_worker_of_another_pool_runs_both_on_the_pool_asked_for),
    TEST_ENTRY(pool_fib_by_join_without_cutoff_equals_serial_result),
    TEST_ENTRY(pool_fib_by_join_with_cutoff_equals_serial_result),
    TEST_ENTRY(pool_fib_by_join_on_one_worker_equals_serial_result),
    TEST_ENTRY(pool_fib_by_join_called_from_outside_at_the_top_equals_serial_result),
    TEST_ENTRY(pool_nested_join_to_depth_30_completes),
    TEST_ENTRY(pool_nested_join_to_depth_30_completes_on_one_worker),
    TEST_ENTRY(pool_nested_join_to_depth_30_with_forking_siblings_completes),
    TEST_ENTRY(pool_parallel_for_from_outside_covers_every_index_once),
    TEST_ENTRY(pool_parallel_for_from_a_worker_covers_every_index_once),
    TEST_ENTRY(pool_parallel_for_on_an_empty_range_calls_nothing),
    TEST_ENTRY(pool_parallel_for_with_grain_larger_than_the_range_calls_body_once),
    TEST_ENTRY(pool_parallel_for_with_grain_zero_calls_body_per_index),
    TEST_ENTRY(pool_submit_of_a_null_function_is_einval_and_queues_nothing),
    TEST_ENTRY(pool_submit_to_a_null_pool_is_einval),
    TEST_ENTRY(pool_destroy_of_null_does_nothing),
    TEST_ENTRY(child_destroy_from_own_worker),
    TEST_ENTRY(child_destroy_twice),
    TEST_ENTRY(child_parallel_for_null_body),
    TEST_ENTRY(pool_destroy_from_its_own_worker_aborts_with_a_message),
    TEST_ENTRY(pool_destroy_twice_aborts_with_a_message),
    TEST_ENTRY(pool_parallel_for_with_a_null_body_aborts_with_a_message),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
