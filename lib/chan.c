/* lib/chan.c: park_chan, a bounded MPMC channel: a lock-free ring whose
 * full and empty sides queue in lib/wait. Design notes (overtaking, no lost
 * wake-up, hand-off, given-back items, and why the channel keeps its own
 * ring rather than sharing the pool's): docs/design/chan.md; protocol
 * model: tests/model/chan.pml. Asynchronous
 * send and receive: lib/chan_async.c; what both share: lib/chan_impl.h.
 *
 * The ring, its cells and their sequences: lib/chan_ring.h (inline in
 * this file's paths) and lib/chan_ring.c (the lock-free send).
 *
 * State words (rule 1), in lib/chan_impl.h:
 *   tail     pos << 1 | CLOSED   written by sends (and close)
 *   head     pos                 written by receives
 *   waiters  RWAIT | SWAIT       a line of its own, written only when waiters
 *                                come and go. RWAIT: receivers queued (key
 *                                ch); SWAIT: senders queued (key ch + 1), or
 *                                given-back items listed
 * Each flag changes only under its key's bucket lock ("owned", below), by
 * an atomic or/and. CLOSED is set once; a send reserves only while it is
 * clear, given-back items excepted.
 *
 * Transitions (h, t: positions; c: CLOSED):
 *   try send         tail (t, 0) -> (t+1, 0)  CAS, SWAIT read clear, cell free
 *   try recv         head h -> h+1            CAS, RWAIT read clear, cell full
 *   recv queues      waiters |= RWAIT         owned; then the ring re-checked
 *   recv validates,  head h -> h+1            CAS, owned: an item came after
 *   kick receiver                             all / goes to the oldest one
 *   last recv leaves waiters &= ~RWAIT        owned
 *   send queues      waiters |= SWAIT         owned, c clear; then re-checked
 *   send validates,  tail (t, 0) -> (t+1, 0)  CAS, owned: room came after all
 *   kick sender                               / the oldest one's item goes in
 *                                             (given-back items first, from
 *                                             (t, c) too)
 *   last send leaves waiters &= ~SWAIT        owned, no item listed
 *   give back        tail (t, c) -> (t+1, c)  CAS, SWAIT clear; or else
 *                    waiters |= SWAIT         owned, the item listed
 *   close            tail (t, 0) -> (t, CLOSED)  or; every waiter granted
 *
 * Wakes: a kick grants one waiter (a close all). A thread granted takes
 * over the kicker's follow-up (PARK__CHAN_HANDED: kick the other side if
 * the kick found waiters there, its own if more of its side wait with work
 * for them), so one operation wakes one thread, and a chain of hand-overs
 * runs one wake per thread, each woken thread waking the next; a task
 * cannot follow up, so the kicker does it for a task (park__chan_settle). */
#include <errno.h>
#include <stdlib.h>

#include "chan_impl.h"
#include "chan_ring.h"
#include "os/os.h"
#include "wait/lock.h"
#include "wait/spin.h"

#define SLIP_MAX 64 /* room_soon waits for at most this much room */

/* ---- kicks ------------------------------------------------------------------ */

/* Receivers' lock held: an item is buffered or being written beyond head.
 * seq_cst: as in claim_owned. */
static bool has_item(park_chan_t *ch)
{
    uint64_t h = atomic_load_explicit(&ch->head, memory_order_seq_cst);
    return PARK__CHAN_POS(atomic_load_explicit(&ch->tail, memory_order_seq_cst)) > h;
}

/* Senders' lock held: a position is free. seq_cst: as in reserve_owned. */
static bool has_room(park_chan_t *ch)
{
    uint64_t t = atomic_load_explicit(&ch->tail, memory_order_seq_cst);
    uint64_t h = atomic_load_explicit(&ch->head, memory_order_seq_cst);
    return (int64_t)(PARK__CHAN_POS(t) - h) < (int64_t)ch->cap;
}

struct kick {
    park_chan_t *ch;
    bool closing;              /* grant every waiter: an item, or EPIPE */
    bool drained;              /* the given-back list was moved first */
    bool seen;                 /* a waiter was shown */
    size_t moved;              /* positions the kicker moved and must follow up */
    park__waiter_t *baton;     /* the thread granted: it follows up itself */
    bool other;                /* the other side has waiters to kick now */
    bool again;                /* this side has waiters and work for them still */
    park__chan_given_t *freed; /* list nodes to free after the lock */
};

