#!/usr/bin/env python3
"""Time per strategy on every shared matrix with specs/extensor.yaml and
specs/extensor-llb.yaml (issue 19 items 2 and 4): one `tessel compare` per
matrix and spec, its decide_seconds and seconds per strategy, and the
tiles it chose. Figures only: nothing passes or fails.

    python3 bench/strategy_time.py [--tessel build/tools/tessel] [--data ../shared/data]
        [--specs specs/extensor.yaml,specs/extensor-llb.yaml] [--estimator exact]
        [--strategies LIST] [--matrices G51,bcsstk11] [--set PATH=VALUE]...
        [--against EARLIER.csv] [--before OTHER_TESSEL]

Each strategy runs in its own `tessel compare --strategies X` process, so
that cpu_seconds (user + system time of that process: loading, statistics,
deciding and estimating) is its own; decide_seconds and seconds are the wall
times compare.csv reports, which a loaded machine stretches; decide_cpu_seconds
is the deciding thread's CPU time (compare.csv's, empty from an older build). Prints one CSV
row per (spec, matrix, strategy), then the slowest decision per strategy.
The release build (`meson setup build --buildtype=release`) is the one to
time. With --against (this script's output from another build, e.g. before
a speed-up), a last column `choice` says whether each strategy chose the same
tiles as there (same, CHANGED, or new when the row is missing), e.g. for
d2t2's decision time (issue 19 item 2):

    python3 bench/strategy_time.py --estimator stat --strategies d2t2 > before.csv
    (rebuild)
    python3 bench/strategy_time.py --estimator stat --strategies d2t2 --against before.csv

With --before (another build's tessel, e.g. one built from main), each
compare runs with that build first and then with this one, so that both
see the same load: two more columns, that build's decide_cpu_seconds and
before_choice (same, CHANGED, or new when it gave no row), in one
invocation.
"""
import argparse
import csv
import os
import resource
import subprocess
import sys
import tempfile


def matrices(data, only):
    names = []
    with open(os.path.join(data, "MANIFEST.tsv")) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["kind"] == "matrix" and (not only or row["name"] in only):
                names.append((row["name"], os.path.join(data, row["file"])))
    return names


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def earlier_choices(path):
    """(spec, matrix, strategy) -> tile_shape of an earlier output of this script."""
    chosen = {}
    with open(path) as f:
        for row in csv.DictReader(line for line in f if line.strip() and "," in line):
            if row.get("tile_shape") is not None and row.get("matrix"):
                chosen[(row["spec"], row["matrix"], row["strategy"])] = row["tile_shape"]
    return chosen


def choice_of(a, spec, name, row):
    if a.earlier is None:
        return []
    before = a.earlier.get((spec, name, row["strategy"]))
    return ["new" if before is None else "same" if before == row["tile_shape"] else "CHANGED"]


def compare_row(a, tessel, spec, path, strategy):
    """One `tessel compare --strategies STRATEGY`: (cpu seconds, its compare.csv row or
    None, stderr)."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [tessel, "compare", spec, "--tensor", "A=" + path, "-e", a.estimator, "-q",
               "-o", tmp, "--strategies", strategy]
        for s in a.set:
            cmd += ["--set", s]
        before = cpu_children()
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        cpu = cpu_children() - before
        f = os.path.join(tmp, "compare.csv")
        if not os.path.exists(f):
            return cpu, None, r.stderr.strip().replace("\n", " ")
        with open(f) as fh:
            rows = list(csv.DictReader(fh))
        return cpu, rows[0] if rows else None, ""


def run_one(a, spec, name, path, strategy, out, worst, worst_cpu):
    # --before: the other build first, under the same load as this one
    old = compare_row(a, a.before, spec, path, strategy)[1] if a.before else None
    cpu, row, err = compare_row(a, a.tessel, spec, path, strategy)
    if row is None:
        out.writerow([spec, name, strategy, a.estimator, "%.3f" % cpu, "", "", "", "", "", err])
        return
    d = float(row["decide_seconds"] or 0)
    dc = row.get("decide_cpu_seconds") or ""
    extra = choice_of(a, spec, name, row)
    if a.before:
        odc = (old or {}).get("decide_cpu_seconds") or ""
        extra += ["%.3f" % float(odc) if odc else "",
                  "new" if old is None else
                  "same" if old["tile_shape"] == row["tile_shape"] else "CHANGED"]
    out.writerow([spec, name, row["strategy"], row["estimator"], "%.3f" % cpu,
                  "%.3f" % d, "%.3f" % float(dc) if dc else "", row["seconds"],
                  row["dram_bytes"], row["tile_shape"], row["error"]] + extra)
    k = (os.path.basename(spec), row["strategy"])
    if cpu >= worst.get(k, (0, 0, ""))[0]:
        worst[k] = (cpu, d, name)
    dc = float(dc) if dc else -1.0
    if dc >= worst_cpu.get(k, (-1.0, ""))[0]:
        worst_cpu[k] = (dc, name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tessel", default="build/tools/tessel")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--specs", default="specs/extensor.yaml,specs/extensor-llb.yaml")
    ap.add_argument("--estimator", default="exact")
    ap.add_argument("--strategies", default="conservative,prescient,swiftiles,drt,d2t2")
    ap.add_argument("--matrices", default="")
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--against", default="")
    ap.add_argument("--before", default="")
    a = ap.parse_args()
    a.earlier = earlier_choices(a.against) if a.against else None
    if not os.path.exists(os.path.join(a.data, "MANIFEST.tsv")):
        print("no data in %s" % a.data, file=sys.stderr)
        return 77
    only = set(x for x in a.matrices.split(",") if x)
    out = csv.writer(sys.stdout)
    out.writerow(["spec", "matrix", "strategy", "estimator", "cpu_seconds", "decide_seconds",
                  "decide_cpu_seconds", "seconds", "dram_bytes", "tile_shape", "error"]
                 + (["choice"] if a.earlier is not None else [])
                 + (["before_decide_cpu_seconds", "before_choice"] if a.before else []))
    worst, worst_cpu = {}, {}
    for spec in a.specs.split(","):
        for name, path in matrices(a.data, only):
            for strategy in a.strategies.split(","):
                run_one(a, spec, name, path, strategy, out, worst, worst_cpu)
            sys.stdout.flush()
    print("\nslowest per spec and strategy (cpu_seconds of the whole process, "
          "decide_seconds wall):")
    for (spec, strategy), (cpu, d, name) in sorted(worst.items()):
        print("  %-20s %-13s cpu %8.3f s  decide %8.3f s  (%s)" % (spec, strategy, cpu, d, name))
    print("slowest decision per spec and strategy (decide_cpu_seconds):")
    for (spec, strategy), (dc, name) in sorted(worst_cpu.items()):
        print("  %-20s %-13s decide cpu %8.3f s  (%s)" % (spec, strategy, dc, name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
