"""The numeric fast path (docs/python.md "Cost per point"): a point's summary.csv and
traffic.csv cells come back from tessel_sweep_point_values as int64 and double arrays
(include/tessel/sweep.h), and the dicts and tables are built from them on first use,
cell for cell as parse_csv reads the CSV text of the same point."""

import ctypes
import math
import struct

from ._common import lib

# include/tessel/sweep.h and report.h: the rows a point can have (levels x tensors),
# the head of the int array after summary.csv's ints, the text buffer's size.
MAX_ROWS = 8 * 4
# feasible, overflow_level, overflow_tensor, nlevels, ntensors, text bytes, and the masks
# of the summary doubles written as integers and as empty cells
HEAD_EXTRA = 8
TEXTS_MAX = 8192
KEYS = 5  # design, workload, data, strategy, estimator: the first summary texts


def text_cell(s, _digits=frozenset("-0123456789")):
    """A text cell as parse_csv converts it (a design named "7" reads back as 7)."""
    if not s:
        return None
    if s[0] in _digits:
        if s.isdigit() or (s[0] == "-" and s[1:].isdigit()):
            return int(s)
        try:
            return float(s)
        except ValueError:
            return s
    return s


def double_cell(v, _integral=float.is_integer):
    """A double as the writers print it and parse_csv reads it back: an integral value
    below 1e15 is written without a point (an int), a value that is not finite as an
    empty cell (None), anything else reads back as the same double."""
    if _integral(v) and -1e15 < v < 1e15:
        return int(v)
    return v if math.isfinite(v) else None


class Layout(object):
    """Column names of the arrays (tessel_report_value_columns) and where each summary.csv
    and traffic.csv column comes from; read once from the library."""

    def __init__(self, L):
        def names(which):
            return L.tessel_report_value_columns(which).decode().split(",")

        self.s_ints, self.s_doubles, self.s_texts = names(0), names(1), names(2)
        self.t_ints, self.t_doubles = names(3), names(4)
        self.head = len(self.s_ints) + HEAD_EXTRA
        self.n_ints = self.head + MAX_ROWS * len(self.t_ints)
        self.n_doubles = len(self.s_doubles) + MAX_ROWS * len(self.t_doubles)
        self.IntArray = ctypes.c_int64 * self.n_ints
        self.DoubleArray = ctypes.c_double * self.n_doubles
        self.TextArray = ctypes.c_char * TEXTS_MAX
        self.summary_header = L.tessel_report_summary_header().decode().rstrip("\n").split(",")
        self.traffic_header = L.tessel_report_traffic_header().decode().rstrip("\n").split(",")
        # summary: texts, then ints, then doubles, permuted into the header's order
        pool = self.s_texts + self.s_ints + self.s_doubles
        self.complete = sorted(pool) == sorted(self.summary_header)
        # traffic: the keys, level, tensor, then the row's ints and doubles
        tpool = self.s_texts[:KEYS] + ["level", "tensor"] + self.t_ints + self.t_doubles
        self.traffic_complete = sorted(tpool) == sorted(self.traffic_header)
        self.complete = self.complete and self.traffic_complete
        # a dict built by updating a copy of a template keyed in the header's order
        # costs half of dict(zip(...)) in the header's order
        self.summary_pool, self.traffic_pool = pool, tpool
        self.summary_template = dict.fromkeys(self.summary_header)
        self.traffic_template = dict.fromkeys(self.traffic_header)
        self.head_struct = struct.Struct("=%dq" % self.head)
        self.summary_doubles_struct = struct.Struct("=%dd" % len(self.s_doubles))
        self._rows = {}
        self._bits = {}

    def bits(self, mask):
        """The indices of mask's set bits, ascending (kept per mask: a study sees few)."""
        b = self._bits.get(mask)
        if b is None:
            b = self._bits[mask] = tuple(i for i in range(mask.bit_length()) if mask >> i & 1)
        return b

    def rows_struct(self, rows, doubles):
        """The Struct unpacking `rows` traffic rows' ints (doubles=0) or doubles (1)."""
        s = self._rows.get((rows, doubles))
        if s is None:
            width = len(self.t_doubles) if doubles else len(self.t_ints)
            s = self._rows[(rows, doubles)] = struct.Struct(
                "=%d%s" % (rows * width, "d" if doubles else "q"))
        return s


