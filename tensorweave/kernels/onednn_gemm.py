"""Single-threaded float32 GEMM through oneDNN's `dnnl_sgemm`, where its package is installed.

A product that runs on one thread — every product at `intra_op_parallelism_threads=1`, those of
partitions running at once (towers), the blocks of an intra-op region such as a convolution's
or a large product's — needs the fastest single-core sgemm the CPU allows. oneDNN, the library
TensorFlow's CPU kernels use, picks its kernels from the instruction sets the CPU reports, on
any vendor. Measured on one core of an AMD Zen 5 (AVX-512), mlp_train's products (128x784x512,
128x512x512, 784x128x512, 32x784x512) ran at 225-245 GFLOP/s, against 205-230 for OpenBLAS's
SkylakeX kernels, 100-120 for its Haswell ones and ~100 for MKL's sequential sgemm (which
saves its AVX-512 code for Intel CPUs); TensorFlow's own GEMMs in the same step ran at
225-235. This is the GNU OpenMP build (`onednn-cpu-gomp`): every call sets the calling
thread's OpenMP thread count to 1 around itself (kernels/gemm_call.py), so oneDNN never starts
an OpenMP team and nothing spins, and the count another user of libgomp set on that thread is
put back. The library is loaded privately (RTLD_LOCAL), so a oneDNN that another package
links is not disturbed. Without the package, without libgomp, or with `TW_ONEDNN=0`, `suits`
is False and callers keep NumPy's matmul. Operands may be transposed or sliced views: a matrix
whose rows (or columns) are contiguous is passed as it is, with its leading dimension; others
are copied first.
"""
from __future__ import annotations

import ctypes
import functools
import os

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels import gemm_call

_FLOAT32 = np.dtype(np.float32)


@functools.cache
def library_path() -> str | None:
    """libdnnl of the installed `onednn-cpu-gomp` distribution (its files live under the
    prefix's lib/), or None without it or with `TW_ONEDNN=0`."""
    if os.environ.get("TW_ONEDNN", "1") == "0":
        return None
    from importlib import metadata
    try:
        package = metadata.distribution("onednn-cpu-gomp")
    except metadata.PackageNotFoundError:
        return None
    for file in package.files or ():
        if os.path.basename(str(file)) == "libdnnl.so.3":
            path = os.path.realpath(str(package.locate_file(file)))
            return path if os.path.exists(path) else None
    return None


def _address(lib, name: str) -> int:
    return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value


@functools.cache
def _functions() -> tuple | None:
    """(dnnl_sgemm, omp_get_max_threads, omp_set_num_threads) addresses, or None; loaded on
    first use (the library maps in ~10 ms)."""
    path = library_path()
    if path is None:
        return None
    try:
        lib = ctypes.CDLL(path, mode=os.RTLD_LOCAL)
        omp = ctypes.CDLL("libgomp.so.1")   # the OpenMP runtime libdnnl was linked with
        return (_address(lib, "dnnl_sgemm"), _address(omp, "omp_get_max_threads"),
                _address(omp, "omp_set_num_threads"))
    except (OSError, AttributeError):
        return None


def _operand(m: np.ndarray):
    """(matrix, transpose flag, leading dimension) describing `m` to a row-major GEMM."""
    size = m.itemsize
    rows, cols = m.shape
    s0, s1 = m.strides
    if (s1 == size or cols == 1) and s0 % size == 0 and (rows == 1 or s0 >= cols * size):
        return m, gemm_call.NO_TRANS, s0 // size if rows > 1 else cols
    if (s0 == size or rows == 1) and s1 % size == 0 and (cols == 1 or s1 >= rows * size):
        return m, gemm_call.TRANS, s1 // size if cols > 1 else rows
    return np.ascontiguousarray(m), gemm_call.NO_TRANS, cols


def suits(dtype, a: np.ndarray, b: np.ndarray) -> bool:
    """Whether oneDNN can compute a @ b into an array of `dtype`: float32 matrices that chain,
    none empty."""
    return dtype == _FLOAT32 and a.dtype == _FLOAT32 and b.dtype == _FLOAT32 and \
        a.ndim == 2 and b.ndim == 2 and a.shape[1] == b.shape[0] and a.size > 0 and \
        b.size > 0 and _functions() is not None


def _run(c: np.ndarray, a: np.ndarray, b: np.ndarray, alpha: float, beta: float) -> None:
    (a, flag_a, lda), (b, flag_b, ldb) = _operand(a), _operand(b)
    m, k = a.shape
    n = b.shape[1]
    ldc = c.strides[0] // c.itemsize if m > 1 else n
    sgemm, get_threads, set_threads = _functions()
    status = gemm_call.dnnl_caller()(sgemm, get_threads, set_threads, flag_a, flag_b, m, n, k,
                                     alpha, a, lda, b, ldb, beta, c, ldc)
    if status:
        raise errors.InternalError(None, None, f"oneDNN's sgemm failed with status {status} on "
                                   f"[{m},{k}] x [{k},{n}]")


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
