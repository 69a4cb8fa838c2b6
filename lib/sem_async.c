/* lib/sem_async.c: park_sem's asynchronous acquisitions (lib/async.h).
 * The machine they act on: lib/sem.c; design notes: docs/design/sem.md.
 *
 * A task waits in the queue as a thread would, with the same callbacks, in
 * the same order. A granted task owns its n permits; one nobody holds any
 * more gives them back, and a cancelled task of several gives back what
 * was gathered for it. */
#include <errno.h>

#include "async.h"
#include "sem_impl.h"

_Static_assert(sizeof(struct park__sem_acquire_ctx) <= PARK__ACQ_CTX_SIZE,
               "acquire_ctx fits an acquisition");

static void async_give_back(void *ctx, park__waiter_t *w)
{
    (void)w;
    struct park__sem_acquire_ctx *c = ctx;
    park_sem_release(c->s, c->n);
}

/* n was checked when the acquisition was made. */
static bool async_try_take(void *ctx)
{
    struct park__sem_acquire_ctx *c = ctx;
    return park__sem_try_take(c->s, c->n);
}

static void async_removed(void *ctx)
{
    park__sem_give_back_gathered(((struct park__sem_acquire_ctx *)ctx)->s,
                                 park__acq_ctx_waiter(ctx));
}

/* One table for one permit and several: a waiter of one never has permits
 * gathered for it, so its after_removed gives back nothing. */
static const park__acq_ops_t async_ops = {
    .wait = &park__sem_acquire_ops, /* ctx: the struct park__sem_acquire_ctx inside the task */
    .try_take = async_try_take,
    .after_removed = async_removed,
    .give_back = async_give_back,
};

park_task_t *park_sem_acquire_async_until(park_sem_t *s, park_pool_t *pool, park_time_t deadline)
{
    struct park__sem_acquire_ctx c = {.s = s, .n = 1};
    return park__acquire_async(pool, &async_ops, s, 1, &c, sizeof c, deadline);
}

park_task_t *park_sem_acquire_n_async_until(park_sem_t *s, uint32_t n, park_pool_t *pool,
                                            park_time_t deadline)
{
    if (!park__sem_n_valid(s, n))
        return park__task_completed(EINVAL, NULL);
    struct park__sem_acquire_ctx c = {.s = s, .n = n};
    return park__acquire_async(pool, &async_ops, s, n, &c, sizeof c, deadline);
}

park_task_t *park_sem_acquire_n_async(park_sem_t *s, uint32_t n, park_pool_t *pool)
{
    return park_sem_acquire_n_async_until(s, n, pool, PARK_FOREVER);
}

park_task_t *park_sem_acquire_async(park_sem_t *s, park_pool_t *pool)
{
    return park_sem_acquire_async_until(s, pool, PARK_FOREVER);
}
