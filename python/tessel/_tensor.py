"""Tensors: from files, from coordinate arrays, from SciPy matrices (no file written)."""

import array
import ctypes
import os

from . import _common, _errors
from ._common import _b, _load_options, lib
from ._lib import Diag, TensorHead


def _stem(path):
    """The `data` label tessel run gives a file (src/model/workload.c file_stem)."""
    base = os.path.basename(path)
    for ext in (".mtx.gz", ".tns.gz", ".mtx", ".tns", ".tsl"):
        if len(base) > len(ext) and base.endswith(ext):
            return base[:-len(ext)]
    return base

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
        if getattr(self, "_h", None) and _common._lib is not None and self._h.value:
            _common._lib.tessel_tensor_free(ctypes.byref(self._h))


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
