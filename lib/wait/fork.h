/* lib/wait/fork.h: what fork() leaves of the wait queues, and the one flag
 * the primitives consult in a child (lib/wait/fork.c, docs/design/fork.md).
 *
 * At a fork the buckets are locked (prepare handler), so the child's copy
 * of every queue is consistent. In the child the queues start empty: the
 * threads queued there do not exist, and the asynchronous waiters' pools
 * have no workers. What a primitive's word says about them (waiters-queued
 * bits, counts, "a woken waiter is on its way" marks) is stale until the
 * primitive repairs it: while park__forked is set, each primitive treats
 * its "someone is on the way" mark as possibly stale, and re-counts its
 * queue under the bucket lock (rwlock.c). Holds stay: a lock that any
 * thread held at the fork stays held, as in glibc. */
#ifndef PARK_LIB_WAIT_FORK_H
#define PARK_LIB_WAIT_FORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True in a process made by fork() from one that had loaded park (set by
 * the child handler before the child's code runs again, never cleared).
 * Read plainly: written only while the child has one thread. */
extern bool park__forked;

/* How many forks this process descends from (0 in one that was not made
 * by fork(); the child handler adds 1): a primitive that must tell its own
 * process's work from a parent's stamps it (lazy.c). Read plainly, as
 * park__forked. */
extern uint32_t park__fork_gen;

/* The atfork handlers' work (lib/wait/queue.c): take every bucket lock in
 * table order; release them all; in the child, empty every queue (each
 * waiter left behind is marked not queued), unlock every bucket and zero
 * the hints. */
void park__wait_lock_all(void);
void park__wait_unlock_all(void);
void park__wait_reset_all(void);

/* Bucket of key locked (for validate, select and finish callbacks): how
 * many waiters of key asking for `want` are queued. */
size_t park__wait_count_want(const void *key, uintptr_t want);

#endif /* PARK_LIB_WAIT_FORK_H */
