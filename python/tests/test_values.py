"""The numeric fast path (tessel_sweep_values_*): the numbers give the same cells as the
CSV text of the same point, run_many and grid the same rows as run, one call each."""

import itertools
import os
import unittest

from common import ROOT, SPEC, shared, tessel

from tessel import _values


def pandas_or_none():
    try:
        import pandas
        return pandas
    except ImportError:
        return None


class Layout(unittest.TestCase):
    def test_every_column_has_a_number_or_a_text(self):
        # a column added to summary.csv or traffic.csv without its place in
        # src/report/values.c fails here (the package would fall back to parsing text)
        lay = _values.layout()
        self.assertEqual(sorted(lay.s_ints + lay.s_doubles + lay.s_texts),
                         sorted(lay.summary_header))
        self.assertEqual(sorted(lay.s_texts[:_values.KEYS] + ["level", "tensor"] + lay.t_ints +
                                lay.t_doubles), sorted(lay.traffic_header))
        self.assertTrue(lay.complete)

    def test_long_text_is_copied_whole(self):
        # a point's text cells beyond the bytes copied with the numbers (TEXT_COPY)
        import struct
        lay = _values.layout()
        buf = lay.Buffer()
        view = memoryview(buf).cast("B")
        cells = ("d" * 700 + "\0w\0").encode()
        view[lay.text_at:lay.text_at + len(cells)] = cells
        struct.pack_into("=q", view, lay.text_bytes_at, len(cells))
        self.assertGreater(len(cells), _values.TEXT_COPY)
        self.assertEqual(_values.Values(lay, view).texts(), ["d" * 700, "w"])
        ints = view[:lay.doubles_at]
        doubles = view[lay.doubles_at:lay.text_at]
        text = view[lay.text_at:]
        self.assertEqual(_values.Values.of_chunk(lay, ints, doubles, text, 0).texts(),
                         ["d" * 700, "w"])


class SameAsText(unittest.TestCase):
    def assert_same(self, r):
        """r's numbers-built summary and traffic against its own CSV text: values, their
        types (int, float, None, str) and the columns' order."""
        text = tessel.parse_csv(r.summary_csv)[0]
        self.assertIsNotNone(r._values)
        summary = r._values.summary()
        self.assertEqual(list(summary.items()), list(text.items()))
        self.assertEqual([type(v) for v in summary.values()], [type(v) for v in text.values()])
        rows = r._values.traffic_rows()
        trows = tessel.parse_csv(r.traffic_csv)
        self.assertEqual([list(x.items()) for x in rows], [list(x.items()) for x in trows])
        self.assertEqual([[type(v) for v in x.values()] for x in rows],
                         [[type(v) for v in x.values()] for x in trows])

    def test_estimators(self):
        self.assert_same(tessel.run(SPEC))  # exact on the bundled data
        self.assert_same(tessel.run(os.path.join(ROOT, "examples", "specs",
                                                 "uniform-analytic.yaml"), estimator="analytic"))
        self.assert_same(tessel.run(SPEC, estimator="stat"))

    def test_reused_statistics_and_strategy(self):
        path = shared("bcspwr06.mtx.gz")
        st = tessel.stats(SPEC, {"A": path})
        for sets in ({"LLB.capacity": "1MiB", "mapping.LLB.order": "KIJ"},
                     {"LLB.capacity": "256KiB"}):
            r = tessel.run(SPEC, stats=st, set=sets)
            self.assertIsNone(r._rec)  # no record until the text is asked for
            self.assert_same(r)
        self.assert_same(tessel.run(SPEC, stats=st, strategy="conservative"))
        # with timing the record is kept: model_seconds is the one priced
        r = tessel.run(SPEC, stats=st, timing=True)
        self.assertIsNotNone(r._rec)
        self.assertEqual(r.summary, tessel.parse_csv(r.summary_csv)[0])

    def test_feasible_matches_the_record(self):
        st = tessel.stats(SPEC, {"A": shared("bcspwr06.mtx.gz")})
        feasible = set()
        for cap in ("16KiB", "4MiB"):
            r = tessel.run(SPEC, stats=st, set={"LLB.capacity": cap})
            kept = tessel.run(SPEC, stats=st, set={"LLB.capacity": cap}, timing=True)
            self.assertEqual(r.feasible, bool(tessel.lib().tessel_sweep_record_feasible(
                kept._rec, None, None)))
            feasible.add(r.feasible)
        self.assertEqual(feasible, {False, True})  # the test saw both verdicts


