#!/usr/bin/env python3
"""A resolved spec is an input (issue 24 item 8): for every spec in specs/
and examples/specs/, `tessel spec S > R.yaml` then `tessel run R.yaml`
writes the same traffic.csv and summary.csv as `tessel run S`, under the
exact and the stat estimator. Specs that need data get the repository's
examples/data/jagmesh7.mtx.gz as A; those that cannot run on it are
skipped (and counted). Exit 77 when no spec could run.

  resolved_run.py --tessel BIN
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

from clitest import ROOT, check, failures

JAG = os.path.join(ROOT, "examples", "data", "jagmesh7.mtx.gz")


def tessel(binary, *args):
    return subprocess.run([binary, *args], capture_output=True, text=True, cwd=ROOT)


def same_files(a, b):
    for name in ("summary.csv", "traffic.csv"):
        with open(os.path.join(a, name), "rb") as x, open(os.path.join(b, name), "rb") as y:
            if x.read() != y.read():
                return False
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", required=True)
    args = ap.parse_args()
    specs = sorted(glob.glob(os.path.join(ROOT, "specs", "*.yaml")) +
                   glob.glob(os.path.join(ROOT, "examples", "specs", "*.yaml")))
    ran = skipped = 0
    with tempfile.TemporaryDirectory() as tmp:
        for spec in specs:
            name = os.path.basename(spec)
            for est in ("exact", "stat"):
                direct = os.path.join(tmp, f"{name}-{est}-direct")
                bind = ["--tensor", "A=" + JAG]
                p = tessel(args.tessel, "run", spec, *bind, "-e", est, "--no-timing", "-q",
                           "-o", direct)
                if p.returncode != 0:
                    bind = []
                    p = tessel(args.tessel, "run", spec, "-e", est, "--no-timing", "-q",
                               "-o", direct)
                if p.returncode != 0:
                    skipped += 1
                    continue
                resolved = os.path.join(tmp, f"{name}-{est}.yaml")
                s = tessel(args.tessel, "spec", spec, *bind, "-o", resolved)
                check(s.returncode == 0, f"tessel spec {name}: {s.stderr}")
                back = os.path.join(tmp, f"{name}-{est}-resolved")
                r = tessel(args.tessel, "run", resolved, "-e", est, "--no-timing", "-q", "-o",
                           back)
                check(r.returncode == 0, f"tessel run of {name}'s resolved spec: {r.stderr}")
                if r.returncode == 0:
                    check(same_files(direct, back),
                          f"{name} ({est}): the resolved spec gives the same files")
                ran += 1
    print(f"resolved specs: {ran} runs compared, {skipped} skipped")
    if failures:
        print(f"{len(failures)} failures")
        return 1
    return 0 if ran else 77


if __name__ == "__main__":
    sys.exit(main())
