#!/usr/bin/env python3
"""The exact estimator's streaming walk against the old one (issue 19
item 1): the same numbers bit for bit.

The old walk (every loop key of a boundary in memory at once) is kept behind
the estimator's option old_walk, `tessel run --exact-walk old` (hidden);
`--exact-chunk N` shrinks the streaming walk's chunk budget to N keys, so
small inputs cross many chunk boundaries (and values of the outermost loop
split by key range).

1. Every golden case (tests/cli/cases) under the old walk, and under the
   streaming walk with a chunk of 100,000 keys, must print its golden output (as
   the default streaming walk does in cli-golden): so each equals the other,
   byte for byte. The flags reach `tessel run` cases through walk_wrapper.py
   (run_golden.py's --wrapper); the other commands run unchanged. (Smaller chunks split the largest goldens' outermost values
   by key range, at a cost growing as keys^2 / chunk; the random specs below
   use chunks down to 1 key.)
2. Random specs: seeded random matrices (tessel gen), tile edges, loop
   orders, capacities, partitions, formats, skipping and gating on the
   3-level ExTensor spec (every second one with an outer-product LLB order,
   KIJ or KJI, and more often a per-rank or spilling output); traffic.csv and summary.csv of `tessel run -e
   exact` must be identical under both walks (the seconds column aside).

    walk_compare.py --tessel BIN --data DIR [--random N] [--seed S] [--skip-golden]

Run from the repository root. Exits 1 naming every difference.
"""
import argparse
import csv
import io
import os
import random
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(ROOT, "tests", "cli", "run_golden.py")
SPEC = os.path.join(ROOT, "specs", "extensor.yaml")
WRAPPER = os.path.join(ROOT, "tests", "cli", "walk_wrapper.py")
TIMING = {"seconds", "model_seconds"}


def wrapper_reaches_run(args, failures):
    """The wrapper's flags must reach tessel run: a bad value is refused."""
    p = subprocess.run([sys.executable, WRAPPER, "--exact-walk", "bogus", "--", args.tessel, "run",
                        SPEC, "-q", "-n"], capture_output=True, text=True, cwd=ROOT)
    if p.returncode == 0 or "--exact-walk" not in p.stderr:
        failures.append(f"walk_wrapper.py did not pass --exact-walk to tessel run: status "
                        f"{p.returncode}, {p.stderr[:300]}")


def golden(args, failures):
    """Each walk must reproduce every golden output."""
    wrapper_reaches_run(args, failures)
    for label, flags in [("old walk", ["--exact-walk", "old"]),
                         ("chunk 100000", ["--exact-chunk", "100000"])]:
        wrapper = " ".join(shlex.quote(w) for w in [sys.executable, WRAPPER] + flags + ["--"])
        p = subprocess.run([sys.executable, GOLDEN, "--tessel", args.tessel, "--data", args.data,
                            "--wrapper", wrapper], capture_output=True, text=True, cwd=ROOT)
        tail = p.stdout.strip().splitlines()[-1:] or [""]
        print(f"golden cases, {label}: {tail[0]}", flush=True)
        if p.returncode != 0:
            failures.append(f"golden cases differ under the {label}:\n{p.stdout[-4000:]}"
                            f"{p.stderr[-2000:]}")


def random_matrix(rng, tessel, path):
    size = rng.choice([64, 100, 257, 400])
    kind = rng.choice(["uniform", "rmat", "banded", "blockdiag"])
    cmd = [tessel, "gen", kind, "--size", str(size), "--seed", str(rng.randrange(1, 10**6)),
           "-o", path]
    if kind in ("uniform", "rmat"):
        cmd += ["--nnz", str(rng.randrange(size, size * 6))]
    elif kind == "banded":
        cmd += ["--bandwidth", str(rng.randrange(1, 12)), "--density", "0.5"]
    else:
        cmd += ["--block", str(rng.choice([4, 16, 50])), "--density", "0.3"]
    subprocess.run(cmd, check=True, capture_output=True)
    return size


