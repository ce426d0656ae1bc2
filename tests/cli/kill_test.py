#!/usr/bin/env python3
"""Kill test: SIGKILL `tessel run` and `tessel stats --save` at many moments
and check that the files under their final names are never partial.

After every kill, each output file must be absent (or the old file, when one
was there before), or byte for byte the complete new file that an
uninterrupted run writes. Temporary files (NAME.tmp.XXXXXX) that a killed
process could not remove may remain; they never carry a final name.

`tessel run` renames traffic.csv and then summary.csv: a kill between the
two renames leaves a new traffic.csv beside the old (or no) summary.csv.
Such mixed pairs are counted and reported, not failed: no kill time can aim
at that window reliably, so a check would only make the test flaky.

The inputs are generated with `tessel gen` (seeded), so the test needs no
data directory. Kill times are fractions of an uninterrupted run's wall
time, measured first under the same load.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# Fractions of the measured run time at which to kill: spread over the
# whole run, denser near the end where the files are written and renamed.
RUN_FRACTIONS = [0.05, 0.35, 0.65, 0.82, 0.91, 0.96, 0.99, 1.03]
# `stats --save` writes a 2 MB file in its last tenth or so.
SAVE_FRACTIONS = [0.05, 0.4, 0.7, 0.8, 0.85, 0.88, 0.9, 0.92, 0.94, 0.96, 0.98, 1.0]


def read(path):
    with open(path, "rb") as f:
        return f.read()


def run_to_end(argv):
    start = time.monotonic()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit(f"FAIL: {' '.join(argv)} exited with {proc.returncode}:\n"
                 f"{proc.stderr.decode(errors='replace')}")
    return elapsed


def kill_at(argv, delay):
    """Starts argv, sends SIGKILL after `delay` seconds; True when it was killed."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        return True
    if proc.returncode != 0:
        sys.exit(f"FAIL: {' '.join(argv)} exited with {proc.returncode} before the kill")
    return False


class Checker:
    def __init__(self):
        self.failures = []
        self.killed = 0
        self.completed = 0
        self.leftovers = 0
        self.mixed = 0
        self.states = {}

    def check_dir(self, where, directory, expected, olds):
        """Files in `directory` with a name in `expected` (name -> new bytes)
        must equal the new bytes, or the old ones (`olds`: name -> bytes or
        None for no file). Other names must be temporaries."""
        if not os.path.isdir(directory):
            names = []
        else:
            names = sorted(os.listdir(directory))
        state = []
        for name in names:
            path = os.path.join(directory, name)
            if name in expected:
                data = read(path)
                if data == expected[name]:
                    state.append(f"{name}=new")
                elif olds.get(name) is not None and data == olds[name]:
                    state.append(f"{name}=old")
                else:
                    self.failures.append(
                        f"{where}: {name} is neither the old nor the complete new file "
                        f"({len(data)} bytes, new has {len(expected[name])})")
            elif ".tmp." in name and any(name.startswith(n + ".tmp.") for n in expected):
                self.leftovers += 1
            else:
                self.failures.append(f"{where}: unexpected file {name}")
        for name in expected:
            if name not in names:
                state.append(f"{name}=none")
                if olds.get(name) is not None:
                    self.failures.append(f"{where}: the old {name} is gone")
        news = sum(s.endswith("=new") for s in state)
        if 0 < news < len(expected):
            self.mixed += 1
        key = ", ".join(sorted(state))
        self.states[key] = self.states.get(key, 0) + 1


def reference(argv_for, out_files, prepare, ref_dir):
    """An uninterrupted run: its wall time and its files."""
    prepare(ref_dir)
    elapsed = run_to_end(argv_for(ref_dir))
    return elapsed, {f: read(os.path.join(ref_dir, f)) for f in out_files}


def self_test(tmp):
    """The checker must notice a partial file and a foreign name."""
    d = os.path.join(tmp, "self-test")
    os.makedirs(d)
    with open(os.path.join(d, "a.csv"), "wb") as f:
        f.write(b"x,y\n1,")
    with open(os.path.join(d, "a.csv.tmp.AbC123"), "wb") as f:
        f.write(b"x")
    c = Checker()
    c.check_dir("self-test", d, {"a.csv": b"x,y\n1,2\n"}, {"a.csv": b"x\n"})
    assert len(c.failures) == 1 and "neither" in c.failures[0], c.failures
    assert c.leftovers == 1
    os.remove(os.path.join(d, "a.csv"))
    c.check_dir("self-test", d, {"a.csv": b"x,y\n1,2\n"}, {"a.csv": b"x\n"})
    assert len(c.failures) == 2 and "gone" in c.failures[1], c.failures
    shutil.rmtree(d)