_layout = None


def layout():
    global _layout
    if _layout is None:
        _layout = Layout(lib())
    return _layout


_DIGITS = frozenset("-0123456789")


class Values(object):
    """One point's numbers, copied out of the arrays the library filled, and its text
    cells; summary and traffic rows are converted on first use."""

    __slots__ = ("ints", "raw_ints", "raw_doubles", "text", "_texts", "_lay")

    def __init__(self, lay, ints, doubles, text_view, point=0):
        """Point `point` of arrays filled by tessel_sweep_values_point(s), given as byte
        memoryviews: its arrays are copied whole (a few kilobytes, one copy each) and
        unpacked when asked for; the head now."""
        self._lay = lay
        io, do = point * lay.n_ints * 8, point * lay.n_doubles * 8
        self.raw_ints = raw = ints[io:io + lay.n_ints * 8].tobytes()
        self.raw_doubles = doubles[do:do + lay.n_doubles * 8].tobytes()
        self.ints = head = lay.head_struct.unpack_from(raw)
        to = point * TEXTS_MAX
        self.text = text_view[to:to + head[lay.head - 3]].tobytes()
        self._texts = None

    @property
    def feasible(self):
        return bool(self.ints[len(self._lay.s_ints)])

    def texts(self):
        """The text cells: nine summary texts, then level names, then tensor names."""
        if self._texts is None:
            self._texts = self.text.decode("utf-8").split("\0")[:-1]
        return self._texts

    def summary(self, digits=_DIGITS):
        """summary.csv's row as parse_csv reads it: the doubles the library flagged as
        written as integers become int, those written as empty cells None."""
        lay = self._lay
        pool = [text_cell(s) if not s or s[0] in digits else s
                for s in self.texts()[:len(lay.s_texts)]]
        pool += self.ints[:len(lay.s_ints)]
        integral, empty = self.ints[lay.head - 2], self.ints[lay.head - 1]
        doubles = lay.summary_doubles_struct.unpack_from(self.raw_doubles)
        if integral or empty:
            d = list(doubles)
            for i in lay.bits(integral):
                d[i] = int(d[i])
            for i in lay.bits(empty):
                d[i] = None
            pool += d
        else:
            pool += doubles
        d = lay.summary_template.copy()  # the header's order, kept by update
        d.update(zip(lay.summary_pool, pool))
        return d

    def traffic_rows(self):
        lay = self._lay
        texts = self.texts()
        nt = len(lay.s_texts)
        nlevels, ntensors = self.ints[lay.head - 5], self.ints[lay.head - 4]
        levels = texts[nt:nt + nlevels]
        tensors = texts[nt + nlevels:nt + nlevels + ntensors]
        keys = [text_cell(s) for s in texts[:KEYS]]
        rows = nlevels * ntensors
        rows_ints = lay.rows_struct(rows, 0).unpack_from(self.raw_ints, lay.head * 8)
        rows_doubles = lay.rows_struct(rows, 1).unpack_from(self.raw_doubles,
                                                             len(lay.s_doubles) * 8)
        wi, wd = len(lay.t_ints), len(lay.t_doubles)
        out = []
        r = 0
        for level in levels:
            for tensor in tensors:
                pool = keys + [text_cell(level), text_cell(tensor)]
                pool += rows_ints[r * wi:(r + 1) * wi]
                pool += [double_cell(v) for v in rows_doubles[r * wd:(r + 1) * wd]]
                d = lay.traffic_template.copy()
                d.update(zip(lay.traffic_pool, pool))
                out.append(d)
                r += 1
        return out
