"""What every paper-claim script shares (issue 21): the Claim record, running tessel, verdicts,
printing a claim and writing the table of all claims.

A claim function takes the parsed arguments (tessel, data, matrices, quick) and returns a
Claim. Its `paper` and `tessel` figures share one unit, and `kind` says how they compare:
  "ratio"   a factor (2.6x): the direction is the side of 1, the magnitude ours / paper;
  "percent" a change in % (+26 %): the direction is the sign, the magnitude ours / paper;
  "range"   the paper gives a range [lo, hi]: holds when ours lies within [lo / 2, hi * 2]
            and on the same side of the neutral value (1) as the range.
Standard library only.
"""
import csv
import math
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Claim:
    def __init__(self, name, section, paper, unit, kind="ratio", quote=""):
        self.name, self.section, self.paper, self.unit = name, section, paper, unit
        self.kind, self.quote = kind, quote
        self.header, self.rows, self.tessel, self.verdict, self.notes = [], [], None, "", []
        # why the claim cannot hold where it does not, citing the paper by section (shown in
        # the table of all claims when the verdict is not "holds")
        self.why = ""

    def decide(self):
        self.verdict = verdict(self.paper, self.tessel, self.kind)
        return self


def verdict(paper, ours, kind="ratio"):
    """Direction first, then magnitude within 2x (issue 21's rule)."""
    if ours is None or (isinstance(ours, float) and math.isnan(ours)):
        return "not measured"
    if kind == "range":
        lo, hi = paper
        if (lo > 1) != (ours > 1):
            return "FAILS (direction)"
        return "holds" if lo / 2 <= ours <= hi * 2 else "direction only (outside 2x of the range)"
    neutral = 0.0 if kind == "percent" else 1.0
    if paper is None:  # the paper's figure is lost: the direction is all there is to check
        return "holds (direction)" if ours > neutral else "FAILS (direction)"
    if (paper > neutral) != (ours > neutral):
        return "FAILS (direction)"
    a, b = abs(paper - neutral), abs(ours - neutral)
    if kind == "ratio":  # compare factors, not their excess over 1
        a, b = paper if paper > 1 else 1 / paper, ours if ours > 1 else 1 / ours
    r = b / a if a else float("inf")
    return "holds" if 0.5 <= r <= 2 else "direction only (%.2fx the paper's magnitude)" % r


def cached(args, key, fn):
    """fn() once per key across the claims of one run (claims that share their runs)."""
    if key not in args.cache:
        args.cache[key] = fn()
    return args.cache[key]


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def matrix_path(data, name):
    for ext in (".mtx.gz", ".mtx"):
        p = os.path.join(data, "mtx", name + ext)
        if os.path.exists(p):
            return p
    return None


def available(args, names, claim):
    """(name, path) of the shared matrices present; the missing ones noted on the claim."""
    out = []
    for n in names:
        p = matrix_path(args.data, n)
        if p:
            out.append((n, p))
        else:
            claim.notes.append("%s: not in %s, skipped" % (n, args.data))
    return out


def tessel_cmd(args, cmd):
    """Runs tessel with cmd; its CompletedProcess, or RuntimeError with its error."""
    p = subprocess.run([args.tessel] + cmd, capture_output=True, text=True)
    if p.returncode not in (0,):
        raise RuntimeError("tessel %s: %s" % (" ".join(cmd), p.stderr.strip()[-400:]))
    return p


def micro_tile_sets(fmt, levels=("LLB",)):
    """--set overrides storing DRT's micro tiles in `fmt` at `levels`. tiled-csf is the DRT
    simulator's layout (its A_csf, B_csf: a CSF of the micro tiles; drt §2's tiled T-??UC
    and §4.1 Fig. 5's tiled-CSC in DRAM) for the inputs A and B; the output keeps the
    level's format (the drt strategy does not count an output's row segments)."""
    if fmt == "tiled-csf":
        return ["architecture.levels.%s.tensors.%s.format=tiled-csf" % (lv, t)
                for lv in levels for t in ("A", "B")]
    return ["architecture.levels.%s.format=%s" % (lv, fmt) for lv in levels]


def run(args, spec, matrix, sets=(), estimator="exact", strategy=None, tensors=()):
    """One `tessel run`: (stdout, summary row, traffic rows)."""
    with tempfile.TemporaryDirectory() as d:
        cmd = ["run", os.path.join(ROOT, spec), "-T", "A=" + matrix, "-o", d, "--no-timing",
               "-e", estimator]
        for t in tensors:
            cmd += ["-T", t]
        if strategy:
            cmd += ["-S", strategy]
        for s in sets:
            cmd += ["--set", s]
        p = tessel_cmd(args, cmd)
        with open(os.path.join(d, "summary.csv")) as f:
            summary = next(csv.DictReader(f))
        with open(os.path.join(d, "traffic.csv")) as f:
            traffic = list(csv.DictReader(f))
    return p.stdout, summary, traffic


