#!/usr/bin/env python3
"""The per-template comparison table: every accelerator template on the shared matrices.

    python3 bench/template_table.py [--tessel build-rel/tools/tessel]
        [--data ../shared/data] [--estimator exact|stat|both] [--only NAME,...]
        [--matrices NAME,...] [--csv FILE] [-j N] [--before BIN [--before-root DIR]]

Run from the project root. For every `matrix` row of the data's MANIFEST.tsv it runs
`tessel run` once per configuration below (Z = A*A, or A*A^T when A is not square;
Sparsepipe: its iterative SpMV app on A) and prints, per configuration, the DRAM bytes and
DRAM / compulsory (compulsory: untiled in the backing store's format, rule 3), then the
geometric mean of DRAM / compulsory over the matrices that ran. With `--estimator both` the
exact row is followed by the stat estimator's relative error on the DRAM bytes.

A configuration that refuses a matrix (for instance a tile that cannot fit) prints the
first line of tessel's error instead of numbers; nothing is hidden from the table.

With `--before BIN` every configuration also runs with an older tessel binary, on the
specs of the checkout at `--before-root DIR` (default: this one; an older commit's specs
are its own, e.g. a `git worktree add --detach DIR COMMIT`), and a second table gives per
cell the DRAM bytes and ratio before -> after and the change of the DRAM bytes.
"""
import argparse
import concurrent.futures
import csv
import math
import os
import subprocess
import sys
import tempfile

# (column name, spec, extra `--set` overrides). Each spec names its template; see its
# header for the sources of its numbers.
CONFIGS = [
    ("ExTensor-N", "specs/extensor-n.yaml", []),
    ("ExTensor-P", "specs/extensor-p.yaml", []),
    ("ExTensor-OB", "specs/extensor-ob.yaml", []),
    ("ExTensor-DRT", "specs/extensor-drt.yaml", []),
    ("Gamma", "specs/gamma.yaml", []),
    ("OuterSPACE", "specs/outerspace.yaml", []),
    ("MatRaptor", "specs/matraptor.yaml", []),
    ("Sparsepipe", "specs/sparsepipe.yaml", []),
]


