/* tests/model/mutex.pml: park_mutex (lib/mutex.c, include/park/mutex.h)
 * and the part of lib/wait/queue.c it uses, for Spin. Run by check.sh.
 *
 * Properties:
 *   - mutual exclusion: the assert in the critical section;
 *   - no lost wake-up: a thread blocked on its `woken` flag once everything
 *     else has finished is an invalid end state (every run is finite, so
 *     this is also termination);
 *   - the mutex is left clean: once every thread is done and the store
 *     buffers have drained, the word is 0 or P|c (recent contention, c
 *     credits, 0 to 3), never with L or S, the queue is empty and the hint
 *     0 (park_mutex_destroy would return 0);
 *   - credits only with P: checked at every slow unlock and at the end.
 *
 * Modelled:
 *   - NPROC threads, each doing ITERS times: lock; critical section;
 *     unlock. With -DTIMED the last thread uses park_mutex_lock_until (a
 *     trylock, then lock_wait with a deadline that may pass at any check or
 *     while asleep; once passed it stays passed).
 *   - The state word with L, P, S and the credits, exactly: c is a
 *     counter 0..3 in bits 3-4 as in mutex.h (CREDIT 8, CREDITS 24), not
 *     bounded further (it costs about 7% more states than the model
 *     without credits). Each CAS of mutex.c and mutex.h is
 *     one atomic step (a weak-CAS retry loop is one step too: it retries
 *     until the word it saw is the word it replaces). Taking a free word
 *     (try_take, trylock) adds L, and S if P was set (PARK__MUTEX_TAKE);
 *     the inline lock is the CAS 0 -> L.
 *   - x86-TSO for the store unlock: its `state = 0` goes into the unlocking
 *     thread's store buffer (sb[]: one entry is enough, as a thread has at
 *     most one plain store to the word before its next locked instruction)
 *     and its hint load may run while the store is still buffered. A buffer
 *     drains at any time (proctype Memory), before each locked instruction
 *     of its owner (CAS, fetch_and, the bucket lock), and, for every thread,
 *     at a membarrier. Loads of the word by the owner forward from its
 *     buffer. Every other store is sequentially consistent: it is a locked
 *     instruction, or made under the bucket lock, whose unlock (an exchange)
 *     drains it before anyone else can act on it, or it is the `woken`
 *     store, whose delay is indistinguishable from a slower waker.
 *   - The store unlock is taken only when the word is exactly L: a holder
 *     with S (or with P set) unlocks through the bucket lock.
 *   - The wait queue of the mutex's address: the bucket lock (a real lock:
 *     others run while it is held, in particular between validate and the
 *     hint increment of the same enqueue), the FIFO with front insertion,
 *     the hint (+1 at enqueue, -1 at dequeue, under the bucket lock), and
 *     per waiter queued, woken and grant.
 *   - park__wait: validate (free: INVALID; else covered = S as seen, and
 *     L[|S] -> L|P[|S] if P is clear); enqueue (at the back, or at the
 *     front after a lost retry); the spin on `woken` (one look: `woken`
 *     only goes 0 -> 1 while the waiter is queued, so the spin's last look
 *     decides); before_sleep (covered: sleep; else membarrier, re-read the
 *     word, sleep only if P is set, otherwise leave as on a timeout); the
 *     sleep; the timeout; park__wait_cancel with removed(more) (the last
 *     waiter leaving clears P and the credits: fetch_and ~(P|CREDITS)),
 *     and "grant beats timeout".
 *   - Slow unlock: grant the oldest waiter RETRY or HANDOFF (chosen
 *     nondeterministically: it depends on the clock), then store P|3 if
 *     anyone was granted or waiters remain, else P|(c-1) if the word read
 *     under the bucket lock has c > 0 credits, else 0, plus L|S on a
 *     hand-off; wake after the bucket unlock. Taking from P|c gives
 *     L|P|S|c (the credits are kept). Hinted unlock: grant the oldest
 *     waiter RETRY and leave the word alone.
 *
 * Abstracted:
 *   - Spinning before parking: one try_take right before parking stands for
 *     the whole spin (any run of the loop is matched by one attempt at the
 *     time of its successful, or last, attempt).
 *   - Steps inside one bucket critical section that no other thread can
 *     tell apart are merged (the slow unlock, the hinted unlock and the
 *     cancel are one step each; validate and the enqueue are two, because
 *     the word and the hint are read without the bucket lock in between).
 *   - Other keys sharing the bucket or the hint slot: they only add hinted
 *     unparks that find no waiter of this mutex.
 *   - The futex: sleeping is blocking on woken[me]; spurious wake-ups and
 *     EINTR are absorbed by queue.c and not modelled.
 *   - membarrier(2) is one atomic flush of every store buffer (the kernel
 *     runs a full barrier on each CPU running a thread of the process).
 *   - The bucket lock's futex and CONTENDED state: a test-and-set lock.
 *
 * Switches (spin -D...):
 *   NO_MEMBARRIER  broken: before_sleep always says "sleep" (lost wake-up)
 *   NO_HINT        broken: the store unlock never reads the hint (lost
 *                  wake-up)
 *   HANDOFF_NO_L   broken: a hand-off stores S[|P] without L, so a barger
 *                  joins the new owner (mutual exclusion fails)
 *   COVER_BY_P     broken: validate also counts a P it found already set as
 *                  cover (the rule before the S bit: a waiter behind a
 *                  holder that took 0 -> L and may still store-unlock skips
 *                  the membarrier; lost wake-up)
 *   FAST_UNLOCK_S  broken: the store unlock also runs on L|S (it ignores
 *                  S), so a covered waiter's P can be erased after the last
 *                  waiter before it left (lost wake-up)
 *   NO_SLOW_BIT    take-from-P adds L only, not S; covered is still read
 *                  from S, which only a hand-off then sets. Not broken:
 *                  fewer waiters are covered, so more of them fence (see
 *                  check.sh)
 *   SLEEP_CHECK_ALL  before_sleep fences and re-reads P before every
 *                  sleep, covered or not (stricter than lib/mutex.c)
 *   SC_UNLOCK      the unlock's store goes straight to memory (no TSO)
 *   CAS_UNLOCK     no membarrier(2): the unlock is the CAS L -> 0, and
 *                  before_sleep always says "sleep"
 *   TIMED          the last thread uses park_mutex_lock_until
 *   NPROC, ITERS   threads and iterations (3 and 2 by default) */

