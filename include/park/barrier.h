/* park/barrier.h: a latch and a barrier, with C++20's semantics
 * (std::latch, std::barrier).
 *
 * A latch (park_latch_t, 4 bytes) counts down once: threads and tasks wait
 * until its count reaches zero, and then every wait passes for good.
 * Counting down is not tied to threads: one thread may count down many
 * times, and any number of threads may wait.
 *
 * A barrier (park_barrier_t, 24 bytes) is reusable: a phase completes when
 * the expected number of arrivals have arrived; then its completion
 * function runs once, on the thread whose arrival completed the phase,
 * before anyone is released; then every waiter of the phase is released
 * and the next phase begins, expecting as many arrivals (less those that
 * left with park_barrier_arrive_and_drop). Waiters wait for their phase
 * to end, so a thread that races ahead into the next phase never mixes
 * with the one still being released.
 *
 * Uncontended operations are one atomic operation on the state word; the
 * latch's count_down, try_wait and wait are inlined. Waiters park in
 * park's shared wait queue under the object's address (no CPU, no
 * allocation) and are released together, with one system call for a
 * whole phase or latch.
 *
 * Destruction: once the count reaches zero (latch) or a phase ends
 * (barrier), the releasing call does not touch the object after the store
 * that releases it, so a thread that waited may destroy and free it at
 * once, as long as no other thread is still inside a call on it (as C++
 * requires of std::latch and std::barrier).
 *
 * Memory ordering (as C++20): every count_down (or arrival) happens before
 * every wait that returns because the count reached zero (or the phase
 * ended); for the barrier, every arrival of a phase happens before its
 * completion function, which happens before every return from that
 * phase's waits. */
#ifndef PARK_BARRIER_H
#define PARK_BARRIER_H

#include <park/common.h>
#include <park/time.h>

PARK_BEGIN_DECLS

/* ---- latch ------------------------------------------------------------- */

/* The largest count a latch may start with. */
#define PARK_LATCH_MAX ((uint32_t)INT32_MAX)

typedef struct park_latch {
    uint32_t state_; /* private: see lib/latch.c */
} park_latch_t;

/* Private: the state word holds the count (low 31 bits) and a "waiters
 * queued" bit; lib/latch.c documents the machine. */
#define PARK__LATCH_COUNT_MASK 0x7fffffffu
#define PARK__LATCH_HAS_WAITERS 0x80000000u

/* Private: a compile-time check for the static initialisers below: 0, as
 * a constant expression, if `ok` holds; otherwise the initialiser does
 * not compile (C: a static assertion with `msg`; C++: an incomplete
 * park__barrier_init_arguments_ok). */
#ifdef __cplusplus
PARK_END_DECLS
extern "C++" {
template <bool ok> struct park__barrier_init_arguments_ok;
template <> struct park__barrier_init_arguments_ok<true> {
};
}
PARK_BEGIN_DECLS
#define PARK__BARRIER_INIT_CHECK(ok, msg) (0 * sizeof(park__barrier_init_arguments_ok<(ok)>))
#else
#define PARK__BARRIER_INIT_CHECK(ok, msg)                                                          \
    (0 * sizeof(struct {                                                                           \
         _Static_assert(ok, msg);                                                                  \
         int ok_;                                                                                  \
     }))
#endif

/* Static initialiser: a latch with `count` to go, a constant from 0 to
 * PARK_LATCH_MAX (anything else, a value known only at run time included,
 * does not compile; park_latch_init checks run-time values). Zeroed
 * memory is a latch already released (count 0). */
#define PARK_LATCH_INIT(count)                                                                     \
    {                                                                                              \
        (uint32_t)(count) +                                                                        \
            (uint32_t)PARK__BARRIER_INIT_CHECK((uint64_t)(count) <= PARK_LATCH_MAX,                \
                                               "PARK_LATCH_INIT: needs a constant count "          \
                                               "from 0 to PARK_LATCH_MAX")                         \
    }

/* Private: out-of-line slow paths of the inline functions below. */
PARK_API int park__latch_count_down_slow(park_latch_t *l, uint32_t n);
PARK_API int park__latch_wait_slow(park_latch_t *l, park_time_t deadline);

/* Makes *l a latch with `count` to go: 0, or EINVAL (count >
 * PARK_LATCH_MAX; *l unchanged). Not atomic: nobody may use *l meanwhile.
 * Never blocks. */
PARK_API int park_latch_init(park_latch_t *l, uint32_t count);

