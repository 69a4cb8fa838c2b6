// benchmarks/baselines/std_barrier.cpp: std::barrier<> (C++20) in the
// opaque storage of std_barrier.h.
#include "std_barrier.h"

#include <barrier>
#include <new>

namespace baseline
{

namespace
{
using Barrier = std::barrier<>;
static_assert(sizeof(Barrier) <= sizeof(StdBarrier::storage_));
static_assert(alignof(Barrier) <= alignof(StdBarrier));

Barrier *get(StdBarrier *b)
{
    return std::launder(reinterpret_cast<Barrier *>(b->storage_));
}
} // namespace

void std_barrier_init(StdBarrier *b, uint32_t count)
{
    new (b->storage_) Barrier(static_cast<std::ptrdiff_t>(count));
}

void std_barrier_destroy(StdBarrier *b)
{
    get(b)->~Barrier();
}

void std_barrier_arrive_and_wait(StdBarrier *b)
{
    get(b)->arrive_and_wait();
}

} // namespace baseline
