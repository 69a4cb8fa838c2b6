// benchmarks/baselines/condvar_semaphore.h: the textbook counting semaphore,
// a count guarded by a mutex with a condition variable to sleep on. Release
// notifies one sleeper while holding the mutex. Not FIFO: a woken thread
// races with newcomers for the permit. The forms for n permits at once
// wait until n are free and take them together; their release notifies
// every sleeper (each wants its own n, so waking one could wake the wrong
// one), and a request for many waits as long as requests for fewer keep
// the count below its n. C++ only.
#ifndef PARK_BENCH_CONDVAR_SEMAPHORE_H
#define PARK_BENCH_CONDVAR_SEMAPHORE_H

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace baseline
{

class CondvarSemaphore
{
  public:
    void init(uint32_t initial)
    {
        count_ = initial;
    }
    void acquire()
    {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [this] { return count_ > 0; });
        --count_;
    }
    bool try_acquire()
    {
        std::lock_guard<std::mutex> lk(m_);
        if (count_ == 0)
            return false;
        --count_;
        return true;
    }
    void release()
    {
        std::lock_guard<std::mutex> lk(m_);
        ++count_;
        cv_.notify_one();
    }
    void acquire(uint32_t n)
    {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [this, n] { return count_ >= n; });
        count_ -= n;
    }
    void release(uint32_t n)
    {
        std::lock_guard<std::mutex> lk(m_);
        count_ += n;
        cv_.notify_all();
    }

  private:
    std::mutex m_;
    std::condition_variable cv_;
    uint32_t count_ = 0;
};

} // namespace baseline

#endif // PARK_BENCH_CONDVAR_SEMAPHORE_H
