// benchmarks/tail.cpp: the tail family: latency tails and short-term
// fairness of locks, measured the way Dave Dice's lock papers measure them
// (a fixed-time run in which every thread does a fixed amount of work per
// acquisition and reports what it got).
//
// Every thread loops { t0 = ticks; acquire; wait = ticks since t0; critical
// section (a two-word update of shared data: a += 1, b += a); release; 50
// LCG rounds outside } for one window (bench::run_window). It records each
// wait in its own bench::Histogram and, for each 1 ms interval of the
// window, whether it acquired in it (one byte per interval in an array
// sized before the window opens). Nothing is allocated while measuring;
// the histograms are merged after the threads have joined.
//
// Scenarios (rows tail/<scenario>/<contender>[/threads:T]):
//   mutex       T in 2, 4, 8, 16: park, pthread, absl, ck_mcs, std
//               (mutex_contenders.h), and park_profiled: park with the
//               contention profiler recording, which adds the profiler's
//               per-site figures for the same run (report_profile), and
//               unshared: the floor, each thread with a mutex and data of
//               its own (what the machine adds to every lock's waits).
//   sem         the same loop through a semaphore of 1 permit: park, sem_t,
//               std (sem_contenders.h).
//   rwlock      90 % reads (the rwlock sweep's per-thread LCG picks each
//               operation; a read loads both words and checks b = a(a+1)/2,
//               a write updates them): park, pthread_wpref, absl
//               (rwlock_contenders.h).
//   lockskew    2 threads: one re-locks in a tight loop (lock, the two-word
//               update, unlock, lock again at once), the other does the
//               timed loop with 1 us of spinning outside instead of the LCG
//               rounds; the waits are the second thread's. A lock that lets
//               a running thread take it back at once starves the second
//               one: its longest wait can be the whole window (it gets the
//               lock when the first thread stops). park, pthread, absl.
//   nice19      the mutex loop with 4 threads, the last of them at nice 19
//               (setpriority on its tid when it starts): how much of its
//               share a lock adds to what the scheduler takes. park,
//               pthread, absl, and unshared (the scheduler's share alone).
//
// Counters: items_per_second (acquisitions of all threads), csw_per_op,
// cpu_ns_per_op; p50_ns, p99_ns, p999_ns (the merged histogram: about 3 %
// resolution) and max_ns (exact) of the wait; rsd, the relative standard
// deviation (population stddev / mean) of the threads' acquisition counts;
// cpu_rsd, the same of the CPU time each thread had in its loop (how much
// of rsd the scheduler's sharing of the CPUs explains);
// lwss, the lock working set size: the mean over the window's 1 ms
// intervals of the number of distinct threads that acquired in the
// interval (the intervals start when the first thread leaves the start
// gate and end before the first thread leaves its loop, so every thread
// was running in each). lockskew reports the waits of its second thread,
// waiter_acq, relocker_acq and waiter_runq_ns (the second thread's time
// runnable but not running in its loop, from /proc/thread-self/schedstat,
// where the kernel keeps it: how long the scheduler kept the waiter off
// the CPUs in all, which no lock can shorten), and no rsd or lwss; its
// rows add a "max" aggregate over the repetitions (register_one_skew), so
// that the worst window shows beside the medians. nice19 adds nice_acq
// (the nice thread's acquisitions), median_acq (the median of the other
// three's) and nice_ratio = nice_acq / median_acq.
//
// The CDF. The report draws each row's wait distribution from counters,
// not from a side file: cdf_p<P>_ns is the wait at percentile P for P in
// kCdfPercentiles below, which with p50_ns, p99_ns, p999_ns and max_ns
// gives 18 points of the merged histogram's CDF. Counters go wherever the
// row goes (the JSON of --benchmark_out, with the mean, median and stddev
// over repetitions, and the Rust peers write the same ones), so the report
// needs no file beside the JSON and plots the median over repetitions of
// each point, as it does for every other counter.
//
// A row whose critical section lost an update, or whose reader saw a
// write half done, is reported as an error.
#include "harness.h"
#include "mutex_contenders.h"
#include "rwlock_contenders.h"
#include "sem_contenders.h"

