/* lib/os/lock.c: the internal lock's sleep and wake (states in lock.h). */
#include "os/lock.h"
#include "os/os.h"

void park__lock_sleep(park__lock_t *l)
{
    /* any -> CONTENDED; acquire: pairs with the release in park__unlock
     * (we own the lock if it was UNLOCKED). */
    while (atomic_exchange_explicit(&l->word, PARK__LOCK_CONTENDED, memory_order_acquire) !=
           PARK__LOCK_UNLOCKED)
        park__futex_wait((uint32_t *)&l->word, PARK__LOCK_CONTENDED, PARK_FOREVER);
}

void park__unlock_slow(park__lock_t *l)
{
    park__futex_wake((uint32_t *)&l->word, 1);
}
