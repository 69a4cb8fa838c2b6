// benchmarks/pool.cpp: the thread pool family (work-stealing, fork-join).
//
// Contenders (policy structs): park (park_pool_t), tbb (oneTBB: a
// task_arena with parallel_invoke, parallel_for and enqueue), condvar (the
// textbook mutex + condition variable queue pool, baselines/condvar_pool.h)
// and serial (the calling thread alone: the floor). Each provides a
// pool_type built from a worker count, and
//   parallel_for(pool, begin, end, grain, body, arg)
//                               body over disjoint ranges of at most grain
//                               items covering [begin, end)
//   run(pool, fn, arg)          fn(arg) on the pool; returns when it has run
//   join(pool, a, aa, b, ba)    a(aa) and b(ba), possibly in parallel; only
//                               from inside run (run and join: fork_join
//                               contenders but serial)
//   submit(pool, fn, arg)       queue fn(arg) from any thread (submits
//                               contenders); false if it failed
// The condvar pool has no fork-join (a worker waiting for its children would
// block one of the pool's threads); serial has no submissions, and its fib
// is the plain recursion.
//
// Scenarios (one loop body each, run by every contender that can):
//   fib30, fib35   fib(n) with a join at every call with n >= 2 (no serial
//                  cut-off: fib(n + 1) - 1 joins) on a pool of one worker per
//                  online CPU; serial runs the plain recursion (no join, the
//                  floor). real_time = ns per fib(n); spawn_ns = (real_time
//                  x workers - serial time) / joins, the serial time being
//                  the plain recursion's, measured once.
//   parallel_for   10^7 items in 1024 chunks, each summing a cheap function
//                  of its indices into its own partial; real_time = ns per
//                  pass (partials cleared and checked each pass).
//   submit         P producers (threads:P) submit tiny tasks into a 2-worker
//                  pool for one window, counting until every task has run;
//                  items_per_second = tasks run per second.
//   wakeup         a 2-worker pool idles for 10 ms, then one task is
//                  submitted and stamps park_now() when it runs, for a
//                  window of 5 x min_time (at most 1 s); p50_ns and p99_ns
//                  of submit-to-run; real_time = the p50.
//   idle           a 2-worker pool that has just run a small parallel_for
//                  idles for 5 x min_time (at most 1 s); idle_cpu_ns = CPU
//                  time of the whole process per second of idling
//                  (real_time shows the same). The serial row, with no
//                  pool, is what the process spends anyway.
#include "harness.h"

#include "baselines/condvar_pool.h"

#include <park/pool.h>
#include <park/time.h>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_invoke.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

namespace
{

// Workers of the submit, wakeup and idle pools.
constexpr unsigned kSubmitWorkers = 2;
// Producer counts of the submit scenario.
constexpr int kProducers[] = {1, 2, 4};
// Tasks submitted but not yet run beyond which a producer yields instead of
// submitting: queues grow without bound otherwise when producers outrun the
// workers, and the drain at the end of the window would take seconds.
constexpr int64_t kMaxInFlight = 1 << 16;
// Submissions a producer counts locally before publishing them.
constexpr uint64_t kSubmitBatch = 256;
// Idle time before each wake-up.
constexpr double kIdleBeforeWake = 0.010;
// The wakeup and idle rows last 5 x min_time, at most this long: enough
// wake-ups for a p99, and a second of idling at the full budget, while
// --quick stays quick.
constexpr double kLongRowSeconds = 1.0;
// The idle row's warm-up: a parallel_for pass small enough to be quick and
// split finely enough to reach every worker.
constexpr size_t kWarmItems = 1 << 16;
constexpr size_t kWarmGrain = 256;

constexpr size_t kItems = 10000000;
constexpr size_t kChunks = 1024;
// Halving 10^7 ten times gives chunks of 9765 or 9766 items, so every
// contender (halving or cutting) makes 1024 chunks of at most this grain.
constexpr size_t kGrain = (kItems + kChunks - 1) / kChunks;
// Every chunk has at least grain / 2 items, so lo / kSlot is unique per chunk.
constexpr size_t kSlot = kGrain / 2;
constexpr size_t kSlots = kItems / kSlot + 1;

double long_row_seconds()
{
    return std::min(kLongRowSeconds, 5 * bench::min_time());
}

// One worker per online CPU for the fork-join scenarios, as rayon's global
// pool has.
unsigned cpus()
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<unsigned>(n) : 1;
}

