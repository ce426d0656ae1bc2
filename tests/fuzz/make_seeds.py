#!/usr/bin/env python3
"""Writes the hand-made seeds of the fuzz corpus (tests/fuzz/corpus/*).

Deterministic: running it again rewrites the same bytes. It only writes the
files named here and never deletes anything, so crash reproducers and seeds
added by hand or by a fuzzing campaign stay. Usage:

    tests/fuzz/make_seeds.py [--data ../shared/data] [--tessel build/tools/tessel]

--data gives the real matrices whose heads become seeds (skipped when
absent); --tessel is used to write valid binary caches with
`tessel convert` (skipped when not given or when it cannot).
"""
import argparse
import gzip
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")

BANNER = b"%%MatrixMarket matrix coordinate "
# Real matrices whose first entries become seeds, one per field/symmetry
# kind (the smallest of each in ../shared/data).
REAL_HEADS = ["jagmesh7", "bcspwr07", "soc-sign-bitcoin-otc", "ca-GrQc", "hangGlider_2"]
HEAD_ENTRIES = 200
HEAD_MAX_BYTES = 20 * 1024


def mm(field_sym, size, *entries, nl=b"\n"):
    lines = [BANNER + field_sym, size] + list(entries)
    return nl.join(lines) + nl


# ---------------------------------------------------------------- .mtx
MTX = {
    # -- valid, each feature once
    "ok-real-general.mtx": mm(b"real general", b"3 4 4", b"1 1 1.5", b"3 4 -2e3", b"2 2 .5",
                              b"1 4 7"),
    "ok-double.mtx": mm(b"double general", b"2 2 1", b"2 1 3.25"),
    "ok-uppercase-banner.mtx": b"%%MATRIXMARKET MATRIX COORDINATE REAL GENERAL\n1 1 1\n1 1 2\n",
    "ok-integer.mtx": mm(b"integer general", b"3 3 3", b"1 1 -9223372036854775808",
                         b"2 3 9223372036854775807", b"3 1 +4"),
    "ok-pattern-symmetric.mtx": mm(b"pattern symmetric", b"4 4 4", b"1 1", b"2 1", b"4 2",
                                   b"4 3"),
    "ok-real-symmetric-both-triangles.mtx": mm(b"real symmetric", b"3 3 3", b"2 1 1", b"1 2 2",
                                               b"3 3 4"),
    "ok-skew.mtx": mm(b"real skew-symmetric", b"3 3 2", b"2 1 1.5", b"3 1 -2"),
    "ok-complex.mtx": mm(b"complex general", b"2 2 2", b"1 1 3 4", b"2 2 0 -1"),
    "ok-hermitian.mtx": mm(b"complex hermitian", b"3 3 3", b"1 1 2 0", b"2 1 1 1", b"3 2 0 5"),
    "ok-comments-blank-lines.mtx": (BANNER + b"real general\n% comment\n\n   % indented\n"
                                    b"\t2 2 2 \n\n1 1 1\n% between entries\n  2\t2   3  \n\n"),
    "ok-crlf.mtx": mm(b"real general", b"2 2 2", b"1 1 1", b"2 2 2", nl=b"\r\n"),
    "ok-no-final-newline.mtx": mm(b"real general", b"2 2 1", b"1 2 5")[:-1],
    "ok-empty-matrix.mtx": mm(b"real general", b"0 0 0"),
    "ok-no-entries.mtx": mm(b"pattern general", b"5 7 0"),
    "ok-duplicates-sum-to-zero.mtx": mm(b"real general", b"2 3 5", b"1 1 1.5", b"1 1 -1.5",
                                        b"2 3 0", b"2 3 -0.0", b"1 2 1e-300"),
    "ok-explicit-zeros.mtx": mm(b"real symmetric", b"3 3 3", b"1 1 0", b"2 1 0.0", b"3 3 1"),
    "ok-values-odd.mtx": mm(b"real general", b"3 3 6", b"1 1 1e308", b"1 2 1e-320",
                            b"1 3 12345678901234567890", b"2 1 0.000000000000000000000001",
                            b"2 2 +1.e+2", b"3 3 -.5E-3"),
    "ok-wide-hash-path.mtx": mm(b"real general", b"3 4294967295 5", b"1 4294967295 1",
                                b"1 1 2", b"2 3000000000 3", b"3 7 4", b"3 2000000001 5"),
    "ok-tall-many-rows.mtx": mm(b"pattern general", b"1000000 3 2", b"1000000 3", b"1 1"),
    "ok-plus-signs.mtx": mm(b"real general", b"+2 +2 +1", b"+1 +2 +3"),
    "ok-column-major-unsorted.mtx": mm(b"real general", b"4 4 6", b"4 1 1", b"2 1 2", b"3 2 3",
                                       b"1 2 4", b"4 4 5", b"1 4 6"),
    # -- banner
    "bad-empty.mtx": b"",
    "bad-only-newline.mtx": b"\n",
    "bad-no-banner.mtx": b"3 3 1\n1 1 1\n",
    "bad-banner-misspelt.mtx": b"%%MatrixMarkt matrix coordinate real general\n1 1 1\n1 1 1\n",
    "bad-banner-leading-space.mtx": b" %%MatrixMarket matrix coordinate real general\n1 1 0\n",
    "bad-banner-utf8-bom.mtx": b"\xef\xbb\xbf" + mm(b"real general", b"1 1 0"),
    "bad-banner-object-vector.mtx": b"%%MatrixMarket vector coordinate real general\n1 1 0\n",
    "bad-banner-format-unknown.mtx": b"%%MatrixMarket matrix coordinat real general\n1 1 0\n",
    "bad-banner-array.mtx": b"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n",
    "bad-banner-field-unknown.mtx": mm(b"quaternion general", b"1 1 0"),
    "bad-banner-symmetry-unknown.mtx": mm(b"real hankel", b"1 1 0"),
    "bad-banner-missing-symmetry.mtx": b"%%MatrixMarket matrix coordinate real\n1 1 0\n",
    "bad-banner-only-magic.mtx": b"%%MatrixMarket\n1 1 0\n",
    "bad-banner-extra-word.mtx": mm(b"real general extra", b"1 1 0"),
    "bad-banner-long-word.mtx": b"%%MatrixMarket " + b"m" * 300 + b" coordinate real general\n",
    "bad-hermitian-real.mtx": mm(b"real hermitian", b"2 2 1", b"2 1 1"),
    "bad-skew-pattern.mtx": mm(b"pattern skew-symmetric", b"2 2 1", b"2 1"),
    "bad-nul-in-banner.mtx": b"%%MatrixMarket matrix\0coordinate real general\n1 1 1\n1 1 1\n",
    "bad-gzip-bytes-in-memory.mtx": gzip.compress(mm(b"real general", b"1 1 1", b"1 1 1"),
                                                  mtime=0),
    # -- size line
    "bad-size-missing.mtx": BANNER + b"real general\n% only comments\n\n",
    "bad-size-two-numbers.mtx": mm(b"real general", b"3 3"),
    "bad-size-four-numbers.mtx": mm(b"real general", b"3 3 1 1", b"1 1 1"),
    "bad-size-negative.mtx": mm(b"real general", b"-3 3 1", b"1 1 1"),
    "bad-size-non-numeric.mtx": mm(b"real general", b"three 3 1", b"1 1 1"),
    "bad-size-float.mtx": mm(b"real general", b"3.0 3 1", b"1 1 1"),
    "bad-size-huge-dims.mtx": mm(b"real general", b"99999999999 99999999999 1", b"1 1 1"),
    "bad-size-u64-overflow.mtx": mm(b"real general", b"3 3 18446744073709551616", b"1 1 1"),
    "bad-size-hypersparse-rows.mtx": mm(b"pattern general", b"4294967295 3 1", b"1 1"),
    "bad-size-more-than-positions.mtx": mm(b"real general", b"2 2 5", b"1 1 1"),
    "bad-size-symmetric-not-square.mtx": mm(b"real symmetric", b"2 3 1", b"1 1 1"),
    "bad-size-nul.mtx": BANNER + b"real general\n3\x003 1\n1 1 1\n",
    "bad-claim-10g-nnz.mtx": mm(b"real general", b"100000 100000 10000000000", b"1 1 1",
                                b"2 2 2"),
    "bad-claim-10g-nnz-symmetric.mtx": mm(b"pattern symmetric", b"200000 200000 10000000000",
                                          b"2 1"),
    # -- entries
    "bad-count-too-few.mtx": mm(b"real general", b"3 3 3", b"1 1 1", b"2 2 2"),
    "bad-count-too-many.mtx": mm(b"real general", b"3 3 1", b"1 1 1", b"2 2 2"),
    "bad-index-zero-row.mtx": mm(b"real general", b"3 3 1", b"0 1 1"),
    "bad-index-zero-col.mtx": mm(b"real general", b"3 3 1", b"1 0 1"),
    "bad-index-row-range.mtx": mm(b"real general", b"3 3 1", b"4 1 1"),
    "bad-index-col-range.mtx": mm(b"real general", b"3 3 1", b"1 4 1"),
    "bad-index-overflow.mtx": mm(b"real general", b"3 3 1", b"99999999999999999999999 1 1"),
    "bad-index-negative.mtx": mm(b"real general", b"3 3 1", b"-1 1 1"),
    "bad-index-float.mtx": mm(b"real general", b"3 3 1", b"1.0 1 1"),
    "bad-index-non-numeric.mtx": mm(b"real general", b"3 3 1", b"a 1 1"),
    "bad-missing-col.mtx": mm(b"real general", b"3 3 1", b"1"),
    "bad-missing-value.mtx": mm(b"real general", b"3 3 1", b"1 1"),
    "bad-value-non-numeric.mtx": mm(b"real general", b"3 3 1", b"1 1 abc"),
    "bad-value-trailing-junk.mtx": mm(b"real general", b"3 3 1", b"1 1 1.5x"),
    "bad-value-overflow.mtx": mm(b"real general", b"3 3 1", b"1 1 1e999"),
    "odd-value-inf.mtx": mm(b"real general", b"3 3 2", b"1 1 inf", b"2 2 -Infinity"),
    "odd-value-nan.mtx": mm(b"real general", b"3 3 2", b"1 1 nan", b"1 1 1"),
    "odd-value-hex.mtx": mm(b"real general", b"3 3 1", b"1 1 0x1p3"),
    "odd-banner-no-space.mtx": b"%%MatrixMarketmatrix coordinate real general\n1 1 1\n1 1 1\n",
    "bad-extra-field.mtx": mm(b"real general", b"3 3 1", b"1 1 1 7"),
    "bad-pattern-with-value.mtx": mm(b"pattern general", b"3 3 1", b"1 1 1"),
    "bad-integer-float.mtx": mm(b"integer general", b"3 3 1", b"1 1 1.5"),
    "bad-integer-overflow.mtx": mm(b"integer general", b"3 3 1", b"1 1 9223372036854775808"),
    "bad-complex-missing-imag.mtx": mm(b"complex general", b"3 3 1", b"1 1 1"),
    "bad-complex-extra.mtx": mm(b"complex general", b"3 3 1", b"1 1 1 2 3"),
    "bad-skew-diagonal.mtx": mm(b"real skew-symmetric", b"3 3 2", b"2 1 1", b"2 2 1"),
    "bad-nul-in-entry.mtx": mm(b"real general", b"2 2 2", b"1 1 1", b"2 2\x00 2"),
    "bad-cr-only.mtx": mm(b"real general", b"2 2 1", b"1 1 1", nl=b"\r"),
    "bad-long-line-2mb.mtx": mm(b"real general", b"2 2 1") + b"1 1 " + b"9" * (2 << 20) + b"\n",
}


