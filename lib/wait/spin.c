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

/* park__spin_init_early calls left that return an empty schedule. The
 * initial-exec model: read on every contended rwlock wait, so no
 * __tls_get_addr call (as in lib/mutex.c). */
static _Thread_local __attribute__((tls_model("initial-exec"))) uint32_t early_off;

park__spin_t park__spin_init_early(void)
{
    if (early_off) {
        early_off--;
        return park__spin_init_gap(0, 0, 1);
    }
    park__spin_t s = {PARK__SPIN_EARLY, PARK__SPIN_EARLY_GAP,
                      park__os_single_cpu() ? 0 : PARK__SPIN_EARLY_PAUSES, 0};
    return s;
}

uint64_t park__spin_crowded_ticks(uint32_t pauses)
{
    uint64_t us = PARK__SPIN_CROWDED_US + (uint64_t)pauses * PARK__SPIN_PAUSE_NS_MAX / 1000;
    return us * park__os_ticks_per_us();
}

void park__spin_note(uint64_t since, uint32_t pauses)
{
    uint64_t now = park__os_ticks();
    /* A thread that moved between processors may see a small step back. */
    if (now > since && now - since >= park__spin_crowded_ticks(pauses))
        early_off = PARK__SPIN_EARLY_OFF;
}
