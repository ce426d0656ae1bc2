"""Shared by the scale benchmarks (scale_stat.py, parse_speed.py): sizes such as "4M",
cached `tessel gen` matrices, and one process measured for wall time, CPU and peak memory.
Standard library only."""
import os
import re
import subprocess
import tempfile
import time

SUFFIX = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(s):
    """ "4M" -> 4194304 (K, M, G are powers of 1024)."""
    s = s.strip().upper()
    if s and s[-1] in SUFFIX:
        return int(float(s[:-1]) * SUFFIX[s[-1]])
    return int(s)


def label(n):
    """4194304 -> "4M": the inverse of parse_size where exact."""
    for suf in ("G", "M", "K"):
        if n % SUFFIX[suf] == 0:
            return "%d%s" % (n // SUFFIX[suf], suf)
    return str(n)


def generate(tessel, kind, nnz, cache, name, pattern):
    """The matrix cache/NAME (a `tessel gen KIND` square matrix of average degree 16, seed
    1), generated when missing; returns (path, rows, the nonzeros it stores)."""
    rows = max(1, nnz // 16)
    path = os.path.join(cache, name)
    meta = path + ".nnz"
    if not (os.path.exists(path) and os.path.exists(meta)):
        cmd = [tessel, "gen", kind, "--size", str(rows), "--nnz", str(nnz), "--seed", "1",
               "-v", "-o", path] + (["--pattern"] if pattern else [])
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(" ".join(cmd) + "\n" + r.stderr)
        m = re.search(r"(\d+) entries", r.stderr)
        with open(meta, "w") as f:
            f.write(m.group(1) if m else str(nnz))
    with open(meta) as f:
        return path, rows, int(f.read().strip())


def run_measured(cmd):
    """Runs cmd; returns (wall s, CPU s (user + system), peak RSS bytes, stderr text)."""
    err = tempfile.TemporaryFile(mode="w+")
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    err.seek(0)
    text = err.read()
    if os.waitstatus_to_exitcode(status):
        raise RuntimeError(" ".join(cmd) + "\n" + text)
    # ru_maxrss is in KiB on Linux
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, text
