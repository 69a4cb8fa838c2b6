/* tests/unit/fork_test.c: fork() while threads wait in park's primitives.
 *
 * The child behaves as under glibc: a lock that any thread held at the fork
 * stays held in the child; free ones (and those the forking thread releases
 * in the child) are usable, also contended by the child's own threads, even
 * though the waiters queued at the fork, and any waiter woken and on its way,
 * do not exist there. Each child runs under alarm(): a hang kills it and
 * fails the test. The parent carries on: its waiters get what they waited
 * for. Under ThreadSanitizer a child of a threaded process may not start
 * threads, and under AddressSanitizer (GCC 12's runtime) a child's
 * allocation may wait for ever for an allocator lock that a parent thread
 * held at the fork (seen in the child threads' calloc), so under either the
 * children skip their contended part (and say so); the debug and release
 * runs cover it. */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include <park/park.h>

#include "test.h"
#include "wait/wait.h"

#if defined(__SANITIZE_THREAD__)
#define TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TEST_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(TEST_TSAN)
#define TEST_ASAN 1
#endif
#if defined(TEST_TSAN) || defined(TEST_ASAN)
static const bool child_threads = false;
#else
static const bool child_threads = true;
#endif

#define WAITERS 3
#define CHILD_THREADS 3
#define CHILD_ITERS 3000
#define CHILD_LIMIT_S 30 /* a child still running after this hung */
#define SHORT_NS (20 * (uint64_t)MS)

/* Runs fn(arg) in a forked child under alarm(): fails if it fails, dies of
 * a signal (SIGALRM: it hung) or exits non-zero. */
static void in_child(void (*fn)(void *arg), void *arg)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        alarm(CHILD_LIMIT_S);
        fn(arg);
        _exit(0);
    }
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status))
        test_fail(__FILE__, __LINE__, "the child died of signal %d%s", WTERMSIG(status),
                  WTERMSIG(status) == SIGALRM ? " (it hung)" : "");
    ASSERT_EQ(WEXITSTATUS(status), 0);
}

static bool skip_child_threads(void)
{
    return !child_threads;
}

/* ---- mutex ------------------------------------------------------------------ */

static park_mutex_t mutex = PARK_MUTEX_INIT;
static park_mutex_t other_mutex = PARK_MUTEX_INIT;
static long counter;
static atomic_int got;

static void *mutex_waiter(void *arg)
{
    (void)arg;
    park_mutex_lock(&mutex);
    atomic_fetch_add(&got, 1);
    park_mutex_unlock(&mutex);
    return NULL;
}

static void *mutex_contender(void *arg)
{
    park_mutex_t *m = *(park_mutex_t **)arg;
    for (int i = 0; i < CHILD_ITERS; i++) {
        park_mutex_lock(m);
        for (int k = 0; k < 10; k++)
            counter++;
        counter -= 9;
        park_mutex_unlock(m);
    }
    return NULL;
}

/* In a child: m is free; it works alone and contended (counter oracle). */
static void child_mutex_usable(park_mutex_t *m)
{
    ASSERT_TRUE(park_mutex_try_lock(m));
    park_mutex_unlock(m);
    park_mutex_lock(m);
    park_mutex_unlock(m);
    ASSERT_EQ(park_mutex_lock_until(m, park_deadline_in(SHORT_NS)), 0);
    park_mutex_unlock(m);
    if (skip_child_threads())
        return;
    counter = 0;
    park_mutex_t *args[CHILD_THREADS];
    for (int i = 0; i < CHILD_THREADS; i++)
        args[i] = m;
    test_threads_join(test_threads_start(CHILD_THREADS, mutex_contender, args, sizeof args[0]));
    ASSERT_EQ(counter, (long)CHILD_THREADS * CHILD_ITERS);
    ASSERT_EQ(park_mutex_destroy(m), 0);
}

static void child_mutex_held_by_me(void *arg)
{
    (void)arg;
    ASSERT_FALSE(park_mutex_try_lock(&mutex)); /* we hold it here too */
    /* The parent's waiters were inside lock_wait; none is here. */
    ASSERT_EQ(park__waiting(&mutex), 0u);
    child_mutex_usable(&other_mutex);
    park_mutex_unlock(&mutex); /* its waiters are not here: it falls free */
    child_mutex_usable(&mutex);
}

