/* park/mutex.h: a parking mutex.
 *
 * 4 bytes; zeroed memory (or PARK_MUTEX_INIT) is an unlocked mutex, so
 * park_mutex_init is only needed to reuse memory. Not thread-affine: any
 * thread may unlock a mutex that another thread locked. Not recursive.
 *
 * Uncontended lock is one compare-and-swap and unlock a plain store (on
 * kernels with membarrier(2); a compare-and-swap elsewhere), both inlined.
 * A contended locker spins briefly while nobody sleeps, then dozes for up
 * to about 1 ms (sleeps of 50 us that touch neither the mutex nor the
 * queue, each followed by another try, so that a thread re-taking the
 * mutex keeps its uncontended paths; a mutex that falls free meanwhile is
 * taken up to about 100 us late), then parks in park's shared wait queue
 * (no CPU while dozing or parked, no allocation).
 *
 * Contention: one waiter at a time is woken to retry; until it has run,
 * unlocks wake nobody, so running threads keep locking and unlocking
 * without system calls (a woken waiter still waiting for a CPU after
 * 200 us gets company when the unlocking threads spend their time outside
 * the lock, so that no CPU idles while waiters sleep). Fairness: unlock
 * lets a running thread barge in ahead of the woken waiter (throughput),
 * but the oldest waiter, once it has waited about 1 ms, is handed the lock
 * directly (at most one such hand-off per millisecond among the locks that
 * share a wait-queue bucket), so a thread that unlocks and re-locks in a
 * loop cannot keep a lone waiter out for much more than 1 ms.
 *
 * Destruction safety: after the store that releases the mutex, unlock never
 * touches the mutex's memory again, so the thread that locks it next may
 * destroy and free it at once (as POSIX allows for pthread mutexes).
 *
 * Memory ordering: a successful lock (lock, try_lock, lock_until returning 0)
 * is an acquire operation and unlock is a release operation; everything
 * written before an unlock is visible after the next successful lock. */
#ifndef PARK_MUTEX_H
#define PARK_MUTEX_H

#include <park/common.h>
#include <park/order.h>
#include <park/time.h>

PARK_BEGIN_DECLS

typedef struct park_mutex {
    uint32_t state_; /* private: see lib/mutex.c */
} park_mutex_t;

/* Static initialiser: an unlocked mutex. Same as zeroed memory. */
#define PARK_MUTEX_INIT                                                                            \
    {                                                                                              \
        0                                                                                          \
    }

/* Private: the state word's bits (lib/mutex.c documents the machine). */
#define PARK__MUTEX_LOCKED 1u
#define PARK__MUTEX_PARKED 2u
#define PARK__MUTEX_SLOW_UNLOCK 4u
#define PARK__MUTEX_WOKEN 8u      /* a woken waiter is on its way */
#define PARK__MUTEX_CREDIT 16u    /* unit of the "recently contended" count */
#define PARK__MUTEX_CREDITS 4080u /* its field: 0 to 255 credits */
/* Private: what a lock taken from a free state s adds to it: a lock taken
 * from any word but 0 unlocks through the slow path. */
#define PARK__MUTEX_TAKE(s) (PARK__MUTEX_LOCKED | ((s) ? PARK__MUTEX_SLOW_UNLOCK : 0u))
/* Private: out-of-line slow paths of the inline functions below. */
PARK_API void park__mutex_lock_slow(park_mutex_t *m);
PARK_API void park__mutex_unlock_slow(park_mutex_t *m);
PARK_API void park__mutex_unlock_hinted(const void *m);
/* Private: true once the process may unlock with a plain store (lib/mutex.c
 * explains the asymmetric fence that makes it safe); set at load time. */
PARK_API extern bool park__mutex_store_unlock;

/* Makes *m an unlocked mutex. Not atomic: nobody may use *m meanwhile. */
PARK_API void park_mutex_init(park_mutex_t *m);

/* Checks that *m is unlocked and nobody waits for it: 0, or EBUSY (then *m
 * is unchanged and still usable). After 0 the memory may be freed or reused.
 * NULL: 0, nothing done. Never blocks. */
PARK_API int park_mutex_destroy(park_mutex_t *m);

/* Locks *m, blocking until it is free. Acquire ordering. Relocking a mutex
 * the caller holds deadlocks. */