# ---------------------------------------------------------------- .tns
TNS = {
    "ok-3-modes.tns": b"1 1 1 1.0\n2 3 1 -2.5\n1 2 4 3\n2 3 1 1\n",
    "ok-comments.tns": b"# header comment\n% percent comment\n\n  # indented\n1 2 3\n\t2 1 4 \n",
    "ok-crlf-tabs.tns": b"1\t2\t3.5\r\n3\t1\t-1\r\n",
    "ok-two-modes-dups.tns": b"2 2 1\n1 1 1\n2 2 -1\n2 2 2\n",
    "ok-zero-values.tns": b"1 1 0\n2 2 0.0\n3 3 -0\n1 1 1\n",
    "ok-one-mode-dups.tns": b"3 1\n1 2\n3 -1\n5 0\n",
    "ok-eight-modes-sorted.tns": (b"1 1 1 1 1 1 1 1 1\n1 1 1 1 1 1 1 2 2\n"
                                  b"1 1 1 1 1 1 2 1 3\n2 1 1 1 1 1 1 1 4\n"),
    "ok-huge-mode-2.tns": b"1 4294967295 1\n2 1 2\n1 3000000000 3\n",
    "ok-large-modes-4.tns": b"1 100000 3000000 7 1\n9 1 1 1 2\n",
    "ok-values-odd.tns": b"1 1 1e308\n2 2 1e-320\n3 3 12345678901234567890\n",
    "ok-no-final-newline.tns": b"1 2 3 4",
    "odd-value-inf-nan.tns": b"1 1 inf\n2 2 nan\n",
    "bad-empty.tns": b"",
    "bad-only-comments.tns": b"# nothing\n% here\n\n",
    "bad-first-line-one-field.tns": b"7\n1 1\n",
    "bad-nine-modes.tns": b"1 2 3 4 5 6 7 8 9 1.0\n",
    "bad-ragged-fewer.tns": b"1 1 1 1\n1 1 1\n",
    "bad-ragged-more.tns": b"1 1 1\n1 1 1 1\n",
    "bad-ragged-value-only.tns": b"1 1 1\n5\n",
    "bad-index-zero.tns": b"1 1 1\n0 2 1\n",
    "bad-index-zero-last-mode.tns": b"1 1 1 1\n2 2 0 1\n",
    "bad-index-negative.tns": b"1 1 1\n-1 2 1\n",
    "bad-index-float.tns": b"1 1 1\n1.5 2 1\n",
    "bad-index-overflow.tns": b"1 1 1\n4294967296 1 1\n",
    "bad-index-u64-overflow.tns": b"1 1 1\n99999999999999999999999 1 1\n",
    "bad-hypersparse-mode0.tns": b"4294967295 1 1\n",
    "bad-value-non-numeric.tns": b"1 1 x\n",
    "bad-value-overflow.tns": b"1 1 1e999\n",
    "bad-nul.tns": b"1 1 1\n2\x002 1\n",
    "bad-long-line.tns": b"1 1 " + b"1" * ((1 << 20) + 10) + b"\n",
}


