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
TEXT_COPY = 512  # text bytes copied with the numbers (a point's are about a hundred)
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
        # one buffer holds a point's three arrays back to back (ints, doubles, text), so
        # that a point's numbers are copied out in one piece: the arrays whole and the
        # text's first TEXT_COPY bytes (all of it, but for very long names)
        self.doubles_at = 8 * self.n_ints
        self.text_at = self.doubles_at + 8 * self.n_doubles
        self.Buffer = ctypes.c_int64 * ((self.text_at + TEXTS_MAX) // 8)  # 8-byte aligned
        self.copy_bytes = self.text_at + TEXT_COPY
        self.text_bytes_at = 8 * (self.head - 3)
        self.feasible_at = 8 * len(self.s_ints)
        self.summary_doubles_struct = struct.Struct("=%dd" % len(self.s_doubles))
        # where Summary reads a column: (0, byte offset) an int, (1, byte offset) a
        # double, (2, index in texts()) a text
        self.where = {k: (0, 8 * i) for i, k in enumerate(self.s_ints)}
        self.where.update((k, (1, 8 * (self.n_ints + i))) for i, k in enumerate(self.s_doubles))
        self.where.update((k, (2, i)) for i, k in enumerate(self.s_texts))
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


_unpack_q = struct.Struct("=q").unpack_from
_unpack_d = struct.Struct("=d").unpack_from


class Values(object):
    """One point's numbers and text cells, copied in one piece (`raw`, Layout's buffer
    layout) out of the arrays the library filled; converted on first use."""

    __slots__ = ("raw", "_head", "_texts", "_lay")

    def __init__(self, lay, view):
        """The point in `view`, a byte memoryview of a Layout.Buffer just filled."""
        self._lay = lay
        self.raw = raw = view[:lay.copy_bytes].tobytes()
        used = _unpack_q(raw, lay.text_bytes_at)[0]
        if used > TEXT_COPY:  # long names: the rest of the text too
            self.raw = raw + view[lay.copy_bytes:lay.text_at + used].tobytes()
        self._head = self._texts = None

    @classmethod
    def of_chunk(cls, lay, ints, doubles, text, point):
        """Point `point` of arrays filled by tessel_sweep_values_points (byte
        memoryviews), in the same layout."""
        self = cls.__new__(cls)
        self._lay = lay
        io, do, to = point * lay.n_ints * 8, point * lay.n_doubles * 8, point * TEXTS_MAX
        used = _unpack_q(ints, io + lay.text_bytes_at)[0]
        self.raw = b"".join((ints[io:io + lay.doubles_at].tobytes(),
                             doubles[do:do + lay.text_at - lay.doubles_at].tobytes(),
                             text[to:to + used].tobytes()))
        self._head = self._texts = None
        return self

    @property
    def ints(self):
        """summary.csv's ints, then the head (tessel/sweep.h): feasible, overflow level
        and tensor, levels, tensors, text bytes, the two masks over the doubles."""
        if self._head is None:
            self._head = self._lay.head_struct.unpack_from(self.raw)
        return self._head

    @property
    def text(self):
        lay = self._lay
        return self.raw[lay.text_at:lay.text_at + _unpack_q(self.raw, lay.text_bytes_at)[0]]

    @property
    def feasible(self):
        return bool(_unpack_q(self.raw, self._lay.feasible_at)[0])

    def texts(self):
        """The text cells: the summary texts (tessel_report_value_columns(2)), then level names, then tensor names."""
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
        doubles = lay.summary_doubles_struct.unpack_from(self.raw, lay.doubles_at)
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
        rows_ints = lay.rows_struct(rows, 0).unpack_from(self.raw, lay.head * 8)
        rows_doubles = lay.rows_struct(rows, 1).unpack_from(
            self.raw, lay.doubles_at + len(lay.s_doubles) * 8)
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


class Summary(dict):
    """summary.csv's row of one point: a dict whose cells are converted from the point's
    numbers when read, so that reading a column in a study's loop costs one lookup, not
    the 30-cell dict. Anything else (iteration, len of a changed row, items, ==, repr,
    json, pickle, pandas, a change) fills the dict once, in the header's order, and from
    then on it is a plain dict. Equal to Values.summary(), cell for cell and in order.
    Until filled its storage holds one placeholder entry (UNFILLED), not nothing: C code
    that looks at a dict subclass's storage before calling its methods (json's encoder
    writes "{}" for an empty one without asking items()) then calls them."""

    __slots__ = ("_v",)  # the Values until filled, then None

    def _fill(self):
        v = self._v
        if v is not None:
            # in this order, so that another thread reading or filling meanwhile sees
            # either the cells read alone or the whole row (each step is atomic)
            dict.update(self, v.summary())
            dict.pop(self, UNFILLED, None)
            self._v = None
        return self

    def __getitem__(self, key):
        v = self._v
        if v is None:
            return dict.__getitem__(self, key)
        lay = v._lay
        at = lay.where.get(key)
        if at is None:
            raise KeyError(key)
        kind, where = at
        if kind == 1:
            x = _unpack_d(v.raw, where)[0]
            if x.is_integer():  # the masks' rule (double_cell), without reading them
                return int(x) if -1e15 < x < 1e15 else x
            return x if x - x == 0 else None  # not finite: an empty cell
        if kind == 0:
            return _unpack_q(v.raw, where)[0]
        return text_cell(v.texts()[where])

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key):
        v = self._v
        return dict.__contains__(self, key) if v is None else key in v._lay.where

    def __len__(self):
        v = self._v
        return dict.__len__(self) if v is None else len(v._lay.summary_header)

    def __iter__(self):
        return dict.__iter__(self._fill())

    def __reversed__(self):
        return dict.__reversed__(self._fill())

    def keys(self):
        return dict.keys(self._fill())

    def values(self):
        return dict.values(self._fill())

    def items(self):
        return dict.items(self._fill())

    def copy(self):
        return dict(self._fill())

    def __eq__(self, other):
        if isinstance(other, Summary):
            other._fill()
        return dict.__eq__(self._fill(), other)

    def __ne__(self, other):
        if isinstance(other, Summary):
            other._fill()
        return dict.__ne__(self._fill(), other)

    __hash__ = None

    def __repr__(self):
        return dict.__repr__(self._fill())

    def __reduce__(self):  # pickles and copies as the plain dict it equals
        return (dict, (dict(self._fill()),))

    def __or__(self, other):  # Python 3.9 on, as dict's
        return dict(self._fill()) | other

    def __ror__(self, other):
        return other | dict(self._fill())


def _filled(name):
    """dict's method `name` on the filled dict (the changes a caller may make)."""
    method = getattr(dict, name)

    def call(self, *args, **kwargs):
        return method(self._fill(), *args, **kwargs)
    call.__name__ = name
    call.__doc__ = method.__doc__
    return call


for _name in ("__setitem__", "__delitem__", "__ior__", "update", "pop", "popitem",
              "setdefault", "clear"):
    if hasattr(dict, _name):  # __ior__: Python 3.9 on
        setattr(Summary, _name, _filled(_name))
del _name


UNFILLED = "(tessel: a Summary read past its methods before it was filled)"
_PLACEHOLDER = {UNFILLED: None}


def summary_of(values):
    """The Summary of a point's Values (not yet filled)."""
    s = Summary(_PLACEHOLDER)
    s._v = values
    return s
