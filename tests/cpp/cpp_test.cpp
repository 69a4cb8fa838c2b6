/* tests/cpp/cpp_test.cpp: park/park.hpp under C++20, one behaviour per
 * test, with the standard library's lock templates on park's types.
 *
 * "Thread T waits" is observed in park's wait queue (park__wait_count of
 * the primitive's address), so no verdict depends on a sleep; the timing
 * asserted is only that a timed wait never returns before its deadline. */
#include <park/park.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "test.h"

extern "C" size_t park__wait_count(const void *key); /* lib/wait/wait.h */

using namespace std::chrono_literals;
using std::chrono::steady_clock;
using std::chrono::system_clock;

static_assert(PARK_HAS_COROUTINES, "the C++20 test needs coroutines");

/* Waits (bounded by AWAIT) until n waiters are queued on key. */
#define AWAIT_QUEUED(key, n) AWAIT(park__wait_count(key) == (n))

/* The error code of what f throws: std::system_error's, or -1 for another
 * exception, 0 for none. */
template <class F> static int thrown_code(F &&f)
{
    try {
        f();
    } catch (const std::system_error &e) {
        return e.code().value();
    } catch (...) {
        return -1;
    }
    return 0;
}

static int64_t ms_since(steady_clock::time_point t0)
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(steady_clock::now() - t0).count();
}

/* ---- mutex ------------------------------------------------------------------ */

constinit park::mutex global_mutex; /* constant-initialised: no static-init order */

static_assert(sizeof(park::mutex) == sizeof(park_mutex_t));
static_assert(std::is_trivially_destructible_v<park::mutex>);
static_assert(!std::is_copy_constructible_v<park::mutex> &&
              !std::is_move_constructible_v<park::mutex>);
static_assert(!std::is_copy_assignable_v<park::mutex> && !std::is_move_assignable_v<park::mutex>);
static_assert(std::is_same_v<decltype(global_mutex.native_handle()), park_mutex_t *>);

TEST(mutex_constinit_global_locks_with_lock_guard)
{
    {
        std::lock_guard<park::mutex> hold(global_mutex);
        ASSERT_FALSE(park_mutex_try_lock(global_mutex.native_handle()));
    }
    ASSERT_TRUE(global_mutex.try_lock());
    global_mutex.unlock();
}

TEST(mutex_unique_lock_try_to_lock_fails_while_another_thread_holds_it)
{
    park::mutex m;
    std::unique_lock<park::mutex> held(m);
    bool got = true;
    std::thread([&] {
        std::unique_lock<park::mutex> lk(m, std::try_to_lock);
        got = lk.owns_lock();
    }).join();
    ASSERT_FALSE(got);
    held.unlock();
    std::thread([&] {
        std::unique_lock<park::mutex> lk(m, std::try_to_lock);
        got = lk.owns_lock();
    }).join();
    ASSERT_TRUE(got);
}

TEST(mutex_unlock_from_another_thread_is_allowed)
{
    park::mutex m;
    m.lock();
    std::thread([&] { m.unlock(); }).join();
    ASSERT_TRUE(m.try_lock());
    m.unlock();
}

TEST(scoped_lock_two_mutexes_in_opposite_orders_never_deadlocks)
{
    park::mutex a, b;
    long in_a = 0, in_b = 0; /* plain: the locks order them */
    const long n = (long)test_scaled(20000);
    auto run = [&](bool ab) {
        for (long i = 0; i < n; i++) {
            if (ab) {
                std::scoped_lock both(a, b);
                in_a++, in_b++;
            } else {
                std::scoped_lock both(b, a);
                in_a++, in_b++;
            }
        }
    };
    std::thread t1(run, true), t2(run, false);
    t1.join();
    t2.join();
    ASSERT_EQ(in_a, 2 * n);
    ASSERT_EQ(in_b, 2 * n);
}

TEST(std_lock_and_try_lock_take_all_or_none)
{
    park::mutex a, b;
    std::lock(a, b);
    a.unlock();
    b.unlock();
    b.lock();
    int r = 0;
    std::thread([&] { r = std::try_lock(a, b); }).join();
    ASSERT_EQ(r, 1);           /* b (index 1) was busy */
    ASSERT_TRUE(a.try_lock()); /* and a was given back */
    a.unlock();
    b.unlock();
}

TEST(mutex_try_lock_for_times_out_when_held_and_never_early)
{
    park::mutex m;
    std::lock_guard<park::mutex> hold(m);
    bool got = true;
    int64_t waited = 0;
    std::thread([&] {
        auto t0 = steady_clock::now();
        got = m.try_lock_for(30ms);
        waited = ms_since(t0);
    }).join();
    ASSERT_FALSE(got);
    ASSERT_GE(waited, 30);
}

TEST(mutex_try_lock_until_times_out_on_steady_and_system_clocks)
{
    park::mutex m;
    m.lock();
    std::thread([&] {
        auto t0 = steady_clock::now();
        ASSERT_FALSE(m.try_lock_until(steady_clock::now() + 20ms));
        ASSERT_GE(ms_since(t0), 20);
        auto deadline = system_clock::now() + 20ms;
        ASSERT_FALSE(m.try_lock_until(deadline));
        ASSERT_TRUE(system_clock::now() >= deadline);
    }).join();
    m.unlock();
}

TEST(mutex_timed_lock_takes_a_free_mutex_even_past_its_deadline)
{
    park::mutex m;
    ASSERT_TRUE(m.try_lock_for(0ms));
    m.unlock();
    ASSERT_TRUE(m.try_lock_for(-5s));
    m.unlock();
    ASSERT_TRUE(m.try_lock_until(steady_clock::time_point{}));
    m.unlock();
    ASSERT_TRUE(m.try_lock_until(system_clock::now() - 1h));
    m.unlock();
}

