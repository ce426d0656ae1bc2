#!/usr/bin/env python3
"""Rule 4's output spill under stat with a partial output sample, at nested narrow tiles
(issue 18 item 3, issue 20).

With the output sample capped at 5 % of the multiplies, an output tile's occupancy is
the weighted sum of its few sampled rows: unbiased but noisy, and the spill, a hinge of
the occupancy, turns the noise into bias (Jensen). At 8-row PE-buffer tiles the inner
level took the estimates as they were: PEB Z bytes came out 17x exact on the generated
graph below and +347 % on ca-CondMat at d2t2's winner. The estimates are now shrunk
toward the mean tile at every level, the noise measured from the rows drawn at random
only (src/model/stat_shrink.c).

Points, specs/extensor.yaml (IJK at both levels), stat with `--output-sample 0.05`,
seeds 1 and 2, against exact:
- a generated clustered graph (always): LLB i:128 with k and j whole, PEB i:8,k:16 and
  j:1024 or 2000, where exact spills at the PEB. Bound: PEB Z bytes at most +50 % over
  exact (the noise must not inflate the spill) and at least 10 % of exact. The second
  bound is loose on purpose: at j:2000 stat still reads 87 % low, because 5 % of the rows
  cannot show how much 8-row tiles differ (docs/models/stat.md).
- ca-CondMat at d2t2's winner (LLB i:128,j:23133,k:23133, PEB i:8,j:3584,k:16; skipped
  without ../shared/data): PEB Z bytes within 10 % of exact.

    python3 tests/cli/stat_spill_sample.py --tessel build-t/tools/tessel [--data ../shared/data]

Exit 0 when every bound holds, 1 otherwise.
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC = os.path.join(ROOT, "specs", "extensor.yaml")
GRAPH = ["clustered", "--size", "4000", "--cliques", "2500", "--tail", "1500", "--skew", "1.0",
         "--clique-max", "12", "--seed", "5"]
# (label, matrix key, LLB tile, PEB tile, (lowest, highest) PEB Z error)
POINTS = [
    ("gen PEB j:1024", "gen", "i:128,k:4000,j:4000", "i:8,k:16,j:1024", (-0.90, 0.50)),
    ("gen PEB j:2000", "gen", "i:128,k:4000,j:4000", "i:8,k:16,j:2000", (-0.90, 0.50)),
    ("ca-CondMat d2t2 winner", "ca-CondMat", "i:128,k:23133,j:23133", "i:8,k:16,j:3584",
     (-0.10, 0.10)),
]


def peb_z(tessel, path, llb, peb, extra, tmp):
    out = tempfile.mkdtemp(dir=tmp)
    cmd = [tessel, "run", SPEC, "-T", "A=" + path, "-q", "-o", out,
           "--set", "mapping.LLB.tile=" + llb, "--set", "mapping.PEB.tile=" + peb] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit("%s failed (%d): %s" % (" ".join(cmd), r.returncode, r.stderr))
    with open(os.path.join(out, "traffic.csv")) as f:
        for row in csv.DictReader(f):
            if row["level"] == "PEB" and row["tensor"] == "Z":
                return float(row["data_bytes"]) + float(row["metadata_bytes"]), float(
                    row["bumped_bytes"] or 0)
    raise SystemExit("no PEB Z row in " + out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", required=True)
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    args = ap.parse_args()
    fails, ran = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        mats = {"gen": os.path.join(tmp, "clustered.mtx")}
        subprocess.run([args.tessel, "gen"] + GRAPH + ["--pattern", "-o", mats["gen"]],
                       check=True, capture_output=True)
        man = os.path.join(args.data, "MANIFEST.tsv")
        if os.path.exists(man):
            with open(man) as f:
                for row in csv.DictReader(f, delimiter="\t"):
                    if row["name"] == "ca-CondMat":
                        mats["ca-CondMat"] = os.path.join(args.data, row["file"])
        for label, key, llb, peb, (lo, hi) in POINTS:
            if key not in mats:
                print("skipped (no %s): %s" % (man, label))
                continue
            ex, ex_bumped = peb_z(args.tessel, mats[key], llb, peb, ["-e", "exact"], tmp)
            if key == "gen" and ex_bumped <= 0:
                fails.append("%s: exact does not spill at the PEB: nothing is tested" % label)
            for seed in ("1", "2"):
                st, _ = peb_z(args.tessel, mats[key], llb, peb,
                              ["-e", "stat", "--output-sample", "0.05", "--seed", seed], tmp)
                e = (st - ex) / ex
                ran += 1
                print("%-24s seed %s: PEB Z exact %.0f, stat %.0f (%+.1f %%)" % (
                    label, seed, ex, st, 100 * e))
                if not lo <= e <= hi:
                    fails.append("%s seed %s: PEB Z %+.1f %% outside [%+.0f %%, %+.0f %%]" % (
                        label, seed, 100 * e, 100 * lo, 100 * hi))
    for f in fails:
        print("FAIL", f)
    print("%d runs: %d failures" % (ran, len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
