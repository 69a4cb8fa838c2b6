/* park/rwlock.h: a writer-preferring reader/writer lock.
 *
 * 20 bytes; zeroed memory (or PARK_RWLOCK_INIT) is a free lock, so
 * park_rwlock_init is only needed to reuse memory. Not thread-affine: a
 * read or write hold may be released by any thread, not only the one that
 * took it. Not recursive.
 *
 * Policy (who gets in when):
 *   - Readers share the lock; a writer holds it alone.
 *   - A waiting writer blocks new readers: once a writer waits, read_lock
 *     queues and try_read_lock fails, even while readers hold the lock.
 *   - When the lock falls free, the oldest queued writer goes before the
 *     queued readers, unless PARK_RWLOCK_WRITER_STREAK (2) writers in a row
 *     have already had the lock while readers waited: then all the
 *     queued readers enter together, as one batch, and the next writer goes
 *     when the batch has left. With no writer queued, all queued readers
 *     enter together.
 *   - Queued readers are handed their holds by the release that lets them
 *     in. The queued writer a release picks is woken, and while it is on
 *     its way new readers still queue, but a running writer may take the
 *     lock first (throughput, as park_mutex); a writer that has waited
 *     about 1 ms is handed the lock directly instead.
 *   So a queued reader waits for the current holder and at most 2 more
 *   writers, and a queued writer for the current holders, the writers
 *   ahead of it, one batch of readers every 2 writers, and other writers
 *   for about 1 ms at most.
 *
 * Re-entering the read lock deadlocks while a writer waits: a thread that
 * holds a read lock and calls read_lock again queues behind the waiting
 * writer, which waits for the thread's first hold to be released. PARK_DEBUG
 * builds of the library detect this case and abort with a message: see
 * park_rwlock_read_lock for exactly what is detected.
 *
 * Two modes, chosen at init: plain (zeroed memory, PARK_RWLOCK_INIT,
 * park_rwlock_init) and read-mostly (PARK_RWLOCK_INIT_READ_MOSTLY,
 * park_rwlock_init_read_mostly), whose readers write no shared cache line
 * while no writer comes; the policy below holds in both.
 *
 * Uncontended read_lock is one compare-and-swap and read_unlock one
 * fetch-and-subtract, inlined; write_lock, try_write_lock, write_unlock and
 * downgrade are one compare-and-swap each, inlined. A contended writer
 * spins briefly while nobody is queued, a reader held back by a writer
 * yields the CPU a few times, then both park in park's shared wait queue
 * (no CPU while parked, no allocation).
 *
 * Destruction safety: after the atomic operation that releases its hold
 * (and, where one waits, hands the lock to the next holder), an unlock
 * never touches the lock's memory again, so the thread that takes the lock
 * next may destroy and free it at once.
 *
 * Memory ordering. Every successful acquisition (read or write, plain,
 * try or timed) is an acquire operation and every release (read_unlock,
 * write_unlock, downgrade) is a release operation on the lock:
 *   - everything written under a write hold is visible to every later
 *     holder, reader or writer;
 *   - everything a reader did under its hold (its reads included) happens
 *     before the next write hold begins.
 * Readers holding the lock at the same time are not ordered with each
 * other. */
#ifndef PARK_RWLOCK_H
#define PARK_RWLOCK_H

#include <park/common.h>
#include <park/order.h>
#include <park/time.h>

PARK_BEGIN_DECLS

typedef struct park_rwlock {
    uint32_t state_;   /* private: the state word, see lib/rwlock.c */
    uint32_t wqueued_; /* private: writers queued or woken (lib/wait's
                          bucket lock) */
    uint32_t rqueued_; /* private: readers queued (ditto) */
    uint32_t wstreak_; /* private: writers that had the lock in a row while
                          readers waited (ditto) */
    uint32_t flags_;   /* private: the read-mostly mode and its bias
                          (lib/rwlock_mostly.c), PARK_DEBUG's tracker */
} park_rwlock_t;

/* Static initialiser: a free lock. Same as zeroed memory. */
#define PARK_RWLOCK_INIT                                                                           \
    {                                                                                              \
        0, 0, 0, 0, 0                                                                              \
    }

