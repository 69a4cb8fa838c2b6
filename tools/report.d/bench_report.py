"""tools/report's benchmark report: google-benchmark JSON of park_bench and
park-peers grouped into families and scenarios, written out as REPORT.md
(machine and build, summary, contention sweeps, one section per family).
The plots it links are drawn by bench_plots.py."""

import datetime
import glob
import os
import platform
import re

from common import (REPO, WARNINGS, contender_kind, fmt_num, fmt_time, geomean,
                    md_escape, table)
from dropin_report import dropin_section, write_dropin_report
from tail_report import FAMILY as TAIL, tail_section


# --------------------------------------------------------------------------
# What the rows hold: counters, and notes shown under headings

# Counters shown in this order; unknown ones follow in order of appearance.
KNOWN_COUNTERS = ["csw_per_op", "cpu_ns_per_op", "min_acq", "max_acq", "fairness",
                  "worst_wait_ns", "writer_worst_wait_ns", "reads", "writes", "p50_ns", "p99_ns", "p999_ns",
                  "workers", "spawn_ns", "wakeups", "idle_cpu_ns", "csw_per_s",
                  "capacity", "n1_p50_ns", "n1_p99_ns", "n32_p50_ns", "n32_p99_ns",
                  "n32_p999_ns", "n32_worst_ns", "n32_requests"]
COUNTER_TITLES = {
    "csw_per_op": "csw/op", "cpu_ns_per_op": "cpu/op",
    "min_acq": "min acq", "max_acq": "max acq",
    "fairness": "min/max",
    "worst_wait_ns": "worst wait", "writer_worst_wait_ns": "writer worst wait",
    "p50_ns": "p50", "p99_ns": "p99",
    "p999_ns": "p99.9",
    "spawn_ns": "spawn/join", "idle_cpu_ns": "CPU per idle s",
    "csw_per_s": "csw/s",
    "n1_p50_ns": "n=1 p50", "n1_p99_ns": "n=1 p99",
    "n32_p50_ns": "n=32 p50", "n32_p99_ns": "n=32 p99", "n32_p999_ns": "n=32 p99.9",
    "n32_worst_ns": "n=32 worst", "n32_requests": "n=32 reqs",
}
# Counters that count things (shown as integers).
COUNT_COUNTERS = {"min_acq", "max_acq", "workers", "wakeups", "capacity", "reads", "writes",
                  "n32_requests"}
# What time/op means where it is not the time of one operation; shown under
# the scenario's heading.
SCENARIO_NOTES = {
    ("pool", "fib30"): "time/op = one fib(30) with a join at every call with n >= 2 "
                       "(1346268 joins); serial rows are the plain recursion. *spawn/join* "
                       "= (time x workers - serial time) / joins.",
    ("pool", "fib35"): "time/op = one fib(35) with a join at every call with n >= 2 "
                       "(14930351 joins), one run per repetition; serial rows are the plain "
                       "recursion. *spawn/join* = (time x workers - serial time) / joins.",
    ("pool", "parallel_for"): "time/op = one pass over 10^7 items in 1024 chunks.",
    ("pool", "submit"): "ops/s = tasks submitted by the outside producers (threads) into a "
                        "2-worker pool and run, the drain after the window included.",
    ("pool", "wakeup"): "time/op = the median submit-to-run latency of one task into a "
                        "2-worker pool that has idled for 10 ms (the same as p50).",
    ("pool", "idle"): "time/op = CPU time of the whole process per second of idling, just "
                      "after some work (the same as *CPU per idle s*); the serial row has no "
                      "pool and shows what the process spends anyway.",
}
for _prim, _what in (("sem", "a semaphore of 1 permit"), ("mutex", "a mutex"),
                    ("rwlock_read", "a rwlock's read hold"),
                    ("rwlock_write", "a rwlock's write hold")):
    SCENARIO_NOTES[("async", _prim + "_uncontended")] = (
        "time/op = one acquisition of %s by one thread, waited for, and its release: "
        "park waits for the task its async acquisition returns (uncontended: a shared, "
        "already completed one), park_blocking is the blocking acquisition, %srust_tokio "
        "`.await` in `block_on` of a 2-worker runtime."
        % (_what, "" if _prim.startswith("rwlock") else
           "mutex_fifo the textbook async semaphore (a task per acquisition), "))
    SCENARIO_NOTES[("async", _prim + "_contended")] = (
        "ops/s = critical sections run per second on %s: each producer thread (threads) "
        "issues batches of 64 acquisitions and waits for them; each critical section "
        "runs on a 2-worker pool (park: the task's continuation; park_blocking: the "
        "producer waits for the grant, then submits it; rust_tokio: a spawned task "
        "that awaits the acquisition) and releases." % _what)
    SCENARIO_NOTES[("async", _prim + "_loop")] = (
        "time/op = one round on %s, of all loops together: N loops (threads) on a "
        "2-worker pool, no producer thread; each acquires, runs the critical section "
        "holding it, releases and acquires again (park: in the task's continuation, "
        "park_task_then; rust_tokio: a spawned task looping `.await`)." % _what)
