#!/usr/bin/env python3
"""Sparseloop's S = 64, d = 0.1 SpMSpM report against tessel, count by count (issue 26).

Reads Sparseloop's own per-level report (../shared/reference/sparseloop-spmspm64/
timeloop-model.stats.txt, Timeloop v3.0.3) and runs the same design in Sparseloop's
spelling (examples/validate-sparseloop/spmspm64.yaml, docs/sparseloop.md's key map):

- `-e analytic` (Sparseloop's expectations over its hypergeometric models; Z compressed,
  because analytic prices single-name formats only) must equal the report's data fills,
  backing-store reads, MACs, cycles, Z updates and A's and B's skipped reads.
- The counts whose definitions differ are derived by hand here, from the formats'
  definitions (UOP: fibres + 1 offsets; CP: one coordinate per nonzero; 4-bit metadata),
  and tessel must equal the derivation; the report's value is printed beside it with the
  difference, and its rank-1 (UOP) counts must be the derivation's plus one offset (its
  CP counts are its own density model's and are only printed).
- `-e exact` and `-e stat` walk one seeded draw of the models (`tessel gen uniform` makes
  the same matrices, seeds 1 and 2) with Z uncompressed ([UB, UB], Sparseloop's format-less
  Z); their counts are brute-forced here from the draw's coordinates (stdlib only, no
  tessel code): fills, MACs, Z's read-modify-write reads and skipped reads, the backing
  store's 4,096 Z updates, A's and B's traversals, skipped reads and metadata bytes.

usage: sparseloop_report.py --tessel PATH [--reference DIR]
Exit 0 when every check holds, 1 otherwise, 77 (skipped) without the reference.
"""
import argparse
import csv
import math
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict

SPEC = "examples/validate-sparseloop/spmspm64.yaml"
ZCSR = ["--set", "Buffer.tensors.Z.format=csr", "--set", "BackingStorage.tensors.Z.format=csr"]
S = 64          # M = N = K (prob_64_0.1.yaml)
TM, TN = 8, 8   # the Buffer's tile: m 8, n 8, k 64 (map_64.yaml)
BITS = 4        # metadata_datawidth 4 (arch.yaml): offsets and coordinates


def parse_report(path):
    """{(level, tensor): {key: value}}; per-rank entries as key + ' rank N' -> (metadata,
    payload). The MAC's counts are under ('MAC', '')."""
    out = defaultdict(dict)
    level, tensor, parent = None, "", None
    for line in open(path):
        m = re.match(r"^=== (\w+) ===", line)
        if m:
            level, tensor, parent = m.group(1), "", None
            continue
        m = re.match(r"^    (\w+):\s*$", line)
        if m and level:
            tensor = m.group(1)
            continue
        m = re.match(r"^\s+Rank (\d+) \(metadata, payload\):\s*\((\d+),\s*(\d+)\)", line)
        if m and parent:
            out[(level, tensor)][f"{parent} rank {m.group(1)}"] = (int(m.group(2)), int(m.group(3)))
            continue
        m = re.match(r"^\s+(.+?)\s+:\s*(.*?)\s*$", line)
        if m and level:
            parent = m.group(1)
            out[(level, tensor)][parent] = m.group(2)
        elif level and line.strip():  # a per-rank count's heading has no colon
            parent = line.strip()
    return out


def num(report, level, tensor, key):
    v = report[(level, tensor)][key]
    return float(v.split()[0])


def run(tessel, estimator, extra, tmp, name):
    out = os.path.join(tmp, name)
    cmd = [tessel, "run", SPEC, "-q", "--no-timing", "-e", estimator, "-o", out] + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}: {p.stderr.strip()}")
    rows = {(r["level"], r["tensor"]): r for r in csv.DictReader(open(os.path.join(out, "traffic.csv")))}
    summary = next(csv.DictReader(open(os.path.join(out, "summary.csv"))))
    return rows, summary