TEST(mutex_timed_lock_is_granted_when_unlocked_before_the_deadline)
{
    park::mutex m;
    m.lock();
    bool got = false;
    std::thread t([&] {
        got = m.try_lock_until(system_clock::now() + 60s);
        if (got)
            m.unlock();
    });
    AWAIT_QUEUED(m.native_handle(), 1u);
    m.unlock();
    t.join();
    ASSERT_TRUE(got);
}

TEST(unique_lock_timed_constructors_use_the_timed_locks)
{
    park::mutex m;
    {
        std::unique_lock<park::mutex> lk(m, 10ms);
        ASSERT_TRUE(lk.owns_lock());
        std::thread([&] {
            std::unique_lock<park::mutex> other(m, steady_clock::now() + 10ms);
            ASSERT_FALSE(other.owns_lock());
        }).join();
    }
    ASSERT_TRUE(m.try_lock());
    m.unlock();
}

TEST(mutex_huge_durations_do_not_overflow)
{
    park::mutex m;
    ASSERT_TRUE(m.try_lock_for(std::chrono::hours::max()));
    m.unlock();
    ASSERT_TRUE(m.try_lock_until(steady_clock::time_point::max()));
    m.unlock();
    ASSERT_TRUE(m.try_lock_for(std::chrono::duration<double>(1e300)));
    m.unlock();
    static_assert(park::detail::ceil_ns(std::chrono::hours::max()) == UINT64_MAX);
    static_assert(park::detail::ceil_ns(std::chrono::duration<long long, std::pico>(1500)) == 2);
    static_assert(park::detail::ceil_ns(std::chrono::duration<double, std::micro>(1.0001)) == 1001);
    static_assert(park::detail::ceil_ns(-3ms) == 0);
    static_assert(park::detail::ceil_ns(3ms) == 3000000);
}

/* ---- shared_mutex --------------------------------------------------------------- */

static_assert(std::is_trivially_destructible_v<park::shared_mutex>);
static_assert(!std::is_copy_constructible_v<park::shared_mutex>);

TEST(shared_lock_lets_readers_share_and_keeps_writers_out)
{
    park::shared_mutex rw;
    std::shared_lock<park::shared_mutex> r1(rw);
    bool second_reader = false, writer = true;
    std::thread([&] {
        std::shared_lock<park::shared_mutex> r2(rw, std::try_to_lock);
        second_reader = r2.owns_lock();
        writer = rw.try_lock();
    }).join();
    ASSERT_TRUE(second_reader);
    ASSERT_FALSE(writer);
    r1.unlock();
    std::unique_lock<park::shared_mutex> w(rw);
    std::thread([&] { second_reader = rw.try_lock_shared(); }).join();
    ASSERT_FALSE(second_reader);
}

TEST(shared_mutex_timed_locks_time_out_on_both_clocks)
{
    park::shared_mutex rw;
    rw.lock_shared();
    std::thread([&] {
        auto t0 = steady_clock::now();
        ASSERT_FALSE(rw.try_lock_for(20ms));
        ASSERT_GE(ms_since(t0), 20);
        auto deadline = system_clock::now() + 10ms;
        ASSERT_FALSE(rw.try_lock_until(deadline));
        ASSERT_TRUE(system_clock::now() >= deadline);
        ASSERT_TRUE(rw.try_lock_shared_for(10ms)); /* readers share */
        rw.unlock_shared();
    }).join();
    rw.unlock_shared();
    rw.lock();
    std::thread([&] {
        ASSERT_FALSE(rw.try_lock_shared_for(10ms));
        ASSERT_FALSE(rw.try_lock_shared_until(system_clock::now() + 10ms));
        ASSERT_FALSE(rw.try_lock_shared_until(steady_clock::now() + 10ms));
    }).join();
    rw.unlock();
}

TEST(unlock_and_lock_shared_downgrades_without_letting_a_writer_in)
{
    park::shared_mutex rw;
    rw.lock();
    rw.unlock_and_lock_shared();
    bool reader = false, writer = true;
    std::thread([&] {
        reader = rw.try_lock_shared();
        if (reader)
            rw.unlock_shared();
        writer = rw.try_lock();
    }).join();
    ASSERT_TRUE(reader);
    ASSERT_FALSE(writer);
    rw.unlock_shared();
    ASSERT_TRUE(rw.try_lock());
    rw.unlock();
}

/* ---- semaphores ------------------------------------------------------------------ */

constinit park::counting_semaphore<8> global_sem{3};
constinit park::binary_semaphore global_fifo_sem{0, park::fifo};

static_assert(park::counting_semaphore<8>::max() == 8);
static_assert(park::binary_semaphore::max() == 1);
static_assert(park::counting_semaphore<>::max() == PARK_SEM_VALUE_MAX);
static_assert(std::is_trivially_destructible_v<park::counting_semaphore<8>>);

TEST(semaphore_constinit_global_starts_with_its_permits)
{
    ASSERT_EQ(park_sem_count(global_sem.native_handle()), 3);
    ASSERT_TRUE(global_sem.try_acquire());
    global_sem.release();
    ASSERT_EQ(park_sem_count(global_fifo_sem.native_handle()), 0);
    ASSERT_FALSE(global_fifo_sem.try_acquire());
    global_fifo_sem.release();
    global_fifo_sem.acquire();
}

TEST(semaphore_release_n_then_acquire_each)
{
    park::counting_semaphore<8> s{0};
    s.release(5);
    for (int i = 0; i < 5; i++)
        s.acquire();
    ASSERT_FALSE(s.try_acquire());
    s.release(0); /* allowed, does nothing */
    ASSERT_FALSE(s.try_acquire());
}

TEST(semaphore_release_beyond_max_throws_eoverflow_and_keeps_the_count)
{
    park::binary_semaphore b{1};
    ASSERT_EQ(thrown_code([&] { b.release(); }), EOVERFLOW);
    ASSERT_EQ(thrown_code([&] { b.release(2); }), EOVERFLOW);
    ASSERT_EQ(thrown_code([&] { b.release(-1); }), EINVAL);
    ASSERT_TRUE(b.try_acquire());
    ASSERT_FALSE(b.try_acquire());
}

