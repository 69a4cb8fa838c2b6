/* park/park.hpp: park for C++ (C++17; coroutines with C++20).
 *
 * Header-only wrappers that give park's primitives the standard library's
 * interfaces, so that std::lock_guard, std::unique_lock, std::scoped_lock,
 * std::shared_lock, std::condition_variable_any and code written for
 * std::counting_semaphore work on them unchanged:
 *
 *   park::mutex                  Lockable, TimedLockable   (park_mutex_t)
 *   park::shared_mutex           SharedTimedLockable       (park_rwlock_t)
 *   park::counting_semaphore<N>, park::binary_semaphore    (park_sem_t)
 *   park::condition_variable     for std::unique_lock<park::mutex> (park_cond_t)
 *   park::latch, park::barrier<C> std::latch, std::barrier  (park/barrier.h)
 *   park::once_flag, park::call_once                       (park_once_t)
 *   park::lazy<T>                a value made once, retried after a failure
 *   park::pool                   a work-stealing pool      (park_pool_t)
 *   park::lock_guard, park::shared_lock_guard   scoped locks that Clang's
 *                                thread-safety analysis understands
 *
 * and, where the compiler has coroutines (C++20):
 *
 *   co_await m.scoped_lock_async(pool)         -> std::unique_lock<park::mutex>
 *   co_await rw.scoped_lock_shared_async(pool) -> std::shared_lock<park::shared_mutex>
 *   co_await sem.acquire_async(pool)           -> a permit
 *   co_await latch.wait_async(pool), co_await barrier.arrive_and_wait_async(pool)
 *   park::task<T>, park::when_all, co_await pool.schedule()
 *
 * Cost: every wrapper is inline and calls the C function it stands for (the
 * fast paths are the C headers' inline compare-and-swaps), so a wrapper
 * costs what the C call costs. Conversions of std::chrono deadlines are
 * integer arithmetic folded at compile time for the usual units.
 *
 * Semantics are the C primitives' (see their headers): the same queueing,
 * fairness, memory ordering and destruction safety. In particular
 * park::mutex and park::shared_mutex are not thread-affine: a hold may be
 * released by any thread, which is what lets a coroutine lock on one
 * worker and unlock on another.
 *
 * Time: a std::chrono::steady_clock deadline is CLOCK_MONOTONIC, park's own
 * clock, and is passed as it is. A deadline on any other clock
 * (system_clock, say) is waited for as the time left until it, measured
 * on that clock, and measured again if the wait times out before that
 * clock shows the deadline passed (the clock was set back), as the
 * standard library does. Durations are rounded up to whole nanoseconds,
 * so no timed wait ends early; beyond about 584 years they never expire.
 *
 * Errors: where the standard reports errors by exception, so do these
 * wrappers: std::system_error with a std::generic_category code (the C
 * call's errno value), or std::bad_alloc for ENOMEM. Built without
 * exceptions (-fno-exceptions), they print the error and abort instead.
 * Exceptions thrown by user code (call_once, lazy's factory, pool::join,
 * pool::parallel_for, a task's body) are caught before they reach C code
 * and rethrown to the caller that waits for the result.
 *
 * Coroutines resume on a pool, never inline on the thread that unlocked or
 * released: an awaiter registers a continuation on the acquisition's task
 * (park_task_then), and continuations always run on the pool. Only an
 * acquisition that succeeds at once does not suspend at all. See the
 * coroutine section below for cancellation and for park::task.
 *
 * Clang's -Wthread-safety understands the lock types here (PARK_GUARDED_BY
 * and the other macros below); with other compilers the macros expand to
 * nothing. libstdc++'s std::lock_guard carries no annotations, so code
 * checked by Clang should lock through park::lock_guard and
 * park::shared_lock_guard, or call lock() and unlock() itself. */
#ifndef PARK_PARK_HPP
#define PARK_PARK_HPP

#include <park/barrier.h>
#include <park/common.h>
#include <park/cond.h>
#include <park/lazy.h>
#include <park/mutex.h>
#include <park/pool.h>
#include <park/rwlock.h>
#include <park/sem.h>
#include <park/task.h>
#include <park/time.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <new>
#include <optional>
#include <ratio>
#include <shared_mutex>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#if defined(__cpp_impl_coroutine) && __cpp_impl_coroutine >= 201902L && __has_include(<coroutine>)
#include <coroutine>
#define PARK_HAS_COROUTINES 1
#else
#define PARK_HAS_COROUTINES 0
#endif

/* ---- Clang thread-safety annotations -------------------------------------
 *
 * For users' own code as well: PARK_GUARDED_BY(m) on a field that m guards,
 * PARK_REQUIRES(m) on a function that must be called holding m, and so on
 * (Clang's names, with the PARK_ prefix). Nothing with other compilers. */
#if defined(__clang__)
#define PARK__TSA(x) __attribute__((x))
#else
#define PARK__TSA(x)
#endif
#define PARK_CAPABILITY(name) PARK__TSA(capability(name))
#define PARK_SCOPED_CAPABILITY PARK__TSA(scoped_lockable)
#define PARK_GUARDED_BY(x) PARK__TSA(guarded_by(x))
#define PARK_PT_GUARDED_BY(x) PARK__TSA(pt_guarded_by(x))
#define PARK_ACQUIRED_BEFORE(...) PARK__TSA(acquired_before(__VA_ARGS__))
#define PARK_ACQUIRED_AFTER(...) PARK__TSA(acquired_after(__VA_ARGS__))
#define PARK_REQUIRES(...) PARK__TSA(requires_capability(__VA_ARGS__))
#define PARK_REQUIRES_SHARED(...) PARK__TSA(requires_shared_capability(__VA_ARGS__))
#define PARK_ACQUIRE(...) PARK__TSA(acquire_capability(__VA_ARGS__))
#define PARK_ACQUIRE_SHARED(...) PARK__TSA(acquire_shared_capability(__VA_ARGS__))
#define PARK_RELEASE(...) PARK__TSA(release_capability(__VA_ARGS__))
#define PARK_RELEASE_SHARED(...) PARK__TSA(release_shared_capability(__VA_ARGS__))
#define PARK_RELEASE_GENERIC(...) PARK__TSA(release_generic_capability(__VA_ARGS__))
#define PARK_TRY_ACQUIRE(...) PARK__TSA(try_acquire_capability(__VA_ARGS__))
#define PARK_TRY_ACQUIRE_SHARED(...) PARK__TSA(try_acquire_shared_capability(__VA_ARGS__))
#define PARK_EXCLUDES(...) PARK__TSA(locks_excluded(__VA_ARGS__))
#define PARK_ASSERT_CAPABILITY(x) PARK__TSA(assert_capability(x))
#define PARK_RETURN_CAPABILITY(x) PARK__TSA(lock_returned(x))
#define PARK_NO_THREAD_SAFETY_ANALYSIS PARK__TSA(no_thread_safety_analysis)

/* Private: user exceptions are caught before they unwind into C frames;
 * without exceptions there is nothing to catch. */
#if defined(__cpp_exceptions)
#define PARK__TRY try
#define PARK__CATCH_ALL catch (...)
#else
#define PARK__TRY if (true)
#define PARK__CATCH_ALL else
#endif

namespace park
{

/* The error a park_task_t (of a park::task) or a run of a park_lazy_t (of
 * a park::lazy) ends with when the C++ code it ran threw: the exception
 * itself travels in the C++ object, and whoever waits for the result gets
 * it rethrown. C code that looks at the task sees this value. It lies
 * above Linux's errno values, so no errno is mistaken for it. */
inline constexpr int exception_code = 4097;

namespace detail
{

/* Throws the error of a C call (or, without exceptions, prints it and
 * aborts). Out of line and cold, so that callers' fast paths stay small. */
[[noreturn]] __attribute__((cold, noinline)) inline void raise(int err, const char *what)
{
#if defined(__cpp_exceptions)
    if (err == ENOMEM)
        throw std::bad_alloc();
    throw std::system_error(err, std::generic_category(), what);
#else
    std::fprintf(stderr, "%s: %s\n", what, std::strerror(err));
    std::abort();
#endif
}

inline void check(int err, const char *what)
{
    if (PARK__UNLIKELY(err != 0))
        raise(err, what);
}

/* The nanoseconds in d, rounded up; 0 for d <= 0; UINT64_MAX where they do
 * not fit (which park's deadlines read as "never"). Integer arithmetic for
 * integer counts, folded at compile time for the standard units. */
template <class Rep, class Period>
constexpr std::uint64_t ceil_ns(std::chrono::duration<Rep, Period> d) noexcept
{
    static_assert(std::is_arithmetic_v<Rep>, "park: a duration needs an arithmetic count");
    using to_ns = std::ratio_divide<Period, std::nano>;
    if (!(d.count() > 0))
        return 0;
    if constexpr (std::is_floating_point_v<Rep>) {
        long double ns = static_cast<long double>(d.count()) * to_ns::num / to_ns::den;
        if (!(ns < 18446744073709551616.0L)) /* 2^64 */
            return UINT64_MAX;
        auto whole = static_cast<std::uint64_t>(ns);
        return whole + (static_cast<long double>(whole) < ns);
    } else {
        static_assert(sizeof(Rep) <= sizeof(std::uint64_t), "park: duration count too wide");
        auto c = static_cast<std::uint64_t>(d.count());
        constexpr auto num = static_cast<std::uint64_t>(to_ns::num);
        constexpr auto den = static_cast<std::uint64_t>(to_ns::den);
        if (c > UINT64_MAX / num)
            return UINT64_MAX;
        std::uint64_t x = c * num;
        return x / den + (x % den != 0);
    }
}

/* The park deadline d from now. */
template <class Rep, class Period>
inline park_time_t deadline_after(std::chrono::duration<Rep, Period> d) noexcept
{
    return park_deadline_in(ceil_ns(d));
}

/* std::chrono::steady_clock is CLOCK_MONOTONIC on Linux in libstdc++ and
 * libc++, so its time points are park deadlines as they are. */
template <class Clock>
inline constexpr bool is_park_clock = std::is_same_v<Clock, std::chrono::steady_clock>;

/* One timed attempt until t on any clock: attempt(deadline) -> bool. On
 * steady_clock one call; on another clock, calls with the time left until
 * the clock shows t (a clock set back makes the first wait end too early
 * by that clock, and then it waits again). */
template <class Clock, class Duration, class Attempt>
inline bool until(const std::chrono::time_point<Clock, Duration> &t, Attempt &&attempt)
{
    if constexpr (is_park_clock<Clock>) {
        return attempt(static_cast<park_time_t>(ceil_ns(t.time_since_epoch())));
    } else {
        for (;;) {
            auto now = Clock::now();
            park_time_t deadline = t > now ? deadline_after(t - now) : 0;
            if (attempt(deadline))
                return true;
            if (!(Clock::now() < t))
                return false;
        }
    }
}

} // namespace detail

/* ---- pool --------------------------------------------------------------- */

/* A work-stealing pool (park/pool.h) that is shut down when it goes out of
 * scope: the destructor runs everything submitted and joins the workers
 * (park_pool_destroy). Movable; a moved-from pool is empty and its
 * destructor does nothing. Destroying a pool from one of its own workers
 * aborts. */
class pool
{
  public:
    using native_handle_type = park_pool_t *;

