#!/usr/bin/env python3
"""The stat estimator at nested buffer levels against the exact estimator.

    python3 bench/nested_table.py [--tessel build/tools/tessel] [--data ../shared/data]
                                  [--jobs 2] [--accuracy-args ARGS]

Prints, in one invocation:

1. Cost per design point of specs/extensor.yaml (DRAM -> LLB -> PEB) on the three
   largest shared matrices: the exact estimator's model_seconds against the stat
   estimator's from loaded statistics (--stats, best and median of --repeat runs,
   default 5), their ratio, and the stat path taken (closed form or walk).
   `--timing-only` prints this part alone.
2. Accuracy of stat against exact at 1, 2 and 3 buffer levels: bench/stat_accuracy.py
   (every shared matrix and generated graphs, 3 orders, 8 shapes per level count, the
   output sample capped at 5 % of the multiplies), run with the same --tessel, --data
   and --jobs; --accuracy-args passes it more (e.g. "--quick").

Statistics are collected once per matrix (--save-stats) and every point evaluates from
them (--stats), as a sweep would. Figures only, no pass/fail.
"""
import argparse
import statistics
import csv
import os
import subprocess
import sys
import tempfile

SPECS = {1: "specs/extensor-llb.yaml", 2: "specs/extensor.yaml", 3: "bench/specs/extensor-3buf.yaml"}


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


def accuracy(args):
    here = os.path.dirname(os.path.abspath(__file__))
    cmd = [sys.executable, os.path.join(here, "stat_accuracy.py"), "--tessel", args.tessel,
           "--data", args.data, "--jobs", str(args.jobs)] + args.accuracy_args.split()
    print("2. " + " ".join(cmd), flush=True)
    return subprocess.run(cmd).returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tessel", default="build/tools/tessel")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--accuracy-args", default="", help="more arguments for stat_accuracy.py")
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
        if args.timing_only:
            return 0
    return accuracy(args)


if __name__ == "__main__":
    sys.exit(main())
