/* tests/model/sem.pml: the default (barging) semaphore of lib/sem.c: one
 * woken waiter in flight (K), direct hand-off to a waiter that has waited
 * PARK__FAIR_NS, and the woken waiter's retire.
 *
 * State: count, W (waiters queued), K (a woken waiter is on its way). Each
 * atomic block is one step of the code: a CAS on the state word, or a
 * whole bucket-lock hold (validate + enqueue, a release's select + finish,
 * a retire). "Owed" (the head has waited PARK__FAIR_NS) is a
 * nondeterministic choice, so every interleaving of ages is covered.
 *
 * With -DTIMEOUTS a woken waiter whose retry fails may give up (its
 * deadline passed), retiring without a permit.
 *
 * Checked: permits are conserved (holders + count == PERMITS, never more
 * holders than permits), and no lost wake-up: every thread finishes its
 * rounds (a waiter asleep forever with a free permit is an invalid end
 * state). Broken variants, which must fail:
 *   NO_PASS     retire drops K without waking the next waiter although a
 *               permit is free (with TIMEOUTS: a waiter that gives up
 *               leaves a free permit and sleepers, and nobody to wake them)
 *   KEEP_K      a woken waiter that lost to a barger re-queues without
 *               dropping K: releases think someone is on the way */

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

byte count = PERMITS;
bool W = 0;
bool K = 0;
byte holders = 0;
byte handed = 0;       /* permits handed to waiters not yet awake */
byte q[THREADS];       /* the queue, oldest first: thread ids */
byte qlen = 0;
byte grant[THREADS];   /* NONE until granted (then dequeued) */

/* Every permit is free, handed over, or held: never lost or duplicated. */
inline conserve()
{
    assert(count + handed + holders == PERMITS && holders <= PERMITS)
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

/* wake_select + wake_finish: place n permits; retiring: K is ours. */
inline wake(n, retiring)
{
    woke = 0;
    do
    :: qlen > 0 && (n > 0 || count > 0) ->
        if
        :: true -> /* the head is owed a hand-off */
            if
            :: n > 0 -> n--
            :: else -> count--
            fi;
            handed++;
            grant[q[0]] = HANDOFF;
            dequeue_head()
        :: true -> /* the head is young */
            if
            :: !K || retiring ->
                grant[q[0]] = RETRY;
                dequeue_head();
                woke = 1
            :: else
            fi;
            break
        fi
    :: else -> break
    od;
    count = count + n;
    W = qlen > 0;
    K = woke || (K && !retiring);
    conserve()
}

inline retire()
{
    atomic {
#ifndef NO_PASS
        n = 0;
        wake(n, 1)
#else
        K = 0
#endif
    }
}

proctype Thread(byte me)
{
    byte r = 0, k, n;
    bool woken = 0, got, woke;
    do
    :: r < ROUNDS ->
        /* ---- acquire ---- */
        do
        :: atomic { /* park_sem_try_acquire (the spin's last try) */
                if
                :: count > 0 -> count--; holders++; got = 1
                :: else -> got = 0
                fi
            };
            if
            :: got ->
                if
                :: woken -> woken = 0; retire()
                :: else
                fi;
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
                if
                :: count > 0 -> got = 0 /* retry */
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
                (grant[me] != NONE); /* asleep until granted */
                if
                :: atomic { grant[me] == HANDOFF -> grant[me] = NONE; handed--; holders++ };
                    break
                :: grant[me] == RETRY -> grant[me] = NONE; woken = 1
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
            :: !W -> count++; conserve() /* the inline fast path */
            :: else -> n = 1; wake(n, 0) /* bucket locked */
            fi
        };
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
