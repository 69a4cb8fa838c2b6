/* lib/rwlock.c: park_rwlock, a writer-preferring reader/writer lock.
 * Design notes (who changes the word, the drain, the policy, barging
 * writers, yielding readers): docs/design/rwlock.md; protocol model:
 * tests/model/rwlock.pml.
 *
 * State word (park_rwlock_t.state_), bits named in park/rwlock.h:
 *   n                bits 0-27  read holds (READERS); n >= GUARD (2^27) goes slow
 *   DRAIN            bit 28     readers hold it and writers wait; the last reader
 *                               out hands it over, and DRAIN counts as a hold
 *                               until then
 *   READERS_QUEUED   bit 29     readers queued in lib/wait under the lock's address
 *   WRITER_WAITING   bit 30     writers queued there (blocks new readers)
 *   WRITER           bit 31     write-held
 * Beside it, under the bucket lock only: wqueued_ (writers queued, or woken
 * to retry and not back: "in flight"), rqueued_ (readers queued), wstreak_
 * (writers in a row that got it while readers waited). WRITER_WAITING <=>
 * wqueued_ > 0 and READERS_QUEUED <=> rqueued_ > 0 whenever the bucket lock
 * is free.
 *
 *   state                      meaning
 *   0, n, WRITER               free, n readers, a writer; nobody queued
 *   WRITER|x                   a writer; writers (WRITER_WAITING), readers
 *                              (READERS_QUEUED) or both queued
 *   n|DRAIN|WRITER_WAITING|r   n > 0 readers, writers queued (r: 0 or
 *                              READERS_QUEUED); readers queue
 *   DRAIN|x                    the last reader is out, on its way to hand over
 *   WRITER_WAITING|r           free, a writer in flight; a running writer may
 *                              take it
 *   n|READERS_QUEUED           readers nothing holds back: a timed-out writer
 *                              admits them
 * Invariants (bucket lock free): WRITER_WAITING => WRITER, n > 0, DRAIN or
 * a writer in flight; with n > 0 and no WRITER, DRAIN <=> WRITER_WAITING;
 * DRAIN and WRITER never meet.
 *
 * Transitions (x: any queue bits; r: 0 or READERS_QUEUED):
 *   read_lock     n|r -> n+1|r               CAS, inline or in read validate
 *   read_unlock   n|x -> n-1|x               fetch_sub, inline; 1|DRAIN|x hands over
 *   write_lock    0 -> WRITER                CAS, inline
 *                 x -> WRITER|x'             CAS in write validate, free word
 *   write_unlock  WRITER -> 0                CAS, inline
 *   downgrade     WRITER -> 1                CAS, inline
 *   queue         s -> s|READERS_QUEUED      CAS in read validate (WRITER,
 *                                            WRITER_WAITING or DRAIN in s)
 *                 s -> s|WRITER_WAITING,     CAS in write validate
 *                 n|x -> n|DRAIN|WRITER_WAITING|x
 *   leave queue   s -> s & ~READERS_QUEUED,  in removed
 *                 s & ~WRITER_WAITING (~DRAIN if n > 0)
 *   release, slow (write_unlock, downgrade, last read, admit): the hold
 *                 goes, grants come in, READERS_QUEUED and WRITER_WAITING
 *                 follow the counts, DRAIN if readers stay while writers
 *                 wait                       CAS in release_finish
 * Outside the bucket lock the word changes only by a CAS from a word
 * without WRITER, WRITER_WAITING and DRAIN, a reader's fetch_sub, or a CAS
 * from exactly 0 or WRITER. */
#include <errno.h>

#include <park/rwlock.h>

#include "os/os.h"
#include "profile/order.h"
#include "rwlock_impl.h"
#include "wait/fork.h"
#include "wait/spin.h"
#include "wait/wait.h"

#define READER PARK__RW_READER
#define READERS PARK__RW_READERS_MASK
#define DRAIN PARK__RW_DRAIN
#define READERS_QUEUED PARK__RW_READERS_QUEUED
#define WRITER_WAITING PARK__RW_WRITER_WAITING
#define WRITER PARK__RW_WRITER

