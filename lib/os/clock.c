/* lib/os/clock.c: CLOCK_MONOTONIC (and CLOCK_REALTIME) in nanoseconds. */
#include <time.h>

#include <park/time.h>

#include "os/os.h"

park_time_t park_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (park_time_t)ts.tv_sec * 1000000000u + (park_time_t)ts.tv_nsec;
}

park_time_t park_deadline_in(uint64_t ns)
{
    park_time_t now = park_now();
    return ns >= PARK_FOREVER - now ? PARK_FOREVER : now + ns;
}

park_time_t park__os_realtime_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (ts.tv_sec < 0)
        return 0;
    return (park_time_t)ts.tv_sec * 1000000000u + (park_time_t)ts.tv_nsec;
}
