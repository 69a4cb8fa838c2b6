// benchmarks/baselines/condvar_queue.h: the textbook bounded blocking queue,
// a ring of pointers under one std::mutex with two condition variables:
// push() waits on `not_full_` while the ring is full, pop() on `not_empty_`
// while it is empty, and each notifies one sleeper of the other side after
// unlocking. Not FIFO for its waiters: a woken thread races with newcomers.
// C++ only.
#ifndef PARK_BENCH_CONDVAR_QUEUE_H
#define PARK_BENCH_CONDVAR_QUEUE_H

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <vector>

namespace baseline
{

class CondvarQueue
{
  public:
    explicit CondvarQueue(size_t capacity) : ring_(capacity ? capacity : 1)
    {
    }
    CondvarQueue(const CondvarQueue &) = delete;
    CondvarQueue &operator=(const CondvarQueue &) = delete;

    void push(void *item)
    {
        {
            std::unique_lock<std::mutex> lk(m_);
            not_full_.wait(lk, [this] { return count_ < ring_.size(); });
            size_t tail = head_ + count_;
            ring_[tail < ring_.size() ? tail : tail - ring_.size()] = item;
            ++count_;
        }
        not_empty_.notify_one();
    }
    void *pop()
    {
        void *item;
        {
            std::unique_lock<std::mutex> lk(m_);
            not_empty_.wait(lk, [this] { return count_ > 0; });
            item = ring_[head_];
            head_ = head_ + 1 < ring_.size() ? head_ + 1 : 0;
            --count_;
        }
        not_full_.notify_one();
        return item;
    }
    size_t capacity() const
    {
        return ring_.size();
    }

  private:
    std::mutex m_;
    std::condition_variable not_full_;
    std::condition_variable not_empty_;
    std::vector<void *> ring_;
    size_t head_ = 0;
    size_t count_ = 0;
};

} // namespace baseline

#endif // PARK_BENCH_CONDVAR_QUEUE_H
