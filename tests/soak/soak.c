/* tests/soak/soak.c: every primitive of park at once, for as long as asked,
 * under the fault injection that PARK_FAULT_SEED turns on in PARK_FAULTS
 * builds (the debug, asan and tsan presets). tools/soak runs it; how to run
 * it for hours and repeat a failure: tests/TESTING.md, "Soak".
 *
 *   soak [SECONDS]          (default 10)
 *
 * Each workload is a few threads (and, for "chains", continuations on the
 * shared pool) looping over every way of calling its primitives: blocking,
 * try, timed with deadlines short enough to expire, and asynchronous with
 * the task waited for, cancelled, given a deadline (park_task_cancel_at) or
 * dropped unseen. Each checks its oracle at every step:
 *
 *   mutex      exclusion: plain increments inside, checked and undone; the
 *              holds counted inside equal the holds counted by their takers
 *   sem        permits: what is held (1 to 3 permits at a time, by
 *              park_sem_acquire_n and the rest) never exceeds the 4 of a
 *              default and of a FIFO semaphore; all 4 back at the end
 *   rwlock     a writer finds nobody inside, a reader no writer; the pair a
 *              writer writes is whole for readers; downgrade keeps writers out
 *   cond       a bounded buffer under a mutex and two condition variables:
 *              items in == items out (count and sum)
 *   event      manual: rounds of sets, every waiter passes each round once
 *              (a latch counts them in); auto: the one set is a token, held
 *              by one waiter at a time, never lost, never doubled
 *   lazy       generations fenced by a barrier: initialisers (synchronous,
 *              and asynchronous factories, failing at random) never overlap,
 *              each generation has exactly one successful run and every
 *              caller gets its value; park_once likewise; re-entry gives
 *              EDEADLK; each barrier phase runs its completion once, has one
 *              serial arrival and never mixes with the next
 *   tasks      exactly once: every task function and continuation runs once
 *              with the right result; a complete racing a cancel has one
 *              winner; delays never end early; when_all, when_any, deadlines
 *   forkjoin   park_parallel_for covers its range exactly once; nested
 *              park_join computes what it should
 *   pools      pools made and destroyed with work queued: destroy runs all
 *              of it and cancels armed delays
 *   chan       items received == items sent, per producer (count, sum, sum
 *              of squares), with the channel closed at the end and drained
 *   chans      channels made, closed with tasks waiting, drained, destroyed
 *   chains     asynchronous acquisitions (mutex, both semaphores, read and
 *              write, the auto event) driven only by continuations, under
 *              the same oracles as the threads
 *
 * A workload that makes no progress for 60 s (times
 * PARK_TEST_TIMEOUT_SCALE) fails the run, and so does a shutdown that takes
 * as long. At the end every workload's final invariant is checked, every
 * primitive is destroyed with nobody waiting on it, and nothing leaked:
 *
 *   - RSS (/proc/self/statm), sampled each second: the sample at the end of
 *     the run is at most 1.2 times the one at 20 % of it, plus 8 MiB (runs
 *     under 30 s have no warm-up to compare with, and ThreadSanitizer's own
 *     memory grows all along: skipped there, and said so);
 *   - live objects, counted by the program (task references it holds,
 *     pools and channels it made) and by the library itself, through
 *     wrappers linked around its internal calls (blocks in use for tasks,
 *     continuations and acquisitions: park__block_alloc/free; pools and
 *     channels in its live set: park__live_add/remove): all 0 once
 *     everything is released and destroyed. Their peaks during the run are
 *     printed.
 *
 * Exit status 0 with "soak: PASS"; a failure prints "soak: FAIL" with the
 * workload and what broke, then aborts (a core, or the sanitizer's report). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <park/park.h>

#include "task/task.h" /* white box: park__block_alloc, park__block_free */
#include "wait/lock.h" /* white box: park__live_add, park__live_remove */

#include "test.h" /* the xorshift generator */

#if defined(__SANITIZE_ADDRESS__)
/* AddressSanitizer holds freed memory back in a quarantine, 256 MiB by
 * default, which takes minutes to fill here, and RSS grows with it; a small
 * one fills within seconds, so that RSS after the warm-up measures park.
 * ASAN_OPTIONS still overrides it. Exported (the build hides symbols by
 * default) so that the runtime finds it. */
__attribute__((visibility("default"))) const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "quarantine_size_mb=16";
}
#endif

/* ---- the workloads and their progress ------------------------------------------- */

enum workload {
    W_MUTEX,
    W_SEM,
    W_RWLOCK,
    W_COND,
    W_EVENT,
    W_TOKEN,
    W_LAZY,
    W_TASKS,
    W_FORKJOIN,
    W_POOLS,
    W_CHAN,
    W_CHANS,
    W_CHAINS,
    W_COUNT
};

static const char *const workload_name[W_COUNT] = {
    "mutex", "sem",      "rwlock", "cond", "event", "auto-event", "lazy",
    "tasks", "forkjoin", "pools",  "chan", "chans", "chains",
};

/* Operations completed, per workload: the watchdog's measure of progress. */
static atomic_ulong ops[W_COUNT];

static void op_done(enum workload w)
{
    /* relaxed: a progress count, read only to see it move. */
    atomic_fetch_add_explicit(&ops[w], 1, memory_order_relaxed);
}

static atomic_bool stop;  /* the run is over: workloads finish their step and leave */
static park_pool_t *pool; /* shared by every asynchronous call */
static unsigned seconds = 10;
static const char *seed_text = "unset";

#define FAIL(w, ...) soak_fail((w), __FILE__, __LINE__, __VA_ARGS__)

__attribute__((format(printf, 4, 5))) static _Noreturn void
soak_fail(enum workload w, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "soak: FAIL %s (%s:%d): ", w < W_COUNT ? workload_name[w] : "soak", file, line);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n  repeat: PARK_FAULT_SEED=%s soak %u\n", seed_text, seconds);
    va_end(ap);
    fflush(stderr);
    abort();
}

/* Per-thread randomness (pool workers included), each thread its own stream. */
static uint64_t base_seed = 1;
static atomic_uint rng_threads;
static _Thread_local uint64_t rng;

static uint32_t rnd(uint32_t n)
{
    if (rng == 0)
        rng = (base_seed ^ test_rng_seed(atomic_fetch_add(&rng_threads, 1))) | 1;
    return test_rng_below(&rng, n);
}

static void maybe_yield(uint32_t one_in)
{
    if (rnd(one_in) == 0)
        sched_yield();
}

static void spin(void)
{
    for (volatile uint32_t k = rnd(2000); k > 0; k--) {
    }
}

/* A deadline 0 to 50 us ahead: often passed by the time it is looked at. */
static park_time_t near_deadline(void)
{
    return park_deadline_in(rnd(50000));
}

/* ---- live objects ----------------------------------------------------------------- */

/* Counted by the program. */
static atomic_long task_refs; /* task references held */
static atomic_long pools_made, pools_destroyed, chans_made, chans_destroyed;

/* Counted by the library's own calls, through the linker's --wrap (see
 * tests/soak/CMakeLists.txt): blocks in use, and pools and channels in the
 * library's live sets. */
static atomic_long lib_blocks, lib_live;

void *__real_park__block_alloc(void);
void __real_park__block_free(void *p);
void *__wrap_park__block_alloc(void);
void __wrap_park__block_free(void *p);
void __real_park__live_add(park__live_set_t *set, park__live_t *obj);
bool __real_park__live_remove(park__live_set_t *set, park__live_t *obj);
void __wrap_park__live_add(park__live_set_t *set, park__live_t *obj);
bool __wrap_park__live_remove(park__live_set_t *set, park__live_t *obj);

void *__wrap_park__block_alloc(void)
{
    void *p = __real_park__block_alloc();
    if (p)
        atomic_fetch_add_explicit(&lib_blocks, 1, memory_order_relaxed); /* a count only */
    return p;
}

void __wrap_park__block_free(void *p)
{
    atomic_fetch_sub_explicit(&lib_blocks, 1, memory_order_relaxed); /* a count only */
    __real_park__block_free(p);
}

void __wrap_park__live_add(park__live_set_t *set, park__live_t *obj)
{
    atomic_fetch_add(&lib_live, 1);
    __real_park__live_add(set, obj);
}

bool __wrap_park__live_remove(park__live_set_t *set, park__live_t *obj)
{
    bool was = __real_park__live_remove(set, obj);
    if (was)
        atomic_fetch_sub(&lib_live, 1);
    return was;
}

