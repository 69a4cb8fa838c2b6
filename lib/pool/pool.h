/* lib/pool/pool.h: the pool's insides, shared by pool.c, timer.c and
 * task.c. */
#ifndef PARK_LIB_POOL_POOL_H
#define PARK_LIB_POOL_POOL_H

#include <park/mutex.h>
#include <park/pool.h>
#include <park/task.h>
#include <pthread.h>
#include <stdatomic.h>

#include "pool/deque.h"

/* A one-shot event that threads can wait for (join and task latches):
 * 0 pending, SET, or pending with WAITERS parked in lib/wait under the
 * latch's address. park__latch_set touches the latch only by its one
 * exchange, so the waiter may free it as soon as it has seen it set. */
typedef struct park__latch {
    _Atomic uint32_t state;
} park__latch_t;

#define PARK__LATCH_SET 1u
#define PARK__LATCH_WAITERS 2u

void park__latch_init(park__latch_t *l);
bool park__latch_is_set(park__latch_t *l);
void park__latch_set(park__latch_t *l);
/* Parks until the latch is set or the deadline passes: true if set. */
bool park__latch_wait(park__latch_t *l, park_time_t deadline);

/* The shared queue's rings: bounded MPMC (Vyukov), one per worker. */
#define PARK__RING_CAP 1024

typedef struct park__ring_cell {
    _Atomic uint64_t seq;
    _Atomic(void (*)(void *)) fn;
    _Atomic(void *) arg;
    uint64_t pad_;
} park__ring_cell_t;

typedef struct park__ring {
    _Alignas(64) _Atomic uint64_t head;
    _Alignas(64) _Atomic uint64_t tail;
    _Alignas(64) park__ring_cell_t cells[PARK__RING_CAP];
} park__ring_t;

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
    uint64_t rng;
    pthread_t thread;
    /* Owner-written counters, read by park_pool_stats. */
    _Atomic uint64_t executed, steals, parks;
} park__worker_t;

struct park__timer;

/* Outside threads that submit get a ring each (a single producer, no RMW
 * to push); beyond this many at once they share the workers' rings. */
#define PARK__MAX_PRODUCERS 256

struct park_pool {
    unsigned n;
    park__worker_t *workers;
    /* Sleepers (low 16 bits) and woken searchers (high 16), one word so a
     * submitter decides "wake someone?" with one load. */
    _Alignas(64) _Atomic uint32_t idle;
    _Atomic bool closing; /* park_pool_destroy has begun */
    _Atomic bool stop;    /* workers exit */
    _Atomic uint64_t spilled;
    _Atomic unsigned nproducers; /* high-water mark of producers[] in use */
    _Atomic(park__ring_t *) producers[PARK__MAX_PRODUCERS];
    _Atomic size_t overflow_n;
    park_mutex_t overflow_lock;
    park__overflow_t *overflow_head, *overflow_tail;
    struct park__timer *timer; /* created on first use (timer.c) */
    park_mutex_t timer_lock;
};

/* Queues fn(arg) on the pool whether or not it is closing (continuations
 * and internal work): 0 or ENOMEM. */
int park__pool_schedule(park_pool_t *pool, void (*fn)(void *), void *arg);

/* Waits for the latch: a worker helps with other work meanwhile, any other
 * thread parks. */
bool park__pool_wait_latch(park__latch_t *l, park_time_t deadline);

/* timer.c */
typedef enum { PARK__TIMER_DELAY, PARK__TIMER_DEADLINE } park__timer_kind_t;
/* Arms the pool's timer to act on t (which it retains) at `when`: 0,
 * EPIPE or ENOMEM. */
int park__timer_arm(park_pool_t *pool, park_task_t *t, park_time_t when, park__timer_kind_t kind);
/* Completes every armed timer with ECANCELED and stops the timer thread. */
void park__timer_shutdown(park_pool_t *pool);

/* task.c: completion, and cancellation with a chosen error (an
 * acquisition leaves its queue first: lib/async.h). */
int park__task_complete(park_task_t *t, int err, void *result);
int park__task_cancel(park_task_t *t, int err);
/* A reference of the library's own (a timer's), which does not count as a
 * holder's when a holder drops the last one (lib/async.h). */
park_task_t *park__task_retain_internal(park_task_t *t);
void park__task_release_internal(park_task_t *t);

#endif /* PARK_LIB_POOL_POOL_H */
