"""Finding libtessel.so and declaring the C functions the package calls (ctypes).

Only opaque handles cross the boundary, plus tessel_diag and tessel_diag_list, whose
layouts are part of include/tessel/base.h; bigger structs are reached through the flat
calls of include/tessel/sweep.h ("Flat calls for language bindings")."""

import ctypes
import glob
import os

_u64 = ctypes.c_uint64
_p = ctypes.c_void_p
_int = ctypes.c_int
_char_p = ctypes.c_char_p


class Diag(ctypes.Structure):
    _fields_ = [("code", _int), ("file", ctypes.c_char * 512), ("line", _u64),
                ("column", ctypes.c_uint32), ("field", ctypes.c_char * 128),
                ("message", ctypes.c_char * 512)]


class DiagList(ctypes.Structure):
    _fields_ = [("alloc", _p), ("items", ctypes.POINTER(Diag)), ("count", ctypes.c_size_t),
                ("capacity", ctypes.c_size_t), ("dropped", ctypes.c_size_t)]


class TensorHead(ctypes.Structure):
    """The leading fields of tessel_tensor (include/tessel/tensor.h)."""
    _fields_ = [("alloc", _p), ("order", ctypes.c_uint), ("dims", _u64 * 8), ("nnz", _u64)]


class SpecHead(ctypes.Structure):
    """The leading fields of tessel_spec (include/tessel/spec.h)."""
    _fields_ = [("alloc", _p), ("name", ctypes.c_char * 64), ("path", _char_p)]


PROGRESS_FN = ctypes.CFUNCTYPE(None, _p, _u64, _u64, ctypes.c_double)

