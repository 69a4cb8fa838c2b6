/* lib/mutex.c: park_mutex, a barging mutex with bounded unfairness.
 * Design notes (the store unlock, fairness, credits): docs/design/mutex.md.
 *
 * State word (park_mutex_t.state_), bits named in park/mutex.h:
 *   L  LOCKED       held
 *   P  PARKED       waiters may be queued in lib/wait under the address
 *   S  SLOW_UNLOCK  the holder took it while P was set, or was handed it:
 *                   its unlock takes the slow path. Only with L.
 *   c  CREDITS      0-3 more unlocks that keep P after the queue emptied.
 *                   Only with P.
 *
 *   state      meaning
 *   0          free, nobody queued (but see the store unlock)
 *   L          held, taken uncontended: unlock may be a plain store
 *   L|P        held, waiters queued (set while held)
 *   L|P|S      held, taken from a contended state; L|S once P is cleared
 *   P|c        free: a woken waiter is on its way (others may be queued),
 *              or contended a moment ago (c > 0, nobody queued)
 *
 * Transitions (x: P or 0):
 *   lock, trylock       0 -> L, P -> L|P|S   CAS (fast path: 0 -> L)
 *   unlock              L -> 0               load + store (or CAS)
 *   park (validate)     L[|S] -> L|P[|S]     CAS, bucket locked
 *   unlock, slow        L|P[|S]|c -> P|3     store, bucket locked: the oldest
 *                                            waiter is woken to retry
 *                       L|P|S|c -> P|(c-1)   store, bucket locked: queue
 *                                            empty, a credit left
 *                       L|P[|S] -> 0         store, bucket locked: queue
 *                                            empty, no credit
 *                       L|P[|S] -> L|S[|P]   store, bucket locked: handed to
 *                                            a waiter older than PARK__FAIR_NS
 *   last waiter leaves  P|c -> 0, L..|P|c -> L..   fetch_and, bucket locked
 *
 * While P or S is set only bucket-lock holders change the word (lockers
 * need L clear, and such unlocks are slow), so the slow unlock decides and
 * stores under the bucket lock, and that store is its last access to the
 * mutex (rule 9). The store unlock may erase a P set meanwhile; the hint
 * read after it and the waiter's membarrier repair that
 * (tests/model/mutex.pml checks the protocol). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <park/mutex.h>

#include "async.h"
#include "os/os.h"
#include "os/probe.h"
#include "wait/spin.h"
#include "wait/wait.h"

#define L PARK__MUTEX_LOCKED
#define P PARK__MUTEX_PARKED
#define S PARK__MUTEX_SLOW_UNLOCK
#define C PARK__MUTEX_CREDIT
#define CREDITS PARK__MUTEX_CREDITS

/* w->grant of a woken waiter. */
enum { GRANT_RETRY = 0, GRANT_HANDOFF = 1 };

bool park__mutex_store_unlock;

/* Runs at load time, before main and before any other thread of ours. An
 * unlock before it (another constructor) uses the CAS, which is always
 * correct. PARK_MUTEX_CAS_UNLOCK=1 forces the CAS (tests cover both). */
__attribute__((constructor)) static void mutex_choose_unlock(void)
{
    const char *force_cas = getenv("PARK_MUTEX_CAS_UNLOCK");
    if (force_cas && *force_cas && *force_cas != '0')
        return;
    park__mutex_store_unlock = park__os_membarrier_register();
}

void park_mutex_init(park_mutex_t *m)
{
    __atomic_store_n(&m->state_, 0, __ATOMIC_RELAXED);
}

int park_mutex_destroy(park_mutex_t *m)
{
    /* acquire: pairs with the releasing store of the last unlock, so that
     * freeing the memory is ordered after every use. */
    uint32_t s = __atomic_load_n(&m->state_, __ATOMIC_ACQUIRE);
    if (s == 0)
        return 0;
    /* A free word with P and credits only remembers recent contention. */
    return ((s & L) || park__wait_has_waiters(m)) ? EBUSY : 0;
}

