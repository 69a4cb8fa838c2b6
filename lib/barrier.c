/* lib/barrier.c: park_barrier, a reusable barrier with a completion
 * function (C++20 std::barrier).
 * Design notes: docs/design/barrier.md; protocol model:
 * tests/model/barrier.pml. Asynchronous arrival: lib/barrier_async.c;
 * what both share: lib/barrier_impl.h.
 *
 * State word (park_barrier_t.state_), fields named in park/barrier.h:
 * L (LEFT, bits 0-23) arrivals still expected in this phase; E
 * (EXPECTED, bits 24-47) arrivals expected per phase from the next one
 * on; W (WAITERS, bit 48) waiters are queued in lib/wait under the
 * barrier's address; P (PHASE, bits 49-63) the phase, counting up and
 * wrapping.
 *
 *   (L, E, P)      phase P waits for L more arrivals (L > 0)
 *   (0, E, P)      phase P is complete: its completion function runs on
 *                  the thread whose arrival completed it
 *   W beside either: waiters of phase P are queued
 *
 * Transitions:
 *   arrive           (L, E, P) -> (L-1, E, P), L > 1       CAS
 *   drop             (L, E, P) -> (L-1, E-1, P), L > 1     CAS
 *   complete         (1, E, P) -> (0, E[-1], P)            CAS (arrive or
 *                                                         drop); then the
 *                                                         completion runs
 *   advance          (0, E, P) -> (E, E, P+1)              CAS (no W)
 *   advance, W       (0, E, P)|W -> (E, E, P+1)            store, bucket
 *                                                         locked: every
 *                                                         waiter granted
 *                                                         (one batch wake)
 *   queue (validate) P -> P|W                              CAS, bucket
 *                                                         locked; refused
 *                                                         once P moved on
 *   last waiter      P|W -> P                              fetch_and,
 *     leaves                                              bucket locked
 *                                                         (async cancel)
 *
 * The phase cannot move on twice while an arrival of it is still on its
 * way to the queue: the next phase needs that participant's next arrival.
 * So a waiter compares P with its own phase, and a waiter queued in phase
 * P is granted by P's advance, never by a later one (no phase mixing).
 * In (0, E, P) nobody but the completing thread and bucket-lock holders
 * write the word (an arrival there is misuse and aborts), so the advance
 * with W stores it whole; the advance is the completing thread's last
 * access to the barrier (rule 9). Arrivals are release RMWs and the
 * completing CAS is an acquire RMW: every arrival of a phase happens
 * before its completion function, which happens before the advance's
 * release that every waiter acquires. */
#include <errno.h>

#include <park/barrier.h>

#include "barrier_impl.h"
#include "os/os.h" /* park__misuse */
#include "wait/fork.h"
#include "wait/wait.h"

#define LEFT PARK__BARRIER_LEFT_MASK
#define EXPECTED PARK__BARRIER_EXPECTED_MASK
#define E_ONE (1ull << PARK__BARRIER_EXPECTED_SHIFT)
#define WAITERS PARK__BARRIER_WAITERS
#define P_SHIFT PARK__BARRIER_PHASE_SHIFT

static uint64_t expected_of(uint64_t v)
{
    return (v & EXPECTED) >> PARK__BARRIER_EXPECTED_SHIFT;
}

int park_barrier_init(park_barrier_t *b, uint32_t count, park_barrier_fn completion, void *arg)
{
    if (count == 0 || count > PARK_BARRIER_MAX)
        return EINVAL;
    b->completion_ = completion;
    b->arg_ = arg;
    /* relaxed: nobody uses *b meanwhile; whatever hands *b to other
     * threads orders these stores. */
    __atomic_store_n(&b->state_, (uint64_t)count * (1 + E_ONE), __ATOMIC_RELAXED);
    return 0;
}

int park_barrier_destroy(park_barrier_t *b)
{
    if (!b)
        return 0;
    /* acquire: pairs with the release of the last advance. */
    return park__wait_destroy_busy(b, __atomic_load_n(&b->state_, __ATOMIC_ACQUIRE) & WAITERS);
}

/* ---- arriving --------------------------------------------------------- */

/* One try of the arrive transition from *v (L > 0): true if it was made;
 * else *v is the word found. */
static bool arrive_once(park_barrier_t *b, uint64_t *v, bool drop)
{
    uint64_t next = *v - 1 - (drop ? E_ONE : 0);
    /* arrive / drop: (L, E, P) -> (L-1, E[-1], P). release: pairs with the
     * acquire of the completing CAS. complete: (1, E, P) -> (0, E[-1], P);
     * acq_rel: acquires every arrival before it. */
    if ((*v & LEFT) == 1)
        return __atomic_compare_exchange_n(&b->state_, v, next, true, __ATOMIC_ACQ_REL,
                                           __ATOMIC_RELAXED);
    return __atomic_compare_exchange_n(&b->state_, v, next, true, __ATOMIC_RELEASE,
                                       __ATOMIC_RELAXED);
}

/* Arrives (drop: and leaves) at the current phase: true if this arrival
 * completed it; *seen is the word it arrived at. */
bool park__barrier_arrive(park_barrier_t *b, bool drop, const char *call, uint64_t *seen)
{
    /* relaxed: only prepares the CAS, which orders the arrival. */
    uint64_t v = __atomic_load_n(&b->state_, __ATOMIC_RELAXED);
    for (;;) {
        if (!(v & LEFT))
            park__misuse(call, b, "more arrivals than the phase expects");
        if (arrive_once(b, &v, drop)) {
            *seen = v;
            return (v & LEFT) == 1;
        }
    }
}

