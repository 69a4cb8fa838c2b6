/* lib/preload/preload.c: what every part of the drop-in shares: glibc's
 * own functions for what passes through, the counters that
 * PARK_PRELOAD_VERBOSE=1 reports at exit, deadlines, and the abort for
 * misuse the drop-in cannot serve. */
#include "preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif

/* ---- the report's descriptor ------------------------------------------------
 *
 * Where the exit report and the misuse abort write: a copy of standard
 * error taken at load time, so that a program that closes its standard
 * error before it exits (xz and GNU sort do) still gets its report, or the
 * file PARK_PRELOAD_LOG names (appended to). Taken only when
 * PARK_PRELOAD_VERBOSE=1 or PARK_PRELOAD_LOG is set, numbered 100 or more
 * (out of the way of a program that counts its low descriptors) and
 * close-on-exec; -1 until then, and then standard error is used. */
static int pp_log_fd = -1;

static bool pp_verbose(void)
{
    const char *v = getenv("PARK_PRELOAD_VERBOSE");
    return v && v[0] == '1' && v[1] == '\0';
}

__attribute__((constructor)) static void pp_log_open(void)
{
    const char *path = getenv("PARK_PRELOAD_LOG");
    if (path && path[0]) {
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0) {
            pp_log_fd = fcntl(fd, F_DUPFD_CLOEXEC, 100);
            close(fd);
        }
        if (pp_log_fd < 0)
            fprintf(stderr, "park-preload: cannot open PARK_PRELOAD_LOG=%s: %s\n", path,
                    strerror(errno));
        return;
    }
    if (pp_verbose())
        pp_log_fd = fcntl(2, F_DUPFD_CLOEXEC, 100);
}

/* Writes line and a newline, whole, to the report's descriptor. */
static void pp_log(const char *line)
{
    int fd = pp_log_fd >= 0 ? pp_log_fd : 2;
    char buf[640];
    int n = snprintf(buf, sizeof buf, "%s\n", line);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, buf + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        off += (size_t)w;
    }
}

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
    int n = snprintf(line, sizeof line, "park-preload: ");
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    pp_log(line);
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
    if (!pp_verbose())
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
    pp_log(line);
}

int pp_cancel_state(int state)
{
    int old;
    pthread_setcancelstate(state, &old);
    return old;
}

void pp_testcancel(void)
{
#ifdef __SANITIZE_ADDRESS__
    __asan_handle_no_return();
#endif
    pthread_testcancel();
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
