/* lib/cond_impl.h: the condition variable's steps, for park_cond_wait
 * (lib/cond.c) and for the drop-in's pthread_cond_* (lib/preload/cond.c),
 * which releases and retakes a pthread mutex of any type around them and
 * runs its sleep as a cancellation point.
 *
 * A wait is: park__cond_enqueue; release the mutex; park__cond_sleep (or,
 * cancelled in the sleep, park__cond_cancelled); take the mutex back; then
 * wake park__cond_next(w), the next waiter of a broadcast, if there is
 * one, when it next releases the mutex (the drop-in does, so that the next
 * waiter finds it free). park_cond_wait's waiters go further: they are
 * moved onto the mutex itself (lib/cond.c, wait morphing). */
#ifndef PARK_LIB_COND_IMPL_H
#define PARK_LIB_COND_IMPL_H

#include <park/cond.h>

#include "wait/wait.h"

/* w->grant of a waiter once it is back from its sleep: none (timed out or
 * cancelled while queued), a signal, the last waiter a broadcast took, or
 * else the address of the waiter the broadcast took after it. Small values
 * no waiter's address can take. */
#define PARK__COND_GRANT_NONE 0u
#define PARK__COND_GRANT_SIGNAL 1u
#define PARK__COND_GRANT_LAST 2u

/* Makes *w a fresh waiter and queues it on c. */
void park__cond_enqueue(park_cond_t *c, park__waiter_t *w);

/* Sleeps until a signal or broadcast takes w (0) or the deadline passes
 * with w still queued (ETIMEDOUT: w left the queue and took nothing).
 * flags: park__wait_sleep's (PARK__WAIT_REALTIME, PARK__WAIT_CANCEL). */
int park__cond_sleep(park_cond_t *c, park__waiter_t *w, unsigned flags, park_time_t deadline);

/* For a waiter cancelled in its sleep (PARK__WAIT_CANCEL): leaves the
 * queue, or, if a signal or broadcast took w first, waits for its wake; a
 * signal it was taken for goes to the next waiter (a cancelled waiter
 * consumes no signal). Then park__cond_next(w) is still owed its wake. */
void park__cond_cancelled(park_cond_t *c, park__waiter_t *w);

/* The waiter a broadcast took after w, which waits for w to wake it with
 * park__wake once w holds the mutex again; NULL if none. */
static inline park__waiter_t *park__cond_next(const park__waiter_t *w)
{
    return w->grant > PARK__COND_GRANT_LAST ? (park__waiter_t *)w->grant : NULL;
}

#endif /* PARK_LIB_COND_IMPL_H */
