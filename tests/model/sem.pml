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
 *               several woken waiters may be in flight */

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

#define NONE 0
#define HANDOFF 1
#define RETRY 2

#ifdef FIFO
#define FIFO_MODE 1
#else
#define FIFO_MODE 0
#endif

byte count = PERMITS;
bool W = 0;
bool K = STALE_K; /* FORKED: a K the fork left behind, owned by nobody */
byte holders = 0;
byte handed = 0;       /* permits handed to waiters not yet awake */
byte inflight = 0;     /* permits a locked release has yet to place */
byte q[THREADS];       /* the queue, oldest first: thread ids */
byte qlen = 0;
byte grant[THREADS];   /* NONE until granted (then dequeued) */
byte pend[THREADS];    /* granted under the lock, delivered after it */
bool lock = 0;         /* the bucket lock, held from select to finish */

/* Every permit is free, handed over, or held: never lost or duplicated. */
inline conserve()
{
    assert(count + handed + holders + inflight == PERMITS && holders <= PERMITS);
#ifdef FIFO
    assert(!W || count == 0) /* the FIFO invariant */
#endif
}

/* park__wait_cancel of a timed-out queued waiter: out of the queue, W
 * cleared by removed() if it was the last. */
inline remove_me()
{
    k = 0;
    do
    :: q[k] == me -> break
    :: else -> k++
    od;
    do
    :: k + 1 < qlen -> q[k] = q[k + 1]; k++
    :: else -> break
    od;
    qlen--;
    if
    :: qlen == 0 -> W = 0
    :: else
    fi
}

/* FIFO release of n = 1 with W seen (fifo_select, fifo_finish), bucket
 * locked: the permit goes to the head; the word becomes W if waiters
 * remain, else the leftover count (0); with the queue emptied meanwhile
 * (timeouts), the permit joins the count. */
inline fifo_release()
{
    atomic {
        !lock;
        if
        :: qlen > 0 ->
            inflight--; handed++;
            pend[q[0]] = HANDOFF;
            dequeue_head();
            W = qlen > 0
        :: else ->
            assert(!W);
            inflight--; count++
        fi;
        conserve();
        for (k : 0 .. THREADS - 1) {
            if
            :: pend[k] != NONE -> grant[k] = pend[k]; pend[k] = NONE
            :: else
            fi
        }
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

inline dequeue_head()
{
    k = 0;
    do
    :: k + 1 < qlen -> q[k] = q[k + 1]; k++
    :: else -> break
    od;
    qlen--
}

/* wake_select under the bucket lock: place n permits; ret: K is ours. */
inline wake_select()
{
    !lock -> lock = 1;
    woke = 0;
    do
    :: qlen > 0 && (n > 0 || count > 0) ->
        if
        :: true -> /* the head is owed a hand-off */
            if
            :: n > 0 -> n--; inflight--
            :: else -> count--
            fi;
            handed++;
            pend[q[0]] = HANDOFF;
            dequeue_head()
        :: true -> /* the head is young */
            if
            :: !K || ret || FORKED_K ->
                pend[q[0]] = RETRY;
                dequeue_head();
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
    count = count + n;
    inflight = inflight - n;
    W = more;
    K = woke || (K && !ret);
    again = W && count > 0 && !K;
    conserve();
    lock = 0;
    /* park__unpark wakes the granted after unlocking */
    for (k : 0 .. THREADS - 1) {
        if
        :: pend[k] != NONE -> grant[k] = pend[k]; pend[k] = NONE
        :: else
        fi
    }
}

/* wake: park__unpark (select, then finish) until nothing more is owed. */
inline wake()
{
    do
    :: atomic { wake_select() };
        atomic { wake_finish() };
#ifndef NO_AGAIN
        if
        :: again -> n = 0; ret = 0
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

proctype Thread(byte me)
{
    byte r = 0, k, n;
    bool woken = 0, got, woke, more, again, ret, pass;
    do
    :: r < ROUNDS ->
        /* ---- acquire ---- */
        do
        :: atomic {
                if
                :: count > 0 && !woken -> /* park_sem_try_acquire */
                    count--; holders++; got = 1; pass = 0
                :: count > 0 && woken -> /* take_woken */
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
                :: count > 0 -> got = 0 /* retry */
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
                    :: woken -> enqueue_front(me)
                    :: else -> enqueue_back(me)
                    fi;
                    woken = 0;
                    got = 1
                fi
            };
            if
            :: got ->
                if
                :: atomic { grant[me] == HANDOFF -> grant[me] = NONE; handed--; holders++ };
                    break
                :: grant[me] == RETRY -> grant[me] = NONE; woken = 1
#ifdef QUEUED_TIMEOUTS
                :: atomic { /* its deadline passed while it was queued (a
                     * waiter dequeued first takes its grant instead) */
                        !lock && grant[me] == NONE && pend[me] == NONE ->
                        remove_me(); got = 0
                    };
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
        /* ---- hold, then release 1 ---- */
        atomic {
            conserve();
            holders--;
            if
#ifdef FIFO_BARGE
            :: true -> count++; got = 0
#else
            :: !W || (K && !FORKED_K && !FIFO_MODE) -> count++; conserve(); got = 0 /* no lock, no wake */
            :: W && K && !FIFO_MODE -> got = 1; inflight++ /* fair_look: a hand-off may be due */
#endif
            :: else -> got = 1; inflight++
            fi
        };
        if
#ifdef FIFO
        :: got -> fifo_release()
#else
        :: got -> n = 1; ret = 0; wake() /* bucket locked */
#endif
        :: else
        fi;
        r++;
next:   skip
    :: else -> break
    od
}

init
{
    byte i;
    atomic {
        for (i : 0 .. THREADS - 1) {
            run Thread(i)
        }
    }
}
