#!/usr/bin/env python3
"""Accuracy of the stat estimator against the exact one at 1, 2 and 3 buffer levels.

    python3 bench/stat_accuracy.py [--tessel build/tools/tessel] [--data ../shared/data]
                                   [--out bench-out/stat_accuracy] [--jobs 2] [--quick]
                                   [--matrices G51,ca-GrQc,...] [--no-gen]
                                   [--output-sample 0.05] [--max-exact-flops N] [--seed N]

One command (issue 18's accuracy target): Z = A*A on every shared matrix (MANIFEST.tsv,
kind=matrix, square) and on generated graphs (`tessel gen` rmat, uniform and clustered
with strong skew), at 1, 2 and 3 buffer levels (specs/extensor-llb.yaml,
specs/extensor.yaml, bench/specs/extensor-3buf.yaml), the orders IJK, IKJ and KIJ at
every level, 8 tile shapes per level count, the output sample capped at --output-sample
(default 5 %) of the multiplies, the base grid chosen automatically from every point's
tiles. It prints, per level count:

- median / p95 / worst |relative error| of the DRAM bytes of A, B and Z, of the output
  nonzeros and of all DRAM bytes, the worst named (matrix, order, shape);
- the same for the bytes into each inner level per tensor (PEB, REG: the nested
  boundaries, which DRAM bytes do not see);
- the coverage of output_nnz_stderr: the share of points where |stat - exact| <= 2 SE;

then the Spearman correlation of the 8 shapes' ranking (DRAM bytes, and the bytes into
each buffer level) per matrix and level count, the worst over the orders.

Both estimators run as `tessel sweep` (one per matrix and level count for exact, one per
level count over every matrix for stat): the data is read once per sweep, the
statistics are collected once per matrix and level count and shared by every point, as
a design-space sweep would. Exact results are cached per (matrix, spec, order, shape)
in OUT/exact-cache (keyed by the spec's and the data file's contents), so reruns, and a
full run after --quick, only pay for the stat side. Figures only, no pass/fail.

The exact estimator at nested levels costs about the effectual iterations of the
innermost level (grows as nnz^2; ca-CondMat, 4.1M multiplies: about 30 s of CPU per
3-level point): --max-exact-flops (default 1e6 multiplies) leaves out of the 2- and
3-level tables the matrices with more multiplies and says which.
"""
import argparse
import csv
import hashlib
import json
import os
import statistics
import subprocess
import sys

ORDERS = ["IJK", "IKJ", "KIJ"]
# (i, k, j) per level; each level's tile divides the one above (tiles nest); the
# automatic base grid is the gcd of every point's edges (8 along i, 16 along k and j)
SHAPES = [
    [(64, 1024, 1024), (8, 16, 64), (8, 16, 16)],
    [(128, 512, 512), (16, 32, 32), (8, 16, 16)],
    [(256, 256, 256), (32, 32, 32), (16, 16, 16)],
    [(128, 1024, 256), (16, 64, 32), (8, 32, 16)],
    [(512, 512, 128), (64, 32, 16), (32, 16, 16)],
    [(64, 256, 512), (8, 32, 64), (8, 16, 32)],
    [(256, 1024, 1024), (32, 64, 64), (16, 32, 32)],
    [(1024, 128, 1024), (64, 16, 64), (32, 16, 32)],
]
SPECS = {1: "specs/extensor-llb.yaml", 2: "specs/extensor.yaml",
         3: "bench/specs/extensor-3buf.yaml"}
LEVELS = ["LLB", "PEB", "REG"]
# traffic.csv counts kept per (level, tensor), to say which term a worst case comes from
FIELDS = ["fills", "reads", "updates", "writebacks", "data_bytes", "metadata_bytes",
          "bumped_bytes", "overflow_bytes"]
