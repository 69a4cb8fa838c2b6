/* park/pool.h: a work-stealing thread pool with allocation-free fork-join.
 *
 * Each worker owns a fixed-size Chase-Lev deque (lib/pool/deque.c): it
 * pushes and pops at the bottom (LIFO, hot in cache), idle workers steal
 * from the top (FIFO, the oldest and usually largest pieces). The deque
 * never grows: when it is full, park_join runs its second function inline
 * and other work spills to the pool's shared queue, as Go and Tokio do, so
 * no buffer ever has to be reclaimed.
 *
 * Submissions from threads that are not workers of this pool go to the
 * shared queue: a bounded ring per producer thread (single producer, so a
 * submission is a few stores and no read-modify-write; producers never
 * meet on a shared index), which the workers drain in batches into their
 * deques. A producer that finds its ring full yields a few times to the
 * workers, then spills to an unbounded overflow list. Beyond 256 producer
 * threads at once, the others share one ring per worker. Submission order
 * is not execution order.
 *
 * A worker that runs out of work looks for more for about 10 us alone on
 * its CPU (pauses, then yields), then parks on a futex and burns no CPU.
 * A submission wakes at most one parked worker, and only when no other
 * worker is already looking for work; a woken worker that finds work wakes
 * the next one only if more work remains, so a burst wakes workers one by
 * one, never as a herd. The race between "no work, going to sleep" and "new work, anyone
 * asleep?" is closed by a sequentially consistent pair: the worker
 * announces itself as sleepy and then re-checks every queue; the submitter
 * publishes its item and then reads the announcements (lib/pool/pool.c).
 *
 * A worker that waits (park_join, park_task_wait) runs other work meanwhile
 * instead of blocking. Work items are {function, argument} pairs stored in
 * the queues themselves: neither park_join nor park_pool_submit allocates.
 *
 * Memory ordering: everything the submitting thread did before
 * park_pool_submit / park_join happens before the function runs; everything
 * the functions of park_join did happens before park_join returns. */
#ifndef PARK_POOL_H
#define PARK_POOL_H

#include <park/common.h>

PARK_BEGIN_DECLS

typedef struct park_pool park_pool_t;

typedef struct park_pool_config {
    unsigned threads; /* workers; 0 = the online CPUs */
} park_pool_config_t;

/* Work the pool has done since it was created, for monitoring. Counting
 * costs one unshared increment per event on the worker that saw it. */
typedef struct park_pool_stats {
    uint64_t executed; /* work items run (submissions, joins stolen, continuations) */
    uint64_t steals;   /* items taken from another worker's deque */
    uint64_t parks;    /* times a worker went to sleep for lack of work */
    uint64_t spilled;  /* submissions that overflowed the rings */
} park_pool_stats_t;

/* Starts a pool of cfg->threads workers (cfg may be NULL: one per online
 * CPU): 0, EINVAL (more than 4096 threads), ENOMEM or EAGAIN (no thread
 * could be started; nothing is left behind). Blocks while the threads start. */
PARK_API int park_pool_create(park_pool_t **pool, const park_pool_config_t *cfg);

/* Shuts the pool down and frees it. From the moment it is called,
 * park_pool_submit, park_task_run and park_task_then on this pool return
 * EPIPE (or a task completed with EPIPE). Everything submitted before runs,
 * with the fork-join work and the continuations it leads to; armed delays
 * and deadlines of park_task_cancel_at complete at once with ECANCELED. It
 * returns when no work is left and the workers have exited. A task that is
 * still pending when it returns must not complete with continuations on
 * this pool any more. NULL does nothing. Called from one of the pool's own
 * workers (it would wait for itself), or for a pool already destroyed, it
 * aborts with a message (a pool destroyed twice is found without reading
 * its freed memory, unless a newer pool has taken its address). Blocks. */
PARK_API void park_pool_destroy(park_pool_t *pool);

/* Queues fn(arg) to run once on one of the pool's workers: 0, EINVAL (fn
 * or pool is NULL), EPIPE (the pool is shutting down; fn will not run) or
 * ENOMEM. From a worker of this
 * pool it goes on that worker's own ring (FIFO; idle workers take from
 * it), from any other thread on that thread's producer ring. Never blocks;
 * allocates only when the rings are full. */
PARK_API int park_pool_submit(park_pool_t *pool, void (*fn)(void *arg), void *arg);

/* Runs a(a_arg) and b(b_arg), possibly in parallel, and returns when both
 * have returned; either may be NULL. From a worker of this pool: b is
 * pushed on the worker's deque, a runs on the caller's stack, then b is
 * popped back and run here unless another worker stole it, in which case
 * the caller runs other work until b is done. From any other thread: the
 * pair runs on the pool and the caller parks until it is done, so
 * park_join(pool, f, arg, NULL, NULL) means "run f on the pool and wait".
 * Allocates nothing; blocks (or helps) until both are done. Works during
 * park_pool_destroy's drain from inside the pool; from outside it (and
 * with a NULL pool) both functions run on the caller. */
PARK_API void park_join(park_pool_t *pool, void (*a)(void *), void *a_arg, void (*b)(void *),
                        void *b_arg);

/* Calls body(lo, hi, arg) over disjoint ranges that cover [begin, end)
 * exactly once, each at most `grain` long (grain 0 counts as 1), splitting
 * the range in halves with park_join. Returns when every call has returned.
 * Blocks as park_join does. A NULL body aborts with a message. */
PARK_API void park_parallel_for(park_pool_t *pool, size_t begin, size_t end, size_t grain,
                                void (*body)(size_t lo, size_t hi, void *arg), void *arg);

/* The pool whose worker is calling, or NULL for any other thread. */
PARK_API park_pool_t *park_pool_current(void);

/* The number of workers of the pool. */
PARK_API unsigned park_pool_threads(const park_pool_t *pool);

/* Adds up the workers' counters into *stats: a snapshot, not atomic as a
 * whole. Never blocks. */
PARK_API void park_pool_stats(const park_pool_t *pool, park_pool_stats_t *stats);

PARK_END_DECLS

#endif /* PARK_POOL_H */
