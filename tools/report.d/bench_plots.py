"""tools/report's plots of benchmark rows (matplotlib, when installed): one
PNG per multi-thread throughput scenario, one per contention sweep and one
CDF of the wait per tail scenario."""

import math
import os
import re

from bench_report import ctx_get, group, sweeps_of
from common import WARNINGS, contender_kind, warn
from tail_report import FAMILY as TAIL, cdf_points, ordered

def plot_name(fam, scen):
    return "%s_%s.png" % (re.sub(r"[^A-Za-z0-9_.-]+", "_", fam),
                         re.sub(r"[^A-Za-z0-9_.-]+", "_", scen))


def make_plots(rows, contexts, outdir):
    """-> {(family, scenario): png name}"""
    families = group(rows)
    # The tail family draws CDFs instead (make_tail_plots).
    wanted = [s for fam, scen in families.items() if fam != TAIL for s in scen if s.plottable]
    if not wanted:
        return {}
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import EngFormatter, FixedLocator, NullLocator
    except ImportError:
        msg = ("plots skipped: matplotlib is missing "
               "(apt-get install python3-matplotlib)")
        warn(msg)
        return {}

    ncpu = ctx_get(contexts, "num_cpus")
    try:
        ncpu = int(ncpu) if ncpu else None
    except (TypeError, ValueError):
        ncpu = None
    made = {}
    markers = "sD^v<>pXh*d"
    # tab10 without its red (park's), then tab20's lighter shades.
    t10, t20 = plt.get_cmap("tab10"), plt.get_cmap("tab20")
    palette = [t10(i) for i in range(10) if i != 3] + \
        [t20(i) for i in range(1, 20, 2) if i != 7]
    for s in wanted:
        fig, ax = plt.subplots(figsize=(9.5, 5.6), dpi=110)
        ts_all = sorted(t for t in s.threads if t is not None)
        lo_t, hi_t = min(ts_all + [1]), max(ts_all + [16])
        ys = []
        nbase = 0
        for c in s.contenders:
            pts = [(t, s.get(c, t)) for t in ts_all]
            pts = [(t, r.throughput) for t, r in pts if r is not None and r.throughput]
            if not pts:
                continue
            xs, yv = zip(*pts)
            ys += yv
            kind = contender_kind(c)
            if kind == "park":
                ax.plot(xs, yv, color="#d62728", linewidth=3.2, marker="o",
                        markersize=7, zorder=10, label="park")
            else:
                color = palette[nbase % len(palette)]
                ax.plot(xs, yv, color=color, linewidth=1.4,
                        linestyle="--" if kind == "peer" else "-",
                        marker=markers[nbase % len(markers)], markersize=4.5,
                        alpha=0.9, zorder=5,
                        label=c + (" (Rust)" if kind == "peer" and not c.startswith("rust_") else ""))
                nbase += 1
        if not ys:
            plt.close(fig)
            continue
        ax.set_xscale("log", base=2)
        ticks = [2 ** i for i in range(int(math.log2(lo_t)), int(math.ceil(math.log2(hi_t))) + 1)]
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticklabels([str(t) for t in ticks])
        ax.set_xlim(lo_t / 1.25, hi_t * 1.25)
        if min(ys) > 0 and max(ys) / min(ys) > 20:
            ax.set_yscale("log")
        else:
            ax.set_ylim(bottom=0)
        ax.yaxis.set_major_formatter(EngFormatter())
        if ncpu and ncpu < hi_t:
            ax.axvspan(ncpu * math.sqrt(2), hi_t * 1.25, color="0.92", zorder=0,
                       label="oversubscribed (> %d CPUs)" % ncpu)
        ax.grid(True, which="major", color="0.85", linewidth=0.7)
        ax.set_xlabel("threads")
        ax.set_ylabel("throughput (ops/s, total over all threads)")
        reps = sorted({r.reps for r in s.rows.values() if r.reps})
        if reps == [1]:
            sub = "1 repetition"
        elif reps:
            sub = "median of %s repetitions" % "/".join(str(x) for x in reps)
        else:
            sub = "median"
        ax.set_title("%s / %s: throughput against threads (%s)" % (s.family, s.name, sub),
                     fontsize=11)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8.5,
                  frameon=False)
        fig.tight_layout()
        name = plot_name(s.family, s.name)
        fig.savefig(os.path.join(outdir, name))
        plt.close(fig)
        made[(s.family, s.name)] = name
    return made