def scenario(name, argv_for, ref, prepare, olds, checker, work_dir, fractions):
    """Kills runs at `fractions` of the reference run's time."""
    elapsed, expected = ref
    for fraction in fractions:
        prepare(work_dir)
        if kill_at(argv_for(work_dir), fraction * elapsed):
            checker.killed += 1
        else:
            checker.completed += 1
        checker.check_dir(f"{name} killed at {fraction:.2f} x {elapsed:.2f} s", work_dir,
                          expected, olds)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tessel", required=True)
    ap.add_argument("--spec", default="specs/extensor.yaml")
    args = ap.parse_args()
    tessel = os.path.abspath(args.tessel)
    spec = os.path.abspath(args.spec)
    tmp = tempfile.mkdtemp(prefix="tessel-kill-")
    checker = Checker()
    self_test(tmp)
    try:
        # Inputs: a small R-MAT for `run` (the exact estimate takes most of
        # the time), a larger one for `stats --save` (a 16x16 base grid
        # with every tile sampled writes a file of about 2 MB).
        small = os.path.join(tmp, "small.mtx")
        large = os.path.join(tmp, "large.mtx")
        run_to_end([tessel, "gen", "rmat", "--size", "4000", "--nnz", "30000", "--seed", "3",
                    "-o", small])
        run_to_end([tessel, "gen", "rmat", "--size", "20000", "--nnz", "200000", "--seed", "3",
                    "-o", large])

        def run_argv(out, order="IJK"):
            return [tessel, "run", spec, "-q", "--no-timing", "--tensor", f"A={small}",
                    "--set", f"mapping.LLB.order={order}", "-o", out]

        files = ["traffic.csv", "summary.csv"]
        # The old results: another loop order, so old and new differ.
        old_dir = os.path.join(tmp, "old")
        run_to_end(run_argv(old_dir, "KIJ"))
        olds = {f: read(os.path.join(old_dir, f)) for f in files}

        def fresh(d):
            shutil.rmtree(d, ignore_errors=True)

        def with_old(d):
            shutil.rmtree(d, ignore_errors=True)
            shutil.copytree(old_dir, d)

        ref = reference(run_argv, files, fresh, os.path.join(tmp, "ref-run"))
        t_run = ref[0]
        scenario("run into a new directory", run_argv, ref, fresh, {}, checker,
                 os.path.join(tmp, "out1"), RUN_FRACTIONS)
        scenario("run over old results", run_argv, ref, with_old, olds, checker,
                 os.path.join(tmp, "out2"), RUN_FRACTIONS)

        def save_argv(d, seed="1"):
            return [tessel, "stats", large, "--save", os.path.join(d, "large.tstat"), "--tile",
                    "16", "--sample", "1", "--seed", seed, "--label", "large"]

        def stat_fresh(d):
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)

        old_stat_dir = os.path.join(tmp, "old-stat")
        stat_fresh(old_stat_dir)
        run_to_end(save_argv(old_stat_dir, "2"))
        old_stat = {"large.tstat": read(os.path.join(old_stat_dir, "large.tstat"))}

        def stat_old(d):
            shutil.rmtree(d, ignore_errors=True)
            shutil.copytree(old_stat_dir, d)

        ref = reference(save_argv, ["large.tstat"], stat_fresh, os.path.join(tmp, "ref-save"))
        t_save = ref[0]
        scenario("stats --save, no old file", save_argv, ref, stat_fresh, {}, checker,
                 os.path.join(tmp, "out3"), SAVE_FRACTIONS)
        scenario("stats --save over an old file", save_argv, ref, stat_old, old_stat, checker,
                 os.path.join(tmp, "out4"), SAVE_FRACTIONS)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"run takes {t_run:.2f} s, stats --save {t_save:.2f} s; "
          f"{checker.killed} runs killed, {checker.completed} finished first; "
          f"{checker.leftovers} temporary files left by killed runs; "
          f"{checker.mixed} mixed traffic/summary pairs")
    for state, n in sorted(checker.states.items()):
        print(f"  {n:3d} x {state}")
    for f in checker.failures:
        print(f"FAIL {f}")
    if checker.failures:
        return 1
    # Kills that all came after the end would test nothing.
    total = 2 * len(RUN_FRACTIONS) + 2 * len(SAVE_FRACTIONS)
    if checker.killed < total // 5:
        print(f"FAIL only {checker.killed} of {total} runs were killed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
