/* benchmarks/baselines/spin_cas.h: the floor of the mutex family.
 *
 * The least a lock can do: acquire is one compare-and-swap 0 -> 1 (acquire
 * order) and release one store of 0 (release order). A failed CAS spins on
 * plain loads with a pause until the word reads 0, then retries the CAS
 * (test-and-test-and-set), so waiters do not keep the line in exclusive
 * state. No queue, no fairness, no sleeping. Compiles as C and as C++. */
#ifndef PARK_BENCH_SPIN_CAS_H
#define PARK_BENCH_SPIN_CAS_H

#include <stdbool.h>
#include <stdint.h>

#include "pause.h"

typedef struct bl_spin_cas {
    uint32_t word;
} bl_spin_cas_t;

static inline bool bl_spin_cas_trylock(bl_spin_cas_t *l)
{
    uint32_t unlocked = 0;
    /* acquire: pairs with the release store in bl_spin_cas_unlock. */
    return __atomic_compare_exchange_n(&l->word, &unlocked, 1, false, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED);
}

static inline void bl_spin_cas_lock(bl_spin_cas_t *l)
{
    while (!bl_spin_cas_trylock(l)) {
        /* relaxed: only a hint that the CAS may now succeed. */
        while (__atomic_load_n(&l->word, __ATOMIC_RELAXED) != 0)
            bl_pause();
    }
}

static inline void bl_spin_cas_unlock(bl_spin_cas_t *l)
{
    /* release: pairs with the acquire CAS in bl_spin_cas_trylock. */
    __atomic_store_n(&l->word, 0, __ATOMIC_RELEASE);
}

#endif /* PARK_BENCH_SPIN_CAS_H */