/* Every task the program gets goes through own() and leaves through drop(). */
static park_task_t *own(enum workload w, park_task_t *t)
{
    if (!t)
        FAIL(w, "a call that returns a task returned NULL (ENOMEM)");
    atomic_fetch_add(&task_refs, 1);
    return t;
}

static void drop(park_task_t *t)
{
    atomic_fetch_sub(&task_refs, 1);
    park_task_release(t);
}

static park_pool_t *pool_make(enum workload w, unsigned threads)
{
    park_pool_t *p = NULL;
    park_pool_config_t cfg = {.threads = threads};
    int err = park_pool_create(&p, &cfg);
    if (err)
        FAIL(w, "park_pool_create: %d", err);
    atomic_fetch_add(&pools_made, 1);
    return p;
}

static void pool_unmake(park_pool_t *p)
{
    park_pool_destroy(p);
    atomic_fetch_add(&pools_destroyed, 1);
}

static park_chan_t *chan_make(enum workload w, size_t capacity)
{
    park_chan_t *ch = NULL;
    int err = park_chan_create(&ch, capacity);
    if (err)
        FAIL(w, "park_chan_create: %d", err);
    atomic_fetch_add(&chans_made, 1);
    return ch;
}

static void chan_unmake(enum workload w, park_chan_t *ch)
{
    int err = park_chan_destroy(ch);
    if (err)
        FAIL(w, "park_chan_destroy of a channel nobody waits on: %d", err);
    atomic_fetch_add(&chans_destroyed, 1);
}

/* ---- settling an asynchronous call -------------------------------------------------- */

/* How a thread settles the task of an asynchronous call. */
enum settle {
    SETTLE_WAIT,      /* wait for it */
    SETTLE_CANCEL,    /* cancel it after a random while, then read it */
    SETTLE_CANCEL_AT, /* arm a near deadline on it, then wait */
    SETTLE_DROP,      /* drop it after a random while, unless already complete */
    SETTLE_KINDS
};

/* settle()'s answer for a task dropped while pending: whatever it was
 * granted meanwhile went back. */
#define DROPPED (-1)

/* Settles t as `how` says and drops it: the error it completed with (0:
 * the call got what it asked for, with its result in *result), or DROPPED.
 * A cancel that returned 0 must have left the task ECANCELED, and one that
 * returned EALREADY must have found it complete otherwise. */
static int settle(enum workload w, park_task_t *t, enum settle how, void **result)
{
    int r, rc;
    switch (how) {
    case SETTLE_WAIT:
        r = park_task_wait(t, result);
        break;
    case SETTLE_CANCEL:
        spin();
        rc = park_task_cancel(t);
        r = park_task_wait(t, result);
        if (rc != 0 && rc != EALREADY)
            FAIL(w, "park_task_cancel returned %d", rc);
        if ((rc == 0) != (r == ECANCELED))
            FAIL(w, "park_task_cancel returned %d, the task completed with %d", rc, r);
        break;
    case SETTLE_CANCEL_AT:
        rc = park_task_cancel_at(t, near_deadline());
        if (rc != 0 && rc != EALREADY)
            FAIL(w, "park_task_cancel_at returned %d", rc);
        r = park_task_wait(t, result);
        break;
    default:
        if (park_task_done(t)) {
            r = park_task_result(t, result);
        } else {
            spin();
            r = DROPPED;
        }
        break;
    }
    drop(t);
    return r;
}

/* An asynchronous acquisition settled at random: true if it holds. */
static bool settle_hold(enum workload w, park_task_t *t)
{
    int r = settle(w, own(w, t), (enum settle)rnd(SETTLE_KINDS), NULL);
    if (r != 0 && r != ECANCELED && r != ETIMEDOUT && r != DROPPED)
        FAIL(w, "an asynchronous acquisition completed with %d", r);
    return r == 0;
}

static bool timed_hold(enum workload w, int r)
{
    if (r != 0 && r != ETIMEDOUT)
        FAIL(w, "a timed acquisition returned %d", r);
    return r == 0;
}

/* ---- threads ---------------------------------------------------------------------- */

#define MAX_THREADS 64

static pthread_t threads[MAX_THREADS];
static unsigned nthreads;

static void spawn(void *(*fn)(void *), void *arg)
{
    if (nthreads == MAX_THREADS || pthread_create(&threads[nthreads], NULL, fn, arg) != 0)
        FAIL(W_COUNT, "cannot start thread %u", nthreads);
    nthreads++;
}

/* ---- mutex -------------------------------------------------------------------------- */

#define MUTEX_THREADS 3

static struct {
    park_mutex_t m;
    volatile unsigned long counter; /* under m: back to 0 outside every hold */
    volatile unsigned long holds;   /* under m */
    atomic_ulong taken;             /* counted by the takers */
} mx;

/* The critical section of every mutex hold; unlocks. */
static void mutex_section(void)
{
    for (int i = 0; i < 10; i++)
        mx.counter++;
    maybe_yield(32);
    if (mx.counter != 10)
        FAIL(W_MUTEX, "exclusion: the counter is %lu inside, not 10", mx.counter);
    mx.counter = 0;
    mx.holds++;
    atomic_fetch_add(&mx.taken, 1);
    park_mutex_unlock(&mx.m);
}

static bool mutex_take(void)
{
    switch (rnd(6)) {
    case 0:
        park_mutex_lock(&mx.m);
        return true;
    case 1:
        return park_mutex_try_lock(&mx.m);
    case 2:
        return timed_hold(W_MUTEX, park_mutex_lock_until(&mx.m, near_deadline()));
    default:
        return settle_hold(W_MUTEX, park_mutex_lock_async(&mx.m, pool));
    }
}

static void *mutex_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        if (mutex_take()) {
            mutex_section();
            op_done(W_MUTEX);
        }
    }
    return NULL;
}

static void mutex_start(void)
{
    park_mutex_init(&mx.m);
    for (int i = 0; i < MUTEX_THREADS; i++)
        spawn(mutex_thread, NULL);
}

static void mutex_check(void)
{
    if (mx.holds != atomic_load(&mx.taken))
        FAIL(W_MUTEX, "%lu holds inside, %lu counted by their takers", mx.holds,
             atomic_load(&mx.taken));
    int err = park_mutex_destroy(&mx.m);
    if (err)
        FAIL(W_MUTEX, "park_mutex_destroy at the end: %d", err);
}

/* ---- semaphores: default and FIFO ------------------------------------------------------- */

#define SEM_THREADS 4
#define SEM_PERMITS 4
#define SEM_MAX_N 3

static struct {
    park_sem_t s[2]; /* default, FIFO */
    atomic_int inside[2];
} sm;

static const char *const sem_kind[2] = {"default", "FIFO"};

/* The critical section of n permits of semaphore k; releases them. */
static void sem_section(int k, uint32_t n)
{
    int in = atomic_fetch_add(&sm.inside[k], (int)n) + (int)n;
    if (in > SEM_PERMITS)
        FAIL(W_SEM, "%s semaphore: %d permits held of %d", sem_kind[k], in, SEM_PERMITS);
    maybe_yield(16);
    atomic_fetch_sub(&sm.inside[k], (int)n);
    int err = park_sem_release(&sm.s[k], n);
    if (err)
        FAIL(W_SEM, "%s semaphore: release of %u held permits: %d", sem_kind[k], n, err);
}

/* Takes permits of semaphore k by a random kind of call: how many (0: none). */
static uint32_t sem_take(int k)
{
    park_sem_t *s = &sm.s[k];
    uint32_t n = 1 + rnd(SEM_MAX_N);
    int err;
    switch (rnd(9)) {
    case 0:
        park_sem_acquire(s);
        return 1;
    case 1:
        return park_sem_try_acquire(s);
    case 2:
        return timed_hold(W_SEM, park_sem_acquire_until(s, near_deadline()));
    case 3:
        if ((err = park_sem_acquire_n(s, n)) != 0)
            FAIL(W_SEM, "park_sem_acquire_n(%u): %d", n, err);
        return n;
    case 4:
        return park_sem_try_acquire_n(s, n) ? n : 0;
    case 5:
        return timed_hold(W_SEM, park_sem_acquire_n_until(s, n, near_deadline())) ? n : 0;
    case 6:
        return settle_hold(W_SEM, park_sem_acquire_async(s, pool));
    case 7:
        return settle_hold(W_SEM, park_sem_acquire_async_until(s, pool, near_deadline()));
    default:
        return settle_hold(W_SEM, rnd(2)
                                      ? park_sem_acquire_n_async(s, n, pool)
                                      : park_sem_acquire_n_async_until(s, n, pool, near_deadline()))
                   ? n
                   : 0;
    }
}

