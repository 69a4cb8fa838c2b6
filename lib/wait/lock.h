/* lib/wait/lock.h: the runtime's internal lock.
 *
 * A three-state futex lock for short critical sections inside park itself:
 * the wait-queue buckets, and the pool's and the tasks' own bookkeeping
 * (overflow list, timer heap, producer ids, block depot). The layers under
 * the primitives use it instead of park_mutex_t, so that the primitives can
 * be built on the runtime without a circle (docs/design/README.md,
 * Layers). Holders
 * can be preempted and 16 threads may share 2 CPUs, so contenders spin
 * briefly (lib/wait/spin.h) and then sleep on the word instead of spinning
 * on each other.
 *
 *   UNLOCKED   free
 *   LOCKED     held, nobody sleeps on the word
 *   CONTENDED  held, sleepers may exist: the unlocker must wake one
 *
 *   lock     UNLOCKED -> LOCKED        CAS (inline fast path)
 *            any -> CONTENDED          exchange before sleeping; the
 *                                      sleeper owns the lock when its
 *                                      exchange returned UNLOCKED
 *   unlock   any -> UNLOCKED           exchange; wake one if CONTENDED
 *
 * Not fair, not recursive, and it never parks in lib/wait's queues (the
 * buckets themselves are guarded by it). Acquire on lock, release on
 * unlock. Zero is unlocked. */
#ifndef PARK_LIB_WAIT_LOCK_H
#define PARK_LIB_WAIT_LOCK_H

#include <stdatomic.h>
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

void park__lock_slow(park__lock_t *l);
void park__unlock_slow(park__lock_t *l);

/* Makes *l unlocked, whoever held it: only where no other thread can be
 * using it (a forked child's handler, for the buckets left locked by
 * threads the child does not have). */
static inline void park__lock_reset(park__lock_t *l)
{
    atomic_init(&l->word, PARK__LOCK_UNLOCKED);
}

static inline void park__lock(park__lock_t *l)
{
    uint32_t c = PARK__LOCK_UNLOCKED;
    /* UNLOCKED -> LOCKED; acquire: pairs with the release exchange in
     * park__unlock. */
    if (PARK__UNLIKELY(!atomic_compare_exchange_strong_explicit(
            &l->word, &c, PARK__LOCK_LOCKED, memory_order_acquire, memory_order_relaxed)))
        park__lock_slow(l);
}

static inline void park__unlock(park__lock_t *l)
{
    /* any -> UNLOCKED; release: pairs with the acquire in park__lock. */
    if (PARK__UNLIKELY(atomic_exchange_explicit(&l->word, PARK__LOCK_UNLOCKED,
                                                memory_order_release) == PARK__LOCK_CONTENDED))
        park__unlock_slow(l);
}

/* A set of live objects, so that a second destroy is caught without
 * reading the freed object (unless a newer object took its address): a
 * list under an internal lock, linked through a park__live_t inside each
 * object. Adding and removing take the lock and removing walks the list,
 * so it suits objects made and destroyed rarely (pools), or a debug
 * build's check (channels). */
typedef struct park__live {
    struct park__live *next;
} park__live_t;

typedef struct park__live_set {
    park__lock_t lock;
    park__live_t *head;
} park__live_set_t;

#define PARK__LIVE_SET_INIT                                                                        \
    {                                                                                              \
        PARK__LOCK_INIT, NULL                                                                      \
    }

void park__live_add(park__live_set_t *set, park__live_t *obj);

/* Takes obj off the set: false if it was not in it. obj is read only if
 * it is in the set (the walk compares addresses). */
bool park__live_remove(park__live_set_t *set, park__live_t *obj);

#endif /* PARK_LIB_WAIT_LOCK_H */
