/* lib/lazy.c: park_lazy and park_once, one state machine for both.
 * Design notes (late waiters, re-entrancy, the asynchronous factory):
 * docs/design/lazy.md; protocol model: tests/model/lazy.pml. The
 * asynchronous factory and park_lazy_get_async: lib/lazy_async.c; what
 * both share: lib/lazy_impl.h.
 *
 * State word (park_lazy_t.state_, park_once_t.state_), bits named in
 * park/lazy.h; bits 3-31 are 0, except in a child of fork(), where a run's
 * word carries the fork generation it started in (see "fork" below). An
 * asynchronous factory uses the same states, its task taking the place of
 * the initialiser.
 *
 *   READY    a run succeeded and its result is published; final
 *   RUNNING  an initialiser runs (or a factory's task is pending)
 *   WAITERS  callers are queued in lib/wait under the word's address
 *
 *   state             meaning
 *   0                 idle: never run, or the last run failed (zeroed
 *                     memory and the static initialisers)
 *   RUNNING           running, nobody queued
 *   RUNNING|WAITERS   running, callers queued behind the run
 *   READY             done: the value is published
 *
 * Transitions:
 *   start              0 -> RUNNING                CAS; the caller becomes the runner
 *   queue (validate)   RUNNING -> RUNNING|WAITERS  CAS, bucket locked
 *   succeed            RUNNING -> READY            CAS (nobody queued)
 *   fail               RUNNING -> 0                CAS (nobody queued)
 *   succeed, queued    RUNNING|WAITERS -> READY    store, bucket locked: every queued
 *                                                  caller granted 0
 *   fail, queued       RUNNING|WAITERS -> 0        store, bucket locked: every queued
 *                                                  caller granted the run's error
 *   last caller leaves RUNNING|WAITERS -> RUNNING  fetch_and, bucket locked (timeout)
 *
 * Only the runner moves the word out of RUNNING or RUNNING|WAITERS, and
 * while WAITERS is set only bucket-lock holders change it, so a run that
 * ends with callers queued grants them its result and stores the new state
 * under the bucket lock; they are woken after it is unlocked (rule 4). A
 * queued caller learns the outcome from its own grant, never from the
 * word, so a new run started right after a failure is never mistaken for
 * the failed one. The runner's last access to the object is the store that
 * ends the run (rule 9). */
#include <errno.h>
#include <pthread.h>

#include <park/lazy.h>

#include "async.h"
#include "lazy_impl.h"
#include "os/os.h"
#include "wait/fork.h"
#include "wait/wait.h"

#define READY PARK__LAZY_READY
#define RUNNING PARK__LAZY_RUNNING
#define WAITERS PARK__LAZY_WAITERS
#define IDLE 0u

/* ---- fork (docs/design/fork.md) -----------------------------------------
 *
 * In a child of fork() a run may belong to a thread (or a pool's task)
 * that is not there, and its callers would wait for it forever. So in a
 * child a run's word carries, above the state bits, the fork generation
 * (park__fork_gen) it started in; a blocking caller that finds a run of an
 * earlier generation starts it afresh (RUNNING|x -> RUNNING'|x, keeping
 * WAITERS for callers queued since), as glibc's pthread_once does. The
 * forking thread's own runs go on in the child: its child handler
 * re-stamps them. In a process that never forked the stamp is 0 and the
 * words are those above. */
#define STAMP_SHIFT 3

/* The word of a run started now: RUNNING, stamped in a child. */
static uint32_t running(void)
{
    return PARK__UNLIKELY(park__forked) ? RUNNING | park__fork_gen << STAMP_SHIFT : RUNNING;
}

/* s is a run of a thread that the fork left behind. */
static bool stale_run(uint32_t s)
{
    return PARK__UNLIKELY(park__forked) && (s & RUNNING) &&
           s >> STAMP_SHIFT != running() >> STAMP_SHIFT;
}

/* ---- re-entrancy ------------------------------------------------------- */

/* The runs this thread is inside, innermost first: a caller that finds its
 * object running and on this stack is inside its initialiser, and gets
 * EDEADLK instead of waiting for itself. */
struct run_frame {
    const uint32_t *state;
    struct run_frame *outer;
};

static _Thread_local struct run_frame *runs_on_this_thread;

