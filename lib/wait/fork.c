/* lib/wait/fork.c: the fork() child handler of the wait queues (see
 * fork.h).
 *
 * There is no prepare handler: holding the bucket locks across the fork
 * would deadlock a prepare handler of the program's that runs after ours
 * and blocks on a contended lock (pthread_atfork runs prepare handlers in
 * reverse order of registration, and under the drop-in every pthread
 * mutex is park's). Nothing in a bucket needs to survive anyway: every
 * waiter queued at the fork belongs to a thread or a pool the child lacks,
 * so the child drops the lists whatever state they are in. A thread that
 * was inside a bucket at the fork was between two atomic steps of its
 * primitive's protocol; in the child its call never completes, which the
 * primitives' repairs treat as they treat any thread left behind: what it
 * held stays held.
 *
 * The child handler is registered from the first constructor (priority
 * 101), so it is the first to run in a child: the program's child
 * handlers (and lazy.c's) run on reset queues, with park__fork_gen already
 * counting this fork. */
#include <errno.h>
#include <pthread.h>

#include "wait/fork.h"
#include "wait/wait.h"

bool park__forked;
uint32_t park__fork_gen;

static void fork_child(void)
{
    park__wait_reset_all();
    park__fork_gen++;
    park__forked = true;
}

__attribute__((constructor(101))) static void fork_register(void)
{
    pthread_atfork(NULL, NULL, fork_child);
}

int park__wait_destroy_busy(const void *key, bool waiters)
{
    if (!waiters)
        return 0;
    return __builtin_expect(park__forked, 0) && !park__wait_has_waiters(key) ? 0 : EBUSY;
}