_Static_assert((READERS & (DRAIN | READERS_QUEUED | WRITER_WAITING | WRITER)) == 0,
               "the reader count has its own bits");
_Static_assert(PARK_RWLOCK_WRITER_STREAK >= 2, "the policy's K is at least 2");

/* w->want of a queued waiter: PARK__RW_WANT_READ or _WRITE (rwlock_impl.h);
 * its w->grant once woken is PARK__GRANT_HANDOFF or PARK__GRANT_RETRY (a
 * reader is always handed its hold). */

#ifdef PARK_DEBUG
uint32_t park__rwlock_modes = PARK__RW_MODE_TRACKED;
#else
uint32_t park__rwlock_modes = 0;
#endif

static _Noreturn void too_many_readers(const park_rwlock_t *rw)
{
    park__misuse("park_rwlock_read_lock", rw,
                 "more read holds at once than the reader count holds (2^28 - 1)");
}
_Static_assert(READERS == (1u << 28) - 1, "too_many_readers names the reader count's bound");

void park_rwlock_init(park_rwlock_t *rw)
{
    if (park__order_checking())
        park__order_forget(rw); /* a new lock, if the memory held another */
    __atomic_store_n(&rw->state_, 0, __ATOMIC_RELAXED);
    rw->wqueued_ = 0;
    rw->rqueued_ = 0;
    rw->wstreak_ = 0;
    __atomic_store_n(&rw->flags_, 0, __ATOMIC_RELAXED);
}

static void forked_settle(park_rwlock_t *rw);

int park_rwlock_destroy(park_rwlock_t *rw)
{
    if (!rw)
        return 0;
    /* A biased lock is free when its word holds only the bias hold and the
     * readers' table none of its holds. */
    if (__atomic_load_n(&rw->flags_, __ATOMIC_RELAXED) & PARK__RW_BIASED)
        return park__rwlock_mostly_destroy(rw);
    /* acquire: pairs with the releasing CAS of the last unlock, so that
     * freeing the memory is ordered after every use. Queue bits are set
     * whenever anyone is queued, so 0 also means nobody waits. */
    uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_ACQUIRE);
    if (s != 0 && PARK__UNLIKELY(park__forked)) {
        forked_settle(rw); /* queue bits of waiters left behind at a fork go */
        s = __atomic_load_n(&rw->state_, __ATOMIC_ACQUIRE);
    }
    if (s != 0)
        return EBUSY;
    if (park__order_checking())
        park__order_forget(rw); /* the lock leaves the order graph */
    return 0;
}

/* ---- the release: policy and hand-over ----------------------------------- */

/* What a slow release gives up. */
enum release_op {
    LAST_READ,     /* DRAIN: the last read hold, already gone from the word */
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
        return s & ~WRITER;
    case DOWNGRADE:
        return (s & ~WRITER) + READER;
    default:
        return s;
    }
}

/* Bucket locked: DRAIN for a word about to be stored (next), given whether
 * DRAIN is set now and stays with the reader on its way (had). With readers in
 * next, DRAIN is set exactly when writers wait and none holds the lock; with
 * none, a reader on its way keeps its DRAIN. */
static uint32_t drain_bit(uint32_t next, bool had)
{
    if (next & READERS)
        return (next & (WRITER | WRITER_WAITING)) == WRITER_WAITING ? DRAIN : 0;
    return had ? DRAIN : 0;
}

/* Bucket locked: a writer got the lock (handed it, or taking it in write
 * validate), perhaps while readers wait. */
static void count_writer_grant(park_rwlock_t *rw)
{
    rw->wstreak_ = rw->rqueued_ ? rw->wstreak_ + 1 : 0;
}

/* Bucket locked, in a forked child (lib/wait/fork.h): the counts and the queue
 * bits may still count waiters left behind at the fork, and DRAIN may belong
 * to a reader that was handing over and is not there. In a child no writer is
 * ever left in flight (release_select hands it the lock), so the queue is the
 * whole truth: recount it and make WRITER_WAITING, READERS_QUEUED and DRAIN
 * agree. DRAIN without readers stays only while the child's writers are queued
 * (a child reader on its way to hand over to them); the first recount in a
 * child comes before any of its writers is counted, so it drops the parent's.
 * Holds (WRITER, n) stay. */