#ifndef NPROC
#define NPROC 3
#endif
#ifndef ITERS
#define ITERS 2
#endif
#ifdef TIMED
#define TIMED_PID (NPROC - 1)
#else
#define TIMED_PID NPROC
#endif

#define L 1 /* PARK__MUTEX_LOCKED */
#define P 2 /* PARK__MUTEX_PARKED */
#define S 4 /* PARK__MUTEX_SLOW_UNLOCK */
#define C 8 /* PARK__MUTEX_CREDIT */
#define CREDITS 24 /* PARK__MUTEX_CREDITS: 0 to 3 credits, only with P */

/* What taking a free word s adds to it (PARK__MUTEX_TAKE). */
#ifdef NO_SLOW_BIT
#define TAKE(s) L
#else
#define TAKE(s) (L | ((s) & P -> S : 0))
#endif

/* What validate counts as cover (lock_ctx.covered). */
#ifdef COVER_BY_P
#define COVERS(s) ((s) & (S | P) -> 1 : 0)
#else
#define COVERS(s) ((s) & S -> 1 : 0)
#endif

/* The word on which the store unlock runs. */
#ifdef FAST_UNLOCK_S
#define FAST_UNLOCK(s) (((s) | S) == (L | S))
#else
#define FAST_UNLOCK(s) ((s) == L)
#endif

#ifdef SLEEP_CHECK_ALL
#define TRUST_COVER 0
#else
#define TRUST_COVER 1
#endif

#define NONE 255

/* w->grant */
#define RETRY 0
#define HANDOFF 1

/* park__wait's results (r), plus the intermediate QUEUE and SLEEP. */
#define INVALID 0
#define GRANTED 1
#define TIMEDOUT 2
#define ABORTED 3
#define QUEUE 4
#define SLEEP 5

byte state;        /* the mutex word in memory */
bit sb[NPROC];     /* store buffer: 1 = "state = 0" not yet in memory */
byte nsb;          /* how many sb[] are 1 */
byte hint;         /* *park__hint_of(m) */
bit bucket;        /* the bucket lock */
byte q[NPROC];     /* waiter ids, q[0] the oldest; unused slots 0 */
byte qlen;
bit queued[NPROC]; /* w->queued */
bit woken[NPROC];  /* w->woken */
bit grant[NPROC];  /* w->grant */
byte cs;           /* threads in the critical section */
byte done;         /* threads that finished their iterations */