class LazySummary(unittest.TestCase):
    """Result.summary converts a cell when it is read (Summary); it is still the dict of
    the row for everything else."""

    def setUp(self):
        self.st = tessel.stats(SPEC, {"A": shared("bcspwr06.mtx.gz")})

    def fresh(self, **sets):
        r = tessel.run(SPEC, stats=self.st, set=sets or {"LLB.capacity": "1MiB"})
        self.assertIsInstance(r.summary, dict)
        return r

    def test_each_cell_read_alone_equals_the_text(self):
        # 16KiB: infeasible (empty and integral cells differ from the 1MiB point's)
        for cap in ("1MiB", "16KiB"):
            expect = tessel.parse_csv(self.fresh(**{"LLB.capacity": cap}).summary_csv)[0]
            for col, v in expect.items():
                got = self.fresh(**{"LLB.capacity": cap}).summary[col]  # unfilled each time
                self.assertEqual((got, type(got)), (v, type(v)), col)
                self.assertEqual(self.fresh(**{"LLB.capacity": cap}).summary.get(col), v)
        s = self.fresh().summary
        self.assertIsNone(s.get("no_such_column"))
        self.assertNotIn("no_such_column", s)
        self.assertIn("energy_pj", s)
        self.assertEqual(len(s), len(expect))
        with self.assertRaises(KeyError):
            s["no_such_column"]

    def test_a_dict_everywhere(self):
        import copy
        import json
        import pickle
        r = self.fresh()
        text = tessel.parse_csv(r.summary_csv)[0]
        self.assertEqual(self.fresh().summary, text)
        self.assertEqual(text, self.fresh().summary)
        self.assertFalse(self.fresh().summary != text)
        self.assertEqual(list(self.fresh().summary), list(text))
        self.assertEqual(list(self.fresh().summary.items()), list(text.items()))
        self.assertEqual(dict(self.fresh().summary), text)
        self.assertEqual({**self.fresh().summary}, text)
        self.assertEqual(json.loads(json.dumps(self.fresh().summary)), json.loads(json.dumps(text)))
        self.assertEqual(pickle.loads(pickle.dumps(self.fresh().summary)), text)
        self.assertIs(type(copy.copy(self.fresh().summary)), dict)
        self.assertEqual(repr(self.fresh().summary), repr(text))
        s = self.fresh().summary
        s["mine"] = 1  # a change fills the dict first
        self.assertEqual(s, dict(text, mine=1))
        pandas = pandas_or_none()
        if pandas is not None:  # columns in the header's order, as from dicts
            pandas.testing.assert_frame_equal(pandas.DataFrame([self.fresh().summary]),
                                              pandas.DataFrame([text]))


class OverrideForms(unittest.TestCase):
    def test_every_form_of_set_prices_the_same_point(self):
        # run() packs the overrides itself on its fast path: a dict of strings, of other
        # values, a list, one string, with a strategy, on a spec with its own overrides
        st = tessel.stats(SPEC, {"A": shared("bcspwr06.mtx.gz")})
        expect = tessel.run(tessel.Spec(SPEC, set=["LLB.capacity=1MiB",
                                                   "mapping.LLB.order=KIJ"]),
                            stats=st, strategy="conservative").summary_csv
        derived = tessel.Spec(SPEC, set={"LLB.capacity": "1MiB"})
        for spec, sets in ((SPEC, {"LLB.capacity": "1MiB", "mapping.LLB.order": "KIJ"}),
                           (SPEC, {"LLB.capacity": 1048576, "mapping.LLB.order": "KIJ"}),
                           (SPEC, ["LLB.capacity=1MiB", "mapping.LLB.order=KIJ"]),
                           (derived, "mapping.LLB.order=KIJ"),
                           (derived, {"mapping.LLB.order": "KIJ"})):
            r = tessel.run(spec, stats=st, set=sets, strategy="conservative")
            self.assertIsNone(r._rec)  # the fast path
            self.assertEqual(r.summary, tessel.parse_csv(expect)[0], sets)
            self.assertEqual(r.summary_csv, expect, sets)
        with self.assertRaises(tessel.SpecError) as cm:
            tessel.run(derived, stats=st, set={"mapping.LLB.ordr": "KIJ"})
        self.assertEqual(cm.exception.diagnostics[0].suggestion, "order")


