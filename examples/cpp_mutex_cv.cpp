/* cpp_mutex_cv: a bounded queue in C++ on park's mutex and condition
 * variable (park/park.hpp), written as it would be with std::mutex.
 *
 * Two producers push 1000 numbers each into a queue of at most 4 items;
 * two consumers pop them. `not_full` and `not_empty` are
 * park::condition_variable, waited on with std::unique_lock<park::mutex>
 * and a predicate; the totals are counted under a second mutex, locked
 * together with the first by std::scoped_lock (deadlock-free in any
 * order). Exits 0 if every number arrived exactly once, 1 otherwise. */
#include <park/park.hpp>

#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

constexpr int producers = 2, consumers = 2, per_producer = 1000, capacity = 4;

class bounded_queue
{
  public:
    void push(int v)
    {
        std::unique_lock<park::mutex> lk(m_);
        not_full_.wait(lk, [&] { return items_.size() < capacity; });
        items_.push_back(v);
        not_empty_.notify_one();
    }
    /* false once closed and drained. */
    bool pop(int &v)
    {
        std::unique_lock<park::mutex> lk(m_);
        not_empty_.wait(lk, [&] { return !items_.empty() || closed_; });
        if (items_.empty())
            return false;
        v = items_.front();
        items_.pop_front();
        not_full_.notify_one();
        return true;
    }
    void close()
    {
        std::lock_guard<park::mutex> hold(m_);
        closed_ = true;
        not_empty_.notify_all();
    }
    park::mutex &mutex()
    {
        return m_;
    }

  private:
    park::mutex m_;
    park::condition_variable not_full_, not_empty_;
    std::deque<int> items_; /* under m_ */
    bool closed_ = false;   /* under m_ */
};

int main()
{
    bounded_queue q;
    park::mutex totals_lock;
    std::vector<int> seen(producers * per_producer); /* under totals_lock */
    long sum = 0;                                    /* under totals_lock */

    std::vector<std::thread> consumer_threads;
    for (int c = 0; c < consumers; c++)
        consumer_threads.emplace_back([&] {
            int v = 0;
            while (q.pop(v)) {
                std::lock_guard<park::mutex> hold(totals_lock);
                seen[v]++;
                sum += v;
            }
        });
    std::vector<std::thread> producer_threads;
    for (int p = 0; p < producers; p++)
        producer_threads.emplace_back([&, p] {
            for (int i = 0; i < per_producer; i++)
                q.push(p * per_producer + i);
        });
    for (auto &t : producer_threads)
        t.join();
    q.close();
    for (auto &t : consumer_threads)
        t.join();

    /* Both locks at once: std::scoped_lock takes them in an order that
     * cannot deadlock, whatever order other threads use. */
    std::scoped_lock both(totals_lock, q.mutex());
    const long n = producers * per_producer;
    bool ok = sum == n * (n - 1) / 2;
    for (int count : seen)
        ok = ok && count == 1;
    std::printf("%ld numbers through a queue of %d: sum %ld, %s\n", n, capacity, sum,
                ok ? "each exactly once" : "FAILED");
    return ok ? 0 : 1;
}