TEST(semaphore_desired_out_of_range_throws_einval)
{
    std::ptrdiff_t too_many = 9, negative = -1;
    ASSERT_EQ(thrown_code([&] { park::counting_semaphore<8> s{too_many}; }), EINVAL);
    ASSERT_EQ(thrown_code([&] { park::counting_semaphore<8> s{negative}; }), EINVAL);
}

TEST(semaphore_timed_acquire_times_out_on_both_clocks_and_never_early)
{
    park::binary_semaphore s{0};
    auto t0 = steady_clock::now();
    ASSERT_FALSE(s.try_acquire_for(20ms));
    ASSERT_GE(ms_since(t0), 20);
    ASSERT_FALSE(s.try_acquire_until(steady_clock::now() + 5ms));
    auto deadline = system_clock::now() + 10ms;
    ASSERT_FALSE(s.try_acquire_until(deadline));
    ASSERT_TRUE(system_clock::now() >= deadline);
    s.release();
    ASSERT_TRUE(s.try_acquire_until(system_clock::now() - 1s)); /* free: taken */
}

TEST(semaphore_timed_acquire_gets_a_permit_released_meanwhile)
{
    park::binary_semaphore s{0};
    bool got = false;
    std::thread t([&] { got = s.try_acquire_for(60s); });
    AWAIT_QUEUED(s.native_handle(), 1u);
    s.release();
    t.join();
    ASSERT_TRUE(got);
    ASSERT_FALSE(s.try_acquire());
}

TEST(semaphore_acquire_n_takes_all_or_nothing)
{
    park::counting_semaphore<8> s{3};
    ASSERT_FALSE(s.try_acquire(4));
    ASSERT_EQ(park_sem_count(s.native_handle()), 3); /* none taken */
    ASSERT_TRUE(s.try_acquire(3));
    ASSERT_TRUE(s.try_acquire(0));
    ASSERT_FALSE(s.try_acquire(9)); /* beyond max(): never */
    ASSERT_FALSE(s.try_acquire_for(2, 10ms));
    ASSERT_FALSE(s.try_acquire_until(2, std::chrono::system_clock::now() + 5ms));
    ASSERT_EQ(thrown_code([&] { s.acquire(9); }), EINVAL);
    std::thread t([&] { s.acquire(2); });
    AWAIT_QUEUED(s.native_handle(), 1u);
    s.release(); /* one of two: not enough */
    s.release();
    t.join();
    ASSERT_EQ(park_sem_count(s.native_handle()), 0);
}

TEST(semaphore_constructor_builds_what_park_sem_init_builds)
{
    park::counting_semaphore<8> s{3};
    park::counting_semaphore<8> f{3, park::fifo};
    park_sem_t c, cf;
    ASSERT_EQ(park_sem_init(&c, 3, 8), 0);
    ASSERT_EQ(park_sem_init_fifo(&cf, 3, 8), 0);
    ASSERT_EQ(std::memcmp(s.native_handle(), &c, sizeof c), 0);
    ASSERT_EQ(std::memcmp(f.native_handle(), &cf, sizeof cf), 0);
}

/* ---- condition_variable ------------------------------------------------------------- */

static_assert(std::is_trivially_destructible_v<park::condition_variable>);

TEST(condition_variable_wait_with_predicate_returns_once_it_holds)
{
    park::mutex m;
    park::condition_variable cv;
    bool ready = false; /* under m */
    std::thread t([&] {
        std::unique_lock<park::mutex> lk(m);
        cv.wait(lk, [&] { return ready; });
        ASSERT_TRUE(ready);
        ASSERT_TRUE(lk.owns_lock());
    });
    AWAIT_QUEUED(cv.native_handle(), 1u);
    {
        std::lock_guard<park::mutex> hold(m);
        ready = true;
    }
    cv.notify_one();
    t.join();
}

TEST(condition_variable_wait_for_times_out_holding_the_lock)
{
    park::mutex m;
    park::condition_variable cv;
    std::unique_lock<park::mutex> lk(m);
    auto t0 = steady_clock::now();
    ASSERT_TRUE(cv.wait_for(lk, 20ms) == std::cv_status::timeout);
    ASSERT_GE(ms_since(t0), 20);
    ASSERT_TRUE(lk.owns_lock());
    ASSERT_FALSE(m.try_lock());
    ASSERT_FALSE(cv.wait_for(lk, 5ms, [] { return false; }));
    ASSERT_TRUE(cv.wait_for(lk, 5ms, [] { return true; }));
}

TEST(condition_variable_wait_until_times_out_on_both_clocks)
{
    park::mutex m;
    park::condition_variable cv;
    std::unique_lock<park::mutex> lk(m);
    auto steady_deadline = steady_clock::now() + 10ms;
    ASSERT_TRUE(cv.wait_until(lk, steady_deadline) == std::cv_status::timeout);
    ASSERT_TRUE(steady_clock::now() >= steady_deadline);
    auto system_deadline = system_clock::now() + 10ms;
    ASSERT_FALSE(cv.wait_until(lk, system_deadline, [] { return false; }));
    ASSERT_TRUE(system_clock::now() >= system_deadline);
    ASSERT_TRUE(lk.owns_lock());
}

TEST(condition_variable_timed_wait_returns_no_timeout_when_notified)
{
    park::mutex m;
    park::condition_variable cv;
    std::cv_status status = std::cv_status::timeout;
    std::thread t([&] {
        std::unique_lock<park::mutex> lk(m);
        status = cv.wait_for(lk, 60s);
    });
    AWAIT_QUEUED(cv.native_handle(), 1u);
    cv.notify_one();
    t.join();
    ASSERT_TRUE(status == std::cv_status::no_timeout);
}

