/* lib/preload/rwlock.c: pthread_rwlock_* on park_rwlock.
 *
 * A park-managed rwlock (pp_rwlock_t, in the pthread_rwlock_t's 56 bytes):
 * the park_rwlock_t, the write holder (pthread_self(), for EDEADLK and to
 * tell a write unlock from a read unlock) and glibc's kind word where
 * glibc's static initialisers put it. Process-shared rwlocks are glibc's
 * (the marker, in preload.h).
 *
 * park's rwlock prefers writers: a waiting writer holds new readers back,
 * so a thread that takes a read hold again while a writer waits would
 * deadlock. POSIX promises the default kind (PTHREAD_RWLOCK_PREFER_READER_NP
 * and PREFER_WRITER_NP, which glibc treats alike) that it may, so for those
 * kinds each thread counts its own read holds per lock, in a small
 * thread-local table: a thread that already holds a read hold adds one to
 * its count instead of asking park, and gives the park hold back when its
 * count returns to zero. A thread with read holds on more than
 * PP_READ_SLOTS locks at once takes the further ones from park directly
 * (re-entering those could wait behind a writer). PREFER_WRITER_NONRECURSIVE_NP
 * is park's rwlock as is. */
#include "preload.h"

#include <errno.h>
#include <string.h>

#define PP_READ_SLOTS 16

struct pp_read_hold {
    pthread_rwlock_t *rw;
    uint32_t holds;
};

/* initial-exec: the preload is loaded at start-up, so its TLS is static. */
static __thread
    __attribute__((tls_model("initial-exec"))) struct pp_read_hold pp_reads[PP_READ_SLOTS];

typedef int (*pp_rw_fn)(pthread_rwlock_t *);
typedef int (*pp_rw_time_fn)(pthread_rwlock_t *, const struct timespec *);
typedef int (*pp_rw_clock_fn)(pthread_rwlock_t *, clockid_t, const struct timespec *);

static inline pp_rwlock_t *pp_of(pthread_rwlock_t *rw)
{
    return (pp_rwlock_t *)rw;
}

/* relaxed: written by init before the lock is shared. */
static inline bool pp_passed(pthread_rwlock_t *rw)
{
    return __atomic_load_n(&pp_of(rw)->shared, __ATOMIC_RELAXED) != 0;
}

static inline bool pp_recursive(const pp_rwlock_t *p)
{
    return p->kind != PP_RWLOCK_PREFER_WRITER_NONRECURSIVE;
}

/* Counts a statically initialised rwlock the first time it is used. */
static inline void pp_rw_counted(pp_rwlock_t *p)
{
    uint32_t zero = 0;
    if (PARK__UNLIKELY(!__atomic_load_n(&p->counted, __ATOMIC_RELAXED)) &&
        __atomic_compare_exchange_n(&p->counted, &zero, 1, false, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED))
        pp_count(PP_RWLOCK, true);
}

static inline uintptr_t pp_writer(const pp_rwlock_t *p)
{
    /* relaxed: only the write holder finds itself here. */
    return __atomic_load_n(&p->writer, __ATOMIC_RELAXED);
}

static struct pp_read_hold *pp_find(pthread_rwlock_t *rw)
{
    for (int i = 0; i < PP_READ_SLOTS; i++)
        if (pp_reads[i].rw == rw)
            return &pp_reads[i];
    return NULL;
}

static void pp_record(pthread_rwlock_t *rw)
{
    struct pp_read_hold *h = pp_find(NULL);
    if (h) {
        h->rw = rw;
        h->holds = 1;
    }
}

enum { PP_BLOCK, PP_TRY, PP_UNTIL };

/* After a read hold: two readers in at once, seen in the word, turn the
 * lock into a read-mostly one for good (docs/design/preload.md): its
 * readers then publish in the table of readers while no writer comes. A
 * lock that writers keep revoking stays unbiased, taking its readers'
 * holds from the word as before. relaxed: a guess. */
static inline void pp_maybe_read_mostly(pp_rwlock_t *p)
{
    if (PARK__UNLIKELY(
            (__atomic_load_n(&p->lock.state_, __ATOMIC_RELAXED) & PARK__RW_READERS_MASK) >= 2) &&
        !(__atomic_load_n(&p->lock.flags_, __ATOMIC_RELAXED) & PARK__RW_MOSTLY))
        park__rwlock_make_read_mostly(&p->lock);
}

