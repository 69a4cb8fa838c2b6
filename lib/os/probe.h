/* lib/os/probe.h: USDT probes (provider `park`) on the slow paths.
 *
 * A probe is a single nop plus an ELF note (.note.stapsdt) naming it and
 * saying where its arguments are; a tracer that attaches to it (perf probe,
 * bpftrace, systemtap, gdb) replaces the nop with a breakpoint. Not attached,
 * it costs one nop and keeps its arguments live in registers, which is why
 * probes sit only in lib/ slow paths and never in the inline fast paths.
 *
 * Compiled in when the build defines PARK_PROBES (CMake option PARK_PROBES,
 * on by default) and <sys/sdt.h> exists (Debian: systemtap-sdt-dev);
 * otherwise every macro only evaluates its arguments (so both builds see the
 * same uses), which the compiler drops. Arguments must have no side effects.
 *
 *   probe     where                                            arguments
 *   park      a thread waiter is about to futex-sleep          key
 *             (once per sleep, spurious wake-ups included)
 *   unpark    park__unpark is done with the queue (n may be 0)  key, n granted
 *   wake      a waker sets a granted thread waiter's `woken`   key
 *   timeout   a waiter left the queue ungranted (timeout,      key
 *             before_sleep abort or cancellation)
 *   handoff   the slow mutex unlock handed the lock over       mutex
 *   hinted    a store unlock saw a hint and calls              mutex
 *             park__mutex_unlock_hinted
 *
 * Keys and mutexes are addresses only: by the time a tracer reads them the
 * object may be gone. tools/profile --probes counts them with perf. */
#ifndef PARK_LIB_OS_PROBE_H
#define PARK_LIB_OS_PROBE_H

#if defined(PARK_PROBES) && defined(__has_include)
#if __has_include(<sys/sdt.h>)
#include <sys/sdt.h>
#define PARK__PROBES_ON 1
#endif
#endif

#ifdef PARK__PROBES_ON
#define PARK__PROBE0(name) DTRACE_PROBE(park, name)
#define PARK__PROBE1(name, a) DTRACE_PROBE1(park, name, a)
#define PARK__PROBE2(name, a, b) DTRACE_PROBE2(park, name, a, b)
#else
#define PARK__PROBE0(name) ((void)0)
#define PARK__PROBE1(name, a) ((void)(a))
#define PARK__PROBE2(name, a, b) ((void)(a), (void)(b))
#endif

#endif /* PARK_LIB_OS_PROBE_H */