# generated graphs: name -> tessel gen arguments. Skewed and clustered on purpose: many
# products collapse onto one output element in the hub rows (issue 18 point 3).
GENERATED = {
    "gen-rmat-4k": ["rmat", "--size", "4096", "--nnz", "16384", "--seed", "3"],
    "gen-uniform-16k": ["uniform", "--size", "16384", "--nnz", "65536", "--seed", "5"],
    "gen-clustered-1k": ["clustered", "--size", "1500", "--cliques", "900", "--tail", "600",
                         "--skew", "1.0", "--clique-max", "12", "--seed", "7"],
    "gen-clustered-2k": ["clustered", "--size", "2500", "--cliques", "1500", "--tail",
                         "1200", "--skew", "1.2", "--clique-max", "10", "--seed", "13"],
    # larger: 6.8M and 12.6M multiplies, so in the 1-level table only by default
    "gen-clustered-3k": ["clustered", "--size", "3000", "--cliques", "2100", "--tail",
                         "1500", "--skew", "0.9", "--seed", "7"],
    "gen-clustered-6k": ["clustered", "--size", "6000", "--cliques", "4200", "--tail",
                         "3000", "--skew", "1.1", "--clique-max", "24", "--seed", "11"],
}
QUICK_MATRICES = ["G51", "jagmesh7", "bcspwr06", "gen-clustered-1k"]
QUICK_SHAPES = [0, 1, 2, 4, 5, 7]