// ---- contenders ---------------------------------------------------------

struct Park {
    static constexpr const char *name = "park";
    static constexpr bool fork_join = true;
    static constexpr bool submits = true;
    static constexpr bool parallel = true;
    class pool_type
    {
      public:
        explicit pool_type(unsigned threads)
        {
            park_pool_config_t cfg = {threads};
            if (park_pool_create(&p_, &cfg) != 0)
                p_ = nullptr;
        }
        ~pool_type()
        {
            if (p_)
                park_pool_destroy(p_);
        }
        bool ok() const
        {
            return p_ != nullptr;
        }
        park_pool_t *get() const
        {
            return p_;
        }

      private:
        park_pool_t *p_ = nullptr;
    };
    static void run(pool_type &p, void (*fn)(void *), void *arg)
    {
        park_join(p.get(), fn, arg, nullptr, nullptr);
    }
    static void join(pool_type &p, void (*a)(void *), void *aa, void (*b)(void *), void *ba)
    {
        park_join(p.get(), a, aa, b, ba);
    }
    static void parallel_for(pool_type &p, size_t begin, size_t end, size_t grain,
                             void (*body)(size_t, size_t, void *), void *arg)
    {
        park_parallel_for(p.get(), begin, end, grain, body, arg);
    }
    static bool submit(pool_type &p, void (*fn)(void *), void *arg)
    {
        return park_pool_submit(p.get(), fn, arg) == 0;
    }
};

// oneTBB. The arena has `threads` slots and reserves none for the caller:
// run() takes one of them (threads - 1 workers help it, as park's workers
// help each other while the caller sleeps), and enqueue() from outside is
// served by `threads` workers. TBB's default limit of workers is one per
// CPU minus one; the global_control raises it so that `threads` workers may
// serve the arena when no caller is inside.
struct Tbb {
    static constexpr const char *name = "tbb";
    static constexpr bool fork_join = true;
    static constexpr bool submits = true;
    static constexpr bool parallel = true;
    class pool_type
    {
      public:
        explicit pool_type(unsigned threads)
            : limit_(tbb::global_control::max_allowed_parallelism, threads + 1),
              arena_(static_cast<int>(threads), 0)
        {
            arena_.initialize();
        }
        bool ok() const
        {
            return true;
        }
        tbb::task_arena &arena()
        {
            return arena_;
        }

      private:
        tbb::global_control limit_;
        tbb::task_arena arena_;
    };
    static void run(pool_type &p, void (*fn)(void *), void *arg)
    {
        p.arena().execute([fn, arg] { fn(arg); });
    }
    static void join(pool_type &, void (*a)(void *), void *aa, void (*b)(void *), void *ba)
    {
        tbb::parallel_invoke([a, aa] { a(aa); }, [b, ba] { b(ba); });
    }
    static void parallel_for(pool_type &p, size_t begin, size_t end, size_t grain,
                             void (*body)(size_t, size_t, void *), void *arg)
    {
        tbb::blocked_range<size_t> range(begin, end, grain ? grain : 1);
        p.arena().execute([&] {
            tbb::parallel_for(
                range,
                [body, arg](const tbb::blocked_range<size_t> &r) { body(r.begin(), r.end(), arg); },
                tbb::simple_partitioner());
        });
    }
    static bool submit(pool_type &p, void (*fn)(void *), void *arg)
    {
        p.arena().enqueue([fn, arg] { fn(arg); });
        return true;
    }
};