TEST(mutex_held_by_forking_thread_with_waiters_queued)
{
    atomic_store(&got, 0);
    park_mutex_lock(&mutex);
    test_threads_t *t = test_threads_start(WAITERS, mutex_waiter, NULL, 0);
    AWAIT(park__wait_count(&mutex) == WAITERS);
    in_child(child_mutex_held_by_me, NULL);
    park_mutex_unlock(&mutex);
    test_threads_join(t);
    ASSERT_EQ(atomic_load(&got), WAITERS);
}

static atomic_int holding, release_hold;

static void *mutex_holder(void *arg)
{
    (void)arg;
    park_mutex_lock(&mutex);
    atomic_store(&holding, 1);
    AWAIT(atomic_load(&release_hold));
    park_mutex_unlock(&mutex);
    return NULL;
}

static void child_mutex_held_by_other(void *arg)
{
    (void)arg;
    ASSERT_FALSE(park_mutex_try_lock(&mutex));
    ASSERT_EQ(park_mutex_lock_until(&mutex, park_deadline_in(SHORT_NS)), ETIMEDOUT);
    ASSERT_FALSE(park_mutex_try_lock(&mutex));
    ASSERT_EQ(park_mutex_destroy(&mutex), EBUSY);
    child_mutex_usable(&other_mutex);
}

TEST(mutex_held_by_another_thread_with_waiters_queued)
{
    atomic_store(&got, 0);
    atomic_store(&holding, 0);
    atomic_store(&release_hold, 0);
    test_threads_t *h = test_threads_start(1, mutex_holder, NULL, 0);
    AWAIT(atomic_load(&holding));
    test_threads_t *t = test_threads_start(WAITERS, mutex_waiter, NULL, 0);
    AWAIT(park__wait_count(&mutex) == WAITERS);
    in_child(child_mutex_held_by_other, NULL);
    atomic_store(&release_hold, 1);
    test_threads_join(h);
    test_threads_join(t);
    ASSERT_EQ(atomic_load(&got), WAITERS);
}

static atomic_int churn_stop;

static void *mutex_churner(void *arg)
{
    (void)arg;
    while (!atomic_load(&churn_stop)) {
        park_mutex_lock(&mutex);
        atomic_fetch_add(&got, 1);
        park_mutex_unlock(&mutex);
    }
    return NULL;
}

/* Forked at a random point of the churn: the mutex may be held (by a thread
 * that is not here: it stays held) or free, with waiters queued, a woken
 * waiter on its way, or nothing. */
static void child_mutex_after_churn(void *arg)
{
    (void)arg;
    if (!park_mutex_try_lock(&mutex)) {
        ASSERT_EQ(park_mutex_lock_until(&mutex, park_deadline_in(SHORT_NS)), ETIMEDOUT);
        child_mutex_usable(&other_mutex);
        return;
    }
    park_mutex_unlock(&mutex);
    child_mutex_usable(&mutex);
}

TEST(mutex_forked_while_threads_contend_it)
{
    atomic_store(&churn_stop, 0);
    test_threads_t *t = test_threads_start(WAITERS + 1, mutex_churner, NULL, 0);
    for (int i = 0; i < 40; i++) {
        in_child(child_mutex_after_churn, NULL);
        test_sleep_ns(200 * US);
    }
    atomic_store(&churn_stop, 1);
    test_threads_join(t);
    ASSERT_TRUE(park_mutex_try_lock(&mutex));
    park_mutex_unlock(&mutex);
}

static park_pool_t *pool;

static void child_mutex_task_queued(void *arg)
{
    /* The task's waiter is gone with the queue: cancelling it finds
     * nothing to take out, as if it had been granted. */
    ASSERT_EQ(park_task_cancel(arg), EALREADY);
    ASSERT_FALSE(park_mutex_try_lock(&mutex));
    park_mutex_unlock(&mutex); /* the task queued for it has no pool here */
    child_mutex_usable(&mutex);
}

