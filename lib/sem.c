/* lib/sem.c: park_sem, a counting semaphore: barging with bounded
 * unfairness by default, strictly FIFO as an option (max_ & FIFO).
 * Design notes: docs/design/sem.md; protocol model: tests/model/sem.pml.
 *
 * State word (park_sem_t.state_): COUNT (low 32 bits) free permits; W
 * (WAITERS) waiters are queued in lib/wait under the semaphore's address;
 * K (WOKEN) a waiter woken to retry is on its way (default mode only).
 *
 *   FIFO invariant     W => COUNT == 0 (a newcomer queues behind)
 *   default invariant  W and COUNT > 0 => K, or the thread that stored
 *                      that word is about to wake someone (wake: again)
 *
 * Transitions (c: COUNT):
 *   acquire          c -> c-1 (c > 0)            CAS (fast path, inline)
 *   release n        c -> c+n (W clear, or K)    CAS (no lock, no wake)
 *   park (validate)  c=0 -> W[, K dropped]       CAS, bucket locked
 *   take (woken)     c -> c-1, K dropped unless W and c-1 > 0 (then
 *                    retire: bucket locked, K passed on or dropped)
 *   release n, W     FIFO: W -> W (n granted) or W -> r (queue emptied)
 *   (no K)           default: permits handed to waiters owed them
 *                    (PARK__FAIR_NS, tasks), the rest c -> c+r, the oldest
 *                    thread woken to retry (K)      CAS, bucket locked
 *   last waiter      W cleared                      bucket locked (timeout)
 *     leaves
 *
 * W changes only under the bucket lock. K is set only there; it is dropped
 * there or by the woken waiter's take, and COUNT rises without the lock
 * only while K is set: a locked wake whose final CAS finds W, free permits
 * and no K runs again. A granted waiter owns its permit from the moment it
 * is dequeued (hand-off) or retries like a newcomer, re-queueing at the
 * front with its start time (woken). A timed-out waiter either was
 * dequeued first or leaves ungranted: no permit is lost. */
#include <errno.h>

#include <park/sem.h>

#include "async.h"
#include "os/os.h"
#include "wait/fork.h"
#include "wait/spin.h"
#include "wait/wait.h"

#define W PARK__SEM_WAITERS
#define K PARK__SEM_WOKEN
#define COUNT PARK__SEM_COUNT_MASK

/* w->grant of a granted waiter. */
enum { GRANT_HANDOFF = 0, GRANT_RETRY = 1 };

static bool fifo(const park_sem_t *s)
{
    return s->max_ & PARK__SEM_FIFO;
}

static uint32_t max_of(const park_sem_t *s)
{
    return s->max_ & PARK__SEM_MAX_MASK;
}

static int sem_init(park_sem_t *s, uint32_t initial, uint32_t max, uint32_t flags)
{
    if (max == 0 || max > PARK_SEM_VALUE_MAX || initial > max)
        return EINVAL;
    __atomic_store_n(&s->state_, initial, __ATOMIC_RELAXED);
    s->max_ = max | flags;
    s->pad_ = 0;
    return 0;
}

int park_sem_init(park_sem_t *s, uint32_t initial, uint32_t max)
{
    return sem_init(s, initial, max, 0);
}

int park_sem_init_fifo(park_sem_t *s, uint32_t initial, uint32_t max)
{
    return sem_init(s, initial, max, PARK__SEM_FIFO);
}

int park_sem_destroy(park_sem_t *s)
{
    /* acquire: pairs with the release of the last release/grant. */
    if (!(__atomic_load_n(&s->state_, __ATOMIC_ACQUIRE) & W))
        return 0;
    /* In a forked child W may outlive the waiters left behind. */
    return PARK__UNLIKELY(park__forked) && !park__wait_has_waiters(s) ? 0 : EBUSY;
}

uint32_t park_sem_count(const park_sem_t *s)
{
    /* relaxed: a monitoring snapshot. */
    return (uint32_t)(__atomic_load_n(&s->state_, __ATOMIC_RELAXED) & COUNT);
}

/* What a waiter carries, thread or task (the ctx of the callbacks). */
struct acquire_ctx {
    park_sem_t *s;
    bool woken; /* this thread is the woken waiter (K is its to clear) */
};

