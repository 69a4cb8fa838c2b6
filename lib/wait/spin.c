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

/* park__spin_init_early calls left that return an empty schedule. */
static _Thread_local uint32_t spin_calm;

park__spin_t park__spin_init_early(void)
{
    if (spin_calm) {
        spin_calm--;
        return park__spin_init_gap(0, 0, 1);
    }
    park__spin_t s = {PARK__SPIN_EARLY, 64, park__os_single_cpu() ? 0 : PARK__SPIN_EARLY_PAUSES, 0};
    return s;
}

void park__spin_note(uint64_t spun_ns)
{
    if (spun_ns >= PARK__SPIN_CROWDED_NS)
        spin_calm = PARK__SPIN_CALM;
}