TEST(mutex_with_a_task_queued_falls_free_in_the_child)
{
    ASSERT_EQ(park_pool_create(&pool, &(park_pool_config_t){.threads = 2}), 0);
    park_mutex_lock(&mutex);
    park_task_t *task = park_mutex_lock_async(&mutex, pool);
    ASSERT_TRUE(task != NULL);
    ASSERT_EQ(park__wait_count(&mutex), 1);
    in_child(child_mutex_task_queued, task);
    park_mutex_unlock(&mutex);
    ASSERT_EQ(park_task_wait(task, NULL), 0); /* the parent's task got it */
    park_task_release(task);
    park_mutex_unlock(&mutex);
    park_pool_destroy(pool);
}

/* ---- semaphore -------------------------------------------------------------- */

static park_sem_t sem;

static void *sem_waiter(void *arg)
{
    (void)arg;
    park_sem_acquire(&sem);
    atomic_fetch_add(&got, 1);
    return NULL;
}

static atomic_int inside;

static void *sem_contender(void *arg)
{
    uint32_t permits = *(uint32_t *)arg;
    for (int i = 0; i < CHILD_ITERS; i++) {
        park_sem_acquire(&sem);
        int in = atomic_fetch_add(&inside, 1) + 1;
        if (in > (int)permits)
            test_fail(__FILE__, __LINE__, "%d inside with %u permits", in, permits);
        atomic_fetch_sub(&inside, 1);
        ASSERT_EQ(park_sem_release(&sem, 1), 0);
    }
    return NULL;
}

/* In a child: the semaphore's free permits (given one if it has none)
 * work alone and contended by more threads than permits. */
static void child_sem_usable(void)
{
    if (park_sem_count(&sem) == 0)
        ASSERT_EQ(park_sem_release(&sem, 1), 0);
    uint32_t permits = park_sem_count(&sem);
    ASSERT_TRUE(park_sem_try_acquire(&sem));
    ASSERT_EQ(park_sem_release(&sem, 1), 0);
    ASSERT_EQ(park_sem_acquire_until(&sem, park_deadline_in(SHORT_NS)), 0);
    ASSERT_EQ(park_sem_release(&sem, 1), 0);
    if (skip_child_threads())
        return;
    uint32_t args[CHILD_THREADS];
    for (int i = 0; i < CHILD_THREADS; i++)
        args[i] = permits;
    test_threads_join(test_threads_start(CHILD_THREADS, sem_contender, args, sizeof args[0]));
    ASSERT_EQ(park_sem_count(&sem), permits);
    ASSERT_EQ(park_sem_destroy(&sem), 0);
}

/* No permit free and waiters queued; the permit's holder is the forking
 * thread (it releases in the child), or a thread that is not there (the
 * child's count stays 0 until it releases one itself). */
static void child_sem_empty_with_waiters(void *arg)
{
    (void)arg;
    ASSERT_FALSE(park_sem_try_acquire(&sem));
    ASSERT_EQ(park_sem_acquire_until(&sem, park_deadline_in(SHORT_NS)), ETIMEDOUT);
    ASSERT_EQ(park_sem_count(&sem), 0);
    ASSERT_EQ(park_sem_release(&sem, 1), 0); /* nobody here to hand it to */
    ASSERT_EQ(park_sem_count(&sem), 1);
    child_sem_usable();
}

static void sem_empty_with_waiters(bool fifo)
{
    atomic_store(&got, 0);
    if (fifo)
        ASSERT_EQ(park_sem_init_fifo(&sem, 0, 4), 0);
    else
        ASSERT_EQ(park_sem_init(&sem, 0, 4), 0);
    test_threads_t *t = test_threads_start(WAITERS, sem_waiter, NULL, 0);
    AWAIT(park__wait_count(&sem) == WAITERS);
    in_child(child_sem_empty_with_waiters, NULL);
    ASSERT_EQ(park_sem_release(&sem, WAITERS), 0);
    test_threads_join(t);
    ASSERT_EQ(atomic_load(&got), WAITERS);
    ASSERT_EQ(park_sem_count(&sem), 0);
}

TEST(sem_with_waiters_queued)
{
    sem_empty_with_waiters(false);
}

TEST(sem_fifo_with_waiters_queued)
{
    sem_empty_with_waiters(true);
}

