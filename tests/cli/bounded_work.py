#!/usr/bin/env python3
"""Issue 25 item 7: work in proportion to the input.

  bounded_work.py --tessel BIN

  * a small spec including a 350 KB file (21,000 keys) 10 times is read in
    seconds (key merging is linear; it was quadratic: 20 s in a release
    build), and 250 times is refused at once for holding more than
    1,000,000 YAML nodes across its includes (the limit was per file);
  * tessel validate of two tables of 40,000 columns takes seconds (finding a
    column by name was linear, so validating was quadratic: 51 s);
  * a 74-byte .mtx of one entry in a 1 x 134M matrix bound with B=A^T is
    refused from its dimensions alone, at once.
Each bound is loose (seconds under the sanitizers on a loaded machine);
the old behaviour exceeded them several times over.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

from clitest import ROOT, check, failures

SPEC = os.path.join(ROOT, "examples", "sweep", "spmspm-llb.yaml")


def timed(argv, limit):
    """(process, seconds) of argv, or (None, limit) when it ran past 3 x limit."""
    t0 = time.time()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=3 * limit)
    except subprocess.TimeoutExpired:
        return None, 3 * limit
    return p, time.time() - t0


def spec_text():
    with open(SPEC) as f:
        return f.read().replace("../data/", os.path.join(ROOT, "examples", "data") + "/").replace(
            "../../energy_tables", os.path.join(ROOT, "energy_tables"))


def test_includes(tessel, tmp):
    big = os.path.join(tmp, "big.yaml")
    with open(big, "w") as f:
        f.write("extra:\n" + "".join(f"  k{i:06d}: {i}\n" for i in range(21000)))
    for n, limit in [(10, 15), (250, 30)]:
        spec = os.path.join(tmp, f"spec{n}.yaml")
        with open(spec, "w") as f:
            f.write("include: [" + ", ".join(["big.yaml"] * n) + "]\n" + spec_text())
        p, took = timed([tessel, "run", spec, "-o", os.path.join(tmp, "out")], limit)
        if p is None:
            check(False, f"includes x{n}: still running after {took} s")
            continue
        check(took < limit, f"includes x{n}: {took:.1f} s (limit {limit} s)")
        check(p.returncode == 2, f"includes x{n}: exit {p.returncode}: {p.stderr[-300:]}")
        if n == 250:
            check("YAML nodes together" in p.stderr,
                  f"includes x{n}: refused for its total size: {p.stderr[-300:]}")
        else:
            check("extra" in p.stderr and "YAML nodes" not in p.stderr,
                  f"includes x{n}: read in full (only the unknown key is an error): "
                  f"{p.stderr[-300:]}")


def test_validate_columns(tessel, tmp):
    n = 40000
    wide = os.path.join(tmp, "wide.csv")
    with open(wide, "w") as f:
        f.write(",".join(["design", "data"] + [f"c{i}" for i in range(n)]) + "\n")
        f.write(",".join(["x", "y"] + [str(i + 1) for i in range(n)]) + "\n")
    out = os.path.join(tmp, "metrics.csv")
    p, took = timed([tessel, "validate", wide, wide, "-f", "csv", "-q", "-o", out], 15)
    if p is None:
        check(False, f"validate of {n} columns: still running after {took} s")
        return
    check(p.returncode == 0, f"validate of {n} columns: exit {p.returncode}: {p.stderr[-300:]}")
    check(took < 15, f"validate of {n} columns: {took:.1f} s (limit 15 s)")
    with open(out) as f:
        rows = f.read().splitlines()
    check(len(rows) == n + 1, f"validate of {n} columns: {len(rows) - 1} metrics summarised")


def test_dimensions(tessel, tmp):
    mtx = os.path.join(tmp, "wide.mtx")
    with open(mtx, "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n1 134217728 1\n1 1 1\n")
    p, took = timed([tessel, "run", SPEC, "-T", f"A={mtx}", "-T", "B=A^T", "-e", "exact",
                     "-o", os.path.join(tmp, "out")], 5)
    if p is None:
        check(False, "hypersparse A^T: still running")
        return
    check(p.returncode == 2 and "hypersparse" in p.stderr,
          f"hypersparse A^T refused from its dimensions: {p.returncode} {p.stderr[-300:]}")
    check(took < 5, f"hypersparse A^T refused in {took:.1f} s (limit 5 s)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", required=True)
    args = ap.parse_args()
    tessel = os.path.abspath(args.tessel)
    with tempfile.TemporaryDirectory(prefix="tessel-bounded-") as tmp:
        test_includes(tessel, tmp)
        test_validate_columns(tessel, tmp)
        test_dimensions(tessel, tmp)
    if failures:
        print(f"{len(failures)} failures")
        return 1
    print("all bounded-work checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
