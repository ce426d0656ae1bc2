#!/usr/bin/env python3
"""D2T2 over Conservative on generated stand-ins of d2t2 Table 2's matrices (issue 21).

Usage: python3 bench/papers/d2t2_standins.py [--tessel PATH] [--work DIR] [--only A,Q,...]
                                             [--max-nnz N] [--markdown FILE]

None of the 19 SuiteSparse matrices of d2t2 Table 2 is in ../shared/data, and the shared
graphs are 3-16x smaller than Table 2's (ca-GrQc: 5,242 rows against 24,818-265,214), which
matters here: Conservative's tile is fixed by the buffer (128 x 128, d2t2 §3, §6), D2T2's and
Prescient's by the data, so their ratio grows with the matrix's extent over the buffer's.
This script generates one stand-in per Table 2 matrix with its rows and nonzeros (`tessel
gen`, seed 1, pattern): R-MAT (tessel's default a, b, c, d) for the 8 graphs (D, I, K, O, P,
Q, R, S: SNAP and Pajek networks), and `banded` for the 11 others (FEM, circuit, economic,
Markov chain), with bandwidth W = nonzeros per row and density 1 / 2 (so about 2W
nonzeros per row across the band; our choice, stated, not fitted). The stand-ins have the
paper's sizes and degrees, not the paper's structure.

Each runs D2T2's setup (bench/papers/specs/d2t2-pe-split.yaml, A x A^T, SpMSpM-ikj, exact):
Conservative as d2t2 §3 and §6 state it (fixed 128 x 128 tiles: "Extensor [13] uses a
128 x 128 size", "a target buffer of size 128KB"), Prescient and d2t2. It prints per matrix
the DRAM bytes, the ratios, and the share of Conservative's bytes that are Z's (rule 2: a
partial output tile written back and read back at every k step, which d2t2 §4.2.2 does not
charge: each partial tile is stored once, "accumulations across tiles are performed at the
main memory level", §6), the ratio with both rows' Z priced as d2t2 §4.2.2 stores it
(each step's partial tile once: both at Z's final nonzeros once, 12 B each, or both at one
20 B CSF entry per multiply plus 12 B per partial tile; claimlib.stored_once_z), then the
paper's "average" (arithmetic mean) and the geometric mean.
Standard library only. Exit 77 when tessel is missing.
"""
import argparse
import csv
import math
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from claimlib import stored_once_split  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC = os.path.join(ROOT, "bench", "papers", "specs", "d2t2-pe-split.yaml")
# d2t2 Table 2 (label, name, rows, nonzeros, graph?); the tensors T-W are not SpMSpM inputs.
TABLE2 = [
    ("A", "mc2depi", 525825, 2100225, False), ("B", "consph", 83334, 6010480, False),
    ("C", "rma10", 46835, 2329092, False), ("D", "sx-mathoverflow", 24818, 239978, True),
    ("E", "scircuit", 170998, 958936, False), ("F", "mac-econ-5000", 206500, 1273389, False),
    ("G", "shipsec1", 140874, 3568176, False), ("H", "pwtk", 217918, 11524432, False),
    ("I", "soc-sign-epinions", 131828, 841372, True), ("J", "cop20k_A", 121192, 2624331, False),
    ("K", "geom", 7343, 23796, True), ("L", "pdb1HYS", 36417, 4344765, False),
    ("M", "cant", 62451, 4007383, False), ("N", "bcsstk17", 10974, 428650, False),
    ("O", "email-EuAll", 265214, 420045, True), ("P", "amazon0302", 262111, 1234877, True),
    ("Q", "p2p-Gnutella31", 62586, 147892, True), ("R", "soc-Epinions1", 75888, 508837, True),
    ("S", "sx-askubuntu", 159316, 596933, True),
]
CONSERVATIVE_TILE = 128  # d2t2 §3 ("Extensor [13] uses a 128x128 size"), §6, Fig. 5 (T = 128)


def default_work(tessel):
    """The stand-ins' cache: `d2t2-standins` in the build directory of `tessel`
    (build/tools/tessel -> build/d2t2-standins), so a fresh clone generates them once and a
    `make clean` drops them."""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(tessel))),
                        "d2t2-standins")


def standin_name(entry, seed=1):
    """The cached file of a Table 2 entry: its name, rows, nonzeros, generator and seed, so
    that a changed entry or generator never reuses a stale file."""
    label, name, rows, nnz, graph = entry
    return "%s-%s-r%d-n%d-%s-s%d.tsl" % (label, name, rows, nnz,
                                         "rmat" if graph else "banded", seed)


def gen(args, rows, nnz, graph, out):
    if os.path.exists(out):
        return
    cmd = [args.tessel, "gen"]
    if graph:
        cmd += ["rmat", "--size", str(rows), "--nnz", str(nnz)]
    else:
        w = max(1, round(nnz / rows))
        cmd += ["banded", "--size", str(rows), "--bandwidth", str(w), "--density", "0.5"]
    # renamed when whole: an interrupted run leaves no half file behind
    tmp = out[:-len(".tsl")] + ".part.tsl"
    subprocess.run(cmd + ["--pattern", "--seed", "1", "-o", tmp], check=True,
                   capture_output=True)
    os.replace(tmp, out)


