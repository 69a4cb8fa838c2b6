/* lib/chan_ring.h: the channel's lock-free ring, for lib/chan.c and
 * lib/chan_ring.c: the cells and their sequences, the lock-free receive,
 * and the reservations the bucket locks' owners make. Static inline: the
 * try and blocking operations, the validates and the kicks in lib/chan.c
 * each inline the steps they take: as calls, the cell write and read made
 * every item slower (docs/design/chan.md, Tuning). The lock-free send,
 * park__chan_ring_push, which lib/chan_async.c calls too, is
 * lib/chan_ring.c's. The state words and their transitions: lib/chan.c.
 *
 * The ring (Vyukov's bounded MPMC queue): position p lives in cell p % cap,
 * whose seq is FREE(p) = 2p (free for the send at p) or FULL(p) = 2p + 1
 * (holds p's item), doubled so that the two differ also when cap is 1. A
 * send reserves p by advancing tail, writes, stores FULL(p); a receive
 * reserves p by advancing head, reads, stores FREE(p + cap). So head <=
 * tail <= head + cap, and a reserved cell not ready yet is waited for. */
#ifndef PARK_LIB_CHAN_RING_H
#define PARK_LIB_CHAN_RING_H

#include "chan_impl.h"
#include "wait/spin.h"

#define PARK__CHAN_FREE(pos) (2 * (pos))     /* cell sequence: free for the send at pos */
#define PARK__CHAN_FULL(pos) (2 * (pos) + 1) /* cell sequence: holds the item of pos */
#define PARK__CHAN_CELLS_PER_LINE (64 / sizeof(park__chan_cell_t)) /* cells on one cache line */

/* A power-of-two capacity (the usual one) masks instead of dividing: a
 * 64-bit division costs more than the rest of an uncontended operation's
 * arithmetic, and every operation indexes twice. */
static inline park__chan_cell_t *cell_of(park_chan_t *ch, uint64_t pos)
{
    return &ch->cells[ch->mask != PARK__CHAN_NO_MASK ? pos & ch->mask : pos % ch->cap];
}

/* For a cell mid-operation: its owner is between two steps of a few
 * instructions, so 64 pauses, looking after each, see it done unless it
 * was preempted; then yield to it for as long as it takes (there is
 * nothing to sleep on). */
static inline park__spin_t cell_spin(void)
{
    return park__spin_init_gap(64, 0, 1);
}

/* Writes the item of reserved position pos, once its cell is free.
 * Inline, as take: between a reservation and the cell's new seq, the
 * other side's operation at this cell waits (and yields if this thread is
 * preempted there), so the window is kept to a few instructions
 * (docs/design/chan.md, Tuning). */
static inline void put(park_chan_t *ch, uint64_t pos, void *item)
{
    park__chan_cell_t *c = cell_of(ch, pos);
    /* acquire: pairs with the release store in take (the old item's reader
     * is done with the cell). */
    for (park__spin_t spin = cell_spin();
         atomic_load_explicit(&c->seq, memory_order_acquire) != PARK__CHAN_FREE(pos);)
        park__spin_forever(&spin);
    c->item = item;
    /* release: pairs with the acquire loads in take and ring_pop. */
    atomic_store_explicit(&c->seq, PARK__CHAN_FULL(pos), memory_order_release);
}

/* Reads the item of reserved position pos, once it is written. */
static inline void *take(park_chan_t *ch, uint64_t pos)
{
    park__chan_cell_t *c = cell_of(ch, pos);
    /* acquire: pairs with the release store in put. */
    for (park__spin_t spin = cell_spin();
         atomic_load_explicit(&c->seq, memory_order_acquire) != PARK__CHAN_FULL(pos);)
        park__spin_forever(&spin);
    void *item = c->item;
    /* release: pairs with the acquire loads in put and park__chan_ring_push. */
    atomic_store_explicit(&c->seq, PARK__CHAN_FREE(pos + ch->cap), memory_order_release);
    return item;
}

/* Takes the oldest item without a lock unless receivers are queued:
 * RING_DONE (*kick: senders are queued), RING_NONE (empty), RING_CLOSED
 * (closed and empty) or RING_BLOCKED. */