/* Private: flags_ bits (lib/rwlock_mostly.c documents the protocol). */
#define PARK__RW_MOSTLY 2u /* the read-mostly mode */
#define PARK__RW_BIASED                                                                            \
    4u                       /* readers hold by the reader table; the bias                         \
                                holds one read hold in state_ */
#define PARK__RW_REVOKING 8u /* a writer moves table holds into state_ */

/* Static initialiser of a read-mostly lock (park_rwlock_init_read_mostly):
 * a free lock, biased, whose bias holds one read hold in the state word. */
#define PARK_RWLOCK_INIT_READ_MOSTLY                                                               \
    {                                                                                              \
        1, 0, 0, 0, PARK__RW_MOSTLY | PARK__RW_BIASED                                              \
    }

/* Writers that may have the lock in a row while readers wait, after which
 * the queued readers go first (K of the policy above). 2, the least the
 * policy allows, keeps a queued reader's wait to the current holder plus
 * two writes, while under a stream of writers the writers still get two
 * thirds of the turns. */
#define PARK_RWLOCK_WRITER_STREAK 2u

/* Private: the state word (lib/rwlock.c documents the machine). */
#define PARK__RW_READER 1u                  /* one read hold (count unit) */
#define PARK__RW_READERS_MASK 0x0fffffffu   /* bits 0-27: read holds */
#define PARK__RW_READERS_GUARD 0x08000000u  /* bit 27: this many go slow */
#define PARK__RW_DRAIN 0x10000000u          /* the last reader out hands over */
#define PARK__RW_READERS_QUEUED 0x20000000u /* readers queued in lib/wait */
#define PARK__RW_WRITER_WAITING 0x40000000u /* writers queued in lib/wait */
#define PARK__RW_WRITER 0x80000000u         /* write-held */
/* A reader may not take the lock inline while any of these is set. */
#define PARK__RW_NO_FAST_READ                                                                      \
    (PARK__RW_WRITER | PARK__RW_WRITER_WAITING | PARK__RW_DRAIN | PARK__RW_READERS_GUARD)

/* Private: out-of-line slow paths of the inline functions below. */
PARK_API void park__rwlock_read_lock_slow(park_rwlock_t *rw);
PARK_API bool park__rwlock_try_read_lock_slow(park_rwlock_t *rw);
PARK_API void park__rwlock_read_unlock_slow(park_rwlock_t *rw);
PARK_API void park__rwlock_read_unlock_last(park_rwlock_t *rw);
PARK_API __attribute__((noreturn)) void park__rwlock_read_unlock_none(park_rwlock_t *rw);
PARK_API void park__rwlock_write_lock_slow(park_rwlock_t *rw);
PARK_API bool park__rwlock_try_write_lock_slow(park_rwlock_t *rw);
/* Private: turns a lock in use into a read-mostly one (the drop-in, once
 * its readers contend); any thread, at any time. */
PARK_API void park__rwlock_make_read_mostly(park_rwlock_t *rw);
PARK_API void park__rwlock_write_unlock_slow(park_rwlock_t *rw);
PARK_API void park__rwlock_downgrade_slow(park_rwlock_t *rw);
/* Private: what sends the inline read paths out of line, for the process:
 * PARK__RW_MODE_TRACKED in PARK_DEBUG builds of the library, which record
 * each thread's read holds; PARK__RW_MODE_MOSTLY once a read-mostly lock
 * may exist (then each lock's flags_ tell). Bits are only ever set. A
 * process without read-mostly locks reads one word that nobody writes, and
 * the lock's line is touched first by the compare-and-swap, as before. */
#define PARK__RW_MODE_TRACKED 1u
#define PARK__RW_MODE_MOSTLY 2u
PARK_API extern uint32_t park__rwlock_modes;

/* Private: where the inline read paths of *rw go (park__rwlock_read_route):
 * WORD, the word inline (a plain lock); ONCE, the word inline but one try
 * only (a read-mostly lock that is not biased); OUT, out of line (a biased
 * or revoking read-mostly lock, or PARK_DEBUG's tracked mode). */
