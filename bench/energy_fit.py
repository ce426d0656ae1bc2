#!/usr/bin/env python3
"""Refits the SRAM model of energy_tables/tessel-45nm.yaml (docs/models/energy.md).

The model is a power law per quantity q (read, write, area):

    q(width, depth) = exp(c0) * width^c1 * depth^c2

fitted by ordinary least squares on ln q (so that every point weighs by its
relative error, the error the targets are stated in) to the `fit` rows of the
points file. It prints the coefficients as the YAML block of the table, then the
error of the fit at every point, the leave-one-out error (the point held back,
the law refitted to the others) and the error at the `check` rows (never fitted).

Python standard library only.  Usage:
    python3 bench/energy_fit.py [energy_tables/sram-points.tsv]
"""
import math
import sys

QUANTITIES = ("read", "write", "area")


def read_points(path):
    rows, header = [], None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            cells = line.split("\t")
            if header is None:
                header = cells
                continue
            if len(cells) != len(header):
                sys.exit(f"{path}: a row has {len(cells)} cells, the header {len(header)}")
            r = dict(zip(header, cells))
            if r["use"] not in ("fit", "check"):
                sys.exit(f"{path}: use must be fit or check, not {r['use']!r}")
            if not r["source"].strip():
                sys.exit(f"{path}: every row needs a source")
            for k in ("width", "depth", "banks") + QUANTITIES:
                r[k] = None if r[k] == "-" else float(r[k])
            rows.append(r)
    return rows


def regressors(r):
    return [1.0, math.log(r["width"]), math.log(r["depth"])]


def solve(xs, ys):
    """Least squares by the normal equations (3 unknowns, well conditioned in logs)."""
    n = len(xs[0])
    m = [[0.0] * (n + 1) for _ in range(n)]
    for x, y in zip(xs, ys):
        for i in range(n):
            m[i][n] += x[i] * y
            for j in range(n):
                m[i][j] += x[i] * x[j]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        if m[c][c] == 0:
            sys.exit("the points do not determine the law (singular system)")
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                for k in range(c, n + 1):
                    m[r][k] -= f * m[c][k]
    return [m[i][n] / m[i][i] for i in range(n)]


def fit(rows, q):
    use = [r for r in rows if r[q] is not None]
    return solve([regressors(r) for r in use], [math.log(r[q]) for r in use])


def predict(c, r):
    return math.exp(sum(a * b for a, b in zip(c, regressors(r))))


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "energy_tables/sram-points.tsv"
    rows = read_points(path)
    fitted = [r for r in rows if r["use"] == "fit"]
    checks = [r for r in rows if r["use"] == "check"]
    coef = {q: fit(fitted, q) for q in QUANTITIES}
    print("# coefficients (ln q = c0 + c1 ln width + c2 ln depth), for tessel-45nm.yaml")
    for q in QUANTITIES:
        c = coef[q]
        print(f"        {q}: {{c0: {c[0]:.6f}, c1: {c[1]:.6f}, c2: {c[2]:.6f}}}")
    print()
    print("# error per point (%): fit = fitted law; loo = law refitted without the point")
    print("use\twidth\tdepth\tbanks\t" + "\t".join(f"{q}_fit\t{q}_loo" for q in QUANTITIES))
    worst = {q: [0.0, 0.0, 0.0] for q in QUANTITIES}
    for i, r in enumerate(rows):
        cells = [r["use"], f"{r['width']:g}", f"{r['depth']:g}", f"{r['banks']:g}"]
        for q in QUANTITIES:
            if r[q] is None:
                cells += ["-", "-"]
                continue
            e_fit = predict(coef[q], r) / r[q] - 1
            if r["use"] == "fit":
                others = [o for o in fitted if o is not r]
                e_loo = predict(fit(others, q), r) / r[q] - 1
                worst[q][0] = max(worst[q][0], abs(e_fit))
                worst[q][1] = max(worst[q][1], abs(e_loo))
                cells += [f"{100 * e_fit:+.1f}", f"{100 * e_loo:+.1f}"]
            else:
                worst[q][2] = max(worst[q][2], abs(e_fit))
                cells += [f"{100 * e_fit:+.1f}", "-"]
        print("\t".join(cells))
    print()
    print("# largest |error| (%) over the fitted points, held back (loo), and the check rows")
    for q in QUANTITIES:
        w = worst[q]
        print(f"{q}\tfit {100 * w[0]:.1f}\tloo {100 * w[1]:.1f}\tcheck {100 * w[2]:.1f}")
    ok = all(worst[q][0] <= 0.10 and worst[q][1] <= 0.25 for q in QUANTITIES)
    print("targets (fit within 10 %, leave-one-out within 25 %):", "met" if ok else "NOT met")


if __name__ == "__main__":
    main()
