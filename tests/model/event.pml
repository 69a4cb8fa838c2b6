/* tests/model/event.pml: the event of lib/event.c, manual or auto reset,
 * and the part of lib/wait it uses, for Spin. Run by check.sh.
 *
 * State word: S (set), W (waiters queued); MANUAL (-DMANUAL) is fixed.
 * NW waiter threads each wait once: the inline try_wait (manual: a load
 * of S; auto: the CAS S -> 0), then, bucket locked, validate (refused on
 * S; else W set) and enqueue, then sleep until granted. With -DTIMED
 * each waiter may give up at any point of its wait: before queueing, or
 * queued (it takes itself out under the bucket lock, clearing W if it
 * was the last), unless a set dequeued it first, when the grant stands
 * and the wait returns 0; an asynchronous waiter's cancel is the same
 * step. Only the first NTIMED waiters (1 by default) have deadlines, so
 * that the others may sleep for good when no set is left for them. SETTERS threads each set NSETS times: the inline CAS x -> x|S
 * while W is clear, or else, bucket locked (one atomic step, the select
 * and the finish), a grant of every queued waiter (manual) or of the
 * oldest (auto) and the store of the new word. With -DRESET a setter may
 * reset (S -> 0) after each set.
 *
 * Each bucket critical section is one atomic step; every other access to
 * the word is one atomic instruction of lib/event.c. A granted waiter is
 * woken after the set's step (lib/wait/wake.pml checks how a grant
 * reaches a sleeper).
 *
 * Checked, once nothing can move any more (Spin's timeout), with every
 * waiter that still sleeps in a valid end state:
 *   - no lost wake-up: no waiter sleeps beside a set event, and (manual)
 *     every waiter that was queued when a set came has passed; if either
 *     fails, init blocks, and Spin reports an invalid end state;
 *   - (auto) conservation: every set that did not find the event set
 *     already is consumed exactly once (a waiter's pass) or stays in S:
 *     passes + S == sets that counted, an assertion.
 *
 * Broken variants (must fail):
 *   NO_RECHECK      validate queues without looking at S: a set that came
 *                   between the waiter's look and the lock leaves it
 *                   asleep beside a set event (lost wake-up)
 *   BLIND_SET       the inline set stores S even when W is set: the
 *                   waiters sleep beside it (lost wake-up)
 *   MANUAL_ONE      (MANUAL) a manual set grants only the oldest waiter,
 *                   as an auto set does: the others stay asleep after the
 *                   set, for good once a reset follows (lost wake-up)
 *   AUTO_ALL        (auto) an auto set grants every queued waiter: one
 *                   set passes two waiters (conservation)
 *   TIMEOUT_LOSES   (auto, TIMED) a waiter whose deadline passes as a set
 *                   is handed to it returns ETIMEDOUT anyway: the set is
 *                   gone without a pass (conservation)
 *   CLEAR_W_ALWAYS  (TIMED) a waiter leaving on its deadline clears W
 *                   although others remain queued: the next set takes the
 *                   inline path and stores S beside them (lost wake-up) */

#ifndef NW
#define NW 2
#endif
#ifndef SETTERS
#define SETTERS 1
#endif
#ifndef NSETS
#define NSETS 2
#endif
#ifdef TIMED
#ifndef NTIMED
#define NTIMED 1 /* waiters 0 .. NTIMED-1 have deadlines */
#endif
#else
#define NTIMED 0
#endif
#ifdef MANUAL
#define MANUAL_MODE 1
#else
#define MANUAL_MODE 0
#endif

bool S = 0;
bool W = 0;
byte q[NW]; /* the queue, oldest first: waiter ids */
byte qlen = 0;
bool grant[NW];
bool owed[NW]; /* (manual) queued when a set came: must pass */
byte passes = 0;
byte tokens = 0; /* (auto) sets that found S clear: each one consumed or left in S */
byte running = NW + SETTERS;

inline dequeue_at(i)
{
    k = i;
    do
    :: k + 1 < qlen -> q[k] = q[k + 1]; k++
    :: else -> break
    od;
    qlen--
}