# --------------------------------------------------------------- caches
# Valid seeds written as caches by tessel convert: small ones covering
# pattern, real, integer, complex, symmetric, empty, 1- to 8-mode tensors.
CACHE_SOURCES = ["ok-real-general.mtx", "ok-pattern-symmetric.mtx", "ok-integer.mtx",
                 "ok-complex.mtx", "ok-skew.mtx", "ok-empty-matrix.mtx", "ok-no-entries.mtx",
                 "ok-wide-hash-path.mtx", "ok-duplicates-sum-to-zero.mtx", "ok-3-modes.tns",
                 "ok-one-mode-dups.tns", "ok-eight-modes-sorted.tns", "ok-huge-mode-2.tns"]
TRUNCATED = ["ok-real-general.mtx.tsl", "ok-3-modes.tns.tsl"]
# The checksum of src/base/checksum.c, so crafted caches carry valid sums
# and reach the structure checks even without the fuzz target's repair.
M64 = (1 << 64) - 1
PA, PB, PC = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9


def rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def checksum(data):
    lanes = [(PA + PB) & M64, PB, 0, (0 - PA) & M64]
    full = len(data) // 32 * 32
    for off in range(0, full, 32):
        for i in range(4):
            (w,) = struct.unpack_from("<Q", data, off + 8 * i)
            acc = (lanes[i] + w * PB) & M64
            lanes[i] = (rotl(acc, 31) * PA) & M64
    h = (rotl(lanes[0], 1) + rotl(lanes[1], 7) + rotl(lanes[2], 12) + rotl(lanes[3], 18)) & M64
    h ^= (len(data) * PC) & M64
    for b in data[full:]:
        h = (rotl(h ^ ((b * PC) & M64), 11) * PA) & M64
    h ^= h >> 33
    h = (h * PB) & M64
    h ^= h >> 29
    h = (h * PC) & M64
    h ^= h >> 32
    return h


