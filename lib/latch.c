/* lib/latch.c: park_latch, a single-use countdown (C++20 std::latch).
 * Design notes: docs/design/barrier.md; protocol model:
 * tests/model/barrier.pml (-DLATCH). Asynchronous waiting:
 * lib/latch_async.c; what both share: lib/latch_impl.h.
 *
 * State word (park_latch_t.state_): COUNT (low 31 bits) the count still
 * to go, c below; WAITERS (bit 31) waiters are queued in lib/wait under
 * the latch's address.
 *
 *   c           counting, nobody queued (0: released, final)
 *   c|WAITERS   counting, waiters queued (c > 0)
 *
 * Transitions:
 *   count_down n         c -> c-n (n <= c)            CAS (inline), to 0 included
 *   queue (validate)     c -> c|WAITERS (c > 0)       CAS, bucket locked; refused on 0
 *   count_down n,        c|WAITERS -> (c-n)|WAITERS   store, bucket locked
 *     WAITERS set        n|WAITERS -> 0               store, bucket locked: every waiter
 *                                                     granted (one batch wake)
 *   last waiter leaves   c|WAITERS -> c               fetch_and, bucket locked (timeout,
 *                                                     cancel)
 *
 * While WAITERS is set the count changes only under the bucket lock (the
 * inline count_down needs WAITERS clear), so a count_down that finds
 * WAITERS decides there, and the one that reaches zero grants every waiter
 * and stores 0 in the same critical section: WAITERS => COUNT > 0, and the
 * store of 0 is the releaser's last access to the latch (rule 9). A
 * waiter learns the release from its grant. */
#include <errno.h>

#include <park/barrier.h>

#include "latch_impl.h"
#include "os/os.h"
#include "wait/fork.h"
#include "wait/wait.h"

#define WAITERS PARK__LATCH_HAS_WAITERS
#define COUNT PARK__LATCH_COUNT_MASK

int park_latch_init(park_latch_t *l, uint32_t count)
{
    if (count > PARK_LATCH_MAX)
        return EINVAL;
    /* relaxed: nobody uses *l meanwhile; whatever hands *l to other
     * threads orders this store. */
    __atomic_store_n(&l->state_, count, __ATOMIC_RELAXED);
    return 0;
}

int park_latch_destroy(park_latch_t *l)
{
    if (!l)
        return 0;
    /* acquire: pairs with the release of the last count_down. */
    return park__wait_destroy_busy(l, __atomic_load_n(&l->state_, __ATOMIC_ACQUIRE) & WAITERS);
}

uint32_t park_latch_count(const park_latch_t *l)
{
    /* relaxed: a monitoring snapshot. */
    return __atomic_load_n(&l->state_, __ATOMIC_RELAXED) & COUNT;
}

/* ---- waiting ------------------------------------------------------------ */