struct Condvar {
    static constexpr const char *name = "condvar";
    static constexpr bool fork_join = false;
    static constexpr bool submits = true;
    static constexpr bool parallel = true;
    class pool_type : public baseline::CondvarPool
    {
      public:
        using CondvarPool::CondvarPool;
        bool ok() const
        {
            return true;
        }
    };
    struct Chunk {
        void (*body)(size_t, size_t, void *);
        void *arg;
        size_t lo, hi;
        bench::Latch *latch;
    };
    static void chunk(void *p)
    {
        Chunk *c = static_cast<Chunk *>(p);
        c->body(c->lo, c->hi, c->arg);
        c->latch->count_down();
    }
    // Cuts [begin, end) into pieces of `grain` items, one submission each.
    static void parallel_for(pool_type &p, size_t begin, size_t end, size_t grain,
                             void (*body)(size_t, size_t, void *), void *arg)
    {
        grain = grain ? grain : 1;
        if (begin >= end)
            return;
        size_t n = (end - begin + grain - 1) / grain;
        std::vector<Chunk> chunks(n);
        bench::Latch latch(n);
        for (size_t i = 0; i < n; ++i) {
            size_t lo = begin + i * grain;
            chunks[i] = Chunk{body, arg, lo, std::min(end, lo + grain), &latch};
            p.submit(chunk, &chunks[i]);
        }
        latch.wait();
    }
    static bool submit(pool_type &p, void (*fn)(void *), void *arg)
    {
        p.submit(fn, arg);
        return true;
    }
};

struct Serial {
    static constexpr const char *name = "serial";
    static constexpr bool fork_join = true;
    static constexpr bool submits = false;
    static constexpr bool parallel = false;
    struct pool_type {
        explicit pool_type(unsigned)
        {
        }
        bool ok() const
        {
            return true;
        }
    };
    static void parallel_for(pool_type &, size_t begin, size_t end, size_t grain,
                             void (*body)(size_t, size_t, void *), void *arg)
    {
        grain = grain ? grain : 1;
        for (size_t lo = begin; lo < end; lo += std::min(grain, end - lo))
            body(lo, std::min(end, lo + grain), arg);
    }
};

template <class... Cs> struct List {
};

// The contender table: every scenario below runs for each entry that can
// run it, in order.
using Contenders = List<Park, Tbb, Condvar, Serial>;

// ---- fib ----------------------------------------------------------------

// fib(n + 1) - 1: the calls of fib(n) with n >= 2, each one join.
constexpr uint64_t joins_of_fib(unsigned n)
{
    uint64_t a = 0, b = 1;
    for (unsigned i = 0; i < n + 1; ++i) {
        uint64_t t = a + b;
        a = b;
        b = t;
    }
    return a - 1;
}

template <class C> struct Fib {
    typename C::pool_type *pool;
    unsigned n;
    uint64_t result;
};

template <class C> void fib(void *p)
{
    Fib<C> *f = static_cast<Fib<C> *>(p);
    if (f->n < 2) {
        f->result = f->n;
        return;
    }
    Fib<C> a{f->pool, f->n - 1, 0};
    Fib<C> b{f->pool, f->n - 2, 0};
    C::join(*f->pool, fib<C>, &a, fib<C>, &b);
    f->result = a.result + b.result;
}

// The floor: fib(n) as plain recursion, with no join at all.
uint64_t plain_fib(unsigned n)
{
    return n < 2 ? n : plain_fib(n - 1) + plain_fib(n - 2);
}

// fib(n) on the pool; the serial contender runs the plain recursion.
template <class C> uint64_t run_fib(typename C::pool_type &pool, unsigned n)
{
    benchmark::DoNotOptimize(n);
    if constexpr (!C::parallel) {
        return plain_fib(n);
    } else {
        Fib<C> root{&pool, n, 0};
        C::run(pool, fib<C>, &root);
        return root.result;
    }
}

// The serial contender's time for fib(n), ns: the fastest of at least two
// runs and of as many as fit in min_time; measured once per n.
double serial_fib_ns(unsigned n)
{
    static double cached[64];
    if (cached[n] > 0)
        return cached[n];
    Serial::pool_type none(1);
    double best = 0, spent = 0;
    for (int i = 0; i < 2 || spent < bench::min_time(); ++i) {
        park_time_t t0 = park_now();
        benchmark::DoNotOptimize(run_fib<Serial>(none, n));
        double ns = static_cast<double>(park_now() - t0);
        best = i == 0 ? ns : std::min(best, ns);
        spent += ns * 1e-9;
    }
    return cached[n] = best;
}

