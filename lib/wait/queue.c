/* lib/wait/queue.c: the global table of wait queues (see wait.h).
 *
 * A bucket is one cache line: the internal lock (lock.h) and the FIFO of
 * the waiters of every key hashed to it. The table is static, so buckets
 * outlive every primitive and a releaser may touch its bucket after its
 * object is gone. */
#include <errno.h>
#include <string.h>

#include "os/os.h"
#include "os/probe.h"
#include "wait/fork.h"
#include "wait/lock.h"
#include "wait/spin.h"
#include "wait/wait.h"

#define BUCKET_BITS 9
#define BUCKET_COUNT (1u << BUCKET_BITS)
typedef struct bucket {
    park__lock_t lock;
    _Atomic uint32_t batch_seq; /* PARK__WAIT_BATCH sleepers' futex word */
    park__waiter_t *head;       /* FIFO of the waiters of every key hashed here */
    park__waiter_t *tail;
    park_time_t fair_at;          /* no fair hand-off before this (park__wait_owed) */
    park_time_t look_at;          /* fair looks due from this on, 0: never (fair_due_from) */
    park_time_t held_until;       /* none at all before this (park__wait_hold_fair) */
    _Atomic park_time_t woken_at; /* the last park__wait_note_woken */
    _Atomic uint32_t inside;      /* threads between park__waiting_enter and _leave */
} __attribute__((aligned(64))) bucket_t;
_Static_assert(sizeof(bucket_t) == 64, "a bucket is one cache line");

static bucket_t buckets[BUCKET_COUNT];

/* Keys sharing a hint slot share a bucket (bucket_of), so a slot is only
 * written under its bucket's lock; readers load it without the lock. */
_Static_assert(BUCKET_BITS <= PARK__HINT_BITS, "a hint slot must map to one bucket");
uint32_t park__wait_hints[1u << PARK__HINT_BITS];

/* A key's bucket: the top BUCKET_BITS bits of its hint slot's index, so
 * one hash (park__hint_of, park/common.h) places a key in both tables. */
static bucket_t *bucket_of(const void *key)
{
    size_t slot = (size_t)(park__hint_of(key) - park__wait_hints);
    return &buckets[slot >> (PARK__HINT_BITS - BUCKET_BITS)];
}

/* Bucket locked. relaxed: the readers are the lock-free release paths,
 * which pair with the waiter's membarrier (see mutex.c), not with this. */
static void hint_add(const void *key, int32_t d)
{
    uint32_t *slot = park__hint_of(key);
    __atomic_store_n(slot, __atomic_load_n(slot, __ATOMIC_RELAXED) + (uint32_t)d, __ATOMIC_RELAXED);
}

/* Links w between prev and next (NULL: that end of the bucket's list). */
static void link_between(bucket_t *b, park__waiter_t *w, park__waiter_t *prev, park__waiter_t *next)
{
    hint_add(w->key, 1);
    w->prev = prev;
    w->next = next;
    if (prev)
        prev->next = w;
    else
        b->head = w;
    if (next)
        next->prev = w;
    else
        b->tail = w;
}

static void unlink_waiter(bucket_t *b, park__waiter_t *w)
{
    hint_add(w->key, -1);
    if (w->prev)
        w->prev->next = w->next;
    else
        b->head = w->next;
    if (w->next)
        w->next->prev = w->prev;
    else
        b->tail = w->prev;
    w->queued = false;
}

static bool key_has_waiters(const bucket_t *b, const void *key)
{
    for (const park__waiter_t *w = b->head; w; w = w->next)
        if (w->key == key)
            return true;
    return false;
}

/* Bucket locked: w is on b's list. In a forked child a waiter queued
 * before the fork still says `queued` but is on no list. */
static bool on_list(const bucket_t *b, const park__waiter_t *w)
{
    for (const park__waiter_t *x = b->head; x; x = x->next)
        if (x == w)
            return true;
    return false;
}

