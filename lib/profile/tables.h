/* lib/profile/tables.h: the per-thread tables of call sites that
 * record.c fills and report.c merges.
 *
 * Synchronisation: a table is written only by its owner thread. A slot is
 * published by the release store of `used` after its key (stack, kind) is
 * written; the counters are single-writer words updated with relaxed
 * load + store, read relaxed by the report, which may run while owners
 * still record (it then sees each counter at some recent value). */
#ifndef PARK_LIB_PROFILE_TABLES_H
#define PARK_LIB_PROFILE_TABLES_H

#include "profile/profile.h"

#define PARK__PROFILE_SLOTS 128  /* call sites per thread (power of 2) */
#define PARK__PROFILE_TABLES 256 /* threads that can record */

/* Each slot's histogram of waits (ns): exact below 16, then 16 buckets
 * per power of two (a bucket's midpoint is within 3.2 % of any value in
 * it), up to 2^36 ns (69 s; longer waits count there). */
#define PARK__PROFILE_SUB_BITS 4
#define PARK__PROFILE_TOP_BIT 36
#define PARK__PROFILE_BUCKETS                                                                      \
    ((PARK__PROFILE_TOP_BIT - PARK__PROFILE_SUB_BITS + 1) << PARK__PROFILE_SUB_BITS)

static inline unsigned park__profile_bucket(uint64_t ns)
{
    const unsigned sub = 1u << PARK__PROFILE_SUB_BITS;
    if (ns < sub)
        return (unsigned)ns;
    if (ns >> PARK__PROFILE_TOP_BIT)
        ns = (1ull << PARK__PROFILE_TOP_BIT) - 1;
    unsigned e = 63u - (unsigned)__builtin_clzll(ns); /* >= SUB_BITS */
    unsigned shift = e - PARK__PROFILE_SUB_BITS;
    return (shift + 1) * sub + (unsigned)((ns >> shift) & (sub - 1));
}

/* The middle of bucket b's range of ns. */
static inline uint64_t park__profile_bucket_mid(unsigned b)
{
    const unsigned sub = 1u << PARK__PROFILE_SUB_BITS;
    if (b < sub)
        return b;
    unsigned shift = b / sub - 1;
    uint64_t low = (uint64_t)(sub + b % sub) << shift;
    return low + ((1ull << shift) >> 1);
}

typedef struct park__profile_slot {
    uint32_t used; /* 1 once the key below is written (release) */
    uint32_t depth;
    uint32_t kind;
    uint64_t hash;
    uintptr_t stack[PARK_PROFILE_DEPTH];
    uintptr_t lock; /* the lock of the longest wait */
    uint64_t waits, handoffs, total_ns, max_ns;
    /* Waits by length (each acquisition counted once, at its total so
     * far); single-writer counters, as the ones above. */
    uint32_t hist[PARK__PROFILE_BUCKETS];
} park__profile_slot_t;

typedef struct park__profile_table {
    uintptr_t stack_lo, stack_hi; /* the owner's stack, for the frame walk */
    uint64_t dropped;             /* waits this table had no slot for */
    park__profile_slot_t slots[PARK__PROFILE_SLOTS];
} park__profile_table_t;

/* The pool (NULL before the first park_profile_start) and how many of its
 * tables threads have claimed (may exceed PARK__PROFILE_TABLES: the
 * claims that found none). */
extern park__profile_table_t *park__profile_tables;
extern uint32_t park__profile_claimed;

/* Waits dropped because the pool had no table left. */
extern uint64_t park__profile_no_table;

/* The address range of park's own code: return addresses inside it are
 * skipped by the frame walk. Set by park__profile_setup. */
extern uintptr_t park__profile_text_lo, park__profile_text_hi;

/* Reserves the pool and finds park's code: 0 or ENOMEM. Idempotent; not
 * thread-safe against itself (park_profile_start serialises it). */
int park__profile_setup(void);

#endif /* PARK_LIB_PROFILE_TABLES_H */
