"""MKL's sequential GEMM (kernels/mkl_gemm.py): the values NumPy gives for every operand layout
the kernels pass, what it declines, and that single-threaded products take it."""
import os
import subprocess
import sys

import numpy as np
import pytest

from tensorweave.kernels import linalg, mkl_gemm
from tensorweave.runtime import blas_threads

pytestmark = pytest.mark.skipif(not mkl_gemm._gemms(), reason="the mkl package is not installed")


def _data(*shape, dtype=np.float32, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(dtype)


def _layouts(m):
    """`m` as C- and Fortran-ordered arrays and as a column slice of a wider matrix."""
    wide = np.zeros((m.shape[0], m.shape[1] + 5), m.dtype)
    wide[:, 2:2 + m.shape[1]] = m
    return {"c": m, "f": np.asfortranarray(m), "slice": wide[:, 2:2 + m.shape[1]],
            "strided": np.repeat(m, 2, axis=1)[:, ::2]}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(5, 7, 3), (1, 9, 4), (6, 1, 2), (4, 8, 1), (1, 1, 1),
                                   (130, 300, 70)])
def test_product_matches_numpy_for_every_layout(shape, dtype):
    m, k, n = shape
    a, b = _data(m, k, dtype=dtype, seed=1), _data(k, n, dtype=dtype, seed=2)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    for a_layout in _layouts(a).values():
        for b_layout in _layouts(b).values():
            assert mkl_gemm.suits(np.dtype(dtype), a_layout, b_layout)
            np.testing.assert_allclose(mkl_gemm.product(a_layout, b_layout), expected,
                                       rtol=tol, atol=tol)


def test_product_writes_into_an_output_view():
    a, b = _data(6, 4, seed=1), _data(4, 9, seed=2)
    out = np.full((6, 20), 7.0, np.float32)
    mkl_gemm.product(a, b, out[:, 3:12])
    np.testing.assert_allclose(out[:, 3:12], a @ b, rtol=1e-5, atol=1e-5)
    assert (out[:, :3] == 7).all() and (out[:, 12:] == 7).all()


def test_accumulate_adds_the_scaled_product():
    a, b, c = _data(8, 5, seed=1), _data(5, 3, seed=2), _data(8, 3, seed=3)
    expected = c + -0.25 * (a @ b)
    mkl_gemm.accumulate(c, a.T.copy().T, b, -0.25)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)


def test_declines_what_it_cannot_compute():
    a, b = _data(3, 4), _data(4, 2)
    f32 = np.dtype(np.float32)
    assert not mkl_gemm.suits(f32, a.astype(np.int32), b.astype(np.int32))
    assert not mkl_gemm.suits(f32, a, b.astype(np.float64))
    assert not mkl_gemm.suits(np.dtype(np.complex64), a.astype(np.complex64),
                              b.astype(np.complex64))
    assert not mkl_gemm.suits(f32, a[None], b)                     # not a matrix
    assert not mkl_gemm.suits(f32, a, _data(3, 2))                 # shapes do not chain
    assert not mkl_gemm.suits(f32, np.zeros((0, 4), np.float32), b)  # empty


def test_single_threaded_products_take_mkl(monkeypatch):
    calls = []
    real = mkl_gemm.product
    monkeypatch.setattr(mkl_gemm, "product", lambda *args: calls.append(1) or real(*args))
    a, b = _data(64, 512, seed=1), _data(512, 96, seed=2)     # 3M multiply-adds: one thread
    np.testing.assert_allclose(linalg.matmul(a, b), a @ b, rtol=1e-4, atol=1e-4)
    assert calls == [1]


def test_without_mkl_products_stay_on_numpy(monkeypatch):
    monkeypatch.setattr(mkl_gemm, "_gemms", lambda: {})
    a, b = _data(64, 512, seed=1), _data(512, 96, seed=2)
    np.testing.assert_allclose(linalg.matmul(a, b), a @ b, rtol=1e-5, atol=1e-5)


def test_the_private_library_is_not_a_blas_thread_pool():
    """The runtime sets NumPy's BLAS thread counts; MKL here has none, and counting it made
    every session single-threaded (its count is 1)."""
    libs = blas_threads._BlasLimiter()._find()
    assert libs and all(os.path.realpath(lib.filepath) != mkl_gemm.library_path()
                        for lib in libs)


def test_a_library_another_user_loaded_is_left_alone():
    """Setting the layers of an MKL that, e.g., an MKL-built NumPy already uses would switch
    that user to ILP64 and sequential under its feet."""
    code = ("import ctypes, os\n"
            "from tensorweave.kernels import mkl_gemm\n"
            "ctypes.CDLL(mkl_gemm.library_path(), mode=os.RTLD_LOCAL)\n"
            "print(mkl_gemm._gemms())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    assert out.strip() == "{}"
