/* sem_six_tasks: six tasks share a semaphore of three permits.
 *
 * Each task asks for a permit with park_sem_acquire_async and goes on in a
 * continuation once the permit is its own: no thread waits for it. While it
 * holds the permit it "works" (a park_task_delay of a few milliseconds,
 * again without blocking a thread), then gives the permit back. A pool of
 * two workers runs all six, and at most three are ever inside at once,
 * whatever the timing: the semaphore, not the pool, sets the limit.
 *
 * Exits 0 if no more than three tasks were ever inside and all six
 * finished, 1 otherwise. */
#include <park/park.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>

#define TASKS 6
#define PERMITS 3
#define WORK_NS (5 * 1000 * 1000) /* 5 ms inside, holding the permit */

struct job {
    int id;
    park_task_t *finished; /* completed by the job's last continuation */
};

static park_pool_t *pool;
static park_sem_t sem = PARK_SEM_INIT(PERMITS, PERMITS);
static atomic_int inside;     /* jobs holding a permit now */
static atomic_int max_inside; /* the most ever seen at once */
static atomic_int failures;

static void fail(const char *what, int id)
{
    printf("FAILED: task %d: %s\n", id, what);
    atomic_fetch_add(&failures, 1);
}

/* Third step: the work is done; leave and hand the permit on (to the
 * oldest queued task, if any: the semaphore is FIFO). */
static void leave(park_task_t *delay, void *arg)
{
    struct job *job = arg;
    if (park_task_result(delay, NULL) != 0)
        fail("the delay did not complete normally", job->id);
    int now = atomic_fetch_sub(&inside, 1) - 1;
    printf("task %d leaves  (inside: %d)\n", job->id, now);
    if (park_sem_release(&sem, 1) != 0)
        fail("park_sem_release", job->id);
    park_task_complete(job->finished, 0, NULL);
}

/* Second step: the permit is this job's. Count it in, then work. */
static void enter(park_task_t *acquired, void *arg)
{
    struct job *job = arg;
    if (park_task_result(acquired, NULL) != 0) {
        fail("the acquisition failed", job->id);
        park_task_complete(job->finished, ECANCELED, NULL);
        return;
    }
    int now = atomic_fetch_add(&inside, 1) + 1;
    int seen = atomic_load(&max_inside);
    while (now > seen && !atomic_compare_exchange_weak(&max_inside, &seen, now)) {
    }
    printf("task %d enters  (inside: %d)\n", job->id, now);
    if (now > PERMITS)
        fail("more tasks inside than permits", job->id);

    park_task_t *work = park_task_delay(pool, WORK_NS);
    if (!work || park_task_then(work, pool, leave, job) != 0) {
        fail("could not start the work", job->id);
        park_task_complete(job->finished, ENOMEM, NULL);
        if (work)
            park_task_release(work);
        return;
    }
    park_task_release(work); /* the continuation holds its own reference */
}

/* First step, on the main thread: queue for a permit. */
static int start(struct job *job)
{
    job->finished = park_task_new();
    park_task_t *acquire = park_sem_acquire_async(&sem, pool);
    if (!job->finished || !acquire)
        return ENOMEM;
    printf("task %d asks for a permit (%s)\n", job->id,
           park_task_done(acquire) ? "granted at once" : "queued");
    int err = park_task_then(acquire, pool, enter, job);
    park_task_release(acquire);
    return err;
}

int main(void)
{
    park_pool_config_t cfg = {.threads = 2};
    if (park_pool_create(&pool, &cfg) != 0) {
        printf("FAILED: park_pool_create\n");
        return 1;
    }

    static struct job jobs[TASKS];
    park_task_t *finished[TASKS];
    for (int i = 0; i < TASKS; i++) {
        jobs[i].id = i;
        if (start(&jobs[i]) != 0) {
            printf("FAILED: could not start task %d\n", i);
            return 1;
        }
        finished[i] = jobs[i].finished;
    }

    /* Wait for all six without polling: one task that completes when
     * every job's has. */
    park_task_t *all = park_task_when_all(pool, finished, TASKS);
    int err = all ? park_task_wait(all, NULL) : ENOMEM;
    if (all)
        park_task_release(all);
    for (int i = 0; i < TASKS; i++)
        park_task_release(finished[i]);
    park_pool_destroy(pool);

    int ok = err == 0 && atomic_load(&failures) == 0 && atomic_load(&inside) == 0 &&
             atomic_load(&max_inside) <= PERMITS && park_sem_count(&sem) == PERMITS &&
             park_sem_destroy(&sem) == 0;
    printf("all %d tasks finished: %s; at most %d inside at once (limit %d); %u permits free\n",
           TASKS, err == 0 ? "yes" : "no", atomic_load(&max_inside), PERMITS, park_sem_count(&sem));
    printf("%s\n", ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
}