/* w, a thread, has waited PARK__FAIR_NS by *clock (read here if 0). */
static bool waited_long(const park__waiter_t *w, park_time_t *clock)
{
    if (*clock == 0)
        *clock = park_now();
    return *clock - w->since >= PARK__FAIR_NS;
}

bool park__wait_owed(const park__waiter_t *w, park_time_t *clock)
{
    if (w->notify)
        return true;
    if (!waited_long(w, clock))
        return false;
    bucket_t *b = bucket_of(w->key);
    /* relaxed: written under the bucket lock, which the caller holds;
     * park__wait_fair_due reads it without the lock, as a hint. */
    if (*clock < __atomic_load_n(&b->fair_at, __ATOMIC_RELAXED))
        return false;
    __atomic_store_n(&b->fair_at, *clock + PARK__FAIR_NS, __ATOMIC_RELAXED);
    return true;
}

bool park__wait_owed_unpaced(const park__waiter_t *w, park_time_t *clock)
{
    /* It leaves fair_at alone: that would hold back the fair look of a
     * release (park__wait_fair_due), and so the next such waiter, too. */
    return w->notify || (waited_long(w, clock) && *clock >= bucket_of(w->key)->held_until);
}

bool park__wait_fair_due(const void *key, park_time_t now)
{
    /* relaxed: hints (see park__wait_owed); pair with nothing. */
    const bucket_t *b = bucket_of(key);
    park_time_t look = __atomic_load_n(&b->look_at, __ATOMIC_RELAXED);
    return now >= __atomic_load_n(&b->fair_at, __ATOMIC_RELAXED) || (look && now >= look);
}

void park__wait_fair_due_from(const void *key, park_time_t at)
{
    /* relaxed: written under the bucket lock, read as a hint. */
    __atomic_store_n(&bucket_of(key)->look_at, at, __ATOMIC_RELAXED);
}

void park__wait_note_woken(const park__waiter_t *w, park_time_t now)
{
    /* relaxed: a hint for park__wait_woken_late, which orders nothing. */
    atomic_store_explicit(&bucket_of(w->key)->woken_at, now, memory_order_relaxed);
}

bool park__wait_woken_late(const void *key, park_time_t now)
{
    /* relaxed: a hint (see park__wait_note_woken); pairs with nothing. A
     * wake-up of another key recorded after `now` was read is recent. */
    park_time_t at = atomic_load_explicit(&bucket_of(key)->woken_at, memory_order_relaxed);
    return now > at && now - at >= PARK__WOKEN_LATE_NS;
}

uint32_t park__waiting_enter(const void *key)
{
    /* relaxed: a count read as a hint; it orders nothing. */
    return atomic_fetch_add_explicit(&bucket_of(key)->inside, 1, memory_order_relaxed);
}

void park__waiting_leave(const void *key)
{
    /* relaxed: as in park__waiting_enter. */
    atomic_fetch_sub_explicit(&bucket_of(key)->inside, 1, memory_order_relaxed);
}

uint32_t park__waiting(const void *key)
{
    /* relaxed: a hint (see park__waiting_enter). */
    return atomic_load_explicit(&bucket_of(key)->inside, memory_order_relaxed);
}

void park__waiter_init(park__waiter_t *w, uintptr_t want)
{
    w->next = w->prev = NULL;
    w->key = NULL;
    w->queued = false;
    w->want = want;
    w->since = 0;
    w->grant = 0;
    atomic_init(&w->woken, 0);
    w->spin = PARK__WAIT_SPIN;
    w->batch = false;
    w->adapt = NULL;
    w->notify = NULL;
    park__profile_wait_init(&w->profile);
}

enum { SLEEP_WOKEN, SLEEP_TIMEDOUT, SLEEP_ABORTED };

/* w->woken: 0 while the waiter waits awake (queued, spinning), GRANTED once
 * a waker has dequeued it, ASLEEP while it sleeps (or is about to) in the
 * futex, so that a waker calls FUTEX_WAKE only for a waiter that may need
 * it. */
enum { GRANTED = 1, ASLEEP = 2 };

