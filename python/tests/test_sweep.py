"""tessel.sweep: the rows tessel sweep writes, with progress through a callback."""

import os
import subprocess
import tempfile
import unittest

from common import CLI, ROOT, tessel

SWEEP = os.path.join(ROOT, "examples", "sweep", "llb-sweep.yaml")


class Sweep(unittest.TestCase):
    def cli(self, path):
        if not os.path.exists(CLI):
            self.skipTest("no tessel CLI at %s" % CLI)
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out")
            subprocess.run([CLI, "sweep", path, "-o", out, "-q", "-j", "1"], check=True,
                           stdout=subprocess.DEVNULL)
            texts = {}
            for name in ("summary.csv", "traffic.csv", "pareto.csv"):
                with open(os.path.join(out, name), encoding="utf-8") as f:
                    texts[name] = f.read()
            return texts

    def test_file_equals_cli(self):
        seen = []
        r = tessel.sweep(SWEEP, jobs=2, progress=lambda done, total, s: seen.append((done, total)))
        want = self.cli(SWEEP)
        self.assertEqual(r.summary_csv, want["summary.csv"])
        self.assertEqual(r.traffic_csv, want["traffic.csv"])
        self.assertEqual(r.pareto_csv, want["pareto.csv"])
        self.assertEqual(r.points, 288)
        self.assertTrue(seen)
        self.assertEqual(seen[-1], (288, 288))
        rows = r.summary
        self.assertEqual(len(rows), 288)

    def test_dict(self):
        d = {"spec": "spmspm-llb.yaml", "estimator": "stat",
             "axes": {"mapping.LLB.order": ["IJK", "KIJ"],
                      "architecture.levels.LLB.capacity": ["1MiB", "2MiB"]},
             "pareto": ["energy_pj", "cycles"]}
        r = tessel.sweep(d, base_dir=os.path.join(ROOT, "examples", "sweep"))
        self.assertEqual(r.points, 4)
        rows = tessel.parse_csv(r.summary_csv)
        self.assertEqual([row["mapping.LLB.order"] for row in rows], ["IJK", "IJK", "KIJ", "KIJ"])
        # each row is the point tessel.run prices with the same overrides
        st = tessel.stats(os.path.join(ROOT, "examples", "sweep", "spmspm-llb.yaml"))
        for row in rows:
            one = tessel.run(None, stats=st, set={
                "mapping.LLB.order": row["mapping.LLB.order"],
                "LLB.capacity": row["architecture.levels.LLB.capacity"]}).summary
            self.assertEqual(one["energy_pj"], row["energy_pj"])
            self.assertEqual(one["dram_bytes"], row["dram_bytes"])

    def test_bad_sweep(self):
        # the point's spec is derived when it runs: its error names the point
        with self.assertRaises(tessel.TesselError) as cm:
            tessel.sweep({"spec": "spmspm-llb.yaml", "axes": {"mapping.LLB.ordr": ["IJK"]}},
                         base_dir=os.path.join(ROOT, "examples", "sweep"))
        self.assertIn("did you mean 'order'?", str(cm.exception))
        with self.assertRaises(tessel.SpecError):
            tessel.sweep({"spec": "spmspm-llb.yaml", "axs": {}},
                         base_dir=os.path.join(ROOT, "examples", "sweep"))

    def test_progress_exception(self):
        def stop(done, total, s):
            raise KeyboardInterrupt

        with self.assertRaises(KeyboardInterrupt):
            tessel.sweep({"spec": "spmspm-llb.yaml", "axes": {"mapping.LLB.order": ["IJK"]}},
                         base_dir=os.path.join(ROOT, "examples", "sweep"), progress=stop)


if __name__ == "__main__":
    unittest.main()
