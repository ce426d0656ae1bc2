"""One design point as tessel run prices it: workloads, reused statistics, results."""

import csv
import ctypes
import json
import threading

from . import _common, _errors
from ._common import _b, _diag_list, _load_options, lib
from ._lib import Diag, DiagList
from ._spec import Spec, _as_spec, _set_list
from ._fast import Pricer, set_bytes
from ._values import layout, summary_of
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
        self._pricers = []  # every thread's Pricers, freed before the handles they use
        self._specs = {}  # id(Spec given to run) -> (that Spec, _prepared's answer)

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

    def _prepared(self, spec):
        """(root spec, energy tables, the spec's own overrides) of a Spec given to run,
        kept per spec object; None when the numbers' layout is incomplete (the text
        path serves)."""
        got = self._specs.get(id(spec)) if spec is not None else self._specs.get(None)
        if got is None or got[0] is not spec:
            if not layout().complete:
                return None
            s = self.spec if spec is None else spec
            if not isinstance(s, Spec):
                return None  # a path or a dict: read per call, as run documents
            root = s._root()
            got = self._specs[id(spec) if spec is not None else None] = (
                spec, (root, root.energy_db(), list(s._sets)))
        return got[1]

    def _fast(self, spec, label):
        """(spec, this thread's Pricer, the spec's own overrides packed, their number) for
        run(spec, stats=self, label=label) without timing, kept per thread, spec object
        and label; None when the numbers' layout is incomplete or spec is not a Spec."""
        try:
            fast = self._local.fast
        except AttributeError:
            fast = self._local.fast = {}
        key = id(spec) if label is None else (id(spec), label)
        got = fast.get(key)
        if got is None or got[0] is not spec:
            prepared = self._prepared(spec)
            if prepared is None:
                return None
            root, db, sets = prepared
            own = set_bytes(sets) + b"\0" if sets else b""
            got = fast[key] = (spec, self._pricer(root, 1, db, label, False), own, len(sets))
        return got

    def _pricer(self, root, code, db, label, timing):
        """This thread's Pricer for points of `root` (overrides aside) from these
        statistics, made on first use."""
        cache, shared = self._handles()
        pricers = self._local.__dict__.setdefault("pricers", {})
        key = (id(root), code, label, bool(timing))
        p = pricers.get(key)
        if p is None or p.root is not root:
            p = pricers[key] = Pricer(root, code, self.workload._h, self._h, shared, cache, db,
                                      label, timing)
            p.origin = (self, root, code, db, label)
            with self._all_lock:
                self._pricers.append(p)
        return p

    def __del__(self):
        if _common._lib is None:
            return
        for p in getattr(self, "_pricers", []):
            p.__del__()
            p._h = None
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
    verdict `feasible` (docs/semantics.md). `summary` and `traffic` are built on first
    use from the numbers the library returned; the text is written by the library on
    first use, from the C record the result keeps or, for a point priced from reused
    statistics without timing, from the same point priced again (the estimate is
    deterministic: the same bytes) so that a study reading numbers pays for no record."""

    __slots__ = ("_rec", "_values", "_again", "_summary", "_sources", "_text", "__weakref__")

    def __init__(self, record, values=None, again=None):
        self._rec = record
        self._values = values
        # ((stats, root, code, db, label), overrides packed, their number): prices it again
        self._again = again
        self._summary = None
        self._sources = None
        self._text = None

    @property
    def feasible(self):
        if self._values is not None:
            return self._values.feasible
        return bool(_common._lib.tessel_sweep_record_feasible(self._rec, None, None))

    def _get(self, which):
        """The record as summary.csv, traffic.csv, summary.json or traffic.json (0..3)."""
        if self._text is None:
            self._text = [None, None, None, None]
        if self._text[which] is None:
            if self._rec is None:
                (stats, root, code, db, label), sets, n = self._again
                # this thread's handles: the C caches are one thread's at a time
                pricer = stats._pricer(root, code, db, label, False)
                self._rec = pricer.point_bytes(sets, n, True)[0]
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
        """summary.csv's row as a dict (a Summary: a cell read alone is converted
        when it is read)."""
        s = self._summary
        if s is None:
            v = self._values
            s = self._summary = summary_of(v) if v is not None else parse_csv(self._get(0))[0]
        return s

    @property
    def traffic_rows(self):
        if self._values is not None:
            return self._values.traffic_rows()
        return parse_csv(self._get(1))

    @property
    def traffic(self):
        return frame_or_rows(self.traffic_rows)

    def __repr__(self):
        s = self.summary
        return "tessel.Result(design=%r, data=%r, energy_pj=%r, cycles=%r)" % (
            s.get("design"), s.get("data"), s.get("energy_pj"), s.get("cycles"))


def point_inputs(spec, tensors, estimator, strategy, stats, set, drop_zeros):
    """What pricing a point needs: (root spec, its overrides as bytes, estimator code, energy
    tables, data, statistics, strategy statistics, per-shape cache, what must stay alive).
    The overrides are the spec's own (a derived Spec) then `set` and `strategy`: the
    library derives the point's spec, so no Spec object is made per point."""
    if estimator is None:
        estimator = "stat" if stats is not None else "exact"
    code = ESTIMATORS.get(estimator)
    if code is None:
        raise ValueError("estimator must be exact, stat or analytic, not %r" % (estimator,))
    if spec is None and stats is not None:
        spec = stats.spec
    if not isinstance(spec, Spec):
        spec = Spec(spec)
    sets = _set_list(set)
    if strategy:
        sets.append("mapping.strategy=%s" % strategy)
    if spec._sets:
        sets = spec._sets + sets
    root = spec._root()
    db = root.energy_db()
    data = stat = cache = shared = None
    keep = None
    if stats is not None:
        if tensors:
            raise ValueError("give tensors or stats, not both: the statistics hold their data")
        data, stat = stats.workload._h, stats._h
        cache, shared = stats._handles()
    elif code == 1:
        keep = Stats(root.derive(set=sets), tensors, drop_zeros=drop_zeros)
        data, stat = keep.workload._h, keep._h
    elif code == 0:
        keep = Workload(root, tensors, drop_zeros=drop_zeros)
        data = keep._h
    return root, sets, code, db, data, stat, shared, cache, keep


