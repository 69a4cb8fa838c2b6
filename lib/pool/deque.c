/* lib/pool/deque.c: the per-worker Chase-Lev deque; see deque.h for the
 * synchronisation table.
 *
 * State: top t and bottom b, t <= b + 1 at all times; the items are the
 * slots [t, b). The owner moves b, thieves move t with a CAS; the last item
 * is contended, and the CAS on t decides who takes it.
 *
 *   push     b -> b+1         release store (owner)
 *   pop      b -> b-1         seq_cst store (owner); if that
 *                             was the last item: t -> t+1 by CAS, b -> t+1
 *   steal    t -> t+1         CAS (thief) */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "os/os.h"
#include "pool/deque.h"

bool park__deque_asymmetric;

void park__deque_setup(void)
{
#if defined(__SANITIZE_THREAD__)
    park__deque_asymmetric = false; /* TSan cannot see membarrier */
#else
    const char *fence = getenv("PARK_DEQUE_FENCE");
    park__deque_asymmetric = !(fence && strcmp(fence, "1") == 0) && park__os_membarrier_register();
#endif
}

void park__deque_init(park__deque_t *d)
{
    atomic_init(&d->top, 0);
    atomic_init(&d->bottom, 0);
    for (int i = 0; i < PARK__DEQUE_CAP; i++) {
        atomic_init(&d->slots[i].fn, NULL);
        atomic_init(&d->slots[i].arg, NULL);
    }
}

static park__deque_slot_t *slot_of(park__deque_t *d, int64_t i)
{
    return &d->slots[(uint64_t)i & (PARK__DEQUE_CAP - 1)];
}

bool park__deque_push(park__deque_t *d, void (*fn)(void *), void *arg)
{
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
    /* acquire: pairs with the thieves' CAS on top, so a slot is rewritten
     * only after the thief that took its old item has read it. */
    int64_t t = atomic_load_explicit(&d->top, memory_order_acquire);
    if (b - t >= PARK__DEQUE_CAP)
        return false;
    park__deque_slot_t *s = slot_of(d, b);
    atomic_store_explicit(&s->fn, fn, memory_order_relaxed);
    atomic_store_explicit(&s->arg, arg, memory_order_relaxed);
    /* release: pairs with the acquire load of bottom in steal; the thief
     * that sees b+1 sees the slot and everything written before the push. */
    atomic_store_explicit(&d->bottom, b + 1, memory_order_release);
    return true;
}

bool park__deque_pop(park__deque_t *d, park__job_t *out)
{
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed) - 1;
    int64_t t;
    if (PARK__LIKELY(park__deque_asymmetric)) {
        /* The thief's membarrier stands in for our fence (see steal). */
        atomic_store_explicit(&d->bottom, b, memory_order_relaxed);
        atomic_signal_fence(memory_order_seq_cst); /* compiler barrier only */
        t = atomic_load_explicit(&d->top, memory_order_relaxed);
    } else {
        /* seq_cst store, then seq_cst load of top: pairs with steal's
         * seq_cst loads of top and bottom. Either the thief sees the
         * lowered bottom or we see its raised top; never both miss. (The
         * paper's relaxed store + seq_cst fence costs the same, but TSan
         * cannot see fences.) */
        atomic_store_explicit(&d->bottom, b, memory_order_seq_cst);
        t = atomic_load_explicit(&d->top, memory_order_seq_cst);
    }
    if (t > b) { /* empty */
        /* release: as in push, for a thief that reads this store. */
        atomic_store_explicit(&d->bottom, b + 1, memory_order_release);
        return false;
    }
    park__deque_slot_t *s = slot_of(d, b);
    out->fn = atomic_load_explicit(&s->fn, memory_order_relaxed);
    out->arg = atomic_load_explicit(&s->arg, memory_order_relaxed);
    if (t == b) {
        /* The last item: race the thieves for it on top (t -> t+1). */
        bool won = atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1, memory_order_seq_cst,
                                                           memory_order_relaxed);
        atomic_store_explicit(&d->bottom, b + 1, memory_order_release);
        return won;
    }
    return true;
}

int park__deque_steal(park__deque_t *d, park__job_t *out)
{
    /* seq_cst (acquire and more): pairs with the CAS of the previous thief
     * or pop, and with pop's seq_cst store of bottom (see pop). */
    int64_t t = atomic_load_explicit(&d->top, memory_order_seq_cst);
    /* seq_cst: as above; its acquire half pairs with the release store of
     * bottom in push (the thief sees the item). */
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_seq_cst);
    if (t >= b)
        return PARK__STEAL_EMPTY;
    if (PARK__LIKELY(park__deque_asymmetric)) {
        /* Every running thread passes a full barrier: the owner's lowered
         * bottom, if stored before it, is visible to the load below; if
         * stored after it, the owner's later load of top sees the CAS of
         * every thief that read top before it, and the last item goes
         * through the CAS on top. */
        park__os_membarrier();
        /* acquire: pairs with the release store of bottom in push. */
        b = atomic_load_explicit(&d->bottom, memory_order_acquire);
        if (t >= b)
            return PARK__STEAL_EMPTY;
    }
    park__deque_slot_t *s = slot_of(d, t);
    park__job_t job = {
        atomic_load_explicit(&s->fn, memory_order_relaxed),
        atomic_load_explicit(&s->arg, memory_order_relaxed),
    };
    /* t -> t+1; seq_cst as in the paper (orders against pop's fence). */
    if (!atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1, memory_order_seq_cst,
                                                 memory_order_relaxed))
        return PARK__STEAL_LOST;
    *out = job;
    return PARK__STEAL_OK;
}

bool park__deque_looks_empty(const park__deque_t *d)
{
    park__deque_t *m = (park__deque_t *)d;
    /* seq_cst: part of the sleep/submit pair of pool.c (a worker that is
     * about to sleep re-checks every deque after announcing itself). */
    int64_t t = atomic_load_explicit(&m->top, memory_order_seq_cst);
    int64_t b = atomic_load_explicit(&m->bottom, memory_order_seq_cst);
    return t >= b;
}