def matrices(data_dir):
    with open(os.path.join(data_dir, "MANIFEST.tsv"), newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["kind"] == "matrix":
                yield row["name"], os.path.join(data_dir, row["file"]), row["rows"] == row["cols"]


def run_one(tessel, config, path, square, estimator, root="."):
    name, spec, sets = config
    with tempfile.TemporaryDirectory(prefix="tessel-table-") as out:
        cmd = [os.path.abspath(tessel), "run", spec, "-q", "--no-timing", "-e", estimator,
               "-o", out, "--tensor", "A=" + os.path.abspath(path)]
        if spec != "specs/sparsepipe.yaml" and not square:
            cmd += ["--tensor", "B=A^T"]
        for s in sets:
            cmd += ["--set", s]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
        if proc.returncode != 0:
            lines = (proc.stderr or proc.stdout).strip().splitlines()
            return {"error": lines[0] if lines else "exit %d" % proc.returncode}
        with open(os.path.join(out, "summary.csv"), newline="") as f:
            row = next(csv.DictReader(f))
        return {"dram": float(row["dram_bytes"]), "compulsory": float(row["compulsory_bytes"])}


def ratio(r):
    return r["dram"] / r["compulsory"] if r.get("compulsory") else float("nan")


def print_before(results, mats, configs, estimator):
    """Per cell: DRAM MB and DRAM / compulsory before -> after, and the DRAM change."""
    print()
    print("Before -> after (%s estimator): DRAM MB (DRAM / compulsory), change of DRAM bytes"
          % estimator)
    print()
    print("| matrix | " + " | ".join(c[0] for c in configs) + " |")
    print("|---|" + "---|" * len(configs))
    logs = {c[0]: ([], []) for c in configs}
    for m in mats:
        cells = []
        for c in configs:
            b, a = results[(m[0], c[0], "before")], results[(m[0], c[0], estimator)]
            if "error" in b or "error" in a:
                cells.append("error: " + (b.get("error") or a.get("error"))[:60])
                continue
            logs[c[0]][0].append(math.log(ratio(b)))
            logs[c[0]][1].append(math.log(ratio(a)))
            change = 100 * (a["dram"] / b["dram"] - 1) if b["dram"] else 0.0
            cells.append("%.3f (%.2f×) -> %.3f (%.2f×), %s" % (
                b["dram"] / 1e6, ratio(b), a["dram"] / 1e6, ratio(a),
                "same" if a["dram"] == b["dram"] else "%+.2f %%" % change))
        print("| %s | %s |" % (m[0], " | ".join(cells)))
    print("| geometric mean of DRAM / compulsory | " + " | ".join(
        "%.2f× -> %.2f×" % (math.exp(sum(v[0]) / len(v[0])), math.exp(sum(v[1]) / len(v[1])))
        if v[0] else "-" for v in logs.values()) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", default="build-rel/tools/tessel")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--estimator", choices=["exact", "stat", "both"], default="exact")
    ap.add_argument("--only", help="comma-separated configuration names")
    ap.add_argument("--matrices", help="comma-separated matrix names")
    ap.add_argument("--csv", help="also write the numbers as CSV to this file")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--before", metavar="BIN", help="an older tessel to compare with")
    ap.add_argument("--before-root", metavar="DIR", default=".",
                    help="the checkout whose specs --before runs (default: this one)")
    args = ap.parse_args()

    configs = CONFIGS
    if args.only:
        wanted = args.only.split(",")
        configs = [c for c in CONFIGS if c[0] in wanted]
        unknown = set(wanted) - {c[0] for c in configs}
        if unknown:
            sys.exit("unknown configuration(s): %s (known: %s)" %
                     (", ".join(sorted(unknown)), ", ".join(c[0] for c in CONFIGS)))
    mats = list(matrices(args.data))
    if args.matrices:
        wanted = set(args.matrices.split(","))
        mats = [m for m in mats if m[0] in wanted]
    estimators = ["exact", "stat"] if args.estimator == "both" else [args.estimator]

    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.j)) as pool:
        for m in mats:
            for c in configs:
                for e in estimators:
                    jobs[(m[0], c[0], e)] = pool.submit(run_one, args.tessel, c, m[1], m[2], e)
                if args.before:
                    jobs[(m[0], c[0], "before")] = pool.submit(
                        run_one, args.before, c, m[1], m[2], estimators[0],
                        args.before_root)
        results = {k: f.result() for k, f in jobs.items()}

    first = estimators[0]
    print("DRAM bytes (MB) and DRAM / compulsory, %s estimator%s" %
          (first, "; stat: relative error of the DRAM bytes" if len(estimators) == 2 else ""))
    print()
    print("| matrix | " + " | ".join(c[0] for c in configs) + " |")
    print("|---|" + "---|" * len(configs))
    logs = {c[0]: [] for c in configs}
    for m in mats:
        cells = []
        for c in configs:
            r = results[(m[0], c[0], first)]
            if "error" in r:
                cells.append("error: " + r["error"][:60])
                continue
            q = ratio(r)
            logs[c[0]].append(math.log(q))
            cell = "%.3f (%.2f×)" % (r["dram"] / 1e6, q)
            if len(estimators) == 2:
                s = results[(m[0], c[0], "stat")]
                cell += " stat %s" % ("error" if "error" in s else "%+.1f %%" % (100 * (s["dram"] / r["dram"] - 1)))
            cells.append(cell)
        print("| %s | %s |" % (m[0], " | ".join(cells)))
    print("| geometric mean of DRAM / compulsory | " + " | ".join(
        "%.2f× (%d)" % (math.exp(sum(v) / len(v)), len(v)) if v else "-" for v in logs.values()) + " |")

    print()
    print("Each configuration runs its own spec's architecture and formats; compulsory bytes are")
    print("each input read once and the output written once, untiled, in the backing store's")
    print("format (rule 3).")
    if any(c[0] == "Sparsepipe" for c in configs):
        print("Sparsepipe runs its spec's app for all its iterations (specs/sparsepipe.yaml: PageRank,")
        print("10 iterations), against the compulsory bytes of one SpMV; `tessel run` prints its")
        print("baseline (A streamed every iteration) and the saving.")
    if args.before:
        print_before(results, mats, configs, estimators[0])
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["matrix", "configuration", "estimator", "dram_bytes", "compulsory_bytes", "error"])
            for (mname, cname, e), r in sorted(results.items()):
                w.writerow([mname, cname, e, r.get("dram", ""), r.get("compulsory", ""), r.get("error", "")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
