/* tests/cpp/cpp_stress.cpp: park/park.hpp under load: many threads and
 * coroutines, oracle checks, bounded by iteration counts (PARK_STRESS_SCALE)
 * and by the harness's watchdog, so a hang fails with a message. */
#include <park/park.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

#include "test.h"

using namespace std::chrono_literals;

/* The shape of PyTorch's hang report on libstdc++'s counting_semaphore
 * (a release that skips the wake-up when the count is already positive,
 * racing a try_acquire_for that saw zero, leaves a waiter asleep with a
 * permit free): producers release one permit at a time while consumers
 * take them with try_acquire_for on short timeouts, or try_acquire; the
 * count is kept below 32, so it keeps falling to zero while consumers
 * wait. Every permit released is taken exactly once, nobody takes more
 * than was released, and the run ends (the watchdog fails a hang). */
TEST(semaphore_try_acquire_for_racing_releases_never_hangs_or_loses_a_permit)
{
    park::counting_semaphore<> s{0};
    const long total = (long)test_scaled(1000000);
    const int producers = 2, consumers = 3;
    std::atomic<long> released{0}, taken{0}, timeouts{0};
    std::vector<std::thread> ts;
    for (int p = 0; p < producers; p++)
        ts.emplace_back([&, p] {
            long mine = total / producers + (p < total % producers);
            for (long i = 0; i < mine; i++) {
                /* Keep the count low: at zero consumers wait, and the
                 * next releases must wake them. */
                while (released.load(std::memory_order_relaxed) -
                           taken.load(std::memory_order_relaxed) >=
                       32)
                    std::this_thread::yield();
                released.fetch_add(1, std::memory_order_relaxed);
                s.release();
            }
        });
    for (int c = 0; c < consumers; c++)
        ts.emplace_back([&, c] {
            static constexpr std::chrono::microseconds patience[] = {0us, 50us, 1ms, 10ms};
            uint64_t rng = test_rng_seed((unsigned)c);
            while (taken.load(std::memory_order_relaxed) < total) {
                uint32_t pick = test_rng_below(&rng, 8);
                bool got = pick == 0 ? s.try_acquire() : s.try_acquire_for(patience[pick % 4]);
                if (got) {
                    long n = taken.fetch_add(1, std::memory_order_relaxed) + 1;
                    ASSERT_LE(n, released.load(std::memory_order_relaxed));
                } else {
                    timeouts.fetch_add(1, std::memory_order_relaxed);
                }
            }
        });
    for (auto &t : ts)
        t.join();
    ASSERT_EQ(taken.load(), total);
    ASSERT_EQ(released.load(), total);
    ASSERT_FALSE(s.try_acquire());
    printf("     %ld permits, %ld empty-handed tries\n", total, timeouts.load());
}

/* The same with blocking acquire() and release(n) in batches: a batch
 * release wakes as many waiters as it has permits for. */
TEST(semaphore_batch_releases_wake_enough_blocking_acquirers)
{
    park::counting_semaphore<64> s{0};
    const long rounds = (long)test_scaled(20000);
    const int consumers = 4;
    std::atomic<long> taken{0};
    std::vector<std::thread> ts;
    for (int c = 0; c < consumers; c++)
        ts.emplace_back([&] {
            for (long i = 0; i < rounds; i++) {
                s.acquire();
                taken.fetch_add(1, std::memory_order_relaxed);
            }
        });
    for (long i = 0; i < rounds; i++) {
        for (;;) { /* never beyond max(): wait for room */
            try {
                s.release(consumers);
                break;
            } catch (const std::system_error &) {
                std::this_thread::yield();
            }
        }
    }
    for (auto &t : ts)
        t.join();
    ASSERT_EQ(taken.load(), rounds * consumers);
    ASSERT_FALSE(s.try_acquire());
}

/* std::scoped_lock over random pairs and triples of three mutexes, in
 * every order, from four threads: no deadlock, and each mutex's counter is
 * exact (plain increments, ordered by the locks). */
