/* lib/os/futex.c: futex wait and wake, and the fault injector that stands
 * between them and their callers in PARK_FAULTS builds. */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "os/os.h"

static long futex_wait_call(uint32_t *word, uint32_t expected, const struct timespec *abs,
                            unsigned flags)
{
    /* FUTEX_WAIT_BITSET takes an absolute deadline (CLOCK_MONOTONIC unless
     * FUTEX_CLOCK_REALTIME), so a retried wait never stretches it. */
    int op = FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG;
    if (flags & PARK__FUTEX_REALTIME)
        op |= FUTEX_CLOCK_REALTIME;
    if (!(flags & PARK__FUTEX_CANCEL))
        return syscall(SYS_futex, word, op, expected, abs, NULL, FUTEX_BITSET_MATCH_ANY);
    /* A pending cancellation acts in pthread_setcanceltype, or in the
     * system call. */
    int state, type, ignored;
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &state);
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &type);
    long r = syscall(SYS_futex, word, op, expected, abs, NULL, FUTEX_BITSET_MATCH_ANY);
    int e = errno;
    pthread_setcanceltype(type, &ignored);
    pthread_setcancelstate(state, &ignored);
    errno = e;
    return r;
}

static int futex_wait_raw(uint32_t *word, uint32_t expected, park_time_t deadline, unsigned flags)
{
    struct timespec ts, *abs = NULL;
    if (deadline != PARK_FOREVER) {
        ts.tv_sec = (time_t)(deadline / 1000000000u);
        ts.tv_nsec = (long)(deadline % 1000000000u);
        abs = &ts;
    }
    /* errno is put back: a wait is no failure of the caller's caller
     * (pthread_mutex_lock under the drop-in leaves errno alone). */
    int saved = errno, r = 0;
    if (futex_wait_call(word, expected, abs, flags) != 0)
        r = errno == EAGAIN || errno == ETIMEDOUT || errno == EINTR ? errno : 0;
    errno = saved;
    return r;
}

static void futex_wake_raw(uint32_t *word, int n)
{
    int saved = errno; /* as futex_wait_raw */
    syscall(SYS_futex, word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, n, NULL, NULL, 0);
    errno = saved;
}

bool park__os_membarrier_register(void)
{
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED))
        return false;
    return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

void park__os_membarrier(void)
{
    /* Registered, so it cannot fail; if it did, callers that rely on it
     * would lose wake-ups, which is worse than stopping. */
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
        park__misuse("park__os_membarrier", NULL, "membarrier failed after registration");
}

/* The scheduling of the thread that loaded park (the process's, unless a
 * thread changed its own before): the weight a thread's is compared with. */
static int base_policy = SCHED_OTHER;
static int base_nice;

/* A thread's scheduling as park__os_low_weight compares it: the nice value
 * of a fair-class thread, above every nice value for SCHED_IDLE, and below
 * every one for a real-time policy (which yields among its own priority
 * only). */
static int weight_rank(int policy, int nice)
{
    if (policy == SCHED_IDLE)
        return 100;
    if (policy == SCHED_OTHER || policy == SCHED_BATCH)
        return nice;
    return -100;
}

/* The calling thread's policy and nice value; false if they cannot be
 * read. Leaves errno as it was: the waits that call it (a pthread mutex's
 * lock under the drop-in among them) must not change it. */
static bool read_weight(int *policy, int *nice)
{
    int saved = errno;
    *policy = sched_getscheduler(0);
    errno = 0;
    *nice = getpriority(PRIO_PROCESS, 0); /* Linux: the calling thread's */
    bool ok = *policy >= 0 && !(*nice == -1 && errno != 0);
    errno = saved;
    return ok;
}

bool park__os_low_weight(void)
{
    int policy, nice;
    return read_weight(&policy, &nice) &&
           weight_rank(policy, nice) > weight_rank(base_policy, base_nice);
}

/* How many yields a thread asks for between two looks at its weight: the
 * look is two system calls, and a thread whose weight changes keeps its
 * old behaviour for at most this many. */
#define WEIGHT_LOOK_EVERY 256u

/* The calling thread's weight, as its last look found it. */
static _Thread_local uint32_t until_look; /* 0: look at the next yield */
static _Thread_local bool low;

bool park__os_yields_skipped(void)
{
    return low;
}

