/* tests/stress/chan_stress.c: park_chan under many threads.
 *
 * Oracles: every item sent successfully is received exactly once (a
 * counter per item), no item that failed to go in is ever received, and
 * one consumer sees each producer's items in the order they were sent.
 * Every call kind takes part: blocking, try, timed (deadlines short enough
 * to expire) and asynchronous, with cancels racing grants and tasks
 * dropped unseen. Loops are bounded by iteration counts (scaled by
 * PARK_STRESS_SCALE) and by the harness watchdog. */
#include <park/park.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define PRODUCERS 4
#define CONSUMERS 4

/* Items are their own index (item 0 is NULL, a valid item). */
#define ITEM(i) ((void *)(uintptr_t)(i))
#define INDEX(item) ((uintptr_t)(item))

static void yield_a_little(uint64_t *rng)
{
    if (test_rng_below(rng, 4) == 0)
        test_sleep_ns(0);
}

/* ---- sending and receiving by every kind of call ------------------------------------- */

/* One send by a randomly chosen kind of call: 0 or EPIPE. */
static int send_any(park_chan_t *ch, park_pool_t *pool, void *item, uint64_t *rng)
{
    for (;;) {
        int err;
        switch (test_rng_below(rng, 4)) {
        case 0:
            return park_chan_send(ch, item);
        case 1:
            err = park_chan_try_send(ch, item);
            if (err == EAGAIN) {
                yield_a_little(rng);
                continue;
            }
            return err;
        case 2:
            err = park_chan_send_until(ch, item, park_deadline_in(test_rng_below(rng, 20000)));
            if (err == ETIMEDOUT)
                continue; /* the item did not go in: send it again */
            return err;
        default: {
            park_task_t *t = park_chan_send_async(ch, pool, item);
            ASSERT_TRUE(t != NULL);
            err = park_task_wait(t, NULL);
            park_task_release(t);
            return err;
        }
        }
    }
}

/* One receive by a randomly chosen kind of call: 0 or EPIPE. With
 * `cancels`, asynchronous receives are also cancelled right away (the
 * grant may win) or dropped unseen (a granted item goes back). */
static int recv_any(park_chan_t *ch, park_pool_t *pool, void **item, uint64_t *rng, bool cancels)
{
    for (;;) {
        int err;
        switch (test_rng_below(rng, cancels ? 6 : 4)) {
        case 0:
            return park_chan_recv(ch, item);
        case 1:
            err = park_chan_try_recv(ch, item);
            if (err == EAGAIN) {
                yield_a_little(rng);
                continue;
            }
            return err;
        case 2:
            err = park_chan_recv_until(ch, item, park_deadline_in(test_rng_below(rng, 20000)));
            if (err == ETIMEDOUT)
                continue;
            return err;
        case 3: {
            park_task_t *t = park_chan_recv_async(ch, pool);
            ASSERT_TRUE(t != NULL);
            err = park_task_wait(t, item);
            park_task_release(t);
            return err;
        }
        case 4: {
            /* Cancel right away: either nothing was taken (the task
             * completes with ECANCELED) or the grant won and the task has
             * the item. */
            park_task_t *t = park_chan_recv_async(ch, pool);
            ASSERT_TRUE(t != NULL);
            int c = park_task_cancel(t);
            err = park_task_wait(t, item);
            park_task_release(t);
            if (c == 0) {
                ASSERT_EQ(err, ECANCELED);
                continue;
            }
            ASSERT_NE(err, ECANCELED);
            return err;
        }
        default:
            /* Dropped unseen: nothing is taken, or the item goes back. */
            park_task_release(park_chan_recv_async(ch, pool));
            continue;
        }
    }
}

/* ---- MPMC: every item exactly once ----------------------------------------------------- */

struct mpmc {
    park_chan_t *ch;
    park_pool_t *pool;
    uint64_t per_producer;
    bool cancels;
    atomic_uint *count; /* per item */
    atomic_int producers_left;
};

struct mpmc_thread {
    struct mpmc *m;
    unsigned id;
};

static void *producer_main(void *arg)
{
    struct mpmc_thread *p = arg;
    struct mpmc *m = p->m;
    uint64_t rng = test_rng_seed(p->id);
    for (uint64_t i = 0; i < m->per_producer; i++) {
        uintptr_t index = p->id * m->per_producer + i;
        ASSERT_EQ(send_any(m->ch, m->pool, ITEM(index), &rng), 0);
    }
    if (atomic_fetch_sub(&m->producers_left, 1) == 1)
        park_chan_close(m->ch); /* the last producer: consumers drain, then EPIPE */
    return NULL;
}

