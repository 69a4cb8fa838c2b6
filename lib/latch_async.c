/* lib/latch_async.c: park_latch's asynchronous waiting (lib/async.h).
 * The machine it acts on: lib/latch.c; design notes:
 * docs/design/barrier.md.
 *
 * A task waits in the queue as a thread would, with the same callbacks;
 * the release grants every waiter, threads and tasks, together. */
#include "async.h"
#include "latch_impl.h"

_Static_assert(sizeof(struct park__latch_wait_ctx) <= PARK__ACQ_CTX_SIZE,
               "wait_ctx fits an acquisition");

/* No give_back: a released latch stays released, a grant nobody saw took
 * nothing. */
static const park__acq_ops_t async_ops = {
    .wait = &park__latch_wait_ops, /* ctx: the struct park__latch_wait_ctx inside the task */
    .try_take = park__latch_wait_taken,
};

park_task_t *park_latch_wait_async_until(park_latch_t *l, park_pool_t *pool, park_time_t deadline)
{
    struct park__latch_wait_ctx c = {.l = l};
    return park__acquire_async(pool, &async_ops, l, 0, &c, sizeof c, deadline);
}

park_task_t *park_latch_wait_async(park_latch_t *l, park_pool_t *pool)
{
    return park_latch_wait_async_until(l, pool, PARK_FOREVER);
}