static bool granted(park__waiter_t *w)
{
    /* acquire: pairs with the release exchange (or store) in wake_granted. */
    return atomic_load_explicit(&w->woken, memory_order_acquire) == GRANTED;
}

/* After a futex sleep that began at slept_at: moves w's adaptive yield
 * budget, if it has one. */
static void adapt(park__waiter_t *w, park_time_t slept_at, bool granted)
{
    /* A thread of low weight skipped its yields (park__os_yield): its
     * sleep tells nothing about them, and the budget is the primitive's. */
    if (!w->adapt || park__os_yields_skipped())
        return;
    /* relaxed: a hint (park__wait_adapt); written only when it changes,
     * since the primitive's operations read its line. */
    uint8_t b = atomic_load_explicit(w->adapt, memory_order_relaxed);
    uint8_t n = park__wait_adapt(b, park_now() - slept_at, granted);
    if (n != b)
        atomic_store_explicit(w->adapt, n, memory_order_relaxed);
}

/* deadline (on the clock flags name) has passed; never for PARK_FOREVER. */
static bool past(park_time_t deadline, unsigned flags)
{
    if (flags & PARK__WAIT_REALTIME)
        return deadline != PARK_FOREVER && park__os_realtime_now() >= deadline;
    return park__deadline_passed(deadline);
}

/* Spins, then (if ops->before_sleep agrees) sleeps on w->woken until it is
 * granted or the deadline passes. */
_Thread_local void (*park__wait_block_hook)(void);

/* The timer slack of a doze (PARK__DOZE_SLACK_NS): the thread's own,
 * 50 us by default, would add up to that much to every doze, which is
 * meant to last as long as the caller asks (docs/design/mutex.md,
 * Tuning). */
#define PARK__DOZE_SLACK_NS 1000u

void park__wait_doze(park_time_t until)
{
    if (park__wait_block_hook)
        park__wait_block_hook();
    uint32_t word = 0; /* nobody wakes it: the timeout ends the sleep */
    /* A larger slack is lowered for the doze and put back after it. */
    unsigned long slack = park__os_timer_slack();
    bool lower = slack > PARK__DOZE_SLACK_NS;
    if (lower)
        park__os_set_timer_slack(PARK__DOZE_SLACK_NS);
    (void)park__futex_wait(&word, 0, until);
    if (lower)
        park__os_set_timer_slack(slack);
}

static int thread_sleep(park__waiter_t *w, park_time_t deadline, unsigned flags,
                        const park__wait_ops_t *ops, void *ctx)
{
    /* w->spin pauses (PARK__WAIT_SPIN unless the primitive expects its
     * grant soon), looking after each, then as many yields as the
     * adaptive budget says, if w has one. relaxed: a hint. */
    uint32_t yields = w->adapt ? atomic_load_explicit(w->adapt, memory_order_relaxed) : 0;
    park__spin_t spin = park__spin_init_gap(w->spin, yields, 1);
    do {
        if (granted(w))
            return SLEEP_WOKEN;
        /* A timed wait reads the clock before each yield: with more
         * threads than CPUs a yield may give away a time slice, and a
         * budget of up to 64 yields would make the timeout that late. */
        if (park__spin_yields_next(&spin) && past(deadline, flags))
            break;
    } while (park__spin(&spin));
    if (ops && ops->before_sleep && !ops->before_sleep(ctx))
        return granted(w) ? SLEEP_WOKEN : SLEEP_ABORTED;
    if (park__wait_block_hook)
        park__wait_block_hook();
    _Atomic uint32_t *seq = w->batch ? &bucket_of(w->key)->batch_seq : NULL;
    unsigned futex_flags = (flags & PARK__WAIT_REALTIME ? PARK__FUTEX_REALTIME : 0) |
                           (flags & PARK__WAIT_CANCEL ? PARK__FUTEX_CANCEL : 0);
    park_time_t slept_at = w->adapt ? park_now() : 0;
    for (;;) {
        /* acquire: pairs with the release increment in wake_granted, so
         * that a batch waiter that reads the new value sees its `woken`.
         * seq first, the mark below second: a waker that finds the mark
         * bumps seq after it, so a sleeper never waits on the new value. */
        uint32_t s = seq ? atomic_load_explicit(seq, memory_order_acquire) : 0;
        /* 0 -> ASLEEP: from now on a waker calls FUTEX_WAKE. acquire: as
         * granted(). */
        uint32_t v = 0;
        if (!atomic_compare_exchange_strong_explicit(&w->woken, &v, ASLEEP, memory_order_acquire,
                                                     memory_order_acquire) &&
            v == GRANTED)
            return SLEEP_WOKEN;
        PARK__PROBE1(park, w->key);
        /* Any return may be spurious (or an early timeout under fault
         * injection): only `woken` and the clock are trusted. */
        if (seq)
            park__futex_wait_on((uint32_t *)seq, s, deadline, futex_flags);
        else
            park__futex_wait_on((uint32_t *)&w->woken, ASLEEP, deadline, futex_flags);
        if (granted(w)) {
            adapt(w, slept_at, true);
            return SLEEP_WOKEN;
        }
        if (past(deadline, flags)) {
            adapt(w, slept_at, false);
            return SLEEP_TIMEDOUT;
        }
    }
}

