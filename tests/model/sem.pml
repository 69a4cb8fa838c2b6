/* tests/model/sem.pml: the semaphore of lib/sem.c, default (barging) mode: one
 * woken waiter in flight (K), direct hand-off to a waiter that has waited
 * PARK__FAIR_NS, releases without the lock while K is set (or, now and
 * then, with it: fair_look, when a hand-off may be due), the woken
 * waiter's take (dropping K) or retire (passing it on), and a wake that
 * runs again when its final CAS leaves W, free permits and no K.
 *
 * State: count, W (waiters queued), K (a woken waiter is on its way). Each
 * atomic block is one step of the code: a CAS on the state word, or a
 * whole bucket-lock hold (validate + enqueue, a release's select + finish,
 * a retire; a locked wake is two steps, select and finish, between which
 * only the lock-free steps of others can run, and its grants reach the
 * waiters after finish). "Owed" (the head has waited PARK__FAIR_NS) is a
 * nondeterministic choice, so every interleaving of ages is covered.
 *
 * With -DTIMEOUTS a woken waiter whose retry fails may give up (its
 * deadline passed), retiring without a permit. With -DQUEUED_TIMEOUTS a
 * queued waiter may give up too: it takes itself out under the bucket
 * lock (clearing W if it was the last), unless a release dequeued it
 * first, in which case the grant stands.
 *
 * With -DFIFO the model is the FIFO semaphore (park_sem_init_fifo): no K,
 * no retries; a release with W set hands every permit to the queue's
 * head(s) under the bucket lock and stores W (waiters remain) or the
 * leftover count (fifo_select, fifo_finish); a release that finds the
 * queue emptied by timeouts adds to the count as the lock-free path does.
 * Checked there also: W => count == 0 (newcomers never pass a queued
 * waiter).
 *
 * Checked: permits are conserved (holders + count == PERMITS, never more
 * holders than permits), and no lost wake-up: every thread finishes its
 * rounds (a waiter asleep forever with a free permit is an invalid end
 * state). Broken variants, which must fail:
 *   NO_PASS     retire drops K without waking the next waiter although a
 *               permit is free (with TIMEOUTS: a waiter that gives up
 *               leaves a free permit and sleepers, and nobody to wake them)
 *   KEEP_K      a woken waiter that lost to a barger re-queues without
 *               dropping K: releases think someone is on the way
 *   NO_AGAIN    a wake does not run again when K was dropped (or permits
 *               came) outside the lock between its select and its CAS
 *   FORKED_NO_REPAIR  K starts set, owned by nobody (a child of fork()
 *               whose woken waiter the fork left behind), and releases
 *               still trust it
 *   FIFO_BARGE  (FIFO) a release adds to the count without the lock even
 *               when W is set: the queued waiters sleep beside a free
 *               permit (lost wake-up)
 *   FIFO_NO_RECHECK  (FIFO) validate queues without re-reading the count:
 *               a permit released just before sleeps beside the waiter
 *               (lost wake-up)
 * Not broken, and checked as such:
 *   FORKED      lib/sem.c in a child of fork(): K starts set, owned by
 *               nobody, and never holds back a release or a wake, so
 *               several woken waiters may be in flight
 *
 * With -DOVERFLOW the maximum is PERMITS, and a Rogue process releases
 * two permits it never took, once, at any moment: every release can now
 * exceed the maximum (EOVERFLOW: the release places nothing). A locked
 * wake that sees K sets R (RELEASING) as it checks the room, and
 * releases that find R take the lock instead of adding to the count
 * without it; the wake's final store drops R. Checked also: the count
 * never exceeds the maximum, and a release that fails placed none of its
 * permits (the caller may retry the whole of it). Broken variant:
 *   NO_RESERVE  no R: a lockless release fills the count between a
 *               locked wake's hand-off of one of its permits and its
 *               final store, which must place what fits and refuse the
 *               rest (EOVERFLOW with a permit released)
 *
 * With -DMANY thread 0 asks for MANY_N (2) permits at a time, the others
 * for one (park_sem_acquire_n): it is never woken to retry; a wake hands
 * it all it wants when they are there (from the released permits first,
 * then the count), and otherwise, once it is owed (FIFO: always; default:
 * a nondeterministic choice, unless a waiter was passed ahead of it in
 * the same wake) gathers what there is (`gathered`, outside the count)
 * and stops the wake there until it has them all; a young one is passed,
 * and a waiter of one woken past it re-queues at the back (RETRY_BACK). A
 * FIFO validate that finds some but too few free gathers them as it
 * queues. With QUEUED_TIMEOUTS a queued thread 0 gives what it gathered
 * back by a release (wake and all) after leaving the queue. A wake runs
 * again only if K was set when it first looked. With -DKEEP_ONE the last
 * thread keeps the permit of its last round (a consumer), so thread 0 can
 * never have its two and must time out, and only thread 0 times out while
 * queued: the waiters behind it, which cannot give up, depend on its
 * give-back alone. Broken variants, which must fail:
 *   NO_GIVE_BACK       a timed-out thread 0 drops what it gathered
 *                      (permit lost)
 *   GIVE_BACK_NO_WAKE  it puts them in the count without the lock, as if
 *                      nobody were queued: those behind it sleep beside
 *                      them (Go issue 37852; FIFO: W with free permits)
 *   HEAD_HOLDS_BACK    a young thread 0 that too few are free for stops
 *                      the wake instead of being passed, and leaves
 *                      (timed out, nothing gathered) without a wake:
 *                      the waiters of one behind it sleep beside the
 *                      free permits (Go issue 37852 as Go had it)
 *   AGAIN_ALWAYS       a wake runs again whenever its word has W, free
 *                      permits and no K, also when K was clear as it
 *                      looked: with a young thread 0 too few are free
 *                      for, it runs forever (np) */

