/* lib/rwlock_async.c: park_rwlock's asynchronous acquisitions (lib/async.h).
 *
 * A task waits in the queue as a thread would, with the same validate and
 * removed callbacks, so the policy treats it alike. Two differences: a
 * writer task is always handed the lock (it cannot be woken to retry:
 * release_select), and a task's hold is not recorded for the PARK_DEBUG
 * re-entry check (it belongs to no thread; releasing it marks the lock
 * untracked, which only turns that check off for the lock). */
#include "async.h"
#include "rwlock_impl.h"

_Static_assert(sizeof(struct park__rwlock_wait) <= PARK__ACQ_CTX_SIZE,
               "wait_ctx fits an acquisition");

static void async_read_give_back(void *ctx, park__waiter_t *w)
{
    (void)w;
    park_rwlock_read_unlock(((struct park__rwlock_wait *)ctx)->rw);
}

static void async_write_give_back(void *ctx, park__waiter_t *w)
{
    (void)w;
    park_rwlock_write_unlock(((struct park__rwlock_wait *)ctx)->rw);
}

/* A cancelled writer that was the last one queued lets the readers in. */
static void async_write_removed(void *ctx)
{
    struct park__rwlock_wait *c = ctx;
    if (c->admit)
        park__rwlock_admit(c->rw);
}

/* A validate that took the lock instead of queueing says so in the ctx;
 * otherwise the ctx starts afresh for the next enqueue. */
static bool async_try_take(void *ctx, bool write)
{
    struct park__rwlock_wait *c = ctx;
    if (c->acquired)
        return true;
    *c = (struct park__rwlock_wait){.rw = c->rw};
    /* A read-mostly lock biased again since the last try: revoked, as
     * write validate will not queue on it. */
    if (write && (__atomic_load_n(&c->rw->flags_, __ATOMIC_RELAXED) & PARK__RW_BIASED))
        park__rwlock_revoke(c->rw);
    uint32_t s = __atomic_load_n(&c->rw->state_, __ATOMIC_RELAXED);
    return write ? park__rwlock_try_write(c->rw, &s) : park__rwlock_try_read(c->rw, &s);
}

static bool async_try_read(void *ctx)
{
    return async_try_take(ctx, false);
}

static bool async_try_write(void *ctx)
{
    return async_try_take(ctx, true);
}

static const park__acq_ops_t async_read_ops = {
    .wait = &park__rwlock_read_ops,
    .try_take = async_try_read,
    .give_back = async_read_give_back,
};

static const park__acq_ops_t async_write_ops = {
    .wait = &park__rwlock_write_ops,
    .try_take = async_try_write,
    .after_removed = async_write_removed,
    .give_back = async_write_give_back,
};

static park_task_t *lock_async(park_rwlock_t *rw, park_pool_t *pool, bool write)
{
    struct park__rwlock_wait c = {.rw = rw};
    return park__acquire_async(pool, write ? &async_write_ops : &async_read_ops, rw,
                               write ? PARK__RW_WANT_WRITE : PARK__RW_WANT_READ, &c, sizeof c,
                               PARK_FOREVER);
}

park_task_t *park_rwlock_read_lock_async(park_rwlock_t *rw, park_pool_t *pool)
{
    return lock_async(rw, pool, false);
}

park_task_t *park_rwlock_write_lock_async(park_rwlock_t *rw, park_pool_t *pool)
{
    return lock_async(rw, pool, true);
}
