#!/usr/bin/env python3
"""Refits the SRAM model of energy_tables/tessel-45nm.yaml (docs/models/energy.md).

The model is a power law per quantity q (read, write, area):

    q(width, depth) = exp(c0) * width^c1 * depth^c2

fitted by ordinary least squares on ln q (so that every point weighs by its
relative error, the error the targets are stated in) to the `fit` rows of the
points file. It prints the coefficients as the YAML block of the table, then the
error of the fit at every point, the leave-one-out error (the point held back,
the law refitted to the others) and the error at the `check` rows (never fitted).

Then it shows where the residuals come from (docs/models/energy.md, "Where the
error comes from"): the leave-one-out error of tessel's own pricing rule (the
point held back from the table, priced from the other points and the refitted
law, as src/energy/sram_price.c does), the largest errors of the other model
forms tried on the same points, and the pairs of published points of one width
whose energy falls while the depth grows, which no model increasing in depth
can put both within 10 %.

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


def setup_of(r):
    """The design setup a point comes from: '[SL] fig13_dstc_setup' and so on."""
    parts = r["source"].split()
    return " ".join(parts[:2])


# Other forms tried on the same points: name -> regressors of a row.
FORMS = (
    ("width, depth (the law)", regressors),
    ("width, depth per bank", lambda r: [1.0, math.log(r["width"]),
                                         math.log(r["depth"] / r["banks"])]),
    ("width, depth, banks", lambda r: [1.0, math.log(r["width"]), math.log(r["depth"]),
                                       math.log(r["banks"])]),
    ("width, depth, ln(width)^2", lambda r: [1.0, math.log(r["width"]), math.log(r["depth"]),
                                             math.log(r["width"]) ** 2]),
    ("width, depth, width x depth", lambda r: [1.0, math.log(r["width"]), math.log(r["depth"]),
                                               math.log(r["width"]) * math.log(r["depth"])]),
)


def form_errors(rows, q, reg):
    """Largest |error| of a least-squares form at its points and held out."""
    use = [r for r in rows if r[q] is not None]
    def fit_with(sub):
        return solve([reg(r) for r in sub], [math.log(r[q]) for r in sub])
    def pred(c, r):
        return math.exp(sum(a * b for a, b in zip(c, reg(r))))
    c = fit_with(use)
    wf = max(abs(pred(c, r) / r[q] - 1) for r in use)
    wl = max(abs(pred(fit_with([o for o in use if o is not r]), r) / r[q] - 1) for r in use)
    return wf, wl


def setup_errors(rows, q):
    """The law plus one offset per design setup: the error at the points,
    and held out where the point's setup keeps another point."""
    use = [r for r in rows if r[q] is not None]
    def reg_for(setups):
        return lambda r: [math.log(r["width"]), math.log(r["depth"])] + [
            1.0 if setup_of(r) == s else 0.0 for s in setups]
    reg = reg_for(sorted({setup_of(r) for r in use}))
    c = solve([reg(r) for r in use], [math.log(r[q]) for r in use])
    wf = max(abs(math.exp(sum(a * b for a, b in zip(c, reg(r)))) / r[q] - 1) for r in use)
    wl = 0.0
    for r in use:
        others = [o for o in use if o is not r]
        if not any(setup_of(o) == setup_of(r) for o in others):
            continue
        rg = reg_for(sorted({setup_of(o) for o in others}))
        co = solve([rg(o) for o in others], [math.log(o[q]) for o in others])
        wl = max(wl, abs(math.exp(sum(a * b for a, b in zip(co, rg(r)))) / r[q] - 1))
    return wf, wl


def table_price(points, coef, q, width, depth):
    """What src/energy/sram_price.c charges for one bank of `depth` words:
    the series of the width (else the next wider one, else the widest,
    scaled linearly in width), linear in (log depth, log q) between its
    points; outside the series, the fitted law. Returns (value, how)."""
    widths = sorted({p["width"] for p in points})
    wider = [w for w in widths if w >= width]
    ws = wider[0] if wider else widths[-1]
    s = sorted((p for p in points if p["width"] == ws), key=lambda p: p["depth"])
    if depth < s[0]["depth"] or depth > s[-1]["depth"]:
        return predict(coef, {"width": width, "depth": depth}), "law"
    f = width / ws
    for a, b in zip(s, s[1:] + s[-1:]):
        if a["depth"] == depth:
            return a[q] * f, "point"
        if a["depth"] < depth <= b["depth"]:
            t = math.log(depth / a["depth"]) / math.log(b["depth"] / a["depth"])
            v = math.exp(math.log(a[q]) + t * math.log(b[q] / a[q]))
            return v * f, "interpolated" if f == 1 else "width-scaled"
    return s[-1][q] * f, "point"


