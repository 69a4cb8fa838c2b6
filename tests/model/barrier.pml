/* tests/model/barrier.pml: the barrier of lib/barrier.c and, with -DLATCH,
 * the latch of lib/latch.c, with the part of lib/wait they use, for Spin.
 * Run by check.sh.
 *
 * Barrier. State word: L (arrivals left in this phase), E (arrivals per
 * phase from the next one on), W (waiters queued), P (the phase). NP
 * participants each take part in PHASES phases: an arrival is the CAS
 * L -> L-1 (drop: E -> E-1 too; -DDROP makes participant 0 drop in its
 * second phase and leave); the arrival that makes L 0 runs the
 * completion, then advances, by the CAS (0, E, P) -> (E, E, P+1) while W
 * is clear, or else, bucket locked (one atomic step), by granting every
 * queued waiter and storing the new word. Any other arrival waits for
 * its phase to end: validate (refused once P moved on; else W set) and
 * enqueue, bucket locked, then sleep until granted. With -DCANCEL the
 * last participant waits as a task in its last phase and may be
 * cancelled: it takes itself out under the bucket lock (clearing W if it
 * was the last) unless the advance dequeued it first; its arrival stays.
 *
 * Checked: phases never mix (the completion of phase k finds every
 * participant of k arrived and none gone on to k+1; nobody returns from
 * phase k before its completion ran), exactly one arrival per phase
 * completes it (the serial one), and no lost wake-up: every participant
 * finishes (one asleep forever is an invalid end state).
 *
 * Latch (-DLATCH). State word: C (count), W (waiters queued). NC counters
 * each count down by 1 (C starts at NC): the CAS C -> C-1 while W is
 * clear, or else, bucket locked, the decision (C-1 > 0: store it, W
 * kept; C-1 == 0: grant every waiter and store 0). NW waiters each wait
 * once (try_wait, then validate, refused on C == 0, and sleep); with
 * -DTIMED the first may give up, before queueing or queued (taking
 * itself out under the bucket lock unless a count_down granted it
 * first). Checked: no lost wake-up (every waiter without a deadline ends),
 * and a waiter returns 0 only once C is 0.
 *
 * Each bucket critical section is one atomic step; every other access to
 * the word is one atomic instruction of the code.
 *
 * Broken variants (must fail):
 *   NO_PHASE_CHECK   validate queues although the phase is over: the
 *                    waiter sleeps into the next phase, which waits for
 *                    its arrival (lost wake-up)
 *   BLIND_ADVANCE    the advance stores the next phase without looking
 *                    for W: the phase's waiters are never granted (lost
 *                    wake-up)
 *   RELEASE_FIRST    the advance releases the waiters before the
 *                    completion runs (ordering assertion)
 *   RESET_TO_COUNT   (DROP) the advance starts the next phase with the
 *                    initial count, not E: the phase after a drop waits
 *                    for an arrival that never comes (lost wake-up)
 *   CLEAR_W_ALWAYS   (CANCEL) a cancelled waiter clears W although others
 *                    remain queued: the advance takes the lock-free path
 *                    and grants nobody (lost wake-up)
 *   LATCH_NO_RECHECK (LATCH) validate queues without looking at C: a
 *                    waiter queues after the last count_down (lost
 *                    wake-up)
 *   LATCH_BLIND_DOWN (LATCH) the lock-free count_down ignores W and may
 *                    reach 0 without granting (lost wake-up) */

#ifndef NP
#define NP 3
#endif
#ifndef PHASES
#define PHASES 2
#endif
#ifndef NC
#define NC 2
#endif
#ifndef NW
#define NW 2
#endif

#define NONE 255

byte W = 0;
byte q[NP + NW]; /* the queue, oldest first */
byte qlen = 0;
bool grant[NP + NW];
byte finished = 0;

inline dequeue_at(i)
{
    k = i;
    do
    :: k + 1 < qlen -> q[k] = q[k + 1]; k++
    :: else -> break
    od;
    qlen--
}

inline grant_all()
{
    do
    :: qlen > 0 -> grant[q[0]] = 1; dequeue_at(0)
    :: else -> break
    od
}

/* park__wait_cancel of a queued waiter: true (res = 1) if it took it out */
inline leave(me, res)
{
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
        res = 1
    :: grant[me] -> res = 0 /* granted first: the grant stands */
    fi
}

#ifndef LATCH

byte L = NP;
byte E = NP;
byte P = 0;
byte arrived[PHASES + 1]; /* participants that arrived at phase k */
byte left[PHASES + 1];    /* participants that returned from phase k */
byte serial[PHASES + 1];
byte completed = 0; /* completions run */
byte members[PHASES + 1]; /* participants of phase k (drops counted) */

/* The completion function of the phase that just completed (L == 0). */
inline completion()
{
    atomic {
        assert(arrived[P] == members[P] && left[P] == 0);
        assert(arrived[P + 1] == 0);
        completed++
    }
}

