#!/usr/bin/env python3
"""TACTile at n > 1024 without a spill: tessel against the DRT simulator's loop nest.

The DRT simulator's TACTile run (FPSG-UIUC/DRT src/SpMSpM_TACTile_twoInp.cpp with
Scheduler_8, src/scheduler_8.cpp, dynamic tiling, llbPartitionPolicy::constant_initial;
shared/reference/simulator-outputs/drt/tactile_dyn.txt) splits its 30 MB LLB as A 5 %,
B 50 %, O 45 % and runs, over 32x32 micro tiles:

    for each block of output columns (a_reuse: 128 micro tiles, grown while B fits):
      for each block of B's micro-tile rows grown while B fits its 50 % (ExtractBTopTile):
        for each block of A's micro-tile rows grown while A fits its 5 % (ExtractATopTile;
                  only A's tiles whose row of B tiles in the block is non-empty):
          multiply, the partial outputs in a COO log (16 B a nonzero); when the log
          outgrows O's 45 % it is written back (o_w_top) and read back at the end of the
          column block (o_r_top); with more than one block of B rows it is written back
          after every A block
      write O in CSF (o_w_top)

This file implements the block decisions from the coordinates (stdlib only, no tessel
code; brute_stats.py's Matrix Market reader) on two matrices made by `tessel gen` with
more than 1024 rows and 10 nonzeros a row, as the shared input, and checks that the
simulator does not spill there (one block of output columns, one of B's rows, no log
outgrowing O's partition: n > 1024 alone does not make TACTile spill), so a_top = the CSF
of A's micro tiles, b_top = B's and o_r_top = 0. It then runs
examples/validate-drt/tactile-dyn.yaml on them and requires tessel's DRAM bytes of A and
B to equal a_top and b_top, Z never to be read back, and Z's bytes (tiled-csf, as the
spec stores it) to equal the simulator's O in CSF (12 B a nonzero, 8 B a row segment,
12 B a micro tile), o_w_top; `csr` over the micro tiles (12 B a nonzero + 33 offsets of
4 B a non-empty tile, the spec's Z before) is printed beside it.

usage: tactile_any_n.py --tessel PATH
Exit 0 when tessel equals the model, 1 otherwise.
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from brute_stats import read_mtx  # noqa: E402  (the same directory's independent reader)

TILE = 32                   # p_tile_dim
LLB = 30 * 1024 * 1024      # p_llb_size (MB read as MiB, as the simulator's * 1024 * 1024)
A_PART, B_PART, O_PART = 0.05 * LLB, 0.5 * LLB, 0.45 * LLB
A_REUSE = 128               # p_a_reuse, micro tiles of output columns


def tiles(entries):
    t = defaultdict(list)
    for (r, c) in entries:
        t[(r // TILE, c // TILE)].append((r, c))
    return t


def csf(coords):
    return 12 * len(coords) + 8 * len({r for r, _ in coords}) + 12


def model(n, a_entries, b_entries):
    a_t, b_t = tiles(a_entries), tiles(b_entries)
    ntiles = -(-n // TILE)
    failed = 0
    # one block of output columns: all of them within a_reuse, or B fits whole
    b_total = sum(csf(v) for v in b_t.values())
    if ntiles > A_REUSE and b_total > B_PART:
        print("FAIL: n=%d needs more than one block of output columns" % n)
        failed = 1
    # one block of B's micro-tile rows: the whole of B fits its partition
    if b_total > B_PART:
        print("FAIL: n=%d: B (%d B) outgrows its partition" % (n, b_total))
        failed = 1
    b_row_live = {tk for (tk, _) in b_t}
    a_row = defaultdict(int)
    for (ti, tk), v in a_t.items():
        if tk in b_row_live:
            a_row[ti] += csf(v)
    # A blocks grown while A fits its partition; the partial outputs of each
    b_rows = defaultdict(list)
    for (k, j) in b_entries:
        b_rows[k].append(j)
    a_rows = defaultdict(list)
    for (i, k) in a_entries:
        a_rows[i].append(k)
    z = set()
    worst_log = 0
    ti = 0
    while ti < ntiles:
        size, start = 0, ti
        while ti < ntiles and size + a_row[ti] <= A_PART:
            size += a_row[ti]
            ti += 1
        if ti == start:
            print("FAIL: n=%d: a row of A tiles outgrows A's partition" % n)
            return 1, 0, 0, set()
        log = set()
        for i in range(start * TILE, min(ti * TILE, n)):
            for k in a_rows[i]:
                for j in b_rows[k]:
                    log.add((i, j))
        worst_log = max(worst_log, 16 * len(log))
        z |= log
    if worst_log > O_PART:
        print("FAIL: n=%d: an A block's partial outputs (%d B) outgrow O's partition" % (n, worst_log))
        failed = 1
    a_top = sum(a_row.values())
    return failed, a_top, b_total, z


def dram(traffic_csv, tensor):
    with open(traffic_csv, newline="") as f:
        for row in csv.DictReader(f):
            if row["level"] == "LLB" and row["tensor"] == tensor:
                return row
    raise SystemExit("no LLB row for %s" % tensor)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", required=True)
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    spec = os.path.join(root, "examples", "validate-drt", "tactile-dyn.yaml")
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n, sa, sb in ((2048, 7, 13), (2500, 11, 17)):
            paths = []
            for name, seed in (("A", sa), ("B", sb)):
                p = os.path.join(tmp, "%s%d.mtx" % (name, n))
                subprocess.run([args.tessel, "gen", "uniform", "--rows", str(n), "--cols", str(n),
                                "--nnz", str(10 * n), "--seed", str(seed), "-o", p],
                               check=True, stdout=subprocess.DEVNULL)
                paths.append(p)
            (_, _), a_entries, _, _ = read_mtx(paths[0])
            (_, _), b_entries, _, _ = read_mtx(paths[1])
            f, a_top, b_top, z = model(n, a_entries, b_entries)
            failed |= f
            z_t = tiles(z)
            o_csf = sum(csf(v) for v in z_t.values())
            z_csr = sum(12 * len(v) + 4 * (TILE + 1) for v in z_t.values())
            out = os.path.join(tmp, "out%d" % n)
            subprocess.run([args.tessel, "run", spec, "--tensor", "A=" + paths[0],
                            "--tensor", "B=" + paths[1], "-o", out, "-q", "--no-timing"],
                           check=True)
            t = os.path.join(out, "traffic.csv")
            got = {x: dram(t, x) for x in ("A", "B", "Z")}
            size = {x: int(r["data_bytes"]) + int(r["metadata_bytes"]) for x, r in got.items()}
            print("n=%d nnz(Z)=%d: simulator a_top %d b_top %d o_r_top 0 o_w_top (O_csf) %d; "
                  "tessel A %d B %d Z %d (csr per micro tile would be %d, %+.2f %% from O_csf)"
                  % (n, len(z), a_top, b_top, o_csf, size["A"], size["B"], size["Z"], z_csr,
                     100.0 * (z_csr / o_csf - 1)))
            for x, want in (("A", a_top), ("B", b_top), ("Z", o_csf)):
                if size[x] != want:
                    print("FAIL: n=%d %s: tessel %d, expected %d" % (n, x, size[x], want))
                    failed = 1
            if int(got["Z"]["updates"]) != 0 or int(got["Z"]["writebacks"]) != 1:
                print("FAIL: n=%d: tessel reads Z back (updates %s, write-backs %s)"
                      % (n, got["Z"]["updates"], got["Z"]["writebacks"]))
                failed = 1
    print("tactile any n: %s" % ("FAILED" if failed else "ok"))
    return failed


if __name__ == "__main__":
    sys.exit(main())