def random_sets(rng, size, focus=False):
    """--set overrides: nested tiles, orders, capacities, formats, skipping.
    focus: the LLB's order outer-product (KIJ, KJI: the output tables by
    replayed row ranges), and often a per-rank or spilling output format."""
    sets = []
    edges = {}
    for x in "ikj":
        peb = rng.choice([2, 4, 8, 16, 32])
        llb = peb * rng.choice([1, 2, 4, 8, 64])
        edges[x] = (llb if llb < size or rng.random() < 0.8 else size * 2, peb)
    order = ["IJK", "IKJ", "KIJ", "JKI", "KJI", "JIK"]
    sets.append("mapping.LLB.tile=" + ",".join(f"{x}:{edges[x][0]}" for x in "ikj"))
    sets.append("mapping.PEB.tile=" + ",".join(f"{x}:{edges[x][1]}" for x in "ikj"))
    sets.append("mapping.LLB.order=" + rng.choice(["KIJ", "KJI"] if focus else order))
    sets.append("mapping.PEB.order=" + rng.choice(order))
    sets.append("LLB.capacity=" + rng.choice(["4KiB", "64KiB", "1MiB", "30MiB"]))
    sets.append("PEB.capacity=" + rng.choice(["512B", "4KiB", "32KiB"]))
    for lvl in ("LLB", "PEB"):
        if rng.random() < 0.4:
            sets.append(f"{lvl}.format=" + rng.choice(["coo", "csr", "bitmap", "rle", "uop-cp"]))
        if rng.random() < (0.6 if focus else 0.3):
            sets.append(f"{lvl}.tensors.Z.format=" + rng.choice(["[UOP, CP]", "[CP, CP]", "[UB, UB]"]))
        if rng.random() < 0.3:
            sets.append(f"{lvl}.tensors.A.format=" + rng.choice(["[UOP, CP]", "[CP, RLE]"]))
        r = rng.random()
        if r < 0.2:
            sets.append(f"{lvl}.tensors.B.skip_on=[]")
        elif r < 0.4:
            sets.append(f"{lvl}.tensors.A.skip_on=[]")
            sets.append(f"{lvl}.tensors.A.gate_on=[B]")
        if rng.random() < (0.6 if focus else 0.3):
            sets.append(f"{lvl}.tensors.Z.partition=" + rng.choice(["1%", "10%", "200B"]))
    return sets


def table(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return rows
    keep = [n for n, col in enumerate(rows[0]) if col not in TIMING]
    return [[r[n] for n in keep if n < len(r)] for r in rows]


def run_once(tessel, matrix, sets, out, flags):
    cmd = [tessel, "run", SPEC, "-q", "-e", "exact", "-T", f"A={matrix}", "-T", "B=A", "-o", out]
    for s in sets:
        cmd += ["--set", s]
    p = subprocess.run(cmd + flags, capture_output=True, text=True)
    result = {"status": p.returncode, "stderr": p.stderr}
    for name in ("traffic.csv", "summary.csv"):
        path = os.path.join(out, name)
        result[name] = table(path) if os.path.exists(path) else None
    return result


def random_specs(args, failures):
    rng = random.Random(args.seed)
    ran = ok = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(args.random):
            matrix = os.path.join(tmp, f"m{n}.mtx")
            size = random_matrix(rng, args.tessel, matrix)
            sets = random_sets(rng, size, focus=n % 2 == 1)
            chunk = str(rng.choice([1, 3, 17, 200, 100000]))
            old = run_once(args.tessel, matrix, sets, os.path.join(tmp, f"o{n}"),
                           ["--exact-walk", "old"])
            new = run_once(args.tessel, matrix, sets, os.path.join(tmp, f"n{n}"),
                           ["--exact-chunk", chunk])
            ran += 1
            ok += old["status"] == 0
            if old != new:
                failures.append(f"random spec {n} (seed {args.seed}, chunk {chunk}) differs: "
                                f"--set {' --set '.join(sets)}\n old: {old['status']} "
                                f"{old['stderr'][:300]}\n new: {new['status']} "
                                f"{new['stderr'][:300]}")
    print(f"random specs: {ran} compared, {ok} of them ran without an error")
    if ran and ok * 2 < ran:
        failures.append(f"only {ok} of {ran} random specs ran: the comparison tested too little")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tessel", required=True)
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--random", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--skip-golden", action="store_true")
    args = ap.parse_args()
    args.tessel = os.path.abspath(args.tessel)
    failures = []
    if not args.skip_golden:
        golden(args, failures)
    random_specs(args, failures)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