    /* Starts `threads` workers (0: one per online CPU). Throws
     * std::system_error (EINVAL: more than 4096, EAGAIN) or std::bad_alloc.
     * Blocks while the threads start. */
    explicit pool(unsigned threads = 0)
    {
        park_pool_config_t cfg = {threads};
        detail::check(park_pool_create(&p_, &cfg), "park::pool");
    }
    ~pool()
    {
        park_pool_destroy(p_);
    }
    pool(pool &&o) noexcept : p_(std::exchange(o.p_, nullptr))
    {
    }
    pool &operator=(pool &&o) noexcept
    {
        if (this != &o)
            park_pool_destroy(std::exchange(p_, std::exchange(o.p_, nullptr)));
        return *this;
    }
    pool(const pool &) = delete;
    pool &operator=(const pool &) = delete;

    /* Runs f() once on a worker. f is moved into the queue: a callable no
     * larger than a pointer and trivially copyable (a lambda capturing one
     * pointer, a function pointer) travels in the queue entry itself,
     * anything else in one allocation. Throws std::system_error (EPIPE:
     * the pool is shutting down; f will not run) or std::bad_alloc.
     * f must not throw (an exception escaping it calls std::terminate).
     * Never blocks. Everything before submit happens before f runs. */
    template <class F> void submit(F &&f)
    {
        using fn = std::decay_t<F>;
        int err;
        if constexpr (fits_in_pointer<fn>) {
            void *arg = nullptr;
            fn copy(std::forward<F>(f));
            std::memcpy(&arg, static_cast<const void *>(&copy), sizeof copy);
            err = park_pool_submit(p_, &run_inline<fn>, arg);
        } else {
            fn *boxed = new fn(std::forward<F>(f));
            err = park_pool_submit(p_, &run_boxed<fn>, boxed);
            if (err != 0)
                delete boxed;
        }
        detail::check(err, "park::pool::submit");
    }

    /* Runs f() and g(), possibly in parallel (park_join: g may be stolen
     * by another worker while the caller runs f), and returns when both
     * have returned. If either throws, the other still runs to its end and
     * then the exception is rethrown (f's first). Allocates nothing.
     * Blocks (from a worker: runs other work while it waits). */
    template <class F, class G> void join(F &&f, G &&g)
    {
        call<F> a{f};
        call<G> b{g};
        park_join(p_, &call<F>::run, &a, &call<G>::run, &b);
        a.rethrow();
        b.rethrow();
    }

    /* Calls body(lo, hi) over disjoint ranges covering [begin, end), each
     * at most `grain` long (0 counts as 1), in parallel by halving
     * (park_parallel_for); returns when all have returned. If a call
     * throws, the ranges not yet started are skipped and the first
     * exception is rethrown. Blocks as join does. */
    template <class Body>
    void parallel_for(std::size_t begin, std::size_t end, std::size_t grain, Body &&body)
    {
        ranges<Body> r{body};
        park_parallel_for(p_, begin, end, grain, &ranges<Body>::run, &r);
        if (r.failed.load(std::memory_order_relaxed)) /* ordered by the join */
            std::rethrow_exception(r.error);
    }

    /* The number of workers. */
    [[nodiscard]] unsigned threads() const noexcept
    {
        return park_pool_threads(p_);
    }

    [[nodiscard]] native_handle_type native_handle() const noexcept
    {
        return p_;
    }

#if PARK_HAS_COROUTINES
    class schedule_awaiter;
    /* co_await pool.schedule(): the coroutine continues on one of the
     * pool's workers (always suspending, even on a worker). Throws
     * std::system_error (EPIPE) if the pool is shutting down; then the
     * coroutine continues on its thread. */
    [[nodiscard]] schedule_awaiter schedule() noexcept;
#endif

  private:
    template <class F>
    static constexpr bool
        fits_in_pointer = sizeof(F) <= sizeof(void *) &&
                          alignof(F) <= alignof(void *) && std::is_trivially_copyable_v<F>;

    template <class F> static void run_inline(void *arg) noexcept
    {
        alignas(F) unsigned char bytes[sizeof(F)];
        std::memcpy(bytes, &arg, sizeof(F));
        std::invoke(*std::launder(reinterpret_cast<F *>(bytes)));
    }
    template <class F> static void run_boxed(void *arg) noexcept
    {
        F *f = static_cast<F *>(arg);
        std::invoke(*f);
        delete f;
    }

    /* One side of join: its exception stays with it until join returns. */
    template <class F> struct call {
        explicit call(F &fn) noexcept : f(fn)
        {
        }
        F &f;
        std::exception_ptr error;
        static void run(void *arg) noexcept
        {
            auto *self = static_cast<call *>(arg);
            PARK__TRY
            {
                std::invoke(self->f);
            }
            PARK__CATCH_ALL
            {
                self->error = std::current_exception();
            }
        }
        void rethrow()
        {
            if (error)
                std::rethrow_exception(error);
        }
    };

    template <class Body> struct ranges {
        explicit ranges(Body &b) noexcept : body(b)
        {
        }
        Body &body;
        std::atomic<bool> failed{false};
        std::exception_ptr error; /* written by the one that set failed */
        static void run(std::size_t lo, std::size_t hi, void *arg) noexcept
        {
            auto *self = static_cast<ranges *>(arg);
            if (self->failed.load(std::memory_order_relaxed)) /* a hint only */
                return;
            PARK__TRY
            {
                std::invoke(self->body, lo, hi);
            }
            PARK__CATCH_ALL
            {
                if (!self->failed.exchange(true, std::memory_order_relaxed))
                    self->error = std::current_exception();
            }
        }
    };

    park_pool_t *p_ = nullptr;
};

/* Where the coroutine interfaces take a pool: a park::pool or a C pool. */
class pool_ref
{
  public:
    pool_ref(pool &p) noexcept : p_(p.native_handle())
    {
    }
    pool_ref(park_pool_t *p) noexcept : p_(p)
    {
    }
    [[nodiscard]] park_pool_t *get() const noexcept
    {
        return p_;
    }

  private:
    park_pool_t *p_;
};

#if PARK_HAS_COROUTINES
namespace detail
{
class mutex_lock_awaiter;
class rw_write_awaiter;
class rw_read_awaiter;
class sem_awaiter;
class sem_timed_awaiter;
class latch_awaiter;
class barrier_awaiter;
} // namespace detail
#endif

/* ---- mutex -------------------------------------------------------------- */

/* A mutex with std::mutex's and std::timed_mutex's interface on
 * park_mutex_t (park/mutex.h): BasicLockable, Lockable, TimedLockable.
 * Constant-initialised (a global needs no static initialisation, and a
 * constinit one is allowed), 4 bytes, trivially destructible, neither
 * copyable nor movable. Not recursive. Not thread-affine: any thread may
 * unlock it. A successful lock is an acquire operation, unlock a release
 * operation. */
class PARK_CAPABILITY("mutex") mutex
{
  public:
    using native_handle_type = park_mutex_t *;

    constexpr mutex() noexcept : m_{}
    {
    }
    mutex(const mutex &) = delete;
    mutex &operator=(const mutex &) = delete;

    /* Blocks until the mutex is the caller's. Relocking deadlocks. */
    void lock() PARK_ACQUIRE()
    {
        park_mutex_lock(&m_);
    }

    /* Takes the mutex if it is free right now. Never blocks. */
    [[nodiscard]] bool try_lock() noexcept PARK_TRY_ACQUIRE(true)
    {
        return park_mutex_try_lock(&m_);
    }

    /* Blocks until the mutex is the caller's or d has passed: false if it
     * was not taken. A free mutex is taken even for d <= 0. */
    template <class Rep, class Period>
    [[nodiscard]] bool try_lock_for(const std::chrono::duration<Rep, Period> &d)
        PARK_TRY_ACQUIRE(true)
    {
        return park_mutex_lock_until(&m_, detail::deadline_after(d)) == 0;
    }

    /* As try_lock_for, until the clock shows t (any clock; see the top). */
    template <class Clock, class Duration>
    [[nodiscard]] bool try_lock_until(const std::chrono::time_point<Clock, Duration> &t)
        PARK_TRY_ACQUIRE(true)
    {
        return detail::until(
            t, [this](park_time_t deadline) { return park_mutex_lock_until(&m_, deadline) == 0; });
    }

