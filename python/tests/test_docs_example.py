"""docs/python.md's "Ten lines" runs as written: from the repository root, with this
checkout's package, on the shared matrix it names (issue 28's "the docs show a ten-line
example")."""

import os
import subprocess
import sys
import unittest

from common import ROOT


def example():
    """The first python block after the "## Ten lines" heading of docs/python.md."""
    with open(os.path.join(ROOT, "docs", "python.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.index("```python\n", text.index("## Ten lines")) + len("```python\n")
    return text[start:text.index("```", start)]


class TenLines(unittest.TestCase):
    def test_runs_as_written(self):
        code = example()
        self.assertLessEqual(len([l for l in code.splitlines() if l.strip()]), 10)
        try:
            import scipy.io  # noqa: F401  (the example reads its matrix with SciPy)
        except ImportError:
            raise unittest.SkipTest("no SciPy in this interpreter")
        if not os.path.exists(os.path.join(ROOT, "..", "shared", "data", "mtx",
                                           "ca-GrQc.mtx.gz")):
            raise unittest.SkipTest("the shared data is not next to the repository")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.path.join(ROOT, "python")
        p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        # the two loop orders' energy, cycles and verdict, then the traffic table
        self.assertEqual([l.split()[0] for l in lines[:2]], ["IJK", "KIJ"])
        self.assertGreater(float(lines[0].split()[1]), 0)
        self.assertIn(lines[0].split()[3], ("True", "False"))
        # the traffic table: its data label, unless pandas elided the column to fit its
        # 80-character display (traffic.csv has 29 columns), when it names the shape
        self.assertTrue("ca-GrQc" in p.stdout or "rows x 29 columns]" in p.stdout, p.stdout)


if __name__ == "__main__":
    unittest.main()
