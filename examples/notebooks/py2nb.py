#!/usr/bin/env python3
"""Writes a notebook (nbformat 4) from a script whose cells are separated by "# %%"
lines ("# %% [markdown]" cells are comment lines turned into Markdown), or with --check
fails when the notebook's cells differ from the script's (python/tests/test_notebook.py).

  python3 examples/notebooks/py2nb.py [--check] [SCRIPT [NOTEBOOK]]
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def cells(text):
    """(kind, source lines) of each cell of the script, in order."""
    out = []
    for line in text.splitlines():
        if line.startswith("# %%"):
            out.append(["markdown" if "[markdown]" in line else "code", []])
        elif out:
            out[-1][1].append(line)
    result = []
    for kind, lines in out:
        while lines and not lines[-1].strip():
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
        if kind == "markdown":
            lines = [l[2:] if l.startswith("# ") else l.lstrip("#") for l in lines]
        result.append((kind, lines))
    return result


def notebook(text):
    nb_cells = []
    for kind, lines in cells(text):
        source = [l + "\n" for l in lines[:-1]] + lines[-1:]
        cell = {"cell_type": kind, "metadata": {}, "source": source}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        nb_cells.append(cell)
    return {"cells": nb_cells, "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                        "name": "python3"},
                         "language_info": {"name": "python"}}}


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    script = args[0] if args else os.path.join(HERE, "dse.py")
    nb_path = args[1] if len(args) > 1 else os.path.splitext(script)[0] + ".ipynb"
    with open(script, encoding="utf-8") as f:
        want = notebook(f.read())
    text = json.dumps(want, indent=1, ensure_ascii=False) + "\n"
    if check:
        with open(nb_path, encoding="utf-8") as f:
            have = json.load(f)
        if [(c["cell_type"], "".join(c["source"])) for c in have["cells"]] != \
                [(c["cell_type"], "".join(c["source"])) for c in want["cells"]]:
            print("%s: cells differ from %s; run %s" % (nb_path, script, " ".join(sys.argv[:1])))
            return 1
        return 0
    with open(nb_path, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
