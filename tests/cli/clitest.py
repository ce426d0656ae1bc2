"""Shared by the CLI test scripts: the project root, a failure list,
check() and run()."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
failures = []


def check(cond, what):
    """Records (and prints) a failed expectation; the script goes on."""
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(tessel, *args, ok=True):
    """Runs tessel; with ok, a non-zero status ends the script."""
    p = subprocess.run([tessel, *args], capture_output=True, text=True)
    if ok and p.returncode != 0:
        print(p.stdout, p.stderr)
        raise SystemExit(f"tessel {' '.join(args)} failed with status {p.returncode}")
    return p