del _prim, _what
for _cap in (1, 64, 1024):
    SCENARIO_NOTES[("chan", "spsc_cap%d" % _cap)] = (
        "ops/s = items through a channel of capacity %d from 1 producer to 1 consumer "
        "thread, the drain after the window included; *capacity* is what the contender "
        "holds (ck_ring: one less than its power-of-two size)." % _cap)
    SCENARIO_NOTES[("chan", "mpmc_cap%d" % _cap)] = (
        "ops/s = items through a channel of capacity %d, threads / 2 producers and "
        "threads / 2 consumers (8 threads oversubscribe 2 cores), the drain after the "
        "window included." % _cap)
del _cap
SCENARIO_NOTES.update({
    ("cond", "pingpong"): "time/op = one round trip between two threads through one mutex and "
                          "one condition variable: each flips a turn flag under the mutex, "
                          "signals, and waits in a loop until the turn is its own again (two "
                          "wake-ups); p50/p99/p99.9 of the round trip.",
    ("cond", "broadcast"): "time/op = one round: a thread bumps a generation under the mutex "
                           "and broadcasts; 8 waiters (threads) wait for it and each "
                           "acknowledges under the mutex, the last signalling the broadcaster; "
                           "p50/p99/p99.9 of a round.",
    ("event", "uncontended"): "time/op = a set with nobody waiting and the wait that consumes "
                              "it, by one thread.",
    ("event", "pingpong"): "time/op = one round trip through two auto-reset events: A sets X "
                           "and waits on Y, B waits on X and sets Y (two wake-ups; rust_tokio: "
                           "two tasks on a 2-worker runtime, a task hand-off with no thread "
                           "going to sleep).",
    ("barrier", "rounds"): "time/op = one round (phase) of arrive_and_wait by every thread; "
                           "p50/p99/p99.9 of the time between thread 0's returns.",
    ("barrier", "tasks"): "time/op = one round (phase) of T tasks on a pool (runtime) of T "
                          "workers, no thread blocking: park's task arrives with "
                          "park_barrier_arrive_and_wait_async and its continuation arrives at "
                          "the next round; rust_tokio's task loops on `wait().await`. "
                          "p50/p99/p99.9 of the time between task 0's returns.",
    ("cpp", "mutex_uncontended"): "time/op = one lock + unlock of a mutex by one thread.",
    ("cpp", "shared_uncontended"): "time/op = one shared lock + unlock by one thread.",
    ("cpp", "sem_uncontended"): "time/op = one acquire + release of a one-permit semaphore "
                                "by one thread.",
    ("cpp", "mutex_contended"): "ops/s = lock, update two shared cache lines, unlock, local "
                                "work, by 2 threads (mutex/contended's loop).",
    ("sem_many", "mix"): "ops/s = requests per second: 4 threads share 32 permits, each "
                         "request takes 1 (95 %) or all 32 (5 %), holds them for 200 LCG "
                         "rounds and releases them. *n=1 p99* is what a waiting large "
                         "request costs the small ones, *n=32 worst* what passing small "
                         "ones cost the large one.",
})
# Counters of a scenario whose park / contender ratios get a table of their
# own under the scenario's detail table (below 1.00 = park waits less).
WAIT_RATIOS = {
    ("sem_many", "mix"): ["n1_p99_ns", "n32_worst_ns"],
}
# The contender whose ratios a family's tables show: park, except where a
# family sets park's own variants beside each other (cpp: the C++ wrappers,
# park_cpp, beside the C calls they stand for, park_c).
REFERENCE = {"cpp": "park_cpp"}
# Goals of a family held against one other contender: (that contender, the
# most the reference's time per op may be as a multiple of it, the goal in
# words); the family's section opens with a table of them.
GOALS = {"cpp": ("park_c", 1.02, "park.hpp's wrappers within 2 % of the C calls")}


def reference(family):
    return REFERENCE.get(family, "park")


# What a family measures and who its contenders are; shown under its heading.
FAMILY_NOTES = {
    "async": "Asynchronous acquisitions (a task that completes once the permit is its "
             "own) beside the blocking path of the same primitive (park_blocking), the "
             "textbook async semaphore on park's tasks (mutex_fifo: a count and a FIFO "
             "of tasks under a std::mutex) and tokio::sync (rust_tokio).",
    "chan": "Bounded channels of pointers: park_chan (blocking send and recv) beside a "
            "mutex + condition variable ring (condvar), tbb::concurrent_bounded_queue, "
            "ck_ring (non-blocking: spins with a pause while full or empty, the floor) "
            "and crossbeam-channel's bounded channel (rust_crossbeam).",
    "cond": "Condition variables on their mutex: park_cond_t on park_mutex_t beside "
            "pthread_cond_t on pthread_mutex_t, std::condition_variable on std::mutex, "
            "absl::CondVar on absl::Mutex and the Condvar of parking_lot and std::sync "
            "(rust_parking_lot, rust_std).",
    "event": "Auto-reset events: park_event_t beside the textbook event (pthread: a flag "
             "under a pthread mutex, waited for on a pthread condition variable) and "
             "tokio::sync::Notify (rust_tokio: notify_one / notified).",
    "barrier": "Reusable barriers: park_barrier_t beside pthread_barrier_t, std::barrier "
               "(std) and std::sync::Barrier (rust_std) for threads (rounds), and park's "
               "asynchronous arrival beside tokio::sync::Barrier (rust_tokio) for tasks "
               "(tasks).",
    "cpp": "park.hpp's C++ wrappers as C++ code uses them (park_cpp: park::mutex and "
           "park::shared_mutex through std::lock_guard and std::shared_lock, "
           "park::counting_semaphore's acquire and release) beside the C calls they stand "
           "for (park_c) and the std types they imitate (std: std::mutex, "
           "std::shared_mutex, std::counting_semaphore). Ratios here are park_cpp's. "
           "Wall-clock times on a small shared machine cannot resolve the 2 % goal; "
           "`tools/cpp-cost` counts the instructions of the same pairs exactly.",
    "sem_many": "Several permits of a semaphore at once: park_sem_acquire_n on a default "
                "(park) and a strictly FIFO (park_fifo) semaphore beside the textbook mutex "
                "+ condition variable semaphore (condvar: waits until n are free, every "
                "release wakes all) and tokio's Semaphore::acquire_many (rust_tokio, FIFO).",
}


