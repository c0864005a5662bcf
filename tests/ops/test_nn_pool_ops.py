"""Pooling: MaxPool / AvgPool (2-D, 3-D, and the 1-D composites) and their gradient ops against
NumPy loops for every padding / stride / data_format combination; gradients numerically
(including MaxPoolGrad / MaxPoolGradGrad / AvgPoolGrad, so second derivatives are covered);
TensorFlow's tie rule, names, static shapes and errors."""
import itertools

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import nn_pool_ops
from tensorweave.testing.op_case import (
    OpCase,
    case_tests,
)

F32_64 = (tf.float32, tf.float64)


def _randn(*shape):
    """Distinct values (no ties), so maxima are unique and gradients smooth."""
    def make(rng, dt):
        return rng.permutation(np.arange(np.prod(shape))).reshape(shape).astype(dt) * 0.25 - 3
    return make


# --- NumPy reference: loops over output positions and in-bounds window elements ---------------
def _window(size, k, stride, padding):
    if padding == "SAME":
        out = (size + stride - 1) // stride
        return out, max((out - 1) * stride + k - size, 0) // 2
    before, after = (0, 0) if padding == "VALID" else padding
    return (size + before + after - k) // stride + 1, before


def _windows(shape, ksize, strides, padding):
    """For each output index (spatial tuple), the in-bounds input indices in scan order."""
    pads = padding if isinstance(padding, list) else [padding] * len(shape)
    geo = [_window(s, k, st, p) for s, k, st, p in zip(shape, ksize, strides, pads)]
    result = {}
    for out_idx in itertools.product(*(range(o) for o, _ in geo)):
        members = []
        for offs in itertools.product(*(range(k) for k in ksize)):
            idx = tuple(o * st + a - before for o, st, a, (_, before)
                        in zip(out_idx, strides, offs, geo))
            if all(0 <= i < s for i, s in zip(idx, shape)):
                members.append(idx)
        result[out_idx] = members
    return tuple(o for o, _ in geo), result


def _channels_last(x, fmt):
    return np.moveaxis(x, 1, -1) if fmt.startswith("NC") else x


def _channels_back(x, fmt):
    return np.moveaxis(x, -1, 1) if fmt.startswith("NC") else x


def ref_pool(x, ksize, strides, padding, fmt, kind):
    xl = _channels_last(x, fmt)
    out_sp, windows = _windows(xl.shape[1:-1], ksize, strides, padding)
    out = np.zeros((xl.shape[0], *out_sp, xl.shape[-1]), np.float64)
    for o, members in windows.items():
        vals = np.stack([xl[(slice(None), *m)] for m in members])
        out[(slice(None), *o)] = vals.max(0) if kind == "max" else vals.mean(0)
    return _channels_back(out, fmt).astype(x.dtype)


def ref_max_pool_grad(x, dy, ksize, strides, padding, fmt):
    """Each window's gradient to its first maximum in scan order (TF's rule)."""
    xl, dyl = _channels_last(x, fmt), _channels_last(dy, fmt)
    _, windows = _windows(xl.shape[1:-1], ksize, strides, padding)
    dx = np.zeros(xl.shape, np.float64)
    for o, members in windows.items():
        for b in range(xl.shape[0]):
            for c in range(xl.shape[-1]):
                vals = [xl[(b, *m, c)] for m in members]
                first = members[int(np.argmax(vals))]
                dx[(b, *first, c)] += dyl[(b, *o, c)]
    return _channels_back(dx, fmt).astype(dy.dtype)


def ref_max_pool_grad_grad(x, g, ksize, strides, padding, fmt):
    xl, gl = _channels_last(x, fmt), _channels_last(g, fmt)
    out_sp, windows = _windows(xl.shape[1:-1], ksize, strides, padding)
    out = np.zeros((xl.shape[0], *out_sp, xl.shape[-1]))
    for o, members in windows.items():
        for b in range(xl.shape[0]):
            for c in range(xl.shape[-1]):
                vals = [xl[(b, *m, c)] for m in members]
                out[(b, *o, c)] = gl[(b, *members[int(np.argmax(vals))], c)]
    return _channels_back(out, fmt).astype(g.dtype)