static void *consumer_main(void *arg)
{
    struct mpmc_thread *c = arg;
    struct mpmc *m = c->m;
    uint64_t rng = test_rng_seed(100 + c->id);
    int64_t last[PRODUCERS];
    for (int p = 0; p < PRODUCERS; p++)
        last[p] = -1;
    for (;;) {
        void *item = NULL;
        int err = recv_any(m->ch, m->pool, &item, &rng, m->cancels);
        if (err == EPIPE)
            return NULL;
        ASSERT_EQ(err, 0);
        uintptr_t index = INDEX(item);
        ASSERT_LT(index, PRODUCERS * m->per_producer);
        ASSERT_EQ(atomic_fetch_add(&m->count[index], 1), 0);
        /* Given-back items may come out late: order is checked without
         * cancels only. */
        int p = (int)(index / m->per_producer);
        int64_t seq = (int64_t)(index % m->per_producer);
        if (!m->cancels)
            ASSERT_GT(seq, last[p]);
        last[p] = seq;
    }
}

static void mpmc_run(size_t capacity, uint64_t per_producer, bool cancels)
{
    struct mpmc m = {.per_producer = per_producer, .cancels = cancels};
    ASSERT_EQ(park_chan_create(&m.ch, capacity), 0);
    park_pool_config_t cfg = {.threads = 2};
    ASSERT_EQ(park_pool_create(&m.pool, &cfg), 0);
    size_t n = PRODUCERS * per_producer;
    m.count = calloc(n, sizeof *m.count);
    ASSERT_TRUE(m.count != NULL);
    atomic_store(&m.producers_left, PRODUCERS);

    struct mpmc_thread prod[PRODUCERS], cons[CONSUMERS];
    for (unsigned i = 0; i < PRODUCERS; i++)
        prod[i] = (struct mpmc_thread){&m, i};
    for (unsigned i = 0; i < CONSUMERS; i++)
        cons[i] = (struct mpmc_thread){&m, i};
    test_threads_t *tc = test_threads_start(CONSUMERS, consumer_main, cons, sizeof cons[0]);
    test_threads_t *tp = test_threads_start(PRODUCERS, producer_main, prod, sizeof prod[0]);
    test_threads_join(tp);
    test_threads_join(tc);

    /* A consumer stops at "closed and empty" as it sees it; an item given
     * back by a task dropped at that moment may still come in after. */
    void *item;
    int err;
    while ((err = park_chan_try_recv(m.ch, &item)) == 0)
        ASSERT_EQ(atomic_fetch_add(&m.count[INDEX(item)], 1), 0);
    ASSERT_EQ(err, EPIPE);
    for (size_t i = 0; i < n; i++)
        if (atomic_load(&m.count[i]) != 1)
            test_fail(__FILE__, __LINE__, "item %zu received %u times", i,
                      atomic_load(&m.count[i]));
    ASSERT_EQ(park_chan_destroy(m.ch), 0);
    park_pool_destroy(m.pool);
    free(m.count);
}

TEST(chan_mpmc_capacity_1_delivers_every_item_once_in_producer_order)
{
    mpmc_run(1, test_scaled(10000), false);
}

TEST(chan_mpmc_capacity_64_delivers_every_item_once_in_producer_order)
{
    mpmc_run(64, test_scaled(20000), false);
}

TEST(chan_mpmc_capacity_1024_delivers_every_item_once_in_producer_order)
{
    mpmc_run(1024, test_scaled(20000), false);
}

TEST(chan_mpmc_with_cancels_and_drops_delivers_every_item_once)
{
    static const size_t caps[] = {1, 3, 64};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
        mpmc_run(caps[i], test_scaled(4000), true);
}

/* ---- close racing sends and receives ---------------------------------------------------- */

#define CR_SENDERS 3
#define CR_RECEIVERS 3
#define CR_PER_SENDER 400

struct cr {
    park_chan_t *ch;
    park_pool_t *pool;
    atomic_uchar sent[CR_SENDERS * CR_PER_SENDER];
    atomic_uchar received[CR_SENDERS * CR_PER_SENDER];
    atomic_uint closed_at; /* items sent when the closer struck */
    atomic_uint sends;
};

struct cr_thread {
    struct cr *r;
    unsigned id;
    uint64_t round;
};

