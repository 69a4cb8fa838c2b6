/* lib/mutex_impl.h: what lib/mutex.c (the state machine) shares with its
 * asynchronous acquisition (lib/mutex_async.c) and offers the other
 * primitives. */
#ifndef PARK_LIB_MUTEX_IMPL_H
#define PARK_LIB_MUTEX_IMPL_H

#include <park/mutex.h>

#include "wait/wait.h"

/* What a waiter carries, thread or task (the ctx of the callbacks). */
struct park__mutex_lock_ctx {
    park_mutex_t *m;
    bool covered; /* the holder seen at validate unlocks slowly (SLOW_UNLOCK) */
    bool woken;   /* we are the woken waiter (WOKEN is ours) */
};

/* The callbacks of a locker's wait. */
extern const park__wait_ops_t park__mutex_lock_ops;

/* Queues w, a waiter whose notify is set, on *m as an asynchronous locker
 * would: true if queued (an unlock hands *m to w, then notify(w) runs on
 * the unlocking thread, outside the bucket lock), false if *m was free
 * (nothing queued: the caller takes *m by itself). w is never cancelled
 * once queued. `held`: the caller holds *m itself, so its own unlock sees
 * the waiter (program order) and the fence that covers another thread's
 * store unlock is not needed. For lib/cond.c, which moves a signalled
 * waiter onto the mutex it waits to retake (wait morphing). */
bool park__mutex_enqueue_handoff(park_mutex_t *m, park__waiter_t *w, bool held);

#endif /* PARK_LIB_MUTEX_IMPL_H */
