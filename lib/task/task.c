/* lib/task/task.c: park_task, a one-shot completion with continuations
 * (the per-thread cache of its blocks is cache.c; the timer it arms for
 * delays and deadlines is a pool service, lib/pool/timer.c). Protocol
 * model (completion, cancel, the continuation list): tests/model/task.pml.
 *
 * State, in two words and a latch:
 *   claimed   0 -> 1       exchange: the one completer wins (the others
 *                          get EALREADY); it then writes err and result
 *   conts     list -> CLOSED   exchange by the completer: it takes the
 *                          registered continuations and shuts the list;
 *                          a registration CASes its node onto the list, or
 *                          finds CLOSED and schedules the node itself
 *   done      latch 0 -> SET   by the completer after writing the result,
 *                          before closing the list: everything that sees
 *                          it set (park_task_done/result/wait, and every
 *                          continuation) sees err and result
 *
 *   pending   claimed=0, conts=list, done=0
 *   claimed   claimed=1, conts=list, done=0   (the completer writes)
 *   complete  claimed=1, conts=CLOSED, done=SET
 *
 * A continuation node holds a reference to its task until it has run, and
 * the completer holds one for the whole completion (the caller's, or the
 * run's, the timer's, the combinator's), so nothing is freed under it.
 * Continuations are queued to their pool, never run here
 * (docs/design/README.md rule 4); thread waiters park on the latch in
 * lib/wait. The one exception
 * is internal: the steps of when_all / when_any (combine). */
#include <errno.h>
#include <stddef.h>

#include "os/os.h"
#include "pool/pool.h"
#include "task/task.h"
#include "wait/latch.h"
#include "wait/spin.h"

#define PERMANENT PARK__TASK_PERMANENT
#define USERS PARK__TASK_USERS
#define INTERNAL PARK__TASK_INTERNAL
#define HOLD PARK__TASK_HOLD

typedef struct park__cont cont_t;

struct park__cont {
    cont_t *next;
    void (*run)(cont_t *c);
    void (*fn)(park_task_t *done, void *arg);
    void *arg;
    park_task_t *task; /* the task it waits for (a reference) */
    park_pool_t *pool;
    size_t index;
};

_Static_assert(sizeof(cont_t) <= PARK__BLOCK_SIZE, "a continuation fits a block");

struct park__cont park__task_closed; /* task.h */
#define CLOSED (&park__task_closed)

/* ---- tasks ------------------------------------------------------------ */

park_task_t *park__task_alloc(park_pool_t *pool, uint32_t refs)
{
    park_task_t *t = park__block_alloc();
    if (!t)
        return NULL;
    atomic_init(&t->refs, refs);
    atomic_init(&t->claimed, 0);
    atomic_init(&t->conts, NULL);
    park__latch_init(&t->done);
    t->err = 0;
    t->result = NULL;
    t->pool = pool;
    t->kind = NULL;
    atomic_init(&t->observed, false);
#ifdef PARK_DEBUG
    t->magic = PARK__TASK_LIVE;
#endif
    return t;
}

void park__task_free(park_task_t *t)
{
#ifdef PARK_DEBUG
    t->magic = PARK__TASK_DEAD;
#endif
    park__block_free(t);
}

/* PARK_DEBUG: a public call on a task that is not live aborts with a
 * message naming the call. A released task stays recognisable while its
 * block is in the quarantine (cache.c); under ASan the read below is what
 * reports the use after release. */
#ifdef PARK_DEBUG
static void check_live(const park_task_t *t, const char *call)
{
    if (!t)
        park__misuse(call, t, "the task is NULL");
    if (t->magic == PARK__TASK_DEAD)
        park__misuse(call, t, "the task was released (its last reference is gone)");
    if (t->magic != PARK__TASK_LIVE)
        park__misuse(call, t, "not a task");
}
#define CHECK_LIVE(t, call) check_live((t), (call))
#else
#define CHECK_LIVE(t, call) ((void)0)
#endif

park_task_t *park_task_new(void)
{
    return park__task_alloc(NULL, 1);
}

park_task_t *park_task_retain(park_task_t *t)
{
    CHECK_LIVE(t, "park_task_retain");
    if (atomic_load_explicit(&t->refs, memory_order_relaxed) != PERMANENT)
        /* relaxed: the caller already holds a reference. */
        atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
    return t;
}

