/* lib/pool/pool.c: workers, the shared queue, idling, fork-join.
 *
 * Where work lives: each worker's deque (its own pushes: joins, its
 * submissions and continuations, batches it took from the rings); a ring
 * per outside producer thread (producer ids are small integers recycled at
 * thread exit, so a ring has one producer at a time and a push is plain
 * stores); a shared MPMC ring per worker (producers beyond
 * PARK__MAX_PRODUCERS, workers of other pools, a worker whose deque is
 * full, and the rest of a batch taken from a producer ring); and the
 * overflow list (a ring stayed full). A worker looks in its deque and its
 * shared ring, takes a batch from a producer ring (keeping the first item
 * and putting the rest on its shared ring, where idle workers can take
 * them with a CAS instead of a membarrier-priced steal), steals from the
 * other deques and shared rings (from a random victim on), then looks at
 * the overflow list. A worker that finds
 * nothing spins a little (pausing, then yielding, so that an
 * oversubscribed producer gets the CPU) and sleeps.
 *
 * Idling, one word (pool->idle): SLEEPERS in the low half, SEARCHERS (woken
 * workers that have not found work yet) in the high half. Sleepers wait in
 * lib/wait under the address of pool->idle.
 *
 *   transition                          by         how
 *   sleep      s -> s+1                 worker     RMW in validate, bucket locked
 *   give up    s+1 -> s                 worker     RMW in validate or removed
 *   notify     (s, 0) -> (s, 1)         producer   CAS, then unpark one
 *   grant      (s, q) -> (s-1, q)       producer   RMW in select, bucket locked
 *   found      (s, q) -> (s, q-1)       searcher   RMW; if q was 1 and work
 *                                                  remains: notify
 *
 * The sleep/submit race: a worker increments SLEEPERS (seq_cst) and then
 * re-checks every queue (seq_cst loads) before it sleeps; a producer makes
 * its item visible (seq_cst) and then loads pool->idle (seq_cst). In the
 * single total order of these operations one of the two comes first, so
 * either the worker sees the item and stays up, or the producer sees the
 * sleeper and wakes it. Items pushed by park_join skip the producer's
 * fence: a missed wake there costs parallelism, never progress, because
 * the pushing worker pops its own item back. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "os/os.h"
#include "pool/pool.h"
#include "wait/wait.h"

#define SLEEPER 1u
#define SEARCHER (1u << 16)
#define SLEEPERS(v) ((v)&0xffffu)
#define SEARCHERS(v) ((v) >> 16)

#define MAX_THREADS 4096
#define SPIN_PAUSES 16      /* rounds of looking for work, pausing between */
#define SPIN_YIELDS 8       /* ... then yielding between, before sleeping */
#define RING_FULL_YIELDS 16 /* an outside producer's yields before it spills */

static _Thread_local park__worker_t *tls_worker;

park_pool_t *park_pool_current(void)
{
    return tls_worker ? tls_worker->pool : NULL;
}

unsigned park_pool_threads(const park_pool_t *pool)
{
    return pool->n;
}

/* ---- latch ---------------------------------------------------------- */

void park__latch_init(park__latch_t *l)
{
    atomic_init(&l->state, 0);
}

bool park__latch_is_set(park__latch_t *l)
{
    /* acquire: pairs with the exchange in park__latch_set. */
    return atomic_load_explicit(&l->state, memory_order_acquire) == PARK__LATCH_SET;
}

void park__latch_set(park__latch_t *l)
{
    /* acq_rel: release publishes what the setter did to the waiters;
     * acquire orders the WAITERS bit set under the bucket lock. */
    uint32_t old = atomic_exchange_explicit(&l->state, PARK__LATCH_SET, memory_order_acq_rel);
    if (old & PARK__LATCH_WAITERS)
        park__unpark_all(l); /* the address only: l may be gone */
}

