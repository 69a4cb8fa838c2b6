// benchmarks/sem.cpp: the counting semaphore family.
//
// Contenders (policy structs): park (park_sem_t, default: barging with
// bounded unfairness), park_fifo (strictly FIFO), sem_t (POSIX), std
// (std::counting_semaphore, baselines/std_semaphore.cpp) and condvar (the
// textbook mutex + condition variable semaphore,
// baselines/condvar_semaphore.h). Each provides, over its sem_type:
//   init(sem, permits) destroy(sem) acquire(sem) try_acquire(sem)
//   release(sem)   (one permit each)
//
// Scenarios (one loop body each, run by every contender):
//   uncontended   acquire + release of a one-permit semaphore by one thread;
//                 the idle thread started in main keeps the process
//                 multi-threaded.
//   contended     T threads share kPermits permits: acquire, update two
//                 shared cache lines, release, local work; windowed, with
//                 fairness and worst wait.
//   sweep_kK      the contention sweep: T threads through a semaphore of K
//                 permits (K = 1, 2; T = 2, 4, 8, 16) that shares its cache
//                 line only with the counter it guards: acquire, 4
//                 increments, release, 50 LCG rounds outside; windowed,
//                 with fairness and worst wait.
//   handoff       two threads ping-pong through two zero-permit semaphores:
//                 A releases `ping` and acquires `pong`, B acquires `ping`
//                 and releases `pong`; windowed, round-trip latency
//                 quantiles (A times release-to-acquire).
#include "harness.h"
#include "sem_contenders.h"

#include <algorithm>
#include <atomic>
#include <memory>

