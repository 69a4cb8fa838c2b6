/* lib/barrier_impl.h: what lib/barrier.c (the state machine) shares with
 * its asynchronous arrival (lib/barrier_async.c). */
#ifndef PARK_LIB_BARRIER_IMPL_H
#define PARK_LIB_BARRIER_IMPL_H

#include <park/barrier.h>

#include "wait/wait.h"

/* w->grant of a granted waiter; an asynchronous arrival that completed
 * the phase is granted SERIAL by itself (park__acq_grant_now). */
enum { PARK__BARRIER_GRANT_RELEASED = 0, PARK__BARRIER_GRANT_SERIAL = 1 };

/* What a waiter carries, thread or task (the ctx of the callbacks). */
struct park__barrier_phase_ctx {
    park_barrier_t *b;
    uint32_t phase; /* the phase it arrived at */
};

/* The callbacks of a wait for the end of a phase. */
extern const park__wait_ops_t park__barrier_phase_ops;

/* The phase P of the word v. */
static inline uint32_t park__barrier_phase_of(uint64_t v)
{
    return (uint32_t)(v >> PARK__BARRIER_PHASE_SHIFT);
}

/* Arrives (drop: and leaves) at the current phase: true if this arrival
 * completed it; *seen is the word it arrived at. `call` names the public
 * function for a misuse report. */
bool park__barrier_arrive(park_barrier_t *b, bool drop, const char *call, uint64_t *seen);

/* Arrives only if this arrival completes the phase (one arrival was left):
 * true if it did; false if it did not arrive. */
bool park__barrier_try_arrive_last(park_barrier_t *b);

/* By the arrival that completed the phase: runs the completion function,
 * then starts the next phase, releasing the waiters. */
void park__barrier_complete_phase(park_barrier_t *b);

#endif /* PARK_LIB_BARRIER_IMPL_H */
