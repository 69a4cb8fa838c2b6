/* lib/chan_impl.h: what lib/chan.c, lib/chan_async.c and the ring
 * (lib/chan_ring.h, lib/chan_ring.c) share: the channel's layout, its
 * state words' bits (lib/chan.c documents the machine), the waiter's ctx,
 * and the few steps the asynchronous calls take on the ring and the
 * queues. */
#ifndef PARK_LIB_CHAN_IMPL_H
#define PARK_LIB_CHAN_IMPL_H

#include <park/chan.h>
#include <stdatomic.h>

#include "wait/lock.h"
#include "wait/wait.h"

#define PARK__CHAN_CLOSED 1u /* tail: closed */
#define PARK__CHAN_ONE 2u    /* tail: one position */
#define PARK__CHAN_POS(tail) ((tail) >> 1)

#define PARK__CHAN_NO_MASK UINT64_MAX /* mask: cap is no power of two */

#define PARK__CHAN_RWAIT 1u /* waiters: receivers queued */
#define PARK__CHAN_SWAIT 2u /* waiters: senders queued, or given-back items listed */

typedef struct park__chan_cell {
    _Atomic uint64_t seq;
    void *item;
} park__chan_cell_t;

/* An item a dropped receive task gave back while the ring was full. */
typedef struct park__chan_given {
    struct park__chan_given *next;
    void *item;
} park__chan_given_t;

struct park_chan {
    _Alignas(64) _Atomic uint64_t tail;
    _Alignas(64) _Atomic uint64_t head;
    _Alignas(64) _Atomic unsigned waiters;
    /* The adaptive yield budgets of blocked receivers ([0]) and senders
     * ([1]) (lib/wait: park__wait_adapt), on the waiters' line: written
     * only after a sleep. */
    _Atomic uint8_t adapt[2];
    _Alignas(64) uint64_t cap;
    uint64_t mask;                          /* cap - 1 if cap is a power of two, else NO_MASK */
    uint64_t slip;                          /* a blocked send's room to wait for, less 1 (chan.c) */
    park__chan_given_t *given, *given_last; /* the senders' bucket lock guards them */
#ifdef PARK_DEBUG
    park__live_t live; /* in the set of live channels (chan.c) */
#endif
    _Alignas(64) park__chan_cell_t cells[];
};

/* What a waiter or an acquisition carries (the waiter's ctx). */
struct park__chan_op {
    park_chan_t *ch;
    void *item;  /* send: the item; recv: where a granted item lands */
    int verdict; /* set by validate when it did not enqueue */
    bool kick;   /* with V_DONE: the other side has waiters to kick */
};

/* A queued thread's grant (w->grant), besides EPIPE: PARK__CHAN_HANDED, a
 * kick took its item in (send) or out (receive), and the thread follows up
 * in the kicker's stead (lib/chan.c, park__chan_settle): with
 * PARK__CHAN_OTHER it kicks the other side (waiters are queued there and
 * the kick moved a position for them), with PARK__CHAN_MORE its own side
 * (waiters are queued there and there is work for them). */
#define PARK__CHAN_HANDED ((uintptr_t)1 << 16)
#define PARK__CHAN_OTHER ((uintptr_t)1 << 17)
#define PARK__CHAN_MORE ((uintptr_t)1 << 18)

/* op.verdict */
enum { PARK__CHAN_V_NONE, PARK__CHAN_V_DONE, PARK__CHAN_V_CLOSED };

/* What a lock-free ring operation did. */
enum {
    PARK__CHAN_RING_DONE,
    PARK__CHAN_RING_NONE,
    PARK__CHAN_RING_CLOSED,
    PARK__CHAN_RING_BLOCKED
};

/* The wait-queue keys of the receivers and of the senders. */
static inline const void *rkey(park_chan_t *ch)
{
    return ch;
}

static inline const void *skey(park_chan_t *ch)
{
    return (const char *)ch + 1;
}

/* Read after a reservation and before its hand-over. seq_cst: see "No lost
 * wake-up" in docs/design/chan.md; pairs with the or in recv_validate
 * (send_validate, give_finish) and the position read after it. */
static inline bool waiting(park_chan_t *ch, unsigned flag)
{
    return atomic_load_explicit(&ch->waiters, memory_order_seq_cst) & flag;
}

/* relaxed: a waiter queued before the caller started set its flag before
 * (happens-before through whatever showed it queued), so coherence shows
 * it; one queueing meanwhile pairs with the caller through the seq_cst
 * reads that follow its reservation. */
static inline unsigned waiters_hint(park_chan_t *ch)
{
    return atomic_load_explicit(&ch->waiters, memory_order_relaxed);
}

/* The last waiter of a side left: clear its flag. Each flag changes only
 * under its own side's lock, so an atomic and keeps the other intact.
 * relaxed: the bucket lock orders it against the next waiter; a try that
 * sees it clear orders itself by its CAS on the position and the cells. */
static inline void clear_rwait(park_chan_t *ch)
{
    /* last receiver leaves: waiters &= ~RWAIT */
    atomic_fetch_and_explicit(&ch->waiters, ~PARK__CHAN_RWAIT, memory_order_relaxed);
}

static inline void clear_swait(park_chan_t *ch)
{
    /* last sender leaves: waiters &= ~SWAIT */
    atomic_fetch_and_explicit(&ch->waiters, ~PARK__CHAN_SWAIT, memory_order_relaxed);
}

/* Appends item without a lock unless senders are queued (or tail carries
 * CLOSED, outside `allow`): RING_DONE (*kick: receivers are queued),
 * RING_NONE (full), RING_CLOSED or RING_BLOCKED. `exact`: RING_NONE only
 * if the ring is full; else also while the next cell's receive is still
 * reading it (a blocking send, which then waits for more room). */
int park__chan_ring_push(park_chan_t *ch, void *item, uint64_t allow, bool exact, bool *kick);

/* After a position moved, with the other side's flag read after the move
 * and before the hand-over: kicks that side, one waiter, and goes on only
 * where the kicker itself moved positions (lib/chan.c). */
void park__chan_settle(park_chan_t *ch, bool receivers, bool senders);

/* Senders' lock held, SWAIT set: moves given-back items into the ring
 * while there is room, their nodes onto *freed (to free after the lock);
 * how many moved. */
size_t park__chan_drain_given(park_chan_t *ch, park__chan_given_t **freed);

void park__chan_free_given(park__chan_given_t *g);

/* The callbacks of queued receivers and senders, thread or task (ctx: a
 * struct park__chan_op). */
extern const park__wait_ops_t park__chan_recv_wait_ops;
extern const park__wait_ops_t park__chan_send_wait_ops;

#endif /* PARK_LIB_CHAN_IMPL_H */
