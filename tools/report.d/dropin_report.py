"""tools/report's drop-in report: tools/dropin-eval's JSON (unmodified
programs with glibc and under park-run) as a Markdown section, a bar plot,
and REPORT.md when no benchmark JSON comes with it."""

import datetime
import os
import re
import statistics

from common import WARNINGS, fmt_num, fmt_time, geomean, md_escape, table, warn


# tools/dropin-eval's JSON: {"dropin": {context}, "rows": [...]}, a row per
# program and configuration.

def is_dropin(data):
    return isinstance(data, dict) and isinstance(data.get("dropin"), dict) and \
        isinstance(data.get("rows"), list)


class DropinRow:
    """One program and configuration, its runs with glibc and under park."""

    def __init__(self, d, path):
        self.program = str(d.get("program", "?"))
        self.config = str(d.get("config", ""))
        self.metric = str(d.get("metric", ""))
        self.unit = str(d.get("unit", ""))
        self.higher = bool(d.get("higher_is_better", True))
        self.command = d.get("command")
        self.source = path
        self.sides = {}
        for impl in ("glibc", "park"):
            s = d.get(impl) or {}
            self.sides[impl] = {
                "values": [float(x) for x in s.get("values") or []],
                "latency": [float(x) for x in s.get("latency_us") or []],
                "errors": [str(e) for e in s.get("errors") or []],
                "preload": [str(p) for p in s.get("preload") or []],
            }

    @property
    def name(self):
        return "%s %s" % (self.program, self.config) if self.config else self.program

    def errors(self):
        return ["%s: %s" % (impl, e) for impl in ("glibc", "park")
                for e in self.sides[impl]["errors"]]

    def ok(self, impl):
        s = self.sides[impl]
        return bool(s["values"]) and not s["errors"]

    def median(self, impl, key="values"):
        xs = self.sides[impl][key]
        return statistics.median(xs) if xs and self.ok(impl) else None

    def speedup(self, g, p):
        """park's throughput / glibc's: above 1 = park is faster."""
        if not g or not p:
            return None
        return p / g if self.higher else g / p

    @property
    def ratio(self):
        return self.speedup(self.median("glibc"), self.median("park"))

    def ratio_spread(self):
        """(min, max) of the ratios of the runs paired in order (glibc run i
        and park run i ran back to back)."""
        if not (self.ok("glibc") and self.ok("park")):
            return None
        rs = [self.speedup(g, p) for g, p in zip(self.sides["glibc"]["values"],
                                                self.sides["park"]["values"])]
        rs = [r for r in rs if r]
        return (min(rs), max(rs)) if rs else None


PRELOAD_KINDS = ("mutexes", "conds", "rwlocks", "sems")


def preload_counts(lines):
    """park-preload report lines -> {kind: ([managed...], [passed...])}"""
    counts = {}
    for line in lines:
        for kind, managed, passed in re.findall(
                r"(\w+) (\d+) managed, (\d+) passed through", line):
            m, p = counts.setdefault(kind, ([], []))
            m.append(int(managed))
            p.append(int(passed))
    return counts


def fmt_span(xs):
    lo, hi = min(xs), max(xs)
    return "%d" % lo if lo == hi else "%d–%d" % (lo, hi)


def fmt_managed(lines):
    counts = preload_counts(lines)
    if not counts:
        return "—"
    parts = []
    for kind in [k for k in PRELOAD_KINDS if k in counts] + \
            [k for k in counts if k not in PRELOAD_KINDS]:
        managed, passed = counts[kind]
        s = "%s %s" % (kind, fmt_span(managed))
        if max(passed):
            s += " (+%s passed)" % fmt_span(passed)
        parts.append(s)
    return ", ".join(parts)


def fmt_metric(v, unit):
    """A time in seconds as a time; anything else as a number with a k/M
    prefix, its unit left to the metric column."""
    if v is None:
        return "—"
    if unit == "s":
        return fmt_time(v * 1e9)
    for suffix, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(v) >= scale:
            return "%s %s" % (fmt_num(v / scale), suffix)
    return fmt_num(v)