size_t park__chan_drain_given(park_chan_t *ch, park__chan_given_t **freed)
{
    size_t moved = 0;
    while (ch->given && push_owned(ch, ch->given->item, PARK__CHAN_CLOSED)) {
        park__chan_given_t *g = ch->given;
        ch->given = g->next;
        g->next = *freed;
        *freed = g;
        moved++;
    }
    return moved;
}

/* A kick of the senders moves the given-back items first, once. */
static void drain_given(struct kick *k)
{
    k->drained = true;
    k->moved += park__chan_drain_given(k->ch, &k->freed);
}

/* Bucket locked, w granted what it waited for: a task (which cannot
 * follow up) or, in a close, anyone, is simply woken, and the kicker
 * follows up for it; a thread is handed the follow-up (the baton). */
static void hand_over(struct kick *k, park__waiter_t *w)
{
    if (k->closing || w->notify) {
        w->grant = 0;
        k->moved++;
    } else {
        w->grant = PARK__CHAN_HANDED;
        k->baton = w;
    }
}

/* Bucket locked, at the end of a kick that moved a position or granted a
 * thread: whether the other side (its flag `other_flag`) has waiters to
 * kick, and whether this side has more waiters with work for them (`work`:
 * has_item or has_room); the baton's grant carries both. */
static void follow_up(struct kick *k, bool more, unsigned other_flag, bool (*work)(park_chan_t *ch))
{
    if (!k->moved && !k->baton)
        return;
    k->other = waiting(k->ch, other_flag);
    if (more && !k->closing)
        k->again = work(k->ch);
    if (k->baton)
        k->baton->grant |= (k->other ? PARK__CHAN_OTHER : 0) | (k->again ? PARK__CHAN_MORE : 0);
}

/* The oldest receiver gets the oldest item. A thread is handed it with
 * the follow-up (PARK__CHAN_HANDED, and what the kicker learnt in the
 * grant's other bits), so the kicker wakes nobody else; a task cannot
 * follow up, so the kicker does it for the task. One waiter per kick, but
 * for a close, which grants them all. */
static unsigned kick_receiver(void *ctx, park__waiter_t *w)
{
    struct kick *k = ctx;
    void *item;
    k->seen = true;
    if (!pop_owned(k->ch, &item)) {
        if (!k->closing)
            return PARK__SELECT_STOP;
        w->grant = EPIPE;
        return PARK__SELECT_GRANT;
    }
    *(void **)w->want = item;
    hand_over(k, w);
    return k->closing ? PARK__SELECT_GRANT : PARK__SELECT_GRANT | PARK__SELECT_STOP;
}

/* Touches the channel only if receivers were queued: a kick may come
 * after the channel is gone (see park__chan_settle). */
static void kick_receivers_done(void *ctx, bool more)
{
    struct kick *k = ctx;
    if (k->seen && !more)
        clear_rwait(k->ch);
    /* Before the receivers are woken (they may destroy the channel). */
    follow_up(k, more, PARK__CHAN_SWAIT, has_item);
}

/* The oldest sender's item goes in, after the given-back items; a thread
 * follows up itself, a task not, as in kick_receiver. */
static unsigned kick_sender(void *ctx, park__waiter_t *w)
{
    struct kick *k = ctx;
    if (!k->drained)
        drain_given(k);
    if (k->closing) {
        w->grant = EPIPE;
        return PARK__SELECT_GRANT;
    }
    /* Given-back items go in first. */
    if (k->ch->given)
        return PARK__SELECT_STOP;
    if (!push_owned(k->ch, (void *)w->want, 0))
        return PARK__SELECT_STOP;
    hand_over(k, w);
    return PARK__SELECT_GRANT | PARK__SELECT_STOP;
}

static void kick_senders_done(void *ctx, bool more)
{
    struct kick *k = ctx;
    if (!k->drained && k->ch->given)
        drain_given(k);
    if (!more && !k->ch->given)
        clear_swait(k->ch);
    follow_up(k, more, PARK__CHAN_RWAIT, has_room);
}

void park__chan_free_given(park__chan_given_t *g)
{
    while (g) {
        park__chan_given_t *next = g->next;
        free(g);
        g = next;
    }
}

/* Kicks the receivers (an item came for them): true if one was granted or
 * a position moved. */