# --------------------------------------------------------------------------
# Formatting

def fmt_rate(ops):
    if ops is None:
        return "—"
    for suffix, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if ops >= scale:
            return "%s %s/s" % (fmt_num(ops / scale), suffix)
    return "%s /s" % fmt_num(ops)


def fmt_count(v):
    if v is None:
        return "—"
    if float(v).is_integer() and abs(v) < 1e15:
        return "%d" % v
    return fmt_num(v)


def fmt_counter(name, v):
    if v is None:
        return "—"
    if name.endswith("_ns") or name.endswith("_ns_per_op"):
        return fmt_time(v)
    if name in COUNT_COUNTERS:
        return fmt_count(v)
    if name == "fairness":
        return "%.2f" % v if v >= 0.095 else "%.2g" % v
    return fmt_num(v)


def fmt_ratio(r):
    """park / other; bold when park is slower."""
    if r is None:
        return "—"
    s = "%.2f" % r if r >= 0.095 else "%.2g" % r
    return "**%s**" % s if r > 1.005 else s


def fmt_fairness(lo, hi):
    """min/max acquisitions per thread: 1.00 = perfectly fair."""
    if lo is None or not hi:
        return "—"
    return "%.2f" % (lo / hi) if lo / hi >= 0.095 else "%.2g" % (lo / hi)


def fmt_cv(cv):
    return "—" if cv is None else "±%.1f%%" % (100 * cv)


def thread_label(t):
    return "—" if t is None else str(t)


def ratio(park_row, other_row):
    if park_row is None or other_row is None:
        return None
    p, o = park_row.time_ns, other_row.time_ns
    if p is None or o is None:
        return None
    return p / o


# --------------------------------------------------------------------------
# Grouping

class Scenario:
    def __init__(self, family, name):
        self.family = family
        self.name = name
        self.rows = {}          # (contender, threads) -> Row
        self.contenders = []    # display order
        self.threads = []       # sorted thread counts (None = no /threads)
        self.ref = reference(family)  # the contender whose ratios are shown

    def add(self, row):
        self.rows[(row.contender, row.threads)] = row
        if row.contender not in self.contenders:
            self.contenders.append(row.contender)
        if row.threads not in self.threads:
            self.threads.append(row.threads)

    def finish(self):
        self.contenders = order_contenders(self.contenders, self.ref)
        self.threads.sort(key=lambda t: -1 if t is None else t)

    @property
    def multi_thread(self):
        return any(t is not None for t in self.threads)

    @property
    def plottable(self):
        ts = {t for t in self.threads if t is not None}
        return len(ts) >= 2 and any(r.throughput for r in self.rows.values())

    def get(self, contender, threads):
        return self.rows.get((contender, threads))

    def counters(self, threads=None):
        seen = []
        for c in self.contenders:
            for t in self.threads:
                if threads is not None and t != threads:
                    continue
                r = self.get(c, t)
                if r is None:
                    continue
                for k in r.counter_order:
                    if k in r.median and k not in seen:
                        seen.append(k)
        known = [k for k in KNOWN_COUNTERS if k in seen]
        return known + [k for k in seen if k not in KNOWN_COUNTERS]


def order_contenders(names, ref="park"):
    """park (or the family's reference) first, then pthread baselines, other
    baselines, Rust peers; appearance order within each group."""
    def key(item):
        i, n = item
        kind = contender_kind(n)
        group = {"park": 0, "baseline": 2, "peer": 3}[kind]
        if n == ref:
            group = 0
        elif kind == "baseline" and n.startswith("pthread"):
            group = 1
        return (group, i)
    return [n for _, n in sorted(enumerate(names), key=key)]


def group(rows):
    """-> {family: [Scenario in order of appearance]}"""
    families = {}
    for r in rows:
        scen = families.setdefault(r.family, {})
        if r.scenario not in scen:
            scen[r.scenario] = Scenario(r.family, r.scenario)
        scen[r.scenario].add(r)
    out = {}
    for fam, scen in families.items():
        for s in scen.values():
            s.finish()
        out[fam] = list(scen.values())
    return out


# --------------------------------------------------------------------------
# Machine and build

