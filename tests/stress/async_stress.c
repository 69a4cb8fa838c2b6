/* tests/stress/async_stress.c: asynchronous acquisitions under many threads
 * and tasks, mixed with blocking callers.
 *
 * Oracles (tests/TESTING.md): permits (a shared "inside" counter never exceeds
 * the semaphore's permits; at the end the count is the initial one),
 * mutual exclusion (plain increments inside the critical section; the
 * final total equals the holds counted by their takers) and reader/writer
 * exclusion, while acquisitions are cancelled, timed out, given deadlines
 * by park_task_cancel_at and dropped at random moments. Each settled
 * acquisition either holds (and is released by its taker) or holds
 * nothing; a lost or duplicated permit shows in the final state. Loops are
 * bounded by iteration counts (PARK_STRESS_SCALE) and by the watchdog. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include <park/park.h>
#include <park/pool.h>
#include <park/task.h>

#include "wait/wait.h" /* white box: park__wait_count */

#include "test.h"

#define THREADS 4
#define CHAINS 3
#define ITERS 20000
#define CHAIN_ROUNDS 5000
#define MAX_SPIN 2000
#define MAX_DEADLINE_NS 50000u /* deadlines 0 to 50 us ahead */

static park_pool_t *pool_new(unsigned threads)
{
    park_pool_t *pool = NULL;
    park_pool_config_t cfg = {.threads = threads};
    ASSERT_EQ(park_pool_create(&pool, &cfg), 0);
    return pool;
}

/* Lines the threads of a test up, so that their loops overlap. */
static pthread_barrier_t start_line;

static test_threads_t *start_threads(void *(*fn)(void *), void *args, size_t arg_size)
{
    pthread_barrier_init(&start_line, NULL, THREADS);
    return test_threads_start(THREADS, fn, args, arg_size);
}

static void join_threads(test_threads_t *t)
{
    test_threads_join(t);
    pthread_barrier_destroy(&start_line);
}

static void spin(uint64_t *rng)
{
    for (volatile uint32_t k = test_rng_below(rng, MAX_SPIN); k > 0; k--) {
    }
}

static park_time_t near_deadline(uint64_t *rng)
{
    return park_deadline_in(test_rng_below(rng, MAX_DEADLINE_NS));
}

/* How a taker settles the task of an acquisition. */
enum settle {
    SETTLE_WAIT,      /* wait for it */
    SETTLE_CANCEL,    /* cancel it after a random while, then read it */
    SETTLE_CANCEL_AT, /* arm a near deadline on it, then wait */
    SETTLE_DROP,      /* drop it after a random while, unless already complete */
    SETTLE_COUNT
};

/* Settles and releases t: true if it holds the primitive (the caller then
 * releases the hold), false if it holds nothing. `timed` acquisitions may
 * complete with ETIMEDOUT. */
static bool settle(park_task_t *t, enum settle how, bool timed, uint64_t *rng)
{
    ASSERT_TRUE(t != NULL);
    int rc, r;
    bool holds = false;
    switch (how) {
    case SETTLE_WAIT:
        r = park_task_wait(t, NULL);
        holds = r == 0;
        if (!holds && !(timed && r == ETIMEDOUT))
            test_fail(__FILE__, __LINE__, "an acquisition completed with %d", r);
        break;
    case SETTLE_CANCEL:
        spin(rng);
        rc = park_task_cancel(t);
        r = park_task_wait(t, NULL);
        if (rc == 0 && r != ECANCELED)
            test_fail(__FILE__, __LINE__, "a cancelled acquisition completed with %d", r);
        if (rc != 0 && rc != EALREADY)
            test_fail(__FILE__, __LINE__, "cancel returned %d", rc);
        holds = r == 0;
        if (rc == EALREADY && !holds && !(timed && r == ETIMEDOUT))
            test_fail(__FILE__, __LINE__, "an acquisition completed with %d", r);
        break;
    case SETTLE_CANCEL_AT:
        rc = park_task_cancel_at(t, near_deadline(rng));
        if (rc != 0 && rc != EALREADY)
            test_fail(__FILE__, __LINE__, "cancel_at returned %d", rc);
        r = park_task_wait(t, NULL);
        holds = r == 0;
        if (!holds && r != ETIMEDOUT)
            test_fail(__FILE__, __LINE__, "an acquisition completed with %d", r);
        break;
    case SETTLE_DROP:
        if (park_task_done(t)) { /* complete at once: seen, so the taker's */
            r = park_task_result(t, NULL);
            holds = r == 0;
            if (!holds && !(timed && r == ETIMEDOUT))
                test_fail(__FILE__, __LINE__, "an acquisition completed with %d", r);
        } else {
            spin(rng); /* dropped unseen: cancelled, or what it got goes back */
        }
        break;
    default:
        test_fail(__FILE__, __LINE__, "bad settle");
    }
    park_task_release(t);
    return holds;
}