static bool kick_receivers(park_chan_t *ch, bool closing, struct kick *k)
{
    *k = (struct kick){.ch = ch, .closing = closing};
    park__unpark(rkey(ch), kick_receiver, kick_receivers_done, k);
    return k->moved || k->baton;
}

/* Kicks the senders (room came for them), given-back items first. */
static bool kick_senders(park_chan_t *ch, bool closing, struct kick *k)
{
    *k = (struct kick){.ch = ch, .closing = closing};
    park__unpark(skey(ch), kick_sender, kick_senders_done, k);
    park__chan_free_given(k->freed);
    return k->moved || k->baton;
}

/* Kicks the receivers (an item came for them) and the senders (room came
 * for them), one waiter per kick. A thread granted takes over what is left
 * to do (the baton: it looks at the other side, and passes the next grant
 * of its own side on), so an operation wakes at most one thread. Only
 * where the kicker moved positions itself (for a task, or given-back
 * items) does it look on, at the other side and at its own. It reads the
 * channel only inside kicks that find waiters, so a send or receive whose
 * item or slot was taken over (and the channel destroyed) touches nothing
 * of it (rule 9). */
void park__chan_settle(park_chan_t *ch, bool receivers, bool senders)
{
    struct kick k;
    while (receivers || senders) {
        if (receivers) {
            receivers = false;
            kick_receivers(ch, false, &k);
            if (k.baton)
                return;
            senders = senders || k.other;
            receivers = k.again;
        }
        if (senders) {
            senders = false;
            kick_senders(ch, false, &k);
            if (k.baton)
                return;
            receivers = receivers || k.other;
            senders = k.again;
        }
    }
}

/* ---- waiting ---------------------------------------------------------------- */

/* Receivers' lock held: queue (true), or take an item that came after all
 * / see the channel closed and empty (false, with the verdict). */
static bool recv_validate(void *ctx)
{
    struct park__chan_op *op = ctx;
    park_chan_t *ch = op->ch;
    /* relaxed: RWAIT changes only under this lock. */
    if (atomic_load_explicit(&ch->waiters, memory_order_relaxed) & PARK__CHAN_RWAIT)
        return true; /* older receivers are queued: get in line */
    /* recv queues: waiters |= RWAIT. seq_cst: pairs with the CAS in
     * park__chan_ring_push and the RWAIT read after it (waiting). */
    atomic_fetch_or_explicit(&ch->waiters, PARK__CHAN_RWAIT, memory_order_seq_cst);
    uint64_t pos;
    if (claim_owned(ch, &pos)) {
        /* recv validates: nobody else is queued, so the flag goes again.
         * SWAIT is read before the slot is handed over, as in ring_pop. */
        op->kick = waiting(ch, PARK__CHAN_SWAIT);
        clear_rwait(ch);
        op->item = take(ch, pos);
        op->verdict = PARK__CHAN_V_DONE;
        return false;
    }
    /* relaxed: close sets CLOSED before it takes this lock to kick the
     * receivers, so either this sees it or that kick sees this waiter. */
    if (atomic_load_explicit(&ch->tail, memory_order_relaxed) & PARK__CHAN_CLOSED) {
        clear_rwait(ch);
        op->verdict = PARK__CHAN_V_CLOSED;
        return false;
    }
    return true;
}

static void recv_removed(void *ctx, bool more)
{
    struct park__chan_op *op = ctx;
    if (!more)
        clear_rwait(op->ch);
}

/* Senders' lock held: queue (true), or put the item into room that came
 * after all / see the channel closed (false, with the verdict). */
static bool send_validate(void *ctx)
{
    struct park__chan_op *op = ctx;
    park_chan_t *ch = op->ch;
    /* relaxed: as in recv_validate (close kicks the senders under this
     * lock after setting CLOSED). */
    if (atomic_load_explicit(&ch->tail, memory_order_relaxed) & PARK__CHAN_CLOSED) {
        op->verdict = PARK__CHAN_V_CLOSED;
        return false;
    }
    /* relaxed: SWAIT changes only under this lock. */
    if (atomic_load_explicit(&ch->waiters, memory_order_relaxed) & PARK__CHAN_SWAIT)
        return true; /* older senders are queued: get in line */
    /* send queues: waiters |= SWAIT. seq_cst: pairs with the CAS in
     * ring_pop and the SWAIT read after it (waiting). */
    atomic_fetch_or_explicit(&ch->waiters, PARK__CHAN_SWAIT, memory_order_seq_cst);
    uint64_t pos;
    if (reserve_owned(ch, 0, &pos)) {
        /* send validates: as in recv_validate (the list is empty, since
         * SWAIT was clear). */
        op->kick = waiting(ch, PARK__CHAN_RWAIT);
        clear_swait(ch);
        put(ch, pos, op->item);
        op->verdict = PARK__CHAN_V_DONE;
        return false;
    }
    /* relaxed: as above. */
    if (atomic_load_explicit(&ch->tail, memory_order_relaxed) & PARK__CHAN_CLOSED) {
        clear_swait(ch);
        op->verdict = PARK__CHAN_V_CLOSED;
        return false;
    }
    return true;
}

