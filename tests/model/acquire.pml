/* tests/model/acquire.pml: an asynchronous acquisition (lib/async.c, a
 * task of lib/task/task.c) racing its grant, its cancellation, a
 * deadline and the drops of its references, on a semaphore that receives
 * one permit.
 *
 * Modelled: the waiter's place in the queue (`queued`, changed only under
 * the bucket lock: atomic steps here), the exchange on acq_state between
 * the granter's notify and a drop (acq_abandon), the claim of a completion
 * and its latch, the references (holders' count, the timer's internal one,
 * the queue's hold) and the `observed` flag. Not modelled: memory order
 * (the code uses acq_rel exchanges and seq_cst where it matters), and more
 * than one waiter (the queue's FIFO order is lib/wait's, checked by the
 * unit tests).
 *
 * Checked: the one permit is never lost or duplicated (at the end it is
 * back in the count, whoever held it), the task is freed exactly once and
 * never touched after, and nobody blocks forever. Switches:
 *   TIMER        a deadline fires (park__task_cancel with ETIMEDOUT, an
 *                internal reference)
 *   TWO_HOLDERS  a second holder drops its reference concurrently
 * Broken variants, which must fail:
 *   NO_OBSERVE_ON_EALREADY  a cancel that lost to the grant does not count
 *                as having seen the outcome: the permit goes back twice
 *   RACY_RELEASE            "am I the last holder?" is a load and then a
 *                decrement, not one CAS: two dropping holders both miss
 *                it and the permit granted later is lost */

#define QUEUED 0
#define GRANTED 1
#define CANCELLED 2
#define ABANDONED 3

#define OK 0
#define ECANCELED 1
#define ETIMEDOUT 2
#define EALREADY 3

byte permits = 0;  /* the semaphore's count */
bool queued = 1;   /* the acquisition's waiter is in the queue */
byte acq = QUEUED; /* acq_state */
#ifdef TWO_HOLDERS
byte users = 2;
#else
byte users = 1;
#endif
bool hold = 1; /* the queue's hold */
#ifdef TIMER
bool internal = 1; /* the timer's reference */
#else
bool internal = 0;
#endif
bool observed = 0;
bool claimed = 0;
bool done = 0;
byte err = OK;
byte freed = 0;
byte finished = 0;

inline alive()
{
    assert(freed == 0)
}

/* park__task_complete: the claim decides; a loser returns once the
 * winner's outcome is published. */
inline complete(e)
{
    alive();
    atomic {
        if
        :: !claimed -> claimed = 1; won = 1
        :: else -> won = 0
        fi
    }
    if
    :: won -> err = e; done = 1
    :: else -> (done)
    fi
}

inline drop_hold()
{
    atomic {
        alive();
        hold = 0;
        if
        :: users == 0 && !internal -> freed++
        :: else
        fi
    }
}

/* acq_remove: park__wait_cancel under the bucket lock. */
inline acq_remove()
{
    atomic {
        alive();
        if
        :: queued -> queued = 0; removed = 1; acq = CANCELLED
        :: else -> removed = 0
        fi
    }
}

/* acq_cancel: 0 or EALREADY in r. */
inline acq_cancel(e)
{
    acq_remove();
    if
    :: removed -> complete(e); drop_hold(); r = OK
    :: else -> r = EALREADY
    fi
}

inline abandon()
{
    acq_remove();
    if
    :: removed -> complete(ECANCELED); drop_hold()
    :: else ->
        atomic { alive(); old = acq; acq = ABANDONED };
        if
        :: old == GRANTED -> permits++ /* give_back */
        :: else
        fi
    fi
}

/* park_task_release by a holder. */
inline release_holder()
{
    alive();
#ifdef RACY_RELEASE
    if
    :: users == 1 -> last = 1
    :: else -> last = 0
    fi;
    if
    :: !last -> atomic { users--; if :: users == 0 && !hold && !internal -> freed++ :: else fi }
    :: else
    fi;
#else
    atomic {
        if
        :: users == 1 -> last = 1
        :: else -> users--; last = 0
        fi
    }
#endif
    if
    :: last ->
        if
        :: !observed -> abandon()
        :: else
        fi;
        atomic { alive(); users--; if :: users == 0 && !hold && !internal -> freed++ :: else fi }
    :: else
    fi
}

/* A release of one permit: granted to the queued waiter, else counted;
 * then (bucket lock released) the waiter's notify. */
active proctype Releaser()
{
    bool grant, won;
    byte old;
    atomic {
        if
        :: queued -> queued = 0; grant = 1
        :: else -> permits++; grant = 0
        fi
    }
    if
    :: grant ->
        atomic { alive(); old = acq; acq = GRANTED };
        if
        :: old == ABANDONED -> permits++ /* give_back */
        :: else -> complete(OK)
        fi;
        drop_hold()
    :: else
    fi;
    finished++
}

/* The caller: waits for the outcome, cancels, or drops the task unseen;
 * a grant it has seen is its permit, which it releases. */
active proctype Holder()
{
    bool won, removed, last;
    byte r, old;
    if
    :: (done) -> alive(); observed = 1;
        if
        :: err == OK -> permits++
        :: else
        fi
    :: acq_cancel(ECANCELED);
        if
        :: r == EALREADY ->
#ifndef NO_OBSERVE_ON_EALREADY
            observed = 1;
#endif
            (done);
            alive();
            if
            :: err == OK -> permits++
            :: else
            fi
        :: else
        fi
    :: skip /* dropped unseen */
    fi;
    release_holder();
    finished++
}

#ifdef TWO_HOLDERS
/* A second reference (a retained copy) dropped without looking. */
active proctype Other()
{
    bool won, removed, last;
    byte old;
    release_holder();
    finished++
}
#define OTHERS 1
#else
#define OTHERS 0
#endif

#ifdef TIMER
/* The deadline: park__task_cancel(t, ETIMEDOUT), then the timer's
 * internal reference goes. */
active proctype Timer()
{
    bool won, removed;
    byte r;
    acq_cancel(ETIMEDOUT);
    atomic { alive(); internal = 0; if :: users == 0 && !hold -> freed++ :: else fi };
    finished++
}
#define TIMERS 1
#else
#define TIMERS 0
#endif

active proctype Check()
{
    (finished == 2 + OTHERS + TIMERS);
    assert(permits == 1);
    assert(freed == 1)
}