static int read_impl(pthread_rwlock_t *rw, int how, park_time_t deadline)
{
    pp_rwlock_t *p = pp_of(rw);
    pp_rw_counted(p);
    if (pp_writer(p) == pp_self())
        return how == PP_TRY ? EBUSY : EDEADLK;
    bool recursive = pp_recursive(p);
    if (recursive) {
        struct pp_read_hold *h = pp_find(rw);
        if (h) {
            if (h->holds == UINT32_MAX)
                return EAGAIN;
            h->holds++;
            return 0;
        }
    }
    if (!park_rwlock_try_read_lock(&p->lock)) {
        if (how == PP_TRY)
            return EBUSY;
        int r = 0;
        if (how == PP_BLOCK)
            PP_NO_CANCEL(park_rwlock_read_lock(&p->lock));
        else
            PP_NO_CANCEL(r = park_rwlock_read_lock_until(&p->lock, deadline));
        if (r != 0)
            return ETIMEDOUT;
    }
    if (recursive)
        pp_record(rw);
    pp_maybe_read_mostly(p);
    return 0;
}

static int write_impl(pthread_rwlock_t *rw, int how, park_time_t deadline)
{
    pp_rwlock_t *p = pp_of(rw);
    pp_rw_counted(p);
    if (pp_writer(p) == pp_self())
        return how == PP_TRY ? EBUSY : EDEADLK;
    if (!park_rwlock_try_write_lock(&p->lock)) {
        if (how == PP_TRY)
            return EBUSY;
        int r = 0;
        if (how == PP_BLOCK)
            PP_NO_CANCEL(park_rwlock_write_lock(&p->lock));
        else
            PP_NO_CANCEL(r = park_rwlock_write_lock_until(&p->lock, deadline));
        if (r != 0)
            return ETIMEDOUT;
    }
    __atomic_store_n(&p->writer, pp_self(), __ATOMIC_RELAXED);
    return 0;
}

typedef int pp_take_fn(pthread_rwlock_t *rw, int how, park_time_t deadline);

/* Lock-order checking (park/order.h), out of the way of the calls. */
__attribute__((noinline)) static int take_checked(pp_take_fn *take, pthread_rwlock_t *rw, int how,
                                                  park_time_t deadline, unsigned flags,
                                                  const void *site)
{
    if (how != PP_TRY)
        park__order_lock(rw, flags | (how == PP_UNTIL ? PARK__ORDER_TIMED : 0), site);
    int r = take(rw, how, deadline);
    if (r == 0)
        park__order_held(rw, site);
    return r;
}

/* A read (write) hold; site: the program's call site. */
static inline int pp_read(pthread_rwlock_t *rw, int how, park_time_t deadline, const void *site)
{
    if (PARK__UNLIKELY(PARK__ORDER_ON()))
        return take_checked(read_impl, rw, how, deadline, PARK__ORDER_READ, site);
    return read_impl(rw, how, deadline);
}

static inline int pp_write(pthread_rwlock_t *rw, int how, park_time_t deadline, const void *site)
{
    if (PARK__UNLIKELY(PARK__ORDER_ON()))
        return take_checked(write_impl, rw, how, deadline, 0, site);
    return write_impl(rw, how, deadline);
}

int pp_rwlock_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
    int pshared = PTHREAD_PROCESS_PRIVATE, kind = PTHREAD_RWLOCK_DEFAULT_NP;
    if (attr) {
        pthread_rwlockattr_getpshared(attr, &pshared);
        pthread_rwlockattr_getkind_np(attr, &kind);
    }
    if (pshared != PTHREAD_PROCESS_PRIVATE) {
        pp_count(PP_RWLOCK, false);
        return PP_REAL(int (*)(pthread_rwlock_t *, const pthread_rwlockattr_t *),
                       pthread_rwlock_init)(rw, attr);
    }
    if (PARK__UNLIKELY(PARK__ORDER_ON()))
        park__order_forget(rw); /* a new lock, if the memory held another */
    memset(rw, 0, sizeof *rw);
    pp_of(rw)->kind = (uint32_t)kind;
    pp_of(rw)->counted = 1;
    pp_count(PP_RWLOCK, true);
    return 0;
}
PP_EXPORT2(pp_rwlock_init, pthread_rwlock_init, "GLIBC_2.2.5", "GLIBC_2.34")

int pp_rwlock_destroy(pthread_rwlock_t *rw)
{
    if (pp_passed(rw))
        return PP_REAL(pp_rw_fn, pthread_rwlock_destroy)(rw);
    int r = park_rwlock_destroy(&pp_of(rw)->lock);
    if (PARK__UNLIKELY(PARK__ORDER_ON()) && r == 0)
        park__order_forget(rw);
    return r;
}
PP_EXPORT2(pp_rwlock_destroy, pthread_rwlock_destroy, "GLIBC_2.2.5", "GLIBC_2.34")

int pp_rwlock_rdlock(pthread_rwlock_t *rw)
{
    if (pp_passed(rw))
        return PP_REAL(pp_rw_fn, pthread_rwlock_rdlock)(rw);
    return pp_read(rw, PP_BLOCK, 0, __builtin_return_address(0));
}
PP_EXPORT2(pp_rwlock_rdlock, pthread_rwlock_rdlock, "GLIBC_2.2.5", "GLIBC_2.34")