static void send_removed(void *ctx, bool more)
{
    struct park__chan_op *op = ctx;
    if (!more && !op->ch->given)
        clear_swait(op->ch);
}

const park__wait_ops_t park__chan_recv_wait_ops = {
    .validate = recv_validate,
    .removed = recv_removed,
};
const park__wait_ops_t park__chan_send_wait_ops = {
    .validate = send_validate,
    .removed = send_removed,
};

/* ---- operations --------------------------------------------------------------- */

#ifdef PARK_DEBUG
/* PARK_DEBUG: the live channels, so that a second park_chan_destroy aborts
 * with a message instead of freeing twice. Debug builds only: channels
 * may be many and short-lived, and the set takes a global lock and walks
 * its list on every destroy. */
static park__live_set_t live_chans = PARK__LIVE_SET_INIT;
#endif

int park_chan_create(park_chan_t **ch, size_t capacity)
{
    if (capacity == 0)
        return EINVAL;
    if (capacity > (SIZE_MAX - sizeof(park_chan_t)) / sizeof(park__chan_cell_t) - 64)
        return ENOMEM;
    size_t size = sizeof(park_chan_t) + capacity * sizeof(park__chan_cell_t);
    park_chan_t *c = aligned_alloc(64, (size + 63) & ~(size_t)63);
    if (!c)
        return ENOMEM;
    atomic_init(&c->tail, 0);
    atomic_init(&c->head, 0);
    atomic_init(&c->waiters, 0);
    atomic_init(&c->adapt[0], PARK__ADAPT_MIN);
    atomic_init(&c->adapt[1], PARK__ADAPT_MIN);
    c->cap = capacity;
    c->mask = (capacity & (capacity - 1)) == 0 ? capacity - 1 : PARK__CHAN_NO_MASK;
    /* room_soon: half the ring, at most SLIP_MAX items. */
    size_t room = capacity / 2 < SLIP_MAX ? capacity / 2 : SLIP_MAX;
    c->slip = room > 0 ? room - 1 : 0;
    c->given = c->given_last = NULL;
    for (size_t i = 0; i < capacity; i++) {
        atomic_init(&c->cells[i].seq, PARK__CHAN_FREE(i));
        c->cells[i].item = NULL;
    }
#ifdef PARK_DEBUG
    park__live_add(&live_chans, &c->live);
#endif
    *ch = c;
    return 0;
}

int park_chan_destroy(park_chan_t *ch)
{
    if (!ch)
        return 0;
    /* Reads only the queues keyed by ch's address, not ch. */
    if (park__wait_has_waiters(rkey(ch)) || park__wait_has_waiters(skey(ch)))
        return EBUSY;
#ifdef PARK_DEBUG
    if (!park__live_remove(&live_chans, &ch->live))
        park__misuse("park_chan_destroy", ch,
                     "not a live channel (destroyed already, or never created)");
#endif
    park__chan_free_given(ch->given);
    free(ch);
    return 0;
}

/* One lock-free attempt (but for kicks it sets off): 0, EAGAIN, EPIPE;
 * `exact` as in park__chan_ring_push. */
static inline int send_try(park_chan_t *ch, void *item, bool exact)
{
    bool kick;
    switch (park__chan_ring_push(ch, item, 0, exact, &kick)) {
    case PARK__CHAN_RING_DONE:
        if (kick) /* without waiters (the usual case), no call */
            park__chan_settle(ch, true, false);
        return 0;
    case PARK__CHAN_RING_CLOSED:
        return EPIPE;
    default:
        return EAGAIN; /* full, or senders are queued ahead */
    }
}

