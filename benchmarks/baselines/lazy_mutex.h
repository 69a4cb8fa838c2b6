// benchmarks/baselines/lazy_mutex.h: the textbook lazy value, a flag and
// the value guarded by a mutex. Every get locks, runs the initialiser if
// no run has succeeded yet (a failed run leaves the flag clear, so the
// next get runs again), copies the value and unlocks. C++ only.
#ifndef PARK_BENCH_LAZY_MUTEX_H
#define PARK_BENCH_LAZY_MUTEX_H

#include <mutex>

namespace baseline
{

class MutexLazy
{
  public:
    // fn(value) returns 0 (then *value is the value) or an error.
    template <class Fn> int get(Fn &&fn, void **value)
    {
        std::lock_guard<std::mutex> lk(m_);
        if (!done_) {
            int err = fn(&value_);
            if (err != 0)
                return err;
            done_ = true;
        }
        *value = value_;
        return 0;
    }

  private:
    std::mutex m_;
    bool done_ = false;
    void *value_ = nullptr;
};

} // namespace baseline

#endif // PARK_BENCH_LAZY_MUTEX_H
