/* park/cond.h: a condition variable for park_mutex_t.
 *
 * 4 bytes; zeroed memory (or PARK_COND_INIT) is a condition variable with
 * nobody waiting, so park_cond_init is only needed to reuse memory.
 *
 * A waiter queues in park's shared wait queue (keyed by the condition
 * variable's address: no CPU, no allocation while it waits), releases the
 * mutex, sleeps, and takes the mutex again before it returns, whether it
 * was signalled or its deadline passed. Signal takes the oldest waiter and
 * moves it onto the mutex: if the mutex is held (the signaller usually
 * holds it), the waiter stays asleep, queued on the mutex, and the
 * holder's unlock hands it the mutex and wakes it, so it never wakes only
 * to find the mutex taken; if the mutex is free, it is woken to take it.
 * Broadcast takes every waiter and moves the oldest; each, once it holds
 * the mutex, moves the next onto it, so the waiters go to the mutex one
 * after another as it frees (no thundering herd). Signal and broadcast
 * with nobody waiting read one word and take no lock.
 *
 * A wake-up is never lost: a waiter that a signal took counts as signalled
 * even when its deadline passes at the same moment (it returns 0); a
 * waiter that timed out first took nothing, and the signal goes to the
 * next waiter or, with nobody left, has no effect (as POSIX's). Wake-ups
 * are not spurious, but callers should still wait in a loop over their
 * predicate, as with any condition variable: another thread may take the
 * mutex and change the state between the wake-up and the return.
 *
 * Destruction: once signal or broadcast has returned, the waiters it took
 * never touch the condition variable again, so it may be destroyed (by
 * park_cond_destroy) as soon as no thread is left waiting on it.
 *
 * Memory ordering: the mutex orders everything. A waiter that queued
 * before the signaller took the mutex is seen by the signal (the wait's
 * queueing is ordered before its unlock); signalling with the mutex
 * released is allowed, and sees every waiter whose unlock the signaller's
 * own earlier lock of the mutex synchronised with. */
#ifndef PARK_COND_H
#define PARK_COND_H

#include <park/common.h>
#include <park/mutex.h>
#include <park/time.h>

PARK_BEGIN_DECLS

typedef struct park_cond {
    uint32_t waiters_; /* private: see lib/cond.c */
} park_cond_t;

/* Static initialiser: nobody waiting. Same as zeroed memory. */
#define PARK_COND_INIT                                                                             \
    {                                                                                              \
        0                                                                                          \
    }

/* Private: out-of-line slow paths of the inline functions below. */
PARK_API void park__cond_signal_slow(park_cond_t *c);
PARK_API void park__cond_broadcast_slow(park_cond_t *c);

/* Makes *c a condition variable with nobody waiting. Not atomic: nobody may
 * use *c meanwhile. */
PARK_API void park_cond_init(park_cond_t *c);

/* Checks that nobody waits on *c: 0, or EBUSY (then *c is unchanged and
 * still usable). After 0 the memory may be freed or reused. NULL: 0,
 * nothing done. Never blocks. */
PARK_API int park_cond_destroy(park_cond_t *c);

/* Releases the mutex *m, which the caller holds, waits until a signal or
 * broadcast on *c takes the caller, then locks *m again. Always 0. Blocks.
 * Releasing *m and queueing on *c are one step for any thread that takes
 * *m afterwards: a signal sent under *m after the caller's wait began
 * reaches it. Calling it without holding *m is undefined. */
PARK_API int park_cond_wait(park_cond_t *c, park_mutex_t *m);

/* park_cond_wait, until the absolute deadline (CLOCK_MONOTONIC ns;
 * PARK_FOREVER never expires) has passed: 0 (signalled) or ETIMEDOUT.
 * *m is held again on return either way (taking it back may block past
 * the deadline). A deadline already passed still releases and retakes *m
 * (other threads may run in between) and returns ETIMEDOUT unless a
 * signal came first. */
PARK_API int park_cond_wait_until(park_cond_t *c, park_mutex_t *m, park_time_t deadline);

/* Wakes the oldest waiter of *c, if any. Never blocks; nobody waiting: one
 * relaxed load, no lock, no system call. Callers may but need not hold the
 * mutex (holding it makes the wake-up predictable). */
PARK__INLINE void park_cond_signal(park_cond_t *c)
{
    /* relaxed: a waiter that queued before the signaller's last lock of
     * the mutex is ordered before this load by that mutex (park_cond_wait
     * queues before it unlocks); one that queued later need not be seen. */
    if (PARK__UNLIKELY(__atomic_load_n(&c->waiters_, __ATOMIC_RELAXED) != 0))
        park__cond_signal_slow(c);
}

/* Wakes every thread waiting on *c when it is called; they take the mutex
 * back one after another (each wakes the next once it holds it). Never
 * blocks; nobody waiting: one relaxed load, no lock, no system call. */
PARK__INLINE void park_cond_broadcast(park_cond_t *c)
{
    /* relaxed: as in park_cond_signal. */
    if (PARK__UNLIKELY(__atomic_load_n(&c->waiters_, __ATOMIC_RELAXED) != 0))
        park__cond_broadcast_slow(c);
}

PARK_END_DECLS

#endif /* PARK_COND_H */
