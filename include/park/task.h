/* park/task.h: one-shot completions with a result and continuations.
 *
 * A task completes exactly once, with an error code (0 for success) and a
 * result pointer: by park_task_complete, by its function (park_task_run),
 * by park_task_cancel (ECANCELED), or by a deadline of park_task_cancel_at
 * (ETIMEDOUT). Whatever comes second gets EALREADY and changes nothing.
 *
 * Continuations (park_task_then) always run on a pool, never within the
 * call that completed the task and never within park_task_then itself,
 * also when the task had completed before they were registered. A worker
 * whose job completes a task (or registers on a completed one) keeps up to
 * 8 of the continuations that job queues for its own pool in a local
 * queue and runs them next, in order, ahead of its other queues and
 * without waking another worker, unless three such continuations in a row
 * ran before (then the queued work gets a turn first); a job that queues
 * more puts them all on its worker's ring; everything else goes through
 * the pool's shared queue. No other worker can take from the local queue
 * until its items have waited about 20 us past the end of a job or the job
 * waits in park: a job that completes a task and then blocks outside park
 * (a system call, a glibc lock, a spin on a flag) holds them back until it
 * returns or waits in park, so such a job must not wait for those
 * continuations itself.
 * Continuations of one task are queued in the order they were registered.
 *
 * Ownership: each function that returns a task gives the caller one
 * reference; park_task_retain adds one, park_task_release drops one, and
 * the last release frees the task. A registered continuation holds its own
 * reference until it has run, and so does a task's own run, so every
 * reference may be dropped in any order, also while the task is pending.
 * Tasks come from a per-thread cache, not from malloc, on the hot path.
 *
 * Memory ordering: completing a task (with release ordering) happens before
 * everything that observes it complete: park_task_done returning true,
 * park_task_wait and park_task_result returning the result, and every
 * continuation. */
#ifndef PARK_TASK_H
#define PARK_TASK_H

#include <park/common.h>
#include <park/pool.h>
#include <park/time.h>

PARK_BEGIN_DECLS

typedef struct park_task park_task_t;

/* A pending task completed only by park_task_complete / park_task_cancel:
 * the new task, or NULL (ENOMEM). Never blocks. */
PARK_API park_task_t *park_task_new(void);

/* A task that runs fn(arg, &result) once on the pool and completes with
 * fn's return value as its error and `result` as its result (NULL unless fn
 * sets it). If the task is completed or cancelled before fn starts, fn does
 * not run. A NULL fn or pool gives a task completed with EINVAL, a pool
 * that is shutting down one completed with EPIPE. NULL only on ENOMEM.
 * Never blocks. */
PARK_API park_task_t *park_task_run(park_pool_t *pool, int (*fn)(void *arg, void **result),
                                    void *arg);

/* Completes t with err and result: 0, EINVAL (err is negative or
 * EINPROGRESS, which park_task_result uses for "pending"; t unchanged), or
 * EALREADY if t had completed (t unchanged; the winner's outcome is
 * visible when EALREADY returns). The
 * caller must hold a reference to t for the whole call: a thread waiting
 * for t may release its own as soon as t is complete, while this call is
 * still running. Release ordering. Never blocks (a
 * loser may wait the few instructions until the winner has published) and
 * runs no continuation. */
PARK_API int park_task_complete(park_task_t *t, int err, void *result);

/* Completes a pending t with ECANCELED: 0, or EALREADY if it had completed.
 * A task that stands for a pending acquisition gives up its place in the
 * queue; if the grant came first, the cancel returns EALREADY and the task
 * keeps what it was granted. Never blocks. */
PARK_API int park_task_cancel(park_task_t *t);

/* True once t has completed (acquire ordering). Never blocks. */
PARK_API bool park_task_done(const park_task_t *t);

/* The error of a completed task, with its result in *result (if result is
 * not NULL), or EINPROGRESS if it is pending. Acquire ordering. Never
 * blocks. */
