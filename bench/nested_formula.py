#!/usr/bin/env python3
"""Accuracy of the nested formula (`--nested-formula`) against exact and the full stat path.

    python3 bench/nested_formula.py [--tessel build/tools/tessel] [--data ../shared/data]
                                    [--matrices G51,jagmesh7,bcspwr06,bcsstk11]
                                    [--levels 2,3] [--shapes 0,1,2,4,5,7]
                                    [--output-sample 0.05] [--jobs 2]

Per matrix and level count (2: specs/extensor.yaml, 3: bench/specs/extensor-3buf.yaml),
bench/stat_accuracy.py's points (orders IJK, IKJ, KIJ at every level, its tile shapes):
statistics collected once at `--base 8x16` (`--save-stats`), then every point three
ways, each a `tessel run`: `-e exact`, `--stats` (the full stat path, `stat_path`
closed) and `--stats --nested-formula` (`stat_path` formula where the formula priced
it). It prints, per level count and per inner level and tensor (the nested boundaries),
median / p95 / worst relative error of the bytes moved (data + metadata) against exact,
for the full path and for the formula, the worst point named; and the share of points
the formula priced (the others declined to the full path). Figures only, no pass/fail.
"""
import argparse
import os
import statistics
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nested_sampled  # noqa: E402  (its run of one point)
import stat_accuracy as sa  # noqa: E402  (its points, so both benches price the same ones)


def run(args, spec, matrix, extra, out):
    """(summary row, {(level, tensor): bytes}) of one `tessel run`."""
    summary, traffic, _ = nested_sampled.run(args, spec, matrix, extra, out)
    return summary, traffic


def sets_of(depth, order, si):
    args = []
    for k, v in sorted(sa.point_sets(depth, order, si).items()):
        args += ["--set", "%s=%s" % (k, v)]
    return args


def point(args, tmp, matrix, depth, order, si, tsd):
    spec = sa.SPECS[depth]
    sets = sets_of(depth, order, si)
    d = os.path.join(tmp, "%d-%s-%d" % (depth, order, si))
    ex = run(args, spec, matrix, sets + ["-e", "exact"], d + "-exact")
    full = run(args, spec, matrix, sets + ["--stats", tsd], d + "-full")
    form = run(args, spec, matrix, sets + ["--stats", tsd, "--nested-formula"], d + "-form")
    return (order, si), ex, full, form


def rel(a, b):
    return 100.0 * (a - b) / b if b else 0.0


def table(rows, depth):
    print("\n%d levels: bytes into each nested level per tensor, error vs exact "
          "(median / p95 / worst %%)" % depth)
    print("| matrix set | level | tensor | full stat | formula | formula worst at |")
    print("|---|---|---|---|---|---|")
    keys = sorted({k for _, ex, _, _ in rows for k in ex[1]
                   if k[0] in sa.LEVELS[1:depth] or k[0] == "DRAM"})
    for key in keys:
        ef, eg, worst = [], [], None
        for (name, pt), ex, full, form in [(r[0], r[1], r[2], r[3]) for r in rows]:
            b = ex[1].get(key, 0)
            if not b:
                continue
            ef.append(rel(full[1][key], b))
            g = rel(form[1][key], b)
            eg.append(g)
            if worst is None or abs(g) > abs(worst[0]):
                worst = (g, name, pt)

        def fmt(v):
            a = sorted(abs(x) for x in v)
            p95 = a[min(len(a) - 1, int(0.95 * len(a)))]
            w = max(v, key=abs)
            return "%.2f / %.2f / %+.1f" % (statistics.median(a), p95, w)
        if ef:
            print("| all | %s | %s | %s | %s | %s %s shape %d |" % (
                key[0], key[1], fmt(ef), fmt(eg), worst[1], worst[2][0], worst[2][1]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tessel", default="build/tools/tessel")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--matrices", default="G51,jagmesh7,bcspwr06,bcsstk11")
    ap.add_argument("--levels", default="2,3")
    ap.add_argument("--shapes", default=",".join(str(s) for s in sa.QUICK_SHAPES))
    ap.add_argument("--output-sample", default="0.05")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    shapes = [int(s) for s in args.shapes.split(",")]
    for depth in [int(x) for x in args.levels.split(",")]:
        rows, priced, total = [], 0, 0
        for name in args.matrices.split(","):
            matrix = os.path.join(args.data, "mtx", name + ".mtx.gz")
            if not os.path.exists(matrix):
                print("skip %s: no %s" % (name, matrix))
                continue
            tmp = tempfile.mkdtemp(prefix="nested_formula-")
            tsd = os.path.join(tmp, "stats.tsd")
            run(args, sa.SPECS[depth], matrix,
                ["-e", "stat", "--base", "8x16", "--output-sample", args.output_sample,
                 "--save-stats", tsd], os.path.join(tmp, "save"))
            with ThreadPoolExecutor(args.jobs) as pool:
                futs = [pool.submit(point, args, tmp, matrix, depth, o, si, tsd)
                        for o in sa.ORDERS for si in shapes]
                for f in futs:
                    pt, ex, full, form = f.result()
                    rows.append(((name, pt), ex, full, form))
                    total += 1
                    priced += form[0]["stat_path"] == "formula"
        print("\n%d levels: %d points, %d priced by the formula" % (depth, total, priced))
        table([((n, pt), ex, full, form) for (n, pt), ex, full, form in rows], depth)


if __name__ == "__main__":
    main()