/* One attempt to take a free mutex; keeps P. */
static bool try_take(park_mutex_t *m, uint32_t *s)
{
    while (!(*s & L)) {
        /* 0 -> L, P -> L|P|S; acquire: pairs with the unlock's release. */
        if (__atomic_compare_exchange_n(&m->state_, s, *s | PARK__MUTEX_TAKE(*s), true,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return true;
    }
    return false;
}

struct lock_ctx {
    park_mutex_t *m;
    bool covered; /* the holder seen at validate unlocks slowly (S) */
};

static bool lock_validate(void *ctx)
{
    struct lock_ctx *c = ctx;
    uint32_t s = __atomic_load_n(&c->m->state_, __ATOMIC_RELAXED);
    for (;;) {
        if (!(s & L))
            return false; /* free again: retry instead of sleeping */
        c->covered = (s & S) != 0;
        if (s & P)
            return true;
        /* L[|S] -> L|P[|S]; relaxed: the bucket lock orders it against the
         * slow unlock; the store unlock is handled by lock_before_sleep. */
        if (__atomic_compare_exchange_n(&c->m->state_, &s, s | P, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return true;
    }
}

static void lock_removed(void *ctx, bool more)
{
    struct lock_ctx *c = ctx;
    if (!more) /* P.. -> 0, L..|P.. -> L..; relaxed: only P and credits change */
        __atomic_fetch_and(&c->m->state_, ~(P | CREDITS), __ATOMIC_RELAXED);
}

/* The waiter's half of the asymmetric Dekker pair (docs/design/mutex.md): a
 * waiter whose holder may unlock by a plain store (S clear at validate) is
 * counted in the hint by now; after the membarrier, either that unlock sees
 * the hint and wakes a waiter, or we see P gone and retry instead of
 * sleeping. A covered waiter's holder unlocks through the bucket lock. */
static bool lock_before_sleep(void *ctx)
{
    struct lock_ctx *c = ctx;
    if (c->covered || !park__mutex_store_unlock)
        return true;
    park__os_membarrier();
    /* relaxed: the membarrier above orders it after our hint and makes a
     * racing unlock's store visible. */
    return (__atomic_load_n(&c->m->state_, __ATOMIC_RELAXED) & P) != 0;
}

static const park__wait_ops_t lock_ops = {
    .validate = lock_validate,
    .removed = lock_removed,
    .before_sleep = lock_before_sleep,
};

/* Tries to take the mutex, spinning while nobody is parked (rule 6): true
 * if taken; *s is then the word it last saw. */
static bool lock_spin(park_mutex_t *m, uint32_t *s)
{
    /* 40 pauses: a short critical section ends within them; a holder that
     * takes longer is better waited for asleep. */
    park__spin_t spin = park__spin_init(40, 0);
    for (;;) {
        if (try_take(m, s))
            return true;
        if ((*s & P) || !park__spin(&spin))
            return false;
        *s = __atomic_load_n(&m->state_, __ATOMIC_RELAXED);
    }
}

static int lock_wait(park_mutex_t *m, park_time_t deadline)
{
    park__waiter_t w;
    park__waiter_init(&w, 0);
    struct lock_ctx c = {.m = m};
    unsigned flags = 0;
    uint32_t s = __atomic_load_n(&m->state_, __ATOMIC_RELAXED);

    for (;;) {
        if (lock_spin(m, &s))
            return 0;
        if (deadline != PARK_FOREVER && park_now() >= deadline)
            return ETIMEDOUT;
        if (w.since == 0)
            w.since = park_now();
        int r = park__wait(m, &w, flags, &lock_ops, &c, deadline);
        if (r == PARK__WAIT_GRANTED && w.grant == GRANT_HANDOFF)
            return 0;
        if (r == PARK__WAIT_TIMEDOUT)
            return ETIMEDOUT;
        /* Woken to retry, or the mutex fell free before we slept. A woken
         * waiter that loses to a barger re-queues at the front with its
         * original start time, so an unlock after PARK__FAIR_NS hands it the
         * lock: a thread that unlocks and re-locks in a loop cannot hold
         * it off much longer than that. */
        if (r == PARK__WAIT_GRANTED)
            flags = PARK__WAIT_FRONT;
        s = __atomic_load_n(&m->state_, __ATOMIC_RELAXED);
    }
}

void park__mutex_lock_slow(park_mutex_t *m)
{
    (void)lock_wait(m, PARK_FOREVER);
}

int park_mutex_lock_until(park_mutex_t *m, park_time_t deadline)
{
    if (park_mutex_trylock(m))
        return 0;
    return lock_wait(m, deadline);
}

struct unlock_ctx {
    park_mutex_t *m;
    park_time_t now;
    bool woken;   /* a waiter was granted */
    bool handoff; /* ... and handed the lock (else woken to retry) */
};

static unsigned unlock_select(void *ctx, park__waiter_t *w)
{
    struct unlock_ctx *u = ctx;
    if (u->now == 0)
        u->now = park_now();
    u->woken = true;
    u->handoff = park__wait_owed(w, u->now);
    w->grant = u->handoff ? GRANT_HANDOFF : GRANT_RETRY;
    return PARK__SELECT_GRANT | PARK__SELECT_STOP;
}

static void unlock_finish(void *ctx, bool more)
{
    struct unlock_ctx *u = ctx;
    /* P stays set while anyone was granted, even the last waiter, and for
     * up to 3 more unlocks that find the queue empty (the credits): a mutex
     * that was contended a moment ago is likely to be again, and while P
     * is set every holder carries S, so its waiters sleep without the
     * membarrier of an uncontended -> contended transition. */
    uint32_t old = __atomic_load_n(&u->m->state_, __ATOMIC_RELAXED);
    uint32_t s;
    if (more || u->woken)
        s = P | CREDITS;
    else if (old & CREDITS)
        s = P | ((old & CREDITS) - C);
    else
        s = 0;
    if (u->handoff) {
        s |= L | S;
        PARK__PROBE1(handoff, u->m);
    }
    /* L|P[|S] -> 0 | P | L|S | L|S|P. release: pairs with the acquire CAS of the
     * next locker (a hand-off is ordered by the bucket unlock and the
     * waiter's acquire of `woken`). The last access to *m. */
    __atomic_store_n(&u->m->state_, s, __ATOMIC_RELEASE);
}

void park__mutex_unlock_slow(park_mutex_t *m)
{
#ifdef PARK_DEBUG
    if (!(__atomic_load_n(&m->state_, __ATOMIC_RELAXED) & L)) {
        fprintf(stderr, "park: park_mutex_unlock(%p): the mutex is not locked\n", (void *)m);
        abort();
    }
#endif
    struct unlock_ctx u = {.m = m};
    park__unpark(m, unlock_select, unlock_finish, &u);
}

static unsigned hinted_select(void *ctx, park__waiter_t *w)
{
    (void)ctx;
    if (w->notify) {
        /* An asynchronous waiter cannot retry, so take the lock for it if
         * it is free, or keep it queued with P set so that the holder's
         * unlock comes here or to unlock_select again. Its being queued
         * means the mutex is alive (destroying a mutex with waiters is
         * undefined), so this may touch it. */
        park_mutex_t *m = (park_mutex_t *)w->key;
        uint32_t s = __atomic_load_n(&m->state_, __ATOMIC_RELAXED);
        for (;;) {
            /* free -> L|S|P|c: handed over (S: its unlock is slow); else
             * held -> held|P. relaxed: the bucket lock and the waiter's
             * notify order the hand-over, as for unlock_finish's store. */
            uint32_t next = (s & L) ? (s | P) : (L | S | P | CREDITS);
            if (__atomic_compare_exchange_n(&m->state_, &s, next, true, __ATOMIC_ACQUIRE,
                                            __ATOMIC_RELAXED))
                break;
        }
        if (s & L)
            return PARK__SELECT_STOP; /* stays queued; the holder will unlock slowly */
        w->grant = GRANT_HANDOFF;
        return PARK__SELECT_GRANT | PARK__SELECT_STOP;
    }
    w->grant = GRANT_RETRY;
    return PARK__SELECT_GRANT | PARK__SELECT_STOP;
}

/* After a store unlock that saw a non-zero hint: the mutex may already be
 * someone else's, or freed, so only the queue is touched. A waiter of the
 * address (if any; the hint slot is shared) is woken to retry. */
void park__mutex_unlock_hinted(const void *m)
{
    PARK__PROBE1(hinted, m);
    park__unpark(m, hinted_select, NULL, NULL);
}

/* ---- asynchronous acquisition (lib/async.h) ---------------------------- */

static void async_give_back(void *ctx, park__waiter_t *w)
{
    (void)w;
    park_mutex_unlock(((struct lock_ctx *)ctx)->m);
}

static bool async_try_take(void *ctx)
{
    return park_mutex_trylock(((struct lock_ctx *)ctx)->m);
}

/* Queued, a task is always handed the lock (unlock_select, hinted_select);
 * an enqueue that does not queue (the lock fell free, or the fence of
 * lock_before_sleep saw it unlocked) tries again. */
static const park__acq_ops_t async_ops = {
    .wait = &lock_ops, /* ctx: the struct lock_ctx inside the task */
    .try_take = async_try_take,
    .give_back = async_give_back,
};

park_task_t *park_mutex_lock_async(park_mutex_t *m, park_pool_t *pool)
{
    struct lock_ctx c = {.m = m};
    return park__acquire_async(pool, &async_ops, m, 0, &c, sizeof c, PARK_FOREVER);
}
