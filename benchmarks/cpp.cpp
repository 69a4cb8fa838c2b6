// benchmarks/cpp.cpp: the cpp family, park.hpp's wrappers beside the C calls
// they stand for and beside the std types they imitate.
//
// Contenders (policy structs): park_c (park_mutex_t, park_rwlock_t and
// park_sem_t through the C calls), park_cpp (park::mutex,
// park::shared_mutex and park::counting_semaphore<> as C++ code uses them:
// std::lock_guard, std::shared_lock, acquire() and release()) and std
// (std::mutex, std::shared_mutex through the same guards, and
// std::counting_semaphore<> through baselines/std_semaphore.cpp, as the sem
// family has it). Each provides a mutex_type, a shared_mutex_type and a
// semaphore_type (constructed from its permits), and runs a critical
// section f() holding one of them:
//   locked(m, f)   exclusive lock of a mutex_type
//   shared(rw, f)  shared lock of a shared_mutex_type
//   permit(s, f)   one permit of a semaphore_type
// each written the way its users write it, so the rows compare what a
// program pays, guard objects included.
//
// Scenarios (one loop body each, run by every contender):
//   mutex_uncontended   lock + unlock by one thread; the idle thread
//                       started in main keeps the process multi-threaded.
//   shared_uncontended  shared lock + unlock by one thread.
//   sem_uncontended     acquire + release of a one-permit semaphore.
//   mutex_contended     2 threads: lock, update two shared cache lines,
//                       unlock, local work (mutex/contended's loop);
//                       windowed, with fairness and worst wait.
//
// The goal is park_cpp within 2 % of park_c. Wall-clock rows on a small,
// shared machine cannot resolve 2 %; tools/cpp-cost counts the
// instructions of the same pairs exactly (benchmarks/README.md).
#include "harness.h"

#include "baselines/std_semaphore.h"

#include <park/park.hpp>

#include <algorithm>
#include <memory>
#include <mutex>
#include <shared_mutex>