PARK__INLINE void park_mutex_lock(park_mutex_t *m)
{
    PARK__ORDER_LOCK(m, 0);
    uint32_t unlocked = 0;
    /* acquire: pairs with the release in park_mutex_unlock and in the
     * slow unlock's hand-over store. */
    if (PARK__UNLIKELY(!__atomic_compare_exchange_n(&m->state_, &unlocked, PARK__MUTEX_LOCKED,
                                                    false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)))
        park__mutex_lock_slow(m);
    PARK__ORDER_HELD(m);
}

/* Locks *m if it is free right now: true if locked (acquire ordering),
 * false otherwise. Never blocks; a free mutex with sleeping waiters (woken
 * but not yet running) may still be taken. */
PARK__INLINE bool park_mutex_try_lock(park_mutex_t *m)
{
    uint32_t s = __atomic_load_n(&m->state_, __ATOMIC_RELAXED);
    while (!(s & PARK__MUTEX_LOCKED)) {
        /* acquire: pairs with the release in park_mutex_unlock. */
        if (__atomic_compare_exchange_n(&m->state_, &s, s | PARK__MUTEX_TAKE(s), true,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            PARK__ORDER_HELD(m);
            return true;
        }
    }
    return false;
}

/* Locks *m, blocking until it is free or until the absolute deadline
 * (CLOCK_MONOTONIC ns; PARK_FOREVER never expires) has passed: 0 (locked,
 * acquire ordering) or ETIMEDOUT (not locked). A free mutex is taken even
 * when the deadline has already passed. */
PARK_API int park_mutex_lock_until(park_mutex_t *m, park_time_t deadline);
#ifdef PARK_CHECK_ORDER
PARK__INLINE int park__mutex_lock_until_checked(park_mutex_t *m, park_time_t deadline)
{
    PARK__ORDER_LOCK(m, PARK__ORDER_TIMED);
    int err = park_mutex_lock_until(m, deadline);
    if (err == 0)
        PARK__ORDER_HELD(m);
    return err;
}
#define park_mutex_lock_until park__mutex_lock_until_checked
#endif

/* Unlocks *m, held by the caller or by any other thread that locked it.
 * Release ordering. Does not block (it may wake one waiter); after its
 * releasing store it no longer touches *m (see destruction safety above).
 * Unlocking a mutex that is not locked aborts with a message in every
 * build (two unlocks racing for one lock may both pass unnoticed). */
PARK__INLINE void park_mutex_unlock(park_mutex_t *m)
{
    PARK__ORDER_RELEASED(m);
    if (PARK__LIKELY(park__mutex_store_unlock)) {
        if (PARK__LIKELY(__atomic_load_n(&m->state_, __ATOMIC_RELAXED) == PARK__MUTEX_LOCKED)) {
            /* L -> 0. release: pairs with the acquire of the next lock. */
            __atomic_store_n(&m->state_, 0, __ATOMIC_RELEASE);
            /* Keeps the hint load after the store in program order; the
             * processor's store->load reordering is undone by the waiter's
             * membarrier (the asymmetric pair of lib/mutex.c). */
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
            if (PARK__LIKELY(__atomic_load_n(park__hint_of(m), __ATOMIC_RELAXED) == 0))
                return;
            park__mutex_unlock_hinted(m); /* does not touch *m */
            return;
        }
    } else {
        uint32_t locked = PARK__MUTEX_LOCKED;
        /* L -> 0. release: pairs with the acquire of the next lock. */
        if (PARK__LIKELY(__atomic_compare_exchange_n(&m->state_, &locked, 0, false,
                                                     __ATOMIC_RELEASE, __ATOMIC_RELAXED)))
            return;
    }
    park__mutex_unlock_slow(m);
}

/* Locks asynchronously: a task that completes (error 0) once the mutex is
 * the task's, so the lock is held by whoever holds the task, and released
 * with park_mutex_unlock from any thread. The task waits in the same queue
 * as blocking lockers and is always handed the lock directly when an
 * unlock picks it. Uncontended, the lock is taken at once and the result
 * is a shared, already completed task (no allocation, no shared write).
 * park_task_cancel on a pending task: 0 (it left the queue without the
 * lock) or EALREADY (the lock was handed over first: the task holds it).
 * Releasing the last reference to a pending task cancels it (a lock
 * handed over meanwhile is unlocked). Continuations run on `pool`. NULL
 * only on ENOMEM. Never blocks. Acquire ordering, as park_mutex_lock. */
PARK_API park_task_t *park_mutex_lock_async(park_mutex_t *m, park_pool_t *pool);

PARK_END_DECLS

#endif /* PARK_MUTEX_H */
