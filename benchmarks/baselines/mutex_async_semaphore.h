// benchmarks/baselines/mutex_async_semaphore.h: the textbook asynchronous
// semaphore on park's tasks and pool: a permit count and a FIFO of pending
// tasks under one std::mutex.
//
// acquire_async() makes a task (park_task_new, from park's per-thread
// cache) for every acquisition. With a permit free and nobody queued it
// takes the permit and completes the task at once; otherwise it queues the
// task, and the release() that hands it a permit completes it with
// park_task_complete, outside the mutex, so its continuations (registered
// with park_task_then) run on their pool just as with park's own
// acquisitions. release() gives its permit to the oldest queued task, or
// back to the count. Nothing here puts a thread to sleep, so there is no
// condition variable: a thread that must wait for a permit waits for the
// task (park_task_wait). No cancellation: a queued task stays queued until
// it is granted. C++ only.
#ifndef PARK_BENCH_MUTEX_ASYNC_SEMAPHORE_H
#define PARK_BENCH_MUTEX_ASYNC_SEMAPHORE_H

#include <park/task.h>

#include <cstdint>
#include <deque>
#include <mutex>

namespace baseline
{

class MutexAsyncSemaphore
{
  public:
    MutexAsyncSemaphore() = default;
    MutexAsyncSemaphore(const MutexAsyncSemaphore &) = delete;
    MutexAsyncSemaphore &operator=(const MutexAsyncSemaphore &) = delete;
    ~MutexAsyncSemaphore()
    {
        for (park_task_t *t : waiters_)
            park_task_release(t);
    }

    void init(uint32_t permits)
    {
        count_ = permits;
    }
    // A task that completes (error 0) once it holds a permit; NULL on ENOMEM.
    park_task_t *acquire_async()
    {
        park_task_t *t = park_task_new();
        if (t == nullptr)
            return nullptr;
        {
            std::lock_guard<std::mutex> lk(m_);
            if (count_ == 0 || !waiters_.empty()) {
                waiters_.push_back(park_task_retain(t)); // the queue's reference
                return t;
            }
            --count_;
        }
        (void)park_task_complete(t, 0, nullptr);
        return t;
    }
    void release()
    {
        park_task_t *next;
        {
            std::lock_guard<std::mutex> lk(m_);
            if (waiters_.empty()) {
                ++count_;
                return;
            }
            next = waiters_.front();
            waiters_.pop_front();
        }
        (void)park_task_complete(next, 0, nullptr);
        park_task_release(next);
    }

  private:
    std::mutex m_;
    uint32_t count_ = 0;
    std::deque<park_task_t *> waiters_;
};

} // namespace baseline

#endif // PARK_BENCH_MUTEX_ASYNC_SEMAPHORE_H