bool park__lazy_running_here(const uint32_t *state)
{
    for (const struct run_frame *f = runs_on_this_thread; f; f = f->outer)
        if (f->state == state)
            return true;
    return false;
}

/* In the child, on the forking thread (after lib/wait's handler, which
 * counted this fork): its runs go on here, so they take the new stamp. */
static void lazy_fork_child(void)
{
    for (const struct run_frame *f = runs_on_this_thread; f; f = f->outer) {
        uint32_t *state = (uint32_t *)f->state;
        /* relaxed: the child has one thread. */
        __atomic_store_n(
            state, (__atomic_load_n(state, __ATOMIC_RELAXED) & (RUNNING | WAITERS)) | running(),
            __ATOMIC_RELAXED);
    }
}

__attribute__((constructor)) static void lazy_fork_register(void)
{
    pthread_atfork(NULL, NULL, lazy_fork_child);
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
    if (w->notify) {
        /* A task (lazy.c's only notified waiters): its value is copied
         * now, on the runner's thread before store_end, since the object
         * may be freed as soon as READY is published, before the task's
         * completion reads it (async_granted, lib/lazy_async.c). */
        struct park__lazy_queue_ctx *c = park__acq_waiter_ctx(w);
        c->value = e->err == 0 ? c->l->value_ : NULL;
    }
    return PARK__SELECT_GRANT;
}

static void store_end(void *ctx, bool more)
{
    struct end_ctx *e = ctx;
#ifdef PARK_DEBUG
    if (more)
        park__misuse("end_run", e->state, "a caller stayed queued after its run ended");
#else
    (void)more;
#endif
    /* RUNNING|WAITERS -> READY (succeed, queued) or RUNNING|WAITERS -> 0
     * (fail, queued). release: pairs with the acquire load of READY in every
     * get, or with the acquire CAS of the next start; the granted callers are
     * ordered by the bucket unlock and the release of their `woken`. The
     * runner's last access to the object. */
    __atomic_store_n(e->state, e->to, __ATOMIC_RELEASE);
}

/* Publishes a success or rolls a failure back, then tells the queued
 * callers. */
