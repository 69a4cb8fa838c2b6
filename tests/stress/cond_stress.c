/* tests/stress/cond_stress.c: park_cond under many threads.
 *
 * A bounded queue built the textbook way, on one park_mutex_t and two
 * condition variables (not full, not empty): producers and consumers, with
 * blocking and timed waits, signal and broadcast. Oracles: every item
 * produced is consumed exactly once (sums and counts), the queue never
 * holds more than its capacity or fewer than zero items, and nobody sleeps
 * forever (the harness watchdog). Loops are bounded by iteration counts
 * scaled by PARK_STRESS_SCALE; in fault-injection builds the futex calls
 * add spurious wake-ups, EINTR, early timeouts and delays. */
#include <park/park.h>

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "test.h"

enum { CAP = 4 };

struct queue {
    park_mutex_t m;
    park_cond_t not_full, not_empty;
    uint64_t items[CAP];
    unsigned head, len;
    bool broadcast; /* wake with broadcast instead of signal */
    bool timed;     /* wait with short deadlines, again and again */
    long per_producer;
    atomic_long consumed;
    atomic_ullong sum_in, sum_out;
    long total;
};

static void wake(struct queue *q, park_cond_t *c)
{
    if (q->broadcast)
        park_cond_broadcast(c);
    else
        park_cond_signal(c);
}

static void wait_on(struct queue *q, park_cond_t *c, uint64_t *seed)
{
    if (!q->timed) {
        ASSERT_EQ(park_cond_wait(c, &q->m), 0);
        return;
    }
    int r = park_cond_wait_until(c, &q->m, park_deadline_in(test_rng_below(seed, 30000)));
    ASSERT_TRUE(r == 0 || r == ETIMEDOUT);
}

static void *producer(void *arg)
{
    struct queue *q = arg;
    uint64_t seed = test_rng_seed((unsigned)(uintptr_t)&seed);
    for (long i = 0; i < q->per_producer; i++) {
        uint64_t item = test_rng_next(&seed) | 1u;
        park_mutex_lock(&q->m);
        while (q->len == CAP)
            wait_on(q, &q->not_full, &seed);
        q->items[(q->head + q->len++) % CAP] = item;
        ASSERT_LE(q->len, CAP);
        wake(q, &q->not_empty);
        park_mutex_unlock(&q->m);
        atomic_fetch_add(&q->sum_in, item);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    struct queue *q = arg;
    uint64_t seed = test_rng_seed((unsigned)(uintptr_t)&seed);
    for (;;) {
        park_mutex_lock(&q->m);
        while (q->len == 0 && atomic_load(&q->consumed) < q->total)
            wait_on(q, &q->not_empty, &seed);
        if (q->len == 0) { /* everything is consumed: wake the others, stop */
            park_cond_broadcast(&q->not_empty);
            park_mutex_unlock(&q->m);
            return NULL;
        }
        uint64_t item = q->items[q->head];
        q->head = (q->head + 1) % CAP;
        q->len--;
        long n = atomic_fetch_add(&q->consumed, 1) + 1;
        wake(q, &q->not_full);
        if (n == q->total)
            park_cond_broadcast(&q->not_empty);
        park_mutex_unlock(&q->m);
        atomic_fetch_add(&q->sum_out, item);
    }
}

static void run(int producers, int consumers, bool broadcast, bool timed)
{
    static struct queue q;
    memset(&q, 0, sizeof q);
    q.broadcast = broadcast;
    q.timed = timed;
    q.per_producer = (long)test_scaled(20000);
    q.total = q.per_producer * producers;
    test_threads_t *p = test_threads_start((size_t)producers, producer, &q, 0);
    test_threads_t *c = test_threads_start((size_t)consumers, consumer, &q, 0);
    test_threads_join(p);
    test_threads_join(c);
    ASSERT_EQ(atomic_load(&q.consumed), q.total);
    ASSERT_EQ(atomic_load(&q.sum_in), atomic_load(&q.sum_out));
    ASSERT_EQ(q.len, 0);
    ASSERT_EQ(park_cond_destroy(&q.not_full), 0);
    ASSERT_EQ(park_cond_destroy(&q.not_empty), 0);
}

TEST(cond_queue_with_signal_conserves_items)
{
    run(3, 3, false, false);
}

TEST(cond_queue_with_broadcast_conserves_items)
{
    run(3, 3, true, false);
}

TEST(cond_queue_with_timed_waits_and_signal_conserves_items)
{
    run(4, 4, false, true);
}

TEST(cond_queue_with_timed_waits_and_broadcast_conserves_items)
{
    run(2, 6, true, true);
}

TEST(cond_queue_oversubscribed_conserves_items)
{
    run(8, 8, false, false);
}

static const test_case_t tests[] = {
    TEST_ENTRY(cond_queue_with_signal_conserves_items),
    TEST_ENTRY(cond_queue_with_broadcast_conserves_items),
    TEST_ENTRY(cond_queue_with_timed_waits_and_signal_conserves_items),
    TEST_ENTRY(cond_queue_with_timed_waits_and_broadcast_conserves_items),
    TEST_ENTRY(cond_queue_oversubscribed_conserves_items),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
