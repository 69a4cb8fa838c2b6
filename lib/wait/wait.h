/* lib/wait/wait.h: waiter nodes and wait queues, the one slow-path
 * mechanism of every park primitive.
 *
 * Where the queues live: in a global table of buckets keyed by the
 * primitive's address (as WebKit's ParkingLot keeps its queues). A
 * primitive's object therefore holds nothing but its state word(s), and a
 * releaser that has handed the primitive over never needs the object again:
 * whatever it must still learn ("is anyone left?") is in the bucket, which
 * outlives every object.
 *
 * A waiter is a node owned by the waiting party: for a thread, on its stack,
 * parked on the futex word in the node. Each bucket keeps one FIFO list of
 * the waiters of all keys that hash to it, guarded by the bucket's lock.
 *
 * The protocol, for every primitive:
 *   - park__wait(key, w, ...): with the bucket locked, ops->validate(ctx)
 *     re-checks the primitive's state word (and typically sets a "waiters"
 *     bit); only if it returns true is w enqueued. The thread then spins
 *     briefly and parks until a waker grants it, or its deadline passes.
 *   - park__unpark(key, select, finish, ctx): with the bucket locked, select
 *     is shown the key's waiters oldest first and decides which to grant
 *     (and writes w->grant); finish then stores the primitive's new state,
 *     knowing whether waiters remain. The granted waiters are woken after
 *     the bucket lock is released (docs/design/README.md rule 4).
 *   - A waiter whose deadline passes takes itself out of the queue under the
 *     bucket lock and ops->removed(ctx, more) lets the primitive clear its
 *     waiters bit. If a waker dequeued it first, the grant stands and the
 *     wait succeeds: grant beats timeout, nothing is lost (rule 5).
 *
 * Hints: park__wait_hints (park/common.h) counts, per hash slot of keys,
 * the waiters queued, kept under the bucket lock. A release that must not
 * touch its object after handing it over reads the hint of the object's
 * address instead; see mutex.c for the fence that makes that read reliable.
 *
 * Extension for asynchronous waiters: a waiter whose `notify` is set is
 * not woken by futex; `notify(w)` is called instead, after the bucket lock is
 * released, and park__wait_cancel removes such a waiter with the same
 * guarantee as a timeout. */
#ifndef PARK_LIB_WAIT_H
#define PARK_LIB_WAIT_H

#include <park/time.h>
#include <stdatomic.h>

#include "profile/profile.h"

typedef struct park__waiter park__waiter_t;

struct park__waiter {
    /* Guarded by the bucket lock. */
    park__waiter_t *next;
    park__waiter_t *prev;
    const void *key;
    bool queued;
    /* Set by the waiting party before it waits; read by select callbacks. */
    uintptr_t want;    /* what it asks for, primitive-defined */
    park_time_t since; /* when its acquisition began (fairness) */
    /* Written by the waker under the bucket lock before it dequeues the
     * waiter; read by the waiter once it has seen `woken`. */
    uintptr_t grant;
    /* Thread waiters: 0 while waiting awake, 2 while asleep, 1 once
     * granted (the futex word, unless the waiter sleeps on its bucket's
     * batch word: PARK__WAIT_BATCH). */
    _Atomic uint32_t woken;
    /* Thread waiters: pauses spent looking at `woken` before the first
     * sleep (park__waiter_init: PARK__WAIT_SPIN). A primitive that expects
     * the grant within microseconds (a writer behind draining readers)
     * raises it. */
    uint32_t spin;
    bool batch;
    /* Thread waiters: NULL (no yields after those pauses: the usual), or
     * the adaptive yield budget of the primitive (or of one side of it):
     * the waiter yields that many times before its first sleep, and every
     * sleep of the primitive's waiters moves it (park__wait_adapt). With
     * more threads than CPUs the thread that would grant may be waiting
     * for this CPU; a primitive whose grant often comes within
     * microseconds sets it: a channel (one budget per side), lazy and
     * once, park_cond_wait and the barrier (one budget each for the
     * process: lib/lazy.c, lib/cond.c, lib/barrier.c). */
    _Atomic uint8_t *adapt;
    /* NULL for a thread waiter; otherwise called instead of the futex wake,
     * after the bucket lock is released. */
    void (*notify)(park__waiter_t *w);
    /* Contention profiling (lib/profile): what w waits for, set by the
     * primitive with park__waiter_profile; its records while profiling. */
    park__profile_wait_t profile;
};

