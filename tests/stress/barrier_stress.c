/* tests/stress/barrier_stress.c: park_barrier and park_latch under many
 * threads and tasks.
 *
 * Oracles: phases never mix (the completion of phase k sees every
 * participant of k arrived and none arrived in k+1 yet; a participant
 * that returns from phase k finds its completion done); exactly one
 * arrival per phase is told PARK_BARRIER_SERIAL; arrive_and_drop lowers
 * the count of the later phases exactly; and a latch's count_down racing
 * the cancel of asynchronous waiters releases every waiter it must (a
 * cancelled one either left with nothing or was released first), over
 * 10^4 races. A lost wake-up hangs a phase, and the watchdog fails the
 * test. Loops are bounded by iteration counts (PARK_STRESS_SCALE). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <park/park.h>

#include "wait/wait.h" /* white box: park__wait_count */

#include "test.h"

static park_pool_t *pool_new(unsigned threads)
{
    park_pool_t *pool = NULL;
    park_pool_config_t cfg = {.threads = threads};
    ASSERT_EQ(park_pool_create(&pool, &cfg), 0);
    return pool;
}

/* Restricts this thread (and the threads it starts) to at most two of
 * the CPUs it may use; *saved is what to restore. */
static void use_two_cpus(cpu_set_t *saved)
{
    ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof *saved, saved), 0);
    cpu_set_t two;
    CPU_ZERO(&two);
    for (int cpu = 0, n = 0; cpu < CPU_SETSIZE && n < 2; cpu++)
        if (CPU_ISSET(cpu, saved)) {
            CPU_SET(cpu, &two);
            n++;
        }
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof two, &two), 0);
}

static void restore_cpus(const cpu_set_t *saved)
{
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof *saved, saved), 0);
}

/* ---- phases never mix ------------------------------------------------------------ */

/* One barrier of `threads` participants for `phases` phases. arrived[k]
 * and left[k] count the participants that arrived at and returned from
 * phase k; serial[k] the arrivals told PARK_BARRIER_SERIAL; completed is
 * the number of completions run. */
struct run {
    park_barrier_t b;
    unsigned threads;
    uint64_t phases;
    park_pool_t *pool; /* for asynchronous arrivals, or NULL */
    atomic_uint *arrived;
    atomic_uint *left;
    atomic_uint *serial;
    atomic_uint completed;
    /* Plain: written by each phase's completion only, read after the
     * phase ends (ordered by the barrier). */
    uint64_t checksum;
};

static void check_phase(void *arg)
{
    struct run *r = arg;
    uint64_t k = atomic_load(&r->completed);
    if (atomic_load(&r->arrived[k]) != r->threads)
        test_fail(__FILE__, __LINE__, "phase %" PRIu64 " completed with %u of %u arrived", k,
                  atomic_load(&r->arrived[k]), r->threads);
    if (atomic_load(&r->left[k]) != 0)
        test_fail(__FILE__, __LINE__, "a participant left phase %" PRIu64 " before it completed",
                  k);
    if (k + 1 < r->phases && atomic_load(&r->arrived[k + 1]) != 0)
        test_fail(__FILE__, __LINE__,
                  "a participant arrived at phase %" PRIu64 " before phase %" PRIu64 " completed",
                  k + 1, k);
    r->checksum += k;
    atomic_store(&r->completed, k + 1);
}

struct member {
    struct run *r;
    unsigned id;
};

static void *member_main(void *arg)
{
    struct member *m = arg;
    struct run *r = m->r;
    uint64_t rng = test_rng_seed(m->id);
    for (uint64_t k = 0; k < r->phases; k++) {
        atomic_fetch_add(&r->arrived[k], 1);
        int res;
        if (r->pool && test_rng_below(&rng, 4) == 0) {
            park_task_t *t = park_barrier_arrive_and_wait_async(&r->b, r->pool);
            ASSERT_TRUE(t != NULL);
            void *result = NULL;
            ASSERT_EQ(park_task_wait(t, &result), 0);
            res = (int)(intptr_t)result;
            park_task_release(t);
        } else {
            res = park_barrier_arrive_and_wait(&r->b);
        }
        if (res == PARK_BARRIER_SERIAL)
            atomic_fetch_add(&r->serial[k], 1);
        else
            ASSERT_EQ(res, 0);
        /* Released only once the phase's completion has run. */
        ASSERT_GE(atomic_load(&r->completed), k + 1);
        ASSERT_EQ(r->checksum, k * (k + 1) / 2);
        atomic_fetch_add(&r->left[k], 1);
    }
    return NULL;
}

