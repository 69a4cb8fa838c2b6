"""tools/report's tail section: the tail family's rows (benchmarks/tail.cpp
and the Rust peers' tail/mutex rows) as tables of wait quantiles, spread and
lock working set size, park's p99.9 against the best peer's, and the
lockskew and nice19 tables. bench_plots.make_tail_plots draws one CDF of
the wait per scenario from the rows' quantile counters (cdf_points)."""

import re

from common import fmt_num, md_escape, table

FAMILY = "tail"
# Scenarios with a table per thread count, in this order; the others follow.
PER_THREADS = ["mutex", "sem", "rwlock"]
SCENARIO_NOTES = {
    "mutex": "T threads loop { acquire; a += 1, b += a; release; 50 LCG rounds }. "
             "*unshared* is the floor: the same loop with nothing shared, each thread "
             "taking a mutex of its own around data of its own, so nobody ever waits for "
             "anybody. Its waits are what the machine adds to every lock's: the clock "
             "reads, and a thread preempted between them, which waits while the other "
             "threads on its CPU run their time slices. A lock's max or rsd below the "
             "floor's comes from threads it keeps asleep, off the CPUs.",
    "sem": "The mutex loop through a semaphore of 1 permit.",
    "rwlock": "The mutex loop on a reader/writer lock, 90 % of the operations reads "
              "(both words loaded and checked), 10 % writes; the waits of both kinds.",
    "lockskew": "Two threads: one re-locks in a tight loop (lock, the update, unlock, lock "
                "again at once), the other runs the timed loop with 1 µs of spinning "
                "outside. The waits are the second thread's; a lock that lets a running "
                "thread take it straight back starves it, up to the whole window (it gets "
                "the lock when the first thread stops). *Max, worst window*: the longest "
                "wait in the worst of the repetitions' windows (the other columns are "
                "medians over them). *On a run queue* is how long in all "
                "the scheduler kept the waiter runnable but off the CPUs in the window (the "
                "kernel's schedstat), which no lock can shorten: where it is as long as the "
                "max, the longest wait may be the scheduler's; where it is a few µs, it was "
                "the lock's.",
    "nice19": "The mutex loop with 4 threads, the last at nice 19: its acquisitions over "
              "the median of the other three's. The scheduler alone gives it a small "
              "share when the CPUs are busy (*unshared*: the same loop with nothing "
              "shared, so that share and nothing else); a lock can shrink it, or raise it "
              "by keeping the others waiting while the nice thread runs.",
}

# The points of a row's CDF: counter -> fraction of waits at or below it.
NAMED_POINTS = {"p50_ns": 0.50, "p99_ns": 0.99, "p999_ns": 0.999, "max_ns": 1.0}
CDF_COUNTER = re.compile(r"cdf_p(\d+(?:\.\d+)?)_ns")


def cdf_points(row):
    """[(wait ns, fraction)] of one row, by fraction, the waits made
    non-decreasing (each point is a median over repetitions, which need not
    be ordered); [] if the row has none."""
    pts = []
    for k, v in row.median.items():
        m = CDF_COUNTER.fullmatch(k)
        if m:
            pts.append((round(float(m.group(1)) / 100.0, 9), v))
        elif k in NAMED_POINTS:
            pts.append((NAMED_POINTS[k], v))
    if len(pts) < 2:
        return []
    pts.sort()
    out, top = [], 0.0
    for q, v in pts:
        top = max(top, v)
        out.append((top, q))
    return out


def fmt_wait(ns):
    if ns is None:
        return "—"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(ns) >= scale:
            return "%s %s" % (fmt_num(ns / scale), unit)
    return "%s ns" % fmt_num(ns)


def fmt_rate(ops):
    if not ops:
        return "—"
    for suffix, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if ops >= scale:
            return "%s %s/s" % (fmt_num(ops / scale), suffix)
    return "%s /s" % fmt_num(ops)


def fmt_ratio(r):
    """park / other for waits: bold when park waits longer."""
    if r is None:
        return "—"
    s = "%.2f" % r if r >= 0.095 else "%.2g" % r
    return "**%s**" % s if r > 1.005 else s


def fmt_share(v):
    return "—" if v is None else "%.1f %%" % (100 * v)


def fmt_count(v):
    return "—" if v is None else "%d" % round(v)


FLOOR = "unshared"


def is_peer(c):
    """Every contender but park, its own variants and the floor."""
    return c != "park" and not c.startswith("park_") and c != FLOOR


def value(r, k):
    return None if r is None or r.error else r.median.get(k)


def p999_ratio(park, other):
    p, o = value(park, "p999_ns"), value(other, "p999_ns")
    return p / o if p is not None and o else None


def best_peer(s, t):
    """The peer with the shortest p99.9 at thread count t, or None."""
    best = None
    for c in s.contenders:
        r = s.get(c, t)
        if not is_peer(c) or value(r, "p999_ns") is None:
            continue
        if best is None or r.median["p999_ns"] < best.median["p999_ns"]:
            best = r
    return best


