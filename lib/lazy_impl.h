/* lib/lazy_impl.h: what lib/lazy.c (the state machine) shares with its
 * asynchronous side (lib/lazy_async.c), and what white-box tests may see
 * of it. */
#ifndef PARK_LIB_LAZY_IMPL_H
#define PARK_LIB_LAZY_IMPL_H

#include <stdatomic.h>
#include <stdint.h>

#include <park/lazy.h>

#include "wait/wait.h"

/* The adaptive yield budget of every lazy and once waiter in the process
 * (lib/wait's w->adapt; see park__lazy_wait_for_run in lib/lazy.c). */
extern _Atomic uint8_t park__lazy_yields;

/* What a waiter carries, thread or task (the ctx of the callbacks). */
struct park__lazy_queue_ctx {
    uint32_t *state;
    park_lazy_t *l; /* a task's: whose value its grant returns */
    void *value;    /* a task's: that value, copied as the run ends */
};

/* The callbacks of a caller queued behind a run. */
extern const park__wait_ops_t park__lazy_queue_ops;

/* start: 0 -> RUNNING: true if the caller became the runner. */
bool park__lazy_start(uint32_t *state);

/* Runs l's initialiser on this thread (the caller made 0 -> RUNNING) and
 * ends the run: the initialiser's error; *value its value (NULL if it
 * failed). */
int park__lazy_run(park_lazy_t *l, void **value);

/* Publishes a success or rolls a failure back, then tells the queued
 * callers: the end of the run of state, by its runner. */
void park__lazy_end_run(uint32_t *state, int err);

/* The calling thread is inside the initialiser of the run of state. */
bool park__lazy_running_here(const uint32_t *state);

/* The caller found a run in progress. true: *result is the run's result,
 * EDEADLK or ETIMEDOUT; false: the run ended before the caller was queued,
 * look at the word again. */
bool park__lazy_wait_for_run(uint32_t *state, park_time_t deadline, int *result);

/* The blocking get of an asynchronous lazy (lib/lazy_async.c): waits for
 * the run in progress, or starts one and waits for its own acquisition of
 * it. */
park__lazy_result_t park__lazy_factory_get(park_lazy_t *l, park_time_t deadline);

#endif /* PARK_LIB_LAZY_IMPL_H */