static void run_phases(unsigned threads, uint64_t phases, park_pool_t *pool)
{
    struct run r;
    memset(&r, 0, sizeof r);
    r.threads = threads;
    r.phases = phases;
    r.pool = pool;
    r.arrived = calloc(phases, sizeof *r.arrived);
    r.left = calloc(phases, sizeof *r.left);
    r.serial = calloc(phases, sizeof *r.serial);
    ASSERT_TRUE(r.arrived && r.left && r.serial);
    ASSERT_EQ(park_barrier_init(&r.b, threads, check_phase, &r), 0);
    struct member *m = calloc(threads, sizeof *m);
    ASSERT_TRUE(m != NULL);
    for (unsigned i = 0; i < threads; i++)
        m[i] = (struct member){&r, i};
    park_time_t start = park_now();
    test_threads_t *t = test_threads_start(threads, member_main, m, sizeof m[0]);
    test_threads_join(t);
    park_time_t took = park_now() - start;
    ASSERT_EQ(atomic_load(&r.completed), phases);
    for (uint64_t k = 0; k < phases; k++) {
        ASSERT_EQ(atomic_load(&r.serial[k]), 1);
        ASSERT_EQ(atomic_load(&r.left[k]), threads);
    }
    ASSERT_EQ(park__wait_count(&r.b), 0);
    ASSERT_EQ(park_barrier_destroy(&r.b), 0);
    printf("     %u threads x %" PRIu64 " phases: %.1f us a phase\n", threads, phases,
           (double)took / 1e3 / (double)phases);
    free(m);
    free(r.arrived);
    free(r.left);
    free(r.serial);
}

TEST(barrier_64_threads_on_two_cpus_never_mix_phases_and_have_one_serial_each)
{
    cpu_set_t saved;
    use_two_cpus(&saved);
    run_phases(64, test_scaled(1000), NULL);
    restore_cpus(&saved);
}

TEST(barrier_4_threads_never_mix_phases_and_have_one_serial_each)
{
    run_phases(4, test_scaled(20000), NULL);
}

TEST(barrier_blocking_and_async_arrivals_never_mix_phases)
{
    park_pool_t *pool = pool_new(2);
    run_phases(8, test_scaled(5000), pool);
    park_pool_destroy(pool);
}

/* ---- arrive_and_drop ----------------------------------------------------------------- */

/* Participant i stays for stays[i] phases, then drops in the next one; the
 * completion of each phase sees exactly the participants of that phase
 * arrived. */
#define DROP_THREADS 16

struct drop_run {
    park_barrier_t b;
    uint64_t phases;
    unsigned stays[DROP_THREADS];
    atomic_uint arrivals; /* this phase */
    atomic_uint completed;
    atomic_uint serials;
};

static unsigned participants_of(const struct drop_run *r, uint64_t k)
{
    unsigned n = 0;
    for (unsigned i = 0; i < DROP_THREADS; i++)
        n += r->stays[i] >= k; /* phases 0..stays[i] (the last one a drop) */
    return n;
}

static void check_drop_phase(void *arg)
{
    struct drop_run *r = arg;
    uint64_t k = atomic_load(&r->completed);
    ASSERT_EQ(atomic_load(&r->arrivals), participants_of(r, k));
    atomic_store(&r->arrivals, 0);
    atomic_store(&r->completed, k + 1);
}

struct drop_member {
    struct drop_run *r;
    unsigned id;
};

static void *drop_member_main(void *arg)
{
    struct drop_member *m = arg;
    struct drop_run *r = m->r;
    for (uint64_t k = 0;; k++) {
        atomic_fetch_add(&r->arrivals, 1);
        bool drop = k == r->stays[m->id];
        int res = drop ? park_barrier_arrive_and_drop(&r->b) : park_barrier_arrive_and_wait(&r->b);
        if (res == PARK_BARRIER_SERIAL)
            atomic_fetch_add(&r->serials, 1);
        else
            ASSERT_EQ(res, 0);
        if (drop)
            return NULL;
        ASSERT_GE(atomic_load(&r->completed), k + 1);
    }
}

TEST(barrier_arrive_and_drop_lowers_later_phases_exactly)
{
    uint64_t rounds = test_scaled(200), rng = test_rng_seed(7);
    for (uint64_t round = 0; round < rounds; round++) {
        struct drop_run r;
        memset(&r, 0, sizeof r);
        unsigned last = 0;
        for (unsigned i = 0; i < DROP_THREADS; i++) {
            r.stays[i] = test_rng_below(&rng, 20);
            last = r.stays[i] > last ? r.stays[i] : last;
        }
        ASSERT_EQ(park_barrier_init(&r.b, DROP_THREADS, check_drop_phase, &r), 0);
        struct drop_member m[DROP_THREADS];
        for (unsigned i = 0; i < DROP_THREADS; i++)
            m[i] = (struct drop_member){&r, i};
        test_threads_t *t = test_threads_start(DROP_THREADS, drop_member_main, m, sizeof m[0]);
        test_threads_join(t);
        /* Every phase up to the last drop completed, once, with one serial. */
        ASSERT_EQ(atomic_load(&r.completed), last + 1);
        ASSERT_EQ(atomic_load(&r.serials), last + 1);
        ASSERT_EQ(park__wait_count(&r.b), 0);
    }
}

