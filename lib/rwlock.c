/* lib/rwlock.c: park_rwlock, a writer-preferring reader/writer lock.
 *
 * State word (park_rwlock_t.state_), bits named in park/rwlock.h:
 *
 *   n   bits 0-27  read holds (READERS); n >= GUARD (2^27) sends readers
 *                  to the slow path, which aborts at the mask
 *   D   bit 28     DRAIN: readers hold the lock while writers wait, and
 *                  the last of them out hands it over; counts as a hold
 *                  until that reader's hand-over (see "Readers drain")
 *   RQ  bit 29     readers are queued in lib/wait under the lock's address
 *   WW  bit 30     writers are queued there (blocks new readers)
 *   W   bit 31     write-held
 *
 * Beside it, under lib/wait's bucket lock of the lock's address only:
 * wqueued_ counts the writers queued or woken to retry and not yet back
 * ("in flight", below), rqueued_ the queued readers (WW is set exactly when
 * wqueued_ > 0, RQ exactly when rqueued_ > 0, whenever the bucket lock is
 * free), and wstreak_ counts the writers that got the lock in a row while
 * readers were queued (0 whenever rqueued_ is 0).
 *
 *   state       meaning
 *   0           free, nobody queued
 *   n           n readers, nobody queued
 *   W           a writer, nobody queued
 *   W|x         a writer; queued writers (x has WW), readers (RQ) or both
 *   n|D|WW|r    n > 0 readers, writers queued, maybe readers too (r: 0 or
 *               RQ); new readers queue
 *   D|x         the last reader is out and on its way to hand the lock
 *               over (x: WW, RQ or both, or none if the writers left);
 *               nobody else may take it
 *   WW|r        free, a writer woken to retry is on its way (in flight);
 *               readers keep queueing, a writer may take it under the
 *               bucket lock
 *   n|RQ        readers queued and nothing holds them back any more (n may
 *               be 0): only between a writer's time-out and its admitting
 *               them (below)
 *
 * Invariants (whenever the bucket lock is free): WW => W, or n > 0, or D,
 * or a writer is in flight. The lock never lies free for readers while a
 * writer waits: a release that frees it wakes a writer and keeps WW set.
 * With n > 0 and no W, D is set exactly when WW is. D and W never meet.
 *
 * Transitions (x: any queue bits):
 *   read_lock      n|r -> n+1|r        CAS, inline (r: 0 or RQ; needs no W,
 *                                      no WW); also in read validate
 *   read_unlock    n|x -> n-1|x        fetch_sub, inline; from 1|D|x the
 *                                      reader then hands over (last read)
 *   write_lock     0 -> W              CAS, inline
 *                  x -> W|x'           CAS in write validate, bucket locked,
 *                                      on a free word (n = 0, no W); x' has
 *                                      WW while other writers are counted
 *   write_unlock   W -> 0              CAS, inline
 *   downgrade      W -> 1              CAS, inline
 *   queue reader   s -> s|RQ           CAS in read validate (s has W or WW)
 *   queue writer   s -> s|WW           CAS in write validate (s has W, or
 *                  n|x -> n|D|WW|x     n > 0, or D)
 *   leave queue    s -> s & ~RQ        fetch_and in removed, when the last
 *                  s -> s & ~WW        reader (writer) leaves the queue; the
 *                  n|D|x -> n|x'       last writer (CAS) also takes D if n > 0
 *   release, slow  (write_unlock,      CAS in release_finish, bucket
 *                  downgrade, last     locked: the releaser's hold goes (the
 *                  read, or admit)     last reader's D), the grants of
 *                                      release_select come in, RQ and WW
 *                                      follow the counts, D is set when
 *                                      readers stay and writers wait
 *
 * Who changes the word. Inline paths (and the slow paths' retries outside
 * the bucket lock) change it only by a CAS from a value without W, WW and
 * D (readers entering), by a fetch_sub of a read hold (readers leaving), or
 * by a CAS from exactly 0 / W (writers). So while W, WW or D is set, only
 * bucket-lock holders change the word, apart from readers leaving, and a
 * slow release decides on a word nobody else changes under it but for
 * that. Leaving readers never spoil a decision: with D set the count only
 * falls, and the reader that takes it to 0 sees D and decides again
 * itself (below). Without W, WW and D, fast readers may come and go during
 * a slow release, but then the decision (admit every queued reader) does
 * not depend on their number, and no writer can slip in meanwhile: RQ is
 * set, so the word is not 0, and taking W from any other value needs the
 * bucket lock.
 *
 * Readers drain. A read_unlock is one fetch_sub, which cannot look before
 * it leaves; so when writers wait behind readers, the reader that leaves
 * last must learn it from the word it left, and must still be allowed to
 * touch the lock after leaving (it hands it over under the bucket lock).
 * D does both: it is set (under the bucket lock) whenever readers hold the
 * lock and writers wait; no reader enters while it is set, so the count
 * only falls and exactly one reader takes it from 1 to 0 and sees D; and
 * it counts as a hold, so nobody acquires (or destroys) the lock before
 * that reader's hand-over CAS clears it. A writer that gives up and leaves
 * no writer queued takes D away if readers still hold the lock (they need
 * no hand-over), and leaves it to the reader already on its way if not.
 *
 * Policy, decided in release_select under the bucket lock: with the
 * releaser's hold gone, if a writer holds the lock nobody is granted; if
 * readers hold it, the queued readers are granted only when no writer is
 * counted (queued or in flight); if it falls free, the oldest queued writer
 * goes unless PARK_RWLOCK_WRITER_STREAK writers in a row got the lock while
 * readers waited, otherwise every queued reader is granted (one batch).
 * Readers' grants are hand-overs: release_finish stores their holds in the
 * word, and a granted reader returns holding the lock.
 *
 * Writers barge, with bounded unfairness (DESIGN.md rule 7). Handing the
 * lock to a sleeping writer makes every other thread wait until that one
 * is scheduled, and writers that follow each other then pass the lock on
 * once per context switch. So the writer that a release picks is only
 * woken to retry, and stays counted in wqueued_ (in flight), which keeps WW
 * set: readers still queue behind it, but a running writer may take the
 * free lock first (in write validate). The woken writer takes it, or
 * queues again at the front with its original start time; a writer that
 * has waited FAIR_NS is handed the lock instead (release_finish sets W for
 * it), so no writer waits much longer than that for other writers.
 *
 * Destruction safety: the inline releases end with their CAS or fetch_sub.
 * The slow releases (the last read_unlock out of D, write_unlock or
 * downgrade with queue bits) make their hand-over CAS in release_finish,
 * the last thing they do to the lock: park__unpark then touches only its
 * bucket and the waiters. The last reader out of D touches the lock after
 * its fetch_sub, but D keeps the lock held until its hand-over CAS.
 *
 * Readers held back by a writer yield before they park. A batch of queued
 * readers is handed its holds while the readers still sleep, and each must
 * be scheduled before it can release. A writer that comes meanwhile waits
 * for them, and every reader that runs in the meantime queues behind that
 * writer, to be handed its hold asleep at the writer's release in turn:
 * with more threads than CPUs that convoy does not end (8 threads on 2
 * CPUs ran 4 to 10 times slower than glibc's rwlock, at 99 % and at 50 %
 * reads). So a reader that finds a writer holding or waiting yields the CPU
 * a few times and retries before it queues: the writer's turn
 * usually passes meanwhile, and the reader goes in running, so the lock is
 * not handed to sleepers. A yielding reader is not queued, so it is a new
 * reader to the policy, never ahead of a waiting writer; once it queues,
 * the policy's bounds cover it. Readers do not spin on the word instead:
 * every look pulls its cache line away from the writer that must release
 * it, and at 50 % writes on 2 cores that alone cost about 40 % of the
 * throughput.
 * Yields give the CPU away, so they cost nothing where other threads can
 * run, and where none can they are a few system calls. Writers spin (rule
 * 6), looking at the word less and less often.
 *
 * A writer whose wait times out may leave readers queued behind it that
 * nothing holds back any more. Its removed callback cannot grant them
 * (lib/wait runs it under the bucket lock), so it marks them to admit and
 * the writer, back from park__wait, releases them with a park__unpark of
 * its own (the ADMIT release, which gives up no hold). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <park/rwlock.h>

#include "async.h"
#include "wait/spin.h"
#include "wait/wait.h"

#define READER PARK__RW_READER
#define READERS PARK__RW_READERS_MASK
#define DRAIN PARK__RW_DRAIN
#define RQ PARK__RW_READERS_QUEUED
#define WW PARK__RW_WRITER_WAITING
#define W PARK__RW_WRITER

#define FAIR_NS 1000000u /* a writer waiting this long is handed the lock */

