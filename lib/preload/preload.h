/* lib/preload/preload.h: what the drop-in's files share.
 *
 * libpark-preload.so serves pthread mutexes, condition variables, rwlocks
 * and unnamed process-private semaphores with park, inside the pthread
 * objects' own storage. Each kind of object carries a marker that tells a
 * park-managed object from one passed through to glibc; the marker of each
 * is chosen so that zero-filled memory and glibc's static initialisers read
 * as park-managed, and every object glibc initialised reads as glibc's:
 *
 *   mutex   glibc's kind word (offset 16): robust, PI, PP and pshared
 *           mutexes always carry one of glibc's bits 0x10-0x80 there, a
 *           park mutex never does (it holds PTHREAD_MUTEX_* 0-3).
 *   cond    glibc's __wrefs word (offset 36): PP_COND_MANAGED in its high
 *           bits once a wait with a park mutex claims the (pristine) cond.
 *   rwlock  glibc's __shared word (offset 28): non-zero only in a
 *           process-shared rwlock, which is glibc's.
 *   sem     a 64-bit magic at offset 24, past glibc's 16 bytes.
 *
 * The condition variable is park's (lib/cond.c), inside glibc's storage;
 * lib/preload/cond.c keeps the pthread ABI around it. */
#ifndef PARK_PRELOAD_H
#define PARK_PRELOAD_H

#include <park/cond.h>
#include <park/mutex.h>
#include <park/rwlock.h>
#include <park/sem.h>
#include <park/time.h>

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <time.h>

/* ---- storage ------------------------------------------------------------ */

/* glibc's mutex kind bits that park does not serve (pthreadP.h). */
#define PP_GLIBC_MUTEX_ROBUST 0x10
#define PP_GLIBC_MUTEX_PI 0x20
#define PP_GLIBC_MUTEX_PP 0x40
#define PP_GLIBC_MUTEX_PSHARED 0x80
#define PP_MUTEX_PASS_BITS                                                                         \
    (PP_GLIBC_MUTEX_ROBUST | PP_GLIBC_MUTEX_PI | PP_GLIBC_MUTEX_PP | PP_GLIBC_MUTEX_PSHARED)
/* The type (PTHREAD_MUTEX_NORMAL ... ADAPTIVE_NP) in a park mutex's kind. */
#define PP_MUTEX_TYPE_MASK 0x3
/* Set in the kind of a park mutex once counted (by init or first lock). */
#define PP_MUTEX_COUNTED 0x40000000
/* What glibc's pthread_mutex_destroy leaves in the kind; glibc returns
 * EINVAL for a mutex that holds it, and so it is passed through. */
#define PP_MUTEX_DESTROYED (-1)

typedef struct pp_mutex {
    park_mutex_t lock; /* 0: glibc's __lock; zero = unlocked */
    uint32_t count;    /* 4: RECURSIVE: holds by the owner */
    uintptr_t owner;   /* 8: ERRORCHECK, RECURSIVE: pthread_self() of the holder */
    int32_t kind;      /* 16: glibc's __kind: the marker (above) */
    /* 20: the fork generation of `next` */
    uint32_t next_gen;
    /* 24: a broadcast's next waiter (cond.c), which the release of this
     * mutex wakes; written and read by the holder only */
    void *next;
} pp_mutex_t;

/* glibc's __wrefs flags (pthread_cond_init) and the marker of a park cond. */
#define PP_GLIBC_COND_PSHARED 0x1u
#define PP_GLIBC_COND_MONOTONIC 0x2u
#define PP_GLIBC_COND_REF 8u /* one waiter reference */
#define PP_COND_MANAGED 0x7a5c0000u
#define PP_COND_MANAGED_MASK 0xffff0000u

typedef struct pp_cond {
    /* 0: the park condition variable (lib/cond.c): its waiters queue in
     * lib/wait under this address; zero in a pristine cond. */
    park_cond_t cond;
    uint32_t pad0[8]; /* 4 */
    uint32_t wrefs;   /* 36: glibc's __wrefs: the marker and the clock */
    uint32_t pad2[2]; /* 40 */
} pp_cond_t;