def make_sweep_plots(rows, outdir):
    """One PNG per contention sweep: a panel per parameter value, ops/s
    against threads, a line per contender. -> {family: png name}"""
    sweeps = [sw for sw in sweeps_of(group(rows))
              if any(r.throughput for scen in sw.cells.values() for r in scen.rows.values())]
    if not sweeps:
        return {}
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import EngFormatter, FixedLocator, NullLocator
    except ImportError:
        return {}  # make_plots has said so
    made = {}
    markers = "sD^v<>pXh*d"
    t10, t20 = plt.get_cmap("tab10"), plt.get_cmap("tab20")
    palette = [t10(i) for i in range(10) if i != 3] + \
        [t20(i) for i in range(1, 20, 2) if i != 7]
    for sw in sweeps:
        n = len(sw.values)
        fig, axes = plt.subplots(1, n, figsize=(3.6 * n + 2.4, 4.4), dpi=110, squeeze=False)
        # One colour and marker per contender, the same in every panel.
        style = {}
        for c in sw.contenders:
            if c == "park":
                style[c] = dict(color="#d62728", linewidth=3.0, marker="o", markersize=6,
                                zorder=10)
            else:
                i = len([x for x in style if x != "park"])
                style[c] = dict(color=palette[i % len(palette)], linewidth=1.4,
                                linestyle="--" if contender_kind(c) == "peer" else "-",
                                marker=markers[i % len(markers)], markersize=4.5,
                                alpha=0.9, zorder=5)
        handles = {}
        for ax, v in zip(axes[0], sw.values):
            top = 0
            for c in sw.contenders:
                pts = [(t, sw.get(c, v, t)) for t in sw.threads]
                pts = [(t, r.throughput) for t, r in pts
                       if r is not None and not r.error and r.throughput]
                if not pts:
                    continue
                xs, ys = zip(*pts)
                top = max(top, max(ys))
                (line,) = ax.plot(xs, ys, label=c, **style[c])
                handles.setdefault(c, line)
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_locator(FixedLocator(sw.threads))
            ax.xaxis.set_minor_locator(NullLocator())
            ax.set_xticklabels([str(t) for t in sw.threads])
            if sw.threads:
                ax.set_xlim(sw.threads[0] / 1.3, sw.threads[-1] * 1.3)
            ax.set_ylim(0, top * 1.08 if top else 1)
            ax.yaxis.set_major_formatter(EngFormatter())
            ax.grid(True, which="major", color="0.85", linewidth=0.7)
            ax.set_title("%s = %s" % (sw.param, v), fontsize=10)
            ax.set_xlabel("threads")
        axes[0][0].set_ylabel("ops/s, all threads")
        order = [c for c in sw.contenders if c in handles]
        fig.legend([handles[c] for c in order], order, loc="center left",
                   bbox_to_anchor=(0.995, 0.5), fontsize=8.5, frameon=False)
        fig.suptitle("%s sweep: throughput against threads, one panel per %s" % (sw.family, sw.param),
                     fontsize=11)
        fig.tight_layout()
        name = plot_name(sw.family, "sweep")
        fig.savefig(os.path.join(outdir, name), bbox_inches="tight")
        plt.close(fig)
        made[sw.family] = name
    return made


# The tail CDFs' y axis: fractions on a logit scale, so that p99, p99.9 and
# p99.99 stand as far apart as p50 and p90 (the tail is what the family is
# about); the maximum (fraction 1, which a logit axis cannot show) is drawn
# at TAIL_MAX_Y, labelled "max".
TAIL_Y_TICKS = [0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999]
TAIL_MAX_Y = 0.99997


def make_tail_plots(rows, outdir):
    """One PNG per tail scenario: the CDF of the wait (log x, logit y), a
    panel per thread count, a line per contender. -> {scenario: png name}"""
    wanted = [s for s in group(rows).get(TAIL, [])
              if any(cdf_points(r) for r in s.rows.values() if not r.error)]
    if not wanted:
        return {}
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FixedLocator, NullLocator
    except ImportError:
        if not any("matplotlib is missing" in w for w in WARNINGS):
            warn("plots skipped: matplotlib is missing (apt-get install python3-matplotlib)")
        return {}
    t10, t20 = plt.get_cmap("tab10"), plt.get_cmap("tab20")
    palette = [t10(i) for i in range(10) if i != 3] + \
        [t20(i) for i in range(1, 20, 2) if i != 7]
    made = {}
    for s in ordered(wanted):
        threads = [t for t in s.threads
                   if any(cdf_points(s.get(c, t)) for c in s.contenders
                          if s.get(c, t) is not None and not s.get(c, t).error)]
        n = len(threads)
        fig, axes = plt.subplots(1, n, figsize=(3.8 * n + 2.4, 4.2), dpi=110, squeeze=False,
                                 sharey=True)
        style, handles = {}, {}
        for c in s.contenders:
            if c == "park":
                style[c] = dict(color="#d62728", linewidth=2.6, zorder=10)
            else:
                i = len([x for x in style if x != "park"])
                style[c] = dict(color=palette[i % len(palette)], linewidth=1.3, alpha=0.9,
                                linestyle="--" if c.startswith("rust_") else "-", zorder=5)
        for ax, t in zip(axes[0], threads):
            for c in s.contenders:
                r = s.get(c, t)
                pts = cdf_points(r) if r is not None and not r.error else []
                if not pts:
                    continue
                # A log axis has no 0: waits below 1 ns are drawn at 1 ns.
                xs = [max(v, 1.0) for v, _ in pts]
                ys = [min(q, TAIL_MAX_Y) for _, q in pts]
                (line,) = ax.plot(xs, ys, drawstyle="steps-post", label=c, **style[c])
                handles.setdefault(c, line)
            ax.set_xscale("log")
            ax.set_yscale("logit")
            ax.set_ylim(TAIL_Y_TICKS[0] * 0.8, 1 - (1 - TAIL_MAX_Y) * 0.6)
            ax.yaxis.set_major_locator(FixedLocator(TAIL_Y_TICKS + [TAIL_MAX_Y]))
            ax.yaxis.set_minor_locator(NullLocator())
            ax.set_yticklabels([("%f" % q).rstrip("0") for q in TAIL_Y_TICKS] + ["max"])
            ax.grid(True, which="major", color="0.85", linewidth=0.7)
            ax.set_xlabel("wait (ns)")
            ax.set_title("%s threads" % t if t is not None else s.name, fontsize=10)
        axes[0][0].set_ylabel("fraction of acquisitions (logit scale)")
        order = [c for c in s.contenders if c in handles]
        fig.legend([handles[c] for c in order], order, loc="center left",
                   bbox_to_anchor=(0.995, 0.5), fontsize=8.5, frameon=False)
        fig.suptitle("tail / %s: CDF of the acquire wait (medians of the quantiles over "
                     "repetitions)" % s.name, fontsize=11)
        fig.tight_layout()
        name = plot_name(TAIL, s.name + "_cdf")
        fig.savefig(os.path.join(outdir, name), bbox_inches="tight")
        plt.close(fig)
        made[s.name] = name
    return made
