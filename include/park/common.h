/* park/common.h: definitions every park header shares.
 *
 * PARK_API marks the exported symbols; everything else in libpark is hidden.
 * PARK_BEGIN_DECLS / PARK_END_DECLS give C linkage when included from C++.
 * Names with a double underscore (park__*, PARK__*) are private: they appear
 * in headers only because the inline fast paths need them. */
#ifndef PARK_COMMON_H
#define PARK_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PARK_API __attribute__((visibility("default")))

#ifdef __cplusplus
#define PARK_BEGIN_DECLS extern "C" {
#define PARK_END_DECLS }
#else
#define PARK_BEGIN_DECLS
#define PARK_END_DECLS
#endif

/* Private: how the headers declare their inline fast paths. Inlined even
 * without optimisation, so that no build has an out-of-line copy of a fast
 * path shared by all its callers: a contention profile's frame walk then
 * finds each caller's own frame as its call site (lib/profile). */
#define PARK__INLINE static inline __attribute__((always_inline))

/* The runtime's opaque types (park/task.h, park/pool.h), declared here so
 * that a primitive's header can declare its asynchronous forms without
 * including the runtime's headers: a program that only locks a mutex sees
 * nothing of the pool. Include park/task.h to use a task. */
typedef struct park_task park_task_t;
typedef struct park_pool park_pool_t;

#define PARK__LIKELY(x) __builtin_expect(!!(x), 1)
#define PARK__UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Private: lib/wait's per-address hints. Slot i counts the waiters queued
 * under the addresses that hash to it, so a release that has already handed
 * its object over can learn "might anyone be waiting on this address?"
 * without touching the object (lib/wait/wait.h). */
#define PARK__HINT_BITS 12
#ifdef __cplusplus
extern "C" {
#endif
PARK_API extern uint32_t park__wait_hints[1u << PARK__HINT_BITS];
#ifdef __cplusplus
}
#endif

static inline uint32_t *park__hint_of(const void *key)
{
    uint64_t h = ((uint64_t)(uintptr_t)key >> 2) * 0x9e3779b97f4a7c15ull;
    return &park__wait_hints[h >> (64 - PARK__HINT_BITS)];
}

#endif /* PARK_COMMON_H */