static void *sem_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        int k = (int)rnd(2);
        uint32_t n = sem_take(k);
        if (n) {
            sem_section(k, n);
            op_done(W_SEM);
        }
    }
    return NULL;
}

static void sem_start(void)
{
    if (park_sem_init(&sm.s[0], SEM_PERMITS, SEM_PERMITS) != 0 ||
        park_sem_init_fifo(&sm.s[1], SEM_PERMITS, SEM_PERMITS) != 0)
        FAIL(W_SEM, "park_sem_init failed");
    for (int i = 0; i < SEM_THREADS; i++)
        spawn(sem_thread, NULL);
}

static void sem_check(void)
{
    for (int k = 0; k < 2; k++) {
        uint32_t count = park_sem_count(&sm.s[k]);
        if (count != SEM_PERMITS || atomic_load(&sm.inside[k]) != 0)
            FAIL(W_SEM, "%s semaphore: %u permits free at the end, %d held; expected %d, 0",
                 sem_kind[k], count, atomic_load(&sm.inside[k]), SEM_PERMITS);
        int err = park_sem_destroy(&sm.s[k]);
        if (err)
            FAIL(W_SEM, "%s semaphore: park_sem_destroy at the end: %d", sem_kind[k], err);
    }
}

/* ---- rwlock --------------------------------------------------------------------------- */

#define RWLOCK_THREADS 3

static struct {
    park_rwlock_t rw;
    atomic_int readers, writers;
    volatile unsigned long a, b; /* written by writers (a first), equal outside a write */
} rwl;

/* A read hold's critical section; unlocks. */
static void read_section(void)
{
    atomic_fetch_add(&rwl.readers, 1);
    if (atomic_load(&rwl.writers) != 0)
        FAIL(W_RWLOCK, "a reader inside with a writer");
    unsigned long a = rwl.a;
    maybe_yield(32);
    if (rwl.b != a || rwl.a != a)
        FAIL(W_RWLOCK, "a reader saw a write in progress (%lu, %lu)", a, rwl.b);
    atomic_fetch_sub(&rwl.readers, 1);
    park_rwlock_read_unlock(&rwl.rw);
}

/* A write hold's critical section; unlocks, or downgrades and reads. */
static void write_section(void)
{
    if (atomic_fetch_add(&rwl.writers, 1) != 0 || atomic_load(&rwl.readers) != 0)
        FAIL(W_RWLOCK, "a writer inside with %d readers and another writer",
             atomic_load(&rwl.readers));
    rwl.a++;
    maybe_yield(32);
    rwl.b++;
    atomic_fetch_sub(&rwl.writers, 1);
    if (rnd(4) == 0) {
        park_rwlock_downgrade(&rwl.rw);
        read_section();
    } else {
        park_rwlock_write_unlock(&rwl.rw);
    }
}

static bool read_take(void)
{
    switch (rnd(5)) {
    case 0:
        park_rwlock_read_lock(&rwl.rw);
        return true;
    case 1:
        return park_rwlock_try_read_lock(&rwl.rw);
    case 2:
        return timed_hold(W_RWLOCK, park_rwlock_read_lock_until(&rwl.rw, near_deadline()));
    default:
        return settle_hold(W_RWLOCK, park_rwlock_read_lock_async(&rwl.rw, pool));
    }
}

static bool write_take(void)
{
    switch (rnd(5)) {
    case 0:
        park_rwlock_write_lock(&rwl.rw);
        return true;
    case 1:
        return park_rwlock_try_write_lock(&rwl.rw);
    case 2:
        return timed_hold(W_RWLOCK, park_rwlock_write_lock_until(&rwl.rw, near_deadline()));
    default:
        return settle_hold(W_RWLOCK, park_rwlock_write_lock_async(&rwl.rw, pool));
    }
}

static void *rwlock_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        if (rnd(4) == 0) {
            if (write_take()) {
                write_section();
                op_done(W_RWLOCK);
            }
        } else if (read_take()) {
            read_section();
            op_done(W_RWLOCK);
        }
    }
    return NULL;
}

static void rwlock_start(void)
{
    park_rwlock_init(&rwl.rw);
    for (int i = 0; i < RWLOCK_THREADS; i++)
        spawn(rwlock_thread, NULL);
}

static void rwlock_check(void)
{
    if (rwl.a != rwl.b || atomic_load(&rwl.readers) || atomic_load(&rwl.writers))
        FAIL(W_RWLOCK, "at the end: pair (%lu, %lu), %d readers, %d writers", rwl.a, rwl.b,
             atomic_load(&rwl.readers), atomic_load(&rwl.writers));
    int err = park_rwlock_destroy(&rwl.rw);
    if (err)
        FAIL(W_RWLOCK, "park_rwlock_destroy at the end: %d", err);
}

/* ---- condition variables: a bounded buffer ---------------------------------------------- */

#define COND_PRODUCERS 2
#define COND_CONSUMERS 2
#define COND_SLOTS 4

static struct {
    park_mutex_t m;
    park_cond_t not_full, not_empty;
    /* Under m: */
    uint64_t ring[COND_SLOTS];
    unsigned head, n;
    bool done; /* no more items will come */
    uint64_t in, in_sum, out, out_sum;
} cv;

/* Waits on c with the mutex held, by a blocking or a timed wait. */
static void cond_wait(park_cond_t *c)
{
    if (rnd(2)) {
        park_cond_wait(c, &cv.m);
    } else {
        int err = park_cond_wait_until(c, &cv.m, near_deadline());
        if (err != 0 && err != ETIMEDOUT)
            FAIL(W_COND, "park_cond_wait_until: %d", err);
    }
}

static void cond_wake(park_cond_t *c)
{
    if (rnd(4))
        park_cond_signal(c);
    else
        park_cond_broadcast(c);
}

static void *cond_producer(void *arg)
{
    (void)arg;
    for (uint64_t v = 1; !atomic_load(&stop); v++) {
        park_mutex_lock(&cv.m);
        while (cv.n == COND_SLOTS && !cv.done)
            cond_wait(&cv.not_full);
        if (cv.done) {
            park_mutex_unlock(&cv.m);
            break;
        }
        cv.ring[(cv.head + cv.n++) % COND_SLOTS] = v;
        cv.in++;
        cv.in_sum += v;
        cond_wake(&cv.not_empty);
        park_mutex_unlock(&cv.m);
        op_done(W_COND);
    }
    return NULL;
}

static void *cond_consumer(void *arg)
{
    (void)arg;
    for (;;) {
        park_mutex_lock(&cv.m);
        while (cv.n == 0 && !cv.done)
            cond_wait(&cv.not_empty);
        if (cv.n == 0) { /* done and drained */
            park_mutex_unlock(&cv.m);
            return NULL;
        }
        uint64_t v = cv.ring[cv.head];
        cv.head = (cv.head + 1) % COND_SLOTS;
        cv.n--;
        cv.out++;
        cv.out_sum += v;
        cond_wake(&cv.not_full);
        park_mutex_unlock(&cv.m);
        op_done(W_COND);
    }
}

static void cond_start(void)
{
    park_mutex_init(&cv.m);
    park_cond_init(&cv.not_full);
    park_cond_init(&cv.not_empty);
    for (int i = 0; i < COND_PRODUCERS; i++)
        spawn(cond_producer, NULL);
    for (int i = 0; i < COND_CONSUMERS; i++)
        spawn(cond_consumer, NULL);
}

static void cond_finish(void)
{
    park_mutex_lock(&cv.m);
    cv.done = true;
    park_cond_broadcast(&cv.not_full);
    park_cond_broadcast(&cv.not_empty);
    park_mutex_unlock(&cv.m);
}

static void cond_check(void)
{
    if (cv.in != cv.out || cv.in_sum != cv.out_sum || cv.n != 0)
        FAIL(W_COND,
             "items in %" PRIu64 " (sum %" PRIu64 "), out %" PRIu64 " (sum %" PRIu64 "), %u left",
             cv.in, cv.in_sum, cv.out, cv.out_sum, cv.n);
    int a = park_cond_destroy(&cv.not_full), b = park_cond_destroy(&cv.not_empty),
        c = park_mutex_destroy(&cv.m);
    if (a || b || c)
        FAIL(W_COND, "destroy at the end: cond %d, cond %d, mutex %d", a, b, c);
}

/* ---- events: manual rounds and the auto token ----------------------------------------- */

#define EVENT_WAITERS 3
#define TOKEN_THREADS 3

