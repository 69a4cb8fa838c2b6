// benchmarks/sem_many.cpp: the acquire-many family (several permits of a
// counting semaphore taken at once).
//
// Contenders (policy structs): park (park_sem_acquire_n on a park_sem_t,
// default: barging with bounded unfairness), park_fifo (the same on a
// strictly FIFO park_sem_t) and condvar (the textbook: a count under a
// std::mutex, a waiter for n sleeping on a std::condition_variable until n
// are free, every release waking all sleepers, since each wants its own n;
// baselines/condvar_semaphore.h). Each provides, over its sem_type:
//   init(sem, permits) destroy(sem) acquire(sem, n) release(sem, n)
// The Rust peers (benchmarks/peers/rust) add rust_tokio
// (tokio::sync::Semaphore::acquire_many, strictly FIFO) under the same
// names.
//
// Scenario (one loop body, run by every contender):
//   mix           4 threads share a semaphore of 32 permits. Each request
//                 takes n = 1 with probability 95 % and n = 32 (every
//                 permit) with 5 % (a per-thread LCG, the same sequence for
//                 every contender), holds them for a short critical section
//                 (200 LCG rounds), releases n and does 50 LCG rounds of
//                 work outside. Windowed; each request's wait is timed
//                 (TSC around the acquire) and kept per n: n1_p50_ns,
//                 n1_p99_ns (the small requests' latency, which a waiting
//                 large request may hold back), n32_p50_ns, n32_p99_ns,
//                 n32_p999_ns, n32_worst_ns (the large request's wait,
//                 which small ones passing it stretch) and n32_requests. More holders than permits
//                 makes the row an error.
#include "harness.h"

#include "baselines/condvar_semaphore.h"

#include <park/sem.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

namespace
{

constexpr uint32_t kPermits = 32;
constexpr int kThreads = 4;
constexpr uint32_t kBigPercent = 5; // requests for all kPermits, in %
constexpr int kHold = 200;          // LCG rounds holding the permits
constexpr int kOutside = 50;        // LCG rounds between requests

// ---- contenders ---------------------------------------------------------

struct Park {
    static constexpr const char *name = "park";
    using sem_type = park_sem_t;
    static void init(sem_type &s, uint32_t permits)
    {
        (void)park_sem_init(&s, permits, PARK_SEM_VALUE_MAX);
    }
    static void destroy(sem_type &s)
    {
        (void)park_sem_destroy(&s);
    }
    static void acquire(sem_type &s, uint32_t n)
    {
        (void)park_sem_acquire_n(&s, n);
    }
    static void release(sem_type &s, uint32_t n)
    {
        (void)park_sem_release(&s, n);
    }
};

struct ParkFifo : Park {
    static constexpr const char *name = "park_fifo";
    static void init(sem_type &s, uint32_t permits)
    {
        (void)park_sem_init_fifo(&s, permits, PARK_SEM_VALUE_MAX);
    }
};

struct Condvar {
    static constexpr const char *name = "condvar";
    using sem_type = baseline::CondvarSemaphore;
    static void init(sem_type &s, uint32_t permits)
    {
        s.init(permits);
    }
    static void destroy(sem_type &)
    {
    }
    static void acquire(sem_type &s, uint32_t n)
    {
        s.acquire(n);
    }
    static void release(sem_type &s, uint32_t n)
    {
        s.release(n);
    }
};

template <class... Cs> struct List {
};

// The contender table: every scenario below runs for each entry, in order.
using Contenders = List<Park, ParkFifo, Condvar>;

// ---- mix ----------------------------------------------------------------

template <class C> struct Mix {
    alignas(64) typename C::sem_type s;
    alignas(64) std::atomic<uint32_t> inside{0}; // permits held right now
    std::atomic<bool> excess{false};
};

// What one thread saw, kept apart per thread and merged after the window.
struct Waits {
    bench::Histogram small, big;
    uint64_t big_worst = 0;
};

template <class C>
bench::ThreadResult mix_thread(bench::Window &w, Mix<C> &g, int index, Waits &waits)
{
    uint64_t s = static_cast<uint64_t>(index) + 1, x = s, ops = 0;
    w.start();
    while (w.running()) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        uint32_t n = (s >> 33) % 100 < kBigPercent ? kPermits : 1;
        uint64_t t0 = bench::ticks();
        C::acquire(g.s, n);
        uint64_t waited = bench::ticks_since(t0);
        // relaxed: the semaphore orders the holders; `inside` only counts.
        if (g.inside.fetch_add(n, std::memory_order_relaxed) + n > kPermits)
            g.excess.store(true, std::memory_order_relaxed);
        x = bench::lcg_rounds(x, kHold);
        g.inside.fetch_sub(n, std::memory_order_relaxed);
        C::release(g.s, n);
        if (n == 1) {
            waits.small.record(waited);
        } else {
            waits.big.record(waited);
            waits.big_worst = std::max(waits.big_worst, waited);
        }
        x = bench::lcg_rounds(x, kOutside);
        ++ops;
    }
    benchmark::DoNotOptimize(x);
    return bench::ThreadResult{ops, 0};
}

template <class C> void mix(benchmark::State &state)
{
    auto g = std::make_unique<Mix<C>>();
    C::init(g->s, kPermits);
    std::vector<Waits> waits;
    bench::WindowResult r;
    for (auto _ : state) {
        waits.assign(kThreads, Waits{});
        r = bench::run_window(kThreads, [&g, &waits](bench::Window &w, int index) {
            return mix_thread<C>(w, *g, index, waits[index]);
        });
        bench::set_time_per_op(state, r);
    }
    C::destroy(g->s);
    if (g->excess.load())
        state.SkipWithError("more permits held than the semaphore has");
    Waits all;
    for (const Waits &t : waits) {
        all.small.merge(t.small);
        all.big.merge(t.big);
        all.big_worst = std::max(all.big_worst, t.big_worst);
    }
    bench::report_throughput(state, r);
    state.counters["n1_p50_ns"] = bench::ticks_to_ns(all.small.quantile(0.50));
    state.counters["n1_p99_ns"] = bench::ticks_to_ns(all.small.quantile(0.99));
    state.counters["n32_p50_ns"] = bench::ticks_to_ns(all.big.quantile(0.50));
    state.counters["n32_p99_ns"] = bench::ticks_to_ns(all.big.quantile(0.99));
    state.counters["n32_p999_ns"] = bench::ticks_to_ns(all.big.quantile(0.999));
    state.counters["n32_worst_ns"] = bench::ticks_to_ns(all.big_worst);
    state.counters["n32_requests"] = static_cast<double>(all.big.count());
}

// ---- registration -------------------------------------------------------

template <class... Cs> void register_all(List<Cs...>)
{
    (bench::add_windowed(bench::row_name("sem_many", "mix", Cs::name, kThreads), mix<Cs>), ...);
}

} // namespace

void bench::register_sem_many()
{
    register_all(Contenders{});
}
