// benchmarks/event.cpp: the event family (auto-reset events).
//
// Contenders (policy structs): park (park_event_t, auto-reset) and pthread
// (the textbook event: a flag under a pthread mutex with a pthread
// condition variable, baselines/condvar_event.h). Each provides, over its
// event_type (auto-reset, not set when constructed):
//   init(e) destroy(e) set(e) wait(e)
// The Rust peers (benchmarks/peers/rust) add rust_tokio
// (tokio::sync::Notify: notify_one leaves one permit when nobody waits,
// which is an auto-reset event) under the same names.
//
// Scenarios (one loop body each, run by every contender):
//   uncontended   set, then a wait that consumes it, by one thread (the
//                 idle thread started in main keeps the process
//                 multi-threaded): each contender's path with nobody
//                 waiting.
//   pingpong      two threads, two events: A sets X and waits on Y, B
//                 waits on X and sets Y; A times its set to its wait
//                 returning (a round trip, two wake-ups). Windowed,
//                 round-trip quantiles.
#include "harness.h"

#include "baselines/condvar_event.h"

#include <park/event.h>

#include <atomic>
#include <memory>

namespace
{

// ---- contenders ---------------------------------------------------------

struct Park {
    static constexpr const char *name = "park";
    using event_type = park_event_t;
    static void init(event_type &e)
    {
        park_event_init(&e, false, false);
    }
    static void destroy(event_type &e)
    {
        (void)park_event_destroy(&e);
    }
    static void set(event_type &e)
    {
        park_event_set(&e);
    }
    static void wait(event_type &e)
    {
        park_event_wait(&e);
    }
};

struct Pthread {
    static constexpr const char *name = "pthread";
    using event_type = baseline::CondvarEvent;
    static void init(event_type &)
    {
    }
    static void destroy(event_type &)
    {
    }
    static void set(event_type &e)
    {
        e.set();
    }
    static void wait(event_type &e)
    {
        e.wait();
    }
};

template <class... Cs> struct List {
};

// The contender table: every scenario below runs for each entry, in order.
using Contenders = List<Park, Pthread>;

// ---- shared state -------------------------------------------------------

// An event on its own cache line.
template <class C> struct alignas(64) Padded {
    typename C::event_type e;
};

// ---- scenarios ----------------------------------------------------------

template <class C> void uncontended(benchmark::State &state)
{
    auto p = std::make_unique<Padded<C>>();
    C::init(p->e);
    for (auto _ : state) {
        C::set(p->e);
        C::wait(p->e);
        benchmark::ClobberMemory();
    }
    C::destroy(p->e);
}

template <class C> struct PingPong {
    Padded<C> x, y;
    alignas(64) std::atomic<bool> done{false};
};

template <class C>
bench::ThreadResult pingpong_a(bench::Window &w, PingPong<C> &p, bench::Histogram &hist)
{
    uint64_t rounds = 0;
    w.start();
    for (;;) {
        bool last = !w.running();
        if (last)
            p.done.store(true, std::memory_order_relaxed); // ordered by the set of x
        uint64_t t0 = bench::ticks();
        C::set(p.x.e);
        if (last)
            break;
        C::wait(p.y.e);
        hist.record(bench::ticks_since(t0));
        ++rounds;
    }
    return bench::ThreadResult{rounds, 0};
}

template <class C> bench::ThreadResult pingpong_b(bench::Window &w, PingPong<C> &p)
{
    w.start();
    for (;;) {
        C::wait(p.x.e);
        if (p.done.load(std::memory_order_relaxed)) // ordered by the wait on x
            break;
        C::set(p.y.e);
    }
    return bench::ThreadResult{};
}

template <class C> void pingpong(benchmark::State &state)
{
    auto p = std::make_unique<PingPong<C>>();
    C::init(p->x.e);
    C::init(p->y.e);
    bench::Histogram hist;
    bench::WindowResult r;
    for (auto _ : state) {
        p->done.store(false, std::memory_order_relaxed);
        r = bench::run_window(2, [&p, &hist](bench::Window &w, int index) {
            return index == 0 ? pingpong_a<C>(w, *p, hist) : pingpong_b<C>(w, *p);
        });
        bench::set_time_per_op(state, r);
    }
    C::destroy(p->x.e);
    C::destroy(p->y.e);
    bench::report_handoff(state, r, hist);
}

// ---- registration -------------------------------------------------------

template <class... Cs> void register_all(List<Cs...>)
{
    (bench::add_single(bench::row_name("event", "uncontended", Cs::name), uncontended<Cs>), ...);
    (bench::add_windowed(bench::row_name("event", "pingpong", Cs::name), pingpong<Cs>), ...);
}

} // namespace

void bench::register_event()
{
    register_all(Contenders{});
}