_Static_assert((READERS & (DRAIN | RQ | WW | W)) == 0, "the reader count has its own bits");
_Static_assert(PARK_RWLOCK_WRITER_STREAK >= 2, "the policy's K is at least 2");

/* w->want of a queued waiter, and w->grant of a woken one (a reader is
 * always handed its hold). */
enum { WANT_READ = 1, WANT_WRITE = 2 };
enum { GRANT_RETRY = 0, GRANT_HANDOFF = 1 };

#ifdef PARK_DEBUG
const bool park__rwlock_tracked = true;
#else
const bool park__rwlock_tracked = false;
#endif

/* ---- PARK_DEBUG: each thread's read holds ----------------------------------
 *
 * A thread records the read holds it takes (per lock, a count) and removes
 * one at each read_unlock it makes. A read_unlock that finds no record of
 * its lock released a hold taken by another thread (or one not recorded for
 * lack of room): it sets the lock's debug_ word, which turns the re-entry
 * check off for that lock, because some thread's record of it may now be
 * stale. So a check that finds a record and a clear debug_ word is right:
 * the thread holds the lock. */

#define TRACK_SLOTS 8
#define DEBUG_UNTRACKED 1u /* debug_: a hold was released untracked */

#ifdef PARK_DEBUG
static _Thread_local struct {
    const park_rwlock_t *rw;
    uint32_t holds;
} tracked[TRACK_SLOTS];

