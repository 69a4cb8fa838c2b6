/* lib/preload/futex.h: the futex calls of the drop-in's condition variable
 * (private futexes; the cond parks each waiter on a word of its own). */
#ifndef PARK_PRELOAD_FUTEX_H
#define PARK_PRELOAD_FUTEX_H

#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Sleeps while *word == val, until woken, a signal, or the absolute time
 * `abstime` on `clock` (NULL: no limit): 0, EAGAIN (*word != val), EINTR or
 * ETIMEDOUT. */
static inline int pp_futex_wait(uint32_t *word, uint32_t val, clockid_t clock,
                                const struct timespec *abstime)
{
    if (abstime && abstime->tv_sec < 0)
        return ETIMEDOUT; /* before the epoch: passed (the kernel says EINVAL) */
    int op = FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG;
    if (abstime && clock == CLOCK_REALTIME)
        op |= FUTEX_CLOCK_REALTIME;
    long r = syscall(SYS_futex, word, op, val, abstime, NULL, FUTEX_BITSET_MATCH_ANY);
    return r == 0 ? 0 : errno;
}

/* Wakes up to n threads sleeping on word. Touches only the address. */
static inline void pp_futex_wake(uint32_t *word, int n)
{
    syscall(SYS_futex, word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, n, NULL, NULL, 0);
}

#endif /* PARK_PRELOAD_FUTEX_H */