static bool acquire_validate(void *ctx)
{
    struct acquire_ctx *c = ctx;
    park_sem_t *s = c->s;
    uint64_t v = __atomic_load_n(&s->state_, __ATOMIC_RELAXED);
    for (;;) {
        if (v & COUNT)
            return false; /* a permit is free: take it instead */
        /* c=0 -> W, clearing K if it was ours; relaxed: the bucket lock
         * orders it against releasers. */
        uint64_t next = (v | W) & ~(c->woken ? K : 0);
        if (__atomic_compare_exchange_n(&s->state_, &v, next, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
            c->woken = false;
            return true;
        }
    }
}

static void acquire_removed(void *ctx, bool more)
{
    park_sem_t *s = ((struct acquire_ctx *)ctx)->s;
    if (!more) /* W -> 0: nobody queued; relaxed: bucket locked */
        __atomic_fetch_and(&s->state_, ~W, __ATOMIC_RELAXED);
}

static const park__wait_ops_t acquire_ops = {
    .validate = acquire_validate,
    .removed = acquire_removed,
};

/* ---- waking (default mode), decided under the bucket lock ---------------- */

struct wake_ctx {
    park_sem_t *s;
    uint32_t n;      /* permits still to place */
    bool checked;    /* EOVERFLOW was checked under the bucket lock */
    bool retire;     /* K is the caller's to drop (retire) */
    bool woke;       /* a waiter was woken to retry: K stays set */
    bool again;      /* the stored word has W, free permits and no K */
    uint32_t handed; /* permits of n handed to waiters by select */
    int result;      /* 0 or EOVERFLOW */
    park_time_t now; /* park__wait_owed's clock: 0 until a thread waiter needs it */
};

/* Once, under the bucket lock, before anything is granted: a release
 * beyond the maximum places nothing. (A release racing it on the lockless
 * path can still push the count up meanwhile: wake_finish re-checks.) */
static bool wake_check(struct wake_ctx *r)
{
    if (!r->checked) {
        r->checked = true;
        uint64_t v = __atomic_load_n(&r->s->state_, __ATOMIC_RELAXED);
        if (r->n > max_of(r->s) - (v & COUNT)) {
            r->result = EOVERFLOW;
            r->n = 0;
        }
    }
    return r->result == 0;
}

/* Oldest first: a waiter owed a hand-off gets a permit (a released one,
 * else a free one); the first young thread is woken to retry if there is
 * something to retry for and nobody is on the way already. */
static unsigned wake_select(void *ctx, park__waiter_t *w)
{
    struct wake_ctx *r = ctx;
    if (!wake_check(r))
        return PARK__SELECT_STOP;
    /* The clock only for a thread: an asynchronous waiter is always owed. */
    if (park__wait_owed(w, &r->now)) {
        if (r->n) {
            r->n--;
            r->handed++;
        } else if (!park_sem_try_acquire(r->s)) /* a free one: c -> c-1 */
            return PARK__SELECT_STOP;           /* it stays first in line */
        w->grant = GRANT_HANDOFF;
        return PARK__SELECT_GRANT;
    }
    uint64_t v = __atomic_load_n(&r->s->state_, __ATOMIC_RELAXED);
    bool on_its_way = park__woken_mark(v & K) && !r->retire;
    if ((r->n || (v & COUNT)) && !on_its_way) {
        w->grant = GRANT_RETRY;
        r->woke = true;
        return PARK__SELECT_GRANT | PARK__SELECT_STOP;
    }
    return PARK__SELECT_STOP;
}

/* Stores what wake_select decided: the permits left join the count. */
static void wake_finish(void *ctx, bool more)
{
    struct wake_ctx *r = ctx;
    if (!wake_check(r))
        return;
    park_sem_t *s = r->s;
    uint64_t v = __atomic_load_n(&s->state_, __ATOMIC_RELAXED);
    uint64_t next;
    do {
        if (r->n > max_of(s) - (v & COUNT)) {
            /* Only releases racing each other past the maximum get here
             * (one took the lockless path after wake_check looked). If
             * none of ours was handed over, ours places nothing, as if it
             * came after the other (EOVERFLOW means "nothing released");
             * otherwise what fits is placed and the excess dropped rather
             * than exceed the maximum. */
            r->result = EOVERFLOW;
            r->n = r->handed ? (uint32_t)(max_of(s) - (v & COUNT)) : 0;
        }
        next = (v & COUNT) + r->n;
        if (more)
            next |= W;
        if (r->woke || ((v & K) && !r->retire))
            next |= K;
        /* release: pairs with the acquire of whoever takes the permits;
         * granted waiters are ordered by the bucket lock. */
    } while (!__atomic_compare_exchange_n(&s->state_, &v, next, true, __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED));
    /* K was dropped outside the lock (take_woken), or permits came without
     * a lock (a release while K was set), after select looked: someone
     * must be woken, so the caller runs the wake again. */
    r->again = (next & W) && (next & COUNT) && !(next & K);
}

/* Runs the wake (park__unpark with wake_select and wake_finish) until the
 * word it leaves needs no further wake. */
static void wake(struct wake_ctx *r)
{
    for (;;) {
        park__unpark(r->s, wake_select, wake_finish, r);
        if (!r->again)
            return;
        r->n = 0;
        r->retire = false; /* K was cleared by the pass that set `again` */
        r->woke = false;
        r->again = false;
    }
}

/* The woken waiter took a permit with others to pass it on to, or gave
 * up: K goes, and if permits are free while others sleep, the next is
 * woken (K again). */
static void retire(park_sem_t *s)
{
    struct wake_ctx r = {.s = s, .retire = true};
    wake(&r);
}

/* The woken waiter's take: c -> c-1, dropping K in the same step unless
 * permits remain for waiters still queued (then *pass: retire). */
static bool take_woken(park_sem_t *s, bool *pass)
{
    uint64_t v = __atomic_load_n(&s->state_, __ATOMIC_RELAXED);
    while (v & COUNT) {
        uint64_t next = v - 1;
        bool passing = (v & W) && (next & COUNT);
        if (!passing)
            next &= ~K;
        /* acquire: pairs with the release that freed the permit. */
        if (__atomic_compare_exchange_n(&s->state_, &v, next, true, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED)) {
            *pass = passing;
            return true;
        }
    }
    return false;
}

/* Spins while nobody is queued (rule 6): true if it took a permit. */
static bool acquire_spin(park_sem_t *s)
{
    /* 512 pauses, looking every 128: a permit held for a short section
     * comes back within them, one held longer is better waited for asleep,
     * and rare looks leave the holders the word's cache line
     * (docs/design/sem.md, Tuning). */
    park__spin_t spin = park__spin_init_every(128, 512, 0);
    do {
        uint64_t v = __atomic_load_n(&s->state_, __ATOMIC_RELAXED);
        if (v & W)
            break; /* others are queued: get in line */
        if ((v & COUNT) && park_sem_try_acquire(s))
            return true;
    } while (park__spin(&spin));
    return park_sem_try_acquire(s);
}

int park__sem_acquire_slow(park_sem_t *s, park_time_t deadline)
{
    struct acquire_ctx c = {.s = s, .woken = false};
    park__waiter_t w;
    park__waiter_init(&w, 1);
    park__waiter_profile(&w, PARK_PROFILE_SEM, GRANT_HANDOFF);
    if (!fifo(s))
        w.since = park_now(); /* kept when a woken waiter re-queues */
    for (;;) {
        bool pass = false;
        if (c.woken ? take_woken(s, &pass) : acquire_spin(s)) {
            if (pass)
                retire(s);
            return 0;
        }
        if (park__deadline_passed(deadline)) {
            if (c.woken)
                retire(s);
            return ETIMEDOUT;
        }
        /* A woken waiter that lost to a barger re-queues at the front. */
        unsigned flags = c.woken ? PARK__WAIT_FRONT : 0;
        switch (park__wait(s, &w, flags, &acquire_ops, &c, deadline)) {
        case PARK__WAIT_GRANTED:
            if (w.grant == GRANT_HANDOFF)
                return 0;   /* the permit was handed to us */
            c.woken = true; /* woken to retry */
            break;
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

/* ---- releasing --------------------------------------------------------------- */

struct release_ctx {
    park_sem_t *s;
    uint32_t n; /* permits still to hand out */
    int result;
};

/* FIFO: every permit to the queue head(s). */
static unsigned fifo_select(void *ctx, park__waiter_t *w)
{
    struct release_ctx *r = ctx;
    w->grant = GRANT_HANDOFF;
    r->n--;
    return r->n ? PARK__SELECT_GRANT : PARK__SELECT_GRANT | PARK__SELECT_STOP;
}

static void fifo_finish(void *ctx, bool more)
{
    struct release_ctx *r = ctx;
    park_sem_t *s = r->s;
    uint64_t v = __atomic_load_n(&s->state_, __ATOMIC_RELAXED);
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
    uint32_t max = max_of(s);
    do {
        if (r->n > max - (v & COUNT)) {
            r->result = EOVERFLOW;
            return;
        }
        /* c -> c+n; release: pairs with the acquire in park_sem_try_acquire. */
    } while (!__atomic_compare_exchange_n(&s->state_, &v, v + r->n, true, __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED));
}

/* Default mode, a release that finds W and K: true if it should take the
 * lock anyway, because a fair hand-off may be due (wake_select decides).
 * With many threads on few CPUs K is set most of the time (the woken
 * waiter waits for a CPU), and releases that always skipped the lock then
 * would space the hand-offs well beyond PARK__FAIR_NS (docs/design/sem.md,
 * Tuning). One release in 64 of a thread reads the clock. */
static bool fair_look(const park_sem_t *s)
{
    static _Thread_local uint32_t releases;
    park_time_t now;
    return park__wait_fair_look(s, &releases, 64, &now);
}

int park__sem_release_slow(park_sem_t *s, uint32_t n)
{
    if (n == 0)
        return EINVAL;
    uint32_t max = max_of(s);
    uint64_t v = __atomic_load_n(&s->state_, __ATOMIC_RELAXED);
    bool look = (v & W) && (v & K) && !fifo(s) && fair_look(s); /* else no use */
    /* Without waiters, or (default mode) with a woken waiter on its way,
     * which will take a permit or pass them on: no lock, no wake. */
    while (!(v & W) || (park__woken_mark(v & K) && !fifo(s) && !look)) {
        if (n > max - (v & COUNT))
            return EOVERFLOW;
        /* c -> c+n; release: pairs with the acquire in park_sem_try_acquire. */
        if (__atomic_compare_exchange_n(&s->state_, &v, v + n, true, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
            return 0;
    }
    if (n > max)
        return EOVERFLOW;
    if (fifo(s)) {
        struct release_ctx r = {.s = s, .n = n};
        park__unpark(s, fifo_select, fifo_finish, &r);
        return r.result;
    }
    struct wake_ctx r = {.s = s, .n = n};
    wake(&r);
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