static void track_add(const park_rwlock_t *rw)
{
    int free_slot = -1;
    for (int i = 0; i < TRACK_SLOTS; i++) {
        if (tracked[i].rw == rw) {
            tracked[i].holds++;
            return;
        }
        if (!tracked[i].rw && free_slot < 0)
            free_slot = i;
    }
    if (free_slot >= 0) {
        tracked[free_slot].rw = rw;
        tracked[free_slot].holds = 1;
    }
}

static void track_remove(park_rwlock_t *rw)
{
    for (int i = 0; i < TRACK_SLOTS; i++) {
        if (tracked[i].rw == rw) {
            if (--tracked[i].holds == 0)
                tracked[i].rw = NULL;
            return;
        }
    }
    /* relaxed: a flag only this file's debug checks read, never data. */
    __atomic_store_n(&rw->debug_, DEBUG_UNTRACKED, __ATOMIC_RELAXED);
}

static bool track_holds(const park_rwlock_t *rw)
{
    /* relaxed: as in track_remove. */
    if (__atomic_load_n(&rw->debug_, __ATOMIC_RELAXED) & DEBUG_UNTRACKED)
        return false;
    for (int i = 0; i < TRACK_SLOTS; i++)
        if (tracked[i].rw == rw)
            return true;
    return false;
}

static _Noreturn void misuse(const char *call, const park_rwlock_t *rw, const char *what)
{
    fprintf(stderr, "park: %s(%p): %s\n", call, (const void *)rw, what);
    abort();
}
#else
static void track_add(const park_rwlock_t *rw)
{
    (void)rw;
}

static void track_remove(park_rwlock_t *rw)
{
    (void)rw;
}
#endif

static _Noreturn void too_many_readers(const park_rwlock_t *rw)
{
    fprintf(stderr, "park: park_rwlock_read_lock(%p): %u read holds at once\n", (const void *)rw,
            READERS);
    abort();
}

