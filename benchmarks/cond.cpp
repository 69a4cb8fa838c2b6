// benchmarks/cond.cpp: the condition variable family.
//
// Contenders (policy structs): park (park_cond_t on park_mutex_t), pthread
// (pthread_cond_t on pthread_mutex_t, default attributes), std
// (std::condition_variable on std::mutex) and absl (absl::CondVar on
// absl::Mutex). Each provides, over its mutex_type and cond_type:
//   init(m) destroy(m) init(c) destroy(c) lock(m) unlock(m) wait(c, m)
//   signal(c) broadcast(c)
// The Rust peers (benchmarks/peers/rust) add rust_parking_lot and rust_std
// (their Condvar on their Mutex) under the same names.
//
// Scenarios (one loop body each, run by every contender):
//   pingpong      two threads pass a turn flag back and forth under one
//                 mutex: each flips the flag, signals and waits in a loop
//                 on the predicate until the flag is its own again; A
//                 times from its flip to its wait returning (a round trip,
//                 two wake-ups). Windowed, round-trip quantiles.
//   broadcast     one thread bumps a generation under the mutex and
//                 broadcasts; W = 8 waiters wait for the new generation
//                 and each acknowledges (a count under the mutex; the last
//                 signals a second condition variable the broadcaster
//                 waits on). Windowed (threads:8 = the 8 waiters, plus the
//                 broadcaster), time per round and round quantiles.
#include "harness.h"

#include <park/cond.h>
#include <park/mutex.h>

#include <absl/synchronization/mutex.h>
#include <pthread.h>

#include <condition_variable>
#include <memory>
#include <mutex>

