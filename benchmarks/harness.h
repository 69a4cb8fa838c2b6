// benchmarks/harness.h: what every benchmark family shares.
//
// A family (mutex.cpp, sem.cpp, ...) is a list of contenders and a few
// scenarios. A contender is a policy struct: a `name` and static functions
// (lock/unlock/try_lock for mutexes, acquire/release/try_acquire for
// semaphores) over a `lock_type`. Each scenario is one function template,
// so every contender runs the same loop body; the family's register
// function instantiates each scenario for each contender of its list.
//
// Benchmark names are `<family>/<scenario>/<contender>`, with
// `/threads:<T>` for multi-threaded scenarios. Rows are either
//
//   single:   google-benchmark's own timing loop on the calling thread
//             (real_time = ns per operation), or
//   windowed: T threads run the loop for one time window of
//             --benchmark_min_time seconds per repetition, so a row never
//             takes longer than its budget however slow the contender;
//             real_time is still ns per operation (window / total ops), and
//             the counters below carry the rest.
//
// The budget lives in one place: the command line's --benchmark_min_time
// and --benchmark_repetitions, which google-benchmark applies to single
// rows and run_window() applies to windowed rows.
#ifndef PARK_BENCH_HARNESS_H
#define PARK_BENCH_HARNESS_H

