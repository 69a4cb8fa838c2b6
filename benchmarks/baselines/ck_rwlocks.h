/* benchmarks/baselines/ck_rwlocks.h: Concurrency Kit reader/writer locks for
 * the C++ harness.
 *
 * ck's headers are not valid C++, so ck_rwlocks.c includes them, compiled
 * as C, and the harness sees only these opaque types and functions (inlined
 * into the loops by link-time optimisation, as ck_spinlocks.h explains).
 *
 * One lock type serves the three locks (each stores its own ck type in it).
 * ck_brlock (the "big reader" lock) also needs one reader record per
 * thread, registered with the lock before the thread's first read and
 * unregistered after its last; its writer visits every registered record.
 * All three spin: none of them ever puts a waiting thread to sleep. */
#ifndef PARK_BENCH_CK_RWLOCKS_H
#define PARK_BENCH_CK_RWLOCKS_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bl_ck_rw {
    uint64_t opaque_[2];
} bl_ck_rw_t;

typedef struct bl_ck_rw_reader {
    uint64_t opaque_[3];
} bl_ck_rw_reader_t;

/* ck_rwlock: a writer flag and a reader count; writers spin for the readers
 * to drain, readers spin while a writer holds the lock. */
void bl_ck_rwlock_init(bl_ck_rw_t *l);
void bl_ck_rwlock_read_lock(bl_ck_rw_t *l);
void bl_ck_rwlock_read_unlock(bl_ck_rw_t *l);
void bl_ck_rwlock_write_lock(bl_ck_rw_t *l);
void bl_ck_rwlock_write_unlock(bl_ck_rw_t *l);

/* ck_pflock: phase-fair (Brandenburg and Anderson): reader and writer
 * phases alternate, writers in ticket order. */
void bl_ck_pflock_init(bl_ck_rw_t *l);
void bl_ck_pflock_read_lock(bl_ck_rw_t *l);
void bl_ck_pflock_read_unlock(bl_ck_rw_t *l);
void bl_ck_pflock_write_lock(bl_ck_rw_t *l);
void bl_ck_pflock_write_unlock(bl_ck_rw_t *l);

/* ck_brlock: each reader marks only its own record; a writer sets its flag
 * and waits for every registered record to be clear. */
void bl_ck_brlock_init(bl_ck_rw_t *l);
void bl_ck_brlock_register(bl_ck_rw_t *l, bl_ck_rw_reader_t *r);
void bl_ck_brlock_unregister(bl_ck_rw_t *l, bl_ck_rw_reader_t *r);
void bl_ck_brlock_read_lock(bl_ck_rw_t *l, bl_ck_rw_reader_t *r);
void bl_ck_brlock_read_unlock(bl_ck_rw_reader_t *r);
void bl_ck_brlock_write_lock(bl_ck_rw_t *l);
void bl_ck_brlock_write_unlock(bl_ck_rw_t *l);

#ifdef __cplusplus
}
#endif

#endif /* PARK_BENCH_CK_RWLOCKS_H */
