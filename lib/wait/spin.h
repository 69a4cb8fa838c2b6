/* lib/wait/spin.h: the one spin policy of park (docs/design/README.md rule 6).
 *
 * Every bounded wait in lib/ that does not park at once follows one
 * schedule, in three phases:
 *
 *   1. pause rounds: the caller looks at its word, then pauses 1, 2, 4, ...
 *      up to PARK__SPIN_GAP times (each look costs a cache-line transfer,
 *      so the gap grows), until it has spent `pauses` pauses in all; a
 *      site whose event comes within nanoseconds and whose look is cheap
 *      (a channel's cells) caps the gap lower (park__spin_init_gap); a
 *      site whose look slows down the thread it waits for (a contended
 *      lock's word) looks rarely, at a fixed gap of 128 pauses
 *      (park__spin_init_every, park__spin_init_once); a site whose spinners
 *      on different CPUs must not give up in step draws its budget at
 *      random around its mean (park__spin_init_jitter);
 *   2. yields: `yields` rounds of sched_yield, so that a preempted holder
 *      or an oversubscribed producer gets the processor; none in a thread
 *      of low weight, for which a yield costs more than a sleep
 *      (park__os_yield);
 *   3. park: park__spin returns false and the caller sleeps in lib/wait
 *      (or, where there is nothing to sleep on, keeps yielding: see
 *      park__spin_forever).
 *
 * On a single CPU pausing cannot help (the thread that would change the
 * word is not running), so phase 1 is skipped there. The budgets are the
 * caller's: each call site passes the bound that fits what it waits for
 * (a lock word a few instructions from free, a worker looking for work, a
 * channel cell mid-operation) and documents it where it is chosen.
 *
 *   park__spin_t s = park__spin_init(PAUSES, YIELDS);
 *   while (!ready())
 *       if (!park__spin(&s))
 *           return sleep_in_lib_wait();
 */
#ifndef PARK_LIB_WAIT_SPIN_H
#define PARK_LIB_WAIT_SPIN_H

#include <stdbool.h>
#include <stdint.h>

#include "os/os.h"

#define PARK__SPIN_GAP 16u /* the most pauses between two looks */

typedef struct park__spin {
    uint32_t gap;     /* pauses before the next look */
    uint32_t max_gap; /* the gap stops doubling here */
    uint32_t pauses;  /* pauses left in phase 1 */
    uint32_t yields;  /* yields left in phase 2 */
} park__spin_t;

/* A schedule of at most `pauses` pauses, looking at least every `max_gap`
 * pauses (1 to PARK__SPIN_GAP), then `yields` yields. */
static inline park__spin_t park__spin_init_gap(uint32_t pauses, uint32_t yields, uint32_t max_gap)
{
    park__spin_t s = {1, max_gap, park__os_single_cpu() ? 0 : pauses, yields};
    return s;
}

/* A schedule that looks every `gap` pauses (a fixed gap, which may exceed
 * PARK__SPIN_GAP), `pauses` in all, then yields `yields` times, looking
 * after each: for a wait on a word that the thread waited for writes on
 * every round, where each look takes the cache line from it and so makes
 * the wait longer (a lock passed back and forth between running threads:
 * lib/mutex.c, lib/rwlock.c, lib/sem.c). */
static inline park__spin_t park__spin_init_every(uint32_t gap, uint32_t pauses, uint32_t yields)
{
    park__spin_t s = {gap ? gap : 1, gap ? gap : 1, park__os_single_cpu() ? 0 : pauses, yields};
    return s;
}

/* park__spin_init_every with one look, after all `pauses` pauses. */
static inline park__spin_t park__spin_init_once(uint32_t pauses, uint32_t yields)
{
    return park__spin_init_every(pauses, pauses, yields);
}

/* A thread's next pseudo-random 32 bits (lib/wait/spin.c). */
uint32_t park__spin_random(void);

/* park__spin_init_gap with a budget drawn anew each time from pauses / 2
 * up to pauses / 2 + pauses - 1 (pauses on average, within half a pause):
 * for spinners on different CPUs that tend to start together and must not
 * give up together. Two CPUs that each run one side of a channel (both
 * senders at a full ring, both receivers at an empty one) yielded at the
 * same moment with a fixed budget, so both switched to the other side
 * together and stayed in step; with budgets that differ, one CPU switches
 * first and a sender runs beside a receiver (lib/chan.c). */
static inline park__spin_t park__spin_init_jitter(uint32_t pauses, uint32_t yields,
                                                  uint32_t max_gap)
{
    if (pauses == 0 || park__os_single_cpu())
        return park__spin_init_gap(0, yields, max_gap);
    return park__spin_init_gap(pauses / 2 + park__spin_random() % pauses, yields, max_gap);
}

/* The usual schedule: at most `pauses` pauses, then `yields` yields. */
static inline park__spin_t park__spin_init(uint32_t pauses, uint32_t yields)
{
    return park__spin_init_gap(pauses, yields, PARK__SPIN_GAP);
}

/* One step: pauses or yields and returns true (look again), or returns
 * false once the budget is spent (park now). */
static inline bool park__spin(park__spin_t *s)
{
    if (s->pauses) {
        uint32_t n = s->gap < s->pauses ? s->gap : s->pauses;
        s->pauses -= n;
        while (n--)
            park__os_pause();
        if (s->gap < s->max_gap)
            s->gap *= 2;
        return true;
    }
    if (s->yields) {
        s->yields--;
        if (park__os_yield())
            return true;
        s->yields = 0; /* a thread of low weight sleeps instead */
    }
    return false;
}