static void *sem_churner(void *arg)
{
    (void)arg;
    while (!atomic_load(&churn_stop)) {
        park_sem_acquire(&sem);
        park_sem_release(&sem, 1);
    }
    return NULL;
}

/* Forked at a random point: permits held by threads that are not here stay
 * taken; waiters queued or woken and on their way are gone. */
static void child_sem_after_churn(void *arg)
{
    (void)arg;
    child_sem_usable();
}

TEST(sem_forked_while_threads_contend_it)
{
    ASSERT_EQ(park_sem_init(&sem, 2, 4), 0);
    atomic_store(&churn_stop, 0);
    test_threads_t *t = test_threads_start(WAITERS + 2, sem_churner, NULL, 0);
    for (int i = 0; i < 40; i++) {
        in_child(child_sem_after_churn, NULL);
        test_sleep_ns(200 * US);
    }
    atomic_store(&churn_stop, 1);
    test_threads_join(t);
    ASSERT_EQ(park_sem_count(&sem), 2);
}

/* ---- rwlock ----------------------------------------------------------------- */

static park_rwlock_t rw = PARK_RWLOCK_INIT;

static void *rw_reader(void *arg)
{
    (void)arg;
    park_rwlock_read_lock(&rw);
    atomic_fetch_add(&got, 1);
    park_rwlock_read_unlock(&rw);
    return NULL;
}

static void *rw_writer(void *arg)
{
    (void)arg;
    park_rwlock_write_lock(&rw);
    atomic_fetch_add(&got, 1);
    park_rwlock_write_unlock(&rw);
    return NULL;
}

static atomic_int readers_in, writers_in;

static void *rw_contender(void *arg)
{
    uint64_t seed = test_rng_seed(*(unsigned *)arg);
    for (int i = 0; i < CHILD_ITERS; i++) {
        if (test_rng_below(&seed, 4) == 0) {
            park_rwlock_write_lock(&rw);
            ASSERT_EQ(atomic_fetch_add(&writers_in, 1), 0);
            ASSERT_EQ(atomic_load(&readers_in), 0);
            atomic_fetch_sub(&writers_in, 1);
            park_rwlock_write_unlock(&rw);
        } else {
            park_rwlock_read_lock(&rw);
            atomic_fetch_add(&readers_in, 1);
            ASSERT_EQ(atomic_load(&writers_in), 0);
            atomic_fetch_sub(&readers_in, 1);
            park_rwlock_read_unlock(&rw);
        }
    }
    return NULL;
}

