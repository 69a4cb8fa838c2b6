/* lib/preload/cond.c: pthread_cond_* for park mutexes.
 *
 * A cond is glibc's until a wait with a park mutex claims it: glibc's
 * pthread_cond_init (and zero-filled memory) leave a pristine glibc cond,
 * and the first wait with a park mutex turns a pristine cond into a park
 * cond by writing PP_COND_MANAGED into glibc's __wrefs word, keeping the
 * clock flag beside it. A cond waited on with a glibc mutex (robust, PI,
 * PP, process-shared) stays glibc's and every call on it passes through;
 * a cond used with both kinds of mutex aborts with a message.
 *
 * A park cond is a FIFO queue of waiters under a park_mutex_t (its lock),
 * each waiter parked on a word in its own stack frame:
 *
 *   state   QUEUED -> WOKEN     signal pops the oldest waiter (under lock)
 *           QUEUED -> CHAINED   broadcast detaches the whole queue (lock)
 *           CHAINED -> WOKEN    the previous waiter of the detached queue,
 *                               once it holds the mutex again
 *           QUEUED -> (gone)    a timed-out or cancelled waiter leaves the
 *                               queue (lock)
 *
 * Broadcast wakes only the first waiter; each woken waiter wakes the next
 * one after it has re-acquired the mutex, so the next one finds the mutex
 * held and parks in the mutex's queue: the waiters go to the mutex one at
 * a time, as the mutex frees, with no thundering herd (one wake-up per
 * waiter, as glibc's old requeue had). Signal and broadcast touch only the
 * woken waiter's word after they release the cond's lock, and a woken
 * waiter never touches the cond again, so a cond may be destroyed as soon
 * as the waiters it must wake have been picked. Waits are cancellation
 * points: the futex sleep runs with asynchronous cancellation, and a
 * cancelled waiter leaves the queue (or passes on the signal it was picked
 * for), re-acquires the mutex and wakes its successor before the caller's
 * cleanup handlers run.
 *
 * fork(): a waiter queued before a fork belongs to a thread the child does
 * not have, and its frame may be reused there by a new thread's stack, so
 * a child must neither wake it nor walk to it. The queue remembers the
 * fork generation of its waiters (gen, lib/wait/fork.h); in a child, the
 * first call that takes the cond's lock and finds an older generation
 * drops the whole queue unwalked (pp_cond_lock). */
#include "futex.h"
#include "preload.h"
#include "wait/fork.h"

#include <errno.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif
#include <stdlib.h>
#include <string.h>

enum { PP_QUEUED, PP_WOKEN, PP_CHAINED };

struct pp_cond_waiter {
    struct pp_cond_waiter *next; /* queue order; after a broadcast, who to wake next */
    struct pp_cond_waiter *prev;
    uint32_t state;
};

typedef int (*pp_cond_fn)(pthread_cond_t *);
typedef int (*pp_cond_wait_fn)(pthread_cond_t *, pthread_mutex_t *);
typedef int (*pp_cond_time_fn)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
typedef int (*pp_cond_clock_fn)(pthread_cond_t *, pthread_mutex_t *, clockid_t,
                                const struct timespec *);

static inline pp_cond_t *pp_of(pthread_cond_t *c)
{
    return (pp_cond_t *)c;
}

static inline bool pp_is_managed(uint32_t wrefs)
{
    return (wrefs & PP_COND_MANAGED_MASK) == PP_COND_MANAGED;
}

/* relaxed: the marker changes only on pristine conds (claim) and at
 * destroy, when no other call may run on the cond. */
static inline uint32_t pp_wrefs(pthread_cond_t *c)
{
    return __atomic_load_n(&pp_of(c)->wrefs, __ATOMIC_RELAXED);
}

_Noreturn static void pp_mixed(pthread_cond_t *c)
{
    pp_die("condition variable %p is used with both a park mutex and a robust, "
           "priority-inheritance, priority-protect or process-shared mutex (or is "
           "process-shared): not supported",
           (void *)c);
}