def name_cell(c):
    return "**%s**" % c if c == "park" else c


def error_cells(r, width):
    return ["error: %s" % md_escape(r.error)] + ["—"] * (width - 1)


def wait_table(s, t):
    """One row per contender at thread count t."""
    header = ["contender", "ops/s", "p50", "p99", "p99.9", "max", "rsd", "CPU rsd", "LWSS",
              "park / it: p99.9"]
    park = s.get("park", t)
    body = []
    for c in s.contenders:
        r = s.get(c, t)
        if r is None:
            continue
        if r.error:
            body.append([name_cell(c)] + error_cells(r, len(header) - 1))
            continue
        lwss = r.median.get("lwss")
        body.append([name_cell(c), fmt_rate(r.throughput),
                     fmt_wait(r.median.get("p50_ns")), fmt_wait(r.median.get("p99_ns")),
                     fmt_wait(r.median.get("p999_ns")), fmt_wait(r.median.get("max_ns")),
                     fmt_share(r.median.get("rsd")), fmt_share(r.median.get("cpu_rsd")),
                     "—" if lwss is None else "%.2f" % lwss,
                     "1.00" if c == "park" and value(park, "p999_ns") else
                     "—" if c == FLOOR else fmt_ratio(p999_ratio(park, r))])
    return table(header, body)


def floor_clause(park, floor):
    """' The floor (unshared): ...' where both rows have a max, else ''."""
    pm, fm = value(park, "max_ns"), value(floor, "max_ns")
    if pm is None or not fm:
        return ""
    return (" The floor (%s, nothing shared): max %s, rsd %s; park's max / the floor's: %.2f."
            % (FLOOR, fmt_wait(fm), fmt_share(value(floor, "rsd")), pm / fm))


def best_line(s, t, floor_row=None):
    """floor_row: the floor at t, tail/mutex/unshared (the sem and rwlock
    scenarios run the same loop and have none of their own)."""
    park, best = s.get("park", t), best_peer(s, t)
    if value(park, "p999_ns") is None:
        return "No park row here."
    floor = floor_clause(park, floor_row)
    if best is None:
        return "No peer row here to compare park with." + floor
    return ("park's p99.9 / the best peer's (%s, %s): %s."
            % (best.contender, fmt_wait(best.median["p999_ns"]),
               fmt_ratio(p999_ratio(park, best)))) + floor


def overview_table(scenarios):
    """Per scenario and thread count: park's p99.9 against the best peer's."""
    body = []
    for s in scenarios:
        for t in s.threads:
            park, best = s.get("park", t), best_peer(s, t)
            if value(park, "p999_ns") is None:
                continue
            body.append([s.name, "—" if t is None else str(t),
                         fmt_wait(park.median["p999_ns"]),
                         "—" if best is None else "%s (%s)" % (
                             fmt_wait(best.median["p999_ns"]), best.contender),
                         fmt_ratio(p999_ratio(park, best))])
    if not body:
        return []
    return ["### tail / park's p99.9 against the best peer's", "",
            "The peer with the shortest p99.9 wait in each cell (C baselines and Rust "
            "peers); below 1.00 = park's tail is shorter, **bold** = longer.", "",
            table(["scenario", "threads", "park p99.9", "best peer p99.9", "park / best"],
                  body, ["l", "r", "r", "l", "r"]), ""]


def lockskew_table(s):
    header = ["contender", "waiter acq", "relocker acq", "waiter p50", "p99", "p99.9", "max",
              "max, worst window", "on a run queue", "park / it: p99", "park / it: max"]
    park = s.get("park", None)
    body = []
    for c in s.contenders:
        r = s.get(c, None)
        if r is None:
            continue
        if r.error:
            body.append([name_cell(c)] + error_cells(r, len(header) - 1))
            continue
        cells = [name_cell(c), fmt_count(r.median.get("waiter_acq")),
                 fmt_count(r.median.get("relocker_acq"))]
        cells += [fmt_wait(r.median.get(k)) for k in ("p50_ns", "p99_ns", "p999_ns", "max_ns")]
        cells += [fmt_wait(r.largest.get("max_ns")), fmt_wait(r.median.get("waiter_runq_ns"))]
        for k in ("p99_ns", "max_ns"):
            p, o = value(park, k), r.median.get(k)
            cells.append("1.00" if c == "park" and p else
                         fmt_ratio(p / o) if p is not None and o else "—")
        body.append(cells)
    return table(header, body)