#define PARK__RW_ROUTE_WORD 0u
#define PARK__RW_ROUTE_ONCE 1u
#define PARK__RW_ROUTE_OUT 2u

/* Private: the route of the inline read paths of *rw.
 *
 * A read-mostly lock that is neither biased nor being revoked keeps all its
 * holds in the word (a revoking writer moved the table's holds there before
 * it cleared REVOKING), so its readers take and release holds there inline,
 * as in the plain mode. Only a read lock whose one try fails (the word in
 * use: another reader or a writer) goes out of line, where re-biasing after
 * the inhibition is decided (lib/rwlock_mostly.c): a bias pays only where
 * readers meet on the word. A biased lock, or one being revoked, goes out
 * of line at once (its holds may be in the reader table).
 *
 * The lock side loads the flags relaxed: a lock is biased only after some
 * thread set the MOSTLY bit, and a hold taken through the table was taken
 * after a load that saw it, so whoever releases that hold sees it too; a
 * hold taken from the word, whatever the flags were, is found there by any
 * release (holds are interchangeable). The release side (`release`) loads
 * them with acquire: it pairs with the release that cleared REVOKING, so
 * the holds moved into the word are seen there. A lock initialised
 * statically as read-mostly may be read inline before the MOSTLY bit is
 * set: those holds are in the word too. */
PARK__INLINE uint32_t park__rwlock_read_route(const park_rwlock_t *rw, bool release)
{
    uint32_t m = __atomic_load_n(&park__rwlock_modes, __ATOMIC_RELAXED);
    if (PARK__LIKELY(m == 0))
        return PARK__RW_ROUTE_WORD;
    if (m & PARK__RW_MODE_TRACKED)
        return PARK__RW_ROUTE_OUT;
    uint32_t f = release ? __atomic_load_n(&rw->flags_, __ATOMIC_ACQUIRE)
                         : __atomic_load_n(&rw->flags_, __ATOMIC_RELAXED);
    if (!(f & PARK__RW_MOSTLY))
        return PARK__RW_ROUTE_WORD;
    return (f & (PARK__RW_BIASED | PARK__RW_REVOKING)) ? PARK__RW_ROUTE_OUT : PARK__RW_ROUTE_ONCE;
}

/* Makes *rw a free lock. Not atomic: nobody may use *rw meanwhile. */
PARK_API void park_rwlock_init(park_rwlock_t *rw);

/* Makes *rw a free lock in the read-mostly mode (or PARK_RWLOCK_INIT_READ_
 * MOSTLY). Readers of a read-mostly lock write no shared cache line while
 * the lock is biased: each publishes its hold in a slot of one process-wide
 * table of readers (hashed from the lock and the thread), so readers on
 * different CPUs do not slow each other down. A writer revokes the bias
 * first (it moves the published holds into the lock's word, about a few
 * microseconds), then proceeds as in the plain mode: meanwhile readers take
 * their holds in the word, inline, as plain readers do. Readers that meet
 * on the word bias the lock again, but only after about nine times the
 * revocation's length without a writer (longer, up to about 17 ms, while
 * writes keep coming soon after each re-bias), so a write-heavy phase costs
 * little over the plain mode; a lone reader leaves it unbiased. Every guarantee of
 * the plain mode holds (policy, timed and asynchronous acquisition,
 * downgrade, destruction safety); a read hold may still be released by
 * any thread (such a release finds the hold in the table by a search, so
 * it costs microseconds). Uncontended, a plain lock is faster for a single
 * thread; choose this mode for locks that many threads read at once and
 * rarely write. Not atomic: nobody may use *rw meanwhile. */
PARK_API void park_rwlock_init_read_mostly(park_rwlock_t *rw);

/* Checks that *rw is free and nobody waits for it: 0, or EBUSY (then *rw
 * is unchanged and still usable). After 0 the memory may be freed or
 * reused. NULL: 0, nothing done. Never blocks. Acquire ordering (after
 * every earlier release). */
PARK_API int park_rwlock_destroy(park_rwlock_t *rw);

