/* park/profile.h: contention profiling.
 *
 * While profiling is on, every acquisition that took a slow path is
 * recorded: a mutex, semaphore or rwlock acquisition that found the lock
 * taken (whether it then got it by spinning, after yielding, or by
 * queueing), a lazy or channel wait that queued. A record holds the lock's
 * address and kind, the call site that asked for it (the first frame outside
 * park, and a few callers found by frame pointers), the time waited (from
 * the start of the slow path, as the caller sees it) and whether the lock
 * was handed over. Fast paths record nothing: an acquisition that found the
 * lock free was not contended.
 *
 * Recording allocates nothing and takes no lock shared between waiters:
 * each thread adds to its own table of call sites (claimed from a pool made
 * by park_profile_start; a thread's first record also asks glibc for its
 * stack's bounds, pthread_getattr_np, which may allocate), and
 * park_profile_dump merges the tables. Off (the
 * default), the slow paths pay one predictable branch and the fast paths
 * are unchanged.
 *
 * Switched on by park_profile_start(), or at load time by PARK_PROFILE=1 in
 * the environment; then the report is also written at exit, to stderr, or
 * to the file named by PARK_PROFILE_OUT with the folded stacks beside it in
 * "<that file>.folded" (`park-run --profile CMD` sets this up for an
 * unmodified program). A re-acquisition after a wake-up that lost the lock
 * to a running thread is counted as part of the same wait.
 *
 * All functions are thread-safe; they may be called from any thread. */
#ifndef PARK_PROFILE_H
#define PARK_PROFILE_H

#include <park/common.h>
#include <stdio.h>

PARK_BEGIN_DECLS

/* What waited. */
typedef enum park_profile_kind {
    PARK_PROFILE_OTHER = 0, /* channels and other internal waits */
    PARK_PROFILE_MUTEX,
    PARK_PROFILE_SEM,
    PARK_PROFILE_RWLOCK_READ,
    PARK_PROFILE_RWLOCK_WRITE,
    PARK_PROFILE_LAZY,
    PARK_PROFILE_KINDS
} park_profile_kind_t;

/* Frames kept per call site: stack[0] is the call site, the others its
 * callers (fewer where the frame-pointer chain ends). */
#define PARK_PROFILE_DEPTH 6

/* One call site (and kind), all threads' waits merged; stack holds the
 * callers of the stack that waited longest there. */
typedef struct park_profile_site {
    const void *stack[PARK_PROFILE_DEPTH]; /* return addresses, call site first */
    unsigned depth;                        /* entries of stack in use (>= 1) */
    park_profile_kind_t kind;
    const void *lock;  /* the lock of the longest single wait */
    uint64_t waits;    /* contended acquisitions (waits) */
    uint64_t handoffs; /* of them, handed the lock by its releaser */
    uint64_t total_ns; /* time waited, all waits */
    uint64_t max_ns;   /* the longest single wait */
    /* The waits' median, 99th and 99.9th percentiles, each within about
     * 3 % (from a histogram of every wait). */
    uint64_t p50_ns, p99_ns, p999_ns;
} park_profile_site_t;

/* Starts recording (idempotent). The first call reserves the per-thread
 * tables (about 70 MiB of address space, of which only the pages that
 * recording threads touch take memory; never freed); returns 0 or
 * ENOMEM. */
PARK_API int park_profile_start(void);

/* Stops recording (waits in progress may still finish recording). The
 * records stay until park_profile_reset. */
PARK_API void park_profile_stop(void);

/* True while recording. */
PARK_API bool park_profile_enabled(void);

/* Forgets every record. Call it only while no thread is waiting in park
 * (a wait in progress would add to a forgotten slot). */
PARK_API void park_profile_reset(void);

/* Merges every thread's records into sites, largest total wait first, and
 * copies the first max of them to sites (which may be NULL if max is 0).
 * Returns how many sites there are. May block briefly (it allocates). */
PARK_API size_t park_profile_sites(park_profile_site_t *sites, size_t max);

/* Waits not recorded because a thread's table or the pool of tables was
 * full. */
PARK_API uint64_t park_profile_dropped(void);

/* Writes the table of the top contended call sites to out: rank, share of
 * all waiting, waits, hand-offs, total wait, median, 99th percentile and
 * maximum wait, kind, lock, and
 * the call site as symbol+offset (file:line where debug information is
 * available; module+offset where the binary has no symbols), with its
 * callers. Returns 0 or an errno value (write error: EIO). */
PARK_API int park_profile_dump(FILE *out);

/* Writes the recorded stacks (each distinct stack, not merged by call
 * site) folded for flame-graph tools ("caller;...;
 * call site;park:kind microseconds" per line), weighted by time waited.
 * Returns 0 or an errno value. */
PARK_API int park_profile_dump_folded(FILE *out);

/* "mutex", "sem", "rwlock.read", "rwlock.write", "lazy", "other". */
PARK_API const char *park_profile_kind_name(park_profile_kind_t kind);

PARK_END_DECLS

#endif /* PARK_PROFILE_H */
