/* tests/cpp/thread_safety.cpp: Clang's -Wthread-safety on park's C++ lock
 * types. thread_safety.cmake compiles it once per CASE: case 0 is correct
 * and must compile cleanly; every other case is a locking mistake the
 * analysis must report. */
#include <park/park.hpp>

struct account {
    park::mutex m;
    long balance PARK_GUARDED_BY(m) = 0;

    park::shared_mutex rw;
    long limit PARK_GUARDED_BY(rw) = 0;

    void deposit_locked(long n) PARK_REQUIRES(m)
    {
        balance += n;
    }
};

#if CASE == 0
long correct(account &a)
{
    {
        park::lock_guard<park::mutex> hold(a.m);
        a.balance += 1;
        a.deposit_locked(2);
    }
    a.m.lock();
    a.balance += 3;
    a.m.unlock();
    if (a.m.try_lock()) {
        a.balance += 4;
        a.m.unlock();
    }
    long seen;
    {
        park::shared_lock_guard<park::shared_mutex> read(a.rw);
        seen = a.limit;
    }
    a.rw.lock();
    a.limit = 5;
    a.rw.unlock_and_lock_shared();
    seen += a.limit;
    a.rw.unlock_shared();
    return seen;
}
#elif CASE == 1
void unguarded_write(account &a)
{
    a.balance = 1; /* no lock held */
}
#elif CASE == 2
void lock_never_unlocked(account &a)
{
    a.m.lock();
    a.balance = 1;
} /* still held here */
#elif CASE == 3
void write_under_shared_lock(account &a)
{
    park::shared_lock_guard<park::shared_mutex> read(a.rw);
    a.limit = 1;
}
#elif CASE == 4
void write_after_downgrade(account &a)
{
    a.rw.lock();
    a.rw.unlock_and_lock_shared();
    a.limit = 1;
    a.rw.unlock_shared();
}
#elif CASE == 5
void requires_not_held(account &a)
{
    a.deposit_locked(1);
}
#endif
