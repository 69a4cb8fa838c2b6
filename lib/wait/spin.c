/* lib/wait/spin.c: the spin policy's per-thread randomness (spin.h). */
#include <stdint.h>

#include "wait/spin.h"

/* 2^32 divided by the golden ratio: multiplying by it spreads nearby
 * addresses over the whole 32 bits. */
#define GOLDEN_HASH 2654435761u

/* xorshift32: cheap, and enough to tell one thread's budget from another's.
 * Seeded from the state's own address, which differs between threads. */
static _Thread_local uint32_t spin_seed;

uint32_t park__spin_random(void)
{
    uint32_t x = spin_seed;
    if (x == 0)
        x = (uint32_t)((uintptr_t)&spin_seed >> 4) * GOLDEN_HASH | 1u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    spin_seed = x;
    return x;
}
