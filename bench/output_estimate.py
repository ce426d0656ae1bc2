#!/usr/bin/env python3
"""The output estimate with a capped sample on graphs of heavy output compression.

    python3 bench/output_estimate.py [--tessel build/tools/tessel] [--data ../shared/data]
                                     [--out bench-out/output_estimate] [--seeds 4]
                                     [--fractions 0.05,0.01] [--max-exact-flops 2e7]
                                     [--matrices ca-GrQc,...] [--no-gen]

Issue 18 item 3: Z = A*A with fixed tiles, exact against stat with the output sample
capped at each --fractions of the multiplies (no 2^19 floor), --seeds seeds each, on
the co-authorship, social and p2p graphs of ../shared/data and on `tessel gen` graphs
of their sizes (20k-100k vertices, clustered with hub skew, R-MAT). Points: 1 buffer
level (specs/extensor-llb.yaml, order IJK) and 2 (specs/extensor.yaml, IJK at both
levels), LLB tiles 256^3 and 128x512x512 (PEB 8x16x64 and 16x32x32). Per matrix,
fraction and point it prints the exact output nonzeros and the mean, the worst and the
spread over seeds of stat's relative error of the output nonzeros and of Z's DRAM
bytes (data + metadata), the bytes of Z into the PEB (2 levels), and how many runs fall
within 2 output_nnz_stderr of exact; then median / p95 / worst |error| over all runs.
Exact results are cached in OUT/exact (keyed by matrix, spec and point), so a rerun only
pays for the stat side. Matrices with more multiplies than --max-exact-flops get the
1-level points only (exact at 2 levels costs about the innermost level's effectual
iterations). Figures only, no pass/fail.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

SHARED = ["ca-GrQc", "ca-HepTh", "ca-CondMat", "wiki-Vote", "soc-sign-bitcoin-otc",
          "p2p-Gnutella04", "p2p-Gnutella24"]
# name -> tessel gen arguments: the ca-* sizes, strong clustering and hub skew
GENERATED = {
    "gen-clustered-23k": ["clustered", "--size", "23000", "--cliques", "15000", "--tail",
                          "4000", "--skew", "0.5", "--clique-max", "10", "--seed", "3"],
    "gen-clustered-23k-hub": ["clustered", "--size", "23000", "--cliques", "12000", "--tail",
                              "6000", "--skew", "0.9", "--clique-max", "16", "--seed", "3"],
    "gen-clustered-50k": ["clustered", "--size", "50000", "--cliques", "30000", "--tail",
                          "10000", "--skew", "0.6", "--clique-max", "10", "--seed", "5"],
    "gen-clustered-100k": ["clustered", "--size", "100000", "--cliques", "60000", "--tail",
                           "20000", "--skew", "0.5", "--clique-max", "8", "--seed", "7"],
    "gen-rmat-32k": ["rmat", "--size", "32768", "--nnz", "150000", "--a", "0.55", "--b", "0.2",
                     "--c", "0.2", "--d", "0.05", "--seed", "9"],
}
# (levels, label, --set pairs)
POINTS = [
    (1, "256^3", {"mapping.strategy": "fixed", "mapping.LLB.order": "IJK",
                  "mapping.LLB.tile": "i:256,k:256,j:256"}),
    (1, "128x512x512", {"mapping.strategy": "fixed", "mapping.LLB.order": "IJK",
                        "mapping.LLB.tile": "i:128,k:512,j:512"}),
    (2, "256^3/8x16x64", {"mapping.LLB.tile": "i:256,k:256,j:256",
                          "mapping.PEB.tile": "i:8,k:16,j:64"}),
    (2, "128x512x512/16x32x32", {"mapping.LLB.tile": "i:128,k:512,j:512",
                                 "mapping.PEB.tile": "i:16,k:32,j:32"}),
]
SPECS = {1: "specs/extensor-llb.yaml", 2: "specs/extensor.yaml"}


def run(tessel, spec, path, sets, extra):
    """One tessel run: (summary row, {(level, tensor): bytes})."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [tessel, "run", spec, "-T", "A=" + path, "-o", out, "-q"] + extra
        for k, v in sorted(sets.items()):
            cmd += ["--set", "%s=%s" % (k, v)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            raise SystemExit("%s failed: %s" % (" ".join(cmd), r.stderr))
        with open(os.path.join(out, "summary.csv")) as f:
            s = next(csv.DictReader(f))
        t = {}
        with open(os.path.join(out, "traffic.csv")) as f:
            for row in csv.DictReader(f):
                t["%s.%s" % (row["level"], row["tensor"])] = (
                    float(row["data_bytes"]) + float(row["metadata_bytes"]))
        return {"nnz": float(s["output_nnz"]), "se": float(s["output_nnz_stderr"] or 0),
                "flops": float(s["flops"]), "dram": float(s["dram_bytes"]), "t": t}


def rel(e, s):
    return (s - e) / e if e else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", default="build/tools/tessel")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--out", default="bench-out/output_estimate")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--fractions", default="0.05,0.01")
    ap.add_argument("--max-exact-flops", type=float, default=2e7)
    ap.add_argument("--matrices", default="")
    ap.add_argument("--no-gen", action="store_true")
    args = ap.parse_args()
    os.makedirs(os.path.join(args.out, "exact"), exist_ok=True)
    mats = []
    man = os.path.join(args.data, "MANIFEST.tsv")
    if os.path.exists(man):
        with open(man) as f:
            files = {r["name"]: r["file"] for r in csv.DictReader(f, delimiter="\t")}
        mats += [(m, os.path.join(args.data, files[m])) for m in SHARED if m in files]
    else:
        print("skipped (no %s): the shared matrices" % man)
    if not args.no_gen:
        for name, gen in GENERATED.items():
            path = os.path.join(args.out, name + ".mtx")
            if not os.path.exists(path):
                subprocess.run([args.tessel, "gen"] + gen + ["--pattern", "-o", path],
                               check=True, capture_output=True)
            mats.append((name, path))
    if args.matrices:
        keep = args.matrices.split(",")
        mats = [m for m in mats if m[0] in keep]
    fracs = [float(x) for x in args.fractions.split(",")]
    errs = {}  # (fraction, quantity) -> [relative errors]
    cover = {f: [0, 0] for f in fracs}
    print("matrix | point | fraction | exact nnz | nnz err mean / worst / sd | within 2 SE | "
          "DRAM Z err mean / worst | PEB Z err mean / worst")
    for name, path in mats:
        flops = None
        for levels, label, sets in POINTS:
            key = os.path.join(args.out, "exact", "%s-%d-%s.json" % (
                name, levels, label.replace("/", "_").replace("^", "")))
            if levels > 1 and flops is not None and flops > args.max_exact_flops:
                continue
            if os.path.exists(key):
                with open(key) as f:
                    ex = json.load(f)
            else:
                ex = run(args.tessel, SPECS[levels], path, sets, ["-e", "exact"])
                with open(key, "w") as f:
                    json.dump(ex, f)
            flops = ex["flops"]
            for frac in fracs:
                rows = [run(args.tessel, SPECS[levels], path, sets,
                            ["-e", "stat", "--output-sample", str(frac), "--seed", str(s)])
                        for s in range(1, args.seeds + 1)]
                en = [rel(ex["nnz"], r["nnz"]) for r in rows]
                ez = [rel(ex["t"]["DRAM.Z"], r["t"]["DRAM.Z"]) for r in rows]
                ep = [rel(ex["t"]["PEB.Z"], r["t"]["PEB.Z"]) for r in rows] if levels > 1 else []
                inside = sum(abs(r["nnz"] - ex["nnz"]) <= 2 * r["se"] for r in rows)
                cover[frac][0] += inside
                cover[frac][1] += len(rows)
                errs.setdefault((frac, "nnz"), []).extend(en)
                errs.setdefault((frac, "DRAM Z"), []).extend(ez)
                errs.setdefault((frac, "PEB Z"), []).extend(ep)

                def show(v):
                    if not v:
                        return "-"
                    return "%+.2f / %+.2f %%" % (100 * statistics.mean(v),
                                                 100 * max(v, key=abs))
                print("%s | %d: %s | %g | %d | %s / %.2f %% | %d/%d | %s | %s" % (
                    name, levels, label, frac, ex["nnz"], show(en),
                    100 * statistics.pstdev(en), inside, len(rows), show(ez), show(ep)),
                    flush=True)
    for frac in fracs:
        print("fraction %g: within 2 SE %d of %d" % (frac, cover[frac][0], cover[frac][1]))
        for q in ("nnz", "DRAM Z", "PEB Z"):
            v = sorted(abs(x) for x in errs.get((frac, q), []))
            if v:
                print("  %-7s median %.2f %%  p95 %.2f %%  worst %.2f %%  (%d runs)" % (
                    q, 100 * statistics.median(v), 100 * v[min(len(v) - 1, int(0.95 * len(v)))],
                    100 * v[-1], len(v)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
