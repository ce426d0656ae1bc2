#!/usr/bin/env python3
"""Runs a Check suite part of whose checks read ../shared (issue 24 item 7).

    shared_or_skip.py --needs DIR [--needs DIR]... -- BINARY [ARGS...]

With every DIR present the suite's exit status is passed through. With one
missing, the checks that need it return early inside the suite (Check has
no per-case skip), so a clean run did not check everything: it is reported
as skipped (77), never as a pass. A failure is still a failure.
"""
import os
import subprocess
import sys


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        print(__doc__)
        return 2
    split = argv.index("--")
    opts, cmd = argv[:split], argv[split + 1:]
    needs = [opts[i + 1] for i, a in enumerate(opts) if a == "--needs" and i + 1 < len(opts)]
    missing = [d for d in needs if not os.path.isdir(d)]
    rc = subprocess.call(cmd)
    if rc == 0 and missing:
        print(f"{os.path.basename(cmd[0])}: passed without {', '.join(missing)}: "
              "its checks on the shared data did not run: skipped")
        return 77
    return rc


if __name__ == "__main__":
    sys.exit(main())