/* ---- semaphore of 3 --------------------------------------------------------------- */

#define PERMITS 3

struct sem_shared {
    park_sem_t s;
    park_pool_t *pool;
    atomic_int inside;
    atomic_int worst;
    atomic_ulong holds;
    atomic_int chains_left;
};

struct sem_user {
    struct sem_shared *sh;
    uint64_t rng;
    int rounds; /* chains */
};

static void sem_enter(struct sem_shared *sh, uint64_t *rng)
{
    int in = atomic_fetch_add(&sh->inside, 1) + 1;
    if (in > PERMITS)
        test_fail(__FILE__, __LINE__, "%d holders of a semaphore of %d", in, PERMITS);
    int worst = atomic_load(&sh->worst);
    while (in > worst && !atomic_compare_exchange_weak(&sh->worst, &worst, in)) {
    }
    if (test_rng_below(rng, 16) == 0)
        sched_yield();
    atomic_fetch_sub(&sh->inside, 1);
    atomic_fetch_add(&sh->holds, 1);
    if (park_sem_release(&sh->s, 1) != 0)
        test_fail(__FILE__, __LINE__, "release of a held permit failed");
}

static bool sem_take(struct sem_shared *sh, uint64_t *rng)
{
    switch (test_rng_below(rng, 6)) {
    case 0:
        park_sem_acquire(&sh->s);
        return true;
    case 1:
        return park_sem_acquire_until(&sh->s, near_deadline(rng)) == 0;
    case 2:
        return park_sem_try_acquire(&sh->s);
    case 3:
    case 4:
        return settle(park_sem_acquire_async(&sh->s, sh->pool), test_rng_below(rng, SETTLE_COUNT),
                      false, rng);
    default:
        return settle(park_sem_acquire_async_until(&sh->s, sh->pool, near_deadline(rng)),
                      test_rng_below(rng, SETTLE_COUNT), true, rng);
    }
}

static void *sem_thread(void *arg)
{
    struct sem_user *u = arg;
    pthread_barrier_wait(&start_line);
    for (uint64_t i = test_scaled(ITERS); i > 0; i--)
        if (sem_take(u->sh, &u->rng))
            sem_enter(u->sh, &u->rng);
    return NULL;
}

static void sem_chain_step(park_task_t *done, void *arg)
{
    struct sem_user *u = arg;
    int r = park_task_result(done, NULL);
    if (r == 0)
        sem_enter(u->sh, &u->rng);
    else if (r != ETIMEDOUT)
        test_fail(__FILE__, __LINE__, "a chained acquisition completed with %d", r);
    if (--u->rounds == 0) {
        atomic_fetch_sub(&u->sh->chains_left, 1);
        return;
    }
    park_task_t *t =
        test_rng_below(&u->rng, 2)
            ? park_sem_acquire_async(&u->sh->s, u->sh->pool)
            : park_sem_acquire_async_until(&u->sh->s, u->sh->pool, near_deadline(&u->rng));
    ASSERT_TRUE(t != NULL);
    ASSERT_EQ(park_task_then(t, u->sh->pool, sem_chain_step, u), 0);
    park_task_release(t);
}

