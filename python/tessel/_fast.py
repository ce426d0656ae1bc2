"""The per-point fast path (docs/python.md "Cost per point"): a tessel_sweep_values per
thread and per spec, estimator, label and timing, holding everything points share, so
that a point is one ctypes call of five arguments (ctypes spends about a microsecond
converting each argument); its numbers come back in arrays made once."""

import ctypes

from . import _common, _errors
from ._common import _b, lib
from ._lib import DiagList
from ._values import TEXTS_MAX, Values, layout


_FEW = 64
_COUNTS = tuple(ctypes.c_size_t(n) for n in range(_FEW))  # read-only arguments, shared


def set_bytes(sets):
    """Overrides as tessel_sweep_values_point takes them: NUL-terminated strings back to
    back (bytes objects end with a NUL of their own)."""
    return "\0".join(sets).encode("utf-8")


def split_sets(sets, n):
    """The strings set_bytes packed (for the messages of a failed point)."""
    return sets.decode("utf-8").split("\0")[:n] if n else []


class Pricer(object):
    """A tessel_sweep_values with its arrays: the points of one spec (overrides aside),
    estimator, data, label and timing, on one thread."""

    def __init__(self, root, code, data, stat, shared, cache, db, label, timing):
        L = lib()
        lay = self.layout = layout()
        self.buffer = lay.Buffer()  # ints, doubles and text back to back (Layout)
        self.view = memoryview(self.buffer).cast("B")
        at = ctypes.addressof(self.buffer)
        self.root = root  # the handles below must outlive the C object: held here
        self.origin = None  # (stats, root, code, db, label): what Stats made it from
        self._label = _b(label) if label else None
        self._h = ctypes.c_void_p()
        if L.tessel_sweep_values_create(root._h, code, data, stat, shared, cache, db,
                                        self._label, 1 if timing else 0, at,
                                        at + lay.doubles_at, at + lay.text_at, None,
                                        ctypes.byref(self._h)):
            raise MemoryError("out of memory preparing a point")
        # the per-point call without argtypes, given ctypes objects (and bytes for the
        # overrides) that ctypes passes without converting: half the cost of from_param
        self._point = L["tessel_sweep_values_point"]
        self._point.restype = ctypes.c_int
        self._new_list()

    def _new_list(self):
        self._dl = DiagList()
        self._pdl = ctypes.byref(self._dl)

    def _fail(self, L, rc, sets):
        """The exception of a failed call (the diagnostic list freed and made anew)."""
        dl = self._dl
        self._new_list()
        from ._run import point_error
        return point_error(L, rc, dl, self.root, sets)

    def point(self, sets, text=True):
        """One point with the overrides `sets` (strings): (record or None, Values)."""
        return self.point_bytes(set_bytes(sets), len(sets), text)

    def point_bytes(self, sets, n, text=True):
        """One point with the n overrides packed in `sets` (set_bytes): (record or None,
        Values)."""
        count = _COUNTS[n] if n < _FEW else ctypes.c_size_t(n)
        if text:
            rec = ctypes.c_void_p()
            rc = self._point(self._h, sets, count, ctypes.byref(rec), self._pdl)
        else:
            rec = None
            rc = self._point(self._h, sets, count, None, self._pdl)
        if rc:
            raise self._fail(lib(), rc, split_sets(sets, n))
        return rec, Values(self.layout, self.view)

    def values(self, sets, n):
        """Values of the point with the n overrides packed in `sets` (set_bytes), keeping
        no record: the study's loop, run(spec, stats=...) on this thread."""
        rc = self._point(self._h, sets, _COUNTS[n] if n < _FEW else ctypes.c_size_t(n), None,
                         self._pdl)
        if rc:
            raise self._fail(lib(), rc, split_sets(sets, n))
        return Values(self.layout, self.view)

    def chunks(self, many):
        """The arrays of each chunk of points of `many`, as (points, ints, doubles, text)
        filled by tessel_sweep_values_points."""
        L = lib()
        lay = self.layout
        out = []
        chunk = 256  # bounds the text arrays: 2 MiB a chunk
        for first in range(0, len(many), chunk):
            part = many[first:first + chunk]
            n = len(part)
            flat = [s for sets in part for s in sets]
            counts = (ctypes.c_size_t * n)(*[len(sets) for sets in part])
            ints = (ctypes.c_int64 * (n * lay.n_ints))()
            doubles = (ctypes.c_double * (n * lay.n_doubles))()
            text = (ctypes.c_char * (n * TEXTS_MAX))()
            done = ctypes.c_size_t()
            rc = L.tessel_sweep_values_points(self._h, set_bytes(flat), counts, n, ints,
                                              doubles, text, ctypes.byref(done),
                                              ctypes.byref(self._dl))
            if rc:
                try:
                    err = self._fail(L, rc, part[done.value])
                except _errors.TesselError as e:  # the overrides' SpecError
                    err = e
                err.point = first + done.value
                raise err
            out.append((n, ints, doubles, text))
        return out

    def __del__(self):
        if _common._lib is not None and getattr(self, "_h", None) is not None and self._h.value:
            _common._lib.tessel_sweep_values_free(ctypes.byref(self._h))