def ref_avg_pool_grad(in_shape, dy, ksize, strides, padding, fmt):
    shape_l = tuple(np.moveaxis(np.empty(in_shape), 1, -1).shape) if fmt.startswith("NC") \
        else tuple(in_shape)
    dyl = _channels_last(dy, fmt)
    _, windows = _windows(shape_l[1:-1], ksize, strides, padding)
    dx = np.zeros(shape_l)
    for o, members in windows.items():
        for m in members:
            dx[(slice(None), *m)] += dyl[(slice(None), *o)] / len(members)
    return _channels_back(dx, fmt).astype(dy.dtype)


# --- the table ----------------------------------------------------------------------------------
def _full(values, fmt):
    return [1, *values, 1] if not fmt.startswith("NC") else [1, 1, *values]


def _layout(shape_nhwc, fmt):
    return shape_nhwc if not fmt.startswith("NC") else (shape_nhwc[0], shape_nhwc[-1],
                                                         *shape_nhwc[1:-1])


# (label, NHWC input shape, ksize, strides, padding)
GEOMETRIES_2D = [
    ("2x2_stride2_valid", (2, 6, 5, 3), (2, 2), (2, 2), "VALID"),
    ("3x3_stride2_same", (2, 5, 6, 2), (3, 3), (2, 2), "SAME"),
    ("2x3_stride1_same", (1, 4, 5, 2), (2, 3), (1, 1), "SAME"),
    ("3x2_stride_2x1_valid", (2, 7, 4, 2), (3, 2), (2, 1), "VALID"),
    ("2x2_stride2_same_odd", (1, 5, 5, 2), (2, 2), (2, 2), "SAME"),
]
GEOMETRIES_3D = [
    ("2x2x2_stride2_valid", (2, 4, 4, 5, 2), (2, 2, 2), (2, 2, 2), "VALID"),
    ("3x2x2_stride1_same", (1, 4, 3, 4, 2), (3, 2, 2), (1, 2, 1), "SAME"),
]


def _rows(label, shape, ksize, strides, padding, fmt, n):
    ops = nn_pool_ops.POOL_OPS[n]
    x_shape = _layout(shape, fmt)
    attrs = {"ksize": _full(ksize, fmt), "strides": _full(strides, fmt), "padding": padding,
             "data_format": fmt}
    geo = (ksize, strides, padding, fmt)
    y_shape = ref_pool(np.zeros(x_shape), *geo, "max").shape
    max_wrapper, avg_wrapper = (tf.nn.max_pool, tf.nn.avg_pool) if n == 2 else \
        (tf.nn.max_pool3d, tf.nn.avg_pool3d)
    name = f"{label}_{fmt}"
    # Numerical gradient checks for the channels-last layout and one channels-first geometry
    # (the kernels index the same slices in both), to keep the file fast.
    grad = not fmt.startswith("NC") or label == "3x3_stride2_same"
    return [
        OpCase(f"max_pool_{name}", lambda x, a=attrs, f=max_wrapper: f(x, **a),
               lambda x, g=geo: ref_pool(x, *g, "max"), [_randn(*x_shape)], F32_64, grad=grad),
        OpCase(f"avg_pool_{name}", lambda x, a=attrs, f=avg_wrapper: f(x, **a),
               lambda x, g=geo: ref_pool(x, *g, "avg"), [_randn(*x_shape)], F32_64, grad=grad),
        OpCase(f"max_pool_grad_{name}",
               lambda x, y, dy, a=attrs, o=ops: apply_op(o["MaxPoolGrad"], [x, y, dy], a),
               lambda x, y, dy, g=geo: ref_max_pool_grad(x, dy, *g),
               [_randn(*x_shape), lambda rng, dt, g=geo, s=x_shape: ref_pool(
                   _randn(*s)(np.random.RandomState(0), dt), *g, "max"), _randn(*y_shape)],
               F32_64, grad=grad),
        OpCase(f"max_pool_grad_grad_{name}",
               lambda x, y, gg, a=attrs, o=ops: apply_op(o["MaxPoolGradGrad"], [x, y, gg], a),
               lambda x, y, gg, g=geo: ref_max_pool_grad_grad(x, gg, *g),
               [_randn(*x_shape), lambda rng, dt, g=geo, s=x_shape: ref_pool(
                   _randn(*s)(np.random.RandomState(0), dt), *g, "max"), _randn(*x_shape)],
               F32_64, grad=grad),
        OpCase(f"avg_pool_grad_{name}",
               lambda dy, a=attrs, o=ops, s=x_shape: apply_op(o["AvgPoolGrad"], [list(s), dy],
                                                              a),
               lambda dy, g=geo, s=x_shape: ref_avg_pool_grad(s, dy, *g),
               [_randn(*y_shape)], F32_64, grad=grad),
    ]