TEST(sem_async_never_admits_more_than_its_permits_and_conserves_them)
{
    struct sem_shared sh = {.s = PARK_SEM_INIT(PERMITS, PERMITS), .pool = pool_new(2)};
    atomic_store(&sh.chains_left, CHAINS);
    struct sem_user chains[CHAINS], users[THREADS];
    for (int i = 0; i < CHAINS; i++) {
        chains[i] = (struct sem_user){&sh, test_rng_seed(100 + i), (int)test_scaled(CHAIN_ROUNDS)};
        park_task_t *t = park_sem_acquire_async(&sh.s, sh.pool);
        ASSERT_TRUE(t != NULL);
        ASSERT_EQ(park_task_then(t, sh.pool, sem_chain_step, &chains[i]), 0);
        park_task_release(t);
    }
    for (int i = 0; i < THREADS; i++)
        users[i] = (struct sem_user){&sh, test_rng_seed(i), 0};
    join_threads(start_threads(sem_thread, users, sizeof users[0]));
    AWAIT(atomic_load(&sh.chains_left) == 0);
    park_pool_destroy(sh.pool);
    ASSERT_LE(atomic_load(&sh.worst), PERMITS);
    ASSERT_GE(atomic_load(&sh.worst), 1);
    ASSERT_EQ(park_sem_count(&sh.s), PERMITS);
    ASSERT_EQ(park__wait_count(&sh.s), 0);
    ASSERT_EQ(park_sem_destroy(&sh.s), 0);
    printf("     %lu holds, at most %d inside\n", (unsigned long)atomic_load(&sh.holds),
           atomic_load(&sh.worst));
}

/* ---- mutex -------------------------------------------------------------------------- */

struct mx_shared {
    park_mutex_t m;
    park_pool_t *pool;
    volatile unsigned inside; /* guarded by m: plain increments */
    unsigned long total;      /* guarded by m */
    atomic_ulong holds;       /* counted by the takers */
    atomic_int chains_left;
};

struct mx_user {
    struct mx_shared *sh;
    uint64_t rng;
    int rounds;
};

static void mx_enter(struct mx_shared *sh, uint64_t *rng)
{
    for (int i = 0; i < 10; i++)
        sh->inside++;
    if (test_rng_below(rng, 32) == 0)
        sched_yield();
    if (sh->inside != 10)
        test_fail(__FILE__, __LINE__, "two holders of the mutex: inside = %u", sh->inside);
    for (int i = 0; i < 10; i++)
        sh->inside--;
    sh->total++;
    atomic_fetch_add(&sh->holds, 1);
    park_mutex_unlock(&sh->m);
}

static bool mx_take(struct mx_shared *sh, uint64_t *rng)
{
    switch (test_rng_below(rng, 5)) {
    case 0:
        park_mutex_lock(&sh->m);
        return true;
    case 1:
        return park_mutex_try_lock(&sh->m);
    case 2:
        return park_mutex_lock_until(&sh->m, near_deadline(rng)) == 0;
    default:
        return settle(park_mutex_lock_async(&sh->m, sh->pool), test_rng_below(rng, SETTLE_COUNT),
                      false, rng);
    }
}

static void *mx_thread(void *arg)
{
    struct mx_user *u = arg;
    pthread_barrier_wait(&start_line);
    for (uint64_t i = test_scaled(ITERS); i > 0; i--)
        if (mx_take(u->sh, &u->rng))
            mx_enter(u->sh, &u->rng);
    return NULL;
}

static void mx_chain_step(park_task_t *done, void *arg)
{
    struct mx_user *u = arg;
    ASSERT_EQ(park_task_result(done, NULL), 0);
    mx_enter(u->sh, &u->rng); /* unlocks on a worker */
    if (--u->rounds == 0) {
        atomic_fetch_sub(&u->sh->chains_left, 1);
        return;
    }
    park_task_t *t = park_mutex_lock_async(&u->sh->m, u->sh->pool);
    ASSERT_TRUE(t != NULL);
    ASSERT_EQ(park_task_then(t, u->sh->pool, mx_chain_step, u), 0);
    park_task_release(t);
}

TEST(mutex_async_and_blocking_lockers_exclude_each_other_under_cancels)
{
    struct mx_shared sh = {.m = PARK_MUTEX_INIT, .pool = pool_new(2)};
    atomic_store(&sh.chains_left, CHAINS);
    struct mx_user chains[CHAINS], users[THREADS];
    for (int i = 0; i < CHAINS; i++) {
        chains[i] = (struct mx_user){&sh, test_rng_seed(200 + i), (int)test_scaled(CHAIN_ROUNDS)};
        park_task_t *t = park_mutex_lock_async(&sh.m, sh.pool);
        ASSERT_TRUE(t != NULL);
        ASSERT_EQ(park_task_then(t, sh.pool, mx_chain_step, &chains[i]), 0);
        park_task_release(t);
    }
    for (int i = 0; i < THREADS; i++)
        users[i] = (struct mx_user){&sh, test_rng_seed(20 + i), 0};
    join_threads(start_threads(mx_thread, users, sizeof users[0]));
    AWAIT(atomic_load(&sh.chains_left) == 0);
    park_pool_destroy(sh.pool);
    ASSERT_TRUE(park_mutex_try_lock(&sh.m));
    ASSERT_EQ(sh.total, atomic_load(&sh.holds));
    park_mutex_unlock(&sh.m);
    ASSERT_EQ(park__wait_count(&sh.m), 0);
    ASSERT_EQ(park_mutex_destroy(&sh.m), 0);
    printf("     %lu holds\n", sh.total);
}

