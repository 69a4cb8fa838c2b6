/* mutex_counter: five tasks increment a shared counter across an await.
 *
 * Each task reads the counter, waits a little (park_task_delay: the task
 * is suspended, its worker runs other tasks meanwhile), then writes back
 * what it read plus one. Without a lock every task reads the counter
 * before any of them writes it back, so updates are lost. With the async
 * mutex (park_mutex_lock_async) each task holds the lock from its read to
 * its write, across the delay, without any thread blocking on the lock:
 * the next task's continuation runs only when the lock is handed to it.
 *
 * The first round, without the lock, only shows the lost updates (how
 * many depends on timing). The second round must end at 5. Exits 0 if it
 * does, 1 otherwise. */
#include <park/park.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>

#define TASKS 5
#define AWAIT_NS (2 * 1000 * 1000) /* 2 ms between the read and the write */

struct job {
    int id;
    int read;              /* what this task read */
    park_task_t *finished; /* completed by the job's last continuation */
};

static park_pool_t *pool;
static park_mutex_t mutex = PARK_MUTEX_INIT;
static int counter;             /* guarded by mutex */
static atomic_int racy_counter; /* unguarded: each load and store is atomic,
                                   the read-modify-write across the delay is not */
static atomic_int failures;

static void fail(const char *what, int id)
{
    printf("FAILED: task %d: %s\n", id, what);
    atomic_fetch_add(&failures, 1);
}

/* Runs cont(job) on the pool once t completes; a failure ends the job. */
static void then(park_task_t *t, void (*cont)(park_task_t *, void *), struct job *job)
{
    if (!t || park_task_then(t, pool, cont, job) != 0) {
        fail("could not chain the next step", job->id);
        park_task_complete(job->finished, ENOMEM, NULL);
    }
    if (t)
        park_task_release(t); /* a continuation holds its own reference */
}

/* ---- round 1: no lock ---------------------------------------------------- */

static void racy_write(park_task_t *delay, void *arg)
{
    struct job *job = arg;
    (void)delay;
    atomic_store_explicit(&racy_counter, job->read + 1, memory_order_relaxed);
    printf("  task %d writes %d\n", job->id, job->read + 1);
    park_task_complete(job->finished, 0, NULL);
}

static void racy_read(park_task_t *started, void *arg)
{
    struct job *job = arg;
    (void)started;
    job->read = atomic_load_explicit(&racy_counter, memory_order_relaxed);
    printf("  task %d reads  %d\n", job->id, job->read);
    then(park_task_delay(pool, AWAIT_NS), racy_write, job);
}

/* ---- round 2: under the async mutex ------------------------------------- */

static void locked_write(park_task_t *delay, void *arg)
{
    struct job *job = arg;
    if (park_task_result(delay, NULL) != 0)
        fail("the delay did not complete normally", job->id);
    counter = job->read + 1;
    printf("  task %d writes %d, unlocks\n", job->id, counter);
    park_mutex_unlock(&mutex); /* any thread may unlock: the hold is the task's */
    park_task_complete(job->finished, 0, NULL);
}

static void locked_read(park_task_t *locked, void *arg)
{
    struct job *job = arg;
    if (park_task_result(locked, NULL) != 0) {
        fail("the lock was not granted", job->id);
        park_task_complete(job->finished, ECANCELED, NULL);
        return;
    }
    job->read = counter;
    printf("  task %d locks, reads %d\n", job->id, job->read);
    then(park_task_delay(pool, AWAIT_NS), locked_write, job);
}

/* Starts TASKS jobs, each going on with step once the task first() gives
 * it completes, and waits for all of them: 0 or the first job's error. */
static int run_round(park_task_t *(*first)(void), void (*step)(park_task_t *, void *))
{
    static struct job jobs[TASKS];
    park_task_t *finished[TASKS];
    for (int i = 0; i < TASKS; i++) {
        jobs[i] = (struct job){.id = i, .finished = park_task_new()};
        if (!jobs[i].finished)
            return ENOMEM;
        finished[i] = jobs[i].finished;
        then(first(), step, &jobs[i]);
    }
    park_task_t *all = park_task_when_all(pool, finished, TASKS);
    int err = all ? park_task_wait(all, NULL) : ENOMEM;
    if (all)
        park_task_release(all);
    for (int i = 0; i < TASKS; i++)
        park_task_release(finished[i]);
    return err;
}

static int start_now(void *arg, void **result)
{
    (void)arg;
    (void)result;
    return 0;
}

static park_task_t *no_lock(void)
{
    return park_task_run(pool, start_now, NULL);
}

static park_task_t *lock(void)
{
    return park_mutex_lock_async(&mutex, pool);
}

int main(void)
{
    park_pool_config_t cfg = {.threads = 2};
    if (park_pool_create(&pool, &cfg) != 0) {
        printf("FAILED: park_pool_create\n");
        return 1;
    }

    printf("without a lock:\n");
    int racy_err = run_round(no_lock, racy_read);
    printf("  counter = %d after %d increments (%d lost)\n", atomic_load(&racy_counter), TASKS,
           TASKS - atomic_load(&racy_counter));

    printf("with park_mutex_lock_async:\n");
    int err = run_round(lock, locked_read);
    park_pool_destroy(pool);
    printf("  counter = %d after %d increments\n", counter, TASKS);

    int ok = racy_err == 0 && err == 0 && atomic_load(&failures) == 0 && counter == TASKS &&
             park_mutex_destroy(&mutex) == 0;
    printf("%s\n", ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
}
