#!/usr/bin/env python3
"""The stat estimator against the exact one at 2 and 3 buffer levels, output sample
capped at 5 % of the multiplies (issue 18).

Where the output sample holds every multiply, stat equals exact by construction, so
this test caps it (`stat: {output_sample: 0.05}`) and checks that it really is partial
(some point's Z bytes differ from exact's; output_nnz_stderr is 0 when rule 3's count
gives every row's nonzeros, and the output nonzeros must then equal exact's). Z = A*A on a generated clustered graph (always)
and on two shared matrices (skipped when ../shared/data is absent), on
specs/extensor.yaml (DRAM -> LLB -> PEB) and bench/specs/extensor-3buf.yaml (a REG
level below), the orders IJK, IKJ and KIJ at every level and a mixed one, two tile
shapes per level count, plus one point whose LLB is small enough that output tiles
spill (rule 4 for outputs) at the DRAM boundary and one whose LLB overbooks A and B
(rule 4 for inputs, charged per read of the PEB).

Per (level, tensor) the relative error of the bytes into that level must lie in
BOUNDS (lower, upper). A and B at the DRAM boundary are exact in the closed form, so
their bounds are tight. The output side carries the sample's error. The nested input
side counts runs of tile uses split by outer loop digits and merged across
non-effectual iterations, inside and across outer tiles, so the inputs into the
innermost level are exact; at a middle level (PEB of 3) rule 4 is charged per use, not
per child read, hence a wider bound there. One that priced a spill as zero would
undercount Z. The output
nonzeros must lie within 4 standard errors of exact.

    python3 tests/cli/stat_nested_capped.py --tessel build-t/tools/tessel
        [--data ../shared/data] [--show]

Exit 0 when every bound holds, 1 otherwise; the shared matrices are skipped (named on
stdout) when --data has no MANIFEST.tsv, the generated graph always runs.
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPECS = {2: "specs/extensor.yaml", 3: "bench/specs/extensor-3buf.yaml"}
LEVELS = ["LLB", "PEB", "REG"]
# (orders per level, (i, k, j) per level): the points of each level count
POINTS = [
    ("IJK", [(128, 512, 512), (16, 32, 32), (8, 16, 16)]),
    ("IKJ", [(128, 512, 512), (16, 32, 32), (8, 16, 16)]),
    ("KIJ", [(256, 256, 256), (32, 32, 32), (16, 16, 16)]),
    ("IKJ", [(256, 256, 256), (32, 32, 32), (16, 16, 16)]),
    ("KIJ,IJK,IKJ", [(128, 512, 512), (16, 32, 32), (8, 16, 16)]),
    # issue 18's point (p2p-Gnutella24 there: PEB A +56 % before the input runs merged
    # across outer tiles): A's PEB tile is used in one run per LLB tile, and its runs
    # continue into the next LLB tile along j when nothing effectual lies between
    ("KIJ", [(64, 256, 512), (8, 32, 64), (8, 16, 32)]),
]
# rule 4 for outputs at the DRAM boundary: a 64 KiB LLB with Z's partition at 10 %
# (6.4 KiB) under 512x1024 output tiles that stay resident across k (IJK), so their
# partial results outgrow the partition. A and B get 45 % each, so that they fit (the
# OVERBOOK point below overbooks them).
SPILL = ("IJK", [(512, 256, 1024), (32, 32, 32), (16, 16, 16)],
         {"architecture.levels.LLB.capacity": "64KiB",
          "architecture.levels.LLB.tensors.Z.partition": "10%",
          "architecture.levels.LLB.tensors.A.partition": "45%",
          "architecture.levels.LLB.tensors.B.partition": "45%"})
GRAPH = ["clustered", "--size", "1200", "--cliques", "700", "--tail", "500",
         "--skew", "1.0", "--clique-max", "12", "--seed", "5"]
SHARED = ["jagmesh7", "p2p-Gnutella08"]
# (level, tensor) -> (lowest, highest) relative error of stat against exact
BOUNDS = {
    ("DRAM", "A"): (-1e-9, 1e-9), ("DRAM", "B"): (-1e-9, 1e-9), ("DRAM", "Z"): (-0.10, 0.10),
    ("LLB", "A"): (-1e-9, 1e-9), ("LLB", "B"): (-1e-9, 1e-9), ("LLB", "Z"): (-0.10, 0.10),
    ("PEB", "A"): (-0.01, 0.05), ("PEB", "B"): (-0.01, 0.05), ("PEB", "Z"): (-0.15, 0.20),
    ("REG", "A"): (-1e-9, 1e-9), ("REG", "B"): (-1e-9, 1e-9), ("REG", "Z"): (-0.15, 0.40),
    ("total", "DRAM"): (-0.08, 0.08),
}
# rule 4 for inputs at an inner level: the spill point's tiles with a 32 KiB LLB at the
# spec's split (A 5 %, B 45 %, Z 50 %), so A's and B's LLB tiles are overbooked and their
# bumped part is re-read by the PEB at every read (docs/semantics.md rule 4). Both
# estimators charge it per child read, stat from its per-tile fills (src/model/stat_bumped.c);
# charged per use instead, stat's DRAM A read 14x below exact here.
OVERBOOK = ("IJK", [(512, 256, 1024), (32, 32, 32), (16, 16, 16)],
            {"architecture.levels.LLB.capacity": "32KiB"})
# Since branch inspill the PEB (IJK) re-reads each row of an overbooked A tile per
# non-empty B column of its k band, stat's count estimated from the tiles (uniform spread
# over a tile's columns: +11 % on jagmesh7 at the PEB, cascaded to the LLB and DRAM).
# Since branch ijkread stat estimates it per column from the line counts and the base
# grid (docs/models/stat.md): jagmesh7 PEB A +9.16 %, LLB and DRAM A +9.55 %, the
# others within 0.1 %; a mesh column's nonzeros sit in consecutive k, which the
# per-column binomial spreads over more bands than they touch.
OVERBOOK_BOUNDS = {("DRAM", "A"): (-0.01, 0.10), ("DRAM", "B"): (-0.01, 0.10),
                   ("LLB", "A"): (-0.01, 0.10), ("LLB", "B"): (-0.01, 0.10),
                   ("DRAM", "Z"): (-0.10, 0.10), ("LLB", "Z"): (-0.10, 0.10),
                   ("PEB", "A"): (-0.05, 0.05), ("PEB", "B"): (-0.05, 0.05),
                   ("total", "DRAM"): (-0.08, 0.08)}
# the spill point: with a partial sample stat's output spill is biased high (README's
# limits; being fixed on branch strict), so Z's upper bound is wider there. Priced as
# zero, the spill would take Z 40-60 % below exact.
# At 3 levels its PEB input tiles (32x32) are overbooked at the PEB and re-read by the
# REG level, charged per child read by both estimators (stat_bumped.c).
# The inputs' bytes into the innermost buffer level (PEB at 2 levels, REG at 3) equal
# exact's: every run, merges inside and across outer tiles included, is counted
# (stat_nested.c, stat_nested_across.c). Before the merges across outer tiles, REG A was up
# to +174 % off here (p2p-Gnutella08, issue 18's point) and PEB A +2.3 %. At 3 levels the
# PEB inputs keep BOUNDS.
INNERMOST_INPUTS = (-1e-9, 0.10)  # the compute's re-reads are estimated (above)
# Issue 18's point: with a 5 % output sample Z's bytes into the inner levels read 16.7 %
# low on the clustered graph (output sample noise or bias, the output side's; a finding
# reported, not a gap of the input runs this point is here for).
ISSUE_POINT = len(POINTS) - 1
ISSUE_BOUNDS = {("PEB", "Z"): (-0.20, 0.20), ("REG", "Z"): (-0.20, 0.40)}
# Since branch outspill Z also spills at the update steps inside each LLB visit (the
# PEB's k tiles); since branch ordspill only inside the live part of the tile, which the
# PEB's IJK order makes one PEB output tile (docs/semantics.md rule 4, the order inside a
# tile), and between visits only when a visit holds a multiply (stat_visit_live). With the
# uniform-spread step estimate of the whole tile this point read Z +28.7 % and +29.2 %
# high on jagmesh7 (total DRAM +26.6 % and +24.7 %); measured now: jagmesh7 Z +1.05 %
# and -0.10 %, total DRAM +0.74 % and -0.05 %; over all three matrices Z -6.95 % to
# +1.05 %, total DRAM -6.59 % to +0.74 %.
SPILL_BOUNDS = {("DRAM", "Z"): (-0.10, 0.10), ("LLB", "Z"): (-0.10, 0.10),
                ("PEB", "A"): (-0.05, 0.05), ("PEB", "B"): (-0.05, 0.05),
                ("total", "DRAM"): (-0.08, 0.08)}


def sets(depth, orders, shape, extra=None):
    orders = orders.split(",")
    p = {}
    for lv in range(depth):
        i, k, j = shape[lv]
        p["mapping.%s.order" % LEVELS[lv]] = orders[min(lv, len(orders) - 1)]
        p["mapping.%s.tile" % LEVELS[lv]] = "i:%d,k:%d,j:%d" % (i, k, j)
    p.update(extra or {})
    return p


def sweep(tessel, tmp, tag, depth, estimator, data, points):
    path = os.path.join(tmp, tag + ".yaml")
    with open(path, "w") as f:
        f.write("spec: %s\nestimator: %s\n" % (os.path.join(ROOT, SPECS[depth]), estimator))
        if estimator == "stat":
            f.write("stat: {output_sample: 0.05}\n")
        f.write("data:\n  - %s\npoints:\n" % os.path.abspath(data))
        for p in points:
            f.write("  - {%s}\n" % ", ".join('%s: "%s"' % kv for kv in sorted(p.items())))
    out = os.path.join(tmp, tag)
    r = subprocess.run([tessel, "sweep", path, "-o", out, "-j", "2", "-q"],
                       capture_output=True, text=True)
    if r.returncode:
        raise SystemExit("tessel sweep %s (%s) failed: %s" % (tag, estimator, r.stderr))
    rows = {}
    with open(os.path.join(out, "summary.csv")) as f:
        for row in csv.DictReader(f):
            rows[row["point"]] = (row, {})
    with open(os.path.join(out, "traffic.csv")) as f:
        for row in csv.DictReader(f):
            rows[row["point"]][1][(row["level"], row["tensor"])] = (
                float(row["data_bytes"]) + float(row["metadata_bytes"]))
            if row["level"] == "LLB" and row["tensor"] == "Z":
                rows[row["point"]][1]["spill"] = float(row["overflow_bytes"] or 0)
            if row["level"] == "LLB" and row["tensor"] == "A":
                rows[row["point"]][1]["ob"] = float(row["bumped_bytes"] or 0)
    return [rows[k] for k in sorted(rows, key=int)]


def rel(exact, est):
    if exact == est:
        return 0.0
    return (est - exact) / exact if exact else float("inf")


def check_matrix(tessel, tmp, name, path, show):
    """Compares stat with exact on one matrix; returns the failures."""
    fails = []
    partial = False
    for depth in (2, 3):
        pts = [sets(depth, o, s) for o, s in POINTS] + [
            sets(depth, x[0], x[1], x[2]) for x in (SPILL, OVERBOOK)]
        labels = ["%s %s" % (o, "x".join(map(str, s[0]))) for o, s in POINTS] + [
            "%s %s, LLB %s" % (x[0], "x".join(map(str, x[1][0])), x[2]) for x in (SPILL, OVERBOOK)]
        tag = "%s-%d" % (name, depth)
        ex = sweep(tessel, tmp, tag + "-exact", depth, "exact", path, pts)
        st = sweep(tessel, tmp, tag + "-stat", depth, "stat", path, pts)
        for n, ((es, et), (ss, stt)) in enumerate(zip(ex, st)):
            where = "%s, %d levels, %s" % (name, depth, labels[n])
            if ss["stat_path"] != "closed":
                fails.append("%s: stat_path %s, not closed" % (where, ss["stat_path"]))
            se = float(ss["output_nnz_stderr"] or 0)
            enz, snz = float(es["output_nnz"]), float(ss["output_nnz"])
            if se <= 0 and snz != enz:
                fails.append("%s: output nonzeros %.0f with stderr 0, exact %.0f" % (
                    where, snz, enz))
            elif abs(snz - enz) > 4 * se:
                fails.append("%s: output nonzeros %.0f, exact %.0f, more than 4 stderr (%.0f)"
                             % (where, snz, enz, se))
            errs = {lt: rel(et[lt], stt[lt]) for lt in et if lt in BOUNDS}
            errs[("total", "DRAM")] = rel(float(es["dram_bytes"]), float(ss["dram_bytes"]))
            partial = partial or any(e != 0 for lt, e in errs.items() if lt[1] == "Z")
            if n == len(POINTS) and not (et["spill"] > 0 and stt["spill"] > 0):
                fails.append("%s: Z does not spill at the LLB (exact %.0f, stat %.0f overflow "
                             "bytes): the spill is not tested" % (where, et["spill"], stt["spill"]))
            if n == len(POINTS) + 1 and not (et["ob"] > 0 and stt["ob"] > 0):
                fails.append("%s: A is not overbooked at the LLB (exact %.0f, stat %.0f bumped "
                             "bytes): rule 4 per child read is not tested"
                             % (where, et["ob"], stt["ob"]))
            for lt, e in sorted(errs.items()):
                special = {len(POINTS): SPILL_BOUNDS, len(POINTS) + 1: OVERBOOK_BOUNDS}
                lo, hi = special.get(n, {}).get(lt, BOUNDS[lt])
                if n == ISSUE_POINT:
                    lo, hi = ISSUE_BOUNDS.get(lt, (lo, hi))
                if lt[0] == LEVELS[depth - 1] and lt[1] in "AB":
                    lo, hi = INNERMOST_INPUTS
                if not lo <= e <= hi:
                    fails.append("%s: %s %s bytes %+.3f %% outside [%+.1f %%, %+.1f %%] "
                                 "(exact %.0f, stat %.0f)" % (
                                     where, lt[0], lt[1], 100 * e, 100 * lo, 100 * hi,
                                     et.get(lt, float(es["dram_bytes"])),
                                     stt.get(lt, float(ss["dram_bytes"]))))
            if show:
                print("  %-40s nnz %+6.2f %% (%4.1f SE)  %s" % (
                    where, 100 * rel(enz, snz), abs(snz - enz) / se if se else 0,
                    " ".join("%s.%s %+.2f" % (lt[0], lt[1], 100 * e)
                             for lt, e in sorted(errs.items()) if e)))
    if not partial:
        fails.append("%s: Z equals exact at every point: the output sample covers the whole "
                     "output and nothing is tested" % name)
    return fails


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", required=True)
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--show", action="store_true", help="print every point's errors")
    args = ap.parse_args()
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        graph = os.path.join(tmp, "clustered.mtx")
        r = subprocess.run([args.tessel, "gen"] + GRAPH + ["--pattern", "-o", graph],
                           capture_output=True, text=True)
        if r.returncode:
            raise SystemExit("tessel gen failed: " + r.stderr)
        mats = [("gen-clustered", graph)]
        man = os.path.join(args.data, "MANIFEST.tsv")
        if os.path.exists(man):
            with open(man) as f:
                files = {row["name"]: row["file"] for row in csv.DictReader(f, delimiter="\t")}
            mats += [(m, os.path.join(args.data, files[m])) for m in SHARED]
        else:
            print("skipped (no %s): %s" % (man, ", ".join(SHARED)))
        for name, path in mats:
            fails += check_matrix(args.tessel, tmp, name, path, args.show)
    for f in fails:
        print("FAIL", f)
    print("%d matrices, 2 and 3 buffer levels, %d points each: %d failures" % (
        len(mats), 2 * (len(POINTS) + 2), len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
