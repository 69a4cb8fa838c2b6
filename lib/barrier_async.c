/* lib/barrier_async.c: park_barrier's asynchronous arrival (lib/async.h).
 * The machine it acts on: lib/barrier.c; design notes:
 * docs/design/barrier.md.
 *
 * The task arrives at once, as a thread would; if its arrival did not
 * complete the phase, the task waits in the queue with the same callbacks
 * as a thread, and the phase's advance grants it with the others. */
#include "async.h"
#include "barrier_impl.h"

_Static_assert(sizeof(struct park__barrier_phase_ctx) <= PARK__ACQ_CTX_SIZE,
               "phase_ctx fits an acquisition");

static void *async_granted(void *ctx, park__waiter_t *w)
{
    (void)ctx;
    return w->grant == PARK__BARRIER_GRANT_SERIAL ? (void *)(intptr_t)PARK_BARRIER_SERIAL : NULL;
}

/* No give_back: an arrival cannot be given back, a released task nobody
 * holds took nothing. */
static const park__acq_ops_t async_ops = {
    .wait = &park__barrier_phase_ops, /* ctx: the struct park__barrier_phase_ctx inside the task */
    .granted = async_granted,
};

/* What the arrival that completes a phase returns: its task is complete
 * on return, so it is one shared task, never allocated or freed. */
static park_task_t serial = PARK__TASK_READY_INIT((void *)(intptr_t)PARK_BARRIER_SERIAL);

park_task_t *park_barrier_arrive_and_wait_async(park_barrier_t *b, park_pool_t *pool)
{
    /* The last arrival first: it needs no task of its own. */
    if (park__barrier_try_arrive_last(b)) {
        park__barrier_complete_phase(b);
        return &serial;
    }
    /* Otherwise the task first: once arrived, there is no going back on
     * ENOMEM. */
    park_task_t *t = park__acq_new(pool, &async_ops, b, 0);
    if (!t)
        return NULL;
    uint64_t v;
    if (park__barrier_arrive(b, false, "park_barrier_arrive_and_wait_async", &v)) {
        park__barrier_complete_phase(b);
        return park__acq_grant_now(t, PARK__BARRIER_GRANT_SERIAL);
    }
    struct park__barrier_phase_ctx *c = park__acq_ctx(t);
    c->b = b;
    c->phase = park__barrier_phase_of(v);
    if (park__acq_enqueue(t, 0) == PARK__WAIT_QUEUED)
        return t;
    park__acq_discard(t); /* the phase is over already */
    return park__task_ready();
}
