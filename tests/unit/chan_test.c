/* tests/unit/chan_test.c: park_chan, one behaviour per test; its
 * asynchronous send and receive: chan_async_test.c. Lined up as
 * tests/unit/chan_test.h says. */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include <park/park.h>

#include "chan_impl.h"
#include "wait/wait.h"

#include "chan_test.h"
#include "test.h"

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
    TEST_ENTRY(chan_destroy_of_null_returns_zero),
#ifdef PARK_DEBUG
    TEST_ENTRY(chan_destroy_twice_aborts_with_a_message),
#endif
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
