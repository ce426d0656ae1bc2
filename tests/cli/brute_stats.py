#!/usr/bin/env python3
"""Brute-force check of `tessel stats`.

An independent implementation, sharing no code with tessel: it parses the
Matrix Market / .tns file itself (stdlib only), expands symmetry, merges
duplicates, counts every tile in a dict, sorts the occupancies and takes
nearest-rank quantiles with exact rational arithmetic. It then runs
`tessel stats --format json` on the same file and compares every field it
computed. Exit 0 when all agree, 1 on any mismatch, 77 (meson: skipped)
when no input file exists.

For matrices it also checks the D2T2 statistics (d2t2 eqs. 9-12) that
`tessel stats --save F.tstat --sample 1 --format json` prints, against the
definitions in include/tessel/stats.h evaluated here with exact fractions.

usage: brute_stats.py --tessel PATH [--tile 128x128 ...] FILE...
"""
import argparse
import gzip
import json
import math
import os
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
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


def brute_d2t2(dims, entries, tile):
    """The D2T2 statistics of stats.h with every base tile sampled."""
    base = [min(t, d) if d else 1 for t, d in zip(tile, dims)]
    ext = [-(-d // b) for d, b in zip(dims, base)]
    counts = Counter((i // base[0], j // base[1]) for i, j in entries)
    nnz, n = len(entries), len(counts)
    segs = {(i, j // base[1]) for i, j in entries}
    rows_of_tiles = {t[0] for t in counts}
    cols_of_tiles = {t[1] for t in counts}
    r = {"nnz": nnz, "nonempty_tiles": n, "max_tile": max(counts.values(), default=0),
         "base": base, "extent": ext}
    r["size_tile"] = Fraction(nnz, n) if n else 0
    r["size_tile_rows"] = Fraction(len(segs), n) if n else 0
    r["pr_tile_idx"] = ([Fraction(len(rows_of_tiles), ext[0]),
                         Fraction(n, len(rows_of_tiles) * ext[1])] if n else [0, 0])
    r["prob_index"] = ([r["size_tile_rows"] / base[0], Fraction(nnz, len(segs) * base[1])]
                       if n else [0, 0])
    tile_corrs = []
    for m, present in enumerate((rows_of_tiles, cols_of_tiles)):
        nt = min(ext[m], 4096)
        tile_corrs.append([Fraction(sum(1 for x in present if x + s in present), len(present))
                           if present else 0 for s in range(nt)])
    r["tile_corrs"] = tile_corrs
    # eq. 11: pairs of entries s apart along mode m, in one fiber of the
    # other mode, inside one base tile.
    corrs = []
    for m in (0, 1):
        fibers = defaultdict(list)
        for c in entries:
            other = 1 - m
            fibers[(c[other], c[m] // base[m], c[other] // base[other])].append(c[m])
        diff = Counter()
        for coords in fibers.values():
            coords.sort()
            for a in range(len(coords)):
                for b in range(a + 1, len(coords)):
                    diff[coords[b] - coords[a]] += 1
        corrs.append([Fraction(nnz if s == 0 else diff[s], nnz) if nnz else 0
                      for s in range(base[m])])
    r["corrs"] = corrs
    return r


def close(got, want):
    return abs(Fraction(got) - Fraction(want)) <= Fraction(1, 10**9) * max(1, abs(Fraction(want)))


def compare_d2t2(path, dims, entries, tile_text, tessel, verbose):
    tile = [int(x) for x in tile_text.split("x")]
    if len(tile) == 1:
        tile = tile * 2
    want = brute_d2t2(dims, entries, tile)
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run([tessel, "stats", path, "--tile", tile_text, "--format", "json",
                              "--sample", "1", "--label", "brute",
                              "--save", os.path.join(tmp, "s.tstat")],
                             capture_output=True, text=True, check=False)
        if out.returncode == 0:
            back = subprocess.run([tessel, "stats", os.path.join(tmp, "s.tstat"), "--format",
                                   "json"], capture_output=True, text=True, check=False)
    name = os.path.basename(path)
    if out.returncode != 0:
        print(f"FAIL {name} d2t2 {tile_text}: tessel exited {out.returncode}: "
              f"{out.stderr.strip()}")
        return False
    got = json.loads(out.stdout)
    problems = []
    reread = json.loads(back.stdout) if back.returncode == 0 else None
    if reread is None or {k: v for k, v in reread.items() if k != "file"} != \
            {k: v for k, v in got.items() if k != "file"}:
        problems.append("the saved .tstat does not read back to the same statistics")
    for key in ("nnz", "nonempty_tiles", "max_tile", "base", "extent"):
        if got[key] != want[key]:
            problems.append(f"{key}: tessel {got[key]} brute {want[key]}")
    for key in ("size_tile", "size_tile_rows"):
        if not close(got[key], want[key]):
            problems.append(f"{key}: tessel {got[key]} brute {float(want[key])}")
    for key in ("pr_tile_idx", "prob_index"):
        for m in (0, 1):
            if not close(got[key][m], want[key][m]):
                problems.append(f"{key}[{m}]: tessel {got[key][m]} brute {float(want[key][m])}")
    for key in ("corrs", "tile_corrs"):
        for m in (0, 1):
            g, w = got[key][m], want[key][m]
            if len(g) != len(w):
                problems.append(f"{key}[{m}]: tessel {len(g)} values, brute {len(w)}")
                continue
            bad = [s for s in range(len(w)) if not close(g[s], w[s])]
            if bad:
                s = bad[0]
                problems.append(f"{key}[{m}][{s}]: tessel {g[s]} brute {float(w[s])} "
                                f"({len(bad)} shifts differ)")
    if problems:
        print(f"FAIL {name} d2t2 base {tile_text}:")
        for p in problems:
            print("   ", p)
        return False
    if verbose:
        print(f"ok   {name:28s} d2t2 {tile_text:>9s}: non-empty {want['nonempty_tiles']:7d} "
              f"MaxTile {want['max_tile']:6d} corrs[0][1] {float(want['corrs'][0][1]):.4f}")
    return True


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
    if len(dims) == 2 and not compare_d2t2(path, dims, entries, tile_text, tessel, verbose):
        problems.append("D2T2 statistics differ (above)")
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
