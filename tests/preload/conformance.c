/* tests/preload/conformance.c: the pthread behaviour programs rely on.
 *
 * Plain pthread and semaphore calls, no park: ctest runs this binary twice,
 * against glibc (preload_conformance.glibc) and under libpark-preload.so
 * (preload_conformance.park), so the drop-in is held to glibc's behaviour.
 * PARK_CONFORMANCE_PRELOAD=1 (set by the second run) adds the checks that
 * only hold under the preload (which definition a binding reaches). */
#include "test.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ----------------------------------------------------------- */

static struct timespec ts_in(clockid_t clock, int64_t ns)
{
    struct timespec t;
    clock_gettime(clock, &t);
    int64_t total = (int64_t)t.tv_nsec + ns;
    t.tv_sec += total / 1000000000;
    t.tv_nsec = total % 1000000000;
    if (t.tv_nsec < 0) {
        t.tv_nsec += 1000000000;
        t.tv_sec--;
    }
    return t;
}

static int64_t ns_since(clockid_t clock, const struct timespec *t)
{
    struct timespec now;
    clock_gettime(clock, &now);
    return (int64_t)(now.tv_sec - t->tv_sec) * 1000000000 + (now.tv_nsec - t->tv_nsec);
}

static const struct timespec past = {0, 0};
static const struct timespec bad_nsec = {0, 1000000000};

static pthread_t spawn(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, fn, arg), 0);
    return t;
}

static void *join(pthread_t t)
{
    void *r;
    ASSERT_EQ(pthread_join(t, &r), 0);
    return r;
}

static void mutex_init_type(pthread_mutex_t *m, int type)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, type);
    ASSERT_EQ(pthread_mutex_init(m, &a), 0);
    pthread_mutexattr_destroy(&a);
}

/* ---- mutex ------------------------------------------------------------- */

TEST(mutex_static_initializers_lock_and_unlock)
{
    pthread_mutex_t ms[] = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
                            PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP,
                            PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP};
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
        ASSERT_EQ(pthread_mutex_lock(&ms[i]), 0);
        ASSERT_EQ(pthread_mutex_trylock(&ms[i]), i == 1 ? 0 : EBUSY);
        if (i == 1)
            ASSERT_EQ(pthread_mutex_unlock(&ms[i]), 0);
        ASSERT_EQ(pthread_mutex_unlock(&ms[i]), 0);
        ASSERT_EQ(pthread_mutex_destroy(&ms[i]), 0);
    }
}

TEST(mutex_zeroed_memory_is_an_unlocked_mutex)
{
    pthread_mutex_t *m = calloc(1, sizeof *m);
    ASSERT_EQ(pthread_mutex_lock(m), 0);
    ASSERT_EQ(pthread_mutex_trylock(m), EBUSY);
    ASSERT_EQ(pthread_mutex_unlock(m), 0);
    free(m);
}

TEST(mutex_errorcheck_relock_is_edeadlk)
{
    pthread_mutex_t m;
    mutex_init_type(&m, PTHREAD_MUTEX_ERRORCHECK);
    ASSERT_EQ(pthread_mutex_lock(&m), 0);
    ASSERT_EQ(pthread_mutex_lock(&m), EDEADLK);
    ASSERT_EQ(pthread_mutex_timedlock(&m, &past), EDEADLK);
    ASSERT_EQ(pthread_mutex_trylock(&m), EBUSY);
    ASSERT_EQ(pthread_mutex_unlock(&m), 0);
    ASSERT_EQ(pthread_mutex_destroy(&m), 0);
}

TEST(mutex_errorcheck_unlock_of_unlocked_is_eperm)
{
    pthread_mutex_t m;
    mutex_init_type(&m, PTHREAD_MUTEX_ERRORCHECK);
    ASSERT_EQ(pthread_mutex_unlock(&m), EPERM);
    ASSERT_EQ(pthread_mutex_lock(&m), 0);
    ASSERT_EQ(pthread_mutex_unlock(&m), 0);
    ASSERT_EQ(pthread_mutex_unlock(&m), EPERM);
}

static void *unlock_other(void *m)
{
    return (void *)(intptr_t)pthread_mutex_unlock(m);
}

TEST(mutex_errorcheck_and_recursive_unlock_by_non_owner_is_eperm)
{
    int types[] = {PTHREAD_MUTEX_ERRORCHECK, PTHREAD_MUTEX_RECURSIVE};
    for (int i = 0; i < 2; i++) {
        pthread_mutex_t m;
        mutex_init_type(&m, types[i]);
        ASSERT_EQ(pthread_mutex_lock(&m), 0);
        ASSERT_EQ((intptr_t)join(spawn(unlock_other, &m)), EPERM);
        ASSERT_EQ(pthread_mutex_unlock(&m), 0);
        ASSERT_EQ(pthread_mutex_destroy(&m), 0);
    }
}

static void *trylock_result(void *m)
{
    int r = pthread_mutex_trylock(m);
    if (r == 0)
        pthread_mutex_unlock(m);
    return (void *)(intptr_t)r;
}

TEST(mutex_recursive_counts_holds)
{
    pthread_mutex_t m;
    mutex_init_type(&m, PTHREAD_MUTEX_RECURSIVE);
    ASSERT_EQ(pthread_mutex_lock(&m), 0);
    ASSERT_EQ(pthread_mutex_trylock(&m), 0);
    ASSERT_EQ(pthread_mutex_timedlock(&m, &past), 0);
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ((intptr_t)join(spawn(trylock_result, &m)), EBUSY);
        ASSERT_EQ(pthread_mutex_unlock(&m), 0);
    }
    ASSERT_EQ((intptr_t)join(spawn(trylock_result, &m)), 0);
    ASSERT_EQ(pthread_mutex_unlock(&m), EPERM);
    ASSERT_EQ(pthread_mutex_destroy(&m), 0);
}

TEST(mutex_trylock_of_held_is_ebusy)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    ASSERT_EQ(pthread_mutex_lock(&m), 0);
    ASSERT_EQ((intptr_t)join(spawn(trylock_result, &m)), EBUSY);
    ASSERT_EQ(pthread_mutex_unlock(&m), 0);
    ASSERT_EQ((intptr_t)join(spawn(trylock_result, &m)), 0);
}

TEST(mutex_destroy_of_locked_is_ebusy)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    ASSERT_EQ(pthread_mutex_lock(&m), 0);
    ASSERT_EQ(pthread_mutex_destroy(&m), EBUSY);
    ASSERT_EQ(pthread_mutex_unlock(&m), 0);
    ASSERT_EQ(pthread_mutex_destroy(&m), 0);
}

struct timed_arg {
    pthread_mutex_t *m;
    clockid_t clock;
    int64_t ns;
    int result;
    int64_t late;
};

static void *timedlock_in(void *p)
{
    struct timed_arg *a = p;
    struct timespec at = ts_in(a->clock, a->ns);
    a->result = a->clock == CLOCK_REALTIME ? pthread_mutex_timedlock(a->m, &at)
                                           : pthread_mutex_clocklock(a->m, a->clock, &at);
    a->late = ns_since(a->clock, &at);
    if (a->result == 0)
        pthread_mutex_unlock(a->m);
    return NULL;
}

TEST(mutex_timedlock_of_held_times_out_never_early_on_both_clocks)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    ASSERT_EQ(pthread_mutex_lock(&m), 0);
    clockid_t clocks[] = {CLOCK_REALTIME, CLOCK_MONOTONIC};
    int64_t waits[] = {-1000000000, 0, 20 * MS};
    for (int c = 0; c < 2; c++)
        for (int w = 0; w < 3; w++) {
            struct timed_arg a = {&m, clocks[c], waits[w], -1, 0};
            join(spawn(timedlock_in, &a));
            ASSERT_EQ(a.result, ETIMEDOUT);
            ASSERT_GE(a.late, 0);
            ASSERT_LT(a.late, (int64_t)LATE_NS);
        }
    ASSERT_EQ(pthread_mutex_unlock(&m), 0);
}

TEST(mutex_timedlock_of_free_with_past_deadline_succeeds)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    ASSERT_EQ(pthread_mutex_timedlock(&m, &past), 0);
    ASSERT_EQ(pthread_mutex_unlock(&m), 0);
    ASSERT_EQ(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &past), 0);
    ASSERT_EQ(pthread_mutex_unlock(&m), 0);
}

TEST(mutex_timedlock_gets_the_lock_released_in_time)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    ASSERT_EQ(pthread_mutex_lock(&m), 0);
    struct timed_arg a = {&m, CLOCK_MONOTONIC, 10000 * (int64_t)MS, -1, 0};
    pthread_t t = spawn(timedlock_in, &a);
    test_sleep_ns(20 * MS);
    ASSERT_EQ(pthread_mutex_unlock(&m), 0);
    join(t);
    ASSERT_EQ(a.result, 0);
}

