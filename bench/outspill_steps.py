#!/usr/bin/env python3
"""Why stat's in-visit output spill is off in KIJ (and IJK on graphs) (issue 18).

    python3 bench/outspill_steps.py steps [--data ../shared/data] [--matrices G51,...]
                                          [--tile 64,256,1024]
    python3 bench/outspill_steps.py table [--tessel build/tools/tessel] [--data ../shared/data]
                                          [--matrices G51,...] [--orders KIJ,IJK]
                                          [--parts 256KiB] [--tile i:64,k:256,j:1024]
                                          [--zformat "[UB, UB]"] [--before OTHER_TESSEL]

`table` runs specs/extensor-llb.yaml (one buffer level), B = A, with Z in --zformat at
the given LLB partitions, under -e exact and -e stat --output-sample 0.05, and prints
the error of Z's LLB bytes and of its bumped bytes (the spill). With --before each stat
row is also run with that binary (same invocation, same exact figures). It ends with
the median, p95 and worst |error| of the bumped bytes per order and binary.

`steps` needs no tessel: from the matrix alone it counts, over the effectual visits
(A's tile row r and B's tile column q both non-empty at reduction tile t, at least one
k in t where both hold a nonzero) of an LLB tile i x k x j, the sum of (m - 1) where m
is the visit's update steps with a multiply (exact_outspill.c: one step per k at the
innermost level). Every step but a visit's last spills when the whole tile is live
(KIJ: i and j inside k), so for an uncompressed Z this sum times (D + M - P) is the
in-visit spill. It prints the sum against the estimates:
  - uniform: stat_visit_steps (stat_outspill.c), each tile's nonzeros spread uniformly
    over its slots, A's and B's independent: slots (1 - e_A) (1 - e_B);
  - distinct: the tiles' true distinct k (A's non-empty columns, B's non-empty rows),
    independent: d_A d_B / slots;
  - degree: each tile's nonzeros spread over its slots in proportion to the matrix's
    column counts of A (row counts of B), p_X(k) = 1 - exp(-n_X w_X(k) / sum w_X),
    m = sum_k p_A(k) p_B(k);
  - deg+distinct: the same weights, each side's scale c_X solved so that
    sum_k (1 - exp(-c_X w_X(k))) = d_X.
Figures only, no pass/fail.
"""
import argparse
import collections
import csv
import gzip
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT = "G51,bcsstk13,ca-GrQc,p2p-Gnutella04"


def load(path):
    """The pattern of a Matrix Market file (symmetric ones expanded)."""
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        sym = "symmetric" in f.readline()
        line = f.readline()
        while line.startswith("%"):
            line = f.readline()
        n, m = map(int, line.split()[:2])
        e = set()
        for line in f:
            s = line.split()
            if len(s) < 2:
                continue
            i, j = int(s[0]) - 1, int(s[1]) - 1
            e.add((i, j))
            if sym:
                e.add((j, i))
    return n, m, e


def scale(w, target):
    """c with sum(1 - exp(-c w)) = target (bisection; target < count of w > 0)."""
    lo, hi = 0.0, 1.0
    while sum(1 - math.exp(-hi * x) for x in w) < target and hi < 1e12:
        hi *= 2
    for _ in range(50):
        mid = (lo + hi) / 2
        if sum(1 - math.exp(-mid * x) for x in w) < target:
            lo = mid
        else:
            hi = mid
    return hi


