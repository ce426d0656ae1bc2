#!/usr/bin/env python3
"""tessel map: the exhaustive search finds the optimum that a tessel sweep
over the same space finds; the written spec reproduces the winner under
tessel run; climbing is deterministic for a seed; the time limit holds.

  map_test.py --tessel BIN
"""
import argparse
import csv
import itertools
import math
import os
import sys
import tempfile
import time

from clitest import ROOT, check, failures, run

SPEC = os.path.join(ROOT, "examples", "sweep", "spmspm-llb.yaml")
G51 = os.path.join(ROOT, "examples", "data", "G51.mtx.gz")
JAG = os.path.join(ROOT, "examples", "data", "jagmesh7.mtx.gz")


def summary_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def best_line(stdout):
    for line in stdout.splitlines():
        if line.startswith("best "):
            return float(line.split(":")[1])
    raise SystemExit("no 'best' line in: " + stdout)


def test_exhaustive_against_sweep(tessel, tmp):
    """G51: tiles {128, 256, 512, 1000}^3 x 6 orders = 384 points, no
    partition search: exhaustive map and a full sweep agree on the best."""
    out = os.path.join(tmp, "best.yaml")
    p = run(tessel, "map", SPEC, "-t", "A=" + G51, "--partition-step", "0", "-o", out)
    best = best_line(p.stdout)
    check("exhaustive search: 384 of 384 points" in p.stdout, "exhaustive over 384 points: "
          + p.stdout.splitlines()[0])
    edges = ["128", "256", "512", "1000"]
    tiles = [f'"i:{a},j:{b},k:{c}"' for a, b, c in itertools.product(edges, repeat=3)]
    orders = [",".join(o) for o in itertools.permutations("ijk")]
    sweep = os.path.join(tmp, "space.yaml")
    with open(sweep, "w") as f:
        f.write(f"spec: {SPEC}\ndata: [{G51}]\naxes:\n")
        f.write("  mapping.LLB.order: [" + ", ".join(f'"{o}"' for o in orders) + "]\n")
        f.write("  mapping.LLB.tile: [" + ", ".join(tiles) + "]\n")
    run(tessel, "sweep", sweep, "-o", os.path.join(tmp, "space"), "-q")
    rows = summary_rows(os.path.join(tmp, "space", "summary.csv"))
    check(len(rows) == 384, f"the sweep has the 384 points ({len(rows)})")
    sweep_best = min(float(r["energy_pj"]) for r in rows)
    check(abs(best - sweep_best) <= 1e-9 * sweep_best,
          f"map's exhaustive best {best!r} equals the sweep's minimum {sweep_best!r}")
    # the written spec is the winner's resolved spec (what tessel spec writes)
    with open(out) as f:
        text = f.read()
    check("\nlevels:\n" in text and "\nfile: " in text and "\narchitecture:" not in text,
          "tessel map -o writes the resolved spec")
    again = run(tessel, "spec", out).stdout
    check(again.split("\nlevels:", 1)[1] == text.split("\nlevels:", 1)[1],
          "tessel spec of the written spec gives its levels, mapping and strategy back")
    # the written spec runs as is and gives the winner's energy
    run(tessel, "run", out, "-e", "stat", "-q", "-o", os.path.join(tmp, "run"))
    got = float(summary_rows(os.path.join(tmp, "run", "summary.csv"))[0]["energy_pj"])
    check(abs(got - best) <= 1e-9 * best, f"tessel run of the written spec: {got!r} == {best!r}")


