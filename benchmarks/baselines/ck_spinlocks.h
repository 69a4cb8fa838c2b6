/* benchmarks/baselines/ck_spinlocks.h: Concurrency Kit spinlocks for the
 * C++ harness.
 *
 * ck's headers are not valid C++, so ck_spinlocks.c includes them, compiled
 * as C, and the harness sees only these opaque types and functions. The
 * harness is linked with link-time optimisation where the toolchain has it,
 * so these calls are inlined like ck's own static inline functions.
 *
 * One lock type serves the three locks (each stores its own ck type in it);
 * ck_spinlock_mcs also needs one context node per acquisition, passed to
 * both lock and unlock. */
#ifndef PARK_BENCH_CK_SPINLOCKS_H
#define PARK_BENCH_CK_SPINLOCKS_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bl_ck_lock {
    uint64_t opaque_[2];
} bl_ck_lock_t;

typedef struct bl_ck_node {
    uint64_t opaque_[2];
} bl_ck_node_t;

/* ck_spinlock_fas: test-and-set with fetch-and-store. */
void bl_ck_fas_init(bl_ck_lock_t *l);
void bl_ck_fas_lock(bl_ck_lock_t *l);
bool bl_ck_fas_trylock(bl_ck_lock_t *l);
void bl_ck_fas_unlock(bl_ck_lock_t *l);

/* ck_spinlock_ticket: FIFO ticket lock. */
void bl_ck_ticket_init(bl_ck_lock_t *l);
void bl_ck_ticket_lock(bl_ck_lock_t *l);
bool bl_ck_ticket_trylock(bl_ck_lock_t *l);
void bl_ck_ticket_unlock(bl_ck_lock_t *l);

/* ck_spinlock_mcs: FIFO queue lock, each waiter spinning on its own node. */
void bl_ck_mcs_init(bl_ck_lock_t *l);
void bl_ck_mcs_lock(bl_ck_lock_t *l, bl_ck_node_t *n);
bool bl_ck_mcs_trylock(bl_ck_lock_t *l, bl_ck_node_t *n);
void bl_ck_mcs_unlock(bl_ck_lock_t *l, bl_ck_node_t *n);

#ifdef __cplusplus
}
#endif

#endif /* PARK_BENCH_CK_SPINLOCKS_H */
