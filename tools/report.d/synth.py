#!/usr/bin/env python3
"""Write synthetic benchmark JSON in google-benchmark's shape, to exercise
tools/report without running anything.

usage: python3 tools/report.d/synth.py OUTDIR [--reps N] [--seed S] [--scale F]

Writes OUTDIR/park_bench.json (C++ harness rows) and OUTDIR/rust_peers.json
(Rust peer rows).  --reps 1 writes plain iteration rows, as google-benchmark
does when it runs one repetition; --scale multiplies park's times (to make an
"after" file for tools/report --compare).
"""

import argparse
import json
import os
import random
import statistics

THREADS = [1, 2, 4, 8, 16]


def context(executable, reps):
    return {
        "date": "2024-12-02T17:30:00+00:00",
        "host_name": os.uname().nodename,
        "executable": executable,
        "num_cpus": 2,
        "mhz_per_cpu": 2400,
        "cpu_scaling_enabled": False,
        "caches": [{"type": "Data", "level": 1, "size": 32768, "num_sharing": 1}],
        "load_avg": [0.31, 0.22, 0.15],
        "library_build_type": "release",
    }


class Gen:
    def __init__(self, reps, rnd, scale):
        self.reps = reps
        self.rnd = rnd
        self.scale = scale
        self.rows = []
        self.family_index = -1

    def family(self):
        self.family_index += 1
        self.instance = 0

    def bench(self, name, threads, time_ns, ips=None, counters=None, real_time_suffix=False,
              contender=None, largest=False):
        """time_ns: time per op; ips: throughput (items_per_second); largest:
        a "max" aggregate too, as rows that ask google-benchmark for one."""
        if contender == "park":
            time_ns *= self.scale
            if ips:
                ips /= self.scale
        run_name = name
        if real_time_suffix:
            run_name += "/real_time"
        if threads:
            run_name += "/threads:%d" % threads
        samples = []
        for _ in range(self.reps):
            jitter = self.rnd.uniform(0.95, 1.07)
            s = {"real_time": time_ns * jitter, "cpu_time": time_ns * jitter * 0.98}
            if ips:
                s["items_per_second"] = ips / jitter
            for k, v in (counters or {}).items():
                s[k] = v * self.rnd.uniform(0.9, 1.1) if isinstance(v, float) else v
            samples.append(s)
        base = {
            "family_index": self.family_index,
            "per_family_instance_index": self.instance,
            "run_name": run_name,
            "repetitions": self.reps,
            "threads": threads or 1,
            "time_unit": "ns",
        }
        self.instance += 1
        if self.reps == 1:
            row = dict(base, name=run_name, run_type="iteration", repetition_index=0,
                       iterations=100000)
            row.update(samples[0])
            self.rows.append(row)
            return
        aggs = [("mean", statistics.fmean), ("median", statistics.median),
                ("stddev", statistics.stdev)] + ([("max", max)] if largest else [])
        for agg, fn in aggs:
            row = dict(base, name=run_name + "_" + agg, run_type="aggregate",
                       aggregate_name=agg, aggregate_unit="time", iterations=self.reps)
            for k in samples[0]:
                row[k] = fn([s[k] for s in samples])
            self.rows.append(row)
        cv = dict(base, name=run_name + "_cv", run_type="aggregate", aggregate_name="cv",
                  aggregate_unit="percentage", iterations=self.reps)
        for k in samples[0]:
            m = statistics.fmean([s[k] for s in samples])
            cv[k] = statistics.stdev([s[k] for s in samples]) / m if m else 0
        self.rows.append(cv)