static void *timedlock_far(void *p)
{
    struct timed_arg *a = p;
    /* The year 2603: its ns since the epoch do not fit in 64 bits (wrapped,
     * they would be a time in 2019, long past on CLOCK_REALTIME). */
    struct timespec at = {.tv_sec = 20000000000, .tv_nsec = 0};
    a->result = a->clock == CLOCK_REALTIME ? pthread_mutex_timedlock(a->m, &at)
                                           : pthread_mutex_clocklock(a->m, a->clock, &at);
    if (a->result == 0)
        pthread_mutex_unlock(a->m);
    return NULL;
}

TEST(mutex_timedlock_with_a_deadline_past_64_bit_ns_waits_for_the_unlock)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    clockid_t clocks[] = {CLOCK_REALTIME, CLOCK_MONOTONIC};
    for (int c = 0; c < 2; c++) {
        ASSERT_EQ(pthread_mutex_lock(&m), 0);
        struct timed_arg a = {&m, clocks[c], 0, -1, 0};
        pthread_t t = spawn(timedlock_far, &a);
        test_sleep_ns(20 * MS);
        ASSERT_EQ(pthread_mutex_unlock(&m), 0);
        join(t);
        ASSERT_EQ(a.result, 0);
    }
}

TEST(mutex_clocklock_with_bad_clock_is_einval)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    struct timespec at = ts_in(CLOCK_MONOTONIC, 0);
    ASSERT_EQ(pthread_mutex_clocklock(&m, CLOCK_PROCESS_CPUTIME_ID, &at), EINVAL);
    ASSERT_EQ(pthread_mutex_trylock(&m), 0); /* not taken by the failed call */
    ASSERT_EQ(pthread_mutex_unlock(&m), 0);
}

struct bad_ts_arg {
    pthread_mutex_t *m;
    int result;
};

static void *timedlock_bad(void *p)
{
    struct bad_ts_arg *a = p;
    a->result = pthread_mutex_timedlock(a->m, &bad_nsec);
    return NULL;
}

TEST(mutex_timedlock_with_bad_nsec_must_wait_is_einval)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    ASSERT_EQ(pthread_mutex_lock(&m), 0);
    struct bad_ts_arg a = {&m, -1};
    join(spawn(timedlock_bad, &a));
    ASSERT_EQ(a.result, EINVAL);
    ASSERT_EQ(pthread_mutex_unlock(&m), 0);
}

static void *die_holding(void *m)
{
    pthread_mutex_lock(m);
    return NULL;
}

TEST(mutex_robust_passes_through_and_reports_owner_death)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_t m;
    ASSERT_EQ(pthread_mutex_init(&m, &a), 0);
    join(spawn(die_holding, &m));
    ASSERT_EQ(pthread_mutex_lock(&m), EOWNERDEAD);
    ASSERT_EQ(pthread_mutex_consistent(&m), 0);
    ASSERT_EQ(pthread_mutex_unlock(&m), 0);
    ASSERT_EQ(pthread_mutex_destroy(&m), 0);
}

TEST(mutex_pi_and_pshared_kinds_lock_and_unlock)
{
    for (int k = 0; k < 3; k++) {
        pthread_mutexattr_t a;
        pthread_mutexattr_init(&a);
        if (k == 0)
            pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
        else if (k == 1)
            pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
        else
            pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK),
                pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
        pthread_mutex_t m;
        ASSERT_EQ(pthread_mutex_init(&m, &a), 0);
        ASSERT_EQ(pthread_mutex_lock(&m), 0);
        ASSERT_EQ((intptr_t)join(spawn(trylock_result, &m)), EBUSY);
        ASSERT_EQ(pthread_mutex_unlock(&m), 0);
        ASSERT_EQ(pthread_mutex_timedlock(&m, &past), 0);
        ASSERT_EQ(pthread_mutex_unlock(&m), 0);
        ASSERT_EQ(pthread_mutex_destroy(&m), 0);
        pthread_mutexattr_destroy(&a);
    }
}

/* A thread unlocks and at once destroys and frees a mutex another thread
 * was waiting for: POSIX allows destroying an unlocked mutex. */
struct handoff {
    pthread_mutex_t m;
    atomic_int waiting;
};

static void *lock_unlock_destroy_free(void *p)
{
    struct handoff *h = p;
    atomic_store(&h->waiting, 1);
    pthread_mutex_lock(&h->m);
    pthread_mutex_unlock(&h->m);
    pthread_mutex_destroy(&h->m);
    free(h);
    return NULL;
}

TEST(mutex_destroy_and_free_right_after_unlock)
{
    for (int i = 0; i < 200; i++) {
        struct handoff *h = calloc(1, sizeof *h);
        pthread_mutex_init(&h->m, NULL);
        pthread_mutex_lock(&h->m);
        pthread_t t = spawn(lock_unlock_destroy_free, h);
        while (!atomic_load(&h->waiting))
            sched_yield();
        if (i & 1)
            test_sleep_ns(100 * US);
        pthread_mutex_unlock(&h->m); /* h may be freed from here on */
        join(t);
    }
}

/* ---- condition variable --------------------------------------------------- */

/* Producer/consumer: every item is consumed exactly once, in order, and a
 * signal always reaches a waiting consumer (no lost wake-up). */
#define PC_ITEMS 20000
struct pc {
    pthread_mutex_t m;
    pthread_cond_t not_empty, not_full;
    int buf[4];
    int head, count, done;
    long sum;
    int next_expected;
    int order_ok;
};

static void *pc_consumer(void *p)
{
    struct pc *q = p;
    for (;;) {
        pthread_mutex_lock(&q->m);
        while (q->count == 0 && !q->done)
            pthread_cond_wait(&q->not_empty, &q->m);
        if (q->count == 0) {
            pthread_mutex_unlock(&q->m);
            return NULL;
        }
        int v = q->buf[q->head];
        q->head = (q->head + 1) % 4;
        q->count--;
        if (v != q->next_expected)
            q->order_ok = 0;
        q->next_expected++;
        q->sum += v;
        pthread_cond_signal(&q->not_full);
        pthread_mutex_unlock(&q->m);
    }
}

TEST(cond_signal_producer_consumer_exact)
{
    struct pc q = {.m = PTHREAD_MUTEX_INITIALIZER,
                   .not_empty = PTHREAD_COND_INITIALIZER,
                   .not_full = PTHREAD_COND_INITIALIZER};
    q.order_ok = 1;
    pthread_t c = spawn(pc_consumer, &q);
    for (int i = 0; i < PC_ITEMS; i++) {
        pthread_mutex_lock(&q.m);
        while (q.count == 4)
            pthread_cond_wait(&q.not_full, &q.m);
        q.buf[(q.head + q.count) % 4] = i;
        q.count++;
        pthread_cond_signal(&q.not_empty);
        pthread_mutex_unlock(&q.m);
    }
    pthread_mutex_lock(&q.m);
    q.done = 1;
    pthread_cond_signal(&q.not_empty);
    pthread_mutex_unlock(&q.m);
    join(c);
    ASSERT_EQ(q.order_ok, 1);
    ASSERT_EQ(q.sum, (long)PC_ITEMS * (PC_ITEMS - 1) / 2);
}

struct gate {
    pthread_mutex_t m;
    pthread_cond_t c;
    int waiting, woken, open;
    unsigned generation;
};

static void *gate_wait(void *p)
{
    struct gate *g = p;
    pthread_mutex_lock(&g->m);
    unsigned gen = g->generation;
    g->waiting++;
    while (g->generation == gen)
        pthread_cond_wait(&g->c, &g->m);
    g->woken++;
    pthread_mutex_unlock(&g->m);
    return NULL;
}

static void gate_await_waiting(struct gate *g, int n)
{
    for (;;) {
        pthread_mutex_lock(&g->m);
        int w = g->waiting;
        pthread_mutex_unlock(&g->m);
        if (w >= n)
            return;
        test_sleep_ns(200 * US);
    }
}

TEST(cond_signal_wakes_exactly_those_it_must)
{
    struct gate g = {.m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER};
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        t[i] = spawn(gate_wait, &g);
    gate_await_waiting(&g, 4);
    /* Each signal with a changed predicate lets at least one out. */
    for (int k = 0; k < 4; k++) {
        pthread_mutex_lock(&g.m);
        int before = g.woken;
        pthread_mutex_unlock(&g.m);
        pthread_mutex_lock(&g.m);
        g.generation++;
        pthread_cond_signal(&g.c);
        pthread_mutex_unlock(&g.m);
        AWAIT(__atomic_load_n(&g.woken, __ATOMIC_SEQ_CST) > before ||
              __atomic_load_n(&g.woken, __ATOMIC_SEQ_CST) == 4);
    }
    for (int i = 0; i < 4; i++)
        join(t[i]);
    ASSERT_EQ(g.woken, 4);
}

TEST(cond_broadcast_wakes_every_waiter)
{
    struct gate g = {.m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER};
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        t[i] = spawn(gate_wait, &g);
    gate_await_waiting(&g, 8);
    pthread_mutex_lock(&g.m);
    g.generation++;
    pthread_cond_broadcast(&g.c);
    pthread_mutex_unlock(&g.m);
    for (int i = 0; i < 8; i++)
        join(t[i]);
    ASSERT_EQ(g.woken, 8);
}

