/* lib/lazy_async.c: park_lazy's asynchronous side (lib/async.h): the
 * asynchronous factory (park_lazy_init_async, and the blocking get of a
 * lazy made so) and park_lazy_get_async.
 * The machine they act on: lib/lazy.c; design notes: docs/design/lazy.md.
 *
 * park_lazy_init_async keeps the factory in fn_ (as another function type)
 * and its pool in pool_ (non-NULL marks the lazy asynchronous). The
 * caller that makes 0 -> RUNNING queues an acquisition of its own behind the
 * run first, then calls the factory; a continuation of the run's task ends
 * the run (park__lazy_end_run). Only the starter can end the run before that
 * continuation is registered, so the starter is always a caller of its own
 * run: a run that fails at once (no task, no continuation) fails for the
 * starter too, and it does not start another.
 *
 * An acquisition waits behind a run as a thread would, with the same
 * callbacks; the end of the run grants it the run's result. */
#include <errno.h>

#include "async.h"
#include "lazy_impl.h"
#include "os/os.h" /* park__misuse */

#define READY PARK__LAZY_READY
#define IDLE 0u

_Static_assert(sizeof(struct park__lazy_queue_ctx) <= PARK__ACQ_CTX_SIZE,
               "queue_ctx fits an acquisition");

/* ---- the asynchronous factory ----------------------------------------- */

static void factory_done(park_task_t *done, void *arg)
{
    park_lazy_t *l = arg;
    void *v = NULL;
    int err = park_task_result(done, &v);
    if (err == 0)
        l->value_ = v; /* published by park__lazy_end_run's release */
    park__lazy_end_run(&l->state_, err);
}

void park_lazy_init_async(park_lazy_t *l, park_pool_t *pool, park_lazy_async_fn fn, void *arg)
{
    /* relaxed: as in park_lazy_init. */
    __atomic_store_n(&l->state_, IDLE, __ATOMIC_RELAXED);
    l->value_ = NULL;
    l->fn_ = (park_lazy_fn)(void (*)(void))fn;
    l->arg_ = arg;
    l->pool_ = pool;
}

static int async_outcome(void *ctx, park__waiter_t *w)
{
    (void)ctx;
    return (int)(intptr_t)w->grant; /* the run's result (grant_result) */
}

static void *async_granted(void *ctx, park__waiter_t *w)
{
    (void)w;
    return ((struct park__lazy_queue_ctx *)ctx)->value; /* grant_result's copy */
}

/* No give_back: a value is not a permit, nothing to hand back. */
static const park__acq_ops_t async_ops = {
    .wait = &park__lazy_queue_ops, /* ctx: the struct park__lazy_queue_ctx inside the task */
    .outcome = async_outcome,
    .granted = async_granted,
};

/* An acquisition of l's run whose continuations run on pool; NULL on
 * ENOMEM. */
static park_task_t *acq_new(park_lazy_t *l, park_pool_t *pool)
{
    park_task_t *t = park__acq_new(pool, &async_ops, &l->state_, 0);
    if (t) {
        struct park__lazy_queue_ctx *c = park__acq_ctx(t);
        c->state = &l->state_;
        c->l = l;
    }
    return t;
}

/* Starts a run of l's factory if l is idle (0 -> RUNNING), with t, the
 * caller's fresh acquisition, queued behind it before the factory is called: t
 * completes with the run's outcome, also when the run cannot start (the
 * factory returned NULL: ENOMEM; its continuation could not be queued: EPIPE
 * from a pool shutting down, or ENOMEM). false: l was not idle, t is
 * untouched. */
static bool start_run(park_lazy_t *l, park_task_t *t)
{
    if (!park__lazy_start(&l->state_))
        return false;
    /* RUNNING -> RUNNING|WAITERS: validate cannot refuse, only this thread
     * ends the run. */
    if (park__acq_enqueue(t, 0) != PARK__WAIT_QUEUED)
        park__misuse("start_run", l, "the starter of a run could not queue behind it");
    park_pool_t *pool = l->pool_;
    park_task_t *run = ((park_lazy_async_fn)(void (*)(void))l->fn_)(l->arg_, pool);
    int err = ENOMEM; /* a factory that returns NULL */
    if (run) {
        err = park_task_then(run, pool, factory_done, l);
        park_task_release(run);
    }
    if (err)
        park__lazy_end_run(&l->state_, err); /* grants t and every caller queued meanwhile */
    return true;
}

park__lazy_result_t park__lazy_factory_get(park_lazy_t *l, park_time_t deadline)
{
    park__lazy_result_t res = {.value = NULL, .err = 0};
    for (;;) {
        /* acquire: pairs with the release that publishes READY. */
        uint32_t s = __atomic_load_n(&l->state_, __ATOMIC_ACQUIRE);
        if (s & READY) {
            res.value = l->value_;
            return res;
        }
        if (s == IDLE) {
            park_task_t *t = acq_new(l, l->pool_);
            if (!t) {
                res.err = ENOMEM;
                return res;
            }
            if (!start_run(l, t)) {
                park__acq_discard(t);
                continue;
            }
            /* A worker of the pool runs other work meanwhile (the run may
             * need it); ETIMEDOUT leaves the run going, and the release
             * takes t out of its queue. */
            res.err = park_task_wait_until(t, &res.value, deadline);
            park_task_release(t);
            if (res.err)
                res.value = NULL;
            return res;
        }
        if (park__lazy_wait_for_run(&l->state_, deadline, &res.err)) {
            /* Ordered by the acquire of our waiter's grant. */
            if (res.err == 0)
                res.value = l->value_;
            return res;
        }
    }
}

/* ---- park_lazy_get_async ------------------------------------------------ */

park_task_t *park_lazy_get_async(park_lazy_t *l, park_pool_t *pool)
{
    if (!l->fn_)
        return park__task_completed(EINVAL, NULL);
    for (park_task_t *t = NULL;;) {
        /* acquire: pairs with the release that publishes READY. */
        uint32_t s = __atomic_load_n(&l->state_, __ATOMIC_ACQUIRE);
        if (s & READY || (s == IDLE && !l->pool_)) {
            if (t)
                park__acq_discard(t);
            if (s & READY)
                return park__task_completed(0, l->value_);
            t = NULL;
            if (!park__lazy_start(&l->state_))
                continue;
            /* A synchronous initialiser runs on the first caller's thread,
             * this one: the task is complete on return. */
            void *value;
            int err = park__lazy_run(l, &value);
            return park__task_completed(err, value);
        }
        if (park__lazy_running_here(&l->state_)) {
            if (t)
                park__acq_discard(t);
            return park__task_completed(EDEADLK, NULL);
        }
        if (!t && !(t = acq_new(l, pool)))
            return NULL;
        if (s == IDLE ? start_run(l, t) : park__acq_enqueue(t, 0) == PARK__WAIT_QUEUED)
            return t;
    }
}