CASES = [row for label, shape, k, s, p in GEOMETRIES_2D for fmt in ("NHWC", "NCHW")
         for row in _rows(label, shape, k, s, p, fmt, 2)] + \
    [row for label, shape, k, s, p in GEOMETRIES_3D for fmt in ("NDHWC", "NCDHW")
     for row in _rows(label, shape, k, s, p, fmt, 3)] + [
    OpCase("max_pool_explicit_padding",
           lambda x: tf.nn.max_pool(x, 3, 2, [[0, 0], [1, 2], [2, 0], [0, 0]]),
           lambda x: ref_pool(x, (3, 3), (2, 2), [(1, 2), (2, 0)], "NHWC", "max"),
           [_randn(2, 5, 6, 2)], F32_64),
    OpCase("max_pool_grad_explicit_padding",
           lambda x, dy: tf.gradients(tf.nn.max_pool(x, 2, 1, [[0, 0], [1, 1], [0, 1], [0, 0]]),
                                      x, dy)[0],
           lambda x, dy: ref_max_pool_grad(x, dy, (2, 2), (1, 1), [(1, 1), (0, 1)], "NHWC"),
           [_randn(1, 4, 4, 2), _randn(1, 5, 4, 2)], F32_64, grad=False),
    OpCase("max_pool_ints", lambda x: tf.nn.max_pool(x, 2, 2, "SAME"),
           lambda x: ref_pool(x, (2, 2), (2, 2), "SAME", "NHWC", "max"),
           [lambda rng, dt: rng.randint(0, 100, (2, 5, 5, 3)).astype(dt)],
           (tf.int32, tf.int64, tf.uint8, tf.int8), grad=False),
    OpCase("max_pool_float16", lambda x: tf.nn.max_pool(x, 3, 2, "SAME"),
           lambda x: ref_pool(x, (3, 3), (2, 2), "SAME", "NHWC", "max"),
           [_randn(1, 5, 5, 2)], (tf.float16,)),
    OpCase("avg_pool_float16", lambda x: tf.nn.avg_pool(x, 3, 2, "SAME"),
           lambda x: ref_pool(x, (3, 3), (2, 2), "SAME", "NHWC", "avg"),
           [_randn(1, 5, 5, 2)], (tf.float16,), rtol=1e-3, atol=1e-3),
    OpCase("max_pool2d", lambda x: tf.nn.max_pool2d(x, [2, 2], [1, 1], "VALID"),
           lambda x: ref_pool(x, (2, 2), (1, 1), "VALID", "NHWC", "max"), [_randn(2, 4, 4, 2)]),
    OpCase("avg_pool2d_nchw", lambda x: tf.nn.avg_pool2d(x, 2, 2, "SAME", "NCHW"),
           lambda x: ref_pool(x, (2, 2), (2, 2), "SAME", "NCHW", "avg"), [_randn(2, 3, 5, 5)]),
    OpCase("max_pool1d_nwc", lambda x: tf.nn.max_pool1d(x, 3, 2, "SAME"),
           lambda x: ref_pool(x[:, None], (1, 3), (1, 2), "SAME", "NHWC", "max")[:, 0],
           [_randn(2, 7, 3)], F32_64),
    OpCase("avg_pool1d_ncw", lambda x: tf.nn.avg_pool1d(x, 2, 2, "VALID", "NCW"),
           lambda x: ref_pool(x[:, :, None], (1, 2), (1, 2), "VALID", "NCHW", "avg")[:, :, 0],
           [_randn(2, 3, 7)], F32_64),
    OpCase("max_pool_empty_batch", lambda x: tf.nn.max_pool(x, 2, 2, "SAME"),
           lambda x: np.zeros((0, 2, 2, 3), x.dtype), [np.zeros((0, 4, 4, 3))], grad=False),
]


test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


# --- TensorFlow's semantics beyond the references ------------------------------------------------
TIES = np.array([[1, 1, 0, 2], [1, 1, 2, 2], [0, 0, 3, 3], [0, 0, 3, 3]],
                np.float32).reshape(1, 4, 4, 1)


