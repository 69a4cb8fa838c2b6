/* tests/unit/chan_test.h: what the tests of park_chan (chan_test.c) and of
 * its asynchronous send and receive (chan_async_test.c) share: items,
 * looks at the queues, and threads that send or receive once.
 *
 * Threads are lined up by handshakes: "T is blocked" is observed in the
 * wait queue itself (receivers wait under the channel's address, senders
 * under the address + 1), so waiters queue in a known order and no verdict
 * depends on a sleep. The only timing asserted is that a timed call never
 * gives up before its deadline. */
#ifndef PARK_TESTS_UNIT_CHAN_TEST_H
#define PARK_TESTS_UNIT_CHAN_TEST_H

#include <errno.h>
#include <stdatomic.h>

#include <park/park.h>

#include "wait/wait.h"

#include "test.h"

#define ITEM(i) ((void *)(uintptr_t)(0x1000 + (i)))

static inline park_chan_t *chan_new(size_t capacity)
{
    park_chan_t *ch = NULL;
    ASSERT_EQ(park_chan_create(&ch, capacity), 0);
    ASSERT_TRUE(ch != NULL);
    return ch;
}

static inline const void *senders_key(park_chan_t *ch)
{
    return (const char *)ch + 1;
}

static inline size_t receivers_queued(park_chan_t *ch)
{
    return park__wait_count(ch);
}

static inline size_t senders_queued(park_chan_t *ch)
{
    return park__wait_count(senders_key(ch));
}

static inline void assert_recv(park_chan_t *ch, void *expect)
{
    void *item = (void *)&item;
    ASSERT_EQ(park_chan_try_recv(ch, &item), 0);
    ASSERT_TRUE(item == expect);
}

static inline void assert_empty(park_chan_t *ch)
{
    void *item = (void *)&item;
    ASSERT_EQ(park_chan_try_recv(ch, &item), EAGAIN);
    ASSERT_TRUE(item == (void *)&item);
}

static inline void fill(park_chan_t *ch, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ASSERT_EQ(park_chan_try_send(ch, ITEM(i)), 0);
}

/* ---- threads that send or receive once -------------------------------------- */

enum { SEND, RECV };

struct caller {
    park_chan_t *ch;
    int kind;
    bool timed;
    park_time_t deadline;
    void *item;        /* sent, or received */
    atomic_int *order; /* optional: numbers the returns */
    int result;
    int returned_as;
    park_time_t returned_at;
    atomic_bool started; /* set just before the call */
    atomic_bool done;
};

static inline void *caller_main(void *arg)
{
    struct caller *c = arg;
    atomic_store(&c->started, true);
    if (c->kind == SEND)
        c->result = c->timed ? park_chan_send_until(c->ch, c->item, c->deadline)
                             : park_chan_send(c->ch, c->item);
    else
        c->result = c->timed ? park_chan_recv_until(c->ch, &c->item, c->deadline)
                             : park_chan_recv(c->ch, &c->item);
    c->returned_at = park_now();
    if (c->order)
        c->returned_as = atomic_fetch_add(c->order, 1);
    atomic_store(&c->done, true);
    return NULL;
}

/* Starts a caller and waits until it is queued on its side of ch. */
static inline test_threads_t *start_queued(struct caller *c)
{
    const void *key = c->kind == SEND ? senders_key(c->ch) : (const void *)c->ch;
    size_t before = park__wait_count(key);
    test_threads_t *t = test_threads_start(1, caller_main, c, sizeof *c);
    AWAIT(park__wait_count(key) == before + 1);
    return t;
}

#endif /* PARK_TESTS_UNIT_CHAN_TEST_H */