def cxx(reps, rnd, scale):
    g = Gen(reps, rnd, scale)
    mutexes = {"park": (14, 1.0), "pthread_mutex": (15.5, 0.55),
               "pthread_mutex_adaptive": (16, 0.7), "std_mutex": (15.6, 0.55),
               "absl_mutex": (17, 0.8), "ck_spinlock_fas": (9, 0.1),
               "ck_spinlock_ticket": (10, 0.05), "ck_spinlock_mcs": (13, 0.06),
               "cas_spinlock": (8.5, 0.1)}
    g.family()
    for c, (t, _) in mutexes.items():
        g.bench("mutex/uncontended/" + c, None, t, contender=c)
    g.family()
    for c, (t, q) in mutexes.items():
        for th in THREADS:
            base = 1e9 / (t * 1.3)
            if th == 1:
                ips = base
            elif th == 2:
                ips = base * 0.45 * (1 + q)
            else:
                over = 1 if c in ("park", "absl_mutex", "pthread_mutex_adaptive") else (
                    0.6 if not c.startswith("ck") and c != "cas_spinlock" else 0.002 * th)
                ips = base * 0.45 * (1 + q) * over
            g.bench("mutex/contended/" + c, th, 1e9 / ips * th, ips=ips,
                    counters={"csw_per_op": 0.02 * th if th > 1 else 0.0},
                    real_time_suffix=True, contender=c)
    g.family()
    for c in ("park", "pthread_mutex", "std_mutex", "ck_spinlock_ticket"):
        lo = {"park": 9000, "pthread_mutex": 1200, "std_mutex": 1150,
              "ck_spinlock_ticket": 12400}[c]
        g.bench("mutex/fairness/" + c, 4, 80.0, ips=1.25e7,
                counters={"min_acq": lo, "max_acq": 12500, "fairness": lo / 12500,
                          "worst_wait_ns": {"park": 2.1e5, "pthread_mutex": 4.3e7,
                                            "std_mutex": 4.1e7,
                                            "ck_spinlock_ticket": 9e6}[c] * 1.0,
                          "csw_per_op": 0.05},
                real_time_suffix=True, contender=c)
    g.family()
    for c, t in (("park", 9000.0), ("pthread_mutex", 11000.0), ("std_mutex", 11200.0)):
        g.bench("mutex/handoff/" + c, None, t,
                counters={"p50_ns": t / 2.2, "p99_ns": t * 2.0, "p999_ns": t * 6.0,
                          "csw_per_op": 2.0},
                contender=c)
    sems = {"park": 12, "posix_sem": 18, "std_counting_semaphore": 20,
            "condvar_sem": 45}
    g.family()
    for c, t in sems.items():
        g.bench("sem/uncontended/" + c, None, t, contender=c)
    g.family()
    for c, t in sems.items():
        for th in THREADS:
            ips = 1e9 / t * (0.5 if th > 1 else 1) * (0.5 if th > 2 and c == "condvar_sem" else 1)
            g.bench("sem/contended/" + c, th, 1e9 / ips * th, ips=ips,
                    counters={"csw_per_op": 0.1 * (th > 1)}, real_time_suffix=True,
                    contender=c)
    sweeps(g, {"park": 1.1e7, "pthread": 1.0e7, "std": 0.98e7, "absl": 0.9e7},
           {"park": 1.2e7, "pthread": 1.3e7, "pthread_wpref": 0.8e7, "absl": 1.0e7})
    pool(g)
    async_family(g, ("park", "park_blocking", "mutex_fifo"))
    chan(g, ("park", "condvar", "tbb", "ck_ring"))
    sem_many(g, ("park", "park_fifo", "condvar"))
    cpp(g)
    tail(g, {"mutex": ("park", "pthread", "absl", "ck_mcs", "std", "unshared"),
             "sem": ("park", "sem_t", "std"),
             "rwlock": ("park", "pthread_wpref", "absl")}, skew=("park", "pthread", "absl"))
    return {"context": context("build/bench/benchmarks/park_bench", reps),
            "benchmarks": g.rows}


SWEEP_THREADS = [2, 4, 8]


def sweeps(g, mutexes, rwlocks):
    """The contention sweeps: mutex/sweep_w{0,50,200} and rwlock/sweep_r{90,50}
    at 2, 4 and 8 threads. mutexes, rwlocks: {contender: ops/s at W=50 or R=90}."""
    for fam, cells, contenders in (("mutex", (("w0", 3.0), ("w50", 1.0), ("w200", 0.3)), mutexes),
                                   ("rwlock", (("r90", 1.0), ("r50", 0.8)), rwlocks)):
        for scen, f in cells:
            g.family()
            for th in SWEEP_THREADS:
                for c, base in contenders.items():
                    ips = base * f * (1.0 if th == 2 else 0.9)
                    hi = 1e6 * ips / 1e7 / th
                    counters = {"csw_per_op": 0.001, "min_acq": hi * 0.8, "max_acq": hi,
                                "fairness": 0.8, "worst_wait_ns": 1e5}
                    if fam == "rwlock":
                        reads = 0.9 if scen == "r90" else 0.5
                        counters.update({"reads": hi * th * reads,
                                         "writes": hi * th * (1 - reads),
                                         "writer_worst_wait_ns": 8e4})
                    g.bench("%s/sweep_%s/%s" % (fam, scen, c), th, 1e9 / ips * th, ips=ips,
                            counters=counters, real_time_suffix=(c != "park"), contender=c)