template <class C, unsigned N> void fib_row(benchmark::State &state)
{
    unsigned threads = C::parallel ? cpus() : 1;
    typename C::pool_type pool(threads);
    if (!pool.ok()) {
        state.SkipWithError("the pool could not be created");
        return;
    }
    constexpr uint64_t expect = joins_of_fib(N - 1) + 1; // fib(N)
    bool wrong = run_fib<C>(pool, 20) != 6765;           // starts the workers
    // Timed here as well: the counter needs the time per run, and
    // google-benchmark computes real_time only after the row returns.
    park_time_t t0 = park_now();
    for (auto _ : state)
        wrong |= run_fib<C>(pool, N) != expect;
    double per_run_ns =
        static_cast<double>(park_now() - t0) / static_cast<double>(state.iterations());
    if (wrong) {
        state.SkipWithError("fib returned a wrong value");
        return;
    }
    state.counters["workers"] = threads;
    if constexpr (C::parallel)
        state.counters["spawn_ns"] =
            (per_run_ns * threads - serial_fib_ns(N)) / static_cast<double>(joins_of_fib(N));
}

// ---- parallel_for -------------------------------------------------------

// The body's cheap function of an index: a multiply and a shift, with no
// closed form for the sum the compiler could use instead of the loop.
inline uint64_t mix(size_t i)
{
    return (static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ULL) >> 29;
}

void sum_chunk(size_t lo, size_t hi, void *arg)
{
    uint64_t s = 0;
    for (size_t i = lo; i < hi; ++i)
        s += mix(i);
    static_cast<uint64_t *>(arg)[lo / kSlot] = s;
}

uint64_t expected_sum()
{
    static const uint64_t sum = [] {
        uint64_t s = 0;
        for (size_t i = 0; i < kItems; ++i)
            s += mix(i);
        return s;
    }();
    return sum;
}

template <class C> void parallel_for_row(benchmark::State &state)
{
    unsigned threads = C::parallel ? cpus() : 1;
    typename C::pool_type pool(threads);
    if (!pool.ok()) {
        state.SkipWithError("the pool could not be created");
        return;
    }
    std::vector<uint64_t> partials(kSlots);
    uint64_t expect = expected_sum();
    bool wrong = false;
    for (auto _ : state) {
        std::fill(partials.begin(), partials.end(), 0);
        C::parallel_for(pool, 0, kItems, kGrain, sum_chunk, partials.data());
        uint64_t s = 0;
        for (uint64_t p : partials)
            s += p;
        wrong |= s != expect;
    }
    if (wrong)
        state.SkipWithError("a pass summed to a wrong value");
    state.counters["workers"] = threads;
}

// ---- submit -------------------------------------------------------------

// A counter the pool's workers add to without sharing a cache line: each
// thread adds to the shard it was given on its first add.
class Shards
{
  public:
    void add()
    {
        thread_local unsigned mine = next_.fetch_add(1, std::memory_order_relaxed) % kShards;
        // relaxed: the drain reads the sum only to see that it has reached
        // the submissions; nothing is published through it.
        shard_[mine].n.fetch_add(1, std::memory_order_relaxed);
    }
    uint64_t sum() const
    {
        uint64_t s = 0;
        for (const Shard &sh : shard_)
            s += sh.n.load(std::memory_order_relaxed);
        return s;
    }

  private:
    static constexpr unsigned kShards = 16;
    struct alignas(64) Shard {
        std::atomic<uint64_t> n{0};
    };
    static inline std::atomic<unsigned> next_{0};
    Shard shard_[kShards];
};

struct Submit {
    Shards executed;
    alignas(64) std::atomic<int64_t> submitted{0};
    std::atomic<int> finished{0};
    std::atomic<bool> failed{false};
};