/* Checks that nobody waits on *l: 0 or EBUSY (*l unchanged and usable).
 * NULL: 0, nothing done. Never blocks. */
PARK_API int park_latch_destroy(park_latch_t *l);

/* Counts *l down by n: 0, or EINVAL (n is more than the count left;
 * nothing counted). n == 0 is allowed and counts nothing, as
 * std::latch::count_down(0) does. The count_down that reaches zero
 * releases every waiter (one system call for all). Release ordering.
 * Never blocks; with nobody waiting, one compare-and-swap, inlined. */
PARK__INLINE int park_latch_count_down(park_latch_t *l, uint32_t n)
{
    uint32_t v = __atomic_load_n(&l->state_, __ATOMIC_RELAXED);
    while (!(v & PARK__LATCH_HAS_WAITERS) && n <= v) {
        /* c -> c-n; release: pairs with the acquire in park_latch_try_wait. */
        if (__atomic_compare_exchange_n(&l->state_, &v, v - n, true, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
            return 0;
    }
    return park__latch_count_down_slow(l, n);
}

/* True if the count of *l is zero (then acquire ordering: every
 * count_down happened before). Never blocks. */
PARK__INLINE bool park_latch_try_wait(const park_latch_t *l)
{
    /* acquire: pairs with the release of the count_down that reached 0. */
    return (__atomic_load_n(&l->state_, __ATOMIC_ACQUIRE) & PARK__LATCH_COUNT_MASK) == 0;
}

/* Waits until the count of *l is zero. Blocks, without a deadline.
 * Acquire ordering. On a released latch, one load, inlined. */
PARK__INLINE void park_latch_wait(park_latch_t *l)
{
    if (PARK__LIKELY(park_latch_try_wait(l)))
        return;
    (void)park__latch_wait_slow(l, PARK_FOREVER);
}

/* park_latch_wait, giving up at the absolute deadline (CLOCK_MONOTONIC
 * ns; PARK_FOREVER never expires): 0 (released, acquire ordering) or
 * ETIMEDOUT. A released latch passes even when the deadline has passed.
 * May block until the deadline. */
PARK_API int park_latch_wait_until(park_latch_t *l, park_time_t deadline);

/* park_latch_count_down(l, n), then park_latch_wait(l): 0, or EINVAL (n
 * is more than the count left: nothing counted, no wait). Blocks unless
 * this count_down reached zero. Release, then acquire ordering. */
PARK_API int park_latch_arrive_and_wait(park_latch_t *l, uint32_t n);

/* The count of *l now. A snapshot for monitoring; relaxed ordering. */
PARK_API uint32_t park_latch_count(const park_latch_t *l);

/* Waits for *l asynchronously: a task that completes with error 0 (result
 * NULL) once the count is zero. On a released latch, a shared, already
 * completed task (no allocation); otherwise the task waits in the same
 * queue as blocking waiters and its continuations run on `pool`, never on
 * the thread that counted down. Cancel it with park_task_cancel (0: it
 * left the queue; EALREADY: the latch was released first) or by releasing
 * the last reference. NULL only on ENOMEM. Never blocks. Memory ordering
 * as park_latch_wait. */
PARK_API park_task_t *park_latch_wait_async(park_latch_t *l, park_pool_t *pool);

/* As park_latch_wait_async, giving up at the absolute deadline: the task
 * completes with ETIMEDOUT if the count has not reached zero by then. A
 * released latch passes even when the deadline has passed; otherwise a
 * passed deadline gives a task completed with ETIMEDOUT. Without a pool,
 * a deadline other than PARK_FOREVER gives a task completed with EINVAL;
 * a pool that is shutting down cannot time the wait: its task completes
 * with ETIMEDOUT at once. */
PARK_API park_task_t *park_latch_wait_async_until(park_latch_t *l, park_pool_t *pool,
                                                  park_time_t deadline);

/* ---- barrier ----------------------------------------------------------- */

/* The most arrivals a barrier may expect per phase. */
#define PARK_BARRIER_MAX 0xffffffu

/* What park_barrier_arrive_and_wait (and _and_drop) returns to exactly one
 * arrival per phase, the one that completed it (and ran the completion
 * function); the others get 0. Negative, as glibc's
 * PTHREAD_BARRIER_SERIAL_THREAD, so that it is never an errno value. */
#define PARK_BARRIER_SERIAL (-1)

/* A phase's completion function: runs once per phase, on the thread whose
 * arrival completed the phase, before any waiter is released. It must not
 * arrive at its own barrier. */
typedef void (*park_barrier_fn)(void *arg);

typedef struct park_barrier {
    uint64_t state_;             /* private: see lib/barrier.c */
    park_barrier_fn completion_; /* private */
    void *arg_;                  /* private */
} park_barrier_t;

/* Private: the state word holds the arrivals still expected in this
 * phase (bits 0-23), the arrivals expected per phase from the next one on
 * (bits 24-47), a "waiters queued" bit (48) and the phase number (bits
 * 49-63, wrapping); lib/barrier.c documents the machine. */
#define PARK__BARRIER_LEFT_MASK 0xffffffull
#define PARK__BARRIER_EXPECTED_SHIFT 24
#define PARK__BARRIER_EXPECTED_MASK (0xffffffull << PARK__BARRIER_EXPECTED_SHIFT)
#define PARK__BARRIER_WAITERS (1ull << 48)
#define PARK__BARRIER_PHASE_SHIFT 49

/* Static initialiser: a barrier of `count` arrivals per phase, a constant
 * from 1 to PARK_BARRIER_MAX (anything else, a value known only at run
 * time included, does not compile), whose phases end with
 * completion(arg) (completion may be NULL: none). */
#define PARK_BARRIER_INIT(count, completion, arg)                                                  \
    {                                                                                              \
        (uint64_t)(count) * (1ull + (1ull << PARK__BARRIER_EXPECTED_SHIFT)) +                      \
            PARK__BARRIER_INIT_CHECK((uint64_t)(count)-1u < PARK_BARRIER_MAX,                      \
                                     "PARK_BARRIER_INIT: needs a constant count "                  \
                                     "from 1 to PARK_BARRIER_MAX"),                                \
            (completion), (arg)                                                                    \
    }

/* Makes *b a barrier of `count` arrivals per phase whose phases end with
 * completion(arg) (completion may be NULL): 0, or EINVAL (count == 0 or
 * count > PARK_BARRIER_MAX; *b unchanged). Not atomic: nobody may use *b
 * meanwhile. Never blocks. */
PARK_API int park_barrier_init(park_barrier_t *b, uint32_t count, park_barrier_fn completion,
                               void *arg);

/* Checks that nobody waits on *b: 0 or EBUSY (*b unchanged and usable). A
 * thread that has arrived but is not queued yet is not seen: destroy a
 * barrier once every participant has returned. NULL: 0, nothing done.
 * Never blocks. */
PARK_API int park_barrier_destroy(park_barrier_t *b);

/* Arrives at the current phase of *b and waits until it ends: 0, or
 * PARK_BARRIER_SERIAL for the arrival that completed the phase, which
 * runs the completion function and releases the others without waiting.
 * Blocks (no deadline: an arrival cannot be taken back). Release, then
 * acquire ordering (see the top). More arrivals in a phase than it
 * expects abort with a message when one finds the phase already complete
 * (its completion still running); otherwise they complete the phase
 * early, undetected. */
PARK_API int park_barrier_arrive_and_wait(park_barrier_t *b);

/* Arrives at the current phase of *b without waiting, and leaves: every
 * later phase expects one arrival fewer. 0, or PARK_BARRIER_SERIAL if
 * this arrival completed the phase (it then ran the completion function
 * and released the phase's waiters). Never blocks but for the completion
 * function. Release ordering (acquire too when it completes the phase). */
PARK_API int park_barrier_arrive_and_drop(park_barrier_t *b);

/* Arrives at the current phase of *b at once and waits for the phase to
 * end asynchronously: a task that completes with error 0 when the phase
 * ends, whose result is (void *)(intptr_t)PARK_BARRIER_SERIAL for the
 * arrival that completed the phase (it ran the completion function within
 * this call, and the task is complete on return) and NULL for the others.
 * Its continuations run on `pool`, never on the thread that completed the
 * phase. Cancelling the task (park_task_cancel, or releasing the last
 * reference while it is pending) stops the wait, not the arrival, which
 * stays counted. The arrival that completes the phase allocates nothing
 * (its task is a shared, completed one); any other allocates one task
 * before arriving: NULL only on ENOMEM, and then it has not arrived. Never
 * blocks but for the completion function. Memory ordering as
 * park_barrier_arrive_and_wait. */
PARK_API park_task_t *park_barrier_arrive_and_wait_async(park_barrier_t *b, park_pool_t *pool);

PARK_END_DECLS

#endif /* PARK_BARRIER_H */