void park_task_release(park_task_t *t)
{
    if (!t)
        return;
    CHECK_LIVE(t, "park_task_release");
    uint32_t v = atomic_load_explicit(&t->refs, memory_order_relaxed);
    if (v == PERMANENT)
        return;
    if (t->kind) { /* read while we hold a reference */
        for (;;) {
            if ((v & USERS) == 1) {
                /* The last holder (a timer's or a queue's hold aside):
                 * nobody else can drop or take a reference now. An
                 * acquisition whose outcome nobody has seen is cancelled,
                 * or what it was granted is handed back, while ours keeps
                 * it alive. */
                if (!atomic_load_explicit(&t->observed, memory_order_relaxed))
                    t->kind->abandon(t);
                break;
            }
            /* Not the last: a CAS, so that two holders dropping at once
             * cannot both miss being the last. relaxed: as below, a
             * non-last release needs no ordering but the final one's. */
            if (atomic_compare_exchange_weak_explicit(&t->refs, &v, v - 1, memory_order_release,
                                                      memory_order_relaxed))
                return;
        }
    }
    /* acq_rel: the last release sees every other holder's writes. */
    if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1)
        park__task_free(t);
}

void park__task_hold(park_task_t *t)
{
    /* relaxed: whatever makes t reachable through the hold publishes it. */
    atomic_fetch_or_explicit(&t->refs, HOLD, memory_order_relaxed);
}

void park__task_drop_hold(park_task_t *t)
{
    /* acq_rel: as in park_task_release. */
    if (atomic_fetch_and_explicit(&t->refs, ~HOLD, memory_order_acq_rel) == HOLD)
        park__task_free(t);
}

static park_task_t *retain_internal(park_task_t *t)
{
    if (atomic_load_explicit(&t->refs, memory_order_relaxed) != PERMANENT)
        /* relaxed: the caller holds a reference. */
        atomic_fetch_add_explicit(&t->refs, INTERNAL, memory_order_relaxed);
    return t;
}

static void release_internal(park_task_t *t)
{
    if (atomic_load_explicit(&t->refs, memory_order_relaxed) == PERMANENT)
        return;
    /* acq_rel: as in park_task_release. */
    if (atomic_fetch_sub_explicit(&t->refs, INTERNAL, memory_order_acq_rel) == INTERNAL)
        park__task_free(t);
}

static void cont_job(void *arg)
{
    cont_t *c = arg;
    c->run(c);
    park_task_release(c->task);
    park__block_free(c);
}

static void schedule(cont_t *c)
{
    if (park__pool_schedule_next(c->pool, cont_job, c) != 0)
        /* No memory for the overflow list: running it here breaks the
         * "never inline" promise, dropping it would lose it. */
        cont_job(c);
}

/* The loser of a completion race: returns EALREADY once the winner's
 * outcome is visible, so that the loser sees it at once. The winner is a
 * few stores from publishing it: pause a little, then (it was preempted)
 * sleep on the done latch. */
static int lost(park_task_t *t)
{
    park__spin_t spin = park__spin_init(64, 0);
    while (!park__latch_is_set(&t->done) && park__spin(&spin))
        ;
    park__latch_wait(&t->done, PARK_FOREVER);
    return EALREADY;
}

int park__task_complete(park_task_t *t, int err, void *result)
{
    /* A plain look first: completing a completed task writes nothing (the
     * shared ready task is never written). relaxed: decided again below. */
    if (atomic_load_explicit(&t->claimed, memory_order_relaxed) ||
        /* acquire: keeps the writes below after the win. */
        atomic_exchange_explicit(&t->claimed, 1, memory_order_acquire))
        return lost(t);
    t->err = err;
    t->result = result;
    park__latch_set(&t->done); /* release: publishes err and result */
    /* acq_rel: acquire pairs with the release CAS of each registration (we
     * read its node); release is for registrations that find CLOSED. */
    cont_t *list = atomic_exchange_explicit(&t->conts, CLOSED, memory_order_acq_rel);
    cont_t *fifo = NULL;
    while (list) { /* registered newest first: reverse */
        cont_t *next = list->next;
        list->next = fifo;
        fifo = list;
        list = next;
    }
    while (fifo) {
        cont_t *next = fifo->next;
        if (fifo->pool)
            schedule(fifo);
        else
            cont_job(fifo); /* a combinator's step: see combine */
        fifo = next;
    }
    return 0;
}

int park_task_complete(park_task_t *t, int err, void *result)
{
    CHECK_LIVE(t, "park_task_complete");
    /* EINPROGRESS is park_task_result's "pending": no outcome. */
    if (err < 0 || err == EINPROGRESS)
        return EINVAL;
    return park__task_complete(t, err, result);
}

static void observe(const park_task_t *t);

int park__task_cancel(park_task_t *t, int err)
{
    if (t->kind)
        return t->kind->cancel(t, err);
    return park__task_complete(t, err, NULL);
}