void park_rwlock_init(park_rwlock_t *rw)
{
    __atomic_store_n(&rw->state_, 0, __ATOMIC_RELAXED);
    rw->wqueued_ = 0;
    rw->rqueued_ = 0;
    rw->wstreak_ = 0;
    __atomic_store_n(&rw->debug_, 0, __ATOMIC_RELAXED);
}

int park_rwlock_destroy(park_rwlock_t *rw)
{
    /* acquire: pairs with the releasing CAS of the last unlock, so that
     * freeing the memory is ordered after every use. Queue bits are set
     * whenever anyone is queued, so 0 also means nobody waits. */
    return __atomic_load_n(&rw->state_, __ATOMIC_ACQUIRE) == 0 ? 0 : EBUSY;
}

/* ---- the release: policy and hand-over ----------------------------------- */

/* What a slow release gives up. */
enum release_op {
    LAST_READ,     /* D: the last read hold, already gone from the word */
    RELEASE_WRITE, /* the write hold */
    DOWNGRADE,     /* the write hold, for a read hold */
    ADMIT,         /* nothing: a timed-out writer lets readers in */
};

enum plan { GRANT_NOBODY, GRANT_WRITER, GRANT_READERS };

struct release {
    park_rwlock_t *rw;
    enum release_op op;
    bool planned;
    enum plan plan;
    uint32_t readers; /* readers handed a hold */
    bool handoff;     /* a writer handed the lock (else woken to retry) */
};

/* The holds left in s once the releaser's hold is gone. */
static uint32_t without_releaser(enum release_op op, uint32_t s)
{
    switch (op) {
    case LAST_READ:
        return s & ~DRAIN;
    case RELEASE_WRITE:
        return s & ~W;
    case DOWNGRADE:
        return (s & ~W) + READER;
    default:
        return s;
    }
}

/* Bucket locked: D for a word about to be stored (next), given whether D
 * is set now and stays with the reader on its way (had). With readers in
 * next, D is set exactly when writers wait and none holds the lock; with
 * none, a reader on its way keeps its D. */
static uint32_t drain_bit(uint32_t next, bool had)
{
    if (next & READERS)
        return (next & (W | WW)) == WW ? DRAIN : 0;
    return had ? DRAIN : 0;
}

/* Bucket locked: a writer got the lock (handed it, or taking it in write
 * validate), perhaps while readers wait. */
static void count_writer_grant(park_rwlock_t *rw)
{
    rw->wstreak_ = rw->rqueued_ ? rw->wstreak_ + 1 : 0;
}

/* Bucket locked: decides who gets the lock (see the policy at the top). */
static void make_plan(struct release *r)
{
    park_rwlock_t *rw = r->rw;
    /* relaxed: the decision needs no ordering; the hand-over CAS in
     * release_finish orders the grants. */
    uint32_t left = without_releaser(r->op, __atomic_load_n(&rw->state_, __ATOMIC_RELAXED));
    bool falls_free = (left & (W | READERS | DRAIN)) == 0;
    r->planned = true;
    if (left & (W | DRAIN)) /* a writer holds it, or the last reader decides */
        r->plan = GRANT_NOBODY;
    else if (rw->wqueued_ && falls_free &&
             (!rw->rqueued_ || rw->wstreak_ < PARK_RWLOCK_WRITER_STREAK))
        r->plan = GRANT_WRITER;
    else if (rw->rqueued_ && (!rw->wqueued_ || falls_free))
        r->plan = GRANT_READERS;
    else
        r->plan = GRANT_NOBODY;
}

