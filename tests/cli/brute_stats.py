#!/usr/bin/env python3
"""Brute-force check of `tessel stats`.

An independent implementation, sharing no code with tessel: it parses the
Matrix Market / .tns file itself (stdlib only), expands symmetry, merges
duplicates, counts every tile in a dict, sorts the occupancies and takes
nearest-rank quantiles with exact rational arithmetic. It then runs
`tessel stats --format json` on the same file and compares every field it
computed. Exit 0 when all agree, 1 on any mismatch, 77 (meson: skipped)
when no input file exists.

usage: brute_stats.py --tessel PATH [--tile 128x128 ...] FILE...
"""
import argparse
import gzip
import json
import math
import os
import subprocess
import sys
from fractions import Fraction

QUANTILES = ["0.5", "0.9", "0.95", "0.99", "0.999", "1", "0"]


def open_text(path):
    if path.endswith(".gz"):
        return gzip.open(path, "rt")
    return open(path, "r")


def read_mtx(path):
    with open_text(path) as f:
        banner = f.readline().split()
        field, symmetry = banner[3].lower(), banner[4].lower()
        line = f.readline()
        while line.startswith("%") or not line.strip():
            line = f.readline()
        rows, cols, _ = (int(x) for x in line.split())
        entries = set()
        for line in f:
            if line.startswith("%") or not line.strip():
                continue
            parts = line.split()
            i, j = int(parts[0]) - 1, int(parts[1]) - 1
            entries.add((i, j))
            if symmetry != "general" and i != j:
                entries.add((j, i))
    return [rows, cols], entries, field, symmetry


def read_tns(path):
    entries = set()
    dims = None
    with open_text(path) as f:
        for line in f:
            s = line.strip()
            if not s or s[0] in "#%":
                continue
            parts = s.split()
            coords = tuple(int(x) - 1 for x in parts[:-1])
            if dims is None:
                dims = [0] * len(coords)
            dims = [max(d, c + 1) for d, c in zip(dims, coords)]
            entries.add(coords)
    return dims, entries, "real", "general"


def nearest_rank(sorted_values, q):
    n = len(sorted_values)
    if n == 0:
        return 0
    rank = math.ceil(Fraction(q) * n)
    rank = min(max(rank, 1), n)
    return sorted_values[rank - 1]


def brute(dims, entries, tile):
    counts = {}
    for c in entries:
        key = tuple(x // t for x, t in zip(c, tile))
        counts[key] = counts.get(key, 0) + 1
    occ = sorted(counts.values())
    tiles = 1
    for d, t in zip(dims, tile):
        tiles *= -(-d // t) if d else 0
    result = {
        "nnz": len(entries),
        "tiles": tiles,
        "nonempty_tiles": len(occ),
        "occupancy_max": occ[-1] if occ else 0,
        "occupancy_min": occ[0] if occ else 0,
        "quantiles": {q: nearest_rank(occ, q) for q in QUANTILES},
    }
    mean = Fraction(len(entries), len(occ)) if occ else Fraction(0)
    result["occupancy_mean"] = mean
    modes = []
    for m in range(len(dims)):
        slice_counts = {}
        for c in entries:
            slice_counts[c[m]] = slice_counts.get(c[m], 0) + 1
        s = sorted(slice_counts.values())
        modes.append({"nonempty": len(s), "empty": dims[m] - len(s),
                      "max": s[-1] if s else 0,
                      "quantiles": {q: nearest_rank(s, q) for q in QUANTILES}})
    result["modes"] = modes
    return result


def compare(path, tile_text, tessel, verbose):
    if path.endswith((".tns", ".tns.gz")):
        dims, entries, _, _ = read_tns(path)
    else:
        dims, entries, _, _ = read_mtx(path)
    tile = [int(x) for x in tile_text.split("x")]
    if len(tile) == 1:
        tile = tile * len(dims)
    want = brute(dims, entries, tile)
    out = subprocess.run([tessel, "stats", path, "--tile", tile_text, "--format", "json",
                          "--quantiles", ",".join(QUANTILES)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        print(f"FAIL {path} {tile_text}: tessel exited {out.returncode}: {out.stderr.strip()}")
        return False
    got = json.loads(out.stdout)
    problems = []
    for key in ("nnz", "tiles", "nonempty_tiles", "occupancy_max", "occupancy_min"):
        if got[key] != want[key]:
            problems.append(f"{key}: tessel {got[key]} brute {want[key]}")
    if got["dims"] != dims:
        problems.append(f"dims: tessel {got['dims']} brute {dims}")
    if abs(Fraction(got["occupancy_mean"]) - want["occupancy_mean"]) > Fraction(1, 10**9):
        problems.append(f"occupancy_mean: tessel {got['occupancy_mean']} "
                        f"brute {float(want['occupancy_mean'])}")
    for q in QUANTILES:
        if got["quantiles"][q] != want["quantiles"][q]:
            problems.append(f"quantile {q}: tessel {got['quantiles'][q]} "
                            f"brute {want['quantiles'][q]}")
    for m, (g, w) in enumerate(zip(got["modes"], want["modes"])):
        for key in ("nonempty", "empty", "max"):
            if g[key] != w[key]:
                problems.append(f"mode {m} {key}: tessel {g[key]} brute {w[key]}")
        for q in QUANTILES:
            if g["quantiles"][q] != w["quantiles"][q]:
                problems.append(f"mode {m} quantile {q}: tessel {g['quantiles'][q]} "
                                f"brute {w['quantiles'][q]}")
    name = os.path.basename(path)
    if problems:
        print(f"FAIL {name} tile {tile_text}:")
        for p in problems:
            print("   ", p)
        return False
    if verbose:
        print(f"ok   {name:28s} tile {tile_text:>9s}: nnz {want['nnz']:7d} tiles "
              f"{want['tiles']:9d} non-empty {want['nonempty_tiles']:7d} "
              f"p50 {want['quantiles']['0.5']:5d} p99 {want['quantiles']['0.99']:5d} "
              f"max {want['occupancy_max']:6d}")
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tessel", required=True)
    ap.add_argument("--tile", action="append", help="tile shape(s); default 128 and 37x200")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    files = []
    for f in args.files:
        if os.path.isdir(f):
            files += sorted(os.path.join(f, n) for n in os.listdir(f)
                            if n.endswith((".mtx", ".mtx.gz", ".tns", ".tns.gz")))
        elif os.path.exists(f):
            files.append(f)
    if not files:
        print("no input files found; skipping")
        return 77
    tiles = args.tile or ["128", "37x200"]
    ok = True
    for path in files:
        for tile in tiles:
            if path.endswith((".tns", ".tns.gz")) and "x" in tile and tile.count("x") != 2:
                tile = "64x100x8"
            ok &= compare(path, tile, args.tessel, args.verbose)
    print(f"{len(files)} files x {len(tiles)} tile shapes: {'all agree' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