def read_cmake_cache(build_dir):
    cache = {}
    path = os.path.join(build_dir, "CMakeCache.txt")
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = re.match(r"^([A-Za-z0-9_.\-]+):[A-Z]+=(.*)$", line.rstrip("\n"))
                if m:
                    cache[m.group(1)] = m.group(2)
    except OSError:
        return {}
    for lang in ("C", "CXX"):
        for p in glob.glob(os.path.join(build_dir, "CMakeFiles", "*",
                                        "CMake%sCompiler.cmake" % lang)):
            try:
                with open(p, encoding="utf-8", errors="replace") as f:
                    text = f.read()
            except OSError:
                continue
            for var in ("ID", "VERSION"):
                m = re.search(r'set\(CMAKE_%s_COMPILER_%s "([^"]*)"\)' % (lang, var), text)
                if m:
                    cache["CMAKE_%s_COMPILER_%s" % (lang, var)] = m.group(1)
    return cache


def cpu_model_here():
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def is_rust_context(ctx):
    return ctx.get("harness") == "park-peers" or "park-peers" in str(ctx.get("executable", ""))


def cxx_contexts(contexts):
    """Contexts of the C/C++ harness (the Rust peers' "compiler" is rustc)."""
    return [(p, c) for p, c in contexts if not is_rust_context(c)]


def ctx_get(contexts, *keys):
    for _, ctx in contexts:
        for k in keys:
            v = ctx.get(k)
            if v not in (None, ""):
                return v
    return None


def machine_lines(contexts, build_dir, command, rows):
    lines = []
    here = platform.node()
    hosts = {ctx.get("host_name") for _, ctx in contexts if ctx.get("host_name")}
    same_host = not hosts or hosts == {here}

    cpu = ctx_get(contexts, "cpu_model", "cpu")
    if cpu is None and same_host:
        cpu = cpu_model_here()
    ncpu = ctx_get(contexts, "num_cpus")
    if ncpu is None and same_host:
        ncpu = os.cpu_count()
    mhz = ctx_get(contexts, "mhz_per_cpu")
    cpu_desc = cpu or "unknown"
    if ncpu:
        cpu_desc += ", %s logical CPUs" % ncpu
    if mhz:
        cpu_desc += ", %s MHz" % mhz
    lines.append(("CPU", cpu_desc))
    if hosts:
        lines.append(("host", ", ".join(sorted(hosts))))
    kernel = ctx_get(contexts, "kernel")
    if kernel is None and same_host:
        u = platform.uname()
        kernel = "%s %s %s" % (u.system, u.release, u.machine)
    lines.append(("kernel", kernel or "unknown"))
    scaling = ctx_get(contexts, "cpu_scaling_enabled")
    if scaling is not None:
        lines.append(("CPU frequency scaling", "enabled" if scaling else "disabled"))
    loads = [(p, ctx.get("load_avg")) for p, ctx in contexts if ctx.get("load_avg")]
    for p, la in loads:
        lines.append(("load average at start (%s)" % os.path.basename(p),
                      ", ".join("%.2f" % x for x in la)))

    # Compiler and flags: JSON context first, CMakeCache.txt otherwise.
    cache = read_cmake_cache(build_dir)
    all_contexts, contexts = contexts, cxx_contexts(contexts)
    src = "JSON context"

    cc = ctx_get(contexts, "c_compiler")
    cxx = ctx_get(contexts, "cxx_compiler", "compiler")
    if cc is None and cache:
        cc = "%s %s (%s)" % (cache.get("CMAKE_C_COMPILER_ID", "?"),
                             cache.get("CMAKE_C_COMPILER_VERSION", "?"),
                             cache.get("CMAKE_C_COMPILER", "?"))
    if cxx is None and cache:
        cxx = "%s %s (%s)" % (cache.get("CMAKE_CXX_COMPILER_ID", "?"),
                              cache.get("CMAKE_CXX_COMPILER_VERSION", "?"),
                              cache.get("CMAKE_CXX_COMPILER", "?"))
    lines.append(("C compiler", cc or "unknown"))
    lines.append(("C++ compiler", cxx or "unknown"))
    flag_keys = [
        ("build type", ("build_type", "cmake_build_type"), "CMAKE_BUILD_TYPE"),
        ("CMAKE_C_FLAGS", ("c_flags", "cflags", "cmake_c_flags"), "CMAKE_C_FLAGS"),
        ("CMAKE_CXX_FLAGS", ("cxx_flags", "cxxflags", "cmake_cxx_flags"), "CMAKE_CXX_FLAGS"),
        ("CMAKE_C_FLAGS_RELEASE", ("c_flags_release", "cmake_c_flags_release"),
         "CMAKE_C_FLAGS_RELEASE"),
        ("CMAKE_CXX_FLAGS_RELEASE", ("cxx_flags_release", "cmake_cxx_flags_release"),
         "CMAKE_CXX_FLAGS_RELEASE"),
    ]
    used_cache = False
    from_ctx = any(ctx_get(contexts, *k) is not None for _, k, _ in flag_keys) or \
        ctx_get(contexts, "c_compiler", "cxx_compiler", "compiler") is not None
    for title, ckeys, var in flag_keys:
        v = ctx_get(contexts, *ckeys)
        if v is None and var in cache:
            v = cache[var]
            used_cache = True
        if v is not None:
            lines.append((title, "`%s`" % v if v else "(empty)"))
    cache_path = os.path.join(build_dir, "CMakeCache.txt")
    if os.path.abspath(cache_path).startswith(REPO + os.sep):
        cache_path = os.path.relpath(os.path.abspath(cache_path), REPO)
    if cache and (used_cache or cc or cxx) and not from_ctx:
        src = cache_path
    elif cache and used_cache:
        src = "JSON context and " + cache_path
    elif not from_ctx:
        src = "nowhere: no compiler keys in the JSON context and no %s" % cache_path
    lines.append(("compiler info from", src))
    gb = ctx_get(contexts, "library_build_type")
    if gb:
        lines.append(("google-benchmark library build", gb))
    rust_contexts = [(p, c) for p, c in all_contexts if is_rust_context(c)]
    rustc = ctx_get(rust_contexts, "compiler", "rustc", "rustc_version")
    if rustc and any(r.kind == "peer" for r in rows):
        lines.append(("Rust compiler", rustc))
        versions = ctx_get(rust_contexts, "peer_versions")
        if versions:
            lines.append(("Rust peer crates", versions))
    contexts = all_contexts

    reps = sorted({r.reps for r in rows if r.reps})
    if reps:
        lines.append(("repetitions per row", ", ".join(str(x) for x in reps)))
    min_time = ctx_get(contexts, "min_time_s", "min_time") or os.environ.get("PARK_BENCH_MIN_TIME")
    if min_time:
        lines.append(("min time per repetition", "%s s" % min_time))
    for p, ctx in contexts:
        what = os.path.basename(p)
        if ctx.get("date"):
            what += ", run %s" % ctx["date"]
        if ctx.get("executable"):
            what += ", `%s`" % ctx["executable"]
        lines.append(("input", what))
    if command:
        lines.append(("command", "`%s`" % command))
    return lines