@pytest.mark.parametrize("ksize,strides,padding,expected", [
    (2, 2, "VALID", [[1, 0, 0, 1], [0, 0, 0, 0], [1, 0, 1, 0], [0, 0, 0, 0]]),
    (3, 1, "SAME", [[2, 0, 0, 2], [1, 0, 1, 0], [1, 0, 9, 0], [0, 0, 0, 0]]),
    (2, 1, "VALID", [[1, 0, 0, 1], [1, 0, 1, 0], [1, 0, 4, 0], [0, 0, 0, 0]]),
])
def test_max_pool_gradient_goes_to_the_first_maximum_of_each_window(ksize, strides, padding,
                                                                     expected):
    """Values TensorFlow 2.21 gives for windows full of ties (overlapping or not)."""
    with tf.Graph().as_default():
        x = tf.constant(TIES)
        (grad,) = tf.gradients(tf.nn.max_pool(x, ksize, strides, padding), [x])
        assert grad.op.type == "MaxPoolGrad"
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(grad)[0, :, :, 0], expected)


def test_avg_pool_same_padding_does_not_count_padding():
    with tf.Graph().as_default():
        y = tf.nn.avg_pool(tf.ones([1, 3, 3, 1]), 2, 2, "SAME")
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y)[0, :, :, 0], np.ones((2, 2)))


def test_default_op_names_and_attrs_like_tensorflow():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 8, 8, 3])
        x1 = tf.placeholder(tf.float32, [2, 10, 3])
        x3 = tf.placeholder(tf.float32, [2, 4, 4, 4, 3])
        y = tf.nn.max_pool(x, 2, 2, "VALID")
        assert y.name == "MaxPool:0" and y.op.get_attr("ksize") == [1, 2, 2, 1]
        assert tf.nn.avg_pool(x, [2, 2], [1, 1], "SAME").name == "AvgPool:0"
        assert tf.nn.max_pool2d(x, 2, 2, "SAME").name == "MaxPool2d:0"
        assert tf.nn.avg_pool2d(x, 2, 2, "SAME").name == "AvgPool2D:0"
        m1 = tf.nn.max_pool1d(x1, 2, 2, "VALID")
        assert m1.name == "MaxPool1d/Squeeze:0" and m1.shape.as_list() == [2, 5, 3]
        assert m1.op.inputs[0].op.type == "MaxPool"
        assert tf.nn.avg_pool1d(x1, 2, 2, "VALID").name == "AvgPool1D/Squeeze:0"
        assert tf.nn.max_pool3d(x3, 2, 2, "SAME").name == "MaxPool3D:0"
        assert tf.nn.avg_pool3d(x3, 2, 2, "SAME").shape.as_list() == [2, 2, 2, 2, 3]
        nchw = tf.nn.avg_pool(tf.placeholder(tf.float32, [2, 3, 8, 8]), 2, 2, "SAME",
                              data_format="NCHW")
        assert nchw.op.get_attr("strides") == [1, 1, 2, 2]
        explicit = tf.nn.max_pool(x, 2, 1, [[0, 0], [1, 1], [1, 1], [0, 0]])
        assert explicit.op.get_attr("padding") == b"EXPLICIT"
        assert explicit.shape.as_list() == [2, 9, 9, 3]
        dy = tf.gradients(tf.nn.avg_pool(x, 2, 2, "SAME"), x)[0]
        assert dy.op.type == "AvgPoolGrad" and dy.shape.as_list() == [2, 8, 8, 3]


def test_static_shapes_with_unknown_dims():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, None, 9, 3])
        assert tf.nn.max_pool(x, 3, 2, "SAME").shape.as_list() == [None, None, 5, 3]
        assert tf.nn.avg_pool(tf.placeholder(tf.float32), 2, 2, "VALID").shape.as_list() == \
            [None] * 4
        grad = apply_op(nn_pool_ops.AvgPoolGrad, [tf.placeholder(tf.int32, [4]),
                                                  tf.placeholder(tf.float32, [2, 3, 3, 1])],
                        {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "SAME"})
        assert grad.shape.as_list() == [None] * 4


