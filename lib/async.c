/* lib/async.c: asynchronous acquisitions, tasks that wait in a
 * primitive's lib/wait queue (the interface and the rules are in async.h).
 *
 * An acquisition is a task of its own kind (task/task.h) with a waiter
 * embedded; `state` records who decided the fate of a queued one:
 *
 *   QUEUED      in the queue, or about to be
 *   GRANTED     notify ran: the grant is the task's outcome
 *   CANCELLED   a cancel took the waiter out first (nothing granted)
 *   ABANDONED   the last holder let go unseen while a grant was in flight
 *
 *   grant     QUEUED -> GRANTED           exchange in acq_notify; if it
 *                                         was ABANDONED, give the permit back
 *   cancel    QUEUED -> CANCELLED         store, after park__wait_cancel
 *                                         took the waiter out
 *   abandon   GRANTED|QUEUED -> ABANDONED exchange in acq_abandon, after a
 *                                         failed cancel; if it was GRANTED,
 *                                         give the permit back
 *
 * References: the holders' (the caller's, continuations'), plus HOLD while
 * the waiter is queued, dropped by whoever decides (notify or a successful
 * cancel); a timer's deadline holds an internal one. The permit is handed
 * back exactly once: by whichever of notify and abandon comes second. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "async.h"
#include "os/os.h"
#include "task/task.h"

enum { ACQ_QUEUED, ACQ_GRANTED, ACQ_CANCELLED, ACQ_ABANDONED };

typedef struct acq {
    park_task_t task; /* first: an acquisition is a task */
    const park__acq_ops_t *ops;
    const void *key;
    _Atomic uint32_t state;
    park__waiter_t waiter;
    _Alignas(8) unsigned char ctx[PARK__ACQ_CTX_SIZE];
} acq_t;

_Static_assert(sizeof(acq_t) <= PARK__BLOCK_SIZE, "an acquisition fits a block");

static acq_t *acq_of(park_task_t *t)
{
    return (acq_t *)t;
}

static int acq_cancel(park_task_t *t, int err);
static void acq_abandon(park_task_t *t);

static const park__task_kind_t acq_kind = {.cancel = acq_cancel, .abandon = acq_abandon};

static acq_t *acq_of_waiter(park__waiter_t *w)
{
    return (acq_t *)((char *)w - offsetof(acq_t, waiter));
}

/* The waiter's notify: the grant was made (bucket lock released). */
static void acq_notify(park__waiter_t *w)
{
    acq_t *a = acq_of_waiter(w);
    const park__acq_ops_t *ops = a->ops;
    int err = ops->outcome ? ops->outcome(a->ctx, w) : 0;
    /* acq_rel: pairs with the exchange in acq_abandon. */
    if (atomic_exchange_explicit(&a->state, ACQ_GRANTED, memory_order_acq_rel) == ACQ_ABANDONED) {
        if (err == 0 && ops->give_back)
            ops->give_back(a->ctx, w);
    } else {
        void *result = err == 0 && ops->granted ? ops->granted(a->ctx, w) : NULL;
        park__task_complete(&a->task, err, result);
    }
    park__task_drop_hold(&a->task);
}

park_task_t *park__acq_new(park_pool_t *pool, const park__acq_ops_t *ops, const void *key,
                           uintptr_t want)
{
    park_task_t *t = park__task_alloc(pool, 1);
    if (!t)
        return NULL;
    acq_t *a = acq_of(t);
    t->kind = &acq_kind;
    a->ops = ops;
    a->key = key;
    atomic_init(&a->state, ACQ_QUEUED);
    park__waiter_init(&a->waiter, want);
    a->waiter.notify = acq_notify;
    memset(a->ctx, 0, sizeof a->ctx);
    return t;
}

void *park__acq_ctx(park_task_t *t)
{
    return acq_of(t)->ctx;
}

park__waiter_t *park__acq_waiter(park_task_t *t)
{
    return &acq_of(t)->waiter;
}

park__waiter_t *park__acq_ctx_waiter(void *ctx)
{
    return &((acq_t *)((char *)ctx - offsetof(acq_t, ctx)))->waiter;
}

void *park__acq_waiter_ctx(park__waiter_t *w)
{
    return ((acq_t *)((char *)w - offsetof(acq_t, waiter)))->ctx;
}

