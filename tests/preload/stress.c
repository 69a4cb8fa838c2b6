/* tests/preload/stress.c: pthread programs under load, run under
 * libpark-preload.so at 2, 4, 8 and 16 threads (and, in PARK_FAULTS builds,
 * under fault seeds that disturb park's futex calls). Each test checks an
 * exact oracle: mutual exclusion by plain counters, permits by an "inside"
 * count, a producer/consumer queue by sum and count, readers against
 * writers. Plain pthread calls: the same binary runs against glibc. */
#include "test.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <time.h>

static const unsigned thread_counts[] = {2, 4, 8, 16};

static struct timespec rt_in(int64_t ns)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    int64_t total = (int64_t)t.tv_nsec + ns;
    t.tv_sec += total / 1000000000;
    t.tv_nsec = total % 1000000000;
    return t;
}

struct worker {
    unsigned id, n;
    void *shared;
};

static void run_threads(unsigned n, void *(*fn)(void *), void *shared)
{
    struct worker w[16];
    for (unsigned i = 0; i < n; i++)
        w[i] = (struct worker){i, n, shared};
    test_threads_join(test_threads_start(n, fn, w, sizeof w[0]));
}

/* ---- mutexes of every served type: lock, trylock, timedlock ------------- */

struct mutexes {
    pthread_mutex_t m[3]; /* NORMAL, ERRORCHECK, RECURSIVE */
    long count[3];
    uint64_t iters;
};

static void *mutex_worker(void *p)
{
    struct worker *w = p;
    struct mutexes *s = w->shared;
    uint64_t rng = test_rng_seed(w->id);
    for (uint64_t i = 0; i < s->iters; i++) {
        unsigned k = test_rng_below(&rng, 3);
        pthread_mutex_t *m = &s->m[k];
        switch (test_rng_below(&rng, 3)) {
        case 0:
            ASSERT_EQ(pthread_mutex_lock(m), 0);
            break;
        case 1:
            while (pthread_mutex_trylock(m) != 0)
                sched_yield();
            break;
        default: {
            struct timespec at = rt_in(test_rng_below(&rng, 2) ? 0 : 200000);
            int r;
            while ((r = pthread_mutex_timedlock(m, &at)) == ETIMEDOUT)
                at = rt_in(100000);
            ASSERT_EQ(r, 0);
        }
        }
        if (k == 2)
            ASSERT_EQ(pthread_mutex_lock(m), 0); /* a second hold */
        long c = s->count[k];
        for (int j = 0; j < 10; j++)
            s->count[k]++;
        ASSERT_EQ(s->count[k], c + 10);
        s->count[k] -= 9;
        if (k == 2)
            ASSERT_EQ(pthread_mutex_unlock(m), 0);
        ASSERT_EQ(pthread_mutex_unlock(m), 0);
    }
    return NULL;
}

TEST(mutex_kinds_exclude_under_lock_trylock_and_timedlock)
{
    for (size_t t = 0; t < sizeof thread_counts / sizeof thread_counts[0]; t++) {
        struct mutexes s = {.iters = test_scaled(20000)};
        int types[] = {PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_ERRORCHECK, PTHREAD_MUTEX_RECURSIVE};
        for (int k = 0; k < 3; k++) {
            pthread_mutexattr_t a;
            pthread_mutexattr_init(&a);
            pthread_mutexattr_settype(&a, types[k]);
            pthread_mutex_init(&s.m[k], &a);
        }
        run_threads(thread_counts[t], mutex_worker, &s);
        ASSERT_EQ(s.count[0] + s.count[1] + s.count[2], (long)s.iters * (long)thread_counts[t]);
        for (int k = 0; k < 3; k++)
            ASSERT_EQ(pthread_mutex_destroy(&s.m[k]), 0);
    }
}

/* ---- a bounded queue on two conds ------------------------------------------ */

#define QCAP 8
struct queue {
    pthread_mutex_t m;
    pthread_cond_t not_empty, not_full;
    long buf[QCAP];
    unsigned head, count, producers_left;
    long sum, received;
    uint64_t per_producer;
};

static void *queue_worker(void *p)
{
    struct worker *w = p;
    struct queue *q = w->shared;
    uint64_t rng = test_rng_seed(w->id);
    bool producer = w->id % 2 == 0;
    for (uint64_t i = 0;; i++) {
        pthread_mutex_lock(&q->m);
        if (producer) {
            if (i == q->per_producer) {
                if (--q->producers_left == 0)
                    pthread_cond_broadcast(&q->not_empty);
                pthread_mutex_unlock(&q->m);
                return NULL;
            }
            while (q->count == QCAP) {
                if (test_rng_below(&rng, 4) == 0) {
                    struct timespec at = rt_in(100000);
                    int r = pthread_cond_timedwait(&q->not_full, &q->m, &at);
                    ASSERT_TRUE(r == 0 || r == ETIMEDOUT);
                } else {
                    pthread_cond_wait(&q->not_full, &q->m);
                }
            }
            q->buf[(q->head + q->count++) % QCAP] = (long)i + 1;
            if (test_rng_below(&rng, 8) == 0)
                pthread_cond_broadcast(&q->not_empty);
            else
                pthread_cond_signal(&q->not_empty);
        } else {
            while (q->count == 0 && q->producers_left > 0)
                pthread_cond_wait(&q->not_empty, &q->m);
            if (q->count == 0) {
                pthread_mutex_unlock(&q->m);
                return NULL;
            }
            q->sum += q->buf[q->head];
            q->head = (q->head + 1) % QCAP;
            q->count--;
            q->received++;
            pthread_cond_signal(&q->not_full);
        }
        pthread_mutex_unlock(&q->m);
    }
}