TEST(scoped_lock_random_orders_of_three_mutexes_never_deadlock)
{
    park::mutex ms[3];
    long counts[3] = {0, 0, 0};
    const long n = (long)test_scaled(50000);
    std::atomic<long> expected[3] = {0, 0, 0};
    std::vector<std::thread> ts;
    for (unsigned id = 0; id < 4; id++)
        ts.emplace_back([&, id] {
            uint64_t rng = test_rng_seed(id);
            for (long i = 0; i < n; i++) {
                unsigned a = test_rng_below(&rng, 3), b = (a + 1 + test_rng_below(&rng, 2)) % 3;
                if (test_rng_below(&rng, 4) == 0) {
                    unsigned c = 3 - a - b;
                    std::scoped_lock all(ms[a], ms[b], ms[c]);
                    counts[a]++, counts[b]++, counts[c]++;
                    for (unsigned k : {a, b, c})
                        expected[k].fetch_add(1, std::memory_order_relaxed);
                } else {
                    std::scoped_lock two(ms[a], ms[b]);
                    counts[a]++, counts[b]++;
                    expected[a].fetch_add(1, std::memory_order_relaxed);
                    expected[b].fetch_add(1, std::memory_order_relaxed);
                }
            }
        });
    for (auto &t : ts)
        t.join();
    for (int k = 0; k < 3; k++)
        ASSERT_EQ(counts[k], expected[k].load());
}

/* Coroutines on a 2-worker pool and blocking threads contend for a mutex,
 * a reader/writer lock and a semaphore; oracles: the counters are exact,
 * no reader sees a writer inside, the semaphore's holders never exceed
 * its permits. */
struct shared_state {
    park::mutex m;
    park::shared_mutex rw;
    park::counting_semaphore<3> sem{3};
    long counter = 0;            /* under m */
    long written = 0;            /* under rw (exclusive) */
    std::atomic<int> writers{0}; /* inside rw exclusively */
    std::atomic<int> permits{0}; /* inside sem */
};

static void enter_sem(shared_state &st)
{
    int inside = st.permits.fetch_add(1) + 1;
    ASSERT_LE(inside, 3);
    st.permits.fetch_sub(1);
}

struct done_ops {
    long locks = 0, writes = 0;
};

static park::task<done_ops> mixed_coroutine(park::pool &p, shared_state &st, int n, unsigned id)
{
    co_await p.schedule();
    uint64_t rng = test_rng_seed(id);
    done_ops done;
    for (int i = 0; i < n; i++) {
        switch (test_rng_below(&rng, 4)) {
        case 0: {
            auto hold = co_await st.m.scoped_lock_async(p);
            for (int k = 0; k < 10; k++)
                st.counter++;
            ASSERT_EQ(st.counter % 10, 0);
            done.locks++;
            break;
        }
        case 1: {
            auto hold = co_await st.rw.scoped_lock_async(p);
            ASSERT_EQ(st.writers.fetch_add(1), 0);
            st.written++;
            st.writers.fetch_sub(1);
            done.writes++;
            break;
        }
        case 2: {
            auto hold = co_await st.rw.scoped_lock_shared_async(p);
            ASSERT_EQ(st.writers.load(), 0);
            break;
        }
        default:
            co_await st.sem.acquire_async(p);
            enter_sem(st);
            st.sem.release();
            break;
        }
    }
    co_return done;
}

TEST(coroutines_and_threads_contend_on_every_primitive)
{
    shared_state st;
    const int n = (int)test_scaled(5000);
    done_ops all;
    {
        park::pool p(2);
        std::vector<park::task<done_ops>> ts;
        for (unsigned id = 0; id < 8; id++)
            ts.push_back(mixed_coroutine(p, st, n, id));
        std::thread blocking([&] {
            for (int i = 0; i < n; i++) {
                {
                    std::lock_guard<park::mutex> hold(st.m);
                    for (int k = 0; k < 10; k++)
                        st.counter++;
                }
                all.locks++;
                {
                    std::unique_lock<park::shared_mutex> hold(st.rw);
                    ASSERT_EQ(st.writers.fetch_add(1), 0);
                    st.written++;
                    st.writers.fetch_sub(1);
                }
                all.writes++;
                if (st.sem.try_acquire_for(1ms)) {
                    enter_sem(st);
                    st.sem.release();
                }
            }
        });
        blocking.join();
        for (auto &t : ts) {
            done_ops d = t.get();
            all.locks += d.locks;
            all.writes += d.writes;
        }
    }
    ASSERT_EQ(st.counter, all.locks * 10);
    ASSERT_EQ(st.written, all.writes);
    ASSERT_TRUE(st.m.try_lock());
    st.m.unlock();
    ASSERT_TRUE(st.rw.try_lock());
    st.rw.unlock();
    for (int k = 0; k < 3; k++)
        ASSERT_TRUE(st.sem.try_acquire());
    ASSERT_FALSE(st.sem.try_acquire());
}

static const test_case_t tests[] = {
    TEST_ENTRY(semaphore_try_acquire_for_racing_releases_never_hangs_or_loses_a_permit),
    TEST_ENTRY(semaphore_batch_releases_wake_enough_blocking_acquirers),
    TEST_ENTRY(scoped_lock_random_orders_of_three_mutexes_never_deadlock),
    TEST_ENTRY(coroutines_and_threads_contend_on_every_primitive),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
