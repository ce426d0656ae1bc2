"""Tensors, specs, statistics and one design point (tessel run) over libtessel."""

import array
import csv
import ctypes
import io
import json
import os
import threading
import warnings

from . import _errors
from ._lib import Diag, DiagList, LoadOptions, SpecHead, TensorHead, load_library

_lib = None
_lib_lock = threading.Lock()

ESTIMATORS = {"exact": 0, "stat": 1, "analytic": 2}


def lib():
    """The loaded libtessel (loaded on first use; see docs/python.md for where from)."""
    global _lib
    if _lib is not None:
        return _lib
    with _lib_lock:
        if _lib is None:
            _lib = load_library()
    return _lib


def _b(s):
    return s.encode("utf-8") if isinstance(s, str) else s


def _stem(path):
    """The `data` label tessel run gives a file (src/model/workload.c file_stem)."""
    base = os.path.basename(path)
    for ext in (".mtx.gz", ".tns.gz", ".mtx", ".tns", ".tsl"):
        if len(base) > len(ext) and base.endswith(ext):
            return base[:-len(ext)]
    return base


def _load_options(drop_zeros=False, complex="magnitude"):
    o = LoadOptions()
    lib().tessel_load_options_init(ctypes.byref(o))
    o.drop_zeros = 1 if drop_zeros else 0
    if complex not in ("magnitude", "reject"):
        raise ValueError("complex must be 'magnitude' or 'reject', not %r" % (complex,))
    o.complex_policy = 1 if complex == "reject" else 0
    o.cache_policy = 0
    return o


def _diag_list():
    """An empty tessel_diag_list: all zero is what tessel_diag_list_init(l, NULL) makes."""
    return DiagList()


class Tensor(object):
    """A sparse tensor in libtessel's memory (CSR for a matrix). `name` is its `data`
    label in the reports (a file's stem, as tessel run writes it)."""

    def __init__(self, handle, name):
        self._h = ctypes.c_void_p(handle)
        self.name = name

    def _head(self):
        return ctypes.cast(self._h, ctypes.POINTER(TensorHead)).contents

    @property
    def shape(self):
        h = self._head()
        return tuple(int(h.dims[m]) for m in range(h.order))

    @property
    def nnz(self):
        return int(self._head().nnz)

    def __repr__(self):
        return "tessel.Tensor(%r, shape=%r, nnz=%d)" % (self.name, self.shape, self.nnz)

    def __del__(self):
        if getattr(self, "_h", None) and _lib is not None and self._h.value:
            _lib.tessel_tensor_free(ctypes.byref(self._h))


def load(path, name=None, drop_zeros=False, complex="magnitude"):
    """A tensor from a file (.mtx, .mtx.gz, .tns, .tns.gz, .tsl), as tessel run reads it."""
    L = lib()
    out = ctypes.c_void_p()
    d = Diag()
    opt = _load_options(drop_zeros, complex)
    rc = L.tessel_tensor_load(_b(os.fspath(path)), ctypes.byref(opt), None, ctypes.byref(out),
                              None, ctypes.byref(d))
    if rc:
        raise _errors.from_diag(L, rc, d)
    return Tensor(out.value, name if name is not None else _stem(os.fspath(path)))


def _c_array(seq, code):
    """A contiguous buffer of seq holding int64 (code "q") or double ("d") and its
    address: a NumPy array without a copy when it already is one, else array.array."""
    try:
        import numpy
        if isinstance(seq, numpy.ndarray):
            a = numpy.ascontiguousarray(seq, dtype=numpy.int64 if code == "q" else
                                        numpy.float64)
            return a, a.ctypes.data
    except ImportError:
        pass
    a = array.array(code, seq)
    return a, a.buffer_info()[0]


