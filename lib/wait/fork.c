/* lib/wait/fork.c: fork() handlers for the wait queues (see fork.h).
 *
 * prepare  takes every bucket lock, in table order (no thread holds two
 *          bucket locks, so this cannot deadlock): no queue is half-linked
 *          and no bucket lock is held by a thread that the child lacks
 *   parent releases them
 *   child  empties the queues and sets park__forked
 *
 * Registered from the first constructor (priority 101), so ours is the
 * first handler: the program's own prepare handlers (and park's others,
 * lazy.c's) run before ours and may still lock park's primitives, and
 * their child handlers run after ours, on reset queues and with
 * park__fork_gen already counting this fork. */
#include <pthread.h>

#include "wait/fork.h"

bool park__forked;
uint32_t park__fork_gen;

static void fork_prepare(void)
{
    park__wait_lock_all();
}

static void fork_parent(void)
{
    park__wait_unlock_all();
}

static void fork_child(void)
{
    park__wait_reset_all();
    park__fork_gen++;
    park__forked = true;
}

__attribute__((constructor(101))) static void fork_register(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}