TEST(condition_variable_notify_all_wakes_every_waiter)
{
    park::mutex m;
    park::condition_variable cv;
    bool go = false;
    int woken = 0; /* under m */
    std::vector<std::thread> ts;
    for (int i = 0; i < 4; i++)
        ts.emplace_back([&] {
            std::unique_lock<park::mutex> lk(m);
            ASSERT_TRUE(cv.wait_until(lk, system_clock::now() + 60s, [&] { return go; }));
            woken++;
        });
    AWAIT_QUEUED(cv.native_handle(), 4u);
    {
        std::lock_guard<park::mutex> hold(m);
        go = true;
    }
    cv.notify_all();
    for (auto &t : ts)
        t.join();
    ASSERT_EQ(woken, 4);
}

TEST(condition_variable_any_works_on_park_mutex)
{
    park::mutex m;
    std::condition_variable_any cv;
    std::vector<int> queue; /* under m */
    const int n = 1000;
    std::thread consumer([&] {
        for (int expect = 0; expect < n; expect++) {
            std::unique_lock<park::mutex> lk(m);
            ASSERT_TRUE(cv.wait_for(lk, 60s, [&] { return !queue.empty(); }));
            ASSERT_EQ(queue.front(), expect);
            queue.erase(queue.begin());
        }
    });
    for (int i = 0; i < n; i++) {
        {
            std::lock_guard<park::mutex> hold(m);
            queue.push_back(i);
        }
        cv.notify_one();
    }
    consumer.join();
    ASSERT_TRUE(queue.empty());
}

/* ---- latch and barrier ------------------------------------------------------------- */

constinit park::latch global_latch{2};
static_assert(park::latch::max() == PARK_LATCH_MAX);
static_assert(std::is_trivially_destructible_v<park::latch>);

TEST(latch_releases_every_waiter_at_zero)
{
    global_latch.count_down();
    ASSERT_FALSE(global_latch.try_wait());
    std::vector<std::thread> ts;
    for (int i = 0; i < 3; i++)
        ts.emplace_back([] { global_latch.wait(); });
    AWAIT_QUEUED(global_latch.native_handle(), 3u);
    global_latch.count_down();
    for (auto &t : ts)
        t.join();
    ASSERT_TRUE(global_latch.try_wait());
}

TEST(latch_count_down_beyond_its_count_throws_einval_and_counts_nothing)
{
    park::latch l(2);
    ASSERT_EQ(thrown_code([&] { l.count_down(3); }), EINVAL);
    ASSERT_EQ(thrown_code([&] { l.count_down(-1); }), EINVAL);
    ASSERT_EQ(park_latch_count(l.native_handle()), 2u);
    l.count_down(0);
    l.arrive_and_wait(2);
    ASSERT_TRUE(l.try_wait());
}

TEST(latch_timed_wait_times_out_on_both_clocks)
{
    park::latch l(1);
    auto t0 = steady_clock::now();
    ASSERT_FALSE(l.try_wait_for(20ms));
    ASSERT_GE(ms_since(t0), 20);
    auto deadline = system_clock::now() + 10ms;
    ASSERT_FALSE(l.try_wait_until(deadline));
    ASSERT_TRUE(system_clock::now() >= deadline);
    l.count_down();
    ASSERT_TRUE(l.try_wait_until(steady_clock::now() - 1s));
    ASSERT_EQ(thrown_code([] { park::latch bad(-1); }), EINVAL);
}

TEST(barrier_runs_its_completion_once_per_phase_before_releasing)
{
    const int threads = 3, phases = 50;
    int completed = 0; /* written by the completion only */
    std::atomic<int> wrong{0};
    auto completion = [&]() noexcept { completed++; };
    park::barrier<decltype(completion)> b(threads, completion);
    std::vector<std::thread> ts;
    for (int i = 0; i < threads; i++)
        ts.emplace_back([&] {
            for (int phase = 0; phase < phases; phase++) {
                b.arrive_and_wait();
                if (completed < phase + 1) /* the completion ran before the release */
                    wrong++;
            }
        });
    for (auto &t : ts)
        t.join();
    ASSERT_EQ(completed, phases);
    ASSERT_EQ(wrong.load(), 0);
}

TEST(barrier_arrive_then_wait_and_arrive_and_drop)
{
    park::barrier<> b(3);
    std::atomic<int> phase_one{0};
    std::thread dropper([&] {
        phase_one++;
        b.arrive_and_drop(); /* phase 1, then gone */
    });
    park::barrier<>::arrival_token token = b.arrive(); /* does not block */
    std::thread other([&] {
        phase_one++;
        b.arrive_and_wait(); /* ends phase 1 */
        b.arrive_and_wait(); /* phase 2 needs only two */
    });
    b.wait(std::move(token));
    ASSERT_EQ(phase_one.load(), 2);
    b.wait(b.arrive(1));
    other.join();
    dropper.join();
    ASSERT_EQ(thrown_code([&] { (void)b.arrive(0); }), EINVAL);
}

TEST(barrier_arrive_with_update_counts_several_arrivals)
{
    park::barrier<> b(3);
    std::thread t([&] { b.arrive_and_wait(); });
    b.wait(b.arrive(2));
    t.join();
}

TEST(latch_and_barrier_constructors_build_what_the_c_init_builds)
{
    park::latch l(5);
    park_latch_t cl;
    ASSERT_EQ(park_latch_init(&cl, 5), 0);
    ASSERT_EQ(std::memcmp(l.native_handle(), &cl, sizeof cl), 0);
    park::barrier<> b(7);
    park_barrier_t cb;
    ASSERT_EQ(park_barrier_init(&cb, 7, nullptr, nullptr), 0);
    ASSERT_EQ(std::memcmp(b.native_handle(), &cb, sizeof cb), 0);
}

/* ---- call_once --------------------------------------------------------------------- */

TEST(call_once_runs_once_among_threads)
{
    park::once_flag flag;
    std::atomic<int> runs{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < 4; i++)
        ts.emplace_back([&] {
            park::call_once(
                flag, [&](int k) { runs += k; }, 1);
        });
    for (auto &t : ts)
        t.join();
    park::call_once(flag, [&] { runs += 100; });
    ASSERT_EQ(runs.load(), 1);
}

