// benchmarks/lazy.cpp: the lazy initialisation (once) family.
//
// Contenders (policy structs): park (park_lazy_t), pthread_once,
// std_call_once (std::call_once), absl_call_once (absl::call_once) and
// mutex_lazy (the textbook mutex-guarded lazy, baselines/lazy_mutex.h).
// Each provides a cell_type (the once flag or lazy and where the value
// lives; built fresh by placement new), and
//   init(cell, factory)   bind the cell to the initialiser
//   get(cell, &value)     0 and the value, or the failed run's error
//   retries               whether a failed run is retried by the next get
// Every contender runs the same initialiser (Factory) and reads the value
// it made; the once flags that take no result keep it in the cell.
// pthread_once and absl::call_once have no way to report a failure, so
// they are not retry contenders; std::call_once retries when the function
// throws, so its initialiser throws the error and get catches it.
//
// Scenarios (one loop body each, run by every contender):
//   initialised   get on an initialised cell by one thread: the fast path
//                 (ns per get); the idle thread started in main keeps the
//                 process multi-threaded.
//   cold16        16 threads leave a barrier and call get on a fresh, not
//                 initialised cell; its initialiser yields until all 16
//                 have announced their call, then computes for about a
//                 microsecond, so every other caller waits for the run
//                 (on 2 cores the callers would otherwise mostly arrive
//                 one after another, after the run); a second barrier
//                 ends the round. Windowed: real_time is the time per
//                 round (a fresh cell each round, both barriers included);
//                 p50/p99/p999 are the rounds' first-caller-in to
//                 last-caller-out latency.
//   retry         one thread: a fresh cell whose initialiser fails once,
//                 get (fails), get (runs again, succeeds), get (fast);
//                 ns per cycle. Only contenders that retry.
#include "harness.h"

#include "baselines/lazy_mutex.h"

#include <park/lazy.h>

#include <absl/base/call_once.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cerrno>
#include <memory>
#include <mutex>
#include <new>

namespace
{

// Threads of the cold scenario (8 times the cores here: most first
// callers find the run in progress and wait).
constexpr int kColdThreads = 16;
// local_work rounds of the cold scenario's initialiser: about 1 us.
constexpr int kColdWork = 16;

// The initialiser of every contender: counts its runs (never concurrent:
// each contender runs one at a time), optionally waits for the callers to
// arrive, computes `work` rounds, fails the first `fail_first` runs with
// EIO, and makes the value &token.
struct Factory {
    int fail_first = 0;
    int work = 0;
    int runs = 0;
    int token = 0;
    // With `arrived` set, a run first waits (yielding) until `expect`
    // callers have announced their get, so that they all overlap it.
    std::atomic<int> *arrived = nullptr;
    int expect = 0;

