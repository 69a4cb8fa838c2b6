// benchmarks/baselines/std_semaphore.h: std::counting_semaphore for the
// C++17 harness.
//
// std::counting_semaphore is C++20; std_semaphore.cpp is compiled as C++20
// and keeps the semaphore in this opaque storage, so the harness stays
// C++17. With link-time optimisation these calls inline like the header's
// own functions.
#ifndef PARK_BENCH_STD_SEMAPHORE_H
#define PARK_BENCH_STD_SEMAPHORE_H

#include <cstdint>

namespace baseline
{

struct StdSemaphore {
    alignas(8) unsigned char storage_[16];
};

void std_sem_init(StdSemaphore *s, uint32_t initial);
void std_sem_destroy(StdSemaphore *s);
void std_sem_acquire(StdSemaphore *s);
bool std_sem_try_acquire(StdSemaphore *s);
void std_sem_release(StdSemaphore *s);

} // namespace baseline

#endif // PARK_BENCH_STD_SEMAPHORE_H
