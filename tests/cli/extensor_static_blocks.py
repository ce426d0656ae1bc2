#!/usr/bin/env python3
"""ExTensor static at n > 1024: tessel against a brute-force model of the DRT simulator.

The DRT simulator's ExTensor static run (FPSG-UIUC/DRT src/SpMSpM_ExTensor.cpp with
Scheduler_7, printed as "I_top: 32, J_top: 32, K_top: 32" in
shared/reference/simulator-outputs/drt/extensor_static.txt) cuts every index into top
blocks of 32 basic tiles of 32 coordinates, 1024 coordinates. Its loop nest, in tessel's
names for Z[i,j] = A[i,k] * B[k,j]:

    for each block of 1024 output columns j:       (the simulator's k_idx loop)
      for each block of 1024 contracted k:          (its j_idx loop, CalcOReuse)
        load the B tiles of the block               (b_top)
        for each row of 32x32 tiles:                (FetchAORows / Schedule)
          load that row's A tiles of the k block    (a_top; only those whose B tile row
                                                     in the block holds a tile)
          read back each output tile the block touches, if an earlier k block
          wrote it (o_r_top), multiply, and write it back (o_w_top)
        flush the LLB (A and B dropped, O written back)

A and B cost their compressed sparse fiber per 32x32 tile: 12 B per nonzero, 8 B per
non-empty row, 12 B per tile (simulator-outputs/README.md and validate-drt/README.md);
O costs 16 B per (partial) nonzero in COO. This file implements that loop nest from the
coordinates alone (stdlib only, no tessel code; brute_stats.py's Matrix Market reader) on
matrices made by `tessel gen` with more than 1024 rows, runs
examples/validate-drt/extensor-static.yaml on them and requires tessel's DRAM bytes
per tensor to equal the brute force's (A, B, and Z = reads back + writes). With one
block per index (n <= 1024) nothing is read back and A and B cross once, which the
shared 1000x1000 input checks in run.sh.

usage: extensor_static_blocks.py --tessel PATH
Exit 0 when tessel equals the brute force, 1 otherwise.
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

TILE = 32          # basic tile edge (the simulator's tile_dim)
BLOCK_TILES = 32   # basic tiles per top block (I_top = J_top = K_top = 32)


def tiles_of(entries):
    """(tile row, tile col) -> list of (row, col) in it."""
    t = defaultdict(list)
    for (r, c) in entries:
        t[(r // TILE, c // TILE)].append((r, c))
    return t


def csf_bytes(coords):
    """One 32x32 tile as the simulator's CSF: 12 B per nonzero, 8 B per row, 12 B."""
    return 12 * len(coords) + 8 * len({r for r, _ in coords}) + 12


def simulate(n_rows, n_inner, n_cols, a_entries, b_entries):
    """DRAM bytes (A, B, O read, O write) of the simulator's static loop nest."""
    a_t, b_t = tiles_of(a_entries), tiles_of(b_entries)
    b_rows = defaultdict(list)  # contracted coordinate -> [(col)]
    for (k, j) in b_entries:
        b_rows[k].append(j)
    a_by_tile_row = defaultdict(list)  # tile row -> [(tile col k)]
    for (ti, tk) in a_t:
        a_by_tile_row[ti].append(tk)
    b_by_tile_row = defaultdict(set)   # tile k -> {tile j}
    for (tk, tj) in b_t:
        b_by_tile_row[tk].add(tj)
    ntr = -(-n_rows // TILE)
    ntk = -(-n_inner // TILE)
    ntc = -(-n_cols // TILE)
    partial = defaultdict(set)  # output tile -> partial coordinates
    a_top = b_top = o_r = o_w = 0
    for jb in range(0, ntc, BLOCK_TILES):
        j_tiles = range(jb, min(jb + BLOCK_TILES, ntc))
        for kb in range(0, ntk, BLOCK_TILES):
            k_tiles = range(kb, min(kb + BLOCK_TILES, ntk))
            b_top += sum(csf_bytes(b_t[(tk, tj)]) for tk in k_tiles for tj in j_tiles
                         if (tk, tj) in b_t)
            b_row_live = {tk for tk in k_tiles if any(tj in b_by_tile_row[tk] for tj in j_tiles)}
            for ti in range(ntr):
                a_top += sum(csf_bytes(a_t[(ti, tk)]) for tk in a_by_tile_row[ti]
                             if tk in b_row_live)
                for tj in j_tiles:
                    pairs = [tk for tk in a_by_tile_row[ti]
                             if kb <= tk < kb + BLOCK_TILES and tj in b_by_tile_row[tk]]
                    if not pairs:
                        continue
                    out = partial[(ti, tj)]
                    o_r += 16 * len(out)   # 0 in the first k block: nothing written yet
                    for tk in pairs:
                        for (i, k) in a_t[(ti, tk)]:
                            for j in b_rows[k]:
                                if j // TILE == tj:
                                    out.add((i, j))
                    o_w += 16 * len(out)
    return a_top, b_top, o_r, o_w


def llb_bytes(traffic_csv, tensor):
    with open(traffic_csv, newline="") as f:
        for row in csv.DictReader(f):
            if row["level"] == "LLB" and row["tensor"] == tensor:
                return int(row["data_bytes"]) + int(row["metadata_bytes"])
    raise SystemExit("no LLB row for %s in %s" % (tensor, traffic_csv))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", required=True)
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    spec = os.path.join(root, "examples", "validate-drt", "extensor-static.yaml")
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        # n = 2048: 2 blocks per index; n = 2500: a partial third block. About 10
        # nonzeros per row, as the shared rand1k_d1 input.
        for n, seed in ((2048, 7), (2500, 11)):
            mtx = os.path.join(tmp, "r%d.mtx" % n)
            subprocess.run([args.tessel, "gen", "uniform", "--rows", str(n),
                            "--cols", str(n), "--nnz", str(10 * n), "--seed", str(seed),
                            "-o", mtx], check=True, stdout=subprocess.DEVNULL)
            (rows, cols), entries, _, _ = read_mtx(mtx)
            a_top, b_top, o_r, o_w = simulate(rows, cols, cols, entries, entries)
            out = os.path.join(tmp, "out%d" % n)
            subprocess.run([args.tessel, "run", spec, "--tensor", "A=" + mtx, "--tensor", "B=A",
                            "-o", out, "-q", "--no-timing"], check=True)
            traffic = os.path.join(out, "traffic.csv")
            got = {t: llb_bytes(traffic, t) for t in ("A", "B", "Z")}
            want = {"A": a_top, "B": b_top, "Z": o_r + o_w}
            print("n=%d nnz=%d: simulator model A %d B %d Z %d (o_r %d + o_w %d); tessel A %d B %d Z %d"
                  % (n, len(entries), a_top, b_top, o_r + o_w, o_r, o_w,
                     got["A"], got["B"], got["Z"]))
            if o_r == 0 or a_top <= sum(csf_bytes(v) for v in tiles_of(entries).values()):
                print("FAIL: n=%d does not exercise the blocks (no read-back or A fetched once)" % n)
                failed = 1
            for t in ("A", "B", "Z"):
                if got[t] != want[t]:
                    print("FAIL: n=%d %s: tessel %d, brute force %d" % (n, t, got[t], want[t]))
                    failed = 1
    print("extensor-static blocks: %s" % ("FAILED" if failed else "ok"))
    return failed


if __name__ == "__main__":
    sys.exit(main())