/* Tells the profiler what w waits for, and which grant value means that
 * it was handed over (PARK__PROFILE_ANY_GRANT: every grant). Unset, a
 * waiter is PARK_PROFILE_OTHER and every grant a hand-over. */
static inline void park__waiter_profile(park__waiter_t *w, park_profile_kind_t kind,
                                        uintptr_t handoff)
{
    w->profile.kind = (uint8_t)kind;
    w->profile.handoff = handoff;
}

/* For a primitive that spins before it queues (mutex, semaphore, rwlock),
 * once its slow path has found the lock taken (not merely a word the inline
 * path did not expect): while profiling, w's wait counts from now, and
 * park__waiter_profile_done records an acquisition that ends without
 * queueing (or after a retry that did not queue again), so that the
 * profile holds every acquisition that found the lock taken, timed as a
 * caller sees it. One predictable branch while profiling is off. */
static inline void park__waiter_profile_from_here(park__waiter_t *w)
{
    if (park__profiling())
        w->profile.mark = park_now();
}

/* The acquisition of w (on key) is over without a further park__wait:
 * granted by a spin or a retry, or timed out (handed: false). Records it,
 * or adds the time since its last recorded wait, while profiling. */
static inline void park__waiter_profile_done(park__waiter_t *w, const void *key)
{
    if (park__profiling() && (w->profile.mark || w->profile.slot))
        park__profile_record(&w->profile, key, w->profile.mark, false);
}

/* Tells the profiler that w's waits are idling, not contention: they are
 * never recorded. */
static inline void park__waiter_idle(park__waiter_t *w)
{
    w->profile.kind = PARK__PROFILE_IDLE;
}

/* A thread waiter's default look for its grant before it sleeps (w->spin):
 * 16 pauses, looking after each; a grant already on its way arrives within
 * them. */
#define PARK__WAIT_SPIN 16u

/* The adaptive yield budget (w->adapt), for a primitive whose waits are
 * sometimes over within a few microseconds and sometimes long (a channel's
 * other side may be one operation away, or idle for seconds). A yield
 * costs far less than a futex sleep and its wake, so a waiter that slept
 * and was granted within PARK__ADAPT_SHORT_NS would have been better off
 * yielding longer: the budget doubles. A waiter that slept longer, or
 * timed out, paid for its yields for nothing: the budget halves. Between
 * PARK__ADAPT_MIN and PARK__ADAPT_MAX yields: at most about what one sleep
 * and wake cost (docs/design/README.md, Tuning). A grant that comes while
 * the waiter still spins leaves it as it is. The budget is a hint, read
 * and written relaxed, and written only when it changes. */
#define PARK__ADAPT_MIN 4u
#define PARK__ADAPT_MAX 64u
#define PARK__ADAPT_SHORT_NS 50000u

/* The budget after a sleep of slept_ns that ended in a grant (granted) or
 * a timeout, from budget b. */
static inline uint8_t park__wait_adapt(uint8_t b, park_time_t slept_ns, bool granted)
{
    if (granted && slept_ns < PARK__ADAPT_SHORT_NS)
        return (uint8_t)(2u * b < PARK__ADAPT_MAX ? 2u * b : PARK__ADAPT_MAX);
    return (uint8_t)(b / 2u > PARK__ADAPT_MIN ? b / 2u : PARK__ADAPT_MIN);
}

/* The wake policy's bound on unfairness (docs/design/README.md rule 7): a running
 * thread may barge ahead of a woken waiter, but a waiter that has waited
 * this long is handed what it waits for directly. */
