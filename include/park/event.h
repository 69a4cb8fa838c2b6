/* park/event.h: an event, manual-reset or auto-reset.
 *
 * 4 bytes. An event is set or not set, and a wait passes once it is set.
 * The two kinds, chosen at initialisation, differ in what a set does:
 *
 *   - Manual reset (PARK_EVENT_INIT_MANUAL, park_event_init(e, true, ..)):
 *     a set releases every waiter queued at that moment, and every later
 *     wait passes until park_event_reset. A reset that follows a set at
 *     once takes nothing from the waiters the set released.
 *   - Auto reset (PARK_EVENT_INIT_AUTO, park_event_init(e, false, ..);
 *     zeroed memory is an auto-reset event not set): a set releases
 *     exactly one waiter, the oldest (thread or task), or, with nobody
 *     waiting, stays set until one wait consumes it, as .NET's
 *     AutoResetEvent and tokio's Notify::notify_one do. Sets do not add
 *     up: two sets with nobody waiting leave the event set once, and two
 *     sets with one waiter release it and leave the event set once.
 *
 * A set with nobody waiting, a wait on a set event and a reset are one
 * atomic operation each, inlined (no lock, no system call). Waiters park
 * in park's shared wait queue under the event's address (no CPU, no
 * allocation): a manual set wakes them all as one batch, with one system
 * call; an auto set hands itself to the oldest waiter directly. A timed
 * wait or an asynchronous one that is cancelled never loses a set: a set
 * handed to a waiter as its deadline passes is that waiter's (its wait
 * returns 0), and otherwise it stays with the event or goes to the next
 * waiter.
 *
 * Destruction safety: a set does not touch the event's memory after the
 * store that sets it (or hands it to a waiter), so a thread that waited
 * for it may destroy and free the event at once, as long as no other
 * thread is still inside a call on it.
 *
 * Memory ordering: a set is a release operation; a wait that passes
 * because of it (wait, wait_until or try_wait returning 0 or true, an
 * asynchronous wait completing with 0, is_set returning true) is an
 * acquire operation: everything written before the set is visible to it.
 * Sets also order among themselves: a wait that consumes an auto event
 * set twice sees what was written before either set. */
#ifndef PARK_EVENT_H
#define PARK_EVENT_H

#include <park/common.h>
#include <park/time.h>

PARK_BEGIN_DECLS

typedef struct park_event {
    uint32_t state_; /* private: see lib/event.c */
} park_event_t;

/* Private: the state word's bits (lib/event.c documents the machine). */
#define PARK__EVENT_SET 1u     /* set (auto: not consumed yet) */
#define PARK__EVENT_WAITERS 2u /* waiters are queued under the event's address */
#define PARK__EVENT_MANUAL 4u  /* manual reset; fixed at initialisation */

/* Static initialisers: a manual-reset or auto-reset event, set if `set`
 * is true. PARK_EVENT_INIT_AUTO(false) is zeroed memory. */
#define PARK_EVENT_INIT_MANUAL(set)                                                                \
    {                                                                                              \
        PARK__EVENT_MANUAL | ((set) ? PARK__EVENT_SET : 0u)                                        \
    }
#define PARK_EVENT_INIT_AUTO(set)                                                                  \
    {                                                                                              \
        (set) ? PARK__EVENT_SET : 0u                                                               \
    }

/* Private: out-of-line slow paths of the inline functions below. */
PARK_API void park__event_set_slow(park_event_t *e);
PARK_API int park__event_wait_slow(park_event_t *e, park_time_t deadline);

/* Makes *e a manual-reset (manual_reset true) or auto-reset event, set if
 * initially_set. Not atomic: nobody may use *e meanwhile. Never blocks. */
PARK_API void park_event_init(park_event_t *e, bool manual_reset, bool initially_set);

/* Checks that nobody waits on *e: 0 or EBUSY (*e unchanged and usable).
 * NULL: 0, nothing done. Never blocks. */
PARK_API int park_event_destroy(park_event_t *e);

/* Sets *e. Manual: releases every waiter queued now, and later waits pass
 * until a reset. Auto: hands the set to the oldest waiter (thread or
 * task), or, with nobody waiting, leaves *e set until a wait consumes it;
 * setting an event already set changes nothing. Release ordering (see the
 * top). Never blocks; with nobody waiting, one compare-and-swap, inlined. */
