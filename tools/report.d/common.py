"""What tools/report's three programs share: reading google-benchmark JSON
into rows (one per benchmark, summarised over its repetitions), warnings,
and the number and Markdown formatting every report uses."""

import json
import math
import os
import re
import statistics
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# --------------------------------------------------------------------------
# Loading

# Keys google-benchmark writes in every row; any other numeric key is a
# user counter (csw_per_op, min_acq, ...).
STANDARD_KEYS = {
    "name", "family_index", "per_family_instance_index", "run_name",
    "run_type", "repetitions", "repetition_index", "threads", "iterations",
    "real_time", "cpu_time", "time_unit", "aggregate_name", "aggregate_unit",
    "bytes_per_second", "items_per_second", "label", "error_occurred",
    "error_message", "big_o", "rms", "complexity_n",
}

UNIT_TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
GB_SUFFIX = re.compile(r"(real_time|manual_time|process_time|"
                       r"(min_time|min_warmup_time|iterations|repeats):.*)")


class ReportError(Exception):
    pass


WARNINGS = []  # also shown at the top of REPORT.md


def warn(msg):
    WARNINGS.append(msg)
    print("tools/report: warning: " + msg, file=sys.stderr)


def parse_name(run_name):
    """-> (family, scenario, contender, threads or None)"""
    threads = None
    kept = []
    for part in run_name.split("/"):
        m = re.fullmatch(r"threads:(\d+)", part)
        if m:
            threads = int(m.group(1))
        elif not GB_SUFFIX.fullmatch(part):
            kept.append(part)
    if len(kept) >= 3:
        family, scenario, contender = kept[0], kept[1], kept[2]
        if len(kept) > 3:  # extra arguments after the contender
            scenario = scenario + "/" + "/".join(kept[3:])
    elif len(kept) == 2:
        family, scenario, contender = kept[0], "-", kept[1]
    else:
        family, scenario, contender = "other", "-", run_name
    return family, scenario, contender, threads


def contender_kind(contender):
    if contender == "park":
        return "park"
    if contender.startswith("rust_") or contender == "rayon":
        return "peer"
    return "baseline"


def row_values(b):
    """Numeric values of one JSON row: time_ns, items_per_second, counters."""
    vals = {}
    unit = b.get("time_unit", "ns")
    scale = UNIT_TO_NS.get(unit)
    if scale is None:
        raise ReportError("unknown time_unit %r in %s" % (unit, b.get("name")))
    if isinstance(b.get("real_time"), (int, float)):
        vals["time_ns"] = float(b["real_time"]) * scale
    if isinstance(b.get("items_per_second"), (int, float)):
        vals["items_per_second"] = float(b["items_per_second"])
    for k, v in b.items():
        if k in STANDARD_KEYS or isinstance(v, bool):
            continue
        if isinstance(v, (int, float)):
            vals[k] = float(v)
    return vals


class Row:
    """One benchmark (one run_name) summarised over its repetitions."""

    def __init__(self, run_name, source):
        self.run_name = run_name
        self.family, self.scenario, self.contender, self.threads = parse_name(run_name)
        self.kind = contender_kind(self.contender)
        self.source = source
        self.agg = {}        # aggregate_name -> values
        self.samples = []    # iteration rows' values
        self.error = None
        self.order = 0
        self.counter_order = []

    def finish(self):
        if "median" in self.agg:
            self.median = self.agg["median"]
            self.mean = self.agg.get("mean", {})
            self.stddev = self.agg.get("stddev", {})
            # The largest over repetitions, where the row asked for it (a
            # "max" aggregate: tail/lockskew); empty otherwise.
            self.largest = self.agg.get("max", {})
            self.reps = None
        elif self.samples:
            keys = set().union(*self.samples)
            self.median, self.mean, self.stddev, self.largest = {}, {}, {}, {}
            for k in keys:
                xs = [s[k] for s in self.samples if k in s]
                self.median[k] = statistics.median(xs)
                self.mean[k] = statistics.fmean(xs)
                self.largest[k] = max(xs)
                if len(xs) > 1:
                    self.stddev[k] = statistics.stdev(xs)
            self.reps = len(self.samples)
        else:
            self.median, self.mean, self.stddev, self.largest = {}, {}, {}, {}
            self.reps = 0

    @property
    def throughput(self):
        ips = self.median.get("items_per_second")
        return ips if ips and ips > 0 else None

    @property
    def time_ns(self):
        """Time per op in ns: 1/items_per_second for throughput rows."""
        if self.error:
            return None
        ips = self.throughput
        if ips:
            return 1e9 / ips
        t = self.median.get("time_ns")
        return t if t and t > 0 else None

    @property
    def cv(self):
        """Relative spread of the metric over repetitions (stddev/mean)."""
        if self.reps is not None and self.reps <= 1:
            return None
        key = "items_per_second" if self.throughput else "time_ns"
        m, s = self.mean.get(key), self.stddev.get(key)
        if m and s is not None and m > 0:
            return s / m
        return None

    def counters(self):
        return {k: v for k, v in self.median.items()
                if k not in ("time_ns", "items_per_second")}


