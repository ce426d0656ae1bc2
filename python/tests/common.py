"""Shared setup of the python/tests suite: the repository, the CLI to compare with and
the shared data (TESSEL_CLI, TESSEL_DATA from run_tests.py; defaults for a checkout)."""

import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

import tessel  # noqa: E402

CLI = os.environ.get("TESSEL_CLI") or os.path.join(ROOT, "build", "tools", "tessel")
DATA = os.environ.get("TESSEL_DATA") or os.path.join(ROOT, "..", "shared", "data")
SPEC = os.path.join(ROOT, "examples", "sweep", "spmspm-llb.yaml")


def shared(name):
    """A shared matrix's path; the test is skipped when the shared data is absent."""
    path = os.path.join(DATA, "mtx", name)
    if not os.path.exists(path):
        raise unittest.SkipTest("shared data absent: %s" % path)
    return path


def cli_run(*args):
    """tessel run ARGS --no-timing -q into a temporary directory: (summary, traffic)
    text, or raises with the CLI's standard error."""
    if not os.path.exists(CLI):
        raise unittest.SkipTest("no tessel CLI at %s" % CLI)
    with tempfile.TemporaryDirectory() as out:
        p = subprocess.run([CLI, "run"] + list(args) + ["--no-timing", "-q", "-o", out],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        if p.returncode:
            raise CliError(p.returncode, p.stderr)
        texts = []
        for name in ("summary.csv", "traffic.csv"):
            with open(os.path.join(out, name), encoding="utf-8") as f:
                texts.append(f.read())
        return texts


class CliError(Exception):
    def __init__(self, status, stderr):
        Exception.__init__(self, stderr)
        self.status = status
        self.stderr = stderr
