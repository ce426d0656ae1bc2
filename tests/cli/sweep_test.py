#!/usr/bin/env python3
"""tessel sweep / merge: same bytes whatever the threads, the memo, the
shards or the interruptions.

  sweep_test.py --tessel BIN

On tests/sweep/small.yaml (bundled matrices only) it checks that
  * -j 1, -j 2 and -j 3 write identical summary.csv, traffic.csv, pareto.csv
    and sweep.state; --no-memo too;
  * the threads share the traffic memo: -j 2 and -j 3 estimate each traffic
    once, as -j 1 does (the points taking an earlier point's traffic are as
    many), with a pricing axis innermost (small.yaml) and outermost
    (outer-pricing.yaml, where threads meet one traffic at once); and they
    share the stat shape summaries: -j 2 and -j 3 build as many as -j 1;
  * 3 and 4 shards merged (directories given in shuffled order) equal the
    single run byte for byte;
  * a run cut at many points (the .part files truncated the way a kill can
    leave them) and resumed equals the single run; so does a run killed
    with SIGKILL at random moments and resumed, possibly several times;
  * on tests/sweep/mapping.yaml (capacities and partitions patched into
    cached specs, invalid points skipped) -j 1, 2, 3, --no-memo and 3
    shards merged write identical files;
  * a sweep with invalid points at 5 and 20 (without --skip-invalid) stops
    at point 5's error with -j 1, 2 and 3, the rows before it written: a
    thread that meets point 20 first (its share starts at point 16) does
    not decide the error;
  * a fresh run over an unfinished one is refused, --overwrite starts over,
    --resume of another sweep is refused, merge refuses a missing shard.
"""
import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from clitest import ROOT, check, failures, run

FILES = ["summary.csv", "traffic.csv", "pareto.csv", "sweep.state"]
SMALL = os.path.join(ROOT, "tests", "sweep", "small.yaml")
SLOW = os.path.join(ROOT, "tests", "sweep", "slow.yaml")
INVALID_FIRST = os.path.join(ROOT, "tests", "sweep", "invalid-first.yaml")
MAPPING = os.path.join(ROOT, "tests", "sweep", "mapping.yaml")
OUTER_PRICING = os.path.join(ROOT, "tests", "sweep", "outer-pricing.yaml")


def read(d, name):
    path = os.path.join(d, name)
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return f.read()


def same(ref, d, what):
    for name in FILES:
        check(read(ref, name) == read(d, name), f"{what}: {name} differs from the single run")


def test_threads_and_memo(tessel, tmp, ref):
    for j in ["2", "3"]:
        d = os.path.join(tmp, "j" + j)
        run(tessel, "sweep", SMALL, "-o", d, "-j", j, "-q")
        same(ref, d, f"-j {j}")
    d = os.path.join(tmp, "nomemo")
    run(tessel, "sweep", SMALL, "-o", d, "-j", "2", "--no-memo", "-q")
    same(ref, d, "--no-memo")


def memo_hits(tessel, sweep, d, j):
    """The points that took an earlier point's traffic, and the stat shape
    summaries built, from the printed summary."""
    p = run(tessel, "sweep", sweep, "-o", d, "-j", j, "--skip-invalid")
    m = re.search(r"; (\d+) with the traffic of an earlier point", p.stdout)
    b = re.search(r"stat summaries built: (\d+) shape", p.stdout)
    check(b is not None, f"no count of summaries built in: {p.stdout.strip()}")
    return int(m.group(1)) if m else 0, int(b.group(1)) if b else -1


