#!/usr/bin/env python3
"""The first stat point of a new nested geometry, before and after a change.

    python3 bench/nested_first.py --before OLD/tessel --after build/tools/tessel
                                  [--data ../shared/data] [--repeat 3] [--exact]
                                  [--matrices bcsstk16,wiki-Vote,ca-CondMat]
                                  [--after-args "--nested-formula"]

Per matrix and binary, in one invocation: specs/extensor.yaml (DRAM -> LLB -> PEB)
with statistics saved once at `--base 8x16` (`--save-stats`) and loaded (`--stats`), so
that a run's point is the first point of its geometry (each run is a new process with
an empty cache), as the first point of every geometry a map or a strategy visits.

- instr: callgrind's instructions inside tessel_model_stat_eval_cached (the whole point,
  boundary 1 and the nested boundary), one run under valgrind;
- wall: the run's model_seconds, best and median of --repeat runs (the shared machine's
  load makes single runs noisy);
- same: whether traffic.csv and summary.csv's counts are byte-identical between the two
  binaries (model_seconds excluded);
- with --exact, one `-e exact` run of the after binary, and exact / stat (best).

- with --exact, also the error of each binary's bytes into the nested level (PEB) per
  tensor against exact (A / B / Z, %);
- with --second, the cached point: a one-thread `tessel sweep` (statistics at --base
  8x16) of one point and one of two points of the same geometry (PEB value_bits 64, 32:
  the second prices the first's nested summary, stat_nested_cache.c); its instructions
  are the difference of the two sweeps' (callgrind, tessel_model_stat_eval_cached);
- --after-args: extra `tessel run` arguments of the after binary's evaluations (e.g.
  `--nested-formula`, the formula per tile shape against the full path of one binary:
  `--before build/tools/tessel --after build/tools/tessel --after-args=--nested-formula`).

Without --before, only the after binary is measured. Figures only, no pass/fail;
valgrind must be installed for the instruction counts (else they print as -).
"""
import argparse
import csv
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

SPEC = "specs/extensor.yaml"
# summary.csv columns that measure the run rather than the design
TIMING = {"seconds_wall", "model_seconds"}


def tessel_run(tessel, args, out):
    cmd = [tessel, "run", SPEC, "-q", "-o", out] + args
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(" ".join(cmd) + "\n" + r.stderr)
    with open(os.path.join(out, "summary.csv")) as f:
        summary = next(csv.DictReader(f))
    with open(os.path.join(out, "traffic.csv")) as f:
        traffic = f.read()
    return summary, traffic


def inner_bytes(traffic, level="PEB"):
    """{tensor: data + metadata bytes} at one level of a traffic.csv text."""
    out = {}
    for row in csv.DictReader(traffic.splitlines()):
        if row["level"] == level:
            out[row["tensor"]] = float(row["data_bytes"]) + float(row["metadata_bytes"])
    return out


def instructions(tessel, args, tmp):
    """Instructions inside tessel_model_stat_eval_cached, or None."""
    if not shutil.which("valgrind"):
        return None
    cg = os.path.join(tmp, "callgrind.out")
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + cg,
           "--toggle-collect=tessel_model_stat_eval_cached", tessel, "run", SPEC, "-q",
           "-o", os.path.join(tmp, "cg")] + args
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(" ".join(cmd) + "\n" + r.stderr)
    for line in r.stderr.splitlines():
        if "Collected :" in line:
            return int(line.split(":")[-1].strip().replace(",", ""))
    return None


def second_point(tessel, matrix, tmp):
    """Instructions of a point whose nested geometry an earlier point of the
    same sweep priced (the nested summary cache), or None."""
    if not shutil.which("valgrind"):
        return None
    total = []
    for values in ("[64]", "[64, 32]"):
        yaml = os.path.join(tmp, "second.yaml")
        with open(yaml, "w") as f:
            f.write("spec: %s\nestimator: stat\nstat: {base: 8x16}\ndata:\n  - %s\n"
                    "axes:\n  architecture.levels.PEB.value_bits: %s\n"
                    % (os.path.abspath(SPEC), os.path.abspath(matrix), values))
        cg = os.path.join(tmp, "callgrind.sweep")
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + cg,
               "--toggle-collect=tessel_model_stat_eval_cached", tessel, "sweep", yaml, "-q",
               "-j", "1", "--overwrite", "-o", os.path.join(tmp, "sweep")]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(" ".join(cmd) + "\n" + r.stderr)
        got = [int(line.split(":")[-1].strip().replace(",", ""))
               for line in r.stderr.splitlines() if "Collected :" in line]
        if not got:
            return None
        total.append(got[0])
    return total[1] - total[0]