@pytest.mark.parametrize("build,match", [
    (lambda x: tf.nn.max_pool(x, 0, 2, "SAME"), "`ksize` cannot be zero"),
    (lambda x: tf.nn.max_pool(x, 9, 1, "VALID"),
     "Negative dimension size caused by subtracting 9 from 8"),
    (lambda x: tf.nn.avg_pool(x, 2, 2, "EXPLICIT"),
     "Attr 'padding' of 'AvgPool' Op passed string 'EXPLICIT' not in"),
    (lambda x: tf.nn.max_pool(x, 2, 2, "SAME", data_format="HWNC"),
     "Attr 'data_format' of 'MaxPool' Op passed string 'HWNC'"),
    (lambda x: tf.nn.max_pool(x[0], 2, 2, "SAME"), "Shape must be rank 4 but is rank 3"),
    (lambda x: tf.nn.max_pool3d(x, 2, 2, "SAME"), "Shape must be rank 5 but is rank 4"),
    (lambda x: tf.nn.max_pool(x, [1, 2, 2], 2, "SAME"), "ksize should be of length 1, 2 or 4"),
    (lambda x: tf.nn.max_pool1d(x[0], 2, 2, "SAME", data_format="NHWC"),
     "`data_format` must be 'NWC' or 'NCW'"),
])
def test_value_errors_at_graph_construction(build, match):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=match):
            build(tf.placeholder(tf.float32, [2, 8, 8, 3]))


def test_type_errors_at_graph_construction():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="DataType int32 not in list of allowed values"):
            tf.nn.avg_pool(tf.zeros([1, 4, 4, 1], tf.int32), 2, 2, "SAME")
        with pytest.raises(TypeError, match="DataType bool not in list of allowed values"):
            tf.nn.max_pool(tf.zeros([1, 4, 4, 1], tf.bool), 2, 2, "SAME")


def test_run_time_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        with tf.Session() as sess:
            with pytest.raises(errors.UnimplementedError, match="batch dimension"):
                sess.run(tf.nn.max_pool(x, [2, 1, 1, 1], 1, "VALID"), {x: np.ones((2, 3, 3, 1))})
            with pytest.raises(errors.InvalidArgumentError, match="Computed output size would "
                               "be negative|Negative dimension size"):
                sess.run(tf.nn.max_pool(x, 3, 1, "VALID"), {x: np.ones((1, 2, 2, 1))})
            with pytest.raises(errors.InvalidArgumentError, match="grad shape"):
                sess.run(apply_op(nn_pool_ops.AvgPoolGrad, [[1, 4, 4, 1], x],
                                  {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1],
                                   "padding": "SAME"}), {x: np.ones((1, 3, 3, 1))})


def test_second_derivative_of_max_pool_is_max_pool_grad_grad():
    with tf.Graph().as_default():
        x = tf.constant(np.arange(16.0).reshape(1, 4, 4, 1))
        y = tf.nn.max_pool(x, 2, 2, "VALID")
        g = tf.placeholder(tf.float64, [1, 2, 2, 1])
        (dx,) = tf.gradients(y, x, g)
        v = np.arange(16.0).reshape(1, 4, 4, 1) * 0.5
        (dg,) = tf.gradients(dx, g, v)
        assert dg.op.type == "MaxPoolGradGrad"
        with tf.Session() as sess:
            got = sess.run(dg, {g: np.ones((1, 2, 2, 1))})
        np.testing.assert_array_equal(got[0, :, :, 0], [[2.5, 3.5], [6.5, 7.5]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_2x2_loops_match_the_general_loops_bit_for_bit(dtype):
    """The vectorized 2x2 / 2 MaxPool and MaxPoolGrad (with and without the fused ReLU) give
    the general compiled loops' bits: ties, NaN, signed zeros, infinities, odd sizes."""
    from tensorweave.kernels import pool
    from tensorweave.kernels.jit import compiled
    general, tiled = compiled(pool._max_pool_nhwc), compiled(pool._max_pool_2x2_nhwc)
    grad_general = compiled(pool._max_pool_grad_nhwc)
    grad_tiled = compiled(pool._max_pool_grad_2x2_nhwc)
    rng = np.random.RandomState(0)
    for _ in range(40):
        n, h, w, c = rng.randint(1, 4), rng.randint(2, 9), rng.randint(2, 9), rng.randint(1, 40)
        x = rng.randint(-2, 3, (n, h, w, c)).astype(dtype)
        for special in (np.nan, -0.0, -np.inf, np.inf):
            x.flat[rng.randint(0, x.size, 3)] = special
        want, got = (np.empty((n, h // 2, w // 2, c), dtype) for _ in range(2))
        general(x, want, 2, 2, 2, 2, 0, 0)
        tiled(x, got)
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
        dy = rng.randn(n, h // 2, w // 2, c).astype(dtype)
        dy.flat[0] = np.inf
        for relu in (False, True):
            want, got = np.zeros_like(x), np.zeros_like(x)
            grad_general(x, dy, want, 2, 2, 2, 2, 0, 0, relu)
            grad_tiled(x, dy, got, relu)
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
