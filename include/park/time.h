/* park/time.h: time and deadlines.
 *
 * Every deadline in park is absolute, in nanoseconds on CLOCK_MONOTONIC, so a
 * retried or re-parked wait never extends its own deadline. */
#ifndef PARK_TIME_H
#define PARK_TIME_H

#include <park/common.h>

PARK_BEGIN_DECLS

/* Nanoseconds on CLOCK_MONOTONIC. */
typedef uint64_t park_time_t;

/* A deadline that never expires. */
#define PARK_FOREVER ((park_time_t)UINT64_MAX)

/* The current CLOCK_MONOTONIC time in nanoseconds. Never blocks; no memory
 * ordering. */
PARK_API park_time_t park_now(void);

/* park_now() + ns, saturating at PARK_FOREVER. Never blocks. */
PARK_API park_time_t park_deadline_in(uint64_t ns);

PARK_END_DECLS

#endif /* PARK_TIME_H */
