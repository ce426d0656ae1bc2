#!/usr/bin/env python3
"""Tables of the issue-5 accuracy benchmark (bench/accuracy.sh); stdlib only.

usage: accuracy_table.py OUT [--timed "bcsstk16 ca-CondMat wiki-Vote"]

Reads OUT/exact-summary.csv and OUT/exact-traffic.csv, and OUT/stat-summary.csv
and OUT/stat-traffic.csv when they exist, joined on (design, data). Design names
are acc-<ORDER>-<I>x<K>x<J> (bench/accuracy.sh). Prints:
  - the exact reference per matrix (always);
  - estimator time on the timed matrices (model_seconds; exact, and stat);
  - with stat: |relative error| of total DRAM traffic (summary dram_bytes) and of
    A, B, Z traffic (traffic.csv, DRAM-level rows, data_bytes + metadata_bytes),
    median / p95 / max (nearest-rank, as tessel validate), the worst case named;
    and the Spearman correlation (average ranks) of the shape ranking by
    dram_bytes, per matrix and dataflow.
Figures only: the exit status is 0 whatever the errors.
"""
import csv
import math
import os
import sys


def read_csv(path):
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def parse_design(design):
    # acc-IJK-256x256x256 -> ("IJK", "256x256x256")
    parts = design.split("-", 2)
    if len(parts) == 3 and parts[0] == "acc":
        return parts[1], parts[2]
    return "?", design


def quantile(sorted_vals, q):
    """Nearest-rank quantile of a sorted list (as tessel stats / validate)."""
    if not sorted_vals:
        return math.nan
    r = max(1, math.ceil(q * len(sorted_vals)))
    return sorted_vals[min(r, len(sorted_vals)) - 1]


def rel_err(pred, ref):
    if math.isnan(pred) or math.isnan(ref):
        return math.nan
    if ref == 0:
        return 0.0 if pred == 0 else math.inf
    return (pred - ref) / ref


def avg_ranks(vals):
    order = sorted(range(len(vals)), key=lambda i: vals[i])
    ranks = [0.0] * len(vals)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and vals[order[j + 1]] == vals[order[i]]:
            j += 1
        r = (i + j) / 2.0 + 1.0
        for t in range(i, j + 1):
            ranks[order[t]] = r
        i = j + 1
    return ranks