# --------------------------------------------------------------------------
# Report

def summary_section(families):
    out = ["## Summary", "",
           "park's time per op divided by each contender's, per scenario and "
           "thread count (below 1.00 = park is faster, **bold** = park is "
           "slower). *best other* is the fastest non-park contender of the row. "
           "Where a family compares park's own variants (cpp), the ratios are "
           "those of the contender its heading names.",
           ""]
    any_table = False
    for fam, scenarios in families.items():
        if fam == TAIL:  # compares waits, in its own section
            continue
        ref = reference(fam)
        others = []
        for s in scenarios:
            for c in s.contenders:
                if c != ref and c not in others:
                    others.append(c)
        others = order_contenders(others)
        body = []
        per_col = {c: [] for c in others}
        for s in scenarios:
            if ref not in s.contenders:
                continue
            for t in s.threads:
                p = s.get(ref, t)
                cells = [md_escape(s.name), thread_label(t)]
                for c in others:
                    r = ratio(p, s.get(c, t))
                    if r is not None:
                        per_col[c].append(r)
                    cells.append(fmt_ratio(r))
                best = None
                for c in s.contenders:
                    o = s.get(c, t)
                    if c == ref or o is None or o.time_ns is None:
                        continue
                    if best is None or o.time_ns < best.time_ns:
                        best = o
                br = ratio(p, best)
                cells.append("—" if br is None else "%s (%s)" % (fmt_ratio(br), best.contender))
                body.append(cells)
        if not body:
            continue
        any_table = True
        body.append(["*geomean*", ""] + [fmt_ratio(geomean(per_col[c])) for c in others] + [""])
        out.append("### %s" % fam if ref == "park" else "### %s (ratios of %s)" % (fam, ref))
        out.append("")
        out.append(table(["scenario", "threads"] + others + ["best other"], body,
                         ["l", "r"] + ["r"] * len(others) + ["l"]))
        out.append("")
    if not any_table:
        out.append("No row of park to compare yet.")
        out.append("")

    # Fairness: park beside the pthread baselines.
    frows = []
    for fam, scenarios in families.items():
        for s in scenarios:
            for t in s.threads:
                p = s.get(s.ref, t)
                if t == 1:  # one thread is trivially fair
                    continue
                if p is None or not ({"min_acq", "max_acq", "worst_wait_ns"} & set(p.median)):
                    continue
                for c in [s.ref] + fairness_references(s):
                    r = s.get(c, t)
                    if r is None:
                        continue
                    frows.append([fam, md_escape(s.name), thread_label(t),
                                  "**%s**" % c if c == s.ref else c]
                                 + fairness_cells(r))
    if frows:
        out += ["### Fairness: park beside pthread", "",
                "Acquisitions per thread under contention, fewest and most "
                "(medians over repetitions), for park and the pthread contenders "
                "(in a family without one: its first baseline); min/max 1.00 is "
                "perfectly fair.", "",
                table(["family", "scenario", "threads", "contender", "min acq",
                       "max acq", "min/max", "worst wait"], frows,
                      ["l", "l", "r", "l", "r", "r", "r", "r"]), ""]
    return out


# --------------------------------------------------------------------------
# Contention sweeps

# Scenarios named sweep_<letter><value> (mutex/sweep_w50, sem/sweep_k2,
# rwlock/sweep_r90) are the cells of one sweep per family: one parameter
# value each, run at several thread counts.
SWEEP_SCENARIO = re.compile(r"sweep_([a-z]+)(\d+)")
SWEEP_PARAMS = {
    ("mutex", "w"): "W = rounds of an LCG outside the lock",
    ("sem", "k"): "K = permits of the semaphore",
    ("rwlock", "r"): "R = % of operations that read",
}
# The rwlock sweep compares park with the writer-fair peers and, apart, with
# the reader-preferring ones (glibc's default rwlock, which std::shared_mutex
# also is): a lock that lets readers starve writers wins on throughput by
# doing so, which park does not.
READER_PREFERRING = {"rwlock": {"pthread", "std"}}