#define PARK__FAIR_NS 1000000u

/* Bucket locked (for select callbacks): true if w is owed a direct
 * hand-off now. *clock is the caller's reading of park_now(), 0 until
 * read: it is read here the first time a thread waiter needs it, so a
 * select that meets only tasks reads no clock, and one that visits several
 * waiters reads it once. An asynchronous waiter (it cannot retry) always is. A
 * thread is once it has waited PARK__FAIR_NS since w->since, but the
 * waiters of one bucket are owed at most one such hand-off per
 * PARK__FAIR_NS: under sustained contention every queued thread soon has
 * waited that long, and handing over at each release would make the lock
 * change hands by a context switch every time (a convoy); instead the
 * running threads keep it for bursts of about PARK__FAIR_NS, and the
 * oldest waiter gets it between bursts. */
bool park__wait_owed(const park__waiter_t *w, park_time_t *clock);

/* As park__wait_owed, for a waiter that gathers what it waits for (a
 * semaphore's waiter of several permits) rather than being handed it
 * between bursts: owed once it has waited PARK__FAIR_NS, whatever hand-off
 * the bucket made last, and it does not pace the bucket's next one (nor
 * the fair look of park__wait_fair_due), so that two or three such waiters
 * queued together are not spaced a further PARK__FAIR_NS apart each.
 * Gathering holds back the waiters behind it only until it has all it
 * wants, and each such waiter gathers once, so no convoy follows. */
bool park__wait_owed_unpaced(const park__waiter_t *w, park_time_t *clock);

/* A hint, read without the bucket lock: key's bucket has made no fair
 * hand-off within PARK__FAIR_NS before `now`, so a waiter of key that has
 * waited that long would be owed one (park__wait_owed decides, locked).
 * For a release or unlock that would otherwise skip the lock (lib/sem.c,
 * lib/mutex.c). */
bool park__wait_fair_due(const void *key, park_time_t now);

/* Bucket locked: park__wait_fair_due(key, now) is true from `at` on,
 * whatever the bucket's pacing, until the next call (0: from no time on).
 * For a waiter that gathers what releases bring (park__wait_owed_unpaced):
 * once it is owed, each release it samples must come to the lock, even
 * one that finds a woken waiter on its way, which may wait a time slice
 * for a CPU. Keys of one bucket share it: a look too many only costs the
 * releaser the lock. A hint. */
void park__wait_fair_due_from(const void *key, park_time_t at);

/* The fair look of a release or unlock that would otherwise skip the lock
 * (lib/mutex.c, lib/sem.c), sampled so that most such calls pay only an
 * increment: one call in `every` of the calling thread (counted in *calls,
 * the caller's _Thread_local) reads the clock into *now and asks
 * park__wait_fair_due; the others return false and leave *now. The rate
 * is the caller's, because what it counts differs: the mutex counts every
 * slow unlock and shares the sample's clock with its pace measure, whose
 * windows the rate sizes (one in 32); the semaphore counts only releases
 * that find a woken waiter on its way (one in 64). Either rate reads the
 * clock rarely and still looks far more often than PARK__FAIR_NS: at a
 * release every 100 ns, one in 64 looks every 6.4 us. */
static inline bool park__wait_fair_look(const void *key, uint32_t *calls, uint32_t every,
                                        park_time_t *now)
{
    if (++*calls % every != 0)
        return false;
    *now = park_now();
    return park__wait_fair_due(key, *now);
}

/* A woken waiter that has not come for this long is late: it was woken
 * but is not running (with more threads than CPUs, a woken thread may
 * wait milliseconds for a CPU, and while a CPU is busy the scheduler may
 * leave it queued there even though another CPU is idle). Several times a
 * thread's wake-up latency on an idle CPU. */
#define PARK__WOKEN_LATE_NS 200000u

/* Bucket locked (for select callbacks): w, a thread waiter, is being woken
 * to retry at `now` and becomes its key's woken waiter in flight. */
void park__wait_note_woken(const park__waiter_t *w, park_time_t now);

