#!/usr/bin/env python3
"""Rule 4's output spill at nested levels with a capped output sample (issue 18 item 3).

    python3 bench/output_spill.py [--tessel build/tools/tessel] [--data ../shared/data]
                                  [--out bench-out/output_spill] [--seeds 3]
                                  [--fractions default,0.05,0.01] [--points NAME,...]
                                  [--before OTHER_TESSEL]

Points where Z's tiles outgrow their partition at an inner level:
  - d2t2-condmat: d2t2's ca-CondMat winner on specs/extensor.yaml (LLB
    i:128,j:23133,k:23133, PEB i:4,j:23133,k:4, IJK);
  - g51-reg: tests/cli/nested_out_test.py's REG spill point (3 buffer levels);
  - clustered-4k: a `tessel gen clustered` graph of 4k vertices at PEB i:8,j:1024,k:16;
  - g51-llb: G51, IJK, LLB 256x1024x1024, PEB 32x64x64 (docs/models/stat.md);
  - clustered-8k, rmat-8k: generated graphs of 8k vertices (a clustered one with
    stronger skew, an R-MAT one of 64k draws) at PEB i:8,j:2048,k:16;
  - unseen-clustered-4k, unseen-clustered-6k, unseen-rmat-8k, unseen-rmat-4k: generated
    graphs with seeds not used while the prior was built (stop 26), to check that its
    figures hold on graphs it was not tuned on.
For each, exact once, then stat at each --fractions ("default" = the 2^19-multiply
sample) and seed: the relative error of the inner level's Z bytes (data + metadata)
and of its bumped bytes (the spill), mean and worst over seeds, and of total DRAM
bytes. With --before, each stat row is run with that binary too (a "before" row under
the same load and exact cache; exact runs with --tessel). Figures only, no pass/fail.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def ijk(levels):
    s = {"mapping.strategy": "fixed"}
    for lv, tile in levels:
        s["mapping.%s.order" % lv] = "IJK"
        s["mapping.%s.tile" % lv] = tile
    return s


# name -> (spec, matrix (shared name, "gen:" args or a path), inner level, --set pairs)
POINTS = {
    "d2t2-condmat": ("specs/extensor.yaml", "ca-CondMat", "PEB",
                     ijk([("LLB", "i:128,j:23133,k:23133"), ("PEB", "i:4,j:23133,k:4")])),
    "g51-reg": ("bench/specs/extensor-3buf.yaml", "examples/data/G51.mtx.gz", "REG",
                dict({"architecture.levels.REG.tensors.Z.partition": "512B",
                      "mapping.LLB.order": "IKJ", "mapping.PEB.order": "IKJ",
                      "mapping.REG.order": "IKJ", "mapping.PEB.tile": "i:8,k:64,j:64",
                      "mapping.REG.tile": "i:8,k:16,j:16"})),
    "clustered-4k": ("specs/extensor.yaml",
                     "gen:clustered --size 4096 --cliques 2600 --tail 1000 --skew 0.8 "
                     "--clique-max 16 --seed 4", "PEB",
                     ijk([("LLB", "i:256,j:4096,k:4096"), ("PEB", "i:8,j:1024,k:16")])),
    "g51-llb": ("specs/extensor.yaml", "examples/data/G51.mtx.gz", "PEB",
                ijk([("LLB", "i:256,k:1024,j:1024"), ("PEB", "i:32,k:64,j:64")])),
    "clustered-8k": ("specs/extensor.yaml",
                     "gen:clustered --size 8192 --cliques 5000 --tail 2000 --skew 0.9 "
                     "--clique-max 24 --seed 11", "PEB",
                     ijk([("LLB", "i:256,j:8192,k:8192"), ("PEB", "i:8,j:2048,k:16")])),
    "rmat-8k": ("specs/extensor.yaml", "gen:rmat --size 8192 --nnz 65536 --seed 5", "PEB",
                ijk([("LLB", "i:256,j:8192,k:8192"), ("PEB", "i:8,j:2048,k:16")])),
    "unseen-clustered-4k": ("specs/extensor.yaml",
                            "gen:clustered --size 4096 --cliques 2600 --tail 1000 --skew 0.8 "
                            "--clique-max 16 --seed 21", "PEB",
                            ijk([("LLB", "i:256,j:4096,k:4096"), ("PEB", "i:8,j:1024,k:16")])),
    "unseen-clustered-6k": ("specs/extensor.yaml",
                            "gen:clustered --size 6144 --cliques 4000 --tail 1500 --skew 0.85 "
                            "--clique-max 20 --seed 33", "PEB",
                            ijk([("LLB", "i:256,j:6144,k:6144"), ("PEB", "i:8,j:1536,k:16")])),
    "unseen-rmat-8k": ("specs/extensor.yaml", "gen:rmat --size 8192 --nnz 65536 --seed 17", "PEB",
                       ijk([("LLB", "i:256,j:8192,k:8192"), ("PEB", "i:8,j:2048,k:16")])),
    "unseen-rmat-4k": ("specs/extensor.yaml", "gen:rmat --size 4096 --nnz 40000 --seed 29", "PEB",
                       ijk([("LLB", "i:256,j:4096,k:4096"), ("PEB", "i:16,j:1024,k:16")])),
}


def run(tessel, spec, path, sets, extra, level):
    with tempfile.TemporaryDirectory() as out:
        cmd = [tessel, "run", os.path.join(ROOT, spec), "-T", "A=" + path, "-o", out, "-q"]
        for k, v in sorted(sets.items()):
            cmd += ["--set", "%s=%s" % (k, v)]
        r = subprocess.run(cmd + extra, capture_output=True, text=True)
        if r.returncode:
            raise SystemExit("%s failed: %s" % (" ".join(cmd + extra), r.stderr))
        with open(os.path.join(out, "summary.csv")) as f:
            s = next(csv.DictReader(f))
        z = None
        with open(os.path.join(out, "traffic.csv")) as f:
            for row in csv.DictReader(f):
                if row["level"] == level and row["tensor"] == "Z":
                    z = row
        return {"z": float(z["data_bytes"]) + float(z["metadata_bytes"]),
                "bumped": float(z["bumped_bytes"]), "dram": float(s["dram_bytes"])}


def rel(e, s):
    if e == s:
        return 0.0
    return (s - e) / e if e else float("inf")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", default="build/tools/tessel")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--out", default="bench-out/output_spill")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--fractions", default="default,0.05,0.01")
    ap.add_argument("--points", default="")
    ap.add_argument("--before", default="", help="another tessel binary to compare against")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    files = {}
    man = os.path.join(args.data, "MANIFEST.tsv")
    if os.path.exists(man):
        with open(man) as f:
            files = {r["name"]: r["file"] for r in csv.DictReader(f, delimiter="\t")}
    names = args.points.split(",") if args.points else list(POINTS)
    print("point | sample | exact Z / bumped | Z err mean / worst | bumped err mean / worst"
          " | DRAM err mean / worst")
    for name in names:
        spec, mat, level, sets = POINTS[name]
        if mat.startswith("gen:"):
            path = os.path.join(args.out, name + ".mtx")
            if not os.path.exists(path):
                subprocess.run([args.tessel, "gen"] + mat[4:].split() + ["--pattern", "-o", path],
                               check=True, capture_output=True)
        elif mat in files:
            path = os.path.join(args.data, files[mat])
        elif os.path.exists(os.path.join(ROOT, mat)):
            path = os.path.join(ROOT, mat)
        else:
            print("%s: skipped (no %s)" % (name, mat))
            continue
        key = os.path.join(args.out, name + "-exact.json")
        if os.path.exists(key):
            with open(key) as f:
                ex = json.load(f)
        else:
            ex = run(args.tessel, spec, path, sets, ["-e", "exact"], level)
            with open(key, "w") as f:
                json.dump(ex, f)
        for frac in args.fractions.split(","):
            extra = [] if frac == "default" else ["--output-sample", frac]
            for label, binary in ([("before", args.before)] if args.before else []) + [
                    ("after" if args.before else "", args.tessel)]:
                rows = [run(binary, spec, path, sets,
                            ["-e", "stat", "--seed", str(s)] + extra, level)
                        for s in range(1, args.seeds + 1)]
                cols = []
                for q in ("z", "bumped", "dram"):
                    e = [rel(ex[q], r[q]) for r in rows]
                    worst = max(e, key=abs)
                    cols.append("%+.1f %% / %+.1f %%" % (100 * sum(e) / len(e), 100 * worst))
                print("%s | %s%s | %.0f / %.0f | %s" % (
                    name, frac, " " + label if label else "", ex["z"], ex["bumped"],
                    " | ".join(cols)))
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