def test_climb(tessel, tmp):
    """jagmesh7 with partitions: 27,000 points, climbed from seeded starts."""
    outs = []
    for k in range(2):
        os.makedirs(os.path.join(tmp, f"c{k}"))
        out = os.path.join(tmp, f"c{k}", "climb.yaml")
        run(tessel, "map", SPEC, "-t", "A=" + JAG, "--search", "climb", "--seed", "5",
            "--max-points", "1500", "--objective", "edp", "-q", "-o", out)
        with open(out, "rb") as f:
            outs.append(f.read())
    check(outs[0] == outs[1], "the same seed gives the same mapping")
    p = run(tessel, "map", SPEC, "-t", "A=" + JAG, "--objective", "cycles", "--verify",
            "--max-points", "800", "-o", os.path.join(tmp, "v.yaml"))
    check("stat - exact:" in p.stdout, "--verify prints stat against exact")
    # --fit refuses overflowing points: in a 512 KiB LLB, A's 20 % (105 KB)
    # cannot hold the whole of G51 (11,818 nonzeros, 142 KB in csr); Z's 60 %
    # (315 KB) holds a dense 128x128 output tile (197 KB), so some points fit
    # (output tiles obey rule 4 too: at 24 % of 256 KiB none did)
    p = run(tessel, "map", SPEC, "-t", "A=" + G51, "--fit", "--partition-step", "0",
            "-s", "architecture.levels.LLB.capacity=512KiB",
            "-s", "architecture.levels.LLB.tensors.Z.partition=0.6",
            "-s", "architecture.levels.LLB.tensors.A.partition=0.2",
            "-s", "architecture.levels.LLB.tensors.B.partition=0.2",
            "-o", os.path.join(tmp, "fit.yaml"))
    first = p.stdout.splitlines()[0]
    check(" 0 refused" not in first and "or overflowing" in first,
          "--fit refuses the overflowing points: " + first)
    check("tile=i:1000,j:1000,k:1000" not in p.stdout, "--fit does not pick whole tiles")
    t0 = time.monotonic()
    run(tessel, "map", SPEC, "-t", "A=" + JAG, "--search", "random", "--time-limit", "1",
        "-q", "-o", os.path.join(tmp, "t.yaml"))
    took = time.monotonic() - t0
    check(took < 10, f"--time-limit 1 returns in time ({took:.1f} s with loading)")


def test_strategies(tessel, tmp):
    """--strategies: the strategy is one more coordinate; a strategy's
    points have no tile coordinates. Its best equals a sweep's over the
    same strategies, and the written spec reproduces it."""
    one = os.path.join(ROOT, "bench", "strategy", "one-level.yaml")
    out = os.path.join(tmp, "strat.yaml")
    p = run(tessel, "map", one, "-t", "A=" + JAG, "--strategies", "conservative,swiftiles,d2t2",
            "--keep-order", "--partition-step", "0", "--base", "16x16", "--objective",
            "dram_bytes", "-o", out, "--verify")
    check("exhaustive search: 3 of 3 points" in p.stdout, "three strategy points: "
          + p.stdout.splitlines()[0])
    best = best_line(p.stdout)
    sweep = os.path.join(tmp, "strat-sweep.yaml")
    with open(sweep, "w") as f:
        f.write(f"spec: {one}\ndata: [{JAG}]\nstat: {{base: 16x16}}\naxes:\n")
        f.write("  mapping.strategy: [conservative, swiftiles, d2t2]\n")
    run(tessel, "sweep", sweep, "-o", os.path.join(tmp, "strat-space"), "-q")
    rows = summary_rows(os.path.join(tmp, "strat-space", "summary.csv"))
    check(len(rows) == 3, f"the sweep has the 3 points ({len(rows)})")
    sweep_best = min(float(r["dram_bytes"]) for r in rows)
    check(best == sweep_best, f"map's best {best!r} equals the sweep's minimum {sweep_best!r}")
    run(tessel, "run", out, "-e", "stat", "--base", "16x16", "-q", "-o",
        os.path.join(tmp, "strat-run"))
    got = summary_rows(os.path.join(tmp, "strat-run", "summary.csv"))[0]
    check(float(got["dram_bytes"]) == best and got["strategy"] != "fixed",
          f"tessel run of the written spec: {got['dram_bytes']} == {best!r}, "
          f"strategy {got['strategy']}")
    check("stat - exact:" in p.stdout, "--verify prices the strategy's tiles exactly")
    p = run(tessel, "map", one, "--strategies", "conservative,swiftile", ok=False)
    check(p.returncode == 2 and "did you mean 'swiftiles'" in p.stderr,
          "a misspelt strategy: " + p.stderr)