#ifdef FORKED
#define FORKED_K 1
#else
#define FORKED_K 0
#endif
#if defined(FORKED) || defined(FORKED_NO_REPAIR)
#define STALE_K 1
#else
#define STALE_K 0
#endif

#ifndef THREADS
#define THREADS 3
#endif
#ifndef PERMITS
#define PERMITS 1
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif
#ifdef MANY
#define MANY_N 2
#else
#define MANY_N 1
#endif
#ifdef KEEP_ONE
#define KEEP 1
#else
#define KEEP 0
#endif
/* The permits thread `id` asks for. */
#define WANT(id) ((id) == 0 -> MANY_N : 1)

#define NONE 0
#define HANDOFF 1
#define RETRY 2
#define RETRY_BACK 3 /* woken past a waiter left queued: re-queue at the back */

#ifdef FIFO
#define FIFO_MODE 1
#else
#define FIFO_MODE 0
#endif

#ifdef OVERFLOW
#define MAX PERMITS
#define ROGUE 1
#else
#define MAX 255
#define ROGUE 0
#endif

byte count = PERMITS;
byte total = PERMITS;  /* permits in the system: the Rogue's added, refused ones gone */
bool R = 0;            /* a locked release has reserved room in the count */
bool W = 0;
bool K = STALE_K; /* FORKED: a K the fork left behind, owned by nobody */
byte holders = 0;
byte handed = 0;       /* permits handed to waiters not yet awake */
byte inflight = 0;     /* permits a release has yet to place */
byte gathered = 0;     /* permits gathered for queued thread 0 (MANY) */
bool reserving = 0;    /* thread 0 is owed and gathers (stays owed) */
byte q[THREADS];       /* the queue, oldest first: thread ids */
byte qlen = 0;
byte grant[THREADS];   /* NONE until granted (then dequeued) */
byte pend[THREADS];    /* granted under the lock, delivered after it */
bool lock = 0;         /* the bucket lock, held from select to finish */

/* Every permit is free, handed over, held, gathered or being released:
 * never lost or duplicated. */