def compare(args, path, strategies, sets=()):
    cmd = [args.tessel, "compare", SPEC, "-T", "A=" + path, "-T", "B=A^T", "-f", "csv",
           "--no-timing", "-q", "-e", "exact", "--strategies", ",".join(strategies),
           "--set", "mapping.LLB.order=IKJ"]
    for s in sets:
        cmd += ["--set", s]
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(cmd + ["-o", d], check=True, capture_output=True)
        with open(os.path.join(d, "compare.csv")) as f:
            return {r["strategy"]: r for r in csv.DictReader(f)}


def run(args, path, sets=(), strategy=None):
    """One tessel run on D2T2's setup: (its summary row, stored_once_split's (total, Z's
    bytes, low, high))."""
    with tempfile.TemporaryDirectory() as d:
        cmd = [args.tessel, "run", SPEC, "-T", "A=" + path, "-T", "B=A^T", "-o", d,
               "--no-timing", "-e", "exact", "--set", "mapping.LLB.order=IKJ"]
        for x in sets:
            cmd += ["--set", x]
        if strategy:
            cmd += ["-S", strategy]
        subprocess.run(cmd, check=True, capture_output=True)
        with open(os.path.join(d, "traffic.csv")) as f:
            traffic = list(csv.DictReader(f))
        with open(os.path.join(d, "summary.csv")) as f:
            s = next(csv.DictReader(f))
    return s, stored_once_split(s, traffic)


def measure(args, entry):
    """One Table 2 stand-in (generated into args.work): a dict of its figures."""
    label, name, rows, nnz, graph = entry
    t = CONSERVATIVE_TILE
    cpu0 = children_cpu()
    path = os.path.join(args.work, standin_name(entry))
    gen(args, rows, nnz, graph, path)
    _, (c, z, clo, chi) = run(args, path, ["mapping.LLB.tile=i:%d,j:%d,k:%d" % (t, t, t)])
    ds, (d, _, dlo, dhi) = run(args, path, strategy="d2t2")
    p = float(compare(args, path, ["prescient"])["prescient"]["dram_bytes"])
    return {"label": label, "name": name, "rows": rows, "nnz": nnz, "graph": graph,
            "conservative": c, "z_share": z / c, "prescient": p, "d2t2": d,
            "d2t2_tiles": ds["tiles"], "cons": c / d, "presc": p / d, "low": clo / dlo,
            "high": chi / dhi, "cpu_s": children_cpu() - cpu0}


def children_cpu():
    """CPU seconds (user + system) of this process's finished children: the tessel runs."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def am(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def gm(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def summary_rows(results):
    """Means over all, the graphs and the banded stand-ins: (what, n, {figure: (arithmetic,
    geometric)})."""
    out = []
    for what, sel in (("all", lambda r: True), ("graphs", lambda r: r["graph"]),
                      ("banded", lambda r: not r["graph"])):
        rs = [r for r in results if sel(r)]
        out.append((what, len(rs), {k: (am([r[k] for r in rs]), gm([r[k] for r in rs]))
                                    for k in ("cons", "presc", "low", "high")}))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tessel", default=os.path.join(ROOT, "build", "tools", "tessel"))
    ap.add_argument("--work", help="where the generated stand-ins are cached (default: "
                    "d2t2-standins beside tessel's build directory, default_work)")
    ap.add_argument("--only", help="comma-separated Table 2 labels")
    ap.add_argument("--max-nnz", type=int, default=0, help="skip stand-ins with more nonzeros")
    ap.add_argument("--markdown", help="also write the table to this file")
    args = ap.parse_args()
    if not os.path.exists(args.tessel):
        print("tessel not found at %s" % args.tessel, file=sys.stderr)
        return 77
    args.work = args.work or default_work(args.tessel)
    os.makedirs(args.work, exist_ok=True)
    only = set(args.only.split(",")) if args.only else None
    lines = ["| label | stand-in of | rows | nonzeros | kind | Conservative 128 DRAM bytes | "
             "Z share | Prescient | d2t2 | d2t2 tiles | Cons / d2t2 | Presc / d2t2 | "
             "Cons / d2t2, both Z as d2t2 §4.2.2 |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    results = []
    for entry in TABLE2:
        if (only and entry[0] not in only) or (args.max_nnz and entry[3] > args.max_nnz):
            continue
        t0 = time.time()
        r = measure(args, entry)
        results.append(r)
        lines.append("| %s | %s | %d | %d | %s | %.0f | %.0f %% | %.0f | %.0f | %s | %.2fx | "
                     "%.2fx | %.2f-%.2fx |"
                     % (r["label"], r["name"], r["rows"], r["nnz"],
                        "graph (rmat)" if r["graph"] else "banded", r["conservative"],
                        100 * r["z_share"], r["prescient"], r["d2t2"], r["d2t2_tiles"],
                        r["cons"], r["presc"], r["low"], r["high"]))
        print(lines[-1], flush=True)
        print("  (%.0f s wall, %.1f s CPU)" % (time.time() - t0, r["cpu_s"]), file=sys.stderr,
              flush=True)
    for what, n, m in summary_rows(results):
        lines.append("| mean, %s (%d) | | | | | | | | | | %.2fx (geomean %.2fx) | %.2fx "
                     "(geomean %.2fx) | %.2f-%.2fx (geomean %.2f-%.2fx) |"
                     % (what, n, m["cons"][0], m["cons"][1], m["presc"][0], m["presc"][1],
                        m["low"][0], m["high"][0], m["low"][1], m["high"][1]))
        print(lines[-1])
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