def kernel_price(points, q, length, r):
    """The law fitted to `points`, times exp of their log residuals
    interpolated at r by a Gaussian kernel (exact at the points, the law far
    from them): the 'local model' of the residuals."""
    c = fit(points, q)
    def x(p):
        return (math.log(p["width"]), math.log(p["depth"]))
    def k(a, b):
        return math.exp(-((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) / (2 * length * length))
    res = [math.log(p[q]) - math.log(predict(c, p)) for p in points]
    gram = [[k(x(a), x(b)) for b in points] for a in points]
    # solve gram * alpha = res (Gauss-Jordan with partial pivoting, as solve())
    n = len(points)
    m = [gram[i][:] + [res[i]] for i in range(n)]
    for col in range(n):
        piv = max(range(col, n), key=lambda i: abs(m[i][col]))
        m[col], m[piv] = m[piv], m[col]
        for i in range(n):
            if i != col:
                f = m[i][col] / m[col][col]
                for j in range(col, n + 1):
                    m[i][j] -= f * m[col][j]
    alpha = [m[i][n] / m[i][i] for i in range(n)]
    corr = sum(a * k(x(r), x(p)) for a, p in zip(alpha, points))
    return predict(c, r) * math.exp(corr)


def print_spread(rows, fitted):
    """Where the error comes from (see the module comment)."""
    print()
    print("# tessel's pricing with the point held back from the table (%): the other points"
          " where they reach, else the law refitted without it")
    print("width\tdepth\t" + "\t".join(QUANTITIES) + "\thow")
    worst = dict.fromkeys(QUANTITIES, 0.0)
    for r in fitted:
        others = [o for o in fitted if o is not r]
        cells, hows = [f"{r['width']:g}", f"{r['depth']:g}"], set()
        for q in QUANTITIES:
            v, how = table_price(others, fit(others, q), q, r["width"], r["depth"])
            e = v / r[q] - 1
            worst[q] = max(worst[q], abs(e))
            cells.append(f"{100 * e:+.1f}")
            hows.add(how)
        print("\t".join(cells + ["/".join(sorted(hows))]))
    print("largest\t\t" + "\t".join(f"{100 * worst[q]:.1f}" for q in QUANTITIES))
    print()
    print("# other forms on the fitted points: largest |error| (%) fitted / held out")
    print("form\t" + "\t".join(QUANTITIES))
    for name, reg in FORMS:
        cells = [name]
        for q in QUANTITIES:
            wf, wl = form_errors(fitted, q, reg)
            cells.append(f"{100 * wf:.0f} / {100 * wl:.0f}")
        print("\t".join(cells))
    cells = ["the law + one offset per design setup"]
    for q in QUANTITIES:
        wf, wl = setup_errors(fitted, q)
        cells.append(f"{100 * wf:.0f} / {100 * wl:.0f}")
    print("\t".join(cells))
    print()
    print("# the law times a residual correction interpolated between the points (Gaussian"
          " kernel of length L in ln width, ln depth): largest |error| (%) held out")
    print("L\t" + "\t".join(QUANTITIES))
    for length in (0.3, 0.5, 1.0, 2.0, 3.0):
        cells = [f"{length:g}"]
        for q in QUANTITIES:
            use = [r for r in fitted if r[q] is not None]
            worst_q = 0.0
            for r in use:
                others = [o for o in use if o is not r]
                v = kernel_price(others, q, length, r)
                worst_q = max(worst_q, abs(v / r[q] - 1))
            cells.append(f"{100 * worst_q:.0f}")
        print("\t".join(cells))
    print()
    print("# published pairs of one width whose read energy falls as the depth grows"
          " (no law increasing in depth puts both within 10 % when the ratio passes 1.21)")
    for a in rows:
        for b in rows:
            if (a["width"] == b["width"] and a["depth"] < b["depth"] and a["read"]
                    and b["read"] and a["read"] > b["read"]):
                print(f"{a['width']:g}x{a['depth']:g} {a['read']:g} pJ ({setup_of(a)}) > "
                      f"{b['width']:g}x{b['depth']:g} {b['read']:g} pJ ({setup_of(b)}): "
                      f"ratio {a['read'] / b['read']:.2f}")


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
    print_spread(rows, fitted)


if __name__ == "__main__":
    main()