def test_spatial(tessel, tmp):
    """--spatial (docs/map.md "Spatial splits"): A's rows hold 1, 1, 3, 1, 1, 1
    MACs over 2 PEs; {i: 2} and {k: 2} under three policies. The work queue
    over rows balances {4, 4}: stat's expected busiest of two N(4, 4) loads
    is 4 + 2/sqrt(pi); exact gives 4; blocked rows N(5, 5) against N(3, 3)."""
    spec = os.path.join(ROOT, "tests", "cli", "cases", "inputs", "spatial", "map.yaml")
    out = os.path.join(tmp, "spatial.yaml")
    common = ["--keep-order", "--keep-tiles", "--partition-step", "0", "--base", "1x1",
              "--objective", "cycles"]
    p = run(tessel, "map", spec, "--spatial", *common, "--verify", "-o", out)
    check("exhaustive search: 6 of 6 points" in p.stdout, "six spatial points: "
          + p.stdout.splitlines()[0])
    best = best_line(p.stdout)
    check(abs(best - (4 + 2 / math.sqrt(math.pi))) < 1e-6,
          f"the work queue over rows wins at 4 + 2/sqrt(pi): {best!r}")
    check("mapping.LLB.spatial=i:2" in p.stdout and "distribution=dynamic" in p.stdout,
          "the winner splits i under the work queue")
    check("exact  dram_bytes" in p.stdout and "cycles 4 (compute bound)" in p.stdout,
          "--verify: exact's busiest PE takes 4 cycles")
    run(tessel, "run", out, "-q", "--no-timing", "-o", os.path.join(tmp, "spatial-run"))
    got = summary_rows(os.path.join(tmp, "spatial-run", "summary.csv"))[0]
    check(float(got["spatial_cycles"]) == 4, "the written spec runs to 4 cycles (exact)")
    # the static policies only: blocked and round-robin tie at N(5,5) vs N(3,3)
    p = run(tessel, "map", spec, "--distributions", "blocked,static-round-robin", *common,
            "-o", os.path.join(tmp, "spatial-static.yaml"))
    check("exhaustive search: 4 of 4 points" in p.stdout, "--distributions restricts the "
          "policies: " + p.stdout.splitlines()[0])
    check(abs(best_line(p.stdout) - 5.399282456748484) < 1e-6,
          "blocked rows: the expected maximum of N(5, 5) and N(3, 3)")
    p = run(tessel, "map", spec, "--distributions", "queue", ok=False)
    check(p.returncode == 2 and "--distributions" in p.stderr, "a bad policy: " + p.stderr)


def test_errors(tessel, tmp):
    p = run(tessel, "map", SPEC, "-t", "A=" + G51, "--levels", "DRAM", ok=False)
    check(p.returncode == 2 and "backing" in p.stderr, "--levels DRAM refused: " + p.stderr)
    p = run(tessel, "map", SPEC, "--objective", "speed", ok=False)
    check(p.returncode == 2 and "--objective" in p.stderr, "bad objective: " + p.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tessel", required=True)
    args = ap.parse_args()
    tessel = os.path.abspath(args.tessel)
    with tempfile.TemporaryDirectory(prefix="tessel-map-test.") as tmp:
        test_exhaustive_against_sweep(tessel, tmp)
        test_climb(tessel, tmp)
        test_strategies(tessel, tmp)
        test_spatial(tessel, tmp)
        test_errors(tessel, tmp)
    print("map_test:", "FAILED" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
