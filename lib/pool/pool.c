/* lib/pool/pool.c: workers, submission, idling, and the joiners' wait.
 * Where work lives and how a worker looks for it: docs/design/pool.md.
 * Fork-join (park_join, park_parallel_for): lib/pool/forkjoin.c; what the
 * two share: lib/pool/pool.h.
 *
 * Idling, one word (pool->idle): SLEEPERS in the low half, SEARCHERS (woken
 * workers that have not found work yet) in the high half; sleepers wait in
 * lib/wait under &pool->idle. Joiners (pool->joiners) are workers waiting
 * for a latch (park_join, park_task_wait) with nothing to help; each sleeps
 * on its latch, marked by w->waiting_on, until it is set or kicked.
 *
 *   transition             by         how
 *   sleep    s -> s+1      worker     RMW in validate, bucket locked; the
 *                                     last to sleep while closing sets quiet
 *   give up  s+1 -> s      worker     RMW in validate or removed
 *   notify   (s,0)->(s,1)  producer   CAS, then unpark one
 *   grant    (s,q)->(s-1,q) producer  RMW in select, bucket locked
 *   found    (s,q)->(s,q-1) searcher  RMW; if q was 1 and work remains:
 *                                     notify
 *   join     j -> j+1      worker     RMW, then look for work, then sleep
 *                                     on the latch unless kicked
 *   kick     kicked 0 -> 1 producer   CAS, when s = q = 0 and j > 0; then
 *                                     unpark that joiner under its latch
 *
 * The sleep/submit race: a worker (a joiner) increments SLEEPERS (joiners)
 * seq_cst and then re-checks every queue with seq_cst loads before it
 * sleeps; a producer makes its item visible (seq_cst) and then loads
 * pool->idle and pool->joiners (seq_cst). In the single total order one of
 * the two comes first: either the worker sees the item, or the producer
 * sees the sleeper (joiner) and wakes (kicks) it. A joiner re-reads
 * `kicked` under its latch's bucket lock before sleeping, so a kick is not
 * lost. Items pushed by park_join (forkjoin.c) skip the producer's fence: a
 * missed wake there costs parallelism, never progress (the pusher pops its
 * item back). A worker's local queue (continuations its jobs queued)
 * takes no part in the pair: only its owner runs it, and the owner is
 * awake until it finds the queue empty (find_work looks there first), so
 * an item in it wakes nobody and is never stranded; moving it to the ring
 * (local_flush) is a producer's push with its notify.
 * Destroy: closing is set (seq_cst) before destroy looks at pool->idle;
 * the last worker to go to sleep reads closing after its increment, so
 * either destroy sees every worker asleep or that worker sets quiet. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "os/os.h"
#include "pool/pool.h"
#include "wait/spin.h"
#include "wait/wait.h"

#define MAX_THREADS 4096

/* Local-dynamic here too: a definition without it resets the model
 * (pool.h). */
_Thread_local park__worker_t *park__pool_worker __attribute__((tls_model("local-dynamic")));

park_pool_t *park_pool_current(void)
{
    return park__pool_worker ? park__pool_worker->pool : NULL;
}

unsigned park_pool_threads(const park_pool_t *pool)
{
    return pool->n;
}

/* ---- the shared queue ----------------------------------------------- */

static int overflow_push(park_pool_t *pool, void (*fn)(void *), void *arg)
{
    park__overflow_t *o = malloc(sizeof *o);
    if (!o)
        return ENOMEM;
    o->next = NULL;
    o->fn = fn;
    o->arg = arg;
    park__lock(&pool->overflow_lock);
    if (pool->overflow_tail)
        pool->overflow_tail->next = o;
    else
        pool->overflow_head = o;
    pool->overflow_tail = o;
    /* seq_cst: the producer's half of the sleep/submit pair. */
    atomic_fetch_add_explicit(&pool->overflow_n, 1, memory_order_seq_cst);
    park__unlock(&pool->overflow_lock);
    atomic_fetch_add_explicit(&pool->spilled, 1, memory_order_relaxed);
    return 0;
}

