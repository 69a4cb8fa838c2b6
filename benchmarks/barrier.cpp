// benchmarks/barrier.cpp: the barrier family.
//
// Contenders (policy structs): park (park_barrier_t, no completion
// function), pthread (pthread_barrier_t) and std (std::barrier<>,
// baselines/std_barrier.cpp). Each provides, over its barrier_type:
//   init(b, count) destroy(b) arrive_and_wait(b)
// The Rust peers (benchmarks/peers/rust) add rust_std
// (std::sync::Barrier) and rust_tokio (tokio::sync::Barrier) under the
// same names.
//
// Scenario (one loop body, run by every contender):
//   rounds        T threads (T = 2, 4, 8) call arrive_and_wait in a loop,
//                 one phase per round; windowed. Thread 0 decides before
//                 each arrival whether this round is the last and leaves
//                 its decision where every thread reads it once the
//                 round's phase has ended (the barrier orders it), so all
//                 threads leave after the same round. real_time = time per
//                 round; p50/p99/p99.9 of the time between thread 0's
//                 successive returns.
//   tasks         the same rounds by T tasks (T = 2, 4, 8) on a pool of T
//                 workers, no thread blocking: park arrives with
//                 park_barrier_arrive_and_wait_async, and the task's
//                 continuation (park_task_then) arrives at the next round.
//                 Loop 0 decides the last round as thread 0 does above.
//                 park only; the Rust peers add rust_tokio
//                 (tokio::sync::Barrier, `wait().await` in T tasks on a
//                 runtime of T workers).
#include "harness.h"

#include "baselines/std_barrier.h"

#include <park/barrier.h>
#include <park/pool.h>
#include <park/task.h>

#include <pthread.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <vector>