static unsigned release_select(void *ctx, park__waiter_t *w)
{
    struct release *r = ctx;
    if (!r->planned)
        make_plan(r);
    switch (r->plan) {
    case GRANT_WRITER:
        if (w->want != WANT_WRITE)
            return PARK__SELECT_SKIP;
        /* An asynchronous writer cannot retry: it is always handed it. */
        r->handoff = w->notify || park_now() - w->since >= FAIR_NS;
        w->grant = r->handoff ? GRANT_HANDOFF : GRANT_RETRY;
        return PARK__SELECT_GRANT | PARK__SELECT_STOP;
    case GRANT_READERS:
        if (w->want != WANT_READ)
            return PARK__SELECT_SKIP;
        w->grant = GRANT_HANDOFF;
        /* Stop at the last queued reader instead of walking to the end. */
        return ++r->readers == r->rw->rqueued_ ? PARK__SELECT_GRANT | PARK__SELECT_STOP
                                               : PARK__SELECT_GRANT;
    default:
        return PARK__SELECT_STOP;
    }
}

static void release_finish(void *ctx, bool more)
{
    struct release *r = ctx;
    park_rwlock_t *rw = r->rw;
    (void)more; /* the counts say more: who remains */
    if (!r->planned)
        make_plan(r); /* nobody was queued */
    rw->rqueued_ -= r->readers;
    if (r->handoff) {
        rw->wqueued_--; /* a woken writer stays counted: in flight */
        count_writer_grant(rw);
    }
    if (rw->rqueued_ == 0)
        rw->wstreak_ = 0;
    uint32_t bits = (r->handoff ? W : 0) | (rw->wqueued_ ? WW : 0) | (rw->rqueued_ ? RQ : 0);

    uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED), next;
    do {
        /* Keeps the readers (fast ones may come and go when neither W nor
         * WW is set, and leave at any time) and an ADMIT's writer; drops
         * the releaser's hold. */
        next = ((without_releaser(r->op, s) & (W | READERS)) + r->readers * READER) | bits;
        next |= drain_bit(next, r->op != LAST_READ && (s & DRAIN));
        /* The hand-over: release (pairs with the acquire of the next
         * holders: fast lockers read this word, granted waiters are ordered
         * by the bucket unlock and their `woken`); acquire (pairs with the
         * release CAS of the fast read_unlocks before it, so the holders we
         * grant are ordered after those readers). The last access to *rw. */
    } while (!__atomic_compare_exchange_n(&rw->state_, &s, next, true, __ATOMIC_ACQ_REL,
                                          __ATOMIC_RELAXED));
}

static void release_slow(park_rwlock_t *rw, enum release_op op)
{
    struct release r = {rw, op, false, GRANT_NOBODY, 0, false};
    park__unpark(rw, release_select, release_finish, &r);
}

/* ---- readers --------------------------------------------------------------- */

struct wait_ctx {
    park_rwlock_t *rw;
    bool acquired;      /* validate took the lock instead of queueing */
    bool check_reentry; /* PARK_DEBUG: a read wait that never times out */
    bool reentered;     /* PARK_DEBUG: ... by a thread that holds a read */
    bool admit;         /* a timed-out writer leaves readers to admit */
    bool in_flight;     /* a writer woken to retry, still in wqueued_ */
};