TEST(call_once_exception_propagates_and_the_next_call_runs_again)
{
    park::once_flag flag;
    int runs = 0;
    bool threw = false;
    try {
        park::call_once(flag, [&] {
            runs++;
            throw std::runtime_error("first");
        });
    } catch (const std::runtime_error &e) {
        threw = std::string(e.what()) == "first";
    }
    ASSERT_TRUE(threw);
    park::call_once(flag, [&] { runs++; });
    park::call_once(flag, [&] { runs++; });
    ASSERT_EQ(runs, 2);
}

TEST(call_once_waiter_of_a_throwing_call_runs_its_own_function)
{
    park::once_flag flag;
    std::atomic<bool> started{false}, release{false};
    std::atomic<int> winner{0};
    std::thread first([&] {
        ASSERT_EQ(thrown_code([&] {
                      park::call_once(flag, [&] {
                          started = true;
                          while (!release)
                              std::this_thread::yield();
                          throw std::runtime_error("first fails");
                      });
                  }),
                  -1);
    });
    AWAIT(started.load());
    std::thread second([&] { park::call_once(flag, [&] { winner = 2; }); });
    AWAIT_QUEUED(flag.native_handle(), 1u);
    release = true;
    first.join();
    second.join();
    ASSERT_EQ(winner.load(), 2);
}

TEST(call_once_from_inside_its_own_function_throws_edeadlk)
{
    park::once_flag flag;
    int inner = 0;
    park::call_once(flag, [&] { inner = thrown_code([&] { park::call_once(flag, [] {}); }); });
    ASSERT_EQ(inner, EDEADLK);
}

/* ---- lazy --------------------------------------------------------------------------- */

static int make_seven()
{
    return 7;
}
constinit park::lazy<int> global_lazy{&make_seven};

TEST(lazy_constinit_global_builds_its_value_on_first_get)
{
    ASSERT_EQ(global_lazy.get(), 7);
    ASSERT_TRUE(global_lazy.ready());
    ASSERT_EQ(&global_lazy.get(), &global_lazy.get());
}

TEST(lazy_builds_once_among_threads)
{
    std::atomic<int> runs{0};
    park::lazy value{[&] {
        runs++;
        std::this_thread::sleep_for(5ms);
        return std::string("built");
    }};
    ASSERT_FALSE(value.ready());
    std::vector<std::thread> ts;
    std::atomic<int> right{0};
    for (int i = 0; i < 4; i++)
        ts.emplace_back([&] { right += value.get() == "built"; });
    for (auto &t : ts)
        t.join();
    ASSERT_EQ(runs.load(), 1);
    ASSERT_EQ(right.load(), 4);
}

TEST(lazy_factory_exception_propagates_and_the_next_get_retries)
{
    int runs = 0;
    park::lazy value{[&] {
        if (++runs == 1)
            throw std::runtime_error("not yet");
        return 42;
    }};
    ASSERT_EQ(thrown_code([&] { (void)value.get(); }), -1);
    ASSERT_FALSE(value.ready());
    ASSERT_EQ(value.get(), 42);
    ASSERT_EQ(runs, 2);
}

TEST(lazy_waiters_of_a_throwing_run_get_its_exception)
{
    std::atomic<bool> started{false}, release{false};
    std::atomic<int> runs{0};
    park::lazy value{[&]() -> int {
        runs++;
        started = true;
        while (!release)
            std::this_thread::yield();
        throw std::runtime_error("run failed");
    }};
    std::string first_msg, second_msg;
    auto get = [&](std::string &msg) {
        try {
            (void)value.get();
        } catch (const std::runtime_error &e) {
            msg = e.what();
        }
    };
    std::thread first(get, std::ref(first_msg));
    AWAIT(started.load());
    std::thread second(get, std::ref(second_msg));
    AWAIT_QUEUED(value.native_handle(), 1u);
    release = true;
    first.join();
    second.join();
    ASSERT_EQ(runs.load(), 1);
    ASSERT_TRUE(first_msg == "run failed");
    ASSERT_TRUE(second_msg == "run failed");
}

TEST(lazy_error_code_factory_reports_by_code_and_retries)
{
    int runs = 0;
    auto factory = [&](std::optional<std::string> &out) {
        if (++runs == 1)
            return ECONNREFUSED;
        out.emplace("connected");
        return 0;
    };
    park::lazy<std::string, decltype(factory)> conn{factory};
    std::error_code ec;
    ASSERT_TRUE(conn.get(ec) == nullptr);
    ASSERT_EQ(ec.value(), ECONNREFUSED);
    std::string *v = conn.get(ec);
    ASSERT_TRUE(v != nullptr && *v == "connected");
    ASSERT_FALSE((bool)ec);
    ASSERT_EQ(runs, 2);
}

TEST(lazy_error_code_from_get_throws_system_error)
{
    park::lazy<int, int (*)(std::optional<int> &)> never{
        [](std::optional<int> &) { return EHOSTUNREACH; }};
    ASSERT_EQ(thrown_code([&] { (void)never.get(); }), EHOSTUNREACH);
}

TEST(lazy_get_from_inside_its_factory_fails_with_edeadlk)
{
    int inner = 0;
    park::lazy<int, std::function<int()>> *p = nullptr;
    park::lazy<int, std::function<int()>> value{[&] {
        inner = thrown_code([&] { (void)p->get(); });
        return 1;
    }};
    p = &value;
    ASSERT_EQ(value.get(), 1);
    ASSERT_EQ(inner, EDEADLK);
}

/* ---- pool ------------------------------------------------------------------------------ */

TEST(pool_submit_runs_small_and_large_callables)
{
    std::atomic<int> sum{0};
    std::atomic<int> *psum = &sum;
    {
        park::pool p(2);
        ASSERT_EQ(p.threads(), 2u);
        p.submit([psum] { *psum += 1; }); /* fits in the queue entry */
        std::string big(100, 'x');
        p.submit([psum, big] { *psum += (int)big.size(); }); /* boxed */
    } /* the destructor runs everything submitted */
    ASSERT_EQ(sum.load(), 101);
}