/* ---- latch: count_down racing the cancel of asynchronous waiters -------------------- */

#define LR_TASKS 3
#define LR_WINDOW_NS (40u * US)

struct latch_race {
    park_latch_t l;
    pthread_barrier_t begin, end;
    uint64_t rounds;
    park_time_t down_at[2];    /* when each counter counts down */
    park_time_t wait_deadline; /* the blocking waiter's */
    int wait_result;
};

static void spin_until(park_time_t t)
{
    while (park_now() < t)
        sched_yield();
}

struct lr_thread {
    struct latch_race *r;
    unsigned id; /* 0, 1: counters; 2: a timed blocking waiter */
};

static void *lr_thread_main(void *arg)
{
    struct lr_thread *th = arg;
    struct latch_race *r = th->r;
    for (uint64_t i = 0; i < r->rounds; i++) {
        pthread_barrier_wait(&r->begin);
        if (th->id < 2) {
            spin_until(r->down_at[th->id]);
            ASSERT_EQ(park_latch_count_down(&r->l, 1), 0);
        } else {
            r->wait_result = park_latch_wait_until(&r->l, r->wait_deadline);
            if (r->wait_result == ETIMEDOUT)
                ASSERT_GE(park_now(), r->wait_deadline);
            else
                ASSERT_EQ(r->wait_result, 0);
        }
        pthread_barrier_wait(&r->end);
    }
    return NULL;
}

TEST(latch_count_down_racing_async_cancels_and_timeouts_releases_every_waiter_it_must)
{
    park_pool_t *pool = pool_new(1);
    struct latch_race r;
    memset(&r, 0, sizeof r);
    r.rounds = test_scaled(10000);
    ASSERT_EQ(pthread_barrier_init(&r.begin, NULL, 4), 0);
    ASSERT_EQ(pthread_barrier_init(&r.end, NULL, 4), 0);
    struct lr_thread th[3] = {{&r, 0}, {&r, 1}, {&r, 2}};
    test_threads_t *t = test_threads_start(3, lr_thread_main, th, sizeof th[0]);
    uint64_t rng = test_rng_seed(8), cancelled = 0, released = 0, timed_out = 0;
    for (uint64_t i = 0; i < r.rounds; i++) {
        ASSERT_EQ(park_latch_init(&r.l, 2), 0);
        park_time_t start = park_now();
        r.down_at[0] = start + test_rng_below(&rng, LR_WINDOW_NS);
        r.down_at[1] = start + test_rng_below(&rng, LR_WINDOW_NS);
        r.wait_deadline = start + test_rng_below(&rng, 2 * LR_WINDOW_NS);
        park_task_t *tasks[LR_TASKS];
        for (int k = 0; k < LR_TASKS; k++)
            ASSERT_TRUE((tasks[k] = park_latch_wait_async(&r.l, pool)) != NULL);
        unsigned victim = test_rng_below(&rng, LR_TASKS);
        park_time_t cancel_at = start + test_rng_below(&rng, LR_WINDOW_NS);
        pthread_barrier_wait(&r.begin);
        spin_until(cancel_at);
        int rc = park_task_cancel(tasks[victim]);
        ASSERT_TRUE(rc == 0 || rc == EALREADY);
        pthread_barrier_wait(&r.end);
        /* Both count_downs are in: every waiter not cancelled is released. */
        for (int k = 0; k < LR_TASKS; k++) {
            int err = park_task_wait(tasks[k], NULL);
            if (k == (int)victim && rc == 0)
                ASSERT_EQ(err, ECANCELED);
            else
                ASSERT_EQ(err, 0);
            park_task_release(tasks[k]);
        }
        ASSERT_TRUE(park_latch_try_wait(&r.l));
        ASSERT_EQ(park__wait_count(&r.l), 0);
        ASSERT_EQ(park_latch_destroy(&r.l), 0);
        cancelled += rc == 0;
        released += rc == EALREADY;
        timed_out += r.wait_result == ETIMEDOUT;
    }
    test_threads_join(t);
    printf("     %" PRIu64 " races: %" PRIu64 " cancels took the waiter out, %" PRIu64
           " came after its release; %" PRIu64 " timed waits timed out\n",
           r.rounds, cancelled, released, timed_out);
    pthread_barrier_destroy(&r.begin);
    pthread_barrier_destroy(&r.end);
    park_pool_destroy(pool);
}

static const test_case_t tests[] = {
    TEST_ENTRY(barrier_64_threads_on_two_cpus_never_mix_phases_and_have_one_serial_each),
    TEST_ENTRY(barrier_4_threads_never_mix_phases_and_have_one_serial_each),
    TEST_ENTRY(barrier_blocking_and_async_arrivals_never_mix_phases),
    TEST_ENTRY(barrier_arrive_and_drop_lowers_later_phases_exactly),
    TEST_ENTRY(latch_count_down_racing_async_cancels_and_timeouts_releases_every_waiter_it_must),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
