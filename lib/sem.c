/* lib/sem.c: park_sem, a counting semaphore: barging with bounded
 * unfairness by default, strictly FIFO as an option (max_ & FIFO).
 * Design notes: docs/design/sem.md; protocol model: tests/model/sem.pml.
 * Asynchronous acquisition: lib/sem_async.c; what both share:
 * lib/sem_impl.h.
 *
 * State word (park_sem_t.state_), bits named in park/sem.h: COUNT (low 32
 * bits) free permits; WAITERS waiters are queued in lib/wait under the
 * semaphore's address; WOKEN a waiter woken to retry is on its way
 * (default mode only); RELEASING a locked release that found WOKEN set has
 * reserved room in the count for the permits it still places (default
 * mode only).
 *
 *   FIFO invariant     WAITERS => COUNT == 0 (a newcomer queues behind)
 *   default invariant  WAITERS and COUNT > 0 => WOKEN, or the thread that
 *                      stored that word is about to wake someone (wake:
 *                      again), or no queued waiter would be served by a
 *                      wake (each wants more than COUNT, and none gathers:
 *                      see Several permits below)
 *
 * Transitions (c: COUNT; a waiter asks for `want` permits, n for short):
 *   acquire           c -> c-1 (c > 0)                 CAS (fast path, inline)
 *   acquire n         c -> c-n (c >= n)                CAS (try, spin)
 *   release n         c -> c+n (WAITERS clear, or      CAS (no lock, no wake)
 *                     WOKEN and not RELEASING)
 *   park (validate)   c < want -> WAITERS[, WOKEN      CAS, bucket locked
 *                     dropped]
 *                     FIFO, 0 < c < want: c -> 0|WAITERS, the c gathered by the
 *                     waiter (nobody is queued, so it is the head)
 *   take (woken)      c -> c-1, WOKEN dropped unless WAITERS and c-1 > 0 (then
 *                     retire: bucket locked, WOKEN passed on or dropped)
 *   release n,        FIFO: WAITERS -> WAITERS (n granted or gathered) or
 *     WAITERS, no     WAITERS -> r (queue emptied); default: permits handed to
 *     WOKEN           waiters owed them (PARK__FAIR_NS, tasks), or gathered by
 *                     an owed waiter of several, or handed to a young one of
 *                     several if all it wants are there; the rest c -> c+r, the
 *                     oldest thread of one woken to retry (WOKEN)
 *                                                      CAS, bucket locked
 *   last waiter       WAITERS cleared                  bucket locked (timeout)
 *     leaves
 *
 * WAITERS changes only under the bucket lock. WOKEN is set only there; it
 * is dropped there or by the woken waiter's take, and COUNT rises without
 * the lock only while WOKEN is set: a locked wake that found WOKEN set and
 * whose final CAS finds WAITERS, free permits and no WOKEN runs again.
 * Such a wake, releasing n, first sets RELEASING in a CAS that checks
 * c + n <= max (else it places nothing: EOVERFLOW), and its final CAS
 * clears RELEASING; while RELEASING is set, releases take the lock too, so
 * nothing can fill the count meanwhile and EOVERFLOW always means nothing
 * released, never some permits handed and the rest dropped. A granted
 * waiter owns its permits from the moment it is dequeued (hand-off) or
 * retries like a newcomer, re-queueing with its start time (woken: only a
 * waiter of one permit is). A timed-out waiter either was dequeued first
 * or leaves ungranted: no permit is lost.
 *
 * Several permits (want > 1). A waiter of several is never woken to retry
 * (it could not keep up with bargers taking them one at a time): select
 * hands it all it wants when they are there, and otherwise, in FIFO mode
 * or once it is owed (default mode: PARK__FAIR_NS), the permits there are
 * gathered for it under the bucket lock (w->grant: RESERVED | how many;
 * never in COUNT, so no fast path needs to know) and select stops there
 * until it has them all; from the moment it is owed, the releases' fair
 * looks come to the lock for it (park__wait_fair_due_from), even while a
 * woken waiter is on its way. Default mode passes a young one too few are free
 * for: those behind it may be served (woken to retry or handed), and a
 * waiter woken past it re-queues at the back, not the front, so that the
 * one passed stays first and is looked at, and owed, first. A waiter that
 * leaves ungranted with permits gathered gives them back by a release,
 * which serves those behind it (docs/design/sem.md, Several permits). A
 * wake that leaves a waiter gathering has drained the count into it, so
 * the only free permits beside sleepers without WOKEN are too few for any
 * of them: a stable word, which is why a wake runs again only if WOKEN was
 * set when it first looked. */
