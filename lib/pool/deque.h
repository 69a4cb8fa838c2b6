/* lib/pool/deque.h: the per-worker work-stealing deque (Chase-Lev), with
 * the C11 orderings of Le, Pop, Cohen and Zappa Nardelli, "Correct and
 * Efficient Work-Stealing for Weak Memory Models" (PPoPP 2013).
 *
 * Fixed capacity, never grows: a full deque refuses the push and the caller
 * spills elsewhere (pool.c), so no buffer is ever retired and nothing needs
 * safe memory reclamation. Indices are signed 64-bit and never wrap in
 * practice. A slot holds a work item, {fn, arg}, as two atomic words: a
 * thief may read a slot the owner is overwriting, but then its CAS on `top`
 * fails and it drops what it read.
 *
 * Synchronisation table:
 *   operation  by      reads / writes
 *   push       owner   bottom (own), top (acquire), slot (relaxed), bottom (release)
 *   pop        owner   bottom (seq_cst store), top (seq_cst), CAS top (last item)
 *   steal      any     top (seq_cst), bottom (seq_cst), slot, CAS top
 * The release store of bottom in push pairs with the load of bottom in
 * steal (the thief sees the item's contents). The paper's seq_cst fences
 * become seq_cst accesses (the same instructions on x86-64, and visible to
 * ThreadSanitizer, which ignores fences): pop's store of bottom and load of
 * top against steal's loads of top and bottom, so that the owner and a
 * thief never both take the last item (the CAS on top decides). */
#ifndef PARK_LIB_POOL_DEQUE_H
#define PARK_LIB_POOL_DEQUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define PARK__DEQUE_CAP 1024 /* slots: a power of two */

typedef struct park__job {
    void (*fn)(void *arg);
    void *arg;
} park__job_t;

typedef struct park__deque_slot {
    _Atomic(void (*)(void *)) fn;
    _Atomic(void *) arg;
} park__deque_slot_t;

typedef struct park__deque {
    _Alignas(64) _Atomic int64_t top;    /* thieves take here (oldest) */
    _Alignas(64) _Atomic int64_t bottom; /* the owner pushes and pops here */
    park__deque_slot_t slots[PARK__DEQUE_CAP];
} park__deque_t;

/* Which pop/steal pair is in use (set once by park__deque_setup, before
 * any deque is used): the paper's, with a seq_cst fence on every pop, or
 * the asymmetric one, where pop has no fence and a thief that finds the
 * deque non-empty issues a membarrier(2) instead (steals are rare, pops are
 * not). PARK_DEQUE_FENCE=1 in the environment, a kernel without
 * membarrier, or a ThreadSanitizer build select the paper's. */
extern bool park__deque_asymmetric;
void park__deque_setup(void);

/* Makes *d empty. Not atomic: nobody may use *d meanwhile. */
void park__deque_init(park__deque_t *d);

/* Owner only. Pushes {fn, arg} at the bottom: true, or false if full. */
bool park__deque_push(park__deque_t *d, void (*fn)(void *), void *arg);

/* Owner only. Takes the newest item into *out: true, or false if empty. */
bool park__deque_pop(park__deque_t *d, park__job_t *out);

/* Steal outcomes. */
enum { PARK__STEAL_EMPTY, PARK__STEAL_OK, PARK__STEAL_LOST };

/* Any thread. Takes the oldest item into *out: PARK__STEAL_OK, or
 * PARK__STEAL_EMPTY, or PARK__STEAL_LOST (another thread took it first;
 * items may remain). */
int park__deque_steal(park__deque_t *d, park__job_t *out);

/* Any thread: true if the deque looked empty (a snapshot). */
bool park__deque_looks_empty(const park__deque_t *d);

#endif /* PARK_LIB_POOL_DEQUE_H */