namespace
{

// ---- contenders ---------------------------------------------------------

struct Park {
    static constexpr const char *name = "park";
    using barrier_type = park_barrier_t;
    static void init(barrier_type &b, uint32_t count)
    {
        (void)park_barrier_init(&b, count, nullptr, nullptr);
    }
    static void destroy(barrier_type &b)
    {
        (void)park_barrier_destroy(&b);
    }
    static void arrive_and_wait(barrier_type &b)
    {
        (void)park_barrier_arrive_and_wait(&b);
    }
};

struct Pthread {
    static constexpr const char *name = "pthread";
    using barrier_type = pthread_barrier_t;
    static void init(barrier_type &b, uint32_t count)
    {
        pthread_barrier_init(&b, nullptr, count);
    }
    static void destroy(barrier_type &b)
    {
        pthread_barrier_destroy(&b);
    }
    static void arrive_and_wait(barrier_type &b)
    {
        (void)pthread_barrier_wait(&b);
    }
};

struct Std {
    static constexpr const char *name = "std";
    using barrier_type = baseline::StdBarrier;
    static void init(barrier_type &b, uint32_t count)
    {
        baseline::std_barrier_init(&b, count);
    }
    static void destroy(barrier_type &b)
    {
        baseline::std_barrier_destroy(&b);
    }
    static void arrive_and_wait(barrier_type &b)
    {
        baseline::std_barrier_arrive_and_wait(&b);
    }
};

template <class... Cs> struct List {
};

// The contender table: every scenario below runs for each entry, in order.
using Contenders = List<Park, Pthread, Std>;

constexpr int kThreads[] = {2, 4, 8};

// ---- rounds -------------------------------------------------------------

// The barrier on its own cache line, and thread 0's decisions: round k's
// in last[k % 2]. Thread 0 writes round k + 2's only after round k + 1's
// phase has ended, which every thread reaches only after reading round
// k's, so one slot per parity is enough.
template <class C> struct Rounds {
    alignas(64) typename C::barrier_type b;
    alignas(64) std::atomic<bool> last[2];
};

template <class C>
bench::ThreadResult rounds_thread(bench::Window &w, Rounds<C> &g, int index, bench::Histogram &hist)
{
    uint64_t rounds = 0, prev = 0;
    w.start();
    for (uint64_t k = 0;; ++k) {
        // relaxed: the barrier orders this store before the loads below
        // (every arrival happens before every return from the phase).
        if (index == 0)
            g.last[k & 1].store(!w.running(), std::memory_order_relaxed);
        C::arrive_and_wait(g.b);
        if (g.last[k & 1].load(std::memory_order_relaxed))
            break;
        if (index == 0) {
            uint64_t now = bench::ticks();
            if (k > 0)
                hist.record(now > prev ? now - prev : 0);
            prev = now;
            ++rounds;
        }
    }
    return bench::ThreadResult{rounds, 0};
}

template <class C> void rounds(benchmark::State &state, int threads)
{
    auto g = std::make_unique<Rounds<C>>();
    C::init(g->b, static_cast<uint32_t>(threads));
    bench::Histogram hist;
    bench::WindowResult r;
    for (auto _ : state) {
        r = bench::run_window(threads, [&g, &hist](bench::Window &w, int index) {
            return rounds_thread<C>(w, *g, index, hist);
        });
        bench::set_time_per_op(state, r);
    }
    C::destroy(g->b);
    bench::report_handoff(state, r, hist);
}

// ---- tasks --------------------------------------------------------------

// What the loops of one window share; round k's decision in last[k % 2],
// as in Rounds.
struct TaskRounds {
    alignas(64) park_barrier_t b;
    alignas(64) std::atomic<bool> last[2];
    std::atomic<bool> stop{false};
    std::atomic<bool> failed{false};
    park_pool_t *pool = nullptr;
    bench::Histogram *hist = nullptr;
    bench::Latch done; // one count-down per loop, when it leaves
};

struct alignas(64) TaskLoop {
    TaskRounds *g = nullptr;
    int index = 0;
    uint64_t k = 0;      // the round it arrives at next
    uint64_t rounds = 0; // loop 0's completed rounds
    uint64_t prev = 0;   // loop 0: the clock at its last return
};

void task_arrive(TaskLoop &l);

// A round's phase has ended for loop l: leave after the last round, or
// arrive at the next.
void task_returned(park_task_t *done, void *arg)
{
    TaskLoop &l = *static_cast<TaskLoop *>(arg);
    TaskRounds &g = *l.g;
    if (park_task_result(done, nullptr) != 0)
        g.failed.store(true, std::memory_order_relaxed);
    // relaxed: the barrier orders loop 0's store before this load.
    if (g.last[l.k & 1].load(std::memory_order_relaxed)) {
        g.done.count_down();
        return;
    }
    if (l.index == 0) {
        uint64_t now = bench::ticks();
        if (l.k > 0)
            g.hist->record(now > l.prev ? now - l.prev : 0);
        l.prev = now;
        ++l.rounds;
    }
    ++l.k;
    task_arrive(l);
}

void task_arrive(TaskLoop &l)
{
    TaskRounds &g = *l.g;
    if (l.index == 0) // relaxed: as in rounds_thread
        g.last[l.k & 1].store(g.stop.load(std::memory_order_relaxed), std::memory_order_relaxed);
    park_task_t *t = park_barrier_arrive_and_wait_async(&g.b, g.pool);
    if (t == nullptr || park_task_then(t, g.pool, task_returned, &l) != 0) {
        // Cannot happen with a live pool and memory; the row then reports
        // an error rather than a time (the barrier is left mid-phase).
        g.failed.store(true, std::memory_order_relaxed);
        std::abort();
    }
    park_task_release(t); // the continuation holds its own reference
}

void tasks(benchmark::State &state, int loops)
{
    auto g = std::make_unique<TaskRounds>();
    std::vector<std::unique_ptr<TaskLoop>> ls;
    for (int i = 0; i < loops; ++i) {
        ls.push_back(std::make_unique<TaskLoop>());
        ls.back()->g = g.get();
        ls.back()->index = i;
    }
    bench::Histogram hist;
    g->hist = &hist;
    bench::WindowResult r;
    park_pool_config_t cfg = {static_cast<unsigned>(loops)};
    park_pool_t *pool = nullptr;
    if (park_pool_create(&pool, &cfg) != 0) {
        state.SkipWithError("the pool could not be created");
        return;
    }
    g->pool = pool;
    for (auto _ : state) {
        // A fresh barrier each window: the last window's phase ended with
        // every loop leaving, so nobody waits on the old one.
        (void)park_barrier_init(&g->b, static_cast<uint32_t>(loops), nullptr, nullptr);
        g->stop.store(false, std::memory_order_relaxed);
        g->done.reset(static_cast<size_t>(loops));
        for (auto &l : ls)
            l->k = l->rounds = 0;
        r = bench::run_task_window(
            loops,
            [&ls] {
                for (auto &l : ls)
                    task_arrive(*l);
            },
            [&g] {
                g->stop.store(true, std::memory_order_relaxed);
                g->done.wait(); // acquire: every loop's counts are visible
            });
        r.threads[0].ops = ls[0]->rounds;
        bench::set_time_per_op(state, r);
        (void)park_barrier_destroy(&g->b);
    }
    park_pool_destroy(pool);
    if (g->failed.load(std::memory_order_relaxed))
        state.SkipWithError("an asynchronous arrival failed");
    bench::report_handoff(state, r, hist);
}

// ---- registration -------------------------------------------------------

template <class... Cs> void register_all(List<Cs...>)
{
    for (int t : kThreads)
        (bench::add_windowed(bench::row_name("barrier", "rounds", Cs::name, t),
                             [t](benchmark::State &s) { rounds<Cs>(s, t); }),
         ...);
}

} // namespace

void bench::register_barrier()
{
    register_all(Contenders{});
    for (int t : kThreads)
        bench::add_windowed(bench::row_name("barrier", "tasks", "park", t),
                            [t](benchmark::State &s) { tasks(s, t); });
}
