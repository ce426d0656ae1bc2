#!/usr/bin/env python3
"""Checks the documentation against the repository (test `docs-check`):

1. every relative link in README.md, CONTRIBUTING.md and docs/ (docs/changes/
   excepted: branch notes folded in at merge) names an existing file, and its
   #anchor, if any, a heading of that file (GitHub's anchor rules);
2. README.md has at most 200 lines;
3. every column the report writers emit (src/report/writers.c) has a row in
   docs/outputs.md, and every row of its traffic/summary tables is emitted;
4. every repository path named in docs/architecture.md exists;
5. no file under src/, tools/, include/ or tests/ cites the design document
   that lived outside the repository (docs/semantics.md replaced it).

Exit 0 when all hold, 1 naming each failure.
"""
import argparse
import os
import re
import sys

# Spelled in two parts so that this file does not cite it itself.
OLD_DESIGN = "shared/" + "DESIGN"
LINK = re.compile(r"(?<!\!)\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading):
    h = heading.strip().lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path):
    out, fence, seen = set(), False, {}
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^#{1,6} (.*)$", line.rstrip("\n"))
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            out.add(s if n == 0 else f"{s}-{n}")
            seen[s] = n + 1
    return out


def md_files(root):
    files = [os.path.join(root, f) for f in ("README.md", "CONTRIBUTING.md")]
    for d, dirs, names in os.walk(os.path.join(root, "docs")):
        dirs[:] = [x for x in dirs if os.path.join(d, x) != os.path.join(root, "docs", "changes")]
        files += [os.path.join(d, n) for n in names if n.endswith(".md")]
    return sorted(f for f in files if os.path.exists(f))


def check_links(root, bad):
    n = 0
    for path in md_files(root):
        fence = False
        for ln, line in enumerate(open(path, encoding="utf-8"), 1):
            if line.startswith("```"):
                fence = not fence
            if fence:
                continue
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target):
                    continue  # http:, mailto: ...
                n += 1
                file, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
                where = f"{os.path.relpath(path, root)}:{ln}"
                if not os.path.exists(dest):
                    bad.append(f"{where}: link {target}: no such file")
                elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    bad.append(f"{where}: link {target}: no heading #{anchor}")
    return n


def check_columns(root, bad):
    src = open(os.path.join(root, "src/report/writers.c"), encoding="utf-8").read()
    emitted = set(re.findall(r'emit_[a-z0-9]+\(e, "([a-z0-9_]+)"', src))
    emitted |= {"energy_sources"}
    doc = open(os.path.join(root, "docs/outputs.md"), encoding="utf-8").read()
    rows = set(re.findall(r"^\| `([a-z0-9_]+)` \|", doc, re.M))
    for c in sorted(emitted - rows):
        if f"`{c}`" not in doc:
            bad.append(f"docs/outputs.md: column {c} (src/report/writers.c) is not documented")
        elif c not in rows and c != "energy_sources":
            bad.append(f"docs/outputs.md: column {c} has no table row")
    # the tables of traffic.csv and summary.csv (their rows carry a unit column)
    for section in ("## traffic.csv", "## summary.csv"):
        part = doc.split(section, 1)[1].split("\n## ", 1)[0]
        for c in re.findall(r"^\| `([a-z0-9_]+)` \|", part, re.M):
            if c not in emitted:
                bad.append(f"docs/outputs.md {section[3:]}: column {c} is not written by src/report/writers.c")
    return len(emitted)


def check_paths(root, bad):
    doc = open(os.path.join(root, "docs/architecture.md"), encoding="utf-8").read()
    n = 0
    for p in sorted(set(re.findall(r"`((?:src|include|tools|tests|bench|specs|examples)/[^`*{}\s]+)`", doc))):
        n += 1
        if not os.path.exists(os.path.join(root, p.rstrip("/"))):
            bad.append(f"docs/architecture.md: {p}: no such file")
    return n


def check_citations(root, bad):
    for top in ("src", "tools", "include", "tests"):
        for d, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                path = os.path.join(d, name)
                try:
                    text = open(path, encoding="utf-8").read()
                except (UnicodeDecodeError, OSError):
                    continue
                # the design document outside the repository, by either name
                if OLD_DESIGN in text or re.search(r"\(" + "DESIGN" + r"\.md", text):
                    bad.append(f"{os.path.relpath(path, root)}: cites ../{OLD_DESIGN}.md; cite docs/semantics.md")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    root = ap.parse_args().root
    bad = []
    links = check_links(root, bad)
    lines = sum(1 for _ in open(os.path.join(root, "README.md"), encoding="utf-8"))
    if lines > 200:
        bad.append(f"README.md: {lines} lines (at most 200; move the topic to docs/)")
    cols = check_columns(root, bad)
    paths = check_paths(root, bad)
    check_citations(root, bad)
    for b in bad:
        print(b)
    print(f"docs: {links} links, {cols} columns, {paths} paths checked; README.md {lines} lines; "
          + (f"{len(bad)} problems" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
