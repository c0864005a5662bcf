"""Winograd F(2x2, 5x5) (kernels/conv_winograd5.py): the matrices compute a correlation, and the
forward convolution, its filter gradient and (through the flipped convolution) its input gradient
match the definition on every border case, on any number of threads."""
import numpy as np
import pytest

from tensorweave.kernels import conv, conv_winograd5, intra_op


@pytest.fixture
def small_shapes(monkeypatch):
    """F(2x2, 5x5) on tiny shapes, in bands of one or two tile rows."""
    monkeypatch.setattr(conv_winograd5, "MIN_CHANNELS", 1)
    monkeypatch.setattr(conv_winograd5, "MIN_TILES", 1)
    monkeypatch.setattr(conv_winograd5, "BAND_TILES", 5)


def test_the_matrices_compute_a_correlation():
    """sum_p AT[i, p] G[p, k] BT[p, j] = [j == i + k]: y = AT ((G g) . (BT d)) is the 2-output
    correlation of d (6 values) with g (5 taps)."""
    at, g, bt = conv_winograd5.AT, conv_winograd5.G, conv_winograd5.BT
    got = np.einsum("ip,pk,pj->ikj", at, g, bt)
    want = np.array([[[float(j == i + k) for j in range(6)] for k in range(5)]
                     for i in range(2)])
    np.testing.assert_allclose(got, want, atol=1e-14)


def _reference(x, w, dy, pads):
    """(y, d filter, d input) by one float64 product per filter tap."""
    n, h, wd, _ = x.shape
    (pt, pb), (pl, pr) = pads
    xp = np.zeros((n, h + pt + pb, wd + pl + pr, x.shape[3]))
    xp[:, pt:pt + h, pl:pl + wd] = x
    oh, ow = xp.shape[1] - 4, xp.shape[2] - 4
    y = np.zeros((n, oh, ow, w.shape[3]))
    dw = np.zeros(w.shape)
    dxp = np.zeros_like(xp)
    for i in range(5):
        for j in range(5):
            window = xp[:, i:i + oh, j:j + ow]
            y += window @ w[i, j]
            dw[i, j] = np.einsum("nhwc,nhwk->ck", window, dy)
            dxp[:, i:i + oh, j:j + ow] += dy @ w[i, j].T
    return y, dw, dxp[:, pt:pt + h, pl:pl + wd]


@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("x_shape, k, pads", [
    ((2, 8, 10, 3), 4, ((2, 2), (2, 2))),     # SAME, even output
    ((3, 7, 9, 2), 5, ((2, 2), (2, 2))),      # SAME, odd output: tiles cut by the border
    ((2, 9, 11, 3), 2, ((0, 0), (0, 0))),     # VALID, odd output
    ((1, 6, 7, 4), 3, ((1, 3), (0, 2))),      # explicit, uneven padding
    ((2, 5, 5, 2), 3, ((0, 0), (0, 0))),      # a single output row and column
])
def test_passes_match_the_definition(small_shapes, x_shape, k, pads, dtype, tol):
    rng = np.random.RandomState(0)
    x = rng.randn(*x_shape).astype(dtype)
    w = rng.randn(5, 5, x_shape[3], k).astype(dtype)
    out_hw = (x_shape[1] + sum(pads[0]) - 4, x_shape[2] + sum(pads[1]) - 4)
    dy = rng.randn(x_shape[0], *out_hw, k).astype(dtype)
    assert conv_winograd5.applies(x.shape, w.shape, (1, 1), (1, 1), out_hw, x.dtype)
    want_y, want_dw, want_dx = _reference(x, w, dy, pads)

    def close(got, want):
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=0, atol=tol * np.abs(want).max())
    close(conv.conv2d_nhwc(x, w, (1, 1), (1, 1), out_hw, pads), want_y)
    close(conv_winograd5.filter_gradient5x5(x, dy, pads), want_dw)
    close(conv.conv2d_backprop_filter_nhwc(x, dy, (5, 5), (1, 1), (1, 1), pads), want_dw)
    close(conv.conv2d_backprop_input_nhwc(dy, w, x.shape, (1, 1), (1, 1), pads), want_dx)


@pytest.mark.parametrize("height", [6, 7])
def test_the_epilogue_sees_every_output_once(small_shapes, height):
    """Per band while in cache when tile rows are whole output rows, else once at the end."""
    rng = np.random.RandomState(1)
    x = rng.randn(2, height, 6, 3).astype(np.float32)
    w = rng.randn(5, 5, 3, 4).astype(np.float32)
    pads = ((2, 2), (2, 2))
    plain = conv_winograd5.conv5x5(x, w, (height, 6), pads)

    def add_one(rows):
        assert rows.shape[1] == 4
        rows += 1
    np.testing.assert_array_equal(conv_winograd5.conv5x5(x, w, (height, 6), pads, add_one),
                                  plain + 1)


@pytest.mark.parametrize("threads", [2, 3])
def test_results_do_not_depend_on_the_thread_count(small_shapes, monkeypatch, threads):
    rng = np.random.RandomState(2)
    x = rng.randn(3, 9, 8, 4).astype(np.float32)
    w = rng.randn(5, 5, 4, 6).astype(np.float32)
    dy = rng.randn(3, 9, 8, 6).astype(np.float32)
    pads = ((2, 2), (2, 2))

    def passes():
        return (conv_winograd5.conv5x5(x, w, (9, 8), pads),
                conv_winograd5.filter_gradient5x5(x, dy, pads))
    monkeypatch.setattr(intra_op, "threads", lambda: 1)
    serial = passes()
    monkeypatch.setattr(intra_op, "threads", lambda: threads)
    for got, want in zip(passes(), serial):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("x_shape, w_shape, strides, dilations, dtype, expected", [
    ((64, 14, 14, 32), (5, 5, 32, 64), (1, 1), (1, 1), np.float32, True),    # MNIST conv2
    ((64, 14, 14, 64), (5, 5, 64, 32), (1, 1), (1, 1), np.float32, True),    # its input grad
    ((64, 14, 14, 32), (5, 5, 32, 64), (1, 1), (1, 1), np.float64, True),
    ((64, 28, 28, 1), (5, 5, 1, 32), (1, 1), (1, 1), np.float32, False),     # MNIST conv1
    ((64, 14, 14, 32), (5, 5, 32, 64), (2, 2), (1, 1), np.float32, False),   # strided
    ((64, 14, 14, 32), (5, 5, 32, 64), (1, 1), (2, 2), np.float32, False),   # dilated
    ((64, 14, 14, 32), (3, 3, 32, 64), (1, 1), (1, 1), np.float32, False),   # 3x3
    ((64, 14, 14, 32), (5, 5, 32, 64), (1, 1), (1, 1), np.int32, False),
    ((1, 5, 5, 32), (5, 5, 32, 64), (1, 1), (1, 1), np.float32, False),      # too few tiles
])
def test_where_it_applies(x_shape, w_shape, strides, dilations, dtype, expected):
    out_hw = (x_shape[1] // strides[0], x_shape[2] // strides[1])
    assert conv_winograd5.applies(x_shape, w_shape, strides, dilations, out_hw,
                                  np.dtype(dtype)) == expected
