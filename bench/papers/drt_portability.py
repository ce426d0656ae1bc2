#!/usr/bin/env python3
"""DRT on OuterSPACE and MatRaptor (issue 21): drt §6.2 Fig. 10, at a scaled global buffer.

Usage: python3 bench/papers/drt_portability.py [--tessel PATH] [--data DIR] [--llb SIZE]
                                               [--matrices a,b,...] [--quick] [--orders LIST]
                                               [--formats LIST]

Claim (drt §6.2): "tiling increases arithmetic intensity by 3x and 5.1x in S-U-C-based
schemes and DRT, respectively, over the baseline" (OuterSPACE, Fig. 10 top); for MatRaptor
the abstract and §1 give 1.6x. Both "idealize these accelerators' on-chip implementations"
(§5.2.2), so arithmetic intensity is MACs / DRAM bytes, and with the same MACs the gain is
untiled DRAM bytes / tiled DRAM bytes.

Setup. Untiled: the templates specs/outerspace.yaml and specs/matraptor.yaml (closed forms,
independent of the buffer). DRT: bench/papers/specs/{outerspace,matraptor}-drt.yaml, the
drt strategy at one buffer level ("a single level of tiling across all dimensions",
§5.2.2) configured as the DRT simulator configures these two designs (FPSG-UIUC/DRT,
src/SpMSpM_{OuterSpace,MatRaptor}_drt.cpp): LLB partitions A 50 %, B 5 %, Z 45 %, Z written
as COO (as the untiled templates write it), A and B in coo micro tiles (OuterSPACE) or a CSF
of the micro tiles (MatRaptor: tessel's tiled-csf). The paper does not state the order of the
DRT tasks for these two accelerators; the dataflow's own order (OuterSPACE KIJ: k
outermost; MatRaptor IKJ: rows of A outermost) is the first column, and the best of
--orders the second. The paper's 30 MB buffer holds most shared matrices whole, so the LLB
is scaled (256 KiB by default, as issue 21). Gain = untiled DRAM bytes / DRT DRAM bytes, per
matrix and as a geometric mean. --formats repeats the DRT runs with A's and B's micro tiles
in each format ("sim": the simulator's, above; Z stays COO): csr is the paper's T-UC micro
tile (drt §4.1 Fig. 5: "Micro tiles are stored as standard 3x3 CSR/CSC matrices"), whose
per-row offsets dominate on sparse 32x32 micro tiles; coo (a coordinate list per micro
tile, no offsets) is the T-CC micro tile that drt §6.3 expects to remove that overhead ("We
expect a T-CC representation will resolve this"); tiled-csf is the simulator's CSF of the
micro tiles (its A_csf).
Standard library only; runs tessel run (exact estimator) as a subprocess.
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from claimlib import geomean, matrix_path  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MATRICES = ["wiki-Vote", "p2p-Gnutella24", "p2p-Gnutella04", "ca-CondMat", "ca-HepTh",
            "bcsstk13", "soc-sign-bitcoin-otc", "p2p-Gnutella05", "ca-GrQc",
            "p2p-Gnutella09", "p2p-Gnutella08"]

ACCELERATORS = [  # name, untiled template spec, DRT spec, dataflow order, paper's gain
    ("OuterSPACE", "specs/outerspace.yaml", "bench/papers/specs/outerspace-drt.yaml", "KIJ", 5.1),
    ("MatRaptor", "specs/matraptor.yaml", "bench/papers/specs/matraptor-drt.yaml", "IKJ", 1.6),
]
# The micro tiles of A and B in the DRT simulator's own runs of each (its p_a_format,
# p_b_format), which the DRT specs state.
SIM_FORMAT = {"OuterSPACE": "coo", "MatRaptor": "tiled-csf"}


def input_formats(acc, fmt):
    """--set overrides storing A's and B's micro tiles in fmt ("sim": the spec's own, the
    simulator's); the specs name a format per tensor, so the level's format would not
    reach them."""
    if fmt == "sim" or fmt == SIM_FORMAT[acc]:
        return []
    return ["architecture.levels.LLB.tensors.%s.format=%s" % (t, fmt) for t in ("A", "B")]


def dram_bytes(args, spec, matrix, sets):
    """DRAM bytes of one tessel run at the scaled LLB."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [args.tessel, "run", os.path.join(ROOT, spec), "-T", "A=" + matrix, "-o", out,
               "--no-timing", "--set", "architecture.levels.LLB.capacity=" + args.llb]
        for s in sets:
            cmd += ["--set", s]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError("%s: %s" % (" ".join(cmd), p.stderr.strip()))
        with open(os.path.join(out, "summary.csv")) as f:
            return float(next(csv.DictReader(f))["dram_bytes"])


def verdict(paper, ours):
    if not (ours > 0):
        return "n/a"
    if (paper > 1) != (ours > 1):
        return "does not hold (direction)"
    r = ours / paper
    return "holds" if 0.5 <= r <= 2 else "direction holds, magnitude %.2fx of the paper's" % r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tessel", default=os.path.join(ROOT, "build", "tools", "tessel"))
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--llb", default="256KiB", help="LLB capacity (default 256KiB)")
    ap.add_argument("--matrices", help="comma-separated names from the shared data")
    ap.add_argument("--quick", action="store_true", help="three matrices")
    ap.add_argument("--orders", default="IJK,JIK,IKJ,KIJ,JKI,KJI",
                    help="DRT task orders to try for the best column (default all six)")
    ap.add_argument("--formats", default="sim,csr",
                    help="micro-tile formats of A and B in the DRT runs: sim (the DRT "
                         "simulator's), csr, coo, tiled-csf (default sim,csr)")
    args = ap.parse_args()
    if not os.path.isdir(args.data):
        print("no shared data at %s" % args.data, file=sys.stderr)
        return 77
    names = args.matrices.split(",") if args.matrices else MATRICES[:3] if args.quick else MATRICES
    orders = [o.strip().upper() for o in args.orders.split(",") if o.strip()]
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    for (acc, untiled_spec, drt_spec, own, paper), fmt in [(a, f) for a in ACCELERATORS
                                                           for f in formats]:
        print("## %s + DRT (drt §6.2): paper %.1fx; LLB %s, micro tiles %s"
              % (acc, paper, args.llb, fmt))
        print("| matrix | untiled DRAM bytes | DRT (%s) DRAM bytes | gain (%s) | best order | gain (best) |"
              % (own, own))
        print("|---|---|---|---|---|---|")
        own_gains, best_gains = [], []
        for name in names:
            m = matrix_path(args.data, name)
            if not m:
                print("| %s | (not in the shared data) | | | | |" % name)
                continue
            base = dram_bytes(args, untiled_spec, m, [])
            per = {}
            for o in sorted(set(orders + [own])):
                per[o] = dram_bytes(args, drt_spec, m,
                                    ["mapping.LLB.order=" + o] + input_formats(acc, fmt))
            best = min(per, key=per.get)
            g_own, g_best = base / per[own], base / per[best]
            own_gains.append(g_own)
            best_gains.append(g_best)
            print("| %s | %.0f | %.0f | %.2fx | %s | %.2fx |"
                  % (name, base, per[own], g_own, best, g_best))
        go, gb = geomean(own_gains), geomean(best_gains)
        print("| geometric mean | | | %.2fx | | %.2fx |" % (go, gb))
        print("verdict (%s order): %s; (best order): %s\n" % (own, verdict(paper, go), verdict(paper, gb)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
