/* async_timeout: asynchronous acquisitions that give up at a deadline.
 *
 * A semaphore of one permit stands for a scarce resource (one connection
 * to a backend, say). main takes the permit, then two requests ask for it
 * without blocking a thread, each with a deadline, kept by the pool's
 * timer (park_sem_acquire_async_until):
 *
 *   - an impatient one, 20 ms: the permit is still held then, so its task
 *     completes with ETIMEDOUT and it has taken nothing;
 *   - a patient one, 2 s: main releases the permit after 50 ms, the
 *     semaphore hands it to this task (the impatient one has left the
 *     queue), and its continuation uses the permit and gives it back.
 *
 * A mutex works the same way with any deadline: park_mutex_lock_async,
 * then park_task_cancel_at on its task. Cancelled at the deadline, the
 * lock request leaves the queue and completes with ETIMEDOUT; had the lock
 * been handed over first, the task would own it (grant beats cancel).
 *
 * Exits 0 if the impatient requests timed out, never before their
 * deadlines, without taking anything, and the patient one got the permit
 * and returned it; 1 otherwise. */
#include <park/park.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define MS 1000000ull /* nanoseconds */

static park_pool_t *pool;
static park_sem_t backend = PARK_SEM_INIT(1, 1);
static park_mutex_t lock = PARK_MUTEX_INIT;
static park_time_t start;
static park_task_t *patient_done; /* completed by the patient continuation */
static int failures;

static double since_start(void)
{
    return (park_now() - start) / 1e6;
}

static const char *outcome(int err)
{
    return err == 0 ? "granted" : err == ETIMEDOUT ? "ETIMEDOUT" : strerror(err);
}

static void check(bool ok, const char *what)
{
    if (!ok) {
        printf("FAILED: %s\n", what);
        failures++;
    }
}

/* Runs on the pool once the patient request's permit is its own. arg is
 * patient_done with a reference of the continuation's own: the completer of
 * a task must hold one, since main may release its own as soon as it sees
 * the task complete, while park_task_complete is still running. */
static void use_backend(park_task_t *acquired, void *arg)
{
    park_task_t *done = arg;
    int err = park_task_result(acquired, NULL);
    printf("%6.1f ms  patient request: %s\n", since_start(),
           err == 0 ? "got the permit, using it" : outcome(err));
    if (err == 0)
        park_sem_release(&backend, 1); /* done with the backend */
    park_task_complete(done, err, NULL);
    park_task_release(done);
}

/* Sleeps without blocking a worker: waits for a delay task. */
static void pause_ms(uint64_t ms)
{
    park_task_t *delay = park_task_delay(pool, ms * MS);
    if (delay) {
        park_task_wait(delay, NULL);
        park_task_release(delay);
    }
}

static void semaphore_with_deadlines(void)
{
    check(park_sem_try_acquire(&backend), "main could not take the free permit");
    printf("%6.1f ms  main holds the only permit\n", since_start());

    park_task_t *impatient = park_sem_acquire_async_until(&backend, pool, start + 20 * MS);
    park_task_t *patient = park_sem_acquire_async_until(&backend, pool, start + 2000 * MS);
    patient_done = park_task_new();
    if (!impatient || !patient || !patient_done ||
        park_task_then(patient, pool, use_backend, park_task_retain(patient_done)) != 0) {
        check(false, "could not start the requests");
        return;
    }

    /* main waits for the impatient one only to report it; its outcome
     * would reach a continuation just the same. */
    int err = park_task_wait(impatient, NULL);
    double at = since_start();
    printf("%6.1f ms  impatient request (deadline 20 ms): %s\n", at, outcome(err));
    check(err == ETIMEDOUT, "the impatient request did not time out");
    check(at >= 20.0, "the impatient request gave up before its deadline");

    pause_ms(30);
    printf("%6.1f ms  main releases the permit\n", since_start());
    park_sem_release(&backend, 1); /* handed to the patient request */

    err = park_task_wait(patient_done, NULL);
    check(err == 0, "the patient request did not get the permit");
    check(park_sem_count(&backend) == 1, "the permit did not come back");
    park_task_release(impatient);
    park_task_release(patient);
    park_task_release(patient_done);
}

static void mutex_with_deadline(void)
{
    park_mutex_lock(&lock);
    park_time_t asked = park_now();
    park_task_t *t = park_mutex_lock_async(&lock, pool);
    if (!t || park_task_cancel_at(t, park_deadline_in(10 * MS)) != 0) {
        check(false, "could not start the lock request");
        return;
    }
    int err = park_task_wait(t, NULL);
    double waited = (park_now() - asked) / 1e6;
    printf("%6.1f ms  lock request (deadline 10 ms): %s after %.1f ms\n", since_start(),
           outcome(err), waited);
    check(err == ETIMEDOUT, "the lock request did not time out");
    check(waited >= 10.0, "the lock request gave up before its deadline");
    park_task_release(t);
    park_mutex_unlock(&lock);
    /* It left the queue holding nothing: the mutex is free. */
    check(park_mutex_try_lock(&lock), "the timed-out request kept the mutex");
    park_mutex_unlock(&lock);
}

int main(void)
{
    park_pool_config_t cfg = {.threads = 2};
    if (park_pool_create(&pool, &cfg) != 0) {
        printf("FAILED: park_pool_create\n");
        return 1;
    }
    start = park_now();
    semaphore_with_deadlines();
    mutex_with_deadline();
    park_pool_destroy(pool);
    check(park_sem_destroy(&backend) == 0 && park_mutex_destroy(&lock) == 0,
          "something still waits");
    printf("%s\n", failures ? "FAILED" : "OK");
    return failures ? 1 : 0;
}