static inline int ring_pop(park_chan_t *ch, void **item, bool *kick)
{
    park__spin_t spin = cell_spin();
    /* relaxed: a guess, checked by the CAS. */
    uint64_t h = atomic_load_explicit(&ch->head, memory_order_relaxed);
    for (;;) {
        if (waiters_hint(ch) & PARK__CHAN_RWAIT)
            return PARK__CHAN_RING_BLOCKED;
        /* acquire: as in take. */
        uint64_t seq = atomic_load_explicit(&cell_of(ch, h)->seq, memory_order_acquire);
        if (seq == PARK__CHAN_FULL(h)) {
            /* try recv h -> h+1. seq_cst: announces the room before SWAIT
             * is read; pairs with send_validate. */
            if (atomic_compare_exchange_weak_explicit(&ch->head, &h, h + 1, memory_order_seq_cst,
                                                      memory_order_relaxed)) {
                /* Read before the slot is handed over, as in
                 * park__chan_ring_push. */
                *kick = waiting(ch, PARK__CHAN_SWAIT);
                *item = take(ch, h);
                return PARK__CHAN_RING_DONE;
            }
            continue;
        }
        if ((int64_t)(seq - PARK__CHAN_FULL(h)) < 0) {
            /* Nothing written at h: empty, unless a send has reserved it
             * and is writing right now. relaxed: a snapshot (head, read
             * before, was h then and has not passed tail); a blocking
             * receive re-checks in recv_validate. */
            uint64_t t = atomic_load_explicit(&ch->tail, memory_order_relaxed);
            if (PARK__CHAN_POS(t) <= h)
                return t & PARK__CHAN_CLOSED ? PARK__CHAN_RING_CLOSED : PARK__CHAN_RING_NONE;
            park__spin_forever(&spin);
        }
        /* relaxed: as above. */
        h = atomic_load_explicit(&ch->head, memory_order_relaxed);
    }
}

/* Senders' lock held, SWAIT set: reserves the next position if there is
 * room (and, unless `allow` has it, the channel is not closed). A try that
 * read SWAIT clear may reserve meanwhile, hence the CAS loop. */
static inline bool reserve_owned(park_chan_t *ch, uint64_t allow, uint64_t *pos)
{
    /* relaxed: a guess, checked by the CAS; a stale one only looks less
     * full. */
    uint64_t t = atomic_load_explicit(&ch->tail, memory_order_relaxed);
    for (;;) {
        if (t & PARK__CHAN_CLOSED & ~allow)
            return false;
        /* seq_cst: after SWAIT was set; pairs with the CAS in ring_pop.
         * Signed: head may have passed a stale t. */
        uint64_t h = atomic_load_explicit(&ch->head, memory_order_seq_cst);
        if ((int64_t)(PARK__CHAN_POS(t) - h) >= (int64_t)ch->cap)
            return false;
        /* kick sender, send validates, give back: (t, c) -> (t+1, c).
         * seq_cst: as in park__chan_ring_push. */
        if (atomic_compare_exchange_weak_explicit(&ch->tail, &t, t + PARK__CHAN_ONE,
                                                  memory_order_seq_cst, memory_order_relaxed)) {
            *pos = PARK__CHAN_POS(t);
            return true;
        }
    }
}

/* Receivers' lock held, RWAIT set: reserves the oldest item if there is
 * one. A try that read RWAIT clear may reserve meanwhile, as above. */
static inline bool claim_owned(park_chan_t *ch, uint64_t *pos)
{
    /* relaxed: a guess, checked by the CAS; a stale one only looks less
     * empty. */
    uint64_t h = atomic_load_explicit(&ch->head, memory_order_relaxed);
    for (;;) {
        /* seq_cst: after RWAIT was set; pairs with the CAS in
         * park__chan_ring_push. */
        uint64_t t = atomic_load_explicit(&ch->tail, memory_order_seq_cst);
        if (PARK__CHAN_POS(t) <= h)
            return false;
        /* kick receiver, recv validates: h -> h+1. seq_cst: as in
         * ring_pop. */
        if (atomic_compare_exchange_weak_explicit(&ch->head, &h, h + 1, memory_order_seq_cst,
                                                  memory_order_relaxed)) {
            *pos = h;
            return true;
        }
    }
}

/* Senders' lock held, SWAIT set: appends item if there is room. */
static inline bool push_owned(park_chan_t *ch, void *item, uint64_t allow)
{
    uint64_t pos;
    if (!reserve_owned(ch, allow, &pos))
        return false;
    put(ch, pos, item);
    return true;
}

/* Receivers' lock held, RWAIT set: takes the oldest item if there is one. */
static inline bool pop_owned(park_chan_t *ch, void **item)
{
    uint64_t pos;
    if (!claim_owned(ch, &pos))
        return false;
    *item = take(ch, pos);
    return true;
}

#endif /* PARK_LIB_CHAN_RING_H */
