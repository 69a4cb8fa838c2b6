/* lib/preload/cond.c: pthread_cond_* for park mutexes, on park_cond_t.
 *
 * A cond is glibc's until a wait with a park mutex claims it: glibc's
 * pthread_cond_init (and zero-filled memory) leave a pristine glibc cond,
 * and the first wait with a park mutex turns a pristine cond into a park
 * cond by writing PP_COND_MANAGED into glibc's __wrefs word, keeping the
 * clock flag beside it. A cond waited on with a glibc mutex (robust, PI,
 * PP, process-shared) stays glibc's and every call on it passes through;
 * a cond used with both kinds of mutex aborts with a message.
 *
 * A park cond is a park_cond_t (lib/cond.c: the queue, signal, broadcast
 * and their model, tests/model/cond.pml) in the first word of glibc's
 * storage; this file keeps the pthread ABI around it. A wait releases and
 * retakes the pthread mutex, whatever its type (recursion count, owner),
 * between the steps of lib/cond_impl.h. The next waiter of a broadcast
 * is left on the mutex (pp_mutex_t.next) and woken by the mutex's next
 * release (pthread_mutex_unlock by whichever thread, or a wait releasing
 * it), so the waiters go to the mutex one at a time, as it frees, with one
 * wake-up each, and the next one usually finds the mutex free. Waits are
 * cancellation points: the futex sleep alone is (PARK__WAIT_CANCEL; the
 * rest of the wait runs with cancellation disabled, since park's fault
 * injection sleeps in nanosleep), and a cancelled waiter leaves the queue
 * (or passes on the signal it was taken for: park__cond_cancelled), then
 * re-acquires the mutex, with its broadcast successor left on it, before
 * the caller's cleanup handlers run. Timed waits on CLOCK_REALTIME follow
 * changes of the system clock (PARK__WAIT_REALTIME).
 *
 * fork(): the child's queues are emptied (lib/wait/fork.c), which drops
 * the parent's waiters; a waiters word left set only costs the child's
 * first signal or broadcast a look at an empty queue. */
#include "cond_impl.h"
#include "preload.h"
#include "wait/fork.h"
#include "wait/wait.h"

#include <errno.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif
#include <stdlib.h>
#include <string.h>

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
         * before its enqueue under the bucket lock, which orders the rest. */
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

/* ---- wait ---------------------------------------------------------------- */

struct pp_wait {
    pp_cond_t *c;
    pthread_mutex_t *m;
    park__waiter_t w;
    uint32_t saved; /* the mutex's recursion count */
};

void pp_cond_pass_on(void *next, uint32_t gen)
{
    if (gen == park__fork_gen) /* else it waited in the parent */
        park__wake(next);      /* it waits for this wake */
}

/* Back from the sleep, granted or not: take the mutex again, with the
 * broadcast's next waiter (if any) for the mutex's next release to wake. */
static void pp_wait_finish(struct pp_wait *x)
{
    pp_mutex_cond_relock(x->m, x->saved, park__cond_next(&x->w), park__fork_gen);
}

static void pp_wait_cancelled(void *arg)
{
    struct pp_wait *x = arg;
#ifdef __SANITIZE_ADDRESS__
    /* The cancellation unwound the frames below pp_wait (lib/wait's and
     * lib/os's), and this handler runs where they were: clear their
     * redzones, as ASan does for longjmp. By hand first, since
     * __asan_handle_no_return's own calls would meet them. */
    char *here = __builtin_frame_address(0);
    __asan_unpoison_memory_region(here - 16384, 16384);
    __asan_handle_no_return();
#endif
    park__cond_cancelled(&x->c->cond, &x->w);
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
    int cancel_state = pp_cancel_state(PTHREAD_CANCEL_DISABLE);
    unsigned flags = (clock == CLOCK_REALTIME ? PARK__WAIT_REALTIME : 0) |
                     (cancel_state == PTHREAD_CANCEL_ENABLE ? PARK__WAIT_CANCEL : 0);
    struct pp_wait x = {.c = c, .m = m};
    park__cond_enqueue(&c->cond, &x.w);
    x.saved = pp_mutex_cond_release(m);

    pthread_cleanup_push(pp_wait_cancelled, &x);
    err = park__cond_sleep(&c->cond, &x.w, flags, abstime ? pp_ts_ns(abstime) : PARK_FOREVER);
    if (err == 0 && cancel_state == PTHREAD_CANCEL_ENABLE) {
        /* A cancellation that came before the signal or broadcast that
         * took this waiter, while it was still on its way to the sleep
         * (where alone it acts), acts now, so that the waiter passes on
         * what it was taken for instead of consuming it and being
         * cancelled in its next wait. */
        pp_cancel_state(PTHREAD_CANCEL_ENABLE);
        pp_testcancel();
        pp_cancel_state(PTHREAD_CANCEL_DISABLE);
    }
    pthread_cleanup_pop(0);
    pp_wait_finish(&x);
    pp_cancel_state(cancel_state);
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
    if (park_cond_destroy(&p->cond)) /* EBUSY while waiters are queued */
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
    park_cond_signal(&pp_of(c)->cond);
    return 0;
}
PP_EXPORT1(pp_cond_signal, pthread_cond_signal, "GLIBC_2.3.2")

int pp_cond_broadcast(pthread_cond_t *c)
{
    uint32_t w = pp_wrefs(c);
    if (!pp_is_managed(w))
        return pp_untouched(c, w) ? 0 : PP_REAL(pp_cond_fn, pthread_cond_broadcast)(c);
    park_cond_broadcast(&pp_of(c)->cond);
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
