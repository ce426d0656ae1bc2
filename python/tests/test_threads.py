"""Calls release the GIL (ctypes.CDLL): runs from several threads on one Stats give the
results of sequential runs."""

import threading
import unittest

from common import SPEC, shared, tessel


class Threads(unittest.TestCase):
    def test_parallel_runs(self):
        st = tessel.stats(SPEC, {"A": shared("jagmesh7.mtx.gz")})
        points = [{"mapping.LLB.order": o, "LLB.capacity": c}
                  for o in ("IJK", "IKJ", "KIJ") for c in ("512KiB", "1MiB", "2MiB", "4MiB")]
        want = [tessel.run(None, stats=st, set=p).summary_csv for p in points]
        got = [None] * len(points)
        errors = []

        def work(k):
            try:
                for i in range(k, len(points), 4):
                    got[i] = tessel.run(None, stats=st, set=points[i]).summary_csv
            except BaseException as e:  # reported by the main thread
                errors.append(e)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(got, want)

    def test_parallel_exact_and_errors(self):
        out = {}

        def good():
            out["good"] = tessel.run(SPEC).summary_csv

        def bad():
            try:
                tessel.Spec(SPEC, set={"LLB.capacity": "nope"})
            except tessel.SpecError as e:
                out["bad"] = e

        threads = [threading.Thread(target=good), threading.Thread(target=bad)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(out["good"], tessel.run(SPEC).summary_csv)
        self.assertIsInstance(out["bad"], tessel.SpecError)


if __name__ == "__main__":
    unittest.main()
