#!/usr/bin/env python3
"""Speed-up of tessel sweep -j 2 over -j 1, load-independent (issue 19 item 3).

For each sweep file it runs `tessel sweep -j 1` and `-j 2` and reads the
printed summary: the speed-up is the -j 1 run's CPU time over the -j 2
run's busiest thread (its CPU plus its waits for other threads' estimates
and shape summaries), which is what two idle cores would give. It also
reads the stat summaries each run built (shape summaries are shared by the
threads, so -j 2 should build as many as -j 1). With --before OTHER the
same runs are made with another build (e.g. main's) on each row, one
after the other, so both see the same load. Exits 1 when a row of the
build under test is below --target (default 1.6) or builds more shape
summaries at -j 2 than at -j 1, or when -j 1 and -j 2 write different
summary.csv / traffic.csv.

    bench/sweep/speedup.py --tessel build/tools/tessel [--before MAIN]
        [--repeat N] [--target 1.6] [SWEEP.yaml ...]

Default files: examples/sweep/*.yaml that are sweep files, and
bench/sweep/arch-condmat.yaml and bench/sweep/mapping-ca-condmat.yaml
(these need ../shared/data; missing data skips the row).
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINE = re.compile(r"CPU ([0-9.]+) s, busiest thread ([0-9.]+) s")
BUILT = re.compile(r"stat summaries built: (\d+) shape, (\d+) nested")


def default_files():
    files = []
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "sweep", "*.yaml"))):
        with open(path) as f:
            if re.search(r"^axes:", f.read(), re.M):  # a sweep file, not a base spec
                files.append(path)
    files += [os.path.join(ROOT, "bench", "sweep", n)
              for n in ("arch-condmat.yaml", "mapping-ca-condmat.yaml")]
    return files


def run(tessel, sweep, jobs, out):
    """(CPU, busiest thread, shape summaries, nested summaries) of one run."""
    p = subprocess.run([tessel, "sweep", sweep, "-o", out, "-j", str(jobs), "--overwrite",
                        "--skip-invalid"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{os.path.basename(sweep)} -j {jobs}: exit {p.returncode}: "
                           f"{p.stderr.strip()[-300:]}")
    m = LINE.search(p.stdout)
    if not m:
        raise RuntimeError(f"no CPU figures in: {p.stdout.strip()[-300:]}")
    b = BUILT.search(p.stdout)
    shapes, nested = (int(b.group(1)), int(b.group(2))) if b else (None, None)
    return float(m.group(1)), float(m.group(2)), shapes, nested


def read(path):
    with open(path, "rb") as f:
        return f.read()


def measure(tessel, sweep, repeat, tmp, tag):
    """Best -j 1 CPU and best -j 2 busiest thread over repeat runs, the
    summaries built, and whether both wrote the same files."""
    best1, best2, built, same = None, None, None, True
    for r in range(repeat):
        d1 = os.path.join(tmp, f"{tag}-j1-{r}")
        d2 = os.path.join(tmp, f"{tag}-j2-{r}")
        cpu1, _, s1, n1 = run(tessel, sweep, 1, d1)
        _, busy2, s2, n2 = run(tessel, sweep, 2, d2)
        best1 = cpu1 if best1 is None else min(best1, cpu1)
        best2 = busy2 if best2 is None else min(best2, busy2)
        built = (s1, n1, s2, n2)
        for name in ("summary.csv", "traffic.csv"):
            same = same and read(os.path.join(d1, name)) == read(os.path.join(d2, name))
    return best1, best2, built, same


def needs_missing_data(sweep):
    """A sweep whose data entries are not all present (../shared/data)."""
    text = open(sweep).read()
    base = os.path.dirname(sweep)
    for path in re.findall(r"([\w./-]+\.(?:mtx|tns)(?:\.gz)?)", text):
        if not os.path.exists(os.path.join(base, path)):
            return path
    return None


def fmt_built(b):
    if b is None or b[0] is None:
        return "-"
    return f"{b[0]}/{b[2]} (nested {b[1]}/{b[3]})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tessel", default=os.path.join(ROOT, "build", "tools", "tessel"))
    ap.add_argument("--before", help="another tessel binary measured on each row too")
    ap.add_argument("--repeat", type=int, default=1, help="runs per row (best of)")
    ap.add_argument("--target", type=float, default=1.6)
    ap.add_argument("sweeps", nargs="*")
    args = ap.parse_args()
    sweeps = [os.path.abspath(s) for s in args.sweeps] or default_files()
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        head = f"{'sweep':28} "
        if args.before:
            head += f"{'before j1 CPU':>13} {'j2 busiest':>10} {'speed-up':>8}   "
        head += f"{'j1 CPU':>8} {'j2 busiest':>10} {'speed-up':>8}  summaries built j1/j2"
        print(head)
        for i, sweep in enumerate(sweeps):
            name = os.path.relpath(sweep, ROOT)
            missing = needs_missing_data(sweep)
            if missing:
                print(f"{name:28} skipped: {missing} not found")
                continue
            row = f"{name:28} "
            if args.before:
                c1, b2, _, same_b = measure(args.before, sweep, args.repeat, tmp, f"b{i}")
                row += f"{c1:13.3f} {b2:10.3f} {c1 / b2 if b2 else float('nan'):7.2f}x   "
            c1, b2, built, same = measure(args.tessel, sweep, args.repeat, tmp, f"a{i}")
            ratio = c1 / b2 if b2 else float("nan")
            row += f"{c1:8.3f} {b2:10.3f} {ratio:7.2f}x  {fmt_built(built)}"
            if not same:
                row += "  FILES DIFFER"
                bad = 1
            if not ratio >= args.target:
                row += "  below target"
                bad = 1
            if built and built[0] is not None and built[2] > built[0]:
                row += "  summaries built twice"
                bad = 1
            print(row, flush=True)
    return bad


if __name__ == "__main__":
    sys.exit(main())
