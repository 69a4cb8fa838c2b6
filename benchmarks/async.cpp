// benchmarks/async.cpp: the async-acquisition family.
//
// An asynchronous acquisition is a task that completes once the permit (the
// lock, the hold) is its own; whoever holds the task then releases it, from
// any thread. This family measures that round trip against the blocking
// path of the same primitive and against the textbook asynchronous
// semaphore.
//
// Contenders (policy structs), one table per primitive:
//   park           the async acquisition: park_sem_acquire_async,
//                  park_mutex_lock_async, park_rwlock_read_lock_async,
//                  park_rwlock_write_lock_async
//   park_blocking  the blocking acquisition of the same primitive
//                  (park_sem_acquire, ...): the thread waits for the grant
//   mutex_fifo     the textbook async semaphore, a count and a FIFO of
//                  tasks under a std::mutex (baselines/
//                  mutex_async_semaphore.h), with one permit: the sem and
//                  mutex tables
// Each provides, over its lock_type:
//   init(lock) destroy(lock) release(lock)
//   acquire_async(lock, pool) -> task   (async contenders)
//   acquire(lock)                       (blocking contenders)
// and `exclusive` (a semaphore of 1, a mutex, a write hold) or not (a read
// hold). Two adapters turn either kind into what the scenarios do:
//   hold(lock, pool)          acquire and wait for the grant: async
//                             contenders wait for the task
//                             (park_task_wait) and drop it
//   hold_then(lock, pool, p)  acquire, and run the critical section on the
//                             pool holding it: async contenders register it
//                             as the task's continuation (park_task_then);
//                             blocking ones wait for the grant, then submit
//                             it (park_pool_submit)
//
// Scenarios (one loop body each, run by every contender of a table; rows
// are async/<primitive>_<scenario>/<contender>, primitive one of sem,
// mutex, rwlock_read, rwlock_write):
//   uncontended  hold + release by one thread on a primitive nobody else
//                uses (park's async acquisitions return a shared, already
//                completed task then); a 2-worker pool exists for the
//                acquisitions to name and has nothing to do.
//   contended    P producer threads (threads:P) each issue batches of
//                kBatch acquisitions through hold_then on one primitive (a
//                semaphore of 1 permit, a mutex, a rwlock) and then wait
//                until the batch's critical sections have run; each
//                critical section runs on a 2-worker pool, updates a
//                shared cache line (two, checked for mutual exclusion, when
//                exclusive) and releases. Windowed; items_per_second =
//                critical sections per second, the last batches' drain
//                included.
//   loop         (sem, mutex, rwlock_write; async contenders) N loops
//                (threads:N, N = 2, 4, 8) on a 2-worker pool, each:
//                acquire asynchronously, and in the task's continuation
//                (park_task_then) run the critical section, release and
//                acquire again, until the window closes. No producer
//                thread. time/op = ns per round of all loops together;
//                items_per_second = rounds per second.
#include "harness.h"

#include "baselines/mutex_async_semaphore.h"

