/* lib/lazy.c: park_lazy and park_once, one state machine for both.
 *
 * State word (park_lazy_t.state_, park_once_t.state_), bits named in
 * park/lazy.h; bits 3-31 are 0, reserved for the asynchronous factory:
 *
 *   READY    a run succeeded and its result is published; final
 *   RUNNING  an initialiser runs, on the thread that set RUNNING
 *   WAITERS  callers are queued in lib/wait under the object's address
 *
 *   state      meaning
 *   0          idle: never run, or the last run failed (zeroed memory and
 *              the static initialisers)
 *   R          running, nobody queued
 *   R|W        running, callers queued behind the run
 *   D          done (READY): the value is published
 *
 * Transitions:
 *   start              0 -> R        CAS; the caller becomes the runner
 *   queue (validate)   R -> R|W      CAS, bucket locked
 *   succeed            R -> D        CAS (nobody queued)
 *   fail               R -> 0        CAS (nobody queued)
 *   succeed, queued    R|W -> D      store, bucket locked: every queued
 *                                    caller granted 0
 *   fail, queued       R|W -> 0      store, bucket locked: every queued
 *                                    caller granted the run's error
 *   last caller leaves R|W -> R      fetch_and, bucket locked (timeout)
 *
 * Only the runner moves the word out of R or R|W, and while W is set only
 * bucket-lock holders change it, so a run that ends with callers queued
 * decides and stores under the bucket lock: park__unpark grants every
 * queued caller the run's result (w->grant: 0 or the error), then stores
 * the new state, and only after the bucket is unlocked are they woken
 * (DESIGN.md rule 4). Every caller queued then belongs to this run:
 * validate queues a caller only while the word says R or R|W, under the
 * same lock.
 *
 * Late waiters of a failed run. A queued caller learns its run's outcome
 * from its own waiter node's grant, never by re-reading the state word.
 * So a new run, started as soon as a failure has rolled the word back to
 * 0 and possibly before the failed run's callers have even woken, cannot
 * be mistaken by them for the failed one: they return the error they were
 * granted. A caller that was not queued when the run ended (still
 * spinning, or not yet at validate) finds 0 and starts the next run
 * itself; it never joined the failed run.
 *
 * Re-entrancy. Each runner pushes a frame naming the object onto a
 * thread-local stack for the duration of its initialiser (initialisers of
 * other objects may nest). A caller that finds the object running looks
 * for it on its own thread's stack: found, the call is from inside that
 * initialiser and returns EDEADLK instead of waiting for itself.
 *
 * Destruction safety (rule 9): the runner's last access to the object is
 * the store that ends the run (the CAS, or the store under the bucket
 * lock); it hands its own caller the value from a local. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <park/lazy.h>

#include "os/os.h"
#include "wait/wait.h"

#define READY PARK__LAZY_READY
#define RUNNING PARK__LAZY_RUNNING
#define WAITERS PARK__LAZY_WAITERS
#define IDLE 0u

#define SPIN 64 /* loads of a running object's word before queueing */

/* ---- re-entrancy ------------------------------------------------------- */

/* The runs this thread is inside, innermost first. */
struct run_frame {
    const uint32_t *state;
    struct run_frame *outer;
};

static _Thread_local struct run_frame *runs_on_this_thread;

static bool running_here(const uint32_t *state)
{
    for (const struct run_frame *f = runs_on_this_thread; f; f = f->outer)
        if (f->state == state)
            return true;
    return false;
}

/* ---- ending a run ------------------------------------------------------ */

struct end_ctx {
    uint32_t *state;
    uint32_t to; /* READY or IDLE */
    int err;
};

static unsigned grant_result(void *ctx, park__waiter_t *w)
{
    struct end_ctx *e = ctx;
    w->grant = (uintptr_t)(intptr_t)e->err;
    return PARK__SELECT_GRANT;
}

static void store_end(void *ctx, bool more)
{
    struct end_ctx *e = ctx;
#ifdef PARK_DEBUG
    if (more) {
        fprintf(stderr, "park: lazy %p: a caller stayed queued after its run ended\n",
                (void *)e->state);
        abort();
    }
#else
    (void)more;
#endif
    /* R|W -> D (succeed, queued) or R|W -> 0 (fail, queued). release:
     * pairs with the acquire load of READY in every get, or with the
     * acquire CAS of the next start; the granted callers are ordered by
     * the bucket unlock and the release of their `woken`. The runner's
     * last access to the object. */
    __atomic_store_n(e->state, e->to, __ATOMIC_RELEASE);
}

/* Publishes a success or rolls a failure back, then tells the queued
 * callers. */
