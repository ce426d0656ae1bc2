#!/usr/bin/env python3
"""The stat estimator's output Z at nested boundaries against the exact one
(issues 18 and 20; src/model/stat_nested_out.c).

1. Rule 4 for Z at the innermost of 3 buffer levels: bench/specs/extensor-3buf.yaml
   on the bundled G51 with a REG level so small that Z's partial tiles outgrow
   their partition. Exact and stat (whole output sample, and a capped one) both
   report overflowing Z write-backs at REG; `--strict` fails (exit 2) under both;
   with the whole sample stat's spill bytes (overflow_bytes) are within
   SPILL_TOL of exact's (the steps inside a visit are estimated), REG Z bytes
   within ZBYTES_TOL, the worst tile equal, and the overflowing write-backs
   within WB_TOL. The capped sample's spill is biased high and only its
   detection is checked.
2. Runs that merge across non-effectual gaps: at 2 and 3 levels, orders and
   shapes where the coarse k blocks split Z's uses, stat's Z write-backs and
   updates at each nested level equal exact's (whole sample), and its Z bytes
   there are within BYTES_TOL; with the output sample capped at 5 % of the
   multiplies, within CAPPED_TOL. Counting every coarse k block as its own run
   (the old upper bound) misses these by 5-250 %, so the tolerances fail it.

Exits 77 (skip) when the bundled matrix is missing.
"""
import argparse
import csv
import os
import sys
import tempfile

from clitest import ROOT, check, failures, run

DATA = os.path.join(ROOT, "examples", "data", "G51.mtx.gz")
SPEC3 = os.path.join(ROOT, "bench", "specs", "extensor-3buf.yaml")
SPEC2 = os.path.join(ROOT, "specs", "extensor.yaml")
# whole sample: the spill between visits is exact's, the one inside visits an
# estimate (steps from the tiles' nonzeros, docs/models/stat.md "Rule 4 inside a
# visit"): measured -26.5 % on overflow_bytes. REG walks KIJ (outer product: the
# whole tile is live at every step, docs/semantics.md rule 4, the order inside a
# tile); under IKJ a REG row (at most 16 nonzeros, 200 B) never outgrows the 512 B
# partition, so only the visits' ends spill: exact 26,616 B, stat 23,810 B (-10.5 %;
# +62 % until stop 24, when a run's last visit with a multiply still spilled).
SPILL_TOL = 0.30
ZBYTES_TOL = 0.05
WB_TOL = 0.0        # whole sample: overflowing write-backs counted exactly
BYTES_TOL = 0.005   # whole sample, nested Z bytes
CAPPED_TOL = 0.10   # 5 % sample: the nonzeros per tile are estimated

# REG (3rd buffer) at 1 KiB: Z's partition is 512 B, a csr tile of 8x16 holds 39
# nonzeros before it overflows, and G51^2's densest 8x16 tiles hold more.
SPILL_SETS = ["--set", "architecture.levels.REG.tensors.Z.partition=512B"]
SPILL_SETS += [
              "--set", "mapping.LLB.order=IKJ", "--set", "mapping.PEB.order=IKJ",
              "--set", "mapping.REG.order=KIJ",
              "--set", "mapping.PEB.tile=i:8,k:64,j:64",
              "--set", "mapping.REG.tile=i:8,k:16,j:16"]


def traffic(out):
    rows = {}
    with open(os.path.join(out, "traffic.csv")) as f:
        for r in csv.DictReader(f):
            rows[(r["level"], r["tensor"])] = r
    return rows


def rel(exact, est):
    if exact == est:
        return 0.0
    return abs(est - exact) / exact if exact else float("inf")


def tessel_run(tessel, spec, sets, out, extra=(), ok=True):
    return run(tessel, "run", spec, "-q", "-o", out, "-T", "A=" + DATA, *sets, *extra, ok=ok)


