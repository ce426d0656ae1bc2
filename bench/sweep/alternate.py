#!/usr/bin/env python3
"""CPU and page faults of tessel sweep for several builds, taking turns (issue 19).

For each repeat, every build runs the sweep at every -j given, one after the
other, so that all see the same load. Per build and -j it prints the medians
of the evaluation's CPU and of its busiest thread (both printed by tessel
sweep), the minimum of the busiest thread, and the medians of the whole
process's CPU (user + system) and its minor page faults (getrusage of the
child).

    bench/sweep/alternate.py --builds MAIN,NEW [--jobs 1,2] [--repeat 15] SWEEP.yaml
"""
import argparse
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

LINE = re.compile(r"CPU ([0-9.]+) s, busiest thread ([0-9.]+) s")


def run(tessel, sweep, jobs, out):
    """One run: evaluation CPU, busiest thread, process CPU, minor faults."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([tessel, "sweep", sweep, "-o", out, "-j", jobs, "--overwrite",
                        "--skip-invalid"], capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    m = LINE.search(p.stdout)
    if p.returncode != 0 or not m:
        raise RuntimeError(f"{tessel} -j {jobs}: exit {p.returncode}: {p.stderr.strip()[-300:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return float(m.group(1)), float(m.group(2)), cpu, after.ru_minflt - before.ru_minflt


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--builds", required=True, help="comma-separated tessel binaries")
    ap.add_argument("--jobs", default="1,2", help="comma-separated -j values")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("sweep")
    args = ap.parse_args()
    builds, jobs = args.builds.split(","), args.jobs.split(",")
    res = {(b, j): [] for b in builds for j in jobs}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            for b in builds:
                for j in jobs:
                    res[(b, j)].append(run(b, args.sweep, j, f"{tmp}/out"))
                    shutil.rmtree(f"{tmp}/out")
    for (b, j), v in res.items():
        med = [statistics.median(x[k] for x in v) for k in range(4)]
        print(f"{b} -j {j}: evaluation CPU {med[0] * 1e3:.3f} ms, busiest thread min "
              f"{min(x[1] for x in v) * 1e3:.3f} median {med[1] * 1e3:.3f} ms, process CPU "
              f"{med[2] * 1e3:.1f} ms, minor faults {med[3]:.0f} (medians of {len(v)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