static bool overflow_pop(park_pool_t *pool, park__job_t *out)
{
    if (atomic_load_explicit(&pool->overflow_n, memory_order_relaxed) == 0)
        return false;
    park__lock(&pool->overflow_lock);
    park__overflow_t *o = pool->overflow_head;
    if (o) {
        pool->overflow_head = o->next;
        if (!o->next)
            pool->overflow_tail = NULL;
        atomic_fetch_sub_explicit(&pool->overflow_n, 1, memory_order_relaxed);
    }
    park__unlock(&pool->overflow_lock);
    if (!o)
        return false;
    out->fn = o->fn;
    out->arg = o->arg;
    free(o);
    return true;
}

static bool ring_pop(park__ring_t *r, park__job_t *out)
{
    return park__ring_pop_batch(r, out, 1) == 1;
}

/* The ring of producer `id` in this pool, made on first use. */
static park__ring_t *producer_ring(park_pool_t *pool, unsigned id)
{
    /* acquire: pairs with the release store below (the ring is set up). */
    park__ring_t *r = atomic_load_explicit(&pool->producers[id], memory_order_acquire);
    if (PARK__LIKELY(r))
        return r;
    if (posix_memalign((void **)&r, 64, sizeof *r) != 0)
        return NULL;
    park__ring_init(r);
    atomic_store_explicit(&pool->producers[id], r, memory_order_release);
    /* Raise the high-water mark the workers scan up to. */
    unsigned n = atomic_load_explicit(&pool->nproducers, memory_order_relaxed);
    while (n < id + 1 &&
           !atomic_compare_exchange_weak_explicit(&pool->nproducers, &n, id + 1,
                                                  memory_order_seq_cst, memory_order_relaxed))
        ;
    return r;
}

/* ---- idling --------------------------------------------------------- */

static bool work_visible(park_pool_t *pool)
{
    for (unsigned i = 0; i < pool->n; i++)
        if (!park__ring_looks_empty(&pool->workers[i].ring) ||
            !park__deque_looks_empty(&pool->workers[i].deque))
            return true;
    unsigned np = atomic_load_explicit(&pool->nproducers, memory_order_seq_cst);
    for (unsigned i = 0; i < np; i++) {
        park__ring_t *r = atomic_load_explicit(&pool->producers[i], memory_order_acquire);
        if (r && !park__ring_looks_empty(r))
            return true;
    }
    return atomic_load_explicit(&pool->overflow_n, memory_order_seq_cst) != 0;
}

static unsigned select_one(void *ctx, park__waiter_t *w)
{
    park_pool_t *pool = ctx;
    (void)w;
    /* Bucket locked: the sleeper becomes a searcher (its SEARCHER count was
     * added by notify). */
    atomic_fetch_sub_explicit(&pool->idle, PARK__POOL_SLEEPER, memory_order_relaxed);
    return PARK__SELECT_GRANT | PARK__SELECT_STOP;
}

/* Kicks one joiner that is not kicked yet out of its latch wait. */
static void kick_joiner(park_pool_t *pool)
{
    for (unsigned i = 0; i < pool->n; i++) {
        park__worker_t *w = &pool->workers[i];
        /* acquire: pairs with the joiner's seq_cst increment of joiners,
         * which our seq_cst load of joiners read (waiting_on and kicked
         * were stored before it). */
        park__latch_t *l = atomic_load_explicit(&w->waiting_on, memory_order_acquire);
        uint32_t calm = 0;
        /* 0 -> 1; relaxed: park__latch_kick takes the latch's bucket lock,
         * under which the joiner re-reads it before sleeping. */
        if (l && atomic_compare_exchange_strong_explicit(&w->kicked, &calm, 1, memory_order_relaxed,
                                                         memory_order_relaxed)) {
            park__latch_kick(l, (uintptr_t)w); /* l may be stale: harmless */
            return;
        }
    }
}

void park__pool_notify(park_pool_t *pool)
{
    uint32_t v = atomic_load_explicit(&pool->idle, memory_order_seq_cst);
    while (PARK__POOL_SLEEPERS(v) != 0 && PARK__POOL_SEARCHERS(v) == 0)
        /* (s, 0) -> (s, 1); relaxed: the unpark below takes the bucket lock. */
        if (atomic_compare_exchange_weak_explicit(&pool->idle, &v, v + PARK__POOL_SEARCHER,
                                                  memory_order_relaxed, memory_order_relaxed)) {
            if (park__unpark(&pool->idle, select_one, NULL, pool) == 0)
                atomic_fetch_sub_explicit(&pool->idle, PARK__POOL_SEARCHER, memory_order_relaxed);
            return;
        }
    /* seq_cst: the producer's half of the pair with a joiner. */
    if (PARK__POOL_SLEEPERS(v) == 0 && PARK__POOL_SEARCHERS(v) == 0 &&
        atomic_load_explicit(&pool->joiners, memory_order_seq_cst) != 0)
        kick_joiner(pool);
}

