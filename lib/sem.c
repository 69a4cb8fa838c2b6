/* lib/sem.c: park_sem, a strictly FIFO counting semaphore.
 * Design notes: docs/design/sem.md.
 *
 * State word (park_sem_t.state_): bits 0-30 hold the free permits (COUNT),
 * bit 31 (WAITERS, park/sem.h) says that waiters are queued in lib/wait
 * under the semaphore's address.
 *
 * Invariant: WAITERS set => COUNT == 0. Permits released while anyone is
 * queued go to the queue, never to the count, so a newcomer sees
 * COUNT == 0 and queues behind (strict FIFO).
 *
 *   state        meaning
 *   c            c free permits, nobody queued
 *   W            no free permit, waiters queued
 *
 * Transitions:
 *   acquire        c -> c-1 (c > 0)         CAS (fast path, inline)
 *   release n      c -> c+n (c+n <= max)    CAS (fast path, inline)
 *   park           0 -> W                   CAS, bucket locked (validate)
 *   release n, W   W -> W      n granted, waiters remain     store,
 *                  W -> r      n-r granted, queue now empty  bucket locked
 *   last waiter    W -> 0                   store, bucket locked (timeout)
 *   leaves
 *
 * While WAITERS is set nobody but a bucket-lock holder changes the word
 * (both fast paths need it clear), so the slow paths decide and store under
 * the bucket lock. A granted waiter owns its permit from the moment it is
 * dequeued; a waiter that times out either was dequeued first (then it
 * owns the permit and succeeds) or leaves ungranted: no permit is lost. */
#include <errno.h>

#include <park/sem.h>

#include "async.h"
#include "wait/spin.h"
#include "wait/wait.h"

#define W PARK__SEM_WAITERS
#define COUNT PARK__SEM_COUNT_MASK

int park_sem_init(park_sem_t *s, uint32_t initial, uint32_t max)
{
    if (max == 0 || max > PARK_SEM_VALUE_MAX || initial > max)
        return EINVAL;
    __atomic_store_n(&s->state_, initial, __ATOMIC_RELAXED);
    s->max_ = max;
    return 0;
}

int park_sem_destroy(park_sem_t *s)
{
    /* acquire: pairs with the release of the last release/grant. */
    return __atomic_load_n(&s->state_, __ATOMIC_ACQUIRE) & W ? EBUSY : 0;
}

uint32_t park_sem_count(const park_sem_t *s)
{
    /* relaxed: a monitoring snapshot. */
    return __atomic_load_n(&s->state_, __ATOMIC_RELAXED) & COUNT;
}

/* What a waiter carries, thread or task (the ctx of the callbacks). */
struct acquire_ctx {
    park_sem_t *s;
};

