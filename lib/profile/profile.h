/* lib/profile/profile.h: the recording side of contention profiling
 * (park/profile.h), called by lib/wait on its slow path.
 *
 * Layer: below wait (it uses only os), so that lib/wait can record every
 * wait; the report (report.c) lives here too and reads the same tables.
 *
 * Each waiter carries a park__profile_wait_t: what it waits for (kind, and
 * the grant value that means "handed over") and, once its first wait is
 * recorded, the slot of its call site and its running total, so that a
 * waiter that is woken, loses to a running thread and waits again adds to
 * the same record instead of counting a second wait. */
#ifndef PARK_LIB_PROFILE_H
#define PARK_LIB_PROFILE_H

#include <park/profile.h>
#include <park/time.h>

/* w->handoff of a waiter for which every grant is a hand-over (readers,
 * lazy waiters, channels). */
#define PARK__PROFILE_ANY_GRANT UINTPTR_MAX

typedef struct park__profile_wait {
    uintptr_t handoff; /* the grant value that means "handed over" */
    uint8_t kind;      /* park_profile_kind_t */
    void *slot;        /* the record of this acquisition, once made */
    park_time_t mark;  /* when its last recorded wait ended; before the first
                        * record, when its slow path began (0: unknown) */
    uint64_t total;    /* ns waited by this acquisition so far */
} park__profile_wait_t;

/* Read on every slow-path wait: one predictable branch while off. relaxed:
 * a wait that starts just before a start or stop may or may not be
 * recorded; nothing else depends on it. */
extern bool park__profile_on;
static inline bool park__profiling(void)
{
    return PARK__UNLIKELY(__atomic_load_n(&park__profile_on, __ATOMIC_RELAXED));
}

/* The kind of a wait that is not contention (a pool worker idling, the
 * timer thread sleeping to its next deadline): never recorded. */
#define PARK__PROFILE_IDLE 255u

static inline void park__profile_wait_init(park__profile_wait_t *p)
{
    p->handoff = PARK__PROFILE_ANY_GRANT;
    p->kind = PARK_PROFILE_OTHER;
    p->slot = NULL;
    p->mark = 0;
}

/* A wait on key that began at t0 (park_now()) has ended; handed: the
 * waiter was handed what it waited for. The acquisition's first record
 * counts from p->mark instead where that is set (its slow path began
 * there: the spin before the queue is part of the wait), later ones from
 * the end of the one before. Called by the waiting thread. */
void park__profile_record(park__profile_wait_t *p, const void *key, park_time_t t0, bool handed);

#endif /* PARK_LIB_PROFILE_H */