namespace
{

// Permits shared by the threads of the contended scenario: with 2 permits,
// 1 and 2 threads never wait for one (they still contend for the state's
// cache line) and from 4 threads on they queue.
constexpr uint32_t kPermits = 2;

// ---- contenders ---------------------------------------------------------

// The contender policy structs are in sem_contenders.h (the tail family
// runs some of them too).
using namespace bench::sems;

template <class... Cs> struct List {
};

// The contender table: every scenario below runs for each entry, in order.
using Contenders = List<Park, ParkFifo, PosixSem, Std, Condvar>;

// ---- shared state -------------------------------------------------------

// A semaphore on its own cache line.
template <class C> struct alignas(64) Padded {
    typename C::sem_type s;
};

// A counter on its own cache line.
struct alignas(64) Counter {
    std::atomic<uint64_t> n{0};
};

template <class C> struct Contended {
    Padded<C> sem;
    Counter inside; // holders right now; never above kPermits
    Counter hits;   // completed critical sections
    std::atomic<bool> excess{false};
};

// ---- scenarios ----------------------------------------------------------

template <class C> void uncontended(benchmark::State &state)
{
    auto p = std::make_unique<Padded<C>>();
    C::init(p->s, 1);
    for (auto _ : state) {
        C::acquire(p->s);
        C::release(p->s);
        benchmark::ClobberMemory();
    }
    C::destroy(p->s);
}

template <class C> void contended(benchmark::State &state, int threads)
{
    auto g = std::make_unique<Contended<C>>();
    C::init(g->sem.s, kPermits);
    bench::WindowResult r;
    for (auto _ : state) {
        r = bench::run_window(threads, [&g](bench::Window &w, int index) {
            uint64_t x = static_cast<uint64_t>(index) + 1, ops = 0, worst = 0;
            w.start();
            while (w.running()) {
                uint64_t t0 = bench::ticks();
                C::acquire(g->sem.s);
                worst = std::max(worst, bench::ticks_since(t0));
                // The critical section: two shared lines. Relaxed: the
                // semaphore orders them; `inside` only checks its count.
                if (g->inside.n.fetch_add(1, std::memory_order_relaxed) >= kPermits)
                    g->excess.store(true, std::memory_order_relaxed);
                g->hits.n.fetch_add(1, std::memory_order_relaxed);
                g->inside.n.fetch_sub(1, std::memory_order_relaxed);
                C::release(g->sem.s);
                x = bench::local_work(x);
                ++ops;
            }
            benchmark::DoNotOptimize(x);
            return bench::ThreadResult{ops, worst};
        });
        bench::set_time_per_op(state, r);
    }
    C::destroy(g->sem.s);
    if (g->excess.load() || g->hits.n.load() != r.total_ops())
        state.SkipWithError("more holders than permits, or lost updates");
    bench::report_contended(state, r);
}

// The sweep's semaphore and the data it guards, alone on one cache line.
template <class C> struct alignas(64) Guarded {
    typename C::sem_type s;
    uint64_t counter; // guarded by s when it has one permit
    std::atomic<uint64_t> inside{0};
};

constexpr int kSweepPermits[] = {1, 2};
constexpr int kSweepThreads[] = {2, 4, 8, 16};
constexpr int kSweepOutside = 50; // LCG rounds outside the critical section

template <class C> void sweep(benchmark::State &state, uint32_t permits, int threads)
{
    auto g = std::make_unique<Guarded<C>>();
    C::init(g->s, permits);
    std::atomic<bool> excess{false};
    std::atomic<uint64_t> hits{0};
    bench::WindowResult r;
    for (auto _ : state) {
        r = bench::run_window(threads, [&](bench::Window &w, int index) {
            uint64_t x = static_cast<uint64_t>(index) + 1, ops = 0, worst = 0;
            w.start();
            while (w.running()) {
                uint64_t t0 = bench::ticks();
                C::acquire(g->s);
                worst = std::max(worst, bench::ticks_since(t0));
                // relaxed: the semaphore orders them; `inside` checks the count.
                if (g->inside.fetch_add(1, std::memory_order_relaxed) >= permits)
                    excess.store(true, std::memory_order_relaxed);
                if (permits == 1)
                    for (int i = 0; i < 4; ++i)
                        benchmark::DoNotOptimize(++g->counter);
                g->inside.fetch_sub(1, std::memory_order_relaxed);
                C::release(g->s);
                x = bench::lcg_rounds(x, kSweepOutside);
                ++ops;
            }
            hits.fetch_add(ops, std::memory_order_relaxed);
            benchmark::DoNotOptimize(x);
            return bench::ThreadResult{ops, worst};
        });
        bench::set_time_per_op(state, r);
    }
    C::destroy(g->s);
    if (excess.load() || (permits == 1 && g->counter != 4 * hits.load()))
        state.SkipWithError("more holders than permits, or lost updates");
    bench::report_contended(state, r);
}

template <class C> struct Handoff {
    Padded<C> ping, pong;
    alignas(64) std::atomic<bool> done{false};
};

template <class C>
bench::ThreadResult handoff_ping(bench::Window &w, Handoff<C> &h, bench::Histogram &hist)
{
    uint64_t rounds = 0;
    w.start();
    for (;;) {
        bool last = !w.running();
        if (last)
            h.done.store(true, std::memory_order_relaxed); // ordered by the release of ping
        uint64_t t0 = bench::ticks();
        C::release(h.ping.s);
        if (last)
            break;
        C::acquire(h.pong.s);
        hist.record(bench::ticks_since(t0));
        ++rounds;
    }
    return bench::ThreadResult{rounds, 0};
}

template <class C> bench::ThreadResult handoff_echo(bench::Window &w, Handoff<C> &h)
{
    w.start();
    for (;;) {
        C::acquire(h.ping.s);
        if (h.done.load(std::memory_order_relaxed)) // ordered by the acquire of ping
            break;
        C::release(h.pong.s);
    }
    return bench::ThreadResult{};
}

template <class C> void handoff(benchmark::State &state)
{
    auto h = std::make_unique<Handoff<C>>();
    C::init(h->ping.s, 0);
    C::init(h->pong.s, 0);
    bench::Histogram hist;
    bench::WindowResult r;
    for (auto _ : state) {
        r = bench::run_window(2, [&h, &hist](bench::Window &w, int index) {
            return index == 0 ? handoff_ping<C>(w, *h, hist) : handoff_echo<C>(w, *h);
        });
        bench::set_time_per_op(state, r);
    }
    C::destroy(h->ping.s);
    C::destroy(h->pong.s);
    bench::report_handoff(state, r, hist);
}

// ---- registration -------------------------------------------------------

template <class... Cs> void register_all(List<Cs...>)
{
    (bench::add_single(bench::row_name("sem", "uncontended", Cs::name), uncontended<Cs>), ...);
    for (int t : bench::kThreadCounts)
        (bench::add_windowed(bench::row_name("sem", "contended", Cs::name, t),
                             [t](benchmark::State &s) { contended<Cs>(s, t); }),
         ...);
    (bench::add_windowed(bench::row_name("sem", "handoff", Cs::name), handoff<Cs>), ...);
    for (int k : kSweepPermits)
        for (int t : kSweepThreads)
            (bench::add_windowed(
                 bench::row_name("sem", k == 1 ? "sweep_k1" : "sweep_k2", Cs::name, t),
                 [k, t](benchmark::State &s) { sweep<Cs>(s, static_cast<uint32_t>(k), t); }),
             ...);
}

} // namespace

void bench::register_sem()
{
    register_all(Contenders{});
}
