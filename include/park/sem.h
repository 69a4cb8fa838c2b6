/* park/sem.h: a counting semaphore, barging with bounded unfairness by
 * default, strictly FIFO as an option.
 *
 * 16 bytes. Default (PARK_SEM_INIT, park_sem_init): queued waiters are
 * woken in arrival order, one at a time, and a running thread may take a
 * free permit ahead of a woken waiter (no context switch per acquisition
 * when waiters outnumber CPUs); but once the oldest waiter has waited about
 * 1 ms, released permits go to the queue head directly, so nobody starves.
 * Strict FIFO (PARK_SEM_INIT_FIFO, park_sem_init_fifo): while anyone is
 * queued, a release hands its permits to the queue head(s) in arrival
 * order and a new acquirer queues behind them; a release wakes exactly as
 * many waiters as it has permits for. (Strict FIFO hand-off convoys when
 * waiters outnumber CPUs: every acquisition then waits for a context
 * switch.) Asynchronous acquisitions queue in arrival order and are handed
 * their permits in both modes. In both, a timed-out waiter never swallows a
 * permit: either it was handed one (and the wait succeeds) or the permit
 * goes to the next waiter or back to the count.
 *
 * Uncontended acquire and release are one compare-and-swap each, inlined.
 * Waiters park in park's shared wait queue (no CPU, no allocation).
 * Release is destruction-safe: after the store that hands its permits over
 * it no longer touches the semaphore's memory.
 *
 * Several permits at once (park_sem_acquire_n and its forms) are taken all
 * together or not at all. FIFO: a request at the queue head holds back
 * every request behind it, smaller ones too, until it has all it asked
 * for. Default: smaller requests may pass a waiting larger one while it is
 * young, but once it has waited about 1 ms the permits released are
 * reserved for it (gathered for it, never visible in the count) until it
 * has them all; nobody behind it passes it meanwhile, so neither the large
 * request nor the small ones starve. A task is owed from the start, as it
 * is for one permit. A waiter that times out or is cancelled gives back
 * what it had gathered, waking those behind it.
 *
 * Memory ordering: a release (park_sem_release) synchronises with the
 * acquisition that obtains one of its permits (acquire ordering). */
#ifndef PARK_SEM_H
#define PARK_SEM_H

#include <park/common.h>
#include <park/time.h>

PARK_BEGIN_DECLS

/* The largest count and maximum a semaphore may have. */
#define PARK_SEM_VALUE_MAX ((uint32_t)INT32_MAX)

typedef struct park_sem {
    uint64_t state_; /* private: see lib/sem.c */
    uint32_t max_;   /* private: the maximum, and the FIFO flag */
    uint32_t pad_;   /* private */
} park_sem_t;

/* Private: the state word holds the free permits (low 32 bits), a "queue
 * not empty" bit, a "woken waiter on its way" bit and a "locked release
 * in progress" bit; max_ holds the maximum and the FIFO flag. lib/sem.c
 * documents the machine. */
#define PARK__SEM_COUNT_MASK 0xffffffffull
#define PARK__SEM_WAITERS (1ull << 32)
#define PARK__SEM_WOKEN (1ull << 33)
#define PARK__SEM_RELEASING (1ull << 34)
#define PARK__SEM_FIFO 0x80000000u
#define PARK__SEM_MAX_MASK 0x7fffffffu

/* Private: 0, as a constant expression, if the arguments of a static
 * initialiser are constants with 0 < max <= PARK_SEM_VALUE_MAX and
 * initial <= max; otherwise the initialiser does not compile (C: a static
 * assertion saying so; C++: an incomplete park__sem_init_arguments_ok). */
#define PARK__SEM_INIT_OK(initial, max)                                                            \
    ((uint64_t)(max) != 0 && (uint64_t)(max) <= PARK_SEM_VALUE_MAX &&                              \
     (uint64_t)(initial) <= (uint64_t)(max))
#ifdef __cplusplus
PARK_END_DECLS
extern "C++" {
template <bool ok> struct park__sem_init_arguments_ok;
template <> struct park__sem_init_arguments_ok<true> {
};
}
PARK_BEGIN_DECLS
#define PARK__SEM_INIT_CHECK(initial, max)                                                         \
    (0 * sizeof(park__sem_init_arguments_ok<PARK__SEM_INIT_OK(initial, max)>))
