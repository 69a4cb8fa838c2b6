// benchmarks/cpp_cost.cpp: the uncontended pairs of the cpp family, each in
// a function of its own, for tools/cpp-cost to count their instructions
// under callgrind (wall-clock rows cannot resolve the 2 % that park.hpp's
// wrappers may cost at most).
//
//   cpp_cost VARIANT PAIRS
//
// VARIANT is mutex_c, mutex_cpp, shared_c, shared_cpp, sem_c or sem_cpp:
// runs PAIRS pairs in park_cost_<VARIANT> (extern "C", never inlined, so
// callgrind's --toggle-collect=park_cost_<VARIANT> counts exactly the
// pairs and their loop). The *_c functions make the C calls, the *_cpp
// functions use the wrappers as C++ code does (std::lock_guard,
// std::shared_lock, acquire() and release()); everything else about the
// loops is the same. The objects come from the heap and PAIRS from the
// command line, so no compiler can specialise a loop for them.
#include <park/park.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>

namespace
{

// The critical section: nothing, behind a compiler barrier (as
// benchmark::ClobberMemory in park_bench's loops).
inline void critical()
{
    asm volatile("" ::: "memory");
}

} // namespace

extern "C" {

__attribute__((noinline)) void park_cost_mutex_c(park_mutex_t *m, long pairs)
{
    for (long i = 0; i < pairs; ++i) {
        park_mutex_lock(m);
        critical();
        park_mutex_unlock(m);
    }
}

__attribute__((noinline)) void park_cost_mutex_cpp(park::mutex *m, long pairs)
{
    for (long i = 0; i < pairs; ++i) {
        std::lock_guard<park::mutex> hold(*m);
        critical();
    }
}

__attribute__((noinline)) void park_cost_shared_c(park_rwlock_t *rw, long pairs)
{
    for (long i = 0; i < pairs; ++i) {
        park_rwlock_read_lock(rw);
        critical();
        park_rwlock_read_unlock(rw);
    }
}

__attribute__((noinline)) void park_cost_shared_cpp(park::shared_mutex *rw, long pairs)
{
    for (long i = 0; i < pairs; ++i) {
        std::shared_lock<park::shared_mutex> hold(*rw);
        critical();
    }
}

__attribute__((noinline)) void park_cost_sem_c(park_sem_t *s, long pairs)
{
    for (long i = 0; i < pairs; ++i) {
        park_sem_acquire(s);
        critical();
        (void)park_sem_release(s, 1);
    }
}

__attribute__((noinline)) void park_cost_sem_cpp(park::counting_semaphore<> *s, long pairs)
{
    for (long i = 0; i < pairs; ++i) {
        s->acquire();
        critical();
        s->release();
    }
}

} // extern "C"

int main(int argc, char **argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s VARIANT PAIRS\n", argv[0]);
        return 2;
    }
    const char *v = argv[1];
    long pairs = std::strtol(argv[2], nullptr, 10);
    if (std::strcmp(v, "mutex_c") == 0) {
        auto m = std::make_unique<park_mutex_t>();
        park_mutex_init(m.get());
        park_cost_mutex_c(m.get(), pairs);
        return park_mutex_destroy(m.get());
    }
    if (std::strcmp(v, "mutex_cpp") == 0) {
        auto m = std::make_unique<park::mutex>();
        park_cost_mutex_cpp(m.get(), pairs);
        return 0;
    }
    if (std::strcmp(v, "shared_c") == 0) {
        auto rw = std::make_unique<park_rwlock_t>();
        park_rwlock_init(rw.get());
        park_cost_shared_c(rw.get(), pairs);
        return park_rwlock_destroy(rw.get());
    }
    if (std::strcmp(v, "shared_cpp") == 0) {
        auto rw = std::make_unique<park::shared_mutex>();
        park_cost_shared_cpp(rw.get(), pairs);
        return 0;
    }
    if (std::strcmp(v, "sem_c") == 0) {
        auto s = std::make_unique<park_sem_t>();
        if (park_sem_init(s.get(), 1, PARK_SEM_VALUE_MAX) != 0)
            return 1;
        park_cost_sem_c(s.get(), pairs);
        return park_sem_destroy(s.get());
    }
    if (std::strcmp(v, "sem_cpp") == 0) {
        auto s = std::make_unique<park::counting_semaphore<>>(1);
        park_cost_sem_cpp(s.get(), pairs);
        return 0;
    }
    std::fprintf(stderr, "%s: unknown variant %s\n", argv[0], v);
    return 2;
}
