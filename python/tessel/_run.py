"""One design point as tessel run prices it: workloads, reused statistics, results."""

import csv
import ctypes
import json
import threading

from . import _common, _errors
from ._common import _b, _diag_list, _load_options, lib
from ._lib import Diag, DiagList
from ._spec import _as_spec
from ._tensor import Tensor, load

ESTIMATORS = {"exact": 0, "stat": 1, "analytic": 2}

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
        if _common._lib is not None and getattr(self, "_h", None) is not None and self._h.value:
            _common._lib.tessel_workload_free(ctypes.byref(self._h))


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
        if _common._lib is None:
            return
        for cache, shared in getattr(self, "_all", []):
            _common._lib.tessel_stat_cache_free(ctypes.byref(cache))
            _common._lib.tessel_strategy_shared_free(ctypes.byref(shared))
        if getattr(self, "_h", None) is not None and self._h.value:
            _common._lib.tessel_stat_data_free(ctypes.byref(self._h))


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
        return bool(_common._lib.tessel_sweep_record_feasible(self._rec, None, None))

    def _get(self, which):
        """The record as summary.csv, traffic.csv, summary.json or traffic.json (0..3)."""
        if self._text[which] is None:
            d = Diag()
            raw = _common._lib.tessel_sweep_record_text(self._rec, which, ctypes.byref(d))
            if raw is None:
                raise _errors.from_diag(_common._lib, d.code or -1, d)
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
        if _common._lib is not None and getattr(self, "_rec", None) is not None and self._rec.value:
            _common._lib.tessel_sweep_record_free(ctypes.byref(self._rec))

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