static bool latch_validate(void *ctx)
{
    park__latch_t *l = ctx;
    uint32_t s = atomic_load_explicit(&l->state, memory_order_relaxed);
    /* Bucket locked: a setter that sees WAITERS unparks after we are queued. */
    while (s == 0)
        if (atomic_compare_exchange_weak_explicit(&l->state, &s, PARK__LATCH_WAITERS,
                                                  memory_order_relaxed, memory_order_relaxed))
            return true;
    return s == PARK__LATCH_WAITERS;
}

static const park__wait_ops_t latch_ops = {.validate = latch_validate};

bool park__latch_wait(park__latch_t *l, park_time_t deadline)
{
    while (!park__latch_is_set(l)) {
        park__waiter_t w;
        park__waiter_init(&w, 0);
        int r = park__wait(l, &w, 0, &latch_ops, l, deadline);
        if (r == PARK__WAIT_TIMEDOUT)
            return park__latch_is_set(l);
    }
    return true;
}

/* ---- the shared queue ----------------------------------------------- */

static void ring_init(park__ring_t *r)
{
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    for (uint64_t i = 0; i < PARK__RING_CAP; i++) {
        atomic_init(&r->cells[i].seq, i);
        atomic_init(&r->cells[i].fn, NULL);
        atomic_init(&r->cells[i].arg, NULL);
    }
}

static bool ring_push(park__ring_t *r, void (*fn)(void *), void *arg)
{
    uint64_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
    park__ring_cell_t *c;
    for (;;) {
        c = &r->cells[pos & (PARK__RING_CAP - 1)];
        /* acquire: pairs with the release store of seq in ring_pop_batch (the
         * consumer has read the cell's old item). */
        uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
        int64_t dif = (int64_t)(seq - pos);
        if (dif == 0) {
            /* seq_cst: the producer's half of the sleep/submit pair. */
            if (atomic_compare_exchange_weak_explicit(&r->tail, &pos, pos + 1, memory_order_seq_cst,
                                                      memory_order_relaxed))
                break;
        } else if (dif < 0) {
            return false; /* full */
        } else {
            pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
        }
    }
    atomic_store_explicit(&c->fn, fn, memory_order_relaxed);
    atomic_store_explicit(&c->arg, arg, memory_order_relaxed);
    /* release: pairs with the acquire load of seq in ring_pop_batch. */
    atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
    return true;
}

static bool ring_looks_empty(park__ring_t *r)
{
    /* seq_cst: the worker's half of the sleep/submit pair. A claimed but
     * unwritten item counts as work. */
    return atomic_load_explicit(&r->head, memory_order_seq_cst) ==
           atomic_load_explicit(&r->tail, memory_order_seq_cst);
}

static int overflow_push(park_pool_t *pool, void (*fn)(void *), void *arg)
{
    park__overflow_t *o = malloc(sizeof *o);
    if (!o)
        return ENOMEM;
    o->next = NULL;
    o->fn = fn;
    o->arg = arg;
    park_mutex_lock(&pool->overflow_lock);
    if (pool->overflow_tail)
        pool->overflow_tail->next = o;
    else
        pool->overflow_head = o;
    pool->overflow_tail = o;
    /* seq_cst: the producer's half of the sleep/submit pair. */
    atomic_fetch_add_explicit(&pool->overflow_n, 1, memory_order_seq_cst);
    park_mutex_unlock(&pool->overflow_lock);
    atomic_fetch_add_explicit(&pool->spilled, 1, memory_order_relaxed);
    return 0;
}

static bool overflow_pop(park_pool_t *pool, park__job_t *out)
{
    if (atomic_load_explicit(&pool->overflow_n, memory_order_relaxed) == 0)
        return false;
    park_mutex_lock(&pool->overflow_lock);
    park__overflow_t *o = pool->overflow_head;
    if (o) {
        pool->overflow_head = o->next;
        if (!o->next)
            pool->overflow_tail = NULL;
        atomic_fetch_sub_explicit(&pool->overflow_n, 1, memory_order_relaxed);
    }
    park_mutex_unlock(&pool->overflow_lock);
    if (!o)
        return false;
    out->fn = o->fn;
    out->arg = o->arg;
    free(o);
    return true;
}

/* Producer ids: small integers, one per thread that submits from outside
 * a pool, recycled when the thread exits, so that each id's ring has at
 * most one producer at a time. */