bool park__waiter_asleep(const park__waiter_t *w)
{
    return atomic_load_explicit(&((park__waiter_t *)w)->woken, memory_order_relaxed) == ASLEEP;
}

/* With the bucket locked, enqueues w if validate agrees: false if not. */
static bool enqueue(const void *key, park__waiter_t *w, unsigned flags, const park__wait_ops_t *ops,
                    void *ctx)
{
    bucket_t *b = bucket_of(key);
    park__lock(&b->lock);
    bool valid = ops->validate(ctx);
    if (valid) {
        w->key = key;
        w->queued = true;
        w->batch = (flags & PARK__WAIT_BATCH) != 0;
        /* relaxed: published to wakers by the bucket unlock below. */
        atomic_store_explicit(&w->woken, 0, memory_order_relaxed);
        if (flags & PARK__WAIT_FRONT)
            link_between(b, w, NULL, b->head);
        else
            link_between(b, w, b->tail, NULL);
    }
    park__unlock(&b->lock);
    return valid;
}

int park__wait_sleep(const void *key, park__waiter_t *w, unsigned flags,
                     const park__wait_ops_t *ops, void *ctx, park_time_t deadline)
{
    int slept = thread_sleep(w, deadline, flags, ops, ctx);
    if (slept == SLEEP_WOKEN)
        return PARK__WAIT_GRANTED;
    if (park__wait_leave(key, w, ops->removed, ctx))
        return PARK__WAIT_GRANTED;
    return slept == SLEEP_TIMEDOUT ? PARK__WAIT_TIMEDOUT : PARK__WAIT_ABORTED;
}

bool park__wait_leave(const void *key, park__waiter_t *w, void (*removed)(void *ctx, bool more),
                      void *ctx)
{
    if (park__wait_cancel(key, w, removed, ctx))
        return false;
    /* A waker dequeued w before it could leave: the grant is w's, and its
     * `woken` store is at most one bucket unlock away (or, for a waiter
     * dequeued with PARK__SELECT_DEFER, one park__wake). */
    thread_sleep(w, PARK_FOREVER, 0, NULL, NULL);
    return true;
}

static int wait_for_grant(const void *key, park__waiter_t *w, unsigned flags,
                          const park__wait_ops_t *ops, void *ctx, park_time_t deadline)
{
    if (!enqueue(key, w, flags, ops, ctx))
        return PARK__WAIT_INVALID;
    return park__wait_sleep(key, w, flags, ops, ctx, deadline);
}

/* park__wait while profiling: times the wait and records it. Kept out of
 * line, so that park__wait pays one branch when profiling is off. */
