"""Tensors from memory: a scipy matrix (and plain coordinate lists) give the results the
same matrix read from its file gives."""

import unittest

from common import SPEC, shared, tessel


class Memory(unittest.TestCase):
    def same(self, a, b):
        self.assertEqual(a.summary_csv, b.summary_csv)
        self.assertEqual(a.traffic_csv, b.traffic_csv)

    def test_coordinate_lists(self):
        path = shared("bcspwr06.mtx.gz")
        t = tessel.load(path)
        rows, cols = [], []
        # the file's entries through a scipy-free route: write and read back as lists
        import gzip
        with gzip.open(path, "rt") as f:
            lines = [l for l in f if not l.startswith("%")]
        n, m, _ = map(int, lines[0].split())
        for line in lines[1:]:
            i, j = map(int, line.split()[:2])
            rows.append(i - 1)
            cols.append(j - 1)
            if i != j:  # symmetric file: the reader expands the other triangle
                rows.append(j - 1)
                cols.append(i - 1)
        mem = tessel.from_coo((rows, cols), (n, m), name="bcspwr06")
        self.assertEqual((mem.shape, mem.nnz), (t.shape, t.nnz))
        self.same(tessel.run(SPEC, {"A": mem}), tessel.run(SPEC, {"A": path}))

    def test_scipy(self):
        try:
            import scipy.io
            import scipy.sparse  # noqa: F401
        except ImportError:
            self.skipTest("scipy is not installed for this interpreter")
        for name in ("G51.mtx.gz", "jagmesh7.mtx.gz", "Pd.mtx.gz"):
            path = shared(name)
            m = scipy.io.mmread(path)
            for fmt in (m.tocsr(), m.tocoo()):
                mem = tessel.from_scipy(fmt, name=name[:-len(".mtx.gz")])
                self.assertEqual(mem.nnz, tessel.load(path).nnz)
                self.same(tessel.run(SPEC, {"A": mem}), tessel.run(SPEC, {"A": path}))
                st_mem = tessel.stats(SPEC, {"A": mem})
                st_file = tessel.stats(SPEC, {"A": path})
                self.same(tessel.run(None, stats=st_mem), tessel.run(None, stats=st_file))


if __name__ == "__main__":
    unittest.main()
