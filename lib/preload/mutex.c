/* lib/preload/mutex.c: pthread_mutex_* on park_mutex.
 *
 * A park-managed mutex (pp_mutex_t, in the pthread_mutex_t's 40 bytes):
 *
 *   lock   park_mutex_t: the lock itself, for every type
 *   owner  ERRORCHECK, RECURSIVE: pthread_self() of the holder, 0 if free
 *          (written only by the holder, read by any thread to compare
 *          with itself: only the holder can read its own identity there)
 *   count  RECURSIVE: the holder's holds
 *   kind   the type (0-3, as glibc's static initialisers write it) and
 *          PP_MUTEX_COUNTED once the mutex was counted for the report
 *   next   a condition variable's broadcast waiter that the next release
 *          wakes (cond.c), with its fork generation; set and taken off by
 *          the holder, inside glibc's unused __list
 *
 * Zero-filled memory is an unlocked NORMAL mutex, and glibc's
 * PTHREAD_{RECURSIVE,ERRORCHECK,ADAPTIVE}_MUTEX_INITIALIZER_NP write the
 * type where park reads it, so static initialisation needs no call.
 * Robust, priority-inheritance, priority-protect and process-shared
 * mutexes are initialised by glibc and stay glibc's (the marker, in
 * preload.h). ERRORCHECK and RECURSIVE keep POSIX's errors; NORMAL and
 * ADAPTIVE_NP are park_mutex as is (relocking deadlocks; unlocking an
 * unlocked mutex is undefined, and PARK_DEBUG builds abort). */
#include "preload.h"

#include <errno.h>
#include <string.h>

typedef int (*pp_mutex_fn)(pthread_mutex_t *);
typedef int (*pp_mutex_time_fn)(pthread_mutex_t *, const struct timespec *);
typedef int (*pp_mutex_clock_fn)(pthread_mutex_t *, clockid_t, const struct timespec *);

static inline pp_mutex_t *pp_of(const pthread_mutex_t *m)
{
    return (pp_mutex_t *)m;
}

/* relaxed: the kind is written by init (before the mutex is shared) and,
 * for the counted flag, by a CAS whose only effect is that flag. */
static inline int32_t pp_kind(const pthread_mutex_t *m)
{
    return __atomic_load_n(&pp_of(m)->kind, __ATOMIC_RELAXED);
}

static inline bool pp_passed(int32_t kind)
{
    return (kind & PP_MUTEX_PASS_BITS) != 0;
}

bool pp_mutex_managed(const pthread_mutex_t *m)
{
    return !pp_passed(pp_kind(m));
}

/* Counts a statically initialised mutex the first time it is locked. */
static void pp_mutex_count(pthread_mutex_t *m, int32_t kind)
{
    if (__atomic_compare_exchange_n(&pp_of(m)->kind, &kind, kind | PP_MUTEX_COUNTED, false,
                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        pp_count(PP_MUTEX, true);
}

static inline uintptr_t pp_owner(const pp_mutex_t *p)
{
    return __atomic_load_n(&p->owner, __ATOMIC_RELAXED);
}

static inline void pp_set_owner(pp_mutex_t *p, uintptr_t who)
{
    __atomic_store_n(&p->owner, who, __ATOMIC_RELAXED);
}

static inline int mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
    int type = PTHREAD_MUTEX_NORMAL, protocol = PTHREAD_PRIO_NONE;
    int robust = PTHREAD_MUTEX_STALLED, pshared = PTHREAD_PROCESS_PRIVATE;
    if (attr) {
        pthread_mutexattr_gettype(attr, &type);
        pthread_mutexattr_getprotocol(attr, &protocol);
        pthread_mutexattr_getrobust(attr, &robust);
        pthread_mutexattr_getpshared(attr, &pshared);
    }
    if (protocol != PTHREAD_PRIO_NONE || robust != PTHREAD_MUTEX_STALLED ||
        pshared != PTHREAD_PROCESS_PRIVATE) {
        pp_count(PP_MUTEX, false);
        return PP_REAL(int (*)(pthread_mutex_t *, const pthread_mutexattr_t *),
                       pthread_mutex_init)(m, attr);
    }
    memset(m, 0, sizeof *m);
    pp_of(m)->kind = (type & PP_MUTEX_TYPE_MASK) | PP_MUTEX_COUNTED;
    pp_count(PP_MUTEX, true);
    return 0;
}
int pp_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
    if (PARK__UNLIKELY(PARK__ORDER_ON()))
        park__order_forget(m); /* a new lock, if the memory held another */
    return mutex_init(m, attr);
}
PP_EXPORT1(pp_mutex_init, pthread_mutex_init, "GLIBC_2.2.5")