#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace bench
{

// Thread counts of every contended scenario (8 and 16 oversubscribe a
// 2-core machine: the lock-holder-preemption case).
inline constexpr int kThreadCounts[] = {1, 2, 4, 8, 16};

// ---- budget -------------------------------------------------------------

// Seconds of one measuring window (--benchmark_min_time, parsed in main).
double min_time();
void set_min_time(double seconds);

// ---- clock --------------------------------------------------------------

// A cheap timestamp for waits and latencies, in ticks (the TSC on x86,
// otherwise steady_clock ns). Unordered with the surrounding code, which
// is fine for the microsecond-to-millisecond waits it is meant for.
inline uint64_t ticks()
{
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

// Ticks from t0 to now; 0 if the clock read earlier (TSCs of different
// cores may disagree by a little).
inline uint64_t ticks_since(uint64_t t0)
{
    uint64_t t = ticks();
    return t > t0 ? t - t0 : 0;
}

// Measures ticks against steady_clock once; call before any benchmark runs.
void calibrate_ticks();
double ticks_to_ns(uint64_t t);

// ---- work ---------------------------------------------------------------

// Local arithmetic between operations: a dependent chain of multiply-adds,
// about 50-100 ns on current x86 cores. The empty asm keeps the compiler
// from folding the chain.
// `rounds` rounds of an LCG: work outside a critical section in the
// contention sweeps.
inline uint64_t lcg_rounds(uint64_t x, int rounds)
{
    for (int i = 0; i < rounds; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        asm volatile("" : "+r"(x));
    }
    return x;
}

inline uint64_t local_work(uint64_t x)
{
    for (int i = 0; i < 64; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        asm volatile("" : "+r"(x));
    }
    return x;
}

// Per-acquisition context for contenders that need none (queue locks such
// as MCS need one node per acquisition; everyone else gets this).
struct NoNode {
};

// ---- latency histogram --------------------------------------------------

// Log-linear histogram of tick counts: exact below 32, then 32 buckets per
// power of two (about 3 % resolution). Fixed size, no allocation while
// recording.
class Histogram
{
  public:
    Histogram() : counts_(kBuckets, 0)
    {
    }
    void record(uint64_t v)
    {
        ++counts_[bucket(v)];
        ++n_;
    }
    uint64_t count() const
    {
        return n_;
    }
    // Adds o's samples to this one's (per-thread histograms, after the
    // threads have joined).
    void merge(const Histogram &o)
    {
        for (int b = 0; b < kBuckets; ++b)
            counts_[b] += o.counts_[b];
        n_ += o.n_;
    }
    // The value (ticks) at quantile q in [0, 1]: the midpoint of the bucket
    // holding the ceil(q * n)-th smallest sample; 0 when empty.
    uint64_t quantile(double q) const;

  private:
    static constexpr int kSubBits = 5;
    static constexpr int kSub = 1 << kSubBits;
    static constexpr int kBuckets = 64 * kSub;
    static int bucket(uint64_t v)
    {
        if (v < kSub)
            return static_cast<int>(v);
        int e = 63 - __builtin_clzll(v);
        return (e - kSubBits + 1) * kSub + static_cast<int>((v >> (e - kSubBits)) & (kSub - 1));
    }
    std::vector<uint64_t> counts_;
    uint64_t n_ = 0;
};

// ---- time windows -------------------------------------------------------

// A count-down latch for the baselines and scenario drivers: the thread
// that waits sleeps on a condition variable until `n` count-downs. The
// last count_down notifies while holding the mutex, so the waiter cannot
// return from wait() while a counting thread still touches the latch.
class Latch
{
  public:
    explicit Latch(size_t n = 0) : left_(n)
    {
    }
    void reset(size_t n)
    {
        std::lock_guard<std::mutex> lk(m_);
        done_ = false;
        // relaxed: whatever counts down is started after this store, by
        // this thread, which publishes it.
        left_.store(n, std::memory_order_relaxed);
    }
    void count_down()
    {
        // acq_rel: the last count-down sees every earlier one's writes
        // (acquire) and the mutex below passes them on to the waiter.
        if (left_.fetch_sub(1, std::memory_order_acq_rel) != 1)
            return;
        std::lock_guard<std::mutex> lk(m_);
        done_ = true;
        cv_.notify_one();
    }
    void wait()
    {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [this] { return done_; });
    }

  private:
    std::atomic<size_t> left_;
    std::mutex m_;
    std::condition_variable cv_;
    bool done_ = false;
};

// What one worker thread of a window reports.
struct ThreadResult {
    uint64_t ops = 0;              // operations completed inside the window
    uint64_t worst_wait_ticks = 0; // longest single acquire wait
};

struct WindowResult {
    double seconds = 0;            // from the gate opening to the last join
    double cpu_seconds = 0;        // user + system, whole process
    uint64_t context_switches = 0; // voluntary + involuntary, whole process
    std::vector<ThreadResult> threads;
    uint64_t total_ops() const;
};

// The start gate and stop flag of one window, as its worker threads see it.
class Window
{
  public:
    // Arrive at the start gate and wait until every worker has arrived and
    // the window opens. Each worker calls it exactly once, after its setup.
    void start();
    // False once the window has closed; a relaxed load of a flag on its own
    // cache line, cheap enough to test every iteration.
    bool running() const
    {
        return !stop_.load(std::memory_order_relaxed);
    }

  private:
    template <class Body> friend WindowResult run_window(int threads, Body body);
    explicit Window(int threads) : threads_(threads)
    {
    }
    void await_arrivals();
    void open();
    void close()
    {
        stop_.store(true, std::memory_order_relaxed);
    }
    bool all_started() const
    {
        return started_.load(std::memory_order_relaxed) == threads_;
    }

    std::mutex m_;
    std::condition_variable cv_;
    int threads_;
    int arrived_ = 0;
    bool open_ = false;
    std::atomic<int> started_{0};
    alignas(64) std::atomic<bool> stop_{false};
};

// Samples taken around a window.
struct Snapshot {
    double seconds;
    double cpu_seconds;
    uint64_t context_switches;
};
Snapshot snapshot();
void sleep_seconds(double s);

// Runs body(window, index) -> ThreadResult on `threads` new threads for one
// window of min_time() seconds, and measures it. The window opens once all
// workers have called window.start(), and closes after min_time() but not
// before every worker has left start() (on a loaded machine a worker may
// otherwise not run at all in a short window). After it closes, each worker
// leaves its loop at its next running() test, so the measured time includes
// draining the stragglers (a preempted lock holder shows up here).
template <class Body> WindowResult run_window(int threads, Body body)
{
    Window w(threads);
    WindowResult r;
    r.threads.resize(threads);
    std::vector<std::thread> workers;
    workers.reserve(threads);
    for (int i = 0; i < threads; ++i)
        workers.emplace_back([&w, &r, &body, i] { r.threads[i] = body(w, i); });
    w.await_arrivals();
    Snapshot before = snapshot();
    w.open();
    sleep_seconds(min_time());
    while (!w.all_started())
        sleep_seconds(1e-4);
    w.close();
    for (std::thread &t : workers)
        t.join();
    Snapshot after = snapshot();
    r.seconds = after.seconds - before.seconds;
    r.cpu_seconds = after.cpu_seconds - before.cpu_seconds;
    r.context_switches = after.context_switches - before.context_switches;
    return r;
}

// A window driven by tasks on a pool rather than by threads of its own:
// start() sets the tasks going, the window lasts min_time(), then
// stop_and_wait() asks them to stop and returns once all have. The result
// holds the window's times and `tasks` empty ThreadResults for the caller
// to fill.
template <class Start, class StopAndWait>
WindowResult run_task_window(int tasks, Start start, StopAndWait stop_and_wait)
{
    WindowResult r;
    Snapshot before = snapshot();
    start();
    sleep_seconds(min_time());
    stop_and_wait();
    Snapshot after = snapshot();
    r.seconds = after.seconds - before.seconds;
    r.cpu_seconds = after.cpu_seconds - before.cpu_seconds;
    r.context_switches = after.context_switches - before.context_switches;
    r.threads.assign(static_cast<size_t>(tasks), ThreadResult{});
    return r;
}

// ---- reporting ----------------------------------------------------------

// Windowed rows: real_time = ns per operation of all threads together.
// Call inside the row's single `for (auto _ : state)` iteration.
void set_time_per_op(benchmark::State &state, const WindowResult &r);

// Counters of a contended row: items_per_second (all threads), csw_per_op,
// cpu_ns_per_op (CPU time of the whole process per operation: spinning
// shows here), min_acq / max_acq (per-thread operation counts), fairness
// (min_acq / max_acq) and worst_wait_ns (longest single acquire wait of any
// thread).
void report_contended(benchmark::State &state, const WindowResult &r);

// Counters of a hand-off row: items_per_second (round trips), csw_per_op
// and cpu_ns_per_op (per round trip) and p50_ns / p99_ns / p999_ns of the
// round trip.
void report_handoff(benchmark::State &state, const WindowResult &r, const Histogram &h);

// Counters of a throughput row (pool submissions, channels): items_per_second
// (all threads), csw_per_op and cpu_ns_per_op.
void report_throughput(benchmark::State &state, const WindowResult &r);

// ---- registration -------------------------------------------------------

std::string row_name(const char *family, const char *scenario, const char *contender,
                     int threads = 0);

// --benchmark_filter, applied here to the row names as printed (google-
// benchmark would match its internal names, which carry suffixes on
// windowed rows): a POSIX extended regex searched in the name, a leading
// '-' negating it; empty or "all" selects every row. Set before the
// families register.
void set_filter(const std::string &filter);
// Whether the filter selects `name`; if so, remembers it for list_rows().
bool select_row(const std::string &name);
// The selected rows, in registration (= run) order.
const std::vector<std::string> &list_rows();

// A row timed by google-benchmark's loop on the calling thread.
template <class Fn> void add_single(const std::string &name, Fn fn)
{
    if (select_row(name))
        benchmark::RegisterBenchmark(name.c_str(), fn);
}

// A row that runs run_window() once per repetition. The name suffixes
// google-benchmark adds for this (/iterations:1/manual_time) are removed
// again by the reporters in main.cpp. Returns the row, for settings of its
// own, or nullptr where the row is not selected.
template <class Fn> benchmark::internal::Benchmark *add_windowed(const std::string &name, Fn fn)
{
    if (!select_row(name))
        return nullptr;
    return benchmark::RegisterBenchmark(name.c_str(), fn)->UseManualTime()->Iterations(1);
}

// One per family; main() calls each before running.
void register_mutex();
void register_sem();
void register_rwlock();
void register_lazy();
void register_pool();
void register_async();
void register_chan();
void register_cond();
void register_event();
void register_barrier();
void register_sem_many();
void register_cpp();
void register_tail();

} // namespace bench

#endif // PARK_BENCH_HARNESS_H
