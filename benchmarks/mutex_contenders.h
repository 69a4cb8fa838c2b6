// benchmarks/mutex_contenders.h: the mutex family's contenders.
//
// Policy structs (mutex.cpp says what each provides): park, pthread,
// pthread_adaptive, std, absl, ck_fas, ck_ticket, ck_mcs and spin_cas. The
// mutex and tail families run them.
#ifndef PARK_BENCH_MUTEX_CONTENDERS_H
#define PARK_BENCH_MUTEX_CONTENDERS_H

#include "harness.h"

#include "baselines/ck_spinlocks.h"
#include "baselines/spin_cas.h"

#include <park/mutex.h>

#include <absl/synchronization/mutex.h>
#include <pthread.h>

#include <mutex>

namespace bench::mutexes
{

struct Park {
    static constexpr const char *name = "park";
    using lock_type = park_mutex_t;
    using node_type = bench::NoNode;
    static void init(lock_type &m)
    {
        park_mutex_init(&m);
    }
    static void destroy(lock_type &m)
    {
        (void)park_mutex_destroy(&m);
    }
    static void lock(lock_type &m, node_type &)
    {
        park_mutex_lock(&m);
    }
    static bool try_lock(lock_type &m, node_type &)
    {
        return park_mutex_try_lock(&m);
    }
    static void unlock(lock_type &m, node_type &)
    {
        park_mutex_unlock(&m);
    }
};

template <int Type> struct PthreadOfType {
    using lock_type = pthread_mutex_t;
    using node_type = bench::NoNode;
    static void init(lock_type &m)
    {
        pthread_mutexattr_t a;
        pthread_mutexattr_init(&a);
        pthread_mutexattr_settype(&a, Type);
        pthread_mutex_init(&m, &a);
        pthread_mutexattr_destroy(&a);
    }
    static void destroy(lock_type &m)
    {
        pthread_mutex_destroy(&m);
    }
    static void lock(lock_type &m, node_type &)
    {
        pthread_mutex_lock(&m);
    }
    static bool try_lock(lock_type &m, node_type &)
    {
        return pthread_mutex_trylock(&m) == 0;
    }
    static void unlock(lock_type &m, node_type &)
    {
        pthread_mutex_unlock(&m);
    }
};

struct Pthread : PthreadOfType<PTHREAD_MUTEX_DEFAULT> {
    static constexpr const char *name = "pthread";
};

struct PthreadAdaptive : PthreadOfType<PTHREAD_MUTEX_ADAPTIVE_NP> {
    static constexpr const char *name = "pthread_adaptive";
};

struct Std {
    static constexpr const char *name = "std";
    using lock_type = std::mutex;
    using node_type = bench::NoNode;
    static void init(lock_type &)
    {
    }
    static void destroy(lock_type &)
    {
    }
    static void lock(lock_type &m, node_type &)
    {
        m.lock();
    }
    static bool try_lock(lock_type &m, node_type &)
    {
        return m.try_lock();
    }
    static void unlock(lock_type &m, node_type &)
    {
        m.unlock();
    }
};

struct Absl {
    static constexpr const char *name = "absl";
    using lock_type = absl::Mutex;
    using node_type = bench::NoNode;
    static void init(lock_type &)
    {
    }
    static void destroy(lock_type &)
    {
    }
    static void lock(lock_type &m, node_type &)
    {
        m.Lock();
    }
    static bool try_lock(lock_type &m, node_type &)
    {
        return m.TryLock();
    }
    static void unlock(lock_type &m, node_type &)
    {
        m.Unlock();
    }
};

// ck_fas and ck_ticket share one shape; only the four C functions differ.
template <void (*Init)(bl_ck_lock_t *), void (*Lock)(bl_ck_lock_t *),
          bool (*TryLock)(bl_ck_lock_t *), void (*Unlock)(bl_ck_lock_t *)>
struct CkSimple {
    using lock_type = bl_ck_lock_t;
    using node_type = bench::NoNode;
    static void init(lock_type &m)
    {
        Init(&m);
    }
    static void destroy(lock_type &)
    {
    }
    static void lock(lock_type &m, node_type &)
    {
        Lock(&m);
    }
    static bool try_lock(lock_type &m, node_type &)
    {
        return TryLock(&m);
    }
    static void unlock(lock_type &m, node_type &)
    {
        Unlock(&m);
    }
};

struct CkFas : CkSimple<bl_ck_fas_init, bl_ck_fas_lock, bl_ck_fas_trylock, bl_ck_fas_unlock> {
    static constexpr const char *name = "ck_fas";
};

struct CkTicket
    : CkSimple<bl_ck_ticket_init, bl_ck_ticket_lock, bl_ck_ticket_trylock, bl_ck_ticket_unlock> {
    static constexpr const char *name = "ck_ticket";
};

struct CkMcs {
    static constexpr const char *name = "ck_mcs";
    using lock_type = bl_ck_lock_t;
    using node_type = bl_ck_node_t;
    static void init(lock_type &m)
    {
        bl_ck_mcs_init(&m);
    }
    static void destroy(lock_type &)
    {
    }
    static void lock(lock_type &m, node_type &n)
    {
        bl_ck_mcs_lock(&m, &n);
    }
    static bool try_lock(lock_type &m, node_type &n)
    {
        return bl_ck_mcs_trylock(&m, &n);
    }
    static void unlock(lock_type &m, node_type &n)
    {
        bl_ck_mcs_unlock(&m, &n);
    }
};

struct SpinCas {
    static constexpr const char *name = "spin_cas";
    using lock_type = bl_spin_cas_t;
    using node_type = bench::NoNode;
    static void init(lock_type &m)
    {
        m.word = 0;
    }
    static void destroy(lock_type &)
    {
    }
    static void lock(lock_type &m, node_type &)
    {
        bl_spin_cas_lock(&m);
    }
    static bool try_lock(lock_type &m, node_type &)
    {
        return bl_spin_cas_trylock(&m);
    }
    static void unlock(lock_type &m, node_type &)
    {
        bl_spin_cas_unlock(&m);
    }
};

} // namespace bench::mutexes

#endif // PARK_BENCH_MUTEX_CONTENDERS_H
