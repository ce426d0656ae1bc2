#!/usr/bin/env python3
"""Reproductions of the seed papers' headline claims (issue 21), one function per claim.

Usage: python3 bench/papers/tailors_overbooking.py [--tessel PATH] [--data DIR] [--quick]
                                                   [--llb SIZE] [--matrices a,b,...]

Each claim function returns a Claim (paper number, tessel's number, verdict, a per-matrix
table); print_claim prints it. Add a claim by writing one more function and listing it in
CLAIMS. Standard library only; runs tessel (exact estimator) as a subprocess.

Claim 1, Tailors §6.2 Fig. 9(a): "On average, overbooking of 10% of tiles leads to 26%
overhead for streaming data because of the lost data reuse for bumped data", measured
against "the same tiling and an infinitely large buffer that never overbooks".
Setup: specs/extensor-ob.yaml (ExTensor-OB: Swiftiles with a 10 % overbooking target at the
LLB and the PE buffers, tailors §5.2), A x A. The paper's 30 MB global buffer holds nearly
every shared matrix whole (tiling, hence overbooking, then does nothing: tailors §5.3 picks
tensors "that cannot fully fit inside the global buffer"), so the LLB is scaled down (64 KiB
by default) until the shared matrices (3,000 to 190,000 nonzeros) need many LLB tiles, as
the paper's matrices (up to millions of nonzeros) do in 30 MB. The baseline reruns the very
tiles Swiftiles chose at the LLB (strategy fixed; PE tiles cut in i and j, see pe_split)
with the LLB's capacity set to 1 TiB, so that no LLB tile overbooks; the PE buffers are
unchanged. Overhead = DRAM bytes / baseline DRAM bytes - 1.
"""
import argparse
import csv
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from claimlib import Claim, print_claim  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The shared matrices (../shared/data/MANIFEST.tsv) with at least 20,000 nonzeros: smaller
# ones fit a 64 KiB LLB in a few tiles. --quick takes the first three.
MATRICES = ["wiki-Vote", "p2p-Gnutella24", "p2p-Gnutella04", "ca-CondMat", "ca-HepTh",
            "bcsstk13", "soc-sign-bitcoin-otc", "p2p-Gnutella05", "ca-GrQc",
            "p2p-Gnutella09", "p2p-Gnutella08"]


def run_tessel(args, spec, matrix, sets, outdir):
    cmd = [args.tessel, "run", os.path.join(ROOT, spec), "-T", "A=" + matrix, "-o", outdir,
           "--no-timing"]
    for s in sets:
        cmd += ["--set", s]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), p.stderr.strip()))
    with open(os.path.join(outdir, "summary.csv")) as f:
        summary = next(csv.DictReader(f))
    with open(os.path.join(outdir, "traffic.csv")) as f:
        traffic = list(csv.DictReader(f))
    return p.stdout, summary, traffic


def chosen_tiles(stdout):
    """The tiles the strategy printed: {'LLB': 'i:..,j:..,k:..', 'PEB': ...}."""
    m = re.search(r"strategy \w+: (.*)", stdout)
    if not m:
        raise RuntimeError("no strategy line in tessel's output")
    return dict(re.findall(r"(\w+) ([a-z]:\d+(?:,[a-z]:\d+)*)", m.group(1)))


def parse_tile(t):
    return {k: int(v) for k, v in (x.split(":") for x in t.split(","))}


def largest_divisor_at_most(n, cap):
    for d in range(max(1, min(n, cap)), 0, -1):
        if n % d == 0:
            return d
    return 1


def pe_split(llb, peb, n):
    """The LLB and PE tiles measured: Swiftiles' LLB tile with its i and j edges rounded down
    to multiples of n, and PE tiles of 1/n of them in i and j (Swiftiles' PE edge in k).
    ExTensor partitions each global-buffer tile into sub-tiles for its PEs (tailors §5.2),
    whereas tessel's Swiftiles only cuts k at the PE buffers: the PEs would then read each
    LLB tile once, and no reuse, hence no lost reuse, would be left to measure."""
    lt, pt = parse_tile(llb), parse_tile(peb)
    for x in ("i", "j"):
        if lt[x] >= n:
            lt[x] -= lt[x] % n
            pt[x] = lt[x] // n
        else:
            pt[x] = lt[x]
    if lt["k"] % pt["k"]:
        pt["k"] = largest_divisor_at_most(lt["k"], pt["k"])
    fmt = lambda t: ",".join("%s:%d" % (x, t[x]) for x in sorted(t))
    return fmt(lt), fmt(pt)


