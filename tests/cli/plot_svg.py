#!/usr/bin/env python3
"""Every SVG that tessel plot produces must be well-formed XML.

Checks, with xml.etree.ElementTree:
  1. every SVG embedded in the golden cases tests/cli/cases/plot-*.case
     (the files they `cat`), so the expected outputs themselves are valid;
  2. every figure drawn afresh from the inputs in tests/plot/, including
     hostile text (markup, quotes, control characters, invalid UTF-8) and
     randomly generated field text, each drawn twice: the two outputs must
     be byte-identical.
Each document must have an <svg> root in the SVG namespace with a viewBox,
width and height. Exit 1 naming every failure.
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}svg"


def check_document(data, where, problems):
    try:
        root = ET.fromstring(data)
    except ET.ParseError as e:
        problems.append(f"{where}: not well-formed XML: {e}")
        return
    if root.tag != SVG:
        problems.append(f"{where}: root element is {root.tag}, not svg")
    for attr in ("viewBox", "width", "height"):
        if attr not in root.attrib:
            problems.append(f"{where}: <svg> lacks {attr}")


def golden_documents(cases_dir):
    """(name, bytes) of each SVG the plot cases show after '==> ... <=='."""
    for name in sorted(os.listdir(cases_dir)):
        if not (name.startswith("plot-") and name.endswith(".case")):
            continue
        with open(os.path.join(cases_dir, name), encoding="utf-8") as f:
            text = f.read()
        stdout = text.split("--- stdout\n", 1)[-1].split("--- stderr\n", 1)[0]
        parts = re.split(r"^==> (.*) <==\n", stdout, flags=re.M)
        for i in range(1, len(parts) - 1, 2):
            if parts[i].endswith(".svg"):
                yield f"{name} ({parts[i]})", parts[i + 1].encode("utf-8")


def hostile_field(rng):
    """Random bytes, CSV-quoted: markup, quotes, controls, broken UTF-8."""
    pieces = [b"<", b">", b"&", b'""', b"'", b"\x01", b"\x1f", b"\x7f", b"\xff", b"\xc3",
              b"\xe2\x82", b"\xed\xa0\x80", b"\xef\xbf\xbe", b"\xc3\xa9", b"\xf0\x9f\x98\x80",
              b"]]>", b"<!--", b"&amp;", b"\n", b"x", b" "]
    body = b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 40)))
    return b'"' + body + b'"'


def random_traffic(rng):
    lines = [b"design,workload,data,strategy,estimator,level,tensor,data_bytes,metadata_bytes"]
    levels, tensors = (hostile_field(rng), b"DRAM"), (b"Z", hostile_field(rng))
    for p in range(rng.randint(1, 5)):
        design = hostile_field(rng)
        for level in levels:
            for tensor in tensors:
                lines.append(b",".join([design, b"w", b"d%d" % p, b"s", b"e", level, tensor,
                                        b"%d" % rng.randint(0, 10**9), b"%d" % rng.randint(0, 99)]))
    return b"\n".join(lines) + b"\n"


def random_summary(rng):
    lines = [b"design,data,dram_bytes,flops,cycles,bound,compute_cycles,energy_pj"]
    for p in range(rng.randint(1, 12)):
        flops = rng.randint(1, 10**7)
        lines.append(b",".join([hostile_field(rng), hostile_field(rng),
                                b"%d" % rng.randint(1, 10**8), b"%d" % flops,
                                b"%d" % rng.randint(1, 10**7), rng.choice([b"DRAM", b"compute",
                                                                           hostile_field(rng)]),
                                b"%d" % max(1, flops // 64), b"%g" % rng.uniform(1, 1e9)]))
    return b"\n".join(lines) + b"\n"


def draw(tessel, args, out, problems):
    cmd = [tessel, "plot"] + args + ["-o", out]
    proc = subprocess.run(cmd, capture_output=True, check=False)
    if proc.returncode != 0:
        problems.append(f"{' '.join(cmd)}: exit {proc.returncode}: "
                        f"{proc.stderr.decode(errors='replace').strip()}")
        return None
    with open(out, "rb") as f:
        return f.read()


def draw_twice(tessel, args, tmp, problems):
    one = draw(tessel, args, os.path.join(tmp, "one.svg"), problems)
    two = draw(tessel, args, os.path.join(tmp, "two.svg"), problems)
    if one is None or two is None:
        return
    where = "tessel plot " + " ".join(args)
    if one != two:
        problems.append(f"{where}: two runs gave different bytes")
    check_document(one, where, problems)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tessel", required=True)
    ap.add_argument("--root", default=".", help="the project root (tests/ below it)")
    ap.add_argument("--seeds", type=int, default=20, help="random hostile inputs per figure")
    args = ap.parse_args()
    tessel = os.path.abspath(args.tessel)
    root = args.root
    problems = []
    golden = 0
    for where, data in golden_documents(os.path.join(root, "tests", "cli", "cases")):
        check_document(data, where, problems)
        golden += 1
    if golden == 0:
        problems.append("no SVG found in the plot-*.case files")

    plot = os.path.join(root, "tests", "plot")
    validate = os.path.join(root, "tests", "validate")
    fixed = [
        ["traffic", os.path.join(validate, "extensor-exact-traffic.csv")],
        ["traffic", os.path.join(plot, "sweep-traffic.csv"), "--metric", "energy_pj"],
        ["traffic", os.path.join(plot, "hostile-traffic.csv")],
        ["roofline", os.path.join(plot, "roofline-summary.csv")],
        ["roofline", os.path.join(plot, "hostile-summary.csv")],
        ["pareto", os.path.join(plot, "sweep-summary.csv"), "--x", "energy_pj", "--y", "cycles"],
        ["pareto", os.path.join(plot, "hostile-summary.csv"), "--x", "energy_pj", "--y",
         "cycles", "--log"],
        ["scatter", os.path.join(plot, "sweep-stat-summary.csv"),
         os.path.join(plot, "sweep-summary.csv")],
        ["scatter", os.path.join(plot, "hostile-traffic.csv"),
         os.path.join(plot, "hostile-traffic.csv"), "--metric", "data_bytes"],
        ["roofline", os.path.join(plot, "roofline-summary.csv"), "--title", "<&\"'>",
         "--size", "300x200"],
    ]
    rng = random.Random(2024)
    with tempfile.TemporaryDirectory() as tmp:
        for figure_args in fixed:
            draw_twice(tessel, figure_args, tmp, problems)
        traffic, summary = os.path.join(tmp, "traffic.csv"), os.path.join(tmp, "summary.csv")
        for _ in range(args.seeds):
            with open(traffic, "wb") as f:
                f.write(random_traffic(rng))
            with open(summary, "wb") as f:
                f.write(random_summary(rng))
            draw_twice(tessel, ["traffic", traffic], tmp, problems)
            draw_twice(tessel, ["roofline", summary], tmp, problems)
            draw_twice(tessel, ["pareto", summary, "--x", "energy_pj", "--y", "cycles"], tmp,
                       problems)
            draw_twice(tessel, ["scatter", summary, summary, "--metric", "cycles", "--key",
                                "design,data,bound"], tmp, problems)
    for p in problems:
        print(p)
    print(f"plot SVG: {golden} golden documents, {len(fixed)} fixed and {4 * args.seeds} random "
          f"figures; {'ok' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
