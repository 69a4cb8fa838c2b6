// benchmarks/main.cpp: park_bench, the comparative benchmark harness.
//
// Takes google-benchmark's flags. --benchmark_min_time (seconds) and
// --benchmark_repetitions set the budget of every row, windowed rows
// included (harness.h). Output names are `<family>/<scenario>/<contender>`
// plus `/threads:<T>` where the row has threads; see benchmarks/README.md.
// --benchmark_filter and --benchmark_list_tests work on those names.
#include "harness.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace
{

// The value of `--name=value` among args, or `fallback`. A bare `--name`
// reads as "true", as google-benchmark's own parser has it.
std::string flag(const std::vector<std::string> &args, const char *name, const char *fallback)
{
    std::string prefix = std::string("--") + name;
    std::string value = fallback;
    for (const std::string &a : args) {
        if (a == prefix)
            value = "true";
        else if (a.compare(0, prefix.size() + 1, prefix + "=") == 0)
            value = a.substr(prefix.size() + 1);
    }
    return value;
}

bool truthy(const std::string &v)
{
    return v == "true" || v == "yes" || v == "1" || v == "on" || v == "t" || v == "y";
}

// --benchmark_min_time in seconds: "0.2" (google-benchmark 1.7) or "0.2s"
// (1.8 and later); an iteration count ("100x") leaves the default.
double parse_min_time(const std::string &v, double fallback)
{
    char *end = nullptr;
    double s = std::strtod(v.c_str(), &end);
    if (end == v.c_str() || s <= 0 || (*end != '\0' && std::strcmp(end, "s") != 0))
        return fallback;
    return s;
}

// Forwards to a google-benchmark reporter, dropping the name parts
// google-benchmark adds to windowed rows (/iterations:1/manual_time) so
// that every row is named `<family>/<scenario>/<contender>[/threads:<T>]`,
// and reporting the T of `/threads:<T>` as the row's "threads" (the
// threads are the harness's, so google-benchmark itself counts one).
class Renaming : public benchmark::BenchmarkReporter
{
  public:
    explicit Renaming(std::unique_ptr<benchmark::BenchmarkReporter> inner)
        : inner_(std::move(inner))
    {
    }
    bool ReportContext(const Context &context) override
    {
        inner_->SetOutputStream(&GetOutputStream());
        inner_->SetErrorStream(&GetErrorStream());
        return inner_->ReportContext(context);
    }
    void ReportRuns(const std::vector<Run> &runs) override
    {
        std::vector<Run> renamed(runs);
        for (Run &r : renamed) {
            r.run_name.iterations.clear();
            r.run_name.time_type.clear();
            std::string::size_type at = r.run_name.function_name.rfind("/threads:");
            if (at != std::string::npos)
                r.threads = std::atoi(r.run_name.function_name.c_str() + at + 9);
        }
        inner_->ReportRuns(renamed);
    }
    void Finalize() override
    {
        inner_->Finalize();
    }

  private:
    std::unique_ptr<benchmark::BenchmarkReporter> inner_;
};

// The reporter google-benchmark would create for `format`, renamed; null
// (google-benchmark's default, names unchanged) for formats other than
// console and json.
std::unique_ptr<benchmark::BenchmarkReporter> reporter(const std::string &format,
                                                       benchmark::ConsoleReporter::OutputOptions o)
{
    std::unique_ptr<benchmark::BenchmarkReporter> inner;
    if (format == "console")
        inner = std::make_unique<benchmark::ConsoleReporter>(o);
    else if (format == "json")
        inner = std::make_unique<benchmark::JSONReporter>();
    else
        return nullptr;
    return std::make_unique<Renaming>(std::move(inner));
}

benchmark::ConsoleReporter::OutputOptions display_options(const std::vector<std::string> &args)
{
    std::string color = flag(args, "benchmark_color", "auto");
    bool use_color;
    if (color == "auto") {
        const char *term = std::getenv("TERM");
        use_color = isatty(STDOUT_FILENO) && term && std::strcmp(term, "dumb") != 0;
    } else {
        use_color = truthy(color);
    }
    int o = benchmark::ConsoleReporter::OO_None;
    if (use_color)
        o |= benchmark::ConsoleReporter::OO_Color;
    if (truthy(flag(args, "benchmark_counters_tabular", "false")))
        o |= benchmark::ConsoleReporter::OO_Tabular;
    return static_cast<benchmark::ConsoleReporter::OutputOptions>(o);
}

// A second thread that exists for the whole run and stays blocked: glibc
// takes single-threaded shortcuts (e.g. in pthread_mutex_lock) while a
// process has only one thread, which no server ever runs with.
class IdleThread
{
  public:
    IdleThread()
        : t_([this] {
              std::unique_lock<std::mutex> lk(m_);
              cv_.wait(lk, [this] { return quit_; });
          })
    {
    }
    ~IdleThread()
    {
        {
            std::lock_guard<std::mutex> lk(m_);
            quit_ = true;
        }
        cv_.notify_one();
        t_.join();
    }

  private:
    std::mutex m_;
    std::condition_variable cv_;
    bool quit_ = false;
    std::thread t_;
};

} // namespace

int main(int argc, char **argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);
    bench::set_min_time(parse_min_time(flag(args, "benchmark_min_time", ""), bench::min_time()));

    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;

    bench::set_filter(flag(args, "benchmark_filter", ""));
    bench::register_mutex();
    bench::register_sem();
    bench::register_rwlock();
    bench::register_lazy();
    bench::register_pool();
    bench::register_async();
    bench::register_chan();
    bench::register_cond();
    bench::register_event();
    bench::register_barrier();
    bench::register_sem_many();
    bench::register_cpp();
    bench::register_tail();
    if (truthy(flag(args, "benchmark_list_tests", "false"))) {
        for (const std::string &row : bench::list_rows())
            std::printf("%s\n", row.c_str());
        return 0;
    }
    bench::calibrate_ticks();

    auto display = reporter(flag(args, "benchmark_format", "console"), display_options(args));
    std::unique_ptr<benchmark::BenchmarkReporter> file;
    if (!flag(args, "benchmark_out", "").empty())
        file = reporter(flag(args, "benchmark_out_format", "json"),
                        benchmark::ConsoleReporter::OO_None);

    IdleThread idle;
    benchmark::RunSpecifiedBenchmarks(display.get(), file.get(), ".");
    benchmark::Shutdown();
    return 0;
}
