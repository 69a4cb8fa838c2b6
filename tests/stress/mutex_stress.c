/* tests/stress/mutex_stress.c: park_mutex under many threads.
 *
 * Oracles (tests/TESTING.md): mutual exclusion checked by plain increments
 * inside the critical section, progress of every thread, destruction-safe
 * unlock (the next owner frees the mutex's memory at once) and bounded
 * unfairness against a thread that re-locks in a loop. Every loop is bounded
 * by an iteration count (scaled by PARK_STRESS_SCALE) and by the harness
 * watchdog; nothing asserts on elapsed milliseconds except the generous
 * one-second bound on the worst fairness wait. */
#include <park/park.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test.h"
#include "wait/wait.h" /* white box: park__wait_has_waiters */

/* Yields until a waiter is queued on m (it is blocked in lock, not
 * spinning). Bounded by the watchdog: whoever we wait for must block, since
 * the caller holds m. */
static void wait_until_queued(park_mutex_t *m)
{
    while (!park__wait_has_waiters(m))
        sched_yield();
}

/* ---- mutual exclusion with lock, try_lock and lock_until mixed --------- */

#define EXCL_MAX_THREADS 16
#define EXCL_INCREMENTS 10
#define EXCL_YIELD_ONE_IN 32
#define EXCL_LONG_HOLD_ONE_IN 5000

/* A failed try_lock and a timed-out lock_until leave no waiter behind, so
 * the 1 ms hand-off that bounds a parked waiter's wait does not protect a
 * thread that only retries them: the contract lets the others keep it out
 * while they keep the mutex busy (with TSan on 2 cores a try_lock loop can
 * fail 10^5 times in a row). After these many failures the thread
 * falls back to lock, so every thread's progress rests on documented
 * behaviour. */
#define EXCL_TRY_LOCK_RETRIES 1000
#define EXCL_LOCK_UNTIL_RETRIES 50

enum { MODE_LOCK, MODE_TRY_LOCK, MODE_LOCK_UNTIL, MODE_COUNT };

struct excl {
    park_mutex_t m;
    pthread_barrier_t start;
    uint64_t target; /* acquisitions to make, all threads together */
    /* Guarded by m. `inside` is the oracle: plain read-modify-writes that
     * lose updates (and that TSan reports) if two threads are inside. */
    volatile unsigned inside;
    uint64_t acquired;
    unsigned starved; /* threads that have not had the mutex yet */
};

struct excl_thread {
    struct excl *x;
    uint64_t rng;
    uint64_t acquired;
    uint64_t timeouts;  /* lock_until gave ETIMEDOUT */
    uint64_t busy;      /* try_lock gave false */
    uint64_t fallbacks; /* retries exhausted: locked with lock */
    uint64_t long_holds;
};

static void excl_acquire(struct excl_thread *t, unsigned mode)
{
    park_mutex_t *m = &t->x->m;
    switch (mode) {
    case MODE_LOCK:
        park_mutex_lock(m);
        return;
    case MODE_TRY_LOCK:
        for (int i = 0; i < EXCL_TRY_LOCK_RETRIES; i++) {
            if (park_mutex_try_lock(m))
                return;
            t->busy++;
            sched_yield();
        }
        break;
    default:
        for (int i = 0; i < EXCL_LOCK_UNTIL_RETRIES; i++) {
            /* Short deadlines, now and then one already passed (a free
             * mutex must still be taken then). */
            park_time_t deadline = test_rng_below(&t->rng, 8) == 0
                                       ? park_now() - 1
                                       : park_deadline_in(US + test_rng_below(&t->rng, 300 * US));
            int rc = park_mutex_lock_until(m, deadline);
            if (rc == 0)
                return;
            ASSERT_EQ(rc, ETIMEDOUT);
            ASSERT_GE(park_now(), deadline); /* never early */
            t->timeouts++;
        }
        break;
    }
    t->fallbacks++;
    park_mutex_lock(m);
}

/* The critical section: false once the run is over (nothing done then).
 *
 * The run ends at the target, but not before every thread has had the
 * mutex: on a loaded machine one thread may make a whole short run within
 * one time slice while the others wait for a CPU, which says nothing about
 * the mutex. A thread that the mutex starves keeps the others going until
 * the watchdog fails the test. */
static bool excl_critical_section(struct excl_thread *t)
{
    struct excl *x = t->x;
    ASSERT_EQ(x->inside, 0);
    if (x->acquired >= x->target && x->starved == 0)
        return false;
    for (int i = 0; i < EXCL_INCREMENTS; i++)
        x->inside++;
    if (test_rng_below(&t->rng, EXCL_YIELD_ONE_IN) == 0)
        sched_yield();
    if (test_rng_below(&t->rng, EXCL_LONG_HOLD_ONE_IN) == 0) {
        /* The holder may be preempted for milliseconds. */
        test_sleep_ns(2 * MS + test_rng_below(&t->rng, 3 * MS + 1));
        t->long_holds++;
    }
    ASSERT_EQ(x->inside, EXCL_INCREMENTS);
    for (int i = 0; i < EXCL_INCREMENTS; i++)
        x->inside--;
    x->acquired++;
    if (t->acquired++ == 0)
        x->starved--;
    return true;
}