/* glibc's rwlock kinds (pthread_rwlockattr_setkind_np). */
#define PP_RWLOCK_PREFER_WRITER_NONRECURSIVE 2u

typedef struct pp_rwlock {
    park_rwlock_t lock; /* 0-19 */
    uint32_t pad0;      /* 20 */
    uint32_t pad1;      /* 24 */
    uint32_t shared;    /* 28: glibc's __shared: the marker, 0 in a park rwlock */
    uint64_t pad2;      /* 32 */
    uintptr_t writer;   /* 40: pthread_self() of the write holder, or 0 */
    uint32_t kind;      /* 48: glibc's __flags: the kind */
    uint32_t counted;   /* 52: non-zero once counted */
} pp_rwlock_t;

#define PP_SEM_MAGIC 0x70a1c5e3a9f0d2b7ull
typedef struct pp_sem {
    park_sem_t sem; /* 0-15: glibc's value, waiters and flags */
    uint64_t pad;   /* 16 */
    uint64_t magic; /* 24: PP_SEM_MAGIC in a park semaphore */
} pp_sem_t;

_Static_assert(sizeof(pp_mutex_t) <= sizeof(pthread_mutex_t), "mutex fits");
_Static_assert(__builtin_offsetof(pp_mutex_t, kind) == 16, "kind is glibc's __kind");
_Static_assert(__builtin_offsetof(pp_mutex_t, next) == 24, "next is in glibc's __list");
_Static_assert(sizeof(pp_cond_t) == sizeof(pthread_cond_t), "cond fits");
_Static_assert(__builtin_offsetof(pp_cond_t, wrefs) == 36, "wrefs is glibc's __wrefs");
_Static_assert(sizeof(pp_rwlock_t) == sizeof(pthread_rwlock_t), "rwlock fits");
_Static_assert(__builtin_offsetof(pp_rwlock_t, shared) == 28, "shared is glibc's __shared");
_Static_assert(__builtin_offsetof(pp_rwlock_t, kind) == 48, "kind is glibc's __flags");
_Static_assert(sizeof(pp_sem_t) == sizeof(sem_t), "sem fits");

/* ---- glibc's own functions, for what passes through ---------------------- */

/* The glibc function `name` (its default version), looked up on first use. */
void *pp_real(const char *name);
#define PP_REAL(type, name)                                                                        \
    ({                                                                                             \
        static void *_Atomic pp_fn_;                                                               \
        void *f_ = atomic_load_explicit(&pp_fn_, memory_order_relaxed);                            \
        if (!f_) {                                                                                 \
            f_ = pp_real(#name);                                                                   \
            atomic_store_explicit(&pp_fn_, f_, memory_order_relaxed);                              \
        }                                                                                          \
        (type) f_;                                                                                 \
    })

/* ---- counters for PARK_PRELOAD_VERBOSE ----------------------------------- */

enum { PP_MUTEX, PP_COND, PP_RWLOCK, PP_SEM, PP_KINDS };
void pp_count(int kind, bool managed);

/* ---- helpers ------------------------------------------------------------- */

/* Prints "park-preload: <msg>" on stderr and aborts. */
_Noreturn void pp_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* 0, or EINVAL for a clock other than CLOCK_REALTIME and CLOCK_MONOTONIC. */
int pp_check_clock(clockid_t clock);
/* The park deadline (CLOCK_MONOTONIC ns) of an absolute time on `clock`
 * (REALTIME or MONOTONIC); a time before the epoch is in the past. */
park_time_t pp_deadline(clockid_t clock, const struct timespec *abstime);
/* tv_nsec in [0, 1e9). */
static inline bool pp_valid_ts(const struct timespec *ts)
{
    return ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000;
}
/* A valid ts (pp_valid_ts) in ns since its clock's epoch, saturating: 0
 * before the epoch (tv_sec < 0), PARK_FOREVER where the count of ns would
 * not fit in 64 bits (the year 2554 on CLOCK_REALTIME): such a time never
 * comes, and a product that wrapped would make it one in the past. */
static inline park_time_t pp_ts_ns(const struct timespec *ts)
{
    if (ts->tv_sec < 0)
        return 0;
    uint64_t ns;
    if (__builtin_mul_overflow((uint64_t)ts->tv_sec, (uint64_t)1000000000u, &ns) ||
        __builtin_add_overflow(ns, (uint64_t)ts->tv_nsec, &ns))
        return PARK_FOREVER;
    return ns;
}

/* The calling thread's identity for owner checks. */
static inline uintptr_t pp_self(void)
{
    return (uintptr_t)pthread_self();
}

/* park's blocking calls run with cancellation disabled: the pthread calls
 * that are no cancellation points must not be cancelled inside park, and
 * the waits that are cancel only where the preload checks (park's
 * fault-injection builds delay futex calls with nanosleep(), which is a
 * cancellation point). PP_NO_CANCEL(stmt) runs stmt so. */
#define PP_NO_CANCEL(stmt)                                                                         \
    do {                                                                                           \
        int pp_cs_;                                                                                \
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &pp_cs_);                                   \
        stmt;                                                                                      \
        pthread_setcancelstate(pp_cs_, &pp_cs_);                                                   \
    } while (0)