static void forked_recount(park_rwlock_t *rw)
{
    size_t queued[PARK__RW_WANT_WRITE + 1] = {0};
    park__wait_count_wants(rw, queued, PARK__RW_WANT_WRITE + 1);
    rw->wqueued_ = (uint32_t)queued[PARK__RW_WANT_WRITE];
    rw->rqueued_ = (uint32_t)queued[PARK__RW_WANT_READ];
    if (rw->rqueued_ == 0)
        rw->wstreak_ = 0;
    uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED), next;
    do {
        next = (s & (WRITER | READERS)) | (rw->wqueued_ ? WRITER_WAITING : 0) |
               (rw->rqueued_ ? READERS_QUEUED : 0);
        next |= drain_bit(next, (s & DRAIN) && rw->wqueued_);
        /* relaxed: as the queue bits in read_validate; holds are kept. */
    } while (s != next && !__atomic_compare_exchange_n(&rw->state_, &s, next, true,
                                                       __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

/* Bucket locked: decides who gets the lock. With the releaser's hold gone:
 * a writer holds it, or the last reader is on its way (DRAIN): nobody; it
 * falls free: the oldest queued writer, unless PARK_RWLOCK_WRITER_STREAK
 * writers in a row got it while readers waited, else every queued reader
 * (one batch); readers hold it: the queued readers, if no writer is
 * counted (queued or in flight). */
static void make_plan(struct release *r)
{
    park_rwlock_t *rw = r->rw;
    if (PARK__UNLIKELY(park__forked))
        forked_recount(rw);
    /* relaxed: the decision needs no ordering; the hand-over CAS in
     * release_finish orders the grants. */
    uint32_t left = without_releaser(r->op, __atomic_load_n(&rw->state_, __ATOMIC_RELAXED));
    bool falls_free = (left & (WRITER | READERS | DRAIN)) == 0;
    r->planned = true;
    if (left & (WRITER | DRAIN)) /* a writer holds it, or the last reader decides */
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
        if (w->want != PARK__RW_WANT_WRITE)
            return PARK__SELECT_SKIP;
        /* Writers barge (rule 7): handing the lock to a sleeping writer would
         * make everyone wait for it to be scheduled, so it is woken to retry
         * and stays counted (WRITER_WAITING keeps readers out), unless it has
         * waited PARK__FAIR_NS. A writer still awake (spinning for its grant)
         * is handed the lock: it runs at once. An asynchronous writer cannot
         * retry: it is always handed the lock (it never sleeps, so it counts
         * as awake). */
        park_time_t clock = 0;
        r->handoff = !park__waiter_asleep(w) || park__wait_owed(w, &clock) ||
                     PARK__UNLIKELY(park__forked); /* none in flight: forked_recount */
        w->grant = r->handoff ? PARK__GRANT_HANDOFF : PARK__GRANT_RETRY;
        return PARK__SELECT_GRANT | PARK__SELECT_STOP;
    case GRANT_READERS:
        if (w->want != PARK__RW_WANT_READ)
            return PARK__SELECT_SKIP;
        w->grant = PARK__GRANT_HANDOFF;
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
    uint32_t bits = (r->handoff ? WRITER : 0) | (rw->wqueued_ ? WRITER_WAITING : 0) |
                    (rw->rqueued_ ? READERS_QUEUED : 0);

    uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED), next;
    do {
        /* Keeps the readers (fast ones may come and go when neither WRITER nor
         * WRITER_WAITING is set, and leave at any time) and an ADMIT's writer;
         * drops the releaser's hold. */
        next = ((without_releaser(r->op, s) & (WRITER | READERS)) + r->readers * READER) | bits;
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
    struct release r = {.rw = rw, .op = op, .plan = GRANT_NOBODY};
    park__unpark(rw, release_select, release_finish, &r);
}

/* A forked child's destroy: settles the word as a release that gives up
 * nothing (make_plan recounts), so that queue bits of waiters left behind
 * at the fork do not make the lock look busy. */
static void forked_settle(park_rwlock_t *rw)
{
    release_slow(rw, ADMIT);
}

/* ---- readers --------------------------------------------------------------- */

/* One attempt at a read hold on a word without WRITER, WRITER_WAITING and
 * DRAIN. */
bool park__rwlock_try_read(park_rwlock_t *rw, uint32_t *s)
{
    while (!(*s & (WRITER | WRITER_WAITING | DRAIN))) {
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
    struct park__rwlock_wait *c = ctx;
    park_rwlock_t *rw = c->rw;
    if (PARK__UNLIKELY(park__forked))
        forked_recount(rw);
    uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED);
    for (;;) {
        if (park__rwlock_try_read(rw, &s)) {
            c->acquired = true;
            return false;
        }
#ifdef PARK_DEBUG
        if (c->check_reentry && !(s & WRITER) && park__rwlock_track_holds(rw)) {
            c->reentered = true; /* would wait for the waiting writer, which waits for us */
            return false;
        }
#endif
        /* s -> s|READERS_QUEUED; relaxed: publishes no data. Releases read
         * READERS_QUEUED under the bucket lock, and a racing inline CAS fails
         * on the changed word. */
        if ((s & READERS_QUEUED) ||
            __atomic_compare_exchange_n(&rw->state_, &s, s | READERS_QUEUED, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
            rw->rqueued_++;
            return true;
        }
    }
}

static void read_removed(void *ctx, bool more)
{
    struct park__rwlock_wait *c = ctx;
    park_rwlock_t *rw = c->rw;
    (void)more;
    if (--rw->rqueued_ == 0) {
        rw->wstreak_ = 0;
        /* s -> s & ~READERS_QUEUED; relaxed: as in read_validate. */
        __atomic_fetch_and(&rw->state_, ~READERS_QUEUED, __ATOMIC_RELAXED);
    }
}

const park__wait_ops_t park__rwlock_read_ops = {.validate = read_validate, .removed = read_removed};

/* One look of a reader held back by a writer: 1 if it took a hold, 0 to
 * look again. */
static int read_look(void *ctx)
{
    park_rwlock_t *rw = ctx;
    /* relaxed: a hint; the try's compare-and-swap decides. */
    uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED);
    return park__rwlock_try_read(rw, &s);
}

int park__rwlock_read_wait(park_rwlock_t *rw, park_time_t deadline)
{
    struct park__rwlock_wait c = {.rw = rw, .check_reentry = deadline == PARK_FOREVER};
    park__waiter_t w;
    park__waiter_init(&w, PARK__RW_WANT_READ);
    park__waiter_profile(&w, PARK_PROFILE_RWLOCK_READ, PARK__PROFILE_ANY_GRANT);
    for (bool first = true;; first = false) {
        uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED);
        if (park__rwlock_try_read(rw, &s))
            break;
        if (first) /* contended: held back by a writer */
            park__waiter_profile_from_here(&w);
        if (park__deadline_passed(deadline)) {
            park__waiter_profile_done(&w, rw);
            return ETIMEDOUT;
        }
        /* Held back by a writer: spin (rule 6), then yield a few times,
         * before queueing. A write section is usually short, and a reader
         * that queues costs the writer a slow unlock and itself a sleep and
         * a wake. The spin is the early looks (spin.h: after 8 to 120
         * pauses, unless this thread's CPU was lately crowded), then one
         * look after 128 pauses: looks every pause took the lock's line
         * from the writer inside, slowing it down where the two share the
         * CPUs (docs/design/rwlock.md). The yields matter with more
         * threads than CPUs: queued readers are handed their holds asleep,
         * and the readers that run meanwhile queue behind the next writer
         * in turn, a convoy that does not end; a yield lets the writer's
         * turn pass, so the reader goes in running. Not queued, the reader
         * is still a new reader to the policy, never ahead of a waiting
         * writer. */
        if (park__spin_rare(park__spin_init_once(128, 8), 0, read_look, rw))
            break;
        /* Readers are released as a batch: one wake for all. */
        switch (park__wait(rw, &w, PARK__WAIT_BATCH, &park__rwlock_read_ops, &c, deadline)) {
        case PARK__WAIT_GRANTED:
            return 0; /* handed a read hold */
        case PARK__WAIT_TIMEDOUT:
            return ETIMEDOUT;
        default:
            if (c.acquired) {
                park__waiter_profile_done(&w, rw);
                return 0;
            }
#ifdef PARK_DEBUG
            if (c.reentered)
                park__misuse("park_rwlock_read_lock", rw,
                             "re-entered by a thread that holds a read lock on it while a writer "
                             "waits: deadlock");
#endif
            break;
        }
    }
    park__waiter_profile_done(&w, rw); /* taken by a try or the spin */
    return 0;
}

static bool read_mostly(const park_rwlock_t *rw)
{
    return __atomic_load_n(&rw->flags_, __ATOMIC_RELAXED) & PARK__RW_MOSTLY;
}

void park__rwlock_read_lock_slow(park_rwlock_t *rw)
{
    if (read_mostly(rw))
        (void)park__rwlock_mostly_read(rw, PARK_FOREVER, false);
    else
        (void)park__rwlock_read_wait(rw, PARK_FOREVER);
    park__rwlock_track_add(rw);
}

int park_rwlock_read_lock_until(park_rwlock_t *rw, park_time_t deadline)
{
    int r = read_mostly(rw) ? park__rwlock_mostly_read(rw, deadline, false)
                            : park__rwlock_read_wait(rw, deadline);
    if (r == 0)
        park__rwlock_track_add(rw);
    return r;
}

bool park__rwlock_try_read_lock_slow(park_rwlock_t *rw)
{
    uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED);
    if (read_mostly(rw) ? park__rwlock_mostly_read(rw, PARK_FOREVER, true) != 0
                        : !park__rwlock_try_read(rw, &s))
        return false;
    park__rwlock_track_add(rw);
    return true;
}

