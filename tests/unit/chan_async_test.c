/* tests/unit/chan_async_test.c: park_chan_send_async and
 * park_chan_recv_async (lib/chan_async.c), one behaviour per test; lined
 * up as tests/unit/chan_test.h says. Continuations are checked against a
 * thread-local flag set around the call that completes their task. */
#include <errno.h>
#include <stdatomic.h>

#include <park/park.h>

#include "wait/wait.h"

#include "chan_test.h"
#include "test.h"

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

static const test_case_t tests[] = {
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
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
