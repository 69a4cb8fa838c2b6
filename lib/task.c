/* lib/task.c: park_task, a one-shot completion with continuations.
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
 * Continuations are queued to their pool, never run here (DESIGN.md
 * rule 4); thread waiters park on the latch in lib/wait. The one exception
 * is internal: the steps of when_all / when_any (combine). */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "async.h"
#include "os/os.h"
#include "pool/pool.h"

#define PERMANENT UINT32_MAX /* refs of a shared, never freed task */
/* refs: the holders' references (USERS: callers, continuations), the
 * library's own (INTERNAL: a timer's), and HOLD (a queue holds the
 * acquisition). Only the holders' count decides "the last reference". */
#define USERS 0x00ffffffu
#define INTERNAL 0x01000000u
#define HOLD 0x80000000u

typedef struct cont cont_t;

struct park_task {
    _Atomic uint32_t refs;
    _Atomic uint32_t claimed;
    _Atomic(cont_t *) conts;
    park__latch_t done;
    int err;
    void *result;
    park_pool_t *pool; /* the pool it was made for, or NULL */
    int (*fn)(void *arg, void **result);
    void *arg;
    /* when_all / when_any */
    _Atomic size_t remaining;
    _Atomic int first_err;
    /* Acquisitions (lib/async.h); acq is NULL for other tasks. */
    const park__acq_ops_t *acq;
    const void *acq_key;
    _Atomic uint32_t acq_state;
    _Atomic bool observed; /* someone looked at the outcome */
    park__waiter_t waiter;
    _Alignas(8) unsigned char acq_ctx[PARK__ACQ_CTX_SIZE];
};

/* acq_state: who decided the fate of a queued acquisition. */
enum { ACQ_QUEUED, ACQ_GRANTED, ACQ_CANCELLED, ACQ_ABANDONED };

struct cont {
    cont_t *next;
    void (*run)(cont_t *c);
    void (*fn)(park_task_t *done, void *arg);
    void *arg;
    park_task_t *task; /* the task it waits for (a reference) */
    park_pool_t *pool;
    size_t index;
};

static cont_t closed_sentinel;
#define CLOSED (&closed_sentinel)

/* ---- the per-thread cache of blocks (tasks and continuation nodes) ---- */

#define BLOCK 256
#define CACHE_MAX 512

_Static_assert(sizeof(park_task_t) <= BLOCK, "a task fits a block");
_Static_assert(sizeof(cont_t) <= BLOCK, "a continuation fits a block");

typedef union block {
    union block *next;
    _Alignas(64) unsigned char bytes[BLOCK];
} block_t;

typedef struct cache {
    block_t *head;
    unsigned n;
} cache_t;

static _Thread_local cache_t cache;
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void cache_drain(void *arg)
{
    cache_t *c = arg;
    while (c->head) {
        block_t *b = c->head;
        c->head = b->next;
        free(b);
    }
    c->n = 0;
}

static void cache_key_create(void)
{
    (void)pthread_key_create(&cache_key, cache_drain);
}

/* The depot: whole batches of blocks that threads with too many (workers
 * that free what producers made) pass to threads with none (producers),
 * one lock round trip per BATCH_BLOCKS blocks instead of a malloc and a
 * free per task. */
#define BATCH_BLOCKS 64
#define DEPOT_MAX 64 /* batches kept; beyond, blocks go back to malloc */

static park_mutex_t depot_lock = PARK_MUTEX_INIT;
static block_t *depot[DEPOT_MAX]; /* chains of BATCH_BLOCKS blocks */
static unsigned depot_n;

static void cache_register(void)
{
    /* The first block cached on this thread: free the cache when it exits. */
    pthread_once(&cache_once, cache_key_create);
    pthread_setspecific(cache_key, &cache);
}

static void *block_alloc(void)
{
    block_t *b = cache.head;
    if (PARK__LIKELY(b)) {
        cache.head = b->next;
        cache.n--;
        return b;
    }
    park_mutex_lock(&depot_lock);
    b = depot_n ? depot[--depot_n] : NULL;
    park_mutex_unlock(&depot_lock);
    if (b) {
        cache_register();
        cache.head = b->next;
        cache.n = BATCH_BLOCKS - 1;
        return b;
    }
    if (posix_memalign((void **)&b, 64, sizeof *b) != 0)
        return NULL;
    return b;
}