#include <errno.h>

#include <park/sem.h>

#include "async.h"
#include "sem_impl.h"
#include "os/os.h"
#include "wait/fork.h"
#include "wait/spin.h"
#include "wait/wait.h"

#define WAITERS PARK__SEM_WAITERS
#define WOKEN PARK__SEM_WOKEN
#define RELEASING PARK__SEM_RELEASING
#define COUNT PARK__SEM_COUNT_MASK

/* w->grant of a granted waiter (lib/wait/wait.h): handed its permits
 * (PARK__GRANT_HANDOFF), or woken to retry (one permit) at the queue's
 * front (PARK__GRANT_RETRY), or at its back when select passed a waiter of
 * several before waking it (PARK__GRANT_RETRY_BACK). */

/* w->grant of a queued waiter of several: RESERVED | the permits gathered
 * for it. Written by select (and a FIFO validate) under the bucket lock;
 * the waiter reads it only once it has left the queue (granted, timed out
 * or cancelled), when nobody writes it any more. */
#define RESERVED ((uintptr_t)1 << 31)

static uint32_t gathered(const park__waiter_t *w)
{
    return w->grant & RESERVED ? (uint32_t)(w->grant & ~RESERVED) : 0;
}

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
    if (!s)
        return 0;
    /* acquire: pairs with the release of the last release/grant. */
    return park__wait_destroy_busy(s, __atomic_load_n(&s->state_, __ATOMIC_ACQUIRE) & WAITERS);
}

uint32_t park_sem_count(const park_sem_t *s)
{
    /* relaxed: a monitoring snapshot. */
    return (uint32_t)(__atomic_load_n(&s->state_, __ATOMIC_RELAXED) & COUNT);
}

