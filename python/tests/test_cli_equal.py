"""tessel.run gives summary.csv and traffic.csv byte for byte as tessel run does."""

import unittest

import os
import subprocess
import tempfile

from common import CLI, SPEC, ROOT, cli_run, shared, tessel


def cli_run_json(*args):
    """tessel run -f json's summary.json text."""
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([CLI, "run"] + list(args) + ["--no-timing", "-q", "-f", "json", "-o", out],
                       check=True)
        with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
            return f.read()


class CliEqual(unittest.TestCase):
    def assert_same(self, result, cli):
        self.assertEqual(result.summary_csv, cli[0])
        self.assertEqual(result.traffic_csv, cli[1])
        # and the parsed values are the CSV's
        self.assertEqual(result.summary, tessel.parse_csv(cli[0])[0])
        self.assertEqual(result.traffic_rows, tessel.parse_csv(cli[1]))

    def test_exact_bundled(self):
        self.assert_same(tessel.run(SPEC), cli_run(SPEC))

    def test_exact_shared_file(self):
        path = shared("bcspwr06.mtx.gz")
        spec = os.path.join(ROOT, "specs", "extensor.yaml")
        self.assert_same(tessel.run(spec, {"A": path}), cli_run(spec, "--tensor", "A=" + path))

    def test_overrides_and_strategy(self):
        path = shared("jagmesh7.mtx.gz")
        spec = tessel.Spec(SPEC, set={"LLB.capacity": "1MiB"})
        r = tessel.run(spec, {"A": tessel.load(path)}, strategy="conservative",
                       set={"mapping.LLB.order": "KIJ"})
        self.assert_same(r, cli_run(SPEC, "--set", "LLB.capacity=1MiB", "-T", "A=" + path,
                                    "-S", "conservative", "--set", "mapping.LLB.order=KIJ"))

    def test_stat_reused_statistics(self):
        path = shared("G51.mtx.gz")
        st = tessel.stats(SPEC, {"A": path})
        for order in ("IJK", "IKJ", "KIJ"):
            for cap in ("1MiB", "4MiB"):
                sets = {"mapping.LLB.order": order, "LLB.capacity": cap}
                r = tessel.run(None, stats=st, set=sets)
                args = [SPEC, "-e", "stat", "-T", "A=" + path]
                for k, v in sets.items():
                    args += ["--set", "%s=%s" % (k, v)]
                self.assert_same(r, cli_run(*args))

    def test_stat_with_options(self):
        path = shared("bcspwr06.mtx.gz")
        r = tessel.run(SPEC, {"A": path}, estimator="stat")
        self.assert_same(r, cli_run(SPEC, "-e", "stat", "-T", "A=" + path))
        st = tessel.stats(SPEC, {"A": path}, base="64x64", sample=0.5, seed=3)
        self.assert_same(tessel.run(None, stats=st),
                         cli_run(SPEC, "-e", "stat", "-T", "A=" + path, "--base", "64x64",
                                 "--sample", "0.5", "--seed", "3"))

    def test_analytic(self):
        spec = os.path.join(ROOT, "examples", "specs", "uniform-analytic.yaml")
        self.assert_same(tessel.run(spec, estimator="analytic"),
                         cli_run(spec, "-e", "analytic"))

    def test_energy_sources(self):
        import json
        with_json = cli_run_json(SPEC)
        sources = json.loads(with_json)[0]["energy_sources"]
        self.assertEqual(tessel.run(SPEC).energy_sources, sources)
        self.assertTrue(sources)

    def test_timing(self):
        r = tessel.run(SPEC, timing=True)
        self.assertGreater(r.summary["model_seconds"], 0)
        self.assertTrue(r.feasible)


if __name__ == "__main__":
    unittest.main()
