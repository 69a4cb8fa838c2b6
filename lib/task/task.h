/* lib/task/task.h: the task layer's insides, for lib/task/ and for the
 * asynchronous acquisitions built on it (lib/async.c). */
#ifndef PARK_LIB_TASK_TASK_H
#define PARK_LIB_TASK_TASK_H

#include <park/task.h>
#include <stdatomic.h>

#include "pool/pool.h"
#include "wait/latch.h"

/* ---- blocks: the per-thread cache (cache.c) ---------------------------- */

/* Every task, continuation node and acquisition is one block. */
#define PARK__BLOCK_SIZE 256

/* A block from the calling thread's cache (or the depot, or malloc);
 * NULL on ENOMEM. */
void *park__block_alloc(void);
/* Back to the calling thread's cache (any thread may free any block). In
 * PARK_DEBUG and AddressSanitizer builds a freed block waits in a
 * per-thread quarantine (poisoned under ASan) before it is reused, so that
 * a use after release meets a dead block, not a new task. */
void park__block_free(void *p);

/* ---- tasks (task.c) ---------------------------------------------------- */

/* refs: the holders' references (USERS: callers, continuations), the
 * library's own (INTERNAL: a timer's), and HOLD (a higher layer holds the
 * task, e.g. a wait queue holds an acquisition). Only the holders' count
 * decides "the last reference". PERMANENT: shared, never freed. */
#define PARK__TASK_USERS 0x00ffffffu
#define PARK__TASK_INTERNAL 0x01000000u
#define PARK__TASK_HOLD 0x80000000u
#define PARK__TASK_PERMANENT UINT32_MAX

/* What a task of a special kind (an acquisition) does where a plain task
 * would just complete or be freed. */
typedef struct park__task_kind {
    /* park_task_cancel and a deadline: 0 or EALREADY. */
    int (*cancel)(park_task_t *t, int err);
    /* The last holder's reference is going and nobody observed the
     * outcome (the caller's reference still keeps t alive). */
    void (*abandon)(park_task_t *t);
} park__task_kind_t;

struct park__cont;

/* PARK_DEBUG: park_task_t.magic of a live task and of a released one
 * (checked by every public task function). */
#define PARK__TASK_LIVE 0x7a5c11feu
#define PARK__TASK_DEAD 0xdead7a5cu

struct park_task {
    _Atomic uint32_t refs;
    _Atomic uint32_t claimed; /* 0 -> 1: the one completer */
    _Atomic(struct park__cont *) conts;
    park__latch_t done;
    int err;
    void *result;
    park_pool_t *pool;             /* the pool it was made for, or NULL */
    const park__task_kind_t *kind; /* NULL: a plain task */
    _Atomic bool observed;         /* a holder looked at the outcome (kinds) */
#ifdef PARK_DEBUG
    uint32_t magic; /* PARK__TASK_LIVE, or PARK__TASK_DEAD once freed */
#endif
    union {
        struct { /* park_task_run */
            int (*fn)(void *arg, void **result);
            void *arg;
        } run;
        struct { /* when_all / when_any */
            _Atomic size_t remaining;
            _Atomic int first_err;
        } combine;
    } u;
};

_Static_assert(sizeof(park_task_t) <= PARK__BLOCK_SIZE, "a task fits a block");

/* A new pending task (a whole block, so a kind may extend it) with `refs`
 * holders' references; NULL on ENOMEM. */
park_task_t *park__task_alloc(park_pool_t *pool, uint32_t refs);

/* Frees a task nobody else has seen. */
void park__task_free(park_task_t *t);

/* Completion (EALREADY if another completer won), and cancellation with a
 * chosen error (a kind leaves its queue first). */
int park__task_complete(park_task_t *t, int err, void *result);
int park__task_cancel(park_task_t *t, int err);

/* The HOLD of a higher layer: taken before the task can be reached through
 * it, dropped by whoever ends it (the last reference frees the task). */
void park__task_hold(park_task_t *t);
void park__task_drop_hold(park_task_t *t);

/* The same, for a task nobody else can reach yet (just made by the caller,
 * which holds its one reference): plain stores instead of RMWs. relaxed:
 * whatever makes t reachable through the hold publishes it. */
static inline void park__task_hold_unshared(park_task_t *t)
{
    atomic_store_explicit(&t->refs, 1 | PARK__TASK_HOLD, memory_order_relaxed);
}

static inline void park__task_drop_hold_unshared(park_task_t *t)
{
    atomic_store_explicit(&t->refs, 1, memory_order_relaxed);
}

/* The shared, permanent task completed with error 0 and result NULL that
 * uncontended acquisitions return: retaining and releasing it write
 * nothing. */
park_task_t *park__task_ready(void);

/* The continuation list of a completed task (a sentinel). */
extern struct park__cont park__task_closed;
#ifdef PARK_DEBUG
#define PARK__TASK_READY_MAGIC .magic = PARK__TASK_LIVE,
#else
#define PARK__TASK_READY_MAGIC
#endif
/* The static initializer of a shared, permanent task completed with error 0
 * and `result`, like park__task_ready's: for a layer that returns one
 * completed outcome often and must not allocate for it. */
#define PARK__TASK_READY_INIT(result_)                                                             \
    {                                                                                              \
        .refs = PARK__TASK_PERMANENT, .claimed = 1, .conts = &park__task_closed,                   \
        .done = {PARK__LATCH_SET}, .result = (result_), PARK__TASK_READY_MAGIC                     \
    }

/* A task already completed with err and result, or NULL on ENOMEM. */
park_task_t *park__task_completed(int err, void *result);

/* Arms a deadline on t: if still pending then, it is cancelled with
 * ETIMEDOUT (park__task_cancel). 0, EPIPE (the pool is closing) or
 * ENOMEM. */
int park__task_deadline(park_task_t *t, park_pool_t *pool, park_time_t deadline);

#endif /* PARK_LIB_TASK_TASK_H */