/* notify after a push onto a deque, whose release store of bottom is not
 * the producer's half of the sleep/submit pair: an RMW on the idle word
 * itself is. A sleeper's increment either comes before it (notify sees the
 * sleeper) or reads from it (the sleeper's re-check then sees the push). */
static void notify_fenced(park_pool_t *pool)
{
    atomic_fetch_add_explicit(&pool->idle, 0, memory_order_seq_cst);
    park__pool_notify(pool);
}

typedef struct sleep_ctx {
    park__worker_t *w;
    bool last; /* the pool is closing and this is its last worker to sleep */
} sleep_ctx_t;

static bool sleep_validate(void *ctx)
{
    sleep_ctx_t *c = ctx;
    park_pool_t *pool = c->w->pool;
    /* seq_cst: the worker's half of the sleep/submit pair, and of the
     * pair with park_pool_destroy's store of closing. */
    uint32_t v = atomic_fetch_add_explicit(&pool->idle, PARK__POOL_SLEEPER, memory_order_seq_cst) +
                 PARK__POOL_SLEEPER;
    if (work_visible(pool) || atomic_load_explicit(&pool->stop, memory_order_seq_cst)) {
        atomic_fetch_sub_explicit(&pool->idle, PARK__POOL_SLEEPER, memory_order_relaxed);
        return false;
    }
    c->last = PARK__POOL_SLEEPERS(v) == pool->n && PARK__POOL_SEARCHERS(v) == 0 &&
              atomic_load_explicit(&pool->closing, memory_order_seq_cst);
    return true;
}

/* Queued, bucket unlocked: the last worker to go quiet tells destroy. */
static bool sleep_before(void *ctx)
{
    sleep_ctx_t *c = ctx;
    if (c->last)
        park__latch_set(&c->w->pool->quiet);
    return true;
}

static void sleep_removed(void *ctx, bool more)
{
    (void)more;
    park_pool_t *pool = ((sleep_ctx_t *)ctx)->w->pool;
    atomic_fetch_sub_explicit(&pool->idle, PARK__POOL_SLEEPER, memory_order_relaxed);
}

static const park__wait_ops_t sleep_ops = {
    .validate = sleep_validate, .removed = sleep_removed, .before_sleep = sleep_before};

/* The searcher found work (or gave up): it stops counting as a searcher,
 * and the last one passes the baton if work remains. */
static void stop_searching(park__worker_t *w, bool found)
{
    if (!w->searching)
        return;
    w->searching = false;
    uint32_t v =
        atomic_fetch_sub_explicit(&w->pool->idle, PARK__POOL_SEARCHER, memory_order_seq_cst);
    if (found && PARK__POOL_SEARCHERS(v) == 1 && work_visible(w->pool))
        park__pool_notify(w->pool);
}

/* ---- finding work ----------------------------------------------------- */

#define BATCH 16 /* submissions taken from a producer's ring at once */

/* Takes a batch from the producers' rings (from a random one on): the
 * first is *job, the rest wait on the worker's shared ring. */
static bool take_submissions(park__worker_t *w, park__job_t *job)
{
    park_pool_t *pool = w->pool;
    unsigned np = atomic_load_explicit(&pool->nproducers, memory_order_acquire);
    if (np == 0)
        return false;
    unsigned start = (unsigned)(park__random(&w->rng) % np);
    for (unsigned i = 0; i < np; i++) {
        park__ring_t *r =
            atomic_load_explicit(&pool->producers[(start + i) % np], memory_order_acquire);
        park__job_t batch[BATCH];
        unsigned k = r && !park__ring_looks_empty(r) ? park__ring_pop_batch(r, batch, BATCH) : 0;
        if (k == 0)
            continue;
        *job = batch[0];
        /* The rest go on the worker's shared ring, in order: the owner
         * takes them back with a CAS each, and an idle worker can take them
         * the same way, where a steal from the deque would cost it a
         * membarrier per item (deque.h). */
        unsigned pushed = 0;
        for (unsigned j = 1; j < k; j++, pushed++)
            if (!park__ring_push(&w->ring, batch[j].fn, batch[j].arg) &&
                !park__deque_push(&w->deque, batch[j].fn, batch[j].arg))
                batch[j].fn(batch[j].arg); /* both full: no room but here */
        if (pushed)
            notify_fenced(pool);
        return true;
    }
    return false;
}