static bool acquire_validate(void *ctx)
{
    park_sem_t *s = ((struct acquire_ctx *)ctx)->s;
    uint32_t v = __atomic_load_n(&s->state_, __ATOMIC_RELAXED);
    for (;;) {
        if (v & W)
            return true;
        if (v != 0)
            return false; /* a permit is free: take it instead */
        /* 0 -> W; relaxed: the bucket lock orders it against releasers. */
        if (__atomic_compare_exchange_n(&s->state_, &v, W, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return true;
    }
}

static void acquire_removed(void *ctx, bool more)
{
    park_sem_t *s = ((struct acquire_ctx *)ctx)->s;
    if (!more) /* W -> 0 */
        __atomic_store_n(&s->state_, 0, __ATOMIC_RELAXED);
}

static const park__wait_ops_t acquire_ops = {
    .validate = acquire_validate,
    .removed = acquire_removed,
};

/* Spins while nobody is queued (rule 6): true if it took a permit. */
static bool acquire_spin(park_sem_t *s)
{
    /* 100 pauses: a permit held for a short section comes back within
     * them; one held longer is better waited for asleep. */
    park__spin_t spin = park__spin_init(100, 0);
    do {
        uint32_t v = __atomic_load_n(&s->state_, __ATOMIC_RELAXED);
        if (v & W)
            break; /* others are queued: FIFO says get in line */
        if (v != 0 && park_sem_try_acquire(s))
            return true;
    } while (park__spin(&spin));
    return park_sem_try_acquire(s);
}

int park__sem_acquire_slow(park_sem_t *s, park_time_t deadline)
{
    struct acquire_ctx c = {.s = s};
    for (;;) {
        if (acquire_spin(s))
            return 0;
        if (deadline != PARK_FOREVER && park_now() >= deadline)
            return ETIMEDOUT;
        park__waiter_t w;
        park__waiter_init(&w, 1);
        switch (park__wait(s, &w, 0, &acquire_ops, &c, deadline)) {
        case PARK__WAIT_GRANTED:
            return 0; /* the permit was handed to us */
        case PARK__WAIT_TIMEDOUT:
            return ETIMEDOUT;
        default:
            break; /* a permit fell free before we were queued */
        }
    }
}

int park_sem_acquire_until(park_sem_t *s, park_time_t deadline)
{
    if (park_sem_try_acquire(s))
        return 0;
    return park__sem_acquire_slow(s, deadline);
}

struct release_ctx {
    park_sem_t *s;
    uint32_t n; /* permits still to hand out */
    int result;
};

static unsigned release_select(void *ctx, park__waiter_t *w)
{
    struct release_ctx *r = ctx;
    (void)w;
    r->n--;
    return r->n ? PARK__SELECT_GRANT : PARK__SELECT_GRANT | PARK__SELECT_STOP;
}

static void release_finish(void *ctx, bool more)
{
    struct release_ctx *r = ctx;
    park_sem_t *s = r->s;
    uint32_t v = __atomic_load_n(&s->state_, __ATOMIC_RELAXED);
    if (v & W) {
        /* W -> W (waiters remain, so every permit was granted) or W -> n.
         * release: pairs with the acquire of whoever takes the leftover
         * permits; granted waiters are ordered by the bucket lock and the
         * release of their `woken`. */
        __atomic_store_n(&s->state_, more ? W : r->n, __ATOMIC_RELEASE);
        return;
    }
    /* The queue emptied (timeouts) between our look and the bucket lock,
     * so nobody was granted: add to the count like the fast path. */
    if (r->n > s->max_ - v) {
        r->result = EOVERFLOW;
        return;
    }
    /* c -> c+n; release: pairs with the acquire in park_sem_try_acquire. */
    while (!__atomic_compare_exchange_n(&s->state_, &v, v + r->n, true, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED)) {
        if (r->n > s->max_ - v) {
            r->result = EOVERFLOW;
            return;
        }
    }
}

int park__sem_release_slow(park_sem_t *s, uint32_t n)
{
    if (n == 0)
        return EINVAL;
    uint32_t max = s->max_;
    uint32_t v = __atomic_load_n(&s->state_, __ATOMIC_RELAXED);
    while (!(v & W)) {
        if (n > max - v)
            return EOVERFLOW;
        /* c -> c+n; release: pairs with the acquire in park_sem_try_acquire. */
        if (__atomic_compare_exchange_n(&s->state_, &v, v + n, true, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
            return 0;
    }
    if (n > max)
        return EOVERFLOW; /* the count is 0 while waiters queue */
    struct release_ctx r = {.s = s, .n = n};
    park__unpark(s, release_select, release_finish, &r);
    return r.result;
}

/* ---- asynchronous acquisition (lib/async.h) ---------------------------- */

/* A granted task owns one permit; one nobody holds any more gives it back. */
static void async_give_back(void *ctx, park__waiter_t *w)
{
    (void)w;
    park_sem_release(((struct acquire_ctx *)ctx)->s, 1);
}

static bool async_try_take(void *ctx)
{
    return park_sem_try_acquire(((struct acquire_ctx *)ctx)->s);
}

static const park__acq_ops_t async_ops = {
    .wait = &acquire_ops, /* ctx: the struct acquire_ctx inside the task */
    .try_take = async_try_take,
    .give_back = async_give_back,
};

park_task_t *park_sem_acquire_async_until(park_sem_t *s, park_pool_t *pool, park_time_t deadline)
{
    struct acquire_ctx c = {.s = s};
    return park__acquire_async(pool, &async_ops, s, 1, &c, sizeof c, deadline);
}

park_task_t *park_sem_acquire_async(park_sem_t *s, park_pool_t *pool)
{
    return park_sem_acquire_async_until(s, pool, PARK_FOREVER);
}