class Sweep:
    """One family's sweep: {param value: Scenario}, thread counts, contenders."""

    def __init__(self, family, letter):
        self.family = family
        self.letter = letter
        self.cells = {}      # value -> Scenario
        self.values = []     # appearance order
        self.threads = []
        self.contenders = []

    @property
    def param(self):
        return self.letter.upper()

    @property
    def described(self):
        return SWEEP_PARAMS.get((self.family, self.letter), "%s = the sweep's parameter" % self.param)

    def add(self, value, scen):
        self.cells[value] = scen
        self.values.append(value)
        for t in scen.threads:
            if t is not None and t not in self.threads:
                self.threads.append(t)
        for c in scen.contenders:
            if c not in self.contenders:
                self.contenders.append(c)

    def finish(self):
        self.threads.sort()
        self.contenders = order_contenders(self.contenders)

    def get(self, contender, value, threads):
        return self.cells[value].get(contender, threads)


def sweeps_of(families):
    """-> [Sweep] in order of appearance (one per family and parameter)."""
    found = {}
    for fam, scenarios in families.items():
        for scen in scenarios:
            m = SWEEP_SCENARIO.fullmatch(scen.name)
            if not m:
                continue
            key = (fam, m.group(1))
            if key not in found:
                found[key] = Sweep(fam, m.group(1))
            found[key].add(int(m.group(2)), scen)
    for sw in found.values():
        sw.finish()
    return list(found.values())


def is_peer_of_park(contender):
    """Every contender but park and its own variants (park_fifo, ...)."""
    return contender != "park" and not contender.startswith("park_")


def best_peer(sw, value, t, keep):
    """The contender with the highest throughput in one cell among those
    `keep` accepts, or None."""
    best = None
    for c in sw.contenders:
        if not is_peer_of_park(c) or not keep(c):
            continue
        r = sw.get(c, value, t)
        if r is None or r.error or not r.throughput:
            continue
        if best is None or r.throughput > best.throughput:
            best = r
    return best


def fmt_tput_ratio(r):
    """park's throughput / a peer's; bold when park is slower."""
    if r is None:
        return "—"
    s = "%.2f" % r if r >= 0.095 else "%.2g" % r
    return "**%s**" % s if r < 0.995 else s


def fmt_row_fairness(r):
    """A row's min/max: its fairness counter, else min_acq / max_acq."""
    if "fairness" in r.median:
        return fmt_counter("fairness", r.median["fairness"])
    return fmt_fairness(r.median.get("min_acq"), r.median.get("max_acq"))


def sweep_table(sw, keep):
    """Rows: parameter values; columns: thread counts; cells: park's ratio to
    the best kept peer, that peer, and park's min/max; a geomean column and
    row. -> (table text, overall geomean or None)"""
    header = [sw.param] + ["%d thr" % t for t in sw.threads] + ["geomean"]
    body = []
    per_t = {t: [] for t in sw.threads}
    every = []
    for v in sw.values:
        cells = [str(v)]
        per_row = []
        for t in sw.threads:
            p = sw.get("park", v, t)
            best = best_peer(sw, v, t, keep)
            if p is None:
                cells.append("—")
                continue
            if p.error:
                cells.append("park: error")
                continue
            fair = fmt_row_fairness(p)
            if best is None or not p.throughput:
                cells.append("— · min/max %s" % fair)
                continue
            q = p.throughput / best.throughput
            per_row.append(q)
            per_t[t].append(q)
            every.append(q)
            cells.append("%s (%s) · min/max %s vs %s" % (
                fmt_tput_ratio(q), best.contender, fair, fmt_row_fairness(best)))
        cells.append(fmt_tput_ratio(geomean(per_row)))
        body.append(cells)
    overall = geomean(every)
    body.append(["*geomean*"] + [fmt_tput_ratio(geomean(per_t[t])) for t in sw.threads]
                + [fmt_tput_ratio(overall)])
    return table(header, body), overall


def sweeps_section(families, sweep_plots):
    sweeps = sweeps_of(families)
    if not sweeps:
        return []
    out = ["## Contention sweeps", "",
           "Each cell: park's throughput (ops/s of all threads) divided by the best "
           "peer's in the same cell, with that peer in parentheses (above 1.00 = park "
           "is faster, **bold** = park is slower), and park's per-thread fairness beside that "
           "peer's (min/max: fewest / most operations of one thread, 1.00 = perfectly "
           "fair). The peers "
           "are every other contender of the cell that was measured (C baselines and "
           "Rust peers; park's own variants such as park_fifo are left out). The "
           "*geomean* column and row are over the cells of the row and column, the "
           "corner over every cell. The family sections below hold every counter of "
           "every cell.", ""]
    for sw in sweeps:
        out += ["### %s sweep: %s x threads" % (sw.family, sw.param), ""]
        peers = [c for c in sw.contenders if is_peer_of_park(c)]
        out += ["%s; values %s; threads %s. Contenders: %s." % (
            sw.described, ", ".join(str(v) for v in sw.values),
            ", ".join(str(t) for t in sw.threads),
            ", ".join(sw.contenders) if sw.contenders else "none"), ""]
        if sw.family in sweep_plots:
            out += ["![%s sweep: throughput against threads](%s)"
                    % (sw.family, sweep_plots[sw.family]), ""]
        if "park" not in sw.contenders:
            out += ["No park row in this sweep.", ""]
            continue
        if not peers:
            out += ["No peer row in this sweep to compare park with.", ""]
            continue
        reader_pref = READER_PREFERRING.get(sw.family, set())
        if reader_pref:
            fair_peers = [c for c in peers if c not in reader_pref]
            pref_peers = [c for c in peers if c in reader_pref]
            groups = [("writer-fair peers", fair_peers, lambda c: c not in reader_pref),
                      ("reader-preferring peers", pref_peers, lambda c: c in reader_pref)]
        else:
            groups = [(None, peers, lambda c: True)]
        for title, members, keep in groups:
            if not members:
                out += ["No %s measured." % title, ""]
                continue
            if title:
                title += " (%s)" % ", ".join(members)
            tab, overall = sweep_table(sw, keep)
            if title:
                out += ["Against the best of the %s: geomean %s." % (title, fmt_tput_ratio(overall)), ""]
            else:
                out += ["Geomean over all cells: %s." % fmt_tput_ratio(overall), ""]
            out += [tab, ""]
    return out