def claim_tailors_fig9a(args):
    c = Claim("Overbooking 10 % of tiles: DRAM overhead against the same tiles, unbounded LLB",
              "tailors §6.2, Fig. 9(a)", 26.0, " %", kind="percent",
              quote="On average, overbooking of 10% of tiles leads to 26% overhead for "
                    "streaming data because of the lost data reuse for bumped data")
    c.header = ["matrix", "LLB tile", "PEB tile", "LLB A/B tiles overbooked %",
                "bumped / DRAM unbounded %", "DRAM OB", "DRAM unbounded", "DRAM overhead %"]
    overheads, streams = [], []
    for name in args.matrices:
        path = os.path.join(args.data, "mtx", name + ".mtx.gz")
        if not os.path.exists(path):
            c.notes.append("%s: not in %s, skipped" % (name, args.data))
            continue
        with tempfile.TemporaryDirectory() as d:
            llb = "architecture.levels.LLB.capacity=" + args.llb
            out, s_ob, t_ob = run_tessel(args, "specs/extensor-ob.yaml", path, [llb], d)
            tiles = chosen_tiles(out)
            llb_t, peb = pe_split(tiles["LLB"], tiles["PEB"], args.pe_split)
            fixed = ["mapping.LLB.tile=" + llb_t, "mapping.PEB.tile=" + peb]
            _, s_ob, t_ob = run_tessel(args, "specs/extensor.yaml", path, [llb] + fixed, d)
            _, s_un, _ = run_tessel(args, "specs/extensor.yaml", path,
                                    ["architecture.levels.LLB.capacity=1TiB"] + fixed, d)
        fills = over = bumped = 0.0
        for r in t_ob:
            if r["level"] == "LLB" and r["tensor"] in ("A", "B"):
                n = float(r["fills"])
                fills += n
                over += n * float(r["overflow_tiles_share"])
                bumped += float(r["bumped_bytes"])
        ob, un = float(s_ob["dram_bytes"]), float(s_un["dram_bytes"])
        ovh, stream = 100.0 * (ob / un - 1), 100.0 * bumped / un
        overheads.append(ovh)
        streams.append(stream)
        c.rows.append([name, llb_t, peb, "%.1f" % (100 * over / fills if fills else 0),
                       "%+.1f" % stream, "%d" % ob, "%d" % un, "%+.1f" % ovh])
    if overheads:
        c.tessel = sum(streams) / len(streams)
        c.rows.append(["mean", "", "", "", "%+.1f" % c.tessel, "", "",
                       "%+.1f" % (sum(overheads) / len(overheads))])
        c.notes.append("tessel's number is the mean of 'bumped / DRAM unbounded' (the DRAM "
                       "traffic of streaming bumped input data, Fig. 9(a)'s quantity); "
                       "'DRAM overhead' also holds rule 4's output spill at the LLB, "
                       "which Fig. 9(a) does not count")
    c.decide()
    c.notes.append("Swiftiles' tiles from specs/extensor-ob.yaml, run (fixed) on "
                   "specs/extensor.yaml with LLB %s (paper: 30 MB, see the header) and PE tiles "
                   "cut %dx in i and j, exact estimator, A x A" % (args.llb, args.pe_split))
    return c


CLAIMS = [claim_tailors_fig9a]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tessel", default=os.path.join(ROOT, "build", "tools", "tessel"))
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--llb", default="64KiB", help="LLB capacity (default 64KiB)")
    ap.add_argument("--matrices", help="comma-separated names from the shared data")
    ap.add_argument("--quick", action="store_true", help="three matrices")
    # 8 x 8 = 64 PE sub-tiles per LLB tile: the paper's 128 PEs (tailors §5.2) each take a
    # sub-tile of the global buffer's tile; 64 keeps every sub-tile of a few hundred rows and
    # columns non-trivial on the shared matrices. The overhead grows with the split (4: +5.7 %).
    ap.add_argument("--pe-split", type=int, default=8,
                    help="PE tiles cut the LLB tile's i and j into this many parts (default 8)")
    args = ap.parse_args()
    if not os.path.exists(args.tessel):
        sys.exit("tessel not found at %s (build it, or pass --tessel)" % args.tessel)
    args.matrices = args.matrices.split(",") if args.matrices else MATRICES
    if args.quick:
        args.matrices = args.matrices[:3]
    for claim in CLAIMS:
        print_claim(claim(args))


if __name__ == "__main__":
    main()
