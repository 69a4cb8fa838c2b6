/* lib/cond.c: park_cond, a condition variable on lib/wait, and the steps
 * the drop-in's pthread_cond_* share with it (cond_impl.h). Design notes:
 * docs/design/cond.md; protocol model: tests/model/cond.pml.
 *
 * State word (park_cond_t.waiters_): W, non-zero while waiters may be
 * queued under the condition variable's address in lib/wait. W changes
 * only under that key's bucket lock:
 *
 *   queue (validate)        0|W -> W
 *   last waiter leaves      W -> 0    (timeout, cancellation)
 *   signal/broadcast takes  W -> 0    (when it took the last one)
 *     the last one
 *
 * so a signal or broadcast that reads 0 has nobody to wake (or only
 * waiters it need not see: park/cond.h) and takes no lock.
 *
 * A waiter's grant says who took it (cond_impl.h): a signal, or a
 * broadcast. Broadcast takes every waiter, oldest first, wakes only the
 * oldest and chains the others through their grants: each is dequeued but
 * not woken (PARK__SELECT_DEFER), and its predecessor's grant is its
 * address. A woken waiter takes the mutex back, then wakes its successor
 * (park__wake), so the waiters reach the mutex one after another. Taken
 * waiters are never touched by the broadcast again and never touch the
 * condition variable again (but a cancelled one that a signal took:
 * park__cond_cancelled), so it may be destroyed once nobody waits. A
 * deferred waiter's deadline no longer applies: it was taken, and waits
 * for its predecessor's wake however long the mutex is held. */
#include <errno.h>

#include <park/cond.h>

#include "cond_impl.h"
#include "wait/wait.h"

/* ---- the queue (lib/wait) ---------------------------------------------- */

/* Bucket locked: a waiter queues. */
static bool cond_validate(void *ctx)
{
    park_cond_t *c = ctx;
    /* relaxed: a signaller reads W after locking the mutex this waiter
     * releases after queueing (park/cond.h), or need not see it. */
    __atomic_store_n(&c->waiters_, 1, __ATOMIC_RELAXED);
    return true;
}

/* Bucket locked: a waiter left ungranted, or a signal or broadcast took
 * waiters; `more`: others remain. */
static void cond_settled(void *ctx, bool more)
{
    park_cond_t *c = ctx;
    if (!more)
        __atomic_store_n(&c->waiters_, 0, __ATOMIC_RELAXED); /* as in cond_validate */
}

static const park__wait_ops_t cond_ops = {
    .validate = cond_validate,
    .removed = cond_settled,
};

/* ---- signal, broadcast ------------------------------------------------- */

static unsigned select_signal(void *ctx, park__waiter_t *w)
{
    (void)ctx;
    w->grant = PARK__COND_GRANT_SIGNAL;
    return PARK__SELECT_GRANT | PARK__SELECT_STOP;
}

void park__cond_signal_slow(park_cond_t *c)
{
    park__unpark(c, select_signal, cond_settled, c);
}

struct broadcast {
    park_cond_t *c;
    park__waiter_t *last; /* the last waiter taken */
};

/* Takes every waiter: wakes the first, chains the others behind it. */
static unsigned select_broadcast(void *ctx, park__waiter_t *w)
{
    struct broadcast *b = ctx;
    park__waiter_t *prev = b->last;
    w->grant = PARK__COND_GRANT_LAST;
    b->last = w;
    if (!prev)
        return PARK__SELECT_GRANT;
    prev->grant = (uintptr_t)w;
    return PARK__SELECT_GRANT | PARK__SELECT_DEFER;
}

static void broadcast_settled(void *ctx, bool more)
{
    cond_settled(((struct broadcast *)ctx)->c, more);
}

void park__cond_broadcast_slow(park_cond_t *c)
{
    struct broadcast b = {.c = c};
    park__unpark(c, select_broadcast, broadcast_settled, &b);
}

/* ---- the steps of a wait (cond_impl.h) ----------------------------------- */

void park__cond_enqueue(park_cond_t *c, park__waiter_t *w)
{
    park__waiter_init(w, 0);
    park__waiter_idle(w); /* waiting for an event, not contention */
    park__wait_enqueue(c, w, 0, &cond_ops, c);
}

int park__cond_sleep(park_cond_t *c, park__waiter_t *w, unsigned flags, park_time_t deadline)
{
    if (park__wait_sleep(c, w, flags, &cond_ops, c, deadline) == PARK__WAIT_GRANTED)
        return 0;
    w->grant = PARK__COND_GRANT_NONE;
    return ETIMEDOUT;
}

void park__cond_cancelled(park_cond_t *c, park__waiter_t *w)
{
    if (!park__wait_leave(c, w, cond_settled, c))
        w->grant = PARK__COND_GRANT_NONE;
    else if (w->grant == PARK__COND_GRANT_SIGNAL)
        park_cond_signal(c); /* a cancelled waiter consumes no signal */
}

/* ---- the API --------------------------------------------------------------- */

void park_cond_init(park_cond_t *c)
{
    __atomic_store_n(&c->waiters_, 0, __ATOMIC_RELAXED);
}

int park_cond_destroy(park_cond_t *c)
{
    /* relaxed: W only filters; the queue decides (W may be stale in a
     * forked child, whose queues lib/wait emptied). */
    if (__atomic_load_n(&c->waiters_, __ATOMIC_RELAXED) && park__wait_has_waiters(c))
        return EBUSY;
    return 0;
}

int park_cond_wait_until(park_cond_t *c, park_mutex_t *m, park_time_t deadline)
{
    park__waiter_t w;
    park__cond_enqueue(c, &w);
    park_mutex_unlock(m);
    int err = park__cond_sleep(c, &w, 0, deadline);
    park_mutex_lock(m);
    park__waiter_t *next = park__cond_next(&w);
    if (next)
        park__wake(next); /* it waits for this wake: the broadcast's chain */
    return err;
}

int park_cond_wait(park_cond_t *c, park_mutex_t *m)
{
    return park_cond_wait_until(c, m, PARK_FOREVER);
}