TEST(pool_join_runs_both_and_rethrows_the_first_exception)
{
    park::pool p(2);
    int a = 0, b = 0;
    p.join([&] { a = 1; }, [&] { b = 2; });
    ASSERT_EQ(a + b, 3);
    std::string what;
    try {
        p.join([] { throw std::runtime_error("f"); }, [&] { b = 5; });
    } catch (const std::runtime_error &e) {
        what = e.what();
    }
    ASSERT_TRUE(what == "f");
    ASSERT_EQ(b, 5);
}

TEST(pool_parallel_for_covers_the_range_once)
{
    park::pool p(2);
    std::vector<std::atomic<int>> hits(10000);
    p.parallel_for(0, hits.size(), 64, [&](std::size_t lo, std::size_t hi) {
        ASSERT_LE(hi - lo, 64);
        for (std::size_t i = lo; i < hi; i++)
            hits[i]++;
    });
    for (auto &h : hits)
        ASSERT_EQ(h.load(), 1);
    ASSERT_EQ(thrown_code([&] {
                  p.parallel_for(0, 1000, 10, [](std::size_t lo, std::size_t) {
                      if (lo == 500)
                          throw std::system_error(EDOM, std::generic_category());
                  });
              }),
              EDOM);
}

/* ---- coroutines -------------------------------------------------------------------------- */

static park::task<void> count_under_lock(park::pool &p, park::mutex &m, long &counter, int n)
{
    co_await p.schedule();
    for (int i = 0; i < n; i++) {
        auto hold = co_await m.scoped_lock_async(p);
        ASSERT_TRUE(hold.owns_lock());
        for (int k = 0; k < 10; k++)
            counter++;
        ASSERT_EQ(counter % 10, 0);
    }
}

TEST(coroutine_locks_on_two_workers_under_contention_keep_the_count)
{
    park::mutex m;
    long counter = 0; /* plain: the mutex orders it */
    const int n = (int)test_scaled(2000);
    {
        park::pool p(2);
        std::vector<park::task<void>> ts;
        for (int i = 0; i < 6; i++)
            ts.push_back(count_under_lock(p, m, counter, n));
        for (int i = 0; i < n; i++) { /* a blocking locker beside them */
            std::lock_guard<park::mutex> hold(m);
            for (int k = 0; k < 10; k++)
                counter++;
        }
        for (auto &t : ts)
            t.get();
    }
    ASSERT_EQ(counter, 7L * n * 10);
}

struct where {
    std::thread::id thread;
    park_pool_t *pool = nullptr;
};

static park::task<where> lock_and_report(park::pool &p, park::mutex &m)
{
    auto hold = co_await m.scoped_lock_async(p);
    co_return where{std::this_thread::get_id(), park_pool_current()};
}

TEST(coroutine_resumes_on_the_pool_never_on_the_unlocking_thread)
{
    park::pool p(2);
    park::mutex m;
    m.lock();
    park::task<where> t = lock_and_report(p, m); /* suspends: m is held */
    AWAIT_QUEUED(m.native_handle(), 1u);
    ASSERT_FALSE(t.done());
    m.unlock();
    where w = std::move(t).get();
    ASSERT_TRUE(w.thread != std::this_thread::get_id());
    ASSERT_TRUE(w.pool == p.native_handle());
    ASSERT_TRUE(m.try_lock()); /* the unique_lock unlocked it on the worker */
    m.unlock();
}

TEST(coroutine_lock_of_a_free_mutex_does_not_suspend)
{
    park::pool p(1);
    park::mutex m;
    park::task<where> t = lock_and_report(p, m);
    ASSERT_TRUE(t.done());
    ASSERT_TRUE(t.get().thread == std::this_thread::get_id());
}

static park::task<int> read_then_write(park::pool &p, park::shared_mutex &rw, int &value)
{
    int seen;
    {
        std::shared_lock<park::shared_mutex> r = co_await rw.scoped_lock_shared_async(p);
        ASSERT_TRUE(r.owns_lock());
        seen = value;
    }
    std::unique_lock<park::shared_mutex> w = co_await rw.scoped_lock_async(p);
    value = seen + 1;
    co_return seen;
}

TEST(coroutine_shared_and_exclusive_locks_on_shared_mutex)
{
    park::pool p(2);
    park::shared_mutex rw;
    int value = 10;
    rw.lock(); /* both awaits queue behind this writer */
    park::task<int> t = read_then_write(p, rw, value);
    AWAIT_QUEUED(rw.native_handle(), 1u);
    value = 20;
    rw.unlock();
    ASSERT_EQ(t.get(), 20);
    rw.lock_shared();
    ASSERT_EQ(value, 21);
    rw.unlock_shared();
}

static park::task<bool> take_permit(park::pool &p, park::binary_semaphore &s,
                                    std::chrono::milliseconds patience)
{
    co_return co_await s.try_acquire_for_async(p, patience);
}

static park::task<void> take_permit_forever(park::pool &p, park::binary_semaphore &s)
{
    co_await s.acquire_async(p);
}

TEST(coroutine_semaphore_acquire_async_and_timed_forms)
{
    park::pool p(2);
    park::binary_semaphore s{0};
    auto t0 = steady_clock::now();
    ASSERT_FALSE(take_permit(p, s, 20ms).get()); /* nobody releases */
    ASSERT_GE(ms_since(t0), 20);
    park::task<void> forever = take_permit_forever(p, s);
    AWAIT_QUEUED(s.native_handle(), 1u);
    s.release();
    forever.get();
    ASSERT_FALSE(s.try_acquire()); /* the coroutine has the permit */
    s.release();
    ASSERT_TRUE(take_permit(p, s, 0ms).get()); /* free: taken at once */
}

