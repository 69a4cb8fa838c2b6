// benchmarks/harness.cpp: budget, clock, windows and counters (harness.h).
#include "harness.h"

#include <regex.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace bench
{

namespace
{
double g_min_time = 0.5; // google-benchmark's own default
double g_ns_per_tick = 1.0;

struct Filter {
    bool all = true;
    bool negate = false;
    regex_t re;
    std::vector<std::string> rows;
};
Filter g_filter;
} // namespace

void set_filter(const std::string &filter)
{
    if (filter.empty() || filter == "all")
        return;
    std::string pattern = filter;
    g_filter.negate = pattern[0] == '-';
    if (g_filter.negate)
        pattern.erase(0, 1);
    if (regcomp(&g_filter.re, pattern.c_str(), REG_EXTENDED | REG_NOSUB) != 0) {
        std::fprintf(stderr, "park_bench: bad --benchmark_filter regex: %s\n", pattern.c_str());
        std::exit(1);
    }
    g_filter.all = false;
}

bool select_row(const std::string &name)
{
    bool match = g_filter.all ||
                 (regexec(&g_filter.re, name.c_str(), 0, nullptr, 0) == 0) != g_filter.negate;
    if (match)
        g_filter.rows.push_back(name);
    return match;
}

const std::vector<std::string> &list_rows()
{
    return g_filter.rows;
}

double min_time()
{
    return g_min_time;
}

void set_min_time(double seconds)
{
    g_min_time = seconds;
}

void calibrate_ticks()
{
    using clock = std::chrono::steady_clock;
    clock::time_point t0 = clock::now();
    uint64_t c0 = ticks();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    clock::time_point t1 = clock::now();
    uint64_t c1 = ticks();
    double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
    if (c1 > c0)
        g_ns_per_tick = ns / static_cast<double>(c1 - c0);
}

double ticks_to_ns(uint64_t t)
{
    return static_cast<double>(t) * g_ns_per_tick;
}

uint64_t Histogram::quantile(double q) const
{
    if (n_ == 0)
        return 0;
    uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * n_)));
    uint64_t seen = 0;
    for (int b = 0; b < kBuckets; ++b) {
        seen += counts_[b];
        if (seen < rank)
            continue;
        if (b < kSub)
            return static_cast<uint64_t>(b);
        int e = b / kSub + kSubBits - 1;
        uint64_t width = uint64_t(1) << (e - kSubBits);
        uint64_t low = (uint64_t(1) << e) | (static_cast<uint64_t>(b % kSub) << (e - kSubBits));
        return low + width / 2;
    }
    return 0;
}

uint64_t WindowResult::total_ops() const
{
    uint64_t n = 0;
    for (const ThreadResult &t : threads)
        n += t.ops;
    return n;
}

void Window::start()
{
    std::unique_lock<std::mutex> lk(m_);
    if (++arrived_ == threads_)
        cv_.notify_all();
    cv_.wait(lk, [this] { return open_; });
    started_.fetch_add(1, std::memory_order_relaxed);
}

void Window::await_arrivals()
{
    std::unique_lock<std::mutex> lk(m_);
    cv_.wait(lk, [this] { return arrived_ == threads_; });
}

void Window::open()
{
    {
        std::lock_guard<std::mutex> lk(m_);
        open_ = true;
    }
    cv_.notify_all();
}

Snapshot snapshot()
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double now =
        std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                 1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    return Snapshot{now, cpu,
                    static_cast<uint64_t>(ru.ru_nvcsw) + static_cast<uint64_t>(ru.ru_nivcsw)};
}

void sleep_seconds(double s)
{
    std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

void set_time_per_op(benchmark::State &state, const WindowResult &r)
{
    uint64_t ops = std::max<uint64_t>(1, r.total_ops());
    state.SetIterationTime(r.seconds / static_cast<double>(ops));
}

namespace
{
void report_rate(benchmark::State &state, const WindowResult &r, uint64_t ops)
{
    double per_op = ops ? 1.0 / static_cast<double>(ops) : 0.0;
    state.counters["items_per_second"] = static_cast<double>(ops) / r.seconds;
    state.counters["csw_per_op"] = static_cast<double>(r.context_switches) * per_op;
    state.counters["cpu_ns_per_op"] = r.cpu_seconds * 1e9 * per_op;
}
} // namespace

void report_contended(benchmark::State &state, const WindowResult &r)
{
    uint64_t lo = UINT64_MAX, hi = 0, worst = 0;
    for (const ThreadResult &t : r.threads) {
        lo = std::min(lo, t.ops);
        hi = std::max(hi, t.ops);
        worst = std::max(worst, t.worst_wait_ticks);
    }
    report_rate(state, r, r.total_ops());
    state.counters["min_acq"] = static_cast<double>(lo);
    state.counters["max_acq"] = static_cast<double>(hi);
    state.counters["fairness"] = hi ? static_cast<double>(lo) / static_cast<double>(hi) : 0.0;
    state.counters["worst_wait_ns"] = ticks_to_ns(worst);
}

void report_throughput(benchmark::State &state, const WindowResult &r)
{
    report_rate(state, r, r.total_ops());
}

void report_handoff(benchmark::State &state, const WindowResult &r, const Histogram &h)
{
    report_rate(state, r, r.total_ops());
    state.counters["p50_ns"] = ticks_to_ns(h.quantile(0.50));
    state.counters["p99_ns"] = ticks_to_ns(h.quantile(0.99));
    state.counters["p999_ns"] = ticks_to_ns(h.quantile(0.999));
}

std::string row_name(const char *family, const char *scenario, const char *contender, int threads)
{
    std::string name = std::string(family) + "/" + scenario + "/" + contender;
    if (threads > 0)
        name += "/threads:" + std::to_string(threads);
    return name;
}

} // namespace bench
