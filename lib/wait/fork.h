/* lib/wait/fork.h: what fork() leaves of the wait queues, and the flag the
 * primitives consult in a child (lib/wait/fork.c, docs/design/fork.md).
 *
 * In the child the queues start empty: the threads queued there do not
 * exist, and the asynchronous waiters' pools have no workers. What a
 * primitive's word says about them (waiters-queued bits, counts, "a woken
 * waiter is on its way" marks, runs in progress) is stale until the
 * primitive repairs it: while park__forked is set, each primitive treats
 * its "someone is on the way" mark as possibly stale, and re-counts its
 * queue under the bucket lock (rwlock.c), or restarts a run of an earlier
 * generation (lazy.c). Holds stay: a lock that any thread held at the fork
 * stays held, as in glibc. */
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

/* A primitive's "a woken waiter is on its way" mark, as far as it may be
 * trusted: in a forked child a mark set before the fork names a thread
 * that does not exist and would never clear it, so there it stops holding
 * back wake-ups (the waiters woken in addition retry as any woken waiter
 * does; the cost is wake-ups, only in a child). */
static inline bool park__woken_mark(bool mark)
{
    return mark && !__builtin_expect(park__forked, 0);
}

/* A destroy's answer for the primitive at key, whose word says that
 * waiters are queued (`waiters`, read by an acquire that pairs with the
 * primitive's last release): EBUSY, but 0 in a forked child once nobody is
 * queued (the word's mark outlived the waiters the fork left behind); 0
 * without the mark. */
int park__wait_destroy_busy(const void *key, bool waiters);

/* The child handler's work (lib/wait/queue.c): empties every queue
 * without walking it, unlocks every bucket and zeroes the hints. A waiter
 * left behind still says `queued`; park__wait_cancel in a child checks
 * the list instead. */
void park__wait_reset_all(void);

/* Bucket of key locked (for validate, select and finish callbacks): counts
 * the queued waiters of key by what they want, in one walk: counts[want]
 * for want < n (counts zeroed by the caller; other wants are not counted). */
void park__wait_count_wants(const void *key, size_t *counts, uintptr_t n);

#endif /* PARK_LIB_WAIT_FORK_H */