#include <park/profile.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <absl/synchronization/mutex.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

namespace
{

constexpr int kThreads[] = {2, 4, 8, 16};
constexpr int kOutside = 50;           // LCG rounds outside the lock
constexpr unsigned kReadPercent = 90;  // rwlock: reads among the operations
constexpr double kIntervalNs = 1e6;    // LWSS intervals: 1 ms
constexpr double kSkewOutsideNs = 1e3; // lockskew: the waiter's spin outside
constexpr int kNiceThreads = 4;        // nice19: threads, the last one at nice 19

// Percentiles of the cdf_p<P>_ns counters (p50, p99, p99.9 and the maximum
// have counters of their own).
constexpr const char *kCdfPercentiles[] = {"0.1", "1",  "5",  "10", "20", "30",   "40",
                                           "60",  "70", "80", "90", "95", "99.5", "99.99"};

template <class... Cs> struct List {
};

// ---- contenders ---------------------------------------------------------

// A semaphore contender with the mutex contenders' interface, over a
// semaphore of 1 permit, so both scenarios run one loop body.
template <class S> struct SemAsLock {
    static constexpr const char *name = S::name;
    using lock_type = typename S::sem_type;
    using node_type = bench::NoNode;
    static void init(lock_type &s)
    {
        S::init(s, 1);
    }
    static void destroy(lock_type &s)
    {
        S::destroy(s);
    }
    static void lock(lock_type &s, node_type &)
    {
        S::acquire(s);
    }
    static void unlock(lock_type &s, node_type &)
    {
        S::release(s);
    }
};

// park's mutex with the contention profiler recording (park_profile_start):
// what the profiler's per-site percentiles say about the same run.
struct ParkProfiled : bench::mutexes::Park {
    static constexpr const char *name = "park_profiled";
};
template <class C> constexpr bool kProfiled = false;
template <> constexpr bool kProfiled<ParkProfiled> = true;

// The floor: the same loop with nothing shared, each thread taking a park
// mutex of its own (never contended: one compare-and-swap) around data of
// its own. What its waits show is what the machine adds to any lock's: the
// clock reads, and a thread preempted between them, which waits for the
// other threads on its CPU to run their time slices.
struct Unshared : bench::mutexes::Park {
    static constexpr const char *name = "unshared";
};
template <class C> constexpr bool kUnshared = false;
template <> constexpr bool kUnshared<Unshared> = true;

using MutexContenders =
    List<bench::mutexes::Park, ParkProfiled, bench::mutexes::Pthread, bench::mutexes::Absl,
         bench::mutexes::CkMcs, bench::mutexes::Std, Unshared>;
using SemContenders = List<SemAsLock<bench::sems::Park>, SemAsLock<bench::sems::PosixSem>,
                           SemAsLock<bench::sems::Std>>;
using RwlockContenders =
    List<bench::rwlocks::Park, bench::rwlocks::PthreadWpref, bench::rwlocks::Absl>;
// lockskew and nice19: park beside the mutexes that sleep (and, in nice19,
// the floor: what the scheduler alone gives the nice thread).
using SkewContenders = List<bench::mutexes::Park, bench::mutexes::Pthread, bench::mutexes::Absl>;
using NiceContenders =
    List<bench::mutexes::Park, bench::mutexes::Pthread, bench::mutexes::Absl, Unshared>;

// ---- shared state -------------------------------------------------------

// The lock on its cache line, the two words of the critical section on
// theirs, and the origin of the LWSS intervals on a third.
template <class C> struct Shared {
    alignas(64) typename C::lock_type lock;
    alignas(64) uint64_t a = 0;
    uint64_t b = 0;
    alignas(64) std::atomic<uint64_t> origin{0};
};

// 1 + 2 + ... + a modulo 2^64: what b holds after a updates.
inline uint64_t triangle(uint64_t a)
{
    return a % 2 == 0 ? a / 2 * (a + 1) : (a + 1) / 2 * a;
}

// The critical section.
template <class C> inline void update(Shared<C> &g)
{
    g.a += 1;
    g.b += g.a;
}

inline uint64_t ticks_for_ns(double ns)
{
    return std::max<uint64_t>(1, std::llround(ns / bench::ticks_to_ns(1)));
}

inline void cpu_relax()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    asm volatile("" ::: "memory");
#endif
}