def test_shared_memo(tessel, tmp):
    # points, and traffics estimated (None: as many as -j 1 estimates)
    for sweep, points, traffics in [(SMALL, 108, 36), (OUTER_PRICING, 24, 6),
                                    (MAPPING, 768, None)]:
        name = os.path.basename(sweep)
        ref = os.path.join(tmp, "memo-" + name + "-1")
        hits, shapes = memo_hits(tessel, sweep, ref, "1")
        one = points - hits
        check(traffics is None or one == traffics, f"{name} -j 1: {one} traffics estimated, "
              f"not {traffics}")
        check(shapes > 0, f"{name} -j 1: no shape summary built")
        for j in ["2", "3"]:
            d = os.path.join(tmp, "memo-" + name + "-" + j)
            hits, built = memo_hits(tessel, sweep, d, j)
            check(points - hits == one,
                  f"{name} -j {j}: {points - hits} traffics estimated, not {one} as -j 1")
            check(built == shapes,
                  f"{name} -j {j}: {built} shape summaries built, not {shapes} as -j 1")
            same(ref, d, f"{name} -j {j}")


def test_shards(tessel, tmp, ref):
    for n in [3, 4]:
        dirs = []
        for i in range(n):
            d = os.path.join(tmp, f"shard{n}-{i}")
            run(tessel, "sweep", SMALL, "-o", d, "--shard", f"{i}/{n}", "-q")
            dirs.append(d)
        random.Random(n).shuffle(dirs)
        m = os.path.join(tmp, f"merged{n}")
        run(tessel, "merge", "-o", m, "-q", *dirs)
        same(ref, m, f"{n} shards merged")
        p = run(tessel, "merge", "-o", os.path.join(tmp, "bad"), *dirs[1:], ok=False)
        check(p.returncode == 2 and "but" in p.stderr, f"merge without a shard refused: "
              f"{p.stderr.strip()}")


def rows_by_point(data):
    """Byte offsets where each row starts, and its point number."""
    out, pos = [], data.index(b"\n") + 1
    while pos < len(data):
        end = data.index(b"\n", pos) + 1
        out.append((pos, int(data[pos:data.index(b",", pos)])))
        pos = end
    return out