__attribute__((noinline)) static int profiled_wait(const void *key, park__waiter_t *w,
                                                   unsigned flags, const park__wait_ops_t *ops,
                                                   void *ctx, park_time_t deadline)
{
    park_time_t t0 = park_now();
    int r = wait_for_grant(key, w, flags, ops, ctx, deadline);
    if (r != PARK__WAIT_INVALID)
        park__profile_record(
            &w->profile, key, t0,
            r == PARK__WAIT_GRANTED &&
                (w->profile.handoff == PARK__PROFILE_ANY_GRANT || w->grant == w->profile.handoff));
    return r;
}

int park__wait(const void *key, park__waiter_t *w, unsigned flags, const park__wait_ops_t *ops,
               void *ctx, park_time_t deadline)
{
    if (park__profiling() && w->profile.kind != PARK__PROFILE_IDLE)
        return profiled_wait(key, w, flags, ops, ctx, deadline);
    return wait_for_grant(key, w, flags, ops, ctx, deadline);
}

int park__wait_enqueue(const void *key, park__waiter_t *w, unsigned flags,
                       const park__wait_ops_t *ops, void *ctx)
{
    if (!enqueue(key, w, flags, ops, ctx))
        return PARK__WAIT_INVALID;
    if (w->notify && ops->before_sleep && !ops->before_sleep(ctx) &&
        park__wait_cancel(key, w, ops->removed, ctx))
        return PARK__WAIT_ABORTED;
    return PARK__WAIT_QUEUED;
}

/* Wakes a chain of dequeued waiters (linked through `next`). The waiter's
 * memory may be gone as soon as `woken` is set, so everything needed is read
 * before; the futex wake on a dead address is harmless. */
static void wake_granted(park__waiter_t *w)
{
    _Atomic uint32_t *seq = NULL; /* the batch's bucket word, once a sleeper is seen */
    while (w) {
        park__waiter_t *next = w->next;
        if (w->notify) {
            w->notify(w);
        } else if (w->batch) {
            PARK__PROBE1(wake, w->key);
            _Atomic uint32_t *word = &bucket_of(w->key)->batch_seq; /* one key: one bucket */
            /* release: pairs with the acquire loads in thread_sleep (a
             * waiter woken by another batch may see it before our wake).
             * A waiter still awake (yielding: a lazy run's callers) sees
             * it without a system call; only one marked asleep needs the
             * batch's wake. */
            if (atomic_exchange_explicit(&w->woken, GRANTED, memory_order_release) == ASLEEP)
                seq = word;
        } else {
            uint32_t *word = (uint32_t *)&w->woken;
            PARK__PROBE1(wake, w->key);
            /* release: pairs with the acquire loads in thread_sleep. A
             * waiter still awake sees it without a system call. */
            if (atomic_exchange_explicit(&w->woken, GRANTED, memory_order_release) == ASLEEP)
                park__futex_wake(word, 1);
        }
        w = next;
    }
    if (seq) {
        /* release: pairs with the acquire load in thread_sleep (the woken
         * stores above come first); then one wake for the whole batch. */
        atomic_fetch_add_explicit(seq, 1, memory_order_release);
        park__futex_wake((uint32_t *)seq, INT32_MAX);
    }
}

size_t park__unpark(const void *key, park__select_fn select, park__finish_fn finish, void *ctx)
{
    bucket_t *b = bucket_of(key);
    park__waiter_t *granted = NULL, **granted_tail = &granted;
    size_t n = 0;
    bool stopped = false, more = false;

    park__lock(&b->lock);
    for (park__waiter_t *w = b->head, *next; w; w = next) {
        next = w->next;
        if (w->key != key)
            continue;
        if (stopped) {
            more = true;
            break;
        }
        unsigned verdict = select(ctx, w);
        if (verdict & PARK__SELECT_GRANT) {
            unlink_waiter(b, w);
            w->next = NULL;
            if (!(verdict & PARK__SELECT_DEFER)) {
                *granted_tail = w;
                granted_tail = &w->next;
            }
            n++;
        } else {
            more = true;
        }
        if (verdict & PARK__SELECT_STOP)
            stopped = true;
    }
    /* Fault injection widens the window between the verdicts and the
     * finish, where lock-free steps of others race the caller's store. */
    park__fault_pause();
    if (finish)
        finish(ctx, more);
    park__unlock(&b->lock);

    PARK__PROBE2(unpark, key, n);
    wake_granted(granted);
    return n;
}