static inline int mutex_destroy(pthread_mutex_t *m)
{
    int32_t kind = pp_kind(m);
    if (pp_passed(kind))
        return PP_REAL(pp_mutex_fn, pthread_mutex_destroy)(m);
    if (park_mutex_destroy(&pp_of(m)->lock) != 0)
        return EBUSY;
    /* As glibc: a destroyed mutex is invalid until initialised again
     * (glibc's calls return EINVAL on it). */
    __atomic_store_n(&pp_of(m)->kind, PP_MUTEX_DESTROYED, __ATOMIC_RELAXED);
    return 0;
}
int pp_mutex_destroy(pthread_mutex_t *m)
{
    int r = mutex_destroy(m);
    if (PARK__UNLIKELY(PARK__ORDER_ON()) && r == 0)
        park__order_forget(m);
    return r;
}
PP_EXPORT1(pp_mutex_destroy, pthread_mutex_destroy, "GLIBC_2.2.5")

/* The owner-tracking types after the lock was taken. */
static inline void pp_mutex_took(pp_mutex_t *p, int type)
{
    if (type == PTHREAD_MUTEX_RECURSIVE || type == PTHREAD_MUTEX_ERRORCHECK) {
        pp_set_owner(p, pp_self());
        p->count = 1;
    }
}

/* Before taking the lock: EDEADLK (ERRORCHECK), 0 for one more hold
 * (RECURSIVE), EAGAIN (its count would overflow), or -1 for
 * "take the lock". */
static inline int pp_mutex_reenter(pp_mutex_t *p, int type)
{
    if (type == PTHREAD_MUTEX_RECURSIVE || type == PTHREAD_MUTEX_ERRORCHECK) {
        if (pp_owner(p) == pp_self()) {
            if (type == PTHREAD_MUTEX_ERRORCHECK)
                return EDEADLK;
            if (p->count == UINT32_MAX)
                return EAGAIN;
            p->count++;
            return 0;
        }
    }
    return -1;
}

static int pp_mutex_lock_slow(pthread_mutex_t *m, int32_t kind)
{
    if (pp_passed(kind))
        return PP_REAL(pp_mutex_fn, pthread_mutex_lock)(m);
    if (!(kind & PP_MUTEX_COUNTED))
        pp_mutex_count(m, kind);
    pp_mutex_t *p = pp_of(m);
    int type = kind & PP_MUTEX_TYPE_MASK;
    int r = pp_mutex_reenter(p, type);
    if (r >= 0)
        return r;
    pp_lock(&p->lock);
    pp_mutex_took(p, type);
    return 0;
}

static inline int mutex_lock(pthread_mutex_t *m)
{
    int32_t kind = pp_kind(m);
    if (PARK__LIKELY(kind == PP_MUTEX_COUNTED ||
                     kind == (PP_MUTEX_COUNTED | PTHREAD_MUTEX_ADAPTIVE_NP))) {
        pp_lock(&pp_of(m)->lock);
        return 0;
    }
    return pp_mutex_lock_slow(m, kind);
}
/* Lock-order checking (park/order.h), out of the way of the calls. */
__attribute__((noinline)) static int mutex_lock_checked(pthread_mutex_t *m, const void *site)
{
    park__order_lock(m, 0, site);
    int r = mutex_lock(m);
    if (r == 0)
        park__order_held(m, site);
    return r;
}

int pp_mutex_lock(pthread_mutex_t *m)
{
    if (PARK__UNLIKELY(PARK__ORDER_ON()))
        return mutex_lock_checked(m, __builtin_return_address(0));
    return mutex_lock(m);
}
PP_EXPORT1(pp_mutex_lock, pthread_mutex_lock, "GLIBC_2.2.5")

static inline int mutex_trylock(pthread_mutex_t *m)
{
    int32_t kind = pp_kind(m);
    if (pp_passed(kind))
        return PP_REAL(pp_mutex_fn, pthread_mutex_trylock)(m);
    if (!(kind & PP_MUTEX_COUNTED))
        pp_mutex_count(m, kind);
    pp_mutex_t *p = pp_of(m);
    int type = kind & PP_MUTEX_TYPE_MASK;
    /* glibc: an ERRORCHECK mutex the caller holds is busy, not EDEADLK. */
    if (type == PTHREAD_MUTEX_RECURSIVE) {
        int r = pp_mutex_reenter(p, type);
        if (r >= 0)
            return r;
    }
    if (!park_mutex_try_lock(&p->lock))
        return EBUSY;
    pp_mutex_took(p, type);
    return 0;
}
int pp_mutex_trylock(pthread_mutex_t *m)
{
    int r = mutex_trylock(m);
    if (PARK__UNLIKELY(PARK__ORDER_ON()) && r == 0)
        park__order_held(m, __builtin_return_address(0));
    return r;
}
PP_EXPORT2(pp_mutex_trylock, pthread_mutex_trylock, "GLIBC_2.2.5", "GLIBC_2.34")

static int pp_mutex_lock_at(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime)
{
    int32_t kind = pp_kind(m);
    if (!(kind & PP_MUTEX_COUNTED))
        pp_mutex_count(m, kind);
    pp_mutex_t *p = pp_of(m);
    int type = kind & PP_MUTEX_TYPE_MASK;
    int r = pp_mutex_reenter(p, type);
    if (r >= 0)
        return r;
    if (!park_mutex_try_lock(&p->lock)) {
        /* As glibc: the time is checked only when the call has to wait. */
        if (!pp_valid_ts(abstime))
            return EINVAL;
        int r;
        PP_NO_CANCEL(r = park_mutex_lock_until(&p->lock, pp_deadline(clock, abstime)));
        if (r != 0)
            return ETIMEDOUT;
    }
    pp_mutex_took(p, type);
    return 0;
}

