/* lib/mutex.c: park_mutex, a barging mutex with one woken waiter in flight
 * (more only beside a late one) and bounded unfairness. Design notes: docs/design/mutex.md.
 * Asynchronous acquisition: lib/mutex_async.c; what both share:
 * lib/mutex_impl.h.
 *
 * State word (park_mutex_t.state_), bits named in park/mutex.h:
 *   LOCKED       held
 *   PARKED       waiters are queued in lib/wait under the address
 *   SLOW_UNLOCK  the holder took it from a word other than 0, or was
 *                handed it: its unlock takes the slow path. Only with LOCKED.
 *   WOKEN        a waiter was woken to retry and has not yet taken the
 *                lock or queued again (the designated waker): unlocks
 *                wake nobody meanwhile, unless it is late (below)
 *   CREDITS      c, 0-255: the mutex was contended recently; refilled when
 *                a waiter queues or is woken, or a locker about to
 *                queue for the first time finds it held with fewer than
 *                half left (a dozing locker writes nothing); one spent
 *                per unlock that finds nobody queued. While c > 0 every holder carries
 *                SLOW_UNLOCK, so a waiter never needs the store unlock's
 *                fence.
 *
 *   state                    meaning
 *   0                        free, not contended lately (but see the store unlock)
 *   LOCKED                   held, taken uncontended: unlock may be a plain store
 *   LOCKED|SLOW_UNLOCK|..    held, taken from a contended word or handed over
 *   ..|PARKED|..             waiters queued (set only while held)
 *   ..|WOKEN|..              a woken waiter is on its way
 *   c                        free, contended lately
 *
 * Invariant (outside bucket-locked sections and the store unlock's race):
 * PARKED without LOCKED implies WOKEN: while waiters are queued, the mutex
 * is held or a woken waiter is on its way to it, so nobody sleeps on a
 * free mutex.
 *
 * Transitions (those that keep other bits say so): the change of the
 * word, then how it is made:
 *   lock, try_lock       0 -> LOCKED, x -> x|LOCKED|SLOW_UNLOCK
 *                        CAS (fast path: 0 -> LOCKED); the woken waiter also
 *                        clears WOKEN
 *   unlock               LOCKED -> 0
 *                        load + store (or CAS)
 *   unlock, no PARKED    LOCKED|SLOW_UNLOCK|x -> x, c-1
 *                        CAS, lock-free; then reads the hint, as the store
 *                        unlock
 *   unlock, WOKEN        LOCKED|SLOW_UNLOCK|PARKED|WOKEN|c -> PARKED|WOKEN|c
 *                        CAS, lock-free: wakes nobody
 *   unlock, PARKED,      LOCKED|..|PARKED -> PARKED|WOKEN|255
 *     no WOKEN           store, bucket locked: the oldest waiter is woken to
 *                        retry
 *   unlock, WOKEN late   LOCKED|SLOW_UNLOCK|PARKED|WOKEN|c -> PARKED|WOKEN|255
 *                        the same, although WOKEN is set: the woken waiter
 *                        was woken 200 us ago or more and this thread's
 *                        unlocks are slow (pace_slow); or
 *                        LOCKED|SLOW_UNLOCK|255[|PARKED] (handed over), or c
 *                        (queue found empty): WOKEN lost, which costs only
 *                        wake-ups
 *   unlock, WOKEN, fair  LOCKED|SLOW_UNLOCK|PARKED|WOKEN|c -> LOCKED|SLOW_UNLOCK|255[|PARKED]
 *                        store, bucket locked: no fair hand-off for 1 ms in
 *                        the bucket (sampled), the oldest waiter owed one; if
 *                        it is not, -> PARKED|WOKEN|c, nobody woken
 *                        LOCKED|..|PARKED -> LOCKED|SLOW_UNLOCK|255[|PARKED]
 *                        store, bucket locked: handed to the oldest waiter
 *                        (park__wait_owed)
 *   park (validate)      LOCKED|x -> LOCKED|x|PARKED|255
 *                        CAS, bucket locked; the woken waiter queuing again
 *                        clears WOKEN
 *   contended locker     LOCKED|x -> LOCKED|x|255
 *                        CAS, when c < 128, once it has dozed its fill
 *                        and is about to queue (a dozing locker writes
 *                        nothing)
 *   last waiter leaves   x|PARKED -> x
 *                        fetch_and, bucket locked
 *   woken waiter gives   bucket locked: held: clears WOKEN; free: wakes the
 *     up (timeout)       next waiter
 *
 * A bucket-locked unlock (PARKED set) is the only writer of the word but
 * for credits: lockers need LOCKED clear, unlocks are the holder's, and
 * validate, removal and the woken waiter's giving up hold the bucket lock
 * (a late woken waiter in flight takes the lock only once LOCKED is
 * clear). So it decides and stores under the bucket lock, and that store
 * is its last access to the mutex (rule 9); the lock-free unlocks' CAS is
 * their last access too. The store unlock may erase a PARKED set
 * meanwhile; the hint read after it and the waiter's membarrier repair
 * that (tests/model/mutex.pml checks the protocol). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <park/mutex.h>

#include "mutex_impl.h"
#include "os/os.h"
#include "os/probe.h"
#include "profile/order.h"
#include "wait/fork.h"
#include "wait/spin.h"
#include "wait/wait.h"

#define LOCKED PARK__MUTEX_LOCKED
#define PARKED PARK__MUTEX_PARKED
#define SLOW_UNLOCK PARK__MUTEX_SLOW_UNLOCK
#define WOKEN PARK__MUTEX_WOKEN
#define CREDIT PARK__MUTEX_CREDIT
#define CREDITS PARK__MUTEX_CREDITS

/* w->grant of a woken waiter (lib/wait/wait.h): woken to retry as the
 * woken waiter (PARK__GRANT_WOKEN: WOKEN; two or more share it when one was
 * late), woken to retry by a hinted unlock (PARK__GRANT_RETRY: WOKEN not its),
 * or handed the lock (PARK__GRANT_HANDOFF). */

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
    if (park__order_checking())
        park__order_forget(m); /* a new lock, if the memory held another */
    __atomic_store_n(&m->state_, 0, __ATOMIC_RELAXED);
}

