/* benchmarks/baselines/ck_spinlocks.c: ck spinlocks behind the C interface
 * of ck_spinlocks.h. Each function is one call into ck, nothing more. */
#include "ck_spinlocks.h"

#include <ck_spinlock.h>

_Static_assert(sizeof(ck_spinlock_fas_t) <= sizeof(bl_ck_lock_t), "fas fits");
_Static_assert(sizeof(ck_spinlock_ticket_t) <= sizeof(bl_ck_lock_t), "ticket fits");
_Static_assert(sizeof(ck_spinlock_mcs_t) <= sizeof(bl_ck_lock_t), "mcs fits");
_Static_assert(sizeof(ck_spinlock_mcs_context_t) <= sizeof(bl_ck_node_t), "mcs node fits");
_Static_assert(_Alignof(ck_spinlock_mcs_context_t) <= _Alignof(bl_ck_node_t), "mcs node aligned");

#define FAS(l) ((ck_spinlock_fas_t *)(void *)(l))
#define TICKET(l) ((ck_spinlock_ticket_t *)(void *)(l))
#define MCS(l) ((ck_spinlock_mcs_t *)(void *)(l))
#define MCS_NODE(n) ((ck_spinlock_mcs_context_t *)(void *)(n))

void bl_ck_fas_init(bl_ck_lock_t *l)
{
    ck_spinlock_fas_init(FAS(l));
}

void bl_ck_fas_lock(bl_ck_lock_t *l)
{
    ck_spinlock_fas_lock(FAS(l));
}

bool bl_ck_fas_trylock(bl_ck_lock_t *l)
{
    return ck_spinlock_fas_trylock(FAS(l));
}

void bl_ck_fas_unlock(bl_ck_lock_t *l)
{
    ck_spinlock_fas_unlock(FAS(l));
}

void bl_ck_ticket_init(bl_ck_lock_t *l)
{
    ck_spinlock_ticket_init(TICKET(l));
}

void bl_ck_ticket_lock(bl_ck_lock_t *l)
{
    ck_spinlock_ticket_lock(TICKET(l));
}

bool bl_ck_ticket_trylock(bl_ck_lock_t *l)
{
    return ck_spinlock_ticket_trylock(TICKET(l));
}

void bl_ck_ticket_unlock(bl_ck_lock_t *l)
{
    ck_spinlock_ticket_unlock(TICKET(l));
}

void bl_ck_mcs_init(bl_ck_lock_t *l)
{
    ck_spinlock_mcs_init(MCS(l));
}

void bl_ck_mcs_lock(bl_ck_lock_t *l, bl_ck_node_t *n)
{
    ck_spinlock_mcs_lock(MCS(l), MCS_NODE(n));
}

bool bl_ck_mcs_trylock(bl_ck_lock_t *l, bl_ck_node_t *n)
{
    return ck_spinlock_mcs_trylock(MCS(l), MCS_NODE(n));
}

void bl_ck_mcs_unlock(bl_ck_lock_t *l, bl_ck_node_t *n)
{
    ck_spinlock_mcs_unlock(MCS(l), MCS_NODE(n));
}
