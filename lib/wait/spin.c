/* lib/wait/spin.c: the spin policy's per-thread state (spin.h): its random
 * numbers, and whether its CPU was lately crowded. */
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

/* park__spin_early calls left that take no early look. */
static _Thread_local uint32_t spin_calm;

bool park__spin_early(void)
{
    if (spin_calm) {
        spin_calm--;
        return false;
    }
    if (park__os_single_cpu())
        return false;
    for (uint32_t i = 0; i < PARK__SPIN_EARLY; i++)
        park__os_pause();
    return true;
}

void park__spin_crowded(void)
{
    spin_calm = PARK__SPIN_CALM;
}
