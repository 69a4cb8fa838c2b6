/* tests/stress/sem_stress.c: park_sem under many threads.
 *
 * Oracles (tests/TESTING.md): permit conservation (every permit released
 * ends up either with exactly one acquirer or in the count), timed waiters
 * that either got a permit or timed out no earlier than their deadline, an
 * `inside` counter that never exceeds the permits, and an exact plain
 * counter under a binary semaphore; for acquisitions of several permits
 * also: a large request is not starved by a stream of small ones, and
 * cancelled, dropped and timed-out large requests give back what was
 * gathered for them. Every loop is bounded by an iteration count (scaled
 * by PARK_STRESS_SCALE) and by the harness watchdog. */
#include <park/park.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "test.h"

static park_pool_t *pool_new(unsigned threads)
{
    park_pool_t *pool = NULL;
    park_pool_config_t cfg = {.threads = threads};
    ASSERT_EQ(park_pool_create(&pool, &cfg), 0);
    return pool;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Each test runs on a default (barging) semaphore and, as *_fifo, on a
 * strictly FIFO one. */
static bool fifo_mode;

static int init_sem(park_sem_t *s, uint32_t initial, uint32_t max)
{
    return fifo_mode ? park_sem_init_fifo(s, initial, max) : park_sem_init(s, initial, max);
}

/* Waits (yielding, not sleeping: nanosleep overshoots by tens of us) until
 * the clock reaches t. Choreography only. */
static void spin_until(park_time_t t)
{
    while (park_now() < t)
        sched_yield();
}

/* acquire_until's contract for one call: 0, or ETIMEDOUT no earlier than the
 * deadline. Returns true if a permit was taken. */
static bool timed_acquire(park_sem_t *s, park_time_t deadline)
{
    int rc = park_sem_acquire_until(s, deadline);
    if (rc == 0)
        return true;
    ASSERT_EQ(rc, ETIMEDOUT);
    ASSERT_GE(park_now(), deadline);
    return false;
}

/* The same contract for n permits together. */
static bool timed_acquire_n(park_sem_t *s, uint32_t n, park_time_t deadline)
{
    int rc = park_sem_acquire_n_until(s, n, deadline);
    if (rc == 0)
        return true;
    ASSERT_EQ(rc, ETIMEDOUT);
    ASSERT_GE(park_now(), deadline);
    return false;
}

/* Takes every free permit; returns how many. Nobody may wait meanwhile. */
static uint32_t drain(park_sem_t *s)
{
    uint32_t n = 0;
    while (park_sem_try_acquire(s))
        n++;
    return n;
}

/* ---- timed waiters against fewer releases --------------------------------- */

#define TW_WAITERS 50
#define TW_RELEASES 25
#define TW_FIRST_DEADLINE_NS (100u * MS) /* waiter i: start + 100 ms + i * 4 ms */
#define TW_DEADLINE_STEP_NS (4u * MS)
#define TW_SETTLE_NS (10u * MS) /* lets the waiters queue before releasing */
#define TW_RELEASE_GAP_NS (200u * US)

/* The waiters live through all rounds (creating 50 threads per round costs
 * seconds with TSan); between the `done` barrier of one round and the `go`
 * of the next only the main thread touches the semaphore. */
struct tw {
    park_sem_t s;
    pthread_barrier_t go, done;
    uint64_t rounds;
    park_time_t start; /* of the current round; written before `go` */
    atomic_uint acquired;
    atomic_uint timed_out;
};

struct tw_waiter {
    struct tw *r;
    unsigned id;
};

static void *tw_waiter_main(void *arg)
{
    struct tw_waiter *w = arg;
    struct tw *r = w->r;
    for (uint64_t round = 0; round < r->rounds; round++) {
        pthread_barrier_wait(&r->go);
        park_time_t deadline = r->start + TW_FIRST_DEADLINE_NS + w->id * TW_DEADLINE_STEP_NS;
        if (timed_acquire(&r->s, deadline))
            atomic_fetch_add(&r->acquired, 1);
        else
            atomic_fetch_add(&r->timed_out, 1);
        pthread_barrier_wait(&r->done);
    }
    return NULL;
}

static void tw_round(struct tw *r, uint64_t round)
{
    ASSERT_EQ(init_sem(&r->s, 0, TW_WAITERS), 0);
    atomic_store(&r->acquired, 0);
    atomic_store(&r->timed_out, 0);
    r->start = park_now();
    pthread_barrier_wait(&r->go);
    test_sleep_ns(TW_SETTLE_NS);
    for (unsigned i = 0; i < TW_RELEASES; i++) {
        ASSERT_EQ(park_sem_release(&r->s, 1), 0);
        test_sleep_ns(TW_RELEASE_GAP_NS);
    }
    park_time_t released = park_now();
    pthread_barrier_wait(&r->done);

    unsigned acquired = atomic_load(&r->acquired), timed_out = atomic_load(&r->timed_out);
    ASSERT_EQ(acquired + timed_out, TW_WAITERS);
    ASSERT_EQ(acquired + park_sem_count(&r->s), TW_RELEASES);
    if (released < r->start + TW_FIRST_DEADLINE_NS) {
        /* Every release came before the first deadline: each permit went to
         * a waiter, and only the others timed out. */
        ASSERT_EQ(acquired, TW_RELEASES);
        ASSERT_EQ(timed_out, TW_WAITERS - TW_RELEASES);
        ASSERT_EQ(park_sem_count(&r->s), 0);
    } else {
        printf("     round %" PRIu64 ": releases ended after the first deadline (machine "
               "stalled); only conservation checked\n",
               round);
    }
    ASSERT_EQ(park_sem_destroy(&r->s), 0);
}

TEST(sem_timed_waiters_get_exactly_the_permits_released_while_they_wait)
{
    struct tw r;
    memset(&r, 0, sizeof r);
    r.rounds = test_scaled(4);
    ASSERT_EQ(pthread_barrier_init(&r.go, NULL, TW_WAITERS + 1), 0);
    ASSERT_EQ(pthread_barrier_init(&r.done, NULL, TW_WAITERS + 1), 0);
    struct tw_waiter w[TW_WAITERS];
    for (unsigned i = 0; i < TW_WAITERS; i++)
        w[i] = (struct tw_waiter){&r, i};
    test_threads_t *t = test_threads_start(TW_WAITERS, tw_waiter_main, w, sizeof w[0]);
    for (uint64_t round = 0; round < r.rounds; round++)
        tw_round(&r, round);
    test_threads_join(t);
    pthread_barrier_destroy(&r.go);
    pthread_barrier_destroy(&r.done);
}

/* ---- timeouts racing releases --------------------------------------------- */

#define TR_WAITERS 4
#define TR_WINDOW_NS (150u * US) /* deadlines and releases fall in this window */
#define TR_MAX_INITIAL 2
#define TR_MAX_RELEASES (TR_WAITERS + 1)

/* Waiters ask for 1 to tr_max_n permits each time (1: the single-permit
 * calls; the *_n tests: up to 3). */
static uint32_t tr_max_n = 1;

struct tr {
    park_sem_t s;
    pthread_barrier_t begin, end;
    uint64_t rounds;
    atomic_uint acquired;  /* permits, this round */
    atomic_uint timed_out; /* waits, this round */
    uint64_t total_acquired, total_timed_out, total_released, leftover;
};

struct tr_thread {
    struct tr *r;
    unsigned id; /* TR_WAITERS: the releaser */
};

static void tr_waiter(struct tr *r, uint64_t *rng)
{
    for (uint64_t round = 0; round < r->rounds; round++) {
        pthread_barrier_wait(&r->begin);
        /* Now and then a deadline already passed: it still takes a permit
         * that is free right then. */
        park_time_t deadline = test_rng_below(rng, 8) == 0
                                   ? park_now() - 1
                                   : park_now() + test_rng_below(rng, TR_WINDOW_NS);
        uint32_t n = 1 + test_rng_below(rng, tr_max_n);
        if (tr_max_n == 1 ? timed_acquire(&r->s, deadline) : timed_acquire_n(&r->s, n, deadline))
            atomic_fetch_add(&r->acquired, n);
        else
            atomic_fetch_add(&r->timed_out, 1);
        pthread_barrier_wait(&r->end);
    }
}

/* The releaser also sets every round up and checks it afterwards (between
 * the `end` barrier of one round and the `begin` of the next, nobody else
 * touches the semaphore). */
static void tr_releaser(struct tr *r, uint64_t *rng)
{
    for (uint64_t round = 0; round < r->rounds; round++) {
        uint32_t initial = test_rng_below(rng, TR_MAX_INITIAL + 1);
        uint32_t releases = test_rng_below(rng, TR_MAX_RELEASES + 1);
        ASSERT_EQ(park_sem_count(&r->s), 0);
        if (initial)
            ASSERT_EQ(park_sem_release(&r->s, initial), 0);
        atomic_store(&r->acquired, 0);
        atomic_store(&r->timed_out, 0);
        pthread_barrier_wait(&r->begin);
        park_time_t start = park_now();
        for (uint32_t i = 0; i < releases; i++) {
            spin_until(start + test_rng_below(rng, TR_WINDOW_NS));
            ASSERT_EQ(park_sem_release(&r->s, 1), 0);
        }
        pthread_barrier_wait(&r->end);
        unsigned acquired = atomic_load(&r->acquired);
        uint32_t left = park_sem_count(&r->s);
        ASSERT_EQ(acquired + left, initial + releases);
        ASSERT_EQ(drain(&r->s), left);
        r->total_acquired += acquired;
        r->total_timed_out += atomic_load(&r->timed_out);
        r->total_released += releases;
        r->leftover += left;
    }
}

static void *tr_thread_main(void *arg)
{
    struct tr_thread *t = arg;
    uint64_t rng = test_rng_seed(t->id);
    if (t->id == TR_WAITERS)
        tr_releaser(t->r, &rng);
    else
        tr_waiter(t->r, &rng);
    return NULL;
}

TEST(sem_timeouts_racing_releases_lose_no_permit)
{
    struct tr r;
    memset(&r, 0, sizeof r);
    ASSERT_EQ(init_sem(&r.s, 0, TR_MAX_INITIAL + TR_MAX_RELEASES), 0);
    r.rounds = test_scaled(2500); /* 10^4 timed waits */
    ASSERT_EQ(pthread_barrier_init(&r.begin, NULL, TR_WAITERS + 1), 0);
    ASSERT_EQ(pthread_barrier_init(&r.end, NULL, TR_WAITERS + 1), 0);
    struct tr_thread t[TR_WAITERS + 1];
    for (unsigned i = 0; i <= TR_WAITERS; i++)
        t[i] = (struct tr_thread){&r, i};
    test_threads_join(test_threads_start(TR_WAITERS + 1, tr_thread_main, t, sizeof t[0]));
    pthread_barrier_destroy(&r.begin);
    pthread_barrier_destroy(&r.end);
    printf("     %" PRIu64 " timed waits for 1 to %u permits: %" PRIu64
           " permits acquired, %" PRIu64 " waits timed out; %" PRIu64 " released, %" PRIu64
           " left in the count\n",
           r.rounds * TR_WAITERS, tr_max_n, r.total_acquired, r.total_timed_out, r.total_released,
           r.leftover);
    ASSERT_EQ(park_sem_destroy(&r.s), 0);
}

/* ---- a binary semaphore as a lock ------------------------------------------ */

/* tests/TESTING.md asks for 10 threads x 10^5. The semaphore is strictly FIFO:
 * once the threads contend, every release hands the permit to a parked
 * thread and the releaser queues behind it (a convoy), so each acquisition
 * costs a wake-up, and 10^6 of them take 15 to 30 s with TSan on 2 cores.
 * Without contention (the threads happen to run one after another) the
 * same run takes milliseconds. The default keeps the 10 threads and runs
 * 2.5 * 10^4 each (up to about 7 s with TSan on 2 cores when it convoys);
 * PARK_STRESS_SCALE=4 gives the full 10^5 per thread. */
#define BIN_THREADS 10
#define BIN_ITERATIONS 25000

struct bin {
    park_sem_t s;
    uint64_t iterations;
    volatile uint64_t counter; /* guarded by s */
};

static void *bin_thread_main(void *arg)
{
    struct bin *b = *(struct bin **)arg;
    for (uint64_t i = 0; i < b->iterations; i++) {
        park_sem_acquire(&b->s);
        b->counter++;
        ASSERT_EQ(park_sem_release(&b->s, 1), 0);
    }
    return NULL;
}

TEST(sem_binary_semaphore_excludes_like_a_lock)
{
    struct bin b = {PARK_SEM_INIT(1, 1), test_scaled(BIN_ITERATIONS), 0};
    ASSERT_EQ(init_sem(&b.s, 1, 1), 0);
    struct bin *args[BIN_THREADS];
    for (unsigned i = 0; i < BIN_THREADS; i++)
        args[i] = &b;
    test_threads_join(test_threads_start(BIN_THREADS, bin_thread_main, args, sizeof args[0]));
    ASSERT_EQ(b.counter, BIN_THREADS * b.iterations);
    ASSERT_EQ(park_sem_count(&b.s), 1);
    ASSERT_EQ(park_sem_destroy(&b.s), 0);
}

/* ---- permits never exceeded ---------------------------------------------- */

#define PN_THREADS 8
#define PN_PERMITS 3
#define PN_ITERATIONS 10000
/* Thread 0 takes 2 or 3 permits one by one and gives them back with one
 * release(n). Only one thread does so: two such threads could each hold
 * some permits and wait for the rest forever. */
#define PN_BATCH_THREAD 0

struct pn {
    park_sem_t s;
    uint64_t iterations;
    atomic_uint inside;
    atomic_uint most_inside;
};

struct pn_thread {
    struct pn *p;
    unsigned id;
};

static void pn_enter(struct pn *p)
{
    unsigned now = atomic_fetch_add(&p->inside, 1) + 1;
    ASSERT_LE(now, PN_PERMITS);
    unsigned most = atomic_load_explicit(&p->most_inside, memory_order_relaxed);
    while (now > most && !atomic_compare_exchange_weak(&p->most_inside, &most, now)) {
    }
}

/* One permit by a blocking, a try (retried) or a timed (retried) acquire. */
static void pn_acquire_one(park_sem_t *s, uint64_t *rng)
{
    switch (test_rng_below(rng, 3)) {
    case 0:
        park_sem_acquire(s);
        return;
    case 1:
        while (!park_sem_try_acquire(s))
            sched_yield();
        return;
    default:
        while (!timed_acquire(s, park_deadline_in(US + test_rng_below(rng, 200 * US)))) {
        }
        return;
    }
}

static void *pn_thread_main(void *arg)
{
    struct pn_thread *t = arg;
    struct pn *p = t->p;
    uint64_t rng = test_rng_seed(t->id);
    for (uint64_t i = 0; i < p->iterations; i++) {
        uint32_t n = t->id == PN_BATCH_THREAD ? 2 + test_rng_below(&rng, 2) : 1;
        for (uint32_t k = 0; k < n; k++) {
            if (t->id == PN_BATCH_THREAD)
                park_sem_acquire(&p->s);
            else
                pn_acquire_one(&p->s, &rng);
            pn_enter(p);
        }
        if (test_rng_below(&rng, 16) == 0)
            sched_yield();
        atomic_fetch_sub(&p->inside, n);
        ASSERT_EQ(park_sem_release(&p->s, n), 0);
    }
    return NULL;
}

TEST(sem_permits_never_exceeded_with_batch_release)
{
    struct pn p;
    memset(&p, 0, sizeof p);
    ASSERT_EQ(init_sem(&p.s, PN_PERMITS, PN_PERMITS), 0);
    p.iterations = test_scaled(PN_ITERATIONS);
    struct pn_thread t[PN_THREADS];
    for (unsigned i = 0; i < PN_THREADS; i++)
        t[i] = (struct pn_thread){&p, i};
    test_threads_join(test_threads_start(PN_THREADS, pn_thread_main, t, sizeof t[0]));
    printf("     at most %u of %u permits held at once\n", atomic_load(&p.most_inside), PN_PERMITS);
    ASSERT_EQ(atomic_load(&p.inside), 0);
    ASSERT_EQ(park_sem_count(&p.s), PN_PERMITS);
    ASSERT_EQ(park_sem_destroy(&p.s), 0);
}

/* ---- mixed acquire modes against a release thread ------------------------- */

#define MX_CONSUMERS 6
#define MX_PER_CONSUMER 5000
#define MX_INITIAL 2
#define MX_BACKLOG 2 /* the releaser waits while more permits than this are free */

enum { MX_BLOCKING, MX_TRY, MX_TIMED, MX_MODES };

struct mx {
    park_sem_t s;
    uint64_t per_consumer;
};

struct mx_thread {
    struct mx *m;
    unsigned id; /* MX_CONSUMERS: the releaser */
    uint64_t acquired[MX_MODES];
    uint64_t failed[MX_MODES];
};

static void mx_consumer(struct mx_thread *t, uint64_t *rng)
{
    park_sem_t *s = &t->m->s;
    uint64_t got = 0;
    while (got < t->m->per_consumer) {
        unsigned mode = test_rng_below(rng, MX_MODES);
        bool ok;
        switch (mode) {
        case MX_BLOCKING:
            park_sem_acquire(s);
            ok = true;
            break;
        case MX_TRY:
            ok = park_sem_try_acquire(s);
            if (!ok)
                sched_yield();
            break;
        default:
            ok = timed_acquire(s, park_deadline_in(test_rng_below(rng, 300 * US)));
            break;
        }
        t->acquired[mode] += ok;
        t->failed[mode] += !ok;
        got += ok;
    }
}

static void mx_releaser(struct mx_thread *t, uint64_t *rng)
{
    park_sem_t *s = &t->m->s;
    uint64_t left = MX_CONSUMERS * t->m->per_consumer;
    while (left) {
        /* Keep the consumers short of permits, so that they queue. */
        while (park_sem_count(s) > MX_BACKLOG + MX_INITIAL)
            sched_yield();
        uint32_t n = 1 + test_rng_below(rng, 3);
        n = n < left ? n : (uint32_t)left;
        ASSERT_EQ(park_sem_release(s, n), 0);
        left -= n;
        if (test_rng_below(rng, 4) == 0)
            sched_yield();
    }
}

static void *mx_thread_main(void *arg)
{
    struct mx_thread *t = arg;
    uint64_t rng = test_rng_seed(t->id);
    if (t->id == MX_CONSUMERS)
        mx_releaser(t, &rng);
    else
        mx_consumer(t, &rng);
    return NULL;
}

TEST(sem_mixed_blocking_try_and_timed_acquires_conserve_permits)
{
    struct mx m;
    m.per_consumer = test_scaled(MX_PER_CONSUMER);
    uint64_t total = MX_CONSUMERS * m.per_consumer;
    ASSERT_EQ(init_sem(&m.s, MX_INITIAL, (uint32_t)(total + MX_INITIAL)), 0);
    struct mx_thread t[MX_CONSUMERS + 1];
    memset(t, 0, sizeof t);
    for (unsigned i = 0; i <= MX_CONSUMERS; i++) {
        t[i].m = &m;
        t[i].id = i;
    }
    test_threads_join(test_threads_start(MX_CONSUMERS + 1, mx_thread_main, t, sizeof t[0]));

    uint64_t acquired[MX_MODES] = {0}, failed[MX_MODES] = {0}, sum = 0;
    for (unsigned i = 0; i < MX_CONSUMERS; i++) {
        for (unsigned mode = 0; mode < MX_MODES; mode++) {
            acquired[mode] += t[i].acquired[mode];
            failed[mode] += t[i].failed[mode];
            sum += t[i].acquired[mode];
        }
    }
    printf("     acquired blocking %" PRIu64 ", try %" PRIu64 " (%" PRIu64
           " failed), timed %" PRIu64 " (%" PRIu64 " timed out)\n",
           acquired[MX_BLOCKING], acquired[MX_TRY], failed[MX_TRY], acquired[MX_TIMED],
           failed[MX_TIMED]);
    ASSERT_EQ(sum, total);
    ASSERT_EQ(park_sem_count(&m.s), MX_INITIAL);
    ASSERT_EQ(park_sem_destroy(&m.s), 0);
}

/* ---- several permits at once: nobody exceeds the permits ------------------------- */

#define PM_THREADS 6
#define PM_PERMITS 4
#define PM_MAX_N 3
#define PM_ITERATIONS 3000

struct pm {
    park_sem_t s;
    uint64_t iterations;
    atomic_uint inside;
    atomic_uint most_inside;
};

struct pm_thread {
    struct pm *p;
    unsigned id;
};

/* n permits by acquire_n, try_acquire_n (retried) or acquire_n_until
 * (retried). Unlike taking them one by one, threads that each want
 * several cannot deadlock: each takes all of its n or none. */
static void pm_acquire(park_sem_t *s, uint32_t n, uint64_t *rng)
{
    switch (test_rng_below(rng, 3)) {
    case 0:
        ASSERT_EQ(park_sem_acquire_n(s, n), 0);
        return;
    case 1:
        while (!park_sem_try_acquire_n(s, n))
            sched_yield();
        return;
    default:
        while (!timed_acquire_n(s, n, park_deadline_in(US + test_rng_below(rng, 300 * US)))) {
        }
        return;
    }
}

static void *pm_thread_main(void *arg)
{
    struct pm_thread *t = arg;
    struct pm *p = t->p;
    uint64_t rng = test_rng_seed(t->id);
    for (uint64_t i = 0; i < p->iterations; i++) {
        uint32_t n = 1 + test_rng_below(&rng, PM_MAX_N);
        pm_acquire(&p->s, n, &rng);
        unsigned now = atomic_fetch_add(&p->inside, n) + n;
        ASSERT_LE(now, PM_PERMITS);
        unsigned most = atomic_load_explicit(&p->most_inside, memory_order_relaxed);
        while (now > most && !atomic_compare_exchange_weak(&p->most_inside, &most, now)) {
        }
        if (test_rng_below(&rng, 16) == 0)
            sched_yield();
        atomic_fetch_sub(&p->inside, n);
        ASSERT_EQ(park_sem_release(&p->s, n), 0);
    }
    return NULL;
}

TEST(sem_permits_never_exceeded_with_acquire_n)
{
    struct pm p;
    memset(&p, 0, sizeof p);
    ASSERT_EQ(init_sem(&p.s, PM_PERMITS, PM_PERMITS), 0);
    p.iterations = test_scaled(PM_ITERATIONS);
    struct pm_thread t[PM_THREADS];
    for (unsigned i = 0; i < PM_THREADS; i++)
        t[i] = (struct pm_thread){&p, i};
    test_threads_join(test_threads_start(PM_THREADS, pm_thread_main, t, sizeof t[0]));
    printf("     at most %u of %u permits held at once\n", atomic_load(&p.most_inside), PM_PERMITS);
    ASSERT_EQ(atomic_load(&p.inside), 0);
    ASSERT_EQ(park_sem_count(&p.s), PM_PERMITS);
    ASSERT_EQ(park_sem_destroy(&p.s), 0);
}

/* ---- a large request among a stream of small ones ------------------------------ */

#define LS_SMALL_THREADS 4
#define LS_PERMITS 32
#define LS_ROUNDS 100
#define LS_WORST_LIMIT_NS (1000u * MS) /* generous: timing goals are benchmarks' */

struct ls {
    park_sem_t s;
    atomic_bool stop;
    atomic_uint inside; /* permits held */
};

struct ls_thread {
    struct ls *l;
    unsigned id;
    _Atomic uint64_t acquired;
};

static void ls_enter(struct ls *l, uint32_t n)
{
    unsigned now = atomic_fetch_add(&l->inside, n) + n;
    ASSERT_LE(now, LS_PERMITS);
}

/* One permit at a time, by every form, held for a moment, until told to
 * stop. */
static void *ls_small_main(void *arg)
{
    struct ls_thread *t = arg;
    struct ls *l = t->l;
    uint64_t rng = test_rng_seed(t->id);
    while (!atomic_load_explicit(&l->stop, memory_order_relaxed)) {
        switch (test_rng_below(&rng, 3)) {
        case 0:
            park_sem_acquire(&l->s);
            break;
        case 1:
            while (!park_sem_try_acquire(&l->s))
                sched_yield();
            break;
        default:
            while (!timed_acquire(&l->s, park_deadline_in(US + test_rng_below(&rng, 200 * US)))) {
            }
            break;
        }
        ls_enter(l, 1);
        for (volatile uint32_t k = test_rng_below(&rng, 2000); k > 0; k--) {
        }
        atomic_fetch_sub(&l->inside, 1);
        ASSERT_EQ(park_sem_release(&l->s, 1), 0);
        /* relaxed: a progress count, read to line the test up. */
        atomic_store_explicit(&t->acquired,
                              atomic_load_explicit(&t->acquired, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    }
    return NULL;
}

/* Every permit at once: it needs all the small holders out at the same
 * moment, which a stream of them rarely leaves; FIFO mode and the default
 * mode's gathering for an owed waiter must get it through. It asks once
 * the small ones are streaming, and then every millisecond or so; its
 * waits are reported (worst and median), and only a generous bound is
 * asserted. */
TEST(sem_acquire_many_is_not_starved_by_single_acquirers)
{
    struct ls l;
    memset(&l, 0, sizeof l);
    ASSERT_EQ(init_sem(&l.s, LS_PERMITS, LS_PERMITS), 0);
    struct ls_thread t[LS_SMALL_THREADS];
    for (unsigned i = 0; i < LS_SMALL_THREADS; i++)
        t[i] = (struct ls_thread){.l = &l, .id = i};
    test_threads_t *small = test_threads_start(LS_SMALL_THREADS, ls_small_main, t, sizeof t[0]);
    uint64_t rounds = test_scaled(LS_ROUNDS);
    uint64_t *waits = calloc(rounds, sizeof *waits);
    ASSERT_TRUE(waits != NULL);
    for (unsigned i = 0; i < LS_SMALL_THREADS; i++)
        AWAIT(atomic_load_explicit(&t[i].acquired, memory_order_relaxed) >= 100);
    for (uint64_t i = 0; i < rounds; i++) {
        test_sleep_ns(MS);
        park_time_t t0 = park_now();
        ASSERT_EQ(park_sem_acquire_n(&l.s, LS_PERMITS), 0);
        waits[i] = park_now() - t0;
        ls_enter(&l, LS_PERMITS);
        atomic_fetch_sub(&l.inside, LS_PERMITS);
        ASSERT_EQ(park_sem_release(&l.s, LS_PERMITS), 0);
    }
    atomic_store(&l.stop, true);
    test_threads_join(small);
    qsort(waits, rounds, sizeof *waits, cmp_u64);
    uint64_t median = waits[rounds / 2], worst = waits[rounds - 1];
    printf("     %" PRIu64 " acquisitions of all %u permits: median %.3f ms, worst %.3f ms;"
           " small ones:",
           rounds, LS_PERMITS, median / 1e6, worst / 1e6);
    for (unsigned i = 0; i < LS_SMALL_THREADS; i++)
        printf(" %" PRIu64, atomic_load(&t[i].acquired));
    printf("\n");
    free(waits);
    ASSERT_LT(worst, LS_WORST_LIMIT_NS);
    ASSERT_EQ(atomic_load(&l.inside), 0);
    ASSERT_EQ(park_sem_count(&l.s), LS_PERMITS);
    ASSERT_EQ(park_sem_destroy(&l.s), 0);
}

/* ---- cancelled, dropped and timed-out large tasks racing releases --------------- */

#define CR_MAX_INITIAL 2
#define CR_MAX_RELEASES 4
#define CR_WINDOW_NS (50u * US)

enum { CR_CANCEL, CR_DROP, CR_DEADLINE, CR_ACTIONS };

struct cr {
    park_sem_t s;
    pthread_barrier_t begin, end;
    uint64_t rounds;
    uint32_t releases; /* this round's, set before `begin` */
    park_time_t start;
};

/* The releaser: `releases` single permits at random moments of the window. */
static void *cr_releaser_main(void *arg)
{
    struct cr *c = arg;
    uint64_t rng = test_rng_seed(99);
    for (uint64_t round = 0; round < c->rounds; round++) {
        pthread_barrier_wait(&c->begin);
        for (uint32_t i = 0; i < c->releases; i++) {
            spin_until(c->start + test_rng_below(&rng, CR_WINDOW_NS));
            ASSERT_EQ(park_sem_release(&c->s, 1), 0);
        }
        pthread_barrier_wait(&c->end);
    }
    return NULL;
}

/* Each round a task asks for 2 to 4 permits while 0 to 4 are released one
 * by one, and is cancelled, dropped or timed out at a random moment: the
 * permits it gathered come back, or it was granted all of them (and they
 * are given back by its holder, or by the drop). Either way every permit
 * is in the count at the end: its initial value, plus the releases. */
TEST(sem_large_async_waiters_cancelled_racing_releases_conserve_permits)
{
    struct cr c;
    memset(&c, 0, sizeof c);
    ASSERT_EQ(init_sem(&c.s, 0, CR_MAX_INITIAL + CR_MAX_RELEASES), 0);
    c.rounds = test_scaled(10000);
    ASSERT_EQ(pthread_barrier_init(&c.begin, NULL, 2), 0);
    ASSERT_EQ(pthread_barrier_init(&c.end, NULL, 2), 0);
    park_pool_t *pool = pool_new(1);
    test_threads_t *releaser = test_threads_start(1, cr_releaser_main, &c, 0);
    uint64_t rng = test_rng_seed(7), outcome[CR_ACTIONS][2] = {{0}};
    for (uint64_t round = 0; round < c.rounds; round++) {
        uint32_t initial = test_rng_below(&rng, CR_MAX_INITIAL + 1);
        uint32_t n = 2 + test_rng_below(&rng, 3);
        unsigned action = test_rng_below(&rng, CR_ACTIONS);
        c.releases = test_rng_below(&rng, CR_MAX_RELEASES + 1);
        if (initial)
            ASSERT_EQ(park_sem_release(&c.s, initial), 0);
        c.start = park_now();
        park_time_t at = c.start + test_rng_below(&rng, CR_WINDOW_NS);
        park_task_t *t = action == CR_DEADLINE ? park_sem_acquire_n_async_until(&c.s, n, pool, at)
                                               : park_sem_acquire_n_async(&c.s, n, pool);
        ASSERT_TRUE(t != NULL);
        pthread_barrier_wait(&c.begin);
        spin_until(at);
        bool granted = false;
        switch (action) {
        case CR_CANCEL: {
            int rc = park_task_cancel(t);
            ASSERT_TRUE(rc == 0 || rc == EALREADY);
            int err = park_task_wait(t, NULL);
            ASSERT_EQ(err, rc == 0 ? ECANCELED : 0);
            granted = err == 0;
            park_task_release(t);
            break;
        }
        case CR_DROP:
            /* A grant seen here (or made at once) is ours to release; one
             * made after this look, which nobody saw, goes back by itself. */
            granted = park_task_done(t);
            park_task_release(t);
            break;
        default: {
            int err = park_task_wait(t, NULL);
            ASSERT_TRUE(err == 0 || err == ETIMEDOUT);
            granted = err == 0;
            park_task_release(t);
            break;
        }
        }
        outcome[action][granted]++;
        if (granted)
            ASSERT_EQ(park_sem_release(&c.s, n), 0); /* the holder's */
        pthread_barrier_wait(&c.end);
        ASSERT_EQ(park_sem_count(&c.s), initial + c.releases);
        ASSERT_EQ(park_sem_destroy(&c.s), 0); /* nobody is left queued */
        if (initial + c.releases)
            ASSERT_TRUE(park_sem_try_acquire_n(&c.s, initial + c.releases));
    }
    test_threads_join(releaser);
    park_pool_destroy(pool);
    pthread_barrier_destroy(&c.begin);
    pthread_barrier_destroy(&c.end);
    printf("     %" PRIu64 " races: cancel %" PRIu64 " cancelled, %" PRIu64
           " granted; drop %" PRIu64 "; deadline %" PRIu64 " timed out, %" PRIu64 " granted\n",
           c.rounds, outcome[CR_CANCEL][0], outcome[CR_CANCEL][1],
           outcome[CR_DROP][0] + outcome[CR_DROP][1], outcome[CR_DEADLINE][0],
           outcome[CR_DEADLINE][1]);
    ASSERT_EQ(park_sem_destroy(&c.s), 0);
}

/* ---- a re-acquiring hog does not starve a waiter (default mode) ---------- */

#define HOG_WAITS 200
#define HOG_HOLD_NS (100u * US) /* much longer than a waiter's spin */
#define HOG_CAP_MS 10000u       /* scaled; the hog gives up after this */
#define HOG_CAP_LIMIT_MS 45000u /* stays below the 60 s watchdog */
#define HOG_WORST_LIMIT_NS (1000u * MS)
#define HOG_MEDIAN_LIMIT_NS (10u * MS)

struct hog {
    park_sem_t s;
    atomic_bool stop;
    atomic_bool holding; /* the hog holds the permit */
    atomic_bool capped;  /* the hog gave up at `cap` */
    park_time_t cap;
};

static void *hog_main(void *arg)
{
    struct hog *h = *(struct hog **)arg;
    for (uint64_t rounds = 1; !atomic_load_explicit(&h->stop, memory_order_relaxed); rounds++) {
        park_sem_acquire(&h->s);
        atomic_store_explicit(&h->holding, true, memory_order_relaxed);
        park_time_t until = park_now() + HOG_HOLD_NS;
        while (park_now() < until) {
        }
        atomic_store_explicit(&h->holding, false, memory_order_relaxed);
        ASSERT_EQ(park_sem_release(&h->s, 1), 0);
        if (rounds % 64 == 0 && park_now() >= h->cap) {
            atomic_store(&h->capped, true);
            break;
        }
    }
    return NULL;
}

/* Each of the waiter's acquisitions starts while the hog holds the only
 * permit, and the hog takes it again right after each release: only the
 * hand-off to a waiter that has waited about 1 ms lets the waiter in. */
TEST(sem_reacquiring_hog_does_not_starve_a_waiter)
{
    struct hog h;
    memset(&h, 0, sizeof h);
    ASSERT_EQ(park_sem_init(&h.s, 1, 1), 0);
    uint64_t cap_ms = test_scaled(HOG_CAP_MS);
    h.cap = park_deadline_in((cap_ms < HOG_CAP_LIMIT_MS ? cap_ms : HOG_CAP_LIMIT_MS) * MS);
    struct hog *arg = &h;
    test_threads_t *hog = test_threads_start(1, hog_main, &arg, sizeof arg);
    uint64_t k = test_scaled(HOG_WAITS), done = 0;
    uint64_t *waits = calloc(k, sizeof *waits);
    ASSERT_TRUE(waits != NULL);
    for (; done < k && !atomic_load(&h.capped); done++) {
        while (!atomic_load_explicit(&h.holding, memory_order_relaxed) && !atomic_load(&h.capped))
            sched_yield();
        park_time_t t0 = park_now();
        park_sem_acquire(&h.s);
        waits[done] = park_now() - t0;
        ASSERT_EQ(park_sem_release(&h.s, 1), 0);
    }
    atomic_store(&h.stop, true);
    test_threads_join(hog);
    ASSERT_EQ(done, k); /* the hog was not stopped by its cap first */
    qsort(waits, k, sizeof *waits, cmp_u64);
    uint64_t median = waits[k / 2], worst = waits[k - 1];
    printf("     waits: median %.2f ms, worst %.2f ms\n", median / 1e6, worst / 1e6);
    free(waits);
    /* Without the hand-off the median is tens of milliseconds (the waiter
     * must win a race against a thread that is already running). */
    ASSERT_LT(median, HOG_MEDIAN_LIMIT_NS);
    ASSERT_LT(worst, HOG_WORST_LIMIT_NS);
    ASSERT_EQ(park_sem_count(&h.s), 1);
}

/* ---- releases beyond the maximum: a failed release places nothing ------------- */

/* Workers take a permit (timed; worker 0 by a task, which is always owed a
 * hand-off, so that releases hand permits over), and mostly keep it;
 * releasers add as many permits as the maximum, which fits only into an
 * empty count, so releases race each other and many fail. Every
 * thread keeps its own balance (+ placed, - taken); a release that fails
 * counts nothing, so the final count is the initial one plus every
 * balance only if EOVERFLOW placed no permit (a release that handed one to
 * a waiter and then found the count filled by a racing release must not
 * report failure). */
#define OV_WORKERS 5
#define OV_RELEASERS 2
#define OV_MAX 2
#define OV_ROUNDS 10000

struct ov {
    park_sem_t s;
    park_pool_t *pool;
    uint64_t rounds;
    atomic_uint workers_left;
};

struct ov_thread {
    struct ov *o;
    unsigned id; /* OV_WORKERS and up: the releasers */
    int64_t balance;
    uint64_t failed;
};

static int ov_release(struct ov_thread *t, uint32_t n)
{
    int rc = park_sem_release(&t->o->s, n);
    ASSERT_TRUE(rc == 0 || rc == EOVERFLOW);
    if (rc == 0)
        t->balance += n;
    else
        t->failed++;
    return rc;
}

static void *ov_thread_main(void *arg)
{
    struct ov_thread *t = arg;
    struct ov *o = t->o;
    uint64_t rng = test_rng_seed(t->id);
    if (t->id < OV_WORKERS) {
        for (uint64_t i = 0; i < o->rounds; i++) {
            park_time_t deadline = park_deadline_in(test_rng_below(&rng, 3 * MS));
            if (t->id == 0) {
                park_task_t *task = park_sem_acquire_async_until(&o->s, o->pool, deadline);
                ASSERT_TRUE(task != NULL);
                int err = park_task_wait(task, NULL);
                ASSERT_TRUE(err == 0 || err == ETIMEDOUT);
                park_task_release(task);
                if (err)
                    continue;
            } else if (!timed_acquire(&o->s, deadline)) {
                continue;
            }
            t->balance--;
            if (test_rng_below(&rng, 4) == 0) /* else kept: consumed */
                (void)ov_release(t, 1);
        }
        atomic_fetch_sub(&o->workers_left, 1);
    } else {
        while (atomic_load(&o->workers_left) != 0) {
            (void)ov_release(t, OV_MAX);
            if (test_rng_below(&rng, 2) == 0)
                sched_yield();
        }
    }
    return NULL;
}

TEST(sem_failed_release_beyond_the_maximum_places_no_permit)
{
    struct ov o;
    memset(&o, 0, sizeof o);
    ASSERT_EQ(init_sem(&o.s, 0, OV_MAX), 0);
    o.rounds = test_scaled(OV_ROUNDS);
    o.pool = pool_new(1);
    atomic_store(&o.workers_left, OV_WORKERS);
    struct ov_thread t[OV_WORKERS + OV_RELEASERS];
    memset(t, 0, sizeof t);
    for (unsigned i = 0; i < OV_WORKERS + OV_RELEASERS; i++) {
        t[i].o = &o;
        t[i].id = i;
    }
    test_threads_join(
        test_threads_start(OV_WORKERS + OV_RELEASERS, ov_thread_main, t, sizeof t[0]));
    int64_t balance = 0;
    uint64_t failed = 0;
    for (unsigned i = 0; i < OV_WORKERS + OV_RELEASERS; i++) {
        balance += t[i].balance;
        failed += t[i].failed;
    }
    park_pool_destroy(o.pool);
    printf("     %" PRIu64 " releases failed (EOVERFLOW)\n", failed);
    ASSERT_TRUE(failed > 0); /* the case this test is about happened */
    ASSERT_EQ((int64_t)park_sem_count(&o.s), balance);
    ASSERT_EQ(park_sem_destroy(&o.s), 0);
}

TEST(sem_timed_waiters_get_exactly_the_permits_released_while_they_wait_fifo)
{
    fifo_mode = true;
    sem_timed_waiters_get_exactly_the_permits_released_while_they_wait();
    fifo_mode = false;
}

TEST(sem_timeouts_racing_releases_lose_no_permit_fifo)
{
    fifo_mode = true;
    sem_timeouts_racing_releases_lose_no_permit();
    fifo_mode = false;
}

TEST(sem_binary_semaphore_excludes_like_a_lock_fifo)
{
    fifo_mode = true;
    sem_binary_semaphore_excludes_like_a_lock();
    fifo_mode = false;
}

TEST(sem_permits_never_exceeded_with_batch_release_fifo)
{
    fifo_mode = true;
    sem_permits_never_exceeded_with_batch_release();
    fifo_mode = false;
}

TEST(sem_mixed_blocking_try_and_timed_acquires_conserve_permits_fifo)
{
    fifo_mode = true;
    sem_mixed_blocking_try_and_timed_acquires_conserve_permits();
    fifo_mode = false;
}

TEST(sem_timeouts_of_large_waiters_racing_releases_lose_no_permit)
{
    tr_max_n = 3;
    sem_timeouts_racing_releases_lose_no_permit();
    tr_max_n = 1;
}

TEST(sem_timeouts_of_large_waiters_racing_releases_lose_no_permit_fifo)
{
    fifo_mode = true;
    sem_timeouts_of_large_waiters_racing_releases_lose_no_permit();
    fifo_mode = false;
}

TEST(sem_permits_never_exceeded_with_acquire_n_fifo)
{
    fifo_mode = true;
    sem_permits_never_exceeded_with_acquire_n();
    fifo_mode = false;
}

TEST(sem_acquire_many_is_not_starved_by_single_acquirers_fifo)
{
    fifo_mode = true;
    sem_acquire_many_is_not_starved_by_single_acquirers();
    fifo_mode = false;
}

TEST(sem_failed_release_beyond_the_maximum_places_no_permit_fifo)
{
    fifo_mode = true;
    sem_failed_release_beyond_the_maximum_places_no_permit();
    fifo_mode = false;
}

TEST(sem_large_async_waiters_cancelled_racing_releases_conserve_permits_fifo)
{
    fifo_mode = true;
    sem_large_async_waiters_cancelled_racing_releases_conserve_permits();
    fifo_mode = false;
}

static const test_case_t tests[] = {
    TEST_ENTRY(sem_timed_waiters_get_exactly_the_permits_released_while_they_wait),
    TEST_ENTRY(sem_timeouts_racing_releases_lose_no_permit),
    TEST_ENTRY(sem_binary_semaphore_excludes_like_a_lock),
    TEST_ENTRY(sem_permits_never_exceeded_with_batch_release),
    TEST_ENTRY(sem_mixed_blocking_try_and_timed_acquires_conserve_permits),
    TEST_ENTRY(sem_reacquiring_hog_does_not_starve_a_waiter),
    TEST_ENTRY(sem_failed_release_beyond_the_maximum_places_no_permit),
    TEST_ENTRY(sem_failed_release_beyond_the_maximum_places_no_permit_fifo),
    TEST_ENTRY(sem_timed_waiters_get_exactly_the_permits_released_while_they_wait_fifo),
    TEST_ENTRY(sem_timeouts_racing_releases_lose_no_permit_fifo),
    TEST_ENTRY(sem_binary_semaphore_excludes_like_a_lock_fifo),
    TEST_ENTRY(sem_permits_never_exceeded_with_batch_release_fifo),
    TEST_ENTRY(sem_mixed_blocking_try_and_timed_acquires_conserve_permits_fifo),
    TEST_ENTRY(sem_timeouts_of_large_waiters_racing_releases_lose_no_permit),
    TEST_ENTRY(sem_permits_never_exceeded_with_acquire_n),
    TEST_ENTRY(sem_acquire_many_is_not_starved_by_single_acquirers),
    TEST_ENTRY(sem_large_async_waiters_cancelled_racing_releases_conserve_permits),
    TEST_ENTRY(sem_timeouts_of_large_waiters_racing_releases_lose_no_permit_fifo),
    TEST_ENTRY(sem_permits_never_exceeded_with_acquire_n_fifo),
    TEST_ENTRY(sem_acquire_many_is_not_starved_by_single_acquirers_fifo),
    TEST_ENTRY(sem_large_async_waiters_cancelled_racing_releases_conserve_permits_fifo),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