/* One attempt at a read hold on a word without W, WW and D. */
static bool try_read(park_rwlock_t *rw, uint32_t *s)
{
    while (!(*s & (W | WW | DRAIN))) {
        if ((*s & READERS) == READERS)
            too_many_readers(rw);
        /* n|r -> n+1|r; acquire: pairs with the release of the last write
         * unlock or downgrade. */
        if (__atomic_compare_exchange_n(&rw->state_, s, *s + READER, true, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return true;
    }
    return false;
}

static bool read_validate(void *ctx)
{
    struct wait_ctx *c = ctx;
    park_rwlock_t *rw = c->rw;
    uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED);
    for (;;) {
        if (try_read(rw, &s)) {
            c->acquired = true;
            return false;
        }
#ifdef PARK_DEBUG
        if (c->check_reentry && !(s & W) && track_holds(rw)) {
            c->reentered = true; /* would wait for the waiting writer, which waits for us */
            return false;
        }
#endif
        /* s -> s|RQ; relaxed: publishes no data. Releases read RQ under the
         * bucket lock, and a racing inline CAS fails on the changed word. */
        if ((s & RQ) || __atomic_compare_exchange_n(&rw->state_, &s, s | RQ, true, __ATOMIC_RELAXED,
                                                    __ATOMIC_RELAXED)) {
            rw->rqueued_++;
            return true;
        }
    }
}

static void read_removed(void *ctx, bool more)
{
    struct wait_ctx *c = ctx;
    park_rwlock_t *rw = c->rw;
    (void)more;
    if (--rw->rqueued_ == 0) {
        rw->wstreak_ = 0;
        /* s -> s & ~RQ; relaxed: as in read_validate. */
        __atomic_fetch_and(&rw->state_, ~RQ, __ATOMIC_RELAXED);
    }
}

static const park__wait_ops_t read_ops = {read_validate, read_removed, NULL};

static int read_wait(park_rwlock_t *rw, park_time_t deadline)
{
    struct wait_ctx c = {rw, false, deadline == PARK_FOREVER, false, false, false};
    park__waiter_t w;
    park__waiter_init(&w, WANT_READ);
    for (;;) {
        uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED);
        if (try_read(rw, &s))
            return 0;
        if (deadline != PARK_FOREVER && park_now() >= deadline)
            return ETIMEDOUT;
        /* Held back by a writer: yield, not spin, before queueing (see the
         * top). */
        for (park__spin_t spin = park__spin_init(0, 8); park__spin(&spin);) {
            s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED);
            if (try_read(rw, &s))
                return 0;
        }
        switch (park__wait(rw, &w, 0, &read_ops, &c, deadline)) {
        case PARK__WAIT_GRANTED:
            return 0; /* handed a read hold */
        case PARK__WAIT_TIMEDOUT:
            return ETIMEDOUT;
        default:
            if (c.acquired)
                return 0;
#ifdef PARK_DEBUG
            if (c.reentered)
                misuse("park_rwlock_read_lock", rw,
                       "re-entered by a thread that holds a read lock on it while a writer "
                       "waits: deadlock");
#endif
            break;
        }
    }
}

void park__rwlock_read_lock_slow(park_rwlock_t *rw)
{
    (void)read_wait(rw, PARK_FOREVER);
    track_add(rw);
}

int park_rwlock_read_lock_until(park_rwlock_t *rw, park_time_t deadline)
{
    int r = read_wait(rw, deadline);
    if (r == 0)
        track_add(rw);
    return r;
}

bool park__rwlock_read_trylock_slow(park_rwlock_t *rw)
{
    uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED);
    if (!try_read(rw, &s))
        return false;
    track_add(rw);
    return true;
}

void park__rwlock_read_unlock_slow(park_rwlock_t *rw)
{
#ifdef PARK_DEBUG
    uint32_t held = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED);
    if ((held & W) || !(held & READERS))
        misuse("park_rwlock_read_unlock", rw, "the lock is not read-locked");
#endif
    track_remove(rw);
    /* n|x -> n-1|x, as the inline path. release: pairs with the acquire of
     * the next write lock. */
    uint32_t s = __atomic_fetch_sub(&rw->state_, READER, __ATOMIC_RELEASE);
    if ((s & (DRAIN | READERS)) == (DRAIN | READER))
        release_slow(rw, LAST_READ);
}

void park__rwlock_read_unlock_last(park_rwlock_t *rw)
{
    /* Out of D|x: nobody takes the lock before our hand-over CAS. */
    release_slow(rw, LAST_READ);
}

/* ---- writers --------------------------------------------------------------- */

/* One attempt at the write hold. Outside the bucket lock W may only be
 * taken from 0 (see the top). */
static bool try_write(park_rwlock_t *rw, uint32_t *s)
{
    /* 0 -> W; acquire: pairs with the release of the last unlock. */
    return *s == 0 && __atomic_compare_exchange_n(&rw->state_, s, W, false, __ATOMIC_ACQUIRE,
                                                  __ATOMIC_RELAXED);
}