def fmt_metric_spread(row, impl):
    s = row.sides[impl]
    if s["errors"]:
        return "**error**"
    if not s["values"]:
        return "—"
    cell = fmt_metric(row.median(impl), row.unit)
    if len(s["values"]) > 1:
        cell += " (%s – %s)" % (fmt_metric(min(s["values"]), row.unit),
                                fmt_metric(max(s["values"]), row.unit))
    return cell


def fmt_speedup(r):
    if r is None:
        return "—"
    return "%.2f" % r


def load_dropin(paths_and_data):
    rows, contexts = [], []
    for path, data in paths_and_data:
        contexts.append((path, data["dropin"]))
        rows += [DropinRow(d, path) for d in data["rows"] if isinstance(d, dict)]
        if not data["rows"]:
            warn("%s has no drop-in rows" % path)
    return rows, contexts


def dropin_machine_lines(contexts):
    lines = []
    for key, title in (("cpu_model", "CPU"), ("num_cpus", "logical CPUs"),
                       ("host_name", "host"), ("kernel", "kernel"),
                       ("packages", "programs (Debian packages)"), ("runs", "runs per row")):
        vals = []
        for _, ctx in contexts:
            v = ctx.get(key)
            if v not in (None, "") and str(v) not in vals:
                vals.append(str(v))
        if vals:
            lines.append((title, "; ".join(vals)))
    for p, ctx in contexts:
        what = os.path.basename(p)
        if ctx.get("date"):
            what += ", run %s" % ctx["date"]
        if ctx.get("command"):
            what += ", `%s`" % ctx["command"]
        lines.append(("input", what))
    return lines


def dropin_section(rows, contexts, plot):
    out = ["## Drop-in: unmodified programs under park-run", "",
           "Each program runs as shipped by Debian, once with glibc's pthreads and once "
           "under `park-run` (libpark-preload.so serves its mutexes, condition variables, "
           "rwlocks and semaphores), alternating glibc, park, glibc, park, ... Load "
           "generators (memcaslap) always run with glibc. Cells are medians over the runs "
           "with the lowest and highest run in brackets. *park/glibc* is park's throughput "
           "divided by glibc's (for time rows glibc's time / park's): **above 1.00 = park "
           "is faster**; *run pairs* is the lowest and highest of the same ratio taken per "
           "back-to-back pair of runs. *latency* is memcaslap's average over all get and "
           "set operations (median over runs). *managed* is what the preload reported at "
           "exit (`PARK_PRELOAD_VERBOSE=1`): objects park served, over the runs. A run whose "
           "program fails its own check (memcaslap's verification, sysbench's exit status, "
           "kccachetest's `ok`) makes its row an error, never a number.", ""]
    for p, ctx in contexts:
        bits = [b for b in (ctx.get("date"), ctx.get("host_name") and "on " + ctx["host_name"],
                            ctx.get("num_cpus") and "%s logical CPUs" % ctx["num_cpus"],
                            ctx.get("runs") and "%s run(s) per row" % ctx["runs"]) if b]
        line = "Measured " + ", ".join(str(b) for b in bits)
        if ctx.get("command"):
            line += " by `%s`" % ctx["command"]
        out += [line + ".", ""]
    body = []
    for r in rows:
        lat = "—"
        lg, lp = r.median("glibc", "latency"), r.median("park", "latency")
        if lg is not None or lp is not None:
            lat = "%s / %s" % (fmt_time(lg * 1e3) if lg is not None else "—",
                               fmt_time(lp * 1e3) if lp is not None else "—")
        spread = r.ratio_spread()
        if r.errors():
            ratio_cell = "**error**"
        else:
            ratio_cell = fmt_speedup(r.ratio)
        metric = r.metric if r.unit in ("", "s", r.metric) else "%s (%s)" % (r.metric, r.unit)
        body.append([md_escape(r.program), md_escape(r.config), md_escape(metric),
                     fmt_metric_spread(r, "glibc"), fmt_metric_spread(r, "park"), ratio_cell,
                     "—" if spread is None else "%s – %s" % (fmt_speedup(spread[0]),
                                                           fmt_speedup(spread[1])),
                     lat, md_escape(fmt_managed(r.sides["park"]["preload"]))])
    out += [table(["program", "config", "metric", "glibc", "park", "park/glibc",
                   "run pairs", "latency glibc / park", "managed (park)"], body,
                  ["l", "l", "l", "r", "r", "r", "r", "r", "l"]), ""]
    ratios = [r.ratio for r in rows if r.ratio and not r.errors()]
    if ratios:
        out += ["Geometric mean of park/glibc over the %d rows without errors: %.2f."
                % (len(ratios), geomean(ratios)), ""]
    errs = [(r, e) for r in rows for e in r.errors()]
    if errs:
        out += ["Errors:", ""]
        out += ["- %s: %s" % (md_escape(r.name), md_escape(e)) for r, e in errs]
        out.append("")
    cmds = [(r.name, r.command) for r in rows if r.command]
    if cmds:
        out += ["Commands: " + "; ".join("%s: `%s`" % (md_escape(n), c) for n, c in cmds)
                + ".", ""]
    if plot:
        out += ["![park/glibc per program](%s)" % plot, ""]
    return out