int park_task_cancel(park_task_t *t)
{
    CHECK_LIVE(t, "park_task_cancel");
    int r = park__task_cancel(t, ECANCELED);
    if (r == EALREADY)
        observe(t); /* the caller learnt that the grant is its own */
    return r;
}

/* A task of a kind whose outcome was seen is the holder's to release. */
static void observe(const park_task_t *t)
{
    if (t->kind)
        /* relaxed: read by the same holder's last release. */
        atomic_store_explicit(&((park_task_t *)t)->observed, true, memory_order_relaxed);
}

bool park_task_done(const park_task_t *t)
{
    CHECK_LIVE(t, "park_task_done");
    if (!park__latch_is_set((park__latch_t *)&t->done))
        return false;
    observe(t);
    return true;
}

int park_task_result(const park_task_t *t, void **result)
{
    CHECK_LIVE(t, "park_task_result");
    if (!park_task_done(t))
        return EINPROGRESS;
    if (result)
        *result = t->result;
    return t->err;
}

int park_task_wait_until(park_task_t *t, void **result, park_time_t deadline)
{
    CHECK_LIVE(t, "park_task_wait_until");
    if (PARK__LIKELY(park_task_done(t)))
        return park_task_result(t, result);
    if (!park__pool_wait_latch(&t->done, deadline))
        return ETIMEDOUT;
    return park_task_result(t, result);
}

int park_task_wait(park_task_t *t, void **result)
{
    CHECK_LIVE(t, "park_task_wait");
    return park_task_wait_until(t, result, PARK_FOREVER);
}

/* Queues c on t's list, or schedules it if t has completed. */
static void attach(park_task_t *t, cont_t *c)
{
    /* acquire (load and failed CAS): pairs with the completer's exchange,
     * so a continuation scheduled here sees the result. */
    cont_t *head = atomic_load_explicit(&t->conts, memory_order_acquire);
    do {
        if (head == CLOSED) {
            if (c->pool)
                schedule(c);
            else
                cont_job(c);
            return;
        }
        c->next = head;
        /* release: pairs with the completer's exchange (it reads c). */
    } while (!atomic_compare_exchange_weak_explicit(&t->conts, &head, c, memory_order_release,
                                                    memory_order_acquire));
}

static cont_t *cont_new(park_task_t *t, park_pool_t *pool, void (*run)(cont_t *))
{
    cont_t *c = park__block_alloc();
    if (!c)
        return NULL;
    c->next = NULL;
    c->run = run;
    c->fn = NULL;
    c->arg = NULL;
    c->task = park_task_retain(t);
    observe(t); /* the continuation (or a combinator) will see the outcome */
    c->pool = pool;
    c->index = 0;
    return c;
}

static void run_user(cont_t *c)
{
    c->fn(c->task, c->arg);
}

int park_task_then(park_task_t *t, park_pool_t *pool, void (*fn)(park_task_t *done, void *arg),
                   void *arg)
{
    CHECK_LIVE(t, "park_task_then");
    if (!pool || !fn)
        return EINVAL; /* a continuation without a pool would run inline */
    if (park__pool_closing(pool))
        return EPIPE;
    cont_t *c = cont_new(t, pool, run_user);
    if (!c)
        return ENOMEM;
    c->fn = fn;
    c->arg = arg;
    attach(t, c);
    return 0;
}

/* A task already completed with err (for calls on a closing pool). */
static void run_job(void *arg)
{
    park_task_t *t = arg;
    /* relaxed: a cancel that comes first only saves the run; its claim is
     * decided again by park__task_complete. */
    if (!atomic_load_explicit(&t->claimed, memory_order_relaxed)) {
        void *result = NULL;
        int err = t->u.run.fn(t->u.run.arg, &result);
        park__task_complete(t, err, result);
    }
    park_task_release(t);
}

park_task_t *park_task_run(park_pool_t *pool, int (*fn)(void *arg, void **result), void *arg)
{
    if (!pool || !fn)
        return park__task_completed(EINVAL, NULL);
    if (park__pool_closing(pool))
        return park__task_completed(EPIPE, NULL);
    park_task_t *t = park__task_alloc(pool, 2); /* the caller's and the run's */
    if (!t)
        return NULL;
    t->u.run.fn = fn;
    t->u.run.arg = arg;
    if (park__pool_schedule(pool, run_job, t) != 0) {
        park__task_free(t);
        return NULL;
    }
    return t;
}

/* The timer's callbacks (lib/pool/timer.c): the timer holds an internal
 * reference to the task while it is armed. */
static void fire_delay(void *arg, int err)
{
    park__task_complete(arg, err, NULL);
    release_internal(arg);
}

static void fire_deadline(void *arg, int err)
{
    park__task_cancel(arg, err ? err : ETIMEDOUT); /* a kind leaves its queue */
    release_internal(arg);
}