static bool find_queued(park__worker_t *w, park__job_t *job)
{
    park_pool_t *pool = w->pool;
    if (park__deque_pop(&w->deque, job) || ring_pop(&w->ring, job))
        return true;
    /* A batch of submissions before a steal: a steal costs a membarrier
     * (deque.h), a batch one CAS for up to BATCH items. */
    if (take_submissions(w, job))
        return true;
    unsigned n = pool->n, start = (unsigned)(park__random(&w->rng) % n);
    for (unsigned k = 0; k < n; k++) {
        park__worker_t *v = &pool->workers[(start + k) % n];
        if (v != w) {
            int r;
            park__spin_t spin = park__spin_init(PARK__SPIN_GAP, 0);
            while ((r = park__deque_steal(&v->deque, job)) == PARK__STEAL_LOST)
                park__spin_forever(&spin); /* another thief won: retry */
            if (r == PARK__STEAL_OK) {
                park__pool_count(&w->steals);
                return true;
            }
        }
        if (ring_pop(&v->ring, job))
            return true;
    }
    return overflow_pop(pool, job);
}

/* The local queue first, up to PARK__POOL_LOCAL_RUNS times in a row; then
 * the other queues get one look ahead of it. */
static bool find_work(park__worker_t *w, park__job_t *job)
{
    if (w->local_head == w->local_tail) {
        w->local_runs = 0;
        return find_queued(w, job);
    }
    if (w->local_runs >= PARK__POOL_LOCAL_RUNS) {
        w->local_runs = 0;
        if (find_queued(w, job))
            return true; /* the local queue waits for this one job */
    }
    w->local_runs++;
    *job = w->local[w->local_head++ % PARK__POOL_LOCAL];
    return true;
}

/* Moves the worker's local queue to its ring, in order, waking a worker
 * (a job that finds the ring full spills as park__pool_schedule does; one
 * that finds no memory stays local). */
static void local_flush(park__worker_t *w)
{
    w->local_since = 0;
    for (; w->local_head != w->local_tail; w->local_head++) {
        park__job_t *job = &w->local[w->local_head % PARK__POOL_LOCAL];
        if (park__pool_schedule(w->pool, job->fn, job->arg) != 0)
            return;
    }
}

/* Continuations that have waited in a worker's local queue behind its
 * jobs for PARK__POOL_LOCAL_US (the jobs are long, or the worker was
 * preempted) go where other workers can run them. The clock runs for the
 * items below local_mark: it starts when a job starts with items waiting
 * behind it and no clock running for them, and is read again as each job
 * ends while those items wait; a job that starts with none behind it (a
 * chain of continuations, each queuing the next) reads no clock. */
static void local_before(park__worker_t *w)
{
    if (PARK__LIKELY(w->local_head == w->local_tail))
        return;
    /* Unsigned differences: the counters wrap. */
    if (w->local_since && (int)(w->local_head - w->local_mark) < 0)
        return;                            /* running for older items still waiting */
    w->local_since = park__os_ticks() | 1; /* never 0 */
    w->local_mark = w->local_tail;
}

static void local_after(park__worker_t *w)
{
    w->spilling = false;
    if (PARK__LIKELY(!w->local_since))
        return;
    if ((int)(w->local_head - w->local_mark) >= 0)
        w->local_since = 0; /* they have run */
    else if (park__os_ticks() - w->local_since >= PARK__POOL_LOCAL_US * park__os_ticks_per_us())
        local_flush(w);
}

/* Runs a job the worker found. */
static inline __attribute__((always_inline)) void run_found(park__worker_t *w,
                                                            const park__job_t *job)
{
    stop_searching(w, true);
    local_before(w);
    park__pool_run_job(w, job);
    local_after(w);
}

