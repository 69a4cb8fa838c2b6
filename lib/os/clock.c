/* lib/os/clock.c: CLOCK_MONOTONIC in nanoseconds. */
#include <time.h>

#include <park/time.h>

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
