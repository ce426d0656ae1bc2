#!/usr/bin/env python3
"""The in-visit step count on output tiles off the diagonal (issue 18, session 32).

    python3 bench/outspill_offdiag.py [--data ../shared/data] [--gen DIR]
                                      [--cases ca-CondMat:2048,256,1024,G51:64,16,64]

Z = A A with B = A (the specs' `B: A`), one tile i x k x j. Needs no tessel: from the
matrix alone, over every pair of a non-empty A tile (I, t) and a non-empty B tile (t, J)
of reduction tile t, it counts the true steps m = |A's k in (I, t) and B's k in (t, J)|
and stat's independent count (docs/models/stat.md "The step count wired": p_X(k) =
1 - exp(-c_X w_X(k)), c_X solved so that the tile's p_X sum to its distinct k d_X,
m = sum_k p_A(k) p_B(k)), and splits the pairs into the diagonal (I's rows meet J's
columns, where "The step count on near-symmetric tiles" corrects m) and the rest.

Columns: the true steps over all pairs (sum over k of the A tiles holding k times the B
tiles holding k); on the diagonal, true and independent; the independent total; off
the diagonal, true, and the error of three estimates of it:
  - indep: the independent count as is (main's, where the near-symmetric rule stops);
  - model total: per reduction tile, the off-diagonal pairs scaled to take what is
    left of the independent total (which the covers give in closed form) once the
    diagonal has its true count;
  - exact total: the same with the true total over all pairs of the reduction tile;
then indep and exact total again over the tenth of the off-diagonal pairs with the
most independent steps (the visits that spill first): the total fixes the sum, not how
it spreads over the pairs.
Both scalings take the diagonal at its true count (what the near-symmetric rule is
exact to on a symmetric matrix). Figures only, no pass/fail.
"""
import argparse
import collections
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from outspill_steps import load, scale  # noqa: E402

DEFAULT = ("ca-CondMat:2048,256,1024,G51:64,16,64,G51:32,64,64,rajat19:32,64,64,"
           "rajat19:64,16,64,bcsstk13:32,64,64,bcsstk11:64,16,64,jagmesh7:64,16,64,"
           "gen-clustered-1k:64,16,64")


def covers(ks, w, d):
    """p_X(k) over the k of a reduction tile for a tile of d distinct k."""
    nz = [k for k in ks if w[k]]
    if d >= len(nz):
        return {k: 1.0 for k in nz}
    c = scale([w[k] for k in nz], d)
    return {k: 1 - math.exp(-c * w[k]) for k in nz}


def pairs(path, ti, tk, tj):
    """Per pair (t, diagonal, true m, independent m), and the true total per t."""
    n, ncols, e = load(path)
    acol, brow = collections.defaultdict(set), collections.defaultdict(set)
    wa, wb = collections.Counter(), collections.Counter()
    ia, jb = collections.defaultdict(set), collections.defaultdict(set)
    for i, k in e:  # A = the matrix: entry (i, k)
        acol[(i // ti, k // tk)].add(k)
        wa[k] += 1
        ia[k].add(i // ti)
    for k, j in e:  # B = A: entry (k, j)
        brow[(k // tk, j // tj)].add(k)
        wb[k] += 1
        jb[k].add(j // tj)
    total = collections.Counter()
    for k in range(n):
        total[k // tk] += len(ia.get(k, ())) * len(jb.get(k, ()))
    out = []
    for t in range((n + tk - 1) // tk):
        ks = range(t * tk, min(n, t * tk + tk))
        bt = [(J, kb, covers(ks, wb, len(kb))) for J in range((ncols + tj - 1) // tj)
              for kb in [brow.get((t, J))] if kb]
        for I in range((n + ti - 1) // ti):
            ka = acol.get((I, t))
            if not ka:
                continue
            pa = covers(ks, wa, len(ka))
            for J, kb, pb in bt:
                m = sum(p * pb.get(k, 0) for k, p in pa.items())
                diag = I * ti < (J + 1) * tj and J * tj < (I + 1) * ti
                out.append((t, diag, len(ka & kb), m))
    return out, total


def row(name, out, total):
    model, diag_true, off_model = (collections.Counter() for _ in range(3))
    for t, dg, tr, m in out:
        model[t] += m
        if dg:
            diag_true[t] += tr
        else:
            off_model[t] += m
    off = [r for r in out if not r[1]]
    tr = sum(r[2] for r in off)

    def scaled(tot, rows=off):
        return sum(m * max(0.0, tot[t] - diag_true[t]) / off_model[t]
                   for t, _, _, m in rows if off_model[t] > 0)

    # the tenth of the off-diagonal pairs with the most independent steps (the
    # visits that spill first)
    top = sorted(off, key=lambda r: -r[3])[:max(1, len(off) // 10)]
    ttr = sum(r[2] for r in top)

    def pct(x, y):
        return 100 * (x / y - 1) if y else 0.0

    dt = sum(diag_true.values())
    dm = sum(m for _, dg, _, m in out if dg)
    T, M = sum(total.values()), sum(model.values())
    print(f"| {name} | {T:,} | {dt:,} | {dm:,.0f} ({pct(dm, dt):+.2f} %) | "
          f"{M:,.0f} ({pct(M, T):+.2f} %) | {tr:,} | "
          f"{pct(sum(r[3] for r in off), tr):+.2f} % | {pct(scaled(model), tr):+.2f} % | "
          f"{pct(scaled(total), tr):+.2f} % | {pct(sum(r[3] for r in top), ttr):+.2f} % | "
          f"{pct(scaled(total, top), ttr):+.2f} % |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--gen", default="bench-out/stat_accuracy/gen",
                    help="where bench/stat_accuracy.py wrote its generated graphs")
    ap.add_argument("--cases", default=DEFAULT, help="NAME:I,K,J,...")
    args = ap.parse_args()
    print("| matrix, tile i,k,j | steps, all pairs | diagonal: true | independent | "
          "independent total | off diagonal: true | indep | model total | exact total | "
          "heaviest tenth: indep | exact total |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    parts = args.cases.split(",")
    for c in range(0, len(parts), 3):
        name, ti = parts[c].split(":")
        tk, tj = parts[c + 1], parts[c + 2]
        path = os.path.join(args.data, "mtx", name + ".mtx.gz")
        if not os.path.exists(path):
            path = os.path.join(args.gen, name + ".mtx")
        if not os.path.exists(path):
            print(f"| {name} {ti},{tk},{tj} | not found: {path} |")
            continue
        out, total = pairs(path, int(ti), int(tk), int(tj))
        row(f"{name} {ti},{tk},{tj}", out, total)


if __name__ == "__main__":
    main()