static park::task<int> await_latch(park::pool &p, park::latch &l)
{
    co_await l.wait_async(p);
    co_return 1;
}

static park::task<void> barrier_phase(park::pool &p, park::barrier<> &b)
{
    co_await b.arrive_and_wait_async(p);
}

TEST(coroutine_latch_and_barrier_waits)
{
    park::pool p(2);
    park::latch l(1);
    park::task<int> t = await_latch(p, l);
    AWAIT_QUEUED(l.native_handle(), 1u);
    ASSERT_FALSE(t.done());
    l.count_down();
    ASSERT_EQ(t.get(), 1);
    park::barrier<> b(2);
    park::task<void> first = barrier_phase(p, b);
    ASSERT_FALSE(first.done());
    park::task<void> second = barrier_phase(p, b); /* ends the phase */
    ASSERT_TRUE(second.done());
    first.get();
}

static park::task<bool> take_two(park::pool &p, park::counting_semaphore<4> &s)
{
    co_await s.acquire_async(p, 2);
    co_return co_await s.try_acquire_for_async(p, 2, 10ms);
}

TEST(coroutine_semaphore_acquire_n_async)
{
    park::pool p(2);
    park::counting_semaphore<4> s{1};
    park::task<bool> t = take_two(p, s);
    AWAIT_QUEUED(s.native_handle(), 1u);
    s.release();
    ASSERT_FALSE(t.get()); /* the second pair never came */
    ASSERT_FALSE(s.try_acquire());
}

static park::task<int> answer(park::pool &p)
{
    co_await p.schedule();
    co_return 42;
}

static park::task<int> fail_after_schedule(park::pool &p)
{
    co_await p.schedule();
    throw std::runtime_error("task failed");
}

static park::task<> nothing(park::pool &p)
{
    co_await p.schedule();
}

static park::task<int> sum_of_answers(park::pool &p)
{
    int a = co_await answer(p);
    auto [x, y, z] = co_await park::when_all(p, answer(p), answer(p), nothing(p));
    static_assert(std::is_same_v<decltype(z), std::monostate>);
    co_return a + x + y;
}

TEST(task_await_gives_the_value_and_when_all_gives_a_tuple)
{
    park::pool p(2);
    ASSERT_EQ(sum_of_answers(p).get(), 126);
}

static park::task<std::string> catch_failure(park::pool &p)
{
    try {
        (void)co_await fail_after_schedule(p);
    } catch (const std::runtime_error &e) {
        co_return e.what();
    }
    co_return "no exception";
}

TEST(task_exception_is_rethrown_to_its_awaiter_and_by_get)
{
    park::pool p(2);
    ASSERT_TRUE(catch_failure(p).get() == "task failed");
    park::task<int> t = fail_after_schedule(p);
    t.wait();
    ASSERT_EQ(park_task_result(t.native_handle(), nullptr), park::exception_code);
    ASSERT_EQ(thrown_code([&] { (void)t.get(); }), -1);
}

static park::task<void> hold_until_locked(park::pool &p, park::mutex &m)
{
    auto hold = co_await m.scoped_lock_async(p);
}

static park::task<int> await_and_classify(park::task<void> &t)
{
    try {
        co_await t;
    } catch (const std::system_error &e) {
        co_return e.code() == std::errc::operation_canceled ? 1 : 2;
    }
    co_return 0;
}

TEST(task_cancel_ends_its_awaits_with_operation_canceled)
{
    park::mutex m;
    {
        park::pool p(2);
        m.lock();
        park::task<void> blocked = hold_until_locked(p, m);
        park::task<int> watcher = await_and_classify(blocked);
        ASSERT_TRUE(blocked.cancel());
        ASSERT_FALSE(blocked.cancel());
        ASSERT_EQ(watcher.get(), 1);
        ASSERT_EQ(thrown_code([&] { blocked.get(); }), ECANCELED);
        m.unlock(); /* the coroutine itself runs on, takes and drops m */
    }
    ASSERT_TRUE(m.try_lock());
    m.unlock();
}

static park::task<void> add_under_lock(park::pool &p, park::mutex &m, int &sum, int k)
{
    auto hold = co_await m.scoped_lock_async(p);
    sum += k;
}

TEST(when_all_of_a_vector_waits_for_every_task)
{
    park::pool p(2);
    park::mutex m;
    int sum = 0;
    m.lock();
    std::vector<park::task<void>> ts;
    for (int k = 1; k <= 10; k++)
        ts.push_back(add_under_lock(p, m, sum, k));
    auto all = [](park::pool &p, std::vector<park::task<void>> ts) -> park::task<void> {
        co_await park::when_all(p, std::move(ts));
    }(p, std::move(ts));
    ASSERT_FALSE(all.done());
    m.unlock();
    all.get();
    std::lock_guard<park::mutex> hold(m);
    ASSERT_EQ(sum, 55);
}

static park::task<std::vector<int>> squares(park::pool &p)
{
    std::vector<park::task<int>> ts;
    for (int i = 0; i < 5; i++)
        ts.push_back([](park::pool &p, int i) -> park::task<int> {
            co_await p.schedule();
            co_return i *i;
        }(p, i));
    co_return co_await park::when_all(p, std::move(ts));
}

TEST(when_all_of_a_vector_gives_the_values_in_order)
{
    park::pool p(2);
    std::vector<int> v = squares(p).get();
    ASSERT_EQ(v.size(), 5u);
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(v[i], i * i);
}

static park::task<where> hop(park::pool &p)
{
    co_await p.schedule();
    co_return where{std::this_thread::get_id(), park_pool_current()};
}

TEST(pool_schedule_moves_the_coroutine_to_a_worker)
{
    park::pool p(1);
    where w = hop(p).get();
    ASSERT_TRUE(w.thread != std::this_thread::get_id());
    ASSERT_TRUE(w.pool == p.native_handle());
}

