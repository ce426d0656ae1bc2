#!/usr/bin/env python3
"""Scale of the stat estimator in the number of nonzeros (issue 18 targets).

    python3 bench/scale_stat.py [--tessel build/tools/tessel] [--baseline MAIN/tools/tessel]
                                [--sizes 1M,4M,16M,64M] [--kinds rmat,uniform] [--cache DIR]
                                [--spec specs/extensor.yaml]

Generates, once (cached in --cache, default a directory in the system's temp dir that is
kept between runs), `tessel gen` R-MAT and uniform square matrices of average degree 16
(rows = nnz / 16) with each requested number of nonzeros (binary .tsl, pattern only; R-MAT
merges repeated draws, so it holds a little fewer), then runs each once through

    tessel run SPEC -T A=FILE -e stat --set LLB.capacity=1MiB -v --no-timing

(SpMSpM Z = A*A on the 3-level ExTensor, statistics collected from the data), with
--baseline first and then --tessel on each matrix (same invocation, so their ratios hold on a
shared machine), and prints per matrix and binary: the nonzeros actually stored, the CPU
seconds of the run (user + system), its stages as `-v` reports them (wall seconds of loading
the data, collecting the statistics, the estimate from them = model_seconds: on a loaded
machine only their shares mean something), the peak resident memory of the process
(os.wait4's ru_maxrss), and that memory over the
matrix's CSR bytes, counted as 12 B per nonzero (a 4-byte column index + an 8-byte value)
plus 8 B per row pointer. (tessel's own tensor holds the pattern the run reads: a 4-byte
column index per nonzero and an 8-byte row pointer per row, no values.)
Then, per kind and binary, the growth exponent of each time in nnz (the least-squares slope
of log(time) against log(nnz); CPU seconds for the run) and of the peak memory, and whether
the two binaries wrote the same traffic.csv and summary.csv. Targets (issue 18): exponent
<= 1.2, peak memory <= 3x CSR. Figures only, no pass/fail. Standard library only.
"""
import argparse
import math
import os
import re
import sys
import tempfile

from scaling import generate as gen_matrix, label, parse_size, run_measured


def generate(tessel, kind, nnz, cache):
    """The cached pattern .tsl of this kind and size."""
    return gen_matrix(tessel, kind, nnz, cache, "%s-%s.tsl" % (kind, label(nnz)), True)



def stages(text):
    """Seconds of the stages `tessel run -v` reports."""
    out = {}
    m = re.search(r"data done in ([0-9.]+) s", text)
    if m:
        out["load"] = float(m.group(1))
    m = re.search(r"statistics ([0-9.]+) s, estimate from them ([0-9.]+) s", text)
    if m:
        out["stats"] = float(m.group(1))
        out["estimate"] = float(m.group(2))
    return out


def slope(xs, ys):
    """Least-squares slope of log y against log x (None with fewer than 2 points)."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x > 0 and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    if sxx == 0:
        return None
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx


def fmt_exp(v):
    return "   -" if v is None else "%.2f" % v


def outputs(out):
    """traffic.csv and summary.csv of a run's output directory, as bytes."""
    return b"".join(open(os.path.join(out, f), "rb").read()
                    for f in ("traffic.csv", "summary.csv"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tessel", default="build/tools/tessel")
    ap.add_argument("--baseline", default=None,
                    help="a second tessel binary (e.g. main's), run first on each matrix")
    ap.add_argument("--spec", default="specs/extensor.yaml")
    ap.add_argument("--sizes", default="1M,4M,16M,64M",
                    help="nonzeros per matrix, comma-separated (K, M, G suffixes: powers of 2)")
    ap.add_argument("--kinds", default="rmat,uniform")
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "tessel-scale"),
                    help="where the generated matrices are kept between runs")
    ap.add_argument("--llb", default="1MiB", help="LLB capacity (--set LLB.capacity=)")
    args = ap.parse_args()
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    bins = ([("base", args.baseline)] if args.baseline else []) + [("new", args.tessel)]
    os.makedirs(args.cache, exist_ok=True)
    print("tessel run %s -e stat --set LLB.capacity=%s, average degree 16, cache %s"
          % (args.spec, args.llb, args.cache))
    print("CSR bytes = 12 B per nonzero + 8 B per row; CPU s = user + system")
    print("%-8s %6s %11s %-5s %8s %8s %8s %9s %10s %8s" % (
        "kind", "size", "nnz", "bin", "CPU s", "load s", "stats s", "model s", "peak MiB",
        "mem/CSR"))
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.kinds.split(","):
            seen = {name: [] for name, _ in bins}
            same = []
            for n in sizes:
                path, rows, nnz = generate(bins[-1][1], kind, n, args.cache)
                csr = 12 * nnz + 8 * (rows + 1)
                outs = []
                for name, binary in bins:
                    out = os.path.join(tmp, name)
                    cmd = [binary, "run", args.spec, "-T", "A=" + path, "-e", "stat",
                           "--set", "LLB.capacity=" + args.llb, "-v", "--no-timing", "-o", out]
                    _, cpu, rss, text = run_measured(cmd)
                    st = stages(text)
                    outs.append(outputs(out))
                    seen[name].append((nnz, cpu, st, rss / csr))
                    print("%-8s %6s %11d %-5s %8.2f %8.2f %8.2f %9.3f %10.1f %8.2f" % (
                        kind, label(n), nnz, name, cpu, st.get("load", float("nan")),
                        st.get("stats", float("nan")), st.get("estimate", float("nan")),
                        rss / 2.0 ** 20, rss / csr))
                    sys.stdout.flush()
                same.append(len(set(outs)) == 1)
            for name, _ in bins:
                rows_seen = seen[name]
                xs = [r[0] for r in rows_seen]
                print("%-8s %-5s growth exponent in nnz: CPU %s, load %s, stats %s, model %s; "
                      "peak mem/CSR %s" % (
                          kind, name, fmt_exp(slope(xs, [r[1] for r in rows_seen])),
                          fmt_exp(slope(xs, [r[2].get("load", 0) for r in rows_seen])),
                          fmt_exp(slope(xs, [r[2].get("stats", 0) for r in rows_seen])),
                          fmt_exp(slope(xs, [r[2].get("estimate", 0) for r in rows_seen])),
                          " ".join("%.2f" % r[3] for r in rows_seen)))
            if len(bins) > 1:
                print("%-8s same traffic.csv and summary.csv: %s" % (
                    kind, "yes" if all(same) else "NO"))
    print("targets (issue 18): exponent <= 1.2, peak memory <= 3x CSR")
    return 0


if __name__ == "__main__":
    sys.exit(main())
