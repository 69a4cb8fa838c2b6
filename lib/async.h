/* lib/async.h: asynchronous acquisitions: a task that waits in a
 * primitive's lib/wait queue, beside (and in the same FIFO order as) the
 * threads that wait there.
 *
 * An acquisition task embeds a waiter whose notify completes the task, so a
 * grant completes it after the bucket lock is released, and its
 * continuations are queued on the pool (nothing of the user's runs on the
 * releasing thread). Cancelling it (park_task_cancel, a deadline, or
 * dropping the last reference while it is pending) takes the waiter out of
 * the queue with park__wait_cancel: if that succeeds the task completes
 * with ECANCELED (ETIMEDOUT for a deadline) and took nothing; if the grant
 * came first, the cancel returns EALREADY and the task owns the permit
 * (rule 5). If the last reference goes while the grant is in flight, the
 * permit is handed back (ops->give_back), so dropping a pending acquisition
 * never loses a permit.
 *
 * References: the caller's, plus one the queue holds while the waiter is
 * queued (dropped by whoever decides: notify or a successful cancel). */
#ifndef PARK_LIB_ASYNC_H
#define PARK_LIB_ASYNC_H

#include <park/task.h>

#include "task/task.h" /* park__task_ready, park__task_completed */
#include "wait/wait.h"

typedef struct park__acq_ops {
    /* Enqueueing: validate/removed/before_sleep of the primitive, called
     * with the acquisition's ctx (park__acq_ctx). */
    const park__wait_ops_t *wait;
    /* For park__acquire_async: takes the primitive at once if it is free:
     * true if taken. Called with the caller's ctx, which after an enqueue
     * that did not queue holds what validate left in the task's (so a
     * validate that took the primitive itself can say so here). */
    bool (*try_take)(void *ctx);
    /* Optional, after the waiter left the queue ungranted (a cancel): what
     * the primitive does after a timed-out thread waiter (the rwlock
     * admits the readers a cancelled writer held back). */
    void (*after_removed)(void *ctx);
    /* Optional, on the granting thread, outside the bucket lock: the grant
     * w->grant was made; return the task's result (NULL by default). */
    void *(*granted)(void *ctx, park__waiter_t *w);
    /* Optional, before `granted`: the error the grant completes the task
     * with (0 by default; lazy.c grants a failed run's error). With an
     * error, `granted` is not called and nothing is given back. */
    int (*outcome)(void *ctx, park__waiter_t *w);
    /* The grant was made to an acquisition nobody holds any more: give the
     * permit back as its holder would have. NULL where a grant holds
     * nothing to give back (a latch's release, a barrier's phase, a lazy's
     * value, a sent item). */
    void (*give_back)(void *ctx, park__waiter_t *w);
} park__acq_ops_t;

/* Room for the primitive's ctx inside the task. */
#define PARK__ACQ_CTX_SIZE 32

/* A new acquisition task for `pool` waiting on `key` (caller's reference
 * only; not queued yet), its waiter asking for `want`; NULL on ENOMEM. */
park_task_t *park__acq_new(park_pool_t *pool, const park__acq_ops_t *ops, const void *key,
                           uintptr_t want);

/* The acquisition's ctx (PARK__ACQ_CTX_SIZE bytes, zeroed by
 * park__acq_new) and waiter. */
void *park__acq_ctx(park_task_t *t);
park__waiter_t *park__acq_waiter(park_task_t *t);

/* The waiter of the acquisition whose ctx this is (ctx as the callbacks
 * are given it): for a validate that writes to its waiter, or an
 * after_removed that reads what wakers wrote to it while it was queued
 * (its grant: no waker writes it once it has left the queue). */
park__waiter_t *park__acq_ctx_waiter(void *ctx);
/* The reverse: the ctx of the acquisition whose waiter is w. */
void *park__acq_waiter_ctx(park__waiter_t *w);

/* Enqueues the acquisition (park__wait_enqueue with ops->wait and the
 * ctx). PARK__WAIT_QUEUED: the task is live in the queue (and may already
 * be complete). Otherwise (INVALID or ABORTED) it was not left queued: the
 * caller retries its fast path, and may enqueue again. */
int park__acq_enqueue(park_task_t *t, unsigned flags);

/* Completes an acquisition that was never left queued (it took what it
 * asked for by itself) exactly as a grant of `grant` would: the outcome
 * and granted hooks give its error and result, and if it is dropped unseen
 * give_back runs. Returns t. */
park_task_t *park__acq_grant_now(park_task_t *t, uintptr_t grant);

/* Frees an acquisition that was never left queued (the caller's
 * reference). */
void park__acq_discard(park_task_t *t);

/* Arms the deadline of an acquisition that is queued. */
void park__acq_deadline(park_task_t *t, park_time_t deadline);

/* The acquisition every primitive with a permit shares: takes it at once
 * (ops->try_take: the shared ready task), or gives ETIMEDOUT if the
 * deadline has passed, or queues an acquisition task whose ctx starts as a
 * copy of *ctx (ctx_size bytes) and arms its deadline; it retries when the
 * enqueue does not queue. NULL only on ENOMEM. */
park_task_t *park__acquire_async(park_pool_t *pool, const park__acq_ops_t *ops, const void *key,
                                 uintptr_t want, void *ctx, size_t ctx_size, park_time_t deadline);

#endif /* PARK_LIB_ASYNC_H */
