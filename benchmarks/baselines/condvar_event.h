// benchmarks/baselines/condvar_event.h: the textbook auto-reset event, a
// flag guarded by a pthread mutex with a pthread condition variable to
// sleep on. set() raises the flag and signals one sleeper while holding
// the mutex; wait() sleeps until the flag is up and lowers it (consumes
// the set). Sets do not add up, as with park's auto-reset event.
#ifndef PARK_BENCH_CONDVAR_EVENT_H
#define PARK_BENCH_CONDVAR_EVENT_H

#include <pthread.h>

namespace baseline
{

class CondvarEvent
{
  public:
    CondvarEvent()
    {
        pthread_mutex_init(&m_, nullptr);
        pthread_cond_init(&c_, nullptr);
    }
    ~CondvarEvent()
    {
        pthread_cond_destroy(&c_);
        pthread_mutex_destroy(&m_);
    }
    CondvarEvent(const CondvarEvent &) = delete;
    CondvarEvent &operator=(const CondvarEvent &) = delete;

    void set()
    {
        pthread_mutex_lock(&m_);
        set_ = true;
        pthread_cond_signal(&c_);
        pthread_mutex_unlock(&m_);
    }
    void wait()
    {
        pthread_mutex_lock(&m_);
        while (!set_)
            pthread_cond_wait(&c_, &m_);
        set_ = false;
        pthread_mutex_unlock(&m_);
    }

  private:
    pthread_mutex_t m_;
    pthread_cond_t c_;
    bool set_ = false;
};

} // namespace baseline

#endif // PARK_BENCH_CONDVAR_EVENT_H
