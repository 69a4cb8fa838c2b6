// benchmarks/rwlock.cpp: the reader/writer lock family.
//
// Contenders (policy structs, one per row group): park (park_rwlock_t),
// park_read_mostly (the same, initialised in the read-mostly mode),
// pthread (pthread_rwlock_t, glibc's default kind, which prefers readers),
// pthread_wpref (PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP), std
// (std::shared_mutex), absl (absl::Mutex in reader and writer mode), and
// ck_rwlock, ck_pflock, ck_brlock (Concurrency Kit, through
// baselines/ck_rwlocks.c; all three spin), and in the sweep only futex_rw
// (Rust std's futex rwlock in C, baselines/futex_rwlock.h). Each
// provides, over its lock_type and a per-thread node_type:
//   init(lock) destroy(lock) enter(lock, node) leave(lock, node)
//   read_lock(lock, node) read_unlock(lock, node)
//   write_lock(lock, node) write_unlock(lock, node)
// where enter/leave bracket each thread's use of the lock (ck_brlock
// registers its per-thread reader record there; the others do nothing).
//
// Scenarios (one loop body each, run by every contender):
//   uncontended_read    read_lock + read_unlock by one thread; the idle
//                       thread started in main keeps the process
//                       multi-threaded. real_time = ns per pair.
//   uncontended_write   write_lock + write_unlock, likewise.
//   mix100, mix99,      T threads, each operation a read with probability
//   mix90, mix50        P % (a per-thread pseudo-random sequence, the same
//                       for every contender), else a write; a read loads
//                       two shared cache lines and checks them, a write
//                       updates both; then local work. Windowed, counters
//                       as mutex/contended.
//   writer_wait         one writer (write_lock, update, write_unlock, a
//                       200 us sleep, repeat) against 7 readers that read
//                       as fast as they can (read, local work, repeat).
//                       items_per_second: the readers' reads per second;
//                       worst_wait_ns: the writer's longest write_lock;
//                       writer_p50_ns / writer_p99_ns: its wait quantiles;
//                       writes: the writer's rounds in the window.
//   sweep_rR            the contention sweep (park, park_read_mostly,
//                       pthread, pthread_wpref, absl and futex_rw only): R in
//                       {100, 90, 50} % reads x T in {2, 4, 8}; the lock
//                       shares its cache line only with the value it
//                       guards; a read is 4 loads of
//                       the value, a write 4 increments; then 50 LCG
//                       rounds outside. Counters as mutex/contended, plus
//                       reads, writes and writer_worst_wait_ns.
// A row whose readers saw a half-done write, or whose writers lost an
// update, is reported as an error.
#include "harness.h"
#include "rwlock_contenders.h"