static int recv_try(park_chan_t *ch, void **item)
{
    for (;;) {
        bool kick;
        int r = ring_pop(ch, item, &kick);
        if (r == PARK__CHAN_RING_DONE) {
            if (kick)
                park__chan_settle(ch, false, true);
            return 0;
        }
        if (r == PARK__CHAN_RING_BLOCKED)
            return EAGAIN; /* receivers are queued ahead */
        /* Empty while senders wait (their kicks are on the way) or items
         * given back are listed: pull them in rather than fail. The flag
         * is a hint; the kick decides under the lock. */
        struct kick k;
        if ((waiters_hint(ch) & PARK__CHAN_SWAIT) && kick_senders(ch, false, &k)) {
            if (!k.baton)
                park__chan_settle(ch, k.other, k.again);
            continue;
        }
        return r == PARK__CHAN_RING_CLOSED ? EPIPE : EAGAIN;
    }
}

/* Between the attempts of a blocking call: 256 to 767 pauses, looking
 * after each (the other side usually comes within a few operations), then
 * 4 yields (the peer may be waiting for this CPU). Drawn at random, so that
 * spinners on two CPUs do not give up and switch side in step; drawn
 * before a call's first try (docs/design/chan.md, Tuning). */
static park__spin_t op_spin(void)
{
    return park__spin_init_jitter(512, 4, 1);
}

/* A blocking send that found the ring full (or its next cell still being
 * read): spins until the ring has room for slip + 1 items, looking at the
 * cell of the last of them, and returns true (try again); false once the
 * spin is spent (sleep: send_validate reserves whatever room there is).
 *
 * Why more room than one item: a sender that chases a full ring shares
 * one cache line with its receiver and passes it back and forth on every
 * item; waiting for half the ring (at most SLIP_MAX items) lets the
 * receiver run lines ahead, so a line moves once per few items
 * (docs/design/chan.md, Tuning). No receive waits for this, and a receive
 * does not wait so at an empty ring: it would delay the item that came. */
static bool room_soon(park_chan_t *ch, park__spin_t *spin)
{
    /* relaxed: a guess; the next try checks. */
    uint64_t t = atomic_load_explicit(&ch->tail, memory_order_relaxed);
    uint64_t pos = PARK__CHAN_POS(t) + ch->slip;
    const park__chan_cell_t *c = cell_of(ch, pos);
    for (;;) {
        if (!park__spin(spin))
            return false;
        /* acquire: as in put. Free for pos or past it (another sender
         * took it): room up to pos. */
        if ((int64_t)(atomic_load_explicit(&c->seq, memory_order_acquire) - PARK__CHAN_FREE(pos)) >=
            0)
            return true;
        /* relaxed: a close or queued senders end the wait; the try sees
         * them. */
        if ((atomic_load_explicit(&ch->tail, memory_order_relaxed) & PARK__CHAN_CLOSED) ||
            (waiters_hint(ch) & PARK__CHAN_SWAIT))
            return true;
    }
}

/* After a blocking call's failed try: true if its deadline has passed
 * already, so that it times out without spinning. The clock is read once
 * per call (*checked, false at first for a timed call). */
static bool due_already(park_time_t deadline, bool *checked)
{
    if (*checked)
        return false;
    *checked = true;
    return park_now() >= deadline;
}

/* Makes *w a blocked call's waiter on side `side` (0: receivers, 1:
 * senders). Once queued, it looks at its own grant for 128 pauses, then
 * yields as often as the side's adaptive budget says (lib/wait's w->spin
 * and w->adapt: 4 to 64 times), before it sleeps. The other side's next
 * operation usually comes within microseconds, and a grant that finds its
 * waiter still awake costs neither a futex wake nor a sleep; with more
 * threads than CPUs that operation may need this CPU. Where waits are
 * short but come in bursts (a producer and a consumer that take turns),
 * the budget grows until the two stop sleeping on each other; where they
 * are long (an idle channel), it shrinks back to 4, so a blocked call
 * spends at most a few microseconds before it sleeps. The word looked at
 * is the waiter's own, so these looks, unlike op_spin's, take no line
 * from the other side. */
static void waiter_init(park__waiter_t *w, uintptr_t want, park_chan_t *ch, int side)
{
    park__waiter_init(w, want);
    w->spin = 128;
    w->adapt = &ch->adapt[side];
}

