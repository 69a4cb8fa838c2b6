/* tests/model/cond.pml: the condition variable (lib/cond.c) on lib/wait,
 * with the mutex it is used with, for Spin: as the drop-in uses it
 * (lib/preload/cond.c: a broadcast's next waiter is left on the mutex for
 * its next release to wake) and, with -DMORPH, as park_cond_wait does: a
 * signal or broadcast moves the waiter it takes onto the mutex's queue (or
 * wakes it if the mutex is free), the mutex's release hands the mutex to
 * the first waiter queued there and wakes it, and a waiter that holds the
 * mutex again moves the broadcast's next waiter onto it. Run by check.sh.
 *
 * The cond: a FIFO queue of waiters under its bucket lock, and the word
 * `waiters` (set when one queues, cleared under the bucket lock when the
 * last leaves or is taken). A waiter queues (bucket lock), releases the
 * mutex, sleeps until woken or gives up (a timeout or a cancellation:
 * it leaves the queue under the bucket lock unless it was taken first, in
 * which case it waits for its wake), then takes the mutex again.
 * Signal takes the oldest waiter; broadcast takes every waiter, wakes the
 * first, and chains the others through their grants (PARK__SELECT_DEFER):
 * a woken waiter that re-acquires the mutex leaves the next one on the
 * mutex (pp_mutex_t.next), and the mutex's next release, by whichever
 * thread, wakes it. A cancelled waiter that a signal took signals again.
 * Each bucket critical section is one atomic step; so is the mutex's
 * release (the holder takes `next` off, then unlocks); the wake of a taken
 * waiter comes after, as a step of its own.
 *
 * Threads: NW waiters and one notifier.
 *   default    the notifier sets the predicate and broadcasts; each waiter
 *              waits until it sees the predicate.
 *   -DSIGNAL   the notifier posts NW tokens, one signal each; each waiter
 *              waits for a token and takes it.
 *   -DTIMED    waiter 0 may give up its sleep (a timeout) at any point,
 *              and then looks at the predicate again.
 *   -DCANCEL   waiter 0 waits in a loop and takes nothing; the notifier
 *              asks for its cancellation (under the mutex, before its
 *              first signal or the broadcast), which acts in waiter 0's
 *              sleep whether or not a signal or broadcast took it
 *              meanwhile: it leaves (or waits for the wake it was taken
 *              for, and, taken by a signal, signals again), takes the
 *              mutex back with its successor left on it, and releases it.
 *              The notifier posts a token for each of the other waiters.
 *   -DOTHER_UNLOCKS (broadcast) the woken waiters return with the mutex
 *              held and the notifier unlocks it for each of them.
 *   -DMORPH    park_cond_wait's moves onto the mutex (no pass-on word).
 *
 * Checked: no lost wake-up: every thread finishes (a waiter asleep forever,
 * or blocked on a mutex nobody releases, is an invalid end state); in
 * SIGNAL mode the tokens taken never exceed those posted (assertion).
 *
 * Broken variants (must fail with a lost wake-up):
 *   NO_PASS          a release does not wake the waiter left on the mutex
 *   NO_CHAIN         a woken waiter does not leave its successor on the
 *                    mutex (with MORPH: does not move it there)
 *   NO_OWN           (MORPH) a waiter handed the mutex does not know it
 *                    and locks it again
 *   NO_HANDOFF       (MORPH) a release frees the mutex without handing it
 *                    to the waiters queued on it
 *   CLEAR_ALWAYS     a waiter that leaves clears `waiters` even when others
 *                    remain, so a signal finds "nobody waiting"
 *   NO_RESIGNAL      (with CANCEL, SIGNAL) a cancelled waiter that a
 *                    signal took consumes that signal */

#ifndef NW
#define NW 3
#endif

#ifdef CANCEL
#define CANCEL_WAITERS 1
#else
#define CANCEL_WAITERS 0
#endif

#define NONE 255
#define G_NONE 0
#define G_SIGNAL 1
#define G_LAST 2
#define G_NEXT 10 /* G_NEXT + i: taken by a broadcast, waiter i comes next */