    /* Unlocks (the caller's hold, or another thread's). Never blocks.
     * Unlocking a mutex that is not locked aborts with a message. */
    void unlock() PARK_RELEASE()
    {
        park_mutex_unlock(&m_);
    }

    [[nodiscard]] native_handle_type native_handle() noexcept
    {
        return &m_;
    }

#if PARK_HAS_COROUTINES
    /* co_await m.scoped_lock_async(pool): a std::unique_lock that owns the
     * mutex. A free mutex is taken at once, without suspending; otherwise
     * the coroutine waits in the mutex's queue (no thread waits) and
     * resumes on `pool` once the lock is handed to it. See the coroutine
     * section for errors. */
    [[nodiscard]] detail::mutex_lock_awaiter scoped_lock_async(pool_ref pool) noexcept;
#endif

  private:
    park_mutex_t m_;
};

/* ---- shared_mutex --------------------------------------------------------- */

/* A reader/writer lock with std::shared_timed_mutex's interface on
 * park_rwlock_t (park/rwlock.h, writer-preferring: once a writer waits, new
 * readers wait too, so a thread that takes the shared lock again while it
 * holds it deadlocks if a writer is queued). Plus unlock_and_lock_shared,
 * which turns the exclusive hold into a shared one with no writer getting
 * in between. Constant-initialised, trivially destructible, neither
 * copyable nor movable, not thread-affine. Acquisitions are acquire
 * operations, releases release operations. */
class PARK_CAPABILITY("shared_mutex") shared_mutex
{
  public:
    using native_handle_type = park_rwlock_t *;

    constexpr shared_mutex() noexcept : rw_{}
    {
    }
    shared_mutex(const shared_mutex &) = delete;
    shared_mutex &operator=(const shared_mutex &) = delete;

    /* Exclusive (write) hold: blocks while anyone holds the lock. */
    void lock() PARK_ACQUIRE()
    {
        park_rwlock_write_lock(&rw_);
    }
    /* Free and nobody queued: taken. Never blocks. */
    [[nodiscard]] bool try_lock() noexcept PARK_TRY_ACQUIRE(true)
    {
        return park_rwlock_try_write_lock(&rw_);
    }
    template <class Rep, class Period>
    [[nodiscard]] bool try_lock_for(const std::chrono::duration<Rep, Period> &d)
        PARK_TRY_ACQUIRE(true)
    {
        return park_rwlock_write_lock_until(&rw_, detail::deadline_after(d)) == 0;
    }
    template <class Clock, class Duration>
    [[nodiscard]] bool try_lock_until(const std::chrono::time_point<Clock, Duration> &t)
        PARK_TRY_ACQUIRE(true)
    {
        return detail::until(t, [this](park_time_t deadline) {
            return park_rwlock_write_lock_until(&rw_, deadline) == 0;
        });
    }
    void unlock() PARK_RELEASE()
    {
        park_rwlock_write_unlock(&rw_);
    }

    /* Shared (read) hold: blocks while a writer holds the lock or waits. */
    void lock_shared() PARK_ACQUIRE_SHARED()
    {
        park_rwlock_read_lock(&rw_);
    }
    /* No writer holds the lock or waits for it: taken. Never blocks. */
    [[nodiscard]] bool try_lock_shared() noexcept PARK_TRY_ACQUIRE_SHARED(true)
    {
        return park_rwlock_try_read_lock(&rw_);
    }
    template <class Rep, class Period>
    [[nodiscard]] bool try_lock_shared_for(const std::chrono::duration<Rep, Period> &d)
        PARK_TRY_ACQUIRE_SHARED(true)
    {
        return park_rwlock_read_lock_until(&rw_, detail::deadline_after(d)) == 0;
    }
    template <class Clock, class Duration>
    [[nodiscard]] bool try_lock_shared_until(const std::chrono::time_point<Clock, Duration> &t)
        PARK_TRY_ACQUIRE_SHARED(true)
    {
        return detail::until(t, [this](park_time_t deadline) {
            return park_rwlock_read_lock_until(&rw_, deadline) == 0;
        });
    }
    void unlock_shared() PARK_RELEASE_SHARED()
    {
        park_rwlock_read_unlock(&rw_);
    }

    /* Turns the caller's exclusive hold into a shared one, atomically
     * (park_rwlock_downgrade): queued readers enter with it unless a
     * writer is queued. Release ordering for the exclusive hold. Never
     * blocks. */
    void unlock_and_lock_shared() PARK_RELEASE() PARK_ACQUIRE_SHARED()
    {
        park_rwlock_downgrade(&rw_);
    }

    [[nodiscard]] native_handle_type native_handle() noexcept
    {
        return &rw_;
    }

#if PARK_HAS_COROUTINES
    /* co_await rw.scoped_lock_async(pool): a std::unique_lock that owns
     * the exclusive hold; co_await rw.scoped_lock_shared_async(pool): a
     * std::shared_lock that owns a shared hold. As
     * mutex::scoped_lock_async: taken at once when possible, otherwise
     * queued under the lock's policy and resumed on `pool`. */
    [[nodiscard]] detail::rw_write_awaiter scoped_lock_async(pool_ref pool) noexcept;
    [[nodiscard]] detail::rw_read_awaiter scoped_lock_shared_async(pool_ref pool) noexcept;
#endif

