#!/usr/bin/env python3
"""libtessel.so exports exactly the public API.

Every dynamic symbol the shared library defines must start with tessel_ (the version
script src/libtessel.map hides the rest), and every function declared in
include/tessel/*.h must be exported. Usage: check_exports.py NM LIBTESSEL_SO ROOT
"""
import os
import re
import subprocess
import sys


def main():
    nm, lib, root = sys.argv[1:4]
    out = subprocess.run([nm, "-D", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    exported = {line.split()[-1] for line in out.splitlines() if line.strip()}
    declared, inline = set(), set()
    inc = os.path.join(root, "include", "tessel")
    for f in sorted(os.listdir(inc)):
        text = open(os.path.join(inc, f), encoding="utf-8").read()
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        declared |= set(re.findall(r"\b(tessel_[a-z0-9_]+)\s*\(", text))
        # header-only accessors (static inline) are compiled into their callers
        inline |= set(re.findall(r"static\s+inline\s[^(;{]*?\b(tessel_[a-z0-9_]+)\s*\(", text))
    declared = {d for d in declared if not d.endswith("_fn") and d not in inline}
    stray = sorted(s for s in exported if not s.startswith("tessel_"))
    missing = sorted(d for d in declared if d not in exported)
    for s in stray:
        print(f"exported but not public: {s}")
    for m in missing:
        print(f"declared in include/tessel but not exported: {m}")
    print(f"{len(exported)} exported, {len(declared)} declared in include/tessel")
    return 1 if stray or missing else 0


if __name__ == "__main__":
    sys.exit(main())