static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned ids_next, ids_free[PARK__MAX_PRODUCERS], ids_nfree;
static pthread_key_t ids_key;
static _Thread_local unsigned my_id_plus_one;

static void id_release(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&ids_lock);
    ids_free[ids_nfree++] = my_id_plus_one - 1;
    pthread_mutex_unlock(&ids_lock);
    my_id_plus_one = 0;
}

static void ids_setup(void)
{
    (void)pthread_key_create(&ids_key, id_release);
}

/* The calling thread's producer id, or PARK__MAX_PRODUCERS if none is
 * left (then it shares the workers' rings). */
static unsigned my_id(void)
{
    if (PARK__LIKELY(my_id_plus_one))
        return my_id_plus_one - 1;
    unsigned id = PARK__MAX_PRODUCERS;
    pthread_mutex_lock(&ids_lock);
    if (ids_nfree)
        id = ids_free[--ids_nfree];
    else if (ids_next < PARK__MAX_PRODUCERS)
        id = ids_next++;
    pthread_mutex_unlock(&ids_lock);
    if (id < PARK__MAX_PRODUCERS) {
        my_id_plus_one = id + 1;
        pthread_setspecific(ids_key, &my_id_plus_one); /* id_release at exit */
    }
    return id;
}

/* Single producer: the owner of the ring's id. No RMW: the item is
 * published by the seq store, the tail store makes it count as work. */
static bool sp_push(park__ring_t *r, void (*fn)(void *), void *arg)
{
    uint64_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
    park__ring_cell_t *c = &r->cells[pos & (PARK__RING_CAP - 1)];
    /* acquire: pairs with the release store of seq in ring_pop_batch. */
    if (atomic_load_explicit(&c->seq, memory_order_acquire) != pos)
        return false; /* full */
    atomic_store_explicit(&c->fn, fn, memory_order_relaxed);
    atomic_store_explicit(&c->arg, arg, memory_order_relaxed);
    /* release: pairs with the acquire load of seq in ring_pop_batch. */
    atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
    /* seq_cst: the producer's half of the sleep/submit pair. */
    atomic_store_explicit(&r->tail, pos + 1, memory_order_seq_cst);
    return true;
}

/* How many items are published in a row from position pos, up to max;
 * *taken: the cell at pos has already been consumed (pos is stale). */
static unsigned published(park__ring_t *r, uint64_t pos, unsigned max, bool *taken)
{
    unsigned k = 0;
    for (; k < max; k++) {
        park__ring_cell_t *c = &r->cells[(pos + k) & (PARK__RING_CAP - 1)];
        /* acquire: pairs with the release store of seq in the push. */
        uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
        if (seq != pos + k + 1) {
            *taken = k == 0 && (int64_t)(seq - (pos + 1)) > 0;
            break;
        }
    }
    return k;
}

/* Takes up to max published items with one CAS: how many (0: empty, or
 * the next item is still being written). */
static unsigned ring_pop_batch(park__ring_t *r, park__job_t *out, unsigned max)
{
    uint64_t pos = atomic_load_explicit(&r->head, memory_order_relaxed);
    unsigned k;
    for (;;) {
        bool taken = false;
        k = published(r, pos, max, &taken);
        if (taken) { /* another consumer took it: look from the new head */
            pos = atomic_load_explicit(&r->head, memory_order_relaxed);
            continue;
        }
        if (k == 0)
            return 0;
        /* relaxed: the cells' seq loads carry the items' ordering. */
        if (atomic_compare_exchange_weak_explicit(&r->head, &pos, pos + k, memory_order_relaxed,
                                                  memory_order_relaxed))
            break;
    }
    for (unsigned i = 0; i < k; i++) {
        park__ring_cell_t *c = &r->cells[(pos + i) & (PARK__RING_CAP - 1)];
        out[i].fn = atomic_load_explicit(&c->fn, memory_order_relaxed);
        out[i].arg = atomic_load_explicit(&c->arg, memory_order_relaxed);
        /* release: pairs with the acquire load of seq in the push. */
        atomic_store_explicit(&c->seq, pos + i + PARK__RING_CAP, memory_order_release);
    }
    return k;
}