inline conserve()
{
    assert(count + handed + holders + inflight + gathered == total && count <= MAX);
    assert(holders <= PERMITS + 2 * ROGUE);
#ifdef FIFO
    assert(!W || count == 0) /* the FIFO invariant */
#endif
}

/* Removes q[i], the queue closing up behind it. */
inline dequeue_at(i)
{
    k = i;
    do
    :: k + 1 < qlen -> q[k] = q[k + 1]; k++
    :: else -> break
    od;
    qlen--
}

inline dequeue_head()
{
    dequeue_at(0)
}

/* park__wait_cancel of a timed-out queued waiter: out of the queue, W
 * cleared by removed() if it was the last. */
inline remove_me()
{
    i = 0;
    do
    :: q[i] == me -> break
    :: else -> i++
    od;
    dequeue_at(i);
    if
    :: qlen == 0 -> W = 0
    :: else
    fi
}

/* After the bucket lock: park__unpark wakes the granted. */
inline deliver()
{
    for (k : 0 .. THREADS - 1) {
        if
        :: pend[k] != NONE -> grant[k] = pend[k]; pend[k] = NONE
        :: else
        fi
    }
}

/* FIFO release of n with W seen (fifo_select, fifo_finish), bucket
 * locked: the permits go to the head(s), thread 0 gathering until it has
 * MANY_N; the word becomes W if waiters remain, else the leftover count;
 * with the queue emptied meanwhile (timeouts), they join the count. */
inline fifo_release()
{
    atomic {
        !lock;
        do
        :: n > 0 && qlen > 0 && WANT(q[0]) == 1 ->
            n--; inflight--; handed++;
            pend[q[0]] = HANDOFF;
            dequeue_head()
        :: n > 0 && qlen > 0 && WANT(q[0]) > 1 ->
            do
            :: gathered < MANY_N && n > 0 -> n--; inflight--; gathered++
            :: else -> break
            od;
            if
            :: gathered == MANY_N ->
                gathered = 0; handed = handed + MANY_N;
                pend[q[0]] = HANDOFF;
                dequeue_head()
            :: else -> break /* it stays first in line */
            fi
        :: else -> break
        od;
        if
        :: qlen > 0 -> assert(n == 0 && W)
        :: else -> W = 0; count = count + n; inflight = inflight - n; n = 0
        fi;
        conserve();
        deliver()
    }
}

inline enqueue_back(me)
{
    q[qlen] = me;
    qlen++
}

inline enqueue_front(me)
{
    k = qlen;
    do
    :: k > 0 -> q[k] = q[k - 1]; k--
    :: else -> break
    od;
    q[0] = me;
    qlen++
}

/* Up to `want` permits for q[i]: released ones (n) first, then free ones
 * (count); `all`: all of them or none. */
inline take_for(want, all)
{
    taken = 0;
    if
    :: !all || n + count >= want ->
        do
        :: taken < want && n > 0 -> n--; inflight--; taken++
        :: taken < want && n == 0 && count > 0 -> count--; taken++
        :: else -> break
        od
    :: else
    fi
}

/* select_many for thread 0 at q[i] (default mode). */
inline select_many()
{
    if
    :: reserving -> owed = 1
    :: !reserving && !passed -> owed = 1 /* it has waited PARK__FAIR_NS */
    :: !reserving -> owed = 0
    fi;
    if
    :: owed ->
        reserving = 1;
        take_for(MANY_N - gathered, 0);
        gathered = gathered + taken;
        if
        :: gathered == MANY_N ->
            gathered = 0; reserving = 0; handed = handed + MANY_N;
            pend[0] = HANDOFF;
            dequeue_at(i)
        :: else -> break /* it stays first in line */
        fi
    :: else ->
        take_for(MANY_N, 1);
        if
        :: taken == MANY_N ->
            handed = handed + MANY_N;
            pend[0] = HANDOFF;
            dequeue_at(i)
        :: else ->
#ifdef HEAD_HOLDS_BACK
            break
#else
            passed = 1; i++
#endif
        fi
    fi
}

