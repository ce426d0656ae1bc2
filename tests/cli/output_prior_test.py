#!/usr/bin/env python3
"""Rule 4's output spill at a nested level with an output sample capped at 5 % and
1 % of the multiplies (issue 18 item 3; src/model/stat_nested_prior.c).

Before the prior, each sampled output tile was priced from its few sampled rows times
their weights, and the spill, a hinge of the occupancy, came out several times exact's.
Bounds (relative error of stat's bumped_bytes of Z at the inner level against exact's):

1. A generated clustered graph (`tessel gen clustered --size 8192 --cliques 5000 --tail
   2000 --skew 0.9 --clique-max 24 --seed 11`, not a shared matrix), specs/extensor.yaml,
   IJK, LLB i:256,j:8192,k:8192, PEB i:8,j:2048,k:16, 5 % sample, seeds 1-3: within
   CLUSTERED_TOL (measured -2.9 to -0.5 %; stop 25 -5.2 to -4.3 %, stop 23 -7.2 to
   +3.6 %; with partial tiles growing linearly in the products -25 to -28 %). Stop 24
   removed an over-charge of the spill between visits (a run's last visit with a
   multiply) that had offset the prior's low bias here: without the prior's floor on a
   visit's chance of a multiply (docs/models/stat.md, "Rule 4 inside a visit") it reads
   -17.5 %, failing.
2. ca-CondMat (../shared/data), d2t2's winner (LLB i:128,j:23133,k:23133, PEB
   i:4,j:23133,k:4, IJK), 5 % and 1 %, seeds 1-2: within CONDMAT_TOL (measured -6.6 to
   +0.7 %; stop 23 -6.9 to -21.9 %; with linear partial tiles -22 to -34 %, failing;
   before the prior +946 % and +1,406 % on average). The partial tiles follow a fill
   curve per stratum of the products, fitted from the sampled pairs' paths
   (docs/models/stat.md).
3. G51 (bundled), IJK, LLB i:256,k:1024,j:1024, PEB i:32,k:64,j:64: within G51_TOL at
   5 %, seeds 1-3 (measured -11.7 to -1.5 %; -24.8 to +3.2 % while the strata counted
   their pairs, failing; before the coverage split, with each
   band's prior split linearly over its pairs and capped at the tile's cells, +75 to
   +89 %), and within G51_NEAR at a 99 % sample, where the blend must follow the
   sample (measured 0.0 %; +29.8 % while the check on the prior's error measured the
   residuals' spread instead of the noise's and ignored the sample).
4. A second generated clustered graph (`tessel gen clustered --size 4096 --cliques 2600
   --tail 1000 --skew 0.8 --clique-max 16 --seed 4`), IJK, LLB i:256,j:4096,k:4096, PEB
   i:8,j:1024,k:16, 5 %, seeds 1-3: within CLUSTERED4K_TOL (measured -0.2 to +19.5 %).
   Its dense strata hold few sampled tile rows; while a stratum's fill curve and ratio
   counted their sampled pairs as independent evidence (several pairs of one tile row
   rest on its one drawn row), they followed that row's path and the spill read +0.9
   to +47.7 %, failing (docs/models/stat.md, "The strata's evidence").
5. A generated R-MAT graph (`tessel gen rmat --size 8192 --nnz 65536 --seed 5`), IJK,
   LLB i:256,j:8192,k:8192, PEB i:8,j:2048,k:16, 5 %, seeds 1-3: within RMAT_TOL
   (measured -3.7 to -2.2 %). The prior's path takes a visit's chance of a multiply as
   the whole sample's rule in expectation over its growth, 1 - (1 - h) e^-d; with the
   lower bound max(h, 1 - e^-d) it read -8.3 to -6.8 %, failing.
6. Statistics saved with a capped sample (.tsd version 3) give the same spill when read
   back (the rows' predictions travel with the file); the version-2 file in the fuzz
   corpus still evaluates a nested point (its spill from the sample alone).

Exits 77 (skip) when the bundled matrix is missing; the ca-CondMat part is skipped
(and said so) when ../shared/data is absent.
"""
import argparse
import csv
import os
import sys
import tempfile

from clitest import ROOT, check, failures, run

G51 = os.path.join(ROOT, "examples", "data", "G51.mtx.gz")
SPEC = os.path.join(ROOT, "specs", "extensor.yaml")
V2 = os.path.join(ROOT, "tests", "fuzz", "corpus", "statdata", "spmspm-clustered-v2.tsd")
CLUSTERED_TOL = 0.15
CONDMAT_TOL = 0.25
G51_TOL = 0.15
CLUSTERED4K_TOL = 0.25
RMAT_TOL = 0.05
G51_NEAR = 0.02
CLUSTERED = ["clustered", "--size", "8192", "--cliques", "5000", "--tail", "2000", "--skew",
             "0.9", "--clique-max", "24", "--seed", "11", "--pattern"]


def ijk(llb, peb):
    sets = []
    for k, v in (("mapping.strategy", "fixed"), ("mapping.LLB.order", "IJK"),
                 ("mapping.PEB.order", "IJK"), ("mapping.LLB.tile", llb),
                 ("mapping.PEB.tile", peb)):
        sets += ["--set", "%s=%s" % (k, v)]
    return sets