def pool(g):
    """The pool family: fork-join, parallel_for, submissions, wake-up, idle."""
    serial = {30: 2.0e6, 35: 2.2e7}
    joins = {30: 1346268, 35: 14930351}
    for n in (30, 35):
        g.family()
        scale = 1 if n == 30 else 11
        for c, t in (("park", 2.3e6 * scale), ("tbb", 7.2e7 * scale), ("serial", None)):
            t = t or serial[n]
            counters = {"workers": 1 if c == "serial" else 2}
            if c != "serial":
                counters["spawn_ns"] = (t * 2 - serial[n]) / joins[n]
            g.bench("pool/fib%d/%s" % (n, c), None, t, counters=counters, contender=c)
    g.family()
    for c, t in (("park", 1.9e6), ("tbb", 1.8e6), ("condvar", 2.4e6), ("serial", 3.7e6)):
        g.bench("pool/parallel_for/" + c, None, t, counters={"workers": 1 if c == "serial" else 2},
                contender=c)
    for c, ips in (("park", 2.0e7), ("tbb", 2.5e6), ("condvar", 1.2e7)):
        g.family()
        for th in (1, 2, 4):
            g.bench("pool/submit/" + c, th, 1e9 / ips, ips=ips,
                    counters={"csw_per_op": 0.002, "cpu_ns_per_op": 2e9 / ips},
                    real_time_suffix=True, contender=c)
    g.family()
    for c, p50 in (("park", 2000.0), ("tbb", 14000.0), ("condvar", 2800.0)):
        g.bench("pool/wakeup/" + c, None, p50,
                counters={"p50_ns": p50, "p99_ns": p50 * 10, "wakeups": 100,
                          "cpu_ns_per_op": 4e4, "csw_per_op": 3.0},
                real_time_suffix=True, contender=c)
    g.family()
    for c, cpu in (("park", 3e4), ("tbb", 1.5e5), ("condvar", 2.5e4), ("serial", 2e4)):
        g.bench("pool/idle/" + c, None, cpu, counters={"idle_cpu_ns": cpu, "csw_per_s": 2.0},
                real_time_suffix=True, contender=c)


ASYNC_NS = {"park": 20.0, "park_blocking": 17.0, "mutex_fifo": 65.0, "rust_tokio": 40.0}
ASYNC_IPS = {"park": 2.5e6, "park_blocking": 2.5e5, "mutex_fifo": 2.0e6, "rust_tokio": 2.2e6}


def async_family(g, contenders):
    """The async family: uncontended round trips, contended continuations."""
    for prim in ("sem", "mutex", "rwlock_read", "rwlock_write"):
        cs = [c for c in contenders if c != "mutex_fifo" or not prim.startswith("rwlock")]
        g.family()
        for c in cs:
            g.bench("async/%s_uncontended/%s" % (prim, c), None, ASYNC_NS[c], contender=c)
        for c in cs:
            g.family()
            for th in (1, 2, 4):
                ips = ASYNC_IPS[c]
                g.bench("async/%s_contended/%s" % (prim, c), th, 1e9 / ips, ips=ips,
                        counters={"csw_per_op": 0.05, "cpu_ns_per_op": 2e9 / ips},
                        real_time_suffix=True, contender=c)


CHAN_IPS = {"park": 1.2e7, "condvar": 4.5e5, "tbb": 3.0e6, "ck_ring": 3.0e7,
            "rust_crossbeam": 2.0e7}


def chan(g, contenders):
    """The chan family: SPSC and MPMC at three capacities."""
    for cap in (1, 64, 1024):
        for c in contenders:
            g.family()
            held = cap - 1 if c == "ck_ring" and cap > 1 else cap
            g.bench("chan/spsc_cap%d/%s" % (cap, c), None, 1e9 / CHAN_IPS[c],
                    ips=CHAN_IPS[c] * cap ** 0.2 / 4,
                    counters={"csw_per_op": 0.01, "capacity": held},
                    real_time_suffix=True, contender=c)
            for th in (4, 8):
                ips = CHAN_IPS[c] * cap ** 0.2 / 4 / (th / 2)
                g.bench("chan/mpmc_cap%d/%s" % (cap, c), th, 1e9 / ips, ips=ips,
                        counters={"csw_per_op": 0.02, "capacity": held},
                        real_time_suffix=True, contender=c)