static void *cr_sender_main(void *arg)
{
    struct cr_thread *s = arg;
    struct cr *r = s->r;
    uint64_t rng = test_rng_seed(s->id + 1000 * s->round);
    for (unsigned k = 0; k < CR_PER_SENDER; k++) {
        unsigned index = s->id * CR_PER_SENDER + k;
        int err = send_any(r->ch, r->pool, ITEM(index), &rng);
        if (err == EPIPE)
            return NULL; /* every later send fails too */
        ASSERT_EQ(err, 0);
        atomic_store(&r->sent[index], 1);
        atomic_fetch_add(&r->sends, 1);
    }
    return NULL;
}

static void *cr_receiver_main(void *arg)
{
    struct cr_thread *c = arg;
    struct cr *r = c->r;
    uint64_t rng = test_rng_seed(c->id + 77 + 1000 * c->round);
    for (;;) {
        void *item = NULL;
        int err = recv_any(r->ch, r->pool, &item, &rng, true);
        if (err == EPIPE)
            return NULL;
        ASSERT_EQ(err, 0);
        ASSERT_LT(INDEX(item), CR_SENDERS * CR_PER_SENDER);
        ASSERT_EQ(atomic_fetch_add(&r->received[INDEX(item)], 1), 0);
    }
}

static void *cr_closer_main(void *arg)
{
    struct cr_thread *c = arg;
    struct cr *r = c->r;
    uint64_t rng = test_rng_seed(c->id + 555 + 1000 * c->round);
    unsigned when = test_rng_below(&rng, CR_SENDERS * CR_PER_SENDER);
    while (atomic_load(&r->sends) < when)
        test_sleep_ns(0);
    park_chan_close(r->ch);
    return NULL;
}

TEST(chan_close_racing_sends_and_receives_loses_and_duplicates_nothing)
{
    park_pool_config_t cfg = {.threads = 2};
    park_pool_t *pool;
    ASSERT_EQ(park_pool_create(&pool, &cfg), 0);
    uint64_t rounds = test_scaled(40);
    for (uint64_t round = 0; round < rounds; round++) {
        struct cr *r = calloc(1, sizeof *r);
        ASSERT_TRUE(r != NULL);
        r->pool = pool;
        ASSERT_EQ(park_chan_create(&r->ch, 1 + round % 4), 0);
        struct cr_thread s[CR_SENDERS], c[CR_RECEIVERS], k = {r, 0, round};
        for (unsigned i = 0; i < CR_SENDERS; i++)
            s[i] = (struct cr_thread){r, i, round};
        for (unsigned i = 0; i < CR_RECEIVERS; i++)
            c[i] = (struct cr_thread){r, i, round};
        test_threads_t *tc = test_threads_start(CR_RECEIVERS, cr_receiver_main, c, sizeof c[0]);
        test_threads_t *ts = test_threads_start(CR_SENDERS, cr_sender_main, s, sizeof s[0]);
        test_threads_t *tk = test_threads_start(1, cr_closer_main, &k, sizeof k);
        test_threads_join(tk);
        test_threads_join(ts);
        test_threads_join(tc);

        /* Receivers stop at "closed and empty" as they see it; an item
         * whose send was racing that moment, or given back by a task
         * dropped then, may still be buffered: drain it. */
        void *item;
        int err;
        while ((err = park_chan_try_recv(r->ch, &item)) == 0)
            ASSERT_EQ(atomic_fetch_add(&r->received[INDEX(item)], 1), 0);
        ASSERT_EQ(err, EPIPE);
        unsigned sent = 0, received = 0;
        for (unsigned i = 0; i < CR_SENDERS * CR_PER_SENDER; i++) {
            ASSERT_EQ(atomic_load(&r->received[i]), atomic_load(&r->sent[i]));
            sent += atomic_load(&r->sent[i]);
            received += atomic_load(&r->received[i]);
        }
        ASSERT_EQ(sent, received);
        ASSERT_EQ(park_chan_destroy(r->ch), 0);
        free(r);
    }
    park_pool_destroy(pool);
}

static const test_case_t tests[] = {
    TEST_ENTRY(chan_mpmc_capacity_1_delivers_every_item_once_in_producer_order),
    TEST_ENTRY(chan_mpmc_capacity_64_delivers_every_item_once_in_producer_order),
    TEST_ENTRY(chan_mpmc_capacity_1024_delivers_every_item_once_in_producer_order),
    TEST_ENTRY(chan_mpmc_with_cancels_and_drops_delivers_every_item_once),
    TEST_ENTRY(chan_close_racing_sends_and_receives_loses_and_duplicates_nothing),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