/* ---- rwlock ------------------------------------------------------------------------- */

struct rw_shared {
    park_rwlock_t rw;
    park_pool_t *pool;
    atomic_int readers;
    atomic_int writers;
    unsigned data; /* written under write holds only */
    atomic_ulong writes;
    atomic_ulong reads;
    atomic_int chains_left;
};

struct rw_user {
    struct rw_shared *sh;
    uint64_t rng;
    int rounds;
    bool write; /* chains */
};

static void rw_enter(struct rw_shared *sh, bool write, uint64_t *rng)
{
    if (write) {
        if (atomic_fetch_add(&sh->writers, 1) != 0 || atomic_load(&sh->readers) != 0)
            test_fail(__FILE__, __LINE__, "a writer is not alone");
        for (int i = 0; i < 10; i++)
            sh->data++;
        if (test_rng_below(rng, 32) == 0)
            sched_yield();
        atomic_fetch_sub(&sh->writers, 1);
        atomic_fetch_add(&sh->writes, 1);
        park_rwlock_write_unlock(&sh->rw);
    } else {
        atomic_fetch_add(&sh->readers, 1);
        if (atomic_load(&sh->writers) != 0)
            test_fail(__FILE__, __LINE__, "a reader is inside with a writer");
        if (sh->data % 10 != 0)
            test_fail(__FILE__, __LINE__, "a reader saw a write half done");
        if (test_rng_below(rng, 32) == 0)
            sched_yield();
        atomic_fetch_sub(&sh->readers, 1);
        atomic_fetch_add(&sh->reads, 1);
        park_rwlock_read_unlock(&sh->rw);
    }
}

/* Takes a hold (write or read, chosen here): true if held. */
static bool rw_take(struct rw_shared *sh, uint64_t *rng, bool *write)
{
    *write = test_rng_below(rng, 3) == 0;
    switch (test_rng_below(rng, 4)) {
    case 0:
        if (*write)
            park_rwlock_write_lock(&sh->rw);
        else
            park_rwlock_read_lock(&sh->rw);
        return true;
    case 1:
        return *write ? park_rwlock_write_lock_until(&sh->rw, near_deadline(rng)) == 0
                      : park_rwlock_read_lock_until(&sh->rw, near_deadline(rng)) == 0;
    default:
        return settle(*write ? park_rwlock_write_lock_async(&sh->rw, sh->pool)
                             : park_rwlock_read_lock_async(&sh->rw, sh->pool),
                      test_rng_below(rng, SETTLE_COUNT), false, rng);
    }
}

static void *rw_thread(void *arg)
{
    struct rw_user *u = arg;
    pthread_barrier_wait(&start_line);
    for (uint64_t i = test_scaled(ITERS); i > 0; i--) {
        bool write;
        if (rw_take(u->sh, &u->rng, &write))
            rw_enter(u->sh, write, &u->rng);
    }
    return NULL;
}

static void rw_chain_step(park_task_t *done, void *arg)
{
    struct rw_user *u = arg;
    ASSERT_EQ(park_task_result(done, NULL), 0);
    rw_enter(u->sh, u->write, &u->rng);
    if (--u->rounds == 0) {
        atomic_fetch_sub(&u->sh->chains_left, 1);
        return;
    }
    park_task_t *t = u->write ? park_rwlock_write_lock_async(&u->sh->rw, u->sh->pool)
                              : park_rwlock_read_lock_async(&u->sh->rw, u->sh->pool);
    ASSERT_TRUE(t != NULL);
    ASSERT_EQ(park_task_then(t, u->sh->pool, rw_chain_step, u), 0);
    park_task_release(t);
}

