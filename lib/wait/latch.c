/* lib/wait/latch.c: the latch (states in latch.h), a client of the wait
 * queue like any primitive. */
#include "wait/latch.h"
#include "wait/wait.h"

void park__latch_set(park__latch_t *l)
{
    /* acq_rel: release publishes what the setter did to the waiters;
     * acquire orders the WAITERS bit set under the bucket lock. */
    uint32_t old = atomic_exchange_explicit(&l->state, PARK__LATCH_SET, memory_order_acq_rel);
    if (old & PARK__LATCH_WAITERS)
        park__unpark_all(l); /* the address only: l may be gone */
}

typedef struct wait_ctx {
    park__latch_t *l;
    _Atomic uint32_t *kick; /* NULL: not kickable */
    bool idle;              /* not contention: the profiler skips it */
} wait_ctx_t;

static bool latch_validate(void *ctx)
{
    wait_ctx_t *c = ctx;
    /* relaxed: the kicker stored it before taking this bucket's lock. */
    if (c->kick && atomic_load_explicit(c->kick, memory_order_relaxed))
        return false;
    uint32_t s = atomic_load_explicit(&c->l->state, memory_order_relaxed);
    /* 0 -> WAITERS; bucket locked: a setter that sees WAITERS unparks
     * after we are queued. */
    while (s == 0)
        if (atomic_compare_exchange_weak_explicit(&c->l->state, &s, PARK__LATCH_WAITERS,
                                                  memory_order_relaxed, memory_order_relaxed))
            return true;
    return s == PARK__LATCH_WAITERS;
}

static const park__wait_ops_t latch_ops = {.validate = latch_validate};

static bool latch_wait(wait_ctx_t *c, uintptr_t who, park_time_t deadline)
{
    while (!park__latch_is_set(c->l)) {
        park__waiter_t w;
        park__waiter_init(&w, who);
        if (c->idle)
            park__waiter_idle(&w);
        int r = park__wait(c->l, &w, 0, &latch_ops, c, deadline);
        if (r == PARK__WAIT_TIMEDOUT)
            return park__latch_is_set(c->l);
        /* relaxed: as in latch_validate. */
        if (c->kick && atomic_load_explicit(c->kick, memory_order_relaxed))
            break;
    }
    return park__latch_is_set(c->l);
}

bool park__latch_wait(park__latch_t *l, park_time_t deadline)
{
    wait_ctx_t c = {l, NULL, false};
    return latch_wait(&c, 0, deadline);
}

bool park__latch_wait_idle(park__latch_t *l, park_time_t deadline)
{
    wait_ctx_t c = {l, NULL, true};
    return latch_wait(&c, 0, deadline);
}

bool park__latch_wait_kickable(park__latch_t *l, _Atomic uint32_t *kick, uintptr_t who,
                               park_time_t deadline)
{
    wait_ctx_t c = {l, kick, false};
    return latch_wait(&c, who, deadline);
}

static unsigned select_who(void *ctx, park__waiter_t *w)
{
    if (w->want != (uintptr_t)ctx)
        return PARK__SELECT_SKIP;
    w->grant = 0;
    return PARK__SELECT_GRANT | PARK__SELECT_STOP;
}

void park__latch_kick(const park__latch_t *l, uintptr_t who)
{
    park__unpark(l, select_who, NULL, (void *)who);
}
