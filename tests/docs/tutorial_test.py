#!/usr/bin/env python3
"""Runs every ```sh block of docs/tutorial.md, in order, as a user of a fresh
clone would (test `docs-tutorial`): in a scratch directory that holds the
repository's examples/, energy_tables/ and specs/ (symlinked) and the tessel
under test as build/tools/tessel. Each block must exit 0, and the files the
tutorial talks about must exist afterwards. Exit 77 when the binary is missing.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

EXPECT = ["mydesign/out/traffic.csv", "mydesign/out/summary.csv", "mydesign/big/summary.csv",
          "mydesign/kij/summary.csv", "mydesign/g51/summary.csv", "mydesign/sweep/summary.csv",
          "mydesign/sweep/pareto.csv", "mydesign/mapped.yaml", "mydesign/mapped-out/summary.csv",
          "mydesign/traffic.svg", "mydesign/roofline.svg", "mydesign/pareto.svg"]


def main():
    tessel, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if not os.access(tessel, os.X_OK):
        print(f"no tessel binary at {tessel}: skipped")
        return 77
    text = open(os.path.join(root, "docs", "tutorial.md"), encoding="utf-8").read()
    blocks = re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M)
    if not blocks:
        print("docs/tutorial.md: no sh blocks")
        return 1
    with tempfile.TemporaryDirectory(prefix="tessel-tutorial-") as tmp:
        for d in ("examples", "energy_tables", "specs"):
            os.symlink(os.path.join(root, d), os.path.join(tmp, d))
        os.makedirs(os.path.join(tmp, "build", "tools"))
        os.symlink(tessel, os.path.join(tmp, "build", "tools", "tessel"))
        for n, block in enumerate(blocks, 1):
            r = subprocess.run(["sh", "-e", "-c", block], cwd=tmp, capture_output=True,
                               text=True, timeout=600)
            if r.returncode != 0:
                print(f"docs/tutorial.md block {n} exited {r.returncode}:\n{block}\n"
                      f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}")
                return 1
        missing = [f for f in EXPECT if not os.path.isfile(os.path.join(tmp, f))]
        rows = sum(1 for _ in open(os.path.join(tmp, "mydesign/sweep/summary.csv")))
        if missing or rows != 73:
            print(f"missing after the tutorial: {missing}; sweep summary rows {rows} (want 73)")
            return 1
    print(f"docs/tutorial.md: {len(blocks)} blocks ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