int park_chan_try_send(park_chan_t *ch, void *item)
{
    return send_try(ch, item, true);
}

int park_chan_try_recv(park_chan_t *ch, void **item)
{
    return recv_try(ch, item);
}

int park_chan_send_until(park_chan_t *ch, void *item, park_time_t deadline)
{
    for (;;) {
        park__spin_t spin = op_spin();
        bool checked = deadline == PARK_FOREVER; /* the clock, once */
        do {
            int err = send_try(ch, item, false);
            if (err != EAGAIN)
                return err;
            if (waiters_hint(ch) & PARK__CHAN_SWAIT)
                break; /* senders are queued: no use spinning behind them */
            if (due_already(deadline, &checked))
                break;
        } while (room_soon(ch, &spin));
        if (park__deadline_passed(deadline)) {
            /* Room free right now is taken even past the deadline: one
             * exact try, which tells a full ring from a cell whose receive
             * is still reading it, and takes a single free cell that
             * room_soon waited past. */
            int err = send_try(ch, item, true);
            return err == EAGAIN ? ETIMEDOUT : err;
        }
        struct park__chan_op op = {.ch = ch, .item = item};
        park__waiter_t w;
        waiter_init(&w, (uintptr_t)item, ch, 1);
        switch (park__wait(skey(ch), &w, 0, &park__chan_send_wait_ops, &op, deadline)) {
        case PARK__WAIT_GRANTED:
            if (w.grant == EPIPE)
                return EPIPE;
            /* A kick put the item in: follow up as it found (the
             * channel is read only if waiters are found, as after
             * send_try). */
            park__chan_settle(ch, w.grant & PARK__CHAN_OTHER, w.grant & PARK__CHAN_MORE);
            return 0;
        case PARK__WAIT_TIMEDOUT:
            return ETIMEDOUT;
        default:
            break;
        }
        if (op.verdict == PARK__CHAN_V_DONE) {
            park__chan_settle(ch, op.kick, false);
            return 0;
        }
        if (op.verdict == PARK__CHAN_V_CLOSED)
            return EPIPE;
    }
}

int park_chan_send(park_chan_t *ch, void *item)
{
    return park_chan_send_until(ch, item, PARK_FOREVER);
}

int park_chan_recv_until(park_chan_t *ch, void **item, park_time_t deadline)
{
    for (;;) {
        park__spin_t spin = op_spin();
        bool checked = deadline == PARK_FOREVER; /* the clock, once */
        do {
            int err = recv_try(ch, item);
            if (err != EAGAIN)
                return err;
            if (waiters_hint(ch) & PARK__CHAN_RWAIT)
                break; /* receivers are queued: no use spinning behind them */
            if (due_already(deadline, &checked))
                break;
        } while (park__spin(&spin));
        if (park__deadline_passed(deadline))
            return ETIMEDOUT;
        struct park__chan_op op = {.ch = ch};
        park__waiter_t w;
        waiter_init(&w, (uintptr_t)&op.item, ch, 0);
        switch (park__wait(rkey(ch), &w, 0, &park__chan_recv_wait_ops, &op, deadline)) {
        case PARK__WAIT_GRANTED:
            if (w.grant == EPIPE)
                return EPIPE;
            *item = op.item; /* a kick took it out for us */
            park__chan_settle(ch, w.grant & PARK__CHAN_MORE, w.grant & PARK__CHAN_OTHER);
            return 0;
        case PARK__WAIT_TIMEDOUT:
            return ETIMEDOUT;
        default:
            break;
        }
        if (op.verdict == PARK__CHAN_V_DONE) {
            *item = op.item;
            park__chan_settle(ch, false, op.kick);
            return 0;
        }
        if (op.verdict == PARK__CHAN_V_CLOSED)
            return EPIPE;
    }
}

int park_chan_recv(park_chan_t *ch, void **item)
{
    return park_chan_recv_until(ch, item, PARK_FOREVER);
}

void park_chan_close(park_chan_t *ch)
{
    /* close (t, 0) -> (t, CLOSED). seq_cst: a validate that runs after
     * the kicks below sees it. */
    atomic_fetch_or_explicit(&ch->tail, PARK__CHAN_CLOSED, memory_order_seq_cst);
    struct kick s, r;
    kick_senders(ch, true, &s);
    kick_receivers(ch, true, &r);
    park__chan_settle(ch, s.other, r.other);
}
