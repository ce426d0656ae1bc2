#!/usr/bin/env python3
"""Properties of every result, whatever the spec and estimator (issue 9):
traffic >= compulsory for the exact estimator, energies and cycles finite
and >= 0, every count a whole number below 2^64 - 1, and no NaN or inf
anywhere in traffic.csv or summary.csv.

    properties.py --tessel PATH     (run from the repository root)
"""
import argparse
import csv
import math
import os
import subprocess
import sys
import tempfile

RUNS = [
    # (spec, extra arguments, estimators)
    ("specs/extensor.yaml", ["--tensor", "A=examples/data/G51.mtx.gz"], ["exact"]),
    ("specs/extensor.yaml", ["--tensor", "A=examples/data/jagmesh7.mtx.gz", "--base", "8x16"],
     ["stat"]),
    ("specs/gamma.yaml", ["--tensor", "A=examples/data/jagmesh7.mtx.gz"], ["exact"]),
    ("specs/outerspace.yaml", ["--tensor", "A=examples/data/G51.mtx.gz", "--base", "1x1"],
     ["stat"]),
    ("specs/outerspace.yaml", ["--tensor", "A=examples/data/G51.mtx.gz"], ["exact"]),
    ("specs/matraptor.yaml", ["--tensor", "A=examples/data/G51.mtx.gz"], ["exact"]),
    ("specs/sparsepipe.yaml", ["--tensor", "A=examples/data/jagmesh7.mtx.gz"], ["exact", "stat"]),
    ("bench/specs/accuracy.yaml", ["--tensor", "A=examples/data/G51.mtx.gz", "--tensor", "B=A^T",
                                   "--set", "mapping.LLB.order=KIJ"], ["exact", "stat"]),
    ("examples/specs/ttm-bitcoin.yaml", [], ["exact", "stat"]),
    ("examples/specs/mttkrp-bitcoin.yaml", ["--base", "64x64"], ["stat"]),
    ("examples/specs/mttkrp-bitcoin.yaml", [], ["exact"]),
    ("examples/specs/uniform-analytic.yaml", [], ["analytic"]),
]

COUNT_COLUMNS = {"fills", "reads", "updates", "writebacks", "data_bytes", "metadata_bytes",
                 "algorithmic", "actual", "skipped", "gated", "bumped_bytes", "dram_bytes",
                 "compulsory_bytes", "flops", "output_nnz", "intersections",
                 "reads_elements", "writes_elements"}
REAL_COLUMNS = {"energy_pj", "cycles", "traffic_ratio", "seconds", "compute_cycles",
                "compute_utilization", "area_um2", "model_seconds"}


def check_file(path, failures, what):
    with open(path, newline="") as f:
        for n, row in enumerate(csv.DictReader(f), 2):
            for col, val in row.items():
                where = f"{what}: {os.path.basename(path)}:{n} {col}={val}"
                if col in COUNT_COLUMNS:
                    try:
                        v = int(val)
                    except ValueError:
                        failures.append(where + " is not a whole number")
                        continue
                    if v < 0 or v >= 2**64 - 1:
                        failures.append(where + " is outside [0, 2^64 - 1)")
                elif col in REAL_COLUMNS:
                    v = float(val)
                    if not math.isfinite(v) or v < 0:
                        failures.append(where + " is not a finite non-negative number")
            yield row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", required=True)
    args = ap.parse_args()
    failures = []
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        for spec, extra, estimators in RUNS:
            for est in estimators:
                out = os.path.join(tmp, f"{checked}")
                cmd = [args.tessel, "run", spec, "-q", "-e", est, "-o", out] + extra
                r = subprocess.run(cmd, capture_output=True, text=True)
                what = " ".join(cmd[2:])
                if r.returncode != 0:
                    failures.append(f"{what}: exit {r.returncode}: {r.stderr.strip()}")
                    continue
                traffic = list(check_file(os.path.join(out, "traffic.csv"), failures, what))
                for row in check_file(os.path.join(out, "summary.csv"), failures, what):
                    # Compulsory traffic is untiled in DRAM's format (rule 3); these
                    # specs keep one format at DRAM and the buffers, so no mapping goes
                    # below it, but for one offset per tensor: the templates price a
                    # compressed matrix with `rows` offsets, the csr footprint with
                    # rows + 1 (docs/outputs.md: compulsory_bytes).
                    slack = 3 * 4
                    if est == "exact" and \
                            int(row["dram_bytes"]) + slack < int(row["compulsory_bytes"]):
                        failures.append(f"{what}: DRAM traffic below compulsory")
                    # The MACs read one value of every tensor per effectual multiply
                    # from the innermost level (docs/outputs.md: reads_elements).
                    innermost = [t for t in traffic if t["level"] == traffic[-1]["level"]]
                    for t in innermost:
                        if t["reads_elements"] != row["flops"]:
                            failures.append(f"{what}: {t['level']} {t['tensor']} reads_elements "
                                            f"{t['reads_elements']} != flops {row['flops']}")
                checked += 1
    for f in failures:
        print("FAIL", f)
    print(f"{checked} runs checked, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