TEST(cond_signal_and_broadcast_without_waiters_do_nothing)
{
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    ASSERT_EQ(pthread_cond_signal(&c), 0);
    ASSERT_EQ(pthread_cond_broadcast(&c), 0);
    ASSERT_EQ(pthread_cond_destroy(&c), 0);
}

static void cond_timed_case(pthread_cond_t *c, clockid_t clock, bool use_clockwait)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    int64_t waits[] = {-1000000000, 0, 20 * MS};
    for (int w = 0; w < 3; w++) {
        ASSERT_EQ(pthread_mutex_lock(&m), 0);
        struct timespec at = ts_in(clock, waits[w]);
        int r = use_clockwait ? pthread_cond_clockwait(c, &m, clock, &at)
                              : pthread_cond_timedwait(c, &m, &at);
        ASSERT_EQ(r, ETIMEDOUT);
        int64_t late = ns_since(clock, &at);
        ASSERT_GE(late, 0);
        ASSERT_LT(late, (int64_t)LATE_NS);
        ASSERT_EQ(pthread_mutex_trylock(&m), EBUSY); /* held again */
        ASSERT_EQ(pthread_mutex_unlock(&m), 0);
    }
    ASSERT_EQ(pthread_mutex_lock(&m), 0);
    ASSERT_EQ(use_clockwait ? pthread_cond_clockwait(c, &m, clock, &past)
                            : pthread_cond_timedwait(c, &m, &past),
              ETIMEDOUT);
    ASSERT_EQ(pthread_mutex_unlock(&m), 0);
}

TEST(cond_timedwait_times_out_never_early_on_both_clocks)
{
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    cond_timed_case(&c, CLOCK_REALTIME, false);
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    ASSERT_EQ(pthread_condattr_setclock(&a, CLOCK_MONOTONIC), 0);
    pthread_cond_t mono;
    ASSERT_EQ(pthread_cond_init(&mono, &a), 0);
    cond_timed_case(&mono, CLOCK_MONOTONIC, false);
    ASSERT_EQ(pthread_cond_destroy(&mono), 0);
    pthread_cond_t any = PTHREAD_COND_INITIALIZER;
    cond_timed_case(&any, CLOCK_MONOTONIC, true);
    cond_timed_case(&any, CLOCK_REALTIME, true);
}

TEST(cond_timedwait_with_bad_arguments_is_einval)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    ASSERT_EQ(pthread_mutex_lock(&m), 0);
    ASSERT_EQ(pthread_cond_timedwait(&c, &m, &bad_nsec), EINVAL);
    struct timespec at = ts_in(CLOCK_MONOTONIC, 0);
    ASSERT_EQ(pthread_cond_clockwait(&c, &m, CLOCK_PROCESS_CPUTIME_ID, &at), EINVAL);
    ASSERT_EQ(pthread_mutex_trylock(&m), EBUSY);
    ASSERT_EQ(pthread_mutex_unlock(&m), 0);
}

struct signal_later {
    struct gate *g;
    int64_t after;
};

static void *open_gate_later(void *p)
{
    struct signal_later *s = p;
    test_sleep_ns((uint64_t)s->after);
    pthread_mutex_lock(&s->g->m);
    s->g->open = 1;
    pthread_cond_signal(&s->g->c);
    pthread_mutex_unlock(&s->g->m);
    return NULL;
}

TEST(cond_timedwait_wakes_on_signal_before_the_deadline)
{
    struct gate g = {.m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER};
    struct signal_later s = {&g, 20 * MS};
    pthread_t t = spawn(open_gate_later, &s);
    struct timespec at = ts_in(CLOCK_REALTIME, 10000 * (int64_t)MS);
    pthread_mutex_lock(&g.m);
    int r = 0;
    while (!g.open && r == 0)
        r = pthread_cond_timedwait(&g.c, &g.m, &at);
    pthread_mutex_unlock(&g.m);
    join(t);
    ASSERT_EQ(r, 0);
    ASSERT_EQ(g.open, 1);
}

TEST(cond_wait_with_errorcheck_mutex_not_held_is_eperm)
{
    pthread_mutex_t m;
    mutex_init_type(&m, PTHREAD_MUTEX_ERRORCHECK);
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    ASSERT_EQ(pthread_cond_wait(&c, &m), EPERM);
    ASSERT_EQ(pthread_cond_timedwait(&c, &m, &past), EPERM);
}

TEST(cond_wait_with_recursive_mutex_held_once)
{
    pthread_mutex_t m;
    mutex_init_type(&m, PTHREAD_MUTEX_RECURSIVE);
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    ASSERT_EQ(pthread_mutex_lock(&m), 0);
    ASSERT_EQ(pthread_cond_timedwait(&c, &m, &past), ETIMEDOUT);
    ASSERT_EQ(pthread_mutex_unlock(&m), 0);
    ASSERT_EQ(pthread_mutex_unlock(&m), EPERM);
}

struct cancel_arg {
    pthread_mutex_t m;
    pthread_cond_t c;
    atomic_int waiting;
    int held_in_cleanup;
};

static void cancel_cleanup(void *p)
{
    struct cancel_arg *a = p;
    /* The mutex is the cancelled waiter's again: trylock from here fails. */
    a->held_in_cleanup = pthread_mutex_trylock(&a->m) == EBUSY;
    pthread_mutex_unlock(&a->m);
}

static void *wait_to_be_cancelled(void *p)
{
    struct cancel_arg *a = p;
    pthread_mutex_lock(&a->m);
    pthread_cleanup_push(cancel_cleanup, a);
    atomic_store(&a->waiting, 1);
    for (;;)
        pthread_cond_wait(&a->c, &a->m);
    pthread_cleanup_pop(0);
    return NULL;
}

TEST(cond_wait_is_a_cancellation_point_and_relocks_before_cleanup)
{
    struct cancel_arg a = {.m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER};
    pthread_t t = spawn(wait_to_be_cancelled, &a);
    while (!atomic_load(&a.waiting))
        test_sleep_ns(100 * US);
    test_sleep_ns(10 * MS);
    ASSERT_EQ(pthread_cancel(t), 0);
    ASSERT_TRUE(join(t) == PTHREAD_CANCELED);
    ASSERT_EQ(a.held_in_cleanup, 1);
    /* The cond still works for others: no lost queue entry. */
    ASSERT_EQ(pthread_mutex_lock(&a.m), 0);
    ASSERT_EQ(pthread_cond_timedwait(&a.c, &a.m, &past), ETIMEDOUT);
    ASSERT_EQ(pthread_mutex_unlock(&a.m), 0);
    ASSERT_EQ(pthread_cond_destroy(&a.c), 0);
}

/* A waiter cancelled while a signal picks it passes the signal on: it
 * consumes none that another waiter could take (POSIX). The cancellation
 * and the signal race; either order must wake the second waiter. */
struct signal_race {
    pthread_mutex_t m;
    pthread_cond_t c;
    atomic_int waiting;
    int second;
};

static void unlock_on_cancel(void *m)
{
    pthread_mutex_unlock(m);
}

static void *wait_until_cancelled(void *p)
{
    struct signal_race *r = p;
    pthread_mutex_lock(&r->m);
    pthread_cleanup_push(unlock_on_cancel, &r->m);
    atomic_fetch_add(&r->waiting, 1);
    for (;;)
        pthread_cond_wait(&r->c, &r->m);
    pthread_cleanup_pop(0);
    return NULL;
}

static void *wait_for_the_signal(void *p)
{
    struct signal_race *r = p;
    pthread_mutex_lock(&r->m);
    atomic_fetch_add(&r->waiting, 1);
    struct timespec at = ts_in(CLOCK_REALTIME, 5000 * (int64_t)MS);
    r->second = pthread_cond_timedwait(&r->c, &r->m, &at);
    pthread_mutex_unlock(&r->m);
    return NULL;
}

TEST(cond_waiter_cancelled_as_it_is_signalled_consumes_no_signal)
{
    for (int i = 0; i < 20; i++) {
        struct signal_race r = {.m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER};
        /* The first waiter queues first, so the signal picks it unless
         * the cancellation took it out already. Each increments under the
         * mutex, which it releases only once queued. */
        pthread_t first = spawn(wait_until_cancelled, &r);
        while (atomic_load(&r.waiting) < 1)
            test_sleep_ns(100 * US);
        pthread_t second = spawn(wait_for_the_signal, &r);
        while (atomic_load(&r.waiting) < 2)
            test_sleep_ns(100 * US);
        ASSERT_EQ(pthread_mutex_lock(&r.m), 0);
        ASSERT_EQ(pthread_cancel(first), 0);
        ASSERT_EQ(pthread_cond_signal(&r.c), 0);
        ASSERT_EQ(pthread_mutex_unlock(&r.m), 0);
        ASSERT_TRUE(join(first) == PTHREAD_CANCELED);
        join(second);
        ASSERT_EQ(r.second, 0);
        ASSERT_EQ(pthread_cond_destroy(&r.c), 0);
    }
}

/* A broadcast's waiters each take the mutex in turn: the chain goes on
 * when the woken waiters leave the mutex held for another thread to
 * unlock (no owner for a NORMAL mutex, as glibc allows), when some of
 * them are cancelled, and when timed waiters' deadlines pass meanwhile. */
