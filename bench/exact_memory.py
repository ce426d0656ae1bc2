#!/usr/bin/env python3
"""Peak memory and time of the exact walk (issue 19 item 1), in one run.

Generates seeded matrices with `tessel gen`, runs one exact estimate of
specs/extensor.yaml at a 1 MiB LLB on each (bench_exact_walk, in a child
process whose peak resident set os.wait4 reports), and prints per matrix:
peak RSS, seconds, effectual tile iterations (all levels), seconds per
iteration, and the ratio of the time to `iterations x c`, where c is the
seconds per iteration measured on the small inputs of the same run.

Large inputs: 1M uniform, 1M R-MAT, 4M R-MAT. Targets: the 4M-nonzero
R-MAT within 2 GB peak, and every ratio within 2.
With --old the old walk (bench_exact_walk --old, every key in memory) runs
too, for the before/after figures (it needs several GB on the large inputs).

    bench/exact_memory.py [--build build] [--old] [--quick] [--keep DIR] [--only LABELS]

The ratio uses CPU seconds of the child process (ru_utime + ru_stime), so a loaded
machine slows the wall clock but not the figure.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEC = os.path.join(ROOT, "specs", "extensor.yaml")
SETS = ["LLB.capacity=1MiB"]
# (label, tessel gen arguments, small: used for the constant)
SMALL = [
    ("uniform 30k", ["uniform", "--size", "30000", "--nnz", "100000"]),
    ("rmat 100k", ["rmat", "--size", "65536", "--nnz", "100000"]),
    ("uniform 100k", ["uniform", "--size", "100000", "--nnz", "100000"]),
]
LARGE = [
    ("uniform 1M", ["uniform", "--size", "100000", "--nnz", "1000000"]),
    ("rmat 1M", ["rmat", "--size", "262144", "--nnz", "1000000"]),
    ("rmat 4M", ["rmat", "--size", "1048576", "--nnz", "4000000"]),
]
QUICK_LARGE = [("uniform 300k", ["uniform", "--size", "100000", "--nnz", "300000"])]


def measure(helper, matrix, old):
    """(peak RSS bytes, output fields) of one estimate in a child process."""
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        p = subprocess.Popen([helper] + (["--old"] if old else []) + [SPEC, matrix] + SETS,
                             stdout=fo, stderr=fe, cwd=ROOT)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status) \
            if hasattr(os, "waitstatus_to_exitcode") else status >> 8
        fo.seek(0)
        fe.seek(0)
        out = fo.read().decode()
        err = fe.read().decode()
    rss = usage.ru_maxrss * 1024  # kilobytes on Linux
    if p.returncode != 0:
        return rss, {"error": (err.strip() or f"exit {p.returncode}")[-200:]}
    words = out.split()
    fields = dict(zip(words[0::2], words[1::2]))
    # CPU seconds of the whole child (load + walk): unlike the walk's own wall-clock
    # seconds they do not grow with the machine's load
    fields["cpu"] = usage.ru_utime + usage.ru_stime
    return rss, fields


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--old", action="store_true", help="also run the old walk")
    ap.add_argument("--quick", action="store_true", help="a 300k matrix instead of 1M and 4M")
    ap.add_argument("--keep", help="directory for the generated matrices (reused)")
    ap.add_argument("--only", help="comma-separated large inputs to run (e.g. 'rmat 4M'); "
                    "the small inputs always run, for the constant")
    args = ap.parse_args()
    tessel = os.path.join(args.build, "tools", "tessel")
    helper = os.path.join(args.build, "bench", "bench_exact_walk")
    for exe in (tessel, helper):
        if not os.access(exe, os.X_OK):
            print(f"missing {exe}: build with meson first (a release build)")
            return 1
    tmp = None
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        where = args.keep
    else:
        tmp = tempfile.TemporaryDirectory()
        where = tmp.name
    walks = [("new", False)] + ([("old", True)] if args.old else [])
    rows = []
    large = QUICK_LARGE if args.quick else LARGE
    if args.only:
        wanted = [w.strip() for w in args.only.split(",")]
        large = [(label, gen) for label, gen in large if label in wanted]
        if not large:
            print(f"--only: none of {wanted} is a large input "
                  f"({', '.join(label for label, _ in LARGE + QUICK_LARGE)})")
            return 1
    for label, gen in SMALL + large:
        path = os.path.join(where, label.replace(" ", "-") + ".mtx")
        if not os.path.exists(path):
            subprocess.run([tessel, "gen"] + gen + ["-o", path], check=True)
        for walk, old in walks:
            t0 = time.time()
            rss, f = measure(helper, path, old)
            rows.append((label, walk, rss, f, time.time() - t0, (label, gen) in SMALL))
    # the constant: CPU seconds per effectual iteration on the small inputs (new walk)
    small = [(f["cpu"], int(f["iterations"])) for _, w, _, f, _, s in rows
             if s and w == "new" and "error" not in f]
    c = sum(s for s, _ in small) / max(1, sum(n for _, n in small))
    print(f"spec {os.path.relpath(SPEC, ROOT)} --set {' '.join(SETS)}, exact estimator")
    print(f"constant c = {c * 1e9:.1f} ns of CPU per effectual tile iteration "
          f"(new walk, the {len(SMALL)} small inputs)")
    print(f"{'matrix':14} {'walk':4} {'peak MB':>9} {'wall s':>9} {'CPU s':>9} "
          f"{'iterations':>14} {'ns/iter':>8} {'t/(n*c)':>8}  target")
    for label, walk, rss, f, wall, is_small in rows:
        if "error" in f:
            print(f"{label:14} {walk:4} {rss / 1e6:9.0f}  error: {f['error']}")
            continue
        w, s, n = float(f["seconds"]), f["cpu"], int(f["iterations"])
        ratio = s / (n * c) if n and c else float("nan")
        target = ""
        if not is_small and walk == "new":
            ok_t = ratio <= 2
            ok_m = rss <= 2e9 if "rmat" in label else True
            target = ("time ok" if ok_t else "time MISSED") + \
                (", memory ok" if ok_m else ", memory MISSED")
        print(f"{label:14} {walk:4} {rss / 1e6:9.0f} {w:9.2f} {s:9.2f} {n:14d} "
              f"{s / n * 1e9 if n else 0:8.1f} {ratio:8.2f}  {target}")
    if tmp:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