void park__rwlock_read_unlock_slow(park_rwlock_t *rw)
{
#ifdef PARK_DEBUG
    uint32_t held = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED);
    if ((held & WRITER) || !(held & READERS))
        park__misuse("park_rwlock_read_unlock", rw, "the lock is not read-locked");
#endif
    park__rwlock_track_remove(rw);
    if (read_mostly(rw))
        park__rwlock_mostly_read_unlock(rw);
    else
        park__rwlock_state_read_unlock(rw);
}

void park__rwlock_state_read_unlock(park_rwlock_t *rw)
{
    /* n|x -> n-1|x, as the inline path. release: pairs with the acquire of
     * the next write lock. */
    uint32_t s = __atomic_fetch_sub(&rw->state_, READER, __ATOMIC_RELEASE);
    /* The reader that takes the count to 0 under DRAIN hands the lock over: no
     * reader enters while DRAIN is set, and DRAIN keeps the lock held (nobody
     * takes or destroys it) until release_finish clears it. */
    if ((s & (DRAIN | READERS)) == (DRAIN | READER))
        release_slow(rw, LAST_READ);
    else if (PARK__UNLIKELY(!(s & READERS)))
        park__rwlock_read_unlock_none(rw);
}

void park__rwlock_read_unlock_none(park_rwlock_t *rw)
{
    park__misuse("park_rwlock_read_unlock", rw, "the lock is not read-locked");
}

