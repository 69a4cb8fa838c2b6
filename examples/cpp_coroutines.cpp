/* cpp_coroutines: C++20 coroutines that lock a park::mutex without
 * blocking a thread (park/park.hpp).
 *
 * Eight park::task coroutines on a pool of two workers each add to a
 * shared total 1000 times, holding the mutex from the read to the write
 * (co_await m.scoped_lock_async(pool) returns a std::unique_lock). A
 * waiting coroutine occupies no thread: it sits in the mutex's queue and
 * is resumed on the pool when the lock is handed to it. park::when_all
 * collects how many additions each made. Exits 0 if the total is exact. */
#include <park/park.hpp>

#include <cstdio>
#include <mutex>
#include <vector>

constexpr int coroutines = 8, additions = 1000;

static park::task<int> add_many(park::pool &pool, park::mutex &m, long &total)
{
    co_await pool.schedule(); /* from here on, on a worker */
    int done = 0;
    for (int i = 0; i < additions; i++) {
        std::unique_lock<park::mutex> hold = co_await m.scoped_lock_async(pool);
        long read = total;
        total = read + 1;
        done++;
    } /* each hold unlocks at the end of its iteration, on whichever worker */
    co_return done;
}

static park::task<int> run_all(park::pool &pool, park::mutex &m, long &total)
{
    std::vector<park::task<int>> tasks;
    for (int i = 0; i < coroutines; i++)
        tasks.push_back(add_many(pool, m, total));
    int sum = 0;
    for (int done : co_await park::when_all(pool, std::move(tasks)))
        sum += done;
    co_return sum;
}

int main()
{
    park::pool pool(2);
    park::mutex m;
    long total = 0; /* under m */
    int reported = run_all(pool, m, total).get();
    std::lock_guard<park::mutex> hold(m);
    bool ok = total == long(coroutines) * additions && reported == coroutines * additions;
    std::printf("%d coroutines x %d additions on 2 workers: total %ld, %s\n", coroutines, additions,
                total, ok ? "exact" : "FAILED");
    return ok ? 0 : 1;
}