void park__wake(park__waiter_t *w)
{
    wake_granted(w); /* alone: its `next` was cleared when it was dequeued */
}

static unsigned select_all(void *ctx, park__waiter_t *w)
{
    (void)ctx;
    w->grant = 0;
    return PARK__SELECT_GRANT;
}

int park__wait_event(const void *key, unsigned flags, const park__wait_ops_t *ops, void *ctx,
                     bool (*taken)(void *ctx), park_time_t deadline)
{
    park__waiter_t w;
    park__waiter_init(&w, 0);
    for (;;) {
        if (taken(ctx))
            return 0;
        if (park__deadline_passed(deadline))
            return ETIMEDOUT;
        switch (park__wait(key, &w, flags, ops, ctx, deadline)) {
        case PARK__WAIT_GRANTED:
            return 0; /* ordered by the grant's acquire */
        case PARK__WAIT_TIMEDOUT:
            return ETIMEDOUT;
        default:
            break; /* it came before we were queued: look again */
        }
    }
}

size_t park__unpark_all(const void *key)
{
    return park__unpark(key, select_all, NULL, NULL);
}

bool park__wait_cancel(const void *key, park__waiter_t *w, void (*removed)(void *ctx, bool more),
                       void *ctx)
{
    bucket_t *b = bucket_of(key);
    park__lock(&b->lock);
    bool was_queued = w->queued && (!PARK__UNLIKELY(park__forked) || on_list(b, w));
    if (was_queued) {
        unlink_waiter(b, w);
        PARK__PROBE1(timeout, key);
        if (removed)
            removed(ctx, key_has_waiters(b, key));
    }
    park__unlock(&b->lock);
    return was_queued;
}

bool park__wait_has_waiters(const void *key)
{
    bucket_t *b = bucket_of(key);
    park__lock(&b->lock);
    bool any = key_has_waiters(b, key);
    park__unlock(&b->lock);
    return any;
}

size_t park__wait_count(const void *key)
{
    bucket_t *b = bucket_of(key);
    size_t n = 0;
    park__lock(&b->lock);
    for (const park__waiter_t *w = b->head; w; w = w->next)
        n += w->key == key;
    park__unlock(&b->lock);
    return n;
}

void park__wait_hold_fair(const void *key, park_time_t until)
{
    bucket_t *b = bucket_of(key);
    park__lock(&b->lock);
    __atomic_store_n(&b->fair_at, until, __ATOMIC_RELAXED); /* as park__wait_owed */
    b->held_until = until;
    park__unlock(&b->lock);
}

bool park__wait_first_asleep(const void *key)
{
    bucket_t *b = bucket_of(key);
    bool asleep = false;
    park__lock(&b->lock);
    for (const park__waiter_t *w = b->head; w; w = w->next)
        if (w->key == key) {
            asleep = park__waiter_asleep(w);
            break;
        }
    park__unlock(&b->lock);
    return asleep;
}

/* ---- fork (lib/wait/fork.c) ------------------------------------------------ */

void park__wait_reset_all(void)
{
    /* The lists are dropped, not walked: a thread that was inside a
     * bucket at the fork may have left one half-linked. */
    for (size_t i = 0; i < BUCKET_COUNT; i++) {
        bucket_t *b = &buckets[i];
        b->head = b->tail = NULL;
        __atomic_store_n(&b->fair_at, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&b->look_at, 0, __ATOMIC_RELAXED);
        atomic_init(&b->batch_seq, 0);
        atomic_init(&b->inside, 0); /* the forking thread was in none */
        park__lock_reset(&b->lock);
    }
    memset(park__wait_hints, 0, sizeof park__wait_hints);
}

void park__wait_count_wants(const void *key, size_t *counts, uintptr_t n)
{
    for (const park__waiter_t *w = bucket_of(key)->head; w; w = w->next)
        if (w->key == key && w->want < n)
            counts[w->want]++;
}
