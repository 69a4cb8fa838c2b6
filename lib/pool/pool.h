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
    /* The LIFO slot (owner only, plain): the first continuation queued by
     * the job this worker runs, which it runs next (fn NULL: empty);
     * lifo_runs counts slot runs since it last looked for other work. */
    park__job_t lifo;
    unsigned lifo_runs;
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

/* Consecutive runs from a worker's LIFO slot before it looks at its other
 * queues first (then the slot waits for one job): the bound that keeps a
 * chain of continuations from starving queued work. */
#define PARK__POOL_LIFO_RUNS 3

/* Queues fn(arg) on the pool whether or not it is closing (continuations
 * and internal work): 0 or ENOMEM. */
int park__pool_schedule(park_pool_t *pool, void (*fn)(void *), void *arg);

/* Continuations: as park__pool_schedule, but a worker of this pool keeps
 * the first one queued by its current job in its LIFO slot and runs it
 * next, ahead of its queues, without waking anyone (it is warm in this
 * worker's cache); the rest go to its ring in order. The slot is the
 * owner's alone: before the worker sleeps in lib/wait (the job blocks) it
 * moves the slot to its ring, where other workers can take it. */
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