/* Passes e by a random kind of wait (auto: consumes its set). */
static void event_pass(enum workload w, park_event_t *e)
{
    for (;;) {
        int r;
        switch (rnd(5)) {
        case 0:
            park_event_wait(e);
            return;
        case 1:
            r = park_event_wait_until(e, near_deadline());
            if (timed_hold(w, r))
                return;
            break;
        case 2:
            if (park_event_try_wait(e))
                return;
            sched_yield();
            break;
        case 3:
            if (settle_hold(w, park_event_wait_async(e, pool)))
                return;
            break;
        default:
            if (settle_hold(w, park_event_wait_async_until(e, pool, near_deadline())))
                return;
            break;
        }
    }
}

/* Waits for the latch by a random kind of wait. */
static void latch_pass(enum workload w, park_latch_t *l)
{
    for (;;) {
        switch (rnd(5)) {
        case 0:
            park_latch_wait(l);
            return;
        case 1:
            if (timed_hold(w, park_latch_wait_until(l, park_deadline_in(rnd(200000)))))
                return;
            break;
        case 2:
            if (park_latch_try_wait(l))
                return;
            sched_yield();
            break;
        case 3:
            if (settle_hold(w, park_latch_wait_async(l, pool)))
                return;
            break;
        default:
            if (settle_hold(w, park_latch_wait_async_until(l, pool, near_deadline())))
                return;
            break;
        }
    }
}

/* Manual rounds: round r sets ev[r % 2] (reset in round r - 1, once every
 * waiter had passed it in round r - 2); each waiter passes it once, sees
 * round r, and counts `passed` down; the controller waits for the latch
 * before the next round. A lost wake-up stalls the rounds. */
static struct {
    park_event_t ev[2];
    park_latch_t passed;
    atomic_uint round;
    atomic_bool over;
} er;

static void *event_controller(void *arg)
{
    (void)arg;
    for (unsigned r = 1;; r++) {
        bool over = atomic_load(&stop);
        int err = park_latch_destroy(&er.passed);
        if (err)
            FAIL(W_EVENT, "the latch of round %u: park_latch_destroy %d", r - 1, err);
        park_latch_init(&er.passed, EVENT_WAITERS);
        park_event_reset(&er.ev[(r + 1) % 2]);
        atomic_store(&er.over, over);
        atomic_store(&er.round, r);
        park_event_set(&er.ev[r % 2]);
        if (over)
            return NULL;
        latch_pass(W_EVENT, &er.passed);
        op_done(W_EVENT);
    }
}

static void *event_waiter(void *arg)
{
    (void)arg;
    for (unsigned r = 1;; r++) {
        event_pass(W_EVENT, &er.ev[r % 2]);
        unsigned seen = atomic_load(&er.round);
        if (seen != r)
            FAIL(W_EVENT, "a waiter passed round %u's set during round %u", r, seen);
        if (atomic_load(&er.over))
            return NULL;
        int err = park_latch_count_down(&er.passed, 1);
        if (err)
            FAIL(W_EVENT, "park_latch_count_down: %d", err);
    }
}

/* The auto event's single set is a token: a waiter that passes holds it
 * alone, then sets the event to pass it on. */
static struct {
    park_event_t ev;
    atomic_int holders;
    volatile unsigned long passes;
} tk;

static void token_section(void)
{
    if (atomic_fetch_add(&tk.holders, 1) != 0)
        FAIL(W_TOKEN, "two holders of the auto event's one set");
    tk.passes++;
    maybe_yield(16);
    atomic_fetch_sub(&tk.holders, 1);
    park_event_set(&tk.ev);
}

static void *token_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        event_pass(W_TOKEN, &tk.ev);
        token_section();
        op_done(W_TOKEN);
    }
    return NULL;
}

static void event_start(void)
{
    park_event_init(&er.ev[0], true, false);
    park_event_init(&er.ev[1], true, false);
    park_latch_init(&er.passed, 0);
    park_event_init(&tk.ev, false, true);
    spawn(event_controller, NULL);
    for (int i = 0; i < EVENT_WAITERS; i++)
        spawn(event_waiter, NULL);
    for (int i = 0; i < TOKEN_THREADS; i++)
        spawn(token_thread, NULL);
}

static void event_check(void)
{
    if (!park_event_try_wait(&tk.ev) || park_event_try_wait(&tk.ev))
        FAIL(W_TOKEN, "at the end the auto event does not hold its one set exactly once");
    int a = park_event_destroy(&er.ev[0]), b = park_event_destroy(&er.ev[1]),
        c = park_latch_destroy(&er.passed), d = park_event_destroy(&tk.ev);
    if (a || b || c || d)
        FAIL(W_EVENT, "destroy at the end: events %d %d, latch %d, auto event %d", a, b, c, d);
}

/* ---- lazy, once and barrier: generations ------------------------------------------------ */

#define LAZY_THREADS 3

/* One generation: fresh memory, freed at the end of the next one (the
 * completion that ends a phase still holds the generation it ended). Its
 * asynchronous runs' continuations touch nothing of it once its value is
 * published, also for tasks whose owners stopped waiting (lib/lazy.c,
 * grant_result). */
#define GEN_RETIRED 1

struct gen {
    park_lazy_t lazy;
    park_once_t once;
    atomic_int running, successes;           /* the lazy's initialiser runs */
    atomic_int once_running, once_successes; /* the once's */
};

static struct {
    park_barrier_t bar;
    /* Written by the completion only (the barrier orders the threads' reads). */
    struct gen *cur;
    struct gen *retired[GEN_RETIRED]; /* ended generations, by phase % GEN_RETIRED */
    unsigned phases;
    bool over;
    atomic_uint arrivals, serials;
} gl;

/* One run of an initialiser of g: never two at once, one success at most;
 * fails one time in three with EAGAIN. */
static int gen_run(atomic_int *running, atomic_int *successes)
{
    if (atomic_fetch_add(running, 1) != 0)
        FAIL(W_LAZY, "two initialiser runs at once");
    maybe_yield(4);
    int err = rnd(3) == 0 ? EAGAIN : 0;
    if (err == 0 && atomic_fetch_add(successes, 1) != 0)
        FAIL(W_LAZY, "a second successful run in one generation");
    atomic_fetch_sub(running, 1);
    return err;
}

static int lazy_sync_init(void *arg, void **value)
{
    struct gen *g = arg;
    void *v;
    if (rnd(8) == 0 && park_lazy_get(&g->lazy, &v) != EDEADLK)
        FAIL(W_LAZY, "a get from inside the initialiser did not return EDEADLK");
    *value = g;
    return gen_run(&g->running, &g->successes);
}

static int lazy_task_fn(void *arg, void **result)
{
    struct gen *g = arg;
    *result = g;
    return gen_run(&g->running, &g->successes);
}

static park_task_t *lazy_factory(void *arg, park_pool_t *p)
{
    return park_task_run(p, lazy_task_fn, arg);
}

static int once_fn(void *arg)
{
    struct gen *g = arg;
    if (rnd(8) == 0 && park_once(&g->once, once_fn, g) != EDEADLK)
        FAIL(W_LAZY, "park_once from inside its function did not return EDEADLK");
    return gen_run(&g->once_running, &g->once_successes);
}

/* The barrier's completion: checks the generation that ends, starts the next. */
static void gen_next(void *arg)
{
    (void)arg;
    struct gen *old = gl.cur;
    if (old) {
        if (atomic_load(&old->successes) != 1 || atomic_load(&old->once_successes) != 1)
            FAIL(W_LAZY, "generation %u ended with %d successful lazy runs, %d once runs",
                 gl.phases, atomic_load(&old->successes), atomic_load(&old->once_successes));
        free(gl.retired[gl.phases % GEN_RETIRED]);
        gl.retired[gl.phases % GEN_RETIRED] = old;
        op_done(W_LAZY);
    }
    if (atomic_load(&gl.arrivals) != LAZY_THREADS * (gl.phases + 1) ||
        atomic_load(&gl.serials) != gl.phases)
        FAIL(W_LAZY, "barrier phase %u completed after %u arrivals and %u serial ones", gl.phases,
             atomic_load(&gl.arrivals), atomic_load(&gl.serials));
    gl.phases++;
    gl.over = atomic_load(&stop);
    gl.cur = NULL;
    if (gl.over)
        return;
    struct gen *g = calloc(1, sizeof *g);
    if (!g)
        FAIL(W_LAZY, "out of memory");
    if (gl.phases % 2)
        park_lazy_init(&g->lazy, lazy_sync_init, g);
    else
        park_lazy_init_async(&g->lazy, pool, lazy_factory, g);
    gl.cur = g;
}