  private:
    park_rwlock_t rw_;
};

/* ---- scoped locks for the thread-safety analysis ---------------------------- */

/* std::lock_guard's behaviour, with the annotations Clang's analysis needs
 * (libstdc++'s own scoped locks have none). */
template <class Mutex> class PARK_SCOPED_CAPABILITY lock_guard
{
  public:
    explicit lock_guard(Mutex &m) PARK_ACQUIRE(m) : m_(m)
    {
        m_.lock();
    }
    lock_guard(Mutex &m, std::adopt_lock_t) PARK_REQUIRES(m) : m_(m)
    {
    }
    ~lock_guard() PARK_RELEASE()
    {
        m_.unlock();
    }
    lock_guard(const lock_guard &) = delete;
    lock_guard &operator=(const lock_guard &) = delete;

  private:
    Mutex &m_;
};

/* A shared hold for the scope, as lock_guard is for the exclusive one. */
template <class SharedMutex> class PARK_SCOPED_CAPABILITY shared_lock_guard
{
  public:
    explicit shared_lock_guard(SharedMutex &m) PARK_ACQUIRE_SHARED(m) : m_(m)
    {
        m_.lock_shared();
    }
    shared_lock_guard(SharedMutex &m, std::adopt_lock_t) PARK_REQUIRES_SHARED(m) : m_(m)
    {
    }
    ~shared_lock_guard() PARK_RELEASE()
    {
        m_.unlock_shared();
    }
    shared_lock_guard(const shared_lock_guard &) = delete;
    shared_lock_guard &operator=(const shared_lock_guard &) = delete;

  private:
    SharedMutex &m_;
};

/* ---- counting_semaphore ------------------------------------------------------ */

/* Tag for a strictly FIFO semaphore (PARK_SEM_INIT_FIFO). */
struct fifo_t {
    explicit fifo_t() = default;
};
inline constexpr fifo_t fifo{};

/* std::counting_semaphore's interface on park_sem_t (park/sem.h): at most
 * LeastMaxValue permits (max() is exactly LeastMaxValue, at most
 * PARK_SEM_VALUE_MAX). Barging with bounded unfairness, or strictly FIFO
 * when constructed with park::fifo. Constant-initialised, trivially
 * destructible, neither copyable nor movable. A release synchronises with
 * the acquisitions that obtain its permits. */
template <std::ptrdiff_t LeastMaxValue = PARK_SEM_VALUE_MAX> class counting_semaphore
{
    static_assert(LeastMaxValue > 0 && LeastMaxValue <= std::ptrdiff_t{PARK_SEM_VALUE_MAX},
                  "park::counting_semaphore: LeastMaxValue must be 1 to PARK_SEM_VALUE_MAX");

  public:
    using native_handle_type = park_sem_t *;

    [[nodiscard]] static constexpr std::ptrdiff_t max() noexcept
    {
        return LeastMaxValue;
    }

    /* `desired` free permits, 0 to max(): outside, std::system_error
     * (EINVAL), or no constant in a constant expression. */
    constexpr explicit counting_semaphore(std::ptrdiff_t desired) : s_(make(desired, 0u))
    {
    }
    constexpr counting_semaphore(std::ptrdiff_t desired, fifo_t) : s_(make(desired, PARK__SEM_FIFO))
    {
    }
    counting_semaphore(const counting_semaphore &) = delete;
    counting_semaphore &operator=(const counting_semaphore &) = delete;

    /* Adds `update` permits, waking waiters. update == 0 does nothing.
     * Beyond max() (the C call's EOVERFLOW, nothing released) or below 0:
     * std::system_error (the standard leaves these undefined). Never
     * blocks. */
    void release(std::ptrdiff_t update = 1)
    {
        if (PARK__UNLIKELY(update <= 0 || update > max())) {
            if (update == 0)
                return;
            detail::raise(update < 0 ? EINVAL : EOVERFLOW, "park::counting_semaphore::release");
        }
        detail::check(park_sem_release(&s_, static_cast<std::uint32_t>(update)),
                      "park::counting_semaphore::release");
    }

    /* Blocks until a permit is the caller's. */
    void acquire() noexcept
    {
        park_sem_acquire(&s_);
    }

    /* Takes a free permit if there is one. Never blocks. */
    [[nodiscard]] bool try_acquire() noexcept
    {
        return park_sem_try_acquire(&s_);
    }

    /* Blocks until a permit is the caller's or d has passed: false if none
     * was taken (a timed-out waiter never swallows a permit). */
    template <class Rep, class Period>
    [[nodiscard]] bool try_acquire_for(const std::chrono::duration<Rep, Period> &d)
    {
        return park_sem_acquire_until(&s_, detail::deadline_after(d)) == 0;
    }

    template <class Clock, class Duration>
    [[nodiscard]] bool try_acquire_until(const std::chrono::time_point<Clock, Duration> &t)
    {
        return detail::until(
            t, [this](park_time_t deadline) { return park_sem_acquire_until(&s_, deadline) == 0; });
    }

    /* Several permits at once (park_sem_acquire_n): all n or none, never
     * some of them (see park/sem.h for who may pass a waiting request).
     * n == 0 takes nothing and succeeds; n beyond max() could never be
     * satisfied: acquire(n) throws std::system_error (EINVAL), the try
     * forms return false. */
    void acquire(std::ptrdiff_t n)
    {
        if (PARK__UNLIKELY(n <= 0 || n > max())) {
            if (n == 0)
                return;
            detail::raise(EINVAL, "park::counting_semaphore::acquire");
        }
        detail::check(park_sem_acquire_n(&s_, static_cast<std::uint32_t>(n)),
                      "park::counting_semaphore::acquire");
    }
    [[nodiscard]] bool try_acquire(std::ptrdiff_t n) noexcept
    {
        if (PARK__UNLIKELY(n <= 0 || n > max()))
            return n == 0;
        return park_sem_try_acquire_n(&s_, static_cast<std::uint32_t>(n));
    }
    template <class Rep, class Period>
    [[nodiscard]] bool try_acquire_for(std::ptrdiff_t n,
                                       const std::chrono::duration<Rep, Period> &d)
    {
        if (PARK__UNLIKELY(n <= 0 || n > max()))
            return n == 0;
        return park_sem_acquire_n_until(&s_, static_cast<std::uint32_t>(n),
                                        detail::deadline_after(d)) == 0;
    }
    template <class Clock, class Duration>
    [[nodiscard]] bool try_acquire_until(std::ptrdiff_t n,
                                         const std::chrono::time_point<Clock, Duration> &t)
    {
        if (PARK__UNLIKELY(n <= 0 || n > max()))
            return n == 0;
        return detail::until(t, [this, n](park_time_t deadline) {
            return park_sem_acquire_n_until(&s_, static_cast<std::uint32_t>(n), deadline) == 0;
        });
    }

    [[nodiscard]] native_handle_type native_handle() noexcept
    {
        return &s_;
    }

#if PARK_HAS_COROUTINES
    /* co_await sem.acquire_async(pool[, n]): a permit (or n together),
     * taken at once when free, otherwise queued in arrival order and
     * handed over; the coroutine then resumes on `pool`. n beyond max():
     * std::system_error (EINVAL); n == 0 takes nothing. */
    [[nodiscard]] detail::sem_awaiter acquire_async(pool_ref pool, std::ptrdiff_t n = 1) noexcept;
    /* co_await sem.try_acquire_for_async(pool[, n], d) /
     * try_acquire_until_async(pool[, n], t): true with the permits, false
     * if they were not handed over in time (kept by the pool's timer; a
     * deadline on a clock other than steady_clock is converted once to
     * the time left). */
    template <class Rep, class Period>
    [[nodiscard]] detail::sem_timed_awaiter
    try_acquire_for_async(pool_ref pool, const std::chrono::duration<Rep, Period> &d);
    template <class Rep, class Period>
    [[nodiscard]] detail::sem_timed_awaiter
    try_acquire_for_async(pool_ref pool, std::ptrdiff_t n,
                          const std::chrono::duration<Rep, Period> &d);
    template <class Clock, class Duration>
    [[nodiscard]] detail::sem_timed_awaiter
    try_acquire_until_async(pool_ref pool, const std::chrono::time_point<Clock, Duration> &t);
    template <class Clock, class Duration>
    [[nodiscard]] detail::sem_timed_awaiter
    try_acquire_until_async(pool_ref pool, std::ptrdiff_t n,
                            const std::chrono::time_point<Clock, Duration> &t);
#endif

  private:
    /* Mirrors PARK_SEM_INIT / PARK_SEM_INIT_FIFO, whose compile-time check
     * needs constants: `desired` here is checked at run time instead. */
    static constexpr park_sem_t make(std::ptrdiff_t desired, std::uint32_t flags)
    {
        if (desired < 0 || desired > max())
            detail::raise(EINVAL, "park::counting_semaphore");
        return park_sem_t{static_cast<std::uint64_t>(desired),
                          static_cast<std::uint32_t>(LeastMaxValue) | flags, 0};
    }

    park_sem_t s_;
};

using binary_semaphore = counting_semaphore<1>;

/* ---- condition_variable ------------------------------------------------------ */

/* std::condition_variable's interface on park_cond_t (park/cond.h), for
 * std::unique_lock<park::mutex> (std::condition_variable_any works with
 * park::mutex as well, at its own cost). Waiters are woken in arrival
 * order; notify_all sends them to the mutex one at a time. Wake-ups are
 * not spurious, but another thread may change the state between the
 * wake-up and the return: wait with a predicate. Constant-initialised,
 * trivially destructible, neither copyable nor movable. The mutex orders
 * everything. Waiting with a lock that does not own its mutex is
 * undefined, as with std::condition_variable. */
class condition_variable
{
  public:
    using native_handle_type = park_cond_t *;

    constexpr condition_variable() noexcept : c_{}
    {
    }
    condition_variable(const condition_variable &) = delete;
    condition_variable &operator=(const condition_variable &) = delete;

    /* Wakes the oldest waiter, if any. Never blocks; with nobody waiting,
     * one load. */
    void notify_one() noexcept
    {
        park_cond_signal(&c_);
    }
    /* Wakes every waiter. Never blocks. */
    void notify_all() noexcept
    {
        park_cond_broadcast(&c_);
    }

    /* Unlocks lk's mutex, waits for a notification, locks it again. */
    void wait(std::unique_lock<mutex> &lk) noexcept
    {
        (void)park_cond_wait(&c_, lk.mutex()->native_handle());
    }
    template <class Predicate> void wait(std::unique_lock<mutex> &lk, Predicate pred)
    {
        while (!pred())
            wait(lk);
    }

    /* As wait, until d has passed (lk is held again on return either
     * way): std::cv_status::timeout or no_timeout. */
    template <class Rep, class Period>
    std::cv_status wait_for(std::unique_lock<mutex> &lk,
                            const std::chrono::duration<Rep, Period> &d)
    {
        return wait_park(lk, detail::deadline_after(d)) ? std::cv_status::no_timeout
                                                        : std::cv_status::timeout;
    }
    /* The predicate's value on return: false only if it was still false
     * when the time ran out. */
    template <class Rep, class Period, class Predicate>
    bool wait_for(std::unique_lock<mutex> &lk, const std::chrono::duration<Rep, Period> &d,
                  Predicate pred)
    {
        park_time_t deadline = detail::deadline_after(d);
        while (!pred())
            if (!wait_park(lk, deadline))
                return pred();
        return true;
    }

    /* As wait_for, until the clock shows t (any clock; see the top): a
     * wait on another clock that ends before that clock shows t reports
     * no_timeout, which callers treat as a spurious wake-up. */
    template <class Clock, class Duration>
    std::cv_status wait_until(std::unique_lock<mutex> &lk,
                              const std::chrono::time_point<Clock, Duration> &t)
    {
        if constexpr (detail::is_park_clock<Clock>) {
            return wait_park(lk, static_cast<park_time_t>(detail::ceil_ns(t.time_since_epoch())))
                       ? std::cv_status::no_timeout
                       : std::cv_status::timeout;
        } else {
            auto now = Clock::now();
            wait_park(lk, t > now ? detail::deadline_after(t - now) : 0);
            return Clock::now() < t ? std::cv_status::no_timeout : std::cv_status::timeout;
        }
    }
    template <class Clock, class Duration, class Predicate>
    bool wait_until(std::unique_lock<mutex> &lk, const std::chrono::time_point<Clock, Duration> &t,
                    Predicate pred)
    {
        while (!pred())
            if (wait_until(lk, t) == std::cv_status::timeout)
                return pred();
        return true;
    }

    [[nodiscard]] native_handle_type native_handle() noexcept
    {
        return &c_;
    }

  private:
    /* true: woken; false: the deadline passed. */
    bool wait_park(std::unique_lock<mutex> &lk, park_time_t deadline) noexcept
    {
        return park_cond_wait_until(&c_, lk.mutex()->native_handle(), deadline) == 0;
    }

    park_cond_t c_;
};

/* ---- latch and barrier ----------------------------------------------------- */

/* std::latch's interface on park_latch_t (park/barrier.h): counts down
 * once; waiters pass for good once the count is zero. Plus timed waits
 * and, with coroutines, co_await latch.wait_async(pool). Constant-
 * initialised, trivially destructible, neither copyable nor movable.
 * Every count_down happens before every wait that returns because the
 * count reached zero. */
class latch
{
  public:
    using native_handle_type = park_latch_t *;

    [[nodiscard]] static constexpr std::ptrdiff_t max() noexcept
    {
        return PARK_LATCH_MAX;
    }

    /* `expected` to go, 0 to max(): outside, std::system_error (EINVAL),
     * or no constant in a constant expression. */
    constexpr explicit latch(std::ptrdiff_t expected) : l_(make(expected))
    {
    }
    latch(const latch &) = delete;
    latch &operator=(const latch &) = delete;