struct chain {
    pthread_mutex_t m;
    pthread_cond_t c;
    int go;
    int timed;      /* waiters use 5 ms timed waits, in a loop */
    int leave_held; /* a woken waiter returns with the mutex held */
    atomic_int waiting, done;
};

static void chain_unlock(void *m)
{
    pthread_mutex_unlock(m);
}

static void *chain_waiter(void *p)
{
    struct chain *ch = p;
    pthread_mutex_lock(&ch->m);
    pthread_cleanup_push(chain_unlock, &ch->m);
    atomic_fetch_add(&ch->waiting, 1);
    while (!ch->go) {
        if (ch->timed) {
            struct timespec at = ts_in(CLOCK_REALTIME, 5 * (int64_t)MS);
            pthread_cond_timedwait(&ch->c, &ch->m, &at);
        } else {
            pthread_cond_wait(&ch->c, &ch->m);
        }
    }
    pthread_cleanup_pop(!ch->leave_held);
    atomic_fetch_add(&ch->done, 1);
    return NULL;
}

enum { CHAIN_N = 6 };

static void chain_start(struct chain *ch, pthread_t *t)
{
    for (int i = 0; i < CHAIN_N; i++)
        t[i] = spawn(chain_waiter, ch);
    while (atomic_load(&ch->waiting) < CHAIN_N)
        test_sleep_ns(100 * US);
}

TEST(cond_broadcast_goes_on_when_another_thread_unlocks_for_the_woken)
{
    struct chain ch = {
        .m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER, .leave_held = 1};
    pthread_t t[CHAIN_N];
    chain_start(&ch, t);
    ASSERT_EQ(pthread_mutex_lock(&ch.m), 0);
    ch.go = 1;
    ASSERT_EQ(pthread_cond_broadcast(&ch.c), 0);
    ASSERT_EQ(pthread_mutex_unlock(&ch.m), 0);
    /* Each woken waiter returns holding the mutex; this thread unlocks it
     * for the next one. */
    for (int k = 1; k <= CHAIN_N; k++) {
        AWAIT(atomic_load(&ch.done) >= k);
        ASSERT_EQ(pthread_mutex_unlock(&ch.m), 0);
    }
    for (int i = 0; i < CHAIN_N; i++)
        join(t[i]);
    ASSERT_EQ(pthread_cond_destroy(&ch.c), 0);
}

TEST(cond_broadcast_reaches_every_waiter_when_some_are_cancelled_or_time_out)
{
    for (int timed = 0; timed <= 1; timed++) {
        struct chain ch = {
            .m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER, .timed = timed};
        pthread_t t[CHAIN_N];
        chain_start(&ch, t);
        ASSERT_EQ(pthread_mutex_lock(&ch.m), 0);
        ch.go = 1;
        ASSERT_EQ(pthread_cond_broadcast(&ch.c), 0);
        ASSERT_EQ(pthread_cancel(t[2]), 0);
        ASSERT_EQ(pthread_cancel(t[4]), 0);
        test_sleep_ns(30 * MS); /* the timed waiters' deadlines pass, the chain pending */
        ASSERT_EQ(pthread_mutex_unlock(&ch.m), 0);
        int cancelled = 0;
        for (int i = 0; i < CHAIN_N; i++)
            cancelled += join(t[i]) == PTHREAD_CANCELED;
        /* A cancellation that came after its waiter had returned is lost:
         * the others all returned. */
        ASSERT_EQ(atomic_load(&ch.done) + cancelled, CHAIN_N);
        ASSERT_EQ(pthread_mutex_trylock(&ch.m), 0); /* every waiter let go of it */
        ASSERT_EQ(pthread_mutex_unlock(&ch.m), 0);
        ASSERT_EQ(pthread_cond_destroy(&ch.c), 0);
    }
}

/* A waiter destroys and frees the cond it was woken from: POSIX allows
 * destroying a cond nobody waits on any more. */
struct owned_cond {
    pthread_mutex_t m;
    pthread_cond_t c;
    int ready, go;
};

static void *signal_then_leave(void *p)
{
    struct owned_cond *o = p;
    pthread_mutex_lock(&o->m);
    while (!o->ready)
        pthread_cond_wait(&o->c, &o->m);
    o->go = 1;
    pthread_cond_broadcast(&o->c);
    pthread_mutex_unlock(&o->m);
    return NULL;
}

TEST(cond_destroy_and_free_right_after_wake_up)
{
    for (int i = 0; i < 200; i++) {
        struct owned_cond *o = calloc(1, sizeof *o);
        pthread_mutex_init(&o->m, NULL);
        pthread_cond_init(&o->c, NULL);
        pthread_t t = spawn(signal_then_leave, o);
        pthread_mutex_lock(&o->m);
        o->ready = 1;
        pthread_cond_signal(&o->c);
        while (!o->go)
            pthread_cond_wait(&o->c, &o->m);
        pthread_mutex_unlock(&o->m);
        ASSERT_EQ(pthread_cond_destroy(&o->c), 0);
        ASSERT_EQ(pthread_mutex_destroy(&o->m), 0);
        free(o);
        join(t);
    }
}

TEST(cond_with_robust_mutex_passes_through_as_a_whole)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    struct gate g = {.c = PTHREAD_COND_INITIALIZER};
    ASSERT_EQ(pthread_mutex_init(&g.m, &a), 0);
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        t[i] = spawn(gate_wait, &g);
    gate_await_waiting(&g, 3);
    pthread_mutex_lock(&g.m);
    g.generation++;
    pthread_cond_broadcast(&g.c);
    pthread_mutex_unlock(&g.m);
    for (int i = 0; i < 3; i++)
        join(t[i]);
    ASSERT_EQ(g.woken, 3);
    ASSERT_EQ(pthread_cond_destroy(&g.c), 0);
    ASSERT_EQ(pthread_mutex_destroy(&g.m), 0);
}

/* ---- rwlock -------------------------------------------------------------- */

static void *tryrd_result(void *rw)
{
    int r = pthread_rwlock_tryrdlock(rw);
    if (r == 0)
        pthread_rwlock_unlock(rw);
    return (void *)(intptr_t)r;
}

static void *trywr_result(void *rw)
{
    int r = pthread_rwlock_trywrlock(rw);
    if (r == 0)
        pthread_rwlock_unlock(rw);
    return (void *)(intptr_t)r;
}

/* A read hold beside the caller's, then the park lock's flags word
 * (offset 16): 1 if it says read-mostly (2), else 0. */
static void *rdlock_then_check_mostly(void *arg)
{
    pthread_rwlock_t *rw = arg;
    if (pthread_rwlock_rdlock(rw) != 0)
        return (void *)(intptr_t)-1;
    uint32_t flags;
    memcpy(&flags, (const char *)rw + 16, sizeof flags);
    pthread_rwlock_unlock(rw);
    return (void *)(intptr_t)((flags & 2u) != 0);
}

TEST(rwlock_readers_share_and_a_writer_excludes)
{
    pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
    ASSERT_EQ(pthread_rwlock_rdlock(&rw), 0);
    ASSERT_EQ((intptr_t)join(spawn(tryrd_result, &rw)), 0);
    ASSERT_EQ((intptr_t)join(spawn(trywr_result, &rw)), EBUSY);
    ASSERT_EQ(pthread_rwlock_unlock(&rw), 0);
    ASSERT_EQ(pthread_rwlock_wrlock(&rw), 0);
    ASSERT_EQ((intptr_t)join(spawn(tryrd_result, &rw)), EBUSY);
    ASSERT_EQ((intptr_t)join(spawn(trywr_result, &rw)), EBUSY);
    ASSERT_EQ(pthread_rwlock_unlock(&rw), 0);
    ASSERT_EQ((intptr_t)join(spawn(trywr_result, &rw)), 0);
    ASSERT_EQ(pthread_rwlock_destroy(&rw), 0);
}

/* Under the preload, two readers inside at once turn the rwlock into a
 * read-mostly park lock (white box: the flags word of the park_rwlock_t at
 * the start of the pthread_rwlock_t); it keeps excluding writers, serving
 * readers from other threads, and destroys cleanly. */
TEST(rwlock_readers_inside_together_make_it_read_mostly)
{
    pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
    ASSERT_EQ(pthread_rwlock_rdlock(&rw), 0);
    ASSERT_EQ((intptr_t)join(spawn(tryrd_result, &rw)), 0);
    pthread_t t = spawn(tryrd_result, &rw); /* its hold, while ours is in */
    ASSERT_EQ((intptr_t)join(t), 0);
    if (getenv("PARK_CONFORMANCE_PRELOAD")) {
        ASSERT_EQ((intptr_t)join(spawn(rdlock_then_check_mostly, &rw)), 1);
    }
    ASSERT_EQ(pthread_rwlock_unlock(&rw), 0);
    ASSERT_EQ((intptr_t)join(spawn(trywr_result, &rw)), 0);
    for (int i = 0; i < 100; i++) { /* readers again, biased later */
        ASSERT_EQ(pthread_rwlock_rdlock(&rw), 0);
        ASSERT_EQ((intptr_t)join(spawn(trywr_result, &rw)), EBUSY);
        ASSERT_EQ(pthread_rwlock_unlock(&rw), 0);
    }
    ASSERT_EQ(pthread_rwlock_wrlock(&rw), 0);
    ASSERT_EQ((intptr_t)join(spawn(tryrd_result, &rw)), EBUSY);
    ASSERT_EQ(pthread_rwlock_unlock(&rw), 0);
    ASSERT_EQ(pthread_rwlock_destroy(&rw), 0);
}