static void block_free(void *p)
{
    block_t *b = p;
    if (PARK__UNLIKELY(cache.n >= CACHE_MAX)) {
        /* Pass a batch to the depot (or to malloc if the depot is full). */
        block_t *chain = cache.head, *last = chain;
        for (unsigned i = 1; i < BATCH_BLOCKS; i++)
            last = last->next;
        cache.head = last->next;
        cache.n -= BATCH_BLOCKS;
        last->next = NULL;
        park_mutex_lock(&depot_lock);
        bool kept = depot_n < DEPOT_MAX;
        if (kept)
            depot[depot_n++] = chain;
        park_mutex_unlock(&depot_lock);
        if (!kept) {
            cache_t spill = {chain, BATCH_BLOCKS};
            cache_drain(&spill);
        }
    }
    if (PARK__UNLIKELY(!cache.head && cache.n == 0))
        cache_register();
    b->next = cache.head;
    cache.head = b;
    cache.n++;
}

/* ---- tasks ------------------------------------------------------------ */

static park_task_t *task_alloc(park_pool_t *pool, uint32_t refs)
{
    park_task_t *t = block_alloc();
    if (!t)
        return NULL;
    atomic_init(&t->refs, refs);
    atomic_init(&t->claimed, 0);
    atomic_init(&t->conts, NULL);
    park__latch_init(&t->done);
    t->err = 0;
    t->result = NULL;
    t->pool = pool;
    t->fn = NULL;
    t->arg = NULL;
    atomic_init(&t->remaining, 0);
    atomic_init(&t->first_err, 0);
    t->acq = NULL;
    return t;
}

park_task_t *park_task_new(void)
{
    return task_alloc(NULL, 1);
}

park_task_t *park_task_retain(park_task_t *t)
{
    if (atomic_load_explicit(&t->refs, memory_order_relaxed) != PERMANENT)
        /* relaxed: the caller already holds a reference. */
        atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
    return t;
}

static void acq_abandon(park_task_t *t);

