/* lib/preload/sem.c: unnamed process-private sem_* on park_sem.
 *
 * A park-managed semaphore (pp_sem_t, in the sem_t's 32 bytes) is a
 * park_sem_t (barging, at most SEM_VALUE_MAX) and PP_SEM_MAGIC at offset
 * 24, past what glibc uses; process-shared semaphores and sem_open's are
 * glibc's, and every call on them passes through.
 *
 * sem_wait, sem_timedwait and sem_clockwait are cancellation points: they
 * check for a pending cancellation on entry and, while the calling thread
 * can be cancelled, wait in slices of PP_CANCEL_SLICE_NS, checking between
 * them (park's wait retries signals internally, so a cancellation cannot
 * interrupt it). A thread with cancellation disabled waits in one piece.
 * Unlike glibc's, a wait is never interrupted by a signal handler (no
 * EINTR). */
#include "preload.h"

#include <errno.h>
#include <limits.h>

#define PP_CANCEL_SLICE_NS (20 * 1000000ull)

typedef int (*pp_sem_fn)(sem_t *);

static inline pp_sem_t *pp_of(sem_t *s)
{
    return (pp_sem_t *)s;
}

static inline bool pp_managed(sem_t *s)
{
    /* relaxed: written by sem_init before the semaphore is shared. */
    return __atomic_load_n(&pp_of(s)->magic, __ATOMIC_RELAXED) == PP_SEM_MAGIC;
}

static inline int pp_fail(int err)
{
    errno = err;
    return -1;
}

int pp_sem_init(sem_t *s, int pshared, unsigned value)
{
    if (value > SEM_VALUE_MAX)
        return pp_fail(EINVAL);
    if (pshared) {
        pp_of(s)->magic = 0;
        pp_count(PP_SEM, false);
        return PP_REAL(int (*)(sem_t *, int, unsigned), sem_init)(s, pshared, value);
    }
    pp_sem_t *p = pp_of(s);
    park_sem_init(&p->sem, value, PARK_SEM_VALUE_MAX);
    p->pad = 0;
    p->magic = PP_SEM_MAGIC;
    pp_count(PP_SEM, true);
    return 0;
}
PP_EXPORT2(pp_sem_init, sem_init, "GLIBC_2.2.5", "GLIBC_2.34")

int pp_sem_destroy(sem_t *s)
{
    if (!pp_managed(s))
        return PP_REAL(pp_sem_fn, sem_destroy)(s);
    if (park_sem_destroy(&pp_of(s)->sem) != 0)
        return pp_fail(EBUSY);
    pp_of(s)->magic = 0;
    return 0;
}
PP_EXPORT2(pp_sem_destroy, sem_destroy, "GLIBC_2.2.5", "GLIBC_2.34")

int pp_sem_post(sem_t *s)
{
    if (!pp_managed(s))
        return PP_REAL(pp_sem_fn, sem_post)(s);
    int r = park_sem_release(&pp_of(s)->sem, 1);
    return r ? pp_fail(r) : 0; /* EOVERFLOW beyond SEM_VALUE_MAX */
}
PP_EXPORT2(pp_sem_post, sem_post, "GLIBC_2.2.5", "GLIBC_2.34")

int pp_sem_getvalue(sem_t *restrict s, int *restrict value)
{
    if (!pp_managed(s))
        return PP_REAL(int (*)(sem_t *, int *), sem_getvalue)(s, value);
    *value = (int)park_sem_count(&pp_of(s)->sem);
    return 0;
}
PP_EXPORT2(pp_sem_getvalue, sem_getvalue, "GLIBC_2.2.5", "GLIBC_2.34")

int pp_sem_trywait(sem_t *s)
{
    if (!pp_managed(s))
        return PP_REAL(pp_sem_fn, sem_trywait)(s);
    return park_sem_try_acquire(&pp_of(s)->sem) ? 0 : pp_fail(EAGAIN);
}
PP_EXPORT2(pp_sem_trywait, sem_trywait, "GLIBC_2.2.5", "GLIBC_2.34")

/* Takes a permit by the deadline: 0 or ETIMEDOUT; a cancellation point
 * on entry and, while the thread can be cancelled, between slices. park's
 * wait itself runs with cancellation disabled (see PP_NO_CANCEL). */
static int pp_acquire(park_sem_t *s, park_time_t deadline)
{
    pp_testcancel();
    if (park_sem_try_acquire(s))
        return 0;
    int state = pp_cancel_state(PTHREAD_CANCEL_DISABLE), r;
    if (state == PTHREAD_CANCEL_DISABLE)
        return park_sem_acquire_until(s, deadline); /* stays disabled, as it was */
    for (;;) {
        park_time_t slice = park_deadline_in(PP_CANCEL_SLICE_NS);
        bool last = deadline <= slice;
        r = park_sem_acquire_until(s, last ? deadline : slice);
        if (r == 0 || last)
            break;
        pp_cancel_state(state);
        pp_testcancel();
        pp_cancel_state(PTHREAD_CANCEL_DISABLE);
    }
    pp_cancel_state(state);
    return r;
}

int pp_sem_wait(sem_t *s)
{
    if (!pp_managed(s))
        return PP_REAL(pp_sem_fn, sem_wait)(s);
    pp_acquire(&pp_of(s)->sem, PARK_FOREVER);
    return 0;
}
PP_EXPORT2(pp_sem_wait, sem_wait, "GLIBC_2.2.5", "GLIBC_2.34")

static int pp_sem_wait_at(sem_t *s, clockid_t clock, const struct timespec *abstime)
{
    if (!pp_valid_ts(abstime)) /* as glibc: checked before trying */
        return pp_fail(EINVAL);
    int r = pp_acquire(&pp_of(s)->sem, pp_deadline(clock, abstime));
    return r ? pp_fail(r) : 0;
}

int pp_sem_timedwait(sem_t *restrict s, const struct timespec *restrict abstime)
{
    if (!pp_managed(s))
        return PP_REAL(int (*)(sem_t *, const struct timespec *), sem_timedwait)(s, abstime);
    return pp_sem_wait_at(s, CLOCK_REALTIME, abstime);
}
PP_EXPORT2(pp_sem_timedwait, sem_timedwait, "GLIBC_2.2.5", "GLIBC_2.34")

int pp_sem_clockwait(sem_t *restrict s, clockid_t clock, const struct timespec *restrict abstime)
{
    if (!pp_managed(s))
        return PP_REAL(int (*)(sem_t *, clockid_t, const struct timespec *),
                       sem_clockwait)(s, clock, abstime);
    if (pp_check_clock(clock))
        return pp_fail(EINVAL);
    return pp_sem_wait_at(s, clock, abstime);
}
PP_EXPORT2(pp_sem_clockwait, sem_clockwait, "GLIBC_2.30", "GLIBC_2.34")
