"""tools/report's plots of benchmark rows (matplotlib, when installed): one
PNG per multi-thread throughput scenario and one per contention sweep."""

import math
import os
import re

from bench_report import ctx_get, group, sweeps_of
from common import contender_kind, warn

def plot_name(fam, scen):
    return "%s_%s.png" % (re.sub(r"[^A-Za-z0-9_.-]+", "_", fam),
                         re.sub(r"[^A-Za-z0-9_.-]+", "_", scen))


def make_plots(rows, contexts, outdir):
    """-> {(family, scenario): png name}"""
    families = group(rows)
    wanted = [s for scen in families.values() for s in scen if s.plottable]
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