TEST(rwlock_write_holder_relocking_is_edeadlk)
{
    pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
    ASSERT_EQ(pthread_rwlock_wrlock(&rw), 0);
    ASSERT_EQ(pthread_rwlock_wrlock(&rw), EDEADLK);
    ASSERT_EQ(pthread_rwlock_rdlock(&rw), EDEADLK);
    ASSERT_EQ(pthread_rwlock_timedwrlock(&rw, &past), EDEADLK);
    ASSERT_EQ(pthread_rwlock_trywrlock(&rw), EBUSY);
    ASSERT_EQ(pthread_rwlock_tryrdlock(&rw), EBUSY);
    ASSERT_EQ(pthread_rwlock_unlock(&rw), 0);
}

struct rw_timed {
    pthread_rwlock_t *rw;
    bool write;
    clockid_t clock;
    int64_t ns;
    int result;
    int64_t late;
};

static void *rw_timed_lock(void *p)
{
    struct rw_timed *a = p;
    struct timespec at = ts_in(a->clock, a->ns);
    if (a->clock == CLOCK_REALTIME)
        a->result = a->write ? pthread_rwlock_timedwrlock(a->rw, &at)
                             : pthread_rwlock_timedrdlock(a->rw, &at);
    else
        a->result = a->write ? pthread_rwlock_clockwrlock(a->rw, a->clock, &at)
                             : pthread_rwlock_clockrdlock(a->rw, a->clock, &at);
    a->late = ns_since(a->clock, &at);
    if (a->result == 0)
        pthread_rwlock_unlock(a->rw);
    return NULL;
}

TEST(rwlock_timed_locks_time_out_never_early_on_both_clocks)
{
    pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
    ASSERT_EQ(pthread_rwlock_wrlock(&rw), 0);
    clockid_t clocks[] = {CLOCK_REALTIME, CLOCK_MONOTONIC};
    int64_t waits[] = {-1000000000, 20 * MS};
    for (int c = 0; c < 2; c++)
        for (int w = 0; w < 2; w++)
            for (int wr = 0; wr < 2; wr++) {
                struct rw_timed a = {&rw, wr, clocks[c], waits[w], -1, 0};
                join(spawn(rw_timed_lock, &a));
                ASSERT_EQ(a.result, ETIMEDOUT);
                ASSERT_GE(a.late, 0);
                ASSERT_LT(a.late, (int64_t)LATE_NS);
            }
    ASSERT_EQ(pthread_rwlock_unlock(&rw), 0);
}

TEST(rwlock_timed_locks_with_bad_arguments_are_einval)
{
    pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
    ASSERT_EQ(pthread_rwlock_timedrdlock(&rw, &bad_nsec), EINVAL);
    ASSERT_EQ(pthread_rwlock_timedwrlock(&rw, &bad_nsec), EINVAL);
    struct timespec at = ts_in(CLOCK_MONOTONIC, 0);
    ASSERT_EQ(pthread_rwlock_clockrdlock(&rw, CLOCK_PROCESS_CPUTIME_ID, &at), EINVAL);
    ASSERT_EQ(pthread_rwlock_clockwrlock(&rw, CLOCK_PROCESS_CPUTIME_ID, &at), EINVAL);
    ASSERT_EQ(pthread_rwlock_trywrlock(&rw), 0); /* nothing was taken */
    ASSERT_EQ(pthread_rwlock_unlock(&rw), 0);
}

struct rw_writer {
    pthread_rwlock_t *rw;
    atomic_int started, done;
};

static void *rw_write_once(void *p)
{
    struct rw_writer *w = p;
    atomic_store(&w->started, 1);
    pthread_rwlock_wrlock(w->rw);
    atomic_store(&w->done, 1);
    pthread_rwlock_unlock(w->rw);
    return NULL;
}

TEST(rwlock_default_kind_read_relock_while_a_writer_waits)
{
    pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
    ASSERT_EQ(pthread_rwlock_rdlock(&rw), 0);
    struct rw_writer w = {.rw = &rw};
    pthread_t t = spawn(rw_write_once, &w);
    while (!atomic_load(&w.started))
        test_sleep_ns(100 * US);
    test_sleep_ns(20 * MS);                   /* the writer waits now */
    ASSERT_EQ(pthread_rwlock_rdlock(&rw), 0); /* must not deadlock */
    ASSERT_EQ(pthread_rwlock_tryrdlock(&rw), 0);
    struct timespec at = ts_in(CLOCK_REALTIME, 1000 * (int64_t)MS);
    ASSERT_EQ(pthread_rwlock_timedrdlock(&rw, &at), 0);
    ASSERT_EQ(atomic_load(&w.done), 0);
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(pthread_rwlock_unlock(&rw), 0);
    join(t);
    ASSERT_EQ(atomic_load(&w.done), 1);
}

TEST(rwlock_writer_nonrecursive_kind_excludes_and_shares)
{
    pthread_rwlock_t rw = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
    ASSERT_EQ(pthread_rwlock_rdlock(&rw), 0);
    ASSERT_EQ((intptr_t)join(spawn(tryrd_result, &rw)), 0);
    ASSERT_EQ((intptr_t)join(spawn(trywr_result, &rw)), EBUSY);
    ASSERT_EQ(pthread_rwlock_unlock(&rw), 0);
    pthread_rwlockattr_t a;
    pthread_rwlockattr_init(&a);
    pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_t rw2;
    ASSERT_EQ(pthread_rwlock_init(&rw2, &a), 0);
    ASSERT_EQ(pthread_rwlock_wrlock(&rw2), 0);
    ASSERT_EQ((intptr_t)join(spawn(tryrd_result, &rw2)), EBUSY);
    ASSERT_EQ(pthread_rwlock_unlock(&rw2), 0);
    ASSERT_EQ(pthread_rwlock_destroy(&rw2), 0);
}

TEST(rwlock_process_shared_passes_through)
{
    pthread_rwlockattr_t a;
    pthread_rwlockattr_init(&a);
    pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_rwlock_t rw;
    ASSERT_EQ(pthread_rwlock_init(&rw, &a), 0);
    ASSERT_EQ(pthread_rwlock_rdlock(&rw), 0);
    ASSERT_EQ((intptr_t)join(spawn(trywr_result, &rw)), EBUSY);
    ASSERT_EQ(pthread_rwlock_unlock(&rw), 0);
    ASSERT_EQ(pthread_rwlock_wrlock(&rw), 0);
    ASSERT_EQ(pthread_rwlock_unlock(&rw), 0);
    ASSERT_EQ(pthread_rwlock_destroy(&rw), 0);
}

/* ---- semaphore ------------------------------------------------------------- */

TEST(sem_init_above_sem_value_max_is_einval)
{
    sem_t s;
    errno = 0;
    ASSERT_EQ(sem_init(&s, 0, (unsigned)SEM_VALUE_MAX + 1), -1);
    ASSERT_EQ(errno, EINVAL);
}

TEST(sem_trywait_getvalue_and_post_count_permits)
{
    sem_t s;
    ASSERT_EQ(sem_init(&s, 0, 2), 0);
    int v = -1;
    ASSERT_EQ(sem_getvalue(&s, &v), 0);
    ASSERT_EQ(v, 2);
    ASSERT_EQ(sem_trywait(&s), 0);
    ASSERT_EQ(sem_wait(&s), 0);
    errno = 0;
    ASSERT_EQ(sem_trywait(&s), -1);
    ASSERT_EQ(errno, EAGAIN);
    ASSERT_EQ(sem_post(&s), 0);
    ASSERT_EQ(sem_getvalue(&s, &v), 0);
    ASSERT_EQ(v, 1);
    ASSERT_EQ(sem_destroy(&s), 0);
}

TEST(sem_post_beyond_sem_value_max_is_eoverflow)
{
    sem_t s;
    ASSERT_EQ(sem_init(&s, 0, SEM_VALUE_MAX), 0);
    errno = 0;
    ASSERT_EQ(sem_post(&s), -1);
    ASSERT_EQ(errno, EOVERFLOW);
    int v;
    ASSERT_EQ(sem_getvalue(&s, &v), 0);
    ASSERT_EQ(v, SEM_VALUE_MAX);
    ASSERT_EQ(sem_destroy(&s), 0);
}