static bool ring_pop(park__ring_t *r, park__job_t *out)
{
    return ring_pop_batch(r, out, 1) == 1;
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
    ring_init(r);
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
        if (!ring_looks_empty(&pool->workers[i].ring) ||
            !park__deque_looks_empty(&pool->workers[i].deque))
            return true;
    unsigned np = atomic_load_explicit(&pool->nproducers, memory_order_seq_cst);
    for (unsigned i = 0; i < np; i++) {
        park__ring_t *r = atomic_load_explicit(&pool->producers[i], memory_order_acquire);
        if (r && !ring_looks_empty(r))
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
    atomic_fetch_sub_explicit(&pool->idle, SLEEPER, memory_order_relaxed);
    return PARK__SELECT_GRANT | PARK__SELECT_STOP;
}

/* Wakes one sleeper if nobody is searching already. The caller has
 * published its item by a seq_cst operation (the producer's half). */
static void notify(park_pool_t *pool)
{
    uint32_t v = atomic_load_explicit(&pool->idle, memory_order_seq_cst);
    while (SLEEPERS(v) != 0 && SEARCHERS(v) == 0)
        /* (s, 0) -> (s, 1); relaxed: the unpark below takes the bucket lock. */
        if (atomic_compare_exchange_weak_explicit(&pool->idle, &v, v + SEARCHER,
                                                  memory_order_relaxed, memory_order_relaxed)) {
            if (park__unpark(&pool->idle, select_one, NULL, pool) == 0)
                atomic_fetch_sub_explicit(&pool->idle, SEARCHER, memory_order_relaxed);
            return;
        }
}

/* notify after a push onto a deque, whose release store of bottom is not
 * the producer's half of the sleep/submit pair: an RMW on the idle word
 * itself is. A sleeper's increment either comes before it (notify sees the
 * sleeper) or reads from it (the sleeper's re-check then sees the push). */
static void notify_fenced(park_pool_t *pool)
{
    atomic_fetch_add_explicit(&pool->idle, 0, memory_order_seq_cst);
    notify(pool);
}

typedef struct sleep_ctx {
    park__worker_t *w;
} sleep_ctx_t;

static bool sleep_validate(void *ctx)
{
    park_pool_t *pool = ((sleep_ctx_t *)ctx)->w->pool;
    /* seq_cst: the worker's half of the sleep/submit pair. */
    atomic_fetch_add_explicit(&pool->idle, SLEEPER, memory_order_seq_cst);
    if (work_visible(pool) || atomic_load_explicit(&pool->stop, memory_order_seq_cst)) {
        atomic_fetch_sub_explicit(&pool->idle, SLEEPER, memory_order_relaxed);
        return false;
    }
    return true;
}

static void sleep_removed(void *ctx, bool more)
{
    (void)more;
    park_pool_t *pool = ((sleep_ctx_t *)ctx)->w->pool;
    atomic_fetch_sub_explicit(&pool->idle, SLEEPER, memory_order_relaxed);
}

static const park__wait_ops_t sleep_ops = {.validate = sleep_validate, .removed = sleep_removed};

/* The searcher found work (or gave up): it stops counting as a searcher,
 * and the last one passes the baton if work remains. */
static void stop_searching(park__worker_t *w, bool found)
{
    if (!w->searching)
        return;
    w->searching = false;
    uint32_t v = atomic_fetch_sub_explicit(&w->pool->idle, SEARCHER, memory_order_seq_cst);
    if (found && SEARCHERS(v) == 1 && work_visible(w->pool))
        notify(w->pool);
}

/* ---- finding work ----------------------------------------------------- */

static uint64_t next_rand(park__worker_t *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}

/* Bumps a counter of the calling worker's own: a load and a store, not an
 * RMW (only the owner writes it; park_pool_stats reads it relaxed). */
static void count(_Atomic uint64_t *c)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

#define BATCH 16 /* submissions taken from a producer's ring at once */

/* Takes a batch from the producers' rings (from a random one on): the
 * first is *job, the rest wait on the worker's shared ring. */
static bool take_submissions(park__worker_t *w, park__job_t *job)
{
    park_pool_t *pool = w->pool;
    unsigned np = atomic_load_explicit(&pool->nproducers, memory_order_acquire);
    if (np == 0)
        return false;
    unsigned start = (unsigned)(next_rand(w) % np);
    for (unsigned i = 0; i < np; i++) {
        park__ring_t *r =
            atomic_load_explicit(&pool->producers[(start + i) % np], memory_order_acquire);
        park__job_t batch[BATCH];
        unsigned k = r && !ring_looks_empty(r) ? ring_pop_batch(r, batch, BATCH) : 0;
        if (k == 0)
            continue;
        *job = batch[0];
        /* The rest go on the worker's shared ring, in order: the owner
         * takes them back with a CAS each, and an idle worker can take them
         * the same way, where a steal from the deque would cost it a
         * membarrier per item (deque.h). */
        unsigned pushed = 0;
        for (unsigned j = 1; j < k; j++, pushed++)
            if (!ring_push(&w->ring, batch[j].fn, batch[j].arg) &&
                !park__deque_push(&w->deque, batch[j].fn, batch[j].arg))
                batch[j].fn(batch[j].arg); /* both full: no room but here */
        if (pushed)
            notify_fenced(pool);
        return true;
    }
    return false;
}

static bool find_work(park__worker_t *w, park__job_t *job)
{
    park_pool_t *pool = w->pool;
    if (park__deque_pop(&w->deque, job) || ring_pop(&w->ring, job))
        return true;
    /* A batch of submissions before a steal: a steal costs a membarrier
     * (deque.h), a batch one CAS for up to BATCH items. */
    if (take_submissions(w, job))
        return true;
    unsigned n = pool->n, start = (unsigned)(next_rand(w) % n);
    for (unsigned k = 0; k < n; k++) {
        park__worker_t *v = &pool->workers[(start + k) % n];
        if (v != w) {
            int r;
            while ((r = park__deque_steal(&v->deque, job)) == PARK__STEAL_LOST)
                park__os_pause();
            if (r == PARK__STEAL_OK) {
                count(&w->steals);
                return true;
            }
        }
        if (ring_pop(&v->ring, job))
            return true;
    }
    return overflow_pop(pool, job);
}

static void run_job(park__worker_t *w, const park__job_t *job)
{
    count(&w->executed);
    job->fn(job->arg);
}

/* From a worker: runs one item of work if any is found; false if none. */
static bool help(park__worker_t *w)
{
    park__job_t job;
    if (!find_work(w, &job))
        return false;
    stop_searching(w, true);
    run_job(w, &job);
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

static void *worker_main(void *arg)
{
    park__worker_t *w = arg;
    park_pool_t *pool = w->pool;
    tls_worker = w;
    for (;;) {
        park__job_t job;
        bool found = false;
        for (int round = 0; round < SPIN_PAUSES + SPIN_YIELDS && !found; round++) {
            found = find_work(w, &job);
            if (!found && atomic_load_explicit(&pool->stop, memory_order_acquire))
                break;
            if (!found && round < SPIN_PAUSES)
                park__os_pause();
            else if (!found)
                park__os_yield(); /* let a runnable producer have the CPU */
        }
        if (found) {
            stop_searching(w, true);
            run_job(w, &job);
            continue;
        }
        stop_searching(w, false);
        /* acquire: pairs with the release store in park_pool_destroy. */
        if (atomic_load_explicit(&pool->stop, memory_order_acquire))
            break;
        sleep_ctx_t ctx = {w};
        park__waiter_t node;
        park__waiter_init(&node, 0);
        if (park__wait(&pool->idle, &node, 0, &sleep_ops, &ctx, PARK_FOREVER) ==
            PARK__WAIT_GRANTED) {
            count(&w->parks);
            /* acquire: as above; stop's wake-up counted no searcher. */
            w->searching = !atomic_load_explicit(&pool->stop, memory_order_acquire);
        }
    }
    tls_worker = NULL;
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

/* Pushes on ring r with push (sp_push or ring_push) and wakes a worker.
 * A full ring means the workers are behind: the producer gives them its
 * processor `yields` times before it spills to the (allocating, locked)
 * overflow list. */
static int push_ring(park_pool_t *pool, park__ring_t *r,
                     bool (*push)(park__ring_t *, void (*)(void *), void *), int yields,
                     void (*fn)(void *), void *arg)
{
    while (!push(r, fn, arg)) {
        if (yields-- <= 0) {
            int err = overflow_push(pool, fn, arg);
            if (err)
                return err;
            break;
        }
        notify(pool);
        park__os_yield();
    }
    notify(pool);
    return 0;
}

int park__pool_schedule(park_pool_t *pool, void (*fn)(void *), void *arg)
{
    park__worker_t *w = tls_worker;
    if (w && w->pool == pool) {
        /* A worker's submissions and continuations wait on its shared
         * ring, in order; idle workers take them with a CAS (a steal from
         * the deque would cost them a membarrier each: deque.h). The deque
         * is for park_join, whose items the owner nearly always pops back. */
        if (ring_push(&w->ring, fn, arg)) {
            notify(pool);
            return 0;
        }
        if (push_local(w, fn, arg) == 0)
            return 0;
    }
    if (!w) {
        unsigned id = my_id();
        park__ring_t *r = id < PARK__MAX_PRODUCERS ? producer_ring(pool, id) : NULL;
        if (r)
            return push_ring(pool, r, sp_push, RING_FULL_YIELDS, fn, arg);
    }
    /* A worker of another pool (or a thread without a producer id): the
     * workers' shared rings, spread by thread. */
    park__ring_t *r = w && w->pool == pool ? &w->ring : shared_ring(pool);
    return push_ring(pool, r, ring_push, w ? 0 : RING_FULL_YIELDS, fn, arg);
}

int park_pool_submit(park_pool_t *pool, void (*fn)(void *), void *arg)
{
    /* acquire: pairs with the seq_cst store in park_pool_destroy (a
     * submission that sees it refuses; one that does not is drained). */
    if (atomic_load_explicit(&pool->closing, memory_order_acquire))
        return EPIPE;
    return park__pool_schedule(pool, fn, arg);
}

/* ---- fork-join -------------------------------------------------------- */

typedef struct join_b {
    void (*fn)(void *);
    void *arg;
    park__latch_t done;
} join_b_t;

static void run_stolen_b(void *arg)
{
    join_b_t *b = arg;
    b->fn(b->arg);
    park__latch_set(&b->done); /* b may be gone after this */
}

bool park__pool_wait_latch(park__latch_t *l, park_time_t deadline)
{
    park__worker_t *w = tls_worker;
    if (!w)
        return park__latch_wait(l, deadline);
    /* Help while waiting; with nothing to help with, park briefly and look
     * again (new work may arrive that only we could run). */
    uint64_t nap = 20 * 1000;
    while (!park__latch_is_set(l)) {
        if (help(w)) {
            nap = 20 * 1000;
            continue;
        }
        park_time_t now = park_now();
        if (now >= deadline)
            return park__latch_is_set(l);
        park_time_t until = deadline - now > nap ? now + nap : deadline;
        if (park__latch_wait(l, until))
            return true;
        if (nap < 1000 * 1000)
            nap *= 2;
    }
    return true;
}

static void join_in_worker(park__worker_t *w, void (*a)(void *), void *a_arg, void (*b)(void *),
                           void *b_arg)
{
    join_b_t jb = {b, b_arg, {0}};
    park__latch_init(&jb.done);
    if (!park__deque_push(&w->deque, run_stolen_b, &jb)) {
        a(a_arg); /* deque full: no parallelism to gain here */
        b(b_arg);
        return;
    }
    /* No fence (see the top of this file): a cheap look for sleepers. */
    uint32_t v = atomic_load_explicit(&w->pool->idle, memory_order_relaxed);
    if (SLEEPERS(v) != 0 && SEARCHERS(v) == 0)
        notify(w->pool);
    a(a_arg);
    park__job_t job;
    while (park__deque_pop(&w->deque, &job)) {
        if (job.arg == &jb) {
            b(b_arg);
            return;
        }
        run_job(w, &job); /* pushed by a and left there (a submission) */
    }
    park__pool_wait_latch(&jb.done, PARK_FOREVER); /* b was stolen */
}

typedef struct join_outside {
    void (*a)(void *), *a_arg, (*b)(void *), *b_arg;
    park_pool_t *pool;
    park__latch_t done;
} join_outside_t;

static void run_join_outside(void *arg)
{
    join_outside_t *j = arg;
    park_join(j->pool, j->a, j->a_arg, j->b, j->b_arg);
    park__latch_set(&j->done);
}

void park_join(park_pool_t *pool, void (*a)(void *), void *a_arg, void (*b)(void *), void *b_arg)
{
    if (!a) {
        a = b;
        a_arg = b_arg;
        b = NULL;
    }
    if (!a)
        return;
    park__worker_t *w = tls_worker;
    if (w && w->pool == pool) {
        if (b)
            join_in_worker(w, a, a_arg, b, b_arg);
        else
            a(a_arg);
        return;
    }
    join_outside_t j = {a, a_arg, b, b_arg, pool, {0}};
    park__latch_init(&j.done);
    if (park_pool_submit(pool, run_join_outside, &j) != 0) {
        a(a_arg); /* shutting down (or no memory): run here */
        if (b)
            b(b_arg);
        return;
    }
    park__pool_wait_latch(&j.done, PARK_FOREVER);
}

typedef struct pfor {
    size_t lo, hi, grain;
    void (*body)(size_t, size_t, void *);
    void *arg;
    park_pool_t *pool;
} pfor_t;

static void pfor_run(void *arg)
{
    pfor_t *p = arg;
    if (p->hi - p->lo <= p->grain) {
        p->body(p->lo, p->hi, p->arg);
        return;
    }
    size_t mid = p->lo + (p->hi - p->lo) / 2;
    pfor_t left = *p, right = *p;
    left.hi = mid;
    right.lo = mid;
    park_join(p->pool, pfor_run, &left, pfor_run, &right);
}

void park_parallel_for(park_pool_t *pool, size_t begin, size_t end, size_t grain,
                       void (*body)(size_t lo, size_t hi, void *arg), void *arg)
{
    if (begin >= end)
        return;
    pfor_t p = {begin, end, grain ? grain : 1, body, arg, pool};
    park_join(pool, pfor_run, &p, NULL, NULL);
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

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

static void setup(void)
{
    park__deque_setup();
    ids_setup();
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
    park_mutex_init(&pool->overflow_lock);
    park_mutex_init(&pool->timer_lock);
    for (unsigned i = 0; i < n; i++) {
        park__worker_t *w = &workers[i];
        park__deque_init(&w->deque);
        ring_init(&w->ring);
        w->pool = pool;
        w->index = i;
        w->rng = 0x9e3779b97f4a7c15ull * (i + 1);
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
    *out = pool;
    return 0;
}

/* True if every worker sleeps and no work is queued anywhere. */
static bool quiescent(park_pool_t *pool)
{
    uint32_t v = atomic_load_explicit(&pool->idle, memory_order_seq_cst);
    return SLEEPERS(v) == pool->n && SEARCHERS(v) == 0 && !work_visible(pool) &&
           park__wait_count(&pool->idle) == pool->n;
}

void park_pool_destroy(park_pool_t *pool)
{
    /* seq_cst: from here on, submissions see closing (park_pool_submit). */
    atomic_store_explicit(&pool->closing, true, memory_order_seq_cst);
    park__timer_shutdown(pool);
    /* Drain: wait until every worker sleeps with nothing queued. The
     * workers do not report this, so look every 100 us: destroy is rare. */
    while (!quiescent(pool)) {
        park__futex_wait(&(uint32_t){0}, 0, park_deadline_in(100 * 1000));
    }
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