/* Gets the value of g's lazy by a random kind of call, retrying failed runs. */
static void lazy_get_value(struct gen *g)
{
    for (;;) {
        void *v = NULL;
        int r;
        switch (rnd(5)) {
        case 0:
            r = park_lazy_get(&g->lazy, &v);
            break;
        case 1:
            r = park_lazy_get_until(&g->lazy, &v, near_deadline());
            break;
        case 2:
            if (!park_lazy_ready(&g->lazy)) {
                sched_yield();
                continue;
            }
            if ((r = park_lazy_get(&g->lazy, &v)) != 0)
                FAIL(W_LAZY, "a ready lazy's get returned %d", r);
            break;
        default:
            r = settle(W_LAZY, own(W_LAZY, park_lazy_get_async(&g->lazy, pool)),
                       (enum settle)rnd(SETTLE_KINDS), &v);
            break;
        }
        if (r == 0) {
            if (v != g)
                FAIL(W_LAZY, "a get returned %p, not the generation's value %p", v, (void *)g);
            return;
        }
        if (r != EAGAIN && r != ETIMEDOUT && r != ECANCELED && r != DROPPED)
            FAIL(W_LAZY, "a get returned %d", r);
    }
}

/* Arrives at the barrier, by a blocking or an asynchronous arrival. */
static void barrier_arrive(void)
{
    atomic_fetch_add(&gl.arrivals, 1);
    int r;
    if (rnd(4) == 0) {
        park_task_t *t = own(W_LAZY, park_barrier_arrive_and_wait_async(&gl.bar, pool));
        void *res = NULL;
        int err = park_task_wait(t, &res);
        drop(t);
        if (err != 0 || (res != NULL && res != (void *)(intptr_t)PARK_BARRIER_SERIAL))
            FAIL(W_LAZY, "an asynchronous arrival completed with %d, %p", err, res);
        r = res ? PARK_BARRIER_SERIAL : 0;
    } else {
        r = park_barrier_arrive_and_wait(&gl.bar);
    }
    if (r == PARK_BARRIER_SERIAL)
        atomic_fetch_add(&gl.serials, 1);
    else if (r != 0)
        FAIL(W_LAZY, "park_barrier_arrive_and_wait returned %d", r);
}

static void *lazy_thread(void *arg)
{
    (void)arg;
    for (unsigned phase = 1;; phase++) {
        barrier_arrive();
        if (gl.phases != phase)
            FAIL(W_LAZY, "a thread of barrier phase %u saw phase %u", phase, gl.phases);
        if (gl.over)
            return NULL;
        struct gen *g = gl.cur;
        lazy_get_value(g);
        int r;
        while ((r = park_once(&g->once, once_fn, g)) != 0)
            if (r != EAGAIN)
                FAIL(W_LAZY, "park_once returned %d", r);
    }
}

static void lazy_start(void)
{
    if (park_barrier_init(&gl.bar, LAZY_THREADS, gen_next, NULL) != 0)
        FAIL(W_LAZY, "park_barrier_init failed");
    for (int i = 0; i < LAZY_THREADS; i++)
        spawn(lazy_thread, NULL);
}

static void lazy_check(void)
{
    if (atomic_load(&gl.serials) != gl.phases)
        FAIL(W_LAZY, "%u barrier phases, %u serial arrivals", gl.phases, atomic_load(&gl.serials));
    int err = park_barrier_destroy(&gl.bar);
    if (err)
        FAIL(W_LAZY, "park_barrier_destroy at the end: %d", err);
}

/* Once the pool is gone, nothing reads the ended generations any more. */
static void lazy_free_retired(void)
{
    for (int i = 0; i < GEN_RETIRED; i++)
        free(gl.retired[i]);
}

/* ---- tasks -------------------------------------------------------------------------- */

#define TASK_THREADS 2
#define TASK_RUNS 4
#define TASK_ERROR EIO

struct rec {
    atomic_int runs, conts;
    int err;
    park_latch_t *conts_done;
};

static int rec_run(void *arg, void **result)
{
    struct rec *r = arg;
    if (atomic_fetch_add(&r->runs, 1) != 0)
        FAIL(W_TASKS, "a task's function ran twice");
    *result = r;
    return r->err;
}

static void rec_cont(park_task_t *done, void *arg)
{
    struct rec *r = arg;
    void *res = NULL;
    int err = park_task_result(done, &res);
    if (atomic_fetch_add(&r->conts, 1) != 0)
        FAIL(W_TASKS, "a continuation ran twice");
    if (err != r->err || res != r || atomic_load(&r->runs) != 1)
        FAIL(W_TASKS, "a continuation found %d, %p; the function returned %d, %p (ran %d times)",
             err, res, r->err, (void *)r, atomic_load(&r->runs));
    park_latch_count_down(r->conts_done, 1);
}

/* A park_task_complete racing a park_task_cancel: one of them wins. */
struct race {
    park_task_t *t;
    atomic_int wins;
    park_latch_t done;
};

static void race_complete(void *arg)
{
    struct race *x = arg;
    spin();
    int rc = park_task_complete(x->t, 0, x);
    if (rc != 0 && rc != EALREADY)
        FAIL(W_TASKS, "park_task_complete returned %d", rc);
    atomic_fetch_add(&x->wins, rc == 0);
    drop(x->t); /* the reference retained for this call */
    park_latch_count_down(&x->done, 1);
}

struct delay {
    park_time_t start;
    uint64_t ns;
    park_latch_t done;
};

static void delay_cont(park_task_t *done, void *arg)
{
    struct delay *d = arg;
    int err = park_task_result(done, NULL);
    if (err != 0 || park_now() < d->start + d->ns)
        FAIL(W_TASKS, "a delay of %" PRIu64 " ns ended with %d after %" PRIu64 " ns", d->ns, err,
             park_now() - d->start);
    park_latch_count_down(&d->done, 1);
}

static void task_round(void)
{
    struct rec recs[TASK_RUNS];
    park_task_t *ts[TASK_RUNS];
    park_latch_t conts_done;
    park_latch_init(&conts_done, TASK_RUNS);
    int want = 0;
    for (int i = 0; i < TASK_RUNS; i++) {
        recs[i] = (struct rec){.err = rnd(4) == 0 ? TASK_ERROR : 0, .conts_done = &conts_done};
        want = want ? want : recs[i].err;
        ts[i] = own(W_TASKS, park_task_run(pool, rec_run, &recs[i]));
        if (park_task_then(ts[i], pool, rec_cont, &recs[i]) != 0)
            FAIL(W_TASKS, "park_task_then failed");
    }
    park_task_t *all = own(W_TASKS, park_task_when_all(pool, ts, TASK_RUNS));

    struct race x = {.t = own(W_TASKS, park_task_new())};
    park_latch_init(&x.done, 1);
    own(W_TASKS, park_task_retain(x.t));
    if (park_pool_submit(pool, race_complete, &x) != 0)
        FAIL(W_TASKS, "park_pool_submit failed");
    spin();
    int rc = park_task_cancel(x.t);
    atomic_fetch_add(&x.wins, rc == 0);

    struct delay d = {.start = park_now(), .ns = rnd(200000)};
    park_latch_init(&d.done, 1);
    park_task_t *dt = own(W_TASKS, park_task_delay(pool, d.ns));
    if (park_task_then(dt, pool, delay_cont, &d) != 0)
        FAIL(W_TASKS, "park_task_then on a delay failed");
    park_task_t *to = own(W_TASKS, park_task_new());
    if ((rc = park_task_cancel_at_on(to, pool, near_deadline())) != 0)
        FAIL(W_TASKS, "park_task_cancel_at_on: %d", rc);
    park_task_t *pair[2] = {to, dt};
    park_task_t *any = own(W_TASKS, park_task_when_any(pool, pair, 2));

    void *res = NULL;
    int err = park_task_wait(all, NULL);
    if (err != want)
        FAIL(W_TASKS, "when_all completed with %d, expected %d", err, want);
    park_latch_wait(&x.done);
    err = park_task_result(x.t, &res);
    if (atomic_load(&x.wins) != 1 || (err == 0) != (res == &x) || (err != 0 && err != ECANCELED))
        FAIL(W_TASKS, "complete against cancel: %d winners, the task has %d, %p",
             atomic_load(&x.wins), err, res);
    if ((err = park_task_wait(any, &res)) != 0 || (uintptr_t)res > 1 ||
        !park_task_done(pair[(uintptr_t)res]))
        FAIL(W_TASKS, "when_any completed with %d, %p", err, res);
    if ((err = park_task_wait(to, NULL)) != ETIMEDOUT)
        FAIL(W_TASKS, "a task given a deadline completed with %d", err);
    latch_pass(W_TASKS, &conts_done);
    park_latch_wait(&d.done);
    for (int i = 0; i < TASK_RUNS; i++) {
        if (atomic_load(&recs[i].runs) != 1 || atomic_load(&recs[i].conts) != 1)
            FAIL(W_TASKS, "a task ran %d times, its continuation %d", atomic_load(&recs[i].runs),
                 atomic_load(&recs[i].conts));
        drop(ts[i]);
    }
    drop(all);
    drop(x.t);
    drop(dt);
    drop(to);
    drop(any);
}

