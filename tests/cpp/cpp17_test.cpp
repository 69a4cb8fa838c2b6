/* tests/cpp/cpp17_test.cpp: park/park.hpp in a C++17 program (no
 * coroutines): the header compiles without them and the standard lock
 * templates of C++17 work on park's types. */
#include <park/park.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "test.h"

using namespace std::chrono_literals;

static_assert(__cplusplus == 201703L, "built as C++17");
static_assert(!PARK_HAS_COROUTINES, "no coroutines in C++17");

static park::mutex global_mutex; /* constant-initialised */
static park::counting_semaphore<4> global_sem{2};

TEST(cpp17_std_locks_work_on_park_mutexes)
{
    park::mutex other;
    long count = 0;
    auto run = [&](bool order) {
        for (int i = 0; i < 5000; i++) {
            if (order) {
                std::scoped_lock both(global_mutex, other);
                count++;
            } else {
                std::scoped_lock both(other, global_mutex);
                count++;
            }
        }
    };
    std::thread a(run, true), b(run, false);
    a.join();
    b.join();
    ASSERT_EQ(count, 10000);
    std::unique_lock<park::mutex> lk(global_mutex, std::defer_lock);
    ASSERT_TRUE(lk.try_lock_for(1ms));
    ASSERT_TRUE(other.try_lock_until(std::chrono::system_clock::now())); /* free: taken */
    other.unlock();
}

TEST(cpp17_shared_lock_and_downgrade)
{
    park::shared_mutex rw;
    {
        std::shared_lock<park::shared_mutex> r(rw);
        ASSERT_FALSE(rw.try_lock());
    }
    std::unique_lock<park::shared_mutex> w(rw);
    rw.unlock_and_lock_shared();
    w.release();
    ASSERT_TRUE(rw.try_lock_shared());
    rw.unlock_shared();
    rw.unlock_shared();
}

TEST(cpp17_semaphore_condition_variable_once_and_lazy)
{
    ASSERT_TRUE(global_sem.try_acquire());
    global_sem.release();
    ASSERT_FALSE(park::binary_semaphore{0}.try_acquire_for(1ms));

    park::mutex m;
    park::condition_variable cv;
    bool ready = false;
    std::thread t([&] {
        std::lock_guard<park::mutex> hold(m);
        ready = true;
        cv.notify_one();
    });
    {
        std::unique_lock<park::mutex> lk(m);
        ASSERT_TRUE(cv.wait_for(lk, 60s, [&] { return ready; }));
    }
    t.join();

    park::once_flag flag;
    int runs = 0;
    park::call_once(flag, [&] { runs++; });
    park::call_once(flag, [&] { runs++; });
    ASSERT_EQ(runs, 1);

    park::lazy value{[] { return 5; }};
    ASSERT_EQ(value.get(), 5);
}

TEST(cpp17_pool_join_and_parallel_for)
{
    park::pool p(2);
    std::atomic<int> sum{0};
    p.join([&] { sum += 1; }, [&] { sum += 2; });
    p.parallel_for(0, 100, 7, [&](std::size_t lo, std::size_t hi) { sum += (int)(hi - lo); });
    ASSERT_EQ(sum.load(), 103);
}

static const test_case_t tests[] = {
    TEST_ENTRY(cpp17_std_locks_work_on_park_mutexes),
    TEST_ENTRY(cpp17_shared_lock_and_downgrade),
    TEST_ENTRY(cpp17_semaphore_condition_variable_once_and_lazy),
    TEST_ENTRY(cpp17_pool_join_and_parallel_for),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