PARK__INLINE void park_event_set(park_event_t *e)
{
    uint32_t v = __atomic_load_n(&e->state_, __ATOMIC_RELAXED);
    while (!(v & PARK__EVENT_WAITERS)) {
        /* v -> v|SET, also when SET is there already, so that every set
         * is a release that a consuming wait acquires. release: pairs
         * with the acquire in park_event_try_wait. */
        if (__atomic_compare_exchange_n(&e->state_, &v, v | PARK__EVENT_SET, true, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
            return;
    }
    park__event_set_slow(e);
}

/* Clears *e's set (auto: a set nobody has consumed yet is dropped).
 * Waiters released by an earlier set stay released. Relaxed: a reset
 * publishes nothing. Never blocks. */
PARK__INLINE void park_event_reset(park_event_t *e)
{
    /* S -> 0; relaxed: no wait passes because of a reset, so it pairs
     * with nothing. Written only when SET is there, to leave the line
     * shared. */
    if (__atomic_load_n(&e->state_, __ATOMIC_RELAXED) & PARK__EVENT_SET)
        __atomic_fetch_and(&e->state_, ~PARK__EVENT_SET, __ATOMIC_RELAXED);
}

/* True if *e is set now (auto: set and not consumed; this consumes
 * nothing). Acquire ordering when true. A snapshot: another thread may
 * set, reset or consume the event right after. Never blocks. */
PARK__INLINE bool park_event_is_set(const park_event_t *e)
{
    /* acquire: pairs with the release of the set that stored SET. */
    return (__atomic_load_n(&e->state_, __ATOMIC_ACQUIRE) & PARK__EVENT_SET) != 0;
}

/* Passes *e if it is set: true, or false at once. Auto: true consumes the
 * set (*e is no longer set). Acquire ordering when true. Never blocks. */
PARK__INLINE bool park_event_try_wait(park_event_t *e)
{
    /* acquire: pairs with the release of the set that stored SET (manual:
     * this load; auto: the CAS below, which the load only prepares). */
    uint32_t v = __atomic_load_n(&e->state_, __ATOMIC_ACQUIRE);
    if (v & PARK__EVENT_MANUAL)
        return (v & PARK__EVENT_SET) != 0;
    while (v & PARK__EVENT_SET) {
        /* consume (auto): S -> 0; acquire: as above. */
        if (__atomic_compare_exchange_n(&e->state_, &v, v & ~PARK__EVENT_SET, true,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return true;
    }
    return false;
}

/* Waits until *e is set (auto: and consumes that set). Blocks, without a
 * deadline. Acquire ordering. A set event passes with one atomic
 * operation, inlined. */
PARK__INLINE void park_event_wait(park_event_t *e)
{
    if (PARK__LIKELY(park_event_try_wait(e)))
        return;
    (void)park__event_wait_slow(e, PARK_FOREVER);
}

/* park_event_wait, giving up at the absolute deadline (CLOCK_MONOTONIC ns;
 * PARK_FOREVER never expires): 0 (passed, acquire ordering) or ETIMEDOUT
 * (nothing consumed). A set event passes even when the deadline has
 * passed. An auto set handed over as the deadline passes is this wait's:
 * it returns 0. May block until the deadline. */
PARK_API int park_event_wait_until(park_event_t *e, park_time_t deadline);

/* Waits for *e asynchronously: a task that completes with error 0 (result
 * NULL) once *e is set (auto: the task consumed that set). Uncontended (the
 * event is set), the result is a shared, already completed task (no
 * allocation); otherwise the task waits in the same queue as blocking
 * waiters, in arrival order, and its continuations run on `pool`, never
 * on the setting thread. Cancel it with park_task_cancel (0: it left the
 * queue and consumed nothing; EALREADY: a set came first and is the
 * task's), or by releasing the last reference to it (auto: a set it was
 * handed meanwhile goes back to the event, as if set again). NULL only on
 * ENOMEM. Never blocks. Memory ordering as park_event_wait. */
PARK_API park_task_t *park_event_wait_async(park_event_t *e, park_pool_t *pool);

/* As park_event_wait_async, giving up at the absolute deadline: the task
 * completes with ETIMEDOUT (nothing consumed) if no set came by then. A
 * set event passes even when the deadline has passed; an event not set
 * with a passed deadline gives a task completed with ETIMEDOUT. The
 * deadline is kept by the pool's timer: without a pool, a deadline other
 * than PARK_FOREVER gives a task completed with EINVAL, and a pool that is
 * shutting down cannot time the wait: its task completes with ETIMEDOUT
 * at once. */
PARK_API park_task_t *park_event_wait_async_until(park_event_t *e, park_pool_t *pool,
                                                  park_time_t deadline);

PARK_END_DECLS

#endif /* PARK_EVENT_H */
