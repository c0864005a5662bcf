"""Conv3D, Conv3DBackpropInputV2, Conv3DBackpropFilterV2 and the transposed-convolution wrappers
(conv3d_transpose, conv1d_transpose, conv_transpose, atrous_conv2d_transpose) against NumPy
loops over output positions and filter taps; gradients numerically (the backprop ops too, so
second derivatives are covered); names, static shapes and errors as TensorFlow 2.21's."""
import itertools

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import nn_conv3d_ops
from tensorweave.testing.op_case import OpCase, case_tests

F32_64 = (tf.float32, tf.float64)


def _randn(*shape):
    return lambda rng, dt: rng.randn(*shape).astype(dt)


# --- NumPy references: loops over output positions and filter taps ----------------------------
def _geometry(in_sp, k_sp, strides, padding, dilations):
    """(output sizes, pads before) per spatial dimension, TF's SAME / VALID rule."""
    outs, befores = [], []
    for size, k, s, d in zip(in_sp, k_sp, strides, dilations):
        eff = (k - 1) * d + 1
        if padding == "SAME":
            out = -(-size // s)
            befores.append(max((out - 1) * s + eff - size, 0) // 2)
        else:
            out = (size - eff) // s + 1
            befores.append(0)
        outs.append(out)
    return outs, befores


def _taps(in_sp, k_sp, strides, padding, dilations):
    """(output sizes, [(output index, input index, filter tap)]) of every in-bounds tap."""
    outs, befores = _geometry(in_sp, k_sp, strides, padding, dilations)
    pairs = []
    for o in itertools.product(*(range(n) for n in outs)):
        for t in itertools.product(*(range(k) for k in k_sp)):
            i = tuple(oi * s + ti * d - b
                      for oi, ti, s, d, b in zip(o, t, strides, dilations, befores))
            if all(0 <= ii < n for ii, n in zip(i, in_sp)):
                pairs.append((o, i, t))
    return outs, pairs


def _last(x, cf):
    return np.moveaxis(x, 1, -1) if cf else x


def _first(x, cf):
    return np.moveaxis(x, -1, 1) if cf else x


def ref_conv(x, w, strides, padding, dilations=(1, 1, 1), cf=False):
    xl = _last(x, cf).astype(np.float64)
    outs, pairs = _taps(xl.shape[1:-1], w.shape[:-2], strides, padding, dilations)
    out = np.zeros((xl.shape[0], *outs, w.shape[-1]))
    for o, i, t in pairs:
        out[(slice(None), *o)] += xl[(slice(None), *i)] @ w[t]
    return _first(out, cf).astype(x.dtype)


def ref_backprop_input(in_shape, w, dy, strides, padding, dilations=(1, 1, 1), cf=False):
    shape = (in_shape[0], *in_shape[2:], in_shape[1]) if cf else tuple(in_shape)
    dyl = _last(dy, cf).astype(np.float64)
    dx = np.zeros(shape)
    _, pairs = _taps(shape[1:-1], w.shape[:-2], strides, padding, dilations)
    for o, i, t in pairs:
        dx[(slice(None), *i)] += dyl[(slice(None), *o)] @ w[t].T
    return _first(dx, cf).astype(dy.dtype)


def ref_backprop_filter(x, filter_shape, dy, strides, padding, dilations=(1, 1, 1), cf=False):
    xl = _last(x, cf).astype(np.float64)
    dyl = _last(dy, cf).astype(np.float64)
    dw = np.zeros(filter_shape)
    _, pairs = _taps(xl.shape[1:-1], filter_shape[:-2], strides, padding, dilations)
    for o, i, t in pairs:
        dw[t] += xl[(slice(None), *i)].T @ dyl[(slice(None), *o)]
    return dw.astype(x.dtype)


# --- the table ----------------------------------------------------------------------------------
# (label, NDHWC input shape, filter [kd, kh, kw, in, out], strides, padding, dilations)
GEOMETRIES = [
    ("same", (2, 3, 4, 3, 2), (2, 3, 2, 2, 3), (1, 1, 1), "SAME", (1, 1, 1)),
    ("valid_strided", (1, 5, 4, 6, 2), (3, 2, 2, 2, 2), (2, 1, 3), "VALID", (1, 1, 1)),
    ("same_strided_even", (1, 4, 6, 5, 1), (2, 4, 3, 1, 2), (2, 3, 2), "SAME", (1, 1, 1)),
    ("dilated", (1, 5, 4, 5, 2), (2, 2, 2, 2, 2), (1, 1, 1), "SAME", (2, 1, 2)),
    ("pointwise", (2, 2, 3, 2, 3), (1, 1, 1, 3, 2), (1, 2, 1), "VALID", (1, 1, 1)),
]


def _full(values, cf):
    return [1, 1, *values] if cf else [1, *values, 1]


def _rows(label, shape, w_shape, strides, padding, dilations, cf):
    x_shape = (shape[0], shape[4], *shape[1:4]) if cf else shape
    attrs = {"strides": _full(strides, cf), "padding": padding,
             "data_format": "NCDHW" if cf else "NDHWC", "dilations": _full(dilations, cf)}
    geo = (strides, padding, dilations, cf)
    y_shape = ref_conv(np.zeros(x_shape), np.zeros(w_shape), *geo).shape
    name = f"{label}_{attrs['data_format']}"
    grad = not cf or label == "valid_strided"   # one channels-first geometry keeps it fast
    return [
        OpCase(f"conv3d_{name}", lambda x, w, a=attrs: tf.nn.conv3d(x, w, **a),
               lambda x, w, g=geo: ref_conv(x, w, *g), [_randn(*x_shape), _randn(*w_shape)],
               F32_64, grad=grad),
        OpCase(f"conv3d_backprop_input_{name}",
               lambda w, dy, a=attrs, s=x_shape: apply_op(
                   nn_conv3d_ops.Conv3DBackpropInputV2, [list(s), w, dy], a),
               lambda w, dy, g=geo, s=x_shape: ref_backprop_input(s, w, dy, *g),
               [_randn(*w_shape), _randn(*y_shape)], F32_64, grad=grad),
        OpCase(f"conv3d_backprop_filter_{name}",
               lambda x, dy, a=attrs, s=w_shape: tf.nn.conv3d_backprop_filter(
                   x, list(s), dy, **a),
               lambda x, dy, g=geo, s=w_shape: ref_backprop_filter(x, s, dy, *g),
               [_randn(*x_shape), _randn(*y_shape)], F32_64, grad=grad),
    ]


CASES = [row for g in GEOMETRIES for cf in (False, True) for row in _rows(*g, cf)] + [
    OpCase("conv3d_float16", lambda x, w: tf.nn.conv3d(x, w, [1] * 5, "SAME"),
           lambda x, w: ref_conv(x, w, (1, 1, 1), "SAME"),
           [_randn(1, 3, 3, 3, 2), _randn(2, 2, 2, 2, 2)], (tf.float16,), rtol=1e-2,
           atol=1e-2),
    OpCase("conv3d_empty_batch", lambda x, w: tf.nn.conv3d(x, w, [1, 2, 1, 1, 1], "SAME"),
           lambda x, w: ref_conv(x, w, (2, 1, 1), "SAME"),
           [np.zeros((0, 3, 4, 4, 2)), _randn(2, 2, 2, 2, 3)], F32_64),
    OpCase("conv3d_transpose",
           lambda v, w: tf.nn.conv3d_transpose(v, w, [2, 4, 5, 3, 3], [1, 2, 2, 2, 1]),
           lambda v, w: ref_backprop_input((2, 4, 5, 3, 3), w, v, (2, 2, 2), "SAME"),
           [_randn(2, 2, 3, 2, 4), _randn(2, 3, 2, 3, 4)], F32_64),
    OpCase("conv3d_transpose_int64_shape",
           lambda v, w: tf.nn.conv3d_transpose(
               v, w, tf.constant([1, 5, 3, 4, 2], tf.int64), 1, "VALID"),
           lambda v, w: ref_backprop_input((1, 5, 3, 4, 2), w, v, (1, 1, 1), "VALID"),
           [_randn(1, 4, 2, 3, 3), _randn(2, 2, 2, 2, 3)], F32_64),
    OpCase("conv_transpose_3d",
           lambda v, w: tf.nn.conv_transpose(v, w, [1, 4, 3, 4, 2], 2, "VALID"),
           lambda v, w: ref_backprop_input((1, 4, 3, 4, 2), w, v, (2, 2, 2), "VALID"),
           [_randn(1, 2, 1, 2, 3), _randn(2, 2, 2, 2, 3)], F32_64),
    OpCase("conv1d_transpose",
           lambda v, w: tf.nn.conv1d_transpose(v, w, [2, 7, 2], 2, "VALID"),
           lambda v, w: ref_backprop_input((2, 7, 2), w, v, (2,), "VALID", (1,)),
           [_randn(2, 3, 4), _randn(3, 2, 4)], F32_64),
    OpCase("conv1d_transpose_ncw",
           lambda v, w: tf.nn.conv_transpose(v, w, [2, 2, 6], [1, 1, 2], "SAME", "NCW"),
           lambda v, w: ref_backprop_input((2, 2, 6), w, v, (2,), "SAME", (1,), cf=True),
           [_randn(2, 4, 3), _randn(3, 2, 4)], F32_64),
    OpCase("conv_transpose_2d",
           lambda v, w: tf.nn.conv_transpose(v, w, [2, 6, 6, 2], 2, "SAME"),
           lambda v, w: ref_backprop_input((2, 6, 6, 2), w, v, (2, 2), "SAME", (1, 1)),
           [_randn(2, 3, 3, 4), _randn(3, 3, 2, 4)], F32_64),
    OpCase("atrous_conv2d_transpose_same",
           lambda v, w: tf.nn.atrous_conv2d_transpose(v, w, [2, 5, 6, 2], 2, "SAME"),
           lambda v, w: ref_backprop_input((2, 5, 6, 2), w, v, (1, 1), "SAME", (2, 2)),
           [_randn(2, 5, 6, 4), _randn(3, 2, 2, 4)], F32_64),
    OpCase("atrous_conv2d_transpose_valid",
           lambda v, w: tf.nn.atrous_conv2d_transpose(v, w, [2, 7, 6, 2], 3, "VALID"),
           lambda v, w: ref_backprop_input((2, 7, 6, 2), w, v, (1, 1), "VALID", (3, 3)),
           [_randn(2, 1, 3, 4), _randn(3, 2, 2, 4)], F32_64),
    OpCase("atrous_conv2d_transpose_rate1",
           lambda v, w: tf.nn.atrous_conv2d_transpose(v, w, [1, 4, 4, 2], 1, "SAME"),
           lambda v, w: ref_backprop_input((1, 4, 4, 2), w, v, (1, 1), "SAME", (1, 1)),
           [_randn(1, 4, 4, 3), _randn(2, 3, 2, 3)], F32_64),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


# --- graph construction: names, op types, static shapes ------------------------------------
def test_names_and_gradient_ops_as_tf():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 5, 6, 7, 3])
        w = tf.placeholder(tf.float32, [2, 3, 2, 3, 4])
        y = tf.nn.conv3d(x, w, [1, 1, 2, 1, 1], "SAME")
        assert y.name == "Conv3D:0" and y.shape.as_list() == [2, 5, 3, 7, 4]
        dx, dw = tf.gradients(y, [x, w])
        assert dx.name == "gradients/Conv3D_grad/Conv3DBackpropInputV2:0"
        assert dw.name == "gradients/Conv3D_grad/Conv3DBackpropFilterV2:0"
        assert dx.op.inputs[0].op.type == "ShapeN" and dx.op.get_attr("Tshape") == tf.int32
        assert dx.shape.as_list() == [2, 5, 6, 7, 3] and dw.shape.as_list() == [2, 3, 2, 3, 4]
        t = tf.nn.conv3d_transpose(y, w, [2, 5, 6, 7, 3], [1, 1, 2, 1, 1])
        assert t.name == "conv3d_transpose:0" and t.op.type == "Conv3DBackpropInputV2"
        f = tf.nn.conv3d_backprop_filter_v2(x, [2, 3, 2, 3, 4], y, [1, 1, 2, 1, 1], "SAME")
        assert f.name == "Conv3DBackpropFilterV2:0"
        assert tf.nn.conv3d(x, w, [1] * 5, "VALID").shape.as_list() == [2, 4, 4, 6, 4]
        v1 = tf.nn.conv1d_transpose(tf.zeros([2, 3, 4]), tf.zeros([3, 2, 4]), [2, 7, 2], 2,
                                    "VALID")
        assert v1.name == "conv1d_transpose/Squeeze:0"
        ct = tf.nn.conv_transpose(tf.zeros([2, 3, 4]), tf.zeros([3, 2, 4]), [2, 7, 2], 2,
                                  "VALID")
        assert ct.name == "conv_transpose/Squeeze:0"
        ct2 = tf.nn.conv_transpose(tf.zeros([2, 3, 3, 4]), tf.zeros([3, 3, 2, 4]),
                                   [2, 6, 6, 2], 2)
        assert ct2.name == "conv_transpose_1:0" and ct2.op.type == "Conv2DBackpropInput"
        nc = tf.nn.conv3d(tf.placeholder(tf.float32, [1, 3, 4, 5, 6]), w[:, :, :, :3],
                          [1, 1, 1, 1, 1], "VALID", data_format="NCDHW")
        assert nc.shape.as_list() == [1, 4, 3, 3, 5]


def test_second_derivative_through_the_backprop_ops():
    with tf.Graph().as_default():
        x = tf.constant(np.random.RandomState(0).randn(1, 3, 3, 3, 2))
        w = tf.constant(np.random.RandomState(1).randn(2, 2, 2, 2, 2))
        y = tf.nn.conv3d(x, w, [1] * 5, "SAME")
        dx = tf.gradients(tf.reduce_sum(y * y), x)[0]
        ddw = tf.gradients(tf.reduce_sum(dx), w)[0]
        assert {dx.op.type, ddw.op.type} <= {"Conv3DBackpropInputV2", "AddN", "AddV2",
                                             "Conv3DBackpropFilterV2"}
        with tf.Session() as sess:
            got = sess.run(ddw)
        # sum(dx) = sum(2 * bpi(y)) is quadratic in w: compare with central differences.
        wv = sess_free_w = np.random.RandomState(1).randn(2, 2, 2, 2, 2)
        xv = np.random.RandomState(0).randn(1, 3, 3, 3, 2)

        def objective(wa):
            yv = ref_conv(xv, wa, (1, 1, 1), "SAME")
            return np.sum(ref_backprop_input(xv.shape, wa, 2 * yv, (1, 1, 1), "SAME"))
        num = np.zeros_like(wv)
        for idx in np.ndindex(wv.shape):
            e = np.zeros_like(sess_free_w)
            e[idx] = 1e-5
            num[idx] = (objective(wv + e) - objective(wv - e)) / 2e-5
        np.testing.assert_allclose(got, num, rtol=1e-5, atol=1e-6)


# --- errors -------------------------------------------------------------------------------------
@pytest.mark.parametrize("build,exc,message", [
    (lambda: tf.nn.conv3d(tf.zeros([1, 3, 4, 4]), tf.zeros([2, 2, 2, 2, 3]), [1] * 5, "SAME"),
     ValueError, "Shape must be rank 5 but is rank 4"),
    (lambda: tf.nn.conv3d(tf.zeros([1, 3, 4, 4, 2]), tf.zeros([2, 2, 2, 3, 3]), [1] * 5,
                          "SAME"),
     ValueError, "Depth of input (2) is not a multiple of input depth of filter (3)"),
    (lambda: tf.nn.conv3d(tf.zeros([1, 3, 4, 4, 2]), tf.zeros([2, 2, 2, 1, 3]), [1] * 5,
                          "SAME"),
     ValueError, "Depth of output (3) is not a multiple of the number of groups (2)"),
    (lambda: tf.nn.conv3d(tf.zeros([1, 3, 4, 4, 0]), tf.zeros([2, 2, 2, 0, 3]), [1] * 5,
                          "SAME"),
     ValueError, "Depth of filter must not be 0"),
    (lambda: tf.nn.conv3d(tf.zeros([1, 1, 4, 4, 2]), tf.zeros([2, 2, 2, 2, 3]), [1] * 5,
                          "VALID"),
     ValueError, "Negative dimension size caused by subtracting 2 from 1"),
    (lambda: tf.nn.conv3d(tf.zeros([1, 3, 4, 4, 2]), tf.zeros([2, 2, 2, 2, 3]), [1] * 5,
                          "EXPLICIT"),
     ValueError, "Attr 'padding' of 'Conv3D' Op passed string 'EXPLICIT' not in"),
    (lambda: tf.nn.conv3d(tf.zeros([1, 3, 4, 4, 2]), tf.zeros([2, 2, 2, 2, 3]), [1] * 4,
                          "SAME"),
     ValueError, "Attr 'strides' of 'Conv3D' Op passed list of length 4 less than minimum 5"),
    (lambda: tf.nn.conv3d(tf.zeros([1, 3, 4, 4, 2], tf.int32),
                          tf.zeros([2, 2, 2, 2, 3], tf.int32), [1] * 5, "SAME"),
     TypeError, "DataType int32 not in list of allowed values"),
    (lambda: tf.nn.conv3d_transpose(tf.placeholder(tf.float32), tf.zeros([2, 2, 2, 2, 3]),
                                    [1, 3, 4, 4, 2, 1], 1),
     ValueError, "Shape must be rank 5 but is rank 6"),
    (lambda: tf.nn.conv_transpose(tf.zeros([1, 2]), tf.zeros([1, 2]), [1, 2], 1),
     ValueError, "`output_shape` must be of length 3, 4 or 5"),
    (lambda: tf.nn.conv1d_transpose(tf.zeros([1, 2, 2]), tf.zeros([1, 2, 2]), [1, 2, 2], 1,
                                    data_format="NHWC"),
     ValueError, "`data_format` must be 'NWC' or 'NCW'"),
    (lambda: tf.nn.atrous_conv2d_transpose(tf.zeros([1, 4, 4, 3]), tf.zeros([2, 2, 2, 3]),
                                           [1, 4, 4, 2], 0, "SAME"),
     ValueError, "`rate` cannot be less than one"),
    (lambda: tf.nn.atrous_conv2d_transpose(tf.zeros([1, 4, 4, 3]), tf.zeros([2, 2, 2, 5]),
                                           [1, 4, 4, 2], 2, "SAME"),
     ValueError, "`value` channel count must be compatible with `filters` input channel"),
    (lambda: tf.nn.atrous_conv2d_transpose(tf.zeros([1, 4, 4, 3]), tf.zeros([2, 2, 2, 3]),
                                           [1, 4, 4, 2], 2, "FULL"),
     ValueError, "`padding` must be either 'VALID' or 'SAME'"),
])
def test_build_errors(build, exc, message):
    with tf.Graph().as_default():
        with pytest.raises(exc, match=message.replace("(", r"\(").replace(")", r"\)")
                           .replace("[", r"\[")):
            build()


def _fed(value):
    return tf.placeholder_with_default(np.asarray(value, np.float32), None)


@pytest.mark.parametrize("build,exc,message", [
    (lambda: tf.nn.conv3d(_fed(np.zeros((1, 3, 4, 4, 2))), _fed(np.zeros((2, 2, 2, 3, 3))),
                          [1] * 5, "SAME"),
     errors.InvalidArgumentError, "Input depth must be evenly divisible by filter depth: 2 vs 3"),
    (lambda: tf.nn.conv3d(_fed(np.zeros((1, 3, 4, 4, 2))), _fed(np.zeros((2, 2, 2, 1, 3))),
                          [1] * 5, "SAME"),
     errors.InvalidArgumentError,
     "Number of channels in filter (1) must match last dimension of input (2)"),
    (lambda: tf.nn.conv3d(_fed(np.zeros((1, 3, 4, 4, 2))), _fed(np.zeros((2, 2, 2, 2, 3))),
                          [2, 1, 1, 1, 1], "SAME"),
     errors.UnimplementedError, "does not yet support strides in the batch and depth"),
    (lambda: tf.nn.conv3d_transpose(_fed(np.zeros((1, 3, 4, 4, 3))), np.zeros((2, 2, 2, 2, 3)),
                                    [1, 3, 4, 5, 2], [1] * 5),
     errors.InvalidArgumentError,
     "Conv3DBackpropInputOp: Size of out_backprop doesn't match computed: actual = 4, "
     "computed = 5 spatial_dim: 3 input: 5 filter: 2 output: 4 stride: 1 dilation: 1"),
    (lambda: tf.nn.conv3d_transpose(_fed(np.zeros((1, 3, 4, 4, 4))), np.zeros((2, 2, 2, 2, 3)),
                                    [1, 3, 4, 4, 2], [1] * 5),
     errors.InvalidArgumentError, "out_backprop and filter_sizes must have the same number of "
     "channels. Got 4 for out_backprop and 3 for filter_sizes"),
    (lambda: tf.nn.conv3d_backprop_filter(_fed(np.zeros((1, 3, 4, 4, 2))), [2, 2, 2, 2, 3],
                                          np.zeros((1, 3, 4, 5, 3), np.float32), [1] * 5,
                                          "SAME"),
     errors.InvalidArgumentError,
     "Conv3DBackpropFilterOp: Size of out_backprop doesn't match computed: actual = 5, "
     "computed = 4 spatial_dim: 3 input: 4 filter: 2 output: 5 stride: 1 dilation: 1"),
    (lambda: tf.nn.conv3d_backprop_filter(_fed(np.zeros((1, 3, 4, 4, 2))),
                                          tf.placeholder_with_default([2, 2, 2, 2], None),
                                          np.zeros((1, 3, 4, 4, 3), np.float32), [1] * 5,
                                          "SAME"),
     errors.InvalidArgumentError, "filter_sizes must be a 1-D tensor of 5 elements"),
])
def test_run_errors(build, exc, message):
    check_run_error(build, exc, message)


def check_run_error(build, exc, message: str) -> None:
    """Running what `build` makes in a fresh graph raises `exc` with `message` in it (shared
    by the other window-op test files)."""
    with tf.Graph().as_default():
        y = build()
        with tf.Session() as sess:
            with pytest.raises(exc) as info:
                sess.run(y)
    assert message in str(info.value)