/* In a child: the rwlock is free; readers and writers use it. */
static void child_rw_usable(void)
{
    ASSERT_TRUE(park_rwlock_try_write_lock(&rw));
    park_rwlock_write_unlock(&rw);
    ASSERT_TRUE(park_rwlock_try_read_lock(&rw));
    ASSERT_TRUE(park_rwlock_try_read_lock(&rw));
    park_rwlock_read_unlock(&rw);
    park_rwlock_read_unlock(&rw);
    ASSERT_EQ(park_rwlock_write_lock_until(&rw, park_deadline_in(SHORT_NS)), 0);
    park_rwlock_write_unlock(&rw);
    if (skip_child_threads())
        return;
    unsigned args[CHILD_THREADS];
    for (unsigned i = 0; i < CHILD_THREADS; i++)
        args[i] = i;
    test_threads_join(test_threads_start(CHILD_THREADS, rw_contender, args, sizeof args[0]));
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

/* Waits until n readers and writers are queued on rw. */
static test_threads_t *queue_readers_and_writer(test_threads_t **writer)
{
    *writer = test_threads_start(1, rw_writer, NULL, 0);
    AWAIT(park__wait_count(&rw) == 1);
    test_threads_t *readers = test_threads_start(WAITERS, rw_reader, NULL, 0);
    AWAIT(park__wait_count(&rw) == 1 + WAITERS);
    return readers;
}

static void child_rw_write_held_by_me(void *arg)
{
    (void)arg;
    ASSERT_FALSE(park_rwlock_try_read_lock(&rw));
    ASSERT_FALSE(park_rwlock_try_write_lock(&rw));
    park_rwlock_write_unlock(&rw); /* the queued are not here: it falls free */
    child_rw_usable();
}

TEST(rwlock_write_held_by_forking_thread_with_waiters_queued)
{
    atomic_store(&got, 0);
    park_rwlock_write_lock(&rw);
    test_threads_t *w, *r = queue_readers_and_writer(&w);
    in_child(child_rw_write_held_by_me, NULL);
    park_rwlock_write_unlock(&rw);
    test_threads_join(w);
    test_threads_join(r);
    ASSERT_EQ(atomic_load(&got), 1 + WAITERS);
}

static void *rw_read_holder(void *arg)
{
    (void)arg;
    park_rwlock_read_lock(&rw);
    atomic_store(&holding, 1);
    AWAIT(atomic_load(&release_hold));
    park_rwlock_read_unlock(&rw);
    return NULL;
}

static void *rw_write_holder(void *arg)
{
    (void)arg;
    park_rwlock_write_lock(&rw);
    atomic_store(&holding, 1);
    AWAIT(atomic_load(&release_hold));
    park_rwlock_write_unlock(&rw);
    return NULL;
}

/* Read-held by a thread that is not here, with a writer queued (not here
 * either): the hold stays (no writer gets in), and readers enter as they
 * would with no writer waiting. */
static void child_rw_read_held_by_other(void *arg)
{
    (void)arg;
    ASSERT_FALSE(park_rwlock_try_write_lock(&rw));
    ASSERT_EQ(park_rwlock_write_lock_until(&rw, park_deadline_in(SHORT_NS)), ETIMEDOUT);
    ASSERT_EQ(park_rwlock_read_lock_until(&rw, park_deadline_in(LATE_NS)), 0);
    ASSERT_TRUE(park_rwlock_try_read_lock(&rw));
    park_rwlock_read_unlock(&rw);
    park_rwlock_read_unlock(&rw);
    ASSERT_FALSE(park_rwlock_try_write_lock(&rw));
    ASSERT_EQ(park_rwlock_destroy(&rw), EBUSY);
}

static void child_rw_write_held_by_other(void *arg)
{
    (void)arg;
    ASSERT_FALSE(park_rwlock_try_read_lock(&rw));
    ASSERT_FALSE(park_rwlock_try_write_lock(&rw));
    ASSERT_EQ(park_rwlock_read_lock_until(&rw, park_deadline_in(SHORT_NS)), ETIMEDOUT);
    ASSERT_EQ(park_rwlock_write_lock_until(&rw, park_deadline_in(SHORT_NS)), ETIMEDOUT);
    ASSERT_EQ(park_rwlock_destroy(&rw), EBUSY);
}

static void rw_held_by_another_thread(void *(*holder)(void *), void (*child)(void *))
{
    atomic_store(&got, 0);
    atomic_store(&holding, 0);
    atomic_store(&release_hold, 0);
    test_threads_t *h = test_threads_start(1, holder, NULL, 0);
    AWAIT(atomic_load(&holding));
    test_threads_t *w, *r = queue_readers_and_writer(&w);
    in_child(child, NULL);
    atomic_store(&release_hold, 1);
    test_threads_join(h);
    test_threads_join(w);
    test_threads_join(r);
    ASSERT_EQ(atomic_load(&got), 1 + WAITERS);
}

TEST(rwlock_read_held_by_another_thread_with_waiters_queued)
{
    rw_held_by_another_thread(rw_read_holder, child_rw_read_held_by_other);
}

TEST(rwlock_write_held_by_another_thread_with_waiters_queued)
{
    rw_held_by_another_thread(rw_write_holder, child_rw_write_held_by_other);
}

static void *rw_churner(void *arg)
{
    uint64_t seed = test_rng_seed(*(unsigned *)arg);
    while (!atomic_load(&churn_stop)) {
        if (test_rng_below(&seed, 3) == 0) {
            park_rwlock_write_lock(&rw);
            park_rwlock_write_unlock(&rw);
        } else {
            park_rwlock_read_lock(&rw);
            park_rwlock_read_unlock(&rw);
        }
    }
    return NULL;
}

/* Forked at a random point: held by a thread that is not here (a writer or
 * readers: it stays held for writers), or free with any queue state. */
static void child_rw_after_churn(void *arg)
{
    (void)arg;
    /* A free lock may refuse a try at first (queue bits of waiters that
     * are not here); a wait repairs them. */
    if (park_rwlock_write_lock_until(&rw, park_deadline_in(SHORT_NS)) != 0) {
        ASSERT_FALSE(park_rwlock_try_write_lock(&rw));
        return;
    }
    park_rwlock_write_unlock(&rw);
    child_rw_usable();
}

TEST(rwlock_forked_while_threads_contend_it)
{
    atomic_store(&churn_stop, 0);
    unsigned args[WAITERS + 1];
    for (unsigned i = 0; i < WAITERS + 1; i++)
        args[i] = i;
    test_threads_t *t = test_threads_start(WAITERS + 1, rw_churner, args, sizeof args[0]);
    for (int i = 0; i < 40; i++) {
        in_child(child_rw_after_churn, NULL);
        test_sleep_ns(200 * US);
    }
    atomic_store(&churn_stop, 1);
    test_threads_join(t);
    ASSERT_EQ(park_rwlock_destroy(&rw), 0);
}

/* ---- lazy and once ------------------------------------------------------------ */

static atomic_int runs, in_run, end_run_now;
static pid_t parent_pid;

/* An initialiser that, in the parent, stays inside until told to end. */
static int slow_init(void *arg, void **value)
{
    (void)arg;
    atomic_fetch_add(&runs, 1);
    if (getpid() == parent_pid) {
        atomic_store(&in_run, 1);
        AWAIT(atomic_load(&end_run_now));
    }
    *value = (void *)(uintptr_t)getpid();
    return 0;
}

static park_lazy_t lazy;

static void *lazy_getter(void *arg)
{
    (void)arg;
    void *v;
    ASSERT_EQ(park_lazy_get(&lazy, &v), 0);
    ASSERT_EQ((uintptr_t)v, (uintptr_t)parent_pid);
    atomic_fetch_add(&got, 1);
    return NULL;
}

/* The run (and its queued callers) belong to threads that are not here:
 * the child's first caller runs the initialiser afresh. */
static void child_lazy_run_elsewhere(void *arg)
{
    (void)arg;
    int before = atomic_load(&runs);
    void *v;
    ASSERT_EQ(park_lazy_get_until(&lazy, &v, park_deadline_in(LATE_NS)), 0);
    ASSERT_EQ((uintptr_t)v, (uintptr_t)getpid());
    ASSERT_EQ(atomic_load(&runs), before + 1);
    ASSERT_EQ(park_lazy_get(&lazy, &v), 0); /* ready now: no further run */
    ASSERT_EQ(atomic_load(&runs), before + 1);
}

static void *lazy_runner(void *arg)
{
    (void)arg;
    void *v;
    ASSERT_EQ(park_lazy_get(&lazy, &v), 0);
    return NULL;
}

TEST(lazy_run_by_another_thread_with_callers_queued_runs_again_in_the_child)
{
    parent_pid = getpid();
    atomic_store(&runs, 0);
    atomic_store(&in_run, 0);
    atomic_store(&end_run_now, 0);
    atomic_store(&got, 0);
    park_lazy_init(&lazy, slow_init, NULL);
    test_threads_t *r = test_threads_start(1, lazy_runner, NULL, 0);
    AWAIT(atomic_load(&in_run));
    test_threads_t *t = test_threads_start(WAITERS, lazy_getter, NULL, 0);
    AWAIT(park__wait_count(&lazy.state_) == WAITERS);
    in_child(child_lazy_run_elsewhere, NULL);
    atomic_store(&end_run_now, 1);
    test_threads_join(r);
    test_threads_join(t);
    ASSERT_EQ(atomic_load(&got), WAITERS);
    ASSERT_EQ(atomic_load(&runs), 1);
}

static void child_in_own_run(void *arg)
{
    (void)arg;
    /* Still inside the run the forking thread was making: its own run. */
    void *v;
    ASSERT_EQ(park_lazy_get_until(&lazy, &v, PARK_FOREVER), EDEADLK);
}

/* The forking thread forks from inside its own initialiser: the child goes
 * on with that run, which ends normally (one run, its value). */
static int forking_init(void *arg, void **value)
{
    (void)arg;
    atomic_fetch_add(&runs, 1);
    if (getpid() == parent_pid) {
        in_child(child_in_own_run, NULL);
        fflush(stderr);
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            alarm(CHILD_LIMIT_S);
            *value = (void *)(uintptr_t)7;
            return 0; /* the child's run goes on to end_run */
        }
        int status;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status));
        ASSERT_EQ(WEXITSTATUS(status), 0);
    }
    *value = (void *)(uintptr_t)8;
    return 0;
}

