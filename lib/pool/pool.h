/* lib/pool/pool.h: the pool's insides, for pool.c, forkjoin.c and
 * timer.c, and the pool services the layers above use (scheduling,
 * waiting, the timer). */
#ifndef PARK_LIB_POOL_POOL_H
#define PARK_LIB_POOL_POOL_H

#include <park/pool.h>
#include <pthread.h>
#include <stdatomic.h>

#include "pool/deque.h"
#include "pool/ring.h"
#include "wait/latch.h"
#include "wait/lock.h"

typedef struct park__overflow {
    struct park__overflow *next;
    void (*fn)(void *);
    void *arg;
} park__overflow_t;

/* The capacity of a worker's local queue (pool.c). */
#define PARK__POOL_LOCAL 8

typedef struct park__worker {
    park__deque_t deque;
    park__ring_t ring;
    park_pool_t *pool;
    unsigned index;
    bool searching; /* woken to look for work (counted in pool->idle) */
    uint64_t rng;   /* park__random stream: where a search starts */
    pthread_t thread;
    /* Waiting for a latch with nothing to help (pool.c: joiners): the
     * latch, and the kick a producer gives it when new work comes. */
    _Atomic(park__latch_t *) waiting_on;
    _Atomic uint32_t kicked;
    /* The local queue (owner only, plain; no other worker can take from
     * it): the continuations queued by the jobs this worker runs, in
     * order, which it runs next: local[i % PARK__POOL_LOCAL] for
     * local_head <= i < local_tail. local_runs counts local runs since the
     * worker last looked for other work. local_since: the end of a job
     * after which the items below local_mark were still queued (0: none).
     * spilling: the job running filled the queue, which went to the ring,
     * and queues the rest of its continuations there too. */
    park__job_t local[PARK__POOL_LOCAL];
    unsigned local_head, local_tail, local_mark, local_runs;
    uint64_t local_since; /* park__os_ticks */
    bool spilling;
    /* Owner-written counters, read by park_pool_stats. */
    _Atomic uint64_t executed, steals, parks;
} park__worker_t;

struct park__timer;

struct park_pool {
    unsigned n;
    park__worker_t *workers;
    /* Sleepers (low 16 bits) and woken searchers (high 16), one word so a
     * submitter decides "wake someone?" with one load. */
    _Alignas(64) _Atomic uint32_t idle;
    _Atomic uint32_t joiners; /* workers waiting for a latch, not for work */
    _Atomic bool closing;     /* park_pool_destroy has begun */
    _Atomic bool stop;        /* workers exit */
    park__latch_t quiet;      /* closing, and every worker went to sleep */
    _Atomic uint64_t spilled;
    _Atomic unsigned nproducers; /* high-water mark of producers[] in use */
    _Atomic(park__ring_t *) producers[PARK__MAX_PRODUCERS];
    _Atomic size_t overflow_n;
    park__lock_t overflow_lock;
    park__overflow_t *overflow_head, *overflow_tail;
    struct park__timer *timer; /* created on first use (timer.c) */
    park__live_t live;         /* in the set of live pools (pool.c) */
    park__lock_t timer_lock;
};

/* The idle word (pool->idle), whose transitions lib/pool/pool.c tables. */
#define PARK__POOL_SLEEPER 1u
#define PARK__POOL_SEARCHER (1u << 16)
#define PARK__POOL_SLEEPERS(v) ((v)&0xffffu)
#define PARK__POOL_SEARCHERS(v) ((v) >> 16)

/* The calling thread's worker; NULL on a thread that is not a worker.
 * Local-dynamic, the access compilers give a static thread-local: for an
 * extern one they take the general model, a few instructions more on
 * every park_join, although the variable never leaves the library. */
extern _Thread_local park__worker_t *park__pool_worker __attribute__((tls_model("local-dynamic")));

/* Wakes one sleeper if nobody is searching already, or, with every worker
 * up, kicks a joiner. The caller has published its item by a seq_cst
 * operation (the producer's half). */
void park__pool_notify(park_pool_t *pool);

/* Bumps a counter of the calling worker's own: a load and a store, not an
 * RMW (only the owner writes it; park_pool_stats reads it relaxed). */
static inline void park__pool_count(_Atomic uint64_t *c)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

/* Runs a job the worker took, counting it. */
static inline void park__pool_run_job(park__worker_t *w, const park__job_t *job)
{
    park__pool_count(&w->executed);
    job->fn(job->arg);
}

/* True once park_pool_destroy has begun (acquire: pairs with its seq_cst
 * store, so a call that sees it refuses, and one that does not is
 * drained). */
bool park__pool_closing(park_pool_t *pool);

/* Consecutive runs from a worker's local queue before it looks at its
 * other queues first (then the local queue waits for one job): the bound
 * that keeps a chain of continuations from starving queued work. */
#define PARK__POOL_LOCAL_RUNS 3

/* How long continuations may wait in a worker's local queue, counted from
 * the end of the first job after which they were still there, before the
 * worker moves them to its ring and wakes a sleeper for them (checked as
 * each of its jobs ends): about what waking a sleeper takes, so that a
 * burst of short continuations the worker runs by itself within it
 * neither wakes nor feeds anyone (docs/design/pool.md). */
#define PARK__POOL_LOCAL_US 20

/* Queues fn(arg) on the pool whether or not it is closing (continuations
 * and internal work): 0 or ENOMEM. */
int park__pool_schedule(park_pool_t *pool, void (*fn)(void *), void *arg);

/* Continuations: as park__pool_schedule, but a worker of this pool keeps
 * up to PARK__POOL_LOCAL of those its jobs queue in its local queue and
 * runs them next, in order, ahead of its other queues, without waking
 * anyone (they are warm in its cache, and a worker woken for them would
 * mostly find them run). Nobody else can take them: the worker moves them
 * to its ring and wakes a worker when they have waited PARK__POOL_LOCAL_US
 * past a job's end, and before it sleeps in lib/wait (the job blocks).
 * A job that queues more than PARK__POOL_LOCAL moves them all to the ring
 * and queues the rest there, as park__pool_schedule (a burst worth waking
 * for): a worker starts the continuations of one job in order. */
int park__pool_schedule_next(park_pool_t *pool, void (*fn)(void *), void *arg);

/* Waits for the latch: a worker helps with other work meanwhile and, with
 * nothing to help, sleeps until new work comes or the latch is set; any
 * other thread parks. True if set (false: the deadline passed). */
bool park__pool_wait_latch(park__latch_t *l, park_time_t deadline);

/* timer.c: one thread per pool, started by the first arming, that calls
 * fire(arg, 0) at `when` (absolute), outside its lock. Returns 0, EPIPE
 * (the pool is closing: nothing armed) or ENOMEM. park_pool_destroy calls
 * fire(arg, ECANCELED) for everything still armed, before it drains the
 * workers. The task layer arms it for delays and deadlines. */
int park__timer_arm(park_pool_t *pool, park_time_t when, void (*fire)(void *arg, int err),
                    void *arg);
void park__timer_shutdown(park_pool_t *pool);

#endif /* PARK_LIB_POOL_POOL_H */