/* A release refuses m of its n permits (beyond the maximum). */
inline refuse(m)
{
    ovf = 1;
    refused = refused + (m);
    total = total - (m);
    inflight = inflight - (m);
    n = n - (m)
}

/* wake_select under the bucket lock: place n permits; ret: K is ours. */
inline wake_select()
{
    !lock -> lock = 1;
    woke = 0;
    passed = 0;
    kseen = K;
    i = 0;
    /* wake_check: a release beyond the maximum places nothing */
    if
    :: count + n > MAX -> refuse(n); i = qlen
    :: else
#ifndef NO_RESERVE
        ;
        if
        :: K && n > 0 -> R = 1
        :: else
        fi
#endif
    fi;
    n0 = n;
    do
    :: i < qlen && WANT(q[i]) > 1 -> select_many()
    :: i < qlen && WANT(q[i]) == 1 && (n > 0 || count > 0) ->
        if
        :: true -> /* the waiter is owed a hand-off */
            if
            :: n > 0 -> n--; inflight--
            :: else -> count--
            fi;
            handed++;
            pend[q[i]] = HANDOFF;
            dequeue_at(i)
        :: true -> /* the waiter is young */
            if
            :: !K || ret || FORKED_K ->
                pend[q[i]] = (passed -> RETRY_BACK : RETRY);
                dequeue_at(i);
                woke = 1
            :: else
            fi;
            break
        fi
    :: else -> break
    od;
    more = qlen > 0
}

/* wake_finish: the CAS on the word (bucket still locked, but the word may
 * have changed since select: a woken take, a lockless release). */
inline wake_finish()
{
    if
    :: count + n > MAX ->
        /* A lockless release filled it: W was clear at the check (nobody
         * queued, so nothing handed), or NO_RESERVE. */
#ifndef NO_RESERVE
        assert(n0 == n);
#endif
        if
        :: n0 > n -> refuse(n - (MAX - count)) /* some handed: fit the rest */
        :: else -> refuse(n)
        fi
    :: else
    fi;
    R = 0;
    count = count + n;
    inflight = inflight - n;
    n = 0;
    W = more;
    K = woke || (K && !ret);
#ifdef AGAIN_ALWAYS
    again = W && count > 0 && !K;
#else
    again = W && count > 0 && !K && kseen;
#endif
    conserve();
    lock = 0;
    deliver()
}

/* wake: park__unpark (select, then finish) until nothing more is owed. */
inline wake()
{
    do
    :: atomic { wake_select() };
        atomic { wake_finish() };
#ifndef NO_AGAIN
        if
        :: again -> ret = 0
        :: else -> break
        fi
#else
        break
#endif
    od
}

inline retire()
{
#ifndef NO_PASS
    n = 0;
    ret = 1;
    wake()
#else
    atomic { K = 0 }
#endif
}

/* A release of the n permits in `inflight` (bucket not locked): without
 * the lock when nobody is queued or (default) a woken waiter is on its
 * way; else, or when fair_look says a hand-off may be due, locked. */
inline put_decide()
{
    if
#ifdef FIFO_BARGE
    :: true -> count = count + n; inflight = inflight - n; n = 0
#else
    :: !W || (K && !R && !FORKED_K && !FIFO_MODE) -> /* no lock, no wake */
        if
        :: count + n > MAX -> refuse(n)
        :: else -> count = count + n; inflight = inflight - n; n = 0
        fi;
        conserve()
    :: W && K && !FIFO_MODE -> skip /* fair_look: a hand-off may be due */
#endif
    :: else -> skip
    fi
}

inline put()
{
    if
#ifdef FIFO
    :: n > 0 -> fifo_release()
#else
    :: n > 0 -> ret = 0; wake() /* bucket locked */
#endif
    :: else
    fi
}