/* From a worker: runs one item of work if any is found; false if none. */
static bool help(park__worker_t *w)
{
    park__job_t job;
    if (!find_work(w, &job))
        return false;
    run_found(w, &job);
    return true;
}

static park__ring_t *shared_ring(park_pool_t *pool)
{
    static _Atomic unsigned next;
    static _Thread_local unsigned mine_plus_one;
    if (!mine_plus_one)
        mine_plus_one = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed) + 1;
    return &pool->workers[(mine_plus_one - 1) % pool->n].ring;
}

/* The worker's job is about to block in lib/wait: its local queue goes to
 * its ring (waking a worker), so that the continuation the job may be
 * waiting for does not wait for the job; the job's later continuations
 * follow them there, in order. */
static void block_flush(void)
{
    park__worker_t *w = park__pool_worker;
    if (w && w->local_head != w->local_tail) {
        w->spilling = true;
        local_flush(w);
    }
}

static void *worker_main(void *arg)
{
    park__worker_t *w = arg;
    park_pool_t *pool = w->pool;
    park__pool_worker = w;
    park__wait_block_hook = block_flush;
    for (;;) {
        park__job_t job;
        bool found;
        /* Look for 16 pauses' worth, then yield 64 times (an
         * oversubscribed producer gets the CPU meanwhile), then sleep: a
         * producer that submits again soon (its next batch, the next step
         * of a chain driven from outside) finds the worker awake and pays
         * no wake-up (docs/design/pool.md, Tuning). */
        park__spin_t spin = park__spin_init(16, 64);
        while (!(found = find_work(w, &job)) &&
               /* acquire: pairs with the release store in stop_workers. */
               !atomic_load_explicit(&pool->stop, memory_order_acquire) && park__spin(&spin))
            ;
        if (found) {
            run_found(w, &job);
            continue;
        }
        stop_searching(w, false);
        /* acquire: pairs with the release store in park_pool_destroy. */
        if (atomic_load_explicit(&pool->stop, memory_order_acquire))
            break;
        sleep_ctx_t ctx = {.w = w, .last = false};
        park__waiter_t node;
        park__waiter_init(&node, 0);
        park__waiter_idle(&node);
        if (park__wait(&pool->idle, &node, 0, &sleep_ops, &ctx, PARK_FOREVER) ==
            PARK__WAIT_GRANTED) {
            park__pool_count(&w->parks);
            /* acquire: as above; stop's wake-up counted no searcher. */
            w->searching = !atomic_load_explicit(&pool->stop, memory_order_acquire);
        }
    }
    park__wait_block_hook = NULL;
    park__pool_worker = NULL;
    return NULL;
}

/* ---- submitting ------------------------------------------------------- */

/* From a worker of this pool, its shared ring being full: on its deque. */
static int push_local(park__worker_t *w, void (*fn)(void *), void *arg)
{
    if (park__deque_push(&w->deque, fn, arg)) {
        notify_fenced(w->pool);
        return 0;
    }
    return -1;
}

/* Pushes on ring r with push (park__ring_sp_push or park__ring_push) and
 * wakes a worker. A full ring means the workers are behind: an outside
 * producer gives them its processor 16 times before it spills to the
 * (allocating, locked) overflow list; a worker spills at once, and so does
 * anyone while the list holds jobs (the workers have not caught up since
 * the last spill: with every worker busy in a long job, yielding 16 times
 * per job made a burst of submissions take minutes on a loaded machine). */
static int push_ring(park_pool_t *pool, park__ring_t *r,
                     bool (*push)(park__ring_t *, void (*)(void *), void *), bool outside,
                     void (*fn)(void *), void *arg)
{
    park__spin_t spin = park__spin_init(0, outside ? 16 : 0);
    while (!push(r, fn, arg)) {
        park__pool_notify(pool);
        /* relaxed: a hint; a stale 0 costs the yields, a stale count a
         * spill. */
        if (atomic_load_explicit(&pool->overflow_n, memory_order_relaxed) != 0 ||
            !park__spin(&spin)) {
            int err = overflow_push(pool, fn, arg);
            if (err)
                return err;
            break;
        }
    }
    park__pool_notify(pool);
    return 0;
}