#include <absl/synchronization/mutex.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace
{

// ---- contenders ---------------------------------------------------------

// The contender policy structs are in rwlock_contenders.h (the tail family
// runs some of them too).
using namespace bench::rwlocks;

template <class... Cs> struct List {
};

// The contender table: every scenario below runs for each entry, in order.
using Contenders =
    List<Park, ParkReadMostly, Pthread, PthreadWpref, Std, Absl, CkRwlock, CkPflock, CkBrlock>;

// The contention sweep's table: park beside the rwlocks users would pick
// instead, reader-preferring (pthread) and not (the Rust peers run the same
// sweep in benchmarks/peers/rust; futex_rw is Rust std's design in this
// process).
using SweepContenders = List<Park, ParkReadMostly, Pthread, PthreadWpref, Absl, FutexRw>;

// ---- shared state -------------------------------------------------------

// A lock on its own cache line.
template <class C> struct alignas(64) Padded {
    typename C::lock_type l;
};

// One cache line of data guarded by the lock.
struct alignas(64) Line {
    uint64_t v[8];
};

template <class C> struct Shared {
    Padded<C> lock;
    Line a{}, b{};
    alignas(64) std::atomic<uint64_t> torn{0}; // reads that saw a != b
    std::atomic<uint64_t> writes{0};           // writes, all threads
};

// The read and write critical sections, the same for every contender. The
// comparison keeps both loads (no benchmark::DoNotOptimize on them: with
// GCC, google-benchmark 1.7's "+m,r" constraint may take the memory
// alternative without ever storing the value there).
template <class C> inline uint64_t read_section(Shared<C> &g)
{
    return g.a.v[0] != g.b.v[0];
}

template <class C> inline void write_section(Shared<C> &g)
{
    g.a.v[0] += 1;
    g.b.v[0] = g.a.v[0];
}

template <class C> void check(benchmark::State &state, Shared<C> &g)
{
    if (g.torn.load() != 0)
        state.SkipWithError("torn read: a reader saw a writer inside");
    else if (g.a.v[0] != g.writes.load() || g.b.v[0] != g.a.v[0])
        state.SkipWithError("lost updates: writers overlapped");
}

// xorshift64: the per-thread sequence that picks reads and writes.
inline uint32_t next_percent(uint64_t &s)
{
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<uint32_t>(s % 100);
}

// ---- scenarios ----------------------------------------------------------

template <class C> void uncontended_read(benchmark::State &state)
{
    auto p = std::make_unique<Padded<C>>();
    auto node = std::make_unique<typename C::node_type>();
    C::init(p->l);
    C::enter(p->l, *node);
    for (auto _ : state) {
        C::read_lock(p->l, *node);
        C::read_unlock(p->l, *node);
        benchmark::ClobberMemory();
    }
    C::leave(p->l, *node);
    C::destroy(p->l);
}

template <class C> void uncontended_write(benchmark::State &state)
{
    auto p = std::make_unique<Padded<C>>();
    auto node = std::make_unique<typename C::node_type>();
    C::init(p->l);
    C::enter(p->l, *node);
    for (auto _ : state) {
        C::write_lock(p->l, *node);
        C::write_unlock(p->l, *node);
        benchmark::ClobberMemory();
    }
    C::leave(p->l, *node);
    C::destroy(p->l);
}

template <class C> void mix(benchmark::State &state, int threads, unsigned read_pct)
{
    auto g = std::make_unique<Shared<C>>();
    C::init(g->lock.l);
    bench::WindowResult r;
    for (auto _ : state) {
        r = bench::run_window(threads, [&g, read_pct](bench::Window &w, int index) {
            auto node = std::make_unique<typename C::node_type>();
            C::enter(g->lock.l, *node);
            uint64_t x = static_cast<uint64_t>(index) + 1, ops = 0, worst = 0, torn = 0, writes = 0;
            uint64_t rng = 0x9e3779b97f4a7c15ULL * (static_cast<uint64_t>(index) + 1);
            w.start();
            while (w.running()) {
                bool read = next_percent(rng) < read_pct;
                uint64_t t0 = bench::ticks();
                if (read) {
                    C::read_lock(g->lock.l, *node);
                    worst = std::max(worst, bench::ticks_since(t0));
                    torn += read_section(*g);
                    C::read_unlock(g->lock.l, *node);
                } else {
                    C::write_lock(g->lock.l, *node);
                    worst = std::max(worst, bench::ticks_since(t0));
                    write_section(*g);
                    C::write_unlock(g->lock.l, *node);
                    ++writes;
                }
                x = bench::local_work(x);
                ++ops;
            }
            C::leave(g->lock.l, *node);
            benchmark::DoNotOptimize(x);
            g->torn += torn;
            g->writes += writes;
            return bench::ThreadResult{ops, worst};
        });
        bench::set_time_per_op(state, r);
    }
    C::destroy(g->lock.l);
    check(state, *g);
    bench::report_contended(state, r);
}

constexpr int kWaitReaders = 7;
constexpr auto kWriterPause = std::chrono::microseconds(200);

template <class C> void writer_wait(benchmark::State &state)
{
    auto g = std::make_unique<Shared<C>>();
    C::init(g->lock.l);
    bench::Histogram waits; // the writer's, in ticks
    bench::WindowResult r;
    for (auto _ : state) {
        r = bench::run_window(kWaitReaders + 1, [&g, &waits](bench::Window &w, int index) {
            auto node = std::make_unique<typename C::node_type>();
            C::enter(g->lock.l, *node);
            uint64_t ops = 0, worst = 0;
            if (index == 0) { // the writer
                w.start();
                while (w.running()) {
                    uint64_t t0 = bench::ticks();
                    C::write_lock(g->lock.l, *node);
                    uint64_t waited = bench::ticks_since(t0);
                    write_section(*g);
                    C::write_unlock(g->lock.l, *node);
                    waits.record(waited);
                    worst = std::max(worst, waited);
                    ++g->writes;
                    std::this_thread::sleep_for(kWriterPause);
                }
            } else { // a reader
                uint64_t x = static_cast<uint64_t>(index) + 1, torn = 0;
                w.start();
                while (w.running()) {
                    C::read_lock(g->lock.l, *node);
                    torn += read_section(*g);
                    C::read_unlock(g->lock.l, *node);
                    x = bench::local_work(x);
                    ++ops;
                }
                benchmark::DoNotOptimize(x);
                g->torn += torn;
            }
            C::leave(g->lock.l, *node);
            return bench::ThreadResult{ops, worst}; // ops: reads only
        });
        bench::set_time_per_op(state, r);
    }
    C::destroy(g->lock.l);
    check(state, *g);
    uint64_t reads = r.total_ops(), worst = 0;
    for (const bench::ThreadResult &t : r.threads)
        worst = std::max(worst, t.worst_wait_ticks);
    double per_read = reads ? 1.0 / static_cast<double>(reads) : 0.0;
    state.counters["items_per_second"] = static_cast<double>(reads) / r.seconds;
    state.counters["csw_per_op"] = static_cast<double>(r.context_switches) * per_read;
    state.counters["cpu_ns_per_op"] = r.cpu_seconds * 1e9 * per_read;
    state.counters["worst_wait_ns"] = bench::ticks_to_ns(worst);
    state.counters["writer_p50_ns"] = bench::ticks_to_ns(waits.quantile(0.50));
    state.counters["writer_p99_ns"] = bench::ticks_to_ns(waits.quantile(0.99));
    state.counters["writes"] = static_cast<double>(g->writes.load());
}

// The contention sweep: the lock shares its cache line only with the value
// it guards (as in Rust's RwLock<u64>); T threads loop { a read (4 loads of
// the value) with probability R %, else a write (4 increments); 50 rounds
// of an LCG outside }. Reads and writes are picked by a per-thread LCG (the
// same sequence for every contender, and for the Rust peers).
template <class C> struct alignas(64) SweepLine {
    typename C::lock_type l;
    uint64_t value; // guarded by l; a multiple of 4 outside a write
};

constexpr unsigned kSweepReads[] = {100, 90, 50};
constexpr int kSweepThreads[] = {2, 4, 8};
constexpr int kSweepOutside = 50; // LCG rounds outside the critical section

// The next step of the thread's LCG, as a percentage: the high bits, whose
// period is long (the low bits of a power-of-two LCG are not random).
inline unsigned sweep_percent(uint64_t &s)
{
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<unsigned>((s >> 33) % 100);
}

// What one sweep thread counted, beside its ThreadResult.
struct SweepCounts {
    uint64_t reads = 0, writes = 0, torn = 0, writer_worst = 0;
};

template <class C> void sweep(benchmark::State &state, unsigned read_pct, int threads)
{
    auto g = std::make_unique<SweepLine<C>>();
    static_assert(sizeof(SweepLine<C>) == 64, "the lock and its value fill one cache line");
    C::init(g->l);
    g->value = 0;
    std::vector<SweepCounts> counts;
    SweepCounts last;              // the last repetition's, reported
    uint64_t writes = 0, torn = 0; // every repetition's
    bool miscounted = false;
    bench::WindowResult r;
    for (auto _ : state) {
        counts.assign(static_cast<size_t>(threads), SweepCounts{});
        r = bench::run_window(threads, [&g, &counts, read_pct](bench::Window &w, int index) {
            auto node = std::make_unique<typename C::node_type>();
            C::enter(g->l, *node);
            volatile uint64_t *v = &g->value;
            SweepCounts n;
            uint64_t x = static_cast<uint64_t>(index) + 1, ops = 0, worst = 0;
            uint64_t rng = static_cast<uint64_t>(index) + 1;
            w.start();
            while (w.running()) {
                bool read = sweep_percent(rng) < read_pct;
                uint64_t t0 = bench::ticks();
                if (read) {
                    C::read_lock(g->l, *node);
                    worst = std::max(worst, bench::ticks_since(t0));
                    uint64_t a = *v, b = *v, c = *v, d = *v;
                    n.torn += (a != b) | (b != c) | (c != d) | (a % 4 != 0);
                    C::read_unlock(g->l, *node);
                    ++n.reads;
                } else {
                    C::write_lock(g->l, *node);
                    uint64_t waited = bench::ticks_since(t0);
                    worst = std::max(worst, waited);
                    n.writer_worst = std::max(n.writer_worst, waited);
                    for (int i = 0; i < 4; ++i)
                        *v = *v + 1;
                    C::write_unlock(g->l, *node);
                    ++n.writes;
                }
                x = bench::lcg_rounds(x, kSweepOutside);
                ++ops;
            }
            C::leave(g->l, *node);
            benchmark::DoNotOptimize(x);
            counts[static_cast<size_t>(index)] = n;
            return bench::ThreadResult{ops, worst};
        });
        bench::set_time_per_op(state, r);
        last = SweepCounts{};
        for (const SweepCounts &n : counts) {
            last.reads += n.reads;
            last.writes += n.writes;
            last.torn += n.torn;
            last.writer_worst = std::max(last.writer_worst, n.writer_worst);
        }
        miscounted |= last.reads + last.writes != r.total_ops();
        writes += last.writes;
        torn += last.torn;
    }
    C::destroy(g->l);
    if (torn != 0)
        state.SkipWithError("torn read: a reader saw a writer inside");
    else if (miscounted)
        state.SkipWithError("reads + writes differ from the operations counted");
    else if (g->value != 4 * writes)
        state.SkipWithError("lost updates: writers overlapped");
    bench::report_contended(state, r);
    state.counters["reads"] = static_cast<double>(last.reads);
    state.counters["writes"] = static_cast<double>(last.writes);
    state.counters["writer_worst_wait_ns"] = bench::ticks_to_ns(last.writer_worst);
}

// ---- registration -------------------------------------------------------

struct Mix {
    const char *scenario;
    unsigned read_pct;
};
constexpr Mix kMixes[] = {{"mix100", 100}, {"mix99", 99}, {"mix90", 90}, {"mix50", 50}};

template <class... Cs> void register_all(List<Cs...>)
{
    (bench::add_single(bench::row_name("rwlock", "uncontended_read", Cs::name),
                       uncontended_read<Cs>),
     ...);
    (bench::add_single(bench::row_name("rwlock", "uncontended_write", Cs::name),
                       uncontended_write<Cs>),
     ...);
    for (const Mix &m : kMixes)
        for (int t : bench::kThreadCounts)
            (bench::add_windowed(
                 bench::row_name("rwlock", m.scenario, Cs::name, t),
                 [t, pct = m.read_pct](benchmark::State &s) { mix<Cs>(s, t, pct); }),
             ...);
    (bench::add_windowed(bench::row_name("rwlock", "writer_wait", Cs::name), writer_wait<Cs>), ...);
}

template <class... Cs> void register_sweep(List<Cs...>)
{
    for (unsigned pct : kSweepReads)
        for (int t : kSweepThreads)
            (bench::add_windowed(
                 bench::row_name("rwlock", ("sweep_r" + std::to_string(pct)).c_str(), Cs::name, t),
                 [pct, t](benchmark::State &s) { sweep<Cs>(s, pct, t); }),
             ...);
}

} // namespace

void bench::register_rwlock()
{
    // As in register_mutex: the packaged absl would otherwise run its
    // deadlock detector on every lock.
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    register_all(Contenders{});
    register_sweep(SweepContenders{});
}