/* A locked instruction first drains its own store buffer. */
inline drain(me)
{
    if
    :: sb[me] -> state = 0; sb[me] = 0; nsb--
    :: else
    fi
}

/* A plain load of the word: store forwarding from the own buffer. */
#define LOAD_STATE(me) (sb[me] -> 0 : state)

/* membarrier(2): every store buffer drains. */
inline membarrier()
{
    k = 0;
    do
    :: k < NPROC -> drain(k); k++
    :: else -> k = 0; break
    od
}

/* link_back / link_front, then bucket_unlock. */
inline link_and_unlock(me, front)
{
    woken[me] = 0;
    queued[me] = 1;
    if
    :: front ->
        k = qlen;
        do
        :: k > 0 -> q[k] = q[k - 1]; k--
        :: else -> break
        od;
        q[0] = me
    :: else -> q[qlen] = me
    fi;
    qlen++;
    hint++;
    bucket = 0
}

/* unlink_waiter: the list and hint_add(-1). */
inline unlink(who)
{
    k = 0;
    do
    :: q[k] == who -> break
    :: else -> k++
    od;
    do
    :: k + 1 < qlen -> q[k] = q[k + 1]; k++
    :: else -> k = 0; break
    od;
    qlen--;
    q[qlen] = 0;
    hint--;
    queued[who] = 0
}

/* park__mutex_unlock_slow: park__unpark(unlock_select, unlock_finish),
 * then wake_granted. */
inline unlock_slow(me)
{
    atomic {
        bucket == 0 -> drain(me); bucket = 1;
        if
        :: qlen > 0 ->
            w = q[0];
            if /* unlock_select: the waiter is older than FAIR_NS, or not */
            :: grant[w] = RETRY
            :: grant[w] = HANDOFF
            fi;
            unlink(w)
        :: else -> w = NONE
        fi;
        /* unlock_finish: L|P[|S]|c -> 0 | P|c' | L|S | L|S|P|3. The
         * word is read under the bucket lock, with L held: nobody else
         * changes it meanwhile (removed() needs the bucket lock). */
        assert((state & L) && (!(state & CREDITS) || (state & P)));
        if
        :: w != NONE || qlen > 0 -> s = P | CREDITS
        :: else -> if
                   :: state & CREDITS -> s = P | ((state & CREDITS) - C)
                   :: else -> s = 0
                   fi
        fi;
        if
        :: w != NONE && grant[w] == HANDOFF ->
#ifdef HANDOFF_NO_L
            s = s | S
#else
            s = s | L | S
#endif
        :: else
        fi;
        state = s;
        s = 0;
        bucket = 0;
        if
        :: w != NONE -> woken[w] = 1; w = NONE
        :: else
        fi
    }
}

/* park__mutex_unlock_hinted: park__unpark(hinted_select, NULL). */
inline unlock_hinted(me)
{
    atomic {
        bucket == 0 -> drain(me); bucket = 1;
        if
        :: qlen > 0 -> w = q[0]; grant[w] = RETRY; unlink(w)
        :: else -> w = NONE
        fi;
        bucket = 0;
        if
        :: w != NONE -> woken[w] = 1; w = NONE
        :: else
        fi
    }
}

/* park_mutex_unlock */
inline unlock(me)
{
#ifdef CAS_UNLOCK
    atomic {
        drain(me);
        if
        :: state == L -> state = 0; s = 1 /* L -> 0 */
        :: else -> s = 0
        fi
    };
    if
    :: s == 1 -> s = 0
    :: else -> unlock_slow(me)
    fi
#else
    if
    :: FAST_UNLOCK(LOAD_STATE(me)) ->
        assert(!sb[me]);
#ifdef SC_UNLOCK
        state = 0;
#else
        d_step { sb[me] = 1; nsb++ }; /* L -> 0, into the store buffer */
#endif
        s = hint; /* may run before the store reaches memory */
#ifndef NO_HINT
        if
        :: s != 0 -> s = 0; unlock_hinted(me)
        :: else
        fi;
#endif
        s = 0
    :: else -> unlock_slow(me)
    fi
#endif
}

/* try_take, and the CAS of park_mutex_trylock: 0 -> L, P -> L|P|S. */
inline try_take(me)
{
    atomic {
        drain(me);
        if
        :: !(state & L) -> state = state | TAKE(state); got = 1
        :: else
        fi
    }
}

