/* lib/wait/spin.c: the spin policy's per-thread randomness (spin.h). */
#include <stdint.h>

#include "os/os.h"
#include "wait/spin.h"

/* lib/os's generator, one stream per thread, seeded from the state's own
 * address, which differs between threads. */
static _Thread_local uint64_t spin_rng;

uint32_t park__spin_random(void)
{
    if (spin_rng == 0)
        spin_rng = park__random_seed((uintptr_t)&spin_rng >> 4);
    return park__random(&spin_rng);
}
