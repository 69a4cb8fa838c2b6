/* lib/mutex.c: park_mutex, a barging mutex with bounded unfairness.
 *
 * State word (park_mutex_t.state_), bits named in park/mutex.h:
 *
 *   LOCKED  the mutex is held
 *   PARKED  waiters may be queued in lib/wait under the mutex's address
 *
 *   state      meaning
 *   0          free, nobody queued
 *   L          held, nobody queued
 *   L|P        held, waiters queued
 *   P          free, waiters queued; a woken waiter is on its way to retry
 *
 * Transitions (x is P or 0):
 *   lock, trylock        x -> x|L            CAS (fast path: 0 -> L)
 *   unlock               L -> 0              CAS (fast path)
 *   park (validate)      L -> L|P            CAS, bucket locked
 *   unlock, slow         L|P -> 0 | P        store, bucket locked: wake the
 *                                            oldest waiter, which retries
 *                        L|P -> L | L|P      store, bucket locked: hand the
 *                                            lock to a waiter that has waited
 *                                            FAIR_NS (no barging possible)
 *   last waiter leaves   x|L|P -> x|L, P->0  fetch_and, bucket locked
 *
 * While L is set only bucket-lock holders change the word (lockers need L
 * clear to CAS), so the slow unlock decides and stores under the bucket
 * lock, and that store is its last access to the mutex: the woken waiter
 * and everything else it still touches live in lib/wait (rule 9).
 *
 * A waiter that is woken without a hand-off and loses the race to a barger
 * re-queues at the front, keeping its original start time, so the next
 * unlock after FAIR_NS hands the lock to it: a thread that unlocks and
 * re-locks in a loop cannot hold a waiter off for much longer than FAIR_NS. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <park/mutex.h>

#include "os/os.h"
#include "wait/wait.h"

#define L PARK__MUTEX_LOCKED
#define P PARK__MUTEX_PARKED

#define FAIR_NS 1000000u /* a waiter older than this is handed the lock */
#define SPIN 100         /* lock attempts on loads before parking */

/* w->grant of a woken waiter. */
enum { GRANT_RETRY = 0, GRANT_HANDOFF = 1 };

void park_mutex_init(park_mutex_t *m)
{
    __atomic_store_n(&m->state_, 0, __ATOMIC_RELAXED);
}

int park_mutex_destroy(park_mutex_t *m)
{
    /* acquire: pairs with the releasing store of the last unlock, so that
     * freeing the memory is ordered after every use. */
    return __atomic_load_n(&m->state_, __ATOMIC_ACQUIRE) == 0 ? 0 : EBUSY;
}

/* One attempt to take a free mutex; keeps P. */
static bool try_take(park_mutex_t *m, uint32_t *s)
{
    while (!(*s & L)) {
        /* x -> x|L; acquire: pairs with the unlock's release. */
        if (__atomic_compare_exchange_n(&m->state_, s, *s | L, true, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return true;
    }
    return false;
}

static bool park_validate(void *ctx)
{
    park_mutex_t *m = ctx;
    uint32_t s = __atomic_load_n(&m->state_, __ATOMIC_RELAXED);
    for (;;) {
        if (!(s & L))
            return false; /* free again: retry instead of sleeping */
        if (s & P)
            return true;
        /* L -> L|P; relaxed: the bucket lock orders it against the slow
         * unlock that reads it. */
        if (__atomic_compare_exchange_n(&m->state_, &s, s | P, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return true;
    }
}

static void park_removed(void *ctx, bool more)
{
    park_mutex_t *m = ctx;
    if (!more) /* x|L|P -> x|L, P -> 0; relaxed: only P changes */
        __atomic_fetch_and(&m->state_, ~P, __ATOMIC_RELAXED);
}

static const park__wait_ops_t park_ops = { park_validate, park_removed };

static int lock_wait(park_mutex_t *m, park_time_t deadline)
{
    park__waiter_t w;
    park__waiter_init(&w, 0);
    unsigned flags = 0;
    uint32_t s = __atomic_load_n(&m->state_, __ATOMIC_RELAXED);

    for (;;) {
        /* Spin only while nobody is parked (rule 6). */
        for (int i = 0; i < SPIN && !(s & P); i++) {
            if (try_take(m, &s))
                return 0;
            park__os_pause();
            s = __atomic_load_n(&m->state_, __ATOMIC_RELAXED);
        }
        if (try_take(m, &s))
            return 0;
        if (deadline != PARK_FOREVER && park_now() >= deadline)
            return ETIMEDOUT;
        if (w.since == 0)
            w.since = park_now();
        int r = park__wait(m, &w, flags, &park_ops, m, deadline);
        if (r == PARK__WAIT_GRANTED && w.grant == GRANT_HANDOFF)
            return 0;
        if (r == PARK__WAIT_TIMEDOUT)
            return ETIMEDOUT;
        /* Woken to retry (or the mutex fell free before we slept): a woken
         * waiter that loses to a barger keeps its place at the front. */
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
    int granted; /* -1: nobody, else the grant given */
};

static unsigned unlock_select(void *ctx, park__waiter_t *w)
{
    struct unlock_ctx *u = ctx;
    if (u->now == 0)
        u->now = park_now();
    u->granted = u->now - w->since >= FAIR_NS ? GRANT_HANDOFF : GRANT_RETRY;
    w->grant = (uintptr_t)u->granted;
    return PARK__SELECT_GRANT | PARK__SELECT_STOP;
}

static void unlock_finish(void *ctx, bool more)
{
    struct unlock_ctx *u = ctx;
    uint32_t s = more ? P : 0;
    if (u->granted == GRANT_HANDOFF)
        s |= L;
    /* L|P -> 0 | P | L | L|P. release: pairs with the acquire CAS of the
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
    struct unlock_ctx u = { m, 0, -1 };
    park__unpark(m, unlock_select, unlock_finish, &u);
}