G51_SETS = ijk("i:256,k:1024,j:1024", "i:32,k:64,j:64")
CONDMAT_SETS = ijk("i:128,j:23133,k:23133", "i:4,j:23133,k:4")
CLUSTERED_SETS = ijk("i:256,j:8192,k:8192", "i:8,j:2048,k:16")
CLUSTERED4K = ["clustered", "--size", "4096", "--cliques", "2600", "--tail", "1000", "--skew",
               "0.8", "--clique-max", "16", "--seed", "4", "--pattern"]
CLUSTERED4K_SETS = ijk("i:256,j:4096,k:4096", "i:8,j:1024,k:16")
RMAT = ["rmat", "--size", "8192", "--nnz", "65536", "--seed", "5", "--pattern"]


def peb_z(out):
    with open(os.path.join(out, "traffic.csv")) as f:
        for r in csv.DictReader(f):
            if r["level"] == "PEB" and r["tensor"] == "Z":
                return r
    raise SystemExit("no PEB Z row in " + out)


def rel(exact, est):
    return (est - exact) / exact if exact else float("inf")


def spill_within(tessel, tmp, name, data, sets, fractions, seeds, tol):
    ex = os.path.join(tmp, name + "-x")
    run(tessel, "run", SPEC, "-q", "-o", ex, "-T", "A=" + data, *sets)
    bx = int(peb_z(ex)["bumped_bytes"])
    check(bx > 0, "%s: exact spills Z at the PEB (the test's premise)" % name)
    for frac in fractions:
        for seed in seeds:
            st = os.path.join(tmp, "%s-%s-%d" % (name, frac, seed))
            run(tessel, "run", SPEC, "-q", "-o", st, "-T", "A=" + data, *sets, "-e", "stat",
                "--output-sample", frac, "--seed", str(seed))
            bs = int(peb_z(st)["bumped_bytes"])
            e = rel(bx, bs)
            print("%s sample %s seed %d: PEB Z bumped exact %d stat %d (%+.1f %%)" % (
                name, frac, seed, bx, bs, 100 * e))
            check(abs(e) <= tol, "%s sample %s seed %d: PEB Z bumped %+.1f %% (bound %g)" % (
                name, frac, seed, 100 * e, tol))


def saved(tessel, tmp):
    a = os.path.join(tmp, "saved-a")
    tsd = os.path.join(tmp, "g51.tsd")
    run(tessel, "run", SPEC, "-q", "-o", a, "-T", "A=" + G51, *G51_SETS, "-e", "stat",
        "--output-sample", "0.05", "--save-stats", tsd)
    b = os.path.join(tmp, "saved-b")
    run(tessel, "run", SPEC, "-q", "-o", b, *G51_SETS, "--stats", tsd)
    za, zb = peb_z(a), peb_z(b)
    print("saved statistics: PEB Z bumped from the data %s, from the file %s" % (
        za["bumped_bytes"], zb["bumped_bytes"]))
    check(za["bumped_bytes"] == zb["bumped_bytes"] and za["data_bytes"] == zb["data_bytes"],
          "a version-3 .tsd prices the spill as the data did")
    c = os.path.join(tmp, "v2")
    p = run(tessel, "run", SPEC, "-q", "-o", c, "--stats", V2, ok=False)
    check(p.returncode == 0, "a version-2 .tsd evaluates a nested point (status %d: %s)" % (
        p.returncode, p.stderr.strip()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", required=True)
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    args = ap.parse_args()
    if not os.path.exists(G51):
        print("skipped: no %s" % G51)
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        gen = os.path.join(tmp, "clustered-8k.mtx")
        run(args.tessel, "gen", *CLUSTERED, "-o", gen)
        spill_within(args.tessel, tmp, "clustered-8k", gen, CLUSTERED_SETS, ["0.05"], [1, 2, 3],
                     CLUSTERED_TOL)
        gen4 = os.path.join(tmp, "clustered-4k.mtx")
        run(args.tessel, "gen", *CLUSTERED4K, "-o", gen4)
        spill_within(args.tessel, tmp, "clustered-4k", gen4, CLUSTERED4K_SETS, ["0.05"],
                     [1, 2, 3], CLUSTERED4K_TOL)
        rmat = os.path.join(tmp, "rmat-8k.mtx")
        run(args.tessel, "gen", *RMAT, "-o", rmat)
        spill_within(args.tessel, tmp, "rmat-8k", rmat, CLUSTERED_SETS, ["0.05"], [1, 2, 3],
                     RMAT_TOL)
        spill_within(args.tessel, tmp, "G51", G51, G51_SETS, ["0.05"], [1, 2, 3], G51_TOL)
        spill_within(args.tessel, tmp, "G51", G51, G51_SETS, ["0.99"], [1], G51_NEAR)
        condmat = os.path.join(args.data, "mtx", "ca-CondMat.mtx.gz")
        if os.path.exists(condmat):
            spill_within(args.tessel, tmp, "ca-CondMat", condmat, CONDMAT_SETS,
                         ["0.05", "0.01"], [1, 2], CONDMAT_TOL)
        else:
            print("ca-CondMat part skipped: no %s" % condmat)
        saved(args.tessel, tmp)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