bool park__barrier_try_arrive_last(park_barrier_t *b)
{
    /* relaxed: only prepares the CAS. The completing case of the arrive
     * transition, tried once (a failure, even a spurious one, leaves the
     * caller the full arrival). */
    uint64_t v = __atomic_load_n(&b->state_, __ATOMIC_RELAXED);
    return (v & LEFT) == 1 && arrive_once(b, &v, false);
}

/* Advance, bucket locked: every waiter of the phase is granted. */
static unsigned advance_select(void *ctx, park__waiter_t *w)
{
    (void)ctx;
    w->grant = PARK__BARRIER_GRANT_RELEASED;
    return PARK__SELECT_GRANT;
}

static void advance_finish(void *ctx, bool more)
{
    (void)more; /* every waiter was granted */
    park_barrier_t *b = ctx;
    /* relaxed: in (0, E, P) only this thread and bucket-lock holders write
     * the word, and the lock is held. */
    uint64_t v = __atomic_load_n(&b->state_, __ATOMIC_RELAXED);
    uint64_t e = expected_of(v);
    /* (0, E, P)|W -> (E, E, P+1): nothing else writes the word in (0, E,
     * P) (see the top). release: pairs with the acquire load in
     * phase_validate; granted waiters are ordered by the bucket lock and
     * their `woken`. */
    __atomic_store_n(&b->state_, (v & ~(LEFT | WAITERS)) + (1ull << P_SHIFT) + e, __ATOMIC_RELEASE);
}

/* The arrival that completed the phase (the word is (0, E, P)): runs the
 * completion function, then starts the next phase, releasing the
 * waiters. The last access to the barrier is the advance's store. */
void park__barrier_complete_phase(park_barrier_t *b)
{
    park_barrier_fn fn = b->completion_;
    if (fn)
        fn(b->arg_); /* outside every lock, before anyone is released */
    /* relaxed: only prepares the CAS (validate may set W meanwhile). */
    uint64_t v = __atomic_load_n(&b->state_, __ATOMIC_RELAXED);
    while (!(v & WAITERS)) {
        /* advance: (0, E, P) -> (E, E, P+1). release: pairs with the
         * acquire load of a waiter that finds P moved on. */
        uint64_t next = (v & ~LEFT) + (1ull << P_SHIFT) + expected_of(v);
        if (__atomic_compare_exchange_n(&b->state_, &v, next, true, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
            return;
    }
    park__unpark(b, advance_select, advance_finish, b);
}

/* ---- waiting for the phase to end ----------------------------------------- */

static bool phase_validate(void *ctx)
{
    struct park__barrier_phase_ctx *c = ctx;
    /* acquire: pairs with the advance's release, for a waiter that finds
     * its phase over and returns without a grant. */
    uint64_t v = __atomic_load_n(&c->b->state_, __ATOMIC_ACQUIRE);
    for (;;) {
        if (park__barrier_phase_of(v) != c->phase)
            return false; /* the phase ended before we were queued */
        if (v & WAITERS)
            return true;
        /* P -> P|W: the bucket lock orders it against the advance under
         * the lock, and the lock-free advance's CAS fails on it. acquire
         * (on failure: the word it reads back may show P moved on, as
         * above; on success only because C11 wants it as strong). */
        if (__atomic_compare_exchange_n(&c->b->state_, &v, v | WAITERS, true, __ATOMIC_ACQUIRE,
                                        __ATOMIC_ACQUIRE))
            return true;
    }
}

static void phase_removed(void *ctx, bool more)
{
    struct park__barrier_phase_ctx *c = ctx;
    if (!more) /* P|W -> P; relaxed: W changes only under the bucket lock */
        __atomic_fetch_and(&c->b->state_, ~WAITERS, __ATOMIC_RELAXED);
}

const park__wait_ops_t park__barrier_phase_ops = {
    .validate = phase_validate,
    .removed = phase_removed,
};

/* One adaptive yield budget for every barrier of the process:
 * a barrier has no room for one of its own. A hint (lib/wait's w->adapt). */
static _Atomic uint8_t barrier_yields = PARK__ADAPT_MIN;

/* A thread's wait for the end of `phase`. */
static void wait_phase(park_barrier_t *b, uint32_t phase)
{
    struct park__barrier_phase_ctx c = {.b = b, .phase = phase};
    park__waiter_t w;
    park__waiter_init(&w, 0);
    /* The last arrival often comes within microseconds, and with more
     * threads than CPUs it may be waiting for this CPU: yield as often as
     * the budget says before sleeping (a sleep and its wake cost more). */
    w.adapt = &barrier_yields;
    /* The phase's waiters are released together: they sleep on their
     * bucket's batch word, woken by one system call (none for those still
     * yielding). No timeout and no before_sleep: granted, or refused
     * because the phase is over. */
    (void)park__wait(b, &w, PARK__WAIT_BATCH, &park__barrier_phase_ops, &c, PARK_FOREVER);
}

int park_barrier_arrive_and_wait(park_barrier_t *b)
{
    uint64_t v;
    if (park__barrier_arrive(b, false, "park_barrier_arrive_and_wait", &v)) {
        park__barrier_complete_phase(b);
        return PARK_BARRIER_SERIAL;
    }
    wait_phase(b, park__barrier_phase_of(v));
    return 0;
}

int park_barrier_arrive_and_drop(park_barrier_t *b)
{
    uint64_t v;
    if (!park__barrier_arrive(b, true, "park_barrier_arrive_and_drop", &v))
        return 0;
    park__barrier_complete_phase(b);
    return PARK_BARRIER_SERIAL;
}