    /* Counts down by update (0 counts nothing); the count_down that
     * reaches zero releases every waiter. More than the count left, or
     * below 0: std::system_error (EINVAL), nothing counted (the standard
     * leaves these undefined). Never blocks. Release ordering. */
    void count_down(std::ptrdiff_t update = 1)
    {
        detail::check(PARK__LIKELY(update >= 0 && update <= max())
                          ? park_latch_count_down(&l_, static_cast<std::uint32_t>(update))
                          : EINVAL,
                      "park::latch::count_down");
    }

    /* True if the count is zero (then acquire ordering). Never blocks. */
    [[nodiscard]] bool try_wait() const noexcept
    {
        return park_latch_try_wait(&l_);
    }

    /* Blocks until the count is zero. Acquire ordering. */
    void wait() const noexcept
    {
        park_latch_wait(&l_);
    }

    /* As wait, giving up after d (or when the clock shows t): false if
     * the count was not zero in time. */
    template <class Rep, class Period>
    [[nodiscard]] bool try_wait_for(const std::chrono::duration<Rep, Period> &d) const
    {
        return park_latch_wait_until(&l_, detail::deadline_after(d)) == 0;
    }
    template <class Clock, class Duration>
    [[nodiscard]] bool try_wait_until(const std::chrono::time_point<Clock, Duration> &t) const
    {
        return detail::until(
            t, [this](park_time_t deadline) { return park_latch_wait_until(&l_, deadline) == 0; });
    }

    /* count_down(update), then wait(). Errors as count_down. */
    void arrive_and_wait(std::ptrdiff_t update = 1)
    {
        detail::check(PARK__LIKELY(update >= 0 && update <= max())
                          ? park_latch_arrive_and_wait(&l_, static_cast<std::uint32_t>(update))
                          : EINVAL,
                      "park::latch::arrive_and_wait");
    }

    [[nodiscard]] native_handle_type native_handle() noexcept
    {
        return &l_;
    }

#if PARK_HAS_COROUTINES
    /* co_await latch.wait_async(pool): passes at once on a released latch;
     * otherwise the coroutine waits in the latch's queue and resumes on
     * `pool` once the count is zero. */
    [[nodiscard]] detail::latch_awaiter wait_async(pool_ref pool) noexcept;
#endif

  private:
    /* Mirrors PARK_LATCH_INIT, whose compile-time check needs a constant. */
    static constexpr park_latch_t make(std::ptrdiff_t expected)
    {
        if (expected < 0 || expected > max())
            detail::raise(EINVAL, "park::latch");
        return park_latch_t{static_cast<std::uint32_t>(expected)};
    }

    mutable park_latch_t l_; /* waits change nothing the caller sees */
};

namespace detail
{
/* std::barrier's default completion: nothing to run. */
struct no_completion {
    void operator()() const noexcept
    {
    }
};
} // namespace detail

template <class CompletionFunction = detail::no_completion> class barrier;

namespace detail
{

/* A barrier's arrival (a task that completes when its phase ends). */
class barrier_token
{
  public:
    barrier_token(barrier_token &&o) noexcept : t_(std::exchange(o.t_, nullptr))
    {
    }
    barrier_token &operator=(barrier_token &&o) noexcept
    {
        std::swap(t_, o.t_);
        return *this;
    }
    ~barrier_token()
    {
        if (t_)
            park_task_release(t_); /* stops waiting; the arrival stays counted */
    }

  private:
    template <class> friend class park::barrier;
    explicit barrier_token(park_task_t *t) noexcept : t_(t)
    {
    }
    park_task_t *t_;
};
} // namespace detail

/* std::barrier's interface on park_barrier_t (park/barrier.h): a phase
 * ends when `expected` arrivals have arrived; then completion() runs once,
 * on the thread whose arrival ended the phase, before anyone is released,
 * and the next phase begins. Constant-initialised (with a constexpr
 * completion), neither copyable nor movable. Every arrival of a phase
 * happens before its completion, which happens before every return from
 * that phase's waits. */
template <class CompletionFunction> class barrier
{
    static_assert(std::is_nothrow_invocable_v<CompletionFunction &>,
                  "park::barrier: the completion must be invocable with no arguments, noexcept");
    static constexpr bool runs_completion =
        !std::is_same_v<CompletionFunction, detail::no_completion>;

  public:
    using arrival_token = detail::barrier_token;
    using native_handle_type = park_barrier_t *;

    [[nodiscard]] static constexpr std::ptrdiff_t max() noexcept
    {
        return PARK_BARRIER_MAX;
    }

    /* `expected` arrivals per phase, 1 to max() (the standard allows 0,
     * park does not): outside, std::system_error (EINVAL), or no constant
     * in a constant expression. */
    constexpr explicit barrier(std::ptrdiff_t expected, CompletionFunction f = CompletionFunction())
        : b_(make(expected, runs_completion ? &complete : nullptr,
                  runs_completion ? this : nullptr)),
          f_(std::move(f))
    {
    }
    barrier(const barrier &) = delete;
    barrier &operator=(const barrier &) = delete;

    /* Arrives `update` times (1 to the arrivals the phase still expects)
     * without waiting; wait(std::move(token)) waits for that phase to end.
     * Each call allocates one task (from a per-thread cache): std::bad_alloc
     * if that fails. Never blocks but for the completion function. */
    [[nodiscard]] arrival_token arrive(std::ptrdiff_t update = 1)
    {
        if (PARK__UNLIKELY(update < 1 || update > max()))
            detail::raise(EINVAL, "park::barrier::arrive");
        for (;;) {
            park_task_t *t = park_barrier_arrive_and_wait_async(&b_, nullptr);
            if (PARK__UNLIKELY(!t))
                detail::raise(ENOMEM, "park::barrier::arrive");
            if (--update == 0)
                return arrival_token(t);
            park_task_release(t); /* an arrival nobody waits for */
        }
    }

    /* Blocks until the phase of `arrival` has ended. */
    void wait(arrival_token &&arrival) const
    {
        arrival_token mine(std::move(arrival));
        (void)park_task_wait(mine.t_, nullptr);
    }

    /* Arrives and blocks until the phase ends (no allocation). */
    void arrive_and_wait() noexcept
    {
        (void)park_barrier_arrive_and_wait(&b_);
    }

    /* Arrives and leaves: later phases expect one arrival fewer. Never
     * blocks but for the completion function. */
    void arrive_and_drop() noexcept
    {
        (void)park_barrier_arrive_and_drop(&b_);
    }

    [[nodiscard]] native_handle_type native_handle() noexcept
    {
        return &b_;
    }

#if PARK_HAS_COROUTINES
    /* co_await barrier.arrive_and_wait_async(pool): arrives (when
     * awaited), then the coroutine waits for the phase to end and resumes
     * on `pool` (the arrival that ends the phase runs the completion and
     * continues without suspending). */
    [[nodiscard]] detail::barrier_awaiter arrive_and_wait_async(pool_ref pool) noexcept;
#endif

  private:
    static void complete(void *arg) noexcept
    {
        std::invoke(static_cast<barrier *>(arg)->f_);
    }

    /* Mirrors PARK_BARRIER_INIT, whose compile-time check needs a constant. */
    static constexpr park_barrier_t make(std::ptrdiff_t expected, park_barrier_fn fn, void *arg)
    {
        if (expected < 1 || expected > max())
            detail::raise(EINVAL, "park::barrier");
        auto count = static_cast<std::uint64_t>(expected);
        return park_barrier_t{count * (1ull + (1ull << PARK__BARRIER_EXPECTED_SHIFT)), fn, arg};
    }

    park_barrier_t b_;
    CompletionFunction f_;
};

/* ---- call_once ------------------------------------------------------------ */

/* std::once_flag on park_once_t (park/lazy.h): 4 bytes, constant-
 * initialised, neither copyable nor movable. */
class once_flag
{
  public:
    constexpr once_flag() noexcept : o_{}
    {
    }
    once_flag(const once_flag &) = delete;
    once_flag &operator=(const once_flag &) = delete;

    [[nodiscard]] park_once_t *native_handle() noexcept
    {
        return &o_;
    }