static void *excl_thread_main(void *arg)
{
    struct excl_thread *t = arg;
    pthread_barrier_wait(&t->x->start);
    for (;;) {
        excl_acquire(t, test_rng_below(&t->rng, MODE_COUNT));
        bool more = excl_critical_section(t);
        park_mutex_unlock(&t->x->m);
        if (!more)
            return NULL;
    }
}

static void excl_run(unsigned nthreads, uint64_t target)
{
    struct excl x;
    memset(&x, 0, sizeof x);
    park_mutex_init(&x.m);
    x.target = test_scaled(target);
    x.starved = nthreads;
    ASSERT_EQ(pthread_barrier_init(&x.start, NULL, nthreads), 0);

    struct excl_thread t[EXCL_MAX_THREADS];
    ASSERT_LE(nthreads, EXCL_MAX_THREADS);
    memset(t, 0, sizeof t);
    for (unsigned i = 0; i < nthreads; i++) {
        t[i].x = &x;
        t[i].rng = test_rng_seed(i);
    }
    test_threads_join(test_threads_start(nthreads, excl_thread_main, t, sizeof t[0]));
    pthread_barrier_destroy(&x.start);

    uint64_t sum = 0, min = UINT64_MAX, max = 0, timeouts = 0, busy = 0, fallbacks = 0;
    uint64_t long_holds = 0;
    for (unsigned i = 0; i < nthreads; i++) {
        sum += t[i].acquired;
        min = t[i].acquired < min ? t[i].acquired : min;
        max = t[i].acquired > max ? t[i].acquired : max;
        timeouts += t[i].timeouts;
        busy += t[i].busy;
        fallbacks += t[i].fallbacks;
        long_holds += t[i].long_holds;
    }
    printf("     %2u threads: %" PRIu64 " acquisitions, per thread min %" PRIu64 " max %" PRIu64
           "%s; %" PRIu64 " lock_until timeouts, %" PRIu64 " failed try_locks, %" PRIu64
           " fallbacks to lock, %" PRIu64 " long holds\n",
           nthreads, sum, min, max, max / 2 > min ? " (max/2 > min: unfair)" : "", timeouts, busy,
           fallbacks, long_holds);
    ASSERT_EQ(x.inside, 0);
    ASSERT_EQ(sum, x.acquired);
    ASSERT_GE(x.acquired, x.target);
    ASSERT_EQ(x.starved, 0);
    ASSERT_GT(min, 0);
    ASSERT_EQ(park_mutex_destroy(&x.m), 0);
}

/* Sizes: each run takes 0.2 to 2 s with TSan on 2 cores. */
TEST(mutex_lock_try_lock_lock_until_exclude_each_other_at_2_threads)
{
    excl_run(2, 100000);
}

TEST(mutex_lock_try_lock_lock_until_exclude_each_other_at_4_threads)
{
    excl_run(4, 100000);
}

TEST(mutex_lock_try_lock_lock_until_exclude_each_other_at_16_threads)
{
    excl_run(16, 100000);
}

/* ---- unlock-then-free ---------------------------------------------------- */

/* The mutex alone in memory that the next owner gives back at once. On an
 * unmapped page a touch by the previous owner's unlock faults (SIGSEGV in
 * every build); on the heap ASan reports it as a use after free, and TSan
 * as a race with free. */
typedef struct free_kind {
    void *(*alloc)(size_t size);
    void (*release)(void *p, size_t size);
} free_kind_t;

static void *page_alloc(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_TRUE(p != MAP_FAILED);
    return p;
}

static void page_release(void *p, size_t size)
{
    ASSERT_EQ(munmap(p, size), 0);
}

static void *heap_alloc(size_t size)
{
    void *p = malloc(size);
    ASSERT_TRUE(p != NULL);
    return p;
}

static void heap_release(void *p, size_t size)
{
    (void)size;
    free(p);
}

static const free_kind_t pages = {page_alloc, page_release};
static const free_kind_t heap = {heap_alloc, heap_release};

