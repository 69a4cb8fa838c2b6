// benchmarks/chan.cpp: the bounded channel family.
//
// Contenders (policy structs): park (park_chan_t, blocking send and recv),
// condvar (the textbook bounded queue: a ring under a std::mutex with two
// condition variables, baselines/condvar_queue.h), tbb
// (tbb::concurrent_bounded_queue, blocking push and pop) and ck_ring
// (Concurrency Kit's ring through baselines/ck_rings.c, SPSC operations in
// the spsc rows and MPMC ones in the mpmc rows: the non-blocking floor,
// spinning with a pause while full or empty, yielding the CPU after
// kSpinsBeforeYield pauses so that a preempted peer can run). Each
// provides a chan_type built from (capacity, multi) and
//   send(ch, item)          append item, waiting while full; false on error
//   recv(ch, &item)         take the oldest item, waiting while empty
//   capacity(ch)            the items it holds when full
// A ck_ring holds one less than its power-of-two size: 1, 63 and 1023
// where the others hold 1, 64 and 1024.
//
// Scenarios (one loop body, run by every contender), at capacities 1, 64
// and 1024:
//   spsc_cap<N>             1 producer and 1 consumer thread
//   mpmc_cap<N>/threads:T   T / 2 producers and T / 2 consumers, T = 4, 8
// The producers send numbered items for one window; the last producer to
// stop then sends one end marker per consumer, and each consumer receives
// until it gets one. Windowed: items_per_second = items received per
// second, the drain after the window included; csw_per_op and
// cpu_ns_per_op per item. Every item sent must be received (and, in the
// spsc rows, in order), else the row is an error.
#include "harness.h"

#include "baselines/ck_rings.h"
#include "baselines/condvar_queue.h"

#include <park/chan.h>

#include <oneapi/tbb/concurrent_queue.h>

#include <sched.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace
{

constexpr size_t kCapacities[] = {1, 64, 1024};
// Threads of the mpmc rows, half producers and half consumers.
constexpr int kMpmcThreads[] = {4, 8};
// Pauses a ck_ring send or receive spins before each sched_yield.
constexpr unsigned kSpinsBeforeYield = 256;

inline void cpu_relax()
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#else
    asm volatile("" ::: "memory");
#endif
}

// Spins with a pause, yielding now and then.
inline void backoff(unsigned &spins)
{
    if (++spins < kSpinsBeforeYield) {
        cpu_relax();
    } else {
        spins = 0;
        sched_yield();
    }
}

// ---- contenders ---------------------------------------------------------

struct Park {
    static constexpr const char *name = "park";
    class chan_type
    {
      public:
        chan_type(size_t capacity, bool) : capacity_(capacity)
        {
            if (park_chan_create(&ch_, capacity) != 0)
                ch_ = nullptr;
        }
        ~chan_type()
        {
            if (ch_)
                (void)park_chan_destroy(ch_);
        }
        chan_type(const chan_type &) = delete;
        chan_type &operator=(const chan_type &) = delete;
        bool ok() const
        {
            return ch_ != nullptr;
        }
        park_chan_t *get() const
        {
            return ch_;
        }
        size_t capacity() const
        {
            return capacity_;
        }

      private:
        size_t capacity_;
        park_chan_t *ch_ = nullptr;
    };
    static bool send(chan_type &c, void *item)
    {
        return park_chan_send(c.get(), item) == 0;
    }
    static bool recv(chan_type &c, void **item)
    {
        return park_chan_recv(c.get(), item) == 0;
    }
    static size_t capacity(const chan_type &c)
    {
        return c.capacity();
    }
};

struct Condvar {
    static constexpr const char *name = "condvar";
    class chan_type : public baseline::CondvarQueue
    {
      public:
        chan_type(size_t capacity, bool) : CondvarQueue(capacity)
        {
        }
        bool ok() const
        {
            return true;
        }
    };
    static bool send(chan_type &c, void *item)
    {
        c.push(item);
        return true;
    }
    static bool recv(chan_type &c, void **item)
    {
        *item = c.pop();
        return true;
    }
    static size_t capacity(const chan_type &c)
    {
        return c.capacity();
    }
};

struct Tbb {
    static constexpr const char *name = "tbb";
    class chan_type
    {
      public:
        chan_type(size_t capacity, bool)
        {
            q_.set_capacity(static_cast<std::ptrdiff_t>(capacity));
        }
        bool ok() const
        {
            return true;
        }
        tbb::concurrent_bounded_queue<void *> &get()
        {
            return q_;
        }
        const tbb::concurrent_bounded_queue<void *> &get() const
        {
            return q_;
        }

      private:
        tbb::concurrent_bounded_queue<void *> q_;
    };
    static bool send(chan_type &c, void *item)
    {
        c.get().push(item);
        return true;
    }
    static bool recv(chan_type &c, void **item)
    {
        c.get().pop(*item);
        return true;
    }
    static size_t capacity(const chan_type &c)
    {
        return static_cast<size_t>(c.get().capacity());
    }
};

