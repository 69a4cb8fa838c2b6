// benchmarks/rwlock_contenders.h: the reader/writer lock family's
// contenders.
//
// Policy structs (rwlock.cpp says what each provides): park,
// park_read_mostly, pthread, pthread_wpref, std, absl, ck_rwlock, ck_pflock,
// ck_brlock and futex_rw (the sweep only). The rwlock and tail families run
// them.
#ifndef PARK_BENCH_RWLOCK_CONTENDERS_H
#define PARK_BENCH_RWLOCK_CONTENDERS_H

#include "harness.h"

#include "baselines/ck_rwlocks.h"
#include "baselines/futex_rwlock.h"

#include <park/rwlock.h>

#include <absl/synchronization/mutex.h>
#include <pthread.h>

#include <shared_mutex>

namespace bench::rwlocks
{

// Contenders with nothing to do per thread.
struct NoThreadSetup {
    using node_type = bench::NoNode;
    template <class L> static void enter(L &, node_type &)
    {
    }
    template <class L> static void leave(L &, node_type &)
    {
    }
};

struct Park : NoThreadSetup {
    static constexpr const char *name = "park";
    using lock_type = park_rwlock_t;
    static void init(lock_type &l)
    {
        park_rwlock_init(&l);
    }
    static void destroy(lock_type &l)
    {
        (void)park_rwlock_destroy(&l);
    }
    static void read_lock(lock_type &l, node_type &)
    {
        park_rwlock_read_lock(&l);
    }
    static void read_unlock(lock_type &l, node_type &)
    {
        park_rwlock_read_unlock(&l);
    }
    static void write_lock(lock_type &l, node_type &)
    {
        park_rwlock_write_lock(&l);
    }
    static void write_unlock(lock_type &l, node_type &)
    {
        park_rwlock_write_unlock(&l);
    }
};

// park's read-mostly mode (park_rwlock_init_read_mostly): the same lock,
// its readers publishing in the process's table of readers while biased.
struct ParkReadMostly : Park {
    static constexpr const char *name = "park_read_mostly";
    static void init(lock_type &l)
    {
        park_rwlock_init_read_mostly(&l);
    }
};

template <int Kind> struct PthreadOfKind : NoThreadSetup {
    using lock_type = pthread_rwlock_t;
    static void init(lock_type &l)
    {
        pthread_rwlockattr_t a;
        pthread_rwlockattr_init(&a);
        pthread_rwlockattr_setkind_np(&a, Kind);
        pthread_rwlock_init(&l, &a);
        pthread_rwlockattr_destroy(&a);
    }
    static void destroy(lock_type &l)
    {
        pthread_rwlock_destroy(&l);
    }
    static void read_lock(lock_type &l, node_type &)
    {
        pthread_rwlock_rdlock(&l);
    }
    static void read_unlock(lock_type &l, node_type &)
    {
        pthread_rwlock_unlock(&l);
    }
    static void write_lock(lock_type &l, node_type &)
    {
        pthread_rwlock_wrlock(&l);
    }
    static void write_unlock(lock_type &l, node_type &)
    {
        pthread_rwlock_unlock(&l);
    }
};

struct Pthread : PthreadOfKind<PTHREAD_RWLOCK_DEFAULT_NP> {
    static constexpr const char *name = "pthread";
};

struct PthreadWpref : PthreadOfKind<PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP> {
    static constexpr const char *name = "pthread_wpref";
};

struct Std : NoThreadSetup {
    static constexpr const char *name = "std";
    using lock_type = std::shared_mutex;
    static void init(lock_type &)
    {
    }
    static void destroy(lock_type &)
    {
    }
    static void read_lock(lock_type &l, node_type &)
    {
        l.lock_shared();
    }
    static void read_unlock(lock_type &l, node_type &)
    {
        l.unlock_shared();
    }
    static void write_lock(lock_type &l, node_type &)
    {
        l.lock();
    }
    static void write_unlock(lock_type &l, node_type &)
    {
        l.unlock();
    }
};

struct Absl : NoThreadSetup {
    static constexpr const char *name = "absl";
    using lock_type = absl::Mutex;
    static void init(lock_type &)
    {
    }
    static void destroy(lock_type &)
    {
    }
    static void read_lock(lock_type &l, node_type &)
    {
        l.ReaderLock();
    }
    static void read_unlock(lock_type &l, node_type &)
    {
        l.ReaderUnlock();
    }
    static void write_lock(lock_type &l, node_type &)
    {
        l.WriterLock();
    }
    static void write_unlock(lock_type &l, node_type &)
    {
        l.WriterUnlock();
    }
};

// The futex rwlock of Rust's std, in C (baselines/futex_rwlock.h): the
// sweep's writer-fair design run in park's own process, alternating with
// park, and where the Rust peers are not built.
struct FutexRw : NoThreadSetup {
    static constexpr const char *name = "futex_rw";
    using lock_type = bl_futex_rw_t;
    static void init(lock_type &l)
    {
        bl_futex_rw_init(&l);
    }
    static void destroy(lock_type &)
    {
    }
    static void read_lock(lock_type &l, node_type &)
    {
        bl_futex_rw_read_lock(&l);
    }
    static void read_unlock(lock_type &l, node_type &)
    {
        bl_futex_rw_read_unlock(&l);
    }
    static void write_lock(lock_type &l, node_type &)
    {
        bl_futex_rw_write_lock(&l);
    }
    static void write_unlock(lock_type &l, node_type &)
    {
        bl_futex_rw_write_unlock(&l);
    }
};

// ck_rwlock and ck_pflock share one shape; only the five C functions differ.
template <void (*Init)(bl_ck_rw_t *), void (*ReadLock)(bl_ck_rw_t *),
          void (*ReadUnlock)(bl_ck_rw_t *), void (*WriteLock)(bl_ck_rw_t *),
          void (*WriteUnlock)(bl_ck_rw_t *)>
struct CkSimple : NoThreadSetup {
    using lock_type = bl_ck_rw_t;
    static void init(lock_type &l)
    {
        Init(&l);
    }
    static void destroy(lock_type &)
    {
    }
    static void read_lock(lock_type &l, node_type &)
    {
        ReadLock(&l);
    }
    static void read_unlock(lock_type &l, node_type &)
    {
        ReadUnlock(&l);
    }
    static void write_lock(lock_type &l, node_type &)
    {
        WriteLock(&l);
    }
    static void write_unlock(lock_type &l, node_type &)
    {
        WriteUnlock(&l);
    }
};

struct CkRwlock : CkSimple<bl_ck_rwlock_init, bl_ck_rwlock_read_lock, bl_ck_rwlock_read_unlock,
                           bl_ck_rwlock_write_lock, bl_ck_rwlock_write_unlock> {
    static constexpr const char *name = "ck_rwlock";
};

struct CkPflock : CkSimple<bl_ck_pflock_init, bl_ck_pflock_read_lock, bl_ck_pflock_read_unlock,
                           bl_ck_pflock_write_lock, bl_ck_pflock_write_unlock> {
    static constexpr const char *name = "ck_pflock";
};

struct CkBrlock {
    static constexpr const char *name = "ck_brlock";
    using lock_type = bl_ck_rw_t;
    // Each thread's record on its own cache line, as ck's design assumes.
    struct alignas(64) node_type {
        bl_ck_rw_reader_t r;
    };
    static void init(lock_type &l)
    {
        bl_ck_brlock_init(&l);
    }
    static void destroy(lock_type &)
    {
    }
    static void enter(lock_type &l, node_type &n)
    {
        bl_ck_brlock_register(&l, &n.r);
    }
    static void leave(lock_type &l, node_type &n)
    {
        bl_ck_brlock_unregister(&l, &n.r);
    }
    static void read_lock(lock_type &l, node_type &n)
    {
        bl_ck_brlock_read_lock(&l, &n.r);
    }
    static void read_unlock(lock_type &, node_type &n)
    {
        bl_ck_brlock_read_unlock(&n.r);
    }
    static void write_lock(lock_type &l, node_type &)
    {
        bl_ck_brlock_write_lock(&l);
    }
    static void write_unlock(lock_type &l, node_type &)
    {
        bl_ck_brlock_write_unlock(&l);
    }
};

} // namespace bench::rwlocks

#endif // PARK_BENCH_RWLOCK_CONTENDERS_H