/* The park cond for a wait with mutex m, claiming a pristine glibc cond;
 * NULL if the wait passes through to glibc. */
static pp_cond_t *pp_cond_for_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    uint32_t w = pp_wrefs(c);
    if (pp_is_managed(w)) {
        if (!pp_mutex_managed(m))
            pp_mixed(c);
        return pp_of(c);
    }
    const uint64_t *words = (const uint64_t *)c;
    if (!pp_mutex_managed(m)) {
        if (__atomic_load_n(&words[0], __ATOMIC_RELAXED) == 0)
            pp_count(PP_COND, false); /* first glibc wait (an estimate) */
        return NULL;
    }
    for (;;) {
        /* Pristine: no glibc waiter ever (__wseq, __g1_start are 0) and no
         * reference now; not process-shared. */
        if ((w & PP_GLIBC_COND_PSHARED) || w >= PP_GLIBC_COND_REF ||
            __atomic_load_n(&words[0], __ATOMIC_RELAXED) != 0 ||
            __atomic_load_n(&words[1], __ATOMIC_RELAXED) != 0)
            pp_mixed(c);
        /* pristine -> managed. acq_rel: the winner's claim is ordered
         * before its enqueue under the cond's lock, which orders the rest. */
        if (__atomic_compare_exchange_n(&pp_of(c)->wrefs, &w,
                                        PP_COND_MANAGED | (w & PP_GLIBC_COND_MONOTONIC), false,
                                        __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            pp_count(PP_COND, true);
            return pp_of(c);
        }
        if (pp_is_managed(w))
            return pp_of(c);
    }
}

/* ---- the queue (under c->lock) ----------------------------------------- */

/* Takes the cond's lock; in a forked child, first drops waiters queued
 * before the fork (see the top of this file). */
static void pp_cond_lock(pp_cond_t *c)
{
    pp_lock(&c->lock);
    if (PARK__UNLIKELY(park__forked) && c->gen != park__fork_gen) {
        __atomic_store_n(&c->head, NULL, __ATOMIC_RELAXED); /* read unlocked by signal */
        c->tail = NULL;
        c->gen = park__fork_gen;
    }
}

static void pp_enqueue(pp_cond_t *c, struct pp_cond_waiter *w)
{
    w->next = NULL;
    w->prev = c->tail;
    if (c->tail)
        c->tail->next = w;
    else
        __atomic_store_n(&c->head, w, __ATOMIC_RELAXED); /* read unlocked by signal */
    c->tail = w;
}

static void pp_remove(pp_cond_t *c, struct pp_cond_waiter *w)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        __atomic_store_n(&c->head, w->next, __ATOMIC_RELAXED);
    if (w->next)
        w->next->prev = w->prev;
    else
        c->tail = w->prev;
}

/* Hands the wake to w: after this store w may return and its frame go,
 * so only the futex wake (an address) follows. */
static void pp_wake(struct pp_cond_waiter *w)
{
    /* release: pairs with the acquire loads in pp_wait and pp_await_woken. */
    __atomic_store_n(&w->state, PP_WOKEN, __ATOMIC_RELEASE);
    pp_futex_wake(&w->state, 1);
}

/* ---- signal, broadcast ------------------------------------------------- */

static void pp_signal(pp_cond_t *c)
{
    /* relaxed: a waiter enqueued before the signaller took the mutex is
     * seen through the mutex's ordering; one enqueued later need not be. */
    if (!__atomic_load_n(&c->head, __ATOMIC_RELAXED))
        return;
    pp_cond_lock(c);
    struct pp_cond_waiter *w = c->head;
    if (w) {
        pp_remove(c, w);
        w->next = NULL; /* nobody to pass the wake on to */
        /* QUEUED -> WOKEN, under the lock (the timeout path checks it there) */
        __atomic_store_n(&w->state, PP_WOKEN, __ATOMIC_RELEASE);
    }
    park_mutex_unlock(&c->lock);
    if (w)
        pp_futex_wake(&w->state, 1);
}

