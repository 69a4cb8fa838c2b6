/* park/lazy.h: lazy initialisation and once, with retry on failure.
 *
 * A park_lazy_t holds a value made on first use by an initialiser
 * (park_lazy_fn); a park_once_t is the same without a value, as
 * pthread_once is, but an initialiser may fail.
 *
 * Exactly one initialiser runs at a time, on the thread of the caller that
 * starts it; there is no hand-off to another thread. Callers that arrive
 * while it runs wait for that run (queued in park's shared wait queue,
 * where they yield a few times, then sleep: no allocation) and all
 * receive its value or its error.
 * An initialiser that fails (returns an errno value) rolls the object back
 * to "not initialised": the run's waiters get the error, and the next call
 * runs the initialiser again. No error is cached.
 * Waiters are told only after the object has been published or rolled
 * back, so a call made after a waiter saw the error starts a new run.
 *
 * A caller joins a run when it is queued behind it. A caller that comes
 * too late to join a failed run (it arrived, but the run ended before the
 * caller was queued) does not get that run's error: it finds the object
 * not initialised and starts the next run itself.
 *
 * After a success, park_lazy_get and park_once are one acquire load and a
 * branch, inlined: no call, no read-modify-write, no lock.
 *
 * The initialiser must return (not longjmp out, not throw through C
 * frames, not end its thread): while it runs, the object stays "running"
 * and its waiters wait. From inside the initialiser, a call on the same
 * object by the same thread returns EDEADLK instead of waiting for itself;
 * waiting for another thread that calls it deadlocks and is not detected.
 * Initialisers should not return EDEADLK or ETIMEDOUT, which callers could
 * not tell from the library's own.
 *
 * Memory ordering: a successful run's initialiser happens before every call
 * that returns 0 with its value (release at publication, acquire at every
 * get, fast or slow). A failed run happens before the next run starts.
 * Neither object may be moved, copied or re-initialised while in use. */
#ifndef PARK_LAZY_H
#define PARK_LAZY_H

#include <park/common.h>
#include <park/time.h>

PARK_BEGIN_DECLS

/* An initialiser: stores the value in *value and returns 0, or returns a
 * positive errno value (the run failed; *value is ignored). arg is the one
 * given to park_lazy_init or PARK_LAZY_INIT. */
typedef int (*park_lazy_fn)(void *arg, void **value);

/* An asynchronous factory: starts the run and returns its task, which
 * completes with the value as its result (error 0) or with an error. NULL
 * fails the run with ENOMEM, and a pool that is shutting down (the run's
 * continuation cannot be queued on it) fails it with EPIPE: every caller
 * of that run, its starter included, gets the error, and the next call
 * starts another run. Called on the thread of the caller that starts the
 * run, with the pool given to park_lazy_init_async. */
typedef park_task_t *(*park_lazy_async_fn)(void *arg, park_pool_t *pool);

/* Private: the state word's bits (lib/lazy.c documents the machine). The
 * other bits are 0 and reserved. */
#define PARK__LAZY_READY 1u   /* a run succeeded; the value is published (final) */
#define PARK__LAZY_RUNNING 2u /* an initialiser runs */
#define PARK__LAZY_WAITERS 4u /* callers are queued in lib/wait behind the run */

/* 40 bytes on LP64. */
typedef struct park_lazy {
    uint32_t state_;    /* private: see lib/lazy.c */
    void *value_;       /* private: the value, once READY */
    park_lazy_fn fn_;   /* private */
    void *arg_;         /* private */
    park_pool_t *pool_; /* private: the factory's pool (park_lazy_init_async), or NULL */
} park_lazy_t;

/* Static initialiser: a lazy not yet initialised whose initialiser is
 * fn(arg, &value). Zeroed memory is a lazy without an initialiser: every
 * get on it returns EINVAL. */
#define PARK_LAZY_INIT(fn, arg)                                                                    \
    {                                                                                              \
        0, 0, (fn), (arg), 0                                                                       \
    }

/* Private: out-of-line slow path of park_lazy_get. The value comes back
 * in registers, so that the caller's value need not live in memory on the
 * inlined fast path. */
typedef struct park__lazy_result {
    void *value; /* when err == 0 */
    int err;
} park__lazy_result_t;
PARK_API park__lazy_result_t park__lazy_get_slow(park_lazy_t *l, park_time_t deadline);

/* Makes *l a lazy not yet initialised, with initialiser fn(arg, &value).
 * fn may be NULL (then every get returns EINVAL). Not atomic: nobody may
 * use *l meanwhile. Never blocks. */
PARK_API void park_lazy_init(park_lazy_t *l, park_lazy_fn fn, void *arg);

/* Stores the value of *l in *value (not NULL) and returns 0, running the
 * initialiser first on this thread if no run has succeeded yet, or waiting
 * for the run in progress on another thread. Returns the run's error if the
 * run this call started or waited for failed (*value unchanged; the next
 * call runs the initialiser again), EDEADLK if called from inside *l's
 * initialiser by its own thread, or EINVAL if *l has no initialiser. May
 * block (runs the initialiser, or waits for it without a deadline).
 * Acquire ordering: the successful run happens before the return of 0.
 * Once *l is initialised: one acquire load and a branch, inlined. */