static int arm(park_pool_t *pool, park_task_t *t, park_time_t when, void (*fire)(void *, int))
{
    int err = park__timer_arm(pool, when, fire, retain_internal(t));
    if (err)
        release_internal(t); /* the caller's reference keeps t */
    return err;
}

int park__task_deadline(park_task_t *t, park_pool_t *pool, park_time_t deadline)
{
    return arm(pool, t, deadline, fire_deadline);
}

park_task_t *park_task_delay(park_pool_t *pool, uint64_t ns)
{
    if (!pool)
        return park__task_completed(EINVAL, NULL); /* no timer */
    park_task_t *t = park__task_alloc(pool, 1);
    if (!t)
        return NULL;
    int err = arm(pool, t, park_deadline_in(ns), fire_delay);
    if (err == ENOMEM) {
        park__task_free(t);
        return NULL;
    }
    if (err)
        park__task_complete(t, err, NULL);
    return t;
}

int park_task_cancel_at_on(park_task_t *t, park_pool_t *pool, park_time_t deadline)
{
    CHECK_LIVE(t, "park_task_cancel_at_on");
    if (park_task_done(t))
        return EALREADY;
    if (!pool)
        return EINVAL;
    return park__task_deadline(t, pool, deadline);
}

int park_task_cancel_at(park_task_t *t, park_time_t deadline)
{
    CHECK_LIVE(t, "park_task_cancel_at");
    return park_task_cancel_at_on(t, t->pool, deadline);
}

/* ---- combinators -------------------------------------------------------- */

static void when_all_step(cont_t *c)
{
    park_task_t *all = c->arg;
    int err = c->task->err; /* complete: the latch was set before scheduling */
    int zero = 0;
    if (err)
        atomic_compare_exchange_strong_explicit(&all->u.combine.first_err, &zero, err,
                                                memory_order_relaxed, memory_order_relaxed);
    /* acq_rel: the last step sees every step's first_err write. */
    if (atomic_fetch_sub_explicit(&all->u.combine.remaining, 1, memory_order_acq_rel) == 1)
        park__task_complete(
            all, atomic_load_explicit(&all->u.combine.first_err, memory_order_relaxed), NULL);
    park_task_release(all);
}

static void when_any_step(cont_t *c)
{
    park_task_t *any = c->arg;
    park__task_complete(any, 0, (void *)(uintptr_t)c->index);
    park_task_release(any);
}

static park_task_t *combine(park_pool_t *pool, park_task_t *const *ts, size_t n,
                            void (*step)(cont_t *), int empty_err)
{
    if (!pool || (n && !ts))
        return park__task_completed(EINVAL, NULL);
    if (park__pool_closing(pool))
        return park__task_completed(EPIPE, NULL);
    park_task_t *c = park__task_alloc(pool, 1);
    if (!c)
        return NULL;
    if (n == 0) {
        park__task_complete(c, empty_err, NULL);
        return c;
    }
    atomic_init(&c->u.combine.remaining, n);
    atomic_init(&c->u.combine.first_err, 0);
    /* The steps are the library's own bookkeeping, not user code: they run
     * within the call that completes an input (pool NULL), so "first" is
     * the order of completion, and they only complete the combined task,
     * whose continuations are queued as usual. Allocate every node first,
     * so that ENOMEM leaves nothing attached. */
    cont_t *nodes = NULL;
    for (size_t i = 0; i < n; i++) {
        cont_t *k = cont_new(ts[i], NULL, step);
        if (!k) {
            while (nodes) {
                cont_t *next = nodes->next;
                park_task_release(nodes->task);
                park__block_free(nodes);
                nodes = next;
            }
            park__task_free(c);
            return NULL;
        }
        k->arg = park_task_retain(c);
        k->index = i;
        k->next = nodes;
        nodes = k;
    }
    while (nodes) {
        cont_t *next = nodes->next;
        attach(nodes->task, nodes);
        nodes = next;
    }
    return c;
}

park_task_t *park_task_when_all(park_pool_t *pool, park_task_t *const *ts, size_t n)
{
    return combine(pool, ts, n, when_all_step, 0);
}

park_task_t *park_task_when_any(park_pool_t *pool, park_task_t *const *ts, size_t n)
{
    return combine(pool, ts, n, when_any_step, EINVAL);
}

/* ---- completed tasks ------------------------------------------------------ */

static park_task_t ready = PARK__TASK_READY_INIT(NULL);

park_task_t *park__task_ready(void)
{
    return &ready;
}

park_task_t *park__task_completed(int err, void *result)
{
    park_task_t *t = park__task_alloc(NULL, 1);
    if (t)
        park__task_complete(t, err, result);
    return t;
}
