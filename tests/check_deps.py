#!/usr/bin/env python3
"""Checks the module dependency rules of docs/architecture.md ("Dependency rules").

A module may include the public headers of the modules it is allowed to
use (and its own internal headers); tools/ may include only public headers.
Exit 1 naming every violation.
"""
import os
import re
import sys

# Direct uses allowed; what a module may use is the closure of this.
RULES = {
    "base": [],
    "tensor": ["base"],
    "stats": ["tensor"],
    "spec": ["base"],
    "energy": ["spec"],
    "model": ["stats", "spec"],
    "drt": ["model"],
    "strategy": ["drt", "model"],
    "template": ["strategy", "model"],
    "point": ["template"],
    "report": ["model", "energy"],
    "plot": ["report"],
    "sweep": ["point", "template", "strategy", "model", "energy", "report", "plot"],
}


def closure(module):
    seen, todo = set(), [module]
    while todo:
        for dep in RULES[todo.pop()]:
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen | {module}


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    include = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
    bad = []

    def scan(path, allowed, allow_local):
        with open(path) as f:
            for n, line in enumerate(f, 1):
                m = include.match(line)
                if not m:
                    continue
                target = m.group(1)
                if target.startswith("tessel/"):
                    used = target[len("tessel/"):-2]
                    if used not in allowed:
                        bad.append(f"{path}:{n}: includes {target}; allowed: "
                                   f"{', '.join(sorted(allowed))}")
                elif not allow_local or "/" in target:
                    bad.append(f"{path}:{n}: includes private header {target}")

    for module in RULES:
        allowed = closure(module)
        src = os.path.join(root, "src", module)
        header = os.path.join(root, "include", "tessel", module + ".h")
        if os.path.exists(header):
            scan(header, allowed, False)
        if os.path.isdir(src):
            for name in sorted(os.listdir(src)):
                if name.endswith((".c", ".h")):
                    scan(os.path.join(src, name), allowed, True)
    tools = os.path.join(root, "tools")
    for name in sorted(os.listdir(tools)):
        if name.endswith((".c", ".h")):
            scan(os.path.join(tools, name), set(RULES), True)
    for line in bad:
        print(line)
    print("module dependencies: " + ("ok" if not bad else f"{len(bad)} violations"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