  private:
    park_once_t o_;
};

/* std::call_once: runs f(args...) unless a call on `flag` has returned
 * normally; callers that arrive while it runs wait for it (no spinning).
 * An exception from f propagates to this caller and leaves the flag
 * unset: one of the waiting callers then runs its own f (as
 * std::call_once). Once done: one acquire load, inlined. A call on the
 * same flag from inside f throws std::system_error (EDEADLK) instead of
 * waiting for itself. The completed call happens before every return. */
template <class F, class... Args> inline void call_once(once_flag &flag, F &&f, Args &&...args)
{
    using call_t = std::tuple<F &&, Args &&...>;
    struct run_t {
        call_t call;
        std::exception_ptr error;
        static int run(void *arg) noexcept
        {
            auto *self = static_cast<run_t *>(arg);
            PARK__TRY
            {
                std::apply(
                    [](auto &&fn, auto &&...a) {
                        std::invoke(std::forward<decltype(fn)>(fn),
                                    std::forward<decltype(a)>(a)...);
                    },
                    std::move(self->call));
                return 0;
            }
            PARK__CATCH_ALL
            {
                self->error = std::current_exception();
                return exception_code;
            }
        }
    };
    run_t r{call_t(std::forward<F>(f), std::forward<Args>(args)...), nullptr};
    for (;;) {
        int err = park_once(flag.native_handle(), &run_t::run, &r);
        if (PARK__LIKELY(err == 0))
            return;
        if (r.error)
            std::rethrow_exception(r.error);
        if (err != exception_code)
            detail::raise(err, "park::call_once");
        /* The run this call waited for threw: try again, perhaps running f. */
    }
}

/* ---- lazy ------------------------------------------------------------------ */

namespace detail
{
/* The exception a failed run of a lazy threw, for the thread that ran it
 * (and the lazy it was for). */
struct lazy_failure {
    const void *lazy = nullptr;
    std::exception_ptr error;
};
inline lazy_failure &lazy_thrown() noexcept
{
    static thread_local lazy_failure f;
    return f;
}
} // namespace detail

/* A value made once on first use, on park_lazy_t (park/lazy.h), by a
 * factory of one of two kinds:
 *   T f()                         fails by throwing;
 *   int f(std::optional<T> &out)  emplaces the value and returns 0, or
 *                                 fails by returning an errno value.
 * One run at a time, on the thread of the caller that starts it; callers
 * that arrive meanwhile wait (no spinning) and get that run's value or
 * its failure. A failure is not kept: the next call runs the factory
 * again. After a success, get() is one acquire load and a branch.
 *
 *   static park::lazy config{[] { return load_config("/etc/app.conf"); }};
 *   const Config &c = config.get();
 *
 * The factory runs under no lock of the lazy's; a get() on the same lazy
 * from inside it fails with EDEADLK. Not copyable or movable. The value
 * is destroyed with the lazy. The successful run happens before every
 * return of its value. */
template <class T, class Factory = T (*)()> class lazy
{
    static constexpr bool by_code = std::is_invocable_r_v<int, Factory &, std::optional<T> &>;
    static_assert(by_code || std::is_invocable_r_v<T, Factory &>,
                  "park::lazy: the factory must be T() (T movable) or int(std::optional<T> &)");

  public:
    constexpr explicit lazy(Factory f) noexcept(std::is_nothrow_move_constructible_v<Factory>)
        : l_ PARK_LAZY_INIT(&run, this), f_(std::move(f))
    {
    }
    lazy(const lazy &) = delete;
    lazy &operator=(const lazy &) = delete;

    /* The value, running the factory first if no run has succeeded (or
     * waiting for the run in progress). Rethrows what the factory threw
     * (the waiters of that run get the exception too), or throws
     * std::system_error with the factory's error code, or with EDEADLK
     * from inside the factory. */
    T &get()
    {
        void *v;
        int err = park_lazy_get(&l_, &v);
        if (PARK__LIKELY(err == 0))
            return *static_cast<T *>(v);
        return get_failed(err);
    }

    /* The value, or nullptr with ec set to the failure's code (the
     * factory's error code, or EDEADLK); an exception from the factory
     * propagates as from get(). */
    [[nodiscard]] T *get(std::error_code &ec)
    {
        void *v;
        int err = park_lazy_get(&l_, &v);
        if (PARK__LIKELY(err == 0)) {
            ec.clear();
            return static_cast<T *>(v);
        }
        if (err == exception_code)
            return &get_failed(err);
        ec.assign(err, std::generic_category());
        return nullptr;
    }

    /* True once a run has succeeded (then get() does not block). */
    [[nodiscard]] bool ready() const noexcept
    {
        return park_lazy_ready(&l_);
    }

    [[nodiscard]] park_lazy_t *native_handle() noexcept
    {
        return &l_;
    }

  private:
    static int run(void *arg, void **value) noexcept
    {
        auto *self = static_cast<lazy *>(arg);
        PARK__TRY
        {
            int err = 0;
            if constexpr (by_code) {
                err = std::invoke(self->f_, self->value_);
                if (err == 0 && !self->value_)
                    err = EINVAL; /* the factory "succeeded" without a value */
                else if (err != 0)
                    self->value_.reset();
            } else {
                self->value_.emplace(std::invoke(self->f_));
            }
            if (err != 0)
                return err;
            *value = &*self->value_;
            lock_guard<mutex> hold(self->error_lock_);
            self->error_.reset(); /* no failure to report any more */
            return 0;
        }
        PARK__CATCH_ALL
        {
            self->value_.reset();
            std::exception_ptr e = std::current_exception();
            detail::lazy_thrown() = {self, e};
            lock_guard<mutex> hold(self->error_lock_);
            self->error_ = std::move(e);
            return exception_code;
        }
    }

    /* The slow end of a failed get: rethrow what this thread's run threw,
     * or what the run waited for threw, or retry if that is gone. */
    [[gnu::noinline]] T &get_failed(int err)
    {
        if (err != exception_code)
            detail::raise(err, "park::lazy::get");
        detail::lazy_failure mine = std::exchange(detail::lazy_thrown(), {});
        if (mine.lazy == this && mine.error)
            std::rethrow_exception(mine.error);
        std::exception_ptr theirs;
        {
            lock_guard<mutex> hold(error_lock_);
            if (error_)
                theirs = *error_;
        }
        if (theirs)
            std::rethrow_exception(theirs);
        return get();
    }

    park_lazy_t l_;
    Factory f_;
    std::optional<T> value_;
    mutex error_lock_;
    /* The last failed run's exception (optional: constexpr-constructible). */
    std::optional<std::exception_ptr> error_ PARK_GUARDED_BY(error_lock_);
};

template <class F> lazy(F) -> lazy<std::invoke_result_t<F &>, F>;

/* ---- coroutines ------------------------------------------------------------ */
#if PARK_HAS_COROUTINES
/* Awaiting a park acquisition (scoped_lock_async, scoped_lock_shared_async,
 * acquire_async, try_acquire_*_async), a park::task, park::when_all or
 * pool.schedule():
 *   - an acquisition that succeeds at once does not suspend;
 *   - otherwise the coroutine suspends and is resumed by a continuation on
 *     the pool (park_task_then), never on the thread that unlocked,
 *     released or completed;
 *   - a failure ends the await with an exception: std::system_error whose
 *     code() is std::errc::operation_canceled (ECANCELED: the acquisition
 *     or task was cancelled, e.g. by task::cancel), std::errc::timed_out
 *     (a deadline armed on the task passed), std::errc::broken_pipe
 *     (EPIPE: the pool is shutting down: a pending acquisition is then
 *     cancelled, and one granted before the cancel is kept and returned),
 *     or std::bad_alloc;
 *   - a coroutine must not be destroyed while it is suspended in such an
 *     await (the pool would resume it).
 * The acquired hold or permit belongs to the coroutine from the resumption
 * on: it may be released on any thread. */
namespace detail
{

inline void resume_handle(park_task_t *, void *h) noexcept
{
    std::coroutine_handle<>::from_address(h).resume();
}

struct task_promise_core;
template <class P> inline void note_pool(std::coroutine_handle<P> h, park_pool_t *pool) noexcept;

/* An acquisition's task, awaited: the common part of the lock, shared
 * lock and semaphore awaiters. */
class acquisition
{
  public:
    acquisition(const acquisition &) = delete;
    acquisition &operator=(const acquisition &) = delete;
    ~acquisition()
    {
        if (t_)
            park_task_release(t_);
    }
    template <class P> bool await_suspend(std::coroutine_handle<P> h) noexcept
    {
        note_pool(h, pool_);
        int err = park_task_then(t_, pool_, &resume_handle, h.address());
        if (PARK__LIKELY(err == 0))
            return true; /* *this is the resumed coroutine's from here on */
        /* No continuation: give up the place in the queue, unless the
         * grant came first (then the task completes; keep what it got). */
        (void)park_task_cancel(t_);
        then_err_ = err;
        return false;
    }

  protected:
    explicit acquisition(park_pool_t *pool) noexcept : pool_(pool)
    {
    }
    /* Takes the acquisition task t: true if it has completed already. */
    bool start(park_task_t *t)
    {
        if (!t)
            raise(ENOMEM, "park: asynchronous acquisition");
        t_ = t;
        return park_task_done(t);
    }
    /* The acquisition's error (0: granted). */
    int outcome() const noexcept
    {
        int err = park_task_result(t_, nullptr);
        return err != 0 && then_err_ != 0 ? then_err_ : err;
    }

    park_task_t *t_ = nullptr;
    park_pool_t *pool_;
    int then_err_ = 0;
};

class mutex_lock_awaiter : public acquisition
{
  public:
    mutex_lock_awaiter(mutex &m, park_pool_t *pool) noexcept : acquisition(pool), m_(m)
    {
    }
    bool await_ready()
    {
        return park_mutex_try_lock(m_.native_handle()) ||
               start(park_mutex_lock_async(m_.native_handle(), pool_));
    }
    std::unique_lock<mutex> await_resume()
    {
        if (t_)
            check(outcome(), "park::mutex::scoped_lock_async");
        return std::unique_lock<mutex>(m_, std::adopt_lock);
    }

  private:
    mutex &m_;
};

class rw_write_awaiter : public acquisition
{
  public:
    rw_write_awaiter(shared_mutex &rw, park_pool_t *pool) noexcept : acquisition(pool), rw_(rw)
    {
    }
    bool await_ready()
    {
        return park_rwlock_try_write_lock(rw_.native_handle()) ||
               start(park_rwlock_write_lock_async(rw_.native_handle(), pool_));
    }
    std::unique_lock<shared_mutex> await_resume()
    {
        if (t_)
            check(outcome(), "park::shared_mutex::scoped_lock_async");
        return std::unique_lock<shared_mutex>(rw_, std::adopt_lock);
    }

  private:
    shared_mutex &rw_;
};

class rw_read_awaiter : public acquisition
{
  public:
    rw_read_awaiter(shared_mutex &rw, park_pool_t *pool) noexcept : acquisition(pool), rw_(rw)
    {
    }
    bool await_ready()
    {
        return park_rwlock_try_read_lock(rw_.native_handle()) ||
               start(park_rwlock_read_lock_async(rw_.native_handle(), pool_));
    }
    std::shared_lock<shared_mutex> await_resume()
    {
        if (t_)
            check(outcome(), "park::shared_mutex::scoped_lock_shared_async");
        return std::shared_lock<shared_mutex>(rw_, std::adopt_lock);
    }