/* park__wait with lock_ops; the result in r. */
inline wait(me)
{
    atomic {
        bucket == 0 -> drain(me); bucket = 1;
        /* lock_validate */
        if
        :: !(state & L) -> r = INVALID; bucket = 0
        :: else ->
            covered = COVERS(state);
            if
            :: !(state & P) -> state = state | P /* L[|S] -> L|P[|S] */
            :: else
            fi;
            r = QUEUE
        fi
    };
    if
    :: r == INVALID
    :: else ->
        d_step { link_and_unlock(me, front) };
        /* thread_sleep: the spin's last look at woken */
        if
        :: woken[me] -> r = GRANTED
        :: else ->
            /* lock_before_sleep: a covered waiter (the holder it saw at
             * validate has S, so it unlocks through the bucket lock and
             * finds this waiter queued) sleeps at once; any other fences
             * and sleeps only if P is still set, otherwise it leaves the
             * queue as on a timeout and retries. */
#if defined(NO_MEMBARRIER) || defined(CAS_UNLOCK)
            r = SLEEP;
#else
            if
            :: TRUST_COVER && covered -> r = SLEEP
            :: else ->
                d_step { membarrier() };
                if
                :: LOAD_STATE(me) & P -> r = SLEEP
                :: else -> r = (woken[me] -> GRANTED : ABORTED)
                fi
            fi;
#endif
            if
            :: r == SLEEP ->
                if
                :: woken[me] -> r = GRANTED
                :: me == TIMED_PID -> expired = 1; r = (woken[me] -> GRANTED : TIMEDOUT)
                fi
            :: else
            fi
        fi;
        covered = 0;
        if
        :: r == TIMEDOUT || r == ABORTED ->
            /* park__wait_cancel */
            atomic {
                bucket == 0 -> drain(me); bucket = 1;
                if
                :: queued[me] ->
                    unlink(me);
                    /* lock_removed: P|c -> 0, L..|P|c -> L..
                     * (fetch_and ~(P|CREDITS)) */
                    if
                    :: qlen == 0 -> state = state & (L | S)
                    :: else
                    fi;
                    bucket = 0
                :: else -> bucket = 0; r = GRANTED /* the grant stands */
                fi
            };
            if
            :: r == GRANTED -> woken[me] == 1
            :: else
            fi
        :: else
        fi
    fi
}

/* The store buffers drain on their own, at any time. */
active proctype Memory()
{
    byte k;
end:
    do
    :: atomic {
           nsb > 0 -> k = 0;
           do
           :: sb[k] -> drain(k); k = 0; break
           :: else -> k++
           od
       }
    od
}

/* What the mutex is left as once everyone is done. */
active proctype Final()
{
    byte k;
end:
    atomic {
        done == NPROC ->
            d_step { k = 0; membarrier() };
            /* 0, or P|c left by recent contention (destroy accepts it,
             * nobody being queued); never L or S */
            assert((state & ~(P | CREDITS)) == 0 && (state == 0 || (state & P)) &&
                   qlen == 0 && hint == 0 && bucket == 0)
    }
}

active [NPROC] proctype Thread()
{
    byte me = _pid - 2; /* after Memory and Final */
    byte iter, s, r, w = NONE, k;
    bit got, covered, front, expired;

    do
    :: iter < ITERS ->
        if
        :: me != TIMED_PID ->
            atomic { /* park_mutex_lock: 0 -> L */
                drain(me);
                if
                :: state == 0 -> state = L; got = 1
                :: else
                fi
            }
        :: else -> try_take(me) /* park_mutex_lock_until: trylock */
        fi;
        /* lock_wait */
        do
        :: got -> break
        :: else ->
            try_take(me);
            if
            :: got -> break
            :: else
            fi;
            if /* the deadline may pass at any check */
            :: me == TIMED_PID && !expired -> expired = 1
            :: skip
            fi;
            if
            :: expired -> break /* ETIMEDOUT */
            :: else
            fi;
            wait(me);
            if
            :: r == GRANTED && grant[me] == HANDOFF -> got = 1
            :: r == GRANTED && grant[me] == RETRY -> front = 1
            :: r == TIMEDOUT -> r = 0; break /* ETIMEDOUT */
            :: else
            fi;
            r = 0
        od;
        front = 0;
        expired = 0;
        grant[me] = 0;
        if
        :: got ->
            d_step { cs++; assert(cs == 1) };
            cs--;
            got = 0;
            unlock(me)
        :: else
        fi;
        iter++
    :: else -> break
    od;
    done++
}
