"""Points that differ only in the values of a few spec paths (Spec.bind): the paths and
what the points share are packed once, and a point passes only its values, so that its
cost from Python is the library call and the result (docs/python.md "Cost per point")."""

import operator
import threading

from ._many import run_many
from ._run import Result, run
from ._spec import _set_list


def value_text(v):
    """A value as an override writes it: strings as given, booleans as true/false,
    integers (NumPy's too) in decimal, an integral float as an integer, other floats in
    the shortest form that reads back."""
    if isinstance(v, str):
        return v
    if v is True or v is False or type(v).__name__ == "bool_":
        return "true" if v else "false"
    try:
        return "%d" % operator.index(v)
    except TypeError:
        pass
    if isinstance(v, float) or hasattr(v, "is_integer"):
        f = float(v)
        return "%d" % f if f.is_integer() and abs(f) < 1e18 else repr(f)
    return str(v)


class Bound(object):
    """spec.bind(paths, ...): run(values) prices the point whose overrides are
    paths[i]=values[i] (after the spec's own, `set` and `strategy`), as
    run(spec, set=dict(zip(paths, values)), ...) prices it; values are strings or numbers
    (a list, a tuple, a NumPy row). With statistics (the stat estimator, no timing) a
    point is one library call on this thread's handles; otherwise run() serves."""

    def __init__(self, spec, paths, stats=None, tensors=None, estimator=None, strategy=None,
                 set=None, label=None, timing=False, drop_zeros=False):
        if isinstance(paths, str):
            paths = [paths]
        self.paths = list(paths)
        self.spec = spec
        self._prefixes = [p + "=" for p in self.paths]
        self._fixed = _set_list(set)
        if strategy:
            self._fixed.append("mapping.strategy=%s" % strategy)
        self._args = dict(tensors=tensors, estimator=estimator, stats=stats, timing=timing,
                          label=label, drop_zeros=drop_zeros)
        self._fast = stats is not None and not tensors and not timing and \
            estimator in (None, "stat")
        self._mine = (None, None)  # (thread id, (pricer, packed shared overrides, count))
        if not self.paths:
            raise ValueError("bind needs at least one path")

    def _prepare(self):
        """This thread's (Pricer, the shared overrides packed, their number), kept for the
        last thread that asked (a loop runs on one thread)."""
        tid = threading.get_ident()
        mine = self._mine
        if mine[0] != tid:
            fast = self._args["stats"]._fast(self.spec, self._args["label"])
            if fast is None:
                self._fast = False
                return None
            _, pricer, sets, n = fast
            if self._fixed:
                sets += "\0".join(self._fixed).encode("utf-8") + b"\0"
                n += len(self._fixed)
            mine = self._mine = (tid, (pricer, sets, n))
        return mine[1]

    def _sets(self, values):
        """The point's overrides as one string, NUL-separated, and their number."""
        prefixes = self._prefixes
        if len(values) != len(prefixes):
            raise ValueError("%d values for %d bound paths" % (len(values), len(prefixes)))
        try:  # strings: joined by C loops
            return "\0".join(map(str.__add__, prefixes, values))
        except TypeError:
            return "\0".join([p + value_text(v) for p, v in zip(prefixes, values)])

    def run(self, values):
        """The point with values[i] at paths[i]: a Result, as run() returns."""
        if self._fast:
            ready = self._prepare()
            if ready is not None:
                pricer, sets, n = ready
                sets += self._sets(values).encode("utf-8") + b"\0"
                n += len(self._prefixes)
                return Result(None, pricer.values(sets, n), (pricer.origin, sets, n))
        return run(self.spec, set=self._fixed + self._sets(values).split("\0"), **self._args)

    def run_many(self, rows, traffic=False):
        """The points of `rows` (each a sequence of values) through run_many: one table."""
        points = [self._fixed + self._sets(row).split("\0") for row in rows]
        return run_many(self.spec, points, traffic=traffic, **self._args)
