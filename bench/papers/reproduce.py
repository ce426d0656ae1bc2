#!/usr/bin/env python3
"""Every seed paper's headline claim, reproduced by one command (issue 21).

Usage: python3 bench/papers/reproduce.py [--tessel PATH] [--data DIR] [--quick]
                                         [--matrices a,b,...] [--only NAME,...] [--list]
                                         [--llb SIZE] [--no-standins] [--markdown FILE]

Runs each claim of claims_tiling.py, claims_dataflow.py and tailors_overbooking.py (one
function per claim), prints per claim the paper's number and section, tessel's number on
the shared matrices with its per-matrix table (D2T2 over Conservative: on generated
stand-ins of d2t2 Table 2's matrices, the shared ones in a note), and a verdict: the direction, then the
magnitude within 2x of the paper's (claimlib.verdict). The last table lists every claim;
--markdown writes it (with the per-claim tables) to FILE, e.g. a section of
docs/reproductions.md. Progress and the time left go to standard error.
Standard library only; runs tessel (exact estimator) as a subprocess. Exit 77 when the
shared data is missing (as the tests), 1 when a claim could not run.
"""
import argparse
import copy
import io
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import claims_dataflow  # noqa: E402
import claims_tiling  # noqa: E402
import tailors_overbooking  # noqa: E402
from claimlib import ROOT, Claim, print_claim, summary_table  # noqa: E402

# Five shared matrices of three kinds (co-authorship, peer-to-peer, FEM, social) large
# enough to need tiling at the scaled buffers; --quick takes the first three.
MATRICES = ["ca-GrQc", "p2p-Gnutella08", "bcsstk13", "wiki-Vote", "ca-CondMat"]


def claim_tailors_overbooking(args):
    a = copy.copy(args)
    # tailors_overbooking.py's defaults, explained there: tailors §5.2's tiles (k whole)
    a.llb, a.pe_split, a.tiles = "256KiB", 8, "paper"
    return tailors_overbooking.claim_tailors_fig9a(a)


CLAIMS = ([claim_tailors_overbooking] + claims_tiling.CLAIMS + claims_dataflow.CLAIMS)


def short(fn):
    return fn.__name__[len("claim_"):]


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tessel", default=os.path.join(ROOT, "build", "tools", "tessel"))
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--llb", default="256KiB",
                    help="global buffer of the ExTensor/DRT claims (default 256KiB)")
    ap.add_argument("--matrices", help="comma-separated names from the shared data")
    ap.add_argument("--quick", action="store_true", help="the first three matrices")
    ap.add_argument("--only", help="comma-separated claim names (see --list)")
    ap.add_argument("--list", action="store_true", help="print the claim names and exit")
    ap.add_argument("--map-points", type=int, default=200,
                    help="points tessel map prices for the best static tile (default 200)")
    ap.add_argument("--markdown", help="also write the tables to this file")
    ap.add_argument("--no-standins", action="store_true",
                    help="D2T2 over Conservative on the shared matrices only, not on the "
                         "generated stand-ins of d2t2 Table 2's 19 matrices "
                         "(bench/papers/d2t2_standins.py, cached in the build directory)")
    return ap.parse_args()


def main():
    args = parse()
    if args.list:
        for fn in CLAIMS:
            print(short(fn))
        return 0
    if not os.path.isdir(args.data):
        print("no shared data at %s" % args.data, file=sys.stderr)
        return 77
    if not os.path.exists(args.tessel):
        sys.exit("tessel not found at %s (build it, or pass --tessel)" % args.tessel)
    # claims that add matrices of their own to a note do so only on the default set
    args.matrices_given = bool(args.matrices) or args.quick
    args.matrices = args.matrices.split(",") if args.matrices else MATRICES
    if args.quick:
        args.matrices = args.matrices[:3]
    args.all_matrices = [l.split("\t")[0] for l in open(os.path.join(args.data, "MANIFEST.tsv"))
                         if l.strip()][1:]
    args.cache = {}
    todo = CLAIMS
    if args.only:
        names = set(args.only.split(","))
        todo = [fn for fn in CLAIMS if short(fn) in names]
        if len(todo) != len(names):
            sys.exit("unknown claim in --only (see --list)")
    done, failed, out, t0 = [], 0, io.StringIO(), time.time()
    for n, fn in enumerate(todo):
        el = time.time() - t0
        left = el / n * (len(todo) - n) if n else 0
        print("[%d/%d] %s (%.0f s, about %.0f s left)" % (n + 1, len(todo), short(fn), el, left),
              file=sys.stderr, flush=True)
        try:
            c = fn(args)
        except (RuntimeError, AttributeError, KeyError, ValueError) as e:
            c = Claim(short(fn), "", None, "")
            c.verdict, failed = "could not run: %s" % e, failed + 1
        done.append(c)
        print_claim(c)
        print_claim(c, out)
    table = summary_table(done)
    print("\n## Every claim\n\n" + table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("## Every claim\n\nMatrices: %s; global buffer %s for the ExTensor/DRT "
                    "claims. `python3 bench/papers/reproduce.py`, %.0f s.\n\n"
                    % (", ".join(args.matrices), args.llb, time.time() - t0))
            f.write(table + out.getvalue())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
