"""tools/report --compare: the after/before ratio of every benchmark row two
runs have in common, as COMPARE.md and on standard output."""

import glob
import math
import os
import sys

from common import ReportError, fmt_time, geomean, load, md_escape, table

def json_files(path):
    """A JSON file, or every *.json of a folder (e.g. build/report/previous)."""
    if os.path.isdir(path):
        files = sorted(glob.glob(os.path.join(path, "*.json")))
        if not files:
            raise ReportError("no .json file in %s" % path)
        return files
    return [path]


def compare(before_path, after_path, outdir):
    before, _ = load(json_files(before_path))
    after, _ = load(json_files(after_path))
    bmap = {r.run_name: r for r in before}
    amap = {r.run_name: r for r in after}
    body = []
    by_family = {}
    for a in after:
        b = bmap.get(a.run_name)
        if b is None:
            continue
        tb, ta = b.time_ns, a.time_ns
        if tb is None or ta is None:
            body.append([md_escape(a.run_name), fmt_time(tb), fmt_time(ta), "—", "—", "—"])
            continue
        r = ta / tb
        noise = [x for x in (a.cv, b.cv) if x is not None]
        threshold = max(0.03, 2 * math.sqrt(sum(x * x for x in noise))) if noise else 0.05
        verdict = "~" if abs(math.log(r)) < math.log1p(threshold) else (
            "faster" if r < 1 else "slower")
        noise_s = "±%.0f%%" % (100 * threshold)
        body.append([md_escape(a.run_name), fmt_time(tb), fmt_time(ta), "%.3f" % r,
                     noise_s, verdict])
        key = (a.family, "park" if a.kind == "park" else "others")
        by_family.setdefault(key, []).append(r)
    out = ["# park benchmark comparison", "",
           "before: `%s`  " % before_path, "after: `%s`" % after_path, "",
           "after/before ratio of time per op (1 / ops/s for throughput rows): "
           "below 1.000 = after is faster. *noise* is twice the combined "
           "relative stddev of the two rows (at least 3 %); a change inside it "
           "is marked ~.", ""]
    if by_family:
        srows = []
        for fam in dict.fromkeys(k[0] for k in by_family):
            p = by_family.get((fam, "park"), [])
            o = by_family.get((fam, "others"), [])
            g1, g2 = geomean(p), geomean(o)
            srows.append([fam, "—" if g1 is None else "%.3f (%d rows)" % (g1, len(p)),
                          "—" if g2 is None else "%.3f (%d rows)" % (g2, len(o))])
        out += ["Geometric mean of after/before per family. When only park "
                "changed between the two runs, the other contenders' mean shows "
                "how much the machine itself drifted.", "",
                table(["family", "park", "other contenders"], srows), ""]
    if body:
        out += [table(["benchmark", "before", "after", "after/before", "noise", ""], body,
                      ["l", "r", "r", "r", "r", "l"]), ""]
    else:
        out += ["The two runs have no benchmark in common.", ""]
    only_b = [n for n in bmap if n not in amap]
    only_a = [n for n in amap if n not in bmap]
    for what, names in (("before", only_b), ("after", only_a)):
        if names:
            more = " and %d more" % (len(names) - 10) if len(names) > 10 else ""
            out += ["Only in %s (%d): %s%s" % (what, len(names), ", ".join(names[:10]), more), ""]
    text = "\n".join(out).rstrip() + "\n"
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, "COMPARE.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    sys.stdout.write(text)
    return path