TEST(cond_queue_delivers_every_item_once)
{
    for (size_t t = 0; t < sizeof thread_counts / sizeof thread_counts[0]; t++) {
        unsigned n = thread_counts[t];
        struct queue q = {.m = PTHREAD_MUTEX_INITIALIZER,
                          .not_empty = PTHREAD_COND_INITIALIZER,
                          .not_full = PTHREAD_COND_INITIALIZER};
        q.producers_left = n / 2;
        q.per_producer = test_scaled(20000);
        run_threads(n, queue_worker, &q);
        long items = (long)q.per_producer;
        ASSERT_EQ(q.received, items * (long)(n / 2));
        ASSERT_EQ(q.sum, items * (items + 1) / 2 * (long)(n / 2));
        ASSERT_EQ(pthread_cond_destroy(&q.not_empty), 0);
        ASSERT_EQ(pthread_cond_destroy(&q.not_full), 0);
    }
}

/* ---- rwlock: readers (some re-entering) against writers ------------------- */

struct rw {
    pthread_rwlock_t lock;
    atomic_int readers, writers;
    long value;
    uint64_t iters;
};

static void *rw_worker(void *p)
{
    struct worker *w = p;
    struct rw *s = w->shared;
    uint64_t rng = test_rng_seed(w->id);
    for (uint64_t i = 0; i < s->iters; i++) {
        if (test_rng_below(&rng, 4) == 0) {
            if (test_rng_below(&rng, 2)) {
                ASSERT_EQ(pthread_rwlock_wrlock(&s->lock), 0);
            } else {
                struct timespec at = rt_in(200000);
                int r;
                while ((r = pthread_rwlock_timedwrlock(&s->lock, &at)) == ETIMEDOUT)
                    at = rt_in(200000);
                ASSERT_EQ(r, 0);
            }
            ASSERT_EQ(atomic_fetch_add(&s->writers, 1), 0);
            ASSERT_EQ(atomic_load(&s->readers), 0);
            s->value++;
            atomic_fetch_sub(&s->writers, 1);
            ASSERT_EQ(pthread_rwlock_unlock(&s->lock), 0);
        } else {
            ASSERT_EQ(pthread_rwlock_rdlock(&s->lock), 0);
            bool again = test_rng_below(&rng, 4) == 0;
            if (again) /* re-entry: POSIX lets the default kind do it */
                ASSERT_EQ(pthread_rwlock_rdlock(&s->lock), 0);
            atomic_fetch_add(&s->readers, 1);
            ASSERT_EQ(atomic_load(&s->writers), 0);
            (void)*(volatile long *)&s->value;
            atomic_fetch_sub(&s->readers, 1);
            if (again)
                ASSERT_EQ(pthread_rwlock_unlock(&s->lock), 0);
            ASSERT_EQ(pthread_rwlock_unlock(&s->lock), 0);
        }
    }
    return NULL;
}

TEST(rwlock_readers_and_writers_exclude_with_read_reentry)
{
    for (size_t t = 0; t < sizeof thread_counts / sizeof thread_counts[0]; t++) {
        struct rw s = {.lock = PTHREAD_RWLOCK_INITIALIZER, .iters = test_scaled(10000)};
        run_threads(thread_counts[t], rw_worker, &s);
        ASSERT_EQ(pthread_rwlock_destroy(&s.lock), 0);
    }
}

/* ---- semaphore: never more than its permits inside ------------------------ */

#define PERMITS 3
struct sems {
    sem_t s;
    atomic_int inside;
    uint64_t iters;
};

static void *sem_worker(void *p)
{
    struct worker *w = p;
    struct sems *s = w->shared;
    uint64_t rng = test_rng_seed(w->id);
    for (uint64_t i = 0; i < s->iters; i++) {
        switch (test_rng_below(&rng, 3)) {
        case 0:
            ASSERT_EQ(sem_wait(&s->s), 0);
            break;
        case 1:
            while (sem_trywait(&s->s) != 0)
                sched_yield();
            break;
        default: {
            struct timespec at = rt_in(100000);
            while (sem_timedwait(&s->s, &at) != 0) {
                ASSERT_EQ(errno, ETIMEDOUT);
                at = rt_in(100000);
            }
        }
        }
        ASSERT_LE(atomic_fetch_add(&s->inside, 1) + 1, PERMITS);
        atomic_fetch_sub(&s->inside, 1);
        ASSERT_EQ(sem_post(&s->s), 0);
    }
    return NULL;
}