# --------------------------------------------------------------------------
# Family sections and REPORT.md

def fairness_references(s):
    """The baselines park's fairness is shown beside: the pthread ones, or
    in a family without them its first baseline (sem_t for sem, ...)."""
    baselines = [c for c in s.contenders if contender_kind(c) == "baseline" and c != s.ref]
    return [c for c in baselines if c.startswith("pthread")] or baselines[:1]


def fairness_cells(r):
    lo, hi = r.median.get("min_acq"), r.median.get("max_acq")
    fair = r.median.get("fairness")
    return [fmt_count(lo), fmt_count(hi),
            fmt_counter("fairness", fair) if fair is not None else fmt_fairness(lo, hi),
            fmt_time(r.median.get("worst_wait_ns"))]


def detail_table(s, t):
    """One row per contender at thread count t."""
    counters = s.counters(t)
    # min/max computed here unless the harness reports it as "fairness".
    fair = "min_acq" in counters and "max_acq" in counters and "fairness" not in counters
    rows_here = [(c, s.get(c, t)) for c in s.contenders if s.get(c, t) is not None]
    throughput = any(r.throughput for _, r in rows_here)
    header = ["contender"]
    if throughput:
        header.append("ops/s")
    header += ["time/op", "±"]
    for k in counters:
        header.append(COUNTER_TITLES.get(k, k))
        if fair and k == "max_acq":
            header.append("min/max")
    header.append("%s ratio" % s.ref)
    park = s.get(s.ref, t)
    body = []
    for c, r in rows_here:
        name = "**%s**" % c if c == s.ref else c
        if r.error:
            cells = [name] + (["—"] if throughput else []) + ["error: %s" % md_escape(r.error), "—"]
            cells += ["—"] * (len(header) - len(cells) - 1) + ["—"]
            body.append(cells)
            continue
        cells = [name]
        if throughput:
            cells.append(fmt_rate(r.throughput))
        cells += [fmt_time(r.time_ns), fmt_cv(r.cv)]
        for k in counters:
            if k == "fairness" and "fairness" not in r.median:
                cells.append(fmt_fairness(r.median.get("min_acq"), r.median.get("max_acq")))
            else:
                cells.append(fmt_counter(k, r.median.get(k)))
            if fair and k == "max_acq":
                cells.append(fmt_fairness(r.median.get("min_acq"), r.median.get("max_acq")))
        cells.append("1.00" if c == s.ref and park and park.time_ns else fmt_ratio(ratio(park, r)))
        if c == s.ref:
            cells = ["**%s**" % x if i and x != "—" else x for i, x in enumerate(cells)]
        body.append(cells)
    return table(header, body)


def wait_ratio_table(s, t, keys):
    """park's counter / each contender's for the counters `keys` (waits:
    below 1.00 = park waits less) at thread count t."""
    park = s.get(s.ref, t)
    if park is None or park.error:
        return None
    body = []
    for c in s.contenders:
        r = s.get(c, t)
        if c == s.ref or r is None or r.error:
            continue
        cells = [c]
        for k in keys:
            p, o = park.median.get(k), r.median.get(k)
            cells.append(fmt_ratio(p / o) if p is not None and o else "—")
        body.append(cells)
    if not body:
        return None
    return table(["contender"] + ["park / it: %s" % COUNTER_TITLES.get(k, k) for k in keys], body)


def overview_table(s):
    """Multi-thread scenario: contenders x thread counts."""
    ts = s.threads
    throughput = any(r.throughput for r in s.rows.values())
    park_rows = {t: s.get(s.ref, t) for t in ts}
    body = []
    for c in s.contenders:
        cells = ["**%s**" % c if c == s.ref else c]
        for t in ts:
            r = s.get(c, t)
            if r is None:
                cells.append("")
                continue
            if r.error:
                cells.append("error")
                continue
            v = fmt_rate(r.throughput) if throughput and r.throughput else fmt_time(r.time_ns)
            if c == s.ref:
                cells.append("**%s**" % v)
            else:
                rr = ratio(park_rows[t], r)
                cells.append(v if rr is None else "%s (%s)" % (v, fmt_ratio(rr)))
        body.append(cells)
    what = "ops/s" if throughput else "time/op"
    caption = ("Median %s by thread count; %s's ratio in parentheses "
               "(below 1.00 = %s is faster)." % (what, s.ref, s.ref))
    return caption, table(["contender"] + ["%s thr" % thread_label(t) for t in ts], body)


