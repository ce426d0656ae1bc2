"""Calls release the GIL (ctypes.CDLL): another thread runs Python while one sits in a
long library call, and runs from several threads on one Stats give the results of
sequential runs."""

import ctypes
import sys
import threading
import time
import unittest

from common import SPEC, shared, tessel


class Threads(unittest.TestCase):
    def test_gil_released_in_a_long_call(self):
        # a worker collects statistics by one library call; the main thread counts while
        # the worker is inside it. Were the GIL held by the call, the main thread could
        # run only until the worker's next switch (a millisecond here) and then not at
        # all until the call returned: its progress would span a sliver of the call
        from tessel import _lib
        spec = tessel.Spec(SPEC)
        workload = tessel.Workload(spec, {"A": tessel.load(shared("ca-GrQc.mtx.gz"))})
        L = tessel.lib()
        inside = threading.Event()
        spans = {}

        def work():
            h, d = ctypes.c_void_p(), _lib.Diag()
            inside.set()
            t0 = time.perf_counter()
            rc = L.tessel_sweep_stats_create(spec._h, workload._h, 0, 0, 0.0, 1, -1.0, None,
                                             ctypes.byref(h), ctypes.byref(d))
            spans["call"] = (t0, time.perf_counter())
            inside.clear()
            L.tessel_stat_data_free(ctypes.byref(h))
            spans["rc"] = rc

        old = sys.getswitchinterval()
        sys.setswitchinterval(0.001)
        try:
            th = threading.Thread(target=work)
            th.start()
            inside.wait()
            ticks = []
            while th.is_alive():
                ticks.append(time.perf_counter())
            th.join()
        finally:
            sys.setswitchinterval(old)
        self.assertEqual(spans["rc"], 0)
        t0, t1 = spans["call"]
        during = [t for t in ticks if t0 < t < t1]
        self.assertGreater(t1 - t0, 0.02)  # long enough to tell (0.4 s when measured)
        self.assertTrue(during, "the main thread never ran during the call")
        self.assertGreater(during[-1] - during[0], 0.5 * (t1 - t0))

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
