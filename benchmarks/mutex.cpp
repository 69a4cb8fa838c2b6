// benchmarks/mutex.cpp: the mutex family.
//
// Contenders (policy structs, one per row group): park, pthread (default
// type), pthread_adaptive (PTHREAD_MUTEX_ADAPTIVE_NP), std (std::mutex),
// absl (absl::Mutex), ck_fas, ck_ticket, ck_mcs (Concurrency Kit, through
// baselines/ck_spinlocks.c) and spin_cas (baselines/spin_cas.h, the floor).
// Each provides, over its lock_type and a per-acquisition node_type:
//   init(lock) destroy(lock) lock(lock, node) try_lock(lock, node)
//   unlock(lock, node)
//
// Scenarios (one loop body each, run by every contender):
//   uncontended   lock + unlock by one thread; the idle thread started in
//                 main keeps the process multi-threaded.
//   contended     T threads: lock, update two shared cache lines, unlock,
//                 local work; windowed, with fairness and worst wait.
//   sweep_wW      the contention sweep (park, pthread, std and absl only):
//                 W in {0, 50, 200} rounds of an LCG outside x T in
//                 {2, 4, 8}; the mutex shares its line only with the
//                 counter it guards (4 increments inside).
//   handoff       two threads pass the turn back and forth through three
//                 mutexes (below); windowed, round-trip latency quantiles.
#include "harness.h"
#include "mutex_contenders.h"

#include <absl/synchronization/mutex.h>

#include <algorithm>
#include <atomic>
#include <memory>

