/* tests/model/mutex.pml: park_mutex (lib/mutex.c, include/park/mutex.h)
 * and the part of lib/wait/queue.c it uses, for Spin. Run by check.sh.
 *
 * Properties:
 *   - mutual exclusion: the assert in the critical section;
 *   - no lost wake-up: a thread blocked on its `woken` flag once everything
 *     else has finished is an invalid end state (every run is finite, so
 *     this is also termination);
 *   - one woken waiter at a time owns W: whenever the woken waiter takes
 *     the lock, queues again or gives up, W is set (not checked with
 *     LOOSE_W, which LATE_WOKEN needs: there an unlock may wake another
 *     waiter beside a late one, and they share W);
 *   - the mutex is left clean: once every thread is done and the store
 *     buffers have drained, the word holds at most credits (recent
 *     contention), never L, S, P or W, the queue is empty and the hint 0
 *     (park_mutex_destroy would return 0).
 *
 * Modelled:
 *   - NPROC threads, each doing ITERS times: lock; critical section;
 *     unlock. With -DTIMED the last thread uses park_mutex_lock_until (a
 *     try_lock, then lock_wait with a deadline that may pass at any check or
 *     while asleep; once passed it stays passed).
 *   - The state word with L, P, S, W and the credits, exactly, except that
 *     the credits field holds 0 to 3 here (255 in mutex.h): refilled when a
 *     waiter queues or is woken, or, optionally, when a locker in lock_wait
 *     finds the word held (mutex.c: only below half and before it first
 *     queues; here at its start, or never), one spent by each unlock that finds
 *     nobody queued. Each CAS of mutex.c and mutex.h is one atomic step (a
 *     weak-CAS retry loop is one step too: it retries until the word it
 *     saw is the word it replaces). Taking a free word (try_take, try_lock)
 *     adds L, and S unless the word was 0 (PARK__MUTEX_TAKE); the woken
 *     waiter's take also clears W; the inline lock is the CAS 0 -> L.
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
 *   - The store unlock is taken only when the word is exactly L; any other
 *     unlock is slow: a lock-free CAS L|S|x -> x (a credit spent) when P is
 *     clear or W is set (with P clear, it then reads the hint as the store
 *     unlock does), else through the bucket lock.
 *   - The wait queue of the mutex's address: the bucket lock (a real lock:
 *     others run while it is held, in particular between validate and the
 *     hint increment of the same enqueue), the FIFO with front insertion,
 *     the hint (+1 at enqueue, -1 at dequeue, under the bucket lock), and
 *     per waiter queued, woken and grant.
 *   - park__wait: validate (free: INVALID, and the woken waiter keeps W;
 *     else covered = S as seen, L|x -> L|x|P|credits, and the woken waiter
 *     clears W); enqueue (at the back, or at the front after a lost
 *     retry); the spin on `woken` (one look: `woken` only goes 0 -> 1
 *     while the waiter is queued, so the spin's last look decides);
 *     before_sleep (covered: sleep; else membarrier, re-read the word,
 *     sleep only if P is set, otherwise leave as on a timeout); the sleep;
 *     the timeout; park__wait_cancel with removed(more) (the last waiter
 *     leaving clears P), and "grant beats timeout".
 *   - Bucket-locked unlock: grant the oldest waiter WOKEN or HANDOFF
 *     (chosen nondeterministically: park__wait_owed depends on the clock),
 *     then store credits|W (woken) or credits|L|S (handed over), with P if
 *     waiters remain; a queue found empty leaves only the credits. Wake
 *     after the bucket unlock. Hinted unlock: grant the oldest waiter RETRY
 *     (it does not own W) and leave the word alone.
 *   - The woken waiter whose deadline passes (pass_select): held: clear W;
 *     free: the oldest waiter becomes the woken waiter; none: clear W|P.
 *
 * Abstracted:
 *   - Spinning before parking: one try_take right before parking stands for
 *     the whole spin (any run of the loop is matched by one attempt at the
 *     time of its successful, or last, attempt).
 *   - Steps inside one bucket critical section that no other thread can
 *     tell apart are merged (the bucket-locked unlock, the hinted unlock,
 *     the pass and the cancel are one step each; validate and the enqueue
 *     are two, because the word and the hint are read without the bucket
 *     lock in between).
 *   - Other keys sharing the bucket or the hint slot: they only add hinted
 *     unparks that find no waiter of this mutex.
 *   - The futex: sleeping is blocking on woken[me]; spurious wake-ups and
 *     EINTR are absorbed by queue.c and not modelled.
 *   - membarrier(2) is one atomic flush of every store buffer (the kernel
 *     runs a full barrier on each CPU running a thread of the process).
 *   - The bucket lock's futex and CONTENDED state: a test-and-set lock.
 *   - Asynchronous waiters (tests/model/acquire.pml covers their grants).
 *
 * Switches (spin -D...):
 *   NO_MEMBARRIER  broken: before_sleep always says "sleep" (lost wake-up)
 *   NO_HINT        broken: the store unlock never reads the hint (lost
 *                  wake-up)
 *   HANDOFF_NO_L   broken: a hand-off stores S[|P] without L, so a barger
 *                  joins the new owner (mutual exclusion fails)
 *   COVER_BY_P     broken: validate also counts a P it found already set as
 *                  cover (a waiter behind a holder that took 0 -> L and may
 *                  still store-unlock skips the membarrier; lost wake-up)
 *   FAST_UNLOCK_S  broken: the store unlock also runs on L|S (it ignores
 *                  S), so a covered waiter's P can be erased after the last
 *                  waiter before it left (lost wake-up)
 *   NO_REMARK      broken: the woken waiter that loses queues again
 *                  without clearing W: unlocks keep waking nobody while
 *                  every waiter sleeps (lost wake-up; with LOOSE_W)
 *   TIMEOUT_KEEPS_W  broken: the woken waiter whose deadline passes leaves
 *                  W set (lost wake-up; with LOOSE_W and TIMED)
 *   PASS_NO_CHECK  broken: the woken waiter whose deadline passes clears W
 *                  even when the mutex is free, leaving waiters queued
 *                  behind a free mutex (lost wake-up; with TIMED)
 *   CAS_UNLOCK_NO_HINT  broken: the lock-free unlock that finds P clear
 *                  does not read the hint, so a P erased by an earlier
 *                  store unlock strands the waiters behind the one its
 *                  hinted wake-up woke (lost wake-up)
 *   NO_WOKEN_MARK  the waking unlock does not set W, so later unlocks wake
 *                  more waiters. Not broken: W only saves wake-ups (with
 *                  LOOSE_W; see check.sh)
 *   BARGER_CLEARS_W  any take clears W. Not broken either (with LOOSE_W)
 *   FORKED         lib/mutex.c in a child of fork(): W never holds back
 *                  the unlock that finds P (a W left by a thread the fork
 *                  left behind would otherwise never clear), so several
 *                  woken waiters may be in flight; the word starts with
 *                  such a W, owned by nobody. Not broken (with LOOSE_W)
 *   LATE_WOKEN     lib/mutex.c as it is: an unlock that finds P and W may
 *                  still wake the oldest waiter (the woken waiter is late
 *                  and the unlocking thread's unlocks are slow: timing,
 *                  modelled as a free choice), so several woken waiters
 *                  may be in flight; or take the bucket lock to look
 *                  whether a hand-off is owed (fair_look) and, if none
 *                  is, wake nobody. Not broken (with LOOSE_W)
 *   FORKED_NO_REPAIR  broken: the word starts with a W owned by nobody and
 *                  unlocks still trust it (lost wake-up; with LOOSE_W)
 *   LOOSE_W        drop the W checks (the woken waiter finds W set; no W
 *                  at the end) to look for their consequences instead
 *   NO_SLOW_BIT    a take adds L only, not S; covered is still read from
 *                  S, which only a hand-off then sets. Not broken: fewer
 *                  waiters are covered, so more of them fence (see
 *                  check.sh)
 *   SLEEP_CHECK_ALL  before_sleep fences and re-reads P before every
 *                  sleep, covered or not (stricter than lib/mutex.c)
 *   SC_UNLOCK      the unlock's store goes straight to memory (no TSO)
 *   CAS_UNLOCK     no membarrier(2): the unlock is the CAS L -> 0, and
 *                  before_sleep always says "sleep"
 *   ONE_CREDIT     refill the credits to 1, not 3 (they run out sooner)
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
#define W 8 /* PARK__MUTEX_WOKEN */
#define C 16 /* PARK__MUTEX_CREDIT */
#define CREDITS 48 /* the credits field: 0 to 3 credits here */
#ifdef ONE_CREDIT
#define REFILL C /* the refill: 1 credit, so that the credits run out */
#else
#define REFILL CREDITS /* the refill: 3 credits (all ones, as in mutex.c) */
#endif

