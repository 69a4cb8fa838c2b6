/* lib/event.c: park_event, a manual-reset or auto-reset event.
 * Design notes: docs/design/event.md; protocol model: tests/model/event.pml.
 * Asynchronous waiting: lib/event_async.c; what both share:
 * lib/event_impl.h.
 *
 * State word (park_event_t.state_), bits named in park/event.h: SET the
 * event is set (auto: and not consumed); WAITERS waiters are queued in
 * lib/wait under the event's address; MANUAL manual reset, fixed at
 * initialisation and left out of the table.
 *
 *   0         not set, nobody queued
 *   SET       set
 *   WAITERS   not set, waiters queued
 *
 * SET and WAITERS are never both there: validate refuses to queue while SET
 * is set, and a set that finds WAITERS grants instead of storing SET.
 *
 * Transitions:
 *   set                   0|SET -> SET           CAS (inline; SET -> SET too: a release)
 *   set, manual, WAITERS  WAITERS -> SET         exchange, bucket locked: every queued
 *                                                waiter granted (one batch wake)
 *   set, auto, WAITERS    WAITERS -> WAITERS     exchange, bucket locked: the oldest
 *                         or 0                   waiter granted (WAITERS stays if others
 *                                                remain); SET is not stored
 *   set, WAITERS gone     x -> SET               exchange, bucket locked: the last
 *                                                waiter left before the lock
 *   consume (auto)        SET -> 0               CAS (inline try_wait)
 *   reset                 SET -> 0               fetch_and (inline)
 *   queue (validate)      0|WAITERS -> WAITERS   CAS, bucket locked; refused on SET
 *   last waiter leaves    WAITERS -> 0           fetch_and, bucket locked (timeout,
 *                                                cancel)
 *
 * WAITERS changes only under the bucket lock, and while it is set nothing
 * but a bucket-lock holder changes the word (the lock-free set and consume
 * need WAITERS clear or SET set; a reset finds SET clear and writes
 * nothing), so a set that finds WAITERS decides under the lock and stores
 * the whole word. A waiter learns that it passed from its grant, never
 * from the word: a manual set reset at once has still released every
 * waiter it found. A timed-out or cancelled waiter either was granted first
 * (the wait succeeds: an auto set is consumed by it) or leaves ungranted,
 * and the set that did not find it goes to the next waiter or stays in the
 * word (rule 5). */
#include <errno.h>

#include <park/event.h>

#include "event_impl.h"
#include "os/os.h"
#include "wait/fork.h"
#include "wait/wait.h"

#define SET PARK__EVENT_SET
#define WAITERS PARK__EVENT_WAITERS
#define MANUAL PARK__EVENT_MANUAL

void park_event_init(park_event_t *e, bool manual_reset, bool initially_set)
{
    /* relaxed: nobody uses *e meanwhile; whatever hands *e to other
     * threads orders this store. */
    __atomic_store_n(&e->state_, (manual_reset ? MANUAL : 0u) | (initially_set ? SET : 0u),
                     __ATOMIC_RELAXED);
}

int park_event_destroy(park_event_t *e)
{
    if (!e)
        return 0;
    /* acquire: pairs with the release of the last set. */
    return park__wait_destroy_busy(e, __atomic_load_n(&e->state_, __ATOMIC_ACQUIRE) & WAITERS);
}

/* ---- waiting ------------------------------------------------------------ */

static bool wait_validate(void *ctx)
{
    park_event_t *e = ((struct park__event_wait_ctx *)ctx)->e;
    /* relaxed: only prepares the CAS; a waiter that finds SET passes
     * through park_event_try_wait's acquire. */
    uint32_t v = __atomic_load_n(&e->state_, __ATOMIC_RELAXED);
    for (;;) {
        if (v & SET)
            return false; /* set meanwhile: pass (or consume) it instead */
        if (v & WAITERS)
            return true;
        /* 0 -> WAITERS; relaxed: the bucket lock orders it against a set's
         * locked path, and the lock-free set's CAS fails on it. */
        if (__atomic_compare_exchange_n(&e->state_, &v, v | WAITERS, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return true;
    }
}

static void wait_removed(void *ctx, bool more)
{
    park_event_t *e = ((struct park__event_wait_ctx *)ctx)->e;
    if (!more) /* WAITERS -> 0; relaxed: only WAITERS changes, under the bucket lock */
        __atomic_fetch_and(&e->state_, ~WAITERS, __ATOMIC_RELAXED);
}

const park__wait_ops_t park__event_wait_ops = {
    .validate = wait_validate,
    .removed = wait_removed,
};

bool park__event_wait_taken(void *ctx)
{
    return park_event_try_wait(((struct park__event_wait_ctx *)ctx)->e);
}

int park__event_wait_slow(park_event_t *e, park_time_t deadline)
{
    struct park__event_wait_ctx c = {.e = e};
    /* A grant is the set (auto: the set is ours). A manual set releases
     * all its waiters together: they sleep on their bucket's batch word,
     * woken by one system call. */
    unsigned flags = park__event_manual(e) ? PARK__WAIT_BATCH : 0;
    return park__wait_event(e, flags, &park__event_wait_ops, &c, park__event_wait_taken, deadline);
}

int park_event_wait_until(park_event_t *e, park_time_t deadline)
{
    if (park_event_try_wait(e))
        return 0;
    return park__event_wait_slow(e, deadline);
}

/* ---- setting with waiters, decided under the bucket lock ---------------- */

struct set_ctx {
    park_event_t *e;
    bool manual;
    bool granted; /* a waiter was granted this set */
};

/* Manual: every waiter; auto: the oldest. */
static unsigned set_select(void *ctx, park__waiter_t *w)
{
    struct set_ctx *c = ctx;
    w->grant = 0;
    c->granted = true;
    return c->manual ? PARK__SELECT_GRANT : PARK__SELECT_GRANT | PARK__SELECT_STOP;
}

static void set_finish(void *ctx, bool more)
{
    struct set_ctx *c = ctx;
    uint32_t m = c->manual ? MANUAL : 0u;
    /* Manual: WAITERS -> SET (every waiter granted, or none was left). Auto:
     * WAITERS -> WAITERS or 0 (the oldest granted: the set is consumed), or
     * x -> SET (none was left). Nothing else writes the word while WAITERS is
     * set (see the top), and with WAITERS gone a racing set stores SET too and
     * a racing consume of that SET comes before ours: storing the whole word
     * keeps every set. An exchange rather than a store, so that the release
     * sequences of earlier sets go on through it: a consume that reads this
     * SET acquires what they published too. release: pairs with the acquire in
     * park_event_try_wait; granted waiters are ordered by the bucket lock and
     * the release of their `woken`. The setter's last access to the event. */
    uint32_t next = c->manual || !c->granted ? m | SET : m | (more ? WAITERS : 0u);
    (void)__atomic_exchange_n(&c->e->state_, next, __ATOMIC_RELEASE);
}

void park__event_set_slow(park_event_t *e)
{
    struct set_ctx c = {.e = e, .manual = park__event_manual(e)};
    park__unpark(e, set_select, set_finish, &c);
}
