/* lib/chan_ring.c: the channel ring's lock-free send,
 * park__chan_ring_push, which lib/chan.c's sends and lib/chan_async.c call
 * (lib/chan_impl.h); the rest of the ring is inline, in lib/chan_ring.h. */
#include "chan_ring.h"

int park__chan_ring_push(park_chan_t *ch, void *item, uint64_t allow, bool exact, bool *kick)
{
    park__spin_t spin = cell_spin();
    /* relaxed: a guess, checked by the CAS. */
    uint64_t t = atomic_load_explicit(&ch->tail, memory_order_relaxed);
    for (;;) {
        if (t & PARK__CHAN_CLOSED & ~allow)
            return PARK__CHAN_RING_CLOSED;
        if (waiters_hint(ch) & PARK__CHAN_SWAIT)
            return PARK__CHAN_RING_BLOCKED;
        uint64_t pos = PARK__CHAN_POS(t);
        /* acquire: as in put. */
        uint64_t seq = atomic_load_explicit(&cell_of(ch, pos)->seq, memory_order_acquire);
        if (seq == PARK__CHAN_FREE(pos)) {
            /* try send (t, c) -> (t+1, c). seq_cst: announces the item
             * before RWAIT is read; pairs with recv_validate. */
            if (atomic_compare_exchange_weak_explicit(&ch->tail, &t, t + PARK__CHAN_ONE,
                                                      memory_order_seq_cst, memory_order_relaxed)) {
                /* Read before the item is handed over (rule 9: a receiver
                 * may destroy the channel once it has the item). */
                *kick = waiting(ch, PARK__CHAN_RWAIT);
                /* A blocking send asks for the next line of cells for
                 * writing while it writes this one: having waited for half
                 * of a full ring (room_soon), it is lines behind the
                 * receive. A send that chases the receive would take the
                 * line from under it, so exact tries (try_send,
                 * asynchronous sends) and rings that wait for less than 4
                 * lines (capacity under 32) do without. */
                if (!exact && ch->slip + 1 >= 4 * PARK__CHAN_CELLS_PER_LINE)
                    __builtin_prefetch(cell_of(ch, pos + PARK__CHAN_CELLS_PER_LINE), 1);
                put(ch, pos, item);
                return PARK__CHAN_RING_DONE;
            }
            continue;
        }
        if ((int64_t)(seq - PARK__CHAN_FREE(pos)) < 0) {
            /* The cell still holds the item of pos - cap: full, unless its
             * receive has reserved it and is reading it right now. A
             * blocking send does not tell the two apart (room_soon waits
             * for more room anyway; its last try before a timeout, and
             * send_validate, are exact). */
            if (!exact)
                return PARK__CHAN_RING_NONE;
            /* relaxed: a snapshot, the answer of a try_send or of a
             * blocking send's last try; a give-back re-checks under the
             * senders' lock. */
            uint64_t h = atomic_load_explicit(&ch->head, memory_order_relaxed);
            if (h + ch->cap <= pos)
                return PARK__CHAN_RING_NONE;
            park__spin_forever(&spin);
        }
        /* relaxed: as above. */
        t = atomic_load_explicit(&ch->tail, memory_order_relaxed);
    }
}
