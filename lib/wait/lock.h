/* lib/wait/lock.h: the runtime's internal lock.
 *
 * A three-state futex lock for short critical sections inside park itself:
 * the wait-queue buckets, and the pool's and the tasks' own bookkeeping
 * (overflow list, timer heap, producer ids, block depot). The layers under
 * the primitives use it instead of park_mutex_t, so that the primitives can
 * be built on the runtime without a circle (docs/design/README.md,
 * Layers). Holders can be preempted and 16 threads may share 2 CPUs, so
 * contenders spin briefly (lib/wait/spin.h) and then sleep on the word
 * instead of spinning on each other. The word, its states and the sleep
 * are lib/os/lock.h's, which the profiler (below this layer) uses without
 * the spin. */
#ifndef PARK_LIB_WAIT_LOCK_H
#define PARK_LIB_WAIT_LOCK_H

#include <stdatomic.h>
#include <stdint.h>

#include "os/lock.h"

/* The spin of lock.c, then park__lock_sleep. */
void park__lock_slow(park__lock_t *l);

static inline void park__lock(park__lock_t *l)
{
    if (PARK__UNLIKELY(!park__lock_try(l)))
        park__lock_slow(l);
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