def cache(order, dims, nnz, ptr, idx, values, field=b"real", symmetry=b"general",
          fix_sums=True):
    """A .tsl image (little-endian host layout of src/tensor/cache.c)."""
    payload = struct.pack("<%dQ" % len(ptr), *ptr)
    for mode in idx:
        payload += struct.pack("<%dI" % len(mode), *mode)
    if values is not None:
        payload += struct.pack("<%dd" % len(values), *values)
    dims8 = list(dims) + [0] * (8 - len(dims))
    head = b"TESSELC\n" + struct.pack("<IIII", 1, 256, order, 1 if values is not None else 0)
    head += struct.pack("<8Q", *dims8) + struct.pack("<QQqII", nnz, 0, 0, 0, 0x01020304)
    head += field.ljust(16, b"\0") + symmetry.ljust(16, b"\0")
    head += struct.pack("<QQ", len(payload), checksum(payload) if fix_sums else 0)
    head += b"\0" * 80
    head += struct.pack("<Q", checksum(head) if fix_sums else 0)
    assert len(head) == 256
    return head + payload


def crafted_caches():
    c = {}
    # 3 x 4 real: rows {0: (0,1),(0,3)}, {1: empty}, {2: (2,0)}
    ok = dict(order=2, dims=[3, 4], nnz=3, ptr=[0, 2, 2, 3], idx=[[1, 3, 0]],
              values=[1.0, -2.0, 0.5])
    c["ok-crafted-real.tsl"] = cache(**ok)
    c["ok-crafted-pattern.tsl"] = cache(2, [3, 4], 3, [0, 2, 2, 3], [[1, 3, 0]], None,
                                        field=b"pattern")
    c["ok-crafted-empty.tsl"] = cache(2, [0, 0], 0, [0], [], None, field=b"pattern")
    c["ok-crafted-order1.tsl"] = cache(1, [4], 2, [0, 1, 1, 1, 2], [], [3.0, 4.0])
    c["ok-crafted-order3.tsl"] = cache(3, [2, 2, 5], 3, [0, 2, 3], [[0, 1, 1], [4, 0, 2]],
                                       [1.0, 2.0, 3.0])
    c["bad-crafted-ptr-decreasing.tsl"] = cache(**dict(ok, ptr=[0, 2, 1, 3]))
    c["bad-crafted-ptr-not-spanning.tsl"] = cache(**dict(ok, ptr=[0, 2, 2, 2]))
    c["bad-crafted-ptr-start.tsl"] = cache(**dict(ok, ptr=[1, 2, 2, 3]))
    c["bad-crafted-coord-range.tsl"] = cache(**dict(ok, idx=[[1, 4, 0]]))
    c["bad-crafted-unsorted.tsl"] = cache(**dict(ok, idx=[[3, 1, 0]]))
    c["bad-crafted-duplicate.tsl"] = cache(**dict(ok, idx=[[1, 1, 0]]))
    c["bad-crafted-order1-dup.tsl"] = cache(1, [4], 2, [0, 2, 2, 2, 2], [], [3.0, 4.0])
    c["bad-crafted-order0.tsl"] = cache(**dict(ok, order=0))
    c["bad-crafted-order9.tsl"] = cache(**dict(ok, order=9))
    c["bad-crafted-dim-too-large.tsl"] = cache(**dict(ok, dims=[3, 1 << 33]))
    c["bad-crafted-nnz-mismatch.tsl"] = cache(**dict(ok, nnz=2))
    c["bad-crafted-field-unterminated.tsl"] = cache(**dict(ok, field=b"r" * 16))
    c["bad-crafted-field-real-no-values.tsl"] = cache(2, [3, 4], 3, [0, 2, 2, 3], [[1, 3, 0]],
                                                      None, field=b"real")
    c["bad-crafted-no-sums.tsl"] = cache(**dict(ok, fix_sums=False))
    good = cache(**ok)
    c["bad-empty.tsl"] = b""
    c["bad-header-only-half.tsl"] = good[:128]
    c["bad-truncated-payload.tsl"] = good[:-5]
    c["bad-trailing-byte.tsl"] = good + b"\0"
    c["bad-magic.tsl"] = b"TESSELX\n" + good[8:]
    c["bad-version.tsl"] = good[:8] + struct.pack("<I", 2) + good[12:]
    c["bad-byte-order.tsl"] = good[:116] + struct.pack(">I", 0x01020304) + good[120:]
    flipped = bytearray(good)
    flipped[260] ^= 0x40
    c["bad-payload-flipped.tsl"] = bytes(flipped)
    c["bad-text-not-cache.tsl"] = mm(b"real general", b"1 1 1", b"1 1 1")
    return c