proctype Thread(byte me)
{
    byte r = 0, k, i, n, n0, taken, refused;
    byte w = WANT(me);
    bool woken = 0, back = 0, got, woke, more, again, ret, pass, passed, owed, kseen, ovf;
    do
    :: r < ROUNDS ->
        /* ---- acquire ---- */
        do
        :: atomic {
                if
                :: count >= w && !woken -> /* park_sem_try_acquire(_n) */
                    count = count - w; holders = holders + w; got = 1; pass = 0
                :: count > 0 && woken -> /* take_woken (one permit) */
                    count--; holders++; got = 1;
                    pass = W && count > 0;
                    if
                    :: !pass -> K = 0
                    :: else
                    fi
                :: else -> got = 0
                fi
            };
            if
            :: got ->
                if
                :: pass -> retire()
                :: else
                fi;
                woken = 0;
                break
#ifdef TIMEOUTS
            :: !got && woken -> /* its deadline passed: it gives up */
                woken = 0;
                retire();
                break
#endif
            :: else
            fi;
            atomic { /* park__wait: validate and enqueue, bucket locked */
                !lock;
                if
#ifndef FIFO_NO_RECHECK
                :: count >= w -> got = 0 /* retry */
#endif
                :: else ->
                    W = 1;
#ifndef KEEP_K
                    if
                    :: woken -> K = 0
                    :: else
                    fi;
#endif
                    if
                    :: FIFO_MODE && count > 0 && count < w -> /* FIFO, too few for several */
                        assert(qlen == 0 && me == 0);
                        gathered = count; count = 0
                    :: else
                    fi;
                    if
                    :: woken && !back -> enqueue_front(me)
                    :: else -> enqueue_back(me)
                    fi;
                    woken = 0;
                    got = 1
                fi
            };
            if
            :: got ->
                if
                :: atomic { grant[me] == HANDOFF ->
                        grant[me] = NONE; handed = handed - w; holders = holders + w };
                    break
                :: grant[me] == RETRY || grant[me] == RETRY_BACK ->
                    back = grant[me] == RETRY_BACK; grant[me] = NONE; woken = 1
#ifdef QUEUED_TIMEOUTS
                :: atomic { /* its deadline passed while it was queued (a
                     * waiter dequeued first takes its grant instead) */
                        !lock && grant[me] == NONE && pend[me] == NONE && (me == 0 || !KEEP) ->
                        remove_me(); got = 0;
                        if
                        :: me == 0 ->
                            n = gathered;
#ifdef NO_GIVE_BACK
                            n = 0;
#endif
                            inflight = inflight + n;
                            gathered = 0; reserving = 0;
                            conserve()
                        :: else
                        fi
                    };
                    /* it gives back what was gathered for it */
                    if
                    :: n > 0 ->
#ifdef GIVE_BACK_NO_WAKE
                        atomic { count = count + n; inflight = inflight - n; n = 0; conserve() }
#else
                        atomic { put_decide() };
                        put()
#endif
                    :: else
                    fi;
                    break
#endif
                fi
            :: else
            fi
        od;
        if
        :: !got -> r++; goto next /* gave up */
        :: else
        fi;
        /* ---- hold, then release ---- */
#ifdef KEEP_ONE
        if
        :: me == THREADS - 1 && r + 1 == ROUNDS -> r++; goto next /* consumed */
        :: else
        fi;
#endif
        atomic {
            conserve();
            holders = holders - w; inflight = inflight + w; n = w;
            put_decide()
        };
        put();
        r++;
next:   skip
    :: else -> break
    od
}

/* -DOVERFLOW: a release of two permits nobody took, at any moment. */
proctype Rogue()
{
    byte k, i, n, n0, taken, refused = 0;
    bool woke, more, again, ret, passed, owed, kseen, ovf = 0;
    atomic {
        total = total + 2; inflight = inflight + 2; n = 2;
        put_decide()
    };
    put();
    assert(!ovf || refused == 2) /* EOVERFLOW: nothing released */
}

init
{
    byte i;
    atomic {
        for (i : 0 .. THREADS - 1) {
            run Thread(i)
        };
        if
        :: ROGUE -> run Rogue()
        :: else
        fi
    }
}