void park__lazy_end_run(uint32_t *state, int err)
{
    uint32_t to = err == 0 ? READY : IDLE;
    uint32_t s = running();
    /* RUNNING -> READY (succeed) or RUNNING -> 0 (fail); release: pairs with
     * the acquire load of READY in every get, or with the acquire CAS of the
     * next start. Fails only when WAITERS is set. */
    if (__atomic_compare_exchange_n(state, &s, to, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        return;
    struct end_ctx e = {.state = state, .to = to, .err = err};
    park__unpark(state, grant_result, store_end, &e);
}

/* Runs the initialiser on this thread; the caller made 0 -> RUNNING. */
static int run(uint32_t *state, int (*call)(void *ctx), void *ctx)
{
    struct run_frame f = {.state = state, .outer = runs_on_this_thread};
    runs_on_this_thread = &f;
    int err = call(ctx);
    runs_on_this_thread = f.outer;
    park__lazy_end_run(state, err);
    return err;
}

/* ---- waiting for a run ------------------------------------------------- */

static bool queue_validate(void *ctx)
{
    uint32_t *state = ((struct park__lazy_queue_ctx *)ctx)->state;
    uint32_t s = __atomic_load_n(state, __ATOMIC_RELAXED);
    while (s & RUNNING) {
        if (s & WAITERS)
            return true;
        /* RUNNING -> RUNNING|WAITERS; relaxed: the bucket lock orders it
         * against the end of the run under the lock; the runner's lock-free
         * end (a CAS from RUNNING) fails on it. */
        if (__atomic_compare_exchange_n(state, &s, s | WAITERS, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return true;
    }
    return false; /* the run ended before we were queued: look again */
}

static void queue_removed(void *ctx, bool more)
{
    uint32_t *state = ((struct park__lazy_queue_ctx *)ctx)->state;
    /* RUNNING|WAITERS -> RUNNING; relaxed: only WAITERS changes, under the
     * bucket lock. */
    if (!more)
        __atomic_fetch_and(state, ~WAITERS, __ATOMIC_RELAXED);
}

const park__wait_ops_t park__lazy_queue_ops = {
    .validate = queue_validate,
    .removed = queue_removed,
};

/* One budget for the whole process (see wait_for_run): objects have no
 * room for one of their own (a park_once_t is one word). A hint, read by
 * every waiter and written only when it changes. */
_Atomic uint8_t park__lazy_yields = PARK__ADAPT_MIN;

/* The caller found a run in progress (RUNNING or RUNNING|WAITERS). Queues
 * behind the run at once. true: *result is the run's result, EDEADLK or
 * ETIMEDOUT; false: the run ended before the caller was queued, look at the
 * word again. */
bool park__lazy_wait_for_run(uint32_t *state, park_time_t deadline, int *result)
{
    if (park__lazy_running_here(state)) {
        *result = EDEADLK;
        return true;
    }
    if (park__deadline_passed(deadline)) {
        *result = ETIMEDOUT;
        return true;
    }
    park__waiter_t w;
    park__waiter_init(&w, 0);
    /* No pauses, before queueing or after: an initialiser takes far
     * longer than a lock is held (a system call, an allocation, a file),
     * so a spin rarely sees the run end, and with more callers than CPUs
     * spinning callers take CPUs from the runner. Yields give the CPU to
     * the runner or to a caller still arriving, and a caller whose run
     * ends while it yields neither sleeps nor has to be woken (lib/wait
     * skips the batch's wake when none of its waiters sleeps): queued, it
     * yields as often as the process's adaptive budget says (lib/wait's
     * w->adapt), then sleeps (docs/design/lazy.md, Tuning). The validate
     * callback refuses if the run ended. */
    w.spin = 0;
    w.adapt = &park__lazy_yields;
    park__waiter_profile(&w, PARK_PROFILE_LAZY, PARK__PROFILE_ANY_GRANT);
    struct park__lazy_queue_ctx c = {.state = state};
    /* The run's waiters are released together: one wake for all. */
    switch (park__wait(state, &w, PARK__WAIT_BATCH, &park__lazy_queue_ops, &c, deadline)) {
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

bool park__lazy_start(uint32_t *state)
{
    uint32_t s = IDLE;
    /* start: 0 -> RUNNING; acquire: pairs with the release of the previous
     * run's rollback, so that runs never overlap. */
    return __atomic_compare_exchange_n(state, &s, running(), false, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED);
}

/* The machine: 0 once a run has succeeded (this call's or another's), or
 * the error of the run this call ran or waited for, EDEADLK or ETIMEDOUT.
 * An asynchronous factory's runs are started by park__lazy_factory_get
 * and park_lazy_get_async (lib/lazy_async.c) instead. */
static int obtain(uint32_t *state, park_time_t deadline, int (*call)(void *ctx), void *ctx)
{
    for (;;) {
        /* acquire: pairs with the release that publishes READY. */
        uint32_t s = __atomic_load_n(state, __ATOMIC_ACQUIRE);
        if (s & READY)
            return 0;
        if (s == IDLE) {
            if (park__lazy_start(state))
                return run(state, call, ctx);
            continue;
        }
        if (stale_run(s)) {
            /* restart (a forked child): RUNNING|x -> RUNNING'|x; acquire: as
             * start. */
            if (__atomic_compare_exchange_n(state, &s, (s & WAITERS) | running(), false,
                                            __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
                return run(state, call, ctx);
            continue;
        }
        int result;
        if (park__lazy_wait_for_run(state, deadline, &result))
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

int park__lazy_run(park_lazy_t *l, void **value)
{
    struct lazy_run r = {.l = l};
    int err = run(&l->state_, lazy_call, &r);
    *value = r.value;
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
    l->pool_ = NULL;
}

park__lazy_result_t park__lazy_get_slow(park_lazy_t *l, park_time_t deadline)
{
    park__lazy_result_t res = {.value = NULL, .err = EINVAL};
    if (!l->fn_)
        return res;
    if (l->pool_)
        return park__lazy_factory_get(l, deadline);
    struct lazy_run r = {.l = l};
    res.err = obtain(&l->state_, deadline, lazy_call, &r);
    /* Another caller's value is ordered by obtain's acquire of READY or
     * of our waiter's grant. */
    if (res.err == 0)
        res.value = r.ran ? r.value : l->value_;
    return res;
}

int park_lazy_get_until(park_lazy_t *l, void **value, park_time_t deadline)
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
    struct once_run r = {.fn = fn, .arg = arg};
    return obtain(&o->state_, PARK_FOREVER, once_call, &r);
}
