#!/usr/bin/env python3
"""Functions over 60 lines must say in one comment line what they compute.

Scans the C sources (src/, tools/) for function definitions (a line holding only
'{' at column 0 after a header) and fails, naming file, line and length, for each
function longer than LIMIT lines whose header is not directly preceded by a comment
(or that does not open with one on its first body line). CONTRIBUTING.md states the
rule; this test keeps it.
"""
import argparse
import os
import sys

LIMIT = 60


def functions(lines):
    """(name, header line number, length in lines, has a comment) per definition."""
    i = 0
    while i < len(lines):
        if lines[i].rstrip("\n") != "{":
            i += 1
            continue
        # header: walk back to the first line of the declaration
        h = i - 1
        while h > 0 and lines[h - 1].strip() and not lines[h - 1].rstrip().endswith(
                (";", "}", "*/")) and not lines[h - 1].startswith(("#", "//")):
            h -= 1
        end = i + 1
        while end < len(lines) and lines[end].rstrip("\n") != "}":
            end += 1
        header = " ".join(l.strip() for l in lines[h:i])
        name = header.split("(")[0].split()[-1].lstrip("*") if "(" in header else header
        before = lines[h - 1].strip() if h > 0 else ""
        first = lines[i + 1].strip() if i + 1 < len(lines) else ""
        commented = before.endswith("*/") or before.startswith("//") or first.startswith(
            ("/*", "//"))
        yield name, h + 1, end - i + 1, commented, "(" in header and "=" not in header
        i = end + 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=".")
    args = ap.parse_args()
    bad = []
    count = 0
    for top in ("src", "tools"):
        for dirpath, _, files in os.walk(os.path.join(args.root, top)):
            for f in sorted(files):
                if not f.endswith(".c"):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8") as fh:
                    lines = fh.readlines()
                for name, line, length, commented, is_fn in functions(lines):
                    if not is_fn:
                        continue
                    count += 1
                    if length > LIMIT and not commented:
                        rel = os.path.relpath(path, args.root)
                        bad.append(f"{rel}:{line}: {name}: {length} lines and no comment "
                                   "saying what it computes")
    for b in bad:
        print(b)
    print(f"functions: {count} checked, {len(bad)} over {LIMIT} lines without a comment")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
