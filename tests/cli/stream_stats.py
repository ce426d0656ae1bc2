#!/usr/bin/env python3
"""Streamed and sharded `tessel stats` against the in-memory path, bit for bit.

For every matrix (generated ones, hand-made edge cases, each also as a
2-mode .tns, a gzipped .tns and a .tsl cache, and, when present, every
shared Matrix Market file and a .tsl of it) and a few tile shapes it
compares the output of `tessel stats FILE` (text, csv and json) with
  - `tessel stats FILE --stream --block-entries B` for small B (many blocks),
    with and without `--spill-dir` (one text pass for many blocks),
  - `tessel stats --shard K/N --part ...` for K = 1..N, then `--merge`,
byte for byte. 3-mode .tns texts (generated with duplicates, comments and
empty slices, plain and gzipped, and the shared 3-mode .tns.gz when present)
go through the same comparisons. It also checks what must be refused: a
part file of another version (older or newer) or with a damaged byte,
missing or repeated shards, parts of two matrices, a --tile with the wrong
number of extents for a 3-mode file, and --stream on a damaged .tsl. Exit 0 when
all pass, 1 on a failure. The generated and hand-made matrices always run, so the test never
passes without checking anything.

usage: stream_stats.py --tessel PATH [--data DIR]
"""
import argparse
import glob
import gzip
import os
import struct
import subprocess
import sys
import tempfile

FAILURES = []


def run(argv, expect=0):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if (expect == 0) != (p.returncode == 0):
        FAILURES.append("%s: exit %d (%s)" % (" ".join(argv), p.returncode,
                                             p.stderr.decode(errors="replace").strip()))
    return p


def same(what, a, b):
    if a != b:
        FAILURES.append("%s: outputs differ\n--- in memory\n%s\n--- other\n%s" % (
            what, a.decode(errors="replace")[:2000], b.decode(errors="replace")[:2000]))


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def edge_cases(tmp):
    """Duplicates, symmetric mirrors, skew, explicit zeros, empty rows, comments."""
    files = []
    p = os.path.join(tmp, "dups.mtx")
    write(p, "%%MatrixMarket matrix coordinate real general\n% c\n9 7 8\n"
             "9 1 1.0\n1 1 2.0\n9 1 -1.0\n4 7 0.0\n1 2 3\n\n5 5 1\n1 1 1e300\n2 3 4\n")
    files.append((p, []))
    files.append((p, ["--drop-zeros"]))
    p = os.path.join(tmp, "sym.mtx")
    write(p, "%%MatrixMarket matrix coordinate integer symmetric\n6 6 5\n"
             "6 1 2\n2 2 1\n5 3 -4\n6 5 1\n4 1 3\n")
    files.append((p, []))
    p = os.path.join(tmp, "skew.mtx")
    write(p, "%%MatrixMarket matrix coordinate real skew-symmetric\n5 5 3\n"
             "2 1 1.5\n5 4 2\n3 1 0\n")
    files.append((p, ["--drop-zeros"]))
    p = os.path.join(tmp, "empty.mtx")
    write(p, "%%MatrixMarket matrix coordinate pattern general\n4 3 0\n")
    files.append((p, []))
    return files


def tns_edge_cases(tmp):
    """2-mode .tns texts: comments, duplicates, explicit zeros, empty rows."""
    files = []
    p = os.path.join(tmp, "dups.tns")
    text = ("# c\n9 1 1.0\n1 1 2.0\n\n% c\n9 1 -1.0\n4 7 0.0\n1 2 3\n5 5 1\n"
            "1 1 1e300\n2 3 4\n")
    write(p, text)
    files.append((p, []))
    files.append((p, ["--drop-zeros"]))
    gz = p + ".gz"
    with gzip.open(gz, "wb") as f:
        f.write(text.encode())
    files.append((gz, []))
    return files