def read_mtx(path):
    """(row, col) pairs, 0-based, of a coordinate Matrix Market file."""
    lines = [l for l in open(path) if not l.startswith("%") and l.strip()]
    return [(int(f[0]) - 1, int(f[1]) - 1) for f in (l.split() for l in lines[1:])]


def brute(a, b):
    """Counts of the design from the draw's coordinates. A[m,k], B[n,k] (B stored [n][k],
    rank_order [n, k]: its offsets run along n). Tiles m 8 x k 64 (A) and n 8 x k 64 (B),
    visited for m tile, for n tile (k whole): A filled once per m tile, B once per
    (m tile, n tile)."""
    acol, bcol = defaultdict(int), defaultdict(int)
    for _, k in a:
        acol[k] += 1
    for _, k in b:
        bcol[k] += 1
    macs = sum(acol[k] * bcol[k] for k in acol)
    first = acol[0] * bcol[0]  # the multiplies at k = 0 write Z without reading it
    at = defaultdict(list)
    bt = defaultdict(list)
    for m, k in a:
        at[m // TM].append((m, k))
    for n, k in b:
        bt[n // TN].append((n, k))
    # a tile iteration (m tile, n tile) is effectual when it holds a multiply
    eff = [(i, j) for i in range(S // TM) for j in range(S // TN)
           if any(k in {kk for _, kk in bt[j]} for _, k in at[i])]

    def meta_bits(n):  # UOP over the tile's 8 rows (9 offsets) + CP (a coordinate each)
        return (TM + 1) * BITS + n * BITS

    def meta_bytes(n):  # tessel rounds a tile's metadata up to whole bytes
        return math.ceil(meta_bits(n) / 8)

    travA = sum(len(at[i]) * TN for i, _ in eff)  # A traversed once per n of the tile
    travB = sum(len(bt[j]) * TM for _, j in eff)
    fmtA = sum(meta_bytes(len(at[i])) * TN for i, _ in eff)
    fmtB = sum(meta_bytes(len(bt[j])) * TM for _, j in eff)
    zreads = macs - first
    return {
        "A fills": len(a), "B fills": len(b) * (S // TM), "MACs": macs,
        "A meta": sum(meta_bytes(len(at[i])) for i in at),
        "B meta": sum(meta_bytes(len(bt[j])) for j in bt) * (S // TM),
        "effectual": len(eff),
        "A skipped": travA - macs, "B skipped": travB - macs,
        # the format reads split between actual and skipped reads in proportion
        "A skipped meta": fmtA * (travA - macs) / travA,
        "B skipped meta": fmtB * (travB - macs) / travB,
        "Z reads": zreads, "Z skipped": S * S * (S - 1) - zreads,
        "Z updates": macs, "Z backing updates": S * S,
    }


class Checks:
    def __init__(self):
        self.failed = 0

    def eq(self, what, tessel, want, note=""):
        ok = abs(float(tessel) - float(want)) < 0.5
        self.failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {tessel}, expected {want}{'  ' + note if note else ''}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--reference", default=os.path.join(
        here, "..", "..", "..", "shared", "reference", "sparseloop-spmspm64"))
    args = ap.parse_args()
    stats = os.path.join(args.reference, "timeloop-model.stats.txt")
    if not os.path.exists(stats):
        print(f"skipped: {stats} is missing")
        return 77
    os.chdir(os.path.join(here, "..", ".."))
    sl = parse_report(stats)
    c = Checks()
    with tempfile.TemporaryDirectory() as tmp:
        # ---- analytic: Sparseloop's expectations, the report's own numbers
        t, s = run(args.tessel, "analytic", ZCSR, tmp, "analytic")
        print("== -e analytic (Z compressed) against the report")
        for lev, ten, key, col in [
            ("Buffer", "A", "Actual scalar fills (per-instance)", "data_bytes"),   # 8-bit values
            ("Buffer", "B", "Actual scalar fills (per-instance)", "data_bytes"),
            ("BackingStorage", "A", "Actual scalar reads (per-instance)", "reads_elements"),
            ("BackingStorage", "B", "Actual scalar reads (per-instance)", "reads_elements"),
            ("Buffer", "A", "Actual scalar reads (per-instance)", "reads_elements"),
            ("Buffer", "B", "Actual scalar reads (per-instance)", "reads_elements"),
            ("Buffer", "A", "Skipped scalar reads (per-instance)", "skipped_reads"),
            ("Buffer", "B", "Skipped scalar reads (per-instance)", "skipped_reads"),
            ("Buffer", "Z", "Actual scalar updates (per-instance)", "writes_elements"),
        ]:
            c.eq(f"{lev} {ten} {key}", t[(lev, ten)][col], num(sl, lev, ten, key))
        for key, col in [("Actual Computes (total)", "actual_computes"),
                         ("Algorithmic Computes (total)", "algorithmic_computes"),
                         ("Gated Computes (total)", "gated_computes"),
                         ("Skipped Computes (total)", "skipped_computes"),
                         ("Cycles", "cycles"), ("Energy (total)", "mac_energy_pj")]:
            c.eq(f"MAC {key}", s[col], num(sl, "MAC", "", key))
        macs = float(s["flops"])
        # ---- the uncompressed Z: Sparseloop's rule by hand, and -e analytic on the spec
        # as it is (Z [UB, UB]) against the report
        print("== Z uncompressed: Sparseloop's read-modify-write, by hand")
        exp_macs = 410 * 410 / S  # two hypergeometric 410-of-4096 inputs: E[MACs] = 2,626.56
        zr = math.floor(exp_macs * (S - 1) / S)  # reads before every update but at k = 0
        c.eq("Buffer Z Actual scalar reads = floor(E[MACs] x 63/64)",
             num(sl, "Buffer", "Z", "Actual scalar reads (per-instance)"), zr)
        td, _ = run(args.tessel, "analytic", [], tmp, "analytic-dense")
        print("== -e analytic (Z [UB, UB], the spec as it is) against the report")
        for lev, key, col in [
            ("Buffer", "Actual scalar reads (per-instance)", "reads_elements"),
            ("Buffer", "Actual scalar updates (per-instance)", "writes_elements"),
            ("BackingStorage", "Actual scalar updates (per-instance)", "writes_elements"),
        ]:
            c.eq(f"analytic {lev} Z {key}", td[(lev, "Z")][col], num(sl, lev, "Z", key))
        c.eq("Buffer Z Skipped scalar reads = 64 x 64 x 63 - reads",
             num(sl, "Buffer", "Z", "Skipped scalar reads (per-instance)"), S * S * (S - 1) - zr)
        c.eq("analytic MACs = E[MACs] rounded", macs, round(exp_macs))
        # ---- metadata from the formats' definitions
        print("== metadata from the formats' definitions (4-bit words)")
        a_off, a_crd = (S // TM) * (TM + 1), 410            # 8 A tiles of 9 offsets; 410 coordinates
        b_off, b_crd = S * (TN + 1), 3280                   # 64 B fills of 9 offsets (rank_order [n, k])
        for ten, off, crd in (("A", a_off, a_crd), ("B", b_off, b_crd)):
            rank = sl[("Buffer", ten)]
            c.eq(f"Buffer {ten} metadata fills = ({off} + {crd}) x 4 bits",
                 t[("Buffer", ten)]["metadata_bytes"], (off + crd) * BITS / 8,
                 f"(Sparseloop: ({rank['Actual scalar format fills (per-instance) rank 1'][1]} + "
                 f"{rank['Actual scalar format fills (per-instance) rank 0'][0]}) words)")
            c.eq(f"Sparseloop's Buffer {ten} UOP fills = {off} + 1",
                 rank["Actual scalar format fills (per-instance) rank 1"][1], off + 1)
        # skipped format reads: per traversal a tile's offsets and one coordinate per scalar
        trav = 410 * S                                        # A traversed once per n
        per_tile = ((TM + 1) + 410 / (S // TM)) * BITS / 8     # 30.125 B for a mean tile
        fmt = per_tile * (S // TM) * (S // TN) * TN           # 512 traversals of a tile
        skipped = trav - exp_macs
        for ten in ("A", "B"):
            rank = sl[("Buffer", ten)]
            sl_off = (rank["Actual scalar format reads (per-instance) rank 1"][1]
                      + rank["Skipped scalar format reads (per-instance) rank 1"][1])
            sl_crd = (rank["Actual scalar format reads (per-instance) rank 0"][0]
                      + rank["Skipped scalar format reads (per-instance) rank 0"][0])
            c.eq(f"Buffer {ten} skipped format bytes = {fmt:.0f} B x {skipped:.2f} / {trav}",
                 t[("Buffer", ten)]["skipped_metadata_bytes"], fmt * skipped / trav,
                 f"(Sparseloop: {sl_off} offsets + {sl_crd} coordinates read, "
                 f"{(rank['Skipped scalar format reads (per-instance) rank 1'][1] + rank['Skipped scalar format reads (per-instance) rank 0'][0]) * BITS / 8:.1f} B skipped)")
            c.eq(f"Sparseloop's Buffer {ten} UOP reads = 512 traversals x 9 offsets + 1", sl_off,
                 (S // TM) * (S // TN) * TN * (TM + 1) + 1)

        # ---- exact and stat on the draw, Z uncompressed
        a_mtx, b_mtx = os.path.join(tmp, "a.mtx"), os.path.join(tmp, "b.mtx")
        for path, seed in ((a_mtx, 1), (b_mtx, 2)):
            subprocess.run([args.tessel, "gen", "uniform", "--rows", str(S), "--cols", str(S),
                            "--nnz", "410", "--seed", str(seed), "-o", path], check=True)
        want = brute(read_mtx(a_mtx), read_mtx(b_mtx))
        bind = ["-T", f"A={a_mtx}", "-T", f"B={b_mtx}"]
        for est in ("exact", "stat"):
            t, s = run(args.tessel, est, bind, tmp, est)
            print(f"== -e {est} on the draw (Z [UB, UB]) against the brute force "
                  f"({want['effectual']} effectual tile iterations)")
            rows = [("Buffer A data", t[("Buffer", "A")]["data_bytes"], want["A fills"]),
                    ("Buffer B data", t[("Buffer", "B")]["data_bytes"], want["B fills"]),
                    ("MACs", s["flops"], want["MACs"]),
                    ("Buffer A metadata", t[("Buffer", "A")]["metadata_bytes"], want["A meta"]),
                    ("Buffer B metadata", t[("Buffer", "B")]["metadata_bytes"], want["B meta"]),
                    ("Buffer A skipped reads", t[("Buffer", "A")]["skipped_reads"], want["A skipped"]),
                    ("Buffer B skipped reads", t[("Buffer", "B")]["skipped_reads"], want["B skipped"]),
                    ("Buffer Z reads (not at k = 0)", t[("Buffer", "Z")]["reads_elements"], want["Z reads"]),
                    ("Buffer Z updates", t[("Buffer", "Z")]["writes_elements"], want["Z updates"]),
                    ("Buffer Z skipped reads", t[("Buffer", "Z")]["skipped_reads"], want["Z skipped"]),
                    ("BackingStorage Z updates", t[("BackingStorage", "Z")]["writes_elements"],
                     want["Z backing updates"]),
                    ("BackingStorage Z reads", t[("BackingStorage", "Z")]["reads_elements"], 0)]
            if est == "exact":  # stat estimates the format reads (docs/semantics.md)
                rows += [("Buffer A skipped format bytes", t[("Buffer", "A")]["skipped_metadata_bytes"],
                          want["A skipped meta"]),
                         ("Buffer B skipped format bytes", t[("Buffer", "B")]["skipped_metadata_bytes"],
                          want["B skipped meta"])]
            for what, got, exp in rows:
                c.eq(what, got, exp)
        c.eq("Sparseloop's BackingStorage Z updates", num(sl, "BackingStorage", "Z",
             "Actual scalar updates (per-instance)"), want["Z backing updates"])
    print(f"{c.failed} failed" if c.failed else "all checks hold")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