void park__rwlock_read_unlock_last(park_rwlock_t *rw)
{
    /* Out of DRAIN|x: nobody takes the lock before our hand-over CAS. */
    release_slow(rw, LAST_READ);
}

/* ---- writers --------------------------------------------------------------- */

/* One attempt at the write hold. Outside the bucket lock WRITER may only be
 * taken from 0, so that a slow release decides on a word nobody but
 * leaving readers changes under it. */
static bool write_validate(void *ctx)
{
    struct park__rwlock_wait *c = ctx;
    park_rwlock_t *rw = c->rw;
    if (c->in_flight) { /* back: counted again below if it queues */
        rw->wqueued_--;
        c->in_flight = false;
    }
    if (PARK__UNLIKELY(park__forked))
        forked_recount(rw);
    /* Biased again (lib/rwlock_mostly.c re-biases under this bucket lock,
     * only while no writer is counted): never sleep behind a bias hold. */
    if (PARK__UNLIKELY(__atomic_load_n(&rw->flags_, __ATOMIC_RELAXED) & PARK__RW_BIASED))
        return false;
    uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED);
    for (;;) {
        if (!(s & (WRITER | READERS | DRAIN))) {
            /* x -> WRITER|x': free, though readers may be queued (behind us,
             * or in the admit gap) and writers counted (queued, or in flight
             * and beaten to it). acquire: pairs with the release of the last
             * unlock. */
            uint32_t next = (s & ~WRITER_WAITING) | WRITER | (rw->wqueued_ ? WRITER_WAITING : 0);
            if (__atomic_compare_exchange_n(&rw->state_, &s, next, true, __ATOMIC_ACQUIRE,
                                            __ATOMIC_RELAXED)) {
                count_writer_grant(rw);
                c->acquired = true;
                return false;
            }
            continue;
        }
        /* s -> s|WRITER_WAITING, with DRAIN if readers hold it (drain_bit;
         * WRITER_WAITING set already implies it); relaxed: as in
         * read_validate. */
        if ((s & WRITER_WAITING) ||
            __atomic_compare_exchange_n(
                &rw->state_, &s, s | WRITER_WAITING | drain_bit(s | WRITER_WAITING, s & DRAIN),
                true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            rw->wqueued_++;
            return true;
        }
    }
}

