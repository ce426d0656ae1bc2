#!/usr/bin/env python3
"""`tessel stats` peak memory and time against the CSR (issue 27 items 2-3 targets).

    python3 bench/stats_memory.py [--tessel build/tools/tessel] [--sizes 1M,4M,16M]
                                  [--kinds uniform,rmat] [--cache DIR] [--runs 1]
                                  [--block-entries N] [--spill-dir DIR] [--shards 4]
    python3 bench/stats_memory.py --grid [--baseline MAIN/build/tools/tessel]
                                  [--spec specs/extensor.yaml] [--set LLB.capacity=1MiB]

Generates, once (cached in --cache), `tessel gen` square matrices of average degree 16
(rows = nnz / 16, seed 1, values) as .tsl and .mtx, then per file, in one run:

- `tessel stats FILE.tsl -f csv`: the in-memory path (the CSR read from the cache, the tile
  occupancy at the default 128x128 tiles and the row and column slices);
- `tessel stats FILE.mtx --stream -f csv [--block-entries N]`: the streamed path, which never
  holds the whole CSR (one counting pass, then one pass per block of rows);
- `--spill-dir DIR`: the streamed path again with `--spill-dir DIR` (one text pass for up to
  max(8, N / 4096) blocks through a spill file), and `tessel stats FILE.tsl --stream` (a
  cache's blocks read only their rows); both outputs are checked equal to the in-memory one;
- `--shards 4` (0: none): the same file in 4 `--shard K/4` runs and a `--merge` (peak of the largest
  shard run); the merged output is checked equal to the in-memory one.

`--grid` measures instead the paths that keep a tile grid (issue 27 item 2), per file and
per binary (`--baseline B` first, then `--tessel`, in the same run):

- `tessel stats FILE.tsl --save F.tstat` (the D2T2 statistics on the 128x128 base grid,
  saved with the grid's counts): CPU s, peak over the CSR, the .tstat's bytes per
  non-empty base tile;
- `tessel run SPEC -T A=FILE.tsl -e stat --set LLB.capacity=1MiB --no-timing`: CPU s, peak
  over the CSR and peak bytes per nonzero;

and checks that both binaries write the same traffic and summary, and that each reads
both binaries' .tstat files back to the same `tessel stats F.tstat -f json` (the
baseline's file may be an older version, which the newer binary converts).

It prints CPU seconds (user + system, best of --runs), peak resident memory over the CSR's
bytes (8 B per row pointer, 4 B column index and 8 B value per nonzero: `mem/CSR`) and, per
path, the exponent of CPU time in nnz fitted over the sizes (least squares in log-log).
Targets (issue 27): in-memory `stats` mem/CSR <= 1.5 and time exponent <= 1.05. Figures
only, no pass/fail. Standard library only.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

from scaling import generate, label, parse_size, run_measured


def csr_bytes(rows, nnz):
    return 8 * (rows + 1) + 12 * nnz


def best(runs, cmd):
    out = None
    for _ in range(runs):
        wall, cpu, rss, _ = run_measured(cmd)
        out = (cpu, rss) if out is None else (min(out[0], cpu), min(out[1], rss))
    return out


def exponent(points):
    """Least-squares slope of log(time) over log(nnz)."""
    pts = [(math.log(n), math.log(t)) for n, t in points if t > 0]
    if len(pts) < 2:
        return float("nan")
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx else float("nan")


def output(cmd):
    return subprocess.run(cmd, capture_output=True, check=True).stdout


def grid_paths(args):
    """The --grid table: `stats --save` and `run -e stat`, baseline against --tessel."""
    bins = ([("base", args.baseline)] if args.baseline else []) + [("new", args.tessel)]
    print("%-8s %5s %10s %9s | %-5s %7s %7s %9s | %7s %7s %8s | %s" % (
        "kind", "size", "nnz", "tiles", "bin", "save s", "mem/CSR", "B/tile",
        "run s", "mem/CSR", "B/nnz", "same"))
    for kind in args.kinds.split(","):
        for size in args.sizes.split(","):
            n = parse_size(size)
            tsl, rows, nnz = generate(args.tessel, kind, n, args.cache,
                                      "%s-%s.tsl" % (kind, label(n)), False)
            csr = csr_bytes(rows, nnz)
            outs, files = [], []
            for name, binary in bins:
                tstat = os.path.join(args.cache, "%s-%s.%s.tstat" % (kind, label(n), name))
                save = best(args.runs, [binary, "stats", tsl, "--save", tstat, "-f", "json"])
                tiles = json.loads(output([binary, "stats", tstat, "-f", "json"]))
                nonempty = find_key(tiles, "nonempty_tiles")
                outdir = os.path.join(args.cache, "run-%s" % name)
                run = best(args.runs, [binary, "run", args.spec, "-T", "A=" + tsl, "-e", "stat",
                                       "--set", args.set, "--no-timing", "-o", outdir])
                outs.append(b"".join(open(os.path.join(outdir, f), "rb").read()
                                     for f in ("traffic.csv", "summary.csv")))
                files.append(tstat)
                per_tile = os.path.getsize(tstat) / nonempty if nonempty else float("nan")
                print("%-8s %5s %10d %9s | %-5s %7.2f %7.2f %9.2f | %7.2f %7.2f %8.1f |" % (
                    kind, size, nnz, nonempty, name, save[0], save[1] / csr, per_tile,
                    run[0], run[1] / csr, run[1] / nnz))
            # --tessel must read every file; the baseline may refuse a newer version
            reads = {(name, f): read_back(b, f) for name, b in bins for f in files}
            new_ok = all(reads[("new", f)] is not None for f in files)
            same = len(set(v for v in reads.values() if v is not None)) == 1
            refused = sum(v is None for v in reads.values())
            print("%-8s %5s same run outputs: %s; .tstat read back equal: %s (%d refused)" % (
                kind, size, "yes" if len(set(outs)) == 1 else "NO",
                "yes" if new_ok and same else "NO", refused))
            sys.stdout.flush()


def read_back(binary, tstat):
    """`tessel stats F.tstat -f json` without the file's own name; None if refused."""
    r = subprocess.run([binary, "stats", tstat, "-f", "json"], capture_output=True)
    if r.returncode:
        return None
    doc = json.loads(r.stdout)
    doc.pop("file", None)
    return json.dumps(doc, sort_keys=True)


