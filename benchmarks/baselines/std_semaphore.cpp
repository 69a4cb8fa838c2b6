// benchmarks/baselines/std_semaphore.cpp: std::counting_semaphore<> (C++20)
// in the opaque storage of std_semaphore.h.
#include "std_semaphore.h"

#include <new>
#include <semaphore>

namespace baseline
{

namespace
{
using Semaphore = std::counting_semaphore<>;
static_assert(sizeof(Semaphore) <= sizeof(StdSemaphore::storage_));
static_assert(alignof(Semaphore) <= alignof(StdSemaphore));

Semaphore *get(StdSemaphore *s)
{
    return std::launder(reinterpret_cast<Semaphore *>(s->storage_));
}
} // namespace

void std_sem_init(StdSemaphore *s, uint32_t initial)
{
    new (s->storage_) Semaphore(static_cast<std::ptrdiff_t>(initial));
}

void std_sem_destroy(StdSemaphore *s)
{
    get(s)->~Semaphore();
}

void std_sem_acquire(StdSemaphore *s)
{
    get(s)->acquire();
}

bool std_sem_try_acquire(StdSemaphore *s)
{
    return get(s)->try_acquire();
}

void std_sem_release(StdSemaphore *s)
{
    get(s)->release();
}

} // namespace baseline
