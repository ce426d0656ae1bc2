"""examples/notebooks/dse.ipynb is a valid nbformat 4 notebook whose cells are the
script dse.py's parts (py2nb.py --check)."""

import json
import os
import subprocess
import sys
import unittest

from common import ROOT

NB = os.path.join(ROOT, "examples", "notebooks")


class Notebook(unittest.TestCase):
    def test_nbformat(self):
        with open(os.path.join(NB, "dse.ipynb"), encoding="utf-8") as f:
            nb = json.load(f)
        self.assertEqual(nb["nbformat"], 4)
        self.assertIn("kernelspec", nb["metadata"])
        kinds = set()
        for cell in nb["cells"]:
            kinds.add(cell["cell_type"])
            self.assertIsInstance(cell["source"], list)
            self.assertEqual(cell["metadata"], {})
            if cell["cell_type"] == "code":
                self.assertEqual(cell["outputs"], [])
                self.assertIn("execution_count", cell)
        self.assertEqual(kinds, {"code", "markdown"})

    def test_cells_are_the_script(self):
        p = subprocess.run([sys.executable, os.path.join(NB, "py2nb.py"), "--check"],
                           stdout=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(p.returncode, 0, p.stdout)
        # and the code cells, joined, are the script's code
        with open(os.path.join(NB, "dse.ipynb"), encoding="utf-8") as f:
            code = "\n".join("".join(c["source"]) for c in json.load(f)["cells"]
                           if c["cell_type"] == "code")
        with open(os.path.join(NB, "dse.py"), encoding="utf-8") as f:
            script = f.read()
        for line in code.splitlines():
            self.assertIn(line, script)


if __name__ == "__main__":
    unittest.main()
