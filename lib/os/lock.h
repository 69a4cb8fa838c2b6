/* lib/os/lock.h: the internal lock's word.
 *
 *   UNLOCKED   free
 *   LOCKED     held, nobody sleeps on the word
 *   CONTENDED  held, sleepers may exist: the unlocker must wake one
 *
 *   try      UNLOCKED -> LOCKED        CAS (inline)
 *   sleep    any -> CONTENDED          exchange before sleeping; the
 *                                      sleeper owns the lock when its
 *                                      exchange returned UNLOCKED
 *   unlock   any -> UNLOCKED           exchange; wake one if CONTENDED
 *
 * Not fair, not recursive, and it never parks in lib/wait's queues (their
 * buckets are guarded by it). Acquire on lock, release on unlock. Zero is
 * unlocked. lib/wait/lock.h's park__lock spins before it sleeps (the spin
 * policy is lib/wait's); the profiler, below lib/wait, takes its rarely
 * contended locks with park__lock_try, else park__lock_sleep. */
#ifndef PARK_LIB_OS_LOCK_H
#define PARK_LIB_OS_LOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <park/common.h>

typedef struct park__lock {
    _Atomic uint32_t word;
} park__lock_t;

#define PARK__LOCK_INIT                                                                            \
    {                                                                                              \
        0                                                                                          \
    }

enum { PARK__LOCK_UNLOCKED = 0, PARK__LOCK_LOCKED = 1, PARK__LOCK_CONTENDED = 2 };

/* Makes *l unlocked, whoever held it: only where no other thread can be
 * using it (a forked child's handler, for the buckets left locked by
 * threads the child does not have). */
static inline void park__lock_reset(park__lock_t *l)
{
    atomic_init(&l->word, PARK__LOCK_UNLOCKED);
}

static inline bool park__lock_try(park__lock_t *l)
{
    uint32_t c = PARK__LOCK_UNLOCKED;
    /* UNLOCKED -> LOCKED; acquire: pairs with the release exchange in
     * park__unlock. */
    return atomic_compare_exchange_strong_explicit(&l->word, &c, PARK__LOCK_LOCKED,
                                                   memory_order_acquire, memory_order_relaxed);
}

/* Takes the lock, sleeping on the word while it is held. */
void park__lock_sleep(park__lock_t *l);

void park__unlock_slow(park__lock_t *l);

static inline void park__unlock(park__lock_t *l)
{
    /* any -> UNLOCKED; release: pairs with the acquire in park__lock_try
     * and park__lock_sleep. */
    if (PARK__UNLIKELY(atomic_exchange_explicit(&l->word, PARK__LOCK_UNLOCKED,
                                                memory_order_release) == PARK__LOCK_CONTENDED))
        park__unlock_slow(l);
}

#endif /* PARK_LIB_OS_LOCK_H */