def spearman(xs, ys):
    """Pearson correlation of average ranks; None when undefined."""
    if len(xs) < 2:
        return None
    rx, ry = avg_ranks(xs), avg_ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def pct(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if math.isinf(v):
        return "inf"
    return "%.2f %%" % (100.0 * v)


def fmt_s(v):
    if v is None or math.isnan(v):
        return "n/a"
    if v == 0:
        return "0"
    if v < 1e-3:
        return "%.1f us" % (v * 1e6)
    if v < 1:
        return "%.2f ms" % (v * 1e3)
    return "%.3f s" % v


def table(rows, header):
    widths = [len(h) for h in header]
    for r in rows:
        for i, c in enumerate(r):
            widths[i] = max(widths[i], len(str(c)))
    line = lambda r: "  ".join(str(c).ljust(widths[i]) if i == 0 else str(c).rjust(widths[i])
                               for i, c in enumerate(r))
    out = [line(header), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    return "\n".join(out)


def error_stats(errs):
    """errs: list of (abs err, label). Returns (n, inf, median, p95, max, worst label)."""
    finite = sorted(e for e, _ in errs if not math.isinf(e) and not math.isnan(e))
    ninf = sum(1 for e, _ in errs if math.isinf(e))
    worst = max((x for x in errs if not math.isnan(x[0])), key=lambda x: x[0], default=(math.nan, "-"))
    return (len(errs), ninf, quantile(finite, 0.5), quantile(finite, 0.95),
            finite[-1] if finite else math.nan, worst)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = argv[1]
    timed = ["bcsstk16", "ca-CondMat", "wiki-Vote"]
    if "--timed" in argv:
        timed = argv[argv.index("--timed") + 1].split()

    ex_sum = read_csv(os.path.join(out, "exact-summary.csv")) or []
    ex_tr = read_csv(os.path.join(out, "exact-traffic.csv")) or []
    st_sum = read_csv(os.path.join(out, "stat-summary.csv"))
    st_tr = read_csv(os.path.join(out, "stat-traffic.csv"))
    if not ex_sum:
        print("no exact results (exact-summary.csv missing or empty)")
        return 0

    matrices = []
    for r in ex_sum:
        if r["data"] not in matrices:
            matrices.append(r["data"])

    # ------------------------------------------------ exact reference per matrix
    print("Exact reference (DRAM traffic over compulsory; best and worst design point per matrix)")
    rows = []
    for m in matrices:
        rs = [r for r in ex_sum if r["data"] == m]
        best = min(rs, key=lambda r: num(r["dram_bytes"]))
        worst = max(rs, key=lambda r: num(r["dram_bytes"]))
        best_by_order = []
        for o in sorted({parse_design(r["design"])[0] for r in rs}):
            ro = [r for r in rs if parse_design(r["design"])[0] == o]
            b = min(ro, key=lambda r: num(r["dram_bytes"]))
            best_by_order.append("%s:%s" % (o, parse_design(b["design"])[1]))
        msec = sum(num(r["model_seconds"]) for r in rs)
        rows.append([m, len(rs), best["compulsory_bytes"],
                     "%.3g" % num(best["traffic_ratio"]), "%.3g" % num(worst["traffic_ratio"]),
                     "%.3g" % (num(worst["dram_bytes"]) / num(best["dram_bytes"]))
                     if num(best["dram_bytes"]) > 0 else "n/a",
                     " ".join(best_by_order), fmt_s(msec) if msec > 0 else "-"])
    print(table(rows, ["matrix", "points", "compulsory B", "best ratio", "worst ratio",
                       "worst/best", "best shape per dataflow", "exact model s"]))
    print()

    # ------------------------------------------------ speed
    st_by_key = {}
    if st_sum:
        st_by_key = {(r["design"], r["data"]): r for r in st_sum}
    print("Estimator time on the timed matrices (sum of model_seconds; target: stat >= 1000x faster)")
    rows = []
    tot_e = tot_s = 0.0
    all_ratios = []
    for m in timed:
        rs = [r for r in ex_sum if r["data"] == m]
        if not rs:
            continue
        te = sum(num(r["model_seconds"]) for r in rs)
        ratios = []
        ts = 0.0
        ns = 0
        for r in rs:
            s = st_by_key.get((r["design"], r["data"]))
            if s is None:
                continue
            ns += 1
            sv = num(s["model_seconds"])
            ts += sv
            if sv > 0:
                ratios.append(num(r["model_seconds"]) / sv)
        ratios.sort()
        all_ratios += ratios
        tot_e += te
        tot_s += ts
        slow = max(rs, key=lambda r: num(r["model_seconds"]))
        rows.append([m, len(rs), fmt_s(te), fmt_s(te / len(rs)),
                     "%s (%s)" % (fmt_s(num(slow["model_seconds"])), slow["design"]),
                     fmt_s(ts) if ns else "n/a",
                     ("%.0fx" % (te / ts)) if ns and ts > 0 else "n/a",
                     ("%.0fx" % quantile(ratios, 0.5)) if ratios else "n/a",
                     ("%.0fx" % ratios[0]) if ratios else "n/a"])
    if rows:
        all_ratios.sort()
        rows.append(["all timed", sum(r[1] for r in rows), fmt_s(tot_e), "", "",
                     fmt_s(tot_s) if st_sum else "n/a",
                     ("%.0fx" % (tot_e / tot_s)) if st_sum and tot_s > 0 else "n/a",
                     ("%.0fx" % quantile(all_ratios, 0.5)) if all_ratios else "n/a",
                     ("%.0fx" % all_ratios[0]) if all_ratios else "n/a"])
        print(table(rows, ["matrix", "points", "exact total", "exact mean", "exact slowest",
                           "stat total", "speedup (sums)", "median per point", "min per point"]))
    else:
        print("(no timed matrix in this run)")
    print()

    if st_sum is None:
        print("stat: no stat results (stat estimator not available yet, or not requested with"
              " --estimator stat); exact reference only")
        return 0

    # ------------------------------------------------ accuracy
    ex_by_key = {(r["design"], r["data"]): r for r in ex_sum}
    only_exact = [k for k in ex_by_key if k not in st_by_key]
    only_stat = [k for k in st_by_key if k not in ex_by_key]
    joined = [k for k in ex_by_key if k in st_by_key]

    print("Accuracy: stat vs exact, |relative error| (targets: total DRAM median <= 5 %, p95 <= 15 %)")
    rows = []
    errs = [(abs(rel_err(num(st_by_key[k]["dram_bytes"]), num(ex_by_key[k]["dram_bytes"]))),
             "%s %s" % (k[1], k[0])) for k in joined]
    worst_total = error_stats(errs)

    def add_row(name, e):
        n, ninf, med, p95, mx, worst = error_stats(e)
        rows.append([name, n, ninf, pct(med), pct(p95), pct(mx),
                     "%s (%s)" % (worst[1], pct(worst[0])) if n else "-"])

    add_row("total DRAM traffic", errs)
    for o in sorted({parse_design(k[0])[0] for k in joined}):
        add_row("  dataflow " + o, [e for e, k in zip(errs, joined) if parse_design(k[0])[0] == o])

    def dram_rows(tr):
        d = {}
        for r in tr or []:
            if r["level"] != tr[0]["level"]:   # level 0 (the backing store) only
                continue
            d[(r["design"], r["data"], r["tensor"])] = num(r["data_bytes"]) + num(r["metadata_bytes"])
        return d

    ex_t, st_t = dram_rows(ex_tr), dram_rows(st_tr)
    tensors = []
    for k in ex_t:
        if k[2] not in tensors:
            tensors.append(k[2])
    for t in sorted(tensors):
        e = [(abs(rel_err(st_t[k], ex_t[k])), "%s %s" % (k[1], k[0]))
             for k in ex_t if k[2] == t and k in st_t]
        add_row("tensor %s traffic" % t, e)
    print(table(rows, ["metric", "rows", "inf", "median", "p95", "max", "worst case"]))
    if only_exact or only_stat:
        print("unmatched design points: %d only in exact, %d only in stat (first: %s)"
              % (len(only_exact), len(only_stat), (only_exact + only_stat)[0]))
    print()

    # ------------------------------------------------ ranking
    print("Shape ranking: Spearman (average ranks) of dram_bytes, stat vs exact, per matrix and"
          " dataflow (target: >= 0.9 on >= 90 % of matrices)")
    orders = sorted({parse_design(k[0])[0] for k in joined})
    rows = []
    good = counted = 0
    below = []
    for m in matrices:
        cells = []
        vals = []
        for o in orders:
            ks = [k for k in joined if k[1] == m and parse_design(k[0])[0] == o]
            rho = spearman([num(st_by_key[k]["dram_bytes"]) for k in ks],
                           [num(ex_by_key[k]["dram_bytes"]) for k in ks])
            cells.append("n/a" if rho is None else "%.3f" % rho)
            if rho is not None:
                vals.append(rho)
        ks = [k for k in joined if k[1] == m]
        pooled = spearman([num(st_by_key[k]["dram_bytes"]) for k in ks],
                          [num(ex_by_key[k]["dram_bytes"]) for k in ks])
        worst = min(vals) if vals else None
        if worst is not None:
            counted += 1
            if worst >= 0.9:
                good += 1
            else:
                below.append("%s (%.3f)" % (m, worst))
        rows.append([m] + cells + ["n/a" if worst is None else "%.3f" % worst,
                                   "n/a" if pooled is None else "%.3f" % pooled])
    print(table(rows, ["matrix"] + orders + ["min", "all points"]))
    print("matrices with shape-ranking Spearman >= 0.9 in every dataflow: %d of %d (%s)%s"
          % (good, counted, pct(good / counted) if counted else "n/a",
             ("; below: " + ", ".join(below)) if below else ""))
    print()
    n, ninf, med, p95, mx, worst = worst_total
    print("Headline: total DRAM |error| median %s (target <= 5 %%), p95 %s (<= 15 %%), max %s at %s;"
          " ranking >= 0.9 on %s of matrices (>= 90 %%); stat speedup on timed matrices %s (>= 1000x)"
          % (pct(med), pct(p95), pct(mx), worst[1],
             pct(good / counted) if counted else "n/a",
             ("%.0fx" % (tot_e / tot_s)) if tot_s > 0 else "n/a"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