def spill(tessel, tmp):
    ex = os.path.join(tmp, "spill-x")
    tessel_run(tessel, SPEC3, SPILL_SETS, ex)
    tx = traffic(ex)[("REG", "Z")]
    check(int(tx["overflow_bytes"]) > 0, "exact: Z overflows at REG (the test's premise)")
    for label, extra in (("whole", []), ("capped", ["--output-sample", "0.05"])):
        st = os.path.join(tmp, "spill-s-" + label)
        tessel_run(tessel, SPEC3, SPILL_SETS, st, ["-e", "stat"] + extra)
        ts = traffic(st)[("REG", "Z")]
        print("REG Z (%s sample): overflow_bytes exact %s stat %s; overflowing write-backs "
              "share exact %s stat %s; worst tile exact %s stat %s" % (
                  label, tx["overflow_bytes"], ts["overflow_bytes"], tx["overflow_tiles_share"],
                  ts["overflow_tiles_share"], tx["worst_tile_bytes"], ts["worst_tile_bytes"]))
        check(int(ts["overflow_bytes"]) > 0, "stat (%s sample): Z overflow at REG reported" % label)
        check(float(ts["overflow_tiles_share"]) > 0,
              "stat (%s sample): overflowing Z write-backs at REG" % label)
        check(int(ts["partition_bytes"]) == int(tx["partition_bytes"]),
              "stat (%s sample): Z partition at REG" % label)
        check(int(ts["worst_tile_bytes"]) <= int(tx["worst_tile_bytes"]) if label == "capped"
              else ts["worst_tile_bytes"] == tx["worst_tile_bytes"],
              "stat (%s sample): worst Z tile at REG" % label)
        if label == "capped":
            # a partial sample overstates the spill (a sampled row stands for
            # many, and the spill is convex in a tile's nonzeros): only the
            # detection is checked, the bias is reported (docs/models/stat.md "Output spill with a partial sample")
            continue
        check(rel(int(tx["overflow_bytes"]), int(ts["overflow_bytes"])) <= SPILL_TOL,
              "stat (whole sample): REG Z overflow_bytes within %g of exact" % SPILL_TOL)
        check(rel(float(tx["overflow_tiles_share"]), float(ts["overflow_tiles_share"])) <= WB_TOL,
              "stat (whole sample): REG Z overflowing write-back share within %g" % WB_TOL)
        zx = int(tx["data_bytes"]) + int(tx["metadata_bytes"])
        zs = int(ts["data_bytes"]) + int(ts["metadata_bytes"])
        check(rel(zx, zs) <= ZBYTES_TOL,
              "stat (whole sample): REG Z bytes %d within %g of exact %d" % (zs, ZBYTES_TOL, zx))
    for est in (["-e", "exact"], ["-e", "stat"]):
        p = tessel_run(tessel, SPEC3, SPILL_SETS, os.path.join(tmp, "strict"),
                       est + ["--strict"], ok=False)
        check(p.returncode == 2, "%s --strict: a nested Z overflow is exit 2 (got %d)" % (
            est[1], p.returncode))


# (spec, levels, order per level, tiles per level): points whose nested Z runs
# merge across coarse k blocks with only non-effectual iterations between them
MERGE_POINTS = [
    (SPEC2, ["LLB", "PEB"], "IKJ", ["i:64,k:256,j:256", "i:8,k:16,j:16"]),
    (SPEC2, ["LLB", "PEB"], "KIJ", ["i:128,k:128,j:128", "i:8,k:16,j:16"]),
    (SPEC2, ["LLB", "PEB"], "IJK", ["i:64,k:256,j:256", "i:8,k:16,j:64"]),
    (SPEC3, ["LLB", "PEB", "REG"], "IKJ",
     ["i:128,k:256,j:256", "i:16,k:32,j:32", "i:8,k:16,j:16"]),
    (SPEC3, ["LLB", "PEB", "REG"], "KIJ",
     ["i:256,k:256,j:256", "i:32,k:32,j:32", "i:16,k:16,j:16"]),
]


def merges(tessel, tmp):
    for n, (spec, levels, order, tiles) in enumerate(MERGE_POINTS):
        sets = []
        for lv, t in zip(levels, tiles):
            sets += ["--set", "mapping.%s.order=%s" % (lv, order),
                     "--set", "mapping.%s.tile=%s" % (lv, t)]
        exact = os.path.join(tmp, "m%d-x" % n)
        tessel_run(tessel, spec, sets, exact)
        ex = traffic(exact)
        whole = os.path.join(tmp, "m%d-s" % n)
        tessel_run(tessel, spec, sets, whole, ["-e", "stat"])
        capped = os.path.join(tmp, "m%d-c" % n)
        tessel_run(tessel, spec, sets, capped, ["-e", "stat", "--output-sample", "0.05"])
        sw, sc = traffic(whole), traffic(capped)
        where = "%s %s %s" % (os.path.basename(spec), order, "/".join(tiles))
        for lv in levels[1:]:
            x, s, c = ex[(lv, "Z")], sw[(lv, "Z")], sc[(lv, "Z")]
            print("%s %s Z write-backs exact %s stat %s; updates exact %s stat %s" % (
                where, lv, x["writebacks"], s["writebacks"], x["updates"], s["updates"]))
            check(x["writebacks"] == s["writebacks"], "%s %s: Z write-backs" % (where, lv))
            check(x["updates"] == s["updates"], "%s %s: Z updates" % (where, lv))
            check(x["writebacks"] == c["writebacks"], "%s %s: Z write-backs (capped)" % (where, lv))
            bx = int(x["data_bytes"]) + int(x["metadata_bytes"])
            bs = int(s["data_bytes"]) + int(s["metadata_bytes"])
            bc = int(c["data_bytes"]) + int(c["metadata_bytes"])
            check(rel(bx, bs) <= BYTES_TOL, "%s %s: Z bytes %d vs exact %d" % (where, lv, bs, bx))
            check(rel(bx, bc) <= CAPPED_TOL,
                  "%s %s: Z bytes (capped sample) %d vs exact %d" % (where, lv, bc, bx))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", required=True)
    args = ap.parse_args()
    if not os.path.exists(DATA):
        print("skipped: no %s" % DATA)
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        spill(args.tessel, tmp)
        merges(args.tessel, tmp)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
