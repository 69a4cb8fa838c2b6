/* lib/pool/ring.c: the pool's MPMC rings (layout in ring.h). */
#include <pthread.h>
#include <stddef.h>

#include <park/common.h>

#include "pool/ring.h"
#include "wait/lock.h"

void park__ring_init(park__ring_t *r)
{
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    /* A cell's item is written before its seq publishes it: only seq
     * needs a first value. */
    for (uint64_t i = 0; i < PARK__RING_CAP; i++)
        atomic_init(&r->cells[i].seq, i);
}

bool park__ring_push(park__ring_t *r, void (*fn)(void *), void *arg)
{
    uint64_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
    park__ring_cell_t *c;
    for (;;) {
        c = &r->cells[pos & (PARK__RING_CAP - 1)];
        /* acquire: pairs with the release store of seq in park__ring_pop_batch (the
         * consumer has read the cell's old item). */
        uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
        int64_t dif = (int64_t)(seq - pos);
        if (dif == 0) {
            /* seq_cst: the producer's half of the sleep/submit pair. */
            if (atomic_compare_exchange_weak_explicit(&r->tail, &pos, pos + 1, memory_order_seq_cst,
                                                      memory_order_relaxed))
                break;
        } else if (dif < 0) {
            return false; /* full */
        } else {
            pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
        }
    }
    atomic_store_explicit(&c->fn, fn, memory_order_relaxed);
    atomic_store_explicit(&c->arg, arg, memory_order_relaxed);
    /* release: pairs with the acquire load of seq in park__ring_pop_batch. */
    atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
    return true;
}

bool park__ring_looks_empty(park__ring_t *r)
{
    /* seq_cst: the worker's half of the sleep/submit pair. A claimed but
     * unwritten item counts as work. */
    return atomic_load_explicit(&r->head, memory_order_seq_cst) ==
           atomic_load_explicit(&r->tail, memory_order_seq_cst);
}

/* Single producer: the owner of the ring's id. No RMW: the item is
 * published by the seq store, the tail store makes it count as work. */
bool park__ring_sp_push(park__ring_t *r, void (*fn)(void *), void *arg)
{
    uint64_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
    park__ring_cell_t *c = &r->cells[pos & (PARK__RING_CAP - 1)];
    /* acquire: pairs with the release store of seq in park__ring_pop_batch. */
    if (atomic_load_explicit(&c->seq, memory_order_acquire) != pos)
        return false; /* full */
    atomic_store_explicit(&c->fn, fn, memory_order_relaxed);
    atomic_store_explicit(&c->arg, arg, memory_order_relaxed);
    /* release: pairs with the acquire load of seq in park__ring_pop_batch. */
    atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
    /* seq_cst: the producer's half of the sleep/submit pair. */
    atomic_store_explicit(&r->tail, pos + 1, memory_order_seq_cst);
    return true;
}

/* How many items are published in a row from position pos, up to max;
 * *taken: the cell at pos has already been consumed (pos is stale). */
static unsigned published(park__ring_t *r, uint64_t pos, unsigned max, bool *taken)
{
    unsigned k = 0;
    for (; k < max; k++) {
        park__ring_cell_t *c = &r->cells[(pos + k) & (PARK__RING_CAP - 1)];
        /* acquire: pairs with the release store of seq in the push. */
        uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
        if (seq != pos + k + 1) {
            *taken = k == 0 && (int64_t)(seq - (pos + 1)) > 0;
            break;
        }
    }
    return k;
}

/* Takes up to max published items with one CAS: how many (0: empty, or
 * the next item is still being written). */
unsigned park__ring_pop_batch(park__ring_t *r, park__job_t *out, unsigned max)
{
    uint64_t pos = atomic_load_explicit(&r->head, memory_order_relaxed);
    unsigned k;
    for (;;) {
        bool taken = false;
        k = published(r, pos, max, &taken);
        if (taken) { /* another consumer took it: look from the new head */
            pos = atomic_load_explicit(&r->head, memory_order_relaxed);
            continue;
        }
        if (k == 0)
            return 0;
        /* relaxed: the cells' seq loads carry the items' ordering. */
        if (atomic_compare_exchange_weak_explicit(&r->head, &pos, pos + k, memory_order_relaxed,
                                                  memory_order_relaxed))
            break;
    }
    for (unsigned i = 0; i < k; i++) {
        park__ring_cell_t *c = &r->cells[(pos + i) & (PARK__RING_CAP - 1)];
        out[i].fn = atomic_load_explicit(&c->fn, memory_order_relaxed);
        out[i].arg = atomic_load_explicit(&c->arg, memory_order_relaxed);
        /* release: pairs with the acquire load of seq in the push. */
        atomic_store_explicit(&c->seq, pos + i + PARK__RING_CAP, memory_order_release);
    }
    return k;
}

/* Producer ids: small integers, one per thread that submits from outside
 * a pool, recycled when the thread exits, so that each id's ring has at
 * most one producer at a time. */
static park__lock_t ids_lock = PARK__LOCK_INIT;
static unsigned ids_next, ids_free[PARK__MAX_PRODUCERS], ids_nfree;
static pthread_key_t ids_key;
static _Thread_local unsigned my_id_plus_one;

static void id_release(void *arg)
{
    (void)arg;
    park__lock(&ids_lock);
    ids_free[ids_nfree++] = my_id_plus_one - 1;
    park__unlock(&ids_lock);
    my_id_plus_one = 0;
}

static pthread_once_t ids_once = PTHREAD_ONCE_INIT;

static void ids_setup(void)
{
    (void)pthread_key_create(&ids_key, id_release);
}

unsigned park__ring_producer_id(void)
{
    if (PARK__LIKELY(my_id_plus_one))
        return my_id_plus_one - 1;
    pthread_once(&ids_once, ids_setup);
    unsigned id = PARK__MAX_PRODUCERS;
    park__lock(&ids_lock);
    if (ids_nfree)
        id = ids_free[--ids_nfree];
    else if (ids_next < PARK__MAX_PRODUCERS)
        id = ids_next++;
    park__unlock(&ids_lock);
    if (id < PARK__MAX_PRODUCERS) {
        my_id_plus_one = id + 1;
        pthread_setspecific(ids_key, &my_id_plus_one); /* id_release at exit */
    }
    return id;
}