static void pp_broadcast(pp_cond_t *c)
{
    if (!__atomic_load_n(&c->head, __ATOMIC_RELAXED)) /* relaxed: as pp_signal */
        return;
    pp_cond_lock(c);
    struct pp_cond_waiter *first = c->head;
    __atomic_store_n(&c->head, NULL, __ATOMIC_RELAXED);
    c->tail = NULL;
    for (struct pp_cond_waiter *w = first; w; w = w->next)
        __atomic_store_n(&w->state, PP_CHAINED, __ATOMIC_RELAXED); /* QUEUED -> CHAINED */
    if (first)
        __atomic_store_n(&first->state, PP_WOKEN, __ATOMIC_RELEASE); /* CHAINED -> WOKEN */
    park_mutex_unlock(&c->lock);
    if (first)
        pp_futex_wake(&first->state, 1);
}

/* ---- wait ---------------------------------------------------------------- */

struct pp_wait {
    pp_cond_t *c;
    pthread_mutex_t *m;
    struct pp_cond_waiter w;
    uint32_t saved; /* the mutex's recursion count */
};

/* Sleeps on the waiter's word, the one place a wait can be cancelled: with
 * the caller's cancel state (`state`, disabled for the rest of the wait)
 * and asynchronous cancellation for the system call. */
static int pp_sleep_cancellable(uint32_t *word, uint32_t val, clockid_t clock,
                                const struct timespec *abstime, int state)
{
    if (state == PTHREAD_CANCEL_DISABLE)
        return pp_futex_wait(word, val, clock, abstime);
    int old, ignored;
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &ignored);
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
    int e = pp_futex_wait(word, val, clock, abstime);
    pthread_setcanceltype(old, &ignored);
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &ignored);
    return e;
}

/* Sleeps until the waiter is WOKEN, with no time limit and no
 * cancellation (the waiter was picked: its wake is on the way). */
static void pp_await_woken(struct pp_cond_waiter *w)
{
    uint32_t s;
    /* acquire: pairs with the release store in pp_wake / pp_signal. */
    while ((s = __atomic_load_n(&w->state, __ATOMIC_ACQUIRE)) != PP_WOKEN)
        pp_futex_wait(&w->state, s, CLOCK_MONOTONIC, NULL);
}

/* Back from the sleep: take the mutex again and pass a broadcast on. */
static void pp_wait_finish(struct pp_wait *x)
{
    pp_mutex_cond_relock(x->m, x->saved);
    if (x->w.next)
        pp_wake(x->w.next); /* its frame lives: it waits for this wake */
}

static void pp_wait_cancelled(void *arg)
{
    struct pp_wait *x = arg;
#ifdef __SANITIZE_ADDRESS__
    /* The cancellation unwinds the frames above: clear their redzones, as
     * ASan does for longjmp. */
    __asan_handle_no_return();
#endif
    pp_cond_lock(x->c);
    bool picked = __atomic_load_n(&x->w.state, __ATOMIC_RELAXED) != PP_QUEUED;
    if (!picked) {
        pp_remove(x->c, &x->w);
        x->w.next = NULL;
    }
    park_mutex_unlock(&x->c->lock);
    if (picked) {
        pp_await_woken(&x->w);
        if (!x->w.next)
            pp_signal(x->c); /* a cancelled waiter consumes no signal */
    }
    pp_wait_finish(x);
}

