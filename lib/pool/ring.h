/* lib/pool/ring.h: the pool's bounded MPMC rings of work items (Vyukov's
 * queue with per-cell sequence numbers): one per worker, shared with idle
 * workers, and one per outside producer thread.
 *
 * Cell of position p (capacity PARK__RING_CAP, a power of two):
 *   seq == p           free for the push at p
 *   seq == p + 1       holds the item of p
 *   seq == p + CAP     consumed; free for the push at p + CAP
 *
 *   push       tail p -> p+1       CAS (any producer), then item, then seq
 *   sp_push    tail p -> p+1       store (the ring's one producer): item,
 *                                  seq, then tail
 *   pop_batch  head h -> h+k       one CAS for k published items in a row
 *
 * The channel keeps a ring of its own (lib/chan.c says why). */
#ifndef PARK_LIB_POOL_RING_H
#define PARK_LIB_POOL_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "pool/deque.h"

#define PARK__RING_CAP 1024

typedef struct park__ring_cell {
    _Atomic uint64_t seq;
    _Atomic(void (*)(void *)) fn;
    _Atomic(void *) arg;
    uint64_t pad_;
} park__ring_cell_t;

typedef struct park__ring {
    _Alignas(64) _Atomic uint64_t head;
    _Alignas(64) _Atomic uint64_t tail;
    _Alignas(64) park__ring_cell_t cells[PARK__RING_CAP];
} park__ring_t;

/* Outside threads that submit get a ring each (a single producer, no RMW
 * to push); beyond this many at once they share the workers' rings. */
#define PARK__MAX_PRODUCERS 256

/* The calling thread's producer id: a small integer, recycled when the
 * thread exits, so that each id's ring has at most one producer at a time;
 * PARK__MAX_PRODUCERS if none is left. */
unsigned park__ring_producer_id(void);

/* Makes *r empty. Not atomic: nobody may use *r meanwhile. */
void park__ring_init(park__ring_t *r);

/* Any producer: true, or false if full. The tail CAS is seq_cst: the
 * producer's half of the pool's sleep/submit pair (pool.c). */
bool park__ring_push(park__ring_t *r, void (*fn)(void *), void *arg);

/* The ring's single producer: no RMW. The tail store is seq_cst, as above. */
bool park__ring_sp_push(park__ring_t *r, void (*fn)(void *), void *arg);

/* Any consumer: takes up to max published items with one CAS; how many
 * (0: empty, or the next item is still being written). */
unsigned park__ring_pop_batch(park__ring_t *r, park__job_t *out, unsigned max);

/* A seq_cst snapshot (the worker's half of the sleep/submit pair); a
 * claimed but unwritten item counts as work. */
bool park__ring_looks_empty(park__ring_t *r);

#endif /* PARK_LIB_POOL_RING_H */