  private:
    shared_mutex &rw_;
};

class sem_awaiter : public acquisition
{
  public:
    /* n permits; err: the request is invalid (reported by await_resume). */
    sem_awaiter(park_sem_t *s, park_pool_t *pool, std::uint32_t n, int err) noexcept
        : acquisition(pool), s_(s), n_(n), err_(err)
    {
    }
    bool await_ready()
    {
        if (err_ != 0 || n_ == 0)
            return true;
        if (n_ == 1)
            return park_sem_try_acquire(s_) || start(park_sem_acquire_async(s_, pool_));
        return park_sem_try_acquire_n(s_, n_) || start(park_sem_acquire_n_async(s_, n_, pool_));
    }
    void await_resume()
    {
        check(err_, "park::counting_semaphore::acquire_async");
        if (t_)
            check(outcome(), "park::counting_semaphore::acquire_async");
    }

  private:
    park_sem_t *s_;
    std::uint32_t n_;
    int err_;
};

class sem_timed_awaiter : public acquisition
{
  public:
    /* n permits; invalid: the request can never be met (await gives false). */
    sem_timed_awaiter(park_sem_t *s, park_pool_t *pool, std::uint32_t n, bool invalid,
                      park_time_t deadline) noexcept
        : acquisition(pool), s_(s), n_(n), invalid_(invalid), deadline_(deadline)
    {
    }
    bool await_ready()
    {
        if (invalid_ || n_ == 0)
            return true;
        if (n_ == 1)
            return park_sem_try_acquire(s_) ||
                   start(park_sem_acquire_async_until(s_, pool_, deadline_));
        return park_sem_try_acquire_n(s_, n_) ||
               start(park_sem_acquire_n_async_until(s_, n_, pool_, deadline_));
    }
    /* true: the permits are the caller's; false: they did not come in time. */
    bool await_resume()
    {
        if (!t_)
            return !invalid_;
        int err = outcome();
        if (err == ETIMEDOUT)
            return false;
        check(err, "park::counting_semaphore::try_acquire_async");
        return true;
    }

  private:
    park_sem_t *s_;
    std::uint32_t n_;
    bool invalid_;
    park_time_t deadline_;
};

/* co_await latch.wait_async(pool). */
class latch_awaiter : public acquisition
{
  public:
    latch_awaiter(park_latch_t *l, park_pool_t *pool) noexcept : acquisition(pool), l_(l)
    {
    }
    bool await_ready()
    {
        return park_latch_try_wait(l_) || start(park_latch_wait_async(l_, pool_));
    }
    void await_resume()
    {
        if (t_)
            check(outcome(), "park::latch::wait_async");
    }

  private:
    park_latch_t *l_;
};

/* co_await barrier.arrive_and_wait_async(pool): arrives when awaited. */
class barrier_awaiter : public acquisition
{
  public:
    barrier_awaiter(park_barrier_t *b, park_pool_t *pool) noexcept : acquisition(pool), b_(b)
    {
    }
    bool await_ready()
    {
        return start(park_barrier_arrive_and_wait_async(b_, pool_));
    }
    void await_resume()
    {
        check(outcome(), "park::barrier::arrive_and_wait_async");
    }

  private:
    park_barrier_t *b_;
};

} // namespace detail

inline detail::mutex_lock_awaiter mutex::scoped_lock_async(pool_ref pool) noexcept
{
    return detail::mutex_lock_awaiter(*this, pool.get());
}
inline detail::rw_write_awaiter shared_mutex::scoped_lock_async(pool_ref pool) noexcept
{
    return detail::rw_write_awaiter(*this, pool.get());
}
inline detail::rw_read_awaiter shared_mutex::scoped_lock_shared_async(pool_ref pool) noexcept
{
    return detail::rw_read_awaiter(*this, pool.get());
}
template <std::ptrdiff_t N>
inline detail::sem_awaiter counting_semaphore<N>::acquire_async(pool_ref pool,
                                                                std::ptrdiff_t n) noexcept
{
    bool invalid = n < 0 || n > max();
    return detail::sem_awaiter(&s_, pool.get(), invalid ? 0u : static_cast<std::uint32_t>(n),
                               invalid ? EINVAL : 0);
}
template <std::ptrdiff_t N>
template <class Rep, class Period>
inline detail::sem_timed_awaiter
counting_semaphore<N>::try_acquire_for_async(pool_ref pool, std::ptrdiff_t n,
                                             const std::chrono::duration<Rep, Period> &d)
{
    bool invalid = n < 0 || n > max();
    return detail::sem_timed_awaiter(&s_, pool.get(), invalid ? 0u : static_cast<std::uint32_t>(n),
                                     invalid, detail::deadline_after(d));
}
template <std::ptrdiff_t N>
template <class Clock, class Duration>
inline detail::sem_timed_awaiter
counting_semaphore<N>::try_acquire_until_async(pool_ref pool, std::ptrdiff_t n,
                                               const std::chrono::time_point<Clock, Duration> &t)
{
    park_time_t deadline;
    if constexpr (detail::is_park_clock<Clock>) {
        deadline = static_cast<park_time_t>(detail::ceil_ns(t.time_since_epoch()));
    } else {
        auto now = Clock::now();
        deadline = t > now ? detail::deadline_after(t - now) : 0;
    }
    bool invalid = n < 0 || n > max();
    return detail::sem_timed_awaiter(&s_, pool.get(), invalid ? 0u : static_cast<std::uint32_t>(n),
                                     invalid, deadline);
}
template <std::ptrdiff_t N>
template <class Rep, class Period>
inline detail::sem_timed_awaiter
counting_semaphore<N>::try_acquire_for_async(pool_ref pool,
                                             const std::chrono::duration<Rep, Period> &d)
{
    return try_acquire_for_async(pool, 1, d);
}
template <std::ptrdiff_t N>
template <class Clock, class Duration>
inline detail::sem_timed_awaiter
counting_semaphore<N>::try_acquire_until_async(pool_ref pool,
                                               const std::chrono::time_point<Clock, Duration> &t)
{
    return try_acquire_until_async(pool, 1, t);
}
inline detail::latch_awaiter latch::wait_async(pool_ref pool) noexcept
{
    return detail::latch_awaiter(&l_, pool.get());
}
template <class C>
inline detail::barrier_awaiter barrier<C>::arrive_and_wait_async(pool_ref pool) noexcept
{
    return detail::barrier_awaiter(&b_, pool.get());
}

class pool::schedule_awaiter
{
  public:
    explicit schedule_awaiter(park_pool_t *pool) noexcept : pool_(pool)
    {
    }
    bool await_ready() const noexcept
    {
        return false;
    }
    template <class P> bool await_suspend(std::coroutine_handle<P> h) noexcept
    {
        detail::note_pool(h, pool_);
        int err = park_pool_submit(pool_, &resume, h.address());
        if (PARK__LIKELY(err == 0))
            return true;
        err_ = err;
        return false;
    }
    void await_resume() const
    {
        detail::check(err_, "park::pool::schedule");
    }

  private:
    static void resume(void *h) noexcept
    {
        std::coroutine_handle<>::from_address(h).resume();
    }
    park_pool_t *pool_;
    int err_ = 0;
};

inline pool::schedule_awaiter pool::schedule() noexcept
{
    return schedule_awaiter(p_);
}

/* ---- task ------------------------------------------------------------------
 *
 * park::task<T>: the return type of a coroutine that produces a T (or
 * nothing: task<>), backed by a park_task_t that completes when the
 * coroutine returns (error 0) or throws (park::exception_code).
 *
 *   park::task<int> fetch(park::pool &p, park::mutex &m) {
 *       auto hold = co_await m.scoped_lock_async(p);
 *       co_return 42;
 *   }
 *
 * Eager: calling the coroutine runs it on the calling thread up to its
 * first suspension (a park await resumes it on the awaited pool). The
 * task object and the running coroutine share its frame, which goes when
 * both are done: dropping a task does not stop its coroutine (it runs to
 * the end unobserved).
 *
 * Awaiting a task (co_await t) gives its value (a T& for an lvalue task, a
 * T moved out of an rvalue one) or rethrows its exception. A pending task
 * resumes its awaiter on the pool of the worker that awaits, or, awaited
 * from a thread that is no pool's worker, on the pool the task last
 * suspended for; where neither is known (the task waits for an awaitable
 * of another library), the awaiting thread waits for it. get() and wait()
 * block instead (a worker runs other work meanwhile).
 *
 * cancel() completes the task's park_task_t with ECANCELED: its awaiters
 * and get() then throw std::system_error (operation_canceled), and the
 * coroutine itself runs on to its end, unobserved. */
template <class T = void> class task;

namespace detail
{

struct task_promise_core {
    park_task_t *done = park_task_new(); /* completed when the body ends */
    std::atomic<int> refs{2};            /* the task object and the coroutine */
    std::atomic<park_pool_t *> pool{nullptr};
    std::exception_ptr error;

    task_promise_core()
    {
        if (!done)
            raise(ENOMEM, "park::task");
    }
    ~task_promise_core()
    {
        park_task_release(done);
    }
    task_promise_core(const task_promise_core &) = delete;
    task_promise_core &operator=(const task_promise_core &) = delete;

    std::suspend_never initial_suspend() const noexcept
    {
        return {};
    }
    struct final_awaiter {
        bool await_ready() const noexcept
        {
            return false;
        }
        template <class P> void await_suspend(std::coroutine_handle<P> h) const noexcept
        {
            task_promise_core &p = h.promise();
            /* EALREADY if cancelled meanwhile: the result goes unobserved. */
            (void)park_task_complete(p.done, p.error ? exception_code : 0, nullptr);
            /* acq_rel: the last one out sees everything the other did. */
            if (p.refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
                h.destroy();
        }
        void await_resume() const noexcept
        {
        }
    };
    final_awaiter final_suspend() const noexcept
    {
        return {};
    }
    void unhandled_exception() noexcept
    {
        error = std::current_exception();
    }

