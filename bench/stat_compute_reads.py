#!/usr/bin/env python3
"""stat against exact on the compute's re-reads of overbooked inputs (rule 4, issue 20).

    python3 bench/stat_compute_reads.py --tessel build/tools/tessel [--data ../shared/data]
        [--before OTHER_TESSEL] [--quick]

At the innermost level the compute reads an overbooked tile again inside a use, in the
level's loop order (docs/semantics.md rule 4, "The compute's reads"): under IJK each row
of A once per non-empty column of B in its k band, under JKI each A(i, k) once per
nonzero of B's row k. exact counts these reads from the data; stat estimates them from its
statistics (src/model/stat_inspill.c). Points, Z = A*A:

- one level (bench/strategy/one-level.yaml, 4 KiB partitions for A and B) with tiles
  i:128,k:1024,j:128 under IJK and JKI, and untiled under IJK;
- two levels (specs/extensor.yaml) with LLB i:128,k:1000,j:1000 and PEB i:16,k:1000,j:1000,
  both IJK;

on generated clustered graphs (co-authorship-like, `tessel gen clustered`, three sizes
and skews, always) and on ca-GrQc and jagmesh7 from --data when present. Printed per
point: the bytes of A and B into the innermost level under exact and stat's relative
error (and --before's). Exit 1 when a relative error is above TOLERANCE (5 %).
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOLERANCE = 0.05
GRAPHS = [  # (name, tessel gen clustered arguments)
    ("clustered-2k", ["--rows", "2000", "--cols", "2000", "--cliques", "1500",
                      "--clique-max", "16", "--skew", "0.8", "--seed", "3"]),
    ("clustered-4k", ["--rows", "4000", "--cols", "4000", "--cliques", "3000",
                      "--clique-max", "24", "--skew", "1.0", "--tail", "800", "--seed", "7"]),
    ("clustered-6k-flat", ["--rows", "6000", "--cols", "6000", "--cliques", "5000",
                           "--clique-max", "12", "--skew", "0.3", "--seed", "11"]),
]
SHARED = ["ca-GrQc", "jagmesh7"]
ONE = "bench/strategy/one-level.yaml"
TWO = "specs/extensor.yaml"
POINTS = [  # (label, spec, innermost level, overrides)
    ("1 level IJK 128x1024x128", ONE, "LLB",
     {"mapping.LLB.tile": "i:128,k:1024,j:128", "mapping.LLB.order": "IJK"}),
    ("1 level JKI 128x1024x128", ONE, "LLB",
     {"mapping.LLB.tile": "i:128,k:1024,j:128", "mapping.LLB.order": "JKI"}),
    ("1 level IJK untiled", ONE, "LLB", {"mapping.LLB.order": "IJK"}),
    ("2 levels IJK/IJK, PEB i:16", TWO, "PEB",
     {"mapping.LLB.tile": "i:128,k:1000,j:1000", "mapping.PEB.tile": "i:16,k:1000,j:1000",
      "mapping.LLB.order": "IJK", "mapping.PEB.order": "IJK"}),
]


def run(tessel, spec, data, estimator, sets, out):
    """Bytes of A and B per level of one tessel run."""
    cmd = [tessel, "run", os.path.join(ROOT, spec), "-T", "A=" + data, "-e", estimator,
           "-q", "--no-timing", "-o", out]
    for k, v in sorted(sets.items()):
        cmd += ["--set", "%s=%s" % (k, v)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit("%s failed: %s" % (" ".join(cmd), r.stderr))
    got = {}
    with open(os.path.join(out, "traffic.csv")) as f:
        for row in csv.DictReader(f):
            got[(row["level"], row["tensor"])] = (float(row["data_bytes"]) +
                                                  float(row["metadata_bytes"]))
    return got


def rel(exact, est):
    return (est - exact) / exact if exact else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tessel", required=True)
    ap.add_argument("--before")
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--quick", action="store_true", help="the generated graphs only")
    a = ap.parse_args()
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        mats = []
        for name, args in GRAPHS:
            path = os.path.join(tmp, name + ".mtx")
            r = subprocess.run([a.tessel, "gen", "clustered", "-o", path] + args,
                               capture_output=True, text=True)
            if r.returncode:
                raise SystemExit("tessel gen %s failed: %s" % (name, r.stderr))
            mats.append((name, path))
        manifest = os.path.join(a.data, "MANIFEST.tsv")
        if not a.quick and os.path.exists(manifest):
            with open(manifest) as f:
                rows = {ln.split("\t")[0]: ln.split("\t")[1] for ln in f if "\t" in ln}
            mats += [(m, os.path.join(a.data, rows[m])) for m in SHARED if m in rows]
        elif not a.quick:
            print("skipped (no %s): %s" % (manifest, ", ".join(SHARED)))
        print("| matrix | point | tensor | exact bytes | stat | before |")
        print("|---|---|---|---|---|---|")
        for name, path in mats:
            for n, (label, spec, inner, sets) in enumerate(POINTS):
                d = os.path.join(tmp, "%s-%d" % (name, n))
                ex = run(a.tessel, spec, path, "exact", sets, d + "-x")
                st = run(a.tessel, spec, path, "stat", sets, d + "-s")
                bf = run(a.before, spec, path, "stat", sets, d + "-b") if a.before else None
                for t in "AB":
                    e, s = ex[(inner, t)], st[(inner, t)]
                    err = rel(e, s)
                    b = "%+.2f %%" % (100 * rel(e, bf[(inner, t)])) if bf else "-"
                    print("| %s | %s | %s %s | %.0f | %+.2f %% | %s |"
                          % (name, label, inner, t, e, 100 * err, b))
                    if abs(err) > TOLERANCE:
                        fails.append("%s, %s, %s %s: %+.2f %%" % (name, label, inner, t,
                                                                 100 * err))
                sys.stdout.flush()
    for f in fails:
        print("FAIL " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
