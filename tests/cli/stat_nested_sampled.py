#!/usr/bin/env python3
"""The stat estimator's nested levels on a sample of level 1's i strips
(`--nested-budget`, src/model/stat_nested_sample.c) against the full closed form.

Z = A*A on a generated clustered graph (always) and on wiki-Vote (skipped when
../shared/data is absent), on specs/extensor.yaml (DRAM -> LLB -> PEB) and
bench/specs/extensor-3buf.yaml (a REG level below). Statistics are collected once per
matrix (--save-stats) and every run evaluates from them, as a sweep would. Checks:

- `--nested-budget 0` and no flag give the same files as each other (the full path);
- with a budget below the point's work, `stat_path` is `sampled` and tessel run says so
  (with the share of the strips and the standard error), the DRAM and LLB rows equal
  the full path's (boundary 1 is never sampled), and per inner (level, tensor) the bytes
  lie within BOUND_INPUT (A, B) or BOUND_OUTPUT (Z) of the full path's; the inner
  levels' total bytes lie within 4 reported standard errors plus 0.5 %;
- a budget above the point's work leaves the full path (`closed`, identical files).

    python3 tests/cli/stat_nested_sampled.py --tessel build-t/tools/tessel
        [--data ../shared/data] [--show]

Exit 0 when every check holds, 1 otherwise.
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile

SPECS = ["specs/extensor.yaml", "bench/specs/extensor-3buf.yaml"]
GRAPH = ["clustered", "--size", "6000", "--cliques", "5000", "--tail", "3000",
         "--skew", "0.9", "--clique-max", "16", "--seed", "3"]
# Measured (release build, this file's points): inputs within 0.4 %, Z within 1 % on
# wiki-Vote at 44 % of the work; see docs/models/stat.md for smaller shares, where Z's
# error reaches 10-26 % (few strips carry most of the output).
BOUND_INPUT = 0.04
BOUND_OUTPUT = 0.08
NOTE = re.compile(r"nested levels estimated from ([0-9.]+) % .* standard error of their "
                  r"bytes ([0-9.]+) %")


def run(args, spec, matrix, tsd, budget, out):
    cmd = [args.tessel, "run", spec, "-q", "--no-timing", "-o", out, "-T", "A=" + matrix,
           "--stats", tsd]
    if budget is not None:
        cmd += ["--nested-budget", str(budget)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(" ".join(cmd) + "\n" + r.stderr)
    with open(os.path.join(out, "summary.csv")) as f:
        summary = next(csv.DictReader(f))
    traffic = {}
    with open(os.path.join(out, "traffic.csv")) as f:
        for row in csv.DictReader(f):
            traffic[(row["level"], row["tensor"])] = (float(row["data_bytes"]) +
                                                      float(row["metadata_bytes"]))
    files = {}
    for name in ("summary.csv", "traffic.csv"):
        with open(os.path.join(out, name)) as f:
            files[name] = f.read()
    return summary, traffic, files, r.stderr


def check_matrix(args, tmp, name, matrix, budgets):
    failures = []
    for spec in SPECS:
        tag = "%s %s" % (name, os.path.basename(spec))
        tsd = os.path.join(tmp, name + "-" + os.path.basename(spec) + ".tsd")
        cmd = [args.tessel, "run", spec, "-q", "-o", os.path.join(tmp, "collect"), "-T",
               "A=" + matrix, "-e", "stat", "--base", "8x16", "--save-stats", tsd]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            raise SystemExit(" ".join(cmd) + "\n" + r.stderr)
        _, full, files0, _ = run(args, spec, matrix, tsd, 0, os.path.join(tmp, "full"))
        _, _, files_default, _ = run(args, spec, matrix, tsd, None, os.path.join(tmp, "dflt"))
        if files_default != files0:
            failures.append("%s: no flag differs from --nested-budget 0" % tag)
        s, big, files_big, _ = run(args, spec, matrix, tsd, 10 ** 15, os.path.join(tmp, "big"))
        if s["stat_path"] != "closed" or files_big != files0:
            failures.append("%s: a budget above the work changed the point" % tag)
        for budget in budgets:
            s, t, _, err = run(args, spec, matrix, tsd, budget, os.path.join(tmp, "smp"))
            m = NOTE.search(err)
            if s["stat_path"] != "sampled" or not m:
                failures.append("%s budget %d: not sampled (stat_path %s)" %
                                (tag, budget, s["stat_path"]))
                continue
            share, se = float(m.group(1)) / 100, float(m.group(2)) / 100
            inner_full = inner_smp = 0.0
            for key, exact in sorted(full.items()):
                est = t[key]
                if key[0] in ("DRAM", "LLB"):
                    if est != exact:
                        failures.append("%s budget %d: %s/%s %g != %g (boundary 1 changed)" %
                                        (tag, budget, key[0], key[1], est, exact))
                    continue
                inner_full += exact
                inner_smp += est
                err_rel = (est - exact) / exact if exact else (0.0 if est == 0 else 1.0)
                bound = BOUND_OUTPUT if key[1] == "Z" else BOUND_INPUT
                if args.show:
                    print("%s budget %d share %.3f: %s/%s %+.2f %%" %
                          (tag, budget, share, key[0], key[1], 100 * err_rel))
                if abs(err_rel) > bound:
                    failures.append("%s budget %d: %s/%s %+.2f %% beyond %.0f %%" %
                                    (tag, budget, key[0], key[1], 100 * err_rel, 100 * bound))
            tot = (inner_smp - inner_full) / inner_full
            if args.show:
                print("%s budget %d: inner total %+.2f %%, stderr %.2f %%" %
                      (tag, budget, 100 * tot, 100 * se))
            if abs(tot) > 4 * se + 0.005:
                failures.append("%s budget %d: inner bytes %+.2f %% beyond 4 x %.2f %% + 0.5 %%" %
                                (tag, budget, 100 * tot, 100 * se))
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tessel", required=True)
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--show", action="store_true")
    args = ap.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        graph = os.path.join(tmp, "clustered.mtx")
        r = subprocess.run([args.tessel, "gen"] + GRAPH + ["--pattern", "-o", graph],
                           capture_output=True, text=True)
        if r.returncode:
            raise SystemExit("tessel gen failed: " + r.stderr)
        failures += check_matrix(args, tmp, "gen-clustered", graph, [3000000])
        wiki = os.path.join(args.data, "mtx", "wiki-Vote.mtx.gz")
        if os.path.exists(wiki):
            failures += check_matrix(args, tmp, "wiki-Vote", wiki, [4000000])
        else:
            print("skipped wiki-Vote: no %s" % wiki)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
