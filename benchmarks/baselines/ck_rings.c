/* benchmarks/baselines/ck_rings.c: ck_ring behind the C interface of
 * ck_rings.h. Each operation is one call into ck, nothing more. */
#include "ck_rings.h"

#include <ck_ring.h>

#include <stdalign.h>
#include <stdlib.h>

struct bl_ck_ring {
    alignas(64) ck_ring_t ring;   /* ck keeps producer and consumer apart inside */
    struct ck_ring_buffer *slots; /* `size` pointers */
    bool multi;
};

bl_ck_ring_t *bl_ck_ring_create(size_t capacity, bool multi)
{
    if (capacity == 0 || capacity > (1u << 30))
        return NULL;
    unsigned size = 2;
    while ((size_t)size * 2 - 1 <= capacity)
        size *= 2;
    bl_ck_ring_t *r = aligned_alloc(64, sizeof *r);
    if (r == NULL)
        return NULL;
    r->slots = aligned_alloc(64, ((size * sizeof *r->slots) + 63) / 64 * 64);
    if (r->slots == NULL) {
        free(r);
        return NULL;
    }
    ck_ring_init(&r->ring, size);
    r->multi = multi;
    return r;
}

void bl_ck_ring_destroy(bl_ck_ring_t *r)
{
    if (r == NULL)
        return;
    free(r->slots);
    free(r);
}

size_t bl_ck_ring_capacity(const bl_ck_ring_t *r)
{
    return ck_ring_capacity(&r->ring) - 1;
}

bool bl_ck_ring_try_send(bl_ck_ring_t *r, void *item)
{
    if (r->multi)
        return ck_ring_enqueue_mpmc(&r->ring, r->slots, item);
    return ck_ring_enqueue_spsc(&r->ring, r->slots, item);
}

bool bl_ck_ring_try_recv(bl_ck_ring_t *r, void **item)
{
    if (r->multi)
        return ck_ring_dequeue_mpmc(&r->ring, r->slots, item);
    return ck_ring_dequeue_spsc(&r->ring, r->slots, item);
}
