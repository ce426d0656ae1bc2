#!/usr/bin/env python3
"""Output and input paths that are not regular files, and failed writes
(issue 25 items 1, 8 and 10; issue 24 item 6).

Each case runs the CLI on inputs it generates with `tessel gen` (no data
directory needed) and checks the exit status, the message and what is left
on disk:

- an output path that is a symbolic link or a FIFO is refused with exit 2,
  at once (no hang), and the link, its target and the FIFO stay as they were;
- an input path that is a FIFO is refused with exit 2 at once;
- missing parent directories of an output file are created, for gen and for
  every command that writes with -o (run, compare, map, sweep, spec, energy);
- a write that fails (the file-size limit, RLIMIT_FSIZE, stands in for a
  full disk) exits 1 with the system's reason and leaves no file under the
  final name, for `gen`, `convert`, `stats -o` and `stats --save`.

Every command runs under a timeout: a hang is a failure, not a stall.
"""
import argparse
import os
import resource
import signal
import subprocess
import sys
import tempfile

TIMEOUT = 60
FAILURES = []


def run(argv, limit_bytes=None):
    def limit():
        # Ignored SIGXFSZ survives exec: the write then fails with EFBIG.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT,
                           preexec_fn=limit if limit_bytes else None)
    except subprocess.TimeoutExpired:
        return None, "", "timed out"
    return p.returncode, p.stdout, p.stderr


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    if not ok:
        FAILURES.append(name)


def expect(name, argv, code, words, limit_bytes=None):
    rc, out, err = run(argv, limit_bytes)
    ok = rc == code and all(w in err for w in words)
    check(name, ok, "exit %s (want %d), stderr: %s" % (rc, code, err.strip()[:300]))


def refusals(tessel, d, gen):
    target = os.path.join(d, "target.mtx")
    link = os.path.join(d, "link.mtx")
    fifo = os.path.join(d, "fifo.mtx")
    with open(target, "w") as f:
        f.write("untouched\n")
    os.symlink(target, link)
    os.mkfifo(fifo)
    expect("gen -o symlink refused", gen + ["-o", link], 2, ["symbolic link"])
    check("symlink kept", os.path.islink(link) and open(target).read() == "untouched\n")
    expect("gen -o fifo refused", gen + ["-o", fifo], 2, ["FIFO"])
    expect("stats --save fifo refused", [tessel, "stats", target + ".src.mtx", "--save", fifo],
           2, ["FIFO"])
    expect("stats on a fifo refused", [tessel, "stats", fifo], 2, ["not a regular file"])
    expect("convert from a fifo refused", [tessel, "convert", fifo, os.path.join(d, "c.tsl")],
           2, ["not a regular file"])
    check("fifo kept", os.path.exists(fifo) and not os.path.isfile(fifo))


def parents(d, gen):
    deep = os.path.join(d, "new", "deeper", "m.mtx")
    rc, _, err = run(gen + ["-o", deep])
    check("missing parents created", rc == 0 and os.path.isfile(deep), err.strip())
    # every command that writes with -o (issue 24 item 6), on the repository's specs
    tessel, src = gen[0], deep
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    spec = os.path.join(root, "specs", "extensor.yaml")
    llb = os.path.join(root, "examples", "sweep", "spmspm-llb.yaml")
    sweep = os.path.join(d, "s.yaml")
    with open(sweep, "w") as f:
        f.write(f"spec: {llb}\ndata: [{src}]\naxes:\n  mapping.LLB.order: [IJK, KIJ]\n")
    cases = [
        ("run", [tessel, "run", spec, "-T", "A=" + src, "-q", "-o"], "run", "summary.csv"),
        ("compare", [tessel, "compare", spec, "-T", "A=" + src, "--strategies",
                     "conservative", "-q", "-o"], "cmp", "compare.csv"),
        ("map", [tessel, "map", llb, "-t", "A=" + src, "--max-points", "5", "-q", "-o"],
         "w.yaml", None),
        ("sweep", [tessel, "sweep", sweep, "-q", "-o"], "sw", "summary.csv"),
        ("spec", [tessel, "spec", spec, "-o"], "r.yaml", None),
        ("energy", [tessel, "energy", spec, "-o"], "e.csv", None),
    ]
    for name, argv, leaf, inside in cases:
        out = os.path.join(d, "p-" + name, "a", "b", leaf)
        rc, _, err = run(argv + [out])
        made = os.path.join(out, inside) if inside else out
        check(name + " -o creates missing parents", rc == 0 and os.path.isfile(made),
              err.strip()[:300])


def write_failures(tessel, d):
    src = os.path.join(d, "big.mtx")
    rc, _, err = run([tessel, "gen", "uniform", "--size", "3000", "--nnz", "200000",
                      "-o", src])
    if rc != 0:
        check("generate the big input", False, err)
        return
    limit = 1000  # below every output here (the stats report is ~1.2 KB)
    cases = [
        ("gen", [tessel, "gen", "uniform", "--size", "3000", "--nnz", "200000",
                 "-o", os.path.join(d, "w1.mtx")]),
        ("convert", [tessel, "convert", src, os.path.join(d, "w2.mtx")]),
        ("stats -o", [tessel, "stats", src, "--tile", "1", "-o", os.path.join(d, "w3.csv")]),
        ("stats --save", [tessel, "stats", src, "--save", os.path.join(d, "w4.tstat")]),
    ]
    for name, argv in cases:
        final = argv[argv.index("-o") + 1] if "-o" in argv else argv[-1]
        expect(name + " write failure exits 1", argv, 1, ["File too large"], limit)
        check(name + " leaves no file", not os.path.exists(final), final)
        leftovers = [f for f in os.listdir(d) if ".tmp." in f]
        check(name + " leaves no temporary", not leftovers, " ".join(leftovers))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tessel", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        gen = [a.tessel, "gen", "uniform", "--size", "40", "--nnz", "80"]
        rc, _, err = run(gen + ["-o", os.path.join(d, "target.mtx.src.mtx")])
        if rc != 0:
            print("cannot generate inputs: " + err)
            return 1
        refusals(a.tessel, d, gen)
        parents(d, gen)
        write_failures(a.tessel, d)
    print("%d failure(s)" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
