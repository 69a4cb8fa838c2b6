// benchmarks/barrier.cpp: the barrier family.
//
// Contenders (policy structs): park (park_barrier_t, no completion
// function), pthread (pthread_barrier_t) and std (std::barrier<>,
// baselines/std_barrier.cpp). Each provides, over its barrier_type:
//   init(b, count) destroy(b) arrive_and_wait(b)
// The Rust peers (benchmarks/peers/rust) add rust_std
// (std::sync::Barrier) and rust_tokio (tokio::sync::Barrier) under the
// same names.
//
// Scenario (one loop body, run by every contender):
//   rounds        T threads (T = 2, 4, 8) call arrive_and_wait in a loop,
//                 one phase per round; windowed. Thread 0 decides before
//                 each arrival whether this round is the last and leaves
//                 its decision where every thread reads it once the
//                 round's phase has ended (the barrier orders it), so all
//                 threads leave after the same round. real_time = time per
//                 round; p50/p99/p99.9 of the time between thread 0's
//                 successive returns.
#include "harness.h"

#include "baselines/std_barrier.h"

#include <park/barrier.h>

#include <pthread.h>

#include <atomic>
#include <memory>

namespace
{

// ---- contenders ---------------------------------------------------------

struct Park {
    static constexpr const char *name = "park";
    using barrier_type = park_barrier_t;
    static void init(barrier_type &b, uint32_t count)
    {
        (void)park_barrier_init(&b, count, nullptr, nullptr);
    }
    static void destroy(barrier_type &b)
    {
        (void)park_barrier_destroy(&b);
    }
    static void arrive_and_wait(barrier_type &b)
    {
        (void)park_barrier_arrive_and_wait(&b);
    }
};

struct Pthread {
    static constexpr const char *name = "pthread";
    using barrier_type = pthread_barrier_t;
    static void init(barrier_type &b, uint32_t count)
    {
        pthread_barrier_init(&b, nullptr, count);
    }
    static void destroy(barrier_type &b)
    {
        pthread_barrier_destroy(&b);
    }
    static void arrive_and_wait(barrier_type &b)
    {
        (void)pthread_barrier_wait(&b);
    }
};

struct Std {
    static constexpr const char *name = "std";
    using barrier_type = baseline::StdBarrier;
    static void init(barrier_type &b, uint32_t count)
    {
        baseline::std_barrier_init(&b, count);
    }
    static void destroy(barrier_type &b)
    {
        baseline::std_barrier_destroy(&b);
    }
    static void arrive_and_wait(barrier_type &b)
    {
        baseline::std_barrier_arrive_and_wait(&b);
    }
};

template <class... Cs> struct List {
};

// The contender table: every scenario below runs for each entry, in order.
using Contenders = List<Park, Pthread, Std>;

constexpr int kThreads[] = {2, 4, 8};

// ---- rounds -------------------------------------------------------------

// The barrier on its own cache line, and thread 0's decisions: round k's
// in last[k % 2]. Thread 0 writes round k + 2's only after round k + 1's
// phase has ended, which every thread reaches only after reading round
// k's, so one slot per parity is enough.
template <class C> struct Rounds {
    alignas(64) typename C::barrier_type b;
    alignas(64) std::atomic<bool> last[2];
};

template <class C>
bench::ThreadResult rounds_thread(bench::Window &w, Rounds<C> &g, int index, bench::Histogram &hist)
{
    uint64_t rounds = 0, prev = 0;
    w.start();
    for (uint64_t k = 0;; ++k) {
        // relaxed: the barrier orders this store before the loads below
        // (every arrival happens before every return from the phase).
        if (index == 0)
            g.last[k & 1].store(!w.running(), std::memory_order_relaxed);
        C::arrive_and_wait(g.b);
        if (g.last[k & 1].load(std::memory_order_relaxed))
            break;
        if (index == 0) {
            uint64_t now = bench::ticks();
            if (k > 0)
                hist.record(now > prev ? now - prev : 0);
            prev = now;
            ++rounds;
        }
    }
    return bench::ThreadResult{rounds, 0};
}

template <class C> void rounds(benchmark::State &state, int threads)
{
    auto g = std::make_unique<Rounds<C>>();
    C::init(g->b, static_cast<uint32_t>(threads));
    bench::Histogram hist;
    bench::WindowResult r;
    for (auto _ : state) {
        r = bench::run_window(threads, [&g, &hist](bench::Window &w, int index) {
            return rounds_thread<C>(w, *g, index, hist);
        });
        bench::set_time_per_op(state, r);
    }
    C::destroy(g->b);
    bench::report_handoff(state, r, hist);
}

// ---- registration -------------------------------------------------------

template <class... Cs> void register_all(List<Cs...>)
{
    for (int t : kThreads)
        (bench::add_windowed(bench::row_name("barrier", "rounds", Cs::name, t),
                             [t](benchmark::State &s) { rounds<Cs>(s, t); }),
         ...);
}

} // namespace

void bench::register_barrier()
{
    register_all(Contenders{});
}