/* Private: park_rwlock_read_lock without the lock-order hooks. */
PARK__INLINE void park__rwlock_read_lock_plain(park_rwlock_t *rw)
{
    /* The first try guesses "free", so an uncontended lock costs one CAS
     * and no load before it; a failed try returns the word to retry with. */
    uint32_t s = 0;
    uint32_t route = park__rwlock_read_route(rw, false);
    if (PARK__LIKELY(route == PARK__RW_ROUTE_WORD)) {
        do {
            /* acquire: pairs with the release of the last write_unlock or
             * downgrade (lib/rwlock.c: the finish CAS). */
            if (PARK__LIKELY(__atomic_compare_exchange_n(&rw->state_, &s, s + PARK__RW_READER,
                                                         false, __ATOMIC_ACQUIRE,
                                                         __ATOMIC_RELAXED)))
                return;
        } while (!(s & PARK__RW_NO_FAST_READ));
    } else if (route == PARK__RW_ROUTE_ONCE &&
               /* acquire: as above. */
               __atomic_compare_exchange_n(&rw->state_, &s, PARK__RW_READER, false,
                                           __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        return;
    }
    park__rwlock_read_lock_slow(rw);
}

/* Takes a read hold, blocking while a writer holds the lock or waits for
 * it. Acquire ordering.
 *
 * Calling it while the calling thread already holds a read hold on *rw
 * deadlocks if a writer waits. PARK_DEBUG builds of the library abort with
 * a message instead when, at the moment this call would park because a
 * writer waits while readers hold the lock, the calling thread still has a
 * read hold on *rw that it took itself (by read_lock, try_read_lock,
 * read_lock_until or downgrade) and has not released. A hold released by a
 * thread other than the one that took it turns the check off for that
 * lock until it is initialised again (holds are recorded per thread, at
 * most 8 locks per thread; a hold beyond those counts as released
 * elsewhere), so the check never reports a lock the thread does not hold. */
PARK__INLINE void park_rwlock_read_lock(park_rwlock_t *rw)
{
    PARK__ORDER_LOCK(rw, PARK__ORDER_READ);
    park__rwlock_read_lock_plain(rw);
    PARK__ORDER_HELD(rw);
}

/* Private: park_rwlock_try_read_lock without the lock-order hooks. */
PARK__INLINE bool park__rwlock_try_read_lock_plain(park_rwlock_t *rw)
{
    if (park__rwlock_read_route(rw, false) != PARK__RW_ROUTE_WORD)
        return park__rwlock_try_read_lock_slow(rw);
    uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED);
    while (!(s & PARK__RW_NO_FAST_READ)) {
        /* acquire: as in park_rwlock_read_lock. */
        if (__atomic_compare_exchange_n(&rw->state_, &s, s + PARK__RW_READER, true,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return true;
    }
    return false;
}

/* Takes a read hold if no writer holds the lock or waits for it: true
 * (acquire ordering) or false. Never blocks. */
PARK__INLINE bool park_rwlock_try_read_lock(park_rwlock_t *rw)
{
    bool taken = park__rwlock_try_read_lock_plain(rw);
    if (taken)
        PARK__ORDER_HELD(rw);
    return taken;
}

/* Takes a read hold, blocking while a writer holds the lock or waits for
 * it, until the absolute deadline (CLOCK_MONOTONIC ns; PARK_FOREVER never
 * expires) has passed: 0 (acquire ordering) or ETIMEDOUT (no hold taken).
 * A lock that readers may enter right now is entered even when the
 * deadline has passed. With PARK_FOREVER, PARK_DEBUG builds check for
 * re-entry as park_rwlock_read_lock does. */
PARK_API int park_rwlock_read_lock_until(park_rwlock_t *rw, park_time_t deadline);
#ifdef PARK_CHECK_ORDER
PARK__INLINE int park__rwlock_read_lock_until_checked(park_rwlock_t *rw, park_time_t deadline)
{
    PARK__ORDER_LOCK(rw, PARK__ORDER_TIMED | PARK__ORDER_READ);
    int err = park_rwlock_read_lock_until(rw, deadline);
    if (err == 0)
        PARK__ORDER_HELD(rw);
    return err;
}
#define park_rwlock_read_lock_until park__rwlock_read_lock_until_checked
#endif

/* Releases a read hold (the caller's or any other thread's). Release
 * ordering. Does not block; the last reader out hands the lock to a waiting
 * writer (or to the readers, see the policy), and the lock stays held
 * until it has. After its releasing operation (for that reader, the
 * hand-over) it no longer touches *rw. Releasing a lock that holds no read
 * (free or write-held) aborts with a message in every build; releasing a
 * read the caller does not hold while others do is undefined. */
PARK__INLINE void park_rwlock_read_unlock(park_rwlock_t *rw)
{
    PARK__ORDER_RELEASED(rw);
    if (PARK__LIKELY(park__rwlock_read_route(rw, true) != PARK__RW_ROUTE_OUT)) {
        /* release: pairs with the acquire of the next write lock (its CAS
         * reads this word, or a later value of it). */
        uint32_t s = __atomic_fetch_sub(&rw->state_, PARK__RW_READER, __ATOMIC_RELEASE);
        /* The uncontended release (the word now 0) returns after one
         * compare; a word with other holds or marks makes the test below. */
        if (PARK__LIKELY(s == PARK__RW_READER))
            return;
        /* One test for both rare cases below: s - 1 has DRAIN or the
         * guard bit (27) set only if the word was draining, or held no read
         * hold (the subtraction borrows through bit 27), or held more than
         * the guard's count of readers (nothing to do then). */
        if (PARK__UNLIKELY((s - PARK__RW_READER) & (PARK__RW_DRAIN | PARK__RW_READERS_GUARD))) {
            /* The last reader out of a draining lock (writers wait) hands
             * it over; DRAIN keeps the word held meanwhile, so nobody else
             * can. */
            if ((s & (PARK__RW_DRAIN | PARK__RW_READERS_MASK)) ==
                (PARK__RW_DRAIN | PARK__RW_READER))
                park__rwlock_read_unlock_last(rw);
            /* No read hold to release: misuse, reported in every build. */
            else if (!(s & PARK__RW_READERS_MASK))
                park__rwlock_read_unlock_none(rw);
        }
        return;
    }
    park__rwlock_read_unlock_slow(rw);
}

/* Private: park_rwlock_write_lock without the lock-order hooks. */
PARK__INLINE void park__rwlock_write_lock_plain(park_rwlock_t *rw)
{
    uint32_t s = 0;
    /* acquire: pairs with the release of the last unlock. */
    if (PARK__LIKELY(__atomic_compare_exchange_n(&rw->state_, &s, PARK__RW_WRITER, false,
                                                 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)))
        return;
    park__rwlock_write_lock_slow(rw);
}

/* Takes the write hold, blocking while anyone holds the lock (and behind
 * the writers queued before). Acquire ordering. Relocking a lock the
 * caller holds (for reading or writing) deadlocks. */
PARK__INLINE void park_rwlock_write_lock(park_rwlock_t *rw)
{
    PARK__ORDER_LOCK(rw, 0);
    park__rwlock_write_lock_plain(rw);
    PARK__ORDER_HELD(rw);
}

/* Private: park_rwlock_try_write_lock without the lock-order hooks. */
PARK__INLINE bool park__rwlock_try_write_lock_plain(park_rwlock_t *rw)
{
    uint32_t s = 0;
    /* acquire: pairs with the release of the last unlock. */
    if (PARK__LIKELY(__atomic_compare_exchange_n(&rw->state_, &s, PARK__RW_WRITER, false,
                                                 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)))
        return true;
    /* One read hold: perhaps a read-mostly lock's bias, revoked first. */
    return PARK__UNLIKELY(s == PARK__RW_READER) && park__rwlock_try_write_lock_slow(rw);
}

/* Takes the write hold if the lock is free and nobody is queued for it:
 * true (acquire ordering) or false. Never blocks. */
PARK__INLINE bool park_rwlock_try_write_lock(park_rwlock_t *rw)
{
    bool taken = park__rwlock_try_write_lock_plain(rw);
    if (taken)
        PARK__ORDER_HELD(rw);
    return taken;
}

/* Takes the write hold, blocking while anyone holds the lock, until the
 * absolute deadline (CLOCK_MONOTONIC ns; PARK_FOREVER never expires) has
 * passed: 0 (acquire ordering) or ETIMEDOUT (no hold taken). A free lock
 * is taken even when the deadline has passed. A writer that gives up lets
 * in the readers it was holding back (unless another writer still waits or
 * holds the lock). */
PARK_API int park_rwlock_write_lock_until(park_rwlock_t *rw, park_time_t deadline);
#ifdef PARK_CHECK_ORDER
PARK__INLINE int park__rwlock_write_lock_until_checked(park_rwlock_t *rw, park_time_t deadline)
{
    PARK__ORDER_LOCK(rw, PARK__ORDER_TIMED);
    int err = park_rwlock_write_lock_until(rw, deadline);
    if (err == 0)
        PARK__ORDER_HELD(rw);
    return err;
}
#define park_rwlock_write_lock_until park__rwlock_write_lock_until_checked
#endif

/* Releases the write hold (the caller's or any other thread's). Release
 * ordering. Does not block; hands the lock to the next queued writer, or
 * to all queued readers (see the policy). After its releasing operation it
 * no longer touches *rw. Releasing a lock that is not write-held aborts
 * with a message in every build. */
PARK__INLINE void park_rwlock_write_unlock(park_rwlock_t *rw)
{
    PARK__ORDER_RELEASED(rw);
    uint32_t s = PARK__RW_WRITER;
    /* release: pairs with the acquire of the next lock. */
    if (PARK__LIKELY(__atomic_compare_exchange_n(&rw->state_, &s, 0, false, __ATOMIC_RELEASE,
                                                 __ATOMIC_RELAXED)))
        return;
    park__rwlock_write_unlock_slow(rw);
}

/* Turns the write hold into a read hold, atomically: no writer gets the
 * lock in between, not even one already queued (it keeps its place, and
 * goes when the read holds are released). The queued readers enter with
 * the caller if no writer is queued, and stay queued otherwise. Release
 * ordering for the write hold (readers that enter see its writes). Does not
 * block. Downgrading a lock that is not write-held aborts with a message in
 * every build. */
PARK__INLINE void park_rwlock_downgrade(park_rwlock_t *rw)
{
    uint32_t s = PARK__RW_WRITER;
    /* release: pairs with the acquire of the readers that enter after. */
    if (PARK__LIKELY(
            !(__atomic_load_n(&park__rwlock_modes, __ATOMIC_RELAXED) & PARK__RW_MODE_TRACKED)) &&
        PARK__LIKELY(__atomic_compare_exchange_n(&rw->state_, &s, PARK__RW_READER, false,
                                                 __ATOMIC_RELEASE, __ATOMIC_RELAXED)))
        return;
    park__rwlock_downgrade_slow(rw);
}

/* Take a read (write) hold asynchronously: a task that completes (error
 * 0) once the hold is the task's; whoever holds the task releases it with
 * park_rwlock_read_unlock (write_unlock), from any thread. The task waits
 * in the same queue, under the same writer-preferring policy, as blocking
 * callers; a writer task is always handed the lock when the policy picks
 * it. Uncontended, the hold is taken at once and the result is a shared,
 * already completed task (no allocation, no shared write). Cancel a
 * pending task with park_task_cancel (0: it left the queue and holds
 * nothing; EALREADY: the hold was granted first) or by releasing the last
 * reference to it (a hold granted meanwhile is released). Cancelling the
 * only queued writer admits the readers queued behind it; cancelling one
 * of two does not. Continuations run on `pool`. Async holds are not
 * recorded for the PARK_DEBUG re-entry check. NULL only on ENOMEM. Never
 * blocks. Acquire ordering, as the blocking calls. */
PARK_API park_task_t *park_rwlock_read_lock_async(park_rwlock_t *rw, park_pool_t *pool);
PARK_API park_task_t *park_rwlock_write_lock_async(park_rwlock_t *rw, park_pool_t *pool);

PARK_END_DECLS

#endif /* PARK_RWLOCK_H */
