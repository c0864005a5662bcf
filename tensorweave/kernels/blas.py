"""GEMM that accumulates into its output, through the BLAS NumPy itself links.

NumPy's matmul always writes a new product; `C += alpha * op(A) @ op(B)` (BLAS's beta = 1)
lets a fused SGD update add a weight gradient into the weights without ever allocating the
gradient or making a second pass over it. The call goes to NumPy's own bundled OpenBLAS
(`numpy.libs/libscipy_openblas*`, whose CBLAS symbols carry a `scipy_` prefix and 64-bit
integers), so it shares NumPy's BLAS threads rather than starting a second pool. Where that
library or symbol is absent (another NumPy build), `gemm_accumulate` is None and callers keep
the unfused path.
"""
from __future__ import annotations

import ctypes
import glob
import os

import numpy as np

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
# (symbol pattern, integer type): NumPy >= 2's ILP64 OpenBLAS first, then a plain CBLAS.
_SYMBOLS = (("scipy_cblas_{}gemm64_", ctypes.c_int64), ("cblas_{}gemm64_", ctypes.c_int64),
            ("cblas_{}gemm", ctypes.c_int))
_SCALARS = {np.dtype(np.float32): ("s", ctypes.c_float),
            np.dtype(np.float64): ("d", ctypes.c_double)}


def _numpy_blas_libraries() -> list[str]:
    libs_dir = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    return sorted(glob.glob(os.path.join(libs_dir, "*openblas*")))


def _bind(lib, prefix: str, scalar):
    for pattern, integer in _SYMBOLS:
        fn = getattr(lib, pattern.format(prefix), None)
        if fn is not None:
            fn.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_int, integer, integer, integer,
                           scalar, ctypes.c_void_p, integer, ctypes.c_void_p, integer, scalar,
                           ctypes.c_void_p, integer)
            fn.restype = None
            return fn
    return None


def _load() -> dict:
    for path in _numpy_blas_libraries():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        found = {dtype: _bind(lib, prefix, scalar) for dtype, (prefix, scalar) in _SCALARS.items()}
        if all(found.values()):
            return found
    return {}


_GEMMS = _load()


def _accumulate(c, a, b, alpha, transpose_a: bool, transpose_b: bool, run=None) -> bool:
    """c += alpha * op(a) @ op(b) in place; False (c untouched) when the operands do not suit
    BLAS: dtypes other than c's float32/float64, non-contiguous or read-only c, shapes that
    do not chain. `run(m, n, k, rows)`, when given, decides how `rows(i0, i1)` (the product
    for rows i0:i1 of c, independent of the other rows) covers range(m): e.g. in parallel."""
    gemm = _GEMMS.get(c.dtype)
    if gemm is None or a.dtype != c.dtype or b.dtype != c.dtype or a.ndim != 2 or \
            b.ndim != 2 or c.ndim != 2 or not c.flags.c_contiguous or not c.flags.writeable:
        return False
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    m, k = (a.shape[1], a.shape[0]) if transpose_a else a.shape
    k2, n = (b.shape[1], b.shape[0]) if transpose_b else b.shape
    if k != k2 or c.shape != (m, n) or 0 in (m, n):
        return False
    size = c.itemsize
    lda, ldb = max(a.shape[1], 1), max(b.shape[1], 1)
    a_row = size if transpose_a else lda * size     # bytes from one row of op(a) to the next
    flags = (_TRANS if transpose_a else _NO_TRANS, _TRANS if transpose_b else _NO_TRANS)

    def rows(i0: int, i1: int) -> None:
        gemm(_ROW_MAJOR, *flags, i1 - i0, n, k, alpha, a.ctypes.data + i0 * a_row, lda,
             b.ctypes.data, ldb, 1.0, c.ctypes.data + i0 * n * size, n)

    if run is None:
        rows(0, m)
    else:
        run(m, n, k, rows)
    return True


gemm_accumulate = _accumulate if _GEMMS else None