/* The set's bucket-locked step (set_select, set_finish). */
inline set_locked()
{
    /* manual: whoever is queued now is owed a pass */
    for (k : 0 .. qlen - 1) {
        owed[q[k]] = MANUAL_MODE
    }
    if
    :: qlen > 0 ->
#if defined(MANUAL) && !defined(MANUAL_ONE) || !defined(MANUAL) && defined(AUTO_ALL)
        do
        :: qlen > 0 -> grant[q[0]] = 1; dequeue_at(0)
        :: else -> break
        od;
#else
        grant[q[0]] = 1;
        dequeue_at(0);
#endif
#ifndef MANUAL
        tokens++;
#endif
        if
        :: MANUAL_MODE -> S = 1; W = 0
        :: else -> W = qlen > 0
        fi
    :: else ->
        if
        :: !S -> tokens = tokens + !MANUAL_MODE
        :: else
        fi;
        S = 1;
        W = 0
    fi
}

proctype Setter()
{
    byte n, k;
    bool slow;
    for (n : 1 .. NSETS) {
        /* park_event_set: the inline CAS while W is clear */
        atomic {
#ifdef BLIND_SET
            if
            :: true ->
#else
            if
            :: !W ->
#endif
                if
                :: !S -> tokens = tokens + !MANUAL_MODE
                :: else
                fi;
                S = 1;
                /* manual: whoever is queued now is owed a pass (none,
                 * unless W lies) */
                for (k : 0 .. qlen - 1) {
                    owed[q[k]] = MANUAL_MODE
                }
                slow = 0
            :: else -> slow = 1
            fi
        };
        if
        :: slow -> atomic { set_locked() }
        :: else
        fi;
#ifdef RESET
        if
        :: atomic { S = 0 } /* park_event_reset */
        :: true
        fi
#endif
    }
    running--
}

proctype Waiter(byte me)
{
    byte k;
    bool ok, timed_out = 0;
    do
    :: /* park_event_try_wait */
        atomic {
            if
            :: S -> ok = 1; S = MANUAL_MODE /* auto: consumed */
            :: else -> ok = 0
            fi
        };
        if
        :: ok -> break
        :: else
        fi;
        if
        :: me < NTIMED -> timed_out = 1; break /* the deadline passed before queueing */
        :: true
        fi;
        /* park__wait: validate and enqueue, bucket locked */
        atomic {
#ifndef NO_RECHECK
            if
            :: S -> ok = 0
            :: else ->
#endif
                W = 1;
                q[qlen] = me;
                qlen++;
                ok = 1
#ifndef NO_RECHECK
            fi
#endif
        };
        if
        :: ok ->
end_sleep:
            if
            :: grant[me] -> break
            :: me < NTIMED && !grant[me] -> /* the deadline passed: park__wait_cancel */
                atomic {
                    if
                    :: !grant[me] ->
                        k = 0;
                        do
                        :: q[k] == me -> break
                        :: else -> k++
                        od;
                        dequeue_at(k);
#ifdef CLEAR_W_ALWAYS
                        W = 0;
#else
                        W = qlen > 0;
#endif
                        timed_out = 1
                    :: grant[me] -> /* a set dequeued it first: the grant stands */
#ifdef TIMEOUT_LOSES
                        timed_out = 1
#else
                        skip
#endif
                    fi
                };
                break
            fi
        :: else /* set before we were queued: look again */
        fi
    od;
    atomic {
        if
        :: !timed_out -> passes++; owed[me] = 0
        :: else
        fi;
        grant[me] = 0;
        running--
    }
}

init
{
    byte i;
    atomic {
        for (i : 0 .. NW - 1) {
            run Waiter(i)
        }
        for (i : 1 .. SETTERS) {
            run Setter()
        }
    }
    timeout; /* nothing can move: the setters are done, the waiters left sleep */
    /* No waiter asleep beside a set event, none owed a pass (else init
     * stays here: an invalid end state). */
    !(S && qlen > 0);
    for (i : 0 .. NW - 1) {
        !owed[i]
    }
#ifndef MANUAL
    assert(passes + S == tokens);
#endif
    assert(running == qlen)
}
