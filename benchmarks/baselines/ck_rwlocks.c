/* benchmarks/baselines/ck_rwlocks.c: ck reader/writer locks behind the C
 * interface of ck_rwlocks.h. Each function is one call into ck, nothing
 * more. */
#include "ck_rwlocks.h"

#include <ck_brlock.h>
#include <ck_pflock.h>
#include <ck_rwlock.h>

_Static_assert(sizeof(ck_rwlock_t) <= sizeof(bl_ck_rw_t), "rwlock fits");
_Static_assert(sizeof(ck_pflock_t) <= sizeof(bl_ck_rw_t), "pflock fits");
_Static_assert(sizeof(ck_brlock_t) <= sizeof(bl_ck_rw_t), "brlock fits");
_Static_assert(_Alignof(ck_brlock_t) <= _Alignof(bl_ck_rw_t), "brlock aligned");
_Static_assert(sizeof(ck_brlock_reader_t) <= sizeof(bl_ck_rw_reader_t), "reader fits");
_Static_assert(_Alignof(ck_brlock_reader_t) <= _Alignof(bl_ck_rw_reader_t), "reader aligned");

#define RW(l) ((ck_rwlock_t *)(void *)(l))
#define PF(l) ((ck_pflock_t *)(void *)(l))
#define BR(l) ((ck_brlock_t *)(void *)(l))
#define BR_READER(r) ((ck_brlock_reader_t *)(void *)(r))

void bl_ck_rwlock_init(bl_ck_rw_t *l)
{
    ck_rwlock_init(RW(l));
}

void bl_ck_rwlock_read_lock(bl_ck_rw_t *l)
{
    ck_rwlock_read_lock(RW(l));
}

void bl_ck_rwlock_read_unlock(bl_ck_rw_t *l)
{
    ck_rwlock_read_unlock(RW(l));
}

void bl_ck_rwlock_write_lock(bl_ck_rw_t *l)
{
    ck_rwlock_write_lock(RW(l));
}

void bl_ck_rwlock_write_unlock(bl_ck_rw_t *l)
{
    ck_rwlock_write_unlock(RW(l));
}

void bl_ck_pflock_init(bl_ck_rw_t *l)
{
    ck_pflock_init(PF(l));
}

void bl_ck_pflock_read_lock(bl_ck_rw_t *l)
{
    ck_pflock_read_lock(PF(l));
}

void bl_ck_pflock_read_unlock(bl_ck_rw_t *l)
{
    ck_pflock_read_unlock(PF(l));
}

void bl_ck_pflock_write_lock(bl_ck_rw_t *l)
{
    ck_pflock_write_lock(PF(l));
}

void bl_ck_pflock_write_unlock(bl_ck_rw_t *l)
{
    ck_pflock_write_unlock(PF(l));
}

void bl_ck_brlock_init(bl_ck_rw_t *l)
{
    ck_brlock_init(BR(l));
}

void bl_ck_brlock_register(bl_ck_rw_t *l, bl_ck_rw_reader_t *r)
{
    ck_brlock_read_register(BR(l), BR_READER(r));
}

void bl_ck_brlock_unregister(bl_ck_rw_t *l, bl_ck_rw_reader_t *r)
{
    ck_brlock_read_unregister(BR(l), BR_READER(r));
}

void bl_ck_brlock_read_lock(bl_ck_rw_t *l, bl_ck_rw_reader_t *r)
{
    ck_brlock_read_lock(BR(l), BR_READER(r));
}

void bl_ck_brlock_read_unlock(bl_ck_rw_reader_t *r)
{
    ck_brlock_read_unlock(BR_READER(r));
}

void bl_ck_brlock_write_lock(bl_ck_rw_t *l)
{
    ck_brlock_write_lock(BR(l));
}

void bl_ck_brlock_write_unlock(bl_ck_rw_t *l)
{
    ck_brlock_write_unlock(BR(l));
}