static size_t page_size(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

struct free_race {
    const free_kind_t *kind;
    size_t size;
    uint64_t iterations;
    _Atomic(park_mutex_t *) handoff; /* the next mutex for the next owner */
};

/* B: takes each mutex as it is published, and on getting it unlocks and
 * frees it at once, while A may still be inside its unlock. */
static void *free_race_next_owner(void *arg)
{
    struct free_race *r = arg;
    for (uint64_t i = 0; i < r->iterations; i++) {
        park_mutex_t *m;
        while ((m = atomic_exchange(&r->handoff, NULL)) == NULL)
            sched_yield();
        park_mutex_lock(m);
        park_mutex_unlock(m);
        ASSERT_EQ(park_mutex_destroy(m), 0);
        r->kind->release(m, r->size);
    }
    return NULL;
}

static void free_race_run(const free_kind_t *kind, size_t size, uint64_t iterations)
{
    struct free_race r = {kind, size, test_scaled(iterations), NULL};
    uint64_t queued = 0;
    test_threads_t *b = test_threads_start(1, free_race_next_owner, &r, sizeof r);
    for (uint64_t i = 0; i < r.iterations; i++) {
        park_mutex_t *m = kind->alloc(size);
        park_mutex_init(m);
        park_mutex_lock(m);
        while (atomic_load(&r.handoff) != NULL)
            sched_yield();
        atomic_store(&r.handoff, m);
        /* Mostly unlock with B parked (the slow unlock that wakes it); now
         * and then at once, with B spinning or not yet there. */
        if (i % 4 != 0) {
            wait_until_queued(m);
            queued++;
        }
        park_mutex_unlock(m); /* B may free m before this returns */
    }
    test_threads_join(b);
    printf("     %" PRIu64 " hand-overs, %" PRIu64 " to a parked next owner\n", r.iterations,
           queued);
}

TEST(mutex_next_owner_may_unmap_the_mutex_at_once)
{
    free_race_run(&pages, page_size(), 3000);
}

TEST(mutex_next_owner_may_free_the_mutex_at_once)
{
    free_race_run(&heap, sizeof(park_mutex_t), 3000);
}

/* Several owners queue behind A; the last of them to get the mutex frees
 * its page while the earlier ones may still be inside their unlocks. */
#define QUEUE_OWNERS 3

struct queue_page {
    park_mutex_t m;
    unsigned owners; /* guarded by m: how many have had it */
};

struct queue_race {
    uint64_t iterations;
    _Atomic(struct queue_page *) page;
    atomic_uint_fast64_t generation; /* the iteration `page` belongs to */
    atomic_uint fetched;             /* owners that have read `page` */
    atomic_uint finished;            /* owners done with this iteration */
};

static void *queue_race_owner(void *arg)
{
    struct queue_race *r = *(struct queue_race **)arg;
    for (uint64_t g = 1; g <= r->iterations; g++) {
        while (atomic_load(&r->generation) != g)
            sched_yield();
        struct queue_page *p = atomic_load(&r->page);
        atomic_fetch_add(&r->fetched, 1);
        park_mutex_lock(&p->m);
        bool last = ++p->owners == QUEUE_OWNERS;
        park_mutex_unlock(&p->m);
        if (last) {
            ASSERT_EQ(park_mutex_destroy(&p->m), 0);
            page_release(p, page_size());
        }
        atomic_fetch_add(&r->finished, 1);
    }
    return NULL;
}

TEST(mutex_last_of_queued_owners_may_unmap_the_mutex_at_once)
{
    struct queue_race r = {.iterations = test_scaled(1500)};
    struct queue_race *args[QUEUE_OWNERS];
    for (unsigned i = 0; i < QUEUE_OWNERS; i++)
        args[i] = &r;
    atomic_init(&r.page, NULL);
    test_threads_t *owners =
        test_threads_start(QUEUE_OWNERS, queue_race_owner, args, sizeof args[0]);
    for (uint64_t g = 1; g <= r.iterations; g++) {
        struct queue_page *p = page_alloc(page_size());
        park_mutex_init(&p->m);
        p->owners = 0;
        park_mutex_lock(&p->m);
        atomic_store(&r.fetched, 0);
        atomic_store(&r.finished, 0);
        atomic_store(&r.page, p);
        atomic_store(&r.generation, g);
        while (atomic_load(&r.fetched) != QUEUE_OWNERS)
            sched_yield();
        if (g % 4 != 0) {
            wait_until_queued(&p->m);
            for (unsigned i = 0; i < QUEUE_OWNERS; i++)
                sched_yield(); /* let the others queue too */
        }
        park_mutex_unlock(&p->m);
        while (atomic_load(&r.finished) != QUEUE_OWNERS)
            sched_yield();
    }
    test_threads_join(owners);
}

/* ---- a re-locking hog does not starve a waiter --------------------------- */

#define HOG_WAITS 200
/* The hog's critical section: short, but much longer than a waiter's
 * bounded spin before it parks (lib/mutex.c, lib/wait), so the waiter has to
 * park and rely on the hand-off; 100 us as in Go issue 13086. The longer the
 * hold, the fewer chances per second a waiter has to win a race it is not
 * handed, so the more a starving mutex shows. */
#define HOG_HOLD_NS (100u * US)
#define HOG_SPINS 10000u        /* loads of `holding` before the waiter yields */
#define HOG_CAP_MS 10000u       /* scaled; the hog gives up after this */
#define HOG_CAP_LIMIT_MS 45000u /* stays below the 60 s watchdog */
#define HOG_WORST_LIMIT_NS (1000u * MS)

struct hog {
    park_mutex_t m;
    atomic_bool stop;
    atomic_bool holding;    /* the hog is inside its critical section */
    atomic_bool capped;     /* the hog gave up at `cap` */
    park_time_t cap;        /* the hog stops here even if the waiter is not done */
    uint64_t rounds;        /* written by the hog, read after join */
    volatile uint64_t work; /* guarded by m */
};

static void *hog_main(void *arg)
{
    struct hog *h = arg;
    while (!atomic_load_explicit(&h->stop, memory_order_relaxed)) {
        park_mutex_lock(&h->m);
        atomic_store_explicit(&h->holding, true, memory_order_relaxed);
        h->work++;
        park_time_t until = park_now() + HOG_HOLD_NS;
        while (park_now() < until) {
        }
        atomic_store_explicit(&h->holding, false, memory_order_relaxed);
        park_mutex_unlock(&h->m);
        if (++h->rounds % 64 == 0 && park_now() >= h->cap) {
            atomic_store(&h->capped, true);
            break;
        }
    }
    return NULL;
}

/* Returns once the hog holds the mutex (or has given up). Spins first: a
 * yield on a loaded machine may give the CPU away for milliseconds; yields
 * after, in case the hog is waiting for this CPU. */
static void wait_for_hold(struct hog *h)
{
    for (unsigned spins = 0; !atomic_load_explicit(&h->holding, memory_order_relaxed); spins++) {
        if (atomic_load(&h->capped))
            return;
        if (spins >= HOG_SPINS)
            sched_yield();
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Each of the waiter's lock calls starts while the hog holds the mutex, so
 * every one of them depends on how an unlock treats a waiting thread. */
TEST(mutex_relocking_hog_does_not_starve_a_waiter)
{
    struct hog h;
    memset(&h, 0, sizeof h);
    park_mutex_init(&h.m);
    uint64_t cap_ms = test_scaled(HOG_CAP_MS);
    h.cap = park_deadline_in((cap_ms < HOG_CAP_LIMIT_MS ? cap_ms : HOG_CAP_LIMIT_MS) * MS);
    size_t k = (size_t)test_scaled(HOG_WAITS);
    uint64_t *waits = calloc(k, sizeof *waits);
    ASSERT_TRUE(waits != NULL);

    test_threads_t *hog = test_threads_start(1, hog_main, &h, sizeof h);
    for (size_t i = 0; i < k; i++) {
        wait_for_hold(&h);
        park_time_t t0 = park_now();
        park_mutex_lock(&h.m);
        waits[i] = park_now() - t0;
        h.work++;
        park_mutex_unlock(&h.m);
    }
    atomic_store(&h.stop, true);
    test_threads_join(hog);

    qsort(waits, k, sizeof *waits, cmp_u64);
    size_t over_1ms = 0;
    while (over_1ms < k && waits[k - 1 - over_1ms] > MS)
        over_1ms++;
    printf("     %zu waits against %" PRIu64 " hog rounds: median %" PRIu64 " us, worst %" PRIu64
           " us, %zu over 1 ms\n",
           k, h.rounds, waits[k / 2] / US, waits[k - 1] / US, over_1ms);
    /* Capped: the waiter only finished once the hog gave up. */
    ASSERT_FALSE(atomic_load(&h.capped));
    ASSERT_EQ(h.work, h.rounds + k);
    ASSERT_LT(waits[k - 1], HOG_WORST_LIMIT_NS);
    free(waits);
    ASSERT_EQ(park_mutex_destroy(&h.m), 0);
}

static const test_case_t tests[] = {
    TEST_ENTRY(mutex_lock_try_lock_lock_until_exclude_each_other_at_2_threads),
    TEST_ENTRY(mutex_lock_try_lock_lock_until_exclude_each_other_at_4_threads),
    TEST_ENTRY(mutex_lock_try_lock_lock_until_exclude_each_other_at_16_threads),
    TEST_ENTRY(mutex_next_owner_may_unmap_the_mutex_at_once),
    TEST_ENTRY(mutex_next_owner_may_free_the_mutex_at_once),
    TEST_ENTRY(mutex_last_of_queued_owners_may_unmap_the_mutex_at_once),
    TEST_ENTRY(mutex_relocking_hog_does_not_starve_a_waiter),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