#else
#define PARK__SEM_INIT_CHECK(initial, max)                                                         \
    (0 * sizeof(struct {                                                                           \
         _Static_assert(PARK__SEM_INIT_OK(initial, max),                                           \
                        "PARK_SEM_INIT: needs constants with initial <= max, "                     \
                        "0 < max <= PARK_SEM_VALUE_MAX");                                          \
         int ok_;                                                                                  \
     }))
#endif

/* Static initialisers: `initial` free permits, at most `max`: constants
 * with 0 < max <= PARK_SEM_VALUE_MAX and initial <= max, checked at
 * compile time (anything else, a value known only at run time included,
 * does not compile; park_sem_init checks run-time values). PARK_SEM_INIT
 * barges with bounded unfairness; PARK_SEM_INIT_FIFO is strictly FIFO. */
#define PARK_SEM_INIT(initial, max)                                                                \
    {                                                                                              \
        (uint64_t)(initial) + PARK__SEM_INIT_CHECK(initial, max), (uint32_t)(max), 0               \
    }
#define PARK_SEM_INIT_FIFO(initial, max)                                                           \
    {                                                                                              \
        (uint64_t)(initial) + PARK__SEM_INIT_CHECK(initial, max),                                  \
            (uint32_t)(max) | PARK__SEM_FIFO, 0                                                    \
    }

/* Private: out-of-line slow paths of the inline functions below. */
PARK_API int park__sem_acquire_slow(park_sem_t *s, park_time_t deadline);
PARK_API int park__sem_release_slow(park_sem_t *s, uint32_t n);

/* Makes *s a semaphore with `initial` free permits and at most `max`,
 * barging with bounded unfairness (see the top): 0, or EINVAL (max == 0,
 * initial > max or max > PARK_SEM_VALUE_MAX; *s unchanged). Not atomic:
 * nobody may use *s meanwhile. */
PARK_API int park_sem_init(park_sem_t *s, uint32_t initial, uint32_t max);

/* As park_sem_init, strictly FIFO. */
PARK_API int park_sem_init_fifo(park_sem_t *s, uint32_t initial, uint32_t max);

/* Checks that nobody waits on *s: 0 or EBUSY (*s unchanged and usable).
 * NULL: 0, nothing done. Never blocks. */
PARK_API int park_sem_destroy(park_sem_t *s);

/* Takes a permit if one is free: true (acquire ordering) or false. A
 * FIFO semaphore has none free while anyone is queued, so there this never
 * overtakes a waiter; by default it may (barging), except while a permit
 * is owed to a waiter that has waited about 1 ms. Never blocks. */
