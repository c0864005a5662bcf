"""oneDNN's sgemm (kernels/onednn_gemm.py): the values NumPy gives for every operand layout
the kernels pass, what it declines, that single-threaded products take it, and that it leaves
the calling thread's OpenMP thread count as it found it."""
import ctypes
import threading

import numpy as np
import pytest

from tensorweave.kernels import linalg, onednn_gemm

pytestmark = pytest.mark.skipif(onednn_gemm._functions() is None,
                                reason="the onednn-cpu-gomp package is not installed")


def _data(*shape, dtype=np.float32, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(dtype)


def _layouts(m):
    """`m` as C- and Fortran-ordered arrays and as a column slice of a wider matrix."""
    wide = np.zeros((m.shape[0], m.shape[1] + 5), m.dtype)
    wide[:, 2:2 + m.shape[1]] = m
    return {"c": m, "f": np.asfortranarray(m), "slice": wide[:, 2:2 + m.shape[1]],
            "strided": np.repeat(m, 2, axis=1)[:, ::2]}


@pytest.mark.parametrize("shape", [(5, 7, 3), (1, 9, 4), (6, 1, 2), (4, 8, 1), (1, 1, 1),
                                   (130, 300, 70)])
def test_product_matches_numpy_for_every_layout(shape):
    m, k, n = shape
    a, b = _data(m, k, seed=1), _data(k, n, seed=2)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    for a_layout in _layouts(a).values():
        for b_layout in _layouts(b).values():
            assert onednn_gemm.suits(np.dtype(np.float32), a_layout, b_layout)
            np.testing.assert_allclose(onednn_gemm.product(a_layout, b_layout), expected,
                                       rtol=1e-4, atol=1e-4)


def test_product_writes_into_an_output_view():
    a, b = _data(6, 4, seed=1), _data(4, 9, seed=2)
    out = np.full((6, 20), 7.0, np.float32)
    onednn_gemm.product(a, b, out[:, 3:12])
    np.testing.assert_allclose(out[:, 3:12], a @ b, rtol=1e-5, atol=1e-5)
    assert (out[:, :3] == 7).all() and (out[:, 12:] == 7).all()


def test_accumulate_adds_the_scaled_product():
    a, b, c = _data(8, 5, seed=1), _data(5, 3, seed=2), _data(8, 3, seed=3)
    expected = c + -0.25 * (a @ b)
    onednn_gemm.accumulate(c, a.T.copy().T, b, -0.25)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)


def test_declines_what_it_cannot_compute():
    a, b = _data(3, 4), _data(4, 2)
    f32 = np.dtype(np.float32)
    assert not onednn_gemm.suits(f32, a.astype(np.int32), b.astype(np.int32))
    assert not onednn_gemm.suits(f32, a, b.astype(np.float64))
    f64 = np.dtype(np.float64)                                     # sgemm only
    assert not onednn_gemm.suits(f64, a.astype(f64), b.astype(f64))
    assert not onednn_gemm.suits(np.dtype(np.complex64), a.astype(np.complex64),
                              b.astype(np.complex64))
    assert not onednn_gemm.suits(f32, a[None], b)                     # not a matrix
    assert not onednn_gemm.suits(f32, a, _data(3, 2))                 # shapes do not chain
    assert not onednn_gemm.suits(f32, np.zeros((0, 4), np.float32), b)  # empty


def test_single_threaded_products_take_onednn(monkeypatch):
    calls = []
    real = onednn_gemm.product
    monkeypatch.setattr(onednn_gemm, "product", lambda *args: calls.append(1) or real(*args))
    a, b = _data(64, 512, seed=1), _data(512, 96, seed=2)     # 3M multiply-adds: one thread
    np.testing.assert_allclose(linalg.matmul(a, b), a @ b, rtol=1e-4, atol=1e-4)
    assert calls == [1]


def test_without_onednn_products_stay_on_numpy(monkeypatch):
    monkeypatch.setattr(onednn_gemm, "_functions", lambda: None)
    a, b = _data(64, 512, seed=1), _data(512, 96, seed=2)
    np.testing.assert_allclose(linalg.matmul(a, b), a @ b, rtol=1e-5, atol=1e-5)


def test_the_calling_threads_openmp_count_is_put_back():
    """Each call runs with one OpenMP thread and restores the count it found, on any thread."""
    omp = ctypes.CDLL("libgomp.so.1")
    seen = []

    def on_a_thread():
        omp.omp_set_num_threads(3)
        onednn_gemm.product(_data(40, 30, seed=1), _data(30, 20, seed=2))
        seen.append(omp.omp_get_max_threads())
    worker = threading.Thread(target=on_a_thread)
    worker.start()
    worker.join()
    assert seen == [3]