def sh(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(" ".join(cmd) + "\n" + r.stderr)
    return r.stdout


def digest(*paths_or_text):
    h = hashlib.sha256()
    for p in paths_or_text:
        if os.path.exists(p):
            with open(p, "rb") as f:
                h.update(f.read())
        else:
            h.update(p.encode())
    return h.hexdigest()[:16]


def point_sets(depth, order, si):
    p = {"mapping.strategy": "fixed"}  # extensor-llb.yaml's own strategy would pick the tiles
    for lv in range(depth):
        i, k, j = SHAPES[si][lv]
        p["mapping.%s.order" % LEVELS[lv]] = order
        p["mapping.%s.tile" % LEVELS[lv]] = "i:%d,k:%d,j:%d" % (i, k, j)
    return p


def write_sweep(path, spec, estimator, data, points, output_sample, seed=None):
    lines = ["spec: %s" % os.path.abspath(spec), "estimator: %s" % estimator]
    if estimator == "stat":
        lines.append("stat: {output_sample: %s%s}" % (
            output_sample, "" if seed is None else ", seed: %d" % seed))
    lines.append("data:")
    lines += ["  - %s" % os.path.abspath(d) for d in data]
    lines.append("points:")
    for p in points:
        lines.append("  - {%s}" % ", ".join('%s: "%s"' % kv for kv in sorted(p.items())))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def point_key(row, depth, keys):
    """The (order, shape) a sweep row was run at, read back from its axis columns."""
    for k in keys:
        if all(row[path] == v for path, v in point_sets(depth, *k).items()):
            return k
    raise RuntimeError("sweep row %s matches no point" % row["point"])


def read_sweep(out, depth, keys):
    """{(data, (order, shape)): (summary row, {(level, tensor): bytes})}"""
    res, by_point = {}, {}
    with open(os.path.join(out, "summary.csv")) as f:
        for row in csv.DictReader(f):
            if row["error"]:
                raise RuntimeError("%s: point %s: %s" % (out, row["point"], row["error"]))
            key = (row["data"], point_key(row, depth, keys))
            res[key] = (row, {})
            by_point[row["point"]] = key
    with open(os.path.join(out, "traffic.csv")) as f:
        for row in csv.DictReader(f):
            t = {f: float(row[f] or 0) for f in FIELDS}
            t["bytes"] = t["data_bytes"] + t["metadata_bytes"]
            res[by_point[row["point"]]][1][(row["level"], row["tensor"])] = t
    return res


def sweep(args, path, out, depth, keys):
    sh([args.tessel, "sweep", path, "-o", out, "-j", str(args.jobs), "-q", "--overwrite"])
    return read_sweep(out, depth, keys)


def exact_side(args, name, path, depth, keys):
    """Exact results of (order, shape) keys on one matrix, from the cache or a sweep."""
    cdir = os.path.join(args.out, "exact-cache")
    os.makedirs(cdir, exist_ok=True)
    # the exact estimator's sources are part of the key: a change there refreshes the cache
    srcs = sorted(os.path.join("src/model", f) for f in os.listdir("src/model")
                  if f.startswith("exact") or f == "compulsory.c")
    tag = digest(SPECS[depth], "specs/common/drt-normalized.yaml", path, *srcs)
    cfile = os.path.join(cdir, "%s-%d-%s.json" % (name, depth, tag))
    cache = {}
    if os.path.exists(cfile):
        with open(cfile) as f:
            cache = json.load(f)
    missing = [k for k in keys if "%s|%d" % k not in cache]
    if missing:
        sw = os.path.join(args.out, "sweeps", "exact-%s-%d.yaml" % (name, depth))
        write_sweep(sw, SPECS[depth], "exact", [path],
                    [point_sets(depth, o, si) for o, si in missing], args.output_sample)
        res = sweep(args, sw, os.path.join(args.out, "sweeps", "exact-%s-%d" % (name, depth)),
                    depth, missing)
        for (_, k), (row, traffic) in res.items():
            cache["%s|%d" % k] = {"summary": row,
                                  "traffic": {"%s|%s" % lt: b for lt, b in traffic.items()}}
        tmp = cfile + ".tmp"
        with open(tmp, "w") as f:
            json.dump(cache, f)
        os.replace(tmp, cfile)
    return {k: (cache["%s|%d" % k]["summary"],
                {tuple(lt.split("|")): b for lt, b in cache["%s|%d" % k]["traffic"].items()})
            for k in keys}


def stat_side(args, mats, depth, keys):
    sw = os.path.join(args.out, "sweeps", "stat-%d.yaml" % depth)
    write_sweep(sw, SPECS[depth], "stat", [p for _, p in mats],
                [point_sets(depth, o, si) for o, si in keys], args.output_sample, args.seed)
    return sweep(args, sw, os.path.join(args.out, "sweeps", "stat-%d" % depth), depth, keys)


def rel(exact, est):
    if exact == est:
        return 0.0
    return (est - exact) / exact if exact else float("inf")


def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for q in range(i, j + 1):
            r[order[q]] = (i + j) / 2
        i = j + 1
    return r


def spearman(x, y):
    rx, ry = ranks(x), ranks(y)
    mx, my = statistics.mean(rx), statistics.mean(ry)
    sx = sum((a - mx) ** 2 for a in rx) ** 0.5
    sy = sum((b - my) ** 2 for b in ry) ** 0.5
    if sx == 0 or sy == 0:
        return 1.0 if sx == sy else 0.0
    return sum((a - mx) * (b - my) for a, b in zip(rx, ry)) / (sx * sy)


def summarize(label, errs):
    a = sorted(abs(e[0]) for e in errs)
    if not a:
        return None
    worst = max(errs, key=lambda x: abs(x[0]))
    p95 = a[min(len(a) - 1, int(round(0.95 * (len(a) - 1))))]
    print("  %-22s median %7.3f %%  p95 %7.3f %%  worst %+9.3f %%  (%s)" % (
        label, 100 * statistics.median(a), 100 * p95, 100 * worst[0], worst[1]))
    return worst


def terms(e, s, lt):
    """exact -> stat of the counts behind one (level, tensor)'s bytes (for DRAM those of
    the first buffer level: its fills, updates and write-backs cross the DRAM boundary)."""
    parts = ["bytes %.0f -> %.0f" % (e[1][lt]["bytes"], s[1][lt]["bytes"])]
    if lt[0] == "DRAM":
        lt = (LEVELS[0], lt[1])
    for f in ("fills", "reads", "updates", "writebacks", "overflow_bytes", "bumped_bytes"):
        x, y = e[1][lt][f], s[1][lt][f]
        if x or y:
            parts.append("%s %.0f -> %.0f" % (f, x, y))
    return "%s %s: %s" % (lt[0], lt[1], ", ".join(parts))


def matrices(args):
    mats = []
    man = os.path.join(args.data, "MANIFEST.tsv")
    if os.path.exists(man):
        with open(man) as f:
            for row in csv.DictReader(f, delimiter="\t"):
                if row["kind"] == "matrix" and row["rows"] == row["cols"]:
                    mats.append((row["name"], os.path.join(args.data, row["file"])))
    else:
        print("no %s: generated graphs only" % man)
    if not args.no_gen:
        gdir = os.path.join(args.out, "gen")
        os.makedirs(gdir, exist_ok=True)
        for name, gen in GENERATED.items():
            path = os.path.join(gdir, name + ".mtx")
            if not os.path.exists(path):
                sh([args.tessel, "gen"] + gen + ["--pattern", "-o", path])
            mats.append((name, path))
    if args.quick and not args.matrices:
        mats = [m for m in mats if m[0] in QUICK_MATRICES]
    if args.matrices:
        want = args.matrices.split(",")
        mats = [m for m in mats if m[0] in want]
    return mats


def flops_of(results):
    return {name: float(v[0]["flops"]) for (name, _), v in results.items()}


def report_depth(depth, names, ex, st, keys, shapes):
    """Prints one level count's error table; the worst case of each row with its terms."""
    cats, cover, partial = {}, [0, 0], 0
    for name in names:
        for k in keys:
            e, s = ex[(name, k)], st[(name, k)]
            where = "%s %s shape %d" % (name, k[0], k[1])
            for t in "ABZ":
                lt = ("DRAM", t)
                cats.setdefault("DRAM bytes " + t, []).append(
                    (rel(e[1][lt]["bytes"], s[1][lt]["bytes"]), where, (e, s, [lt]), name, k))
            enz, snz = float(e[0]["output_nnz"]), float(s[0]["output_nnz"])
            se = float(s[0]["output_nnz_stderr"] or 0)
            cats.setdefault("output nonzeros", []).append(
                (rel(enz, snz), where, "exact %.0f, stat %.0f +- %.0f" % (enz, snz, se), name, k))
            cats.setdefault("DRAM bytes total", []).append(
                (rel(float(e[0]["dram_bytes"]), float(s[0]["dram_bytes"])), where,
                 (e, s, [("DRAM", t) for t in "ABZ"]), name, k))
            for lv in LEVELS[1:depth]:
                for t in "ABZ":
                    lt = (lv, t)
                    cats.setdefault("%s bytes %s" % (lv, t), []).append(
                        (rel(e[1][lt]["bytes"], s[1][lt]["bytes"]), where, (e, s, [lt]), name,
                         k))
            partial += se > 0
            cover[0] += abs(snz - enz) <= 2 * se
            cover[1] += 1
    npts = len(names) * len(keys)
    if not npts:
        print("%d buffer level%s: no matrix" % (depth, "" if depth == 1 else "s"))
        return []
    print("%d buffer level%s (%s): %d matrices x %d orders x %d shapes = %d points" % (
        depth, "" if depth == 1 else "s", SPECS[depth], len(names), len(ORDERS), len(shapes),
        npts))
    worst = []
    for label, errs in cats.items():
        w = summarize(label, errs)
        if w and abs(w[0]) > 0.01:
            worst.append((label, w))
    paths = sorted(set(st[(n, k)][0]["stat_path"] for n in names for k in keys))
    # output_nnz_stderr is 0 at any sample size where rule 3's exact row counts are the
    # draw's covariate (every shared matrix): the count is exact, not the sample whole
    print("  stat_path: %s;  output_nnz_stderr > 0 at %d of %d points;  "
          "|stat - exact| <= 2 stderr at %d of %d (%.1f %%)" % (
              ",".join(paths), partial, npts, cover[0], cover[1],
              100.0 * cover[0] / max(1, cover[1])))
    if worst:
        print("  worst cases above 1 %, exact -> stat:")
    for label, (err, where, detail, _, _) in worst:
        if isinstance(detail, str):
            print("    %s (%s): %s" % (label, where, detail))
            continue
        e, s, lts = detail
        print("    %s (%s): %s" % (label, where, "; ".join(terms(e, s, lt) for lt in lts)))
    return worst


def value_of(label, r):
    """The quantity a table row measures, from one result."""
    if label == "output nonzeros":
        return float(r[0]["output_nnz"])
    if label == "DRAM bytes total":
        return float(r[0]["dram_bytes"])
    lv, _, t = label.split()
    return r[1][(lv, t)]["bytes"]


def worst_seeds(args, depth, mats, worst, ex):
    """Bias or noise: the worst cases again with other seeds of the output sample."""
    if not worst or args.worst_seeds < 2:
        return
    paths = dict(mats)
    by_name = {}
    for label, w in worst:
        by_name.setdefault(w[3], set()).add(w[4])
    got = {}
    for name, ks in by_name.items():
        ks = sorted(ks)
        for seed in range(2, args.worst_seeds + 1):
            sw = os.path.join(args.out, "sweeps", "seed-%s-%d-%d.yaml" % (name, depth, seed))
            write_sweep(sw, SPECS[depth], "stat", [paths[name]],
                        [point_sets(depth, o, si) for o, si in ks], args.output_sample, seed)
            for (_, k), v in sweep(args, sw, sw[:-5], depth, ks).items():
                got.setdefault((name, k), []).append(v)
    print("  the same worst cases over seeds 1..%d of the output sample (mean, sd, range of "
          "the error): bias or noise" % args.worst_seeds)
    for label, (err, where, detail, name, k) in worst:
        x = value_of(label, ex[(name, k)])
        errs = [err] + [rel(x, value_of(label, v)) for v in got[(name, k)]]
        print("    %-22s (%s): mean %+.3f %%, sd %.3f %%, %+.3f .. %+.3f %%" % (
            label, where, 100 * statistics.mean(errs), 100 * statistics.stdev(errs),
            100 * min(errs), 100 * max(errs)))


def report_spearman(results_by_depth, shapes):
    print("Spearman of the %d shapes' ranking per matrix (worst over the orders): "
          "DRAM bytes, then the bytes into each buffer level (LLB, PEB, REG)" % len(shapes))
    names = []
    for depth, (nm, _, _) in results_by_depth.items():
        names += [n for n in nm if n not in names]
    print("  %-22s %s" % ("matrix", "  ".join(
        "%d level%s: %s" % (d, " " if d == 1 else "s", " ".join(
            "%-5s" % x for x in ["DRAM"] + LEVELS[:d])) for d in results_by_depth)))
    worst = {}
    for name in names:
        cols = []
        for depth, (nm, ex, st) in results_by_depth.items():
            if name not in nm:
                cols.append(" " * (10 + 6 * (depth + 1)))
                continue
            ws = [1.0] * (depth + 1)
            for order in ORDERS:
                ks = [(order, si) for si in shapes]
                ws[0] = min(ws[0], spearman([float(ex[(name, k)][0]["dram_bytes"]) for k in ks],
                                            [float(st[(name, k)][0]["dram_bytes"]) for k in ks]))
                for li, lv in enumerate(LEVELS[:depth]):
                    ws[li + 1] = min(ws[li + 1], spearman(
                        [sum(ex[(name, k)][1][(lv, t)]["bytes"] for t in "ABZ") for k in ks],
                        [sum(st[(name, k)][1][(lv, t)]["bytes"] for t in "ABZ") for k in ks]))
            for li, w in enumerate(ws):
                key = (depth, (["DRAM"] + LEVELS)[li])
                worst[key] = min(worst.get(key, 1.0), w)
            cols.append("          " + " ".join("%.3f" % w for w in ws))
        print("  %-22s %s" % (name, "  ".join(cols)))
    print("  worst: " + ", ".join("%d levels %s %.3f" % (d, lv, w)
                                  for (d, lv), w in sorted(worst.items())))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tessel", default="build/tools/tessel")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--out", default="bench-out/stat_accuracy")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true",
                    help="4 small matrices, 6 shapes: a few minutes at most on busy cores")
    ap.add_argument("--matrices", default="", help="comma-separated names (default: all)")
    ap.add_argument("--no-gen", action="store_true", help="leave out the generated graphs")
    ap.add_argument("--output-sample", default="0.05")
    ap.add_argument("--max-exact-flops", type=float, default=1e6)
    ap.add_argument("--levels", default="1,2,3", help="buffer level counts to run")
    ap.add_argument("--seed", type=int, default=None,
                    help="the output sample's seed for the tables (default: stat's own, 1)")
    ap.add_argument("--worst-seeds", type=int, default=8,
                    help="rerun each worst case with output-sample seeds 1..N (0: no)")
    args = ap.parse_args()
    args.tessel = os.path.abspath(args.tessel)
    os.makedirs(os.path.join(args.out, "sweeps"), exist_ok=True)
    shapes = QUICK_SHAPES if args.quick else list(range(len(SHAPES)))
    keys = [(o, si) for o in ORDERS for si in shapes]
    mats = matrices(args)
    print("Stat against exact, Z = A*A, output sample %s of the multiplies, %d matrices" % (
        args.output_sample, len(mats)))
    results, flops = {}, {}
    for depth in sorted(set(int(d) for d in args.levels.split(","))):
        st = stat_side(args, mats, depth, keys)
        ex, names, left = {}, [], []
        for name, path in mats:
            f = float(next(v for (d, k), v in st.items() if d == name)[0]["flops"])
            flops[name] = f
            if depth > 1 and f > args.max_exact_flops:
                left.append(name)
                continue
            for k, v in exact_side(args, name, path, depth, keys).items():
                ex[(name, k)] = v
            names.append(name)
        worst = report_depth(depth, names, ex, st, keys, shapes)
        worst_seeds(args, depth, mats, worst, ex)
        if left:
            print("  left out (more than %.0f multiplies, exact too slow at nested levels): %s"
                  % (args.max_exact_flops, ", ".join(left)))
        results[depth] = (names, ex, st)
        sys.stdout.flush()
    report_spearman(results, shapes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