PARK__INLINE int park_lazy_get(park_lazy_t *l, void **value)
{
    /* acquire: pairs with the release that publishes READY in lib/lazy.c. */
    if (PARK__LIKELY(__atomic_load_n(&l->state_, __ATOMIC_ACQUIRE) & PARK__LAZY_READY)) {
        *value = l->value_;
        return 0;
    }
    park__lazy_result_t r = park__lazy_get_slow(l, PARK_FOREVER);
    if (r.err == 0)
        *value = r.value;
    return r.err;
}

/* park_lazy_get, waiting for another thread's run only until the absolute
 * deadline (CLOCK_MONOTONIC ns; PARK_FOREVER never expires): ETIMEDOUT if
 * that run has not ended by then (*value unchanged). The timeout ends this
 * caller's wait only; the run goes on and its other waiters get its
 * result. An initialised lazy returns its value, and a lazy that is not
 * initialised and not running runs the initialiser on this thread (which
 * no deadline interrupts), even when the deadline has passed. */
PARK_API int park_lazy_get_until(park_lazy_t *l, void **value, park_time_t deadline);

/* Makes *l a lazy whose runs are fn(arg, pool)'s tasks: one run at a time,
 * started by the first caller of any kind (blocking or asynchronous) and
 * shared by every caller that arrives while it runs; each caller gets the
 * run's value or its error, and a failed run is rolled back (the next call
 * starts another) before any waiter is told. Blocking gets wait for the
 * run (never EDEADLK: the run is not on a caller's stack); one that starts
 * the run waits for it as a task of its own (a worker of the pool runs
 * other work meanwhile), and returns ENOMEM if no task can be made, or
 * the run's ENOMEM or EPIPE (see park_lazy_async_fn); with a deadline it
 * still starts the run, and times out only its own wait. Not atomic:
 * nobody may use *l meanwhile. The pool must outlive every run. */
PARK_API void park_lazy_init_async(park_lazy_t *l, park_pool_t *pool, park_lazy_async_fn fn,
                                   void *arg);

/* The value asynchronously: a task of the caller's own (cancelling it, or
 * its deadline, never cancels the run) that completes on `pool` with the
 * value as its result, or with the run's error. Ready, or idle with a
 * synchronous initialiser (which then runs on this thread, as
 * park_lazy_get would), the task is already complete; idle with a factory,
 * this call starts the run. A call from inside a running synchronous
 * initialiser of *l gives a task completed with EDEADLK; EINVAL as
 * park_lazy_get. NULL only on ENOMEM. Never blocks, except to run a
 * synchronous initialiser. Acquire ordering, as park_lazy_get. */
PARK_API park_task_t *park_lazy_get_async(park_lazy_t *l, park_pool_t *pool);

/* True if a run of *l's initialiser has succeeded (then park_lazy_get
 * returns the value without blocking); false while not initialised or
 * running. Never blocks, runs nothing. Acquire ordering: after true, the
 * successful run happens before the caller's next reads. */
PARK_API bool park_lazy_ready(const park_lazy_t *l);

/* A once: the lazy's machine without a value. An initialiser returns 0 or
 * a positive errno value. */
typedef int (*park_once_fn)(void *arg);

/* 4 bytes. */
typedef struct park_once {
    uint32_t state_; /* private: see lib/lazy.c */
} park_once_t;

/* Static initialiser: a once that has not run. Same as zeroed memory. */
#define PARK_ONCE_INIT                                                                             \
    {                                                                                              \
        0                                                                                          \
    }

/* Private: out-of-line slow path of park_once. */
PARK_API int park__once_slow(park_once_t *o, park_once_fn fn, void *arg);

/* Runs fn(arg) on this thread unless a run on *o has succeeded, waiting
 * instead while another thread's run is in progress: 0 once a run has
 * succeeded (now or before), the error of the run this call started or
 * waited for (the next call runs again), EDEADLK if called from inside
 * *o's running initialiser by its own thread, or EINVAL if fn is NULL and
 * *o has not succeeded yet (nothing runs). The fn of the caller that starts
 * a run is the one that runs. May block (runs fn, or waits without a
 * deadline). Acquire ordering: the successful run happens before the return
 * of 0. Once a run has succeeded: one acquire load and a branch, inlined. */
PARK__INLINE int park_once(park_once_t *o, park_once_fn fn, void *arg)
{
    /* acquire: pairs with the release that publishes READY in lib/lazy.c. */
    if (PARK__LIKELY(__atomic_load_n(&o->state_, __ATOMIC_ACQUIRE) & PARK__LAZY_READY))
        return 0;
    return park__once_slow(o, fn, arg);
}

PARK_END_DECLS

#endif /* PARK_LAZY_H */
