#!/usr/bin/env python3
"""Matrix Market and .tns parse speed and memory against `wc -l` (issue 27 item 1 targets).

    python3 bench/parse_speed.py [--tessel build/tools/tessel] [--sizes 1M,4M,16M]
                                 [--kinds uniform:real,rmat:pattern] [--cache DIR] [--runs 3]
                                 [--formats mtx,tns,gz] [--before OTHER/tools/tessel]

Generates, once (cached in --cache, default a directory in the system's temp dir kept between
runs), `tessel gen` square .mtx files of average degree 16 (rows = nnz / 16, seed 1) for each
KIND:FIELD (FIELD real: values written with 17 significant digits; pattern: no values), then
per file, in the same run and with the file in the page cache (one untimed warm-up read):

- `tessel convert FILE OUT.tsl -v`: the wall seconds of the read alone (`-v`'s "read" figure),
  the process's CPU seconds (user + system, from os.wait4; this includes writing the .tsl,
  which is at memory speed) and its peak resident memory (ru_maxrss);
- `tessel convert FILE --check -v`: the CPU seconds of the read alone, nothing written (the
  `chk s` and `chk/wc` columns, what issue 27 asks of the parse; nan for a binary without
  --check);
- `wc -l FILE`: wall and CPU seconds.

--formats tns also measures each matrix written as a FROSTT .tns file (`tessel convert`,
cached beside it); --formats gz the .mtx gzipped (level 6, cached beside it), against
`gzip -dc FILE | wc -l` (through sh; its CPU is the pipeline's) instead of `wc -l`, with MB
and MB/s counted on the uncompressed text so the rows compare with the .mtx ones. --before measures a second tessel binary (say, main's release build) on
the same files in the same run, each file's runs of both binaries interleaved, so a change is
compared with its baseline under the same load: the `build` column says which binary a row is.

Best of --runs for every time. It prints MB/s of the read, the read's wall time over `wc -l`'s
(`read/wc`: 4 means tessel takes 4x as long as wc), CPU over wc's CPU, and the peak memory over
the tensor tessel builds (`mem/T`: 4 B column index per nonzero, 8 B value per nonzero when
the field is real, 8 B per row pointer). Targets (issue 27): >= 4x the throughput measured
before the change, >= 25 % of `wc -l` (read/wc <= 4), mem/T <= 1.3. Figures only, no
pass/fail. Standard library only.
"""
import argparse
import gzip
import os
import shutil
import re
import sys
import tempfile
import time

from scaling import generate as gen_matrix, label, parse_size, run_measured


def generate(tessel, kind, field, nnz, cache):
    """The cached .mtx of this kind, field and size."""
    return gen_matrix(tessel, kind, nnz, cache, "%s-%s-%s.mtx" % (kind, field, label(nnz)),
                      field == "pattern")



def tns_of(tessel, path):
    """The cached .tns form of the generated .mtx at path."""
    tns = path[:-len(".mtx")] + ".tns"
    if not os.path.exists(tns):
        run_measured([tessel, "convert", path, tns])
    return tns


def gz_of(path):
    """The cached gzipped (level 6) form of the generated .mtx at path."""
    gz = path + ".gz"
    if not os.path.exists(gz):
        with open(path, "rb") as src, gzip.open(gz + ".part", "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        os.replace(gz + ".part", gz)
    return gz


def best(runs, fn):
    """Element-wise minimum of runs calls of fn (each a tuple of numbers)."""
    out = None
    for _ in range(runs):
        r = fn()
        out = r if out is None else tuple(min(a, b) for a, b in zip(out, r))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tessel", default="build/tools/tessel")
    ap.add_argument("--sizes", default="1M,4M,16M",
                    help="nonzeros per matrix, comma-separated (K, M, G suffixes: powers of 2)")
    ap.add_argument("--kinds", default="uniform:real,rmat:pattern",
                    help="KIND:FIELD pairs, FIELD real or pattern")
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "tessel-parse"),
                    help="where the generated matrices are kept between runs")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--formats", default="mtx", help="mtx, tns, gz (.mtx.gz) or a list")
    ap.add_argument("--before", default=None,
                    help="a second tessel binary measured on the same files in the same run")
    args = ap.parse_args()
    builds = [("after", args.tessel)] + ([("before", args.before)] if args.before else [])
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    os.makedirs(args.cache, exist_ok=True)
    print("tessel convert FILE OUT.tsl -v and convert FILE --check -v vs wc -l FILE; best of %d; "
          "%d online CPUs; cache %s" % (args.runs, os.cpu_count() or 0, args.cache))
    print("%-15s %-3s %5s %-6s %10s %8s %8s %8s %8s %8s %7s %7s %7s %7s %9s %6s" % (
        "kind:field", "fmt", "size", "build", "nnz", "MB", "read s", "cpu s", "MB/s", "wc s",
        "read/wc", "cpu/wc", "chk s", "chk/wc", "peak MiB", "mem/T"))
    with tempfile.TemporaryDirectory() as out:
        tsl = os.path.join(out, "t.tsl")
        for spec in args.kinds.split(","):
            kind, field = spec.split(":")
            for n, fmt in [(n, f) for n in sizes for f in args.formats.split(",")]:
                path, rows, nnz = generate(args.tessel, kind, field, n, args.cache)
                if fmt == "tns":
                    path = tns_of(args.tessel, path)
                    field_bytes = 8  # a .tns entry always carries a value
                else:
                    field_bytes = 8 if field == "real" else 0
                mb = os.path.getsize(path) / 1e6  # the text's size, also for gz
                wc = ["wc", "-l", path]
                if fmt == "gz":
                    path = gz_of(path)
                    wc = ["sh", "-c", 'gzip -dc "$1" | wc -l', "sh", path]
                run_measured(wc)  # page cache warm-up

                def tessel_once(binary):
                    _, cpu, rss, text = run_measured([binary, "convert", path, tsl, "-v"])
                    m = re.search(r"read ([0-9.]+) s", text)
                    try:
                        chk = run_measured([binary, "convert", path, "--check", "-v"])[1]
                    except RuntimeError:  # a binary without --check
                        chk = float("nan")
                    return (float(m.group(1)) if m else float("nan"), cpu, rss, chk)

                def wc_once():
                    wall, cpu, _, _ = run_measured(wc)
                    return (wall, cpu)

                # the binaries' runs interleaved: both see the same load
                got = {}
                for _ in range(args.runs):
                    for name, binary in builds:
                        r = tessel_once(binary)
                        got[name] = r if name not in got else tuple(
                            min(a, b) for a, b in zip(got[name], r))
                wc_s, wc_cpu = best(args.runs, wc_once)
                tensor = nnz * (4 + field_bytes) + 8 * (rows + 1)
                for name, _ in builds:
                    read_s, cpu_s, rss, chk_s = got[name]
                    print("%-15s %-3s %5s %-6s %10d %8.1f %8.3f %8.3f %8.1f %8.3f %7.2f %7.2f "
                          "%7.3f %7.2f %9.1f %6.2f" % (
                              spec, fmt, label(n), name, nnz, mb, read_s, cpu_s, mb / read_s,
                              wc_s, read_s / wc_s, cpu_s / max(wc_cpu, 1e-3), chk_s,
                              chk_s / max(wc_cpu, 1e-3), rss / 2.0 ** 20, rss / tensor))
                sys.stdout.flush()
    print("targets (issue 27): >= 4x the throughput before the change, read/wc <= 4, "
          "mem/T <= 1.3")
    return 0


if __name__ == "__main__":
    sys.exit(main())