def make_dropin_plot(rows, outdir):
    """A bar per row: park/glibc, with the run pairs' range. -> png name"""
    rows = [r for r in rows if r.ratio and not r.errors()]
    if not rows:
        return None
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        warn("plots skipped: matplotlib is missing (apt-get install python3-matplotlib)")
        return None
    fig, ax = plt.subplots(figsize=(7.5, 0.5 * len(rows) + 1.4), dpi=110)
    ys = list(range(len(rows)))[::-1]
    vals = [r.ratio for r in rows]
    lo = [r.ratio - (r.ratio_spread() or (r.ratio, r.ratio))[0] for r in rows]
    hi = [(r.ratio_spread() or (r.ratio, r.ratio))[1] - r.ratio for r in rows]
    colors = ["#d62728" if v >= 1 else "#7f7f7f" for v in vals]
    ax.barh(ys, vals, color=colors, height=0.6, xerr=[lo, hi],
            error_kw=dict(ecolor="0.2", capsize=3, linewidth=1))
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_yticks(ys)
    ax.set_yticklabels([r.name for r in rows], fontsize=8.5)
    for y, v in zip(ys, vals):
        ax.text(0.02, y, "%.2f" % v, va="center", ha="left", fontsize=8, color="white",
                transform=ax.get_yaxis_transform())
    ax.set_xlim(0, max(1.2, max(v + h for v, h in zip(vals, hi)) * 1.05))
    ax.grid(True, axis="x", color="0.85", linewidth=0.7)
    ax.set_axisbelow(True)
    ax.set_xlabel("park / glibc throughput: median, bars span the run pairs (> 1 = park faster)",
                  fontsize=9)
    ax.set_title("Drop-in: unmodified programs under park-run", fontsize=11)
    fig.tight_layout()
    name = "dropin.png"
    fig.savefig(os.path.join(outdir, name))
    plt.close(fig)
    return name


def write_dropin_report(outdir, command, drows, dcontexts, dplot):
    """REPORT.md with the drop-in section only (no benchmark JSON given)."""
    now = datetime.datetime.now().astimezone()
    lines = dropin_machine_lines(dcontexts)
    if command:
        lines.append(("command", "`%s`" % command))
    out = ["# park benchmark report", "",
           "Written %s." % now.strftime("%Y-%m-%d %H:%M %Z"), "",
           "## Machine", "",
           table(["what", "value"], [[k, md_escape(v)] for k, v in lines], ["l", "l"]), ""]
    for w in WARNINGS:
        out += ["**Warning: %s**" % md_escape(w), ""]
    out += dropin_section(drows, dcontexts, dplot)
    path = os.path.join(outdir, "REPORT.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out).rstrip() + "\n")
    return path
