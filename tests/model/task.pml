/* tests/model/task.pml: a task's completion (lib/task/task.c) and its done
 * latch (lib/wait/latch.c), for Spin. Run by check.sh.
 *
 * Modelled: two completers racing, park_task_complete(t, 0) and
 * park_task_cancel(t) (a plain task: park__task_complete(t, ECANCELED)),
 * and REGS threads that each register a continuation (park_task_then) and
 * then wait for the task (park_task_wait), and the pool that runs the
 * scheduled continuations, each later than it was scheduled.
 *   - claimed: a plain look, then the exchange 0 -> 1; the winner writes
 *     err, sets the latch, then takes the list by the exchange
 *     list -> CLOSED and schedules each node; the loser waits for the
 *     latch (lost(): spin, then park__latch_wait) and returns EALREADY;
 *   - the list: a registration's load and CAS loop is one step (it retries
 *     until the head it read is the head it replaces): it pushes its node,
 *     or finds CLOSED and schedules the node itself;
 *   - the latch: set is one exchange (any -> SET), then, if it was
 *     WAITERS, every waiter granted under the bucket lock; wait looks,
 *     then validate (SET: do not queue; 0 -> WAITERS) and enqueue as one
 *     bucket-locked step, then sleeps until granted;
 *   - references: each completer and each registering thread holds one
 *     from the start and drops it at its end; each continuation node takes
 *     one at park_task_then and drops it after it has run (cont_job); the
 *     last drop frees the task.
 * Every store is sequentially consistent here (the release/acquire pairs
 * of task.c order exactly these steps).
 *
 * Checked:
 *   - exactly one completer wins (0), the other gets EALREADY, and only
 *     once the winner's outcome (done, err) is visible;
 *   - every continuation runs exactly once, after done is set, and sees
 *     the winner's err; every waiter wakes and sees it;
 *   - nothing touches the task once it is freed, and it is freed once;
 *   - no lost wake-up: every thread finishes (invalid end state if not).
 *
 * Broken variants (must fail):
 *   CLOSE_FIRST      the winner closes the list before setting done: a
 *                    continuation that finds CLOSED runs before the
 *                    outcome is visible (assertion)
 *   SPLIT_CLOSE      the winner reads the list, then stores CLOSED (two
 *                    steps, not one exchange): a node pushed in between
 *                    is never scheduled (assertion: a continuation lost)
 *   LOSER_NO_WAIT    the loser returns EALREADY without waiting for done:
 *                    its caller may not see the outcome (assertion)
 *   LATCH_NO_RECHECK the latch's validate queues without looking for SET
 *                    again: a waiter that queues after the set sleeps
 *                    forever (lost wake-up) */

#ifndef REGS
#define REGS 2
#endif

#define NONE 255
#define OK 0
#define ECANCELED 1
#define EALREADY 2

#define LW 1  /* PARK__LATCH_WAITERS */
#define SET 2 /* PARK__LATCH_SET (values as names only) */

bool claimed = 0;
byte err = NONE;      /* the winner's outcome, NONE until written */
byte latch = 0;       /* 0, LW, SET */
bool lq[REGS + 2];    /* queued on the latch: waiting for its grant */
bool lgrant[REGS + 2];
byte listed = 0;      /* nodes on the list (bit per continuation) */
bool closed = 0;      /* the list is CLOSED */
byte sched = 0;       /* nodes scheduled to the pool, not yet run */
byte ran[REGS];       /* runs of each continuation */
byte refs = 2 + REGS; /* every thread holds one */
byte freed = 0;
byte wins = 0;
byte finished = 0;

inline alive()
{
    assert(freed == 0)
}

inline drop_ref()
{
    atomic {
        alive();
        refs--;
        if
        :: refs == 0 -> freed++
        :: else
        fi
    }
}

/* park__latch_wait(FOREVER): thread `me` sleeps until the latch is set. */
inline latch_wait()
{
    if
    :: atomic { latch == SET -> alive() }
    :: else ->
        atomic { /* validate and enqueue, bucket locked */
            alive();
            if
#ifndef LATCH_NO_RECHECK
            :: latch == SET -> skip
            :: else -> latch = LW; lq[me] = 1
#else
            :: latch == SET -> lq[me] = 1 /* queues on what it saw before */
            :: else -> latch = LW; lq[me] = 1
#endif
            fi
        };
        if
        :: lq[me] -> lgrant[me]; lgrant[me] = 0 /* asleep until granted */
        :: else
        fi
    fi
}

/* park__latch_set: exchange, then unpark_all if it was LW. */
inline latch_set()
{
    atomic { alive(); old = latch; latch = SET };
    if
    :: old == LW ->
        atomic {
            for (k : 0 .. REGS + 1) {
                if
                :: lq[k] -> lq[k] = 0; lgrant[k] = 1
                :: else
                fi
            }
        }
    :: else
    fi
}

/* The winner takes the list and closes it. */
inline close_list()
{
#ifdef SPLIT_CLOSE
    atomic { alive(); list = listed };
    atomic { closed = 1; listed = 0 };
#else
    atomic { alive(); list = listed; closed = 1; listed = 0 };
#endif
    atomic { sched = sched | list }
}

/* park__task_complete(t, e): ret is 0 or EALREADY. */
inline complete(e)
{
    atomic {
        alive();
        if
        :: claimed -> won = 0 /* the plain look */
        :: else -> won = 1
        fi
    };
    if
    :: won -> atomic { won = !claimed; claimed = 1 } /* the exchange */
    :: else
    fi;
    if
    :: won ->
        atomic { wins++; err = e };
#ifdef CLOSE_FIRST
        close_list();
        latch_set();
#else
        latch_set();
        close_list();
#endif
        ret = OK
    :: else -> /* lost(): wait for the winner's outcome */
#ifndef LOSER_NO_WAIT
        latch_wait();
#endif
        ret = EALREADY
    fi
}

proctype Completer(byte me; byte e)
{
    bool won;
    byte ret, old, k, list;
    complete(e);
    if
    :: ret == EALREADY -> assert(latch == SET && err != NONE && err != e)
    :: else -> assert(ret == OK && err == e)
    fi;
    drop_ref();
    finished++
}

/* park_task_then, then park_task_wait. */
proctype Registrar(byte me; byte c)
{
    byte k;
    atomic { alive(); refs++ }; /* cont_new: the node's reference */
    atomic { /* attach */
        alive();
        if
        :: closed -> sched = sched | (1 << c)
        :: else -> listed = listed | (1 << c)
        fi
    };
    latch_wait();
    assert(latch == SET && err != NONE);
    drop_ref();
    finished++
}

/* The pool: runs each scheduled node (cont_job: run, then drop the
 * node's reference). */
active proctype Pool()
{
    byte c;
end_pool:
    do
    :: atomic {
            sched != 0 ->
            c = 0;
            do
            :: sched & (1 << c) -> break
            :: else -> c++
            od;
            sched = sched & ~(1 << c);
            alive();
            /* the continuation sees the outcome */
            assert(latch == SET && err != NONE);
            ran[c]++;
            refs--;
            if
            :: refs == 0 -> freed++
            :: else
            fi
        }
    od
}

init
{
    byte i;
    atomic {
        run Completer(0, OK);
        run Completer(1, ECANCELED);
        for (i : 0 .. REGS - 1) {
            run Registrar(2 + i, i)
        }
    }
    (finished == 2 + REGS && sched == 0);
    assert(wins == 1 && freed == 1 && refs == 0);
    for (i : 0 .. REGS - 1) {
        assert(ran[i] == 1)
    }
}
