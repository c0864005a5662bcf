"""Single-threaded GEMM through Intel MKL's sequential layer, where the `mkl` package is installed.

A product that runs on one thread — every product at `intra_op_parallelism_threads=1`, those of
partitions running at once (towers), the blocks of an intra-op region such as a convolution's
— was OpenBLAS's single-threaded sgemm, which is slowest where towers live: few rows against
a large shared weight matrix, repacked on every call. MKL's sequential sgemm took 0.55-1.00x
OpenBLAS's time on mlp_train's products from 32 to 256 rows (forward, input and weight
gradients; medians of interleaved runs on one thread), the largest gains at the fewest rows.
The library is loaded privately (RTLD_LOCAL: loaded globally it slowed NumPy's own BLAS calls
by ~15%) in its sequential threading layer, so it starts no threads and nothing spins, and
its ILP64 interface, so it is called like NumPy's OpenBLAS (kernels/gemm_call.py). Without the
package, with `TW_MKL=0`, or when the library is already loaded by another user (whose layers
ours would change), `suits` is False and callers keep NumPy's matmul. Operands may be
transposed or sliced views: a matrix whose rows (or columns) are contiguous is passed as it
is, with its leading dimension; others are copied first.
"""
from __future__ import annotations

import ctypes
import functools
import os

import numpy as np

from tensorweave.kernels import gemm_call

_SEQUENTIAL, _ILP64 = 1, 1   # MKL_THREADING_SEQUENTIAL, MKL_INTERFACE_ILP64
_FUNCTIONS = {np.dtype(np.float32): "cblas_sgemm", np.dtype(np.float64): "cblas_dgemm"}


@functools.cache
def library_path() -> str | None:
    """libmkl_rt of the installed `mkl` distribution (its files live under the prefix's lib/),
    or None without it or with `TW_MKL=0` (every product then stays on NumPy's BLAS)."""
    if os.environ.get("TW_MKL", "1") == "0":
        return None
    from importlib import metadata
    try:
        mkl = metadata.distribution("mkl")
    except metadata.PackageNotFoundError:
        return None
    for file in mkl.files or ():
        if os.path.basename(str(file)).startswith("libmkl_rt.so"):
            path = os.path.realpath(str(mkl.locate_file(file)))
            return path if os.path.exists(path) else None
    return None


def _loaded_already(path: str) -> bool:
    """Whether something else in the process (an MKL-built NumPy, say) uses this library:
    choosing its layers would change them under that user, so it is left alone."""
    try:
        ctypes.CDLL(path, mode=os.RTLD_LOCAL | os.RTLD_NOLOAD)
    except OSError:
        return False
    return True


@functools.cache
def _gemms() -> dict:
    """{dtype: gemm address} of MKL in its sequential ILP64 layers, or {}; loaded on first
    use (finding the package and loading the library take ~20 ms)."""
    path = library_path()
    if path is None or _loaded_already(path):
        return {}
    try:
        lib = ctypes.CDLL(path, mode=os.RTLD_LOCAL)
    except OSError:
        return {}
    for setter, layer in (("MKL_Set_Threading_Layer", _SEQUENTIAL),
                          ("MKL_Set_Interface_Layer", _ILP64)):
        fn = getattr(lib, setter)
        fn.argtypes, fn.restype = (ctypes.c_int,), ctypes.c_int
        if fn(layer) != layer:     # the library was in use with other layers already
            return {}
    return {dtype: ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
            for dtype, name in _FUNCTIONS.items()}


def _operand(m: np.ndarray):
    """(matrix, transpose flag, leading dimension) describing `m` to row-major CBLAS."""
    size = m.itemsize
    rows, cols = m.shape
    s0, s1 = m.strides
    if (s1 == size or cols == 1) and s0 % size == 0 and (rows == 1 or s0 >= cols * size):
        return m, gemm_call.NO_TRANS, s0 // size if rows > 1 else cols
    if (s0 == size or rows == 1) and s1 % size == 0 and (cols == 1 or s1 >= rows * size):
        return m, gemm_call.TRANS, s1 // size if cols > 1 else rows
    return np.ascontiguousarray(m), gemm_call.NO_TRANS, cols


def suits(dtype, a: np.ndarray, b: np.ndarray) -> bool:
    """Whether MKL can compute a @ b into an array of `dtype`: the same real float dtype,
    matrices that chain, none empty."""
    return dtype in _gemms() and a.dtype == dtype and b.dtype == dtype and a.ndim == 2 and \
        b.ndim == 2 and a.shape[1] == b.shape[0] and a.size > 0 and b.size > 0


def _run(c: np.ndarray, a: np.ndarray, b: np.ndarray, alpha: float, beta: float) -> None:
    (a, flag_a, lda), (b, flag_b, ldb) = _operand(a), _operand(b)
    m, k = a.shape
    n = b.shape[1]
    ldc = c.strides[0] // c.itemsize if m > 1 else n
    gemm_call.caller()(_gemms()[c.dtype], flag_a, flag_b, m, n, k, alpha, a, lda, b, ldb, beta,
                       c, ldc)


def product(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """a @ b on the calling thread alone (callers check `suits` first), written into `out`
    (whose rows are contiguous) when given."""
    if out is None:
        out = np.empty((a.shape[0], b.shape[1]), a.dtype)
    _run(out, a, b, 1.0, 0.0)
    return out


def accumulate(c: np.ndarray, a: np.ndarray, b: np.ndarray, alpha: float) -> None:
    """c += alpha * a @ b in place on the calling thread (c's rows contiguous)."""
    _run(c, a, b, alpha, 1.0)