TEST(dropped_task_runs_to_its_end)
{
    park::mutex m;
    int sum = 0;
    {
        park::pool p(1);
        m.lock();
        (void)add_under_lock(p, m, sum, 5); /* dropped while it waits */
        AWAIT_QUEUED(m.native_handle(), 1u);
        m.unlock();
    } /* the pool's destructor runs the continuation */
    std::lock_guard<park::mutex> hold(m);
    ASSERT_EQ(sum, 5);
}

static const test_case_t tests[] = {
    TEST_ENTRY(mutex_constinit_global_locks_with_lock_guard),
    TEST_ENTRY(mutex_unique_lock_try_to_lock_fails_while_another_thread_holds_it),
    TEST_ENTRY(mutex_unlock_from_another_thread_is_allowed),
    TEST_ENTRY(scoped_lock_two_mutexes_in_opposite_orders_never_deadlocks),
    TEST_ENTRY(std_lock_and_try_lock_take_all_or_none),
    TEST_ENTRY(mutex_try_lock_for_times_out_when_held_and_never_early),
    TEST_ENTRY(mutex_try_lock_until_times_out_on_steady_and_system_clocks),
    TEST_ENTRY(mutex_timed_lock_takes_a_free_mutex_even_past_its_deadline),
    TEST_ENTRY(mutex_timed_lock_is_granted_when_unlocked_before_the_deadline),
    TEST_ENTRY(unique_lock_timed_constructors_use_the_timed_locks),
    TEST_ENTRY(mutex_huge_durations_do_not_overflow),
    TEST_ENTRY(shared_lock_lets_readers_share_and_keeps_writers_out),
    TEST_ENTRY(shared_mutex_timed_locks_time_out_on_both_clocks),
    TEST_ENTRY(unlock_and_lock_shared_downgrades_without_letting_a_writer_in),
    TEST_ENTRY(semaphore_constinit_global_starts_with_its_permits),
    TEST_ENTRY(semaphore_release_n_then_acquire_each),
    TEST_ENTRY(semaphore_release_beyond_max_throws_eoverflow_and_keeps_the_count),
    TEST_ENTRY(semaphore_desired_out_of_range_throws_einval),
    TEST_ENTRY(semaphore_timed_acquire_times_out_on_both_clocks_and_never_early),
    TEST_ENTRY(semaphore_timed_acquire_gets_a_permit_released_meanwhile),
    TEST_ENTRY(semaphore_acquire_n_takes_all_or_nothing),
    TEST_ENTRY(semaphore_constructor_builds_what_park_sem_init_builds),
    TEST_ENTRY(condition_variable_wait_with_predicate_returns_once_it_holds),
    TEST_ENTRY(condition_variable_wait_for_times_out_holding_the_lock),
    TEST_ENTRY(condition_variable_wait_until_times_out_on_both_clocks),
    TEST_ENTRY(condition_variable_timed_wait_returns_no_timeout_when_notified),
    TEST_ENTRY(condition_variable_notify_all_wakes_every_waiter),
    TEST_ENTRY(condition_variable_any_works_on_park_mutex),
    TEST_ENTRY(latch_releases_every_waiter_at_zero),
    TEST_ENTRY(latch_count_down_beyond_its_count_throws_einval_and_counts_nothing),
    TEST_ENTRY(latch_timed_wait_times_out_on_both_clocks),
    TEST_ENTRY(barrier_runs_its_completion_once_per_phase_before_releasing),
    TEST_ENTRY(barrier_arrive_then_wait_and_arrive_and_drop),
    TEST_ENTRY(barrier_arrive_with_update_counts_several_arrivals),
    TEST_ENTRY(latch_and_barrier_constructors_build_what_the_c_init_builds),
    TEST_ENTRY(call_once_runs_once_among_threads),
    TEST_ENTRY(call_once_exception_propagates_and_the_next_call_runs_again),
    TEST_ENTRY(call_once_waiter_of_a_throwing_call_runs_its_own_function),
    TEST_ENTRY(call_once_from_inside_its_own_function_throws_edeadlk),
    TEST_ENTRY(lazy_constinit_global_builds_its_value_on_first_get),
    TEST_ENTRY(lazy_builds_once_among_threads),
    TEST_ENTRY(lazy_factory_exception_propagates_and_the_next_get_retries),
    TEST_ENTRY(lazy_waiters_of_a_throwing_run_get_its_exception),
    TEST_ENTRY(lazy_error_code_factory_reports_by_code_and_retries),
    TEST_ENTRY(lazy_error_code_from_get_throws_system_error),
    TEST_ENTRY(lazy_get_from_inside_its_factory_fails_with_edeadlk),
    TEST_ENTRY(pool_submit_runs_small_and_large_callables),
    TEST_ENTRY(pool_join_runs_both_and_rethrows_the_first_exception),
    TEST_ENTRY(pool_parallel_for_covers_the_range_once),
    TEST_ENTRY(coroutine_locks_on_two_workers_under_contention_keep_the_count),
    TEST_ENTRY(coroutine_resumes_on_the_pool_never_on_the_unlocking_thread),
    TEST_ENTRY(coroutine_lock_of_a_free_mutex_does_not_suspend),
    TEST_ENTRY(coroutine_shared_and_exclusive_locks_on_shared_mutex),
    TEST_ENTRY(coroutine_semaphore_acquire_async_and_timed_forms),
    TEST_ENTRY(coroutine_latch_and_barrier_waits),
    TEST_ENTRY(coroutine_semaphore_acquire_n_async),
    TEST_ENTRY(task_await_gives_the_value_and_when_all_gives_a_tuple),
    TEST_ENTRY(task_exception_is_rethrown_to_its_awaiter_and_by_get),
    TEST_ENTRY(task_cancel_ends_its_awaits_with_operation_canceled),
    TEST_ENTRY(when_all_of_a_vector_waits_for_every_task),
    TEST_ENTRY(when_all_of_a_vector_gives_the_values_in_order),
    TEST_ENTRY(pool_schedule_moves_the_coroutine_to_a_worker),
    TEST_ENTRY(dropped_task_runs_to_its_end),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
