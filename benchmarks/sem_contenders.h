// benchmarks/sem_contenders.h: the semaphore family's contenders.
//
// Policy structs (sem.cpp says what each provides): park, park_fifo, sem_t,
// std and condvar. The sem and tail families run them.
#ifndef PARK_BENCH_SEM_CONTENDERS_H
#define PARK_BENCH_SEM_CONTENDERS_H

#include "baselines/condvar_semaphore.h"
#include "baselines/std_semaphore.h"

#include <park/sem.h>

#include <semaphore.h>

#include <cerrno>
#include <cstdint>

namespace bench::sems
{

struct Park {
    static constexpr const char *name = "park";
    using sem_type = park_sem_t;
    static void init(sem_type &s, uint32_t permits)
    {
        (void)park_sem_init(&s, permits, PARK_SEM_VALUE_MAX);
    }
    static void destroy(sem_type &s)
    {
        (void)park_sem_destroy(&s);
    }
    static void acquire(sem_type &s)
    {
        park_sem_acquire(&s);
    }
    static bool try_acquire(sem_type &s)
    {
        return park_sem_try_acquire(&s);
    }
    static void release(sem_type &s)
    {
        (void)park_sem_release(&s, 1);
    }
};

struct ParkFifo : Park {
    static constexpr const char *name = "park_fifo";
    static void init(sem_type &s, uint32_t permits)
    {
        (void)park_sem_init_fifo(&s, permits, PARK_SEM_VALUE_MAX);
    }
};

struct PosixSem {
    static constexpr const char *name = "sem_t";
    using sem_type = sem_t;
    static void init(sem_type &s, uint32_t permits)
    {
        sem_init(&s, 0, permits);
    }
    static void destroy(sem_type &s)
    {
        sem_destroy(&s);
    }
    static void acquire(sem_type &s)
    {
        while (sem_wait(&s) != 0 && errno == EINTR) {
        }
    }
    static bool try_acquire(sem_type &s)
    {
        return sem_trywait(&s) == 0;
    }
    static void release(sem_type &s)
    {
        sem_post(&s);
    }
};

struct Std {
    static constexpr const char *name = "std";
    using sem_type = baseline::StdSemaphore;
    static void init(sem_type &s, uint32_t permits)
    {
        baseline::std_sem_init(&s, permits);
    }
    static void destroy(sem_type &s)
    {
        baseline::std_sem_destroy(&s);
    }
    static void acquire(sem_type &s)
    {
        baseline::std_sem_acquire(&s);
    }
    static bool try_acquire(sem_type &s)
    {
        return baseline::std_sem_try_acquire(&s);
    }
    static void release(sem_type &s)
    {
        baseline::std_sem_release(&s);
    }
};

struct Condvar {
    static constexpr const char *name = "condvar";
    using sem_type = baseline::CondvarSemaphore;
    static void init(sem_type &s, uint32_t permits)
    {
        s.init(permits);
    }
    static void destroy(sem_type &)
    {
    }
    static void acquire(sem_type &s)
    {
        s.acquire();
    }
    static bool try_acquire(sem_type &s)
    {
        return s.try_acquire();
    }
    static void release(sem_type &s)
    {
        s.release();
    }
};

} // namespace bench::sems

#endif // PARK_BENCH_SEM_CONTENDERS_H