def test_cut_and_resume(tessel, tmp, ref):
    """Every way a kill can leave the .part files: the summary cut inside
    or after the row of point k, the traffic cut anywhere after the rows of
    the points whose summary row is whole (a batch's traffic rows are
    synced before its summary rows)."""
    summary, traffic = read(ref, "summary.csv"), read(ref, "traffic.csv")
    srows, trows = rows_by_point(summary), rows_by_point(traffic)
    rng = random.Random(5)
    cases = 0
    for k in sorted(set([0, 1, len(srows) // 2, len(srows) - 1] +
                        rng.sample(range(len(srows)), 6))):
        s_start = srows[k][0]
        s_end = srows[k + 1][0] if k + 1 < len(srows) else len(summary)
        s_cut = rng.choice([s_start, s_start + 3, s_end - 1, s_end])
        # a whole summary row k means its traffic rows were synced before it
        done = k if s_cut == s_end else k - 1
        t_min = next((off for off, p in trows if p > done), len(traffic))
        t_cut = rng.randint(t_min, len(traffic))
        d = os.path.join(tmp, f"cut{k}")
        shutil.copytree(ref, d)
        os.rename(os.path.join(d, "summary.csv"), os.path.join(d, "summary.csv.part"))
        os.rename(os.path.join(d, "traffic.csv"), os.path.join(d, "traffic.csv.part"))
        os.remove(os.path.join(d, "pareto.csv"))
        with open(os.path.join(d, "summary.csv.part"), "r+b") as f:
            f.truncate(s_cut)
        with open(os.path.join(d, "traffic.csv.part"), "r+b") as f:
            f.truncate(t_cut)
        p = run(tessel, "sweep", SMALL, "-o", d, "--resume", "-j", "2")
        same(ref, d, f"cut at point {k} (summary byte {s_cut}, traffic byte {t_cut}) + resume")
        cases += 1
    # a header cut short, and the case where only traffic rows landed
    d = os.path.join(tmp, "cut-header")
    shutil.copytree(ref, d)
    os.rename(os.path.join(d, "summary.csv"), os.path.join(d, "summary.csv.part"))
    os.rename(os.path.join(d, "traffic.csv"), os.path.join(d, "traffic.csv.part"))
    with open(os.path.join(d, "summary.csv.part"), "r+b") as f:
        f.truncate(10)
    run(tessel, "sweep", SMALL, "-o", d, "--resume", "-q")
    same(ref, d, "summary header cut + resume")
    # a finished sweep resumed is left as it is
    run(tessel, "sweep", SMALL, "-o", d, "--resume", "-q")
    same(ref, d, "resume of a finished sweep")
    return cases + 1


def test_kill(tessel, tmp):
    """SIGKILL at random moments of a slower sweep, then --resume until done."""
    ref = os.path.join(tmp, "slow-ref")
    run(tessel, "sweep", SLOW, "-o", ref, "-q", "-j", "2")
    t0 = time.monotonic()
    run(tessel, "sweep", SLOW, "-o", os.path.join(tmp, "slow-time"), "-q", "-j", "2")
    took = time.monotonic() - t0
    rng = random.Random(11)
    kills = 0
    for trial in range(6):
        d = os.path.join(tmp, f"slow-kill{trial}")
        args = ["sweep", SLOW, "-o", d, "-q", "-j", "2"]
        for attempt in range(4):
            p = subprocess.Popen([tessel, *args], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
            try:
                p.wait(timeout=rng.uniform(0.05, 1.0) * took)
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGKILL)
                p.wait()
                kills += 1
            if p.returncode == 0:
                break
            args = ["sweep", SLOW, "-o", d, "-q", "-j", "2", "--resume"]
        if p.returncode != 0:
            run(tessel, *args)
        same(ref, d, f"killed run {trial} resumed")
    return kills


def test_invalid_resume(tessel, tmp):
    """--skip-invalid: a cut after rows of invalid points only (summary rows
    without traffic rows) resumes to the uninterrupted result."""
    ref = os.path.join(tmp, "invalid-ref")
    run(tessel, "sweep", INVALID_FIRST, "-o", ref, "-q", "--skip-invalid")
    summary = read(ref, "summary.csv")
    for keep in [1, 2, 3]:
        d = os.path.join(tmp, f"invalid-cut{keep}")
        shutil.copytree(ref, d)
        os.rename(os.path.join(d, "summary.csv"), os.path.join(d, "summary.csv.part"))
        os.rename(os.path.join(d, "traffic.csv"), os.path.join(d, "traffic.csv.part"))
        with open(os.path.join(d, "summary.csv.part"), "wb") as f:
            f.write(b"".join(summary.splitlines(keepends=True)[:1 + keep]))
        run(tessel, "sweep", INVALID_FIRST, "-o", d, "-q", "--skip-invalid", "--resume")
        same(ref, d, f"--skip-invalid, cut after {keep} invalid rows, resumed")


def test_patched(tessel, tmp):
    """Capacities and partitions patched into cached specs around derived
    orders and tiles, invalid points among them (--skip-invalid): the same
    bytes for -j 2 and 3, --no-memo (every spec derived in full) and 3
    shards merged."""
    ref = os.path.join(tmp, "mapping-ref")
    run(tessel, "sweep", MAPPING, "-o", ref, "-q", "--skip-invalid", "-j", "1")
    summary = read(ref, "summary.csv") or b""
    check(b"add up to" in summary and b"less than one byte" in summary,
          "mapping sweep: invalid points of both checks across values")
    check(summary.count(b"\n") > 100 and summary.count(b"\n") > summary.count(b"add up to") + 100,
          "mapping sweep: valid points too")
    for what, args in [("-j 2", ["-j", "2"]), ("-j 3", ["-j", "3"]),
                       ("--no-memo", ["-j", "2", "--no-memo"]),
                       ("--no-memo -j 1", ["-j", "1", "--no-memo"])]:
        d = os.path.join(tmp, "mapping " + what)
        run(tessel, "sweep", MAPPING, "-o", d, "-q", "--skip-invalid", *args)
        same(ref, d, f"mapping sweep {what}")
    dirs = []
    for i in range(3):
        d = os.path.join(tmp, f"mapping-shard{i}")
        run(tessel, "sweep", MAPPING, "-o", d, "-q", "--skip-invalid", "--shard", f"{i}/3")
        dirs.append(d)
    m = os.path.join(tmp, "mapping-merged")
    run(tessel, "merge", "-o", m, "-q", *reversed(dirs))
    same(ref, m, "mapping sweep, 3 shards merged")


def test_first_error(tessel, tmp):
    """The first invalid point in point order stops the sweep, whatever -j."""
    spec = os.path.join(ROOT, "examples", "sweep", "spmspm-llb.yaml")
    data = os.path.join(ROOT, "examples", "data", "G51.mtx.gz")
    points = []
    for i in range(40):
        order = "IXJ" if i in (5, 20) else ("IJK", "IKJ", "KIJ")[i % 3]
        points.append(f"  - {{mapping.LLB.order: {order}, "
                      f"architecture.levels.DRAM.bandwidth: {10 + i}}}")
    sweep = os.path.join(tmp, "first-error.yaml")
    with open(sweep, "w") as f:
        f.write(f"spec: {spec}\ndata: [{data}]\naxes:\n"
                "  mapping.LLB.order: [IJK, IKJ, KIJ, IXJ]\n"
                "  architecture.levels.DRAM.bandwidth: [10, 20]\n"
                "points:\n" + "\n".join(points) + "\n")
    seen = {}
    for j in ("1", "2", "3"):
        d = os.path.join(tmp, f"first-error-j{j}")
        p = run(tessel, "sweep", sweep, "-o", d, "-q", "-j", j, ok=False)
        check(p.returncode == 2 and "error: point 5 (" in p.stderr,
              f"first error -j {j}: point 5's expected: {p.stderr.strip()}")
        seen[j] = (p.stderr, read(d, "summary.csv.part"), read(d, "traffic.csv.part"))
    rows = (seen["1"][1] or b"").count(b"\n")
    check(rows == 6, f"first error -j 1: the header and points 0-4 written, not {rows} lines")
    for j in ("2", "3"):
        check(seen[j] == seen["1"], f"first error -j {j}: message or rows differ from -j 1")


def test_refusals(tessel, tmp, ref):
    d = os.path.join(tmp, "partial")
    shutil.copytree(ref, d)
    os.rename(os.path.join(d, "summary.csv"), os.path.join(d, "summary.csv.part"))
    p = run(tessel, "sweep", SMALL, "-o", d, "-q", ok=False)
    check(p.returncode == 2 and "--resume" in p.stderr,
          f"a fresh run over an unfinished one is refused: {p.stderr.strip()}")
    p = run(tessel, "sweep", SLOW, "-o", d, "-q", "--resume", ok=False)
    check(p.returncode == 2 and "another sweep" in p.stderr,
          f"resuming another sweep is refused: {p.stderr.strip()}")
    run(tessel, "sweep", SMALL, "-o", d, "-q", "--overwrite")
    same(ref, d, "--overwrite")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tessel", required=True)
    args = ap.parse_args()
    tessel = os.path.abspath(args.tessel)
    os.chdir(ROOT)
    with tempfile.TemporaryDirectory(prefix="tessel-sweep-test.") as tmp:
        ref = os.path.join(tmp, "ref")
        run(tessel, "sweep", SMALL, "-o", ref, "-j", "1", "-q")
        test_threads_and_memo(tessel, tmp, ref)
        test_shared_memo(tessel, tmp)
        test_shards(tessel, tmp, ref)
        cuts = test_cut_and_resume(tessel, tmp, ref)
        kills = test_kill(tessel, tmp)
        test_invalid_resume(tessel, tmp)
        test_patched(tessel, tmp)
        test_first_error(tessel, tmp)
        test_refusals(tessel, tmp, ref)
    print(f"sweep_test: threads, memo, shards, {cuts} cut-and-resume cases, {kills} kills: "
          f"{'FAILED' if failures else 'all identical'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