PARK_API int park_task_result(const park_task_t *t, void **result);

/* Waits until t completes and returns its error (its result in *result if
 * result is not NULL). A worker of a pool runs other work of its pool while
 * it waits; any other thread parks. Acquire ordering. Blocks. */
PARK_API int park_task_wait(park_task_t *t, void **result);

/* As park_task_wait, giving up at the absolute deadline: ETIMEDOUT if t is
 * still pending then (t is not cancelled). A task that itself failed with
 * ETIMEDOUT gives ETIMEDOUT too: tell them apart with park_task_result. */
PARK_API int park_task_wait_until(park_task_t *t, void **result, park_time_t deadline);

/* Arms a deadline on t, kept by the timer of `t`'s pool, or of the pool
 * passed to the function that made t (park_task_new tasks need a pool:
 * park_task_cancel_at_on): if t is still pending at the deadline it is
 * cancelled and completes with ETIMEDOUT. 0, EALREADY (t had completed),
 * EINVAL (t has no pool), EPIPE (the pool is shutting down) or ENOMEM.
 * Never blocks. */
PARK_API int park_task_cancel_at(park_task_t *t, park_time_t deadline);

/* park_task_cancel_at with the timer of `pool`, for any task. */
PARK_API int park_task_cancel_at_on(park_task_t *t, park_pool_t *pool, park_time_t deadline);

/* Registers fn(done, arg) to run on `pool` once t has completed (also when
 * it already has); `done` is t, borrowed for the call. 0, EINVAL (fn or
 * pool is NULL), ENOMEM or EPIPE (the pool is shutting down; fn will not
 * run). Never blocks; fn never runs
 * within this call. */
PARK_API int park_task_then(park_task_t *t, park_pool_t *pool,
                            void (*fn)(park_task_t *done, void *arg), void *arg);

/* A task that completes with error 0 once `ns` nanoseconds have passed,
 * never earlier (ECANCELED if the pool shuts down first; EPIPE at once if
 * it is shutting down; EINVAL at once without a pool). The pool's timer
 * costs nothing while nothing is armed. NULL only on ENOMEM. Never
 * blocks. */
PARK_API park_task_t *park_task_delay(park_pool_t *pool, uint64_t ns);

/* A task that completes once every ts[i] has completed: with error 0, or
 * with the error of the first of them to fail (by completion order);
 * result NULL. n == 0 gives a task completed with 0; a NULL pool, or NULL
 * ts with n > 0, one completed with EINVAL. The inputs are retained as
 * long as needed; the caller keeps its references. NULL only on ENOMEM.
 * Never blocks. */
PARK_API park_task_t *park_task_when_all(park_pool_t *pool, park_task_t *const *ts, size_t n);

/* A task that completes when the first of ts[0..n) completes, with error 0
 * and, as result, that task's index i as (void *)(uintptr_t)i (whatever
 * that task's own error was). n == 0, a NULL pool, or NULL ts give a task
 * completed with EINVAL. NULL only on ENOMEM. Never blocks. */
PARK_API park_task_t *park_task_when_any(park_pool_t *pool, park_task_t *const *ts, size_t n);

/* Adds a reference to t and returns t. Never blocks. */
PARK_API park_task_t *park_task_retain(park_task_t *t);

/* Drops a reference; the last one frees t; NULL does nothing. Releasing
 * the last reference to an acquisition whose outcome nobody has seen (no
 * park_task_done returning true, park_task_result, park_task_wait,
 * park_task_then, combinator, or a cancel that returned EALREADY) cancels
 * it, and what it was granted meanwhile goes back to the primitive. Never
 * blocks.
 *
 * Using a task after its last release is undefined. PARK_DEBUG builds
 * catch it while the task's block waits in the releasing thread's
 * quarantine (its most recent frees): every public task function then
 * aborts with a message naming itself; ASan builds report the use. */
PARK_API void park_task_release(park_task_t *t);

PARK_END_DECLS

#endif /* PARK_TASK_H */