bool park__os_yield(void)
{
    if (until_look-- == 0) {
        until_look = WEIGHT_LOOK_EVERY - 1;
        low = park__os_low_weight();
    }
    if (low)
        return false;
    sched_yield();
    return true;
}

void park__os_nap(void)
{
    /* The raw system call, as in fault_delay: not a cancellation point,
     * as sched_yield is none. */
    int saved = errno; /* EINTR from a signal: nobody's business */
    struct timespec ts = {0, 1000};
    syscall(SYS_nanosleep, &ts, NULL);
    errno = saved;
}

unsigned long park__os_timer_slack(void)
{
    int saved = errno;
    long slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    errno = saved;
    return slack > 0 ? (unsigned long)slack : 0;
}

void park__os_set_timer_slack(unsigned long ns)
{
    int saved = errno;
    (void)prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0);
    errno = saved;
}

bool park__os_one_cpu;

__attribute__((constructor)) static void os_count_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        park__os_one_cpu = CPU_COUNT(&set) == 1;
    else
        park__os_one_cpu = sysconf(_SC_NPROCESSORS_ONLN) == 1;
    int policy, nice;
    if (read_weight(&policy, &nice)) {
        base_policy = policy;
        base_nice = nice;
    }
}

#ifndef PARK_FAULTS

int park__futex_wait_on(uint32_t *word, uint32_t expected, park_time_t deadline, unsigned flags)
{
    return futex_wait_raw(word, expected, deadline, flags);
}

void park__futex_wake(uint32_t *word, int n)
{
    futex_wake_raw(word, n);
}

#else /* PARK_FAULTS */

#include <stdatomic.h>

enum fault {
    FAULT_NONE,
    FAULT_SPURIOUS, /* wait returns 0 without sleeping */
    FAULT_EINTR,    /* wait returns EINTR without sleeping */
    FAULT_EARLY,    /* wait returns ETIMEDOUT before the deadline */
    FAULT_DELAY,    /* the call is delayed by a yield or a short sleep */
};

static uint64_t fault_seed; /* 0: injection off; set before main */
static atomic_uint_fast64_t fault_threads;
static _Thread_local uint64_t fault_rng;

__attribute__((constructor)) static void fault_read_seed(void)
{
    const char *s = getenv("PARK_FAULT_SEED");
    fault_seed = s ? strtoull(s, NULL, 0) : 0;
}

/* One stream per thread, all derived from the seed. */
static uint32_t fault_random(void)
{
    if (fault_rng == 0) {
        /* relaxed: only distinctness of the per-thread streams matters. */
        uint64_t id = atomic_fetch_add_explicit(&fault_threads, 1, memory_order_relaxed) + 1;
        fault_rng = (fault_seed ^ (id * 0x9e3779b97f4a7c15u)) | 1;
    }
    return park__random(&fault_rng);
}

static enum fault fault_pick(void)
{
    if (fault_seed == 0)
        return FAULT_NONE;
    uint32_t r = fault_random() % 64;
    if (r < 6)
        return FAULT_SPURIOUS;
    if (r < 9)
        return FAULT_EINTR;
    if (r < 12)
        return FAULT_EARLY;
    if (r < 18)
        return FAULT_DELAY;
    return FAULT_NONE;
}

/* Neither a yield nor the raw system call is a cancellation point: a
 * delay must not add one where the real calls have none (a thread
 * cancelled in a wake's delay would never make the wake). */
static void fault_delay(void)
{
    if (fault_random() % 2) {
        sched_yield();
    } else {
        struct timespec ts = {0, 1000 + fault_random() % 50000};
        syscall(SYS_nanosleep, &ts, NULL);
    }
}

int park__futex_wait_on(uint32_t *word, uint32_t expected, park_time_t deadline, unsigned flags)
{
    switch (fault_pick()) {
    case FAULT_SPURIOUS:
        return 0;
    case FAULT_EINTR:
        return EINTR;
    case FAULT_EARLY:
        return ETIMEDOUT;
    case FAULT_DELAY:
        fault_delay();
        break;
    case FAULT_NONE:
        break;
    }
    return futex_wait_raw(word, expected, deadline, flags);
}

void park__fault_pause(void)
{
    if (fault_seed != 0 && fault_random() % 32 == 0)
        fault_delay();
}

void park__futex_wake(uint32_t *word, int n)
{
    if (fault_pick() == FAULT_DELAY)
        fault_delay();
    futex_wake_raw(word, n);
}

#endif /* PARK_FAULTS */