def read_json(path):
    """Parse a JSON file; a file cut short (a benchmark binary that died while
    writing it) gives back its complete rows, with a warning."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ReportError("cannot read %s: %s" % (path, e))
    try:
        return json.loads(text)
    except ValueError as e:
        error = e
    dec = json.JSONDecoder()
    m = re.search(r'"benchmarks"\s*:\s*\[', text)
    if not m:
        raise ReportError("%s is not valid JSON: %s" % (path, error))
    context = {}
    c = re.search(r'"context"\s*:\s*', text)
    if c:
        try:
            context = dec.raw_decode(text, c.end())[0]
        except ValueError:
            pass
    rows = []
    pos = m.end()
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        try:
            obj, pos = dec.raw_decode(text, pos)
        except ValueError:
            break
        rows.append(obj)
    warn("%s is cut short (%s); using its %d complete rows" % (path, error, len(rows)))
    return {"context": context, "benchmarks": rows}


def load(paths):
    """-> (rows in file order, [(path, context)])"""
    rows = {}
    contexts = []
    order = 0
    for path in paths:
        data = read_json(path)
        if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
            raise ReportError("%s: not google-benchmark JSON (no \"benchmarks\" list)" % path)
        contexts.append((path, data.get("context") or {}))
        if not data["benchmarks"]:
            warn("%s has no benchmark rows" % path)
        seen_here = set()
        for b in data["benchmarks"]:
            name = b.get("run_name") or b.get("name", "")
            if b.get("run_type") == "aggregate" and not b.get("run_name"):
                name = re.sub(r"_(median|mean|stddev|cv|max)$", "", name)
            if not name:
                continue
            if name in rows and name not in seen_here:
                warn("%s appears again in %s; using the later one" % (name, path))
                del rows[name]
            seen_here.add(name)
            row = rows.get(name)
            if row is None:
                row = rows[name] = Row(name, path)
                row.order = order
                order += 1
            if b.get("error_occurred"):
                row.error = b.get("error_message") or "error"
                continue
            vals = row_values(b)
            for k in vals:
                if k not in row.counter_order and k not in ("time_ns", "items_per_second"):
                    row.counter_order.append(k)
            if b.get("run_type") == "aggregate":
                agg = b.get("aggregate_name")
                if agg in ("median", "mean", "stddev", "max"):
                    row.agg[agg] = vals
            else:
                row.samples.append(vals)
            if isinstance(b.get("repetitions"), int):
                row.declared_reps = b["repetitions"]
    result = sorted(rows.values(), key=lambda r: r.order)
    for r in result:
        r.finish()
        if r.reps is None:
            r.reps = getattr(r, "declared_reps", None)
    return result, contexts


# --------------------------------------------------------------------------
# Formatting

def fmt_num(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 100:
        return "%.0f" % v
    if a >= 10:
        return "%.1f" % v
    if a >= 1:
        return "%.2f" % v
    return "%.3g" % v


def fmt_time(ns):
    if ns is None or (isinstance(ns, float) and (math.isnan(ns) or math.isinf(ns))):
        return "—"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(ns) >= scale:
            return "%s %s" % (fmt_num(ns / scale), unit)
    return "%s ns" % fmt_num(ns)


def md_escape(s):
    return str(s).replace("|", "\\|")


def table(header, rows, align=None):
    align = align or (["l"] + ["r"] * (len(header) - 1))
    out = ["| " + " | ".join(md_escape(h) for h in header) + " |",
           "|" + "|".join(":--" if a == "l" else "--:" for a in align) + "|"]
    for r in rows:
        out.append("| " + " | ".join(r) + " |")
    return "\n".join(out)


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    if not xs:
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))
