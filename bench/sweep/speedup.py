#!/usr/bin/env python3
"""Speed-up of tessel sweep -j 2 over -j 1, load-independent (issue 19 item 3).

For each sweep file it runs `tessel sweep -j 1` and `-j 2` and reads the
printed summary: the speed-up is the -j 1 run's CPU time over the -j 2
run's busiest thread (its CPU plus its waits for other threads' estimates
and shape summaries), which is what two idle cores would give. It also
reads the stat summaries each run built (shape summaries are shared by the
threads, so -j 2 should build as many as -j 1). Each row gives the best
-j 1 CPU over the best -j 2 busiest thread, then over the repeats the
minimum and median of that ratio per repeat, of the evaluation's wall-time
ratio (stretched by the load: a loaded machine delays the second thread),
the median of the whole process's CPU time -j 2 / -j 1 and of its minor
page faults at -j 1 and -j 2 (getrusage of the child). With --before OTHER
the same runs are made with another build (e.g. main's), the two builds
taking turns within each repeat, so both see the same load. Exits 1 when a row of the
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
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINE = re.compile(r"CPU ([0-9.]+) s, busiest thread ([0-9.]+) s")
WALL = re.compile(r"evaluated on \d+ threads? in ([0-9.]+) s")
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
    """One run's figures: CPU and busiest thread (printed), the evaluation's
    wall time (printed), the stat summaries built, and the process's CPU
    (user + system) and minor page faults (getrusage of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([tessel, "sweep", sweep, "-o", out, "-j", str(jobs), "--overwrite",
                        "--skip-invalid"],
                       capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise RuntimeError(f"{os.path.basename(sweep)} -j {jobs}: exit {p.returncode}: "
                           f"{p.stderr.strip()[-300:]}")
    m = LINE.search(p.stdout)
    w = WALL.search(p.stdout)
    if not m or not w:
        raise RuntimeError(f"no CPU figures in: {p.stdout.strip()[-300:]}")
    b = BUILT.search(p.stdout)
    shapes, nested = (int(b.group(1)), int(b.group(2))) if b else (None, None)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"cpu": float(m.group(1)), "busiest": float(m.group(2)), "wall": float(w.group(1)),
            "built": (shapes, nested), "proc_cpu": cpu,
            "faults": after.ru_minflt - before.ru_minflt}


def read(path):
    with open(path, "rb") as f:
        return f.read()


def measure(builds, sweep, repeat, tmp, row):
    """Per repeat and build, one -j 1 and one -j 2 run, the builds taking
    turns within a repeat so that they see the same load: per build its
    runs' figures, the summaries built, and whether -j 1 and -j 2 wrote
    the same files."""
    out = {tag: ([], None, True) for tag, _ in builds}
    for r in range(repeat):
        for tag, tessel in builds:
            runs, built, same = out[tag]
            d1 = os.path.join(tmp, f"{tag}{row}-j1-{r}")
            d2 = os.path.join(tmp, f"{tag}{row}-j2-{r}")
            j1 = run(tessel, sweep, 1, d1)
            j2 = run(tessel, sweep, 2, d2)
            runs.append((j1, j2))
            built = j1["built"] + j2["built"]
            for name in ("summary.csv", "traffic.csv"):
                same = same and read(os.path.join(d1, name)) == read(os.path.join(d2, name))
            shutil.rmtree(d1)
            shutil.rmtree(d2)
            out[tag] = (runs, built, same)
    return out


def ratio(a, b):
    return a / b if b else float("nan")


def figures(runs):
    """The row's figures: best -j 1 CPU over best -j 2 busiest thread (the
    gate), and per repeat the same ratio, the evaluation's wall-time ratio,
    the process CPU ratio -j 2 / -j 1 and the minor faults of -j 1 and -j 2
    (min and median over the repeats)."""
    best = ratio(min(j1["cpu"] for j1, _ in runs), min(j2["busiest"] for _, j2 in runs))
    per = {
        "speedup": [ratio(j1["cpu"], j2["busiest"]) for j1, j2 in runs],
        "wall": [ratio(j1["wall"], j2["wall"]) for j1, j2 in runs],
        "cpu": [ratio(j2["proc_cpu"], j1["proc_cpu"]) for j1, j2 in runs],
        "f1": [j1["faults"] for j1, _ in runs],
        "f2": [j2["faults"] for _, j2 in runs],
    }
    return best, {k: (min(v), statistics.median(v)) for k, v in per.items()}


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
        print(f"{'sweep':28} {'build':6} {'j1 CPU':>8} {'j2 busiest':>10} {'speed-up':>8}  "
              f"{'min/median':>11}  {'wall min/median':>15}  {'CPU j2/j1':>9}  "
              f"{'faults j1':>9} {'j2':>6}  summaries built j1/j2")
        builds = ([("before", args.before)] if args.before else []) + [("new", args.tessel)]
        for i, sweep in enumerate(sweeps):
            name = os.path.relpath(sweep, ROOT)
            missing = needs_missing_data(sweep)
            if missing:
                print(f"{name:28} skipped: {missing} not found")
                continue
            measured = measure(builds, sweep, args.repeat, tmp, i)
            for tag, _ in builds:
                runs, built, same = measured[tag]
                best, f = figures(runs)
                c1 = min(j1["cpu"] for j1, _ in runs)
                b2 = min(j2["busiest"] for _, j2 in runs)
                row = (f"{name:28} {tag:6} {c1:8.3f} {b2:10.3f} {best:7.2f}x  "
                       f"{f['speedup'][0]:5.2f}/{f['speedup'][1]:4.2f}x  "
                       f"{f['wall'][0]:9.2f}/{f['wall'][1]:4.2f}x  "
                       f"{f['cpu'][1]:8.3f}x  {f['f1'][1]:9.0f} {f['f2'][1]:6.0f}  "
                       f"{fmt_built(built)}")
                if tag == "new":
                    if not same:
                        row += "  FILES DIFFER"
                        bad = 1
                    if not best >= args.target:
                        row += "  below target"
                        bad = 1
                    if built and built[0] is not None and built[2] > built[0]:
                        row += "  summaries built twice"
                        bad = 1
                print(row, flush=True)
    return bad


if __name__ == "__main__":
    sys.exit(main())