int park__acq_enqueue(park_task_t *t, unsigned flags)
{
    acq_t *a = acq_of(t);
    /* The queue's hold, taken before the waiter can be granted (the
     * bucket lock publishes it with the waiter). */
    park__task_hold(t);
    /* since stays 0: an asynchronous waiter is always handed its grant,
     * so no fairness clock is needed (and a clock read per queued task is
     * saved). */
    int r = park__wait_enqueue(a->key, &a->waiter, flags, a->ops->wait, a->ctx);
    if (r != PARK__WAIT_QUEUED)
        park__task_drop_hold(t); /* not the last: the caller's stays */
    return r;
}

/* park__acq_enqueue for an acquisition nobody else can reach yet (made by
 * the caller, never left queued): its references are set by a plain store
 * rather than an RMW each way. */
static int acq_enqueue_unshared(park_task_t *t)
{
    acq_t *a = acq_of(t);
    /* The bucket lock publishes the hold with the waiter, as in
     * park__acq_enqueue. */
    park__task_hold_unshared(t);
    int r = park__wait_enqueue(a->key, &a->waiter, 0, a->ops->wait, a->ctx);
    if (r != PARK__WAIT_QUEUED) /* never queued: still the caller's alone */
        park__task_drop_hold_unshared(t);
    return r;
}

park_task_t *park__acq_grant_now(park_task_t *t, uintptr_t grant)
{
    acq_t *a = acq_of(t);
    a->waiter.grant = grant;
    park__task_hold(t); /* the hold acq_notify drops, as if it was queued */
    acq_notify(&a->waiter);
    return t;
}

void park__acq_discard(park_task_t *t)
{
    park__task_free(t);
}

void park__acq_deadline(park_task_t *t, park_time_t deadline)
{
    if (deadline != PARK_FOREVER && t->pool && park__task_deadline(t, t->pool, deadline) != 0)
        /* No timer (the pool is closing, or no memory): give up now rather
         * than wait past the deadline. */
        acq_cancel(t, ETIMEDOUT);
}

park_task_t *park__acquire_async(park_pool_t *pool, const park__acq_ops_t *ops, const void *key,
                                 uintptr_t want, void *ctx, size_t ctx_size, park_time_t deadline)
{
    if (deadline != PARK_FOREVER && !pool)
        return park__task_completed(EINVAL, NULL); /* no timer to keep the deadline */
    for (park_task_t *t = NULL;;) {
        bool taken = ops->try_take(ctx);
        if (taken || park__deadline_passed(deadline)) {
            if (t)
                park__task_free(t);
            return taken ? park__task_ready() : park__task_completed(ETIMEDOUT, NULL);
        }
        if (!t && !(t = park__acq_new(pool, ops, key, want)))
            return NULL;
        memcpy(acq_of(t)->ctx, ctx, ctx_size);
        if (acq_enqueue_unshared(t) == PARK__WAIT_QUEUED) {
            park__acq_deadline(t, deadline);
            return t;
        }
        memcpy(ctx, acq_of(t)->ctx, ctx_size); /* what validate decided */
    }
}

/* Takes the waiter out of the queue: true if it was still queued. */
static bool acq_remove(acq_t *a)
{
    const park__acq_ops_t *ops = a->ops;
    if (!park__wait_cancel(a->key, &a->waiter, ops->wait->removed, a->ctx))
        return false;
    if (ops->after_removed)
        ops->after_removed(a->ctx);
    /* relaxed: only read back by acq_abandon's fast check. */
    atomic_store_explicit(&a->state, ACQ_CANCELLED, memory_order_relaxed);
    return true;
}

static int acq_cancel(park_task_t *t, int err)
{
    if (!acq_remove(acq_of(t)))
        return EALREADY; /* granted first (or done): the grant stands */
    park__task_complete(t, err, NULL);
    park__task_drop_hold(t);
    return 0;
}

/* The caller holds the last reference but the queue's, and nobody has
 * seen the outcome: nobody ever will. */
static void acq_abandon(park_task_t *t)
{
    acq_t *a = acq_of(t);
    if (acq_remove(a)) {
        park__task_complete(t, ECANCELED, NULL);
        park__task_drop_hold(t); /* the caller's reference keeps t */
        return;
    }
    /* The grant came first. acq_rel: pairs with the exchange in
     * acq_notify: whichever comes second hands the permit back. */
    if (atomic_exchange_explicit(&a->state, ACQ_ABANDONED, memory_order_acq_rel) == ACQ_GRANTED &&
        a->ops->give_back && (!a->ops->outcome || a->ops->outcome(a->ctx, &a->waiter) == 0))
        /* acq_notify came first and completes t, but its completion can no
         * longer be seen by anyone: the permit goes back. (Otherwise
         * acq_notify sees ABANDONED and gives it back itself.) */
        a->ops->give_back(a->ctx, &a->waiter);
}
