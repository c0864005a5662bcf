"""Winograd F(2x2, 3x3) and F(2x2, 5x5) (kernels/conv_winograd.py): the matrices compute a
correlation, and the forward convolution, its filter gradient and (through the flipped
convolution) its input gradient match the definition on every border case, on any number of
threads."""
import numpy as np
import pytest

from tensorweave.kernels import conv, conv_winograd, intra_op


@pytest.fixture
def small_shapes(monkeypatch):
    """Winograd on tiny shapes, in bands of one or two tile rows."""
    monkeypatch.setattr(conv_winograd, "MIN_CHANNELS", 1)
    monkeypatch.setattr(conv_winograd, "MIN_TILES", 1)
    monkeypatch.setattr(conv_winograd, "MIN_BAND_TILES", 5)
    monkeypatch.setattr(conv_winograd, "BAND_BYTES", 1)


@pytest.mark.parametrize("r", [3, 5])
def test_the_matrices_compute_a_correlation(r):
    """sum_p AT[i, p] G[p, k] BT[p, j] = [j == i + k]: y = AT ((G g) . (BT d)) is the 2-output
    correlation of d (r + 1 values) with g (r taps)."""
    at, g, bt = conv_winograd.matrices(r)
    got = np.einsum("ip,pk,pj->ikj", at, g, bt)
    want = np.array([[[float(j == i + k) for j in range(r + 1)] for k in range(r)]
                     for i in range(2)])
    np.testing.assert_allclose(got, want, atol=1e-14)


def _reference(x, w, dy, pads):
    """(y, d filter, d input) by one float64 product per filter tap."""
    n, h, wd, _ = x.shape
    r = w.shape[0]
    (pt, pb), (pl, pr) = pads
    xp = np.zeros((n, h + pt + pb, wd + pl + pr, x.shape[3]))
    xp[:, pt:pt + h, pl:pl + wd] = x
    oh, ow = xp.shape[1] - r + 1, xp.shape[2] - r + 1
    y = np.zeros((n, oh, ow, w.shape[3]))
    dw = np.zeros(w.shape)
    dxp = np.zeros_like(xp)
    for i in range(r):
        for j in range(r):
            window = xp[:, i:i + oh, j:j + ow]
            y += window @ w[i, j]
            dw[i, j] = np.einsum("nhwc,nhwk->ck", window, dy)
            dxp[:, i:i + oh, j:j + ow] += dy @ w[i, j].T
    return y, dw, dxp[:, pt:pt + h, pl:pl + wd]