class Bound(unittest.TestCase):
    """spec.bind(paths).run(values) prices what run(spec, set=dict(zip(paths, values)))
    prices."""

    def test_bound_equals_run(self):
        st = tessel.stats(SPEC, {"A": shared("bcspwr06.mtx.gz")})
        spec = tessel.Spec(SPEC, set={"mapping.LLB.order": "KIJ"})
        b = spec.bind(["LLB.capacity", "mapping.LLB.tile"], stats=st, strategy="conservative")
        for values in (["1MiB", "i:256,k:256,j:256"], ("1048576", "i:256,k:256,j:256"),
                       [1048576, "i:256,k:256,j:256"], [1048576.0, "i:128,k:128,j:128"]):
            r = b.run(values)
            self.assertIsNone(r._rec)  # one library call, no record
            sets = {"LLB.capacity": str(values[0]).replace(".0", ""),
                    "mapping.LLB.tile": values[1]}
            expect = tessel.run(spec, stats=st, set=sets, strategy="conservative", timing=True)
            text = tessel.parse_csv(expect.summary_csv)[0]
            text["model_seconds"] = 0
            self.assertEqual(r.summary, text, values)
        self.assertEqual(b.paths, ["LLB.capacity", "mapping.LLB.tile"])
        with self.assertRaises(ValueError):
            b.run(["1MiB"])
        with self.assertRaises(tessel.SpecError):
            b.run(["1MiB", "i:256,x:1"])
        rows = [["512KiB", "i:128,k:128,j:128"], ["2MiB", "i:256,k:256,j:256"]]
        table = b.run_many(rows)
        got = table.to_dict("records") if not isinstance(table, list) else table
        self.assertEqual([row["energy_pj"] for row in got],
                         [b.run(row).summary["energy_pj"] for row in rows])

    def test_numbers_and_other_estimators(self):
        from tessel._bound import value_text
        self.assertEqual([value_text(v) for v in ["x", True, False, 7, 2.0, 0.25, 1e20]],
                         ["x", "true", "false", "7", "2", "0.25", "1e+20"])
        try:
            import numpy
        except ImportError:
            numpy = None
        if numpy is not None:
            self.assertEqual([value_text(v) for v in numpy.array([1048576, 3])], ["1048576", "3"])
            self.assertEqual(value_text(numpy.float64(0.5)), "0.5")
            self.assertEqual(value_text(numpy.bool_(True)), "true")
        # exact on the spec's own data: run() serves each point
        b = tessel.Spec(SPEC).bind("LLB.capacity")
        self.assertEqual(b.run(["1MiB"]).summary_csv,
                         tessel.run(SPEC, set={"LLB.capacity": "1MiB"}).summary_csv)


class Many(unittest.TestCase):
    POINTS = [{"LLB.capacity": c, "mapping.LLB.order": o}
              for c in ("512KiB", "2MiB") for o in ("IJK", "KIJ", "JKI")]

    def setUp(self):
        self.st = tessel.stats(SPEC, {"A": shared("bcspwr06.mtx.gz")})

    def test_run_many_equals_run(self):
        one = [tessel.run(SPEC, stats=self.st, set=p) for p in self.POINTS]
        summary, traffic = tessel.run_many(SPEC, self.POINTS, stats=self.st, traffic=True)
        table = tessel.run_many(SPEC, self.POINTS, stats=self.st)
        trows = [row for r in one for row in r.traffic_rows]
        pandas = pandas_or_none()
        if pandas is None:
            self.assertEqual(table, [r.summary for r in one])
            self.assertEqual(summary, table)
            self.assertEqual(traffic, trows)
        else:
            expect = pandas.DataFrame([r.summary for r in one])
            pandas.testing.assert_frame_equal(table, expect)
            pandas.testing.assert_frame_equal(summary, expect)
            pandas.testing.assert_frame_equal(traffic, pandas.DataFrame(trows))
        # and the text of one of them is the CLI's text of the same point
        self.assertEqual(tessel.parse_csv(one[3].summary_csv)[0], one[3].summary)

    def test_more_points_than_a_chunk(self):
        points = [{"LLB.capacity": "%dKiB" % (256 + k)} for k in range(300)]
        table = tessel.run_many(SPEC, points, stats=self.st)
        energies = [row["energy_pj"] for row in table] if isinstance(table, list) \
            else list(table["energy_pj"])
        self.assertEqual(len(energies), 300)
        for k in (0, 255, 256, 299):
            self.assertEqual(energies[k],
                             tessel.run(SPEC, stats=self.st, set=points[k]).summary["energy_pj"])

    def test_error_names_the_point(self):
        with self.assertRaises(tessel.SpecError) as cm:
            tessel.run_many(SPEC, [{"LLB.capacity": "1MiB"}, {"mapping.LLB.order": "IXJ"}],
                            stats=self.st)
        self.assertEqual(cm.exception.point, 1)
        self.assertIn("permutation", str(cm.exception))

    def test_grid_over_memory_tensors(self):
        import array
        # a tensor built in memory (no file): a 200 x 200 band
        rows = array.array("q", [i for i in range(200) for d in (-1, 0, 1) if 0 <= i + d < 200])
        cols = array.array("q", [i + d for i in range(200) for d in (-1, 0, 1)
                                 if 0 <= i + d < 200])
        band = tessel.from_coo((rows, cols), (200, 200), name="band")
        st = tessel.stats(SPEC, {"A": band})
        axes = {"LLB.capacity": ["256KiB", "1MiB"], "mapping.LLB.order": ["IJK", "KJI"]}
        table = tessel.grid(SPEC, axes, stats=st)
        combos = list(itertools.product(*axes.values()))
        expect = [tessel.run(SPEC, stats=st, set=dict(zip(axes, c))).summary for c in combos]
        pandas = pandas_or_none()
        got = table.to_dict("records") if pandas is not None else table
        self.assertEqual(len(got), 4)
        for k, (row, c) in enumerate(zip(got, combos)):
            self.assertEqual(row["point"], k)
            self.assertEqual((row["LLB.capacity"], row["mapping.LLB.order"]), c)
            self.assertEqual(row["data"], "band")
            for col, v in expect[k].items():
                if v is None:
                    self.assertTrue(row[col] is None or row[col] != row[col], col)
                else:
                    self.assertEqual(row[col], v, col)


if __name__ == "__main__":
    unittest.main()
