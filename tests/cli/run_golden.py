#!/usr/bin/env python3
"""Golden-output tests of the tessel command line.

Each tests/cli/cases/NAME.case file holds one command and the whole output
it must produce:

    # free text describing the case
    args: stats {DATA}/mtx/G51.mtx.gz --format json
    status: 0
    absent: {TMP}/out.csv          (optional, repeatable: must not exist after)
    cat: {TMP}/out/summary.csv     (optional, repeatable: after the run, the file's
                                    contents are appended to stdout under a line
                                    "==> {TMP}/out/summary.csv <==")
    needs: {DATA}/mtx/G51.mtx.gz   (optional: skip the case if missing)
    --- stdout
    ...exact expected standard output...
    --- stderr
    ...exact expected standard error...

Placeholders: {TESSEL} the binary, {DATA} ../shared/data, {CASES} the cases
directory (malformed inputs live in cases/inputs), {TMP} a fresh temporary
directory per case. Arguments are split like a shell would (shlex), but no
shell runs. `--update` rewrites the expected sections from the actual output.

`--wrapper CMD` runs each command under CMD (split like a shell would), for
example `--wrapper "valgrind --error-exitcode=1 -q --leak-check=full"`. What
the wrapper writes to stderr then shows up as a difference from the golden
stderr, so a quiet wrapper passes exactly when it finds nothing.
"""
import argparse
import difflib
import os
import shlex
import subprocess
import sys
import tempfile


def parse_case(text):
    case = {"args": None, "status": 0, "absent": [], "needs": [], "cat": [], "stdout": "",
            "stderr": ""}
    section = None
    body = {"stdout": [], "stderr": []}
    for line in text.splitlines(keepends=True):
        if line.startswith("--- stdout"):
            section = "stdout"
            continue
        if line.startswith("--- stderr"):
            section = "stderr"
            continue
        if section:
            body[section].append(line)
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, _, value = stripped.partition(":")
        value = value.strip()
        if key == "args":
            case["args"] = value
        elif key == "status":
            case["status"] = int(value)
        elif key in ("absent", "needs", "cat"):
            case[key].append(value)
        else:
            raise ValueError(f"unknown key {key!r}")
    case["stdout"] = "".join(body["stdout"])
    case["stderr"] = "".join(body["stderr"])
    return case


def header_of(text):
    lines = []
    for line in text.splitlines(keepends=True):
        if line.startswith("--- "):
            break
        lines.append(line)
    return "".join(lines)


def run_case(path, tessel, data, cases_dir, update, wrapper=()):
    with open(path) as f:
        text = f.read()
    case = parse_case(text)
    with tempfile.TemporaryDirectory() as tmp:
        def subst(s):
            return (s.replace("{TESSEL}", tessel).replace("{DATA}", data)
                    .replace("{CASES}", cases_dir).replace("{TMP}", tmp))

        for need in case["needs"]:
            if not os.path.exists(subst(need)):
                return "missing"
        argv = list(wrapper) + [tessel] + [subst(a) for a in shlex.split(case["args"])]
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        # Paths in messages are shown relative to the placeholders.
        out, err = proc.stdout, proc.stderr
        for name in case["cat"]:
            try:
                with open(subst(name)) as f:
                    out += f"==> {name} <==\n" + f.read()
            except OSError:
                out += f"==> {name} <== (missing)\n"
        for real, name in ((tmp, "{TMP}"), (cases_dir, "{CASES}"), (data, "{DATA}")):
            out = out.replace(real, name)
            err = err.replace(real, name)
        leftovers = [a for a in case["absent"] if os.path.exists(subst(a))]
        for where, _, files in os.walk(tmp):
            leftovers += [os.path.join(where, n) for n in files if ".tmp." in n]
    if update:
        with open(path, "w") as f:
            f.write(header_of(text).replace(f"status: {case['status']}",
                                            f"status: {proc.returncode}"))
            f.write("--- stdout\n" + out + "--- stderr\n" + err)
        return "ok"
    problems = []
    if proc.returncode != case["status"]:
        problems.append(f"exit status {proc.returncode}, expected {case['status']}")
    for name, got, want in (("stdout", out, case["stdout"]), ("stderr", err, case["stderr"])):
        if got != want:
            diff = difflib.unified_diff(want.splitlines(keepends=True),
                                        got.splitlines(keepends=True),
                                        f"expected {name}", f"actual {name}")
            problems.append("".join(diff))
    for left in leftovers:
        problems.append(f"file left behind: {left}")
    if problems:
        print(f"FAIL {os.path.basename(path)}: {' '.join(argv)}")
        for p in problems:
            print(p.rstrip())
        return "fail"
    return "ok"


def main():
    ap = argparse.ArgumentParser(description="tessel golden CLI tests")
    ap.add_argument("--tessel", required=True)
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--cases", default=os.path.join(os.path.dirname(__file__), "cases"))
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--wrapper", default="",
                    help='run each command under this one, e.g. "valgrind -q --error-exitcode=1"')
    ap.add_argument("--skip", action="append", default=[], metavar="NAME",
                    help="a case not to run (repeatable; counted as skipped)")
    ap.add_argument("--missing-status", type=int, default=0, metavar="N",
                    help="exit status when no case failed but some could not run for a "
                         "missing `needs:` file (meson: 77, skipped; default 0)")
    ap.add_argument("only", nargs="*", help="case names to run (default: all)")
    args = ap.parse_args()
    wrapper = shlex.split(args.wrapper)
    if wrapper and args.update:
        ap.error("--update with --wrapper would write the wrapper's output into the cases")
    names = sorted(n for n in os.listdir(args.cases) if n.endswith(".case"))
    if args.only:
        names = [n for n in names if n[:-5] in args.only or n in args.only]
    counts = {"ok": 0, "fail": 0, "skip": 0, "missing": 0}
    for name in names:
        if name[:-5] in args.skip or name in args.skip:
            counts["skip"] += 1
            continue
        counts[run_case(os.path.join(args.cases, name), os.path.abspath(args.tessel),
                        args.data, args.cases, args.update, wrapper)] += 1
    counts["skip"] += counts["missing"]
    print(f"{counts['ok']} passed, {counts['fail']} failed, {counts['skip']} skipped"
          + (f" ({counts['missing']} for a missing needs: file)" if counts["missing"] else ""))
    if counts["fail"]:
        return 1
    return args.missing_status if counts["missing"] else 0


if __name__ == "__main__":
    sys.exit(main())