int pp_rwlock_tryrdlock(pthread_rwlock_t *rw)
{
    if (pp_passed(rw))
        return PP_REAL(pp_rw_fn, pthread_rwlock_tryrdlock)(rw);
    return pp_read(rw, PP_TRY, 0, __builtin_return_address(0));
}
PP_EXPORT2(pp_rwlock_tryrdlock, pthread_rwlock_tryrdlock, "GLIBC_2.2.5", "GLIBC_2.34")

int pp_rwlock_timedrdlock(pthread_rwlock_t *rw, const struct timespec *abstime)
{
    if (pp_passed(rw))
        return PP_REAL(pp_rw_time_fn, pthread_rwlock_timedrdlock)(rw, abstime);
    if (!pp_valid_ts(abstime)) /* as glibc: checked even when free */
        return EINVAL;
    return pp_read(rw, PP_UNTIL, pp_deadline(CLOCK_REALTIME, abstime), __builtin_return_address(0));
}
PP_EXPORT2(pp_rwlock_timedrdlock, pthread_rwlock_timedrdlock, "GLIBC_2.2.5", "GLIBC_2.34")

int pp_rwlock_clockrdlock(pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abstime)
{
    if (pp_passed(rw))
        return PP_REAL(pp_rw_clock_fn, pthread_rwlock_clockrdlock)(rw, clock, abstime);
    if (pp_check_clock(clock) || !pp_valid_ts(abstime))
        return EINVAL;
    return pp_read(rw, PP_UNTIL, pp_deadline(clock, abstime), __builtin_return_address(0));
}
PP_EXPORT2(pp_rwlock_clockrdlock, pthread_rwlock_clockrdlock, "GLIBC_2.30", "GLIBC_2.34")

int pp_rwlock_wrlock(pthread_rwlock_t *rw)
{
    if (pp_passed(rw))
        return PP_REAL(pp_rw_fn, pthread_rwlock_wrlock)(rw);
    return pp_write(rw, PP_BLOCK, 0, __builtin_return_address(0));
}
PP_EXPORT2(pp_rwlock_wrlock, pthread_rwlock_wrlock, "GLIBC_2.2.5", "GLIBC_2.34")

int pp_rwlock_trywrlock(pthread_rwlock_t *rw)
{
    if (pp_passed(rw))
        return PP_REAL(pp_rw_fn, pthread_rwlock_trywrlock)(rw);
    return pp_write(rw, PP_TRY, 0, __builtin_return_address(0));
}
PP_EXPORT2(pp_rwlock_trywrlock, pthread_rwlock_trywrlock, "GLIBC_2.2.5", "GLIBC_2.34")

int pp_rwlock_timedwrlock(pthread_rwlock_t *rw, const struct timespec *abstime)
{
    if (pp_passed(rw))
        return PP_REAL(pp_rw_time_fn, pthread_rwlock_timedwrlock)(rw, abstime);
    if (!pp_valid_ts(abstime))
        return EINVAL;
    return pp_write(rw, PP_UNTIL, pp_deadline(CLOCK_REALTIME, abstime),
                    __builtin_return_address(0));
}
PP_EXPORT2(pp_rwlock_timedwrlock, pthread_rwlock_timedwrlock, "GLIBC_2.2.5", "GLIBC_2.34")

int pp_rwlock_clockwrlock(pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abstime)
{
    if (pp_passed(rw))
        return PP_REAL(pp_rw_clock_fn, pthread_rwlock_clockwrlock)(rw, clock, abstime);
    if (pp_check_clock(clock) || !pp_valid_ts(abstime))
        return EINVAL;
    return pp_write(rw, PP_UNTIL, pp_deadline(clock, abstime), __builtin_return_address(0));
}
PP_EXPORT2(pp_rwlock_clockwrlock, pthread_rwlock_clockwrlock, "GLIBC_2.30", "GLIBC_2.34")

int pp_rwlock_unlock(pthread_rwlock_t *rw)
{
    if (pp_passed(rw))
        return PP_REAL(pp_rw_fn, pthread_rwlock_unlock)(rw);
    if (PARK__UNLIKELY(PARK__ORDER_ON()))
        park__order_released(rw);
    pp_rwlock_t *p = pp_of(rw);
    if (pp_writer(p) == pp_self()) {
        __atomic_store_n(&p->writer, 0, __ATOMIC_RELAXED);
        park_rwlock_write_unlock(&p->lock);
        return 0;
    }
    if (pp_recursive(p)) {
        struct pp_read_hold *h = pp_find(rw);
        if (h) {
            if (--h->holds != 0)
                return 0;
            h->rw = NULL;
        }
    }
    park_rwlock_read_unlock(&p->lock);
    return 0;
}
PP_EXPORT2(pp_rwlock_unlock, pthread_rwlock_unlock, "GLIBC_2.2.5", "GLIBC_2.34")