def compare(args, spec, matrix, strategies, sets=(), estimator="exact", tensors=()):
    """`tessel compare` as {strategy: row} (rows of compare.csv, docs/outputs.md)."""
    cmd = ["compare", os.path.join(ROOT, spec), "-T", "A=" + matrix, "-f", "csv", "--no-timing",
           "-q", "--strategies", ",".join(strategies), "-e", estimator]
    for t in tensors:
        cmd += ["-T", t]
    for s in sets:
        cmd += ["--set", s]
    with tempfile.TemporaryDirectory() as d:
        tessel_cmd(args, cmd + ["-o", d])
        with open(os.path.join(d, "compare.csv")) as f:
            return {r["strategy"]: r for r in csv.DictReader(f)}


def fmt_value(c, x):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if c.kind == "percent":
        return "%+.1f %%" % x
    return "%.2f%s" % (x, c.unit)


def fmt_paper(c):
    if c.paper is None:
        return "faster (figure lost)"
    if c.kind == "range":
        return "%.2f-%.2f%s" % (c.paper[0], c.paper[1], c.unit)
    return fmt_value(c, c.paper)


def print_claim(c, out=None):
    w = out.write if out else (lambda s: print(s, end=""))
    w("\n## %s (%s)\n" % (c.name, c.section))
    if c.quote:
        w("> %s\n" % c.quote)
    if c.rows:
        widths = [max(len(str(x)) for x in col) for col in zip(c.header, *c.rows)]
        w("\n| " + " | ".join(h.ljust(n) for h, n in zip(c.header, widths)) + " |\n")
        w("|" + "|".join("-" * (n + 2) for n in widths) + "|\n")
        for r in c.rows:
            w("| " + " | ".join(str(x).ljust(n) for x, n in zip(r, widths)) + " |\n")
    w("\npaper: %s   tessel: %s   verdict: %s\n" % (fmt_paper(c), fmt_value(c, c.tessel),
                                                     c.verdict))
    if c.why:
        w("why: %s\n" % c.why)
    for n in c.notes:
        w("note: %s\n" % n)


def summary_table(claims):
    """One markdown row per claim: section, claim, paper, tessel, verdict, and why a claim
    that does not hold cannot (Claim.why)."""
    rows = ["| claim | section | paper | tessel | verdict | why not |",
            "|---|---|---|---|---|---|"]
    for c in claims:
        why = c.why if c.why and not c.verdict.startswith("holds") else ""
        rows.append("| %s | %s | %s | %s | %s | %s |" % (c.name, c.section, fmt_paper(c),
                                                         fmt_value(c, c.tessel), c.verdict, why))
    return "\n".join(rows) + "\n"


def stored_once_z(output_nnz, multiplies, partial_tiles, z_rule2, value=8, meta=4):
    """Bounds (low, high) of the output's bytes when each partial output tile is stored once,
    as d2t2 §4.2.2 sums the output traffic ("Summing this over the entire domain yields the
    total expected output traffic"; accumulations "at the main memory level", §6), against
    tessel's rule 2 (a partial tile written back with its partial sums and read back at the
    next step: z_rule2 bytes). Low: each final nonzero stored once (value and coordinate).
    High: one CSF entry per multiply (value, coordinate, and its own row's coordinate and
    segment) plus per partial tile its segment heads (three words), and never above z_rule2
    (a partial tile holds at most its own products, and rule 2 stores at least that)."""
    low = output_nnz * (value + meta)
    high = multiplies * (value + 3 * meta) + partial_tiles * 3 * meta
    return float(low), float(min(z_rule2, high))


def stored_once_split(summary, traffic, out="Z", level="LLB"):
    """A run's DRAM bytes as (total, the output's bytes under rule 2, total with the output
    stored once: low, high; stored_once_z) from its summary row and traffic rows; the partial
    tiles are the output's write-backs at `level`."""
    by = {(r["level"], r["tensor"]): r for r in traffic}
    z = float(by[("DRAM", out)]["data_bytes"]) + float(by[("DRAM", out)]["metadata_bytes"])
    total = float(summary["dram_bytes"])
    low, high = stored_once_z(float(summary["output_nnz"]), float(summary["flops"]),
                              float(by[(level, out)]["writebacks"]), z)
    return total, z, total - z + low, total - z + high
