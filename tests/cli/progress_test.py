#!/usr/bin/env python3
"""One progress model for run, compare, map and sweep (issue 24 item 5).

With TESSEL_PROGRESS=1 the meter writes one line per update, so its model
can be checked without a terminal:

- every line reads "tessel CMD: DONE/TOTAL UNIT (P %), RATE UNIT/s, T s
  left", with the unit each command counts (run: levels walked; compare:
  rows; map and sweep: points);
- TOTAL never changes, DONE never goes back (it never restarts at 0) and
  the last line has DONE == TOTAL (map: the points of --max-points);
- with -q, or with standard error not a terminal and no TESSEL_PROGRESS,
  nothing is written;
- on a pseudo-terminal (no TESSEL_PROGRESS) a map that runs for a second
  redraws its line in place with carriage returns and erases it before the
  summary.

Inputs are the repository's examples/data, so it always runs.

  progress_test.py --tessel BIN
"""
import argparse
import os
import pty
import re
import select
import subprocess
import sys
import tempfile

from clitest import ROOT, check, failures

EXTENSOR = os.path.join(ROOT, "specs", "extensor.yaml")
MAPSPEC = os.path.join(ROOT, "examples", "sweep", "spmspm-llb.yaml")
SWEEP = os.path.join(ROOT, "examples", "sweep", "llb-sweep.yaml")
JAG = os.path.join(ROOT, "examples", "data", "jagmesh7.mtx.gz")
LINE = re.compile(r"^tessel (\w+): (\d+(?:\.\d)?)/(\d+) (\w+) \(\s*\d+ %\), ([\d.e+]+) (\w+)/s, "
                  r"(\d+) s left")


def run(tessel, args, forced=True):
    env = dict(os.environ)
    env.pop("TESSEL_PROGRESS", None)
    if forced:
        env["TESSEL_PROGRESS"] = "1"
    p = subprocess.run([tessel, *args], capture_output=True, text=True, env=env, timeout=600)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
        raise SystemExit(f"tessel {' '.join(args)} failed with status {p.returncode}")
    return p


def progress_lines(stderr, command):
    return [m for m in (LINE.match(l) for l in stderr.splitlines()) if m and m.group(1) == command]


def check_model(name, stderr, command, unit, total=None):
    lines = progress_lines(stderr, command)
    check(lines, f"{name}: progress lines in {stderr!r}")
    if not lines:
        return
    dones = [float(m.group(2)) for m in lines]
    totals = {int(m.group(3)) for m in lines}
    check({m.group(4) for m in lines} == {unit} and {m.group(6) for m in lines} == {unit},
          f"{name}: the unit is {unit}")
    check(len(totals) == 1, f"{name}: one total ({sorted(totals)})")
    check(all(b >= a for a, b in zip(dones, dones[1:])), f"{name}: done never goes back {dones}")
    check(dones[-1] == max(totals), f"{name}: the last line is complete ({dones[-1]} of {totals})")
    if total is not None:
        check(totals == {total}, f"{name}: total {total} ({sorted(totals)})")


def test_forced(tessel, tmp):
    p = run(tessel, ["run", EXTENSOR, "-T", "A=" + JAG, "-o", os.path.join(tmp, "run")])
    check_model("run", p.stderr, "run", "levels", total=2)  # LLB and PEB walked
    p = run(tessel, ["compare", EXTENSOR, "-T", "A=" + JAG, "--strategies",
                     "conservative,prescient", "-e", "both"])
    check_model("compare", p.stderr, "compare", "rows", total=4)
    p = run(tessel, ["map", MAPSPEC, "-t", "A=" + JAG, "--max-points", "40", "-o",
                     os.path.join(tmp, "m.yaml")])
    check_model("map", p.stderr, "map", "points", total=40)
    p = run(tessel, ["sweep", SWEEP, "-o", os.path.join(tmp, "sweep")])
    check_model("sweep", p.stderr, "sweep", "points", total=288)


def test_silent(tessel, tmp):
    p = run(tessel, ["run", EXTENSOR, "-T", "A=" + JAG, "-q", "-o", os.path.join(tmp, "q")])
    check(not progress_lines(p.stderr, "run"), f"run -q: no progress ({p.stderr!r})")
    p = run(tessel, ["compare", EXTENSOR, "-T", "A=" + JAG, "--strategies", "conservative",
                     "-q"])
    check(not progress_lines(p.stderr, "compare"), f"compare -q: no progress ({p.stderr!r})")
    p = run(tessel, ["compare", EXTENSOR, "-T", "A=" + JAG, "--strategies", "conservative"],
            forced=False)
    check("rows" not in p.stderr and "\r" not in p.stderr,
          f"compare, not a terminal: no progress ({p.stderr!r})")
    p = run(tessel, ["map", MAPSPEC, "-t", "A=" + JAG, "--max-points", "40", "-o",
                     os.path.join(tmp, "m2.yaml")], forced=False)
    check("points/s," not in p.stderr, f"map, not a terminal: no progress ({p.stderr!r})")


def test_terminal(tessel, tmp):
    """A map of about a second with standard error on a pseudo-terminal."""
    master, slave = pty.openpty()
    env = dict(os.environ)
    env.pop("TESSEL_PROGRESS", None)
    p = subprocess.Popen([tessel, "map", MAPSPEC, "-t", "A=" + JAG, "--search", "climb",
                          "--time-limit", "1.5", "-o", os.path.join(tmp, "m3.yaml")],
                         stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    check(p.wait(timeout=60) == 0, "map on a terminal exits 0")
    text = b"".join(chunks).decode(errors="replace")
    drawn = [s.strip() for s in text.split("\r") if LINE.match(s.strip())]
    check(drawn, f"map on a terminal draws its progress ({text!r})")
    check("\n" not in text.replace("\r\n", ""), f"map on a terminal redraws in place ({text!r})")
    check(text.rstrip(" ").endswith("\r"), f"the line is erased at the end ({text[-40:]!r})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        test_forced(args.tessel, tmp)
        test_silent(args.tessel, tmp)
        test_terminal(args.tessel, tmp)
    if failures:
        print(f"{len(failures)} failures")
        return 1
    print("progress: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
