"""What the package's modules share: the loaded library, byte strings, load options and
empty diagnostic lists."""

import ctypes
import threading

from ._lib import DiagList, LoadOptions, load_library

_lib = None
_lib_lock = threading.Lock()


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
