#!/usr/bin/env python3
"""The stat estimator's nested levels on a sample of strips (`--nested-budget`) against
the full stat path and the exact estimator.

    python3 bench/nested_sampled.py [--tessel build/tools/tessel] [--data ../shared/data]
        [--matrices wiki-Vote,bcsstk16,ca-CondMat] [--shares 0.05,0.1,0.25,0.5]
        [--spec specs/extensor.yaml] [--repeat 5] [--no-gen] [--no-exact]

Per matrix (and a generated clustered graph unless --no-gen): statistics are collected
once (--save-stats, --base 8x16 as bench/nested_table.py) and every point evaluates from
them. For each share s the budget is s times the point's work (base tile multiplies,
read from a first run's note), so the shares are comparable across matrices. Prints,
per (share, inner level, tensor), the relative error of the bytes into that level
against the full stat path and against exact, the reported standard error, and
model_seconds (best of --repeat) of the full and the sampled path. Figures only.
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile

NOTE = re.compile(r"estimated from ([0-9.]+) % .* standard error of their bytes ([0-9.]+) %")
GRAPH = ["clustered", "--size", "10000", "--cliques", "8000", "--tail", "5000",
         "--skew", "0.9", "--clique-max", "16", "--seed", "1"]


def run(args, spec, matrix, extra, out):
    cmd = [args.tessel, "run", spec, "-q", "-o", out, "-T", "A=" + matrix] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(" ".join(cmd) + "\n" + r.stderr)
    with open(os.path.join(out, "summary.csv")) as f:
        summary = next(csv.DictReader(f))
    traffic = {}
    with open(os.path.join(out, "traffic.csv")) as f:
        for row in csv.DictReader(f):
            traffic[(row["level"], row["tensor"])] = (float(row["data_bytes"]) +
                                                      float(row["metadata_bytes"]))
    return summary, traffic, r.stderr


def best(args, spec, matrix, extra, out):
    runs = [run(args, spec, matrix, extra, out) for _ in range(max(1, args.repeat))]
    t = min(float(r[0]["model_seconds"]) for r in runs)
    return runs[0], t


def rel(a, b):
    return (a - b) / b if b else 0.0


def work_of(args, spec, matrix, tsd, out):
    """The point's work in base tile multiplies. A budget at or above it leaves the full
    path and one far below it draws too few strips; the draw evaluates about the budget,
    so the first budget (from above, by quarters) that samples gives work = budget /
    share."""
    budget = 1 << 36
    for _ in range(20):
        _, _, err = run(args, spec, matrix, ["--stats", tsd, "--nested-budget", str(budget)],
                        out)
        m = NOTE.search(err)
        if m and float(m.group(1)) > 0:
            return budget / (float(m.group(1)) / 100)
        budget //= 4
    return None


def one(args, tmp, name, matrix):
    spec = args.spec
    tsd = os.path.join(tmp, name + ".tsd")
    out = os.path.join(tmp, "o")
    run(args, spec, matrix, ["-e", "stat", "--base", "8x16", "--save-stats", tsd], out)
    (full_s, full_t, _), full_time = best(args, spec, matrix, ["--stats", tsd,
                                                               "--nested-budget", "0"], out)
    exact = None
    if not args.no_exact:
        exact = run(args, spec, matrix, [], out)[1]
    inner = [k for k in sorted(full_t) if k[0] not in ("DRAM", "LLB") and full_t[k]]
    print("%s: full stat %.1f ms%s" % (name, 1e3 * full_time, "" if exact is None else
          "; full stat vs exact: " + " ".join("%s/%s %+.2f%%" % (k[0], k[1], 100 * rel(
              full_t[k], exact[k])) for k in inner)))
    work = work_of(args, spec, matrix, tsd, out)
    if not work:
        print("  no sampling (too few strips)")
        return
    for share in args.shares:
        budget = int(work * share)
        (s, t, err), tm = best(args, spec, matrix, ["--stats", tsd, "--nested-budget",
                                                     str(budget)], out)
        m = NOTE.search(err)
        if s["stat_path"] != "sampled" or not m:
            print("  share %.2f: not sampled (%s)" % (share, s["stat_path"]))
            continue
        parts = []
        for k in inner:
            p = "%s/%s %+.2f%%" % (k[0], k[1], 100 * rel(t[k], full_t[k]))
            if exact is not None:
                p += " (exact %+.2f%%)" % (100 * rel(t[k], exact[k]))
            parts.append(p)
        print("  share %.2f (evaluated %s %%, stderr %s %%): %.1f ms; vs full: %s" % (
            share, m.group(1), m.group(2), 1e3 * tm, "  ".join(parts)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tessel", default="build/tools/tessel")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--matrices", default="wiki-Vote,bcsstk16,ca-CondMat")
    ap.add_argument("--shares", default="0.05,0.1,0.25,0.5")
    ap.add_argument("--spec", default="specs/extensor.yaml")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-gen", action="store_true")
    ap.add_argument("--no-exact", action="store_true")
    args = ap.parse_args()
    args.shares = [float(x) for x in args.shares.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        if not args.no_gen:
            graph = os.path.join(tmp, "clustered.mtx")
            r = subprocess.run([args.tessel, "gen"] + GRAPH + ["--pattern", "-o", graph],
                               capture_output=True, text=True)
            if r.returncode:
                raise SystemExit("tessel gen failed: " + r.stderr)
            one(args, tmp, "gen-clustered-10k", graph)
        for name in args.matrices.split(","):
            path = os.path.join(args.data, "mtx", name + ".mtx.gz")
            if os.path.exists(path):
                one(args, tmp, name, path)
            else:
                print("%s: no %s" % (name, path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
