#!/usr/bin/env python3
"""The CPU-time exponent of in-memory `tessel stats` (issue 27's target: <= 1.05).

    python3 bench/stats_exponent.py [--tessel build/tools/tessel] [--baseline MAIN_TESSEL]
                                    [--sizes 1M,2M,4M,8M,16M,32M,64M] [--kinds uniform,rmat]
                                    [--runs 3] [--cache DIR]

Per kind and size, the pattern `.tsl` of a `tessel gen KIND` square matrix of average
degree 16 (seed 1; generated once into --cache, the files bench/scale_stat.py uses), then
`tessel stats FILE.tsl -f csv`, best of --runs, CPU seconds (user + system) per binary,
the runs of the binaries interleaved so that both see the same load, and the outputs
checked equal between the binaries. Prints a table (ms, and the peak resident memory
over the CSR's bytes, 8 B per row pointer and 12 B per nonzero as in bench/stats_memory.py,
smallest of the runs) and the exponent of CPU time in nnz per binary (least-squares slope
in log-log over all sizes, and over the sizes from 4M up). Figures only, no pass/fail.
Standard library only.
"""
import argparse
import os
import subprocess
import sys
import tempfile

from scaling import generate, label, parse_size, run_measured
from stats_memory import csr_bytes, exponent


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tessel", default="build/tools/tessel")
    ap.add_argument("--baseline", default=None, help="a second tessel binary, e.g. main's")
    ap.add_argument("--sizes", default="1M,2M,4M,8M,16M,32M,64M")
    ap.add_argument("--kinds", default="uniform,rmat")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "tessel-scale"))
    args = ap.parse_args()
    os.makedirs(args.cache, exist_ok=True)
    bins = ([("base", args.baseline)] if args.baseline else []) + [("new", args.tessel)]
    print("%-8s %5s %10s | %s| %s| same" % ("kind", "size", "nnz", "".join(
        "%9s " % (name + " ms") for name, _ in bins), "".join(
        "%12s " % (name + " mem/CSR") for name, _ in bins)))
    points = {}
    for kind in args.kinds.split(","):
        for size in args.sizes.split(","):
            n = parse_size(size)
            tsl, rows, nnz = generate(args.tessel, kind, n, args.cache,
                                      "%s-%s.tsl" % (kind, label(n)), True)
            best, peak = {}, {}
            for _ in range(args.runs):
                for name, binary in bins:
                    _, cpu, rss, _ = run_measured([binary, "stats", tsl, "-f", "csv"])
                    best[name] = min(best.get(name, cpu), cpu)
                    peak[name] = min(peak.get(name, rss), rss)
            outs = set(subprocess.run([b, "stats", tsl, "-f", "csv"], capture_output=True,
                                      check=True).stdout for _, b in bins)
            for name, _ in bins:
                points.setdefault((kind, name), []).append((nnz, best[name]))
            print("%-8s %5s %10d | %s| %s| %s" % (
                kind, size, nnz, "".join("%9.1f " % (1000 * best[name]) for name, _ in bins),
                "".join("%12.2f " % (peak[name] / csr_bytes(rows, nnz)) for name, _ in bins),
                "yes" if len(outs) == 1 else "NO"))
            sys.stdout.flush()
    for (kind, name), pts in sorted(points.items()):
        big = [p for p in pts if p[0] >= parse_size("4M")]
        print("time exponent %-8s %-5s all sizes %.3f, from 4M %.3f" % (
            kind, name, exponent(pts), exponent(big)))


if __name__ == "__main__":
    main()