/* What taking a free word s adds to it (PARK__MUTEX_TAKE). */
#ifdef NO_SLOW_BIT
#define TAKE(s) L
#else
#define TAKE(s) (L | ((s) != 0 -> S : 0))
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

/* The bits the woken waiter clears as it takes the lock or queues again. */
#ifdef NO_REMARK
#define REQUEUE_CLEARS 0
#else
#define REQUEUE_CLEARS W
#endif
#ifdef BARGER_CLEARS_W
#define BARGER_CLEARS W
#else
#define BARGER_CLEARS 0
#endif

/* The woken waiter's W is set whenever it looks (WASSERT), and no W is
 * left at the end (FINAL_W). LOOSE_W drops both checks, so that Spin looks
 * for what a broken W leads to (a lost wake-up) instead. */
#ifdef LOOSE_W
#define WASSERT skip
#define FINAL_W W
#else
#define WASSERT assert(state & W)
#define FINAL_W 0
#endif
#define NONE 255

/* w->grant */
#define WOKEN 0 /* woken to retry, as the one woken waiter (W is its) */
#define RETRY 1 /* woken to retry by a hinted unlock (W is not its) */
#define HANDOFF 2

/* park__wait's results (r), plus the intermediate QUEUE and SLEEP. */
#define INVALID 0
#define GRANTED 1
#define TIMEDOUT 2
#define ABORTED 3
#define QUEUE 4
#define SLEEP 5