namespace
{

// ---- contenders ---------------------------------------------------------

// The contender policy structs are in mutex_contenders.h (the tail family
// runs some of them too).
using namespace bench::mutexes;

template <class... Cs> struct List {
};

// The contender table: every scenario below runs for each entry, in order.
using Contenders = List<Park, Pthread, PthreadAdaptive, Std, Absl, CkFas, CkTicket, CkMcs, SpinCas>;

// The contention sweep's table: park beside the mutexes users would pick
// instead (the Rust peers run the same sweep in benchmarks/peers/rust).
using SweepContenders = List<Park, Pthread, Std, Absl>;

// ---- shared state -------------------------------------------------------

// A mutex on its own cache line.
template <class C> struct alignas(64) Padded {
    typename C::lock_type m;
};

// One cache line of data guarded by the contended mutex.
struct alignas(64) Line {
    uint64_t v[8];
};

template <class C> struct Contended {
    Padded<C> lock;
    Line a{}, b{};
};

// ---- scenarios ----------------------------------------------------------

template <class C> void uncontended(benchmark::State &state)
{
    auto p = std::make_unique<Padded<C>>();
    typename C::node_type node{};
    C::init(p->m);
    for (auto _ : state) {
        C::lock(p->m, node);
        C::unlock(p->m, node);
        benchmark::ClobberMemory();
    }
    C::destroy(p->m);
}

template <class C> void contended(benchmark::State &state, int threads)
{
    auto g = std::make_unique<Contended<C>>();
    C::init(g->lock.m);
    bench::WindowResult r;
    for (auto _ : state) {
        r = bench::run_window(threads, [&g](bench::Window &w, int index) {
            typename C::node_type node{};
            uint64_t x = static_cast<uint64_t>(index) + 1, ops = 0, worst = 0;
            w.start();
            while (w.running()) {
                uint64_t t0 = bench::ticks();
                C::lock(g->lock.m, node);
                worst = std::max(worst, bench::ticks_since(t0));
                g->a.v[0] += 1; // the critical section: two shared lines
                g->b.v[0] += g->a.v[0];
                C::unlock(g->lock.m, node);
                x = bench::local_work(x);
                ++ops;
            }
            benchmark::DoNotOptimize(x);
            return bench::ThreadResult{ops, worst};
        });
        bench::set_time_per_op(state, r);
    }
    C::destroy(g->lock.m);
    if (g->a.v[0] != r.total_ops())
        state.SkipWithError("lost updates: mutual exclusion broken");
    bench::report_contended(state, r);
}

// The contention sweep: the mutex shares its cache line only with the
// counter it guards (as in Rust's Mutex<u64>); T threads loop { lock; 4
// increments; unlock; W rounds of an LCG outside }.
template <class C> struct alignas(64) Guarded {
    typename C::lock_type m;
    uint64_t counter;
};

constexpr int kSweepOutside[] = {0, 50, 200};
constexpr int kSweepThreads[] = {2, 4, 8};

template <class C> void sweep(benchmark::State &state, int outside, int threads)
{
    auto g = std::make_unique<Guarded<C>>();
    C::init(g->m);
    g->counter = 0;
    bench::WindowResult r;
    for (auto _ : state) {
        r = bench::run_window(threads, [&g, outside](bench::Window &w, int index) {
            typename C::node_type node{};
            uint64_t x = static_cast<uint64_t>(index) + 1, ops = 0, worst = 0;
            w.start();
            while (w.running()) {
                uint64_t t0 = bench::ticks();
                C::lock(g->m, node);
                worst = std::max(worst, bench::ticks_since(t0));
                for (int i = 0; i < 4; ++i)
                    benchmark::DoNotOptimize(++g->counter);
                C::unlock(g->m, node);
                x = bench::lcg_rounds(x, outside);
                ++ops;
            }
            benchmark::DoNotOptimize(x);
            return bench::ThreadResult{ops, worst};
        });
        bench::set_time_per_op(state, r);
    }
    C::destroy(g->m);
    if (g->counter != 4 * r.total_ops())
        state.SkipWithError("lost updates: mutual exclusion broken");
    bench::report_contended(state, r);
}

// Hand-off through three mutexes M0..M2, each thread only ever unlocking
// mutexes it locked itself (std::mutex, pthread and absl require that).
// Thread A starts holding M0 and M1, thread B holding M2. In round k
// (i = k mod 3):
//   A: unlock M[i], then lock M[i+2]      (held by B)
//   B: lock M[i] (released by A), then unlock M[i+2]
// so each round wakes B and then A: one round trip, timed by A from its
// unlock to its lock returning. Holdings rotate and repeat every 3 rounds.
// To stop, A sets `done` before its unlock; B sees it once it holds M[i],
// and both release what they hold.
template <class C> struct Handoff {
    Padded<C> m[3];
    alignas(64) std::atomic<bool> done{false};
};

template <class C>
bench::ThreadResult handoff_ping(bench::Window &w, Handoff<C> &h, bench::Histogram &hist)
{
    typename C::node_type node[3]{};
    uint64_t rounds = 0;
    C::lock(h.m[0].m, node[0]);
    C::lock(h.m[1].m, node[1]);
    w.start();
    for (int i = 0;; i = (i + 1) % 3) {
        int next = (i + 1) % 3, prev = (i + 2) % 3;
        bool last = !w.running();
        if (last)
            h.done.store(true, std::memory_order_relaxed); // ordered by unlock of M[i]
        uint64_t t0 = bench::ticks();
        C::unlock(h.m[i].m, node[i]);
        if (last) {
            C::unlock(h.m[next].m, node[next]);
            break;
        }
        C::lock(h.m[prev].m, node[prev]);
        hist.record(bench::ticks_since(t0));
        ++rounds;
    }
    return bench::ThreadResult{rounds, 0};
}

template <class C> bench::ThreadResult handoff_echo(bench::Window &w, Handoff<C> &h)
{
    typename C::node_type node[3]{};
    C::lock(h.m[2].m, node[2]);
    w.start();
    for (int i = 0;; i = (i + 1) % 3) {
        int prev = (i + 2) % 3;
        C::lock(h.m[i].m, node[i]);
        bool done = h.done.load(std::memory_order_relaxed); // ordered by lock of M[i]
        C::unlock(h.m[prev].m, node[prev]);
        if (done) {
            C::unlock(h.m[i].m, node[i]);
            break;
        }
    }
    return bench::ThreadResult{};
}

template <class C> void handoff(benchmark::State &state)
{
    auto h = std::make_unique<Handoff<C>>();
    for (Padded<C> &p : h->m)
        C::init(p.m);
    bench::Histogram hist;
    bench::WindowResult r;
    for (auto _ : state) {
        r = bench::run_window(2, [&h, &hist](bench::Window &w, int index) {
            return index == 0 ? handoff_ping<C>(w, *h, hist) : handoff_echo<C>(w, *h);
        });
        bench::set_time_per_op(state, r);
    }
    for (Padded<C> &p : h->m)
        C::destroy(p.m);
    bench::report_handoff(state, r, hist);
}

// ---- registration -------------------------------------------------------

template <class... Cs> void register_all(List<Cs...>)
{
    (bench::add_single(bench::row_name("mutex", "uncontended", Cs::name), uncontended<Cs>), ...);
    for (int t : bench::kThreadCounts)
        (bench::add_windowed(bench::row_name("mutex", "contended", Cs::name, t),
                             [t](benchmark::State &s) { contended<Cs>(s, t); }),
         ...);
    (bench::add_windowed(bench::row_name("mutex", "handoff", Cs::name), handoff<Cs>), ...);
}

template <class... Cs> void register_sweep(List<Cs...>)
{
    static const char *const names[] = {"sweep_w0", "sweep_w50", "sweep_w200"};
    for (size_t k = 0; k < sizeof kSweepOutside / sizeof kSweepOutside[0]; ++k)
        for (int t : kSweepThreads)
            (bench::add_windowed(
                 bench::row_name("mutex", names[k], Cs::name, t),
                 [k, t](benchmark::State &s) { sweep<Cs>(s, kSweepOutside[k], t); }),
             ...);
}

} // namespace

void bench::register_mutex()
{
    // Debian's libabsl is built without NDEBUG, so absl::Mutex would run its
    // lock-order deadlock detector on every Lock (several times slower, and
    // it aborts on the hand-off rotation). Release builds of absl have it
    // compiled out; this makes the packaged one behave the same way.
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    register_all(Contenders{});
    register_sweep(SweepContenders{});
}
