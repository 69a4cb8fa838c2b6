/* lib/wait/lock.c: the internal lock's spin before it sleeps (states in
 * lib/os/lock.h), and the live-object sets. */
#include "os/os.h"
#include "wait/lock.h"
#include "wait/spin.h"

void park__lock_slow(park__lock_t *l)
{
    /* 64 pauses, looking after each: a bucket or a list is held for well
     * under a microsecond, and the lock is taken the moment it is free.
     * A look is a load; the CAS comes only once the word reads free. A
     * CAS on a held word fails, but takes the line from the holder all
     * the same (a load only shares it), and a bucket's lock shares its
     * line with the queue the holder is changing. */
    park__spin_t spin = park__spin_init_gap(64, 0, 1);
    uint32_t c = atomic_load_explicit(&l->word, memory_order_relaxed);
    while (c != PARK__LOCK_CONTENDED && park__spin(&spin)) {
        /* relaxed: a look; the CAS below orders. */
        c = atomic_load_explicit(&l->word, memory_order_relaxed);
        /* UNLOCKED -> LOCKED; acquire: pairs with the release in
         * park__unlock. */
        if (c == PARK__LOCK_UNLOCKED &&
            atomic_compare_exchange_weak_explicit(&l->word, &c, PARK__LOCK_LOCKED,
                                                  memory_order_acquire, memory_order_relaxed))
            return;
    }
    park__lock_sleep(l);
}

void park__live_add(park__live_set_t *set, park__live_t *obj)
{
    park__lock(&set->lock);
    obj->next = set->head;
    set->head = obj;
    park__unlock(&set->lock);
}

bool park__live_remove(park__live_set_t *set, park__live_t *obj)
{
    park__lock(&set->lock);
    park__live_t **p = &set->head;
    while (*p && *p != obj)
        p = &(*p)->next;
    bool found = *p != NULL;
    if (found)
        *p = obj->next;
    park__unlock(&set->lock);
    return found;
}
