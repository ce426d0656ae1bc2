#!/usr/bin/env python3
"""Cost of one design point from Python (tessel.run on statistics collected once) against
the same points priced from C (bench_binding: tessel_spec_derive + tessel_sweep_record_create
on the same statistics, energy_pj read from the record's report point), in one invocation;
issue 28's target is a ratio within 2x. Also timed: the same grid through
spec.bind(paths).run(values) (the paths packed once) and tessel.run_many (one library
call, one table), and from C through tessel_sweep_point_values, the call
tessel.run's fast path makes (bench_binding ... values).

  python3 bench/python_point.py [--build build] [--matrix NAME] [--rounds N] [--repeat K]

C runs three ways: reading the numbers from the record (the baseline), also writing the
summary.csv row (bench_binding ... text), and through tessel_sweep_point_values. All price
the grid
of examples/notebooks/dse.py (LLB size with its tile edge x loop
order, 36 points) on a shared matrix with the stat estimator; the Python side reads each
point's summary (result.summary["energy_pj"]), as a study does. Prints seconds per point
for each, their ratio, and the checksum of the energies, which must agree. C and Python
take K turns of N rounds each and each keeps its best (a loaded machine's quiet moments
serve both sides)."""

import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

SIZES = [("256KiB", 128), ("512KiB", 128), ("1MiB", 256), ("2MiB", 256), ("4MiB", 512),
         ("8MiB", 512)]
ORDERS = ["IJK", "IKJ", "JIK", "JKI", "KIJ", "KJI"]


def python_grid(tessel, spec, stats):
    total = 0.0
    for size, edge in SIZES:
        for order in ORDERS:
            r = tessel.run(spec, stats=stats, set={
                "LLB.capacity": size, "mapping.LLB.order": order,
                "mapping.LLB.tile": "i:%d,k:%d,j:%d" % (edge, edge, edge)})
            total += r.summary["energy_pj"]
    return total


def python_bound(tessel, spec, stats):
    bound = spec.bind(["LLB.capacity", "mapping.LLB.order", "mapping.LLB.tile"], stats=stats)
    total = 0.0
    for size, edge in SIZES:
        for order in ORDERS:
            r = bound.run([size, order, "i:%d,k:%d,j:%d" % (edge, edge, edge)])
            total += r.summary["energy_pj"]
    return total


def python_many(tessel, spec, stats):
    points = [{"LLB.capacity": size, "mapping.LLB.order": order,
               "mapping.LLB.tile": "i:%d,k:%d,j:%d" % (edge, edge, edge)}
              for size, edge in SIZES for order in ORDERS]
    table = tessel.run_many(spec, points, stats=stats)  # a DataFrame with pandas
    if isinstance(table, list):
        return sum(row["energy_pj"] for row in table)
    return float(table["energy_pj"].sum())


def least(a, b):
    return b if a is None else min(a, b)


def best_of(rounds, fn, *args):
    best = None
    for _ in range(rounds):
        t0 = time.perf_counter()
        result = fn(*args)
        t = time.perf_counter() - t0
        best = t if best is None else min(best, t)
    return best, result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="a release build directory (libtessel.so, bench/bench_binding)")
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--matrix", default="ca-GrQc")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of the grid a side times")
    ap.add_argument("--repeat", type=int, default=3,
                    help="turns of C then Python (each side's best is kept)")
    a = ap.parse_args()
    os.environ.setdefault("TESSEL_LIBRARY", os.path.join(a.build, "libtessel.so"))
    import tessel

    spec_path = os.path.join(ROOT, "examples", "sweep", "spmspm-llb.yaml")
    matrix = os.path.join(a.data, "mtx", a.matrix + ".mtx.gz")
    if not os.path.exists(matrix):
        print("python_point: no shared matrix %s" % matrix)
        return 77
    bench = os.path.join(a.build, "bench", "bench_binding")

    def c_bench(*extra):
        out = subprocess.run([bench, spec_path, matrix, str(a.rounds)] + list(extra),
                             stdout=subprocess.PIPE, universal_newlines=True,
                             check=True).stdout
        return dict(line.split(" ", 1) for line in out.splitlines())

    spec = tessel.Spec(spec_path)
    stats = tessel.stats(spec, {"A": tessel.load(matrix)})
    python_grid(tessel, spec, stats)  # the energy tables and caches, as C's first round
    python_many(tessel, spec, stats)
    python_bound(tessel, spec, stats)
    npoints = len(SIZES) * len(ORDERS)
    # C and Python take turns, `repeat` times, each side keeping its best: on a loaded
    # machine a quiet moment then serves both sides, not one of them
    c_point = c_text = c_values = best = best_many = best_bound = None
    for _ in range(a.repeat):
        c = c_bench()
        c_point = least(c_point, float(c["seconds_per_point"]))
        t, checksum = best_of(a.rounds, python_grid, tessel, spec, stats)
        best = least(best, t)
        t, checksum_many = best_of(a.rounds, python_many, tessel, spec, stats)
        best_many = least(best_many, t)
        t, checksum_bound = best_of(a.rounds, python_bound, tessel, spec, stats)
        best_bound = least(best_bound, t)
        c_text = least(c_text, float(c_bench("text")["seconds_per_point"]))
        c_values = least(c_values, float(c_bench("values")["seconds_per_point"]))
    py_point = best / npoints
    many_point = best_many / npoints
    bound_point = best_bound / npoints
    print("matrix %s, %d points, best of %d rounds x %d turns (load average %.1f)" %
          (a.matrix, npoints, a.rounds, a.repeat, os.getloadavg()[0]))
    print("C       %.1f us a point (bench_binding: numbers from the record)" % (c_point * 1e6))
    print("C+text  %.1f us a point (bench_binding text: and the summary.csv row)" %
          (c_text * 1e6))
    print("C+vals  %.1f us a point (bench_binding values: tessel_sweep_point_values)" %
          (c_values * 1e6))
    print("Python  %.1f us a point (tessel.run with statistics reused)" % (py_point * 1e6))
    print("bound   %.1f us a point (spec.bind(paths).run(values))" % (bound_point * 1e6))
    print("many    %.1f us a point (tessel.run_many: one call, one table)" % (many_point * 1e6))
    print("ratio   %.2fx against C, %.2fx against C+text (target <= 2x); bound %.2fx; "
          "run_many %.2fx" % (py_point / c_point, py_point / c_text, bound_point / c_point,
                              many_point / c_point))
    for name, other in (("run_many", checksum_many), ("bound", checksum_bound)):
        if abs(other - checksum) > 1e-9 * abs(checksum):
            print("%s checksum DIFFERENT: %r" % (name, other))
            return 1
    same = abs(checksum - float(c["checksum"])) <= 1e-9 * abs(checksum)
    print("checksum %s (C %s, Python %r)" % ("equal" if same else "DIFFERENT",
                                              c["checksum"].strip(), checksum))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