#include <park/mutex.h>
#include <park/pool.h>
#include <park/rwlock.h>
#include <park/sem.h>
#include <park/task.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace
{

// Workers of every pool of this family, as the Rust peers' tokio runtime.
constexpr unsigned kWorkers = 2;
// Producer counts of the contended scenario.
constexpr int kProducers[] = {1, 2, 4};
// Acquisitions a producer has in flight at once: enough to keep the
// primitive's queue busy with one producer, few enough that the drain at
// the end of a window is short.
constexpr int kBatch = 64;
// Loops (tasks) of the loop scenario.
constexpr int kLoopTasks[] = {2, 4, 8};

// ---- contenders ---------------------------------------------------------

struct ParkSem {
    static constexpr const char *name = "park";
    static constexpr bool async = true;
    static constexpr bool exclusive = true;
    using lock_type = park_sem_t;
    static void init(lock_type &s)
    {
        (void)park_sem_init(&s, 1, 1);
    }
    static void destroy(lock_type &s)
    {
        (void)park_sem_destroy(&s);
    }
    static park_task_t *acquire_async(lock_type &s, park_pool_t *pool)
    {
        return park_sem_acquire_async(&s, pool);
    }
    static void release(lock_type &s)
    {
        (void)park_sem_release(&s, 1);
    }
};

struct ParkSemBlocking : ParkSem {
    static constexpr const char *name = "park_blocking";
    static constexpr bool async = false;
    static void acquire(lock_type &s)
    {
        park_sem_acquire(&s);
    }
};

struct MutexFifo {
    static constexpr const char *name = "mutex_fifo";
    static constexpr bool async = true;
    static constexpr bool exclusive = true;
    using lock_type = baseline::MutexAsyncSemaphore;
    static void init(lock_type &s)
    {
        s.init(1);
    }
    static void destroy(lock_type &)
    {
    }
    static park_task_t *acquire_async(lock_type &s, park_pool_t *)
    {
        return s.acquire_async();
    }
    static void release(lock_type &s)
    {
        s.release();
    }
};

struct ParkMutex {
    static constexpr const char *name = "park";
    static constexpr bool async = true;
    static constexpr bool exclusive = true;
    using lock_type = park_mutex_t;
    static void init(lock_type &m)
    {
        park_mutex_init(&m);
    }
    static void destroy(lock_type &m)
    {
        (void)park_mutex_destroy(&m);
    }
    static park_task_t *acquire_async(lock_type &m, park_pool_t *pool)
    {
        return park_mutex_lock_async(&m, pool);
    }
    static void release(lock_type &m)
    {
        park_mutex_unlock(&m);
    }
};

struct ParkMutexBlocking : ParkMutex {
    static constexpr const char *name = "park_blocking";
    static constexpr bool async = false;
    static void acquire(lock_type &m)
    {
        park_mutex_lock(&m);
    }
};

struct ParkRwlock {
    using lock_type = park_rwlock_t;
    static void init(lock_type &rw)
    {
        park_rwlock_init(&rw);
    }
    static void destroy(lock_type &rw)
    {
        (void)park_rwlock_destroy(&rw);
    }
};

struct ParkRead : ParkRwlock {
    static constexpr const char *name = "park";
    static constexpr bool async = true;
    static constexpr bool exclusive = false;
    static park_task_t *acquire_async(lock_type &rw, park_pool_t *pool)
    {
        return park_rwlock_read_lock_async(&rw, pool);
    }
    static void release(lock_type &rw)
    {
        park_rwlock_read_unlock(&rw);
    }
};

struct ParkReadBlocking : ParkRead {
    static constexpr const char *name = "park_blocking";
    static constexpr bool async = false;
    static void acquire(lock_type &rw)
    {
        park_rwlock_read_lock(&rw);
    }
};

struct ParkWrite : ParkRwlock {
    static constexpr const char *name = "park";
    static constexpr bool async = true;
    static constexpr bool exclusive = true;
    static park_task_t *acquire_async(lock_type &rw, park_pool_t *pool)
    {
        return park_rwlock_write_lock_async(&rw, pool);
    }
    static void release(lock_type &rw)
    {
        park_rwlock_write_unlock(&rw);
    }
};

struct ParkWriteBlocking : ParkWrite {
    static constexpr const char *name = "park_blocking";
    static constexpr bool async = false;
    static void acquire(lock_type &rw)
    {
        park_rwlock_write_lock(&rw);
    }
};

template <class... Cs> struct List {
};

// The contender tables: every scenario runs for each entry, in order. The
// textbook async semaphore stands in for a mutex too (one permit); there is
// no textbook async rwlock to set beside park's.
struct SemTable {
    static constexpr bool loop = true; // has the loop scenario
    static constexpr const char *name = "sem";
    using contenders = List<ParkSem, ParkSemBlocking, MutexFifo>;
};
struct MutexTable {
    static constexpr bool loop = true; // has the loop scenario
    static constexpr const char *name = "mutex";
    using contenders = List<ParkMutex, ParkMutexBlocking, MutexFifo>;
};
struct ReadTable {
    static constexpr bool loop = false; // has the loop scenario
    static constexpr const char *name = "rwlock_read";
    using contenders = List<ParkRead, ParkReadBlocking>;
};
struct WriteTable {
    static constexpr bool loop = true; // has the loop scenario
    static constexpr const char *name = "rwlock_write";
    using contenders = List<ParkWrite, ParkWriteBlocking>;
};

// ---- shared state -------------------------------------------------------

// A park pool of kWorkers workers, or none (ok() false) if it could not be
// started.
class Pool
{
  public:
    Pool()
    {
        park_pool_config_t cfg = {kWorkers};
        if (park_pool_create(&p_, &cfg) != 0)
            p_ = nullptr;
    }
    ~Pool()
    {
        if (p_)
            park_pool_destroy(p_);
    }
    Pool(const Pool &) = delete;
    Pool &operator=(const Pool &) = delete;
    // True if the pool runs; otherwise marks the row skipped.
    bool ok(benchmark::State &state) const
    {
        if (!p_)
            state.SkipWithError("the pool could not be created");
        return p_ != nullptr;
    }
    park_pool_t *get() const
    {
        return p_;
    }

  private:
    park_pool_t *p_ = nullptr;
};

// A primitive on its own cache line.
template <class C> struct alignas(64) Padded {
    typename C::lock_type l;
};

// A counter on its own cache line.
struct alignas(64) Counter {
    std::atomic<uint64_t> n{0};
};

template <class C> struct Shared {
    Padded<C> lock;
    Counter inside; // exclusive holders right now; never above 1
    Counter hits;   // completed critical sections
    std::atomic<bool> excess{false};
    std::atomic<bool> failed{false};
};

template <class C> struct alignas(64) Producer {
    Shared<C> *g = nullptr;
    bench::Latch latch;
};

// ---- adapters -----------------------------------------------------------

// Acquires and waits for the grant; false if the acquisition failed.
template <class C> bool hold(typename C::lock_type &l, park_pool_t *pool)
{
    if constexpr (C::async) {
        park_task_t *t = C::acquire_async(l, pool);
        if (t == nullptr)
            return false;
        int err = park_task_wait(t, nullptr);
        park_task_release(t);
        return err == 0;
    } else {
        (void)pool;
        C::acquire(l);
        return true;
    }
}

// The critical section, run on the pool while the producer's acquisition
// holds the primitive; it releases it.
template <class C> void section(Producer<C> &p)
{
    Shared<C> &g = *p.g;
    // relaxed: the primitive orders these; `inside` only checks its count.
    if constexpr (C::exclusive) {
        if (g.inside.n.fetch_add(1, std::memory_order_relaxed) >= 1)
            g.excess.store(true, std::memory_order_relaxed);
        g.hits.n.fetch_add(1, std::memory_order_relaxed);
        g.inside.n.fetch_sub(1, std::memory_order_relaxed);
    } else {
        g.hits.n.fetch_add(1, std::memory_order_relaxed);
    }
    C::release(g.lock.l);
    p.latch.count_down();
}

template <class C> void granted(park_task_t *done, void *arg)
{
    Producer<C> *p = static_cast<Producer<C> *>(arg);
    if (park_task_result(done, nullptr) != 0) {
        p->g->failed.store(true, std::memory_order_relaxed);
        p->latch.count_down();
        return;
    }
    section<C>(*p);
}

template <class C> void submitted(void *arg)
{
    section<C>(*static_cast<Producer<C> *>(arg));
}

// Acquires and has section() run on the pool holding the primitive; false
// if nothing will run.
template <class C> bool hold_then(typename C::lock_type &l, park_pool_t *pool, Producer<C> &p)
{
    if constexpr (C::async) {
        park_task_t *t = C::acquire_async(l, pool);
        if (t == nullptr)
            return false;
        int err = park_task_then(t, pool, granted<C>, &p);
        park_task_release(t); // the continuation holds its own reference
        return err == 0;
    } else {
        C::acquire(l);
        if (park_pool_submit(pool, submitted<C>, &p) == 0)
            return true;
        C::release(l);
        return false;
    }
}

// ---- scenarios ----------------------------------------------------------

template <class C> void uncontended(benchmark::State &state)
{
    Pool pool;
    if (!pool.ok(state))
        return;
    auto p = std::make_unique<Padded<C>>();
    C::init(p->l);
    bool ok = true;
    for (auto _ : state) {
        ok &= hold<C>(p->l, pool.get());
        C::release(p->l);
        benchmark::ClobberMemory();
    }
    C::destroy(p->l);
    if (!ok)
        state.SkipWithError("an acquisition failed");
}

template <class C> bench::ThreadResult produce(bench::Window &w, Producer<C> &p, park_pool_t *pool)
{
    Shared<C> &g = *p.g;
    uint64_t ops = 0;
    w.start();
    while (w.running() && !g.failed.load(std::memory_order_relaxed)) {
        p.latch.reset(kBatch);
        for (int i = 0; i < kBatch; ++i) {
            if (!hold_then<C>(g.lock.l, pool, p)) {
                g.failed.store(true, std::memory_order_relaxed);
                p.latch.count_down();
            }
        }
        p.latch.wait();
        ops += kBatch;
    }
    return bench::ThreadResult{ops, 0};
}

// n per-thread (or per-loop) records, each pointing at the shared state.
template <class Each, class G> std::vector<std::unique_ptr<Each>> make_each(G *g, int n)
{
    std::vector<std::unique_ptr<Each>> v;
    for (int i = 0; i < n; ++i) {
        v.push_back(std::make_unique<Each>());
        v.back()->g = g;
    }
    return v;
}

// The end of a windowed row: destroys the lock, then reports the
// throughput, or why the run does not count.
template <class C, class G>
void finish(benchmark::State &state, G &g, uint64_t ops, const bench::WindowResult &r)
{
    C::destroy(g.lock.l);
    if (g.failed.load())
        state.SkipWithError("an acquisition failed");
    else if (g.excess.load() || g.hits.n.load() != ops)
        state.SkipWithError("more holders than permits, or lost critical sections");
    bench::report_throughput(state, r);
}

template <class C> void contended(benchmark::State &state, int producers)
{
    // Declared before the pool, so the pool (joining its workers) goes
    // first: a worker may still be leaving a count_down when a batch ends.
    auto g = std::make_unique<Shared<C>>();
    auto ps = make_each<Producer<C>>(g.get(), producers);
    C::init(g->lock.l);
    bench::WindowResult r;
    uint64_t ops = 0;
    {
        Pool pool;
        if (!pool.ok(state))
            return;
        for (auto _ : state) {
            r = bench::run_window(producers, [&](bench::Window &w, int index) {
                return produce<C>(w, *ps[index], pool.get());
            });
            bench::set_time_per_op(state, r);
            ops += r.total_ops();
        }
    }
    finish<C>(state, *g, ops, r);
}

// ---- loop ---------------------------------------------------------------

// What the loops of one window share.
template <class C> struct LoopShared {
    Padded<C> lock;
    Counter inside; // exclusive holders right now; never above 1
    Counter hits;   // completed critical sections
    alignas(64) std::atomic<bool> stop{false};
    std::atomic<bool> excess{false};
    std::atomic<bool> failed{false};
    park_pool_t *pool = nullptr;
    bench::Latch done; // one count-down per loop, when it stops
};

template <class C> struct alignas(64) Loop {
    LoopShared<C> *g = nullptr;
    uint64_t rounds = 0; // written by whichever worker runs the loop now
};

template <class C> void loop_acquire(Loop<C> &l);

// One round's continuation: the critical section, the release, and the
// next acquisition unless the window has closed.
template <class C> void loop_granted(park_task_t *done, void *arg)
{
    Loop<C> &l = *static_cast<Loop<C> *>(arg);
    LoopShared<C> &g = *l.g;
    if (park_task_result(done, nullptr) != 0) {
        g.failed.store(true, std::memory_order_relaxed);
        g.done.count_down();
        return;
    }
    // relaxed: the primitive orders these; `inside` only checks its count.
    if (g.inside.n.fetch_add(1, std::memory_order_relaxed) >= 1)
        g.excess.store(true, std::memory_order_relaxed);
    g.hits.n.fetch_add(1, std::memory_order_relaxed);
    g.inside.n.fetch_sub(1, std::memory_order_relaxed);
    ++l.rounds;
    C::release(g.lock.l);
    if (g.stop.load(std::memory_order_relaxed))
        g.done.count_down();
    else
        loop_acquire<C>(l);
}

template <class C> void loop_acquire(Loop<C> &l)
{
    LoopShared<C> &g = *l.g;
    park_task_t *t = C::acquire_async(g.lock.l, g.pool);
    if (t == nullptr || park_task_then(t, g.pool, loop_granted<C>, &l) != 0) {
        g.failed.store(true, std::memory_order_relaxed);
        g.done.count_down();
    }
    if (t != nullptr)
        park_task_release(t); // the continuation holds its own reference
}

// `tasks` loops on a 2-worker pool, each: acquire asynchronously, and in
// the continuation run the critical section, release and acquire again.
// No producer thread: after the first acquisitions (from this thread),
// every acquisition is made by a continuation on a worker.
template <class C> void looped(benchmark::State &state, int tasks)
{
    // Declared before the pool, so the pool (joining its workers) goes
    // first: a worker may still be leaving a count_down when a window ends.
    auto g = std::make_unique<LoopShared<C>>();
    auto loops = make_each<Loop<C>>(g.get(), tasks);
    C::init(g->lock.l);
    bench::WindowResult r;
    uint64_t ops = 0;
    {
        Pool pool;
        if (!pool.ok(state))
            return;
        g->pool = pool.get();
        for (auto _ : state) {
            g->stop.store(false, std::memory_order_relaxed);
            g->done.reset(static_cast<size_t>(tasks));
            for (auto &l : loops)
                l->rounds = 0;
            r = bench::run_task_window(
                tasks,
                [&loops] {
                    for (auto &l : loops)
                        loop_acquire<C>(*l);
                },
                [&g] {
                    g->stop.store(true, std::memory_order_relaxed);
                    g->done.wait(); // acquire: every loop's rounds are visible
                });
            for (int i = 0; i < tasks; ++i)
                r.threads[static_cast<size_t>(i)].ops = loops[static_cast<size_t>(i)]->rounds;
            bench::set_time_per_op(state, r);
            ops += r.total_ops();
        }
    }
    finish<C>(state, *g, ops, r);
}

// ---- registration -------------------------------------------------------

// The loop rows of the asynchronous, exclusive contenders.
template <class C> void register_loop(const std::string &name, int n)
{
    if constexpr (C::async && C::exclusive)
        bench::add_windowed(name, [n](benchmark::State &s) { looped<C>(s, n); });
}

template <class T, class... Cs> void register_table(List<Cs...>)
{
    std::string unc = std::string(T::name) + "_uncontended";
    std::string con = std::string(T::name) + "_contended";
    (bench::add_single(bench::row_name("async", unc.c_str(), Cs::name), uncontended<Cs>), ...);
    for (int p : kProducers)
        (bench::add_windowed(bench::row_name("async", con.c_str(), Cs::name, p),
                             [p](benchmark::State &s) { contended<Cs>(s, p); }),
         ...);
    if constexpr (T::loop) {
        std::string loop = std::string(T::name) + "_loop";
        for (int n : kLoopTasks)
            (register_loop<Cs>(bench::row_name("async", loop.c_str(), Cs::name, n), n), ...);
    }
}

template <class... Ts> void register_tables()
{
    (register_table<Ts>(typename Ts::contenders{}), ...);
}

} // namespace

void bench::register_async()
{
    register_tables<SemTable, MutexTable, ReadTable, WriteTable>();
}
