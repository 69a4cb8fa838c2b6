/* tests/model/wake.pml: how a granted waiter of lib/wait learns its grant
 * (lib/wait/queue.c: thread_sleep and wake_granted), for Spin. Run by
 * check.sh.
 *
 * Every waiter has its word `woken`: 0 while it waits awake (queued,
 * pausing or yielding), ASLEEP once it has marked itself asleep, GRANTED
 * once a waker has granted it. A batch waiter (PARK__WAIT_BATCH: a lazy
 * run's callers, queued rwlock readers) sleeps on its bucket's shared
 * word `seq` instead of its own:
 *
 *   waiter: look at woken (GRANTED: done); s = seq; CAS woken 0 -> ASLEEP
 *           (it found GRANTED: done); futex_wait(seq, s); look again.
 *   waker:  for each waiter granted, exchange woken -> GRANTED; if any of
 *           them was ASLEEP, seq++ and one futex_wake of all sleepers.
 *
 * So a release whose waiters were all still awake (yielding) makes no
 * system call. NW waiters of one batch and, with -DOTHER, a release of
 * another key of the bucket (it bumps seq and wakes every sleeper of the
 * bucket, spuriously for ours). With -DSPURIOUS a futex_wait may also
 * return early, once per waiter (EINTR, a spurious wake-up, or a timeout
 * whose waiter a waker had dequeued already, so that it sleeps again in
 * park__wait_leave). futex_wait blocks only if seq still holds s,
 * atomically, and a wake unblocks every thread blocked on seq. The
 * waker's bump and wake are one step here (two in the code): between
 * them a waiter can only read the new seq, and then it finds GRANTED.
 *
 * Checked: no lost wake-up (every waiter ends: an invalid end state if
 * one sleeps forever) and no waiter ends without its grant (assertion).
 *
 * Broken variants (must fail):
 *   LOAD_STORE     the waker reads woken and then stores GRANTED in two
 *                  steps: a waiter that marks itself asleep in between is
 *                  neither seen asleep nor woken (lost wake-up)
 *   SEQ_AFTER_MARK the waiter reads seq after it marks itself asleep: a
 *                  wake between the two leaves it sleeping on the new
 *                  value (lost wake-up) */
#ifndef NW
#define NW 2
#endif

#define GRANTED 1
#define ASLEEP 2

byte seq = 0;
byte woken[NW];
bool blocked[NW];
bool spurious[NW]; /* the one spurious return of each waiter's futex_wait */

inline futex_wake_all()
{
    byte j = 0;
    do
    :: j < NW -> blocked[j] = false; j++
    :: else -> break
    od
}

proctype waiter(byte i)
{
    byte s, v;
    do
    :: woken[i] == GRANTED -> break
    :: else ->
#ifndef SEQ_AFTER_MARK
        s = seq;
#endif
        /* CAS 0 -> ASLEEP; v: the value it found */
        atomic {
            v = woken[i];
            if
            :: v == 0 -> woken[i] = ASLEEP
            :: else -> skip
            fi
        }
#ifdef SEQ_AFTER_MARK
        s = seq;
#endif
        if
        :: v == GRANTED -> break
        :: else -> skip
        fi;
        /* futex_wait(seq, s) */
        atomic {
            if
            :: seq == s -> blocked[i] = true
            :: else -> skip
            fi
        }
#ifdef SPURIOUS
        if
        :: !blocked[i] -> skip
        :: atomic {
               !spurious[i] && blocked[i] -> blocked[i] = false; spurious[i] = true
           }
        fi
#else
        !blocked[i]
#endif
    od;
    assert(woken[i] == GRANTED)
}

proctype waker()
{
    bool any = false;
    byte i = 0, old;
    do
    :: i < NW ->
#ifdef LOAD_STORE
        old = woken[i];
        woken[i] = GRANTED;
#else
        atomic { old = woken[i]; woken[i] = GRANTED }
#endif
        if
        :: old == ASLEEP -> any = true
        :: else -> skip
        fi;
        i++
    :: else -> break
    od;
    if
    :: any -> atomic { seq = seq + 1; futex_wake_all() }
    :: else -> skip
    fi
}

#ifdef OTHER
proctype other()
{
    atomic { seq = seq + 1; futex_wake_all() }
}
#endif

init
{
    atomic {
        byte i = 0;
        do
        :: i < NW -> run waiter(i); i++
        :: else -> break
        od;
        run waker();
#ifdef OTHER
        run other();
#endif
    }
}