#if defined(FORKED) || defined(FORKED_NO_REPAIR)
byte state = W;    /* the mutex word in memory: a W the fork left behind */
#else
byte state;        /* the mutex word in memory */
#endif
bit sb[NPROC];     /* store buffer: 1 = "state = 0" not yet in memory */
byte nsb;          /* how many sb[] are 1 */
byte hint;         /* *park__hint_of(m) */
bit bucket;        /* the bucket lock */
byte q[NPROC];     /* waiter ids, q[0] the oldest; unused slots 0 */
byte qlen;
bit queued[NPROC]; /* w->queued */
bit woken[NPROC];  /* w->woken */
byte grant[NPROC]; /* w->grant */
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

/* park__mutex_unlock_slow: the lock-free CAS (nobody queued, or a woken
 * waiter on its way), else park__unpark(unlock_select, unlock_finish),
 * then wake_granted. */
inline unlock_slow(me)
{
    atomic {
        drain(me);
        assert(state & L);
        s = 0;
#ifdef LATE_WOKEN
        if /* the woken waiter is late and this thread's unlocks are slow */
        :: s = 1
        :: skip
        fi;
#endif
        if
#ifdef FORKED
        :: (state & P) -> s = 1 /* to the bucket, W or not */
#else
        :: (state & P) && (!(state & W) || s == 1) -> s = 1 /* to the bucket */
#endif
        :: else ->
            /* L|S|x -> x, a credit spent if nobody is queued */
            s = state & ~(L | S);
            if
            :: !(state & P) && (s & CREDITS) -> s = s - C
            :: else
            fi;
            state = s;
            s = (state & P -> 0 : 2) /* 2: read the hint */
        fi
    };
    if
    :: s == 2 ->
#ifdef CAS_UNLOCK_NO_HINT
        s = 0
#else
        s = hint;
        if
        :: s != 0 -> s = 0; unlock_hinted(me)
        :: else -> s = 0
        fi
#endif
    :: else
    fi;
    if
    :: s == 1 ->
        atomic {
            bucket == 0 -> drain(me); bucket = 1;
            /* Only bucket-lock holders change the word now (P may have
             * gone with the last waiter's timeout; W cannot appear, but
             * may already be set in a child of fork() or beside a late
             * woken waiter). */
#if defined(FORKED) || defined(LATE_WOKEN)
            assert(state & L);
#else
            assert((state & L) && !(state & W));
#endif
            if
#if defined(LATE_WOKEN) && !defined(FORKED)
            :: qlen > 0 && (state & W) ->
                /* came for a hand-off that may be due (fair_look) and
                 * none is owed: nobody is woken */
                fairnone = 1;
                w = NONE
#endif
            :: qlen > 0 ->
                w = q[0];
                if /* unlock_select: park__wait_owed, or not */
                :: grant[w] = WOKEN
                :: grant[w] = HANDOFF
                fi;
                unlink(w)
            :: else -> w = NONE
            fi;
            /* unlock_finish */
            s = state & CREDITS;
            if
            :: w != NONE ->
                s = REFILL | (qlen > 0 -> P : 0);
                if
                :: grant[w] == HANDOFF ->
#ifdef HANDOFF_NO_L
                    s = s | S
#else
                    s = s | L | S
#endif
                :: else ->
#ifndef NO_WOKEN_MARK
                    s = s | W
#endif
                fi
            :: else
            fi;
            if
            :: fairnone -> s = state & ~(L | S); fairnone = 0 /* L|S|P|W|c -> P|W|c */
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
    :: else
    fi
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

/* try_take, and the CAS of park_mutex_try_lock: x -> x|L[|S]; the woken
 * waiter also clears W. */
inline try_take(me)
{
    atomic {
        drain(me);
        if
        :: !(state & L) ->
            s = state | TAKE(state);
            if
            :: mywoken -> WASSERT; s = s & ~REQUEUE_CLEARS; mywoken = 0
            :: else -> s = s & ~BARGER_CLEARS
            fi;
            state = s;
            s = 0;
            got = 1
        :: else
        fi
    }
}

/* The woken waiter's deadline passed (lock_wait): park__unpark(pass_select,
 * pass_finish): held: W goes; free: the oldest waiter becomes the woken
 * waiter; nobody queued: W and P go. */
inline pass_on(me)
{
    atomic {
        bucket == 0 -> drain(me); bucket = 1;
        WASSERT;
        if
        :: qlen > 0 && (state & L) ->
#ifndef TIMEOUT_KEEPS_W
            state = state & ~W;
#endif
            w = NONE
        :: qlen > 0 && !(state & L) ->
#ifdef PASS_NO_CHECK
            state = state & ~W;
            w = NONE
#else
            w = q[0];
            grant[w] = WOKEN;
            unlink(w)
#endif
        :: else ->
#ifndef TIMEOUT_KEEPS_W
            state = state & ~(W | P);
#endif
            w = NONE
        fi;
        bucket = 0;
        mywoken = 0;
        if
        :: w != NONE -> woken[w] = 1; w = NONE
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
            /* L|x -> L|x|P|credits, the woken waiter's W cleared */
            state = state | P | REFILL;
            if
            :: mywoken -> WASSERT; state = state & ~REQUEUE_CLEARS; mywoken = 0
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
                    /* lock_removed: x|P -> x (fetch_and ~P) */
                    if
                    :: qlen == 0 -> state = state & ~P
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
            /* 0, or credits left by recent contention (destroy accepts
             * them, nobody being queued); never L, S, P or W */
            assert((state & ~(CREDITS | FINAL_W)) == 0 && qlen == 0 && hint == 0 && bucket == 0)
    }
}

active [NPROC] proctype Thread()
{
    byte me = _pid - 2; /* after Memory and Final */
    byte iter, s, r, w = NONE, k;
    bit got, covered, front, expired, mywoken, fairnone;

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
        :: else -> try_take(me) /* park_mutex_lock_until: try_lock */
        fi;
        /* lock_wait: a held word's credits may be refilled (mutex.c: when
         * below half, once, before the locker first queues, after its dozes;
         * here whenever the word is held, or not at all, which covers
         * every case: the dozes themselves change nothing) */
        if
        :: !got ->
            atomic {
                drain(me);
                if
                :: state & L -> state = state | REFILL
                :: skip
                fi
            }
        :: else
        fi;
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
            :: expired ->
                if
                :: mywoken -> pass_on(me)
                :: else
                fi;
                break /* ETIMEDOUT */
            :: else
            fi;
            wait(me);
            if
            :: r == GRANTED && grant[me] == HANDOFF -> got = 1
            :: r == GRANTED && grant[me] == WOKEN -> front = 1; mywoken = 1
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