PARK__INLINE bool park_sem_try_acquire(park_sem_t *s)
{
    uint64_t v = __atomic_load_n(&s->state_, __ATOMIC_RELAXED);
    while (v & PARK__SEM_COUNT_MASK) {
        /* acquire: pairs with the release in park_sem_release. */
        if (__atomic_compare_exchange_n(&s->state_, &v, v - 1, true, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return true;
    }
    return false;
}

/* Takes a permit, blocking until one is free (default) or handed over.
 * Acquire ordering. */
PARK__INLINE void park_sem_acquire(park_sem_t *s)
{
    if (PARK__LIKELY(park_sem_try_acquire(s)))
        return;
    (void)park__sem_acquire_slow(s, PARK_FOREVER);
}

/* Takes a permit, blocking until one is handed over or the absolute
 * deadline (CLOCK_MONOTONIC ns; PARK_FOREVER never expires) has passed:
 * 0 (acquired, acquire ordering) or ETIMEDOUT (no permit taken). A permit
 * free right now is taken even when the deadline has passed. */
PARK_API int park_sem_acquire_until(park_sem_t *s, park_time_t deadline);

/* Releases n permits: 0, EINVAL (n == 0), or EOVERFLOW (count + n > max;
 * nothing released, so a caller may retry the whole release). FIFO: handed to
 * queued waiters first, waking up to n of them. Default: added to the
 * count, waking the oldest waiter unless a woken one is already on its
 * way, or handed to waiters that have waited about 1 ms. Release ordering.
 * Does not block. */
PARK__INLINE int park_sem_release(park_sem_t *s, uint32_t n)
{
    uint64_t v = __atomic_load_n(&s->state_, __ATOMIC_RELAXED);
    uint64_t max = s->max_ & PARK__SEM_MAX_MASK;
    while (!(v & PARK__SEM_WAITERS) && n != 0 && n <= max - (v & PARK__SEM_COUNT_MASK)) {
        /* release: pairs with the acquire in park_sem_try_acquire. */
        if (__atomic_compare_exchange_n(&s->state_, &v, v + n, true, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
            return 0;
    }
    return park__sem_release_slow(s, n);
}

/* The number of free permits right now (FIFO: 0 while anyone is queued;
 * permits gathered by a waiter for several are not free). A snapshot for
 * monitoring; relaxed ordering. */
PARK_API uint32_t park_sem_count(const park_sem_t *s);

/* Acquires a permit asynchronously: a task that completes with error 0 on
 * `pool`'s terms once a permit is its own (it then owns the permit, and
 * whoever holds the task releases it with park_sem_release). The task
 * waits in the same queue as blocking acquirers, in arrival order, and is
 * handed its permit (it never barges). Uncontended, the
 * permit is taken at once and the result is a shared, already completed
 * task (no allocation, no shared write; retain/release are free). Cancel
 * a pending acquisition with park_task_cancel (0: it left the queue and
 * took nothing; EALREADY: the grant came first and the permit is the
 * task's), or by releasing the last reference to it (a permit granted
 * meanwhile goes back to the semaphore). Continuations run on `pool`,
 * never on the releasing thread. NULL only on ENOMEM. Never blocks.
 * Memory ordering as park_sem_acquire. */
PARK_API park_task_t *park_sem_acquire_async(park_sem_t *s, park_pool_t *pool);

/* As park_sem_acquire_async, giving up at the absolute deadline: the task
 * completes with ETIMEDOUT (and took nothing) if no permit was granted by
 * then. A free permit is taken even when the deadline has passed; a
 * passed deadline otherwise gives a task completed with ETIMEDOUT. The
 * deadline is kept by the pool's timer: without a pool, a deadline other
 * than PARK_FOREVER gives a task completed with EINVAL (nothing taken),
 * and a pool that is shutting down cannot time the wait: its task
 * completes with ETIMEDOUT at once. */
PARK_API park_task_t *park_sem_acquire_async_until(park_sem_t *s, park_pool_t *pool,
                                                   park_time_t deadline);

/* ---- several permits at once ----------------------------------------------- */

/* Takes n permits together, blocking until all n are its own: 0 (acquire
 * ordering), or EINVAL at once, without blocking, if n == 0 or n exceeds
 * the semaphore's maximum (nothing taken). Where it queues and who may
 * pass it: see the top. n == 1 is park_sem_acquire. */
PARK_API int park_sem_acquire_n(park_sem_t *s, uint32_t n);

/* Takes n permits if n are free right now: true (acquire ordering), or
 * false (nothing taken; also for n == 0 and n beyond the maximum). Never
 * takes some of them. Barges as park_sem_try_acquire does (FIFO: never
 * while anyone is queued). Never blocks. */
PARK_API bool park_sem_try_acquire_n(park_sem_t *s, uint32_t n);

/* As park_sem_acquire_n, giving up at the absolute deadline: 0, ETIMEDOUT
 * (nothing taken: permits gathered meanwhile went back, waking those
 * behind), or EINVAL (n == 0 or n beyond the maximum; at once). n permits
 * free right now are taken even when the deadline has passed. */
PARK_API int park_sem_acquire_n_until(park_sem_t *s, uint32_t n, park_time_t deadline);

/* As park_sem_acquire_async, for n permits together: the task completes
 * with error 0 once all n are its own (whoever holds it then releases
 * them), never with some of them. n == 0 or n beyond the maximum gives a
 * task already completed with EINVAL (nothing taken). Cancelling the task
 * or dropping it while it waits gives back the permits gathered for it
 * (waking those behind); dropping it unseen after the grant gives back
 * all n. NULL only on ENOMEM. Never blocks. */
PARK_API park_task_t *park_sem_acquire_n_async(park_sem_t *s, uint32_t n, park_pool_t *pool);

/* As park_sem_acquire_n_async, giving up at the absolute deadline as
 * park_sem_acquire_async_until does (ETIMEDOUT, and EINVAL without a pool
 * for a deadline other than PARK_FOREVER). */
PARK_API park_task_t *park_sem_acquire_n_async_until(park_sem_t *s, uint32_t n, park_pool_t *pool,
                                                     park_time_t deadline);

PARK_END_DECLS

#endif /* PARK_SEM_H */
