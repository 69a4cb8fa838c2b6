// benchmarks/baselines/std_barrier.h: std::barrier for the C++17 harness.
//
// std::barrier is C++20; std_barrier.cpp is compiled as C++20 and keeps the
// barrier in this opaque storage, so the harness stays C++17. With
// link-time optimisation these calls inline like the header's own
// functions.
#ifndef PARK_BENCH_STD_BARRIER_H
#define PARK_BENCH_STD_BARRIER_H

#include <cstdint>

namespace baseline
{

struct StdBarrier {
    alignas(16) unsigned char storage_[64];
};

// A barrier of `count` arrivals per phase, no completion function.
void std_barrier_init(StdBarrier *b, uint32_t count);
void std_barrier_destroy(StdBarrier *b);
void std_barrier_arrive_and_wait(StdBarrier *b);

} // namespace baseline

#endif // PARK_BENCH_STD_BARRIER_H