static void *task_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        task_round();
        op_done(W_TASKS);
    }
    return NULL;
}

/* ---- fork-join ------------------------------------------------------------------------ */

#define FJ_RANGE 2048
#define FIB_N 16
#define FIB_VALUE 987

static atomic_uchar covered[FJ_RANGE];

static void cover(size_t lo, size_t hi, void *arg)
{
    (void)arg;
    for (size_t i = lo; i < hi; i++)
        atomic_fetch_add_explicit(&covered[i], 1, memory_order_relaxed); /* read after the join */
}

struct fib {
    unsigned n;
    unsigned long value;
};

static void fib(void *arg)
{
    struct fib *f = arg;
    if (f->n < 2) {
        f->value = f->n;
        return;
    }
    struct fib a = {.n = f->n - 1}, b = {.n = f->n - 2};
    park_join(park_pool_current(), fib, &a, fib, &b);
    f->value = a.value + b.value;
}

static void *forkjoin_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        park_parallel_for(pool, 0, FJ_RANGE, 1 + rnd(64), cover, NULL);
        for (size_t i = 0; i < FJ_RANGE; i++)
            if (atomic_exchange(&covered[i], 0) != 1)
                FAIL(W_FORKJOIN, "park_parallel_for covered index %zu not exactly once", i);
        struct fib f = {.n = FIB_N};
        park_join(pool, fib, &f, NULL, NULL);
        if (f.value != FIB_VALUE)
            FAIL(W_FORKJOIN, "fib(%u) by park_join is %lu", FIB_N, f.value);
        op_done(W_FORKJOIN);
    }
    return NULL;
}

/* ---- pools made and destroyed ------------------------------------------------------------ */

#define POOL_JOBS 64
#define POOL_RANGE 512

static void sum_range(size_t lo, size_t hi, void *arg)
{
    for (size_t i = lo; i < hi; i++)
        atomic_fetch_add((atomic_size_t *)arg, i);
}

static void count_job(void *arg)
{
    atomic_fetch_add((atomic_int *)arg, 1);
}

static int plain_run(void *arg, void **result)
{
    *result = arg;
    return 0;
}

static void count_cont(park_task_t *done, void *arg)
{
    if (park_task_result(done, NULL) != 0)
        FAIL(W_POOLS, "a task of a pool being destroyed failed");
    atomic_fetch_add((atomic_int *)arg, 1);
}

static void pool_round(void)
{
    park_pool_t *p = pool_make(W_POOLS, 1 + rnd(2));
    atomic_int jobs = 0, conts = 0;
    for (int i = 0; i < POOL_JOBS; i++)
        if (park_pool_submit(p, count_job, &jobs) != 0)
            FAIL(W_POOLS, "park_pool_submit failed");
    park_task_t *t = own(W_POOLS, park_task_run(p, plain_run, NULL));
    if (park_task_then(t, p, count_cont, &conts) != 0)
        FAIL(W_POOLS, "park_task_then failed");
    drop(t);
    park_task_t *d = own(W_POOLS, park_task_delay(p, 10 * 1000000000ull));
    atomic_size_t sum = 0;
    park_parallel_for(p, 0, POOL_RANGE, 1 + rnd(16), sum_range, &sum);
    if (atomic_load(&sum) != POOL_RANGE * (POOL_RANGE - 1) / 2)
        FAIL(W_POOLS, "park_parallel_for summed [0, %d) to %zu", POOL_RANGE, atomic_load(&sum));
    pool_unmake(p);
    int err = park_task_result(d, NULL);
    if (atomic_load(&jobs) != POOL_JOBS || atomic_load(&conts) != 1 || err != ECANCELED)
        FAIL(W_POOLS, "destroy ran %d of %d jobs, %d of 1 continuation; a delay ended with %d",
             atomic_load(&jobs), POOL_JOBS, atomic_load(&conts), err);
    drop(d);
}

static void *pool_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        pool_round();
        op_done(W_POOLS);
    }
    return NULL;
}

/* ---- channel: producers and consumers ------------------------------------------------------ */

#define CHAN_PRODUCERS 2
#define CHAN_CONSUMERS 2
#define CHAN_CAPACITY 8
#define ITEM(p, s) ((void *)(uintptr_t)((uint64_t)(p) << 48 | (s)))
#define ITEM_PRODUCER(item) ((unsigned)((uintptr_t)(item) >> 48))
#define ITEM_SEQ(item) ((uint64_t)(uintptr_t)(item) & ((1ull << 48) - 1))

static struct {
    park_chan_t *ch;
    struct {
        uint64_t n, sum, sq; /* the producer's own */
    } sent[CHAN_PRODUCERS];
    struct {
        atomic_uint_fast64_t n, sum, sq;
    } got[CHAN_PRODUCERS];
} cn;

/* Sends item by a random kind of call: 0 (it went in), EAGAIN (it did not:
 * full, timed out or cancelled) or EPIPE (closed). */
static int chan_send_any(void *item)
{
    int r;
    switch (rnd(5)) {
    case 0:
        return park_chan_send(cn.ch, item);
    case 1:
        r = park_chan_try_send(cn.ch, item);
        break;
    case 2:
        r = park_chan_send_until(cn.ch, item, near_deadline());
        break;
    default: /* never dropped: the item's fate must be known */
        r = settle(W_CHAN, own(W_CHAN, park_chan_send_async(cn.ch, pool, item)),
                   (enum settle)rnd(SETTLE_DROP), NULL);
        break;
    }
    if (r == ETIMEDOUT || r == ECANCELED)
        r = EAGAIN;
    if (r != 0 && r != EAGAIN && r != EPIPE)
        FAIL(W_CHAN, "a send returned %d", r);
    return r;
}

/* Receives by a random kind of call: 0 (*item set), EAGAIN (nothing taken) or EPIPE. */
static int chan_recv_any(void **item)
{
    int r;
    switch (rnd(5)) {
    case 0:
        return park_chan_recv(cn.ch, item);
    case 1:
        r = park_chan_try_recv(cn.ch, item);
        if (r == EAGAIN)
            sched_yield();
        break;
    case 2:
        r = park_chan_recv_until(cn.ch, item, near_deadline());
        break;
    default: /* dropped unseen, the item goes back in */
        r = settle(W_CHAN, own(W_CHAN, park_chan_recv_async(cn.ch, pool)),
                   (enum settle)rnd(SETTLE_KINDS), item);
        break;
    }
    if (r == ETIMEDOUT || r == ECANCELED || r == DROPPED)
        r = EAGAIN;
    if (r != 0 && r != EAGAIN && r != EPIPE)
        FAIL(W_CHAN, "a receive returned %d", r);
    return r;
}

static void chan_got(void *item)
{
    unsigned p = ITEM_PRODUCER(item);
    uint64_t s = ITEM_SEQ(item);
    if (p >= CHAN_PRODUCERS)
        FAIL(W_CHAN, "received %p, which nobody sent", item);
    atomic_fetch_add(&cn.got[p].n, 1);
    atomic_fetch_add(&cn.got[p].sum, s);
    atomic_fetch_add(&cn.got[p].sq, s * s);
    op_done(W_CHAN);
}

static void *chan_producer(void *arg)
{
    unsigned p = (unsigned)(uintptr_t)arg;
    uint64_t s = 0;
    while (!atomic_load(&stop)) {
        int r = chan_send_any(ITEM(p, s));
        if (r == EPIPE) { /* closed by chan_finish, after stop */
            if (!atomic_load(&stop))
                FAIL(W_CHAN, "a send found the channel closed before the end");
            break;
        }
        if (r == 0) {
            cn.sent[p].n++;
            cn.sent[p].sum += s;
            cn.sent[p].sq += s * s;
            s++;
        }
    }
    return NULL;
}