void count_task(void *arg)
{
    static_cast<Shards *>(arg)->add();
}

// One producer: submits until the window closes, yielding while more than
// kMaxInFlight tasks wait; the last producer to stop waits until every
// task has run, so the window's time includes the drain.
template <class C>
bench::ThreadResult producer(bench::Window &w, typename C::pool_type &pool, Submit &s,
                             int producers)
{
    uint64_t n = 0;
    w.start();
    while (w.running()) {
        if (!C::submit(pool, count_task, &s.executed)) {
            s.failed.store(true, std::memory_order_relaxed);
            break;
        }
        if (++n % kSubmitBatch != 0)
            continue;
        s.submitted.fetch_add(kSubmitBatch, std::memory_order_relaxed);
        while (s.submitted.load(std::memory_order_relaxed) -
                       static_cast<int64_t>(s.executed.sum()) >
                   kMaxInFlight &&
               w.running())
            sched_yield();
    }
    s.submitted.fetch_add(static_cast<int64_t>(n % kSubmitBatch), std::memory_order_relaxed);
    if (s.finished.fetch_add(1, std::memory_order_acq_rel) + 1 == producers) {
        while (static_cast<int64_t>(s.executed.sum()) < s.submitted.load(std::memory_order_relaxed))
            bench::sleep_seconds(2e-5);
    }
    return bench::ThreadResult{n, 0};
}

template <class C> void submit_row(benchmark::State &state, int producers)
{
    typename C::pool_type pool(kSubmitWorkers);
    if (!pool.ok()) {
        state.SkipWithError("the pool could not be created");
        return;
    }
    auto s = std::make_unique<Submit>();
    bench::WindowResult r;
    for (auto _ : state) {
        r = bench::run_window(
            producers, [&](bench::Window &w, int) { return producer<C>(w, pool, *s, producers); });
        bench::set_time_per_op(state, r);
    }
    if (s->failed.load())
        state.SkipWithError("a submission failed");
    bench::report_throughput(state, r);
}

// ---- wakeup -------------------------------------------------------------

// When the task ran (park_now), 0 until it has.
struct Stamp {
    std::atomic<park_time_t> ran{0};
};

void stamp_task(void *arg)
{
    // release: pairs with the acquire load in wakeup_row.
    static_cast<Stamp *>(arg)->ran.store(park_now(), std::memory_order_release);
}

// The value at quantile q of sorted samples: the ceil(q * n)-th smallest.
double quantile(const std::vector<uint64_t> &sorted, double q)
{
    if (sorted.empty())
        return 0;
    size_t rank = std::max<size_t>(1, static_cast<size_t>(q * sorted.size() + 0.999999));
    return static_cast<double>(sorted[std::min(rank, sorted.size()) - 1]);
}

template <class C> void wakeup_row(benchmark::State &state)
{
    typename C::pool_type pool(kSubmitWorkers);
    if (!pool.ok()) {
        state.SkipWithError("the pool could not be created");
        return;
    }
    std::vector<uint64_t> lat;
    bench::Snapshot before{}, after{};
    bool failed = false;
    for (auto _ : state) {
        Stamp st;
        before = bench::snapshot();
        do {
            bench::sleep_seconds(kIdleBeforeWake);
            st.ran.store(0, std::memory_order_relaxed);
            park_time_t t0 = park_now();
            if (!C::submit(pool, stamp_task, &st)) {
                failed = true;
                break;
            }
            park_time_t t1;
            while ((t1 = st.ran.load(std::memory_order_acquire)) == 0)
                sched_yield();
            lat.push_back(t1 > t0 ? t1 - t0 : 0);
        } while (bench::snapshot().seconds - before.seconds < long_row_seconds());
        after = bench::snapshot();
        std::sort(lat.begin(), lat.end());
        state.SetIterationTime(quantile(lat, 0.50) * 1e-9);
    }
    if (failed) {
        state.SkipWithError("a submission failed");
        return;
    }
    double n = static_cast<double>(std::max<size_t>(1, lat.size()));
    state.counters["p50_ns"] = quantile(lat, 0.50);
    state.counters["p99_ns"] = quantile(lat, 0.99);
    state.counters["wakeups"] = static_cast<double>(lat.size());
    state.counters["cpu_ns_per_op"] = (after.cpu_seconds - before.cpu_seconds) * 1e9 / n;
    state.counters["csw_per_op"] =
        static_cast<double>(after.context_switches - before.context_switches) / n;
}