    void reset(int fail, int work_rounds)
    {
        fail_first = fail;
        work = work_rounds;
        runs = 0;
    }
    int run(void **value)
    {
        int k = ++runs;
        while (arrived && arrived->load(std::memory_order_relaxed) < expect)
            sched_yield();
        uint64_t x = static_cast<uint64_t>(k);
        for (int i = 0; i < work; ++i)
            x = bench::local_work(x);
        benchmark::DoNotOptimize(x);
        if (k <= fail_first)
            return EIO;
        *value = &token;
        return 0;
    }
};

// ---- contenders ---------------------------------------------------------

struct Park {
    static constexpr const char *name = "park";
    static constexpr bool retries = true;
    struct cell_type {
        park_lazy_t lazy;
    };
    static int fn(void *arg, void **value)
    {
        return static_cast<Factory *>(arg)->run(value);
    }
    static void init(cell_type &c, Factory *f)
    {
        park_lazy_init(&c.lazy, fn, f);
    }
    static int get(cell_type &c, void **value)
    {
        return park_lazy_get(&c.lazy, value);
    }
};

struct PthreadOnce {
    static constexpr const char *name = "pthread_once";
    static constexpr bool retries = false;
    struct cell_type {
        pthread_once_t once = PTHREAD_ONCE_INIT;
        Factory *f = nullptr;
        void *value = nullptr;
    };
    // pthread_once's routine takes no argument: it finds the cell here.
    // Each scenario has one cell at a time, bound before any get.
    static inline cell_type *current = nullptr;
    static void routine()
    {
        (void)current->f->run(&current->value);
    }
    static void init(cell_type &c, Factory *f)
    {
        c.f = f;
        current = &c;
    }
    static int get(cell_type &c, void **value)
    {
        pthread_once(&c.once, routine);
        *value = c.value;
        return 0;
    }
};

// What std::call_once's function throws to fail its run.
struct RunFailed {
    int err;
};

struct StdCallOnce {
    static constexpr const char *name = "std_call_once";
    static constexpr bool retries = true;
    struct cell_type {
        std::once_flag flag;
        Factory *f = nullptr;
        void *value = nullptr;
    };
    static void init(cell_type &c, Factory *f)
    {
        c.f = f;
    }
    static int get(cell_type &c, void **value)
    {
        try {
            std::call_once(c.flag, [&c] {
                int err = c.f->run(&c.value);
                if (err != 0)
                    throw RunFailed{err};
            });
        } catch (const RunFailed &e) {
            return e.err;
        }
        *value = c.value;
        return 0;
    }
};

struct AbslCallOnce {
    static constexpr const char *name = "absl_call_once";
    static constexpr bool retries = false;
    struct cell_type {
        absl::once_flag flag;
        Factory *f = nullptr;
        void *value = nullptr;
    };
    static void init(cell_type &c, Factory *f)
    {
        c.f = f;
    }
    static int get(cell_type &c, void **value)
    {
        absl::call_once(c.flag, [&c] { (void)c.f->run(&c.value); });
        *value = c.value;
        return 0;
    }
};

struct MutexLazy {
    static constexpr const char *name = "mutex_lazy";
    static constexpr bool retries = true;
    struct cell_type {
        baseline::MutexLazy lazy;
        Factory *f = nullptr;
    };
    static void init(cell_type &c, Factory *f)
    {
        c.f = f;
    }
    static int get(cell_type &c, void **value)
    {
        return c.lazy.get([&c](void **v) { return c.f->run(v); }, value);
    }
};

template <class... Cs> struct List {
};

// The contender table: every scenario below runs for each entry, in order
// (retry only for those that retry).
using Contenders = List<Park, PthreadOnce, StdCallOnce, AbslCallOnce, MutexLazy>;

// ---- shared state -------------------------------------------------------

// Storage for one cell on its own cache line; make() builds a fresh cell
// in it (the once flags cannot be reset), unmake() destroys it.
template <class C> class Slot
{
  public:
    using cell = typename C::cell_type;
    cell &make(Factory *f)
    {
        cell_ = new (storage_) cell();
        C::init(*cell_, f);
        return *cell_;
    }
    void unmake()
    {
        cell_->~cell();
        cell_ = nullptr;
    }

  private:
    alignas(64) unsigned char storage_[sizeof(cell)];
    cell *cell_ = nullptr;
};

// ---- scenarios ----------------------------------------------------------

template <class C> void initialised(benchmark::State &state)
{
    auto slot = std::make_unique<Slot<C>>();
    Factory f;
    typename C::cell_type &c = slot->make(&f);
    void *first = nullptr;
    if (C::get(c, &first) != 0 || first != &f.token)
        state.SkipWithError("the first get failed");
    for (auto _ : state) {
        void *v;
        int err = C::get(c, &v);
        benchmark::DoNotOptimize(err);
        benchmark::DoNotOptimize(v);
    }
    if (f.runs != 1)
        state.SkipWithError("the initialiser ran more than once");
    slot->unmake();
}

template <class C> struct Cold {
    Slot<C> slot;
    Factory factory;
    typename C::cell_type *cell = nullptr; // this round's; set before `begin`
    bool stop = false;                     // set before `begin`
    pthread_barrier_t begin, end;
    // Ticks at which the first caller of the round left `begin` and the
    // last one had its value (reset before `begin`; relaxed: the barriers
    // order them).
    std::atomic<uint64_t> first_in{UINT64_MAX};
    std::atomic<uint64_t> last_out{0};
    std::atomic<int> arrived{0};
    std::atomic<bool> wrong{false};
};

// Thread 0 builds each round's fresh cell before the `begin` barrier and
// destroys it after the `end` barrier; the round's latency (first caller
// in to last caller out) goes into the histogram.
template <class C>
bench::ThreadResult cold_caller(bench::Window &w, Cold<C> &g, int index, bench::Histogram &hist)
{
    uint64_t rounds = 0;
    w.start();
    for (;;) {
        if (index == 0) {
            g.stop = !w.running();
            if (!g.stop) {
                g.factory.reset(0, kColdWork);
                g.factory.arrived = &g.arrived;
                g.factory.expect = kColdThreads;
                // relaxed: `begin` orders it before the callers' adds.
                g.arrived.store(0, std::memory_order_relaxed);
                g.cell = &g.slot.make(&g.factory);
                g.first_in.store(UINT64_MAX, std::memory_order_relaxed);
                g.last_out.store(0, std::memory_order_relaxed);
            }
        }
        pthread_barrier_wait(&g.begin);
        if (g.stop)
            break;
        uint64_t in = bench::ticks();
        void *v = nullptr;
        g.arrived.fetch_add(1, std::memory_order_relaxed);
        if (C::get(*g.cell, &v) != 0 || v != &g.factory.token)
            g.wrong.store(true, std::memory_order_relaxed);
        uint64_t out = bench::ticks();
        uint64_t seen = g.first_in.load(std::memory_order_relaxed);
        while (in < seen &&
               !g.first_in.compare_exchange_weak(seen, in, std::memory_order_relaxed)) {
        }
        seen = g.last_out.load(std::memory_order_relaxed);
        while (out > seen &&
               !g.last_out.compare_exchange_weak(seen, out, std::memory_order_relaxed)) {
        }
        pthread_barrier_wait(&g.end);
        if (index == 0) {
            uint64_t first = g.first_in.load(std::memory_order_relaxed);
            uint64_t last = g.last_out.load(std::memory_order_relaxed);
            hist.record(last > first ? last - first : 0);
            if (g.factory.runs != 1)
                g.wrong.store(true, std::memory_order_relaxed);
            g.slot.unmake();
            ++rounds;
        }
    }
    return bench::ThreadResult{rounds, 0};
}

template <class C> void cold16(benchmark::State &state)
{
    auto g = std::make_unique<Cold<C>>();
    pthread_barrier_init(&g->begin, nullptr, kColdThreads);
    pthread_barrier_init(&g->end, nullptr, kColdThreads);
    bench::Histogram hist;
    bench::WindowResult r;
    for (auto _ : state) {
        r = bench::run_window(kColdThreads, [&g, &hist](bench::Window &w, int index) {
            return cold_caller<C>(w, *g, index, hist);
        });
        bench::set_time_per_op(state, r);
    }
    pthread_barrier_destroy(&g->begin);
    pthread_barrier_destroy(&g->end);
    if (g->wrong.load())
        state.SkipWithError("a round ran the initialiser twice or returned a wrong value");
    bench::report_handoff(state, r, hist);
}

template <class C> void retry(benchmark::State &state)
{
    auto slot = std::make_unique<Slot<C>>();
    Factory f;
    bool wrong = false;
    for (auto _ : state) {
        f.reset(1, 0);
        typename C::cell_type &c = slot->make(&f);
        void *v = nullptr;
        int failed = C::get(c, &v);
        int ran = C::get(c, &v);
        int fast = C::get(c, &v);
        wrong |= failed != EIO || ran != 0 || fast != 0 || v != &f.token || f.runs != 2;
        slot->unmake();
    }
    if (wrong)
        state.SkipWithError("a failed run was not retried exactly once");
}

// ---- registration -------------------------------------------------------

template <class C> void register_retry()
{
    if constexpr (C::retries)
        bench::add_single(bench::row_name("lazy", "retry", C::name), retry<C>);
}

template <class... Cs> void register_all(List<Cs...>)
{
    (bench::add_single(bench::row_name("lazy", "initialised", Cs::name), initialised<Cs>), ...);
    (bench::add_windowed(bench::row_name("lazy", "cold16", Cs::name), cold16<Cs>), ...);
    (register_retry<Cs>(), ...);
}

} // namespace

void bench::register_lazy()
{
    register_all(Contenders{});
}