TEST(lazy_run_of_the_forking_thread_ends_normally_in_the_child)
{
    parent_pid = getpid();
    atomic_store(&runs, 0);
    park_lazy_init(&lazy, forking_init, NULL);
    void *v;
    ASSERT_EQ(park_lazy_get(&lazy, &v), 0);
    if (getpid() != parent_pid) {
        /* the child, back from the run it inherited */
        void *again;
        bool ok = (uintptr_t)v == 7 && park_lazy_get(&lazy, &again) == 0 && again == v &&
                  atomic_load(&runs) == 1;
        _exit(ok ? 0 : 1);
    }
    ASSERT_EQ((uintptr_t)v, 8);
    ASSERT_EQ(atomic_load(&runs), 1);
}

static int once_runs;

static int count_once(void *arg)
{
    (void)arg;
    once_runs++;
    return 0;
}

static park_once_t once = PARK_ONCE_INIT;

static int once_blocker(void *arg)
{
    (void)arg;
    atomic_store(&in_run, 1);
    AWAIT(atomic_load(&end_run_now));
    return 0;
}

static void *once_runner(void *arg)
{
    (void)arg;
    ASSERT_EQ(park_once(&once, once_blocker, NULL), 0);
    return NULL;
}

static void child_once_run_elsewhere(void *arg)
{
    (void)arg;
    once_runs = 0;
    ASSERT_EQ(park_once(&once, count_once, NULL), 0);
    ASSERT_EQ(park_once(&once, count_once, NULL), 0);
    ASSERT_EQ(once_runs, 1);
}