/* pthread_setcancelstate(state), returning the old state. Out of line, so
 * the caller's frame has no address-taken local: when a cancellation
 * unwinds that frame, AddressSanitizer then leaves no poisoned redzone
 * behind on the thread's stack. */
__attribute__((noinline)) int pp_cancel_state(int state);

/* pthread_testcancel: acts on a pending cancellation if the thread can be
 * cancelled. Under AddressSanitizer it first clears the redzones of the
 * frames a cancellation would unwind (as ASan does for longjmp). */
void pp_testcancel(void);

/* park_mutex_lock, with the blocking part under PP_NO_CANCEL. */
static inline void pp_lock(park_mutex_t *l)
{
    if (PARK__LIKELY(park_mutex_try_lock(l)))
        return;
    PP_NO_CANCEL(park_mutex_lock(l));
}

/* Wakes next, a broadcast's waiter left on a mutex (cond.c), unless it
 * waited in the parent of this forked process (gen older than ours). */
void pp_cond_pass_on(void *next, uint32_t gen);

/* Releases the park lock of m, held by the caller, and wakes the
 * broadcast's waiter left on m if any: taken off before the unlock, the
 * last touch of m (it may be destroyed once unlocked). */
static inline void pp_mutex_release(pthread_mutex_t *m)
{
    pp_mutex_t *p = (pp_mutex_t *)m;
    void *next = p->next;
    uint32_t gen = 0;
    if (PARK__UNLIKELY(next != NULL)) {
        gen = p->next_gen;
        p->next = NULL;
    }
    park_mutex_unlock(&p->lock);
    if (PARK__UNLIKELY(next != NULL))
        pp_cond_pass_on(next, gen);
}

/* Mutex operations the condition variable uses on a park mutex. */
bool pp_mutex_managed(const pthread_mutex_t *m);
/* EPERM if an ERRORCHECK or RECURSIVE mutex is not the caller's, else 0. */
int pp_mutex_cond_check(const pthread_mutex_t *m);
/* Releases the caller's hold for a wait; the result (the recursion count)
 * goes to pp_mutex_cond_relock. */
uint32_t pp_mutex_cond_release(pthread_mutex_t *m);
/* Takes the mutex back after a wait, with the recursion count `saved`;
 * next (not NULL): the broadcast's next waiter, for the mutex's next
 * release to wake (pp_mutex_release). */
void pp_mutex_cond_relock(pthread_mutex_t *m, uint32_t saved, void *next, uint32_t gen);

#endif /* PARK_PRELOAD_H */

/* ---- symbol versions ------------------------------------------------------- */

/* Exports `impl` as `name` under glibc's versions: PP_EXPORT1 as the only
 * (default) version, PP_EXPORT2 as the compat version `old` and the default
 * `cur`, so every binding a program can make reaches the same function
 * (exports.map declares the version nodes). */
#define PP_EXPORT1(impl, name, cur) __asm__(".symver " #impl ", " #name "@@" cur);
#define PP_EXPORT2(impl, name, old, cur)                                                           \
    extern __typeof(impl) impl##_compat __attribute__((alias(#impl)));                             \
    __asm__(".symver " #impl "_compat, " #name "@" old);                                           \
    __asm__(".symver " #impl ", " #name "@@" cur);