def from_coo(coords, shape, values=None, name="memory", drop_zeros=False):
    """A tensor from coordinate arrays without a file: coords[m][k] is entry k's 0-based
    coordinate in mode m, shape the extents, values None for a pattern tensor.
    Duplicates are summed (as the readers do)."""
    L = lib()
    order = len(shape)
    if len(coords) != order:
        raise ValueError("%d coordinate arrays for a tensor of order %d" % (len(coords), order))
    keep = []
    ptrs = (ctypes.c_void_p * max(order, 1))()
    nnz = None
    for m in range(order):
        a, addr = _c_array(coords[m], "q")
        keep.append(a)
        ptrs[m] = addr
        if nnz is None:
            nnz = len(a)
        elif len(a) != nnz:
            raise ValueError("coordinate arrays of different lengths (%d, %d)" % (nnz, len(a)))
    nnz = nnz or 0
    vaddr = None
    if values is not None:
        v, vaddr = _c_array(values, "d")
        keep.append(v)
        if len(v) != nnz:
            raise ValueError("%d values for %d coordinates" % (len(v), nnz))
    dims = (ctypes.c_uint64 * order)(*[int(x) for x in shape])
    out = ctypes.c_void_p()
    d = Diag()
    rc = L.tessel_tensor_from_coo(order, dims, nnz, ptrs, vaddr, 1 if drop_zeros else 0, None,
                                  ctypes.byref(out), ctypes.byref(d))
    if rc:
        raise _errors.from_diag(L, rc, d)
    return Tensor(out.value, name)


def from_scipy(matrix, name="memory", pattern=False, drop_zeros=False):
    """A tensor from any scipy.sparse matrix (or array), without writing a file."""
    coo = matrix.tocoo()
    values = None if pattern else coo.data
    return from_coo((coo.row, coo.col), coo.shape, values, name=name, drop_zeros=drop_zeros)


def _set_list(set):
    if set is None:
        return []
    if isinstance(set, dict):
        items = []
        for k, v in set.items():
            if isinstance(v, bool):
                v = "true" if v else "false"
            items.append("%s=%s" % (k, v))
        return items
    if isinstance(set, str):
        return [set]
    return list(set)


def _c_strings(items):
    enc = [_b(s) for s in items]
    arr = (ctypes.c_char_p * max(len(enc), 1))(*enc)
    return arr, enc


