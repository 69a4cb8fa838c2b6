/* lib/preload/preload.c: what every part of the drop-in shares: glibc's
 * own functions for what passes through, the counters that
 * PARK_PRELOAD_VERBOSE=1 reports at exit, deadlines, and the abort for
 * misuse the drop-in cannot serve. */
#include "preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void *pp_real(const char *name)
{
    /* RTLD_NEXT: the definition after this library's, glibc's. */
    void *f = dlsym(RTLD_NEXT, name);
    if (!f)
        pp_die("no glibc definition of %s", name);
    return f;
}

_Noreturn void pp_die(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "park-preload: %s\n", line);
    abort();
}

/* ---- counters ------------------------------------------------------------ */

/* relaxed: statistics read once, at exit. */
static atomic_ulong pp_counts[PP_KINDS][2];

void pp_count(int kind, bool managed)
{
    atomic_fetch_add_explicit(&pp_counts[kind][managed], 1, memory_order_relaxed);
}

__attribute__((destructor)) static void pp_report(void)
{
    const char *v = getenv("PARK_PRELOAD_VERBOSE");
    if (!v || v[0] != '1' || v[1] != '\0')
        return;
    static const char *const names[PP_KINDS] = {"mutexes", "conds", "rwlocks", "sems"};
    char line[512];
    size_t n = 0;
    n += (size_t)snprintf(line + n, sizeof line - n, "park-preload:");
    for (int k = 0; k < PP_KINDS; k++)
        n += (size_t)snprintf(line + n, sizeof line - n, "%s %s %lu managed, %lu passed through",
                              k ? ";" : "", names[k],
                              atomic_load_explicit(&pp_counts[k][1], memory_order_relaxed),
                              atomic_load_explicit(&pp_counts[k][0], memory_order_relaxed));
    fprintf(stderr, "%s\n", line);
}

int pp_cancel_state(int state)
{
    int old;
    pthread_setcancelstate(state, &old);
    return old;
}

/* ---- time ------------------------------------------------------------------ */

int pp_check_clock(clockid_t clock)
{
    return clock == CLOCK_REALTIME || clock == CLOCK_MONOTONIC ? 0 : EINVAL;
}

park_time_t pp_deadline(clockid_t clock, const struct timespec *abstime)
{
    park_time_t at = pp_ts_ns(abstime);
    if (clock == CLOCK_MONOTONIC || at == PARK_FOREVER)
        return at;
    /* CLOCK_REALTIME: the same distance from now on CLOCK_MONOTONIC (a
     * clock step during the wait does not move the deadline). */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    park_time_t rt = pp_ts_ns(&now);
    if (at <= rt)
        return 0;
    return park_deadline_in(at - rt);
}