TEST(rwlock_async_and_blocking_holders_exclude_as_they_should_under_cancels)
{
    struct rw_shared sh = {.rw = PARK_RWLOCK_INIT, .pool = pool_new(2)};
    atomic_store(&sh.chains_left, CHAINS);
    struct rw_user chains[CHAINS], users[THREADS];
    for (int i = 0; i < CHAINS; i++) {
        chains[i] =
            (struct rw_user){&sh, test_rng_seed(300 + i), (int)test_scaled(CHAIN_ROUNDS), i == 0};
        park_task_t *t = chains[i].write ? park_rwlock_write_lock_async(&sh.rw, sh.pool)
                                         : park_rwlock_read_lock_async(&sh.rw, sh.pool);
        ASSERT_TRUE(t != NULL);
        ASSERT_EQ(park_task_then(t, sh.pool, rw_chain_step, &chains[i]), 0);
        park_task_release(t);
    }
    for (int i = 0; i < THREADS; i++)
        users[i] = (struct rw_user){&sh, test_rng_seed(30 + i), 0, false};
    join_threads(start_threads(rw_thread, users, sizeof users[0]));
    AWAIT(atomic_load(&sh.chains_left) == 0);
    park_pool_destroy(sh.pool);
    ASSERT_TRUE(park_rwlock_try_write_lock(&sh.rw));
    ASSERT_EQ(sh.data, 10u * atomic_load(&sh.writes));
    park_rwlock_write_unlock(&sh.rw);
    ASSERT_EQ(park__wait_count(&sh.rw), 0);
    ASSERT_EQ(park_rwlock_destroy(&sh.rw), 0);
    printf("     %lu writes, %lu reads\n", (unsigned long)atomic_load(&sh.writes),
           (unsigned long)atomic_load(&sh.reads));
}

/* ---- dropping the last two references at once ----------------------------------- */

/* A pending acquisition with two references, dropped by two threads at
 * the same moment: whichever drop is the last must cancel it, so the next
 * release goes to the count. */
#define DROP_RACES 10000

struct drop_race {
    park_sem_t s;
    park_task_t *t;
    atomic_uint round; /* round k starts when it reaches k + 1 */
    atomic_uint dropped;
};

static void *drop_racer(void *arg)
{
    struct drop_race *r = arg;
    uint64_t rng = test_rng_seed(40);
    for (unsigned k = 0; k < DROP_RACES; k++) {
        for (unsigned n = 0; atomic_load(&r->round) != k + 1; n++)
            if (n > 1000)
                sched_yield();
        park_task_t *t = r->t;
        for (volatile uint32_t i = test_rng_below(&rng, 64); i > 0; i--) {
        }
        park_task_release(t);
        atomic_store(&r->dropped, k + 1);
    }
    return NULL;
}

TEST(sem_async_concurrent_drops_of_a_pending_acquisition_cancel_it)
{
    park_pool_t *pool = pool_new(1);
    struct drop_race r = {PARK_SEM_INIT(0, 1), NULL, 0, 0};
    test_threads_t *racer = test_threads_start(1, drop_racer, &r, 0);
    uint64_t rng = test_rng_seed(41);
    for (unsigned k = 0; k < DROP_RACES; k++) {
        park_task_t *t = park_sem_acquire_async(&r.s, pool);
        ASSERT_TRUE(t != NULL);
        ASSERT_FALSE(park_task_done(t));
        r.t = park_task_retain(t);
        atomic_store(&r.round, k + 1);
        for (volatile uint32_t i = test_rng_below(&rng, 64); i > 0; i--) {
        }
        park_task_release(t);
        for (unsigned n = 0; atomic_load(&r.dropped) != k + 1; n++)
            if (n > 1000)
                sched_yield();
        ASSERT_EQ(park_sem_release(&r.s, 1), 0);
        if (park_sem_count(&r.s) != 1)
            test_fail(__FILE__, __LINE__,
                      "round %u: the permit went to an acquisition dropped by both holders", k);
        ASSERT_TRUE(park_sem_try_acquire(&r.s));
    }
    test_threads_join(racer);
    ASSERT_EQ(park__wait_count(&r.s), 0);
    park_pool_destroy(pool);
}

static const test_case_t tests[] = {
    TEST_ENTRY(sem_async_never_admits_more_than_its_permits_and_conserves_them),
    TEST_ENTRY(mutex_async_and_blocking_lockers_exclude_each_other_under_cancels),
    TEST_ENTRY(rwlock_async_and_blocking_holders_exclude_as_they_should_under_cancels),
    TEST_ENTRY(sem_async_concurrent_drops_of_a_pending_acquisition_cancel_it),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