def steps(path, ti, tk, tj):
    n, m, e = load(path)
    acol = collections.defaultdict(collections.Counter)
    brow = collections.defaultdict(collections.Counter)
    wa, wb = collections.Counter(), collections.Counter()
    for i, k in e:  # A = the matrix, B = A (specs' B: A)
        acol[(i // ti, k // tk)][k] += 1
        wa[k] += 1
    for k, j in e:
        brow[(k // tk, j // tj)][k] += 1
        wb[k] += 1
    r = collections.Counter()
    for (_, t), ka in acol.items():
        for q in range((m + tj - 1) // tj):
            kb = brow.get((t, q))
            if not kb:
                continue
            lo = t * tk
            ks = range(lo, min(n, lo + tk))
            slots = len(ks)
            both = len(ka.keys() & kb.keys())
            if both == 0:
                continue
            na, nb = sum(ka.values()), sum(kb.values())
            r["true"] += both - 1
            ea, eb = (1 - 1 / slots) ** na, (1 - 1 / slots) ** nb
            r["uniform"] += max(1, math.floor(slots * (1 - ea) * (1 - eb) + 0.5)) - 1
            r["distinct"] += max(1, len(ka) * len(kb) / slots) - 1
            sa, sb = sum(wa[k] for k in ks), sum(wb[k] for k in ks)
            pa = [1 - math.exp(-na * wa[k] / sa) for k in ks]
            pb = [1 - math.exp(-nb * wb[k] / sb) for k in ks]
            r["degree"] += max(1, sum(x * y for x, y in zip(pa, pb))) - 1
            ca = scale([wa[k] for k in ks], len(ka)) if len(ka) < slots else float("inf")
            cb = scale([wb[k] for k in ks], len(kb)) if len(kb) < slots else float("inf")
            pa = [1 - math.exp(-ca * wa[k]) if wa[k] else 0 for k in ks]
            pb = [1 - math.exp(-cb * wb[k]) if wb[k] else 0 for k in ks]
            r["deg+distinct"] += max(1, sum(x * y for x, y in zip(pa, pb))) - 1
    return r


def run(tessel, path, order, part, tile, zfmt, est, extra=()):
    with tempfile.TemporaryDirectory() as out:
        cmd = [tessel, "run", os.path.join(ROOT, "specs/extensor-llb.yaml"), "-T", "A=" + path,
               "-o", out, "-q", "-e", est, "--set", "mapping.strategy=fixed",
               "--set", "mapping.LLB.order=" + order, "--set", "mapping.LLB.tile=" + tile,
               "--set", "architecture.levels.LLB.tensors.Z.partition=" + part,
               "--set", "architecture.levels.LLB.tensors.Z.format=" + zfmt] + list(extra)
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            raise SystemExit(" ".join(cmd) + "\n" + p.stderr)
        with open(os.path.join(out, "traffic.csv")) as f:
            for row in csv.DictReader(f):
                if row["level"] == "LLB" and row["tensor"] == "Z":
                    return (float(row["data_bytes"]) + float(row["metadata_bytes"]),
                            float(row["bumped_bytes"]))
    return None


def rel(e, s):
    return 0.0 if e == s else ((s - e) / e if e else float("inf"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["steps", "table"])
    ap.add_argument("--tessel", default="build/tools/tessel")
    ap.add_argument("--before", default="")
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--matrices", default=DEFAULT)
    ap.add_argument("--orders", default="KIJ,IJK")
    ap.add_argument("--parts", default="256KiB")
    ap.add_argument("--tile", default="i:64,k:256,j:1024")
    ap.add_argument("--zformat", default="[UB, UB]")
    args = ap.parse_args()
    man = os.path.join(args.data, "MANIFEST.tsv")
    if not os.path.exists(man):
        print("no %s: skipped" % man)
        return 0
    with open(man) as f:
        files = {r["name"]: r["file"] for r in csv.DictReader(f, delimiter="\t")}
    names = [x for x in args.matrices.split(",") if x in files]
    if args.what == "steps":
        tile = dict(x.split(":") for x in args.tile.split(","))
        ti, tk, tj = (int(tile[x]) for x in "ikj")
        print("matrix | true sum(m-1) | uniform | distinct | degree | deg+distinct")
        for name in names:
            r = steps(os.path.join(args.data, files[name]), ti, tk, tj)
            t = r["true"]
            print("%s | %.0f | %s" % (name, t, " | ".join(
                "%.0f (%+.1f %%)" % (r[k], 100 * rel(t, r[k]))
                for k in ("uniform", "distinct", "degree", "deg+distinct"))))
            sys.stdout.flush()
        return 0
    errs = collections.defaultdict(list)  # (order, binary) -> |bumped error| per run
    print("matrix | order | part | exact Z / bumped | stat Z err / bumped err"
          + (" | before Z err / bumped err" if args.before else ""))
    for name in names:
        path = os.path.join(args.data, files[name])
        for order in args.orders.split(","):
            for part in args.parts.split(","):
                ex = run(args.tessel, path, order, part, args.tile, args.zformat, "exact")
                cols = []
                for n, b in enumerate([args.tessel] + ([args.before] if args.before else [])):
                    st = run(b, path, order, part, args.tile, args.zformat, "stat",
                             ["--output-sample", "0.05"])
                    if ex[1] > 0:
                        errs[(order, n)].append(abs(100 * rel(ex[1], st[1])))
                    cols.append("%+.1f %% / %+.1f %%" % (100 * rel(ex[0], st[0]),
                                                         100 * rel(ex[1], st[1])))
                print("%s | %s | %s | %.0f / %.0f | %s" % (name, order, part, ex[0], ex[1],
                                                           " | ".join(cols)))
                sys.stdout.flush()
    summary(errs, args.before)
    return 0


def summary(errs, before):
    """Median, p95 (nearest rank) and worst |error| of the bumped bytes per
    order, over the runs whose exact spill is not zero."""
    print("\norder | binary | runs | median | p95 | worst  (|bumped err|, exact spill > 0)")
    for (order, n), v in sorted(errs.items()):
        v = sorted(v)
        p95 = v[min(len(v) - 1, max(0, math.ceil(0.95 * len(v)) - 1))]
        print("%s | %s | %d | %.1f %% | %.1f %% | %.1f %%" % (
            order, "before" if n else "now", len(v), v[(len(v) - 1) // 2] if len(v) % 2
            else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2, p95, v[-1]))


if __name__ == "__main__":
    sys.exit(main())