namespace
{

// ---- contenders ---------------------------------------------------------

struct Park {
    static constexpr const char *name = "park";
    using mutex_type = park_mutex_t;
    using cond_type = park_cond_t;
    static void init(mutex_type &m)
    {
        park_mutex_init(&m);
    }
    static void destroy(mutex_type &m)
    {
        (void)park_mutex_destroy(&m);
    }
    static void init(cond_type &c)
    {
        park_cond_init(&c);
    }
    static void destroy(cond_type &c)
    {
        (void)park_cond_destroy(&c);
    }
    static void lock(mutex_type &m)
    {
        park_mutex_lock(&m);
    }
    static void unlock(mutex_type &m)
    {
        park_mutex_unlock(&m);
    }
    static void wait(cond_type &c, mutex_type &m)
    {
        (void)park_cond_wait(&c, &m);
    }
    static void signal(cond_type &c)
    {
        park_cond_signal(&c);
    }
    static void broadcast(cond_type &c)
    {
        park_cond_broadcast(&c);
    }
};

struct Pthread {
    static constexpr const char *name = "pthread";
    using mutex_type = pthread_mutex_t;
    using cond_type = pthread_cond_t;
    static void init(mutex_type &m)
    {
        pthread_mutex_init(&m, nullptr);
    }
    static void destroy(mutex_type &m)
    {
        pthread_mutex_destroy(&m);
    }
    static void init(cond_type &c)
    {
        pthread_cond_init(&c, nullptr);
    }
    static void destroy(cond_type &c)
    {
        pthread_cond_destroy(&c);
    }
    static void lock(mutex_type &m)
    {
        pthread_mutex_lock(&m);
    }
    static void unlock(mutex_type &m)
    {
        pthread_mutex_unlock(&m);
    }
    static void wait(cond_type &c, mutex_type &m)
    {
        pthread_cond_wait(&c, &m);
    }
    static void signal(cond_type &c)
    {
        pthread_cond_signal(&c);
    }
    static void broadcast(cond_type &c)
    {
        pthread_cond_broadcast(&c);
    }
};

struct Std {
    static constexpr const char *name = "std";
    using mutex_type = std::mutex;
    using cond_type = std::condition_variable;
    static void init(mutex_type &)
    {
    }
    static void destroy(mutex_type &)
    {
    }
    static void init(cond_type &)
    {
    }
    static void destroy(cond_type &)
    {
    }
    static void lock(mutex_type &m)
    {
        m.lock();
    }
    static void unlock(mutex_type &m)
    {
        m.unlock();
    }
    static void wait(cond_type &c, mutex_type &m)
    {
        // The caller holds m: adopt it for the wait and give it back held.
        std::unique_lock<std::mutex> lk(m, std::adopt_lock);
        c.wait(lk);
        lk.release();
    }
    static void signal(cond_type &c)
    {
        c.notify_one();
    }
    static void broadcast(cond_type &c)
    {
        c.notify_all();
    }
};

struct Absl {
    static constexpr const char *name = "absl";
    using mutex_type = absl::Mutex;
    using cond_type = absl::CondVar;
    static void init(mutex_type &)
    {
    }
    static void destroy(mutex_type &)
    {
    }
    static void init(cond_type &)
    {
    }
    static void destroy(cond_type &)
    {
    }
    static void lock(mutex_type &m)
    {
        m.Lock();
    }
    static void unlock(mutex_type &m)
    {
        m.Unlock();
    }
    static void wait(cond_type &c, mutex_type &m)
    {
        c.Wait(&m);
    }
    static void signal(cond_type &c)
    {
        c.Signal();
    }
    static void broadcast(cond_type &c)
    {
        c.SignalAll();
    }
};

template <class... Cs> struct List {
};

// The contender table: every scenario below runs for each entry, in order.
using Contenders = List<Park, Pthread, Std, Absl>;

// ---- ping-pong ----------------------------------------------------------

// One mutex, one condition variable and the turn flag they guard, on their
// own cache line; `done` is written and read under the mutex.
template <class C> struct alignas(64) PingPong {
    typename C::mutex_type m;
    typename C::cond_type c;
    int turn = 0; // 0: A's turn, 1: B's
    bool done = false;
};

// A: flips the turn to B, signals, waits until it is back (the round trip).
template <class C>
bench::ThreadResult pingpong_a(bench::Window &w, PingPong<C> &p, bench::Histogram &hist)
{
    uint64_t rounds = 0;
    w.start();
    C::lock(p.m);
    for (;;) {
        bool last = !w.running();
        uint64_t t0 = bench::ticks();
        p.turn = 1;
        p.done = last;
        C::signal(p.c);
        if (last)
            break;
        while (p.turn != 0)
            C::wait(p.c, p.m);
        hist.record(bench::ticks_since(t0));
        ++rounds;
    }
    C::unlock(p.m);
    return bench::ThreadResult{rounds, 0};
}

// B: waits for its turn and hands it back.
template <class C> bench::ThreadResult pingpong_b(bench::Window &w, PingPong<C> &p)
{
    w.start();
    C::lock(p.m);
    for (;;) {
        while (p.turn != 1)
            C::wait(p.c, p.m);
        if (p.done)
            break;
        p.turn = 0;
        C::signal(p.c);
    }
    C::unlock(p.m);
    return bench::ThreadResult{};
}

template <class C> void pingpong(benchmark::State &state)
{
    auto p = std::make_unique<PingPong<C>>();
    C::init(p->m);
    C::init(p->c);
    bench::Histogram hist;
    bench::WindowResult r;
    for (auto _ : state) {
        p->turn = 0;
        p->done = false;
        r = bench::run_window(2, [&p, &hist](bench::Window &w, int index) {
            return index == 0 ? pingpong_a<C>(w, *p, hist) : pingpong_b<C>(w, *p);
        });
        bench::set_time_per_op(state, r);
    }
    C::destroy(p->c);
    C::destroy(p->m);
    bench::report_handoff(state, r, hist);
}

// ---- broadcast ----------------------------------------------------------

constexpr int kWaiters = 8;

// One mutex, the waiters' condition variable (`go`) and the broadcaster's
// (`acked`), and the state they guard.
template <class C> struct alignas(64) Broadcast {
    typename C::mutex_type m;
    typename C::cond_type go;
    typename C::cond_type acked;
    uint64_t generation = 0;
    int acks = 0;
    bool done = false;
    bool lost = false; // an acknowledgement for a generation already counted
};

template <class C>
bench::ThreadResult broadcaster(bench::Window &w, Broadcast<C> &b, bench::Histogram &hist)
{
    uint64_t rounds = 0;
    w.start();
    C::lock(b.m);
    for (;;) {
        bool last = !w.running();
        uint64_t t0 = bench::ticks();
        ++b.generation;
        b.acks = 0;
        b.done = last;
        C::broadcast(b.go);
        if (last)
            break;
        while (b.acks != kWaiters)
            C::wait(b.acked, b.m);
        hist.record(bench::ticks_since(t0));
        ++rounds;
    }
    C::unlock(b.m);
    return bench::ThreadResult{rounds, 0};
}

template <class C> bench::ThreadResult broadcast_waiter(bench::Window &w, Broadcast<C> &b)
{
    uint64_t seen = 0;
    w.start();
    C::lock(b.m);
    for (;;) {
        while (b.generation == seen)
            C::wait(b.go, b.m);
        // One acknowledgement per generation: a waiter that slept through
        // a whole round would see the generation jump by two.
        if (b.generation != seen + 1)
            b.lost = true;
        seen = b.generation;
        if (b.done)
            break;
        if (++b.acks == kWaiters)
            C::signal(b.acked);
    }
    C::unlock(b.m);
    return bench::ThreadResult{};
}

template <class C> void broadcast(benchmark::State &state)
{
    auto b = std::make_unique<Broadcast<C>>();
    C::init(b->m);
    C::init(b->go);
    C::init(b->acked);
    bench::Histogram hist;
    bench::WindowResult r;
    bool lost = false;
    for (auto _ : state) {
        b->generation = 0;
        b->acks = 0;
        b->done = false;
        r = bench::run_window(1 + kWaiters, [&b, &hist](bench::Window &w, int index) {
            return index == 0 ? broadcaster<C>(w, *b, hist) : broadcast_waiter<C>(w, *b);
        });
        lost = lost || b->lost;
        bench::set_time_per_op(state, r);
    }
    C::destroy(b->acked);
    C::destroy(b->go);
    C::destroy(b->m);
    if (lost)
        state.SkipWithError("a waiter missed a generation");
    bench::report_handoff(state, r, hist);
}

// ---- registration -------------------------------------------------------

template <class... Cs> void register_all(List<Cs...>)
{
    (bench::add_windowed(bench::row_name("cond", "pingpong", Cs::name), pingpong<Cs>), ...);
    (bench::add_windowed(bench::row_name("cond", "broadcast", Cs::name, kWaiters), broadcast<Cs>),
     ...);
}

} // namespace

void bench::register_cond()
{
    register_all(Contenders{});
}
