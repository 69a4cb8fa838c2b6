/* benchmarks/baselines/pause.h: the spin-wait hint of the baselines that
 * spin (spin_cas.h, futex_rwlock.h): x86's pause, elsewhere only a
 * compiler barrier. Compiles as C and as C++. */
#ifndef PARK_BENCH_PAUSE_H
#define PARK_BENCH_PAUSE_H

static inline void bl_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

#endif /* PARK_BENCH_PAUSE_H */