static void *chan_consumer(void *arg)
{
    (void)arg;
    for (;;) {
        void *item = NULL;
        int r = chan_recv_any(&item);
        if (r == EPIPE)
            return NULL;
        if (r == 0)
            chan_got(item);
    }
}

static void chan_start(void)
{
    cn.ch = chan_make(W_CHAN, CHAN_CAPACITY);
    for (unsigned p = 0; p < CHAN_PRODUCERS; p++)
        spawn(chan_producer, (void *)(uintptr_t)p);
    for (int i = 0; i < CHAN_CONSUMERS; i++)
        spawn(chan_consumer, NULL);
}

/* ---- channels made, closed with waiters, destroyed --------------------------------------------
 */

static void wait_for(enum workload w, park_task_t *t, int want, void *want_result)
{
    void *res = NULL;
    int err = park_task_wait(t, &res);
    if (err != want || (want == 0 && res != want_result))
        FAIL(w, "a task completed with %d, %p; expected %d, %p", err, res, want, want_result);
    drop(t);
}

/* Two receive tasks wait; one item goes to the first; close ends the second. */
static void chans_round_receivers(void)
{
    park_chan_t *c = chan_make(W_CHANS, 1 + rnd(4));
    park_task_t *a = own(W_CHANS, park_chan_recv_async(c, pool));
    park_task_t *b = own(W_CHANS, park_chan_recv_async(c, pool));
    int err = park_chan_try_send(c, ITEM(0, 7));
    if (err)
        FAIL(W_CHANS, "a try_send to a waiting receiver returned %d", err);
    park_chan_close(c);
    wait_for(W_CHANS, a, 0, ITEM(0, 7));
    wait_for(W_CHANS, b, EPIPE, NULL);
    void *item;
    if ((err = park_chan_send(c, NULL)) != EPIPE || (err = park_chan_try_recv(c, &item)) != EPIPE)
        FAIL(W_CHANS, "a closed, empty channel answered %d", err);
    chan_unmake(W_CHANS, c);
}

/* A full channel with a send task waiting: close fails the send, the items stay. */
static void chans_round_senders(void)
{
    size_t cap = 1 + rnd(4);
    park_chan_t *c = chan_make(W_CHANS, cap);
    for (size_t i = 0; i < cap; i++)
        if (park_chan_try_send(c, ITEM(0, i)) != 0)
            FAIL(W_CHANS, "a try_send into room failed");
    park_task_t *s = own(W_CHANS, park_chan_send_async(c, pool, ITEM(1, 0)));
    park_chan_close(c);
    wait_for(W_CHANS, s, EPIPE, NULL);
    for (size_t i = 0; i < cap; i++) {
        void *item = NULL;
        int err = park_chan_try_recv(c, &item);
        if (err != 0 || item != ITEM(0, i))
            FAIL(W_CHANS, "item %zu of a closed channel: %d, %p", i, err, item);
    }
    void *item;
    int err = park_chan_recv(c, &item);
    if (err != EPIPE)
        FAIL(W_CHANS, "a drained closed channel's recv returned %d", err);
    chan_unmake(W_CHANS, c);
}

static void *chans_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        if (rnd(2))
            chans_round_receivers();
        else
            chans_round_senders();
        op_done(W_CHANS);
    }
    return NULL;
}

static void chan_finish(void)
{
    park_chan_close(cn.ch);
}

static void chan_check(void)
{
    void *item; /* dropped receive tasks may have put items back after the consumers left */
    int r;
    while ((r = park_chan_try_recv(cn.ch, &item)) == 0)
        chan_got(item);
    if (r != EPIPE)
        FAIL(W_CHAN, "the closed channel's try_recv returned %d", r);
    for (unsigned p = 0; p < CHAN_PRODUCERS; p++)
        if (cn.sent[p].n != atomic_load(&cn.got[p].n) ||
            cn.sent[p].sum != atomic_load(&cn.got[p].sum) ||
            cn.sent[p].sq != atomic_load(&cn.got[p].sq))
            FAIL(W_CHAN,
                 "producer %u sent %" PRIu64 " items (sum %" PRIu64 "), %" PRIu64
                 " received (sum %" PRIu64 ")",
                 p, cn.sent[p].n, cn.sent[p].sum, (uint64_t)atomic_load(&cn.got[p].n),
                 (uint64_t)atomic_load(&cn.got[p].sum));
    chan_unmake(W_CHAN, cn.ch);
}

/* ---- chains: asynchronous acquisitions driven by continuations ---------------------------- */

enum chain_kind { CH_MUTEX, CH_SEM, CH_SEM_FIFO, CH_READ, CH_WRITE, CH_TOKEN, CHAIN_KINDS };

struct chain {
    enum chain_kind kind;
    uint32_t n; /* permits asked for (semaphores) */
};

static struct chain chains[CHAIN_KINDS];
static atomic_int chains_live;

static void chain_step(park_task_t *done, void *arg);

/* Starts the chain's next acquisition, or ends the chain once the run is over. */
static void chain_launch(struct chain *c)
{
    if (atomic_load(&stop)) {
        atomic_fetch_sub(&chains_live, 1);
        return;
    }
    bool timed = rnd(2);
    park_time_t deadline = park_deadline_in(rnd(200000));
    park_task_t *t;
    switch (c->kind) {
    case CH_MUTEX:
        t = park_mutex_lock_async(&mx.m, pool);
        break;
    case CH_SEM:
    case CH_SEM_FIFO:
        c->n = 1 + rnd(SEM_MAX_N);
        t = park_sem_acquire_n_async_until(&sm.s[c->kind - CH_SEM], c->n, pool,
                                           timed ? deadline : PARK_FOREVER);
        timed = false;
        break;
    case CH_READ:
        t = park_rwlock_read_lock_async(&rwl.rw, pool);
        break;
    case CH_WRITE:
        t = park_rwlock_write_lock_async(&rwl.rw, pool);
        break;
    default:
        t = park_event_wait_async_until(&tk.ev, pool, timed ? deadline : PARK_FOREVER);
        timed = false;
        break;
    }
    own(W_CHAINS, t);
    int rc;
    if (timed && (rc = park_task_cancel_at(t, deadline)) != 0 && rc != EALREADY)
        FAIL(W_CHAINS, "park_task_cancel_at returned %d", rc);
    if ((rc = park_task_then(t, pool, chain_step, c)) != 0)
        FAIL(W_CHAINS, "park_task_then returned %d", rc);
    drop(t);
}

static void chain_step(park_task_t *done, void *arg)
{
    struct chain *c = arg;
    int err = park_task_result(done, NULL);
    if (err == 0) {
        switch (c->kind) {
        case CH_MUTEX:
            mutex_section();
            break;
        case CH_SEM:
        case CH_SEM_FIFO:
            sem_section(c->kind - CH_SEM, c->n);
            break;
        case CH_READ:
            read_section();
            break;
        case CH_WRITE:
            write_section();
            break;
        default:
            token_section();
            break;
        }
        op_done(W_CHAINS);
    } else if (err != ETIMEDOUT) {
        FAIL(W_CHAINS, "chain %d: an acquisition completed with %d", (int)c->kind, err);
    }
    chain_launch(c);
}

static void chains_start(void)
{
    atomic_store(&chains_live, CHAIN_KINDS);
    for (int k = 0; k < CHAIN_KINDS; k++) {
        chains[k].kind = (enum chain_kind)k;
        chain_launch(&chains[k]);
    }
}

/* ---- the run ------------------------------------------------------------------------------ */

static void start_all(void)
{
    mutex_start();
    sem_start();
    rwlock_start();
    cond_start();
    event_start();
    lazy_start();
    for (int i = 0; i < TASK_THREADS; i++)
        spawn(task_thread, NULL);
    spawn(forkjoin_thread, NULL);
    spawn(pool_thread, NULL);
    chan_start();
    spawn(chans_thread, NULL);
    chains_start();
}

static size_t rss_bytes(void)
{
    unsigned long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        FAIL(W_COUNT, "cannot open /proc/self/statm");
    if (fscanf(f, "%lu %lu", &size, &resident) != 2)
        FAIL(W_COUNT, "cannot read /proc/self/statm");
    fclose(f);
    return resident * (size_t)sysconf(_SC_PAGESIZE);
}

static double mib(size_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0);
}

static double timeout_scale(void)
{
    const char *s = getenv("PARK_TEST_TIMEOUT_SCALE");
    double x = s ? strtod(s, NULL) : 1.0;
    return x > 0 ? x : 1.0;
}