static void end_run(uint32_t *state, int err)
{
    uint32_t to = err == 0 ? READY : IDLE;
    uint32_t s = RUNNING;
    /* R -> D (succeed) or R -> 0 (fail); release: pairs with the acquire
     * load of READY in every get, or with the acquire CAS of the next
     * start. Fails only when W is set. */
    if (__atomic_compare_exchange_n(state, &s, to, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        return;
    struct end_ctx e = {state, to, err};
    park__unpark(state, grant_result, store_end, &e);
}

/* Runs the initialiser on this thread; the caller made 0 -> R. */
static int run(uint32_t *state, int (*call)(void *ctx), void *ctx)
{
    struct run_frame f = {state, runs_on_this_thread};
    runs_on_this_thread = &f;
    int err = call(ctx);
    runs_on_this_thread = f.outer;
    end_run(state, err);
    return err;
}

/* ---- waiting for a run ------------------------------------------------- */

static bool queue_validate(void *ctx)
{
    uint32_t *state = ctx;
    uint32_t s = __atomic_load_n(state, __ATOMIC_RELAXED);
    while (s & RUNNING) {
        if (s & WAITERS)
            return true;
        /* R -> R|W; relaxed: the bucket lock orders it against the end of
         * the run under the lock; the runner's lock-free end (a CAS from
         * R) fails on it. */
        if (__atomic_compare_exchange_n(state, &s, s | WAITERS, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return true;
    }
    return false; /* the run ended before we were queued: look again */
}

static void queue_removed(void *ctx, bool more)
{
    uint32_t *state = ctx;
    if (!more) /* R|W -> R; relaxed: only W changes, under the bucket lock */
        __atomic_fetch_and(state, ~WAITERS, __ATOMIC_RELAXED);
}

static const park__wait_ops_t queue_ops = {queue_validate, queue_removed, NULL};

/* The caller found a run in progress (s: R or R|W). Spins briefly while
 * nobody is queued, then queues behind the run. true: *result is the
 * run's result, EDEADLK or ETIMEDOUT; false: the run ended before the
 * caller was queued, look at the word again. */
static bool wait_for_run(uint32_t *state, uint32_t s, park_time_t deadline, int *result)
{
    if (running_here(state)) {
        *result = EDEADLK;
        return true;
    }
    for (int i = 0; i < SPIN && s == RUNNING; i++) {
        park__os_pause();
        /* relaxed: only a hint; the caller re-reads with acquire. */
        s = __atomic_load_n(state, __ATOMIC_RELAXED);
    }
    if (!(s & RUNNING))
        return false;
    if (deadline != PARK_FOREVER && park_now() >= deadline) {
        *result = ETIMEDOUT;
        return true;
    }
    park__waiter_t w;
    park__waiter_init(&w, 0);
    switch (park__wait(state, &w, 0, &queue_ops, state, deadline)) {
    case PARK__WAIT_GRANTED:
        *result = (int)(intptr_t)w.grant;
        return true;
    case PARK__WAIT_TIMEDOUT:
        *result = ETIMEDOUT;
        return true;
    default:
        return false;
    }
}

/* The machine: 0 once a run has succeeded (this call's or another's), or
 * the error of the run this call ran or waited for, EDEADLK or ETIMEDOUT. */
static int obtain(uint32_t *state, park_time_t deadline, int (*call)(void *ctx), void *ctx)
{
    for (;;) {
        /* acquire: pairs with the release that publishes READY. */
        uint32_t s = __atomic_load_n(state, __ATOMIC_ACQUIRE);
        if (s & READY)
            return 0;
        if (s == IDLE) {
            /* start: 0 -> R; acquire: pairs with the release of the
             * previous run's rollback, so that runs never overlap. */
            if (__atomic_compare_exchange_n(state, &s, RUNNING, false, __ATOMIC_ACQUIRE,
                                            __ATOMIC_RELAXED))
                return run(state, call, ctx);
            continue;
        }
        int result;
        if (wait_for_run(state, s, deadline, &result))
            return result;
    }
}

/* ---- park_lazy --------------------------------------------------------- */

struct lazy_run {
    park_lazy_t *l;
    void *value; /* this call's successful run's value */
    bool ran;
};

static int lazy_call(void *ctx)
{
    struct lazy_run *r = ctx;
    void *v = NULL;
    int err = r->l->fn_(r->l->arg_, &v);
    if (err == 0) {
        /* Published by end_run's release. */
        r->l->value_ = v;
        r->value = v;
        r->ran = true;
    }
    return err;
}

void park_lazy_init(park_lazy_t *l, park_lazy_fn fn, void *arg)
{
    /* relaxed: nobody uses *l meanwhile; whatever hands *l to other
     * threads orders these stores. */
    __atomic_store_n(&l->state_, IDLE, __ATOMIC_RELAXED);
    l->value_ = NULL;
    l->fn_ = fn;
    l->arg_ = arg;
    l->reserved_ = NULL;
}

park__lazy_result_t park__lazy_get_slow(park_lazy_t *l, park_time_t deadline)
{
    park__lazy_result_t res = {NULL, EINVAL};
    if (!l->fn_)
        return res;
    struct lazy_run r = {l, NULL, false};
    res.err = obtain(&l->state_, deadline, lazy_call, &r);
    /* Another caller's value is ordered by obtain's acquire of READY or
     * of our waiter's grant. */
    if (res.err == 0)
        res.value = r.ran ? r.value : l->value_;
    return res;
}

int park_lazy_get_until(park_lazy_t *l, park_time_t deadline, void **value)
{
    /* acquire: pairs with the release that publishes READY. */
    if (__atomic_load_n(&l->state_, __ATOMIC_ACQUIRE) & READY) {
        *value = l->value_;
        return 0;
    }
    park__lazy_result_t r = park__lazy_get_slow(l, deadline);
    if (r.err == 0)
        *value = r.value;
    return r.err;
}

bool park_lazy_ready(const park_lazy_t *l)
{
    /* acquire: pairs with the release that publishes READY. */
    return (__atomic_load_n(&l->state_, __ATOMIC_ACQUIRE) & READY) != 0;
}

/* ---- park_once --------------------------------------------------------- */

struct once_run {
    park_once_fn fn;
    void *arg;
};

static int once_call(void *ctx)
{
    struct once_run *r = ctx;
    return r->fn(r->arg);
}

int park__once_slow(park_once_t *o, park_once_fn fn, void *arg)
{
    if (!fn)
        return EINVAL;
    struct once_run r = {fn, arg};
    return obtain(&o->state_, PARK_FOREVER, once_call, &r);
}
