/* lib/event_impl.h: what lib/event.c (the state machine) shares with its
 * asynchronous waiting (lib/event_async.c). */
#ifndef PARK_LIB_EVENT_IMPL_H
#define PARK_LIB_EVENT_IMPL_H

#include <park/event.h>

#include "wait/wait.h"

/* What a waiter carries, thread or task (the ctx of the callbacks). */
struct park__event_wait_ctx {
    park_event_t *e;
};

/* The callbacks of a waiter's wait. */
extern const park__wait_ops_t park__event_wait_ops;

/* Passes (auto: consumes) the set event of ctx, a struct
 * park__event_wait_ctx, if it is set: true if it did. */
bool park__event_wait_taken(void *ctx);

/* e is a manual-reset event. */
static inline bool park__event_manual(const park_event_t *e)
{
    /* relaxed: MANUAL never changes after initialisation. */
    return __atomic_load_n(&e->state_, __ATOMIC_RELAXED) & PARK__EVENT_MANUAL;
}

#endif /* PARK_LIB_EVENT_IMPL_H */
