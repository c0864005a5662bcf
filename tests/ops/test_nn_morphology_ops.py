"""Dilation2D and its backprop ops, dilation2d / erosion2d, against NumPy loops over windows
and filter taps (TF's first-maximum routing), the gradient numerically, names and errors as
TensorFlow 2.21's."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import nn_morphology_ops
from tensorweave.testing.op_case import OpCase, case_tests
from tests.ops.test_nn_conv3d_ops import check_run_error

F32_64 = (tf.float32, tf.float64)


def _randn(*shape):
    return lambda rng, dt: rng.randn(*shape).astype(dt)


def _geometry(size, k, stride, rate, padding):
    eff = (k - 1) * rate + 1
    if padding == "SAME":
        out = -(-size // stride)
        return out, max((out - 1) * stride + eff - size, 0) // 2
    return (size - eff + stride) // stride, 0


def ref_dilation(x, w, strides, rates, padding):
    """(output, [(b, y, x, c, input row, input col, tap i, tap j) of each first maximum])."""
    n, h, wd, c = x.shape
    kh, kw, _ = w.shape
    oh, top = _geometry(h, kh, strides[0], rates[0], padding)
    ow, left = _geometry(wd, kw, strides[1], rates[1], padding)
    lowest = np.finfo(x.dtype).min if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    out = np.zeros((n, oh, ow, c), x.dtype)
    routes = []
    for b, i, j, ch in np.ndindex(n, oh, ow, c):
        r0, c0 = i * strides[0] - top, j * strides[1] - left
        best, where = lowest, (max(r0, 0), max(c0, 0), 0, 0)
        for ti in range(kh):
            for tj in range(kw):
                r, col = r0 + ti * rates[0], c0 + tj * rates[1]
                if 0 <= r < h and 0 <= col < wd and x[b, r, col, ch] + w[ti, tj, ch] > best:
                    best, where = x[b, r, col, ch] + w[ti, tj, ch], (r, col, ti, tj)
        out[b, i, j, ch] = best
        routes.append((b, i, j, ch, *where))
    return out, routes


def ref_backprop(x, w, dy, strides, rates, padding, wrt):
    _, routes = ref_dilation(x, w, strides, rates, padding)
    grad = np.zeros(x.shape if wrt == "input" else w.shape, dy.dtype)
    for b, i, j, ch, r, col, ti, tj in routes:
        if wrt == "input":
            grad[b, r, col, ch] += dy[b, i, j, ch]
        else:
            grad[ti, tj, ch] += dy[b, i, j, ch]
    return grad


# (label, input shape, filter shape, strides, rates, padding)
GEOMETRIES = [
    ("same", (2, 5, 6, 3), (2, 3, 3), (1, 1), (1, 1), "SAME"),
    ("valid_strided_dilated", (1, 6, 7, 2), (2, 2, 2), (2, 1), (1, 2), "VALID"),
    ("same_strided_dilated", (2, 5, 5, 2), (3, 2, 2), (2, 3), (2, 2), "SAME"),
    ("valid_filter_past_input", (1, 2, 5, 2), (3, 2, 2), (2, 1), (1, 1), "VALID"),
]


def _rows(label, x_shape, w_shape, strides, rates, padding):
    attrs = {"strides": [1, *strides, 1], "rates": [1, *rates, 1], "padding": padding}
    geo = (strides, rates, padding)
    y_shape = ref_dilation(np.zeros(x_shape), np.zeros(w_shape), *geo)[0].shape
    rows = [OpCase(f"dilation2d_{label}", lambda x, w, a=attrs: tf.nn.dilation2d(x, w, **a),
                   lambda x, w, g=geo: ref_dilation(x, w, *g)[0],
                   [_randn(*x_shape), _randn(*w_shape)], F32_64)]
    for wrt, op_def in (("input", nn_morphology_ops.Dilation2DBackpropInput),
                        ("filter", nn_morphology_ops.Dilation2DBackpropFilter)):
        rows.append(OpCase(
            f"dilation2d_backprop_{wrt}_{label}",
            lambda x, w, dy, a=attrs, o=op_def: apply_op(o, [x, w, dy], a),
            lambda x, w, dy, g=geo, t=wrt: ref_backprop(x, w, dy, *g, t),
            [_randn(*x_shape), _randn(*w_shape), _randn(*y_shape)], F32_64, grad=False))
    return rows


def _erosion_ref(x, w, strides, rates, padding):
    return -ref_dilation(-x, w[::-1, ::-1], strides, rates, padding)[0]


CASES = [row for g in GEOMETRIES for row in _rows(*g)] + [
    OpCase("dilation2d_ints",
           lambda x, w: tf.nn.dilation2d(x, w, [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
           lambda x, w: ref_dilation(x, w, (1, 1), (1, 1), "SAME")[0],
           [lambda rng, dt: rng.randint(0, 50, (2, 4, 4, 2)).astype(dt),
            lambda rng, dt: rng.randint(0, 5, (2, 2, 2)).astype(dt)],
           (tf.int32, tf.int64, tf.uint8, tf.int16), grad=False),
    OpCase("dilation2d_minus_infinity",
           lambda x, w: tf.nn.dilation2d(x, w, [1, 1, 1, 1], [1, 2, 2, 1], "SAME"),
           lambda x, w: ref_dilation(x, w, (1, 1), (2, 2), "SAME")[0],
           [np.full((1, 3, 4, 1), -np.inf), np.zeros((2, 2, 1))], F32_64, grad=False),
    OpCase("dilation2d_backprop_input_ties",
           lambda x, w, dy: apply_op(nn_morphology_ops.Dilation2DBackpropInput, [x, w, dy],
                                     {"strides": [1] * 4, "rates": [1] * 4, "padding": "SAME"}),
           lambda x, w, dy: ref_backprop(x, w, dy, (1, 1), (1, 1), "SAME", "input"),
           [np.zeros((1, 3, 3, 2)), np.zeros((2, 2, 2)), _randn(1, 3, 3, 2)], F32_64,
           grad=False),
    OpCase("dilation2d_empty_batch",
           lambda x, w: tf.nn.dilation2d(x, w, [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
           lambda x, w: ref_dilation(x, w, (1, 1), (1, 1), "SAME")[0],
           [np.zeros((0, 3, 3, 2)), _randn(2, 2, 2)], F32_64),
    OpCase("erosion2d",
           lambda x, w: tf.nn.erosion2d(x, w, [1, 2, 1, 1], [1, 1, 2, 1], "SAME"),
           lambda x, w: _erosion_ref(x, w, (2, 1), (1, 2), "SAME"),
           [_randn(2, 5, 6, 3), _randn(2, 3, 3)], F32_64),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def test_names_and_gradient_ops_as_tf():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2, 5, 6, 3])
        w = tf.placeholder(tf.float64, [2, 3, 3])
        y = tf.nn.dilation2d(x, filters=w, strides=[1, 2, 1, 1], dilations=[1, 1, 2, 1],
                             padding="VALID")
        assert y.name == "Dilation2D:0" and y.shape.as_list() == [2, 2, 2, 3]
        dx, dw = tf.gradients(y, [x, w])
        assert dx.name == "gradients/Dilation2D_grad/Dilation2DBackpropInput:0"
        assert dw.name == "gradients/Dilation2D_grad/Dilation2DBackpropFilter:0"
        assert dx.shape.as_list() == [2, 5, 6, 3] and dw.shape.as_list() == [2, 3, 3]
        e = tf.nn.erosion2d(x, w, [1, 1, 1, 1], [1, 1, 1, 1], "SAME")
        assert e.name == "erosion2d/Neg_1:0" and e.op.inputs[0].name == "erosion2d:0"
        # TensorFlow registers no gradient for the backprop ops.
        with pytest.raises(LookupError, match="No gradient defined for operation"):
            tf.gradients(dx, x)


@pytest.mark.parametrize("build,message", [
    (lambda x, w: tf.nn.dilation2d(x, w, [1, 1, 1], [1, 1, 1, 1], "SAME"),
     "Attr 'strides' of 'Dilation2D' Op passed list of length 3 less than minimum 4."),
    (lambda x, w: tf.nn.dilation2d(x, w, [1, 1, 1, 1], [1, 1, 1], "SAME"),
     "Attr 'rates' of 'Dilation2D' Op passed list of length 3 less than minimum 4."),
    (lambda x, w: tf.nn.dilation2d(x, w[..., :2], [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
     "Dimensions must be equal, but are 3 and 2"),
    (lambda x, w: tf.nn.dilation2d(x[0], w, [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
     "Shape must be rank 4 but is rank 3"),
    (lambda x, w: tf.nn.dilation2d(x, w[0], [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
     "Shape must be rank 3 but is rank 2"),
    (lambda x, w: tf.nn.dilation2d(x, w, [1, 1, 1, 1], [1, 1, 1, 1], "EXPLICIT"),
     "Attr 'padding' of 'Dilation2D' Op passed string 'EXPLICIT' not in"),
    (lambda x, w: tf.nn.dilation2d(x[:, :1], tf.zeros([3, 3, 3]), [1, 1, 1, 1], [1] * 4,
                                   "VALID"),
     "Negative dimension size caused by subtracting 3 from 1"),
    (lambda x, w: tf.nn.dilation2d(x, w, [1, 1, 1, 1], padding="SAME", dilations=[1] * 4,
                                   rates=[1] * 4),
     "Cannot specify both 'dilations' and 'rates'"),
])
def test_build_errors(build, message):
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as info:
            build(tf.zeros([2, 5, 6, 3]), tf.zeros([2, 3, 3]))
    assert message in str(info.value)


def _fed(shape):
    return tf.placeholder_with_default(np.zeros(shape, np.float32), None)


@pytest.mark.parametrize("build,exc,message", [
    (lambda: tf.nn.dilation2d(_fed((2, 5, 6, 3)), _fed((2, 3, 2)), [1] * 4, [1] * 4, "SAME"),
     errors.InvalidArgumentError, "input and filter must have the same depth: 3 vs 2"),
    (lambda: tf.nn.dilation2d(_fed((2, 5, 6, 3)), _fed((2, 3, 3)), [2, 1, 1, 1], [1] * 4,
                              "SAME"),
     errors.UnimplementedError, "Stride is only supported across spatial dimensions."),
    (lambda: tf.nn.dilation2d(_fed((2, 5, 6, 3)), _fed((2, 3, 3)), [1] * 4, [1, 1, 1, 2],
                              "SAME"),
     errors.UnimplementedError, "Rate is only supported across spatial dimensions."),
    (lambda: apply_op(nn_morphology_ops.Dilation2DBackpropInput,
                      [_fed((2, 5, 6, 3)), _fed((2, 3, 3)), _fed((2, 5, 5, 3))],
                      {"strides": [1] * 4, "rates": [1] * 4, "padding": "SAME"}),
     errors.InvalidArgumentError, "out_backprop has incompatible size."),
    (lambda: apply_op(nn_morphology_ops.Dilation2DBackpropFilter,
                      [_fed((2, 5, 6, 3)), _fed((2, 3, 3)), _fed((2, 5, 5, 3))],
                      {"strides": [1] * 4, "rates": [1] * 4, "padding": "SAME"}),
     errors.InvalidArgumentError, "out_backprop has incompatible size."),
])
def test_run_errors(build, exc, message):
    check_run_error(build, exc, message)
