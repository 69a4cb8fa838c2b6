// benchmarks/baselines/condvar_pool.h: the textbook thread pool, one
// std::deque of {function, argument} items under one mutex, with a
// condition variable the idle workers sleep on. submit() locks, appends,
// unlocks and notifies one sleeper; a worker locks, waits while the queue is
// empty, takes the oldest item, unlocks and runs it. There is no fork-join:
// a worker that waited for other items would block a thread of the pool.
// The destructor runs everything queued, then joins the workers. C++ only.
#ifndef PARK_BENCH_CONDVAR_POOL_H
#define PARK_BENCH_CONDVAR_POOL_H

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace baseline
{

class CondvarPool
{
  public:
    explicit CondvarPool(unsigned threads)
    {
        workers_.reserve(threads);
        for (unsigned i = 0; i < threads; ++i)
            workers_.emplace_back([this] { work(); });
    }
    ~CondvarPool()
    {
        {
            std::lock_guard<std::mutex> lk(m_);
            stop_ = true;
        }
        cv_.notify_all();
        for (std::thread &t : workers_)
            t.join();
    }
    CondvarPool(const CondvarPool &) = delete;
    CondvarPool &operator=(const CondvarPool &) = delete;

    void submit(void (*fn)(void *), void *arg)
    {
        {
            std::lock_guard<std::mutex> lk(m_);
            queue_.push_back(Item{fn, arg});
        }
        cv_.notify_one();
    }
    unsigned threads() const
    {
        return static_cast<unsigned>(workers_.size());
    }

  private:
    struct Item {
        void (*fn)(void *);
        void *arg;
    };
    void work()
    {
        std::unique_lock<std::mutex> lk(m_);
        for (;;) {
            cv_.wait(lk, [this] { return stop_ || !queue_.empty(); });
            if (queue_.empty())
                return; // stopping, and nothing left to run
            Item it = queue_.front();
            queue_.pop_front();
            lk.unlock();
            it.fn(it.arg);
            lk.lock();
        }
    }

    std::mutex m_;
    std::condition_variable cv_;
    std::deque<Item> queue_;
    bool stop_ = false;
    std::vector<std::thread> workers_;
};

} // namespace baseline

#endif // PARK_BENCH_CONDVAR_POOL_H