def measure(tessel, matrix, tmp, repeat, extra=()):
    """One binary on one matrix: its own statistics, then the points."""
    os.makedirs(tmp, exist_ok=True)
    tsd = os.path.join(tmp, "stats.tsd")
    tessel_run(tessel, ["-e", "stat", "--base", "8x16", "-T", "A=" + matrix,
                        "--save-stats", tsd], os.path.join(tmp, "save"))
    args = ["-T", "A=" + matrix, "--stats", tsd] + list(extra)
    runs = [tessel_run(tessel, args, os.path.join(tmp, "run")) for _ in range(max(1, repeat))]
    times = [float(s["model_seconds"]) for s, _ in runs]
    summary, traffic = runs[0]
    counts = {k: v for k, v in summary.items() if k not in TIMING}
    return {
        "instr": instructions(tessel, args, tmp),
        "best": min(times),
        "median": statistics.median(times),
        "result": (counts, traffic),
        "path": summary.get("stat_path", ""),
    }


def fmt_instr(v):
    return "-" if v is None else "%.1f M" % (v / 1e6)


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", help="the tessel binary before the change")
    ap.add_argument("--after", default=os.path.join(here, "build", "tools", "tessel"))
    ap.add_argument("--data", default=os.path.join(here, "..", "shared", "data"))
    ap.add_argument("--matrices", default="bcsstk16,wiki-Vote,ca-CondMat")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--exact", action="store_true", help="also time -e exact (after binary)")
    ap.add_argument("--after-args", default="", help="extra run arguments of the after binary")
    ap.add_argument("--second", action="store_true",
                    help="also the instructions of a cached (second) point of the geometry")
    args = ap.parse_args()
    os.chdir(here)
    binaries = [("before", args.before)] if args.before else []
    binaries.append(("after", args.after))
    binary_of = dict(binaries)
    print("first point of a new geometry, %s, statistics loaded (--base 8x16); "
          "wall: model_seconds best / median of %d" % (SPEC, args.repeat))
    head = "%-12s %-7s %12s %11s %11s %7s" % ("matrix", "binary", "instr", "best ms",
                                             "median ms", "path")
    print(head + ("  %5s" % "same" if args.before else "") +
          ("  %9s %10s" % ("exact s", "exact/stat") if args.exact else "") +
          ("  %10s" % "2nd instr" if args.second else ""))
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.matrices.split(","):
            matrix = os.path.join(args.data, "mtx", name + ".mtx.gz")
            if not os.path.exists(matrix):
                print("%-12s missing (%s)" % (name, matrix))
                continue
            res = {}
            for label, binary in binaries:
                extra = args.after_args.split() if label == "after" else []
                res[label] = measure(binary, matrix, os.path.join(tmp, name + "-" + label),
                                     args.repeat, extra)
            ex = None
            if args.exact:
                s, ex_traffic = tessel_run(args.after, ["-e", "exact", "-T", "A=" + matrix],
                                           os.path.join(tmp, name + "-exact"))
                ex = float(s["model_seconds"])
                ex_peb = inner_bytes(ex_traffic)
            for label, _ in binaries:
                r = res[label]
                line = "%-12s %-7s %12s %11.2f %11.2f %7s" % (
                    name, label, fmt_instr(r["instr"]), r["best"] * 1e3, r["median"] * 1e3,
                    r["path"])
                if args.before:
                    line += "  %5s" % ("yes" if res["before"]["result"] == r["result"] else "NO")
                if ex is not None and label == "after":
                    line += "  %9.2f %10.0f" % (ex, ex / r["best"] if r["best"] > 0 else 0)
                elif ex is not None:
                    line += "  %9s %10s" % ("", "")
                if args.second:
                    sec = second_point(binary_of[label], matrix,
                                       os.path.join(tmp, name + "-" + label))
                    line += "  %10s" % ("-" if sec is None else "%.1f k" % (sec / 1e3))
                if ex is not None:
                    mine = inner_bytes(r["result"][1])
                    line += "  PEB vs exact " + " / ".join(
                        "%s %+.2f%%" % (t, 100 * (mine[t] - ex_peb[t]) / ex_peb[t])
                        for t in ("A", "B", "Z") if ex_peb.get(t))
                print(line)
            if args.before and res["before"]["instr"] and res["after"]["instr"]:
                print("%-12s ratio   %11.2fx %10.2fx" % (
                    name, res["before"]["instr"] / res["after"]["instr"],
                    res["before"]["best"] / res["after"]["best"] if res["after"]["best"] else 0))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
