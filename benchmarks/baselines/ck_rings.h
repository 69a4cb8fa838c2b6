/* benchmarks/baselines/ck_rings.h: Concurrency Kit's ring buffer (ck_ring)
 * for the C++ harness: the non-blocking floor of the channel family.
 *
 * ck's headers are not valid C++, so ck_rings.c includes them, compiled as
 * C, and the harness sees only this opaque type and these functions
 * (inlined into the loops by link-time optimisation, as ck_spinlocks.h
 * explains).
 *
 * A ck_ring of power-of-two size N holds N - 1 items. bl_ck_ring_create
 * picks the largest N with N - 1 <= capacity (at least 2), so a ring made
 * for 1, 64 or 1024 items holds 1, 63 or 1023: bl_ck_ring_capacity says
 * which. `multi` selects ck's MPMC operations (a compare-and-swap per
 * operation); otherwise the SPSC ones (plain loads and stores, one producer
 * and one consumer thread only). Nothing here waits: try_send fails when
 * the ring is full, try_recv when it is empty. */
#ifndef PARK_BENCH_CK_RINGS_H
#define PARK_BENCH_CK_RINGS_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bl_ck_ring bl_ck_ring_t;

/* A ring for at most `capacity` items, or NULL (ENOMEM, or capacity 0). */
bl_ck_ring_t *bl_ck_ring_create(size_t capacity, bool multi);
void bl_ck_ring_destroy(bl_ck_ring_t *r);
/* The items the ring holds when full. */
size_t bl_ck_ring_capacity(const bl_ck_ring_t *r);
/* Appends item: false if the ring is full. */
bool bl_ck_ring_try_send(bl_ck_ring_t *r, void *item);
/* Takes the oldest item into *item: false if the ring is empty. */
bool bl_ck_ring_try_recv(bl_ck_ring_t *r, void **item);

#ifdef __cplusplus
}
#endif

#endif /* PARK_BENCH_CK_RINGS_H */
