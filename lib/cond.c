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
 * broadcast. Broadcast takes every waiter, oldest first, and chains all
 * but the first through their grants: each is dequeued but not woken
 * (PARK__SELECT_DEFER), and its predecessor's grant is its address.
 *
 * Wait morphing (park_cond_wait's waiters; the drop-in's are woken and
 * pass the chain on through their pthread mutex, lib/preload/cond.c): the
 * first waiter taken is dequeued but not woken either; once the bucket
 * lock is released it is moved onto its mutex (struct waiter: a second
 * node, a notify waiter of the mutex, queued as an asynchronous locker's
 * would be: lib/mutex_impl.h). The mutex's unlock hands the mutex to that
 * node and its notify wakes the waiter, which then owns the mutex; if the
 * mutex was free, the waiter is woken to take it itself. A waiter back
 * with the mutex moves its successor onto it the same way, so the
 * broadcast's waiters reach the mutex one at a time, as it frees, each
 * woken once. Taken waiters are never touched by the signal or broadcast
 * again and never touch the condition variable again (but a cancelled one
 * that a signal took: park__cond_cancelled), so it may be destroyed once
 * nobody waits. A taken waiter's deadline no longer applies: it waits for
 * its wake however long the mutex is held. Protocol model: cond.pml with
 * -DMORPH. */
#include <errno.h>

#include <park/cond.h>

#include "cond_impl.h"
#include "mutex_impl.h"
#include "wait/wait.h"

/* w->want of a park_cond_wait waiter (the drop-in's ask for 0): a signal
 * or broadcast that takes it moves it onto its mutex (struct waiter). */
#define MOVABLE 1u

/* A park_cond_wait waiter: its node in the condition variable's queue, and
 * the node it is moved onto its mutex with once taken. */
struct waiter {
    park__waiter_t w;
    park__waiter_t on_mutex; /* a notify waiter of m (mutex_impl.h) */
    park_mutex_t *m;
    bool owns; /* on_mutex was handed m (written before w's wake) */
};

static struct waiter *waiter_of(park__waiter_t *w)
{
    return (struct waiter *)((char *)w - offsetof(struct waiter, w));
}

/* The mutex was handed to x (by an unlock, on its thread): wake x. */
static void handed_mutex(park__waiter_t *on_mutex)
{
    struct waiter *x = (struct waiter *)((char *)on_mutex - offsetof(struct waiter, on_mutex));
    x->owns = true;
    park__wake(&x->w); /* release: x reads owns after it */
}

/* w, a taken waiter not yet woken, goes to its mutex: queued there, to be
 * handed the mutex by its holder's unlock, or, if the mutex is free, woken
 * to take it itself. `held`: the caller holds w's mutex. */
static void move_to_mutex(park__waiter_t *w, bool held)
{
    struct waiter *x = waiter_of(w);
    if (!park__mutex_enqueue_handoff(x->m, &x->on_mutex, held))
        park__wake(w);
}

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

struct take {
    park_cond_t *c;
    park__waiter_t *first; /* the first waiter taken, if it is to be moved */
    park__waiter_t *last;  /* the last waiter taken (broadcast) */
};

static void take_settled(void *ctx, bool more)
{
    cond_settled(((struct take *)ctx)->c, more);
}

/* The first waiter taken: woken (the drop-in's), or taken but left asleep
 * to be moved onto its mutex once the bucket lock is released. */
static unsigned take_first(struct take *t, park__waiter_t *w)
{
    if (w->want != MOVABLE)
        return PARK__SELECT_GRANT;
    t->first = w;
    return PARK__SELECT_GRANT | PARK__SELECT_DEFER;
}

static unsigned select_signal(void *ctx, park__waiter_t *w)
{
    w->grant = PARK__COND_GRANT_SIGNAL;
    return take_first(ctx, w) | PARK__SELECT_STOP;
}

void park__cond_signal_slow(park_cond_t *c)
{
    struct take t = {.c = c};
    park__unpark(c, select_signal, take_settled, &t);
    if (t.first) /* c is not touched again: it may be gone */
        move_to_mutex(t.first, false);
}

/* Takes every waiter: the first goes to the mutex (woken, or moved onto
 * it), the others are chained behind it. */
static unsigned select_broadcast(void *ctx, park__waiter_t *w)
{
    struct take *t = ctx;
    park__waiter_t *prev = t->last;
    w->grant = PARK__COND_GRANT_LAST;
    t->last = w;
    if (!prev)
        return take_first(t, w);
    prev->grant = (uintptr_t)w;
    return PARK__SELECT_GRANT | PARK__SELECT_DEFER;
}

void park__cond_broadcast_slow(park_cond_t *c)
{
    struct take t = {.c = c};
    park__unpark(c, select_broadcast, take_settled, &t);
    if (t.first)
        move_to_mutex(t.first, false);
}

/* ---- the steps of a wait (cond_impl.h) ----------------------------------- */

static void enqueue(park_cond_t *c, park__waiter_t *w, uintptr_t want)
{
    park__waiter_init(w, want);
    park__waiter_idle(w); /* waiting for an event, not contention */
    park__wait_enqueue(c, w, 0, &cond_ops, c);
}

void park__cond_enqueue(park_cond_t *c, park__waiter_t *w)
{
    enqueue(c, w, 0);
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
    if (!c)
        return 0;
    /* relaxed: W only filters; the queue decides (W may be stale in a
     * forked child, whose queues lib/wait emptied). */
    if (__atomic_load_n(&c->waiters_, __ATOMIC_RELAXED) && park__wait_has_waiters(c))
        return EBUSY;
    return 0;
}

/* One adaptive yield budget for every park_cond_wait of the process: a
 * park_cond_t is one word. A hint (lib/wait's w->adapt). */
static _Atomic uint8_t cond_yields = PARK__ADAPT_MIN;

int park_cond_wait_until(park_cond_t *c, park_mutex_t *m, park_time_t deadline)
{
    struct waiter x = {.m = m, .owns = false};
    park__waiter_init(&x.on_mutex, 0);
    x.on_mutex.notify = handed_mutex;
    enqueue(c, &x.w, MOVABLE);
    /* A signal often comes within microseconds (a hand-off between two
     * threads), and with more threads than CPUs its sender may be waiting
     * for this CPU: yield as often as the budget says before sleeping. */
    x.w.adapt = &cond_yields;
    park_mutex_unlock(m);
    int err = park__cond_sleep(c, &x.w, 0, deadline);
    if (!x.owns) /* timed out, or woken to take the mutex itself */
        park_mutex_lock(m);
    park__waiter_t *next = park__cond_next(&x.w);
    if (next) /* the broadcast's chain: m's next unlock hands it m */
        move_to_mutex(next, true);
    return err;
}

int park_cond_wait(park_cond_t *c, park_mutex_t *m)
{
    return park_cond_wait_until(c, m, PARK_FOREVER);
}