TEST(once_run_by_another_thread_runs_again_in_the_child)
{
    atomic_store(&in_run, 0);
    atomic_store(&end_run_now, 0);
    test_threads_t *r = test_threads_start(1, once_runner, NULL, 0);
    AWAIT(atomic_load(&in_run));
    in_child(child_once_run_elsewhere, NULL);
    atomic_store(&end_run_now, 1);
    test_threads_join(r);
    once_runs = 0;
    ASSERT_EQ(park_once(&once, count_once, NULL), 0);
    ASSERT_EQ(once_runs, 0);
}

static const test_case_t tests[] = {
    TEST_ENTRY(mutex_held_by_forking_thread_with_waiters_queued),
    TEST_ENTRY(mutex_held_by_another_thread_with_waiters_queued),
    TEST_ENTRY(mutex_forked_while_threads_contend_it),
    TEST_ENTRY(mutex_with_a_task_queued_falls_free_in_the_child),
    TEST_ENTRY(sem_with_waiters_queued),
    TEST_ENTRY(sem_fifo_with_waiters_queued),
    TEST_ENTRY(sem_forked_while_threads_contend_it),
    TEST_ENTRY(rwlock_write_held_by_forking_thread_with_waiters_queued),
    TEST_ENTRY(rwlock_read_held_by_another_thread_with_waiters_queued),
    TEST_ENTRY(rwlock_write_held_by_another_thread_with_waiters_queued),
    TEST_ENTRY(rwlock_forked_while_threads_contend_it),
    TEST_ENTRY(lazy_run_by_another_thread_with_callers_queued_runs_again_in_the_child),
    TEST_ENTRY(lazy_run_of_the_forking_thread_ends_normally_in_the_child),
    TEST_ENTRY(once_run_by_another_thread_runs_again_in_the_child),
};

int main(int argc, char **argv)
{
    if (!child_threads)
        fprintf(stderr, "under a sanitizer the forked children start no threads; their "
                        "contended checks are skipped\n");
    return TEST_MAIN(argc, argv, tests);
}