# sem_many/mix: (requests/s, n=1 p99 ns, n=32 worst ns) per contender.
SEM_MANY = {"park": (2.6e6, 30.0, 9.7e5), "park_fifo": (1.0e6, 4.0e4, 1.35e5),
            "condvar": (1.0e6, 9.0e3, 8.7e5), "rust_tokio": (2.6e6, 7.0e3, 7.9e5)}


def sem_many(g, contenders):
    """The sem_many family, with its own random numbers (the rows before and
    after it keep theirs)."""
    shared, g.rnd = g.rnd, random.Random(27)
    g.family()
    for c in contenders:
        ips, n1_p99, n32_worst = SEM_MANY[c]
        g.bench("sem_many/mix/" + c, 4, 1e9 / ips, ips=ips,
                counters={"csw_per_op": 0.01, "n1_p50_ns": 10.0, "n1_p99_ns": n1_p99,
                          "n32_p50_ns": 20.0, "n32_worst_ns": n32_worst,
                          "n32_requests": 1400},
                real_time_suffix=True, contender=c)
    g.rnd = shared


# cpp: ns per pair (uncontended rows) or ops/s (mutex_contended) per
# contender. park_cpp is far within its goal (park_c x 1.02) in shared and
# far above it in sem, whatever the jitter.
CPP = {"mutex_uncontended": {"park_c": 10.0, "park_cpp": 10.0, "std": 22.0},
       "shared_uncontended": {"park_c": 19.0, "park_cpp": 15.0, "std": 23.0},
       "sem_uncontended": {"park_c": 20.0, "park_cpp": 30.0, "std": 2200.0}}
CPP_CONTENDED = {"park_c": 6.0e6, "park_cpp": 6.0e6, "std": 6.5e6}


def cpp(g):
    """The cpp family, with its own random numbers (the rows before and
    after it keep theirs)."""
    shared, g.rnd = g.rnd, random.Random(28)
    for scen, times in CPP.items():
        g.family()
        for c, t in times.items():
            g.bench("cpp/%s/%s" % (scen, c), None, t, contender=c)
    g.family()
    for c, ips in CPP_CONTENDED.items():
        g.bench("cpp/mutex_contended/" + c, 2, 2e9 / ips, ips=ips,
                counters={"csw_per_op": 0.0001, "min_acq": 5e5, "max_acq": 7e5,
                          "fairness": 0.7, "worst_wait_ns": 3e4},
                real_time_suffix=True, contender=c)
    g.rnd = shared


# tail: per contender (ops/s, p99.9 wait ns); the other quantiles follow
# from the p99.9. At 8 threads in tail/mutex park's p99.9 is half of
# rust_parking_lot's (the best peer with the Rust rows) and a quarter of
# std's (the best without them); unshared, the floor, has the shortest of
# all and is no peer.
TAIL = {"park": (8e6, 500.0), "unshared": (3e7, 40.0), "pthread": (6e6, 5000.0),
        "absl": (5e6, 4000.0),
        "ck_mcs": (1e6, 1e6), "std": (7e6, 2000.0), "sem_t": (2e6, 3000.0),
        "pthread_wpref": (6e6, 2500.0), "rust_parking_lot": (9e6, 1000.0),
        "rust_std": (7e6, 3000.0)}
TAIL_THREADS = [2, 4, 8, 16]
TAIL_CDF = ["0.1", "1", "5", "10", "20", "30", "40", "60", "70", "80", "90", "95", "99.5",
            "99.99"]


def tail_counters(p999):
    """The tail family's wait counters for a row whose p99.9 is p999: the
    CDF rises from 20 ns to p99.9 and on to 10 x p99.9 at the maximum."""
    c = {"csw_per_op": 0.001, "cpu_ns_per_op": 120.0, "p50_ns": 20.0, "p99_ns": p999 / 4,
         "p999_ns": p999, "max_ns": p999 * 10, "rsd": 0.1, "cpu_rsd": 0.05, "lwss": 1.5}
    for p in TAIL_CDF:
        q = float(p) / 100
        c["cdf_p%s_ns" % p] = (20.0 if q <= 0.5 else 20.0 + (p999 / 4 - 20.0) * (q - 0.5) / 0.49
                               if q <= 0.99 else p999 * (2 if q < 0.999 else 5))
    return c