/* The arrival that completed the phase: completion, then advance. */
inline complete_phase()
{
#ifndef RELEASE_FIRST
    completion();
#endif
    atomic {
#ifdef BLIND_ADVANCE
        if
        :: true ->
#else
        if
        :: !W ->
#endif
#ifdef RESET_TO_COUNT
            L = NP;
#else
            L = E;
#endif
            P++;
            slow = 0
        :: else -> slow = 1
        fi
    };
    if
    :: slow ->
        atomic { /* bucket locked: advance_select, advance_finish */
            grant_all();
            W = 0;
#ifdef RESET_TO_COUNT
            L = NP;
#else
            L = E;
#endif
            P++
        }
    :: else
    fi
#ifdef RELEASE_FIRST
    ;
    completion()
#endif
}

proctype Participant(byte me)
{
    byte k, mine, ph;
    bool last, slow, ok, drop, cancelled, res;
    for (ph : 0 .. PHASES - 1) {
#ifdef DROP
        drop = me == 0 && ph == 1;
#endif
        atomic { /* the arrival's CAS */
            assert(L > 0);
            arrived[P]++;
            mine = P;
            L--;
            if
            :: drop -> E--
            :: else
            fi;
            last = L == 0
        };
        if
        :: last ->
            complete_phase();
            serial[mine]++
        :: else ->
            if
            :: drop -> skip /* leaves without waiting */
            :: else ->
                atomic { /* validate and enqueue, bucket locked */
#ifndef NO_PHASE_CHECK
                    if
                    :: P == mine ->
#endif
                        W = 1;
                        q[qlen] = me;
                        qlen++;
                        ok = 1
#ifndef NO_PHASE_CHECK
                    :: else -> ok = 0 /* the phase is over */
                    fi
#endif
                };
                if
                :: ok ->
                    if
                    :: grant[me] -> grant[me] = 0
#ifdef CANCEL
                    :: me == NP - 1 && ph == PHASES - 1 && !grant[me] ->
                        atomic { leave(me, res) };
                        cancelled = res;
                        grant[me] = 0
#endif
                    fi
                :: else
                fi
            fi
        fi;
        if
        :: drop -> break
        :: else
        fi;
        /* released: the completion of its phase has run (a cancelled
         * task stopped waiting: its arrival stays, it learns nothing) */
        if
        :: !cancelled ->
            assert(completed > mine);
            left[mine]++
        :: else
        fi
    }
    finished++
}

init
{
    byte i;
    atomic {
        for (i : 0 .. PHASES) {
            members[i] = NP
        }
#ifdef DROP
        for (i : 2 .. PHASES) {
            members[i] = NP - 1
        }
#endif
        for (i : 0 .. NP - 1) {
            run Participant(i)
        }
    }
    (finished == NP);
    for (i : 0 .. PHASES - 1) {
        assert(serial[i] == 1)
    }
    assert(completed == PHASES && qlen == 0)
}

#else /* LATCH */

#ifdef TIMED
#define TIMED_ID 0
#else
#define TIMED_ID NONE
#endif

byte C = NC;

proctype Counter()
{
    byte k;
    bool slow;
    atomic { /* the inline count_down: C -> C-1 while W is clear */
        if
#ifdef LATCH_BLIND_DOWN
        :: true -> C--; slow = 0
#else
        :: !W -> assert(C > 0); C--; slow = 0
#endif
        :: else -> slow = 1
        fi
    };
    if
    :: slow ->
        atomic { /* bucket locked: down_decide, then the store */
            if
            :: qlen > 0 ->
                assert(W && C > 0);
                C--;
                if
                :: C == 0 -> grant_all(); W = 0
                :: else
                fi
            :: else -> /* the waiters left before the lock */
                C--;
                W = 0
            fi
        }
    :: else
    fi;
    finished++
}

proctype Waiter(byte me)
{
    byte k;
    bool ok, res, timed_out = 0;
    do
    :: atomic { ok = C == 0 }; /* park_latch_try_wait */
        if
        :: ok -> break
        :: else
        fi;
        if
        :: me == TIMED_ID -> timed_out = 1; break /* the deadline passed */
        :: true
        fi;
        atomic { /* validate and enqueue, bucket locked */
#ifndef LATCH_NO_RECHECK
            if
            :: C > 0 ->
#endif
                W = 1;
                q[qlen] = me;
                qlen++;
                ok = 1
#ifndef LATCH_NO_RECHECK
            :: else -> ok = 0
            fi
#endif
        };
        if
        :: ok ->
            if
            :: grant[me] -> grant[me] = 0; break
            :: me == TIMED_ID && !grant[me] ->
                atomic { leave(me, res) };
                timed_out = res;
                grant[me] = 0;
                break
            fi
        :: else /* released before we were queued */
        fi
    od;
    assert(timed_out || C == 0);
    finished++
}

init
{
    byte i;
    atomic {
        for (i : 0 .. NW - 1) {
            run Waiter(i)
        }
        for (i : 1 .. NC) {
            run Counter()
        }
    }
    (finished == NW + NC);
    assert(C == 0 && W == 0 && qlen == 0)
}

#endif /* LATCH */
