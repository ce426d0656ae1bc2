"""Specs: a file with its includes or a dict, --set overrides, derived specs, the energy
tables they are priced with."""

import ctypes
import json
import os
import threading
import warnings

from . import _common, _errors
from ._common import _b, _diag_list, lib
from ._lib import Diag, DiagList, SpecHead


def _set_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return "%s" % (v,)


def _set_list(set):
    """Overrides as "PATH=VALUE" strings: from a dict (bools as true/false), one string
    or a list of them."""
    if set is None:
        return []
    if isinstance(set, dict):
        return [k + "=" + v if type(v) is str else k + "=" + _set_value(v)
                for k, v in set.items()]
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

    def bind(self, paths, stats=None, tensors=None, estimator=None, strategy=None, set=None,
             label=None, timing=False, drop_zeros=False):
        """Points of this spec that differ only in the values of `paths` (spec paths, as
        --set takes them): a tessel.Bound whose run(values) prices the point with
        values[i] at paths[i] as run() would, the paths and the rest packed once."""
        from ._bound import Bound  # _bound imports _run, which imports this module
        return Bound(self, paths, stats=stats, tensors=tensors, estimator=estimator,
                     strategy=strategy, set=set, label=label, timing=timing,
                     drop_zeros=drop_zeros)

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
        if _common._lib is None:
            return
        if getattr(self, "_db", None) is not None and self._db.value:
            _common._lib.tessel_energy_db_free(ctypes.byref(self._db))
        if getattr(self, "_h", None) is not None and self._h.value:
            _common._lib.tessel_spec_free(ctypes.byref(self._h))


class TesselWarning(UserWarning):
    """A plausibility or energy-table warning tessel run would print."""


def _as_spec(spec, set=None, strategy=None):
    if not isinstance(spec, Spec):
        spec = Spec(spec)
    return spec.derive(set=set, strategy=strategy)