def goal_section(fam, scenarios):
    """The family's goal (GOALS): per scenario and thread count, the
    reference's time per op divided by the goal contender's, held against
    the limit, beside the reference's ratio to each other contender."""
    if fam not in GOALS:
        return []
    ref = reference(fam)
    against, limit, words = GOALS[fam]
    others = []
    for s in scenarios:
        others += [c for c in s.contenders if c not in (ref, against) and c not in others]
    body = []
    for s in scenarios:
        for t in s.threads:
            p = s.get(ref, t)
            if p is None:
                continue
            r = ratio(p, s.get(against, t))
            verdict = "—" if r is None else "within" if r <= limit else "**above**"
            body.append([md_escape(s.name), thread_label(t),
                         "—" if r is None else "%.3f" % r, verdict]
                        + [fmt_ratio(ratio(p, s.get(c, t))) for c in others])
    if not body:
        return []
    return ["### %s / goal" % fam, "",
            "%s: %s's time per op / %s's at most %.2f in every row (medians over "
            "repetitions; below 1.00 = %s is faster)." % (words, ref, against, limit, ref), "",
            table(["scenario", "threads", "%s / %s" % (ref, against), "goal <= %.2f" % limit]
                  + ["%s / %s" % (ref, c) for c in others], body,
                  ["l", "r", "r", "l"] + ["r"] * len(others)), ""]


def family_section(fam, scenarios, plots):
    out = ["## %s" % fam, ""]
    if fam in FAMILY_NOTES:
        out += [FAMILY_NOTES[fam], ""]
    out += goal_section(fam, scenarios)
    for s in scenarios:
        out += ["### %s / %s" % (fam, s.name), ""]
        if (fam, s.name) in SCENARIO_NOTES:
            out += [SCENARIO_NOTES[(fam, s.name)], ""]
        if (fam, s.name) in plots:
            png = plots[(fam, s.name)]
            out += ["![%s %s: throughput against threads](%s)" % (fam, s.name, png), ""]
        real_threads = [t for t in s.threads if t is not None]
        if len(s.threads) > 1:
            caption, tab = overview_table(s)
            out += [caption, "", tab, ""]
        for t in s.threads:
            if len(s.threads) > 1 or real_threads:
                out += ["#### %s / %s, %s" % (fam, s.name,
                        "no threads suffix" if t is None else
                        "%d thread%s" % (t, "" if t == 1 else "s")), ""]
            out += [detail_table(s, t), ""]
            waits = WAIT_RATIOS.get((fam, s.name))
            tab = waits and wait_ratio_table(s, t, waits)
            if tab:
                out += ["park's waits divided by each contender's (below 1.00 = park "
                        "waits less, **bold** = park waits longer).", "", tab, ""]
    return out


def write_report(rows, contexts, outdir, build_dir, command, plots, sweep_plots=None,
                 dropin=None, tail_plots=None):
    """dropin: (drop-in rows, their contexts, plot name or None), or None;
    tail_plots: {tail scenario: png name}."""
    sweep_plots = sweep_plots or {}
    families = group(rows)
    if not rows and dropin:
        return write_dropin_report(outdir, command, *dropin)
    now = datetime.datetime.now().astimezone()
    run_dates = sorted({ctx.get("date") for _, ctx in contexts if ctx.get("date")})
    out = ["# park benchmark report", ""]
    out.append("Written %s%s." % (now.strftime("%Y-%m-%d %H:%M %Z"),
               "; measured " + ", ".join(run_dates) if run_dates else ""))
    out.append("")
    out += ["## Machine and build", "",
            table(["what", "value"], [[k, md_escape(v)]
                             for k, v in machine_lines(contexts, build_dir, command, rows)],
                  ["l", "l"]), ""]
    out += ["How to read: *time/op* is the median over repetitions (for rows "
            "that count ops/s it is 1 / ops/s, so multi-thread rows are total "
            "wall-clock throughput); *±* is stddev/mean over repetitions; "
            "*park ratio* = park's time per op / that contender's (below 1.00 = "
            "park is faster, **bold** = park is slower). Contenders rust_* and "
            "rayon are the Rust peers. Machines here are small and noisy: read "
            "ratios, not absolute times.", ""]
    build_type = ctx_get(cxx_contexts(contexts), "build_type", "cmake_build_type") or \
        read_cmake_cache(build_dir).get("CMAKE_BUILD_TYPE")
    if build_type and build_type.lower() not in ("release", "relwithdebinfo"):
        out += ["**Warning: the build type is %s; these numbers say nothing about "
                "a release build.**" % build_type, ""]
    for w in WARNINGS:
        out += ["**Warning: %s**" % md_escape(w), ""]
    out += summary_section(families)
    out += sweeps_section(families, sweep_plots)
    for fam, scenarios in families.items():
        if fam == TAIL:
            out += tail_section(scenarios, tail_plots or {})
        else:
            out += family_section(fam, scenarios, plots)
    if dropin:
        out += dropin_section(*dropin)
    path = os.path.join(outdir, "REPORT.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out).rstrip() + "\n")
    return path