/* True if the last waiter woken to retry in key's bucket was woken
 * PARK__WOKEN_LATE_NS before `now` or earlier (the bucket's keys share the
 * record, so another key's later wake-up may hide a late one: that only
 * costs the caller's extra wake-up). Lock-free. */
bool park__wait_woken_late(const void *key, park_time_t now);

/* How many threads are inside a wait on a key of key's bucket: between
 * park__waiting_enter (which returns how many were inside before it) and
 * park__waiting_leave, whether they spin, doze or sleep queued. Keys of
 * one bucket share the count, so it may count another key's waiters too,
 * which only makes a caller more careful. Lock-free, two atomic
 * read-modify-writes of the bucket's line a wait; a hint. For a primitive
 * whose waiters leave no mark on its word while they doze: the mutex
 * takes its early looks only while a locker is alone inside (lib/mutex.c,
 * lock_spin). A forked child starts with none inside. */
uint32_t park__waiting_enter(const void *key);
void park__waiting_leave(const void *key);
uint32_t park__waiting(const void *key);

/* w->grant, for the primitives whose waiters are either handed what they
 * wait for or woken to try for it again (mutex, semaphore, rwlock): one
 * set of values, so that a grant reads the same in every file. A select
 * sets it for every waiter it grants. */
enum {
    PARK__GRANT_RETRY = 0,      /* woken to try again, keeping its place (its `since`) */
    PARK__GRANT_HANDOFF = 1,    /* handed the primitive: it is the waiter's now */
    PARK__GRANT_WOKEN = 2,      /* mutex: woken to try again as the woken waiter in
                                   flight, whose WOKEN bit it clears */
    PARK__GRANT_RETRY_BACK = 3, /* semaphore: woken to try again, queueing at
                                   the back (a waiter of several was passed) */
};

/* Makes *w a fresh thread waiter asking for `want`, with since = 0 (and
 * profiling kind PARK_PROFILE_OTHER). */
void park__waiter_init(park__waiter_t *w, uintptr_t want);

/* Bucket locked (for select callbacks): true if the thread waiter w has
 * gone to sleep in the futex (or is about to); false while it still spins,
 * so that a grant reaches it within nanoseconds. */
bool park__waiter_asleep(const park__waiter_t *w);

/* Called, when set, by a thread about to sleep on its futex in park__wait
 * (after its spin), bucket unlocked. Thread-local: the pool sets it on its
 * workers, to hand work that only the sleeper would run to other workers. */
extern _Thread_local void (*park__wait_block_hook)(void);

/* Dozes: sleeps until `until` (CLOCK_MONOTONIC ns) on a futex word of the
 * caller's own that nobody wakes, touching no primitive and no queue; a
 * signal or injected fault may end it early. The thread's timer slack is
 * at most 1 us meanwhile (put back after), so the doze does not run tens
 * of microseconds past `until`. For a caller between its
 * spin and its queueing (rule 6: the mutex dozes before it queues, so that
 * its word stays unmarked). Calls park__wait_block_hook first, as any
 * sleep in park__wait does. Not a cancellation point (a raw futex wait,
 * where clock_nanosleep would be one, which pthread_mutex_lock under the
 * drop-in must not be). */
void park__wait_doze(park_time_t until);

/* park__wait outcomes. */
enum {
    PARK__WAIT_INVALID,  /* validate returned false: not enqueued */
    PARK__WAIT_GRANTED,  /* a waker dequeued w; w->grant says what it got */
    PARK__WAIT_TIMEDOUT, /* the deadline passed; w left the queue ungranted */
    PARK__WAIT_ABORTED,  /* before_sleep said no; w left the queue ungranted */
    PARK__WAIT_QUEUED,   /* park__wait_enqueue: w is queued (or granted) */
};