static bool wait_validate(void *ctx)
{
    park_latch_t *l = ((struct park__latch_wait_ctx *)ctx)->l;
    /* relaxed: only prepares the CAS; a waiter that finds 0 passes
     * through park_latch_try_wait's acquire. */
    uint32_t v = __atomic_load_n(&l->state_, __ATOMIC_RELAXED);
    for (;;) {
        if (!(v & COUNT))
            return false; /* released meanwhile: pass */
        if (v & WAITERS)
            return true;
        /* c -> c|WAITERS; relaxed: the bucket lock orders it against a locked
         * count_down, and the inline count_down's CAS fails on it. */
        if (__atomic_compare_exchange_n(&l->state_, &v, v | WAITERS, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return true;
    }
}

static void wait_removed(void *ctx, bool more)
{
    park_latch_t *l = ((struct park__latch_wait_ctx *)ctx)->l;
    if (!more) /* c|WAITERS -> c; relaxed: WAITERS changes only under the bucket lock */
        __atomic_fetch_and(&l->state_, ~WAITERS, __ATOMIC_RELAXED);
}

const park__wait_ops_t park__latch_wait_ops = {
    .validate = wait_validate,
    .removed = wait_removed,
};

bool park__latch_wait_taken(void *ctx)
{
    return park_latch_try_wait(((struct park__latch_wait_ctx *)ctx)->l);
}

int park__latch_wait_slow(park_latch_t *l, park_time_t deadline)
{
    struct park__latch_wait_ctx c = {.l = l};
    /* The release grants every waiter together: they sleep on their
     * bucket's batch word, woken by one system call. */
    return park__wait_event(l, PARK__WAIT_BATCH, &park__latch_wait_ops, &c, park__latch_wait_taken,
                            deadline);
}

int park_latch_wait_until(park_latch_t *l, park_time_t deadline)
{
    if (park_latch_try_wait(l))
        return 0;
    return park__latch_wait_slow(l, deadline);
}

/* ---- counting down with waiters, decided under the bucket lock ---------- */

struct down_ctx {
    park_latch_t *l;
    uint32_t n;
    bool decided;  /* select has seen a waiter and decided */
    bool release;  /* this count_down reaches zero: grant every waiter */
    uint32_t next; /* the word to store, once decided */
    int result;
};

/* Bucket locked, a waiter queued (so WAITERS is set and nobody else changes
 * the word): what this count_down does. */
static void down_decide(struct down_ctx *d)
{
    d->decided = true;
    /* acquire: pairs with the release of the inline count_downs made before
     * WAITERS was set, so that a waiter granted here (ordered after us by the
     * bucket lock) sees them. */
    uint32_t v = __atomic_load_n(&d->l->state_, __ATOMIC_ACQUIRE);
    uint32_t c = v & COUNT;
    if (d->n > c) {
        d->result = EINVAL;
        d->next = v;
        return;
    }
    d->release = d->n == c;
    d->next = d->release ? 0u : (c - d->n) | WAITERS;
}

static unsigned down_select(void *ctx, park__waiter_t *w)
{
    struct down_ctx *d = ctx;
    if (!d->decided)
        down_decide(d);
    if (!d->release)
        return PARK__SELECT_STOP; /* nobody is released yet */
    w->grant = 0;
    return PARK__SELECT_GRANT;
}

static void down_finish(void *ctx, bool more)
{
    struct down_ctx *d = ctx;
    (void)more; /* decided: every waiter granted (release) or none */
    park_latch_t *l = d->l;
    if (d->decided) {
        /* c|WAITERS -> (c-n)|WAITERS, or n|WAITERS -> 0 with every waiter
         * granted. release: pairs with the acquire in park_latch_try_wait;
         * granted waiters are ordered by the bucket lock and the release of
         * their `woken`. The count_down's last access to the latch. */
        if (d->result == 0)
            __atomic_store_n(&l->state_, d->next, __ATOMIC_RELEASE);
        return;
    }
    /* Nobody is queued: the waiters left (timeouts) before the lock, or a
     * WAITERS stayed behind in a forked child. Count down as the inline path
     * does, clearing WAITERS: inline count_downs may race this now. relaxed:
     * only prepares the CAS. */
    uint32_t v = __atomic_load_n(&l->state_, __ATOMIC_RELAXED);
    do {
        if (d->n > (v & COUNT)) {
            d->result = EINVAL;
            return;
        }
        /* c -> c-n; release: pairs with the acquire in park_latch_try_wait. */
    } while (!__atomic_compare_exchange_n(&l->state_, &v, (v & COUNT) - d->n, true,
                                          __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

int park__latch_count_down_slow(park_latch_t *l, uint32_t n)
{
    /* relaxed: only chooses the path; the CAS or the bucket lock decides. */
    uint32_t v = __atomic_load_n(&l->state_, __ATOMIC_RELAXED);
    if (!(v & WAITERS))
        return n > (v & COUNT) ? EINVAL : park_latch_count_down(l, n);
    struct down_ctx d = {.l = l, .n = n};
    park__unpark(l, down_select, down_finish, &d);
    return d.result;
}

int park_latch_arrive_and_wait(park_latch_t *l, uint32_t n)
{
    int err = park_latch_count_down(l, n);
    if (err)
        return err;
    park_latch_wait(l);
    return 0;
}