int park__pool_schedule(park_pool_t *pool, void (*fn)(void *), void *arg)
{
    park__worker_t *w = park__pool_worker;
    if (w && w->pool == pool) {
        /* A worker's submissions and continuations wait on its shared
         * ring, in order; idle workers take them with a CAS (a steal from
         * the deque would cost them a membarrier each: deque.h). The deque
         * is for park_join, whose items the owner nearly always pops back. */
        if (park__ring_push(&w->ring, fn, arg)) {
            park__pool_notify(pool);
            return 0;
        }
        if (push_local(w, fn, arg) == 0)
            return 0;
    }
    if (!w) {
        unsigned id = park__ring_producer_id();
        park__ring_t *r = id < PARK__MAX_PRODUCERS ? producer_ring(pool, id) : NULL;
        if (r)
            return push_ring(pool, r, park__ring_sp_push, true, fn, arg);
    }
    /* A worker of another pool (or a thread without a producer id): the
     * workers' shared rings, spread by thread. */
    park__ring_t *r = w && w->pool == pool ? &w->ring : shared_ring(pool);
    return push_ring(pool, r, park__ring_push, !w, fn, arg);
}

/* park__pool_schedule_next past its local queue, out of line: the common
 * case saves no registers for it. */
__attribute__((noinline)) static int schedule_next_slow(park_pool_t *pool, park__worker_t *w,
                                                        void (*fn)(void *), void *arg)
{
    if (w && w->pool == pool && !w->spilling) { /* the local queue is full */
        w->spilling = true;
        local_flush(w);
    }
    return park__pool_schedule(pool, fn, arg);
}

int park__pool_schedule_next(park_pool_t *pool, void (*fn)(void *), void *arg)
{
    park__worker_t *w = park__pool_worker;
    if (PARK__LIKELY(w && w->pool == pool && !w->spilling &&
                     w->local_tail - w->local_head < PARK__POOL_LOCAL)) {
        park__job_t *job = &w->local[w->local_tail++ % PARK__POOL_LOCAL];
        job->fn = fn;
        job->arg = arg;
        return 0;
    }
    return schedule_next_slow(pool, w, fn, arg);
}

bool park__pool_closing(park_pool_t *pool)
{
    /* acquire: pairs with the seq_cst store in park_pool_destroy. */
    return atomic_load_explicit(&pool->closing, memory_order_acquire);
}

int park_pool_submit(park_pool_t *pool, void (*fn)(void *), void *arg)
{
    if (!pool || !fn)
        return EINVAL;
    if (park__pool_closing(pool)) /* refused; one that does not see it is drained */
        return EPIPE;
    return park__pool_schedule(pool, fn, arg);
}

/* ---- joiners ---------------------------------------------------------- */

bool park__pool_wait_latch(park__latch_t *l, park_time_t deadline)
{
    park__worker_t *w = park__pool_worker;
    if (!w)
        return park__latch_wait(l, deadline);
    park_pool_t *pool = w->pool;
    while (!park__latch_is_set(l)) {
        if (help(w))
            continue;
        if (park__deadline_passed(deadline))
            break;
        /* Nothing to help: sleep until the latch is set or a producer
         * kicks us (joiners, at the top). relaxed: published by the
         * seq_cst increment below, which a kicker reads first. */
        atomic_store_explicit(&w->kicked, 0, memory_order_relaxed);
        atomic_store_explicit(&w->waiting_on, l, memory_order_relaxed);
        /* seq_cst: the joiner's half of the sleep/submit pair. */
        atomic_fetch_add_explicit(&pool->joiners, 1, memory_order_seq_cst);
        bool set =
            !work_visible(pool) && park__latch_wait_kickable(l, &w->kicked, (uintptr_t)w, deadline);
        atomic_fetch_sub_explicit(&pool->joiners, 1, memory_order_relaxed);
        atomic_store_explicit(&w->waiting_on, NULL, memory_order_relaxed);
        if (set)
            return true;
    }
    return park__latch_is_set(l);
}

/* ---- life cycle ------------------------------------------------------- */

static void stop_workers(park_pool_t *pool, unsigned started)
{
    /* release: pairs with the acquire loads of stop in worker_main. */
    atomic_store_explicit(&pool->stop, true, memory_order_seq_cst);
    park__unpark_all(&pool->idle);
    for (unsigned i = 0; i < started; i++)
        pthread_join(pool->workers[i].thread, NULL);
}

