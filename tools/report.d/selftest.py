#!/usr/bin/env python3
"""Checks tools/report on synthetic google-benchmark JSON (synth.py).

usage: python3 tools/report.d/selftest.py

Needs nothing built. Prints one line per check and 'N passed, N failed';
exits 1 when a check fails.
"""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(os.path.dirname(HERE), "report")
SYNTH = os.path.join(HERE, "synth.py")

results = []


def check(name, ok, detail=""):
    results.append(ok)
    print("%s: %s%s" % ("ok" if ok else "FAIL", name, "" if ok else " (%s)" % (detail,)))


def run(*args):
    p = subprocess.run([REPORT] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def have_matplotlib():
    if importlib.util.find_spec("matplotlib"):
        return True
    if os.access("/usr/bin/python3", os.X_OK):
        p = subprocess.run(["/usr/bin/python3", "-c", "import matplotlib"],
                           capture_output=True)
        return p.returncode == 0
    return False


def dropin_json(path):
    """tools/dropin-eval's shape: a throughput row where park is 1.2x glibc,
    a time row where park takes half of glibc's time, and a failed check."""
    preload = ("park-preload: mutexes 12 managed, 1 passed through; conds 3 managed, "
               "0 passed through; rwlocks 2 managed, 0 passed through; sems 0 managed, "
               "0 passed through")

    def side(values, latency=(), errors=(), park=False):
        s = {"values": list(values), "latency_us": list(latency), "errors": list(errors)}
        if park:
            s["preload"] = [preload]
        return s

    rows = [
        {"id": "mc", "program": "memcached", "config": "-t 2", "metric": "TPS",
         "unit": "ops/s", "higher_is_better": True, "command": "memcached -t 2",
         "glibc": side([100e3, 110e3, 90e3], [300, 310, 290]),
         "park": side([120e3, 130e3, 110e3], [250, 240, 260], park=True)},
        {"id": "kc", "program": "kccachetest", "config": "wicked", "metric": "time",
         "unit": "s", "higher_is_better": False, "command": "kccachetest wicked",
         "glibc": side([2.0, 2.2, 1.8]), "park": side([1.0, 1.1, 0.9], park=True)},
        {"id": "sb", "program": "sysbench mutex", "config": "broken", "metric": "total time",
         "unit": "s", "higher_is_better": False,
         "glibc": side([1.0, 1.0, 1.0]),
         "park": side([1.0, 1.0], errors=["run 3: sysbench exited 1"], park=True)},
    ]
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"dropin": {"format": 1, "date": "2026-01-01 00:00 UTC", "host_name": "h",
                              "num_cpus": 2, "runs": 3, "command": "tools/dropin-eval"},
                   "rows": rows}, f)


def dropin_checks(tmp, full):
    dj = os.path.join(tmp, "dropin.json")
    dropin_json(dj)
    out = os.path.join(tmp, "dropin_out")
    rc, _, err = run("-o", out, dj)
    check("drop-in JSON alone reports", rc == 0, err)
    text = open(os.path.join(out, "REPORT.md"), encoding="utf-8").read() if rc == 0 else ""
    lines = text.splitlines()

    def row(prefix):
        hit = [ln for ln in lines if ln.startswith(prefix)]
        return [c.strip() for c in hit[0].split("|")[1:-1]] if hit else []

    mc, kc, sb = row("| memcached |"), row("| kccachetest |"), row("| sysbench mutex |")
    check("drop-in section", "## Drop-in" in text)
    check("drop-in throughput ratio 1.20 with run pairs", mc[5:7] == ["1.20", "1.18 – 1.22"], mc)
    check("drop-in spread of the runs shown", "100 k (90.0 k – 110 k)" in (mc[3] if mc else ""), mc)
    check("drop-in latency beside glibc's", mc[7:8] == ["300 µs / 250 µs"], mc)
    check("drop-in managed counts", "mutexes 12 (+1 passed), conds 3" in (mc[8] if mc else ""), mc)
    check("drop-in time row inverted: ratio 2.00", kc[5:6] == ["2.00"], kc)
    check("drop-in failed check is an error row", sb[4:6] == ["**error**", "**error**"], sb)
    check("drop-in error listed", "sysbench exited 1" in text)
    if have_matplotlib():
        path = os.path.join(out, "dropin.png")
        ok = os.path.exists(path) and open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
        check("dropin.png written", ok)
        check("dropin.png linked", "](dropin.png)" in text)

    out2 = os.path.join(tmp, "dropin_mixed")
    rc, _, err = run("-o", out2, "--no-plots", os.path.join(full, "park_bench.json"), dj)
    text2 = open(os.path.join(out2, "REPORT.md"), encoding="utf-8").read() if rc == 0 else ""
    check("drop-in beside benchmark JSON", rc == 0 and "## mutex" in text2 and
          "## Drop-in" in text2, err)


