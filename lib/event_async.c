/* lib/event_async.c: park_event's asynchronous waiting (lib/async.h).
 * The machine it acts on: lib/event.c; design notes: docs/design/event.md.
 *
 * A task waits in the queue as a thread would, with the same callbacks; a
 * set grants it as it grants a thread (auto: the oldest waiter, thread or
 * task, consumes the set). */
#include "async.h"
#include "event_impl.h"

_Static_assert(sizeof(struct park__event_wait_ctx) <= PARK__ACQ_CTX_SIZE,
               "wait_ctx fits an acquisition");

/* A granted task nobody holds any more: an auto set it consumed goes back
 * to the event (a manual set was not consumed: nothing to give back). */
static void async_give_back(void *ctx, park__waiter_t *w)
{
    (void)w;
    park_event_t *e = ((struct park__event_wait_ctx *)ctx)->e;
    if (!park__event_manual(e))
        park_event_set(e);
}

static const park__acq_ops_t async_ops = {
    .wait = &park__event_wait_ops, /* ctx: the struct park__event_wait_ctx inside the task */
    .try_take = park__event_wait_taken,
    .give_back = async_give_back,
};

park_task_t *park_event_wait_async_until(park_event_t *e, park_pool_t *pool, park_time_t deadline)
{
    struct park__event_wait_ctx c = {.e = e};
    return park__acquire_async(pool, &async_ops, e, 0, &c, sizeof c, deadline);
}

park_task_t *park_event_wait_async(park_event_t *e, park_pool_t *pool)
{
    return park_event_wait_async_until(e, pool, PARK_FOREVER);
}
