/* tests/model/lazy.pml: the state machine of park_lazy and park_once
 * (lib/lazy.c) and the part of lib/wait it uses, for Spin. Run by check.sh.
 *
 * State word: 0 (idle), R (running), R|W (running, callers queued), D
 * (READY, final). NPROC threads each call obtain once: a thread that
 * finds the word idle starts a run (0 -> R, CAS) and runs the initialiser,
 * which succeeds or fails (nondeterministically, at most FAILS failures in
 * all); the run ends by the CAS R -> D (or R -> 0), or, when that CAS
 * fails on W, under the bucket lock: every queued caller granted the run's
 * result, then the store R|W -> D (or 0). A thread that finds a run in
 * progress queues behind it (validate: R -> R|W, bucket locked, only while
 * R is set), and sleeps until granted; with -DTIMED the last thread may
 * give up at any point of its wait (before queueing, or queued: it takes
 * itself out under the bucket lock, clearing W if it was the last).
 * Spinning is abstracted (one look).
 *
 * With -DREENTRY the first run's initialiser calls obtain on the same
 * object: it must get EDEADLK (running_here), not wait for itself.
 *
 * Each bucket critical section is one atomic step (the validate and the
 * enqueue; the grants and the end store; a timeout's removal); every other
 * access to the word is one atomic instruction of lib/lazy.c, and only
 * the runner moves the word out of R.
 *
 * Checked:
 *   - runs never overlap, and at most one run succeeds (exactly once);
 *   - a caller that returns 0 finds the value published (D); a queued
 *     caller's grant is the result of the run it queued behind;
 *   - no lost wake-up: every thread finishes (a caller asleep forever is
 *     an invalid end state), and the word ends as D or 0, never R or W.
 *
 * Broken variants (must fail):
 *   NO_RECHECK    validate queues without checking that the run is still
 *                 in progress (the run ended between the caller's look and
 *                 the bucket lock): nobody grants it (lost wake-up)
 *   BLIND_END     the run ends by a plain store of D or 0, never looking
 *                 for W: the queued callers are never granted (lost
 *                 wake-up)
 *   NO_REENTRY    (with REENTRY) no running_here check: the initialiser
 *                 waits for its own run (lost wake-up: a deadlock) */

#ifndef NPROC
#define NPROC 3
#endif
#ifndef FAILS
#define FAILS 1
#endif
#ifdef TIMED
#define TIMED_PID (NPROC - 1)
#else
#define TIMED_PID NPROC
#endif

#define R 1 /* PARK__LAZY_RUNNING */
#define W 2 /* PARK__LAZY_WAITERS */
#define D 4 /* PARK__LAZY_READY */

#define OK 0
#define EFAIL 1    /* the initialiser's error */
#define EDEADLK 2
#define ETIMEDOUT 3
#define NONE 255

byte state = 0;
byte running = 0;   /* initialisers running now */
byte successes = 0; /* runs that succeeded */
byte fails = 0;     /* runs that failed */
byte run_id = 0;    /* the run in progress (1, 2, ...), 0 if none */
byte runner = NONE; /* the thread running the initialiser */
bool queued[NPROC];
byte nqueued = 0;
byte grant[NPROC];   /* NONE until granted: the run's result */
byte waitrun[NPROC]; /* the run a queued caller waits for */
byte finished = 0;

/* end_run: R -> to by CAS, else (W set) grant every queued caller under
 * the bucket lock and store to. */
inline end_run(err)
{
    atomic {
        running--;
        runner = NONE;
        if
        :: err == OK -> to = D; successes++
        :: else -> to = 0; fails++
        fi;
#ifdef BLIND_END
        state = to;
        run_id = 0
#else
        if
        :: state == R -> state = to; run_id = 0
        :: else ->
            assert(state == R | W);
            /* park__unpark(grant_result, store_end): grants all */
            for (k : 0 .. NPROC - 1) {
                if
                :: queued[k] ->
                    assert(waitrun[k] == run_id);
                    queued[k] = 0; nqueued--; grant[k] = err
                :: else
                fi
            }
            state = to;
            run_id = 0
        fi
#endif
    }
}

/* The initialiser: succeeds, or fails while failures remain. */
inline initialise(err)
{
    if
    :: err = OK
    :: fails < FAILS -> err = EFAIL
    fi
}

/* wait_for_run(): the caller found a run in progress. s = 1 if res is
 * its result, s = 0 to look at the word again. */
inline wait_for_run()
{
    if
    :: !(s & R) -> s = 0; goto waited /* C: it returns false */
    :: else
    fi;
#ifndef NO_REENTRY
    if
    :: runner == me -> res = EDEADLK; s = 1; goto waited
    :: else
    fi;
#endif
    if
    :: me == TIMED_PID -> res = ETIMEDOUT; s = 1; goto waited
    :: true
    fi;
    atomic { /* park__wait: queue_validate and enqueue, bucket locked */
#ifndef NO_RECHECK
        if
        :: state & R ->
#endif
            state = state | W;
            queued[me] = 1; nqueued++; waitrun[me] = run_id;
            grant[me] = NONE; s = 1
#ifndef NO_RECHECK
        :: else -> s = 0 /* the run ended before we were queued */
        fi
#endif
    };
    if
    :: s == 1 ->
        if
        :: grant[me] != NONE -> res = grant[me]; grant[me] = NONE
        :: me == TIMED_PID -> /* the deadline passed */
            atomic {
                if
                :: queued[me] -> /* park__wait_cancel: removed(more) */
                    queued[me] = 0; nqueued--;
                    if
                    :: nqueued == 0 -> state = state & ~W
                    :: else
                    fi;
                    res = ETIMEDOUT
                :: else -> /* granted first: the grant stands */
                    res = grant[me]; grant[me] = NONE
                fi
            }
        fi
    :: else
    fi;
waited:
    skip
}

proctype Thread(byte me)
{
    byte s, to, k, err, res = NONE;
    /* obtain() */
    do
    :: atomic { s = state };
        if
        :: s & D -> res = OK; break
        :: s == 0 ->
            atomic {
                if
                :: state == 0 -> /* start: 0 -> R */
                    state = R; running++; run_id++; runner = me;
                    assert(running == 1); s = 1
                :: else -> s = 0
                fi
            };
            if
            :: s == 1 ->
                /* run(): the initialiser, on this thread */
#ifdef REENTRY
                if
                :: run_id == 1 -> /* it calls obtain on its own object */
                    s = state;
                    assert(s & R);
                    wait_for_run();
                    assert(s == 1 && res == EDEADLK)
                :: else
                fi;
#endif
                initialise(err);
                end_run(err);
                res = err;
                break
            :: else
            fi
        :: else -> /* s & R */
            wait_for_run();
            if
            :: s == 1 -> break
            :: else
            fi
        fi
    od;
    if
    :: res == OK -> assert((state & D) && successes == 1)
    :: else
    fi;
    assert(successes <= 1);
    finished++
}

init
{
    byte i;
    atomic {
        for (i : 0 .. NPROC - 1) {
            run Thread(i)
        }
    }
    (finished == NPROC);
    assert(nqueued == 0 && (state == D || state == 0));
    assert(successes <= 1 && running == 0)
}