def wait_ns(cell):
    """The ns of a report's wait cell ("4.85 µs"); None for anything else."""
    scale = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}
    parts = cell.split()
    if len(parts) != 2 or parts[1] not in scale:
        return None
    try:
        return float(parts[0]) * scale[parts[1]]
    except ValueError:
        return None


def tail_checks(text, out, text_cxx_only):
    """The tail section (synth.py's tail rows: park's p99.9 is half of
    rust_parking_lot's and a quarter of std's)."""
    tail = text[text.find("\n## tail\n"):]
    for needle in ("### tail / park's p99.9 against the best peer's",
                   "| scenario | threads | park p99.9 | best peer p99.9 | park / best |",
                   "### tail / mutex", "#### tail / mutex, 8 threads", "### tail / sem",
                   "### tail / rwlock", "| **park** |", "| ck_mcs |", "| pthread_wpref |",
                   "| rust_parking_lot |",
                   "| contender | ops/s | p50 | p99 | p99.9 | max | rsd | CPU rsd | LWSS | "
                   "park / it: p99.9 |", "| 10.0 % | 5.0 % |",
                   "park's p99.9 / the best peer's (rust_parking_lot, ",
                   "The floor (unshared, nothing shared): max ", "| unshared |",
                   "### tail / lockskew", "| contender | waiter acq | relocker acq | waiter p50 |",
                   "| **park** | 20000 | 3000000 |", "### tail / nice19", "nice / median",
                   "| 4 | **park** |", "0.010"):
        check("tail section has %r" % needle, needle in tail)
    check("tail not in the Summary", "### tail\n" not in text)
    floors = [ln for ln in tail.splitlines() if ln.startswith("| unshared |")]
    check("tail: the floor has no p99.9 ratio", floors and all(ln.endswith("| — |") for ln in floors),
          floors[:1])
    skew = tail[tail.find("### tail / lockskew"):tail.find("### tail / nice19")]
    check("tail lockskew gives the 2-thread floor",
          "The floor at 2 threads (tail/mutex/unshared" in skew)
    check("tail lockskew has the worst window and the waiter's run-queue time",
          "| max | max, worst window | on a run queue | park / it: p99 |" in skew)
    skew_rows = {ln.split("|")[1].strip(): [c.strip() for c in ln.split("|")[1:-1]]
                 for ln in skew.splitlines() if ln.startswith("| ") and "|:" not in ln}
    park_row = skew_rows.get("**park**", [])
    check("tail lockskew: park's run-queue time from its counter",
          len(park_row) > 8 and park_row[8] == "2.50 ms", park_row)
    others = [r for n, r in skew_rows.items() if n not in ("**park**", "contender")]
    check("tail lockskew: a row without the counter shows —",
          others and all(len(r) > 8 and r[8] == "—" for r in others), others[:1])
    # synth.py jitters max_ns by up to ±10 % per repetition: the worst
    # window's is the largest of them, above the median's.
    check("tail lockskew: the worst window's max is above the median's",
          len(park_row) > 8 and
          (wait_ns(park_row[7]) or 0) > (wait_ns(park_row[6]) or float("inf")) * 1.001,
          park_row[6:8])

    sem = tail[tail.find("### tail / sem"):tail.find("### tail / rwlock")]
    check("tail sem tables give the mutex loop's floor", "The floor (unshared, " in sem)

    def p999_cell(t, scen):
        rows = [ln for ln in t.splitlines() if ln.startswith("| %s | 8 |" % scen)]
        if not rows:
            return None, ""
        cells = [c.strip() for c in rows[0].split("|")[1:-1]]
        return float(cells[4].strip("*")), cells[3]

    r, best = p999_cell(tail, "mutex")
    check("tail mutex 8 threads: park / rust_parking_lot about 0.5",
          r is not None and 0.35 < r < 0.7 and "(rust_parking_lot)" in best, (r, best))
    r, best = p999_cell(text_cxx_only[text_cxx_only.find("\n## tail\n"):], "mutex")
    check("tail mutex 8 threads without the Rust peers: park / std about 0.25",
          r is not None and 0.17 < r < 0.36 and "(std)" in best, (r, best))
    if have_matplotlib():
        for scen in ("mutex", "sem", "rwlock", "lockskew", "nice19"):
            png = "tail_%s_cdf.png" % scen
            path = os.path.join(out, png)
            ok = os.path.exists(path) and open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
            check("%s written" % png, ok)
            check("%s linked" % png, "](%s)" % png in tail)
        check("no throughput plot of the tail family",
              not os.path.exists(os.path.join(out, "tail_mutex.png")))

    # The CDF points: the named quantiles and the cdf_p<P>_ns counters, by
    # fraction, the waits made non-decreasing.
    sys.path.insert(0, HERE)
    from tail_report import cdf_points

    class FakeRow:
        median = {"p50_ns": 30.0, "p99_ns": 500.0, "p999_ns": 400.0, "max_ns": 9000.0,
                  "cdf_p10_ns": 10.0, "cdf_p99.99_ns": 2000.0, "rsd": 0.5}
    pts = cdf_points(FakeRow())
    check("tail CDF points sorted and monotone",
          pts == [(10.0, 0.1), (30.0, 0.5), (500.0, 0.99), (500.0, 0.999), (2000.0, 0.9999),
                  (9000.0, 1.0)], pts)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        full, quick, after = (os.path.join(tmp, d) for d in ("full", "quick", "after"))
        for d, extra in ((full, []), (quick, ["--reps", "1"]),
                         (after, ["--scale", "0.8", "--seed", "2"])):
            subprocess.run([sys.executable, SYNTH, d] + extra, check=True,
                           capture_output=True)
        out = os.path.join(tmp, "out")
        rc, _, err = run("-o", out, "--command", "tools/bench",
                         os.path.join(full, "park_bench.json"),
                         os.path.join(full, "rust_peers.json"))
        check("report exits 0", rc == 0, err)
        text = open(os.path.join(out, "REPORT.md"), encoding="utf-8").read() if rc == 0 else ""
        for needle in ("# park benchmark report", "## Machine and build", "## Summary",
                       "### mutex", "### sem", "## mutex", "### mutex / contended",
                       "| **park** |", "rust_parking_lot", "park ratio",
                       "### Fairness: park beside pthread", "`tools/bench`", "min/max",
                       "worst wait", "p99.9", "csw/op", "## pool", "### pool / fib30",
                       "### pool / submit", "| rayon |", "spawn/join", "CPU per idle s",
                       "1346268 joins", "## async", "### async / sem_contended",
                       "### async / rwlock_write_uncontended", "| mutex_fifo |",
                       "park_blocking", "textbook async semaphore", "## chan",
                       "### chan / spsc_cap64", "### chan / mpmc_cap1024",
                       "| rust_crossbeam |", "| ck_ring |", "capacity", "1023",
                       "### sem_many / mix", "n=1 p99", "n=32 worst",
                       "| contender | park / it: n=1 p99 | park / it: n=32 worst |"):
            check("REPORT.md has %r" % needle, needle in text)
        # Contention sweeps: park 1.2e7 against rust_parking_lot's 1.25e7 (the
        # best writer-fair peer) and pthread's 1.3e7 at R=90; 1.1e7 against
        # rust_parking_lot's 1.05e7 at W=50 (jitter: a few %).
        sweeps = text[text.find("## Contention sweeps"):text.find("\n## mutex\n")]
        for needle in ("## Contention sweeps", "### mutex sweep: W x threads",
                       "### rwlock sweep: R x threads", "| W | 2 thr | 4 thr | 8 thr | geomean |",
                       "| R | 2 thr | 4 thr | 8 thr | geomean |", "*geomean*",
                       "writer-fair peers (pthread_wpref, absl, rust_parking_lot, rust_std)",
                       "reader-preferring peers (pthread)", "(rust_parking_lot)", "(pthread)",
                       " · min/max 0."):
            check("sweep section has %r" % needle, needle in sweeps)
        rows_w50 = [ln for ln in sweeps.splitlines() if ln.startswith("| 50 |")]
        ok = bool(rows_w50) and all(
            0.95 < float(c.split("(")[0].strip(" *")) < 1.15
            for c in rows_w50[0].split("|")[2:5])
        check("mutex sweep W=50 ratios near 1.05", ok, rows_w50)
        # The cpp family: ratios of park_cpp (park.hpp's wrappers), held
        # against park_c x 1.02: shared far within, sem far above.
        cpp = text[text.find("\n## cpp\n"):]
        for needle in ("### cpp (ratios of park_cpp)", "### cpp / goal",
                       "| scenario | threads | park_cpp / park_c | goal <= 1.02 | park_cpp / std |",
                       "### cpp / mutex_contended", "| **park_cpp** |", "park_cpp ratio",
                       "| cpp | mutex_contended | 2 | **park_cpp** |"):
            check("REPORT.md has %r" % needle, needle in text)
        goal = {ln.split("|")[1].strip(): ln.split("|")[4].strip()
                for ln in cpp[cpp.find("### cpp / goal"):cpp.find("### cpp / mutex_")].splitlines()
                if ln.startswith("| ") and "_" in ln.split("|")[1]}
        check("cpp goal: shared within, sem above",
              goal.get("shared_uncontended") == "within" and
              goal.get("sem_uncontended") == "**above**", goal)
        check("writer worst wait counter shown", "writer worst wait" in text)
        check("google-benchmark suffix /real_time stripped", "real_time" not in text)
        check("no drop-in section without its JSON", "Drop-in" not in text)
        if have_matplotlib():
            for png in ("mutex_sweep.png", "rwlock_sweep.png",
                        "mutex_contended.png", "sem_contended.png", "pool_submit.png",
                        "async_sem_contended.png", "chan_mpmc_cap64.png"):
                path = os.path.join(out, png)
                ok = os.path.exists(path) and open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
                check("%s written" % png, ok)
                check("%s linked" % png, "](%s)" % png in text)
        else:
            check("missing matplotlib is reported", "plots skipped" in text)

        # park 0.8x faster in "after": the ratio of a park row is 0.80.
        out2 = os.path.join(tmp, "cmp")
        rc, stdout, err = run("-o", out2, "--compare", full, after)
        check("compare exits 0", rc == 0, err)
        check("compare writes COMPARE.md", os.path.exists(os.path.join(out2, "COMPARE.md")))
        line = [ln for ln in stdout.splitlines() if ln.startswith("| mutex/uncontended/park |")]
        ok = bool(line) and abs(float(line[0].split("|")[4]) - 0.8) < 0.1
        check("compare ratio of mutex/uncontended/park is about 0.8", ok, line)

        # One repetition: iteration rows instead of aggregates.
        out3 = os.path.join(tmp, "quick_out")
        rc, _, err = run("-o", out3, "--no-plots", os.path.join(quick, "park_bench.json"))
        check("one-repetition JSON reports", rc == 0, err)

        # Without the Rust peers the sweeps still render.
        out5 = os.path.join(tmp, "cxx_only")
        rc, _, err = run("-o", out5, "--no-plots", os.path.join(full, "park_bench.json"))
        text5 = open(os.path.join(out5, "REPORT.md"), encoding="utf-8").read() if rc == 0 else ""
        check("C++-only JSON reports the sweeps", rc == 0 and
              "writer-fair peers (pthread_wpref, absl)" in text5, err)
        check("--no-plots writes no PNG and links none",
              rc == 0 and not any(f.endswith(".png") for f in os.listdir(out5)) and
              ".png)" not in text5, sorted(os.listdir(out5)) if rc == 0 else err)
        tail_checks(text, out, text5)

        # A file cut short by a crashed run still gives its complete rows.
        src = open(os.path.join(full, "park_bench.json"), encoding="utf-8").read()
        cut = os.path.join(tmp, "cut.json")
        with open(cut, "w", encoding="utf-8") as f:
            f.write(src[: len(src) // 2])
        out4 = os.path.join(tmp, "cut_out")
        rc, _, err = run("-o", out4, "--no-plots", cut)
        check("cut-short JSON reports with a warning", rc == 0 and "cut short" in err, err)

        dropin_checks(tmp, full)

        # Not benchmark JSON at all: a clear error.
        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w") as f:
            json.dump({"x": 1}, f)
        rc, _, err = run("-o", out4, bad)
        check("non-benchmark JSON is an error", rc == 1 and "not google-benchmark JSON" in err, err)

    failed = results.count(False)
    print("%d passed, %d failed" % (len(results) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
