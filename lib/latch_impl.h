/* lib/latch_impl.h: what lib/latch.c (the state machine of park_latch)
 * shares with its asynchronous waiting (lib/latch_async.c). Not to be
 * confused with lib/wait/latch.h, the runtime's internal one-shot latch. */
#ifndef PARK_LIB_LATCH_IMPL_H
#define PARK_LIB_LATCH_IMPL_H

#include <park/barrier.h>

#include "wait/wait.h"

/* What a waiter carries, thread or task (the ctx of the callbacks). */
struct park__latch_wait_ctx {
    park_latch_t *l;
};

/* The callbacks of a waiter's wait. */
extern const park__wait_ops_t park__latch_wait_ops;

/* Passes the latch of ctx, a struct park__latch_wait_ctx, if it is
 * released: true if it is. */
bool park__latch_wait_taken(void *ctx);

#endif /* PARK_LIB_LATCH_IMPL_H */