def write(kind, name, data):
    path = os.path.join(CORPUS, kind, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def real_head(path):
    """Banner, comments and a size line adjusted to the first entries."""
    with gzip.open(path, "rb") as f:
        text = f.read()
    if len(text) <= HEAD_MAX_BYTES:
        return text
    lines = text.split(b"\n")
    out, i = [], 0
    while lines[i].startswith(b"%"):
        out.append(lines[i])
        i += 1
    rows, cols, _ = lines[i].split()
    entries = [l for l in lines[i + 1:] if l.strip() and not l.startswith(b"%")][:HEAD_ENTRIES]
    out.append(b" ".join([rows, cols, str(len(entries)).encode()]))
    return b"\n".join(out + entries) + b"\n"


def valid_caches(tessel):
    """Caches written by tessel convert from valid seeds; {} if it cannot."""
    made = {}
    sources = [("mtx", n) for n in CACHE_SOURCES if n.endswith(".mtx")]
    sources += [("tns", n) for n in CACHE_SOURCES if n.endswith(".tns")]
    with tempfile.TemporaryDirectory() as tmp:
        for kind, name in sources:
            src = os.path.join(CORPUS, kind, name)
            out = os.path.join(tmp, name + ".tsl")
            r = subprocess.run([tessel, "convert", src, out], capture_output=True)
            if r.returncode != 0 or not os.path.exists(out):
                if b"not implemented" in r.stderr:
                    print("make_seeds: tessel convert cannot write caches yet; skipped",
                          file=sys.stderr)
                    return {}
                continue
            with open(out, "rb") as f:
                made["ok-" + name[3:] + ".tsl"] = f.read()
    return made


# ---------------------------------------------------------------- values
# One value per file for fuzz_float (scan_double against strtod): every
# path of the scanner once (Clinger's exact case, Eisel-Lemire, 19 and 20+
# digit mantissas, exact ties, subnormals, overflow, the forms only strtod
# reads, malformed tokens).
FLOAT = {
    "ok-small.txt": b"0.5",
    "ok-17-digits.txt": b"0.94406926352530718",
    "ok-negative-exp.txt": b"-3.25e-7",
    "ok-19-digits.txt": b"9223372036854775807",
    "ok-20-digits.txt": b"18446744073709551616",
    "ok-long-fraction.txt": b"0.00000000000000000000000000000012345678901234567890123",
    "ok-tie.txt": b"9007199254740993",
    "ok-tie-full.txt": b"1.00000000000000011102230246251565404236316680908203125",
    "ok-near-tie.txt": b"1.00000000000000011102230246251565404236316680908203126",
    "ok-subnormal.txt": b"4.9406564584124654e-324",
    "ok-half-subnormal.txt": b"2.4703282292062328e-324",
    "ok-max.txt": b"1.7976931348623157e308",
    "ok-minus-zero.txt": b"-0",
    "ok-blanks.txt": b" \t1e22 \t",
    "ok-inf.txt": b"inf",
    "ok-nan.txt": b"nan",
    "ok-hex.txt": b"0x1.8p-1",
    "overflow.txt": b"1e400",
    "underflow.txt": b"1e-400",
    "huge-exponent.txt": b"1e99999999999",
    "bad-dot.txt": b"-.",
    "bad-exponent.txt": b"1e+",
    "bad-suffix.txt": b"1.5x",
    "blank.txt": b"  ",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(HERE, "..", "..", "..", "shared", "data"))
    ap.add_argument("--tessel", help="tessel binary, for valid caches")
    args = ap.parse_args()
    for name, data in MTX.items():
        write("mtx", name, data)
    for name, data in TNS.items():
        write("tns", name, data)
    for name, data in FLOAT.items():
        write("float", name, data)
    mtx_dir = os.path.join(args.data, "mtx")
    for stem in REAL_HEADS:
        path = os.path.join(mtx_dir, stem + ".mtx.gz")
        if os.path.exists(path):
            write("mtx", "real-" + stem + "-head.mtx", real_head(path))
    for name, data in crafted_caches().items():
        write("cache", name, data)
    if args.tessel:
        caches = valid_caches(args.tessel)
        for name, data in caches.items():
            write("cache", name, data)
        # Copies cut inside the payload: the truncation path.
        for name in TRUNCATED:
            if name in caches:
                data = caches[name]
                write("cache", "bad-truncated-" + name[3:], data[: 256 + (len(data) - 256) // 2])
    print("make_seeds: wrote %d mtx, %d tns, %d float seeds and caches into %s"
          % (len(MTX), len(TNS), len(FLOAT), CORPUS))


if __name__ == "__main__":
    main()