TEST(sem_never_admits_more_than_its_permits)
{
    for (size_t t = 0; t < sizeof thread_counts / sizeof thread_counts[0]; t++) {
        struct sems s = {.iters = test_scaled(20000)};
        ASSERT_EQ(sem_init(&s.s, 0, PERMITS), 0);
        run_threads(thread_counts[t], sem_worker, &s);
        int v;
        ASSERT_EQ(sem_getvalue(&s.s, &v), 0);
        ASSERT_EQ(v, PERMITS);
        ASSERT_EQ(sem_destroy(&s.s), 0);
    }
}

/* ---- broadcast chains among timed-out and cancelled waiters ---------------- */

struct chain {
    pthread_mutex_t m;
    pthread_cond_t c;
    unsigned generation;
    atomic_uint finished;
    atomic_int cleanup_held, cleanups;
    uint64_t rounds;
};

static void *chain_waiter(void *p)
{
    struct worker *w = p;
    struct chain *s = w->shared;
    uint64_t rng = test_rng_seed(w->id);
    for (uint64_t i = 0; i < s->rounds; i++) {
        ASSERT_EQ(pthread_mutex_lock(&s->m), 0);
        unsigned g = s->generation;
        while (s->generation == g) {
            if (test_rng_below(&rng, 3) == 0) {
                struct timespec at = rt_in(test_rng_below(&rng, 300000));
                int r = pthread_cond_timedwait(&s->c, &s->m, &at);
                ASSERT_TRUE(r == 0 || r == ETIMEDOUT);
                if (r == ETIMEDOUT && test_rng_below(&rng, 2))
                    break; /* gives up on this round */
            } else {
                ASSERT_EQ(pthread_cond_wait(&s->c, &s->m), 0);
            }
        }
        ASSERT_EQ(pthread_mutex_unlock(&s->m), 0);
    }
    atomic_fetch_add(&s->finished, 1);
    return NULL;
}

static void chain_victim_cleanup(void *p)
{
    struct chain *s = p;
    if (pthread_mutex_trylock(&s->m) == EBUSY) /* held by this thread again */
        atomic_fetch_add(&s->cleanup_held, 1);
    atomic_fetch_add(&s->cleanups, 1);
    pthread_mutex_unlock(&s->m);
}

static void *chain_victim(void *p)
{
    struct chain *s = p;
    pthread_mutex_lock(&s->m);
    pthread_cleanup_push(chain_victim_cleanup, s);
    for (;;)
        pthread_cond_wait(&s->c, &s->m); /* until cancelled */
    pthread_cleanup_pop(0);
    return NULL;
}

TEST(cond_broadcast_reaches_everyone_among_timeouts_and_cancellations)
{
    for (size_t t = 0; t < sizeof thread_counts / sizeof thread_counts[0]; t++) {
        unsigned n = thread_counts[t];
        struct chain s = {.m = PTHREAD_MUTEX_INITIALIZER,
                          .c = PTHREAD_COND_INITIALIZER,
                          .rounds = test_scaled(300)};
        struct worker w[16];
        for (unsigned i = 0; i < n; i++)
            w[i] = (struct worker){i, n, &s};
        test_threads_t *waiters = test_threads_start(n, chain_waiter, w, sizeof w[0]);
        uint64_t rng = test_rng_seed(100 + n);
        int victims = 0;
        while (atomic_load(&s.finished) < n) {
            pthread_t v;
            bool cancel = test_rng_below(&rng, 8) == 0;
            if (cancel)
                ASSERT_EQ(pthread_create(&v, NULL, chain_victim, &s), 0);
            ASSERT_EQ(pthread_mutex_lock(&s.m), 0);
            s.generation++;
            if (test_rng_below(&rng, 4) == 0)
                pthread_cond_signal(&s.c);
            else
                pthread_cond_broadcast(&s.c);
            ASSERT_EQ(pthread_mutex_unlock(&s.m), 0);
            if (cancel) {
                test_sleep_ns(test_rng_below(&rng, 200000));
                ASSERT_EQ(pthread_cancel(v), 0);
                void *r;
                ASSERT_EQ(pthread_join(v, &r), 0);
                ASSERT_TRUE(r == PTHREAD_CANCELED);
                victims++;
            } else {
                sched_yield();
            }
        }
        test_threads_join(waiters);
        ASSERT_EQ(atomic_load(&s.cleanups), victims);
        ASSERT_EQ(atomic_load(&s.cleanup_held), victims);
        ASSERT_EQ(pthread_cond_destroy(&s.c), 0);
    }
}

static const test_case_t tests[] = {
    TEST_ENTRY(mutex_kinds_exclude_under_lock_trylock_and_timedlock),
    TEST_ENTRY(cond_queue_delivers_every_item_once),
    TEST_ENTRY(rwlock_readers_and_writers_exclude_with_read_reentry),
    TEST_ENTRY(sem_never_admits_more_than_its_permits),
    TEST_ENTRY(cond_broadcast_reaches_everyone_among_timeouts_and_cancellations),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