/* The next step of s yields (phase 2): for a caller that must look at
 * something slower than its word first (a timed wait, its clock). */
static inline bool park__spin_yields_next(const park__spin_t *s)
{
    return !s->pauses && s->yields;
}

/* ---- early looks, while the thread has a CPU of its own -----------------
 *
 * A rare-look schedule (park__spin_init_once, _every) keeps a waiter off
 * the word for 128 pauses at a time, which is right while the word's
 * holder must share the CPUs with it, but makes a thread that waits for a
 * section of a few dozen nanoseconds, on a CPU of its own, wait the whole
 * gap (3.2 us where a pause costs 25 ns). So such a site first runs
 * park__spin_init_early's schedule: looks after 8, 24, 56 and 120 pauses
 * (gaps doubling from PARK__SPIN_EARLY to PARK__SPIN_EARLY_GAP), no
 * yields; then its own. The schedule is empty (park__spin returns false
 * at once) on one CPU, and while the thread's CPU was lately crowded: the
 * site times the rest of its spin (its rare looks and yields) and reports
 * it to park__spin_note, and a spin that took PARK__SPIN_CROWDED_US more
 * than its pauses could (a yield gave the CPU to another thread, or the
 * thread was preempted) empties the thread's next PARK__SPIN_EARLY_OFF
 * early schedules. With more threads than CPUs, a waiter that gets in
 * early stays runnable where a yield or a sleep would have made room for
 * the others, and every runnable thread lengthens the others' waits for
 * a CPU (docs/design/rwlock.md, Tuning). park__spin_rare runs the whole
 * of it around a site's look: the rwlock's held-back readers and writers,
 * the semaphore's acquirers, and a mutex locker alone inside its wait (a
 * locker that gets in early does not doze, and the dozers are what keeps
 * the mutex fair with more threads than CPUs: docs/design/mutex.md,
 * Tuning). */
#define PARK__SPIN_EARLY 8u          /* pauses before the first early look */
#define PARK__SPIN_EARLY_GAP 64u     /* the early schedule's last gap */
#define PARK__SPIN_EARLY_PAUSES 120u /* its pauses in all: 8 + 16 + 32 + 64 */
#define PARK__SPIN_CROWDED_US 30u    /* a spin this much too long: crowded */
#define PARK__SPIN_PAUSE_NS_MAX 100u /* the most a pause costs, for that */
#define PARK__SPIN_EARLY_OFF 1024u   /* early schedules left empty after */
_Static_assert(PARK__SPIN_EARLY_PAUSES == PARK__SPIN_EARLY + 2 * PARK__SPIN_EARLY +
                                              4 * PARK__SPIN_EARLY + PARK__SPIN_EARLY_GAP &&
                   PARK__SPIN_EARLY_GAP == 8 * PARK__SPIN_EARLY,
               "the early schedule looks after 8, 24, 56 and 120 pauses");

/* The early schedule, or an empty one (see above). Per thread: each call
 * while the early looks are off counts one of PARK__SPIN_EARLY_OFF. */
park__spin_t park__spin_init_early(void);

/* The calling thread's spin after its early schedule began at `since`
 * (park__os_ticks) and had `pauses` pauses: if it took
 * park__spin_crowded_ticks(pauses) or more, its next PARK__SPIN_EARLY_OFF
 * park__spin_init_early calls return an empty schedule. */
void park__spin_note(uint64_t since, uint32_t pauses);

/* The ticks (park__os_ticks) of a spin of `pauses` pauses that mean its CPU
 * was crowded: PARK__SPIN_CROWDED_US plus PARK__SPIN_PAUSE_NS_MAX a
 * pause, so that no processor's pauses alone reach it. */
uint64_t park__spin_crowded_ticks(uint32_t pauses);

/* A rare-look site's spin, after the site's own first look failed: the
 * early schedule, then `rest` (the site's rare-look schedule, its pauses
 * less `trim` when the early looks ran: for a site whose budget bounds the
 * whole spin), timed and reported to park__spin_note. look(ctx) runs after
 * every step; it returns 0 to go on, or a nonzero result of the site's
 * (taken, get in line) that ends the spin and is returned. 0: both
 * schedules ran out. Inlined, the look is a direct call. */
static inline int park__spin_rare(park__spin_t rest, uint32_t trim, int (*look)(void *), void *ctx)
{
    int r = 0;
    park__spin_t early = park__spin_init_early();
    while (r == 0 && park__spin(&early))
        r = look(ctx);
    if (r != 0)
        return r;
    if (early.max_gap == PARK__SPIN_EARLY_GAP) /* the early schedule, not the empty one */
        rest.pauses -= trim < rest.pauses ? trim : rest.pauses;
    uint32_t pauses = rest.pauses;
    uint64_t since = park__os_ticks();
    while (r == 0 && park__spin(&rest))
        r = look(ctx);
    park__spin_note(since, pauses); /* far longer than its pauses: crowded */
    return r;
}

/* For a wait with nothing to sleep on, which another thread ends within a
 * few instructions unless it is preempted (a channel cell mid-operation, a
 * thief's lost race): the schedule's pauses, then yields (naps in a
 * thread of low weight) for as long as it takes. */
static inline void park__spin_forever(park__spin_t *s)
{
    if (!park__spin(s) && !park__os_yield())
        park__os_nap();
}

#endif /* PARK_LIB_WAIT_SPIN_H */