TEST(sem_timed_waits_time_out_never_early_on_both_clocks)
{
    sem_t s;
    ASSERT_EQ(sem_init(&s, 0, 0), 0);
    clockid_t clocks[] = {CLOCK_REALTIME, CLOCK_MONOTONIC};
    int64_t waits[] = {-1000000000, 0, 20 * MS};
    for (int c = 0; c < 2; c++)
        for (int w = 0; w < 3; w++)
            for (int api = 0; api < 2; api++) {
                if (api == 0 && clocks[c] != CLOCK_REALTIME)
                    continue;
                struct timespec at = ts_in(clocks[c], waits[w]);
                errno = 0;
                int r = api == 0 ? sem_timedwait(&s, &at) : sem_clockwait(&s, clocks[c], &at);
                ASSERT_EQ(r, -1);
                ASSERT_EQ(errno, ETIMEDOUT);
                int64_t late = ns_since(clocks[c], &at);
                ASSERT_GE(late, 0);
                ASSERT_LT(late, (int64_t)LATE_NS);
            }
    ASSERT_EQ(sem_post(&s), 0);
    ASSERT_EQ(sem_timedwait(&s, &past), 0); /* a free permit despite the past deadline */
    ASSERT_EQ(sem_destroy(&s), 0);
}

TEST(sem_timed_waits_with_bad_arguments_are_einval)
{
    sem_t s;
    ASSERT_EQ(sem_init(&s, 0, 1), 0);
    errno = 0;
    ASSERT_EQ(sem_timedwait(&s, &bad_nsec), -1);
    ASSERT_EQ(errno, EINVAL);
    struct timespec at = ts_in(CLOCK_MONOTONIC, 0);
    errno = 0;
    ASSERT_EQ(sem_clockwait(&s, CLOCK_PROCESS_CPUTIME_ID, &at), -1);
    ASSERT_EQ(errno, EINVAL);
    int v;
    ASSERT_EQ(sem_getvalue(&s, &v), 0);
    ASSERT_EQ(v, 1);
}

struct sem_pc {
    sem_t items, slots;
    int buf[4];
    long sum;
};

static void *sem_consumer(void *p)
{
    struct sem_pc *q = p;
    for (int i = 0; i < PC_ITEMS; i++) {
        sem_wait(&q->items);
        q->sum += q->buf[i % 4];
        sem_post(&q->slots);
    }
    return NULL;
}

TEST(sem_producer_consumer_exact)
{
    struct sem_pc q = {0};
    ASSERT_EQ(sem_init(&q.items, 0, 0), 0);
    ASSERT_EQ(sem_init(&q.slots, 0, 4), 0);
    pthread_t t = spawn(sem_consumer, &q);
    for (int i = 0; i < PC_ITEMS; i++) {
        sem_wait(&q.slots);
        q.buf[i % 4] = i;
        sem_post(&q.items);
    }
    join(t);
    ASSERT_EQ(q.sum, (long)PC_ITEMS * (PC_ITEMS - 1) / 2);
}

struct sem_cancel {
    sem_t s;
    atomic_int waiting;
};

static void *sem_wait_forever(void *p)
{
    struct sem_cancel *a = p;
    atomic_store(&a->waiting, 1);
    sem_wait(&a->s);
    return NULL;
}

TEST(sem_wait_is_a_cancellation_point)
{
    struct sem_cancel a = {.waiting = 0};
    ASSERT_EQ(sem_init(&a.s, 0, 0), 0);
    pthread_t t = spawn(sem_wait_forever, &a);
    while (!atomic_load(&a.waiting))
        test_sleep_ns(100 * US);
    test_sleep_ns(10 * MS);
    ASSERT_EQ(pthread_cancel(t), 0);
    ASSERT_TRUE(join(t) == PTHREAD_CANCELED);
    int v;
    ASSERT_EQ(sem_getvalue(&a.s, &v), 0);
    ASSERT_EQ(v, 0);
    ASSERT_EQ(sem_destroy(&a.s), 0);
}