class Spec(object):
    """A validated spec: Spec(path, set={...}) reads a file with its includes, as
    tessel run SPEC --set K=V does; Spec(dict) reads the dict as the YAML document
    (includes relative to the current directory). Errors raise SpecError with every
    diagnostic the loader collected."""

    def __init__(self, source, set=None, name=None):
        L = lib()
        self._h = ctypes.c_void_p()
        self._base = None  # a derived spec shares its base's YAML nodes
        self._sets = []
        self._db = None
        self._db_lock = threading.Lock()
        sets, keep = _c_strings(_set_list(set))
        nsets = len(keep)
        dl = _diag_list()
        try:
            if isinstance(source, dict):
                text = _b(json.dumps(source))
                rc = L.tessel_spec_parse(_b(name or "<dict>"), text, len(text), sets, nsets,
                                         None, ctypes.byref(self._h), ctypes.byref(dl))
            else:
                rc = L.tessel_spec_load(_b(os.fspath(source)), sets, nsets, None,
                                        ctypes.byref(self._h), ctypes.byref(dl))
            if rc:
                raise _errors.from_list(L, rc, dl, _errors.SpecError)
        finally:
            L.tessel_diag_list_free(ctypes.byref(dl))

    @classmethod
    def _derived(cls, base, sets):
        """base (a spec read from its source) with `sets`, all of them, applied."""
        L = lib()
        self = cls.__new__(cls)
        self._h = ctypes.c_void_p()
        self._base = base
        self._sets = sets
        self._db = None  # the base's tables serve (energy_db)
        arr, keep = _c_strings(sets)
        dl = DiagList()
        rc = L.tessel_spec_derive(base._h, arr, len(keep), None, ctypes.byref(self._h),
                                  ctypes.byref(dl))
        if rc:
            try:
                raise _errors.from_list(L, rc, dl, _errors.SpecError)
            finally:
                L.tessel_diag_list_free(ctypes.byref(dl))
        return self

    def derive(self, set=None, strategy=None):
        """This spec with more overrides (no file read again)."""
        sets = _set_list(set)
        if strategy:
            sets.append("mapping.strategy=%s" % strategy)
        if not sets:
            return self
        return Spec._derived(self._root(), getattr(self, "_sets", []) + sets)

    def _root(self):
        return self._base._root() if self._base is not None else self

    @property
    def name(self):
        return ctypes.cast(self._h, ctypes.POINTER(SpecHead)).contents.name.decode()

    def resolved(self):
        """The resolved spec as YAML text (tessel spec)."""
        L = lib()
        text = ctypes.c_void_p()
        n = ctypes.c_size_t()
        d = Diag()
        rc = L.tessel_spec_resolved_yaml(self._h, None, ctypes.byref(text), ctypes.byref(n),
                                         ctypes.byref(d))
        if rc:
            raise _errors.from_diag(L, rc, d)
        try:
            return ctypes.string_at(text, n.value).decode("utf-8")
        finally:
            L.tessel_dealloc(None, text)

    def energy_db(self):
        """The energy tables of the spec, loaded once (a derived spec uses its base's:
        tables and technology are the base spec's, as in a sweep)."""
        root = self._root()
        if root._db is not None:  # loaded: no lock needed to read it
            return root._db
        with root._db_lock:
            if root._db is None:
                L = lib()
                db = ctypes.c_void_p()
                dl = _diag_list()
                try:
                    rc = L.tessel_energy_db_load(root._h, None, ctypes.byref(db),
                                                 ctypes.byref(dl))
                    if rc:
                        raise _errors.from_list(L, rc, dl, _errors.SpecError)
                    dl2 = _diag_list()
                    L.tessel_sweep_spec_warnings(root._h, db, ctypes.byref(dl2))
                    for w in _errors.warnings_of(L, dl2):
                        warnings.warn(w.message, TesselWarning, stacklevel=3)
                    L.tessel_diag_list_free(ctypes.byref(dl2))
                finally:
                    L.tessel_diag_list_free(ctypes.byref(dl))
                root._db = db
            return root._db

    def __del__(self):
        if _lib is None:
            return
        if getattr(self, "_db", None) is not None and self._db.value:
            _lib.tessel_energy_db_free(ctypes.byref(self._db))
        if getattr(self, "_h", None) is not None and self._h.value:
            _lib.tessel_spec_free(ctypes.byref(self._h))


class TesselWarning(UserWarning):
    """A plausibility or energy-table warning tessel run would print."""


def _as_spec(spec, set=None, strategy=None):
    if not isinstance(spec, Spec):
        spec = Spec(spec)
    return spec.derive(set=set, strategy=strategy)


class Workload(object):
    """A spec's input tensors bound: those given (Tensor objects or file paths, by tensor
    name) and the spec's own bindings for the others."""

    def __init__(self, spec, tensors=None, drop_zeros=False, complex="magnitude"):
        L = lib()
        self._h = ctypes.c_void_p()
        self.spec = spec
        tensors = dict(tensors or {})
        n = 16
        given = (ctypes.c_void_p * n)()
        labels = (ctypes.c_char_p * n)()
        self._tensors = []
        for tname, t in tensors.items():
            idx = L.tessel_spec_tensor_index(spec._h, _b(tname))
            if idx < 1:
                raise _errors.SpecError(-4, [], "%s is not an input tensor of the spec's "
                                        "einsum" % tname)
            if not isinstance(t, Tensor):
                t = load(t, drop_zeros=drop_zeros, complex=complex)
            self._tensors.append(t)
            given[idx] = t._h.value
            labels[idx] = _b(t.name)
        opt = _load_options(drop_zeros, complex)
        dl = _diag_list()
        try:
            rc = L.tessel_workload_bind(spec._h, given, labels, ctypes.byref(opt), None,
                                        ctypes.byref(self._h), ctypes.byref(dl))
            if rc:
                raise _errors.from_list(L, rc, dl, _errors.SpecError)
        finally:
            L.tessel_diag_list_free(ctypes.byref(dl))

    def __del__(self):
        if _lib is not None and getattr(self, "_h", None) is not None and self._h.value:
            _lib.tessel_workload_free(ctypes.byref(self._h))


