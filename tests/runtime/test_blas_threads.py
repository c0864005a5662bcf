"""Small products run on one BLAS thread and give the values of the multithreaded product; the
thread count in force before comes back, including one a threadpoolctl user set."""
import numpy as np
import pytest

from tensorweave.kernels import linalg, onednn_gemm
from tensorweave.runtime import blas_threads

threadpoolctl = pytest.importorskip("threadpoolctl")


def _openblas():
    """The controllers of NumPy's own OpenBLAS (other libraries, e.g. SciPy's, may be loaded)."""
    libs = threadpoolctl.ThreadpoolController().select(internal_api="openblas")
    numpy_libs = [lib for lib in libs.lib_controllers if "numpy" in lib.filepath]
    if not numpy_libs:
        pytest.skip("NumPy's BLAS is not OpenBLAS")
    return libs, numpy_libs[0]


def test_small_products_run_on_one_thread_and_restore_the_count():
    libs, numpy_blas = _openblas()
    seen = []
    with libs.limit(limits=2):
        blas_threads.limiter.one_thread(lambda: seen.append(numpy_blas.get_num_threads()))
        after = numpy_blas.get_num_threads()
    assert seen == [1] and after == 2


def test_a_users_single_thread_limit_is_kept():
    libs, numpy_blas = _openblas()
    with libs.limit(limits=1):
        blas_threads.limiter.one_thread(lambda: None)
        assert numpy_blas.get_num_threads() == 1


@pytest.mark.parametrize("shape", [(32, 192, 512), (300, 300, 300)], ids=["small", "large"])
def test_matmul_equals_the_multithreaded_product(shape, monkeypatch):
    monkeypatch.setattr(onednn_gemm, "_functions", lambda: None)   # OpenBLAS, not oneDNN
    m, k, n = shape
    rng = np.random.RandomState(0)
    a = rng.randn(m, k).astype(np.float32)
    b = rng.randn(n, k).astype(np.float32).T    # a transposed view, as MatMul passes it
    with _openblas()[0].limit(limits=2):
        expected = a @ b
        # Equal up to rounding: OpenBLAS's one- and two-thread paths may pick different kernels
        # (they differ in the last bits with its Haswell kernels on an AMD Zen 5).
        np.testing.assert_allclose(linalg.matmul(a, b), expected, rtol=1e-5, atol=1e-4)