static void write_removed(void *ctx, bool more)
{
    struct park__rwlock_wait *c = ctx;
    park_rwlock_t *rw = c->rw;
    (void)more;
    if (--rw->wqueued_ != 0)
        return;
    /* s -> s & ~WRITER_WAITING, and DRAIN goes unless a reader is on its way
     * with it (drain_bit); relaxed: as in read_validate. */
    uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED), next;
    do
        next = (s & ~(WRITER_WAITING | DRAIN)) | drain_bit(s & ~WRITER_WAITING, s & DRAIN);
    while (!__atomic_compare_exchange_n(&rw->state_, &s, next, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED));
    /* Readers queued behind us and no writer in the lock: they may enter,
     * but granting them is park__unpark's job, which we may not call here. */
    c->admit = rw->rqueued_ != 0 && !(s & WRITER);
}

const park__wait_ops_t park__rwlock_write_ops = {.validate = write_validate,
                                                 .removed = write_removed};

/* One look of a spinning writer: 1 if it took the lock, -1 if others are
 * queued (it must get in line), 0 to look again. */
static int write_look(void *ctx)
{
    park_rwlock_t *rw = ctx;
    /* relaxed: a hint; the try's compare-and-swap decides. */
    uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED);
    if (park__rwlock_try_write(rw, &s))
        return 1;
    return (s & (WRITER_WAITING | READERS_QUEUED)) ? -1 : 0;
}

/* Spins while nobody is queued (rule 6): true if it took the lock. */
static bool write_spin(park_rwlock_t *rw)
{
    /* The early looks (spin.h: after 8 to 120 pauses, unless this thread's
     * CPU was lately crowded), then 512 pauses in all (504 after the early
     * looks), looking every 128: a writer that queues stops the readers and
     * sleeps, a system call for both sides, so it waits a while, but looks
     * rarely, since each look takes the lock's line from the holders, which
     * slows them down where they share the CPUs. No yields: with more
     * threads than CPUs a yield can cost the writer a time slice
     * (docs/design/rwlock.md, Tuning). */
    int r = write_look(rw);
    if (r == 0)
        r = park__spin_rare(park__spin_init_every(128, 512, 0), 128, write_look, rw);
    return r > 0;
}