static bool write_validate(void *ctx)
{
    struct wait_ctx *c = ctx;
    park_rwlock_t *rw = c->rw;
    if (c->in_flight) { /* back: counted again below if it queues */
        rw->wqueued_--;
        c->in_flight = false;
    }
    uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED);
    for (;;) {
        if (!(s & (W | READERS | DRAIN))) {
            /* x -> W|x': free, though readers may be queued (behind us, or
             * in the admit gap) and writers counted (queued, or in flight
             * and beaten to it). acquire: pairs with the release of the
             * last unlock. */
            uint32_t next = (s & ~WW) | W | (rw->wqueued_ ? WW : 0);
            if (__atomic_compare_exchange_n(&rw->state_, &s, next, true, __ATOMIC_ACQUIRE,
                                            __ATOMIC_RELAXED)) {
                count_writer_grant(rw);
                c->acquired = true;
                return false;
            }
            continue;
        }
        /* s -> s|WW, with D if readers hold it (drain_bit; WW set already
         * implies it); relaxed: as in read_validate. */
        if ((s & WW) ||
            __atomic_compare_exchange_n(&rw->state_, &s, s | WW | drain_bit(s | WW, s & DRAIN),
                                        true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            rw->wqueued_++;
            return true;
        }
    }
}

static void write_removed(void *ctx, bool more)
{
    struct wait_ctx *c = ctx;
    park_rwlock_t *rw = c->rw;
    (void)more;
    if (--rw->wqueued_ != 0)
        return;
    /* s -> s & ~WW, and D goes unless a reader is on its way with it
     * (drain_bit); relaxed: as in read_validate. */
    uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED), next;
    do
        next = (s & ~(WW | DRAIN)) | drain_bit(s & ~WW, s & DRAIN);
    while (!__atomic_compare_exchange_n(&rw->state_, &s, next, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED));
    /* Readers queued behind us and no writer in the lock: they may enter,
     * but granting them is park__unpark's job, which we may not call here. */
    c->admit = rw->rqueued_ != 0 && !(s & W);
}

static const park__wait_ops_t write_ops = {write_validate, write_removed, NULL};

/* Spins while nobody is queued (rule 6): true if it took the lock. */
static bool write_spin(park_rwlock_t *rw)
{
    /* 40 pauses, as the mutex: a short write or read section ends within
     * them; a longer one is better waited for asleep. */
    park__spin_t spin = park__spin_init(40, 0);
    uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED);
    for (;;) {
        if (try_write(rw, &s))
            return true;
        if ((s & (WW | RQ)) || !park__spin(&spin))
            return false;
        s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED);
    }
}

static int write_wait(park_rwlock_t *rw, park_time_t deadline)
{
    struct wait_ctx c = {rw, false, false, false, false, false};
    park__waiter_t w;
    park__waiter_init(&w, WANT_WRITE);
    for (;;) {
        /* Woken to retry, a writer goes straight to write validate: its WW
         * keeps readers out meanwhile, and validate takes the lock or queues
         * it again at the front (settling its count even when the deadline
         * has passed). */
        if (!c.in_flight) {
            if (write_spin(rw))
                return 0;
            if (deadline != PARK_FOREVER && park_now() >= deadline)
                return ETIMEDOUT;
        }
        if (w.since == 0)
            w.since = park_now();
        switch (park__wait(rw, &w, c.in_flight ? PARK__WAIT_FRONT : 0, &write_ops, &c, deadline)) {
        case PARK__WAIT_GRANTED:
            if (w.grant == GRANT_HANDOFF)
                return 0;
            c.in_flight = true; /* woken to retry */
            break;
        case PARK__WAIT_TIMEDOUT:
            if (c.admit)
                release_slow(rw, ADMIT);
            return ETIMEDOUT;
        default:
            if (c.acquired)
                return 0;
            break;
        }
    }
}

void park__rwlock_write_lock_slow(park_rwlock_t *rw)
{
    (void)write_wait(rw, PARK_FOREVER);
}

int park_rwlock_write_lock_until(park_rwlock_t *rw, park_time_t deadline)
{
    if (park_rwlock_write_trylock(rw))
        return 0;
    return write_wait(rw, deadline);
}