def point_error(L, rc, dl, root, sets):
    """The exception of a failed point (dl freed): SpecError when the overrides do not
    make a valid spec (derived again here to tell, as Spec.derive reports it), else the
    estimator's TesselError."""
    try:
        err = _errors.from_list(L, rc, dl)
    finally:
        L.tessel_diag_list_free(ctypes.byref(dl))
    if sets:
        Spec._derived(root, list(sets))  # raises its SpecError
    return err


def run(spec, tensors=None, estimator=None, strategy=None, stats=None, set=None,
        timing=False, label=None, drop_zeros=False):
    """One design point as tessel run prices it. spec: a Spec, path or dict; tensors:
    {name: Tensor or path} replacing the spec's bindings; estimator: exact (default),
    stat (default with stats) or analytic; strategy and set: as --strategy and --set;
    stats: a Stats to price from (collected once, reused). timing=False writes
    model_seconds as 0 (tessel run --no-timing)."""
    if stats is not None and not tensors and not timing and estimator in (None, "stat"):
        # the study's loop: statistics reused, numbers read; one library call, the
        # overrides packed here (the spec's own packed once), no record kept
        fast = stats._fast(spec, label)
        if fast is not None:
            _, pricer, sets, n = fast  # sets: NUL-terminated strings back to back
            if set:
                try:  # a dict of strings: joined by C loops, no Python loop
                    more, k = "\0".join(map("=".join, set.items())), len(set)
                except (TypeError, AttributeError):  # numbers or bools; a list
                    more = _set_list(set)
                    more, k = "\0".join(more), len(more)
                if k:
                    sets += more.encode("utf-8") + b"\0"
                    n += k
            if strategy:
                sets += ("mapping.strategy=%s\0" % strategy).encode("utf-8")
                n += 1
            return Result(None, pricer.values(sets, n), (pricer.origin, sets, n))
    root, sets, code, db, data, stat, shared, cache, keep = point_inputs(
        spec, tensors, estimator, strategy, stats, set, drop_zeros)
    lay = layout()
    if keep is None and stats is not None:
        pricer = stats._pricer(root, code, db, label, timing)
        if not timing and lay.complete:  # no record: the text, if asked for, comes again
            packed = set_bytes(sets)
            return Result(None, pricer.values(packed, len(sets)),
                          (pricer.origin, packed, len(sets)))
    else:  # a one-off point: its data (keep) goes with it
        pricer = Pricer(root, code, data, stat, shared, cache, db, label, timing)
    rec, values = pricer.point(sets, True)
    return Result(rec, values if lay.complete else None)