class Stats(object):
    """Statistics of a workload's inputs (the stat estimator's), collected once and
    reused by every run(spec, stats=...) of the same einsum: the sweep's fast path.
    Per thread, it keeps the per-shape cache and the strategies' shared statistics."""

    def __init__(self, spec, tensors=None, base=None, sample=None, seed=1,
                 output_sample=None, drop_zeros=False):
        L = lib()
        self.spec = _as_spec(spec)
        self.workload = Workload(self.spec, tensors, drop_zeros=drop_zeros)
        rows = cols = 0
        if base is not None:
            if isinstance(base, int):
                rows = cols = base
            elif isinstance(base, str):
                parts = base.lower().split("x")
                rows, cols = int(parts[0]), int(parts[-1])
            else:
                rows, cols = int(base[0]), int(base[1])
        self._h = ctypes.c_void_p()
        d = Diag()
        rc = L.tessel_sweep_stats_create(self.spec._h, self.workload._h, rows, cols,
                                         float(sample) if sample else 0.0, int(seed),
                                         -1.0 if output_sample is None else float(output_sample),
                                         None, ctypes.byref(self._h), ctypes.byref(d))
        if rc:
            raise _errors.from_diag(L, rc, d)
        self._local = threading.local()
        self._all = []  # every thread's handles, freed with the statistics
        self._all_lock = threading.Lock()

    @property
    def seconds(self):
        """Wall time the collection took."""
        return lib().tessel_stat_data_seconds(self._h)

    def _handles(self):
        loc = self._local
        if getattr(loc, "cache", None) is None:
            L = lib()
            cache, shared = ctypes.c_void_p(), ctypes.c_void_p()
            if L.tessel_stat_cache_create(self._h, None, ctypes.byref(cache)) or \
                    L.tessel_strategy_shared_create(None, ctypes.byref(shared)):
                raise MemoryError("out of memory creating the statistics' caches")
            loc.cache, loc.shared = cache, shared
            with self._all_lock:
                self._all.append((cache, shared))
        return loc.cache, loc.shared

    def __del__(self):
        if _lib is None:
            return
        for cache, shared in getattr(self, "_all", []):
            _lib.tessel_stat_cache_free(ctypes.byref(cache))
            _lib.tessel_strategy_shared_free(ctypes.byref(shared))
        if getattr(self, "_h", None) is not None and self._h.value:
            _lib.tessel_stat_data_free(ctypes.byref(self._h))


def stats(spec, tensors=None, **options):
    """Statistics collected once (see Stats): base="RxC", sample, seed, output_sample as
    tessel run --base, --sample, --seed, --output-sample."""
    return Stats(spec, tensors, **options)


_NUMERIC = frozenset("-0123456789")


def _number(text, numeric=_NUMERIC, isdigit=str.isdigit):
    """A cell as tessel writes it: an integer, a double (never inf or nan: those are
    written as empty cells), empty (None) or text (names, labels, tiles)."""
    if not text:
        return None
    if text[0] in numeric:
        if isdigit(text) or (text[0] == "-" and isdigit(text[1:])):
            return int(text)
        try:
            return float(text)
        except ValueError:
            return text
    return text


_headers = {}


def parse_csv(text):
    """Rows of a tessel CSV as dicts, numbers as int or float, empty cells as None."""
    head, _, body = text.partition("\n")
    names = _headers.get(head)
    if names is None:
        names = _headers[head] = next(csv.reader((head,)))
    isdigit = str.isdigit  # integers (most cells) without a call to _number
    return [dict(zip(names, [int(c) if isdigit(c) else _number(c) for c in cells]))
            for cells in csv.reader(body.splitlines())]


def frame_or_rows(rows):
    """A pandas DataFrame of rows when pandas is importable, else the list itself."""
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows)


