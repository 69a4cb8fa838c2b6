/* lib/chan_async.c: park_chan's asynchronous send and receive (lib/async.h),
 * and the items that dropped receive tasks give back.
 * The machine they act on: lib/chan.c; design notes: docs/design/chan.md.
 *
 * An asynchronous send or receive is an acquisition task whose waiter
 * queues with the same callbacks as a blocking call's, in the same FIFO
 * order; a kick completes it with the item (or puts its item in).
 *
 * Given-back items: a receive task granted an item but released unseen
 * gives the item back (rule 5). It goes into the ring if there is room;
 * otherwise onto a list under the senders' lock, counted as a queued
 * sender (SWAIT), whose items kicks move into the ring before any queued
 * sender's, also past CLOSED. */
#include <errno.h>
#include <stdlib.h>

#include "async.h"
#include "chan_impl.h"
#include "wait/spin.h"

_Static_assert(sizeof(struct park__chan_op) <= PARK__ACQ_CTX_SIZE, "an op fits an acquisition");

/* ---- given-back items ---------------------------------------------------------- */

struct give {
    park_chan_t *ch;
    park__chan_given_t *node;
    bool listed; /* the node went onto the list */
    bool kick;   /* receivers are queued */
    park__chan_given_t *freed;
};

static unsigned give_select(void *ctx, park__waiter_t *w)
{
    (void)ctx;
    (void)w;
    return PARK__SELECT_STOP; /* queued senders come after the item */
}

/* Senders' lock held. */
static void give_finish(void *ctx, bool more)
{
    struct give *g = ctx;
    park_chan_t *ch = g->ch;
    /* park__chan_ring_push reads SWAIT, which changes only under this
     * lock. */
    if (park__chan_ring_push(ch, g->node->item, PARK__CHAN_CLOSED, true, &g->kick) ==
        PARK__CHAN_RING_DONE)
        return;
    g->node->next = NULL;
    if (ch->given)
        ch->given_last->next = g->node;
    else
        ch->given = g->node;
    ch->given_last = g->node;
    g->listed = true;
    /* give back: waiters |= SWAIT, the list counts as a queued sender.
     * seq_cst: pairs with the CAS in ring_pop (lib/chan_ring.h), as in
     * send_validate. */
    atomic_fetch_or_explicit(&ch->waiters, PARK__CHAN_SWAIT, memory_order_seq_cst);
    size_t moved = park__chan_drain_given(ch, &g->freed);
    if (!more && !ch->given)
        clear_swait(ch);
    g->kick = moved && waiting(ch, PARK__CHAN_RWAIT);
}

/* Puts an item taken out of ch back in at the end, beyond the capacity if
 * the ring is full. Never blocks (but for memory: see below). */
static void give_back_item(park_chan_t *ch, void *item)
{
    bool kick;
    if (park__chan_ring_push(ch, item, PARK__CHAN_CLOSED, true, &kick) == PARK__CHAN_RING_DONE) {
        park__chan_settle(ch, kick, false);
        return;
    }
    /* Allocated before the lock; without memory the item would be lost, so
     * wait for some, yielding (there is nothing to sleep on). */
    park__chan_given_t *node;
    for (park__spin_t spin = park__spin_init(0, 0); !(node = malloc(sizeof *node));)
        park__spin_forever(&spin);
    node->item = item;
    struct give g = {.ch = ch, .node = node};
    park__unpark(skey(ch), give_select, give_finish, &g);
    if (!g.listed)
        free(node);
    park__chan_free_given(g.freed);
    park__chan_settle(ch, g.kick, false);
}

/* ---- asynchronous send and receive (lib/async.h) ------------------------------ */

static int acq_outcome(void *ctx, park__waiter_t *w)
{
    (void)ctx;
    return (int)w->grant; /* 0, or EPIPE from close */
}

static void *recv_granted(void *ctx, park__waiter_t *w)
{
    (void)w;
    return ((struct park__chan_op *)ctx)->item;
}

static void recv_give_back(void *ctx, park__waiter_t *w)
{
    struct park__chan_op *op = ctx;
    (void)w;
    give_back_item(op->ch, op->item);
}

static const park__acq_ops_t recv_acq_ops = {
    .wait = &park__chan_recv_wait_ops,
    .granted = recv_granted,
    .outcome = acq_outcome,
    .give_back = recv_give_back,
};

/* No give_back: the item went in, nothing is held. */
static const park__acq_ops_t send_acq_ops = {
    .wait = &park__chan_send_wait_ops,
    .outcome = acq_outcome,
};

/* Completes an acquisition that was never left queued as a grant would,
 * so that a receive task completed with an item gives it back if it is
 * dropped unseen, like one granted later. */
static park_task_t *grant_now(park_task_t *t, int err)
{
    return park__acq_grant_now(t, (uintptr_t)err);
}

park_task_t *park_chan_recv_async(park_chan_t *ch, park_pool_t *pool)
{
    /* The task first: once an item is taken it must have somewhere to go. */
    park_task_t *t = park__acq_new(pool, &recv_acq_ops, rkey(ch), 0);
    if (!t)
        return NULL;
    struct park__chan_op *op = park__acq_ctx(t);
    op->ch = ch;
    park__acq_waiter(t)->want = (uintptr_t)&op->item;
    for (;;) {
        int err = park_chan_try_recv(ch, &op->item);
        if (err != EAGAIN)
            return grant_now(t, err);
        op->verdict = PARK__CHAN_V_NONE;
        if (park__acq_enqueue(t, 0) == PARK__WAIT_QUEUED)
            return t;
        if (op->verdict == PARK__CHAN_V_DONE) {
            park__chan_settle(ch, false, op->kick);
            return grant_now(t, 0);
        }
        if (op->verdict == PARK__CHAN_V_CLOSED)
            return grant_now(t, EPIPE);
    }
}

park_task_t *park_chan_send_async(park_chan_t *ch, park_pool_t *pool, void *item)
{
    park_task_t *t = NULL;
    for (;;) {
        int err = park_chan_try_send(ch, item);
        if (err == EAGAIN) {
            if (!t) {
                t = park__acq_new(pool, &send_acq_ops, skey(ch), (uintptr_t)item);
                if (!t)
                    return NULL;
                struct park__chan_op *op = park__acq_ctx(t);
                op->ch = ch;
                op->item = item;
            }
            struct park__chan_op *op = park__acq_ctx(t);
            op->verdict = PARK__CHAN_V_NONE;
            if (park__acq_enqueue(t, 0) == PARK__WAIT_QUEUED)
                return t;
            if (op->verdict == PARK__CHAN_V_NONE)
                continue;
            err = op->verdict == PARK__CHAN_V_DONE ? 0 : EPIPE;
            if (err == 0)
                park__chan_settle(ch, op->kick, false);
        }
        if (err == 0) {
            if (t)
                park__acq_discard(t);
            return park__task_ready();
        }
        return t ? grant_now(t, err) : park__task_completed(err, NULL);
    }
}
