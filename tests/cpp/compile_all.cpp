/* tests/cpp/compile_all.cpp: instantiates every template of park/park.hpp,
 * for builds the test programs do not cover (without exceptions, in C++17
 * and C++20). Compiled, never run. */
#include <park/park.hpp>

#include <chrono>
#include <mutex>
#include <shared_mutex>
#include <string>

template class park::counting_semaphore<4>;
template class park::counting_semaphore<>;
template class park::barrier<>;
template class park::lock_guard<park::mutex>;
template class park::shared_lock_guard<park::shared_mutex>;
template class park::lazy<std::string>;
template class park::lazy<int, int (*)(std::optional<int> &)>;
#if PARK_HAS_COROUTINES
template class park::task<int>;
template class park::task<void>;
#endif

namespace
{
using steady = std::chrono::steady_clock;
using sys = std::chrono::system_clock;

[[maybe_unused]] bool timed_forms(park::mutex &m, park::shared_mutex &rw, park::binary_semaphore &s)
{
    bool r = m.try_lock_for(std::chrono::milliseconds(1)) || m.try_lock_until(steady::now()) ||
             m.try_lock_until(sys::now()) || rw.try_lock_for(std::chrono::duration<double>(0.5)) ||
             rw.try_lock_until(sys::now()) || rw.try_lock_shared_for(std::chrono::seconds(1)) ||
             rw.try_lock_shared_until(steady::now()) || s.try_acquire_for(std::chrono::hours(1)) ||
             s.try_acquire_until(sys::now()) || s.try_acquire(1) ||
             s.try_acquire_for(1, std::chrono::milliseconds(1)) ||
             s.try_acquire_until(1, sys::now());
    s.acquire(1);
    park::condition_variable cv;
    std::unique_lock<park::mutex> lk(m);
    r |= cv.wait_for(lk, std::chrono::microseconds(1)) == std::cv_status::timeout;
    r |= cv.wait_until(lk, sys::now(), [] { return true; });
    r |= cv.wait_until(lk, steady::now()) == std::cv_status::timeout;
    r |= cv.wait_for(lk, std::chrono::nanoseconds(1), [] { return false; });
    cv.wait(lk, [] { return true; });
    return r;
}

[[maybe_unused]] void runtime_forms(park::pool &p)
{
    static park::once_flag flag;
    park::call_once(
        flag, [](int, const char *) {}, 1, "x");
    p.submit([] {});
    p.join([] {}, [] {});
    p.parallel_for(0, 10, 1, [](std::size_t, std::size_t) {});
    park::lazy<int> l{[] { return 1; }};
    (void)l.get();
    park::latch done(1);
    done.count_down();
    done.wait();
    (void)done.try_wait_for(std::chrono::seconds(1));
    (void)done.try_wait_until(sys::now());
    auto completion = []() noexcept {};
    park::barrier<decltype(completion)> phase(1, completion);
    phase.wait(phase.arrive());
    phase.arrive_and_wait();
}

#if PARK_HAS_COROUTINES
[[maybe_unused]] park::task<int> coroutine_forms(park::pool &p, park::mutex &m,
                                                 park::shared_mutex &rw,
                                                 park::counting_semaphore<4> &s)
{
    co_await p.schedule();
    {
        std::unique_lock<park::mutex> a = co_await m.scoped_lock_async(p);
        std::unique_lock<park::shared_mutex> b = co_await rw.scoped_lock_async(p.native_handle());
    }
    std::shared_lock<park::shared_mutex> c = co_await rw.scoped_lock_shared_async(p);
    co_await s.acquire_async(p);
    co_await s.acquire_async(p, 2);
    park::latch l(0);
    co_await l.wait_async(p);
    park::barrier<> b(1);
    co_await b.arrive_and_wait_async(p);
    bool got = co_await s.try_acquire_for_async(p, std::chrono::milliseconds(1));
    got |= co_await s.try_acquire_until_async(p, sys::now());
    got |= co_await s.try_acquire_until_async(p, steady::now());
    got |= co_await s.try_acquire_for_async(p, 2, std::chrono::milliseconds(1));
    got |= co_await s.try_acquire_until_async(p, 2, sys::now());
    auto [x, y] = co_await park::when_all(p, coroutine_forms(p, m, rw, s),
                                          [&]() -> park::task<> { co_return; }());
    (void)y;
    co_return x + got;
}
#endif
} // namespace