def nice19_table(s):
    header = ["threads", "contender", "ops/s", "nice 19 acq", "median acq", "nice / median",
              "p99", "max", "rsd", "LWSS"]
    body = []
    for t in s.threads:
        for c in s.contenders:
            r = s.get(c, t)
            if r is None:
                continue
            if r.error:
                body.append(["—" if t is None else str(t), name_cell(c)] +
                            error_cells(r, len(header) - 2))
                continue
            ratio = r.median.get("nice_ratio")
            lwss = r.median.get("lwss")
            body.append(["—" if t is None else str(t), name_cell(c), fmt_rate(r.throughput),
                         fmt_count(r.median.get("nice_acq")),
                         fmt_count(r.median.get("median_acq")),
                         "—" if ratio is None else "%.3f" % ratio,
                         fmt_wait(r.median.get("p99_ns")), fmt_wait(r.median.get("max_ns")),
                         fmt_share(r.median.get("rsd")),
                         "—" if lwss is None else "%.2f" % lwss])
    return table(header, body, ["r", "l"] + ["r"] * (len(header) - 2))


def profiler_table(s):
    """park_profiled's rows: the profiler's per-site percentiles beside the
    tail family's histogram of the same run at the matching quantiles."""
    header = ["threads", "contended waits", "share", "profiler p50", "same run p50",
              "profiler p99", "same run p99", "profiler / same run: p99"]
    body = []
    for t in s.threads:
        r = s.get("park_profiled", t)
        if r is None or r.error or not r.median.get("prof_waits"):
            continue
        m = r.median
        share = m.get("prof_share")
        pp, sp = m.get("prof_p99_ns"), m.get("same_p99_ns")
        body.append(["—" if t is None else str(t), fmt_count(m.get("prof_waits")),
                     "—" if share is None else "%.2g %%" % (100 * share),
                     fmt_wait(m.get("prof_p50_ns")), fmt_wait(m.get("same_p50_ns")),
                     fmt_wait(pp), fmt_wait(sp),
                     "%.2f" % (pp / sp) if pp is not None and sp else "—"])
    if not body:
        return []
    return ["#### tail / mutex: the contention profiler on the same run", "",
            "park_profiled is park's mutex with the contention profiler recording "
            "(park_profile_start). The profiler records the acquisitions that found the "
            "lock taken, whether they then spun, yielded or queued (*contended waits*, a "
            "*share* of all), timed from the start of the slow path, in its per-site "
            "histogram; *same run* reads the tail family's histogram of that run at the "
            "quantiles that select as many of the longest waits (1 - (1 - q) × share). "
            "Where the contended waits are the longest ones the two agree within the "
            "histograms' resolution and the fast-path attempt.", "",
            table(header, body), ""]


def ordered(scenarios):
    known = [s for name in PER_THREADS for s in scenarios if s.name == name]
    return known + [s for s in scenarios if s not in known]


def tail_section(scenarios, plots):
    """The tail family's section. plots: {scenario: png name}."""
    scenarios = ordered(scenarios)
    out = ["## tail", "",
           "Latency tails and short-term fairness, measured as Dave Dice's lock papers "
           "do: each thread loops { acquire; a two-word update; release; work outside } "
           "for one window and records every acquisition's wait (TSC around the acquire) "
           "in a log-linear histogram (about 3 % resolution; *max* is exact). *rsd*: "
           "the relative standard deviation of the threads' acquisition counts (0 = "
           "every thread got as many); *CPU rsd*: the same of the CPU time each thread "
           "had in its loop, the part of *rsd* that is the scheduler's sharing of the "
           "CPUs. *LWSS* (lock working set size): the mean over the window's 1 ms "
           "intervals of the number of distinct threads that acquired in the interval "
           "(T = every thread gets in every millisecond; 1 = the lock stays with one "
           "thread for whole milliseconds at a time). Medians over "
           "repetitions. The family is not in the Summary's throughput tables: what it "
           "compares is the tail.", ""]
    out += overview_table([s for s in scenarios if s.name in PER_THREADS])
    floors = next((s for s in scenarios if s.name == "mutex"), None)
    for s in scenarios:
        out += ["### tail / %s" % s.name, ""]
        if s.name in SCENARIO_NOTES:
            out += [SCENARIO_NOTES[s.name], ""]
        if s.name in plots:
            out += ["![tail %s: CDF of the wait](%s)" % (s.name, plots[s.name]), ""]
        if s.name == "lockskew":
            out += [lockskew_table(s), ""]
            fm = value(floors.get(FLOOR, 2), "max_ns") if floors else None
            if fm:
                out += ["The floor at 2 threads (tail/mutex/%s: nothing shared, so no wait "
                        "but the machine's): max %s." % (FLOOR, fmt_wait(fm)), ""]
        elif s.name == "nice19":
            out += [nice19_table(s), ""]
        else:
            for t in s.threads:
                out += ["#### tail / %s, %s" % (s.name, "no threads suffix" if t is None else
                                                 "%d threads" % t), "",
                        wait_table(s, t), "",
                        best_line(s, t, floors.get(FLOOR, t) if floors else None), ""]
            out += profiler_table(s)
    return out