/* park__wait flags. */
#define PARK__WAIT_FRONT 1u /* enqueue ahead of the key's other waiters */
/* A thread waiter that is usually granted together with others of its key
 * (a lazy run's waiters, a batch of readers) sleeps on its bucket's batch
 * word instead of its own: a park__unpark that grants several such waiters
 * wakes them all with one system call, and with none if none of them had
 * marked itself asleep (tests/model/wake.pml). Sleepers of other keys that
 * share the bucket wake too, and sleep again. */
#define PARK__WAIT_BATCH 2u
/* The deadline is on CLOCK_REALTIME, in ns since the epoch (a thread
 * waiter: it follows changes of the system clock, as POSIX asks of
 * CLOCK_REALTIME timed waits). */
#define PARK__WAIT_REALTIME 4u
/* The waiter's futex sleep is a pthread cancellation point (lib/os:
 * PARK__FUTEX_CANCEL): the spin and the queue operations never are
 * (fault-injection builds delay futex calls with a yield or the raw
 * nanosleep system call, neither of which is one: lib/os/futex.c). A
 * cancelled waiter unwinds with w still queued or granted; the caller's
 * cleanup handler must call park__wait_leave. */
#define PARK__WAIT_CANCEL 8u

typedef struct park__wait_ops {
    /* Bucket locked, before enqueueing: true to enqueue and sleep. */
    bool (*validate)(void *ctx);
    /* Bucket locked, after a waiter of the key left without a grant
     * (timeout or cancellation); `more`: other waiters of the key remain. */
    void (*removed)(void *ctx, bool more);
    /* Optional. Bucket not locked, after the waiter's short spin and before
     * its first futex sleep: false to leave the queue (ungranted, with
     * `removed` called as for a timeout) instead of sleeping. For a
     * primitive whose release may miss a waiter that is not yet visible to
     * it (mutex.c: the asymmetric fence). */
    bool (*before_sleep)(void *ctx);
} park__wait_ops_t;

/* Enqueues the thread waiter w on key if ops->validate(ctx) agrees, then
 * parks until granted or until the absolute deadline (PARK_FOREVER: none).
 * Spurious wake-ups, EINTR and early timeouts from the OS are absorbed
 * here. Allocates nothing. The grant is read with acquire ordering, pairing
 * with the waker's release store to `woken`. While contention profiling is
 * on, a wait that enqueued is recorded (lib/profile) when it returns. */
int park__wait(const void *key, park__waiter_t *w, unsigned flags, const park__wait_ops_t *ops,
               void *ctx, park_time_t deadline);

/* park__wait in two steps, for a caller that must do something between
 * queueing and sleeping (the drop-in's condition variable releases the
 * caller's mutex there): park__wait_enqueue for a thread waiter, then
 * park__wait_sleep, which spins and parks until w is granted
 * (PARK__WAIT_GRANTED) or until the deadline, when w leaves the queue
 * ungranted with ops->removed run (PARK__WAIT_TIMEDOUT), or
 * ops->before_sleep says no (PARK__WAIT_ABORTED), as in park__wait. flags:
 * those of the sleep (PARK__WAIT_REALTIME, PARK__WAIT_CANCEL). Not recorded
 * by the profiler. */
int park__wait_sleep(const void *key, park__waiter_t *w, unsigned flags,
                     const park__wait_ops_t *ops, void *ctx, park_time_t deadline);

/* For a thread waiter whose park__wait or park__wait_sleep was cancelled
 * (PARK__WAIT_CANCEL): takes w out of the queue if it is still queued
 * (false: not granted; removed(ctx, more) has run), or else waits,
 * uncancellably, for the grant on its way (true: w->grant says what it
 * got). */
bool park__wait_leave(const void *key, park__waiter_t *w, void (*removed)(void *ctx, bool more),
                      void *ctx);

/* For an asynchronous waiter (w->notify set): enqueues w on key if
 * ops->validate(ctx) agrees, and returns at once. Then, if
 * ops->before_sleep is set and says no, takes w out again (`removed` runs
 * as for a timeout). Returns PARK__WAIT_INVALID (not enqueued),
 * PARK__WAIT_ABORTED (enqueued and taken out again: no grant) or
 * PARK__WAIT_QUEUED (w stays queued, or was granted already: notify(w)
 * runs exactly once, possibly before this returns, on the granting
 * thread). Allocates nothing. For a thread waiter (the first step of
 * park__wait_sleep, above) it only enqueues: PARK__WAIT_INVALID or
 * PARK__WAIT_QUEUED. */