static int pp_wait(pp_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                   const struct timespec *abstime)
{
    int err = pp_mutex_cond_check(m);
    if (err)
        return err;
    /* Cancellation acts only in the sleep, where the cleanup handler is
     * in place (park's own calls are no cancellation points). */
    int cancel_state;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    struct pp_wait x = {.c = c, .m = m, .w = {.state = PP_QUEUED}};
    pp_cond_lock(c);
    pp_enqueue(c, &x.w);
    park_mutex_unlock(&c->lock);
    x.saved = pp_mutex_cond_release(m);

    pthread_cleanup_push(pp_wait_cancelled, &x);
    uint32_t s;
    /* acquire: pairs with the release store of WOKEN (pp_wake, pp_signal). */
    while ((s = __atomic_load_n(&x.w.state, __ATOMIC_ACQUIRE)) != PP_WOKEN) {
        if (pp_sleep_cancellable(&x.w.state, s, clock, s == PP_QUEUED ? abstime : NULL,
                                 cancel_state) != ETIMEDOUT)
            continue;
        pp_cond_lock(c);
        if (__atomic_load_n(&x.w.state, __ATOMIC_RELAXED) == PP_QUEUED) {
            pp_remove(c, &x.w);
            x.w.next = NULL;
            err = ETIMEDOUT;
        }
        park_mutex_unlock(&c->lock);
        if (err)
            break;
        /* Picked meanwhile: the wake is on its way, wait for it. */
    }
    pthread_cleanup_pop(0);
    pp_wait_finish(&x);
    pthread_setcancelstate(cancel_state, &cancel_state);
    return err;
}

/* ---- the API --------------------------------------------------------------- */

int pp_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr)
{
    int pshared = PTHREAD_PROCESS_PRIVATE;
    if (attr)
        pthread_condattr_getpshared(attr, &pshared);
    if (pshared != PTHREAD_PROCESS_PRIVATE)
        pp_count(PP_COND, false);
    /* glibc's pristine cond (with its clock flag): a park mutex's first
     * wait claims it. */
    return PP_REAL(int (*)(pthread_cond_t *, const pthread_condattr_t *), pthread_cond_init)(c,
                                                                                             attr);
}
PP_EXPORT1(pp_cond_init, pthread_cond_init, "GLIBC_2.3.2")

int pp_cond_destroy(pthread_cond_t *c)
{
    uint32_t w = pp_wrefs(c);
    if (!pp_is_managed(w))
        return PP_REAL(pp_cond_fn, pthread_cond_destroy)(c);
    pp_cond_t *p = pp_of(c);
    pp_cond_lock(p);
    bool busy = p->head != NULL;
    park_mutex_unlock(&p->lock);
    if (busy)
        return EBUSY;
    /* Back to a pristine glibc cond with the same clock. */
    memset(c, 0, sizeof *c);
    p->wrefs = w & PP_GLIBC_COND_MONOTONIC;
    return 0;
}
PP_EXPORT1(pp_cond_destroy, pthread_cond_destroy, "GLIBC_2.3.2")

/* A glibc cond no glibc wait ever used has no waiter to wake: signal and
 * broadcast leave it alone, so a glibc call can never meet a cond that a
 * park mutex's wait claims meanwhile. */
static bool pp_untouched(pthread_cond_t *c, uint32_t w)
{
    return w < PP_GLIBC_COND_REF && __atomic_load_n((const uint64_t *)c, __ATOMIC_RELAXED) == 0;
}

int pp_cond_signal(pthread_cond_t *c)
{
    uint32_t w = pp_wrefs(c);
    if (!pp_is_managed(w))
        return pp_untouched(c, w) ? 0 : PP_REAL(pp_cond_fn, pthread_cond_signal)(c);
    pp_signal(pp_of(c));
    return 0;
}
PP_EXPORT1(pp_cond_signal, pthread_cond_signal, "GLIBC_2.3.2")

int pp_cond_broadcast(pthread_cond_t *c)
{
    uint32_t w = pp_wrefs(c);
    if (!pp_is_managed(w))
        return pp_untouched(c, w) ? 0 : PP_REAL(pp_cond_fn, pthread_cond_broadcast)(c);
    pp_broadcast(pp_of(c));
    return 0;
}
PP_EXPORT1(pp_cond_broadcast, pthread_cond_broadcast, "GLIBC_2.3.2")

int pp_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    pp_cond_t *p = pp_cond_for_wait(c, m);
    if (!p)
        return PP_REAL(pp_cond_wait_fn, pthread_cond_wait)(c, m);
    return pp_wait(p, m, CLOCK_REALTIME, NULL);
}
PP_EXPORT1(pp_cond_wait, pthread_cond_wait, "GLIBC_2.3.2")