/* The live pools, so that a second park_pool_destroy is caught in every
 * build: pools are few, and made and destroyed rarely. */
static park__live_set_t live_pools = PARK__LIVE_SET_INIT;

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

static void setup(void)
{
    park__deque_setup();
}

int park_pool_create(park_pool_t **out, const park_pool_config_t *cfg)
{
    pthread_once(&setup_once, setup);
    unsigned n = cfg ? cfg->threads : 0;
    if (n == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n = cpus > 0 ? (unsigned)cpus : 1;
        if (n > MAX_THREADS)
            n = MAX_THREADS;
    }
    if (n > MAX_THREADS)
        return EINVAL;
    park_pool_t *pool = calloc(1, sizeof *pool);
    park__worker_t *workers = NULL;
    if (!pool || posix_memalign((void **)&workers, 64, n * sizeof *workers) != 0) {
        free(pool);
        return ENOMEM;
    }
    memset(workers, 0, n * sizeof *workers);
    pool->n = n;
    pool->workers = workers;
    park__latch_init(&pool->quiet);
    for (unsigned i = 0; i < n; i++) {
        park__worker_t *w = &workers[i];
        park__deque_init(&w->deque);
        park__ring_init(&w->ring);
        w->pool = pool;
        w->index = i;
        w->rng = park__random_seed(i + 1);
    }
    for (unsigned i = 0; i < n; i++) {
        int err = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
        if (err) {
            stop_workers(pool, i);
            free(workers);
            free(pool);
            return err == EAGAIN ? EAGAIN : ENOMEM;
        }
    }
    park__live_add(&live_pools, &pool->live);
    *out = pool;
    return 0;
}

/* True if every worker sleeps and no work is queued anywhere. */
static bool quiescent(park_pool_t *pool)
{
    uint32_t v = atomic_load_explicit(&pool->idle, memory_order_seq_cst);
    return PARK__POOL_SLEEPERS(v) == pool->n && PARK__POOL_SEARCHERS(v) == 0 &&
           !work_visible(pool) && park__wait_count(&pool->idle) == pool->n;
}

void park_pool_destroy(park_pool_t *pool)
{
    if (!pool)
        return;
    park__worker_t *self = park__pool_worker;
    if (self && self->pool == pool)
        park__misuse("park_pool_destroy", pool,
                     "called from one of the pool's own workers, it would wait for itself");
    if (!park__live_remove(&live_pools, &pool->live))
        park__misuse("park_pool_destroy", pool,
                     "not a live pool (destroyed already, or never created)");
    /* seq_cst: from here on, submissions see closing (park_pool_submit). */
    atomic_store_explicit(&pool->closing, true, memory_order_seq_cst);
    park__timer_shutdown(pool);
    /* Drain: wait until every worker sleeps with nothing queued. Either
     * that is so now, or the last worker to go to sleep sees closing (the
     * seq_cst pair in sleep_validate) and sets quiet. */
    if (!quiescent(pool))
        park__latch_wait_idle(&pool->quiet, PARK_FOREVER); /* shutdown, not contention */
    stop_workers(pool, pool->n);
    park__job_t job;
    while (overflow_pop(pool, &job)) /* none left; frees nothing in practice */
        ;
    for (unsigned i = 0; i < PARK__MAX_PRODUCERS; i++)
        free(atomic_load_explicit(&pool->producers[i], memory_order_relaxed));
    free(pool->workers);
    free(pool);
}

void park_pool_stats(const park_pool_t *pool, park_pool_stats_t *stats)
{
    memset(stats, 0, sizeof *stats);
    for (unsigned i = 0; i < pool->n; i++) {
        park__worker_t *w = &pool->workers[i];
        /* relaxed: monitoring counters. */
        stats->executed += atomic_load_explicit(&w->executed, memory_order_relaxed);
        stats->steals += atomic_load_explicit(&w->steals, memory_order_relaxed);
        stats->parks += atomic_load_explicit(&w->parks, memory_order_relaxed);
    }
    stats->spilled = atomic_load_explicit(&((park_pool_t *)pool)->spilled, memory_order_relaxed);
}
