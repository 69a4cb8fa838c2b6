/* tests/unit/chan_test.c: park_chan, one behaviour per test.
 *
 * Threads are lined up by handshakes: "T is blocked" is observed in the
 * wait queue itself (receivers wait under the channel's address, senders
 * under the address + 1), so waiters queue in a known order and no verdict
 * depends on a sleep. Continuations are checked against a thread-local
 * flag set around the call that completes their task. The only timing
 * asserted is that a timed call never gives up before its deadline. */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include <park/park.h>

#include "chan_impl.h"
#include "wait/wait.h"

#include "test.h"

#define ITEM(i) ((void *)(uintptr_t)(0x1000 + (i)))

static park_chan_t *chan_new(size_t capacity)
{
    park_chan_t *ch = NULL;
    ASSERT_EQ(park_chan_create(&ch, capacity), 0);
    ASSERT_TRUE(ch != NULL);
    return ch;
}

static const void *senders_key(park_chan_t *ch)
{
    return (const char *)ch + 1;
}

static size_t receivers_queued(park_chan_t *ch)
{
    return park__wait_count(ch);
}

static size_t senders_queued(park_chan_t *ch)
{
    return park__wait_count(senders_key(ch));
}

static void assert_recv(park_chan_t *ch, void *expect)
{
    void *item = (void *)&item;
    ASSERT_EQ(park_chan_try_recv(ch, &item), 0);
    ASSERT_TRUE(item == expect);
}

static void assert_empty(park_chan_t *ch)
{
    void *item = (void *)&item;
    ASSERT_EQ(park_chan_try_recv(ch, &item), EAGAIN);
    ASSERT_TRUE(item == (void *)&item);
}

static void fill(park_chan_t *ch, size_t n)
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

static void *caller_main(void *arg)
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
static test_threads_t *start_queued(struct caller *c)
{
    const void *key = c->kind == SEND ? senders_key(c->ch) : (const void *)c->ch;
    size_t before = park__wait_count(key);
    test_threads_t *t = test_threads_start(1, caller_main, c, sizeof *c);
    AWAIT(park__wait_count(key) == before + 1);
    return t;
}

/* ---- creation and destruction ------------------------------------------------ */

TEST(chan_create_with_capacity_zero_is_einval)
{
    park_chan_t *ch = (park_chan_t *)&ch;
    ASSERT_EQ(park_chan_create(&ch, 0), EINVAL);
    ASSERT_TRUE(ch == (park_chan_t *)&ch);
}

TEST(chan_create_with_an_impossible_capacity_is_enomem)
{
    park_chan_t *ch = (park_chan_t *)&ch;
    ASSERT_EQ(park_chan_create(&ch, SIZE_MAX), ENOMEM);
    ASSERT_TRUE(ch == (park_chan_t *)&ch);
}