    /* After done completed: the outcome, or an exception. */
    void rethrow_failure() const
    {
        int err = park_task_result(done, nullptr);
        if (err == exception_code && error)
            std::rethrow_exception(error);
        check(err, "park::task");
    }
};

template <class P> inline void note_pool(std::coroutine_handle<P> h, park_pool_t *pool) noexcept
{
    if constexpr (std::is_base_of_v<task_promise_core, P>)
        h.promise().pool.store(pool, std::memory_order_relaxed); /* a hint only */
    else
        (void)h;
}

template <class T> struct task_promise : task_promise_core {
    std::optional<T> value;
    task<T> get_return_object() noexcept;
    template <class U> void return_value(U &&v)
    {
        value.emplace(std::forward<U>(v));
    }
};
template <> struct task_promise<void> : task_promise_core {
    task<void> get_return_object() noexcept;
    void return_void() const noexcept
    {
    }
};

/* Resumes the awaiting coroutine h on a pool once `done` completes:
 * false if it could not (the caller then waits for done on its thread). */
template <class P>
inline bool resume_when_done(park_task_t *done, park_pool_t *task_pool, std::coroutine_handle<P> h)
{
    park_pool_t *p = park_pool_current();
    if (!p)
        p = task_pool;
    if (p) {
        note_pool(h, p);
        if (park_task_then(done, p, &resume_handle, h.address()) == 0)
            return true;
    }
    (void)park_task_wait(done, nullptr);
    return false;
}

/* A task's value as when_all returns it. */
template <class T> using value_of = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

} // namespace detail

template <class T> class [[nodiscard]] task
{
  public:
    using promise_type = detail::task_promise<T>;
    using value_type = T;

    task(task &&o) noexcept : h_(std::exchange(o.h_, nullptr))
    {
    }
    task &operator=(task &&o) noexcept
    {
        if (this != &o) {
            drop();
            h_ = std::exchange(o.h_, nullptr);
        }
        return *this;
    }
    ~task()
    {
        drop();
    }

    /* True once the coroutine has returned or thrown, or the task was
     * cancelled. Acquire ordering. Never blocks. */
    [[nodiscard]] bool done() const noexcept
    {
        return park_task_done(native_handle());
    }

    /* Blocks until done() (a worker runs other work meanwhile). */
    void wait() const noexcept
    {
        (void)park_task_wait(native_handle(), nullptr);
    }

    /* wait(), then the value (or the exception, or std::system_error if
     * cancelled). */
    decltype(auto) get() &
    {
        wait();
        return result();
    }
    decltype(auto) get() &&
    {
        wait();
        return std::move(*this).result();
    }

    /* Completes the task with ECANCELED if it is pending: true if this
     * call did. The coroutine is not stopped. Never blocks. */
    bool cancel() noexcept
    {
        return park_task_cancel(native_handle()) == 0;
    }

    /* The park_task_t (owned by the task: retain it to keep it longer). */
    [[nodiscard]] park_task_t *native_handle() const noexcept
    {
        return h_.promise().done;
    }

    template <bool Move> class awaiter
    {
      public:
        explicit awaiter(task &t) noexcept : t_(t)
        {
        }
        bool await_ready() const noexcept
        {
            return t_.done();
        }
        template <class P> bool await_suspend(std::coroutine_handle<P> h)
        {
            return detail::resume_when_done(
                t_.native_handle(), t_.h_.promise().pool.load(std::memory_order_relaxed), h);
        }
        decltype(auto) await_resume()
        {
            if constexpr (Move)
                return std::move(t_).result();
            else
                return t_.result();
        }

      private:
        task &t_;
    };
    awaiter<false> operator co_await() &noexcept
    {
        return awaiter<false>(*this);
    }
    awaiter<true> operator co_await() &&noexcept
    {
        return awaiter<true>(*this);
    }

  private:
    friend promise_type;
    template <class...> friend class when_all_awaiter;
    template <class> friend class when_all_range_awaiter;

    explicit task(std::coroutine_handle<promise_type> h) noexcept : h_(h)
    {
    }
    void drop() noexcept
    {
        if (h_ && h_.promise().refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
            h_.destroy();
        h_ = nullptr;
    }
    /* The outcome of a completed task. */
    std::add_lvalue_reference_t<T> result() &
    {
        auto &p = h_.promise();
        if (park_task_result(p.done, nullptr) != 0)
            p.rethrow_failure();
        if constexpr (!std::is_void_v<T>)
            return *p.value;
    }
    T result() &&
    {
        if constexpr (std::is_void_v<T>)
            result();
        else
            return std::move(result());
    }

    std::coroutine_handle<promise_type> h_;
};

namespace detail
{
template <class T> inline task<T> task_promise<T>::get_return_object() noexcept
{
    return task<T>(std::coroutine_handle<task_promise<T>>::from_promise(*this));
}
inline task<void> task_promise<void>::get_return_object() noexcept
{
    return task<void>(std::coroutine_handle<task_promise<void>>::from_promise(*this));
}
} // namespace detail

/* ---- when_all ---------------------------------------------------------------
 *
 * co_await park::when_all(pool, t1, t2, ...): waits until every task has
 * completed (park_task_when_all), resuming on `pool`, then gives their
 * values as a std::tuple (std::monostate for a task<void>), moved out of
 * the tasks, or rethrows the failure of the first failed task in argument
 * order. Takes the tasks (pass lvalues with std::move). The range form
 * takes a std::vector of tasks and gives a std::vector of values (nothing
 * for task<void>). */
template <class... Ts> class when_all_awaiter
{
  public:
    when_all_awaiter(park_pool_t *pool, task<Ts>... ts) : pool_(pool), ts_(std::move(ts)...)
    {
    }
    when_all_awaiter(const when_all_awaiter &) = delete;
    when_all_awaiter &operator=(const when_all_awaiter &) = delete;
    ~when_all_awaiter()
    {
        if (all_)
            park_task_release(all_);
    }
    bool await_ready()
    {
        constexpr std::size_t n = sizeof...(Ts);
        park_task_t *handles[n > 0 ? n : 1] = {};
        std::apply(
            [&](auto &...t) {
                std::size_t i = 0;
                ((handles[i++] = t.native_handle()), ...);
                (void)i;
            },
            ts_);
        all_ = park_task_when_all(pool_, handles, n);
        if (!all_)
            detail::raise(ENOMEM, "park::when_all");
        return park_task_done(all_);
    }
    template <class P> bool await_suspend(std::coroutine_handle<P> h)
    {
        return detail::resume_when_done(all_, pool_, h);
    }
    std::tuple<detail::value_of<Ts>...> await_resume()
    {
        std::apply([](auto &...t) { (check_one(t), ...); }, ts_);
        return std::apply(
            [](auto &...t) { return std::tuple<detail::value_of<Ts>...>(take(std::move(t))...); },
            ts_);
    }

  private:
    template <class T> static void check_one(task<T> &t)
    {
        if (park_task_result(t.native_handle(), nullptr) != 0)
            t.h_.promise().rethrow_failure();
    }
    template <class T> static detail::value_of<T> take(task<T> &&t)
    {
        if constexpr (std::is_void_v<T>)
            return std::monostate{};
        else
            return std::move(t).result();
    }

    park_pool_t *pool_;
    std::tuple<task<Ts>...> ts_;
    park_task_t *all_ = nullptr;
};

template <class T> class when_all_range_awaiter
{
  public:
    when_all_range_awaiter(park_pool_t *pool, std::vector<task<T>> ts)
        : pool_(pool), ts_(std::move(ts))
    {
    }
    when_all_range_awaiter(const when_all_range_awaiter &) = delete;
    when_all_range_awaiter &operator=(const when_all_range_awaiter &) = delete;
    ~when_all_range_awaiter()
    {
        if (all_)
            park_task_release(all_);
    }
    bool await_ready()
    {
        std::vector<park_task_t *> handles;
        handles.reserve(ts_.size());
        for (auto &t : ts_)
            handles.push_back(t.native_handle());
        all_ = park_task_when_all(pool_, handles.data(), handles.size());
        if (!all_)
            detail::raise(ENOMEM, "park::when_all");
        return park_task_done(all_);
    }
    template <class P> bool await_suspend(std::coroutine_handle<P> h)
    {
        return detail::resume_when_done(all_, pool_, h);
    }
    auto await_resume()
    {
        for (auto &t : ts_)
            if (park_task_result(t.native_handle(), nullptr) != 0)
                t.h_.promise().rethrow_failure();
        if constexpr (!std::is_void_v<T>) {
            std::vector<T> values;
            values.reserve(ts_.size());
            for (auto &t : ts_)
                values.push_back(std::move(t).result());
            return values;
        }
    }

  private:
    park_pool_t *pool_;
    std::vector<task<T>> ts_;
    park_task_t *all_ = nullptr;
};

template <class... Ts>
[[nodiscard]] inline when_all_awaiter<Ts...> when_all(pool_ref pool, task<Ts>... ts)
{
    return when_all_awaiter<Ts...>(pool.get(), std::move(ts)...);
}
template <class T>
[[nodiscard]] inline when_all_range_awaiter<T> when_all(pool_ref pool, std::vector<task<T>> ts)
{
    return when_all_range_awaiter<T>(pool.get(), std::move(ts));
}

#endif /* PARK_HAS_COROUTINES */

} // namespace park

#endif /* PARK_PARK_HPP */
