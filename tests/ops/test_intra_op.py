"""Intra-op parallelism (kernels/intra_op.py): every block runs once, errors reach the caller,
BLAS is single-threaded during a parallel region and restored after, and the parallel
convolution and MatMul paths give what their serial forms give."""
import multiprocessing
import threading

import numpy as np
import pytest
import threadpoolctl

from tensorweave.kernels import conv, intra_op, linalg, pool
from tensorweave.runtime import blas_threads


@pytest.fixture
def two_threads(monkeypatch):
    """Parallel regions use two threads even where the machine has one core."""
    monkeypatch.setattr(intra_op, "threads", lambda: 2)


def test_every_block_runs_once_on_several_threads(two_threads):
    ran = [0] * 200
    names = set()
    barrier = threading.Barrier(2, timeout=10)

    def task(i):
        if i < 2:
            barrier.wait()      # returns only if two threads run blocks at the same time
        ran[i] += 1
        names.add(threading.current_thread().name)

    intra_op.parallel_for(len(ran), task)
    assert ran == [1] * 200
    assert len(names) == 2


def test_first_error_is_raised_after_all_blocks(two_threads):
    ran = []

    def task(i):
        ran.append(i)
        if i == 3:
            raise ValueError("block 3")

    with pytest.raises(ValueError, match="block 3"):
        intra_op.parallel_for(10, task)
    assert sorted(ran) == list(range(10))


def _blas_threads_now() -> int:
    """NumPy's own BLAS (SciPy's, loaded by other tests, is not the one kernels use)."""
    libs = threadpoolctl.ThreadpoolController().select(user_api="blas").lib_controllers
    numpy_libs = [lib for lib in libs if "numpy" in lib.filepath] or libs
    return numpy_libs[0].num_threads if numpy_libs else 0


def test_blas_is_single_threaded_inside_and_restored_after(two_threads):
    before = _blas_threads_now()
    allowed = blas_threads.limiter.threads()
    seen = []
    intra_op.parallel_for(4, lambda i: seen.append((_blas_threads_now(),
                                                    blas_threads.limiter.threads())))
    assert _blas_threads_now() == before
    if before:      # a BLAS library was found to control
        # BLAS runs single-threaded, but a region inside the region may still use `allowed`
        assert seen == [(1, allowed)] * 4


def test_one_thread_runs_blocks_in_order_on_the_caller(monkeypatch):
    monkeypatch.setattr(intra_op, "threads", lambda: 1)
    order = []
    intra_op.parallel_for(5, lambda i: order.append((i, threading.current_thread())))
    assert order == [(i, threading.current_thread()) for i in range(5)]