static void sleep_until(uint64_t t_ns)
{
    struct timespec ts = {.tv_sec = (time_t)(t_ns / 1000000000u),
                          .tv_nsec = (long)(t_ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static void print_ops(FILE *out)
{
    for (int w = 0; w < W_COUNT; w++)
        fprintf(out, "%s %s %lu", w ? "," : "", workload_name[w], atomic_load(&ops[w]));
    fprintf(out, "\n");
}

/* The shutdown watchdog: fails a shutdown that takes longer than `limit_s`. */
static atomic_bool shut_down;
static atomic_int shutdown_step;
static const char *const shutdown_steps[] = {"finishing the workloads", "joining the threads",
                                             "waiting for the chains"};

static void *shutdown_watchdog(void *arg)
{
    uint64_t limit_ns = *(uint64_t *)arg, give_up = test_now_ns() + limit_ns;
    while (!atomic_load(&shut_down)) {
        if (test_now_ns() > give_up) {
            fprintf(stderr, "soak: ops:");
            print_ops(stderr);
            FAIL(W_COUNT, "shutdown stalled for %.0f s while %s", (double)limit_ns / 1e9,
                 shutdown_steps[atomic_load(&shutdown_step)]);
        }
        test_sleep_ns(100000000u);
    }
    return NULL;
}

/* The run itself: samples RSS and the live counts each second, fails a
 * workload that stops making progress, prints a status line now and then.
 * Returns the RSS samples (rss[t] at second t) in *rss. */
static void run_for(size_t *rss, long *peak_blocks, long *peak_refs)
{
    uint64_t start = test_now_ns();
    unsigned stall_s = (unsigned)(60.0 * timeout_scale());
    unsigned status_every = seconds / 10 < 10 ? 10 : seconds / 10 > 60 ? 60 : seconds / 10;
    unsigned long last[W_COUNT] = {0};
    unsigned moved[W_COUNT] = {0};
    rss[0] = rss_bytes();
    for (unsigned t = 1; t <= seconds; t++) {
        sleep_until(start + (uint64_t)t * 1000000000u);
        rss[t] = rss_bytes();
        long b = atomic_load(&lib_blocks), r = atomic_load(&task_refs);
        *peak_blocks = b > *peak_blocks ? b : *peak_blocks;
        *peak_refs = r > *peak_refs ? r : *peak_refs;
        for (int w = 0; w < W_COUNT; w++) {
            unsigned long now = atomic_load(&ops[w]);
            if (now != last[w]) {
                last[w] = now;
                moved[w] = t;
            } else if (t - moved[w] >= stall_s) {
                fprintf(stderr, "soak: ops:");
                print_ops(stderr);
                FAIL((enum workload)w, "no progress for %u s (at %u s of %u)", t - moved[w], t,
                     seconds);
            }
        }
        if (t % status_every == 0 && t < seconds) {
            printf("soak: %u/%u s: rss %.1f MiB, %ld blocks, %ld task refs, %ld pools, %ld "
                   "channels live\n",
                   t, seconds, mib(rss[t]), b, r,
                   atomic_load(&pools_made) - atomic_load(&pools_destroyed),
                   atomic_load(&chans_made) - atomic_load(&chans_destroyed));
            fflush(stdout);
        }
    }
}

static void shut_down_all(void)
{
    uint64_t limit_ns = (uint64_t)(60e9 * timeout_scale());
    pthread_t dog;
    if (pthread_create(&dog, NULL, shutdown_watchdog, &limit_ns) != 0)
        FAIL(W_COUNT, "cannot start the shutdown watchdog");
    atomic_store(&stop, true);
    cond_finish();
    chan_finish();
    atomic_store(&shutdown_step, 1);
    for (unsigned i = 0; i < nthreads; i++)
        pthread_join(threads[i], NULL);
    atomic_store(&shutdown_step, 2);
    while (atomic_load(&chains_live) != 0)
        test_sleep_ns(1000000u);
    atomic_store(&shut_down, true);
    pthread_join(dog, NULL);
}

#if defined(__SANITIZE_THREAD__)
#define SOAK_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SOAK_TSAN 1
#endif
#endif

/* RSS at the end of the run against RSS at 20 % of it. */
static void check_rss(const size_t *rss)
{
#ifdef SOAK_TSAN
    /* ThreadSanitizer's own memory grows all along (about 0.1 MiB a second
     * here, also with the program's RSS flat in the other builds). */
    printf("soak: rss %.1f MiB at the start, %.1f MiB at the end; not checked under "
           "ThreadSanitizer, whose own memory keeps growing\n",
           mib(rss[0]), mib(rss[seconds]));
    return;
#endif
    if (seconds < 30) {
        printf("soak: rss %.1f MiB at the start, %.1f MiB at the end; not checked (a run under "
               "30 s has no warm-up to compare with)\n",
               mib(rss[0]), mib(rss[seconds]));
        return;
    }
    unsigned warm = (seconds + 4) / 5;
    size_t limit = rss[warm] + rss[warm] / 5 + ((size_t)8 << 20), peak = 0;
    for (unsigned t = 0; t <= seconds; t++)
        peak = rss[t] > peak ? rss[t] : peak;
    printf("soak: rss %.1f MiB at %u s (20 %%), %.1f MiB at the end (limit %.1f), peak %.1f\n",
           mib(rss[warm]), warm, mib(rss[seconds]), mib(limit), mib(peak));
    if (rss[seconds] > limit)
        FAIL(W_COUNT, "RSS grew from %.1f MiB at %u s to %.1f MiB at %u s (limit %.1f MiB)",
             mib(rss[warm]), warm, mib(rss[seconds]), seconds, mib(limit));
}

static void check_live(long peak_blocks, long peak_refs)
{
    long refs = atomic_load(&task_refs), blocks = atomic_load(&lib_blocks),
         live = atomic_load(&lib_live),
         pools = atomic_load(&pools_made) - atomic_load(&pools_destroyed),
         chans = atomic_load(&chans_made) - atomic_load(&chans_destroyed);
    printf("soak: %ld pools and %ld channels made; peaks: %ld blocks, %ld task refs; live at the "
           "end: %ld task refs, %ld pools, %ld channels (program), %ld blocks, %ld pools and "
           "channels (library)\n",
           atomic_load(&pools_made), atomic_load(&chans_made), peak_blocks, peak_refs, refs, pools,
           chans, blocks, live);
    if (refs || pools || chans || blocks || live)
        FAIL(W_COUNT,
             "leaked: %ld task refs, %ld pools, %ld channels, %ld blocks, %ld live "
             "pools and channels",
             refs, pools, chans, blocks, live);
}

int main(int argc, char **argv)
{
    if (argc > 2 ||
        (argc == 2 && (strspn(argv[1], "0123456789") != strlen(argv[1]) || atoi(argv[1]) <= 0))) {
        fprintf(stderr, "usage: soak [SECONDS]   (default 10; PARK_FAULT_SEED picks the faults)\n");
        return 2;
    }
    if (argc == 2)
        seconds = (unsigned)atoi(argv[1]);
    const char *s = getenv("PARK_FAULT_SEED");
    if (s && *s) {
        seed_text = s;
        base_seed = strtoull(s, NULL, 0) | 1;
    }
#ifdef PARK_FAULTS
    const char *faults = s && strtoull(s, NULL, 0) ? "fault injection on" : "fault injection off";
#else
    const char *faults = "fault injection not compiled in";
#endif
    size_t *rss = calloc(seconds + 1, sizeof *rss);
    if (!rss)
        FAIL(W_COUNT, "out of memory");

    pool = pool_make(W_COUNT, 3);
    start_all();
    printf("soak: %u s, PARK_FAULT_SEED=%s (%s), %u threads and a pool of 3\n", seconds, seed_text,
           faults, nthreads);
    fflush(stdout);
    long peak_blocks = 0, peak_refs = 0;
    run_for(rss, &peak_blocks, &peak_refs);
    shut_down_all();

    printf("soak: ops:");
    print_ops(stdout);
    mutex_check();
    sem_check();
    rwlock_check();
    cond_check();
    event_check();
    lazy_check();
    chan_check();
    for (int w = 0; w < W_COUNT; w++)
        if (atomic_load(&ops[w]) == 0)
            FAIL((enum workload)w, "no operation completed in %u s", seconds);
    check_rss(rss);
    pool_unmake(pool);
    lazy_free_retired();
    check_live(peak_blocks, peak_refs);
    free(rss);
    printf("soak: PASS (%u s, PARK_FAULT_SEED=%s)\n", seconds, seed_text);
    return 0;
}