void park__rwlock_write_unlock_slow(park_rwlock_t *rw)
{
#ifdef PARK_DEBUG
    if (!(__atomic_load_n(&rw->state_, __ATOMIC_RELAXED) & W))
        misuse("park_rwlock_write_unlock", rw, "the lock is not write-locked");
#endif
    /* W|x -> ...: queue bits are set, so someone may be waiting. */
    release_slow(rw, RELEASE_WRITE);
}

void park__rwlock_downgrade_slow(park_rwlock_t *rw)
{
    uint32_t s = W;
#ifdef PARK_DEBUG
    if (!(__atomic_load_n(&rw->state_, __ATOMIC_RELAXED) & W))
        misuse("park_rwlock_downgrade", rw, "the lock is not write-locked");
#endif
    /* W -> 1 (the inline path, skipped in PARK_DEBUG builds). release:
     * pairs with the acquire of the readers that enter after. */
    if (!__atomic_compare_exchange_n(&rw->state_, &s, READER, false, __ATOMIC_RELEASE,
                                     __ATOMIC_RELAXED))
        release_slow(rw, DOWNGRADE);
    track_add(rw);
}

/* ---- asynchronous acquisition (lib/async.h) ----------------------------------
 *
 * A task waits in the queue as a thread would, with the same validate and
 * removed callbacks, so the policy treats it alike. Two differences: a
 * writer task is always handed the lock (it cannot be woken to retry:
 * release_select), and a task's hold is not recorded for the PARK_DEBUG
 * re-entry check (it belongs to no thread; releasing it marks the lock
 * untracked, which only turns that check off for the lock). */

_Static_assert(sizeof(struct wait_ctx) <= PARK__ACQ_CTX_SIZE, "wait_ctx fits an acquisition");

static void async_read_give_back(void *ctx, park__waiter_t *w)
{
    (void)w;
    park_rwlock_read_unlock(((struct wait_ctx *)ctx)->rw);
}

static void async_write_give_back(void *ctx, park__waiter_t *w)
{
    (void)w;
    park_rwlock_write_unlock(((struct wait_ctx *)ctx)->rw);
}

/* A cancelled writer that was the last one queued lets the readers in. */
static void async_write_removed(void *ctx)
{
    struct wait_ctx *c = ctx;
    if (c->admit)
        release_slow(c->rw, ADMIT);
}

/* A validate that took the lock instead of queueing says so in the ctx;
 * otherwise the ctx starts afresh for the next enqueue. */
static bool async_try_take(void *ctx, bool write)
{
    struct wait_ctx *c = ctx;
    if (c->acquired)
        return true;
    *c = (struct wait_ctx){c->rw, false, false, false, false, false};
    uint32_t s = __atomic_load_n(&c->rw->state_, __ATOMIC_RELAXED);
    return write ? try_write(c->rw, &s) : try_read(c->rw, &s);
}

static bool async_try_read(void *ctx)
{
    return async_try_take(ctx, false);
}

static bool async_try_write(void *ctx)
{
    return async_try_take(ctx, true);
}

static const park__acq_ops_t async_read_ops = {
    .wait = &read_ops,
    .try_take = async_try_read,
    .give_back = async_read_give_back,
};

static const park__acq_ops_t async_write_ops = {
    .wait = &write_ops,
    .try_take = async_try_write,
    .after_removed = async_write_removed,
    .give_back = async_write_give_back,
};

static park_task_t *lock_async(park_rwlock_t *rw, park_pool_t *pool, bool write)
{
    struct wait_ctx c = {rw, false, false, false, false, false};
    return park__acquire_async(pool, write ? &async_write_ops : &async_read_ops, rw,
                               write ? WANT_WRITE : WANT_READ, &c, sizeof c, PARK_FOREVER);
}

park_task_t *park_rwlock_read_lock_async(park_rwlock_t *rw, park_pool_t *pool)
{
    return lock_async(rw, pool, false);
}

park_task_t *park_rwlock_write_lock_async(park_rwlock_t *rw, park_pool_t *pool)
{
    return lock_async(rw, pool, true);
}
