#!/usr/bin/env python3
"""`tessel --version` prints meson's project version (issue 24 item 7: the
version string comes from meson.build alone). Exit 77 when the binary is
missing, 1 on a mismatch."""
import os
import subprocess
import sys


def main():
    tessel, want = sys.argv[1], sys.argv[2]
    if not os.access(tessel, os.X_OK):
        print(f"no tessel binary at {tessel}: skipped")
        return 77
    got = subprocess.run([tessel, "--version"], capture_output=True, text=True, timeout=30)
    if got.returncode != 0 or got.stdout != f"tessel {want}\n":
        print(f"tessel --version: exit {got.returncode}, {got.stdout!r}; want 'tessel {want}'")
        return 1
    print(f"tessel --version: {got.stdout.strip()} (meson project version {want})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
