/* lib/os/os.h: the operating-system layer. These files are the only ones in
 * park that make system calls.
 *
 * Every futex call in park goes through park__futex_wait/park__futex_wake.
 * A library built with PARK_FAULTS and run with PARK_FAULT_SEED=<n> (n != 0)
 * makes them misbehave from that seed, as the kernel is allowed to: wait
 * returns spuriously, with EINTR or with an early ETIMEDOUT, and both may be
 * delayed (and so may park__fault_pause's callers). Callers must treat
 * every return as a hint and re-check their own state and the clock. */
#ifndef PARK_LIB_OS_H
#define PARK_LIB_OS_H

#include <park/time.h>

/* park__futex_wait_on flags. */
#define PARK__FUTEX_REALTIME 1u /* the deadline is on CLOCK_REALTIME (ns since the epoch) */
/* The wait is a pthread cancellation point: asynchronous cancellation is
 * enabled for the system call alone (whatever the caller's cancel state
 * and type), and restored after it. The caller must be ready to be
 * cancelled there (a cleanup handler in place). */
#define PARK__FUTEX_CANCEL 2u

/* Sleeps while *word == expected, at most until the absolute deadline
 * (PARK_FOREVER: no limit; CLOCK_MONOTONIC unless PARK__FUTEX_REALTIME).
 * Private futex. Returns 0 (woken, possibly spuriously), EAGAIN (*word !=
 * expected), ETIMEDOUT (possibly early under fault injection) or EINTR. */
int park__futex_wait_on(uint32_t *word, uint32_t expected, park_time_t deadline, unsigned flags);

/* park__futex_wait_on without flags. */
static inline int park__futex_wait(uint32_t *word, uint32_t expected, park_time_t deadline)
{
    return park__futex_wait_on(word, expected, deadline, 0);
}

/* Under fault injection (PARK_FAULTS, PARK_FAULT_SEED set), now and then a
 * yield or a short sleep, placed where a protocol's window between two of
 * its steps is worth widening; nothing otherwise. */
#ifdef PARK_FAULTS
void park__fault_pause(void);
#else
static inline void park__fault_pause(void)
{
}
#endif

/* CLOCK_REALTIME in nanoseconds since the epoch (0 before it). */
park_time_t park__os_realtime_now(void);

/* Wakes up to n threads sleeping on word (INT32_MAX: all). Private futex.
 * The address need not be live memory any more: the kernel only hashes it,
 * and every sleeper tolerates spurious wake-ups. */
void park__futex_wake(uint32_t *word, int n);

/* Registers the process for expedited private membarriers: true if
 * park__os_membarrier may be used. Idempotent. */
bool park__os_membarrier_register(void);

/* An asymmetric full fence: when it returns, every thread of the process
 * that was running has passed a full memory barrier, so the caller sees
 * their earlier stores and they see the caller's. Only after a successful
 * park__os_membarrier_register. Costs a few microseconds (an IPI per CPU
 * running one of our threads): for slow paths only. */
void park__os_membarrier(void);

/* Writes "park: call(obj): what" to stderr and aborts: for misuse that no
 * return value can report (a call that would wait for itself, a second
 * destroy, a released task used), and for a state that cannot happen
 * (then `call` names park's own function). Every abort in park but the
 * drop-in's own goes through here. Never returns. */
_Noreturn void park__misuse(const char *call, const void *obj, const char *what);

/* Gives the processor to another runnable thread (sched_yield) and
 * returns true; or, in a thread of low weight (park__os_low_weight),
 * returns false at once: the caller then sleeps, as it would once its
 * yields were spent, or naps (park__os_nap) where it has nothing to sleep
 * on. The kernel's fair scheduler (EEVDF) puts a yielding thread's
 * deadline one time slice later and counts the slice in inverse
 * proportion to the thread's weight, about 70 times a nice-0 thread's for
 * a nice-19 one: such a yield gives the CPU away for long, where a sleep
 * keeps the thread what it is owed (docs/design/mutex.md, Tuning). The
 * weight is looked at on a thread's first call and every 256th after. */
bool park__os_yield(void);

/* True if park__os_yield's last look at this thread's weight found it low
 * (so its yields are skipped): a wait of this thread says nothing about
 * what yields would have done (lib/wait's adaptive budget). False before
 * its first yield. */
bool park__os_yields_skipped(void);

/* A short sleep: the kernel's timer slack (50 us by default) and the
 * timer's latency: about 70 us on a 2-CPU virtual machine. */
void park__os_nap(void);

/* The calling thread's timer slack: how far past its timeout the kernel
 * may let a timed sleep run, to batch wake-ups (50 us by default; real-time
 * threads have none). 0 if it cannot be read. Leaves errno alone. */
unsigned long park__os_timer_slack(void);

/* Sets the calling thread's timer slack to ns (> 0). Leaves errno alone. */
void park__os_set_timer_slack(unsigned long ns);

/* True if the calling thread's scheduling weight is below that of the
 * thread that loaded park: a higher nice value, or SCHED_IDLE where that
 * thread was not. A process started with `nice` has all its threads at
 * the base, so only threads lowered on their own (a background thread
 * that raised its nice value, a SCHED_IDLE helper) count. Two system
 * calls. */
bool park__os_low_weight(void);

/* True if the process may run on one CPU only (then spinning cannot help:
 * the thread it waits for is not running). Read once, at load time. */
extern bool park__os_one_cpu;
static inline bool park__os_single_cpu(void)
{
    return park__os_one_cpu;
}

/* The absolute deadline (CLOCK_MONOTONIC, park/time.h) has passed; never
 * for PARK_FOREVER, which reads no clock. */
static inline bool park__deadline_passed(park_time_t deadline)
{
    return deadline != PARK_FOREVER && park_now() >= deadline;
}

/* The one pseudo-random generator of park, xorshift64* (Vigna): cheap, for
 * spreading work and timing (spin budgets, victims to steal from, injected
 * faults), never for anything that must be unpredictable. *state is the
 * stream, never 0; returns its next 32 bits, the high ones of the product
 * (the low bits of xorshift are the weak ones). */
static inline uint32_t park__random(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32);
}

/* A stream's state from any value (a thread's address, a worker's index):
 * multiplying by 2^64 divided by the golden ratio spreads nearby values
 * over all 64 bits; never 0. */
static inline uint64_t park__random_seed(uint64_t v)
{
    return v * 0x9e3779b97f4a7c15ull | 1u;
}

/* A spin-wait hint for the processor. */
static inline void park__os_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* A cheap monotonic tick count for heuristics that need only the order of
 * magnitude of an interval: the time-stamp counter on x86 (1-5 GHz), the
 * virtual counter on AArch64 (PARK__OS_TICKS_PER_US per microsecond,
 * read from cntfrq), nanoseconds elsewhere. Per thread: a thread that
 * moves between processors may see a small step. */
static inline uint64_t park__os_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
    uint64_t t;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(t));
    return t;
#else
    return park_now();
#endif
}

/* Ticks of park__os_ticks in about a microsecond (x86: 3 GHz assumed). */
static inline uint64_t park__os_ticks_per_us(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return 3000;
#elif defined(__aarch64__)
    uint64_t f;
    __asm__("mrs %0, cntfrq_el0" : "=r"(f));
    return f / 1000000 ? f / 1000000 : 1;
#else
    return 1000;
#endif
}

#endif /* PARK_LIB_OS_H */