bit m;             /* the mutex: 1 held */
byte mnext = NONE; /* pp_mutex_t.next: the waiter the next release wakes */
bit waiters;       /* the cond's word */
byte mq[NW];       /* MORPH: waiters queued on the mutex, oldest first */
byte mqlen;
bit owns[NW];      /* MORPH: handed the mutex by a release */
byte q[NW];        /* the cond's queue, oldest first */
byte qlen;
bit queued[NW];
byte grant[NW];
bit woken[NW];
bool pred;  /* broadcast mode: the predicate */
bool cancel_req; /* CANCEL: waiter 0's cancellation is pending */
#ifdef CANCEL
/* Waiter 0 is cancelled in its sleep once asked (its cancellation acts
 * there, asynchronously, whether or not it was woken meanwhile). */
#define CANCELLED(who) (who == 0 && cancel_req)
#else
#define CANCELLED(who) false
#endif
byte tokens; /* signal mode */
byte taken;
byte returned;   /* waiters that returned */
byte out;    /* waiters that returned holding the mutex (OTHER_UNLOCKS) */

inline lock()
{
    atomic { m == 0 -> m = 1 }
}

/* The mutex's release: next taken off, the lock freed; then the wake. */
inline release()
{
#ifdef MORPH
    /* Hands the mutex to the first waiter queued on it (it stays held),
     * or frees it; then the wake. */
    atomic {
        if
#ifndef NO_HANDOFF
        :: mqlen > 0 ->
            nx = mq[0];
            k = 0;
            do
            :: k + 1 < mqlen -> mq[k] = mq[k + 1]; k++
            :: else -> break
            od;
            mqlen--;
            owns[nx] = 1
#endif
        :: else -> m = 0
        fi
    }
#else
    atomic {
        nx = mnext;
        mnext = NONE;
        m = 0
    }
#endif
#ifndef NO_PASS
    if
    :: nx != NONE -> woken[nx] = 1
    :: else -> skip
    fi;
#endif
    nx = NONE
}

/* Bucket locked: takes waiter `who` out of the queue. */
inline unqueue(who)
{
    k = 0;
    do
    :: k < qlen && q[k] != who -> k++
    :: else -> break
    od;
    assert(k < qlen);
    do
    :: k + 1 < qlen -> q[k] = q[k + 1]; k++
    :: else -> break
    od;
    qlen--;
    queued[who] = 0
}

/* MORPH: a taken waiter, not yet woken, goes to the mutex: queued on it
 * while it is held (the holder's release hands it over), else woken to
 * take it itself. One bucket-locked step. */
inline to_mutex(who)
{
    atomic {
        if
        :: m == 1 -> mq[mqlen] = who; mqlen++
        :: else -> woken[who] = 1
        fi
    }
}

inline signal()
{
    if
    :: waiters ->
        atomic {
            if
            :: qlen > 0 ->
                sig = q[0];
                unqueue(sig);
                grant[sig] = G_SIGNAL
            :: else -> sig = NONE
            fi;
            if
            :: qlen == 0 -> waiters = 0
            :: else -> skip
            fi
        }
        if
#ifdef MORPH
        :: sig != NONE -> to_mutex(sig); sig = NONE
#else
        :: sig != NONE -> woken[sig] = 1; sig = NONE
#endif
        :: else -> skip
        fi
    :: else -> skip
    fi
}

inline broadcast()
{
    if
    :: waiters ->
        atomic {
            first = NONE;
            if
            :: qlen > 0 ->
                first = q[0];
                k = 0;
                do
                :: k < qlen ->
                    queued[q[k]] = 0;
                    if
                    :: k + 1 < qlen -> grant[q[k]] = G_NEXT + q[k + 1]
                    :: else -> grant[q[k]] = G_LAST
                    fi;
                    k++
                :: else -> break
                od;
                qlen = 0
            :: else -> skip
            fi;
            waiters = 0
        }
        if
#ifdef MORPH
        :: first != NONE -> to_mutex(first); first = NONE
#else
        :: first != NONE -> woken[first] = 1; first = NONE
#endif
        :: else -> skip
        fi
    :: else -> skip
    fi
}

