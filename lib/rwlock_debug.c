/* lib/rwlock_debug.c: PARK_DEBUG's record of each thread's read holds, for
 * the rwlock's re-entry check (lib/rwlock.c: a thread that re-enters the
 * read lock while a writer waits deadlocks, and a debug build says so). */
#include "rwlock_impl.h"

#ifdef PARK_DEBUG

/* A thread records the read holds it takes (per lock, a count) and removes
 * one at each read_unlock it makes. A read_unlock that finds no record of
 * its lock released a hold taken by another thread (or one not recorded for
 * lack of room): it sets a bit of the lock's flags_ word, which turns the re-entry
 * check off for that lock, because some thread's record of it may now be
 * stale. So a check that finds a record and a clear bit is right:
 * the thread holds the lock. */

#define TRACK_SLOTS 8
#define DEBUG_UNTRACKED 1u /* flags_: a hold was released untracked */

static _Thread_local struct {
    const park_rwlock_t *rw;
    uint32_t holds;
} tracked[TRACK_SLOTS];

void park__rwlock_track_add(const park_rwlock_t *rw)
{
    int free_slot = -1;
    for (int i = 0; i < TRACK_SLOTS; i++) {
        if (tracked[i].rw == rw) {
            tracked[i].holds++;
            return;
        }
        if (!tracked[i].rw && free_slot < 0)
            free_slot = i;
    }
    if (free_slot >= 0) {
        tracked[free_slot].rw = rw;
        tracked[free_slot].holds = 1;
    }
}

void park__rwlock_track_remove(park_rwlock_t *rw)
{
    for (int i = 0; i < TRACK_SLOTS; i++) {
        if (tracked[i].rw == rw) {
            if (--tracked[i].holds == 0)
                tracked[i].rw = NULL;
            return;
        }
    }
    /* relaxed: a flag only this file's debug checks read, never data. */
    __atomic_fetch_or(&rw->flags_, DEBUG_UNTRACKED, __ATOMIC_RELAXED);
}

bool park__rwlock_track_holds(const park_rwlock_t *rw)
{
    /* relaxed: as in track_remove. */
    if (__atomic_load_n(&rw->flags_, __ATOMIC_RELAXED) & DEBUG_UNTRACKED)
        return false;
    for (int i = 0; i < TRACK_SLOTS; i++)
        if (tracked[i].rw == rw)
            return true;
    return false;
}

#else
typedef int park__rwlock_debug_unused; /* ISO C: a translation unit declares something */
#endif