static int write_wait(park_rwlock_t *rw, park_time_t deadline)
{
    struct park__rwlock_wait c = {.rw = rw};
    park__waiter_t w;
    park__waiter_init(&w, PARK__RW_WANT_WRITE);
    park__waiter_profile(&w, PARK_PROFILE_RWLOCK_WRITE, PARK__GRANT_HANDOFF);
    if (__atomic_load_n(&rw->state_, __ATOMIC_RELAXED) & (WRITER | READERS)) /* contended */
        park__waiter_profile_from_here(&w);
    for (;;) {
        /* Woken to retry, a writer goes straight to write validate: its
         * WRITER_WAITING keeps readers out meanwhile, and validate takes the
         * lock or queues it again at the front (settling its count even when
         * the deadline has passed). */
        if (!c.in_flight) {
            /* Read-mostly: the bias goes first (the table's holds move into
             * the word); readers may bias it again until this writer is
             * queued, and then write validate sends it back here. */
            if (__atomic_load_n(&rw->flags_, __ATOMIC_RELAXED) & PARK__RW_BIASED)
                park__rwlock_revoke(rw);
            if (write_spin(rw)) {
                park__waiter_profile_done(&w, rw);
                return 0;
            }
            if (park__deadline_passed(deadline)) {
                park__waiter_profile_done(&w, rw);
                return ETIMEDOUT;
            }
        }
        if (w.since == 0)
            w.since = park_now();
        /* Behind readers only, the writer's WRITER_WAITING stops new ones and
         * those in leave within a read section: it looks for its grant a while
         * longer before it sleeps (and a release hands the lock to a writer
         * still awake). relaxed: a guess. */
        uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED);
        w.spin = (s & READERS) && !(s & WRITER) ? 1000 : PARK__WAIT_SPIN;
        switch (park__wait(rw, &w, c.in_flight ? PARK__WAIT_FRONT : 0, &park__rwlock_write_ops, &c,
                           deadline)) {
        case PARK__WAIT_GRANTED:
            if (w.grant == PARK__GRANT_HANDOFF)
                return 0;
            c.in_flight = true; /* woken to retry */
            break;
        case PARK__WAIT_TIMEDOUT:
            if (c.admit)
                release_slow(rw, ADMIT);
            return ETIMEDOUT;
        default:
            if (c.acquired) {
                park__waiter_profile_done(&w, rw);
                return 0;
            }
            break;
        }
    }
}

void park__rwlock_write_lock_slow(park_rwlock_t *rw)
{
    (void)write_wait(rw, PARK_FOREVER);
}

bool park__rwlock_try_write_lock_slow(park_rwlock_t *rw)
{
    if (!(__atomic_load_n(&rw->flags_, __ATOMIC_RELAXED) & PARK__RW_BIASED))
        return false; /* a reader holds it */
    park__rwlock_revoke(rw);
    uint32_t s = __atomic_load_n(&rw->state_, __ATOMIC_RELAXED);
    return park__rwlock_try_write(rw, &s);
}

int park_rwlock_write_lock_until(park_rwlock_t *rw, park_time_t deadline)
{
    if (park_rwlock_try_write_lock(rw))
        return 0;
    return write_wait(rw, deadline);
}

void park__rwlock_write_unlock_slow(park_rwlock_t *rw)
{
    /* Only the write holder clears WRITER: checked in every build (the inline
     * CAS failed, so this is off the fast path). */
    if (!(__atomic_load_n(&rw->state_, __ATOMIC_RELAXED) & WRITER))
        park__misuse("park_rwlock_write_unlock", rw, "the lock is not write-locked");
    /* WRITER|x -> ...: queue bits are set, so someone may be waiting. */
    release_slow(rw, RELEASE_WRITE);
}

void park__rwlock_downgrade_slow(park_rwlock_t *rw)
{
    uint32_t s = WRITER;
    if (!(__atomic_load_n(&rw->state_, __ATOMIC_RELAXED) & WRITER))
        park__misuse("park_rwlock_downgrade", rw, "the lock is not write-locked");
    /* WRITER -> 1 (the inline path, skipped in PARK_DEBUG builds). release:
     * pairs with the acquire of the readers that enter after. */
    if (!__atomic_compare_exchange_n(&rw->state_, &s, READER, false, __ATOMIC_RELEASE,
                                     __ATOMIC_RELAXED))
        release_slow(rw, DOWNGRADE);
    park__rwlock_track_add(rw);
}

void park__rwlock_admit(park_rwlock_t *rw)
{
    release_slow(rw, ADMIT);
}
