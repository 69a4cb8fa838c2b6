/* lib/wait/latch.h: a one-shot event that threads wait for (a join's
 * stolen half, a task's completion, a pool going quiet).
 *
 *   state      meaning
 *   0          pending, nobody parked
 *   WAITERS    pending, waiters parked in lib/wait under the latch's address
 *   SET        set (final)
 *
 *   wait       0 -> WAITERS        CAS in validate, bucket locked
 *   set        any -> SET          exchange; unpark all if it was WAITERS
 *
 * park__latch_set touches the latch only by its one exchange, so a waiter
 * may free the latch as soon as it has seen it set. */
#ifndef PARK_LIB_WAIT_LATCH_H
#define PARK_LIB_WAIT_LATCH_H

#include <stdatomic.h>
#include <stdint.h>

#include <park/time.h>

typedef struct park__latch {
    _Atomic uint32_t state;
} park__latch_t;

#define PARK__LATCH_SET 1u
#define PARK__LATCH_WAITERS 2u

/* Inline: both sit on park_join's path, once per join. */
static inline void park__latch_init(park__latch_t *l)
{
    atomic_init(&l->state, 0);
}

/* True once set; acquire: what the setter did before setting is seen. */
static inline bool park__latch_is_set(park__latch_t *l)
{
    /* acquire: pairs with the exchange in park__latch_set. */
    return atomic_load_explicit(&l->state, memory_order_acquire) == PARK__LATCH_SET;
}

/* Sets the latch (release) and wakes its waiters. */
void park__latch_set(park__latch_t *l);

/* Parks until the latch is set or the deadline passes: true if set. */
bool park__latch_wait(park__latch_t *l, park_time_t deadline);

/* park__latch_wait for a wait that is no contention (a pool draining its
 * work at destroy): the contention profiler does not record it. */
bool park__latch_wait_idle(park__latch_t *l, park_time_t deadline);

/* Parks until the latch is set, or *kick is nonzero, or the deadline
 * passes: true if set. The waiter is known to kickers as `who`: a kicker
 * stores *kick = 1 and then calls park__latch_kick(l, who), which wakes
 * that waiter only (the store is re-read under the bucket lock before the
 * waiter sleeps, so a kick is never missed). For a pool worker that waits
 * for its own task but must also notice new work (pool.c). */
bool park__latch_wait_kickable(park__latch_t *l, _Atomic uint32_t *kick, uintptr_t who,
                               park_time_t deadline);
void park__latch_kick(const park__latch_t *l, uintptr_t who);

#endif /* PARK_LIB_WAIT_LATCH_H */