int park__wait_enqueue(const void *key, park__waiter_t *w, unsigned flags,
                       const park__wait_ops_t *ops, void *ctx);

/* select's verdict on one waiter (bits). */
#define PARK__SELECT_SKIP 0u  /* leave it queued, look at the next */
#define PARK__SELECT_GRANT 1u /* dequeue and wake it (select set w->grant) */
#define PARK__SELECT_STOP 2u  /* look at no further waiter */
/* With GRANT: dequeue it but do not wake it. It stays asleep (or spinning)
 * until whoever selected it calls park__wake(w), which must happen: a
 * dequeued waiter waits for its grant past its deadline. For handing a
 * wake-up on from waiter to waiter (the drop-in's condition variable
 * chains a broadcast's waiters). */
#define PARK__SELECT_DEFER 4u

typedef unsigned (*park__select_fn)(void *ctx, park__waiter_t *w);
typedef void (*park__finish_fn)(void *ctx, bool more);

/* With the bucket of key locked: shows select the key's waiters oldest
 * first, dequeues those it grants, then calls finish(ctx, more) (if not
 * NULL) with
 * `more` = waiters of the key remain. Wakes (or notifies) the granted
 * waiters after unlocking. Returns how many were granted. */
size_t park__unpark(const void *key, park__select_fn select, park__finish_fn finish, void *ctx);

/* The wait of a primitive whose waiters wait for one event and are granted
 * it (an event, a latch): until taken(ctx) says the event has come (and,
 * for an auto-reset event, took it), queues a fresh thread waiter on key
 * if ops->validate(ctx) agrees (it refuses once the event has come) and
 * sleeps. 0 once taken or granted; ETIMEDOUT if the deadline passes first
 * (a grant that comes with it wins: rule 5). No spin before queueing: such
 * an event comes at the application's pace, rarely within a spin. */
int park__wait_event(const void *key, unsigned flags, const park__wait_ops_t *ops, void *ctx,
                     bool (*taken)(void *ctx), park_time_t deadline);

/* Wakes (or notifies) w, which a select dequeued with
 * PARK__SELECT_DEFER; w->grant is what it gets. w's memory may be gone
 * once this has set its `woken`. */
void park__wake(park__waiter_t *w);

/* park__unpark granting every waiter of key (w->grant 0), with no finish:
 * for keys whose waiters all wait for the same event. */
size_t park__unpark_all(const void *key);

/* Takes w out of key's queue if it is still queued: true (then
 * removed(ctx, more) has run under the bucket lock, and w holds no grant),
 * false if a waker dequeued it first (the grant stands; a thread waiter
 * then still has to see `woken`, a notify waiter is or will be notified). */
bool park__wait_cancel(const void *key, park__waiter_t *w, void (*removed)(void *ctx, bool more),
                       void *ctx);

/* True if any waiter is queued on key right now (takes the bucket lock). */
bool park__wait_has_waiters(const void *key);

/* How many waiters are queued on key right now (takes the bucket lock). */
size_t park__wait_count(const void *key);

/* True if key's oldest queued waiter has marked itself asleep (its sleep
 * is timed from before that): for tests that must know a waiter sleeps
 * (takes the bucket lock). */
bool park__wait_first_asleep(const void *key);

/* For tests that must know no waiter of key is owed a fair hand-off
 * whatever its age (a clock cannot promise a waiter is young on a loaded
 * machine): no fair hand-off in key's bucket before `until`, paced or not
 * (park__wait_owed, park__wait_owed_unpaced); 0 lifts the hold (takes the
 * bucket lock). */
void park__wait_hold_fair(const void *key, park_time_t until);

#endif /* PARK_LIB_WAIT_H */