@pytest.mark.parametrize("blas_threaded", [False, True])
@pytest.mark.parametrize("shape", [(64, 300, 1024), (900, 40, 600), (600, 70, 513)])
def test_parallel_matmul_is_the_serial_product(two_threads, monkeypatch, shape, blas_threaded):
    monkeypatch.setattr(intra_op, "gemm_on_blas_threads", lambda: blas_threaded)
    m, k, n = shape
    rng = np.random.RandomState(0)
    a = rng.randn(m, k).astype(np.float32)
    b = rng.randn(k, n).astype(np.float32)
    got = linalg.matmul(a, b)
    want = np.empty_like(got)
    for j in range(n):          # one column at a time: the serial reference
        np.matmul(a, b[:, j:j + 1], out=want[:, j:j + 1])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(linalg.matmul(b.T, a.T), want.T, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_convolutions_do_not_depend_on_the_thread_count(monkeypatch, threads):
    monkeypatch.setattr(conv, "MIN_ROWS", 8)
    rng = np.random.RandomState(1)
    x = rng.randn(4, 9, 9, 3).astype(np.float32)
    w = rng.randn(3, 3, 3, 5).astype(np.float32)
    dy = rng.randn(4, 9, 9, 5).astype(np.float32)
    pads = ((1, 1), (1, 1))
    assert len(conv._block_plan(4, 9, 9, 27, x.dtype)[0]) >= conv.MIN_BLOCKS

    def passes():
        return (conv.conv2d_nhwc(x, w, (1, 1), (1, 1), (9, 9), pads),
                conv.conv2d_backprop_filter_nhwc(x, dy, (3, 3), (1, 1), (1, 1), pads),
                conv.conv2d_backprop_input_nhwc(dy, w, x.shape, (1, 1), (1, 1), pads))

    monkeypatch.setattr(intra_op, "threads", lambda: 1)
    serial = passes()
    monkeypatch.setattr(intra_op, "threads", lambda: threads)
    for got, want in zip(passes(), serial):
        np.testing.assert_array_equal(got, want)
    view = conv.patches(conv.pad_spatial(x, pads), (9, 9), (3, 3), (1, 1), (1, 1))
    np.testing.assert_allclose(serial[1], np.einsum("nhwijc,nhwo->ijco", view, dy),
                               rtol=1e-5, atol=1e-4)


def _input_gradient_reference(dy, w, in_shape, strides, pads):
    """dx by one strided slice add per filter tap, in float64."""
    n, h, wd, c = in_shape
    (pt, pb), (pl, pr) = pads
    dxp = np.zeros((n, h + pt + pb, wd + pl + pr, c))
    _, oh, ow, _ = dy.shape
    for i in range(w.shape[0]):
        for j in range(w.shape[1]):
            dxp[:, i:i + (oh - 1) * strides[0] + 1:strides[0],
                j:j + (ow - 1) * strides[1] + 1:strides[1]] += dy @ w[i, j].T.astype(np.float64)
    return dxp[:, pt:pt + h, pl:pl + wd]


@pytest.mark.parametrize("c, oc, strides, split, flipped", [
    (3, 8, (1, 1), False, False),   # col2im, whole-image blocks on the threads
    (8, 3, (1, 1), False, True),    # more input than output channels: flipped convolution
    (3, 8, (1, 1), True, True),     # blocks split images: the flipped convolution
    (3, 8, (2, 2), False, False),   # strided, whole images: col2im on the threads
    (3, 8, (2, 2), True, False),    # strided, blocks split images: col2im in block order
])
def test_input_gradient_paths_match_the_definition(two_threads, monkeypatch, c, oc, strides,
                                                   split, flipped):
    if split:   # blocks of 21 pixels, images of 81
        monkeypatch.setattr(conv, "MIN_BLOCKS", 64)
        monkeypatch.setattr(conv, "MIN_SPLIT_ROWS", 8)
    forward = []
    monkeypatch.setattr(conv, "conv2d_nhwc", lambda *a: forward.append(a) or
                        _conv2d_nhwc(*a))
    rng = np.random.RandomState(3)
    in_shape = (16, 9, 9, c)
    w = rng.randn(3, 3, c, oc).astype(np.float32)
    pads = ((1, 1), (1, 1))
    out = (9 + 2 - 3) // strides[0] + 1
    dy = rng.randn(16, out, out, oc).astype(np.float32)
    got = conv.conv2d_backprop_input_nhwc(dy, w, in_shape, strides, (1, 1), pads)
    assert bool(forward) == flipped
    np.testing.assert_allclose(got, _input_gradient_reference(dy, w, in_shape, strides, pads),
                               rtol=1e-5, atol=1e-4)


_conv2d_nhwc = conv.conv2d_nhwc


class _PoolCtx:
    op_type = "MaxPoolGrad"
    attrs = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "SAME",
             "data_format": "NHWC", "explicit_paddings": []}


def test_max_pool_grad_chunks_of_the_batch_match_one_pass(monkeypatch):
    rng = np.random.RandomState(2)
    x = rng.randint(-3, 3, (13, 9, 9, 64)).astype(np.float32)   # ties: first maximum wins
    y = pool.MaxPoolKernel(_PoolCtx()).compute(None, x)
    dy = rng.randn(*y.shape).astype(np.float32)
    grad = pool.MaxPoolGradKernel(_PoolCtx())
    monkeypatch.setattr(intra_op, "threads", lambda: 1)
    monkeypatch.setattr(pool, "PARALLEL_SIZE", x.size + 1)
    whole = grad.compute(None, x, y, dy)
    monkeypatch.setattr(intra_op, "threads", lambda: 2)
    monkeypatch.setattr(pool, "PARALLEL_SIZE", 1)
    np.testing.assert_array_equal(grad.compute(None, x, y, dy), whole)


def _blocks_in_child(conn):
    ran = []
    intra_op.parallel_for(6, ran.append)
    conn.send(sorted(ran))


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_gets_workers_of_its_own(two_threads):
    intra_op.parallel_for(4, lambda i: None)         # the parent's workers exist
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_blocks_in_child, args=(child,))
    proc.start()
    assert parent.poll(30)
    assert parent.recv() == list(range(6))
    proc.join(30)
    assert intra_op._pool._workers >= 1 and proc.exitcode == 0



def test_no_blocks_returns_at_once(two_threads):
    intra_op.parallel_for(0, lambda i: pytest.fail("no block to run"))


def test_gemms_are_blas_threaded_only_while_no_other_region_runs(two_threads, monkeypatch):
    monkeypatch.setattr(intra_op, "_last_region", float("-inf"))
    assert intra_op.gemm_on_blas_threads()
    intra_op.parallel_for(4, lambda i: None, gemm=True)      # a GEMM's own blocks
    assert intra_op.gemm_on_blas_threads()
    intra_op.parallel_for(4, lambda i: None)                 # e.g. a convolution's
    assert not intra_op.gemm_on_blas_threads()
    monkeypatch.setattr(intra_op, "QUIET_SECONDS", 0.0)
    assert intra_op.gemm_on_blas_threads()


def test_one_thread_never_threads_gemms(monkeypatch):
    monkeypatch.setattr(intra_op, "threads", lambda: 1)
    monkeypatch.setattr(intra_op, "_last_region", float("-inf"))
    assert not intra_op.gemm_on_blas_threads()