static inline int mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
    if (pp_passed(pp_kind(m)))
        return PP_REAL(pp_mutex_time_fn, pthread_mutex_timedlock)(m, abstime);
    return pp_mutex_lock_at(m, CLOCK_REALTIME, abstime);
}
int pp_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
    if (PARK__UNLIKELY(PARK__ORDER_ON()))
        park__order_lock(m, PARK__ORDER_TIMED, __builtin_return_address(0));
    int r = mutex_timedlock(m, abstime);
    if (PARK__UNLIKELY(PARK__ORDER_ON()) && r == 0)
        park__order_held(m, __builtin_return_address(0));
    return r;
}
PP_EXPORT2(pp_mutex_timedlock, pthread_mutex_timedlock, "GLIBC_2.2.5", "GLIBC_2.34")

static inline int mutex_clocklock(pthread_mutex_t *m, clockid_t clock,
                                  const struct timespec *abstime)
{
    if (pp_passed(pp_kind(m)))
        return PP_REAL(pp_mutex_clock_fn, pthread_mutex_clocklock)(m, clock, abstime);
    if (pp_check_clock(clock))
        return EINVAL;
    return pp_mutex_lock_at(m, clock, abstime);
}
int pp_mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime)
{
    if (PARK__UNLIKELY(PARK__ORDER_ON()))
        park__order_lock(m, PARK__ORDER_TIMED, __builtin_return_address(0));
    int r = mutex_clocklock(m, clock, abstime);
    if (PARK__UNLIKELY(PARK__ORDER_ON()) && r == 0)
        park__order_held(m, __builtin_return_address(0));
    return r;
}
PP_EXPORT2(pp_mutex_clocklock, pthread_mutex_clocklock, "GLIBC_2.30", "GLIBC_2.34")

/* The owner-tracking types' checks before a release: EPERM, 0 for "one
 * hold fewer, still held", or -1 for "release the lock". */
static inline int pp_mutex_leave(pp_mutex_t *p, int type)
{
    if (type == PTHREAD_MUTEX_RECURSIVE || type == PTHREAD_MUTEX_ERRORCHECK) {
        if (pp_owner(p) != pp_self())
            return EPERM;
        if (type == PTHREAD_MUTEX_RECURSIVE && --p->count != 0) {
            return 0;
        }
        pp_set_owner(p, 0);
    }
    return -1;
}

static inline int mutex_unlock(pthread_mutex_t *m)
{
    int32_t kind = pp_kind(m);
    if (PARK__LIKELY(kind == PP_MUTEX_COUNTED ||
                     kind == (PP_MUTEX_COUNTED | PTHREAD_MUTEX_ADAPTIVE_NP))) {
        pp_mutex_release(m);
        return 0;
    }
    if (pp_passed(kind))
        return PP_REAL(pp_mutex_fn, pthread_mutex_unlock)(m);
    pp_mutex_t *p = pp_of(m);
    int r = pp_mutex_leave(p, kind & PP_MUTEX_TYPE_MASK);
    if (r >= 0)
        return r;
    pp_mutex_release(m);
    return 0;
}
int pp_mutex_unlock(pthread_mutex_t *m)
{
    if (PARK__UNLIKELY(PARK__ORDER_ON()))
        park__order_released(m);
    return mutex_unlock(m);
}
PP_EXPORT1(pp_mutex_unlock, pthread_mutex_unlock, "GLIBC_2.2.5")

int pp_mutex_cond_check(const pthread_mutex_t *m)
{
    int type = pp_kind(m) & PP_MUTEX_TYPE_MASK;
    if (type == PTHREAD_MUTEX_RECURSIVE || type == PTHREAD_MUTEX_ERRORCHECK)
        return pp_owner(pp_of(m)) == pp_self() ? 0 : EPERM;
    return 0;
}

uint32_t pp_mutex_cond_release(pthread_mutex_t *m)
{
    pp_mutex_t *p = pp_of(m);
    int type = pp_kind(m) & PP_MUTEX_TYPE_MASK;
    uint32_t saved = 0;
    if (type == PTHREAD_MUTEX_RECURSIVE || type == PTHREAD_MUTEX_ERRORCHECK) {
        saved = p->count; /* a wait releases every hold and takes them back */
        pp_set_owner(p, 0);
    }
    pp_mutex_release(m);
    return saved;
}

void pp_mutex_cond_relock(pthread_mutex_t *m, uint32_t saved, void *next, uint32_t gen)
{
    pp_mutex_t *p = pp_of(m);
    pp_lock(&p->lock);
    if (saved) {
        pp_set_owner(p, pp_self());
        p->count = saved;
    }
    if (next) {
        /* Every release takes it off, so the mutex has none pending. */
        p->next = next;
        p->next_gen = gen;
    }
}
