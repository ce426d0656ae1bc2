"""Bad specs raise SpecError carrying every diagnostic with the CLI's messages; no
error aborts the interpreter."""

import os
import tempfile
import unittest

from common import SPEC, CliError, cli_run, tessel


def cli_errors(*args):
    """The error lines tessel run prints, without its final count."""
    try:
        cli_run(*args)
    except CliError as e:
        return [l for l in e.stderr.splitlines() if not l.startswith("tessel run: ")]
    raise AssertionError("tessel run accepted %r" % (args,))


class Errors(unittest.TestCase):
    def test_overrides(self):
        sets = {"mapping.LLB.ordr": "IJK", "LLB.capacity": "zz", "compute.pes": "-3"}
        with self.assertRaises(tessel.SpecError) as cm:
            tessel.Spec(SPEC, set=sets)
        args = [SPEC]
        for k, v in sets.items():
            args += ["--set", "%s=%s" % (k, v)]
        want = cli_errors(*args)
        self.assertEqual([str(d) for d in cm.exception.diagnostics], want)
        self.assertGreaterEqual(len(want), 2)
        first = cm.exception.diagnostics[0]
        self.assertEqual((first.file, first.line, first.column), ("--set", 1, 13))
        self.assertEqual(first.suggestion, "order")

    def test_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad.yaml")
            with open(SPEC, encoding="utf-8") as f:
                text = f.read()
            text = text.replace("word_bits: 256", "word_bit: 256")
            text = text.replace("../data/G51.mtx.gz", os.path.join(
                os.path.dirname(SPEC), "..", "data", "G51.mtx.gz"))
            text = text.replace("../../energy_tables", os.path.join(
                os.path.dirname(SPEC), "..", "..", "energy_tables"))
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            with self.assertRaises(tessel.SpecError) as cm:
                tessel.Spec(path)
            self.assertEqual([str(d) for d in cm.exception.diagnostics], cli_errors(path))
            self.assertEqual(cm.exception.diagnostics[0].file, path)
            self.assertIsNotNone(cm.exception.diagnostics[0].line)

    def test_missing_file(self):
        with self.assertRaises(tessel.SpecError) as cm:
            tessel.Spec("/nonexistent/spec.yaml")
        self.assertEqual([str(d) for d in cm.exception.diagnostics],
                         cli_errors("/nonexistent/spec.yaml"))

    def test_dict(self):
        with self.assertRaises(tessel.SpecError) as cm:
            tessel.Spec({"name": "x", "workload": {"einsum": "Z[i,j] = A[i,k] * B[k,j]"},
                         "architectur": {}})
        self.assertTrue(any("architectur" in d.message for d in cm.exception.diagnostics))

    def test_data_errors(self):
        with self.assertRaises(tessel.TesselError) as cm:
            tessel.load("/nonexistent/m.mtx")
        self.assertIn("/nonexistent/m.mtx", str(cm.exception))
        with self.assertRaises(tessel.TesselError):
            tessel.from_coo(([0, 5], [0, 1]), (3, 3))
        bad = tessel.from_coo(([0, 1, 2], [0, 1, 2], [0, 0, 0]), (3, 3, 3))
        with self.assertRaises(tessel.SpecError) as cm:
            tessel.run(SPEC, {"A": bad})
        self.assertIn("order 3", str(cm.exception))

    def test_unknown_tensor(self):
        with self.assertRaises(tessel.SpecError):
            tessel.run(SPEC, {"Q": tessel.from_coo(([0], [0]), (2, 2))})

    def test_estimator_refusal(self):
        # analytic needs density models: the bundled spec binds files
        with self.assertRaises(tessel.TesselError) as cm:
            tessel.run(SPEC, estimator="analytic")
        self.assertLess(cm.exception.code, 0)


if __name__ == "__main__":
    unittest.main()