class Result(object):
    """One design point: `summary` (dict of summary.csv's columns), `traffic`
    (traffic.csv's rows: DataFrame with pandas, else list of dicts), `summary_csv` and
    `traffic_csv` (the files' text, byte for byte as tessel run writes them),
    `energy_sources` (what priced each component: summary.json's list) and the rule 4
    verdict `feasible` (docs/semantics.md). Holds the C record until freed; its text
    is written by the library on first use."""

    def __init__(self, record):
        self._rec = record
        self._summary = None
        self._sources = None
        self._text = [None, None, None, None]

    @property
    def feasible(self):
        return bool(_lib.tessel_sweep_record_feasible(self._rec, None, None))

    def _get(self, which):
        """The record as summary.csv, traffic.csv, summary.json or traffic.json (0..3)."""
        if self._text[which] is None:
            d = Diag()
            raw = _lib.tessel_sweep_record_text(self._rec, which, ctypes.byref(d))
            if raw is None:
                raise _errors.from_diag(_lib, d.code or -1, d)
            self._text[which] = raw.decode("utf-8")
        return self._text[which]

    @property
    def summary_csv(self):
        return self._get(0)

    @property
    def traffic_csv(self):
        return self._get(1)

    @property
    def energy_sources(self):
        """What priced each component (summary.json's energy_sources)."""
        if self._sources is None:
            self._sources = json.loads(self._get(2))[0].get("energy_sources", [])
        return self._sources

    def __del__(self):
        if _lib is not None and getattr(self, "_rec", None) is not None and self._rec.value:
            _lib.tessel_sweep_record_free(ctypes.byref(self._rec))

    @property
    def summary(self):
        if self._summary is None:
            self._summary = parse_csv(self._get(0))[0]
        return self._summary

    @property
    def traffic_rows(self):
        return parse_csv(self._get(1))

    @property
    def traffic(self):
        return frame_or_rows(self.traffic_rows)

    def __repr__(self):
        s = self.summary
        return "tessel.Result(design=%r, data=%r, energy_pj=%r, cycles=%r)" % (
            s.get("design"), s.get("data"), s.get("energy_pj"), s.get("cycles"))


def run(spec, tensors=None, estimator=None, strategy=None, stats=None, set=None,
        timing=False, label=None, drop_zeros=False):
    """One design point as tessel run prices it. spec: a Spec, path or dict; tensors:
    {name: Tensor or path} replacing the spec's bindings; estimator: exact (default),
    stat (default with stats) or analytic; strategy and set: as --strategy and --set;
    stats: a Stats to price from (collected once, reused). timing=False writes
    model_seconds as 0 (tessel run --no-timing)."""
    L = lib()
    if estimator is None:
        estimator = "stat" if stats is not None else "exact"
    if estimator not in ESTIMATORS:
        raise ValueError("estimator must be exact, stat or analytic, not %r" % (estimator,))
    if stats is not None and spec is None:
        spec = stats.spec
    spec = _as_spec(spec, set=set, strategy=strategy)
    db = spec.energy_db()
    data = stat = cache = shared = None
    own_stats = None
    workload = None
    if stats is not None:
        if tensors:
            raise ValueError("give tensors or stats, not both: the statistics hold their data")
        data, stat = stats.workload._h, stats._h
        cache, shared = stats._handles()
    elif estimator == "stat":
        own_stats = Stats(spec, tensors, drop_zeros=drop_zeros)
        data, stat = own_stats.workload._h, own_stats._h
    elif estimator == "exact":
        workload = Workload(spec, tensors, drop_zeros=drop_zeros)
        data = workload._h
    rec = ctypes.c_void_p()
    dl = DiagList()
    rc = L.tessel_sweep_record_create(spec._h, ESTIMATORS[estimator], data, stat, shared,
                                      cache, db, _b(label) if label else None,
                                      1 if timing else 0, None, ctypes.byref(rec),
                                      ctypes.byref(dl))
    if rc:
        try:
            raise _errors.from_list(L, rc, dl)
        finally:
            L.tessel_diag_list_free(ctypes.byref(dl))
    # own_stats and workload (a one-off run's data) may go now: the record is a value
    return Result(rec)