int pp_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime)
{
    pp_cond_t *p = pp_cond_for_wait(c, m);
    if (!p)
        return PP_REAL(pp_cond_time_fn, pthread_cond_timedwait)(c, m, abstime);
    if (!pp_valid_ts(abstime))
        return EINVAL;
    clockid_t clock = p->wrefs & PP_GLIBC_COND_MONOTONIC ? CLOCK_MONOTONIC : CLOCK_REALTIME;
    return pp_wait(p, m, clock, abstime);
}
PP_EXPORT1(pp_cond_timedwait, pthread_cond_timedwait, "GLIBC_2.3.2")

int pp_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                      const struct timespec *abstime)
{
    pp_cond_t *p = pp_cond_for_wait(c, m);
    if (!p)
        return PP_REAL(pp_cond_clock_fn, pthread_cond_clockwait)(c, m, clock, abstime);
    if (pp_check_clock(clock) || !pp_valid_ts(abstime))
        return EINVAL;
    return pp_wait(p, m, clock, abstime);
}
PP_EXPORT2(pp_cond_clockwait, pthread_cond_clockwait, "GLIBC_2.30", "GLIBC_2.34")

/* ---- the pre-2.3.2 ABI (pthread_cond_*@GLIBC_2.2.5) -----------------------
 *
 * As glibc does for it: the old object's first word points to a cond of
 * the current ABI, allocated on first use and freed by destroy. */

static pthread_cond_t *pp_old_cond(pthread_cond_t *old, bool create)
{
    pthread_cond_t **slot = (pthread_cond_t **)old;
    /* acquire: pairs with the CAS below that publishes the cond. */
    pthread_cond_t *c = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (c || !create)
        return c;
    pthread_cond_t *fresh = calloc(1, sizeof *fresh); /* zero: a pristine cond */
    if (!fresh)
        return NULL;
    if (__atomic_compare_exchange_n(slot, &c, fresh, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return fresh;
    free(fresh);
    return c;
}

int pp_old_cond_init(pthread_cond_t *old, const pthread_condattr_t *attr)
{
    (void)attr; /* the old ABI has no attributes */
    *(pthread_cond_t **)old = NULL;
    return 0;
}
__asm__(".symver pp_old_cond_init, pthread_cond_init@GLIBC_2.2.5");

int pp_old_cond_destroy(pthread_cond_t *old)
{
    pthread_cond_t *c = pp_old_cond(old, false);
    if (!c)
        return 0;
    int r = pp_cond_destroy(c);
    if (r == 0)
        free(c);
    return r;
}
__asm__(".symver pp_old_cond_destroy, pthread_cond_destroy@GLIBC_2.2.5");

int pp_old_cond_signal(pthread_cond_t *old)
{
    pthread_cond_t *c = pp_old_cond(old, false);
    return c ? pp_cond_signal(c) : 0;
}
__asm__(".symver pp_old_cond_signal, pthread_cond_signal@GLIBC_2.2.5");

int pp_old_cond_broadcast(pthread_cond_t *old)
{
    pthread_cond_t *c = pp_old_cond(old, false);
    return c ? pp_cond_broadcast(c) : 0;
}
__asm__(".symver pp_old_cond_broadcast, pthread_cond_broadcast@GLIBC_2.2.5");

int pp_old_cond_wait(pthread_cond_t *old, pthread_mutex_t *m)
{
    pthread_cond_t *c = pp_old_cond(old, true);
    return c ? pp_cond_wait(c, m) : ENOMEM;
}
__asm__(".symver pp_old_cond_wait, pthread_cond_wait@GLIBC_2.2.5");

int pp_old_cond_timedwait(pthread_cond_t *old, pthread_mutex_t *m, const struct timespec *abstime)
{
    pthread_cond_t *c = pp_old_cond(old, true);
    return c ? pp_cond_timedwait(c, m, abstime) : ENOMEM;
}
__asm__(".symver pp_old_cond_timedwait, pthread_cond_timedwait@GLIBC_2.2.5");