def tail(g, scenarios, skew=()):
    """The tail family, with its own random numbers (the rows before and
    after it keep theirs). scenarios: {scenario: contenders}; skew: the
    contenders of lockskew and nice19."""
    shared, g.rnd = g.rnd, random.Random(29)
    for scen, contenders in scenarios.items():
        g.family()
        for th in TAIL_THREADS:
            for c in contenders:
                ips, p999 = TAIL[c]
                g.bench("tail/%s/%s" % (scen, c), th, 1e9 / ips, ips=ips,
                        counters=tail_counters(p999 * th / 8), real_time_suffix=(c != "park"),
                        contender=c)
    if skew:
        g.family()
        for c in skew:
            counters = tail_counters(TAIL[c][1])
            counters.update({"waiter_acq": 20000 if c == "park" else 500,
                             "relocker_acq": 3000000})
            if c == "park":  # the others' JSON has no such counter: "—"
                counters["waiter_runq_ns"] = 2500000
            g.bench("tail/lockskew/" + c, None, 1e9 / TAIL[c][0], ips=TAIL[c][0],
                    counters=counters, real_time_suffix=True, contender=c, largest=True)
        g.family()
        for c in skew:
            counters = tail_counters(TAIL[c][1])
            counters.update({"nice_acq": 1500 if c == "park" else 15000, "median_acq": 150000,
                             "nice_ratio": 0.01 if c == "park" else 0.1})
            g.bench("tail/nice19/" + c, 4, 1e9 / TAIL[c][0], ips=TAIL[c][0], counters=counters,
                    real_time_suffix=True, contender=c)
    g.rnd = shared


def rust(reps, rnd):
    g = Gen(reps, rnd, 1.0)
    peers = {"rust_parking_lot": (12.5, 0.9), "rust_std": (14.5, 0.6),
             "rust_tokio": (25.0, 0.5)}
    g.family()
    for c, (t, _) in peers.items():
        g.bench("mutex/uncontended/" + c, None, t, contender=c)
    g.family()
    for c, (t, q) in peers.items():
        for th in THREADS:
            ips = 1e9 / (t * 1.3) * (1 if th == 1 else 0.45 * (1 + q))
            g.bench("mutex/contended/" + c, th, 1e9 / ips * th, ips=ips,
                    counters={"csw_per_op": 0.01 * th}, contender=c)
    g.family()
    for c, t in (("rust_tokio", 30.0),):
        g.bench("sem/uncontended/" + c, None, t, contender=c)
    g.family()
    for n, t, serial, joins in ((30, 8.5e6, 1.8e6, 1346268), (35, 9.5e7, 2.0e7, 14930351)):
        g.bench("pool/fib%d/rayon" % n, None, t,
                counters={"workers": 2, "spawn_ns": (t * 2 - serial) / joins},
                contender="rayon")
        g.bench("pool/fib%d/rust_serial" % n, None, serial, counters={"workers": 1},
                contender="rust_serial")
    sweeps(g, {"rust_parking_lot": 1.05e7, "rust_std": 1.0e7},
           {"rust_parking_lot": 1.25e7, "rust_std": 1.1e7})
    async_family(g, ("rust_tokio",))
    chan(g, ("rust_crossbeam",))
    sem_many(g, ("rust_tokio",))
    tail(g, {"mutex": ("rust_parking_lot", "rust_std")})
    ctx = context("benchmarks/peers/rust/target/release/park-peers", reps)
    ctx.update({"harness": "park-peers", "compiler": "rustc 1.63.0",
                "peer_versions": "parking_lot 0.12.1, tokio 1.24.2",
                "min_time_s": 0.2, "repetitions": reps})
    return {"context": ctx, "benchmarks": g.rows}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    rnd = random.Random(a.seed)
    for fname, data in (("park_bench.json", cxx(a.reps, rnd, a.scale)),
                        ("rust_peers.json", rust(a.reps, rnd))):
        with open(os.path.join(a.outdir, fname), "w") as f:
            json.dump(data, f, indent=2)
    print("wrote %s/park_bench.json and %s/rust_peers.json" % (a.outdir, a.outdir))


if __name__ == "__main__":
    main()