/* park__wait_leave, for a waiter that gives up its sleep: out of the
 * queue under the bucket lock, or, taken already, wait for its wake. */
inline leave()
{
    atomic {
        if
        :: queued[me] ->
            unqueue(me);
#ifdef CLEAR_ALWAYS
            waiters = 0
#else
            if
            :: qlen == 0 -> waiters = 0
            :: else -> skip
            fi
#endif
        :: else -> skip
        fi
    }
    if
    :: grant[me] != G_NONE -> woken[me]
    :: else -> skip
    fi
}

/* One wait of waiter `me`, mutex held, with the grant left in grant[me]:
 * gave_up is 1 if it was cancelled. */
inline wait()
{
    atomic {
        waiters = 1;
        q[qlen] = me;
        qlen++;
        queued[me] = 1;
        grant[me] = G_NONE;
        woken[me] = 0
    }
    release();
    if
    :: woken[me] && !(CANCELLED(me)) -> skip
#ifdef TIMED
    :: me == 0 && !woken[me] -> leave()
#endif
#ifdef CANCEL
    :: CANCELLED(me) ->
        gave_up = 1;
        leave();
#ifdef SIGNAL
#ifndef NO_RESIGNAL
        if
        :: grant[me] == G_SIGNAL -> signal()
        :: else -> skip
        fi
#endif
#endif
#endif
    fi;
#if defined(MORPH) && !defined(NO_OWN)
    if
    :: owns[me] -> owns[me] = 0 /* handed the mutex by a release */
    :: else -> lock()
    fi;
#else
    lock();
#endif
#ifndef NO_CHAIN
    if
    :: grant[me] >= G_NEXT ->
#ifdef MORPH
        to_mutex(grant[me] - G_NEXT)
#else
        mnext = grant[me] - G_NEXT
#endif
    :: else -> skip
    fi
#endif
}

proctype Waiter(byte me)
{
    byte k, nx = NONE, sig = NONE, first = NONE;
    bit gave_up;
    lock();
#ifdef CANCEL
    if
    :: me == 0 ->
        /* waits until cancelled, consuming nothing */
        do
        :: wait();
            if
            :: gave_up -> break
            :: else -> skip
            fi
        od;
        goto leave_it
    :: else -> skip
    fi;
#endif
#ifdef SIGNAL
    do
    :: tokens > 0 -> tokens--; taken++; break
    :: else ->
        wait()
    od;
#else
    do
    :: pred -> break
    :: else ->
        wait()
    od;
#endif
#ifdef OTHER_UNLOCKS
    out++; /* the notifier unlocks for us */
    goto counted;
#endif
leave_it:
    release();
counted:
    returned++
}

proctype Notifier()
{
    byte k, nx = NONE, sig = NONE, first = NONE, i;
#ifdef SIGNAL
    /* One token for each waiter that takes one (waiter 0 does not when it
     * is to be cancelled: its cancellation is asked first, and races with
     * the first signal). */
    i = CANCEL_WAITERS;
    do
    :: i < NW ->
        lock();
        cancel_req = CANCEL_WAITERS;
        tokens++;
        signal();
        release();
        i++
    :: else -> break
    od;
    assert(taken <= NW - CANCEL_WAITERS);
#else
    lock();
    cancel_req = CANCEL_WAITERS;
    pred = true;
    broadcast();
    release();
#ifdef OTHER_UNLOCKS
    /* Each woken waiter returns holding the mutex: unlock it for it. */
    i = 0;
    do
    :: i < NW - CANCEL_WAITERS -> out > i -> release(); i++
    :: else -> break
    od;
#endif
#endif
}

init
{
    byte i;
    atomic {
        i = 0;
        do
        :: i < NW -> run Waiter(i); i++
        :: else -> break
        od;
        run Notifier()
    }
}
