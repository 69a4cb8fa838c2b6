/* chan_pipeline: producer -> square -> consumer through bounded channels.
 *
 *   producer (main thread, blocking sends)
 *      | raw: capacity 2
 *   stage (tasks on the pool: receive, square, send on)
 *      | squared: capacity 2
 *   consumer (tasks on the pool: receive, check)
 *
 * The channels are small, so the producer soon finds `raw` full and has to
 * wait: that is back-pressure, and it bounds how far the producer can run
 * ahead of the consumer (the two channels' capacity plus the one item the
 * stage and the consumer may each have in hand). The stage and the
 * consumer never block a thread: each step is a park_chan_recv_async or
 * park_chan_send_async task whose continuation takes the next step.
 *
 * When the producer is done it closes `raw`. The stage drains what is
 * left, then its receive fails with EPIPE and it closes `squared`; the
 * consumer drains that and stops on EPIPE in turn: close propagates down
 * the pipeline, and no item is lost.
 *
 * Exits 0 if the consumer got every square, in order, the producer never
 * ran further ahead than the pipeline holds, and both closes propagated;
 * 1 otherwise. */
#include <park/park.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#define ITEMS 10
#define CAPACITY 2
#define MAX_AHEAD (2 * CAPACITY + 2) /* both channels full, one item in each hand */

static park_pool_t *pool;
static park_chan_t *raw, *squared;
static park_task_t *stage_done, *consumer_done;
static atomic_int consumed; /* items the consumer has checked */
static atomic_int failures;

static void fail(const char *what)
{
    printf("FAILED: %s\n", what);
    atomic_fetch_add(&failures, 1);
}

static void *to_item(uintptr_t v)
{
    return (void *)v;
}

static uintptr_t from_item(void *item)
{
    return (uintptr_t)item;
}

/* Runs cont(done, NULL) on the pool once t completes; the continuation
 * holds its own reference, so ours is dropped here. On failure, finished
 * is completed with the error. */
static void then(park_task_t *t, void (*cont)(park_task_t *, void *), park_task_t *finished)
{
    int err = t ? park_task_then(t, pool, cont, NULL) : ENOMEM;
    if (t)
        park_task_release(t);
    if (err) {
        fail("could not chain the next step");
        park_task_complete(finished, err, NULL);
    }
}

/* ---- stage: receive from raw, square, send to squared -------------------- */

static void stage_received(park_task_t *recv, void *unused);

static void stage_next(park_task_t *sent, void *unused)
{
    (void)unused;
    if (sent && park_task_result(sent, NULL) != 0) {
        fail("the stage could not send on (squared closed early?)");
        park_chan_close(squared);
        park_task_complete(stage_done, EPIPE, NULL);
        return;
    }
    then(park_chan_recv_async(raw, pool), stage_received, stage_done);
}

static void stage_received(park_task_t *recv, void *unused)
{
    (void)unused;
    void *item;
    int err = park_task_result(recv, &item);
    if (err == EPIPE) {
        /* raw is closed and drained: pass the close on. */
        printf("stage: raw is closed and empty; closing squared\n");
        park_chan_close(squared);
        park_task_complete(stage_done, 0, NULL);
        return;
    }
    if (err != 0) {
        fail("the stage's receive failed");
        park_chan_close(squared);
        park_task_complete(stage_done, err, NULL);
        return;
    }
    uintptr_t v = from_item(item);
    printf("stage: %lu -> %lu\n", (unsigned long)v, (unsigned long)(v * v));
    then(park_chan_send_async(squared, pool, to_item(v * v)), stage_next, stage_done);
}

/* ---- consumer: receive from squared, check order ------------------------- */

static void consumer_received(park_task_t *recv, void *unused)
{
    (void)unused;
    void *item;
    int err = park_task_result(recv, &item);
    if (err == EPIPE) {
        printf("consumer: squared is closed and empty; done\n");
        park_task_complete(consumer_done, 0, NULL);
        return;
    }
    if (err != 0) {
        fail("the consumer's receive failed");
        park_task_complete(consumer_done, err, NULL);
        return;
    }
    uintptr_t n = (uintptr_t)atomic_load(&consumed) + 1; /* only the consumer writes it */
    uintptr_t v = from_item(item);
    printf("consumer: got %lu\n", (unsigned long)v);
    if (v != n * n)
        fail("the consumer got an item out of order");
    atomic_fetch_add(&consumed, 1);
    then(park_chan_recv_async(squared, pool), consumer_received, consumer_done);
}

/* ---- producer: the main thread ------------------------------------------- */

/* Sends 1..ITEMS into raw, waiting whenever it is full, then closes it.
 * Returns how far ahead of the consumer it ever got. */
static int produce(int *waits)
{
    int max_ahead = 0;
    for (uintptr_t v = 1; v <= ITEMS; v++) {
        int err = park_chan_try_send(raw, to_item(v));
        if (err == EAGAIN) {
            printf("producer: raw is full; waiting to send %lu\n", (unsigned long)v);
            ++*waits;
            err = park_chan_send(raw, to_item(v)); /* blocks until there is room */
        }
        if (err != 0) {
            fail("the producer's send failed");
            break;
        }
        int ahead = (int)v - atomic_load(&consumed);
        if (ahead > max_ahead)
            max_ahead = ahead;
        if (ahead > MAX_AHEAD)
            fail("the producer ran further ahead than the pipeline holds");
    }
    printf("producer: all sent; closing raw\n");
    park_chan_close(raw);
    if (park_chan_send(raw, to_item(0)) != EPIPE)
        fail("a send on a closed channel did not fail with EPIPE");
    return max_ahead;
}

int main(void)
{
    park_pool_config_t cfg = {.threads = 2};
    if (park_pool_create(&pool, &cfg) != 0 || park_chan_create(&raw, CAPACITY) != 0 ||
        park_chan_create(&squared, CAPACITY) != 0) {
        printf("FAILED: setup\n");
        return 1;
    }
    stage_done = park_task_new();
    consumer_done = park_task_new();
    if (!stage_done || !consumer_done) {
        printf("FAILED: park_task_new\n");
        return 1;
    }

    stage_next(NULL, NULL); /* the stage's first receive */
    then(park_chan_recv_async(squared, pool), consumer_received, consumer_done);

    int waits = 0;
    int max_ahead = produce(&waits);

    park_task_t *ends[] = {stage_done, consumer_done};
    park_task_t *all = park_task_when_all(pool, ends, 2);
    int err = all ? park_task_wait(all, NULL) : ENOMEM;
    if (all)
        park_task_release(all);
    park_task_release(stage_done);
    park_task_release(consumer_done);
    park_pool_destroy(pool);

    int got = atomic_load(&consumed);
    if (got != ITEMS)
        fail("the consumer did not get every item");
    if (park_chan_destroy(raw) != 0 || park_chan_destroy(squared) != 0)
        fail("a channel was still in use");
    printf("consumer got %d of %d squares in order; producer waited %d times for room, "
           "ran at most %d items ahead (bound %d)\n",
           got, ITEMS, waits, max_ahead, MAX_AHEAD);
    int ok = err == 0 && atomic_load(&failures) == 0;
    printf("%s\n", ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
}
