#!/usr/bin/env python3
"""Runs the Python package's checks from meson with an interpreter that can run them.

`python3` on PATH may lack SciPy (pyenv) while Debian's /usr/bin/python3 has the
python3-scipy/-matplotlib/-pandas packages: each suite takes the first candidate
interpreter (this one, /usr/bin/python3, python3 on PATH) that imports what it needs.
A sanitized libtessel.so (meson -Db_sanitize=address) is loaded with the ASan runtime
preloaded, leak checks off (CPython's own allocations are not ours to report).

  unit      python -m unittest discover python/tests (the SciPy tests skip
            themselves when no interpreter has SciPy)
  notebook  examples/notebooks/dse.py on a shared matrix; 77 without SciPy and
            matplotlib or without the shared data
  venv      python -m venv --system-site-packages V; V/bin/pip install --no-index
            --no-build-isolation ./python, then the installed package runs a point;
            /usr/bin/python3 first; 77 without an interpreter that has venv,
            ensurepip, setuptools and wheel
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def candidates(system_first=False):
    seen = []
    order = (sys.executable, "/usr/bin/python3", shutil.which("python3"))
    if system_first:
        order = ("/usr/bin/python3",) + order
    for c in order:
        if c and os.path.exists(c) and os.path.realpath(c) not in seen:
            seen.append(os.path.realpath(c))
            yield c


def interpreter(modules, system_first=False):
    """The first candidate that imports every module named, or None."""
    code = "import " + ", ".join(modules) if modules else "pass"
    for c in candidates(system_first):
        if subprocess.run([c, "-c", code], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0:
            return c
    return None


def sanitizer_env(lib, env):
    """LD_PRELOAD of the ASan runtime the library links, when it links one."""
    try:
        out = subprocess.run(["ldd", lib], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             universal_newlines=True).stdout
    except OSError:
        return env
    for line in out.splitlines():
        if "libasan" in line and "=>" in line:
            env["LD_PRELOAD"] = line.split("=>")[1].split()[0]
            env["ASAN_OPTIONS"] = "detect_leaks=0:" + env.get("ASAN_OPTIONS", "")
    return env


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("suite", choices=["unit", "notebook", "venv"])
    ap.add_argument("--lib", required=True, help="libtessel.so of this build")
    ap.add_argument("--tessel", required=True, help="the tessel CLI of this build")
    ap.add_argument("--data", required=True, help="the shared data directory")
    ap.add_argument("--root", required=True, help="the repository")
    a = ap.parse_args()
    env = dict(os.environ)
    env.update(TESSEL_LIBRARY=os.path.abspath(a.lib), TESSEL_CLI=os.path.abspath(a.tessel),
               TESSEL_DATA=os.path.abspath(a.data), MPLBACKEND="Agg")
    env = sanitizer_env(a.lib, env)
    if a.suite == "unit":
        py = interpreter(["scipy"]) or sys.executable
        print("run_python: unit tests with %s" % py)
        tests = os.path.join(a.root, "python", "tests")
        return subprocess.run([py, "-m", "unittest", "discover", "-v", "-s", tests, "-t", tests],
                              env=env).returncode
    if a.suite == "notebook":
        py = interpreter(["scipy.io", "matplotlib"])
        if not py:
            print("run_python: skipped: no interpreter with scipy and matplotlib")
            return SKIP
        if not os.path.isdir(os.path.join(a.data, "mtx")):
            print("run_python: skipped: no shared data at %s" % a.data)
            return SKIP
        with tempfile.TemporaryDirectory() as out:
            rc = subprocess.run([py, os.path.join(a.root, "examples", "notebooks", "dse.py"),
                                 "--data", a.data, "--out", out], env=env).returncode
            png = os.path.join(out, "pareto.png")
            if rc == 0 and not (os.path.exists(png) and os.path.getsize(png) > 1000):
                print("run_python: dse.py wrote no Pareto plot at %s" % png)
                return 1
            return rc
    # Debian's interpreter first: the install a fresh machine does (python3-venv,
    # python3-pip, python3-setuptools, python3-wheel)
    py = interpreter(["venv", "ensurepip", "setuptools", "wheel"], system_first=True)
    if not py:
        print("run_python: skipped: no interpreter with venv and pip")
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "src")
        # a copy: setuptools builds in the source tree (build/, *.egg-info)
        shutil.copytree(os.path.join(a.root, "python"), src,
                        ignore=shutil.ignore_patterns("tests", "__pycache__", "build",
                                                      "*.egg-info"))
        venv = os.path.join(tmp, "venv")
        steps = [[py, "-m", "venv", "--system-site-packages", venv],
                 [os.path.join(venv, "bin", "pip"), "install", "--no-index",
                  "--no-build-isolation", "--no-cache-dir", "-q", src]]
        clean = dict(os.environ)
        clean.pop("LD_PRELOAD", None)
        clean["PIP_NO_INDEX"] = "1"  # offline: no index is ever asked
        for step in steps:
            print("run_python: " + " ".join(step))
            if subprocess.run(step, env=clean).returncode:
                return 1
        check = ("import os, tessel; assert tessel.__file__.startswith(%r), tessel.__file__; "
                 "r = tessel.run(os.path.join(%r, 'examples', 'sweep', 'spmspm-llb.yaml')); "
                 "print('installed tessel:', tessel.__file__, r.summary['dram_bytes'])"
                 % (venv, a.root))
        return subprocess.run([os.path.join(venv, "bin", "python"), "-c", check], env=env,
                              cwd=tmp).returncode


if __name__ == "__main__":
    sys.exit(main())