TEST(chan_destroy_drops_buffered_items)
{
    park_chan_t *ch = chan_new(4);
    fill(ch, 3);
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

TEST(chan_destroy_while_a_receiver_waits_is_ebusy_and_keeps_it_usable)
{
    park_chan_t *ch = chan_new(2);
    struct caller r = {.ch = ch, .kind = RECV};
    test_threads_t *t = start_queued(&r);
    ASSERT_EQ(park_chan_destroy(ch), EBUSY);
    ASSERT_EQ(receivers_queued(ch), 1);
    ASSERT_EQ(park_chan_send(ch, ITEM(7)), 0);
    test_threads_join(t);
    ASSERT_EQ(r.result, 0);
    ASSERT_TRUE(r.item == ITEM(7));
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

TEST(chan_destroy_while_a_sender_waits_is_ebusy)
{
    park_chan_t *ch = chan_new(1);
    fill(ch, 1);
    struct caller s = {.ch = ch, .kind = SEND, .item = ITEM(1)};
    test_threads_t *t = start_queued(&s);
    ASSERT_EQ(park_chan_destroy(ch), EBUSY);
    assert_recv(ch, ITEM(0));
    test_threads_join(t);
    ASSERT_EQ(s.result, 0);
    assert_recv(ch, ITEM(1));
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

/* ---- try-operations ------------------------------------------------------------- */

TEST(chan_try_send_on_a_full_channel_is_eagain)
{
    park_chan_t *ch = chan_new(3);
    fill(ch, 3);
    ASSERT_EQ(park_chan_try_send(ch, ITEM(9)), EAGAIN);
    for (int i = 0; i < 3; i++)
        assert_recv(ch, ITEM(i));
    assert_empty(ch);
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

TEST(chan_try_recv_on_an_empty_channel_is_eagain)
{
    park_chan_t *ch = chan_new(3);
    assert_empty(ch);
    fill(ch, 1);
    assert_recv(ch, ITEM(0));
    assert_empty(ch);
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

/* Several laps round the ring, at varying fill levels. */
TEST(chan_items_come_out_in_the_order_they_were_sent)
{
    park_chan_t *ch = chan_new(5);
    uintptr_t sent = 0, received = 0;
    for (int round = 0; round < 40; round++) {
        /* A backlog of 0 or 1 items shifts where each burst wraps. */
        int burst = 1 + round % 4;
        for (int i = 0; i < burst; i++)
            ASSERT_EQ(park_chan_send(ch, ITEM(sent++)), 0);
        int backlog = round % 2 == 0;
        while (sent - received > (uintptr_t)backlog)
            assert_recv(ch, ITEM(received++));
    }
    while (received < sent)
        assert_recv(ch, ITEM(received++));
    assert_empty(ch);
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

TEST(chan_null_is_an_item)
{
    park_chan_t *ch = chan_new(2);
    ASSERT_EQ(park_chan_try_send(ch, NULL), 0);
    ASSERT_EQ(park_chan_send(ch, NULL), 0);
    ASSERT_EQ(park_chan_try_send(ch, NULL), EAGAIN);
    void *item = &item;
    ASSERT_EQ(park_chan_recv(ch, &item), 0);
    ASSERT_TRUE(item == NULL);
    item = &item;
    ASSERT_EQ(park_chan_try_recv(ch, &item), 0);
    ASSERT_TRUE(item == NULL);
    assert_empty(ch);
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

/* ---- blocking -------------------------------------------------------------------- */

struct pingpong {
    park_chan_t *ping, *pong;
    int rounds;
};

static void *pong_main(void *arg)
{
    struct pingpong *p = arg;
    for (int i = 0; i < p->rounds; i++) {
        void *item = NULL;
        ASSERT_EQ(park_chan_recv(p->ping, &item), 0);
        ASSERT_TRUE(item == ITEM(i));
        ASSERT_EQ(park_chan_send(p->pong, item), 0);
    }
    return NULL;
}

TEST(chan_capacity_one_ping_pong_keeps_every_item_in_order)
{
    struct pingpong p = {chan_new(1), chan_new(1), 2000};
    test_threads_t *t = test_threads_start(1, pong_main, &p, 0);
    for (int i = 0; i < p.rounds; i++) {
        ASSERT_EQ(park_chan_send(p.ping, ITEM(i)), 0);
        void *item = NULL;
        ASSERT_EQ(park_chan_recv(p.pong, &item), 0);
        ASSERT_TRUE(item == ITEM(i));
    }
    test_threads_join(t);
    ASSERT_EQ(park_chan_destroy(p.ping), 0);
    ASSERT_EQ(park_chan_destroy(p.pong), 0);
}

TEST(chan_blocked_sender_wakes_when_a_slot_frees)
{
    park_chan_t *ch = chan_new(2);
    fill(ch, 2);
    struct caller s = {.ch = ch, .kind = SEND, .item = ITEM(2)};
    test_threads_t *t = start_queued(&s);
    ASSERT_FALSE(atomic_load(&s.done));
    assert_recv(ch, ITEM(0));
    test_threads_join(t);
    ASSERT_EQ(s.result, 0);
    ASSERT_EQ(senders_queued(ch), 0);
    assert_recv(ch, ITEM(1));
    assert_recv(ch, ITEM(2));
    assert_empty(ch);
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

TEST(chan_blocked_sender_of_a_large_channel_takes_a_single_freed_slot)
{
    /* A blocked send spins for more room than one item (half of the
     * ring), but not beyond its spin: one freed slot is enough, whether it
     * frees while the sender spins (even rounds) or sleeps (odd ones). */
    park_chan_t *ch = chan_new(64);
    fill(ch, 64);
    for (int round = 0; round < 20; round++) {
        struct caller s = {.ch = ch,
                           .kind = SEND,
                           .timed = true,
                           .deadline = park_deadline_in(LATE_NS),
                           .item = ITEM(64 + round)};
        test_threads_t *t;
        if (round % 2) {
            t = start_queued(&s);
        } else {
            t = test_threads_start(1, caller_main, &s, sizeof s);
            AWAIT(atomic_load(&s.started));
            test_sleep_ns(2000); /* choreography: the sender is spinning */
        }
        assert_recv(ch, ITEM(round));
        test_threads_join(t);
        ASSERT_EQ(s.result, 0);
        ASSERT_EQ(senders_queued(ch), 0);
        ASSERT_EQ(park_chan_try_send(ch, ITEM(99)), EAGAIN); /* full again */
    }
    for (int i = 20; i < 84; i++)
        assert_recv(ch, ITEM(i));
    assert_empty(ch);
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

TEST(chan_blocked_receiver_wakes_on_send)
{
    park_chan_t *ch = chan_new(2);
    struct caller r = {.ch = ch, .kind = RECV};
    test_threads_t *t = start_queued(&r);
    ASSERT_FALSE(atomic_load(&r.done));
    ASSERT_EQ(park_chan_send(ch, ITEM(5)), 0);
    test_threads_join(t);
    ASSERT_EQ(r.result, 0);
    ASSERT_TRUE(r.item == ITEM(5));
    ASSERT_EQ(receivers_queued(ch), 0);
    assert_empty(ch);
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

TEST(chan_blocked_senders_get_in_in_arrival_order)
{
    enum { N = 4 };
    park_chan_t *ch = chan_new(1);
    fill(ch, 1);
    struct caller s[N];
    test_threads_t *t[N];
    for (int i = 0; i < N; i++) {
        s[i] = (struct caller){.ch = ch, .kind = SEND, .item = ITEM(1 + i)};
        t[i] = start_queued(&s[i]);
    }
    for (int i = 0; i <= N; i++) {
        void *item = NULL;
        ASSERT_EQ(park_chan_recv(ch, &item), 0);
        ASSERT_TRUE(item == ITEM(i));
    }
    for (int i = 0; i < N; i++) {
        test_threads_join(t[i]);
        ASSERT_EQ(s[i].result, 0);
    }
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

TEST(chan_blocked_receivers_are_served_in_arrival_order)
{
    enum { N = 4 };
    park_chan_t *ch = chan_new(2);
    atomic_int order = 0;
    struct caller r[N];
    test_threads_t *t[N];
    for (int i = 0; i < N; i++) {
        r[i] = (struct caller){.ch = ch, .kind = RECV, .order = &order};
        t[i] = start_queued(&r[i]);
    }
    for (int i = 0; i < N; i++) {
        ASSERT_EQ(park_chan_send(ch, ITEM(i)), 0);
        AWAIT(atomic_load(&r[i].done));
    }
    for (int i = 0; i < N; i++) {
        test_threads_join(t[i]);
        ASSERT_EQ(r[i].result, 0);
        ASSERT_TRUE(r[i].item == ITEM(i));
        ASSERT_EQ(r[i].returned_as, i);
    }
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

/* One operation wakes one waiter: a send that finds receivers queued
 * hands its item to the oldest and leaves the others asleep. */
TEST(chan_send_with_receivers_queued_wakes_one)
{
    enum { N = 3 };
    park_chan_t *ch = chan_new(4);
    struct caller r[N];
    test_threads_t *t[N];
    for (int i = 0; i < N; i++) {
        r[i] = (struct caller){.ch = ch, .kind = RECV};
        t[i] = start_queued(&r[i]);
    }
    ASSERT_EQ(park_chan_send(ch, ITEM(0)), 0);
    AWAIT(atomic_load(&r[0].done));
    ASSERT_EQ(receivers_queued(ch), N - 1);
    ASSERT_FALSE(atomic_load(&r[1].done));
    ASSERT_FALSE(atomic_load(&r[2].done));
    for (int i = 1; i < N; i++) {
        ASSERT_EQ(park_chan_send(ch, ITEM(i)), 0);
        AWAIT(atomic_load(&r[i].done));
        ASSERT_EQ(receivers_queued(ch), (size_t)(N - 1 - i));
    }
    for (int i = 0; i < N; i++) {
        test_threads_join(t[i]);
        ASSERT_EQ(r[i].result, 0);
        ASSERT_TRUE(r[i].item == ITEM(i));
    }
    assert_empty(ch);
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

/* The mirror: a receive from a full channel with senders queued takes the
 * oldest sender's item in and leaves the others asleep. */
TEST(chan_recv_with_senders_queued_wakes_one)
{
    enum { N = 3 };
    park_chan_t *ch = chan_new(1);
    fill(ch, 1);
    struct caller s[N];
    test_threads_t *t[N];
    for (int i = 0; i < N; i++) {
        s[i] = (struct caller){.ch = ch, .kind = SEND, .item = ITEM(1 + i)};
        t[i] = start_queued(&s[i]);
    }
    assert_recv(ch, ITEM(0));
    AWAIT(atomic_load(&s[0].done));
    ASSERT_EQ(senders_queued(ch), N - 1);
    ASSERT_FALSE(atomic_load(&s[1].done));
    ASSERT_FALSE(atomic_load(&s[2].done));
    for (int i = 1; i <= N; i++) {
        assert_recv(ch, ITEM(i));
        if (i < N)
            AWAIT(atomic_load(&s[i].done));
    }
    for (int i = 0; i < N; i++) {
        test_threads_join(t[i]);
        ASSERT_EQ(s[i].result, 0);
    }
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

TEST(chan_try_send_does_not_pass_a_blocked_sender)
{
    park_chan_t *ch = chan_new(1);
    fill(ch, 1);
    struct caller s = {.ch = ch, .kind = SEND, .item = ITEM(1)};
    test_threads_t *t = start_queued(&s);
    ASSERT_EQ(park_chan_try_send(ch, ITEM(9)), EAGAIN);
    assert_recv(ch, ITEM(0));
    test_threads_join(t);
    /* The room went to the blocked sender, not to a newcomer. */
    ASSERT_EQ(park_chan_try_send(ch, ITEM(9)), EAGAIN);
    assert_recv(ch, ITEM(1));
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

/* ---- deadlines --------------------------------------------------------------------- */

TEST(chan_send_until_past_deadline_takes_free_room)
{
    park_chan_t *ch = chan_new(1);
    ASSERT_EQ(park_chan_send_until(ch, ITEM(0), 0), 0);
    assert_recv(ch, ITEM(0));
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

TEST(chan_send_until_past_deadline_on_a_full_channel_times_out_and_sends_nothing)
{
    park_chan_t *ch = chan_new(1);
    fill(ch, 1);
    park_time_t start = park_now();
    ASSERT_EQ(park_chan_send_until(ch, ITEM(9), 0), ETIMEDOUT);
    ASSERT_EQ(park_chan_send_until(ch, ITEM(9), start), ETIMEDOUT);
    ASSERT_LT(park_now() - start, LATE_NS);
    ASSERT_EQ(senders_queued(ch), 0);
    assert_recv(ch, ITEM(0));
    assert_empty(ch);
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

static void *finish_read_later(void *arg)
{
    park__chan_cell_t *c = arg;
    test_sleep_ns(5 * MS); /* choreography: the send finds the cell being read */
    /* The read's end (take in lib/chan_ring.h): the cell is free for pos + cap,
     * with capacity 64 and pos 0. */
    atomic_store_explicit(&c->seq, 2 * 64, memory_order_release);
    return NULL;
}

TEST(chan_send_until_past_deadline_takes_a_cell_whose_receive_is_finishing)
{
    /* A receive has reserved the oldest item (head moved) but not yet
     * freed its cell: the ring is not full, so a send whose deadline has
     * passed waits for that cell rather than time out. Set up by hand: a
     * full channel of 64, head advanced past item 0, its cell still full. */
    park_chan_t *ch = chan_new(64);
    fill(ch, 64);
    atomic_store(&ch->head, 1);
    test_threads_t *t = test_threads_start(1, finish_read_later, &ch->cells[0], 0);
    ASSERT_EQ(park_chan_send_until(ch, ITEM(64), 0), 0);
    test_threads_join(t);
    for (int i = 1; i <= 64; i++)
        assert_recv(ch, ITEM(i));
    assert_empty(ch);
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

TEST(chan_send_until_near_deadline_times_out_not_before_it)
{
    park_chan_t *ch = chan_new(1);
    fill(ch, 1);
    static const uint64_t ahead_ns[] = {1000, 50000, 500000, MS, 5 * MS};
    for (size_t i = 0; i < sizeof ahead_ns / sizeof ahead_ns[0]; i++) {
        park_time_t deadline = park_deadline_in(ahead_ns[i]);
        ASSERT_EQ(park_chan_send_until(ch, ITEM(9), deadline), ETIMEDOUT);
        park_time_t now = park_now();
        ASSERT_GE(now, deadline);
        ASSERT_LT(now - deadline, LATE_NS);
        ASSERT_EQ(senders_queued(ch), 0);
    }
    assert_recv(ch, ITEM(0));
    assert_empty(ch);
    /* Nothing left behind: room goes to a newcomer. */
    ASSERT_EQ(park_chan_try_send(ch, ITEM(1)), 0);
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

TEST(chan_recv_until_past_deadline_takes_an_item_there)
{
    park_chan_t *ch = chan_new(1);
    fill(ch, 1);
    void *item = NULL;
    ASSERT_EQ(park_chan_recv_until(ch, &item, 0), 0);
    ASSERT_TRUE(item == ITEM(0));
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

TEST(chan_recv_until_past_deadline_on_an_empty_channel_times_out)
{
    park_chan_t *ch = chan_new(1);
    park_time_t start = park_now();
    void *item = &item;
    ASSERT_EQ(park_chan_recv_until(ch, &item, 0), ETIMEDOUT);
    ASSERT_EQ(park_chan_recv_until(ch, &item, start), ETIMEDOUT);
    ASSERT_TRUE(item == (void *)&item);
    ASSERT_LT(park_now() - start, LATE_NS);
    ASSERT_EQ(receivers_queued(ch), 0);
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

TEST(chan_recv_until_near_deadline_times_out_not_before_it_and_takes_nothing)
{
    park_chan_t *ch = chan_new(1);
    static const uint64_t ahead_ns[] = {1000, 50000, 500000, MS, 5 * MS};
    for (size_t i = 0; i < sizeof ahead_ns / sizeof ahead_ns[0]; i++) {
        park_time_t deadline = park_deadline_in(ahead_ns[i]);
        void *item = &item;
        ASSERT_EQ(park_chan_recv_until(ch, &item, deadline), ETIMEDOUT);
        park_time_t now = park_now();
        ASSERT_GE(now, deadline);
        ASSERT_LT(now - deadline, LATE_NS);
        ASSERT_EQ(receivers_queued(ch), 0);
    }
    /* An item sent after the timeouts is not swallowed by them. */
    fill(ch, 1);
    assert_recv(ch, ITEM(0));
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

TEST(chan_recv_until_takes_an_item_sent_before_the_deadline)
{
    park_chan_t *ch = chan_new(1);
    struct caller r = {
        .ch = ch, .kind = RECV, .timed = true, .deadline = park_deadline_in(HANG_NS)};
    test_threads_t *t = start_queued(&r);
    ASSERT_EQ(park_chan_send(ch, ITEM(3)), 0);
    test_threads_join(t);
    ASSERT_EQ(r.result, 0);
    ASSERT_TRUE(r.item == ITEM(3));
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

/* The timed receiver queues behind a blocking one and gives up; the
 * next item goes to the blocking one. */
TEST(chan_timed_out_receiver_behind_another_leaves_the_next_item_to_it)
{
    park_chan_t *ch = chan_new(1);
    struct caller r = {.ch = ch, .kind = RECV};
    test_threads_t *t = start_queued(&r);
    void *item = &item;
    park_time_t deadline = park_deadline_in(5 * MS);
    ASSERT_EQ(park_chan_recv_until(ch, &item, deadline), ETIMEDOUT);
    ASSERT_GE(park_now(), deadline);
    ASSERT_EQ(receivers_queued(ch), 1);
    ASSERT_EQ(park_chan_send(ch, ITEM(4)), 0);
    test_threads_join(t);
    ASSERT_TRUE(r.item == ITEM(4));
    assert_empty(ch);
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

/* ---- close --------------------------------------------------------------------------- */

TEST(chan_send_after_close_is_epipe)
{
    park_chan_t *ch = chan_new(2);
    park_chan_close(ch);
    ASSERT_EQ(park_chan_send(ch, ITEM(0)), EPIPE);
    ASSERT_EQ(park_chan_try_send(ch, ITEM(0)), EPIPE);
    ASSERT_EQ(park_chan_send_until(ch, ITEM(0), park_deadline_in(MS)), EPIPE);
    ASSERT_EQ(park_chan_send_until(ch, ITEM(0), 0), EPIPE);
    void *item = &item;
    ASSERT_EQ(park_chan_try_recv(ch, &item), EPIPE);
    ASSERT_TRUE(item == (void *)&item);
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

TEST(chan_close_keeps_buffered_items_receivable_then_recv_is_epipe)
{
    park_chan_t *ch = chan_new(3);
    fill(ch, 3);
    park_chan_close(ch);
    park_chan_close(ch); /* idempotent */
    ASSERT_EQ(park_chan_try_send(ch, ITEM(9)), EPIPE);
    void *item = NULL;
    ASSERT_EQ(park_chan_recv(ch, &item), 0);
    ASSERT_TRUE(item == ITEM(0));
    ASSERT_EQ(park_chan_recv_until(ch, &item, 0), 0);
    ASSERT_TRUE(item == ITEM(1));
    assert_recv(ch, ITEM(2));
    ASSERT_EQ(park_chan_recv(ch, &item), EPIPE);
    ASSERT_EQ(park_chan_recv_until(ch, &item, park_deadline_in(MS)), EPIPE);
    ASSERT_EQ(park_chan_try_recv(ch, &item), EPIPE);
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

TEST(chan_close_wakes_blocked_senders_with_epipe)
{
    enum { N = 3 };
    park_chan_t *ch = chan_new(1);
    fill(ch, 1);
    struct caller s[N];
    test_threads_t *t[N];
    for (int i = 0; i < N; i++) {
        s[i] = (struct caller){.ch = ch,
                               .kind = SEND,
                               .item = ITEM(1 + i),
                               .timed = i == 1,
                               .deadline = park_deadline_in(HANG_NS)};
        t[i] = start_queued(&s[i]);
    }
    park_chan_close(ch);
    for (int i = 0; i < N; i++) {
        test_threads_join(t[i]);
        ASSERT_EQ(s[i].result, EPIPE);
    }
    ASSERT_EQ(senders_queued(ch), 0);
    assert_recv(ch, ITEM(0)); /* only what went in before the close */
    void *item;
    ASSERT_EQ(park_chan_try_recv(ch, &item), EPIPE);
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

TEST(chan_close_wakes_blocked_receivers_with_epipe)
{
    enum { N = 3 };
    park_chan_t *ch = chan_new(2);
    struct caller r[N];
    test_threads_t *t[N];
    for (int i = 0; i < N; i++) {
        r[i] = (struct caller){.ch = ch,
                               .kind = RECV,
                               .item = ITEM(99),
                               .timed = i == 1,
                               .deadline = park_deadline_in(HANG_NS)};
        t[i] = start_queued(&r[i]);
    }
    park_chan_close(ch);
    for (int i = 0; i < N; i++) {
        test_threads_join(t[i]);
        ASSERT_EQ(r[i].result, EPIPE);
        ASSERT_TRUE(r[i].item == ITEM(99));
    }
    ASSERT_EQ(receivers_queued(ch), 0);
    ASSERT_EQ(park_chan_destroy(ch), 0);
}

/* ---- asynchronous send and receive ----------------------------------------------------- */

static park_pool_t *pool_new(void)
{
    park_pool_t *pool = NULL;
    park_pool_config_t cfg = {.threads = 2};
    ASSERT_EQ(park_pool_create(&pool, &cfg), 0);
    return pool;
}

static _Thread_local bool in_call; /* set around a call that may complete a task */

struct cont {
    park_pool_t *pool;
    int err;
    void *result;
    atomic_bool ran;
};

static void cont_fn(park_task_t *done, void *arg)
{
    struct cont *c = arg;
    if (in_call)
        test_fail(__FILE__, __LINE__, "a continuation ran within the call that completed it");
    ASSERT_TRUE(park_pool_current() == c->pool);
    c->err = park_task_result(done, &c->result);
    atomic_store(&c->ran, true);
}

static void assert_task(park_task_t *t, int err, void *result)
{
    ASSERT_TRUE(t != NULL);
    void *r = (void *)&r;
    ASSERT_EQ(park_task_wait(t, &r), err);
    ASSERT_TRUE(r == result);
}

TEST(chan_recv_async_with_an_item_there_completes_at_once_with_it)
{
    park_pool_t *pool = pool_new();
    park_chan_t *ch = chan_new(2);
    fill(ch, 1);
    park_task_t *t = park_chan_recv_async(ch, pool);
    ASSERT_TRUE(park_task_done(t));
    assert_task(t, 0, ITEM(0));
    park_task_release(t);
    assert_empty(ch);
    ASSERT_EQ(park_chan_destroy(ch), 0);
    park_pool_destroy(pool);
}

TEST(chan_send_async_with_room_completes_at_once)
{
    park_pool_t *pool = pool_new();
    park_chan_t *ch = chan_new(1);
    park_task_t *t = park_chan_send_async(ch, pool, ITEM(0));
    ASSERT_TRUE(park_task_done(t));
    assert_task(t, 0, NULL);
    park_task_release(t);
    assert_recv(ch, ITEM(0));
    ASSERT_EQ(park_chan_destroy(ch), 0);
    park_pool_destroy(pool);
}

TEST(chan_recv_async_completes_with_the_item_on_the_pool_not_on_the_sender)
{
    park_pool_t *pool = pool_new();
    park_chan_t *ch = chan_new(1);
    park_task_t *t = park_chan_recv_async(ch, pool);
    ASSERT_FALSE(park_task_done(t));
    ASSERT_EQ(receivers_queued(ch), 1);
    struct cont c = {.pool = pool};
    ASSERT_EQ(park_task_then(t, pool, cont_fn, &c), 0);
    in_call = true;
    ASSERT_EQ(park_chan_send(ch, ITEM(6)), 0);
    in_call = false;
    AWAIT(atomic_load(&c.ran));
    ASSERT_EQ(c.err, 0);
    ASSERT_TRUE(c.result == ITEM(6));
    assert_task(t, 0, ITEM(6));
    park_task_release(t);
    assert_empty(ch);
    ASSERT_EQ(park_chan_destroy(ch), 0);
    park_pool_destroy(pool);
}

TEST(chan_send_async_on_a_full_channel_completes_when_a_slot_frees)
{
    park_pool_t *pool = pool_new();
    park_chan_t *ch = chan_new(1);
    fill(ch, 1);
    park_task_t *t = park_chan_send_async(ch, pool, ITEM(1));
    ASSERT_FALSE(park_task_done(t));
    ASSERT_EQ(senders_queued(ch), 1);
    struct cont c = {.pool = pool};
    ASSERT_EQ(park_task_then(t, pool, cont_fn, &c), 0);
    in_call = true;
    assert_recv(ch, ITEM(0));
    in_call = false;
    AWAIT(atomic_load(&c.ran));
    ASSERT_EQ(c.err, 0);
    assert_task(t, 0, NULL);
    park_task_release(t);
    assert_recv(ch, ITEM(1));
    ASSERT_EQ(park_chan_destroy(ch), 0);
    park_pool_destroy(pool);
}

TEST(chan_cancel_of_a_pending_recv_async_takes_no_item)
{
    park_pool_t *pool = pool_new();
    park_chan_t *ch = chan_new(1);
    park_task_t *t = park_chan_recv_async(ch, pool);
    ASSERT_EQ(park_task_cancel(t), 0);
    assert_task(t, ECANCELED, NULL);
    ASSERT_EQ(receivers_queued(ch), 0);
    ASSERT_EQ(park_chan_send(ch, ITEM(2)), 0);
    assert_recv(ch, ITEM(2));
    park_task_release(t);
    ASSERT_EQ(park_chan_destroy(ch), 0);
    park_pool_destroy(pool);
}

TEST(chan_cancel_of_a_pending_send_async_sends_nothing)
{
    park_pool_t *pool = pool_new();
    park_chan_t *ch = chan_new(1);
    fill(ch, 1);
    park_task_t *t = park_chan_send_async(ch, pool, ITEM(1));
    ASSERT_EQ(park_task_cancel(t), 0);
    assert_task(t, ECANCELED, NULL);
    ASSERT_EQ(senders_queued(ch), 0);
    assert_recv(ch, ITEM(0));
    assert_empty(ch);
    park_task_release(t);
    ASSERT_EQ(park_chan_destroy(ch), 0);
    park_pool_destroy(pool);
}

TEST(chan_cancel_losing_to_the_grant_is_ealready_and_the_task_has_the_item)
{
    park_pool_t *pool = pool_new();
    park_chan_t *ch = chan_new(1);
    park_task_t *t = park_chan_recv_async(ch, pool);
    ASSERT_EQ(park_chan_send(ch, ITEM(8)), 0);
    ASSERT_EQ(park_task_cancel(t), EALREADY);
    assert_task(t, 0, ITEM(8));
    assert_empty(ch);
    park_task_release(t);
    ASSERT_EQ(park_chan_destroy(ch), 0);
    park_pool_destroy(pool);
}

TEST(chan_recv_async_deadline_takes_no_item)
{
    park_pool_t *pool = pool_new();
    park_chan_t *ch = chan_new(1);
    park_task_t *t = park_chan_recv_async(ch, pool);
    ASSERT_EQ(park_task_cancel_at(t, park_deadline_in(MS)), 0);
    assert_task(t, ETIMEDOUT, NULL);
    ASSERT_EQ(receivers_queued(ch), 0);
    fill(ch, 1);
    assert_recv(ch, ITEM(0));
    park_task_release(t);
    ASSERT_EQ(park_chan_destroy(ch), 0);
    park_pool_destroy(pool);
}

TEST(chan_dropping_a_pending_recv_async_loses_no_item)
{
    park_pool_t *pool = pool_new();
    park_chan_t *ch = chan_new(1);
    park_task_t *t = park_chan_recv_async(ch, pool);
    park_task_release(t);
    ASSERT_EQ(receivers_queued(ch), 0);
    ASSERT_EQ(park_chan_send(ch, ITEM(3)), 0);
    assert_recv(ch, ITEM(3));
    ASSERT_EQ(park_chan_destroy(ch), 0);
    park_pool_destroy(pool);
}

TEST(chan_dropping_an_unseen_granted_recv_async_gives_the_item_back)
{
    park_pool_t *pool = pool_new();
    park_chan_t *ch = chan_new(2);
    park_task_t *t = park_chan_recv_async(ch, pool);
    ASSERT_EQ(park_chan_send(ch, ITEM(1)), 0); /* granted to t */
    assert_empty(ch);
    park_task_release(t); /* nobody looked: the item goes back */
    assert_recv(ch, ITEM(1));
    ASSERT_EQ(park_chan_destroy(ch), 0);
    park_pool_destroy(pool);
}

/* The item goes back behind the buffered ones, beyond the capacity. */
TEST(chan_an_item_given_back_to_a_full_channel_comes_out_after_the_buffered_ones)
{
    park_pool_t *pool = pool_new();
    park_chan_t *ch = chan_new(1);
    park_task_t *t = park_chan_recv_async(ch, pool);
    ASSERT_EQ(park_chan_send(ch, ITEM(1)), 0); /* granted to t */
    ASSERT_EQ(park_chan_send(ch, ITEM(2)), 0); /* fills the channel */
    park_task_release(t);
    ASSERT_EQ(park_chan_try_send(ch, ITEM(3)), EAGAIN);
    assert_recv(ch, ITEM(2));
    assert_recv(ch, ITEM(1));
    assert_empty(ch);
    ASSERT_EQ(park_chan_try_send(ch, ITEM(3)), 0);
    assert_recv(ch, ITEM(3));
    ASSERT_EQ(park_chan_destroy(ch), 0);
    park_pool_destroy(pool);
}

TEST(chan_dropping_an_unseen_recv_async_completed_at_once_gives_the_item_back)
{
    park_pool_t *pool = pool_new();
    park_chan_t *ch = chan_new(2);
    fill(ch, 1);
    park_task_release(park_chan_recv_async(ch, pool));
    assert_recv(ch, ITEM(0));
    ASSERT_EQ(park_chan_destroy(ch), 0);
    park_pool_destroy(pool);
}

TEST(chan_close_completes_pending_async_sends_and_receives_with_epipe)
{
    park_pool_t *pool = pool_new();
    park_chan_t *full = chan_new(1), *empty = chan_new(1);
    fill(full, 1);
    park_task_t *s = park_chan_send_async(full, pool, ITEM(1));
    park_task_t *r = park_chan_recv_async(empty, pool);
    park_chan_close(full);
    park_chan_close(empty);
    assert_task(s, EPIPE, NULL);
    assert_task(r, EPIPE, NULL);
    park_task_release(s);
    park_task_release(r);
    assert_recv(full, ITEM(0));
    ASSERT_EQ(park_chan_destroy(full), 0);
    ASSERT_EQ(park_chan_destroy(empty), 0);
    park_pool_destroy(pool);
}

TEST(chan_async_on_a_closed_channel_is_epipe_once_empty)
{
    park_pool_t *pool = pool_new();
    park_chan_t *ch = chan_new(1);
    fill(ch, 1);
    park_chan_close(ch);
    park_task_t *s = park_chan_send_async(ch, pool, ITEM(1));
    assert_task(s, EPIPE, NULL);
    park_task_t *r1 = park_chan_recv_async(ch, pool);
    assert_task(r1, 0, ITEM(0));
    park_task_t *r2 = park_chan_recv_async(ch, pool);
    assert_task(r2, EPIPE, NULL);
    park_task_release(s);
    park_task_release(r1);
    park_task_release(r2);
    ASSERT_EQ(park_chan_destroy(ch), 0);
    park_pool_destroy(pool);
}

TEST(chan_destroy_while_a_recv_async_waits_is_ebusy)
{
    park_pool_t *pool = pool_new();
    park_chan_t *ch = chan_new(1);
    park_task_t *t = park_chan_recv_async(ch, pool);
    ASSERT_EQ(park_chan_destroy(ch), EBUSY);
    ASSERT_EQ(park_task_cancel(t), 0);
    park_task_release(t);
    ASSERT_EQ(park_chan_destroy(ch), 0);
    park_pool_destroy(pool);
}

TEST(chan_async_receivers_and_threads_are_served_in_arrival_order)
{
    park_pool_t *pool = pool_new();
    park_chan_t *ch = chan_new(1);
    park_task_t *a = park_chan_recv_async(ch, pool);
    struct caller r = {.ch = ch, .kind = RECV};
    test_threads_t *t = start_queued(&r);
    park_task_t *b = park_chan_recv_async(ch, pool);
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(park_chan_send(ch, ITEM(i)), 0);
    assert_task(a, 0, ITEM(0));
    test_threads_join(t);
    ASSERT_TRUE(r.item == ITEM(1));
    assert_task(b, 0, ITEM(2));
    park_task_release(a);
    park_task_release(b);
    ASSERT_EQ(park_chan_destroy(ch), 0);
    park_pool_destroy(pool);
}

/* ---- misuse ---------------------------------------------------------------------------- */

TEST(chan_destroy_of_null_returns_zero)
{
    ASSERT_EQ(park_chan_destroy(NULL), 0);
}

#ifdef PARK_DEBUG
static void destroy_chan_twice(void *arg)
{
    (void)arg;
    park_chan_t *ch = NULL;
    if (park_chan_create(&ch, 4) != 0)
        _exit(3);
    park_chan_destroy(ch);
    park_chan_destroy(ch);
}

TEST(chan_destroy_twice_aborts_with_a_message)
{
    test_expect_abort(destroy_chan_twice, NULL, "park_chan_destroy(");
    test_expect_abort(destroy_chan_twice, NULL, "not a live channel");
}
#endif

static const test_case_t tests[] = {
    TEST_ENTRY(chan_create_with_capacity_zero_is_einval),
    TEST_ENTRY(chan_create_with_an_impossible_capacity_is_enomem),
    TEST_ENTRY(chan_destroy_drops_buffered_items),
    TEST_ENTRY(chan_destroy_while_a_receiver_waits_is_ebusy_and_keeps_it_usable),
    TEST_ENTRY(chan_destroy_while_a_sender_waits_is_ebusy),
    TEST_ENTRY(chan_try_send_on_a_full_channel_is_eagain),
    TEST_ENTRY(chan_try_recv_on_an_empty_channel_is_eagain),
    TEST_ENTRY(chan_items_come_out_in_the_order_they_were_sent),
    TEST_ENTRY(chan_null_is_an_item),
    TEST_ENTRY(chan_capacity_one_ping_pong_keeps_every_item_in_order),
    TEST_ENTRY(chan_blocked_sender_wakes_when_a_slot_frees),
    TEST_ENTRY(chan_blocked_sender_of_a_large_channel_takes_a_single_freed_slot),
    TEST_ENTRY(chan_blocked_receiver_wakes_on_send),
    TEST_ENTRY(chan_blocked_senders_get_in_in_arrival_order),
    TEST_ENTRY(chan_blocked_receivers_are_served_in_arrival_order),
    TEST_ENTRY(chan_send_with_receivers_queued_wakes_one),
    TEST_ENTRY(chan_recv_with_senders_queued_wakes_one),
    TEST_ENTRY(chan_try_send_does_not_pass_a_blocked_sender),
    TEST_ENTRY(chan_send_until_past_deadline_takes_free_room),
    TEST_ENTRY(chan_send_until_past_deadline_on_a_full_channel_times_out_and_sends_nothing),
    TEST_ENTRY(chan_send_until_past_deadline_takes_a_cell_whose_receive_is_finishing),
    TEST_ENTRY(chan_send_until_near_deadline_times_out_not_before_it),
    TEST_ENTRY(chan_recv_until_past_deadline_takes_an_item_there),
    TEST_ENTRY(chan_recv_until_past_deadline_on_an_empty_channel_times_out),
    TEST_ENTRY(chan_recv_until_near_deadline_times_out_not_before_it_and_takes_nothing),
    TEST_ENTRY(chan_recv_until_takes_an_item_sent_before_the_deadline),
    TEST_ENTRY(chan_timed_out_receiver_behind_another_leaves_the_next_item_to_it),
    TEST_ENTRY(chan_send_after_close_is_epipe),
    TEST_ENTRY(chan_close_keeps_buffered_items_receivable_then_recv_is_epipe),
    TEST_ENTRY(chan_close_wakes_blocked_senders_with_epipe),
    TEST_ENTRY(chan_close_wakes_blocked_receivers_with_epipe),
    TEST_ENTRY(chan_recv_async_with_an_item_there_completes_at_once_with_it),
    TEST_ENTRY(chan_send_async_with_room_completes_at_once),
    TEST_ENTRY(chan_recv_async_completes_with_the_item_on_the_pool_not_on_the_sender),
    TEST_ENTRY(chan_send_async_on_a_full_channel_completes_when_a_slot_frees),
    TEST_ENTRY(chan_cancel_of_a_pending_recv_async_takes_no_item),
    TEST_ENTRY(chan_cancel_of_a_pending_send_async_sends_nothing),
    TEST_ENTRY(chan_cancel_losing_to_the_grant_is_ealready_and_the_task_has_the_item),
    TEST_ENTRY(chan_recv_async_deadline_takes_no_item),
    TEST_ENTRY(chan_dropping_a_pending_recv_async_loses_no_item),
    TEST_ENTRY(chan_dropping_an_unseen_granted_recv_async_gives_the_item_back),
    TEST_ENTRY(chan_an_item_given_back_to_a_full_channel_comes_out_after_the_buffered_ones),
    TEST_ENTRY(chan_dropping_an_unseen_recv_async_completed_at_once_gives_the_item_back),
    TEST_ENTRY(chan_close_completes_pending_async_sends_and_receives_with_epipe),
    TEST_ENTRY(chan_async_on_a_closed_channel_is_epipe_once_empty),
    TEST_ENTRY(chan_destroy_while_a_recv_async_waits_is_ebusy),
    TEST_ENTRY(chan_async_receivers_and_threads_are_served_in_arrival_order),
    TEST_ENTRY(chan_destroy_of_null_returns_zero),
#ifdef PARK_DEBUG
    TEST_ENTRY(chan_destroy_twice_aborts_with_a_message),
#endif
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
