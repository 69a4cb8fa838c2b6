/* lib/mutex_async.c: park_mutex's asynchronous acquisition (lib/async.h).
 * The machine it acts on: lib/mutex.c; design notes: docs/design/mutex.md.
 *
 * A task waits in the queue as a thread would, with the same callbacks.
 * Queued, a task is always handed the lock (unlock_select, hinted_select
 * in lib/mutex.c); an enqueue that does not queue (the lock fell free, or
 * the fence of lock_before_sleep saw it unlocked) tries again. */
#include "async.h"
#include "mutex_impl.h"

_Static_assert(sizeof(struct park__mutex_lock_ctx) <= PARK__ACQ_CTX_SIZE,
               "lock_ctx fits an acquisition");

static void async_give_back(void *ctx, park__waiter_t *w)
{
    (void)w;
    park_mutex_unlock(((struct park__mutex_lock_ctx *)ctx)->m);
}

static bool async_try_take(void *ctx)
{
    return park_mutex_try_lock(((struct park__mutex_lock_ctx *)ctx)->m);
}

static const park__acq_ops_t async_ops = {
    .wait = &park__mutex_lock_ops, /* ctx: the struct park__mutex_lock_ctx inside the task */
    .try_take = async_try_take,
    .give_back = async_give_back,
};

park_task_t *park_mutex_lock_async(park_mutex_t *m, park_pool_t *pool)
{
    struct park__mutex_lock_ctx c = {.m = m};
    return park__acquire_async(pool, &async_ops, m, 0, &c, sizeof c, PARK_FOREVER);
}