struct CkRing {
    static constexpr const char *name = "ck_ring";
    class chan_type
    {
      public:
        chan_type(size_t capacity, bool multi) : r_(bl_ck_ring_create(capacity, multi))
        {
        }
        ~chan_type()
        {
            bl_ck_ring_destroy(r_);
        }
        chan_type(const chan_type &) = delete;
        chan_type &operator=(const chan_type &) = delete;
        bool ok() const
        {
            return r_ != nullptr;
        }
        bl_ck_ring_t *get() const
        {
            return r_;
        }

      private:
        bl_ck_ring_t *r_;
    };
    static bool send(chan_type &c, void *item)
    {
        for (unsigned spins = 0; !bl_ck_ring_try_send(c.get(), item);)
            backoff(spins);
        return true;
    }
    static bool recv(chan_type &c, void **item)
    {
        for (unsigned spins = 0; !bl_ck_ring_try_recv(c.get(), item);)
            backoff(spins);
        return true;
    }
    static size_t capacity(const chan_type &c)
    {
        return bl_ck_ring_capacity(c.get());
    }
};

template <class... Cs> struct List {
};

// The contender table: every scenario below runs for each entry, in order.
using Contenders = List<Park, Condvar, Tbb, CkRing>;

// ---- items --------------------------------------------------------------

// Items are odd numbers (n << 1 | 1), the end marker an aligned address,
// so the two never meet.
alignas(8) const char end_marker_object = 0;

inline void *item_of(uint64_t n)
{
    return reinterpret_cast<void *>(static_cast<uintptr_t>(n << 1 | 1));
}

inline void *end_marker()
{
    return const_cast<char *>(&end_marker_object);
}

// What the threads of one window share besides the channel.
struct Tally {
    alignas(64) std::atomic<int> producers_left{0};
    std::atomic<uint64_t> sent{0};
    std::atomic<bool> failed{false};
};

// ---- scenario -----------------------------------------------------------

template <class C>
bench::ThreadResult produce(bench::Window &w, typename C::chan_type &ch, Tally &t, int consumers)
{
    uint64_t n = 0;
    w.start();
    while (w.running()) {
        if (!C::send(ch, item_of(n))) {
            t.failed.store(true, std::memory_order_relaxed);
            break;
        }
        ++n;
    }
    t.sent.fetch_add(n, std::memory_order_relaxed);
    // acq_rel: the last producer's end markers go in after every
    // producer's last send returned.
    if (t.producers_left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        for (int i = 0; i < consumers; ++i)
            if (!C::send(ch, end_marker()))
                t.failed.store(true, std::memory_order_relaxed);
    }
    return bench::ThreadResult{0, 0};
}

template <class C>
bench::ThreadResult consume(bench::Window &w, typename C::chan_type &ch, Tally &t, bool ordered)
{
    uint64_t n = 0;
    uintptr_t last = 0;
    void *item = nullptr;
    w.start();
    for (;;) {
        if (!C::recv(ch, &item)) {
            t.failed.store(true, std::memory_order_relaxed);
            break;
        }
        if (item == end_marker())
            break;
        uintptr_t v = reinterpret_cast<uintptr_t>(item);
        if (ordered && v <= last)
            t.failed.store(true, std::memory_order_relaxed);
        last = v;
        ++n;
    }
    return bench::ThreadResult{n, 0};
}

template <class C>
void throughput(benchmark::State &state, size_t capacity, int producers, int consumers)
{
    typename C::chan_type ch(capacity, producers > 1 || consumers > 1);
    if (!ch.ok()) {
        state.SkipWithError("the channel could not be created");
        return;
    }
    Tally t;
    bench::WindowResult r;
    uint64_t sent = 0, received = 0;
    for (auto _ : state) {
        t.producers_left.store(producers, std::memory_order_relaxed);
        t.sent.store(0, std::memory_order_relaxed);
        r = bench::run_window(producers + consumers, [&](bench::Window &w, int index) {
            return index < producers ? produce<C>(w, ch, t, consumers)
                                     : consume<C>(w, ch, t, producers == 1);
        });
        bench::set_time_per_op(state, r);
        sent += t.sent.load();
        received += r.total_ops();
    }
    if (t.failed.load())
        state.SkipWithError("a send or receive failed, or items came out of order");
    else if (sent != received)
        state.SkipWithError("items sent and received differ");
    bench::report_throughput(state, r);
    state.counters["capacity"] = static_cast<double>(C::capacity(ch));
}

// ---- registration -------------------------------------------------------

template <class... Cs> void register_all(List<Cs...>)
{
    for (size_t cap : kCapacities) {
        std::string spsc = "spsc_cap" + std::to_string(cap);
        (bench::add_windowed(bench::row_name("chan", spsc.c_str(), Cs::name),
                             [cap](benchmark::State &s) { throughput<Cs>(s, cap, 1, 1); }),
         ...);
    }
    for (size_t cap : kCapacities) {
        std::string mpmc = "mpmc_cap" + std::to_string(cap);
        for (int t : kMpmcThreads)
            (bench::add_windowed(
                 bench::row_name("chan", mpmc.c_str(), Cs::name, t),
                 [cap, t](benchmark::State &s) { throughput<Cs>(s, cap, t / 2, t / 2); }),
             ...);
    }
}

} // namespace

void bench::register_chan()
{
    register_all(Contenders{});
}