namespace
{

// ---- contenders ---------------------------------------------------------

struct ParkC {
    static constexpr const char *name = "park_c";
    struct mutex_type {
        park_mutex_t m;
        mutex_type()
        {
            park_mutex_init(&m);
        }
        ~mutex_type()
        {
            (void)park_mutex_destroy(&m);
        }
    };
    struct shared_mutex_type {
        park_rwlock_t rw;
        shared_mutex_type()
        {
            park_rwlock_init(&rw);
        }
        ~shared_mutex_type()
        {
            (void)park_rwlock_destroy(&rw);
        }
    };
    struct semaphore_type {
        park_sem_t s;
        explicit semaphore_type(uint32_t permits)
        {
            (void)park_sem_init(&s, permits, PARK_SEM_VALUE_MAX);
        }
        ~semaphore_type()
        {
            (void)park_sem_destroy(&s);
        }
    };
    template <class F> static void locked(mutex_type &m, F f)
    {
        park_mutex_lock(&m.m);
        f();
        park_mutex_unlock(&m.m);
    }
    template <class F> static void shared(shared_mutex_type &rw, F f)
    {
        park_rwlock_read_lock(&rw.rw);
        f();
        park_rwlock_read_unlock(&rw.rw);
    }
    template <class F> static void permit(semaphore_type &s, F f)
    {
        park_sem_acquire(&s.s);
        f();
        (void)park_sem_release(&s.s, 1);
    }
};

struct ParkCpp {
    static constexpr const char *name = "park_cpp";
    using mutex_type = park::mutex;
    using shared_mutex_type = park::shared_mutex;
    using semaphore_type = park::counting_semaphore<>;
    template <class F> static void locked(mutex_type &m, F f)
    {
        std::lock_guard<park::mutex> hold(m);
        f();
    }
    template <class F> static void shared(shared_mutex_type &rw, F f)
    {
        std::shared_lock<park::shared_mutex> hold(rw);
        f();
    }
    template <class F> static void permit(semaphore_type &s, F f)
    {
        s.acquire();
        f();
        s.release();
    }
};

struct Std {
    static constexpr const char *name = "std";
    using mutex_type = std::mutex;
    using shared_mutex_type = std::shared_mutex;
    // std::counting_semaphore<> is C++20: baselines/std_semaphore.cpp
    // holds it, and link-time optimisation inlines its calls here.
    struct semaphore_type {
        baseline::StdSemaphore s;
        explicit semaphore_type(uint32_t permits)
        {
            baseline::std_sem_init(&s, permits);
        }
        ~semaphore_type()
        {
            baseline::std_sem_destroy(&s);
        }
    };
    template <class F> static void locked(mutex_type &m, F f)
    {
        std::lock_guard<std::mutex> hold(m);
        f();
    }
    template <class F> static void shared(shared_mutex_type &rw, F f)
    {
        std::shared_lock<std::shared_mutex> hold(rw);
        f();
    }
    template <class F> static void permit(semaphore_type &s, F f)
    {
        baseline::std_sem_acquire(&s.s);
        f();
        baseline::std_sem_release(&s.s);
    }
};

template <class... Cs> struct List {
};

// The contender table: every scenario below runs for each entry, in order.
using Contenders = List<ParkC, ParkCpp, Std>;

// ---- shared state -------------------------------------------------------

// One object on its own cache line.
template <class T> struct alignas(64) Padded {
    template <class... A> explicit Padded(A... a) : v(a...)
    {
    }
    T v;
};

// One cache line of data guarded by the contended mutex.
struct alignas(64) Line {
    uint64_t v[8];
};

template <class C> struct Contended {
    Padded<typename C::mutex_type> lock;
    Line a{}, b{};
};

// ---- scenarios ----------------------------------------------------------

template <class C> void mutex_uncontended(benchmark::State &state)
{
    auto p = std::make_unique<Padded<typename C::mutex_type>>();
    for (auto _ : state) {
        C::locked(p->v, [] {});
        benchmark::ClobberMemory();
    }
}

template <class C> void shared_uncontended(benchmark::State &state)
{
    auto p = std::make_unique<Padded<typename C::shared_mutex_type>>();
    for (auto _ : state) {
        C::shared(p->v, [] {});
        benchmark::ClobberMemory();
    }
}

template <class C> void sem_uncontended(benchmark::State &state)
{
    auto p = std::make_unique<Padded<typename C::semaphore_type>>(1);
    for (auto _ : state) {
        C::permit(p->v, [] {});
        benchmark::ClobberMemory();
    }
}

constexpr int kContendedThreads = 2;

template <class C> void mutex_contended(benchmark::State &state)
{
    auto g = std::make_unique<Contended<C>>();
    bench::WindowResult r;
    for (auto _ : state) {
        r = bench::run_window(kContendedThreads, [&g](bench::Window &w, int index) {
            uint64_t x = static_cast<uint64_t>(index) + 1, ops = 0, worst = 0;
            w.start();
            while (w.running()) {
                uint64_t t0 = bench::ticks();
                C::locked(g->lock.v, [&] {
                    worst = std::max(worst, bench::ticks_since(t0));
                    g->a.v[0] += 1; // the critical section: two shared lines
                    g->b.v[0] += g->a.v[0];
                });
                x = bench::local_work(x);
                ++ops;
            }
            benchmark::DoNotOptimize(x);
            return bench::ThreadResult{ops, worst};
        });
        bench::set_time_per_op(state, r);
    }
    if (g->a.v[0] != r.total_ops())
        state.SkipWithError("lost updates: mutual exclusion broken");
    bench::report_contended(state, r);
}

// ---- registration -------------------------------------------------------

template <class... Cs> void register_all(List<Cs...>)
{
    (bench::add_single(bench::row_name("cpp", "mutex_uncontended", Cs::name),
                       mutex_uncontended<Cs>),
     ...);
    (bench::add_single(bench::row_name("cpp", "shared_uncontended", Cs::name),
                       shared_uncontended<Cs>),
     ...);
    (bench::add_single(bench::row_name("cpp", "sem_uncontended", Cs::name), sem_uncontended<Cs>),
     ...);
    (bench::add_windowed(bench::row_name("cpp", "mutex_contended", Cs::name, kContendedThreads),
                         mutex_contended<Cs>),
     ...);
}

} // namespace

void bench::register_cpp()
{
    register_all(Contenders{});
}