TEST(sem_process_shared_and_named_pass_through)
{
    sem_t *shared =
        mmap(NULL, sizeof(sem_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_TRUE(shared != MAP_FAILED);
    ASSERT_EQ(sem_init(shared, 1, 0), 0);
    pid_t pid = fork();
    if (pid == 0)
        _exit(sem_post(shared) == 0 ? 0 : 1);
    ASSERT_EQ(sem_wait(shared), 0);
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_EQ(status, 0);
    ASSERT_EQ(sem_destroy(shared), 0);
    munmap(shared, sizeof(sem_t));

    char name[64];
    snprintf(name, sizeof name, "/park-conformance-%d", (int)getpid());
    sem_t *named = sem_open(name, O_CREAT | O_EXCL, 0600, 1);
    ASSERT_TRUE(named != SEM_FAILED);
    sem_unlink(name);
    ASSERT_EQ(sem_trywait(named), 0);
    ASSERT_EQ(sem_post(named), 0);
    int v;
    ASSERT_EQ(sem_getvalue(named, &v), 0);
    ASSERT_EQ(v, 1);
    ASSERT_EQ(sem_close(named), 0);
}

/* ---- objects set up before main -------------------------------------------- */

static pthread_mutex_t early_mutex;
static pthread_cond_t early_cond = PTHREAD_COND_INITIALIZER;
static sem_t early_sem;

__attribute__((constructor(101))) static void set_up_early(void)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_init(&early_mutex, &a);
    pthread_mutex_lock(&early_mutex);
    sem_init(&early_sem, 0, 1);
}

TEST(objects_set_up_in_a_constructor_work)
{
    ASSERT_EQ(pthread_mutex_lock(&early_mutex), EDEADLK);
    ASSERT_EQ(pthread_cond_timedwait(&early_cond, &early_mutex, &past), ETIMEDOUT);
    ASSERT_EQ(pthread_mutex_unlock(&early_mutex), 0);
    ASSERT_EQ(pthread_mutex_unlock(&early_mutex), EPERM);
    ASSERT_EQ(sem_trywait(&early_sem), 0);
    ASSERT_EQ(sem_post(&early_sem), 0);
}

/* ---- fork ------------------------------------------------------------------ */

static pthread_mutex_t fork_held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t fork_free = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t fork_rw = PTHREAD_RWLOCK_INITIALIZER;
static atomic_int fork_holding, fork_release;

static void *hold_across_fork(void *p)
{
    (void)p;
    pthread_mutex_lock(&fork_held);
    pthread_rwlock_wrlock(&fork_rw);
    atomic_store(&fork_holding, 1);
    while (!atomic_load(&fork_release))
        test_sleep_ns(100 * US);
    pthread_rwlock_unlock(&fork_rw);
    pthread_mutex_unlock(&fork_held);
    return NULL;
}

TEST(fork_child_finds_held_locks_held_and_free_ones_usable)
{
    pthread_t t = spawn(hold_across_fork, NULL);
    while (!atomic_load(&fork_holding))
        test_sleep_ns(100 * US);
    pid_t pid = fork();
    if (pid == 0) {
        int ok = pthread_mutex_trylock(&fork_held) == EBUSY &&
                 pthread_rwlock_tryrdlock(&fork_rw) == EBUSY &&
                 pthread_mutex_lock(&fork_free) == 0 && pthread_mutex_unlock(&fork_free) == 0;
        pthread_cond_t c = PTHREAD_COND_INITIALIZER;
        pthread_mutex_lock(&fork_free);
        ok = ok && pthread_cond_timedwait(&c, &fork_free, &past) == ETIMEDOUT;
        pthread_mutex_unlock(&fork_free);
        sem_t s;
        ok = ok && sem_init(&s, 0, 1) == 0 && sem_wait(&s) == 0 && sem_post(&s) == 0;
        _exit(ok ? 0 : 1);
    }
    ASSERT_GT(pid, 0);
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    atomic_store(&fork_release, 1);
    join(t);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
}

/* Threads queued at the fork do not exist in the child: a mutex or a
 * semaphore they waited for is free there once the forking thread releases
 * it, a mutex another thread held stays held, and the child's own threads
 * can contend on what is free. (An rwlock released in the child may be
 * handed to the readers queued at the fork under glibc, so it stays held
 * there; the preload lets it fall free. Only the release is checked.) */
static pthread_mutex_t fq_mine = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t fq_theirs = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t fq_rw = PTHREAD_RWLOCK_INITIALIZER;
static sem_t fq_sem;
static atomic_int fq_holding, fq_release, fq_got;
static long fq_counter, fq_sem_counter;

static void *fq_hold_theirs(void *p)
{
    (void)p;
    pthread_mutex_lock(&fq_theirs);
    atomic_store(&fq_holding, 1);
    while (!atomic_load(&fq_release))
        test_sleep_ns(100 * US);
    pthread_mutex_unlock(&fq_theirs);
    return NULL;
}

static void *fq_wait(void *p)
{
    switch ((int)(intptr_t)p) {
    case 0:
        pthread_mutex_lock(&fq_mine);
        pthread_mutex_unlock(&fq_mine);
        break;
    case 1:
        pthread_mutex_lock(&fq_theirs);
        pthread_mutex_unlock(&fq_theirs);
        break;
    case 2:
        pthread_rwlock_wrlock(&fq_rw);
        pthread_rwlock_unlock(&fq_rw);
        break;
    case 3:
        pthread_rwlock_rdlock(&fq_rw);
        pthread_rwlock_unlock(&fq_rw);
        break;
    default:
        sem_wait(&fq_sem);
        break;
    }
    atomic_fetch_add(&fq_got, 1);
    return NULL;
}

static void *fq_contend(void *p)
{
    (void)p;
    for (int i = 0; i < 2000; i++) {
        pthread_mutex_lock(&fq_mine);
        fq_counter++;
        pthread_mutex_unlock(&fq_mine);
        sem_wait(&fq_sem);
        fq_sem_counter++;
        sem_post(&fq_sem);
    }
    return NULL;
}

static int fq_child(void)
{
    struct timespec soon;
    clock_gettime(CLOCK_REALTIME, &soon);
    soon.tv_nsec += 20 * MS;
    if (soon.tv_nsec >= 1000000000) {
        soon.tv_sec++;
        soon.tv_nsec -= 1000000000;
    }
    int v = -1;
    bool ok =
        pthread_mutex_trylock(&fq_mine) == EBUSY && pthread_mutex_trylock(&fq_theirs) == EBUSY &&
        pthread_mutex_timedlock(&fq_theirs, &soon) == ETIMEDOUT &&
        pthread_rwlock_tryrdlock(&fq_rw) == EBUSY && sem_trywait(&fq_sem) == -1 && errno == EAGAIN;
    /* Released by the forking thread: free, though waiters were queued. */
    ok = ok && pthread_mutex_unlock(&fq_mine) == 0 && pthread_rwlock_unlock(&fq_rw) == 0 &&
         sem_post(&fq_sem) == 0;
    ok = ok && pthread_mutex_trylock(&fq_mine) == 0 && pthread_mutex_unlock(&fq_mine) == 0 &&
         sem_getvalue(&fq_sem, &v) == 0 && v == 1;
    if (!ok)
        return 1;
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        t[i] = spawn(fq_contend, NULL);
    for (int i = 0; i < 3; i++)
        join(t[i]);
    ok = fq_counter == 3 * 2000 && fq_sem_counter == 3 * 2000 && sem_getvalue(&fq_sem, &v) == 0 &&
         v == 1 && pthread_mutex_trylock(&fq_theirs) == EBUSY &&
         pthread_mutex_destroy(&fq_mine) == 0 && sem_destroy(&fq_sem) == 0;
    return ok ? 0 : 2;
}

TEST(fork_child_with_waiters_queued_frees_what_the_forking_thread_releases)
{
    ASSERT_EQ(sem_init(&fq_sem, 0, 0), 0);
    pthread_t holder = spawn(fq_hold_theirs, NULL);
    while (!atomic_load(&fq_holding))
        test_sleep_ns(100 * US);
    pthread_mutex_lock(&fq_mine);
    pthread_rwlock_wrlock(&fq_rw);
    enum { KINDS = 5, PER_KIND = 2 };
    pthread_t waiters[KINDS * PER_KIND];
    for (int i = 0; i < KINDS * PER_KIND; i++)
        waiters[i] = spawn(fq_wait, (void *)(intptr_t)(i % KINDS));
    test_sleep_ns(50 * MS); /* let them queue */
    pid_t pid = fork();
    if (pid == 0) {
        alarm(30); /* a hang fails */
        _exit(fq_child());
    }
    ASSERT_GT(pid, 0);
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    pthread_mutex_unlock(&fq_mine);
    pthread_rwlock_unlock(&fq_rw);
    for (int i = 0; i < PER_KIND; i++)
        ASSERT_EQ(sem_post(&fq_sem), 0);
    atomic_store(&fq_release, 1);
    join(holder);
    for (int i = 0; i < KINDS * PER_KIND; i++)
        join(waiters[i]);
    ASSERT_EQ(atomic_load(&fq_got), KINDS * PER_KIND);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
    ASSERT_EQ(sem_destroy(&fq_sem), 0);
}

/* Threads waiting on a condition variable at the fork do not exist in the
 * child: the child's own waiters on it are woken by its broadcasts, not
 * lost to the parent's. A difference from glibc, under which such a child
 * hangs (its broadcast and waits never return): checked under the preload
 * only. */
static pthread_mutex_t fc_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fc_c = PTHREAD_COND_INITIALIZER;
static int fc_round;
static atomic_int fc_waiting, fc_timeouts;

static void *fc_wait_round(void *p)
{
    int round = (int)(intptr_t)p;
    pthread_mutex_lock(&fc_m);
    atomic_fetch_add(&fc_waiting, 1);
    while (fc_round < round) {
        struct timespec limit;
        clock_gettime(CLOCK_REALTIME, &limit);
        limit.tv_sec += 10;
        if (pthread_cond_timedwait(&fc_c, &fc_m, &limit) == ETIMEDOUT) {
            atomic_fetch_add(&fc_timeouts, 1);
            break;
        }
    }
    pthread_mutex_unlock(&fc_m);
    return NULL;
}

/* Starts n waiters for round `round`, lets them wait, then ends the round
 * by a broadcast (or n signals). */
static void fc_run_round(int round, int n, bool broadcast)
{
    pthread_t t[4];
    atomic_store(&fc_waiting, 0);
    for (int i = 0; i < n; i++)
        t[i] = spawn(fc_wait_round, (void *)(intptr_t)round);
    while (atomic_load(&fc_waiting) < n)
        test_sleep_ns(100 * US);
    test_sleep_ns(20 * MS); /* let them sleep */
    pthread_mutex_lock(&fc_m);
    fc_round = round;
    if (broadcast)
        pthread_cond_broadcast(&fc_c);
    else
        for (int i = 0; i < n; i++)
            pthread_cond_signal(&fc_c);
    pthread_mutex_unlock(&fc_m);
    for (int i = 0; i < n; i++)
        join(t[i]);
}

TEST(fork_child_waiters_on_a_cond_waited_on_at_the_fork_are_woken)
{
    if (!getenv("PARK_CONFORMANCE_PRELOAD")) {
        fprintf(stderr, "  (glibc: not checked, such a child hangs there)\n");
        return;
    }
    pthread_t parents[3];
    atomic_store(&fc_waiting, 0);
    for (int i = 0; i < 3; i++)
        parents[i] = spawn(fc_wait_round, (void *)(intptr_t)1);
    while (atomic_load(&fc_waiting) < 3)
        test_sleep_ns(100 * US);
    test_sleep_ns(20 * MS);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(60); /* a hang fails */
        atomic_store(&fc_timeouts, 0);
        fc_run_round(1, 2, true);
        fc_run_round(2, 2, true);
        _exit(atomic_load(&fc_timeouts) == 0 ? 0 : 1);
    }
    ASSERT_GT(pid, 0);
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    pthread_mutex_lock(&fc_m);
    fc_round = 1;
    pthread_cond_broadcast(&fc_c);
    pthread_mutex_unlock(&fc_m);
    for (int i = 0; i < 3; i++)
        join(parents[i]);
    ASSERT_EQ(atomic_load(&fc_timeouts), 0);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
}

/* ---- symbol versions -------------------------------------------------------- */

static const struct {
    const char *name, *version;
} bindings[] = {
    {"pthread_mutex_init", "GLIBC_2.2.5"},
    {"pthread_mutex_destroy", "GLIBC_2.2.5"},
    {"pthread_mutex_lock", "GLIBC_2.2.5"},
    {"pthread_mutex_unlock", "GLIBC_2.2.5"},
    {"pthread_mutex_trylock", "GLIBC_2.2.5"},
    {"pthread_mutex_trylock", "GLIBC_2.34"},
    {"pthread_mutex_timedlock", "GLIBC_2.2.5"},
    {"pthread_mutex_timedlock", "GLIBC_2.34"},
    {"pthread_mutex_clocklock", "GLIBC_2.30"},
    {"pthread_mutex_clocklock", "GLIBC_2.34"},
    {"pthread_cond_wait", "GLIBC_2.2.5"},
    {"pthread_cond_wait", "GLIBC_2.3.2"},
    {"pthread_cond_signal", "GLIBC_2.2.5"},
    {"pthread_cond_signal", "GLIBC_2.3.2"},
    {"pthread_cond_clockwait", "GLIBC_2.30"},
    {"pthread_cond_clockwait", "GLIBC_2.34"},
    {"pthread_rwlock_rdlock", "GLIBC_2.2.5"},
    {"pthread_rwlock_rdlock", "GLIBC_2.34"},
    {"pthread_rwlock_unlock", "GLIBC_2.2.5"},
    {"pthread_rwlock_unlock", "GLIBC_2.34"},
    {"pthread_rwlock_clockwrlock", "GLIBC_2.30"},
    {"pthread_rwlock_clockwrlock", "GLIBC_2.34"},
    {"sem_wait", "GLIBC_2.2.5"},
    {"sem_wait", "GLIBC_2.34"},
    {"sem_clockwait", "GLIBC_2.30"},
    {"sem_clockwait", "GLIBC_2.34"},
};