def find_key(doc, key):
    """The first value of `key` anywhere in a JSON document (None if absent)."""
    if isinstance(doc, dict):
        if key in doc:
            return doc[key]
        doc = list(doc.values())
    if isinstance(doc, list):
        for v in doc:
            found = find_key(v, key)
            if found is not None:
                return found
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tessel", default="build/tools/tessel")
    ap.add_argument("--sizes", default="1M,4M,16M")
    ap.add_argument("--kinds", default="uniform,rmat")
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "tessel-statmem"))
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--block-entries", default=None)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--spill-dir", default=None)
    ap.add_argument("--grid", action="store_true",
                    help="measure stats --save and run -e stat (the grid paths) instead")
    ap.add_argument("--baseline", default=None, help="a second tessel binary, e.g. main's")
    ap.add_argument("--spec", default="specs/extensor.yaml")
    ap.add_argument("--set", default="LLB.capacity=1MiB")
    args = ap.parse_args()
    os.makedirs(args.cache, exist_ok=True)
    if args.grid:
        grid_paths(args)
        return
    block = ["--block-entries", args.block_entries] if args.block_entries else []
    print("%-8s %5s %10s | %8s %7s | %8s %7s | %8s %7s %s%s" % (
        "kind", "size", "nnz", "mem s", "mem/CSR", "stream s", "mem/CSR", "shard s",
        "mem/CSR", "merged==mem",
        " | spill s mem/CSR tsl-stream s mem/CSR same" if args.spill_dir else ""))
    times = {}
    for kind in args.kinds.split(","):
        for size in args.sizes.split(","):
            n = parse_size(size)
            tsl, rows, nnz = generate(args.tessel, kind, n, args.cache,
                                      "%s-%s.tsl" % (kind, label(n)), False)
            mtx, _, _ = generate(args.tessel, kind, n, args.cache,
                                 "%s-%s.mtx" % (kind, label(n)), False)
            csr = csr_bytes(rows, nnz)
            mem = best(args.runs, [args.tessel, "stats", tsl, "-f", "csv"])
            stream = best(args.runs, [args.tessel, "stats", mtx, "--stream", "-f", "csv"] + block)
            shard_cpu, shard_rss, parts = 0.0, 0, []
            for k in range(1, args.shards + 1):
                part = os.path.join(args.cache, "%s-%s.%d.tpart" % (kind, label(n), k))
                cpu, rss = best(1, [args.tessel, "stats", mtx, "--shard",
                                    "%d/%d" % (k, args.shards), "--part", part] + block)
                shard_cpu += cpu
                shard_rss = max(shard_rss, rss)
                parts.append(part)
            whole = output([args.tessel, "stats", mtx, "-f", "json"])
            merged = output([args.tessel, "stats", "--merge", "-f", "json"] + parts) \
                if parts else whole
            extra = ""
            if args.spill_dir:
                spill = best(args.runs, [args.tessel, "stats", mtx, "--stream", "-f", "csv",
                                         "--spill-dir", args.spill_dir] + block)
                tsl_stream = best(args.runs, [args.tessel, "stats", tsl, "--stream", "-f",
                                              "csv"] + block)
                same = (output([args.tessel, "stats", mtx, "--stream", "-f", "json",
                                "--spill-dir", args.spill_dir] + block) == whole and
                        output([args.tessel, "stats", tsl, "-f", "json"]) ==
                        output([args.tessel, "stats", tsl, "--stream", "-f", "json"] + block))
                times.setdefault((kind, "spill"), []).append((nnz, spill[0]))
                extra = " | %7.2f %7.2f %12.2f %7.2f %s" % (
                    spill[0], spill[1] / csr, tsl_stream[0], tsl_stream[1] / csr,
                    "yes" if same else "NO")
            times.setdefault((kind, "mem"), []).append((nnz, mem[0]))
            times.setdefault((kind, "stream"), []).append((nnz, stream[0]))
            print("%-8s %5s %10d | %8.2f %7.2f | %8.2f %7.2f | %8.2f %7.2f %s%s" % (
                kind, size, nnz, mem[0], mem[1] / csr, stream[0], stream[1] / csr,
                shard_cpu, shard_rss / csr, "yes" if merged == whole else "NO", extra))
            sys.stdout.flush()
    for (kind, path), pts in sorted(times.items()):
        print("time exponent %-8s %-6s %.3f" % (kind, path, exponent(pts)))


if __name__ == "__main__":
    main()