static bool acquire_validate(void *ctx)
{
    struct park__sem_acquire_ctx *c = ctx;
    park_sem_t *s = c->s;
    uint64_t v = __atomic_load_n(&s->state_, __ATOMIC_RELAXED);
    for (;;) {
        uint32_t free = (uint32_t)(v & COUNT);
        if (free >= c->n)
            return false; /* enough are free: take them instead */
        /* c < n -> WAITERS, clearing WOKEN if it was ours; relaxed: the bucket
         * lock orders it against releasers. */
        uint64_t next = (v | WAITERS) & ~(c->woken ? WOKEN : 0);
        if (free && fifo(s)) {
            /* FIFO, too few free for several: nobody is queued (WAITERS =>
             * COUNT == 0), so this waiter is the head and gathers them, which
             * keeps the invariant and lets nobody pass it. c -> 0|WAITERS;
             * acquire: pairs with the release that freed them. */
            if (__atomic_compare_exchange_n(&s->state_, &v, next - free, true, __ATOMIC_ACQUIRE,
                                            __ATOMIC_RELAXED)) {
                (c->w ? c->w : park__acq_ctx_waiter(c))->grant = RESERVED | free;
                c->woken = false;
                return true;
            }
            continue;
        }
        if (__atomic_compare_exchange_n(&s->state_, &v, next, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
            c->woken = false;
            return true;
        }
    }
}

static void acquire_removed(void *ctx, bool more)
{
    park_sem_t *s = ((struct park__sem_acquire_ctx *)ctx)->s;
    if (!more) /* WAITERS -> 0: nobody queued; relaxed: bucket locked */
        __atomic_fetch_and(&s->state_, ~WAITERS, __ATOMIC_RELAXED);
}

const park__wait_ops_t park__sem_acquire_ops = {
    .validate = acquire_validate,
    .removed = acquire_removed,
};

/* ---- waking (default mode), decided under the bucket lock ---------------- */

struct wake_ctx {
    park_sem_t *s;
    uint32_t n;      /* permits still to place */
    bool checked;    /* this pass has looked at the word under the bucket lock */
    bool retire;     /* WOKEN is the caller's to drop (retire) */
    bool woke;       /* a waiter was woken to retry: WOKEN stays set */
    bool passed;     /* a waiter was passed (left queued, select went on) */
    bool again;      /* the stored word needs another pass */
    int result;      /* 0 or EOVERFLOW */
    park_time_t now; /* park__wait_owed's clock: 0 until a thread waiter needs it */
    uint64_t seen;   /* the word when this pass first looked (for its WOKEN) */
};

/* Once a pass, under the bucket lock, before anything is granted: a
 * release beyond the maximum places nothing. If WOKEN is set, releases could
 * add to the count without the lock until this pass stores the word: RELEASING
 * holds them off (they take the lock, behind this pass), set in the same
 * CAS that checks the room, so the permits this pass has yet to place
 * always fit. Without WOKEN nobody can set it or add permits without the lock
 * until this pass stores the word. */
static bool wake_check(struct wake_ctx *r)
{
    if (!r->checked) {
        r->checked = true;
        uint64_t v = __atomic_load_n(&r->s->state_, __ATOMIC_RELAXED);
        for (;;) {
            r->seen = v;
            if (r->n > max_of(r->s) - (v & COUNT)) {
                r->result = EOVERFLOW;
                r->n = 0;
                break;
            }
            if (!(v & WOKEN) || r->n == 0)
                break;
            /* relaxed: the permits are placed by wake_finish's release. */
            if (__atomic_compare_exchange_n(&r->s->state_, &v, v | RELEASING, true,
                                            __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                break;
        }
    }
    return r->result == 0;
}

/* Takes up to m free permits from the count (all m or none if `all`):
 * how many. c -> c-k. */
static uint32_t take_free(park_sem_t *s, uint32_t m, bool all)
{
    uint64_t v = __atomic_load_n(&s->state_, __ATOMIC_RELAXED);
    for (;;) {
        uint32_t k = (v & COUNT) < m ? (uint32_t)(v & COUNT) : m;
        if (k == 0 || (all && k < m))
            return 0;
        /* acquire: pairs with the release that freed them; the waiter
         * they go to is ordered by the bucket lock and its `woken`. */
        if (__atomic_compare_exchange_n(&s->state_, &v, v - k, true, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return k;
    }
}

/* Up to m permits for a waiter, released ones first, then free ones (all
 * m or none if `all`): how many. */
static uint32_t take_for(struct wake_ctx *r, uint32_t m, bool all)
{
    uint32_t released = r->n < m ? r->n : m;
    uint32_t free = m - released ? take_free(r->s, m - released, all) : 0;
    if (all && released + free < m)
        return 0;
    r->n -= released;
    return released + free;
}

/* A waiter of several (see the top): handed them all if they are there;
 * otherwise gathering what there is, if it is owed (a thread that has
 * waited PARK__FAIR_NS, unpaced by the bucket's other hand-offs, or a task;
 * once it gathers it stays owed), with
 * nobody passing it; otherwise passed. Only a waiter with nobody passed
 * ahead of it gathers: two gathering at once could each hold what the
 * other lacks. (None gets ahead of one that gathers: a waiter of several
 * never re-queues, newcomers queue at the back, and a woken waiter
 * re-queues at the front only if it was first when woken.) Out of line, so
 * that wake_select of single permits stays as lean as it was. */
__attribute__((noinline)) static unsigned select_many(struct wake_ctx *r, park__waiter_t *w)
{
    uint32_t want = (uint32_t)w->want;
    if (!(w->grant & RESERVED) && (r->passed || !park__wait_owed_unpaced(w, &r->now))) {
        if (take_for(r, want, true) == want) {
            w->grant = PARK__GRANT_HANDOFF;
            if (!r->passed) /* else the look stays for the one passed */
                park__wait_fair_due_from(r->s, 0);
            return PARK__SELECT_GRANT;
        }
        /* The first one passed (a thread: a task is always owed) is owed
         * from since + PARK__FAIR_NS: from then on the releases' fair looks
         * come here, so that it starts gathering even while a woken waiter
         * is on its way. */
        if (!r->passed)
            park__wait_fair_due_from(r->s, w->since + PARK__FAIR_NS);
        r->passed = true;
        return PARK__SELECT_SKIP;
    }
    uint32_t got = gathered(w);
    got += take_for(r, want - got, false);
    if (got < want) {
        w->grant = RESERVED | got;
        park__wait_fair_due_from(r->s, 1); /* gathering: due now */
        return PARK__SELECT_STOP;          /* it stays first in line */
    }
    w->grant = PARK__GRANT_HANDOFF;
    park__wait_fair_due_from(r->s, 0);
    return PARK__SELECT_GRANT;
}

/* Oldest first: a waiter owed a hand-off gets a permit (a released one,
 * else a free one); the first young thread is woken to retry if there is
 * something to retry for and nobody is on the way already. Waiters of
 * several: select_many. */
static unsigned wake_select(void *ctx, park__waiter_t *w)
{
    struct wake_ctx *r = ctx;
    if (!wake_check(r))
        return PARK__SELECT_STOP;
    if (w->want != 1)
        return select_many(r, w);
    /* The clock only for a thread: an asynchronous waiter is always owed. */
    if (park__wait_owed(w, &r->now)) {
        if (r->n) {
            r->n--;
        } else if (!park_sem_try_acquire(r->s)) /* a free one: c -> c-1 */
            return PARK__SELECT_STOP;           /* it stays first in line */
        w->grant = PARK__GRANT_HANDOFF;
        return PARK__SELECT_GRANT;
    }
    uint64_t v = __atomic_load_n(&r->s->state_, __ATOMIC_RELAXED);
    bool on_its_way = park__woken_mark(v & WOKEN) && !r->retire;
    if ((r->n || (v & COUNT)) && !on_its_way) {
        w->grant = r->passed ? PARK__GRANT_RETRY_BACK : PARK__GRANT_RETRY;
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
    if (!more) /* no waiter of several left to come to the lock for */
        park__wait_fair_due_from(s, 0);
    uint64_t v = __atomic_load_n(&s->state_, __ATOMIC_RELAXED);
    uint64_t next;
    do {
        if (r->n > max_of(s) - (v & COUNT)) {
            /* A lockless release filled the count after wake_check. Only if
             * WAITERS was clear there (with WAITERS and WOKEN, RELEASING kept
             * them out; with WAITERS and no WOKEN, nobody could add): then
             * nobody is queued, nothing of ours was handed, and ours places
             * nothing. */
            r->result = EOVERFLOW;
            r->n = 0;
        }
        /* RELEASING is dropped here. */
        next = (v & COUNT) + r->n;
        if (more)
            next |= WAITERS;
        if (r->woke || ((v & WOKEN) && !r->retire))
            next |= WOKEN;
        /* release: pairs with the acquire of whoever takes the permits;
         * granted waiters are ordered by the bucket lock. */
    } while (!__atomic_compare_exchange_n(&s->state_, &v, next, true, __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED));
    /* WOKEN was dropped outside the lock (take_woken, or ours: retire), or
     * permits came without a lock (a release while WOKEN was set), after
     * select looked: someone may have to be woken, so the caller runs the
     * wake again. Only if WOKEN was set when this pass looked: otherwise the
     * word is as select left it, and free permits beside waiters are too
     * few for any of them. */
    r->again = (next & WAITERS) && (next & COUNT) && !(next & WOKEN) && (r->seen & WOKEN);
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
        r->retire = false; /* WOKEN was cleared by the pass that set `again` */
        r->woke = false;
        r->passed = false;
        r->checked = false;
        r->again = false;
    }
}

/* The woken waiter took a permit with others to pass it on to, or gave
 * up: WOKEN goes, and if permits are free while others sleep, the next is
 * woken (WOKEN again). */
static void retire(park_sem_t *s)
{
    struct wake_ctx r = {.s = s, .retire = true};
    wake(&r);
}

/* The woken waiter's take: c -> c-1, dropping WOKEN in the same step unless
 * permits remain for waiters still queued (then *pass: retire). */
static bool take_woken(park_sem_t *s, bool *pass)
{
    uint64_t v = __atomic_load_n(&s->state_, __ATOMIC_RELAXED);
    while (v & COUNT) {
        uint64_t next = v - 1;
        bool passing = (v & WAITERS) && (next & COUNT);
        if (!passing)
            next &= ~WOKEN;
        /* acquire: pairs with the release that freed the permit. */
        if (__atomic_compare_exchange_n(&s->state_, &v, next, true, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED)) {
            *pass = passing;
            return true;
        }
    }
    return false;
}

struct acquire_look {
    park_sem_t *s;
    uint32_t n;
};

/* One look of a spinning acquirer: 1 if it took its permits, -1 if others
 * are queued (it must get in line), 0 to look again. */
static int acquire_look(void *ctx)
{
    struct acquire_look *a = ctx;
    /* relaxed: a hint; the take's compare-and-swap decides. */
    uint64_t v = __atomic_load_n(&a->s->state_, __ATOMIC_RELAXED);
    if (v & WAITERS)
        return -1;
    return (v & COUNT) >= a->n && park__sem_try_take(a->s, a->n);
}

/* Spins while nobody is queued (rule 6): true if it took n permits. */
static bool acquire_spin(park_sem_t *s, uint32_t n)
{
    /* The early looks (spin.h: after 8 to 120 pauses, unless this thread's
     * CPU was lately crowded), then 512 pauses in all (504 after the early
     * looks), looking every 128: a permit held for a short section comes
     * back within them, one held longer is better waited for asleep, and
     * rare looks leave the holders the word's cache line where they share
     * the CPUs (docs/design/sem.md, Tuning). */
    struct acquire_look a = {s, n};
    int r = acquire_look(&a);
    if (r == 0)
        r = park__spin_rare(park__spin_init_every(128, 512, 0), 128, acquire_look, &a);
    return r > 0 || park__sem_try_take(s, n);
}

/* A waiter that left the queue ungranted gives back what was gathered for
 * it: a release, which serves those behind it that now can be (the head
 * of several timing out must not leave them asleep: Go issue 37852).
 * Beyond the maximum (permits released that were never acquired, while
 * these were gathered) it places nothing. */
void park__sem_give_back_gathered(park_sem_t *s, const park__waiter_t *w)
{
    uint32_t n = gathered(w);
    if (n)
        (void)park_sem_release(s, n);
}

static int acquire_slow(park_sem_t *s, uint32_t n, park_time_t deadline)
{
    park__waiter_t w;
    struct park__sem_acquire_ctx c = {.s = s, .w = &w, .n = n, .woken = false};
    park__waiter_init(&w, n);
    park__waiter_profile(&w, PARK_PROFILE_SEM, PARK__GRANT_HANDOFF);
    if ((__atomic_load_n(&s->state_, __ATOMIC_RELAXED) & COUNT) < n) /* contended */
        park__waiter_profile_from_here(&w);
    if (!fifo(s))
        w.since = park_now(); /* kept when a woken waiter re-queues */
    unsigned flags = 0;
    for (;;) {
        bool pass = false;
        if (c.woken ? take_woken(s, &pass) : acquire_spin(s, n)) {
            if (pass)
                retire(s);
            park__waiter_profile_done(&w, s);
            return 0;
        }
        if (park__deadline_passed(deadline)) {
            if (c.woken)
                retire(s);
            park__waiter_profile_done(&w, s);
            return ETIMEDOUT;
        }
        switch (park__wait(s, &w, flags, &park__sem_acquire_ops, &c, deadline)) {
        case PARK__WAIT_GRANTED:
            if (w.grant == PARK__GRANT_HANDOFF)
                return 0;   /* the permits were handed to us */
            c.woken = true; /* woken to retry (one permit) */
            /* If it loses to a barger it re-queues at the front, or at
             * the back when it was woken past a waiter of several. */
            flags = w.grant == PARK__GRANT_RETRY ? PARK__WAIT_FRONT : 0;
            break;
        case PARK__WAIT_TIMEDOUT:
            park__sem_give_back_gathered(s, &w);
            return ETIMEDOUT;
        default:
            break; /* permits fell free before we were queued */
        }
    }
}

int park__sem_acquire_slow(park_sem_t *s, park_time_t deadline)
{
    return acquire_slow(s, 1, deadline);
}

int park_sem_acquire_until(park_sem_t *s, park_time_t deadline)
{
    if (park_sem_try_acquire(s))
        return 0;
    return park__sem_acquire_slow(s, deadline);
}

/* n permits can be asked for: 1 <= n <= max. */
bool park__sem_n_valid(const park_sem_t *s, uint32_t n)
{
    return n != 0 && n <= max_of(s);
}

bool park_sem_try_acquire_n(park_sem_t *s, uint32_t n)
{
    return park__sem_n_valid(s, n) && park__sem_try_take(s, n);
}

int park_sem_acquire_n_until(park_sem_t *s, uint32_t n, park_time_t deadline)
{
    if (!park__sem_n_valid(s, n))
        return EINVAL;
    if (park__sem_try_take(s, n))
        return 0;
    return acquire_slow(s, n, deadline);
}

int park_sem_acquire_n(park_sem_t *s, uint32_t n)
{
    return park_sem_acquire_n_until(s, n, PARK_FOREVER);
}

/* ---- releasing --------------------------------------------------------------- */

struct release_ctx {
    park_sem_t *s;
    uint32_t n; /* permits still to hand out */
    int result;
};

/* FIFO, a head of several: what it lacks, as far as the permits go; it is
 * granted once it has them all, and until then nobody passes it. */
static unsigned fifo_select_many(struct release_ctx *r, park__waiter_t *w)
{
    uint32_t want = (uint32_t)w->want, got = gathered(w);
    uint32_t k = want - got < r->n ? want - got : r->n;
    r->n -= k;
    if (got + k < want) {
        w->grant = RESERVED | (got + k);
        return PARK__SELECT_STOP; /* it stays first in line */
    }
    w->grant = PARK__GRANT_HANDOFF;
    return r->n ? PARK__SELECT_GRANT : PARK__SELECT_GRANT | PARK__SELECT_STOP;
}

/* FIFO: every permit to the queue head(s). */
static unsigned fifo_select(void *ctx, park__waiter_t *w)
{
    struct release_ctx *r = ctx;
    if (w->want != 1)
        return fifo_select_many(r, w);
    w->grant = PARK__GRANT_HANDOFF;
    r->n--;
    return r->n ? PARK__SELECT_GRANT : PARK__SELECT_GRANT | PARK__SELECT_STOP;
}

static void fifo_finish(void *ctx, bool more)
{
    struct release_ctx *r = ctx;
    park_sem_t *s = r->s;
    uint64_t v = __atomic_load_n(&s->state_, __ATOMIC_RELAXED);
    if (v & WAITERS) {
        /* WAITERS -> WAITERS (waiters remain, so every permit was granted) or
         * WAITERS -> n. release: pairs with the acquire of whoever takes the
         * leftover permits; granted waiters are ordered by the bucket lock and
         * the release of their `woken`. */
        __atomic_store_n(&s->state_, more ? WAITERS : r->n, __ATOMIC_RELEASE);
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

/* Default mode, a release that finds WAITERS and WOKEN: true if it should take
 * the lock anyway, because a fair hand-off may be due (wake_select decides).
 * With many threads on few CPUs WOKEN is set most of the time (the woken
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
    bool look = (v & WAITERS) && (v & WOKEN) && !fifo(s) && fair_look(s); /* else no use */
    /* Without waiters, or (default mode) with a woken waiter on its way,
     * which will take a permit or pass them on: no lock, no wake. */
    while (!(v & WAITERS) ||
           (park__woken_mark(v & WOKEN) && !(v & RELEASING) && !fifo(s) && !look)) {
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