int park_mutex_destroy(park_mutex_t *m)
{
    if (!m)
        return 0;
    /* acquire: pairs with the releasing store of the last unlock, so that
     * freeing the memory is ordered after every use. */
    uint32_t s = __atomic_load_n(&m->state_, __ATOMIC_ACQUIRE);
    if (s == 0) {
        if (park__order_checking())
            park__order_forget(m); /* the lock leaves the order graph */
        return 0;
    }
    /* Credits only remember recent contention; a woken waiter on its way
     * is a thread blocked in park_mutex_lock (in a forked child WOKEN may be a
     * thread that is not there: park__woken_mark). */
    return ((s & LOCKED) || park__woken_mark(s & WOKEN) || park__wait_has_waiters(m)) ? EBUSY : 0;
}

/* One attempt to take a free mutex; keeps PARKED, WOKEN and the credits,
 * except that the woken waiter (`woken`) clears WOKEN as it takes the lock. */
static bool try_take(park_mutex_t *m, uint32_t *s, bool woken)
{
    while (!(*s & LOCKED)) {
        uint32_t next = (*s | PARK__MUTEX_TAKE(*s)) & ~(woken ? WOKEN : 0u);
        /* acquire: pairs with the unlock's release. */
        if (__atomic_compare_exchange_n(&m->state_, s, next, true, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return true;
    }
    return false;
}

static bool lock_validate(void *ctx)
{
    struct park__mutex_lock_ctx *c = ctx;
    uint32_t s = __atomic_load_n(&c->m->state_, __ATOMIC_RELAXED);
    for (;;) {
        if (!(s & LOCKED))
            return false; /* free again: retry instead of sleeping (WOKEN stays ours) */
        c->covered = (s & SLOW_UNLOCK) != 0;
        /* LOCKED|x -> LOCKED|x|PARKED|255, and the woken waiter hands back
         * WOKEN: the holder's unlock will wake somebody. relaxed: the bucket
         * lock orders it against the bucket-locked unlock; the lock-free
         * unlocks' CAS fails on it; the store unlock is handled by
         * lock_before_sleep. */
        uint32_t next = ((s | PARKED | CREDITS) & ~(c->woken ? WOKEN : 0u));
        if (__atomic_compare_exchange_n(&c->m->state_, &s, next, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
            c->woken = false;
            return true;
        }
    }
}

static void lock_removed(void *ctx, bool more)
{
    struct park__mutex_lock_ctx *c = ctx;
    if (!more) /* x|PARKED -> x; relaxed: only PARKED changes */
        __atomic_fetch_and(&c->m->state_, ~PARKED, __ATOMIC_RELAXED);
}

/* The waiter's half of the asymmetric Dekker pair (docs/design/mutex.md): a
 * waiter whose holder may unlock by a plain store (SLOW_UNLOCK clear at
 * validate) is counted in the hint by now; after the membarrier, either that
 * unlock sees the hint and wakes a waiter, or we see PARKED gone and retry
 * instead of sleeping. A covered waiter's holder unlocks through the slow
 * path. */
static bool lock_before_sleep(void *ctx)
{
    struct park__mutex_lock_ctx *c = ctx;
    if (c->covered || !park__mutex_store_unlock)
        return true;
    park__os_membarrier();
    /* relaxed: the membarrier above orders it after our hint and makes a
     * racing unlock's store visible. */
    return (__atomic_load_n(&c->m->state_, __ATOMIC_RELAXED) & PARKED) != 0;
}

const park__wait_ops_t park__mutex_lock_ops = {
    .validate = lock_validate,
    .removed = lock_removed,
    .before_sleep = lock_before_sleep,
};

struct lock_spin_ctx {
    park_mutex_t *m;
    uint32_t *s; /* the word as the locker last saw it */
    bool woken;
};

/* One look at *l->s: 1 if it took the mutex, -1 if a newcomer must stop
 * (PARKED: a queued waiter is about to get its turn), 0 to look again. */
static int lock_try(struct lock_spin_ctx *l)
{
    if (try_take(l->m, l->s, l->woken))
        return 1;
    return (*l->s & PARKED) && !l->woken ? -1 : 0;
}

/* The same at the word as it is now. */
static int lock_look(void *ctx)
{
    struct lock_spin_ctx *l = ctx;
    /* relaxed: a hint; the try's compare-and-swap decides. */
    *l->s = __atomic_load_n(&l->m->state_, __ATOMIC_RELAXED);
    return lock_try(l);
}

/* Tries to take the mutex, spinning (rule 6) while nobody is queued, or
 * while we are the woken waiter: true if taken; *s is then the word it
 * last saw. A queued waiter is about to get its turn, so a newcomer that
 * sees PARKED stops spinning at once (to doze, then queue) rather than add
 * a second spinner. */
static bool lock_spin(park_mutex_t *m, uint32_t *s, bool woken)
{
    /* One look after 128 pauses, then one after each of 4 yields; then the
     * caller dozes or queues. Each look takes the lock's cache line from
     * the holder, so frequent looks slow it down and pass the lock back and
     * forth where the two share the CPUs (docs/design/mutex.md, Tuning); a
     * short critical section still ends within the pauses. A locker alone
     * inside lock_wait (park__waiting: nobody else spins, dozes or sleeps
     * for a key of the mutex's bucket) first takes the early looks
     * (spin.h: after 8 to 120 pauses, unless its CPU was lately crowded):
     * with others inside, a locker that got in early would not doze, and
     * the dozers are what keeps the mutex fair with more threads than
     * CPUs. */
    struct lock_spin_ctx l = {m, s, woken};
    int r = lock_try(&l);
    if (r != 0)
        return r > 0;
    park__spin_t spin = park__spin_init_once(128, 4);
    if (park__waiting(m) <= 1)
        return park__spin_rare(spin, 0, lock_look, &l) > 0;
    while (r == 0 && park__spin(&spin))
        r = lock_look(&l);
    return r > 0;
}

struct pass_ctx {
    park_mutex_t *m;
    bool passed;
};

/* The woken waiter gives up (its deadline passed). If the mutex is held,
 * WOKEN is cleared and the holder's unlock wakes somebody; if it is free, the
 * oldest waiter becomes the woken waiter in its place (WOKEN stays), or, if it
 * is asynchronous (it cannot retry), is handed the lock. */
static unsigned pass_select(void *ctx, park__waiter_t *w)
{
    struct pass_ctx *p = ctx;
    uint32_t s = __atomic_load_n(&p->m->state_, __ATOMIC_RELAXED);
    for (;;) {
        uint32_t next;
        if (s & LOCKED) {
            next = s & ~WOKEN;
        } else if (w->notify) {
            next = (s & ~WOKEN) | LOCKED | SLOW_UNLOCK | CREDITS;
        } else {
            w->grant = PARK__GRANT_WOKEN;
            park__wait_note_woken(w, park_now());
            p->passed = true;
            return PARK__SELECT_GRANT | PARK__SELECT_STOP;
        }
        /* acquire: a hand-over takes the lock for the task. A lock-free
         * unlock's CAS fails on it and retries. */
        if (__atomic_compare_exchange_n(&p->m->state_, &s, next, true, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            break;
    }
    if (s & LOCKED)
        return PARK__SELECT_STOP;
    w->grant = PARK__GRANT_HANDOFF;
    return PARK__SELECT_GRANT | PARK__SELECT_STOP;
}

static void pass_finish(void *ctx, bool more)
{
    struct pass_ctx *p = ctx;
    if (!more && !p->passed) /* nobody queued: WOKEN (and PARKED) go */
        __atomic_fetch_and(&p->m->state_, ~(WOKEN | PARKED), __ATOMIC_RELAXED);
}

/* The pace of this thread's slow unlocks (every unlock of a mutex that was
 * contended lately: waiters queued, a woken waiter on its way, or credits
 * left), sampled: one in PACE_SAMPLE reads the clock. A thread that unlocks
 * more often than once per PACE_BUSY_NS is bound by the lock: its critical
 * sections and the gaps between them are short, and another running thread
 * would only fight it for the lock's cache line. One that unlocks more
 * slowly spends its time outside the lock, where a waiter left asleep is a
 * CPU left idle. Two slow windows in a row are needed, so that a window in
 * which the thread was preempted does not count; a wait in lock_wait starts
 * afresh. The woken waiter's own spin (128 pauses, 248 when alone, then 4
 * yields) counts as lateness too: with more threads than CPUs its yields
 * may outlast the 200 us, and an extra waiter is then woken beside a
 * running one, which costs a wake-up. */
#define PACE_SAMPLE 32u
#define PACE_BUSY_NS 200u

/* initial-exec: the slow unlock reads it at every round of a contended
 * mutex, and the general-dynamic model a shared library gets by default
 * calls __tls_get_addr for it each time. It costs 24 bytes of the static
 * TLS that the C library reserves for libraries loaded later. */
static _Thread_local __attribute__((tls_model("initial-exec"))) struct {
    uint32_t unlocks;
    park_time_t at; /* the clock at the last sample; 0: none since a sleep */
    bool slow;      /* the window that ended there was slow */
} pace;

/* A locker whose spin failed dozes before it queues (park__wait_doze): it
 * sleeps for DOZE_NS on a word of its own, touching neither the mutex nor
 * its bucket, then spins again, until it takes the mutex or has tried for
 * PARK__FAIR_NS; only then does it queue, and by then it has waited long
 * enough to be owed a hand-off (park__wait_owed, which still grants one
 * per bucket per PARK__FAIR_NS). A queued waiter marks the word (PARKED,
 * credits), and every lock and unlock of a marked word takes the slow
 * paths: three atomic read-modify-writes a round instead of one and a
 * store. So while the running thread re-takes the mutex at once, a queued
 * waiter halved its rounds; a dozing one leaves the word clean (its
 * credits run out after 255 unlocks) and the holder runs at the
 * uncontended speed. The cost: a waiter whose mutex falls free while it
 * dozes is not woken, and takes it up to DOZE_NS (plus the kernel's timer
 * slack) late. docs/design/mutex.md, Dozing. */
#define DOZE_NS 50000u

static int lock_wait_inside(park_mutex_t *m, park_time_t deadline)
{
    park__waiter_t w;
    park__waiter_init(&w, 0);
    park__waiter_profile(&w, PARK_PROFILE_MUTEX, PARK__GRANT_HANDOFF);
    struct park__mutex_lock_ctx c = {.m = m};
    unsigned flags = 0;
    uint32_t s = __atomic_load_n(&m->state_, __ATOMIC_RELAXED);
    if (s & LOCKED) /* contended (credits alone also bring us here) */
        park__waiter_profile_from_here(&w);

    bool refill = true; /* before the first queueing only */
    for (;;) {
        if (lock_spin(m, &s, c.woken)) {
            park__waiter_profile_done(&w, m);
            return 0;
        }
        if (park__deadline_passed(deadline)) {
            if (c.woken) {
                struct pass_ctx p = {.m = m};
                park__unpark(m, pass_select, pass_finish, &p);
            }
            park__waiter_profile_done(&w, m);
            return ETIMEDOUT;
        }
        park_time_t now = park_now();
        if (w.since == 0)
            w.since = now;
        /* Not yet queued (nor woken: a woken waiter holds WOKEN, which
         * holds back every other wake-up, and must not sleep on it). */
        if (flags == 0 && !c.woken && now - w.since < PARK__FAIR_NS) {
            park__wait_doze(now + DOZE_NS < deadline ? now + DOZE_NS : deadline);
            pace.at = 0;
            s = __atomic_load_n(&m->state_, __ATOMIC_RELAXED);
            continue;
        }
        /* About to queue. Credits below half are refilled (x -> x|255), so
         * that while threads keep queuing at the lock its holders carry
         * SLOW_UNLOCK and a waiter that queues needs no membarrier. Not
         * earlier: a dozing locker leaves the word clean. relaxed: the
         * credits order nothing; a store unlock may erase them, which only
         * costs that. */
        while (refill && (s & LOCKED) && (s & CREDITS) < CREDITS / 2) {
            if (__atomic_compare_exchange_n(&m->state_, &s, s | CREDITS, true, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED))
                break;
        }
        refill = false;
        int r = park__wait(m, &w, flags, &park__mutex_lock_ops, &c, deadline);
        pace.at = 0; /* the time spent waiting is no pace */
        if (r == PARK__WAIT_GRANTED && w.grant == PARK__GRANT_HANDOFF)
            return 0;
        if (r == PARK__WAIT_TIMEDOUT)
            return ETIMEDOUT;
        /* Woken to retry, or the mutex fell free before we slept. A woken
         * waiter that loses to a barger queues again at the front with its
         * original start time, so that it is the oldest waiter when
         * park__wait_owed grants it a hand-off. */
        if (r == PARK__WAIT_GRANTED) {
            c.woken = w.grant == PARK__GRANT_WOKEN;
            flags = PARK__WAIT_FRONT;
        }
        s = __atomic_load_n(&m->state_, __ATOMIC_RELAXED);
    }
}

/* A contended lock: counted inside its bucket (park__waiting) from the
 * first spin to the last sleep, for the early looks of lock_spin. */
static int lock_wait(park_mutex_t *m, park_time_t deadline)
{
    (void)park__waiting_enter(m);
    int r = lock_wait_inside(m, deadline);
    park__waiting_leave(m);
    return r;
}

void park__mutex_lock_slow(park_mutex_t *m)
{
    /* The running thread of a contended mutex comes here at every lock:
     * the word keeps PARKED, WOKEN or credits while contention lasts, so
     * the inline CAS from 0 fails even when the mutex is free. A free word
     * is taken at once, before lock_wait sets up a waiter (which only a
     * held word needs: a free one is neither profiled nor refilled). With
     * no work outside the lock this path and the slow unlock are most of
     * the lock's cost (docs/design/mutex.md, Tuning). */
    uint32_t s = __atomic_load_n(&m->state_, __ATOMIC_RELAXED);
    if (try_take(m, &s, false))
        return;
    (void)lock_wait(m, PARK_FOREVER);
}

int park_mutex_lock_until(park_mutex_t *m, park_time_t deadline)
{
    if (park_mutex_try_lock(m))
        return 0;
    return lock_wait(m, deadline);
}

struct unlock_ctx {
    park_mutex_t *m;
    bool fair;    /* came only for a hand-off that may be due (the fair look) */
    bool woken;   /* a waiter was granted */
    bool handoff; /* ... and handed the lock (else woken to retry) */
};

static unsigned unlock_select(void *ctx, park__waiter_t *w)
{
    struct unlock_ctx *u = ctx;
    park_time_t clock = 0;
    bool owed = park__wait_owed(w, &clock);
    /* Came for a hand-off that is not owed after all, with a woken waiter
     * on its way (read under the bucket lock, where WOKEN changes while the
     * mutex is held; in a forked child a WOKEN from before the fork holds
     * nothing back): nobody is woken, as by the lock-free unlock. */
    if (u->fair && !owed &&
        park__woken_mark(__atomic_load_n(&u->m->state_, __ATOMIC_RELAXED) & WOKEN))
        return PARK__SELECT_STOP;
    u->woken = true;
    u->handoff = owed;
    w->grant = u->handoff ? PARK__GRANT_HANDOFF : PARK__GRANT_WOKEN;
    if (!u->handoff)
        park__wait_note_woken(w, clock);
    return PARK__SELECT_GRANT | PARK__SELECT_STOP;
}

static void unlock_finish(void *ctx, bool more)
{
    struct unlock_ctx *u = ctx;
    /* LOCKED|..|PARKED -> PARKED|WOKEN|255 (woken),
     * LOCKED|SLOW_UNLOCK|255[|PARKED] (handed over); a queue found empty
     * (PARKED outlived its waiters) leaves the credits. */
    uint32_t v = __atomic_load_n(&u->m->state_, __ATOMIC_RELAXED);
    uint32_t s = v & CREDITS;
    if (u->woken)
        s = CREDITS | (more ? PARKED : 0u) | (u->handoff ? LOCKED | SLOW_UNLOCK : WOKEN);
    else if (more)
        /* fair, nothing owed: LOCKED|SLOW_UNLOCK|PARKED|WOKEN|c -> PARKED|WOKEN|c */
        s = v & ~(LOCKED | SLOW_UNLOCK);
    if (u->handoff)
        PARK__PROBE1(handoff, u->m);
    /* release: pairs with the acquire CAS of the next locker (a hand-off
     * is ordered by the bucket unlock and the waiter's acquire of
     * `woken`). The last access to *m. */
    __atomic_store_n(&u->m->state_, s, __ATOMIC_RELEASE);
}

/* At a sample (the clock `now`, one slow unlock in PACE_SAMPLE): true when
 * the window that ends here and the one before it were slow (the thread
 * is not bound by the lock). */
static bool pace_slow(park_time_t now)
{
    park_time_t last = pace.at;
    pace.at = now;
    bool slow = last != 0 && now - last >= (park_time_t)PACE_SAMPLE * PACE_BUSY_NS;
    bool twice = slow && pace.slow;
    pace.slow = slow;
    return twice;
}

void park__mutex_unlock_slow(park_mutex_t *m)
{
    /* One slow unlock in PACE_SAMPLE reads the clock, for the pace and to
     * ask whether the bucket has made no fair hand-off for PARK__FAIR_NS.
     * Without this look an unlock with a woken waiter on its way (WOKEN) skips
     * the bucket, and with more threads than CPUs WOKEN is set most of the
     * time (the woken waiter waits for a CPU), so hand-offs came rarely. */
    park_time_t now = 0;
    bool fair = park__wait_fair_look(m, &pace.unlocks, PACE_SAMPLE, &now);
    bool slow = now != 0 && pace_slow(now);
    uint32_t s = __atomic_load_n(&m->state_, __ATOMIC_RELAXED);
    for (;;) {
        /* Only the holder unlocks, and nobody else clears LOCKED: a free
         * word is misuse, reported in every build (off the fast path it is
         * free). */
        if (!(s & LOCKED))
            park__misuse("park_mutex_unlock", m, "the mutex is not locked");
        /* Somebody must be woken: nobody is on the way; or the woken
         * waiter is late and this thread is not bound by the lock
         * (pace_slow), and then one more goes. A late woken waiter may be
         * queued for a busy CPU while another CPU idles (with more threads
         * than CPUs), and the queue behind it drains no further until it
         * runs; WOKEN stays set, and the waiters woken beside it retry as any
         * woken waiter does. */
        bool late = slow && park__wait_woken_late(m, now);
        if ((s & PARKED) && (!park__woken_mark(s & WOKEN) || late || fair)) {
            struct unlock_ctx u = {.m = m, .fair = fair && !late};
            park__unpark(m, unlock_select, unlock_finish, &u);
            return;
        }
        /* Nobody queued (a credit is spent) or a woken waiter on its way
         * (nobody to wake): LOCKED|SLOW_UNLOCK|x -> x. release: pairs with the
         * next locker's acquire. The last access to *m. */
        uint32_t next = s & ~(LOCKED | SLOW_UNLOCK);
        if (!(s & PARKED) && (next & CREDITS))
            next -= CREDIT;
        if (__atomic_compare_exchange_n(&m->state_, &s, next, true, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
            break;
    }
    /* As after a store unlock: a store unlock before ours may have erased
     * the PARKED of waiters still queued (its hinted wake-up woke one of them,
     * to retry); while PARKED is missing, each unlock that finds a waiter in
     * the hint wakes the next. Our CAS, a full barrier, orders this load
     * after it. */
    if (!(s & PARKED) && __atomic_load_n(park__hint_of(m), __ATOMIC_RELAXED) != 0)
        park__mutex_unlock_hinted(m);
}

static unsigned hinted_select(void *ctx, park__waiter_t *w)
{
    (void)ctx;
    if (w->notify) {
        /* An asynchronous waiter cannot retry, so take the lock for it if
         * it is free, or keep it queued with PARKED set so that the holder's
         * unlock comes here or to unlock_select again. Its being queued
         * means the mutex is alive (destroying a mutex with waiters is
         * undefined), so this may touch it. */
        park_mutex_t *m = (park_mutex_t *)w->key;
        uint32_t s = __atomic_load_n(&m->state_, __ATOMIC_RELAXED);
        for (;;) {
            /* free -> x|LOCKED|SLOW_UNLOCK|PARKED|255: handed over
             * (SLOW_UNLOCK: its unlock is slow); else held -> held|PARKED.
             * relaxed: the bucket lock and the waiter's notify order the
             * hand-over, as for unlock_finish's store. */
            uint32_t next =
                (s & LOCKED) ? (s | PARKED) : (s | LOCKED | SLOW_UNLOCK | PARKED | CREDITS);
            if (__atomic_compare_exchange_n(&m->state_, &s, next, true, __ATOMIC_ACQUIRE,
                                            __ATOMIC_RELAXED))
                break;
        }
        if (s & LOCKED)
            return PARK__SELECT_STOP; /* stays queued; the holder will unlock slowly */
        w->grant = PARK__GRANT_HANDOFF;
        return PARK__SELECT_GRANT | PARK__SELECT_STOP;
    }
    w->grant = PARK__GRANT_RETRY;
    return PARK__SELECT_GRANT | PARK__SELECT_STOP;
}

/* After a store unlock that saw a non-zero hint: the mutex may already be
 * someone else's, or freed, so only the queue is touched. A waiter of the
 * address (if any; the hint slot is shared) is woken to retry; it does
 * not own WOKEN. */
void park__mutex_unlock_hinted(const void *m)
{
    PARK__PROBE1(hinted, m);
    park__unpark(m, hinted_select, NULL, NULL);
}

/* ---- a condition variable's waiter, moved onto the mutex (mutex_impl.h) -- */

/* The caller holds the mutex: its own unlock reads the PARKED this validate
 * set. */
static const park__wait_ops_t held_ops = {
    .validate = lock_validate,
    .removed = lock_removed,
};

bool park__mutex_enqueue_handoff(park_mutex_t *m, park__waiter_t *w, bool held)
{
    /* ctx lives for the enqueue only: validate and before_sleep run in it,
     * and removed only for a waiter taken out, which w never is after. */
    struct park__mutex_lock_ctx c = {.m = m};
    return park__wait_enqueue(m, w, 0, held ? &held_ops : &park__mutex_lock_ops, &c) ==
           PARK__WAIT_QUEUED;
}
