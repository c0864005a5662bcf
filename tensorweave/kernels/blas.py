"""GEMM that accumulates into its output, through the BLAS NumPy itself links.

NumPy's matmul always writes a new product; `C += alpha * op(A) @ op(B)` (BLAS's beta = 1)
lets a fused SGD update add a weight gradient into the weights without ever allocating the
gradient or making a second pass over it. The call goes to NumPy's own bundled OpenBLAS
(`numpy.libs/libscipy_openblas*`, whose CBLAS symbols carry a `scipy_` prefix and 64-bit
integers), so it shares NumPy's BLAS threads rather than starting a second pool, and is made
from compiled code (kernels/gemm_call.py). Where that library or symbol is absent (another
NumPy build), `gemm_accumulate` is None and callers keep the unfused path. Row blocks that run
on one thread go to oneDNN's sgemm where it is installed (kernels/onednn_gemm.py).
"""
from __future__ import annotations

import ctypes
import glob
import os

import numpy as np

from tensorweave.kernels import gemm_call, intra_op, onednn_gemm

# ILP64 CBLAS symbols: NumPy >= 2's bundled OpenBLAS, then an unprefixed build of it.
_SYMBOLS = ("scipy_cblas_{}gemm64_", "cblas_{}gemm64_")
_PREFIXES = {np.dtype(np.float32): "s", np.dtype(np.float64): "d"}


def _numpy_blas_libraries() -> list[str]:
    libs_dir = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    return sorted(glob.glob(os.path.join(libs_dir, "*openblas*")))


def _address(lib, prefix: str) -> int | None:
    for pattern in _SYMBOLS:
        fn = getattr(lib, pattern.format(prefix), None)
        if fn is not None:
            return ctypes.cast(fn, ctypes.c_void_p).value
    return None


def _load() -> dict:
    """{dtype: gemm address} in NumPy's OpenBLAS, or {}."""
    for path in _numpy_blas_libraries():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        found = {dtype: _address(lib, prefix) for dtype, prefix in _PREFIXES.items()}
        if all(found.values()):
            return found
    return {}


_GEMMS = _load()


def _accumulate(c, a, b, alpha, transpose_a: bool, transpose_b: bool, run=None) -> bool:
    """c += alpha * op(a) @ op(b) in place; False (c untouched) when the operands do not suit
    BLAS: dtypes other than c's float32/float64, non-contiguous or read-only c, shapes that
    do not chain. `run(m, n, k, rows)`, when given, decides how `rows(i0, i1, one_thread)`
    (the product for rows i0:i1 of c, independent of the other rows; `one_thread`: on the
    calling thread alone, through oneDNN where installed) covers range(m): e.g. in parallel."""
    gemm = _GEMMS.get(c.dtype)
    if gemm is None or a.dtype != c.dtype or b.dtype != c.dtype or a.ndim != 2 or \
            b.ndim != 2 or c.ndim != 2 or not c.flags.c_contiguous or not c.flags.writeable:
        return False
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    op_a, op_b = (a.T if transpose_a else a), (b.T if transpose_b else b)
    m, k = op_a.shape
    k2, n = op_b.shape
    if k != k2 or c.shape != (m, n) or 0 in (m, n):
        return False
    lda, ldb = max(a.shape[1], 1), max(b.shape[1], 1)
    flags = tuple(gemm_call.TRANS if t else gemm_call.NO_TRANS for t in (transpose_a,
                                                                          transpose_b))
    onednn = onednn_gemm.suits(c.dtype, op_a, op_b)
    call = gemm_call.caller()

    def blas_rows(i0: int, i1: int) -> None:
        a_rows = a[:, i0:i1] if transpose_a else a[i0:i1]   # op(a)'s rows i0:i1
        call(gemm, *flags, i1 - i0, n, k, alpha, a_rows, lda, b, ldb, 1.0, c[i0:i1], n)

    def rows(i0: int, i1: int, one_thread: bool = False) -> None:
        if not one_thread:
            blas_rows(i0, i1)
        elif onednn:
            onednn_gemm.accumulate(c[i0:i1], op_a[i0:i1], op_b, alpha)
        else:
            intra_op.single_blas(blas_rows, i0, i1)

    if run is None:
        rows(0, m)
    else:
        run(m, n, k, rows)
    return True


gemm_accumulate = _accumulate if _GEMMS else None
