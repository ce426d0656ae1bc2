#!/usr/bin/env python3
"""Runs a tessel command with the exact walk's hidden options added.

    walk_wrapper.py FLAG... -- TESSEL COMMAND ARGS...

run_golden.py's --wrapper puts the command after the wrapper's own words;
the FLAGs (e.g. --exact-walk old, --exact-chunk 1000) are inserted right
after `run` (the only command that takes them); other commands run as
they are. The exit status, stdout and stderr are the command's.
"""
import os
import sys


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.stderr.write("usage: walk_wrapper.py FLAG... -- TESSEL COMMAND ARGS...\n")
        return 2
    cut = argv.index("--")
    flags, cmd = argv[:cut], argv[cut + 1:]
    if len(cmd) >= 2 and cmd[1] == "run":
        cmd = cmd[:2] + flags + cmd[2:]
    os.execv(cmd[0], cmd)
    return 1


if __name__ == "__main__":
    sys.exit(main())