def tns3_cases(tmp, data):
    """3-mode .tns texts: random entries with duplicates, comments, blank
    lines and empty slices in every mode; plain and gzipped; the shared
    3-mode files when present."""
    files = []
    g = 12345
    lines = ["# a 3-mode tensor"]
    for i in range(6000):
        g = (g * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        # slices 1..400 x 1..150 x 1..60, every 7th first index never used
        a = 1 + (g >> 20) % 400
        a = a + 1 if a % 7 == 0 else a
        b, c = 1 + (g >> 33) % 150, 1 + (g >> 45) % 60
        lines.append("%d %d %d %d" % (a, b, c, (g >> 8) % 9 - 4))
        if i % 997 == 0:
            lines.append("")
            lines.append("% comment")
            lines.append("%d %d %d 1.5" % (a, b, c))  # a duplicate
    text = "\n".join(lines) + "\n"
    p = os.path.join(tmp, "three.tns")
    write(p, text)
    files.append((p, []))
    files.append((p, ["--drop-zeros"]))
    with gzip.open(p + ".gz", "wb") as f:
        f.write(text.encode())
    files.append((p + ".gz", []))
    shared = []
    if data and os.path.isdir(os.path.join(data, "tns")):
        shared = sorted(glob.glob(os.path.join(data, "tns", "*.tns*")))
    return files, shared


def other_forms(tessel, tmp, path, tns=True):
    """path as a .tsl and (tns) a .tns and a gzipped .tns (tessel convert)."""
    stem = os.path.join(tmp, os.path.basename(path).split(".")[0])
    run([tessel, "convert", path, stem + ".tsl"])
    if not tns:
        return [stem + ".tsl"]
    run([tessel, "convert", path, stem + ".tns"])
    with open(stem + ".tns", "rb") as src, gzip.open(stem + ".z.tns.gz", "wb") as dst:
        dst.write(src.read())
    return [stem + ".tsl", stem + ".tns", stem + ".z.tns.gz"]


def generated(tessel, tmp):
    files = []
    specs = [
        ("uniform", ["--rows", "3000", "--cols", "2000", "--nnz", "40000", "--seed", "5"]),
        ("rmat", ["--size", "4096", "--nnz", "60000", "--seed", "3", "--pattern"]),
        ("banded", ["--size", "2500", "--bandwidth", "40", "--density", "0.3"]),
    ]
    for kind, args in specs:
        p = os.path.join(tmp, "gen-%s.mtx" % kind)
        run([tessel, "gen", kind] + args + ["-o", p])
        files.append((p, []))
    return files


def check_matrix(tessel, tmp, path, extra, tiles, formats=("json", "csv", "text"),
                 blocks=("1", "300"), shards=(1, 3, 7), shard_block="500"):
    name = os.path.basename(path)
    for tile in tiles:
        base = [tessel, "stats", path, "--tile", tile] + extra
        for fmt in formats:
            want = run(base + ["-f", fmt]).stdout
            for block in blocks:
                # one pass per block, and one pass for many blocks through a spill file
                for spill in ([], ["--spill-dir", tmp]):
                    got = run(base + ["-f", fmt, "--stream", "--block-entries", block] +
                              spill).stdout
                    same("%s %s tile %s --stream --block-entries %s %s" % (
                        name, fmt, tile, block, " ".join(spill)), want, got)
            if fmt != "json":
                continue
            for n in shards:
                parts = []
                for k in range(1, n + 1):
                    part = os.path.join(tmp, "%s.%s.%s.%d-%d.tpart" % (
                        name, tile, "".join(extra), k, n))
                    if os.path.exists(part):
                        os.remove(part)
                    run([tessel, "stats", path, "--tile", tile] + extra +
                        ["--shard", "%d/%d" % (k, n), "--part", part,
                         "--block-entries", shard_block] +
                        (["--spill-dir", tmp] if k % 2 else []))
                    parts.append(part)
                got = run([tessel, "stats", "--merge", "-f", fmt] + parts[::-1]).stdout
                same("%s %s tile %s shards %d merged" % (name, fmt, tile, n), want, got)


def check_refusals(tessel, tmp, path):
    parts = []
    for k in (1, 2):
        part = os.path.join(tmp, "r.%d.tpart" % k)
        run([tessel, "stats", path, "--shard", "%d/2" % k, "--part", part])
        parts.append(part)
    # every shard once
    p = run([tessel, "stats", "--merge", parts[0]], expect=1)
    p = run([tessel, "stats", "--merge", parts[0], parts[0]], expect=1)
    if b"shard" not in p.stderr:
        FAILURES.append("a repeated shard is refused without naming the shard: %r" % p.stderr)
    # another version: refused with a message naming both versions
    data = bytearray(open(parts[1], "rb").read())
    other = os.path.join(tmp, "v2.tpart")
    bumped = bytearray(data)
    for version in (1, 3):  # version 1: the 2-D format before 3-mode streaming
        bumped[8:12] = struct.pack("<I", version)
        open(other, "wb").write(bumped)
        p = run([tessel, "stats", "--merge", parts[0], other], expect=1)
        if b"version %d" % version not in p.stderr or b"version 2" not in p.stderr:
            FAILURES.append("a version-%d part is not refused by version: %r" % (version,
                                                                                p.stderr))
    # a version-1 file is shorter than a version-2 header: refused by version too
    short = os.path.join(tmp, "v1short.tpart")
    open(short, "wb").write(b"TESSELP\n" + struct.pack("<I", 1) + bytes(100))
    p = run([tessel, "stats", "--merge", short], expect=1)
    if b"version 1" not in p.stderr:
        FAILURES.append("a short version-1 part is not refused by version: %r" % p.stderr)
    # a damaged payload byte
    damaged = bytearray(data)
    damaged[-1] ^= 0x40
    bad = os.path.join(tmp, "bad.tpart")
    open(bad, "wb").write(damaged)
    p = run([tessel, "stats", "--merge", parts[0], bad], expect=1)
    if b"checksum" not in p.stderr:
        FAILURES.append("a damaged part is not refused by checksum: %r" % p.stderr)
    # a 3-mode .tns with a 2-extent --tile is refused as the in-memory path refuses it
    tns = os.path.join(tmp, "t.tns")
    write(tns, "1 2 3 1.0\n2 2 2 1.0\n")
    want = run([tessel, "stats", tns, "--tile", "3x2"], expect=1)
    p = run([tessel, "stats", tns, "--tile", "3x2", "--stream"], expect=1)
    if b"3 modes" not in p.stderr or p.stderr != want.stderr:
        FAILURES.append("--stream --tile 3x2 on a 3-mode .tns is not refused as in memory: "
                        "%r vs %r" % (p.stderr, want.stderr))
    # a spill directory that cannot hold the spill file; none is ever left behind
    p = run([tessel, "stats", path, "--stream", "--block-entries", "1", "--spill-dir",
             os.path.join(tmp, "missing")], expect=1)
    if b"cannot create a spill file" not in p.stderr:
        FAILURES.append("a missing --spill-dir is not refused with a message: %r" % p.stderr)
    left = glob.glob(os.path.join(tmp, "tessel-spill-*"))
    if left:
        FAILURES.append("spill files left behind: %s" % left)
    # a .tsl with a damaged payload byte is refused before any statistics
    tsl = os.path.join(tmp, "r.tsl")
    run([tessel, "convert", path, tsl])
    data = bytearray(open(tsl, "rb").read())
    data[-3] ^= 0x10
    open(tsl, "wb").write(data)
    p = run([tessel, "stats", tsl, "--stream"], expect=1)
    if b"checksum" not in p.stderr or p.stdout:
        FAILURES.append("--stream on a damaged .tsl is not refused by checksum: %r" % p.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", required=True)
    ap.add_argument("--data", default=None)
    args = ap.parse_args()
    shared = []
    if args.data and os.path.isdir(os.path.join(args.data, "mtx")):
        shared = sorted(glob.glob(os.path.join(args.data, "mtx", "*.mtx*")))
    with tempfile.TemporaryDirectory() as tmp:
        edges, gens = edge_cases(tmp), generated(args.tessel, tmp)
        edges += tns_edge_cases(tmp)
        # every generated and hand-made matrix also as .tns, .tns.gz and .tsl
        # (an empty matrix has no .tns form: a .tns file declares no extents)
        edges += [(q, extra) for path, extra in edges[:5] if not extra
                  for q in other_forms(args.tessel, tmp, path, "empty" not in path)]
        gens += [(q, extra) for path, extra in gens for q in other_forms(args.tessel, tmp, path)]
        tns3, tns3_shared = tns3_cases(tmp, args.data)
        cases = edges + gens
        for path, extra in edges:
            check_matrix(args.tessel, tmp, path, extra, ["2", "3x2", "128", "37x200"])
        for path, extra in gens:
            # about ten blocks and shards of several blocks
            check_matrix(args.tessel, tmp, path, extra, ["3x2", "128", "37x200"],
                         formats=("json", "csv"), blocks=("7000",), shards=(3,),
                         shard_block="5000")
        for path in shared:
            # Blocks of 50000 entries: each block rereads the file, so
            # small blocks on the larger shared files would take minutes.
            check_matrix(args.tessel, tmp, path, [], ["128", "37x200"], formats=("json",),
                         blocks=("50000",), shards=(4,), shard_block="50000")
            # the same matrix as a .tsl: blocks read only their rows' slice
            tsl = os.path.join(tmp, "shared.tsl")
            run([args.tessel, "convert", path, tsl])
            check_matrix(args.tessel, tmp, tsl, [], ["128"], formats=("json",),
                         blocks=("20000",), shards=(3,), shard_block="20000")
        for path, extra in tns3:
            check_matrix(args.tessel, tmp, path, extra, ["2", "3x2x5", "128", "37x200x7"],
                         blocks=("1", "700"), shards=(1, 3, 7), shard_block="500")
        for path in tns3_shared:
            check_matrix(args.tessel, tmp, path, [], ["128", "37x200x7"], formats=("json",),
                         blocks=("5000",), shards=(4,), shard_block="5000")
        check_refusals(args.tessel, tmp, cases[-1][0])
    print("stream_stats: %d matrices (%d shared), %d 3-mode tensors (%d shared)%s" % (
        len(cases) + len(shared), len(shared), len(tns3) + len(tns3_shared), len(tns3_shared),
        "" if shared else "; ../shared/data absent, shared matrices skipped"))
    for f in FAILURES:
        print("FAIL:", f)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