TEST(every_symbol_version_binds_and_under_the_preload_reaches_it)
{
    bool preload = getenv("PARK_CONFORMANCE_PRELOAD") != NULL;
    for (size_t i = 0; i < sizeof bindings / sizeof bindings[0]; i++) {
        void *f = dlvsym(RTLD_DEFAULT, bindings[i].name, bindings[i].version);
        if (!f)
            test_fail(__FILE__, __LINE__, "no %s@%s", bindings[i].name, bindings[i].version);
        Dl_info info;
        ASSERT_TRUE(dladdr(f, &info) != 0);
        bool in_preload = strstr(info.dli_fname, "libpark-preload") != NULL;
        if (in_preload != preload)
            test_fail(__FILE__, __LINE__, "%s@%s is defined in %s", bindings[i].name,
                      bindings[i].version, info.dli_fname);
    }
}

TEST(compat_bindings_behave_as_the_default_ones)
{
    typedef int (*mfn)(pthread_mutex_t *);
    mfn trylock_old = (mfn)dlvsym(RTLD_DEFAULT, "pthread_mutex_trylock", "GLIBC_2.2.5");
    ASSERT_TRUE(trylock_old != NULL);
    pthread_mutex_t m;
    mutex_init_type(&m, PTHREAD_MUTEX_RECURSIVE);
    ASSERT_EQ(trylock_old(&m), 0);
    ASSERT_EQ(trylock_old(&m), 0);
    ASSERT_EQ(pthread_mutex_unlock(&m), 0);
    ASSERT_EQ(pthread_mutex_unlock(&m), 0);
    ASSERT_EQ(pthread_mutex_unlock(&m), EPERM);

    typedef int (*sfn)(sem_t *);
    sfn post_old = (sfn)dlvsym(RTLD_DEFAULT, "sem_post", "GLIBC_2.2.5");
    sfn trywait_old = (sfn)dlvsym(RTLD_DEFAULT, "sem_trywait", "GLIBC_2.2.5");
    sem_t s;
    ASSERT_EQ(sem_init(&s, 0, 0), 0);
    ASSERT_EQ(post_old(&s), 0);
    ASSERT_EQ(sem_trywait(&s), 0);
    ASSERT_EQ(sem_post(&s), 0);
    ASSERT_EQ(trywait_old(&s), 0);
    ASSERT_EQ(trywait_old(&s), -1);
}

/* The pre-2.3.2 condition variable (pthread_cond_*@GLIBC_2.2.5): what a
 * program linked before glibc 2.3.2 calls. */
typedef int (*old_wait_fn)(void *, pthread_mutex_t *);
typedef int (*old_timedwait_fn)(void *, pthread_mutex_t *, const struct timespec *);
typedef int (*old_fn)(void *);

struct old_gate {
    void *cond; /* the old object: a word glibc (and the preload) fill on first use */
    char pad[40];
    pthread_mutex_t m;
    int open;
};

static void *old_open_later(void *p)
{
    struct old_gate *g = p;
    old_fn signal = (old_fn)dlvsym(RTLD_DEFAULT, "pthread_cond_signal", "GLIBC_2.2.5");
    test_sleep_ns(10 * MS);
    pthread_mutex_lock(&g->m);
    g->open = 1;
    signal(&g->cond);
    pthread_mutex_unlock(&g->m);
    return NULL;
}

TEST(pre_2_3_2_cond_abi_waits_signals_and_times_out)
{
    old_wait_fn wait = (old_wait_fn)dlvsym(RTLD_DEFAULT, "pthread_cond_wait", "GLIBC_2.2.5");
    old_timedwait_fn timedwait =
        (old_timedwait_fn)dlvsym(RTLD_DEFAULT, "pthread_cond_timedwait", "GLIBC_2.2.5");
    old_fn destroy = (old_fn)dlvsym(RTLD_DEFAULT, "pthread_cond_destroy", "GLIBC_2.2.5");
    ASSERT_TRUE(wait && timedwait && destroy);
    struct old_gate g = {.m = PTHREAD_MUTEX_INITIALIZER};
    pthread_mutex_lock(&g.m);
    ASSERT_EQ(timedwait(&g.cond, &g.m, &past), ETIMEDOUT);
    pthread_t t = spawn(old_open_later, &g);
    while (!g.open)
        ASSERT_EQ(wait(&g.cond, &g.m), 0);
    pthread_mutex_unlock(&g.m);
    join(t);
    ASSERT_EQ(destroy(&g.cond), 0);
}

static const test_case_t tests[] = {
    TEST_ENTRY(mutex_static_initializers_lock_and_unlock),
    TEST_ENTRY(mutex_zeroed_memory_is_an_unlocked_mutex),
    TEST_ENTRY(mutex_errorcheck_relock_is_edeadlk),
    TEST_ENTRY(mutex_errorcheck_unlock_of_unlocked_is_eperm),
    TEST_ENTRY(mutex_errorcheck_and_recursive_unlock_by_non_owner_is_eperm),
    TEST_ENTRY(mutex_recursive_counts_holds),
    TEST_ENTRY(mutex_trylock_of_held_is_ebusy),
    TEST_ENTRY(mutex_destroy_of_locked_is_ebusy),
    TEST_ENTRY(mutex_timedlock_of_held_times_out_never_early_on_both_clocks),
    TEST_ENTRY(mutex_timedlock_of_free_with_past_deadline_succeeds),
    TEST_ENTRY(mutex_timedlock_gets_the_lock_released_in_time),
    TEST_ENTRY(mutex_timedlock_with_a_deadline_past_64_bit_ns_waits_for_the_unlock),
    TEST_ENTRY(mutex_clocklock_with_bad_clock_is_einval),
    TEST_ENTRY(mutex_timedlock_with_bad_nsec_must_wait_is_einval),
    TEST_ENTRY(mutex_robust_passes_through_and_reports_owner_death),
    TEST_ENTRY(mutex_pi_and_pshared_kinds_lock_and_unlock),
    TEST_ENTRY(mutex_destroy_and_free_right_after_unlock),
    TEST_ENTRY(cond_signal_producer_consumer_exact),
    TEST_ENTRY(cond_signal_wakes_exactly_those_it_must),
    TEST_ENTRY(cond_broadcast_wakes_every_waiter),
    TEST_ENTRY(cond_signal_and_broadcast_without_waiters_do_nothing),
    TEST_ENTRY(cond_timedwait_times_out_never_early_on_both_clocks),
    TEST_ENTRY(cond_timedwait_with_bad_arguments_is_einval),
    TEST_ENTRY(cond_timedwait_wakes_on_signal_before_the_deadline),
    TEST_ENTRY(cond_wait_with_errorcheck_mutex_not_held_is_eperm),
    TEST_ENTRY(cond_wait_with_recursive_mutex_held_once),
    TEST_ENTRY(cond_wait_is_a_cancellation_point_and_relocks_before_cleanup),
    TEST_ENTRY(cond_waiter_cancelled_as_it_is_signalled_consumes_no_signal),
    TEST_ENTRY(cond_broadcast_goes_on_when_another_thread_unlocks_for_the_woken),
    TEST_ENTRY(cond_broadcast_reaches_every_waiter_when_some_are_cancelled_or_time_out),
    TEST_ENTRY(cond_destroy_and_free_right_after_wake_up),
    TEST_ENTRY(cond_with_robust_mutex_passes_through_as_a_whole),
    TEST_ENTRY(rwlock_readers_share_and_a_writer_excludes),
    TEST_ENTRY(rwlock_readers_inside_together_make_it_read_mostly),
    TEST_ENTRY(rwlock_write_holder_relocking_is_edeadlk),
    TEST_ENTRY(rwlock_timed_locks_time_out_never_early_on_both_clocks),
    TEST_ENTRY(rwlock_timed_locks_with_bad_arguments_are_einval),
    TEST_ENTRY(rwlock_default_kind_read_relock_while_a_writer_waits),
    TEST_ENTRY(rwlock_writer_nonrecursive_kind_excludes_and_shares),
    TEST_ENTRY(rwlock_process_shared_passes_through),
    TEST_ENTRY(sem_init_above_sem_value_max_is_einval),
    TEST_ENTRY(sem_trywait_getvalue_and_post_count_permits),
    TEST_ENTRY(sem_post_beyond_sem_value_max_is_eoverflow),
    TEST_ENTRY(sem_timed_waits_time_out_never_early_on_both_clocks),
    TEST_ENTRY(sem_timed_waits_with_bad_arguments_are_einval),
    TEST_ENTRY(sem_producer_consumer_exact),
    TEST_ENTRY(sem_wait_is_a_cancellation_point),
    TEST_ENTRY(sem_process_shared_and_named_pass_through),
    TEST_ENTRY(objects_set_up_in_a_constructor_work),
    TEST_ENTRY(fork_child_finds_held_locks_held_and_free_ones_usable),
    TEST_ENTRY(fork_child_with_waiters_queued_frees_what_the_forking_thread_releases),
    TEST_ENTRY(fork_child_waiters_on_a_cond_waited_on_at_the_fork_are_woken),
    TEST_ENTRY(every_symbol_version_binds_and_under_the_preload_reaches_it),
    TEST_ENTRY(compat_bindings_behave_as_the_default_ones),
    TEST_ENTRY(pre_2_3_2_cond_abi_waits_signals_and_times_out),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