@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("x_shape, k, pads", [
    ((2, 8, 10, 3), 4, "same"),               # even output
    ((3, 7, 9, 2), 5, "same"),                # odd output: tiles cut by the border
    ((2, 9, 11, 3), 2, ((0, 0), (0, 0))),     # VALID, odd output
    ((1, 6, 7, 4), 3, ((1, 3), (0, 2))),      # explicit, uneven padding
    ((2, 5, 5, 2), 3, ((0, 0), (0, 0))),      # a single output row and column for 5x5
])
@pytest.mark.parametrize("r", [3, 5])
def test_passes_match_the_definition(small_shapes, r, x_shape, k, pads, dtype, tol):
    if pads == "same":
        pads = ((r // 2, r // 2),) * 2
    rng = np.random.RandomState(0)
    x = rng.randn(*x_shape).astype(dtype)
    w = rng.randn(r, r, x_shape[3], k).astype(dtype)
    out_hw = (x_shape[1] + sum(pads[0]) - r + 1, x_shape[2] + sum(pads[1]) - r + 1)
    dy = rng.randn(x_shape[0], *out_hw, k).astype(dtype)
    assert conv_winograd.applies(x.shape, w.shape, (1, 1), (1, 1), out_hw, x.dtype)
    want_y, want_dw, want_dx = _reference(x, w, dy, pads)

    def close(got, want):
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=0, atol=tol * np.abs(want).max())
    close(conv.conv2d_nhwc(x, w, (1, 1), (1, 1), out_hw, pads), want_y)
    close(conv_winograd.filter_gradient(x, dy, r, pads), want_dw)
    close(conv.conv2d_backprop_filter_nhwc(x, dy, (r, r), (1, 1), (1, 1), pads), want_dw)
    close(conv.conv2d_backprop_input_nhwc(dy, w, x.shape, (1, 1), (1, 1), pads), want_dx)


@pytest.mark.parametrize("height", [6, 7])
@pytest.mark.parametrize("r", [3, 5])
def test_the_epilogue_sees_every_output_once(small_shapes, r, height):
    """Per band while in cache when tile rows are whole output rows, else once at the end."""
    rng = np.random.RandomState(1)
    x = rng.randn(2, height, 6, 3).astype(np.float32)
    w = rng.randn(r, r, 3, 4).astype(np.float32)
    pads = ((r // 2, r // 2),) * 2
    plain = conv_winograd.conv2d(x, w, (height, 6), pads)

    def add_one(rows):
        assert rows.shape[1] == 4
        rows += 1
    np.testing.assert_array_equal(conv_winograd.conv2d(x, w, (height, 6), pads, add_one),
                                  plain + 1)


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("r", [3, 5])
def test_results_do_not_depend_on_the_thread_count(small_shapes, monkeypatch, r, threads):
    rng = np.random.RandomState(2)
    x = rng.randn(3, 9, 8, 4).astype(np.float32)
    w = rng.randn(r, r, 4, 6).astype(np.float32)
    dy = rng.randn(3, 9, 8, 6).astype(np.float32)
    pads = ((r // 2, r // 2),) * 2

    def passes():
        return (conv_winograd.conv2d(x, w, (9, 8), pads),
                conv_winograd.filter_gradient(x, dy, r, pads))
    monkeypatch.setattr(intra_op, "threads", lambda: 1)
    serial = passes()
    monkeypatch.setattr(intra_op, "threads", lambda: threads)
    for got, want in zip(passes(), serial):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("x_shape, w_shape, strides, dilations, dtype, expected", [
    ((64, 14, 14, 32), (5, 5, 32, 64), (1, 1), (1, 1), np.float32, True),    # MNIST conv2
    ((64, 14, 14, 64), (5, 5, 64, 32), (1, 1), (1, 1), np.float32, True),    # its input grad
    ((64, 14, 14, 32), (5, 5, 32, 64), (1, 1), (1, 1), np.float64, True),
    ((1, 224, 224, 64), (3, 3, 64, 64), (1, 1), (1, 1), np.float32, True),   # VGG19 block 1
    ((64, 28, 28, 1), (5, 5, 1, 32), (1, 1), (1, 1), np.float32, False),     # MNIST conv1
    ((1, 224, 224, 3), (3, 3, 3, 64), (1, 1), (1, 1), np.float32, False),    # VGG19 conv1_1
    ((64, 14, 14, 32), (5, 5, 32, 64), (2, 2), (1, 1), np.float32, False),   # strided
    ((64, 14, 14, 32), (5, 5, 32, 64), (1, 1), (2, 2), np.float32, False),   # dilated
    ((64, 14, 14, 32), (7, 7, 32, 64), (1, 1), (1, 1), np.float32, False),   # 7x7
    ((64, 14, 14, 32), (5, 5, 32, 64), (1, 1), (1, 1), np.int32, False),
    ((1, 5, 5, 32), (5, 5, 32, 64), (1, 1), (1, 1), np.float32, False),      # too few tiles
])
def test_where_it_applies(x_shape, w_shape, strides, dilations, dtype, expected):
    out_hw = (x_shape[1] // strides[0], x_shape[2] // strides[1])
    assert conv_winograd.applies(x_shape, w_shape, strides, dilations, out_hw,
                                 np.dtype(dtype)) == expected


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_reach_what_direct_convolution_gives(monkeypatch, bad):
    """Winograd would spread a NaN or infinity over its tile and turn inf - inf into NaN; such
    inputs run im2col instead (the same outputs and gradients as with Winograd switched off)."""
    rng = np.random.RandomState(4)
    x = rng.randn(4, 12, 12, 32).astype(np.float32)
    w = rng.randn(5, 5, 32, 32).astype(np.float32)
    dy = rng.randn(4, 12, 12, 32).astype(np.float32)
    pads = ((2, 2), (2, 2))
    x[1, 5, 6, 3] = bad
    dy_bad = dy.copy()
    dy_bad[2, 7, 4, 1] = bad
    assert conv_winograd.applies(x.shape, w.shape, (1, 1), (1, 1), (12, 12), x.dtype)

    def passes():
        return (conv.conv2d_nhwc(x, w, (1, 1), (1, 1), (12, 12), pads),
                conv.conv2d_backprop_filter_nhwc(x, dy, (5, 5), (1, 1), (1, 1), pads),
                conv.conv2d_backprop_input_nhwc(dy_bad, w, x.shape, (1, 1), (1, 1), pads))
    got = passes()
    monkeypatch.setattr(conv_winograd, "applies", lambda *a: False)
    want = passes()
    assert conv_winograd.conv2d(x, w, (12, 12), pads) is None
    assert conv_winograd.filter_gradient(x, dy, 5, pads) is None
    assert conv_winograd.filter_gradient(np.zeros_like(x), dy_bad, 5, pads) is None
    w_bad = w.copy()
    w_bad[2, 2, 0, 0] = bad
    assert conv_winograd.conv2d(np.zeros_like(x), w_bad, (12, 12), pads) is None
    for g, wnt in zip(got, want):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(wnt))
        np.testing.assert_array_equal(np.isinf(g), np.isinf(wnt))
        np.testing.assert_allclose(g[np.isfinite(g)], wnt[np.isfinite(wnt)], rtol=1e-4, atol=1e-3)
