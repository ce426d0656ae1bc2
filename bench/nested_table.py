#!/usr/bin/env python3
"""The stat estimator at nested buffer levels against the exact estimator.

    python3 bench/nested_table.py [--tessel build/tools/tessel] [--data ../shared/data]
                                  [--matrices G51,bcsstk11,...] [--jobs 2]

Prints, in one invocation:

1. Cost per design point of specs/extensor.yaml (DRAM -> LLB -> PEB) on the three
   largest shared matrices: the exact estimator's model_seconds against the stat
   estimator's from loaded statistics (--stats, best and median of --repeat runs,
   default 5), their ratio, and the stat path taken (closed form or walk).
   `--timing-only` prints this part alone.
2. Accuracy, Z = A*A, at 1, 2 and 3 buffer levels (specs/extensor-llb.yaml,
   specs/extensor.yaml, bench/specs/extensor-3buf.yaml), the orders IJK, IKJ and KIJ
   (the same at every level), 8 tile shapes per level (on the --base 8x16 grid), with
   the output sample capped at 5 % of the multiplies (--output-sample 0.05): relative
   error of the DRAM bytes of A, B and Z, of the output nonzeros and of all DRAM bytes
   (median |error|, p95, worst and where), of the inner levels' bytes per tensor (the
   nested boundaries, which DRAM bytes do not see), and the Spearman correlation of the
   8 shapes' ranking by DRAM bytes and by inner-level bytes, per matrix.

Statistics are collected once per matrix (--save-stats) and every point evaluates from
them (--stats), as a sweep would. Figures only, no pass/fail.
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ORDERS = ["IJK", "IKJ", "KIJ"]
# i, k, j per level; each level's tile divides the one above (tiles nest) and sits on
# the 8x16 base grid (i multiple of 8, k and j of 16)
SHAPES = [
    [(64, 1024, 1024), (8, 16, 64), (8, 16, 16)],
    [(128, 512, 512), (16, 32, 32), (8, 16, 16)],
    [(256, 256, 256), (32, 32, 32), (16, 16, 16)],
    [(128, 1024, 256), (16, 64, 32), (8, 32, 16)],
    [(512, 512, 128), (64, 32, 16), (32, 16, 16)],
    [(64, 256, 512), (8, 32, 64), (8, 16, 32)],
    [(256, 1024, 1024), (32, 64, 64), (16, 32, 32)],
    [(1024, 128, 1024), (64, 16, 64), (32, 16, 32)],
]
SPECS = {1: "specs/extensor-llb.yaml", 2: "specs/extensor.yaml", 3: "bench/specs/extensor-3buf.yaml"}
LEVELS = ["LLB", "PEB", "REG"]
DEFAULT_MATRICES = "G51,jagmesh7,nnc1374,hangGlider_2,bcsstk11,ca-GrQc,bcsstk13,p2p-Gnutella05"


def run(tessel, spec, matrix, extra, out):
    cmd = [tessel, "run", spec, "-q", "-o", out, "-T", "A=" + matrix] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(" ".join(cmd) + "\n" + r.stderr)
    traffic = {}
    with open(os.path.join(out, "traffic.csv")) as f:
        for row in csv.DictReader(f):
            traffic[(row["level"], row["tensor"])] = float(row["data_bytes"]) + float(
                row["metadata_bytes"])
    with open(os.path.join(out, "summary.csv")) as f:
        summary = next(csv.DictReader(f))
    return traffic, summary


def sets_for(depth, order, shape):
    s = []
    for lv in range(depth):
        i, k, j = shape[lv]
        s += ["--set", "mapping.%s.order=%s" % (LEVELS[lv], order),
              "--set", "mapping.%s.tile=i:%d,k:%d,j:%d" % (LEVELS[lv], i, k, j)]
    return s


def rel(exact, est):
    if exact == est:
        return 0.0
    return (est - exact) / exact if exact else float("inf")


def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for q in range(i, j + 1):
            r[order[q]] = (i + j) / 2
        i = j + 1
    return r


def spearman(x, y):
    rx, ry = ranks(x), ranks(y)
    mx, my = statistics.mean(rx), statistics.mean(ry)
    sx = sum((a - mx) ** 2 for a in rx) ** 0.5
    sy = sum((b - my) ** 2 for b in ry) ** 0.5
    if sx == 0 or sy == 0:
        return 1.0 if sx == sy else 0.0
    return sum((a - mx) * (b - my) for a, b in zip(rx, ry)) / (sx * sy)


def manifest(data):
    rows = []
    with open(os.path.join(data, "MANIFEST.tsv")) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["kind"] == "matrix" and row["rows"] == row["cols"]:
                rows.append(row)
    return rows


def timing(args, tmp, rows):
    largest = sorted(rows, key=lambda r: int(r["nnz_stored"]))[-3:]
    print("1. Cost per point, specs/extensor.yaml (3 levels), statistics loaded "
          "(model_seconds; stat: best and median of %d)" % args.repeat)
    print("%-14s %9s %12s %12s %12s %10s %7s" % ("matrix", "nnz", "exact s", "stat us",
                                               "median us", "exact/stat", "path"))
    for r in largest:
        path = os.path.join(args.data, r["file"])
        tsd = os.path.join(tmp, r["name"] + ".tsd")
        out = os.path.join(tmp, "t-" + r["name"])
        run(args.tessel, SPECS[2], path, ["-e", "stat", "--base", "8x16", "--save-stats", tsd], out)
        runs = [run(args.tessel, SPECS[2], path, ["--stats", tsd], out)[1]
                for _ in range(max(1, args.repeat))]
        times = [float(s["model_seconds"]) for s in runs]
        best = min(times)
        ex = float(run(args.tessel, SPECS[2], path, [], out)[1]["model_seconds"])
        print("%-14s %9s %12.3f %12.1f %12.1f %10.0f %7s" % (
            r["name"], r["nnz_stored"], ex, best * 1e6, statistics.median(times) * 1e6,
            ex / best if best > 0 else float("inf"), runs[0].get("stat_path", "")))
    print()


def point(args, tmp, name, path, tsd, depth, order, si):
    sets = sets_for(depth, order, SHAPES[si])
    out = os.path.join(tmp, "p-%s-%d-%s-%d" % (name, depth, order, si))
    ex = run(args.tessel, SPECS[depth], path, sets, out + "x")
    st = run(args.tessel, SPECS[depth], path, sets + ["--stats", tsd], out + "s")
    return (name, depth, order, si, ex, st)


def summarize(label, errs):
    a = sorted(abs(e) for e, _ in errs)
    if not a:
        return
    worst = max(errs, key=lambda x: abs(x[0]))
    p95 = a[min(len(a) - 1, int(round(0.95 * (len(a) - 1))))]
    print("  %-26s median %7.3f %%  p95 %7.3f %%  worst %+8.3f %%  (%s)" % (
        label, 100 * statistics.median(a), 100 * p95, 100 * worst[0], worst[1]))


def accuracy(args, tmp, rows):
    byname = {r["name"]: r for r in rows}
    names = [m for m in args.matrices.split(",") if m in byname]
    jobs = []
    for name in names:
        path = os.path.join(args.data, byname[name]["file"])
        for depth in (1, 2, 3):
            tsd = os.path.join(tmp, "%s-%d.tsd" % (name, depth))
            run(args.tessel, SPECS[depth], path,
                ["-e", "stat", "--base", "8x16", "--output-sample", "0.05", "--save-stats", tsd],
                os.path.join(tmp, "c-%s-%d" % (name, depth)))
            for order in ORDERS:
                for si in range(len(SHAPES)):
                    jobs.append((name, path, tsd, depth, order, si))
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda j: point(args, tmp, *j), jobs))
    print("2. Accuracy of stat against exact (output sample 5 %% of the multiplies), %d points"
          % len(results))
    print("   matrices: %s" % ", ".join(names))
    for depth in (1, 2, 3):
        sel = [r for r in results if r[1] == depth]
        print("%d buffer level%s (%s), %d points:" % (depth, "" if depth == 1 else "s",
                                                     SPECS[depth], len(sel)))
        cats = {}
        for name, _, order, si, ex, st in sel:
            where = "%s %s shape %d" % (name, order, si)
            for t in "ABZ":
                cats.setdefault("DRAM bytes " + t, []).append(
                    (rel(ex[0][("DRAM", t)], st[0][("DRAM", t)]), where))
            cats.setdefault("output nonzeros", []).append(
                (rel(float(ex[1]["output_nnz"]), float(st[1]["output_nnz"])), where))
            cats.setdefault("DRAM bytes total", []).append(
                (rel(float(ex[1]["dram_bytes"]), float(st[1]["dram_bytes"])), where))
            for lv in LEVELS[1:depth]:
                for t in "ABZ":
                    cats.setdefault("%s bytes %s" % (lv, t), []).append(
                        (rel(ex[0][(lv, t)], st[0][(lv, t)]), where))
        for label, errs in cats.items():
            summarize(label, errs)
        paths = sorted(set(r[5][1].get("stat_path", "") for r in sel))
        print("  stat_path: %s" % ",".join(paths))
    print("Spearman of the 8 shapes' ranking (DRAM bytes; bytes into the innermost level), "
          "per matrix, worst over depths and orders:")
    for name in names:
        worst_dram, worst_inner = 1.0, 1.0
        for depth in (1, 2, 3):
            for order in ORDERS:
                sel = sorted((r for r in results if r[0] == name and r[1] == depth and r[2] == order),
                             key=lambda r: r[3])
                ex = [float(r[4][1]["dram_bytes"]) for r in sel]
                st = [float(r[5][1]["dram_bytes"]) for r in sel]
                worst_dram = min(worst_dram, spearman(ex, st))
                if depth > 1:
                    lv = LEVELS[depth - 1]
                    ex = [sum(r[4][0][(lv, t)] for t in "ABZ") for r in sel]
                    st = [sum(r[5][0][(lv, t)] for t in "ABZ") for r in sel]
                    worst_inner = min(worst_inner, spearman(ex, st))
        print("  %-16s %.3f  %.3f" % (name, worst_dram, worst_inner))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tessel", default="build/tools/tessel")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--matrices", default=DEFAULT_MATRICES)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--skip-timing", action="store_true")
    ap.add_argument("--timing-only", action="store_true", help="part 1 only")
    ap.add_argument("--repeat", type=int, default=5,
                    help="stat evaluations per matrix in part 1 (the best counts)")
    args = ap.parse_args()
    if not os.path.exists(os.path.join(args.data, "MANIFEST.tsv")):
        print("no %s/MANIFEST.tsv: nothing to measure" % args.data)
        return 0
    rows = manifest(args.data)
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_timing:
            timing(args, tmp, rows)
        if not args.timing_only:
            accuracy(args, tmp, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