// Spins for n ticks: work outside the lock that takes the same time on any
// core.
inline void spin_ticks(uint64_t n)
{
    uint64_t t0 = bench::ticks();
    while (bench::ticks_since(t0) < n)
        cpu_relax();
}

// The next step of the thread's LCG as a percentage (rwlock.cpp's
// sweep_percent: the high bits, whose period is long).
inline unsigned percent(uint64_t &s)
{
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<unsigned>((s >> 33) % 100);
}

// ---- what each thread records -------------------------------------------

// The calling thread's CPU time (user and system), in ns.
inline int64_t thread_cpu_ns()
{
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// The calling thread's time runnable but not running (waiting on a run
// queue), in ns: the second field of /proc/thread-self/schedstat; -1 where
// the kernel does not keep it. Reads into a buffer on the stack (nothing
// allocated: it runs inside the window).
inline int64_t thread_runq_ns()
{
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[96];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    unsigned long long on_cpu = 0, waiting = 0;
    if (std::sscanf(buf, "%llu %llu", &on_cpu, &waiting) != 2)
        return -1;
    return static_cast<int64_t>(waiting);
}

// One thread's waits and, per LWSS interval, whether it acquired in it.
// Built and touched by the driving thread before the window opens; on its
// own cache lines, as the thread updates it on every acquisition.
struct alignas(64) Recorder {
    bench::Histogram waits;
    std::vector<uint8_t> acquired; // one flag per interval
    uint64_t origin = 0;           // ticks at the start of interval 0
    uint64_t interval = 1;         // ticks per interval
    uint64_t ops = 0, worst = 0, exit = 0;
    int64_t cpu_ns = 0;            // the thread's CPU time in its loop
    uint64_t writes = 0, torn = 0; // rwlock only

    Recorder(size_t intervals, uint64_t interval_ticks)
        : acquired(intervals, 0), interval(interval_ticks)
    {
    }
    // After the start gate: the first thread through sets the origin.
    void begin(std::atomic<uint64_t> &shared_origin)
    {
        cpu_ns = -thread_cpu_ns();
        uint64_t now = bench::ticks(), expected = 0;
        // relaxed: a timestamp, read by the threads only as a number.
        if (shared_origin.compare_exchange_strong(expected, now, std::memory_order_relaxed))
            origin = now;
        else
            origin = expected;
    }
    // One acquisition at t0 + wait that waited `wait` ticks.
    void record(uint64_t t0, uint64_t wait)
    {
        waits.record(wait);
        worst = std::max(worst, wait);
        ++ops;
        uint64_t at = t0 + wait;
        if (at >= origin) {
            uint64_t i = (at - origin) / interval;
            if (i < acquired.size())
                acquired[i] = 1;
        }
    }
    void end()
    {
        exit = bench::ticks();
        cpu_ns += thread_cpu_ns();
    }
};

struct Recorders {
    std::vector<Recorder> each;
    explicit Recorders(int threads)
    {
        // Room for twice the window: the window closes after min_time, but
        // not before every thread has started.
        size_t intervals =
            static_cast<size_t>(std::ceil(2e9 * bench::min_time() / kIntervalNs)) + 16;
        uint64_t interval = ticks_for_ns(kIntervalNs);
        each.reserve(threads);
        for (int i = 0; i < threads; ++i)
            each.emplace_back(intervals, interval);
    }
};

// ---- counters -----------------------------------------------------------

// p50_ns, p99_ns, p999_ns, max_ns and the cdf_p<P>_ns of one histogram.
void report_waits(benchmark::State &state, const bench::Histogram &h, uint64_t worst)
{
    state.counters["p50_ns"] = bench::ticks_to_ns(h.quantile(0.50));
    state.counters["p99_ns"] = bench::ticks_to_ns(h.quantile(0.99));
    state.counters["p999_ns"] = bench::ticks_to_ns(h.quantile(0.999));
    state.counters["max_ns"] = bench::ticks_to_ns(worst);
    for (const char *p : kCdfPercentiles)
        state.counters[std::string("cdf_p") + p + "_ns"] =
            bench::ticks_to_ns(h.quantile(std::atof(p) / 100));
}

// The relative standard deviation (population stddev / mean) of one figure
// of every thread.
template <class F> double rsd_of(const Recorders &rs, F figure)
{
    double n = static_cast<double>(rs.each.size()), sum = 0, sq = 0;
    for (const Recorder &r : rs.each)
        sum += figure(r);
    double mean = sum / n;
    for (const Recorder &r : rs.each)
        sq += (figure(r) - mean) * (figure(r) - mean);
    return mean > 0 ? std::sqrt(sq / n) / mean : 0.0;
}

// rsd, cpu_rsd and lwss over every thread of the row.
void report_spread(benchmark::State &state, const Recorders &rs)
{
    state.counters["rsd"] = rsd_of(rs, [](const Recorder &r) { return double(r.ops); });
    state.counters["cpu_rsd"] = rsd_of(rs, [](const Recorder &r) { return double(r.cpu_ns); });

    // The intervals in which every thread was still in its loop: from the
    // origin to the first thread's exit.
    uint64_t origin = rs.each[0].origin, first_exit = UINT64_MAX;
    for (const Recorder &r : rs.each)
        first_exit = std::min(first_exit, r.exit);
    size_t intervals = first_exit > origin ? (first_exit - origin) / rs.each[0].interval : 0;
    intervals = std::clamp<size_t>(intervals, 1, rs.each[0].acquired.size());
    uint64_t distinct = 0;
    for (size_t i = 0; i < intervals; ++i)
        for (const Recorder &r : rs.each)
            distinct += r.acquired[i];
    state.counters["lwss"] = static_cast<double>(distinct) / static_cast<double>(intervals);
}

bench::Histogram merged(const Recorders &rs, uint64_t &worst)
{
    bench::Histogram h;
    worst = 0;
    for (const Recorder &r : rs.each) {
        h.merge(r.waits);
        worst = std::max(worst, r.worst);
    }
    return h;
}

// ---- scenarios ----------------------------------------------------------

// The loop of the mutex, sem and nice19 rows: on g's lock and data, and on
// origin's intervals (g.origin but for the unshared rows, whose every
// thread has a g of its own).
template <class C>
bench::ThreadResult exclusive_thread(bench::Window &w, Shared<C> &g, Recorder &rec, int index,
                                     std::atomic<uint64_t> &origin)
{
    typename C::node_type node{};
    uint64_t x = static_cast<uint64_t>(index) + 1;
    w.start();
    rec.begin(origin);
    while (w.running()) {
        uint64_t t0 = bench::ticks();
        C::lock(g.lock, node);
        uint64_t wait = bench::ticks_since(t0);
        update(g);
        C::unlock(g.lock, node);
        rec.record(t0, wait);
        x = bench::lcg_rounds(x, kOutside);
    }
    rec.end();
    benchmark::DoNotOptimize(x);
    return bench::ThreadResult{rec.ops, rec.worst};
}

template <class C> bool exclusion_held(const Shared<C> &g, const bench::WindowResult &r)
{
    return g.a == r.total_ops() && g.b == triangle(g.a);
}

// The lock and data of a row's threads: one Shared for all of them, or one
// each for the unshared rows (their intervals' origin is still the first's).
template <class C> class Locks
{
  public:
    explicit Locks(int threads) : gs_(kUnshared<C> ? threads : 1)
    {
        for (auto &g : gs_) {
            g = std::make_unique<Shared<C>>();
            C::init(g->lock);
        }
    }
    ~Locks()
    {
        for (auto &g : gs_)
            C::destroy(g->lock);
    }
    Locks(const Locks &) = delete;
    Locks &operator=(const Locks &) = delete;

    Shared<C> &of(int index)
    {
        return *gs_[static_cast<size_t>(index) % gs_.size()];
    }
    std::atomic<uint64_t> &origin()
    {
        return gs_[0]->origin;
    }
    // Before each window.
    void reset()
    {
        for (auto &g : gs_)
            g->a = g->b = 0;
        origin().store(0, std::memory_order_relaxed);
    }
    // After it: every update of the window is in the data it went to.
    bool held(const bench::WindowResult &r) const
    {
        if (gs_.size() == 1)
            return exclusion_held(*gs_[0], r);
        for (size_t i = 0; i < gs_.size(); ++i)
            if (gs_[i]->a != r.threads[i].ops || gs_[i]->b != triangle(gs_[i]->a))
                return false;
        return true;
    }

  private:
    std::vector<std::unique_ptr<Shared<C>>> gs_;
};

// The profiler's view of the last window (park_profiled): prof_waits, the
// acquisitions that found the lock taken (whether they then spun, yielded or
// queued), prof_share, their share of all; prof_p50_ns, prof_p99_ns, prof_max_ns,
// their percentiles as the profiler's per-site histogram reports them (the one call site,
// exclusive_thread's lock); and same_p50_ns, same_p99_ns, the tail family's own histogram of the
// same run at the quantiles that select as many of the longest waits (1 - (1 - q) prof_waits /
// acquisitions): if the contended waits are the longest ones, the two agree within the
// histograms' resolution and the fast-path attempt before the profiler's clock starts.
void report_profile(benchmark::State &state, const bench::Histogram &h)
{
    park_profile_site_t sites[8];
    size_t n = std::min<size_t>(park_profile_sites(sites, 8), 8);
    const park_profile_site_t *top = nullptr;
    for (size_t i = 0; i < n; ++i)
        if (sites[i].kind == PARK_PROFILE_MUTEX && (!top || sites[i].waits > top->waits))
            top = &sites[i];
    if (!top || h.count() == 0) {
        state.counters["prof_waits"] = 0;
        return;
    }
    double share = static_cast<double>(top->waits) / static_cast<double>(h.count());
    state.counters["prof_waits"] = static_cast<double>(top->waits);
    state.counters["prof_share"] = share;
    state.counters["prof_p50_ns"] = static_cast<double>(top->p50_ns);
    state.counters["prof_p99_ns"] = static_cast<double>(top->p99_ns);
    state.counters["prof_max_ns"] = static_cast<double>(top->max_ns);
    state.counters["same_p50_ns"] = bench::ticks_to_ns(h.quantile(1 - 0.50 * share));
    state.counters["same_p99_ns"] = bench::ticks_to_ns(h.quantile(1 - 0.01 * share));
}

template <class C> void exclusive(benchmark::State &state, int threads)
{
    Locks<C> locks(threads);
    bench::WindowResult r;
    std::unique_ptr<Recorders> rs;
    bool held = true;
    for (auto _ : state) {
        locks.reset();
        rs = std::make_unique<Recorders>(threads);
        if constexpr (kProfiled<C>) {
            park_profile_reset(); // no thread waits between windows
            if (park_profile_start() != 0) {
                state.SkipWithError("the profiler could not start");
                break;
            }
        }
        r = bench::run_window(threads, [&locks, &rs](bench::Window &w, int index) {
            return exclusive_thread<C>(w, locks.of(index), rs->each[index], index, locks.origin());
        });
        if constexpr (kProfiled<C>)
            park_profile_stop();
        bench::set_time_per_op(state, r);
        held = held && locks.held(r);
    }
    if (!held)
        state.SkipWithError("lost updates: mutual exclusion broken");
    if (!rs)
        return;
    uint64_t worst;
    bench::Histogram h = merged(*rs, worst);
    bench::report_throughput(state, r);
    report_waits(state, h, worst);
    report_spread(state, *rs);
    if constexpr (kProfiled<C>) {
        report_profile(state, h);
        park_profile_reset();
    }
}

template <class C>
bench::ThreadResult rwlock_thread(bench::Window &w, Shared<C> &g, Recorder &rec, int index)
{
    typename C::node_type node{};
    C::enter(g.lock, node);
    uint64_t x = static_cast<uint64_t>(index) + 1, rng = x;
    w.start();
    rec.begin(g.origin);
    while (w.running()) {
        bool read = percent(rng) < kReadPercent;
        uint64_t t0 = bench::ticks(), wait;
        if (read) {
            C::read_lock(g.lock, node);
            wait = bench::ticks_since(t0);
            uint64_t a = g.a, b = g.b;
            rec.torn += b != triangle(a);
            C::read_unlock(g.lock, node);
        } else {
            C::write_lock(g.lock, node);
            wait = bench::ticks_since(t0);
            update(g);
            C::write_unlock(g.lock, node);
            ++rec.writes;
        }
        rec.record(t0, wait);
        x = bench::lcg_rounds(x, kOutside);
    }
    rec.end();
    C::leave(g.lock, node);
    benchmark::DoNotOptimize(x);
    return bench::ThreadResult{rec.ops, rec.worst};
}

template <class C> void rwlock(benchmark::State &state, int threads)
{
    auto g = std::make_unique<Shared<C>>();
    C::init(g->lock);
    bench::WindowResult r;
    std::unique_ptr<Recorders> rs;
    const char *error = nullptr;
    for (auto _ : state) {
        g->a = g->b = 0;
        g->origin.store(0, std::memory_order_relaxed);
        rs = std::make_unique<Recorders>(threads);
        r = bench::run_window(threads, [&g, &rs](bench::Window &w, int index) {
            return rwlock_thread<C>(w, *g, rs->each[index], index);
        });
        bench::set_time_per_op(state, r);
        uint64_t writes = 0, torn = 0;
        for (const Recorder &rec : rs->each) {
            writes += rec.writes;
            torn += rec.torn;
        }
        if (torn)
            error = "torn read: a reader saw a writer inside";
        else if (g->a != writes || g->b != triangle(writes))
            error = "lost updates: writers overlapped";
    }
    C::destroy(g->lock);
    if (error)
        state.SkipWithError(error);
    uint64_t worst;
    bench::Histogram h = merged(*rs, worst);
    bench::report_throughput(state, r);
    report_waits(state, h, worst);
    report_spread(state, *rs);
}

// lockskew: thread 0 re-locks at once, thread 1 is timed.
template <class C> bench::ThreadResult relocker_thread(bench::Window &w, Shared<C> &g)
{
    typename C::node_type node{};
    uint64_t ops = 0;
    w.start();
    while (w.running()) {
        C::lock(g.lock, node);
        update(g);
        C::unlock(g.lock, node);
        ++ops;
    }
    return bench::ThreadResult{ops, 0};
}

// runq_ns: the thread's time on a run queue in its loop (-1: unknown).
template <class C>
bench::ThreadResult waiter_thread(bench::Window &w, Shared<C> &g, Recorder &rec, uint64_t outside,
                                  int64_t &runq_ns)
{
    typename C::node_type node{};
    w.start();
    rec.begin(g.origin);
    int64_t runq0 = thread_runq_ns();
    while (w.running()) {
        uint64_t t0 = bench::ticks();
        C::lock(g.lock, node);
        uint64_t wait = bench::ticks_since(t0);
        update(g);
        C::unlock(g.lock, node);
        rec.record(t0, wait);
        spin_ticks(outside);
    }
    rec.end();
    int64_t runq1 = thread_runq_ns();
    runq_ns = runq0 >= 0 && runq1 >= runq0 ? runq1 - runq0 : -1;
    return bench::ThreadResult{rec.ops, rec.worst};
}

template <class C> void lockskew(benchmark::State &state)
{
    auto g = std::make_unique<Shared<C>>();
    C::init(g->lock);
    uint64_t outside = ticks_for_ns(kSkewOutsideNs);
    bench::WindowResult r;
    std::unique_ptr<Recorders> rs;
    int64_t runq_ns = -1; // the last window's waiter's
    bool held = true;
    for (auto _ : state) {
        g->a = g->b = 0;
        g->origin.store(0, std::memory_order_relaxed);
        rs = std::make_unique<Recorders>(1);
        r = bench::run_window(2, [&g, &rs, &runq_ns, outside](bench::Window &w, int index) {
            return index == 0 ? relocker_thread<C>(w, *g)
                              : waiter_thread<C>(w, *g, rs->each[0], outside, runq_ns);
        });
        bench::set_time_per_op(state, r);
        held = held && exclusion_held(*g, r);
    }
    C::destroy(g->lock);
    if (!held)
        state.SkipWithError("lost updates: mutual exclusion broken");
    bench::report_throughput(state, r);
    report_waits(state, rs->each[0].waits, rs->each[0].worst);
    state.counters["relocker_acq"] = static_cast<double>(r.threads[0].ops);
    state.counters["waiter_acq"] = static_cast<double>(r.threads[1].ops);
    if (runq_ns >= 0)
        state.counters["waiter_runq_ns"] = static_cast<double>(runq_ns);
}

// nice19: the mutex loop; the last thread lowers its own priority first.
template <class C> void nice19(benchmark::State &state)
{
    Locks<C> locks(kNiceThreads);
    bench::WindowResult r;
    std::unique_ptr<Recorders> rs;
    bool held = true;
    std::atomic<bool> reniced{true};
    for (auto _ : state) {
        locks.reset();
        rs = std::make_unique<Recorders>(kNiceThreads);
        r = bench::run_window(kNiceThreads, [&locks, &rs, &reniced](bench::Window &w, int index) {
            if (index == kNiceThreads - 1 && setpriority(PRIO_PROCESS, gettid(), 19) != 0)
                reniced.store(false, std::memory_order_relaxed); // read after the join
            return exclusive_thread<C>(w, locks.of(index), rs->each[index], index, locks.origin());
        });
        bench::set_time_per_op(state, r);
        held = held && locks.held(r);
    }
    if (!held)
        state.SkipWithError("lost updates: mutual exclusion broken");
    else if (!reniced.load(std::memory_order_relaxed))
        state.SkipWithError("setpriority(19) on the nice thread failed");
    uint64_t worst;
    bench::Histogram h = merged(*rs, worst);
    bench::report_throughput(state, r);
    report_waits(state, h, worst);
    report_spread(state, *rs);
    std::vector<uint64_t> others;
    for (int i = 0; i < kNiceThreads - 1; ++i)
        others.push_back(r.threads[i].ops);
    std::sort(others.begin(), others.end());
    double median = static_cast<double>(others[others.size() / 2]);
    double nice = static_cast<double>(r.threads[kNiceThreads - 1].ops);
    state.counters["nice_acq"] = nice;
    state.counters["median_acq"] = median;
    state.counters["nice_ratio"] = median > 0 ? nice / median : 0.0;
}

// ---- registration -------------------------------------------------------

template <class... Cs> void register_exclusive(const char *scenario, List<Cs...>)
{
    for (int t : kThreads)
        (bench::add_windowed(bench::row_name("tail", scenario, Cs::name, t),
                             [t](benchmark::State &s) { exclusive<Cs>(s, t); }),
         ...);
}

template <class... Cs> void register_rwlock(List<Cs...>)
{
    for (int t : kThreads)
        (bench::add_windowed(bench::row_name("tail", "rwlock", Cs::name, t),
                             [t](benchmark::State &s) { rwlock<Cs>(s, t); }),
         ...);
}

// The largest of the repetitions' values: lockskew's bound is on every
// window, which the median over repetitions does not show. A "max"
// aggregate beside the mean, median and stddev (with one repetition there
// are no aggregates, and the report takes the one window's value).
double max_of(const std::vector<double> &v)
{
    return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
}

template <class C> void register_one_skew()
{
    if (auto *b = bench::add_windowed(bench::row_name("tail", "lockskew", C::name), lockskew<C>))
        b->ComputeStatistics("max", max_of);
}

template <class... Cs> void register_skew(List<Cs...>)
{
    (register_one_skew<Cs>(), ...);
}

template <class... Cs> void register_nice(List<Cs...>)
{
    (bench::add_windowed(bench::row_name("tail", "nice19", Cs::name, kNiceThreads), nice19<Cs>),
     ...);
}

} // namespace

void bench::register_tail()
{
    // As in register_mutex: the packaged absl would otherwise run its
    // deadlock detector on every Lock.
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    register_exclusive("mutex", MutexContenders{});
    register_exclusive("sem", SemContenders{});
    register_rwlock(RwlockContenders{});
    register_skew(SkewContenders{});
    register_nice(NiceContenders{});
}