void park_task_release(park_task_t *t)
{
    uint32_t v = atomic_load_explicit(&t->refs, memory_order_relaxed);
    if (v == PERMANENT)
        return;
    if (t->acq) { /* read while we hold a reference */
        for (;;) {
            if ((v & USERS) == 1) {
                /* The last holder (a timer's or a queue's hold aside):
                 * nobody else can drop or take a reference now. An
                 * acquisition whose outcome nobody has seen is cancelled,
                 * or what it was granted is handed back, while ours keeps
                 * it alive. */
                if (!atomic_load_explicit(&t->observed, memory_order_relaxed))
                    acq_abandon(t);
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
        block_free(t);
}

/* Drops the queue's hold on an acquisition (lib/async.h). */
static void drop_hold(park_task_t *t)
{
    /* acq_rel: as in park_task_release. */
    if (atomic_fetch_and_explicit(&t->refs, ~HOLD, memory_order_acq_rel) == HOLD)
        block_free(t);
}

park_task_t *park__task_retain_internal(park_task_t *t)
{
    if (atomic_load_explicit(&t->refs, memory_order_relaxed) != PERMANENT)
        /* relaxed: the caller holds a reference. */
        atomic_fetch_add_explicit(&t->refs, INTERNAL, memory_order_relaxed);
    return t;
}

void park__task_release_internal(park_task_t *t)
{
    if (atomic_load_explicit(&t->refs, memory_order_relaxed) == PERMANENT)
        return;
    /* acq_rel: as in park_task_release. */
    if (atomic_fetch_sub_explicit(&t->refs, INTERNAL, memory_order_acq_rel) == INTERNAL)
        block_free(t);
}

static void cont_job(void *arg)
{
    cont_t *c = arg;
    c->run(c);
    park_task_release(c->task);
    block_free(c);
}

static void schedule(cont_t *c)
{
    if (park__pool_schedule(c->pool, cont_job, c) != 0)
        /* No memory for the overflow list: running it here breaks the
         * "never inline" promise, dropping it would lose it. */
        cont_job(c);
}

/* The loser of a completion race: returns EALREADY once the winner's
 * outcome is visible, so that the loser sees it at once (the winner is a
 * few stores from publishing it). */
static int lost(const park_task_t *t)
{
    for (unsigned n = 0; !park__latch_is_set((park__latch_t *)&t->done); n++) {
        if (n < 64)
            park__os_pause();
        else
            park__os_yield(); /* the winner was preempted */
    }
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
    return park__task_complete(t, err, result);
}

static int acq_cancel(park_task_t *t, int err);
static void observe(const park_task_t *t);

int park__task_cancel(park_task_t *t, int err)
{
    if (t->acq)
        return acq_cancel(t, err);
    return park__task_complete(t, err, NULL);
}

int park_task_cancel(park_task_t *t)
{
    int r = park__task_cancel(t, ECANCELED);
    if (r == EALREADY)
        observe(t); /* the caller learnt that the grant is its own */
    return r;
}

/* An acquisition whose outcome was seen is the holder's to release. */
static void observe(const park_task_t *t)
{
    if (t->acq)
        /* relaxed: read by the same holder's last release. */
        atomic_store_explicit(&((park_task_t *)t)->observed, true, memory_order_relaxed);
}

bool park_task_done(const park_task_t *t)
{
    if (!park__latch_is_set((park__latch_t *)&t->done))
        return false;
    observe(t);
    return true;
}

int park_task_result(const park_task_t *t, void **result)
{
    if (!park_task_done(t))
        return EINPROGRESS;
    if (result)
        *result = t->result;
    return t->err;
}

int park_task_wait_until(park_task_t *t, park_time_t deadline, void **result)
{
    if (PARK__LIKELY(park_task_done(t)))
        return park_task_result(t, result);
    if (!park__pool_wait_latch(&t->done, deadline))
        return ETIMEDOUT;
    return park_task_result(t, result);
}

int park_task_wait(park_task_t *t, void **result)
{
    return park_task_wait_until(t, PARK_FOREVER, result);
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
    cont_t *c = block_alloc();
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

static bool closing(park_pool_t *pool)
{
    /* acquire: as in park_pool_submit. */
    return atomic_load_explicit(&pool->closing, memory_order_acquire);
}

static void run_user(cont_t *c)
{
    c->fn(c->task, c->arg);
}

int park_task_then(park_task_t *t, park_pool_t *pool, void (*fn)(park_task_t *done, void *arg),
                   void *arg)
{
    if (closing(pool))
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
static park_task_t *completed(park_pool_t *pool, int err)
{
    park_task_t *t = task_alloc(pool, 1);
    if (t)
        park__task_complete(t, err, NULL);
    return t;
}

static void run_job(void *arg)
{
    park_task_t *t = arg;
    /* relaxed: a cancel that comes first only saves the run; its claim is
     * decided again by park__task_complete. */
    if (!atomic_load_explicit(&t->claimed, memory_order_relaxed)) {
        void *result = NULL;
        int err = t->fn(t->arg, &result);
        park__task_complete(t, err, result);
    }
    park_task_release(t);
}

park_task_t *park_task_run(park_pool_t *pool, int (*fn)(void *arg, void **result), void *arg)
{
    if (closing(pool))
        return completed(pool, EPIPE);
    park_task_t *t = task_alloc(pool, 2); /* the caller's and the run's */
    if (!t)
        return NULL;
    t->fn = fn;
    t->arg = arg;
    if (park__pool_schedule(pool, run_job, t) != 0) {
        block_free(t);
        return NULL;
    }
    return t;
}

park_task_t *park_task_delay(park_pool_t *pool, uint64_t ns)
{
    park_task_t *t = task_alloc(pool, 1);
    if (!t)
        return NULL;
    int err = park__timer_arm(pool, t, park_deadline_in(ns), PARK__TIMER_DELAY);
    if (err == ENOMEM) {
        block_free(t);
        return NULL;
    }
    if (err)
        park__task_complete(t, err, NULL);
    return t;
}

int park_task_cancel_at_on(park_task_t *t, park_pool_t *pool, park_time_t deadline)
{
    if (park_task_done(t))
        return EALREADY;
    if (!pool)
        return EINVAL;
    return park__timer_arm(pool, t, deadline, PARK__TIMER_DEADLINE);
}

int park_task_cancel_at(park_task_t *t, park_time_t deadline)
{
    return park_task_cancel_at_on(t, t->pool, deadline);
}

/* ---- combinators -------------------------------------------------------- */

static void when_all_step(cont_t *c)
{
    park_task_t *all = c->arg;
    int err = c->task->err; /* complete: the latch was set before scheduling */
    int zero = 0;
    if (err)
        atomic_compare_exchange_strong_explicit(&all->first_err, &zero, err, memory_order_relaxed,
                                                memory_order_relaxed);
    /* acq_rel: the last step sees every step's first_err write. */
    if (atomic_fetch_sub_explicit(&all->remaining, 1, memory_order_acq_rel) == 1)
        park__task_complete(all, atomic_load_explicit(&all->first_err, memory_order_relaxed), NULL);
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
    if (closing(pool))
        return completed(pool, EPIPE);
    park_task_t *c = task_alloc(pool, 1);
    if (!c)
        return NULL;
    if (n == 0) {
        park__task_complete(c, empty_err, NULL);
        return c;
    }
    atomic_init(&c->remaining, n);
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
                block_free(nodes);
                nodes = next;
            }
            block_free(c);
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

/* ---- acquisitions (lib/async.h) ------------------------------------------ */

static park_task_t ready = {
    .refs = PERMANENT,
    .claimed = 1,
    .conts = CLOSED,
    .done = {PARK__LATCH_SET},
};

park_task_t *park__task_ready(void)
{
    return &ready;
}

park_task_t *park__task_completed(int err, void *result)
{
    park_task_t *t = task_alloc(NULL, 1);
    if (t)
        park__task_complete(t, err, result);
    return t;
}

static park_task_t *task_of_waiter(park__waiter_t *w)
{
    return (park_task_t *)((char *)w - offsetof(park_task_t, waiter));
}

/* The waiter's notify: the grant was made (bucket lock released). */
static void acq_notify(park__waiter_t *w)
{
    park_task_t *t = task_of_waiter(w);
    const park__acq_ops_t *ops = t->acq;
    /* acq_rel: pairs with the exchange in acq_abandon. */
    int err = ops->outcome ? ops->outcome(t->acq_ctx, w) : 0;
    if (atomic_exchange_explicit(&t->acq_state, ACQ_GRANTED, memory_order_acq_rel) ==
        ACQ_ABANDONED) {
        if (err == 0)
            ops->give_back(t->acq_ctx, w);
    } else {
        void *result = err == 0 && ops->granted ? ops->granted(t->acq_ctx, w) : NULL;
        park__task_complete(t, err, result);
    }
    drop_hold(t);
}

park_task_t *park__acq_new(park_pool_t *pool, const park__acq_ops_t *ops, const void *key,
                           uintptr_t want)
{
    park_task_t *t = task_alloc(pool, 1);
    if (!t)
        return NULL;
    t->acq = ops;
    t->acq_key = key;
    atomic_init(&t->acq_state, ACQ_QUEUED);
    atomic_init(&t->observed, false);
    park__waiter_init(&t->waiter, want);
    t->waiter.notify = acq_notify;
    memset(t->acq_ctx, 0, sizeof t->acq_ctx);
    return t;
}

void *park__acq_ctx(park_task_t *t)
{
    return t->acq_ctx;
}

park__waiter_t *park__acq_waiter(park_task_t *t)
{
    return &t->waiter;
}

int park__acq_enqueue(park_task_t *t, unsigned flags)
{
    /* The queue's hold, taken before the waiter can be granted. relaxed:
     * the bucket lock publishes it with the waiter. */
    atomic_fetch_or_explicit(&t->refs, HOLD, memory_order_relaxed);
    /* since stays 0: an asynchronous waiter is always handed its grant,
     * so no fairness clock is needed (and a clock read per queued task is
     * saved). */
    int r = park__wait_enqueue(t->acq_key, &t->waiter, flags, t->acq->wait, t->acq_ctx);
    if (r != PARK__WAIT_QUEUED)
        atomic_fetch_and_explicit(&t->refs, ~HOLD, memory_order_relaxed);
    return r;
}

park_task_t *park__acq_grant_now(park_task_t *t, uintptr_t grant)
{
    t->waiter.grant = grant;
    /* The hold acq_notify drops, as if the waiter had been queued.
     * relaxed: nobody else knows t yet. */
    atomic_fetch_or_explicit(&t->refs, HOLD, memory_order_relaxed);
    acq_notify(&t->waiter);
    return t;
}

void park__acq_discard(park_task_t *t)
{
    block_free(t);
}

void park__acq_deadline(park_task_t *t, park_time_t deadline)
{
    if (deadline != PARK_FOREVER && t->pool &&
        park__timer_arm(t->pool, t, deadline, PARK__TIMER_DEADLINE) != 0)
        /* No timer (the pool is closing, or no memory): give up now rather
         * than wait past the deadline. */
        acq_cancel(t, ETIMEDOUT);
}

park_task_t *park__acquire_async(park_pool_t *pool, const park__acq_ops_t *ops, const void *key,
                                 uintptr_t want, void *ctx, size_t ctx_size, park_time_t deadline)
{
    for (park_task_t *t = NULL;;) {
        bool taken = ops->try_take(ctx);
        if (taken || (deadline != PARK_FOREVER && park_now() >= deadline)) {
            if (t)
                block_free(t);
            return taken ? &ready : park__task_completed(ETIMEDOUT, NULL);
        }
        if (!t && !(t = park__acq_new(pool, ops, key, want)))
            return NULL;
        memcpy(t->acq_ctx, ctx, ctx_size);
        if (park__acq_enqueue(t, 0) == PARK__WAIT_QUEUED) {
            park__acq_deadline(t, deadline);
            return t;
        }
        memcpy(ctx, t->acq_ctx, ctx_size); /* what validate decided */
    }
}

/* Takes the waiter out of the queue: true if it was still queued. */
static bool acq_remove(park_task_t *t)
{
    const park__acq_ops_t *ops = t->acq;
    if (!park__wait_cancel(t->acq_key, &t->waiter, ops->wait->removed, t->acq_ctx))
        return false;
    if (ops->after_removed)
        ops->after_removed(t->acq_ctx);
    /* relaxed: only read back by acq_abandon's fast check. */
    atomic_store_explicit(&t->acq_state, ACQ_CANCELLED, memory_order_relaxed);
    return true;
}

static int acq_cancel(park_task_t *t, int err)
{
    if (!acq_remove(t))
        return EALREADY; /* granted first (or done): the grant stands */
    park__task_complete(t, err, NULL);
    drop_hold(t);
    return 0;
}

/* The caller holds the last reference but the queue's, and nobody has
 * seen the outcome: nobody ever will. */
static void acq_abandon(park_task_t *t)
{
    if (acq_remove(t)) {
        park__task_complete(t, ECANCELED, NULL);
        drop_hold(t); /* the caller's reference keeps t */
        return;
    }
    /* The grant came first. acq_rel: pairs with the exchange in
     * acq_notify: whichever comes second hands the permit back. */
    if (atomic_exchange_explicit(&t->acq_state, ACQ_ABANDONED, memory_order_acq_rel) ==
            ACQ_GRANTED &&
        (!t->acq->outcome || t->acq->outcome(t->acq_ctx, &t->waiter) == 0))
        /* acq_notify came first and completes t, but its completion can no
         * longer be seen by anyone: the permit goes back. (Otherwise
         * acq_notify sees ABANDONED and gives it back itself.) */
        t->acq->give_back(t->acq_ctx, &t->waiter);
}
