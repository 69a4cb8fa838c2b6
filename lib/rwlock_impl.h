/* lib/rwlock_impl.h: what lib/rwlock.c (the state machine) shares with its
 * asynchronous acquisitions (lib/rwlock_async.c) and with the PARK_DEBUG
 * tracker of each thread's read holds (lib/rwlock_debug.c). */
#ifndef PARK_LIB_RWLOCK_IMPL_H
#define PARK_LIB_RWLOCK_IMPL_H

#include <park/rwlock.h>

#include "wait/wait.h"

/* w->want of a queued waiter. */
enum { PARK__RW_WANT_READ = 1, PARK__RW_WANT_WRITE = 2 };

/* What a waiter carries, thread or task (the ctx of the callbacks). */
struct park__rwlock_wait {
    park_rwlock_t *rw;
    bool acquired;      /* validate took the lock instead of queueing */
    bool check_reentry; /* PARK_DEBUG: a read wait that never times out */
    bool reentered;     /* PARK_DEBUG: ... by a thread that holds a read */
    bool admit;         /* a timed-out writer leaves readers to admit */
    bool in_flight;     /* a writer woken to retry, still in wqueued_ */
};

/* The callbacks of a reader's and of a writer's wait. */
extern const park__wait_ops_t park__rwlock_read_ops;
extern const park__wait_ops_t park__rwlock_write_ops;

/* One attempt at a read hold (a word without WRITER, WRITER_WAITING and
 * DRAIN) or at the write hold (a free word), from the word *s, which a
 * failed attempt updates. */
bool park__rwlock_try_read(park_rwlock_t *rw, uint32_t *s);
/* Inline: the asynchronous acquisition (lib/rwlock_async.c) tries it first. */
static inline bool park__rwlock_try_write(park_rwlock_t *rw, uint32_t *s)
{
    /* 0 -> WRITER; acquire: pairs with the release of the last unlock. */
    return *s == 0 && __atomic_compare_exchange_n(&rw->state_, s, PARK__RW_WRITER, false,
                                                  __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* A writer that left the queue ungranted lets in the readers it held back. */
void park__rwlock_admit(park_rwlock_t *rw);

/* A read hold from the word, waiting until deadline: 0 or ETIMEDOUT. */
int park__rwlock_read_wait(park_rwlock_t *rw, park_time_t deadline);
/* Gives up one read hold in the word (the last out of a drain hands over). */
void park__rwlock_state_read_unlock(park_rwlock_t *rw);

/* The read-mostly mode (lib/rwlock_mostly.c). A read hold: through the
 * readers' table while the lock is biased, else from the word (waiting
 * until deadline, or not at all if try_only): 0, ETIMEDOUT or EBUSY. */
int park__rwlock_mostly_read(park_rwlock_t *rw, park_time_t deadline, bool try_only);
void park__rwlock_mostly_read_unlock(park_rwlock_t *rw);
/* A writer's first step on a biased lock: the bias goes, the table's holds
 * move into the word, and the bias hold is given up. Never blocks. */
void park__rwlock_revoke(park_rwlock_t *rw);
/* park_rwlock_destroy of a biased lock: 0 or EBUSY; changes nothing. */
int park__rwlock_mostly_destroy(park_rwlock_t *rw);
/* How many times in a row rw's re-bias inhibition has doubled (0-8; for
 * tests: the entry is shared with the locks whose address hashes alike). */
uint8_t park__rwlock_inhibit_level(const park_rwlock_t *rw);

/* PARK_DEBUG: the read holds the calling thread took (lib/rwlock_debug.c). */
#ifdef PARK_DEBUG
void park__rwlock_track_add(const park_rwlock_t *rw);
void park__rwlock_track_remove(park_rwlock_t *rw);
/* True if the calling thread holds a read hold of rw for sure. */
bool park__rwlock_track_holds(const park_rwlock_t *rw);
#else
static inline void park__rwlock_track_add(const park_rwlock_t *rw)
{
    (void)rw;
}

static inline void park__rwlock_track_remove(park_rwlock_t *rw)
{
    (void)rw;
}
#endif

#endif /* PARK_LIB_RWLOCK_IMPL_H */