# name: (restype, argtypes)
_PROTOTYPES = {
    "tessel_strerror": (_char_p, [_int]),
    "tessel_diag_format": (_int, [ctypes.POINTER(Diag), _char_p, ctypes.c_size_t]),
    "tessel_diag_list_init": (None, [ctypes.POINTER(DiagList), _p]),
    "tessel_diag_list_free": (None, [ctypes.POINTER(DiagList)]),
    "tessel_load_options_init": (None, [_p]),  # a LoadOptions
    "tessel_tensor_load": (_int, [_char_p, _p, _p, ctypes.POINTER(_p), ctypes.POINTER(_int),
                                  ctypes.POINTER(Diag)]),
    "tessel_tensor_from_coo": (_int, [ctypes.c_uint, ctypes.POINTER(_u64), _u64,
                                      ctypes.POINTER(_p), _p, ctypes.c_uint, _p,
                                      ctypes.POINTER(_p), ctypes.POINTER(Diag)]),
    "tessel_tensor_free": (None, [ctypes.POINTER(_p)]),
    "tessel_spec_load": (_int, [_char_p, ctypes.POINTER(_char_p), ctypes.c_size_t, _p,
                                ctypes.POINTER(_p), ctypes.POINTER(DiagList)]),
    "tessel_spec_parse": (_int, [_char_p, _char_p, ctypes.c_size_t, ctypes.POINTER(_char_p),
                                 ctypes.c_size_t, _p, ctypes.POINTER(_p),
                                 ctypes.POINTER(DiagList)]),
    "tessel_spec_derive": (_int, [_p, ctypes.POINTER(_char_p), ctypes.c_size_t, _p,
                                  ctypes.POINTER(_p), ctypes.POINTER(DiagList)]),
    "tessel_spec_free": (None, [ctypes.POINTER(_p)]),
    "tessel_spec_tensor_index": (_int, [_p, _char_p]),
    "tessel_spec_resolved_yaml": (_int, [_p, _p, ctypes.POINTER(_p), ctypes.POINTER(ctypes.c_size_t),
                                         ctypes.POINTER(Diag)]),
    "tessel_dealloc": (None, [_p, _p]),
    "tessel_workload_bind": (_int, [_p, ctypes.POINTER(_p), ctypes.POINTER(_char_p), _p, _p,
                                    ctypes.POINTER(_p), ctypes.POINTER(DiagList)]),
    "tessel_workload_free": (None, [ctypes.POINTER(_p)]),
    "tessel_energy_db_load": (_int, [_p, _p, ctypes.POINTER(_p), ctypes.POINTER(DiagList)]),
    "tessel_energy_db_free": (None, [ctypes.POINTER(_p)]),
    "tessel_sweep_stats_create": (_int, [_p, _p, _u64, _u64, ctypes.c_double, _u64,
                                         ctypes.c_double, _p, ctypes.POINTER(_p),
                                         ctypes.POINTER(Diag)]),
    "tessel_stat_data_free": (None, [ctypes.POINTER(_p)]),
    "tessel_stat_data_seconds": (ctypes.c_double, [_p]),
    "tessel_stat_cache_create": (_int, [_p, _p, ctypes.POINTER(_p)]),
    "tessel_stat_cache_free": (None, [ctypes.POINTER(_p)]),
    "tessel_strategy_shared_create": (_int, [_p, ctypes.POINTER(_p)]),
    "tessel_strategy_shared_free": (None, [ctypes.POINTER(_p)]),
    "tessel_sweep_record_create": (_int, [_p, _int, _p, _p, _p, _p, _p, _char_p, _int, _p,
                                          ctypes.POINTER(_p), ctypes.POINTER(DiagList)]),
    "tessel_sweep_record_free": (None, [ctypes.POINTER(_p)]),
    "tessel_sweep_record_text": (_char_p, [_p, _int, ctypes.POINTER(Diag)]),
    "tessel_sweep_record_feasible": (_int, [_p, ctypes.POINTER(ctypes.c_uint),
                                            ctypes.POINTER(ctypes.c_uint)]),
    "tessel_report_summary_header": (_char_p, []),
    "tessel_report_traffic_header": (_char_p, []),
    "tessel_report_value_columns": (_char_p, [_int]),
    "tessel_sweep_values_create": (_int, [_p, _int, _p, _p, _p, _p, _p, _char_p, _int, _p, _p,
                                          _p, _p, ctypes.POINTER(_p)]),
    "tessel_sweep_values_free": (None, [ctypes.POINTER(_p)]),
    "tessel_sweep_values_point": (_int, [_p, _char_p, ctypes.c_size_t, _p, _p]),
    "tessel_sweep_values_points": (_int, [_p, _char_p, _p, ctypes.c_size_t, _p, _p, _p,
                                          ctypes.POINTER(ctypes.c_size_t), _p]),
    "tessel_sweep_spec_warnings": (_int, [_p, _p, ctypes.POINTER(DiagList)]),
    "tessel_sweep_load": (_int, [_char_p, _p, ctypes.POINTER(_p), ctypes.POINTER(DiagList)]),
    "tessel_sweep_parse": (_int, [_char_p, _char_p, ctypes.c_size_t, _p, ctypes.POINTER(_p),
                                  ctypes.POINTER(DiagList)]),
    "tessel_sweep_free": (None, [ctypes.POINTER(_p)]),
    "tessel_sweep_run_flat": (_int, [_p, _char_p, ctypes.c_uint, _int, _int, _int, PROGRESS_FN,
                                     _p, _p, ctypes.POINTER(_u64),
                                     ctypes.POINTER(ctypes.c_double), ctypes.POINTER(Diag)]),
}


def _candidates():
    """Where libtessel.so may be: TESSEL_LIBRARY, the build trees of the checkout this
    package sits in (a release `build` first), then the system loader's name."""
    env = os.environ.get("TESSEL_LIBRARY")
    if env:
        yield env
        return
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if os.path.isfile(os.path.join(root, "meson.build")):
        found = glob.glob(os.path.join(root, "build", "libtessel.so"))
        found += sorted(glob.glob(os.path.join(root, "build*", "libtessel.so")))
        for path in found:
            yield path
    import ctypes.util  # here: it imports subprocess and more, a tenth of a second
    name = ctypes.util.find_library("tessel")
    yield name or "libtessel.so.0"


def load_library():
    errors = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            errors.append("%s: %s" % (path, e))
            continue
        for name, (res, args) in _PROTOTYPES.items():
            fn = getattr(lib, name)
            fn.restype = res
            fn.argtypes = args
        lib._tessel_path = path
        return lib
    raise OSError("libtessel.so not found (set TESSEL_LIBRARY to its path): " +
                  "; ".join(errors))


LOAD_OPTIONS_BYTES = 256  # room for tessel_load_options however it grows


class LoadOptions(ctypes.Structure):
    """tessel_load_options (include/tessel/tensor.h) with room to grow at its end."""
    _fields_ = [("drop_zeros", _int), ("complex_policy", _int), ("cache_policy", _int),
                ("cache_dir", _char_p), ("parse_threads", _int),
                ("_room", ctypes.c_char * LOAD_OPTIONS_BYTES)]