// ---- idle ---------------------------------------------------------------

void warm_chunk(size_t lo, size_t hi, void *arg)
{
    uint64_t s = 0;
    for (size_t i = lo; i < hi; ++i)
        s += mix(i);
    static_cast<std::atomic<uint64_t> *>(arg)->fetch_add(s, std::memory_order_relaxed);
}

template <class C> void idle_row(benchmark::State &state)
{
    typename C::pool_type pool(C::parallel ? kSubmitWorkers : 1);
    if (!pool.ok()) {
        state.SkipWithError("the pool could not be created");
        return;
    }
    double cpu_per_s = 0, csw_per_s = 0;
    for (auto _ : state) {
        // Work first, so the workers exist and have just gone idle.
        std::atomic<uint64_t> sum{0};
        C::parallel_for(pool, 0, kWarmItems, kWarmGrain, warm_chunk, &sum);
        benchmark::DoNotOptimize(sum.load());
        bench::Snapshot before = bench::snapshot();
        bench::sleep_seconds(long_row_seconds());
        bench::Snapshot after = bench::snapshot();
        double wall = after.seconds - before.seconds;
        cpu_per_s = (after.cpu_seconds - before.cpu_seconds) / wall;
        csw_per_s = static_cast<double>(after.context_switches - before.context_switches) / wall;
        state.SetIterationTime(cpu_per_s);
    }
    state.counters["idle_cpu_ns"] = cpu_per_s * 1e9;
    state.counters["csw_per_s"] = csw_per_s;
}

// ---- registration -------------------------------------------------------

// A single row timed by google-benchmark's loop on wall-clock time: the
// calling thread sleeps while the pool works, so its CPU time (what the
// loop would otherwise grow its iteration count on) says nothing. With
// `iterations`, exactly that many runs per repetition.
template <class Fn> void add_real_time(const std::string &name, Fn fn, int iterations = 0)
{
    if (!bench::select_row(name))
        return;
    benchmark::internal::Benchmark *b = benchmark::RegisterBenchmark(name.c_str(), fn);
    b->UseRealTime();
    if (iterations > 0)
        b->Iterations(iterations);
}

template <class C> void register_fib30()
{
    if constexpr (C::fork_join)
        add_real_time(bench::row_name("pool", "fib30", C::name), fib_row<C, 30>);
}

// fib(35) takes tens to hundreds of milliseconds per run: one run per
// repetition keeps it within the budget.
template <class C> void register_fib35()
{
    if constexpr (C::fork_join)
        add_real_time(bench::row_name("pool", "fib35", C::name), fib_row<C, 35>, 1);
}

template <class C> void register_submit()
{
    if constexpr (C::submits) {
        for (int p : kProducers)
            bench::add_windowed(bench::row_name("pool", "submit", C::name, p),
                                [p](benchmark::State &state) { submit_row<C>(state, p); });
    }
}

template <class C> void register_wakeup()
{
    if constexpr (C::submits)
        bench::add_windowed(bench::row_name("pool", "wakeup", C::name), wakeup_row<C>);
}

template <class... Cs> void register_all(List<Cs...>)
{
    (register_fib30<Cs>(), ...);
    (register_fib35<Cs>(), ...);
    (add_real_time(bench::row_name("pool", "parallel_for", Cs::name), parallel_for_row<Cs>), ...);
    (register_submit<Cs>(), ...);
    (register_wakeup<Cs>(), ...);
    (bench::add_windowed(bench::row_name("pool", "idle", Cs::name), idle_row<Cs>), ...);
}

} // namespace

void bench::register_pool()
{
    register_all(Contenders{});
}
