"""Convolutions: Conv2D, DepthwiseConv2dNative, their backprop ops and the TF1 wrappers, against
straightforward NumPy loops for every padding / stride / dilation / data_format combination;
gradients numerically (including the backprop ops, so second derivatives are covered); names,
static shapes and errors like TensorFlow's."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.testing.op_case import (
    OpCase,
    check_forward,
    check_gradient,
    check_shapes,
    parametrize,
)

F32_64 = (tf.float32, tf.float64)


def _randn(*shape):
    return lambda rng, dt: rng.randn(*shape).astype(dt)


def _ints(*shape):
    return lambda rng, dt: rng.randint(-3, 4, shape).astype(dt)


# --- NumPy references: plain loops over output pixels and filter taps --------------------------
def _window(size, k, stride, dilation, padding):
    """(out, before) of one dimension; `padding` is "SAME", "VALID" or a (before, after)."""
    eff = (k - 1) * dilation + 1
    if padding == "SAME":
        out = (size + stride - 1) // stride
        total = max((out - 1) * stride + eff - size, 0)
        return out, total // 2
    before, after = (0, 0) if padding == "VALID" else padding
    return (size + before + after - eff) // stride + 1, before


def _nhwc(x, fmt):
    return x if fmt == "NHWC" else x.transpose(0, 2, 3, 1)


def _back(y, fmt):
    return y if fmt == "NHWC" else y.transpose(0, 3, 1, 2)


def _spatial_pads(padding, fmt):
    """Per-dimension padding spec for the reference from the wrapper's padding argument."""
    if isinstance(padding, str):
        return padding, padding
    pairs = padding[1:3] if fmt == "NHWC" else padding[2:4]
    return tuple(pairs[0]), tuple(pairs[1])


def _taps(x_shape, k_shape, strides, dilations, padding, fmt):
    """Yields (n-slice, oi, oj, input row, input col, a, b) for every in-bounds filter tap."""
    _, h, w, _ = x_shape
    kh, kw = k_shape
    ph, pw = _spatial_pads(padding, fmt)
    oh, top = _window(h, kh, strides[0], dilations[0], ph)
    ow, left = _window(w, kw, strides[1], dilations[1], pw)
    taps = []
    for oi in range(oh):
        for oj in range(ow):
            for a in range(kh):
                for b in range(kw):
                    r = oi * strides[0] + a * dilations[0] - top
                    c = oj * strides[1] + b * dilations[1] - left
                    if 0 <= r < h and 0 <= c < w:
                        taps.append((oi, oj, r, c, a, b))
    return (oh, ow), taps


def ref_conv(x, w, strides=(1, 1), padding="SAME", dilations=(1, 1), fmt="NHWC",
             depthwise=False):
    xn = _nhwc(x, fmt).astype(np.float64)
    n, _, _, c = xn.shape
    kh, kw, _, m = w.shape
    (oh, ow), taps = _taps(xn.shape, (kh, kw), strides, dilations, padding, fmt)
    out = np.zeros((n, oh, ow, c * m if depthwise else m))
    for oi, oj, r, col, a, b in taps:
        if depthwise:
            out[:, oi, oj] += (xn[:, r, col, :, None] * w[a, b]).reshape(n, -1)
        else:
            out[:, oi, oj] += xn[:, r, col] @ w[a, b]
    return _back(out, fmt).astype(x.dtype)


def ref_backprop_input(in_shape, w, dy, strides=(1, 1), padding="SAME", dilations=(1, 1),
                       fmt="NHWC", depthwise=False):
    in_nhwc = tuple(in_shape) if fmt == "NHWC" else tuple(np.array(in_shape)[[0, 2, 3, 1]])
    dyn = _nhwc(dy, fmt).astype(np.float64)
    n, _, _, c = in_nhwc
    kh, kw, _, m = w.shape
    dx = np.zeros(in_nhwc)
    _, taps = _taps(in_nhwc, (kh, kw), strides, dilations, padding, fmt)
    for oi, oj, r, col, a, b in taps:
        if depthwise:
            dx[:, r, col] += (dyn[:, oi, oj].reshape(n, c, m) * w[a, b]).sum(-1)
        else:
            dx[:, r, col] += dyn[:, oi, oj] @ w[a, b].T
    return _back(dx, fmt).astype(dy.dtype)


def ref_backprop_filter(x, filter_shape, dy, strides=(1, 1), padding="SAME", dilations=(1, 1),
                        fmt="NHWC", depthwise=False):
    xn = _nhwc(x, fmt).astype(np.float64)
    dyn = _nhwc(dy, fmt).astype(np.float64)
    n = xn.shape[0]
    kh, kw, c, m = filter_shape
    dw = np.zeros(filter_shape)
    _, taps = _taps(xn.shape, (kh, kw), strides, dilations, padding, fmt)
    for oi, oj, r, col, a, b in taps:
        if depthwise:
            dw[a, b] += (xn[:, r, col, :, None] * dyn[:, oi, oj].reshape(n, c, m)).sum(0)
        else:
            dw[a, b] += xn[:, r, col].T @ dyn[:, oi, oj]
    return dw.astype(x.dtype)


# --- the table ----------------------------------------------------------------------------------
def _full(values, fmt):
    """[1, a, b, 1] (NHWC) or [1, 1, a, b] (NCHW) from a pair."""
    return [1, *values, 1] if fmt == "NHWC" else [1, 1, *values]


def _explicit(pairs, fmt):
    return [[0, 0], *pairs, [0, 0]] if fmt == "NHWC" else [[0, 0], [0, 0], *pairs]


# (label, input NHWC shape, filter HW, strides, padding, dilations)
GEOMETRIES = [
    ("same", (2, 4, 5, 2), (3, 3), (1, 1), "SAME", (1, 1)),
    ("valid_stride2", (1, 7, 6, 2), (3, 2), (2, 2), "VALID", (1, 1)),
    ("same_stride2_even", (1, 6, 8, 2), (4, 3), (2, 3), "SAME", (1, 1)),
    ("explicit", (1, 5, 4, 2), (3, 3), (1, 2), [[1, 2], [0, 1]], (1, 1)),
    ("dilated_same", (1, 7, 7, 2), (3, 2), (1, 1), "SAME", (2, 3)),
    ("dilated_valid", (1, 7, 6, 2), (2, 2), (1, 1), "VALID", (3, 2)),
    ("one_by_one", (2, 4, 5, 3), (1, 1), (1, 1), "VALID", (1, 1)),
    ("one_by_one_stride2", (1, 5, 5, 3), (1, 1), (2, 2), "SAME", (1, 1)),
]


# Geometries whose backprop and depthwise rows also get numerical gradient checks (conv2d rows
# always do); the others check values and shapes only, to keep the file fast.
GRADIENT_GEOMETRIES = {"same", "valid_stride2", "explicit", "dilated_valid"}


def _geometry_cases():
    cases = []
    for label, (n, h, w, c), (kh, kw), strides, padding, dil in GEOMETRIES:
        for fmt in ("NHWC", "NCHW"):
            grad = label in GRADIENT_GEOMETRIES and fmt == "NHWC" or label == "same"
            x_shape = (n, h, w, c) if fmt == "NHWC" else (n, c, h, w)
            pad_arg = padding if isinstance(padding, str) else _explicit(padding, fmt)
            ref_pad = padding if isinstance(padding, str) else _explicit(padding, fmt)
            kw_ = {"strides": strides, "padding": ref_pad, "dilations": dil, "fmt": fmt}
            attrs = {"strides": _full(strides, fmt), "padding": pad_arg, "data_format": fmt,
                     "dilations": _full(dil, fmt)}
            oc, mult = 3, 2
            out_shape = ref_conv(np.zeros(x_shape), np.zeros((kh, kw, c, oc)), **kw_).shape
            dw_shape = ref_conv(np.zeros(x_shape), np.zeros((kh, kw, c, mult)), depthwise=True,
                                **kw_).shape
            cases += [
                OpCase(f"conv2d_{label}_{fmt}",
                       lambda x, f, a=attrs: tf.nn.conv2d(x, f, **a),
                       lambda x, f, k=kw_: ref_conv(x, f, **k),
                       [_randn(*x_shape), _randn(kh, kw, c, oc)], F32_64),
                OpCase(f"conv2d_backprop_input_{label}_{fmt}",
                       lambda f, dy, a=attrs, s=x_shape: tf.nn.conv2d_backprop_input(
                           list(s), f, dy, **a),
                       lambda f, dy, k=kw_, s=x_shape: ref_backprop_input(s, f, dy, **k),
                       [_randn(kh, kw, c, oc), _randn(*out_shape)], F32_64, grad=grad),
                OpCase(f"conv2d_backprop_filter_{label}_{fmt}",
                       lambda x, dy, a=attrs, s=(kh, kw, c, oc): tf.nn.conv2d_backprop_filter(
                           x, list(s), dy, **a),
                       lambda x, dy, k=kw_, s=(kh, kw, c, oc): ref_backprop_filter(x, s, dy,
                                                                                    **k),
                       [_randn(*x_shape), _randn(*out_shape)], F32_64, grad=grad),
                OpCase(f"depthwise_{label}_{fmt}",
                       lambda x, f, a=attrs: tf.nn.depthwise_conv2d_native(x, f, **a),
                       lambda x, f, k=kw_: ref_conv(x, f, depthwise=True, **k),
                       [_randn(*x_shape), _randn(kh, kw, c, mult)], F32_64, grad=grad),
                OpCase(f"depthwise_backprop_input_{label}_{fmt}",
                       lambda f, dy, a=attrs, s=x_shape:
                       tf.nn.depthwise_conv2d_native_backprop_input(list(s), f, dy, **a),
                       lambda f, dy, k=kw_, s=x_shape: ref_backprop_input(s, f, dy,
                                                                          depthwise=True, **k),
                       [_randn(kh, kw, c, mult), _randn(*dw_shape)], F32_64, grad=grad),
                OpCase(f"depthwise_backprop_filter_{label}_{fmt}",
                       lambda x, dy, a=attrs, s=(kh, kw, c, mult):
                       tf.nn.depthwise_conv2d_native_backprop_filter(x, list(s), dy, **a),
                       lambda x, dy, k=kw_, s=(kh, kw, c, mult): ref_backprop_filter(
                           x, s, dy, depthwise=True, **k),
                       [_randn(*x_shape), _randn(*dw_shape)], F32_64, grad=grad),
            ]
    return cases


CASES = _geometry_cases() + [
    OpCase("conv2d_int32", lambda x, f: tf.nn.conv2d(x, f, 1, "SAME"),
           lambda x, f: ref_conv(x, f), [_ints(2, 4, 4, 2), _ints(3, 3, 2, 3)], (tf.int32,),
           grad=False),
    OpCase("conv2d_float16", lambda x, f: tf.nn.conv2d(x, f, [1, 2, 2, 1], "SAME"),
           lambda x, f: ref_conv(x, f, (2, 2)), [_randn(1, 5, 5, 2), _randn(3, 3, 2, 2)],
           (tf.float16,), rtol=1e-2, atol=1e-2),
    OpCase("conv2d_empty_batch", lambda x, f: tf.nn.conv2d(x, f, 1, "SAME"),
           lambda x, f: ref_conv(x, f), [_randn(0, 4, 4, 2), _randn(3, 3, 2, 3)], F32_64,
           grad=False),
    OpCase("conv2d_int_strides_and_dilations",
           lambda x, f: tf.nn.conv2d(x, f, 2, "VALID", dilations=1),
           lambda x, f: ref_conv(x, f, (2, 2), "VALID"), [_randn(1, 7, 7, 2), _randn(2, 2, 2, 3)]),
    OpCase("conv2d_transpose_same_stride2",
           lambda v, f: tf.nn.conv2d_transpose(v, f, [2, 7, 8, 3], [1, 2, 2, 1], "SAME"),
           lambda v, f: ref_backprop_input((2, 7, 8, 3), f, v, (2, 2)),
           [_randn(2, 4, 4, 4), _randn(3, 3, 3, 4)], F32_64),
    OpCase("conv2d_transpose_valid_nchw",
           lambda v, f: tf.nn.conv2d_transpose(v, f, [1, 2, 6, 5], 1, "VALID",
                                               data_format="NCHW"),
           lambda v, f: ref_backprop_input((1, 2, 6, 5), f, v, padding="VALID", fmt="NCHW"),
           [_randn(1, 3, 4, 4), _randn(3, 2, 2, 3)], F32_64),
    OpCase("conv1d_nwc", lambda x, f: tf.nn.conv1d(x, f, 2, "SAME"),
           lambda x, f: ref_conv(x[:, None], f[None], (1, 2))[:, 0],
           [_randn(2, 9, 3), _randn(3, 3, 4)], F32_64),
    OpCase("conv1d_ncw_dilated", lambda x, f: tf.nn.conv1d(x, f, 1, "VALID", data_format="NCW",
                                                           dilations=2),
           lambda x, f: ref_conv(x[:, :, None], f[None], (1, 1), "VALID", (1, 2),
                                 "NCHW")[:, :, 0],
           [_randn(2, 3, 9), _randn(3, 3, 2)], F32_64),
    OpCase("depthwise_conv2d_rate", lambda x, f: tf.nn.depthwise_conv2d(
        x, f, [1, 1, 1, 1], "SAME", rate=[2, 2]),
           lambda x, f: ref_conv(x, f, dilations=(2, 2), depthwise=True),
           [_randn(2, 6, 6, 3), _randn(3, 3, 3, 2)], F32_64),
    OpCase("convolution_2d_dilated", lambda x, f: tf.nn.convolution(x, f, "SAME",
                                                                    dilation_rate=[2, 1]),
           lambda x, f: ref_conv(x, f, dilations=(2, 1)), [_randn(1, 6, 5, 2), _randn(3, 3, 2, 3)],
           unknown_shapes=False),  # tf.nn.convolution needs a known rank (input or filter)
    OpCase("convolution_2d_strided_nchw", lambda x, f: tf.nn.convolution(
        x, f, "VALID", strides=[2, 2], data_format="NCHW"),
           lambda x, f: ref_conv(x, f, (2, 2), "VALID", fmt="NCHW"),
           [_randn(1, 2, 7, 6), _randn(3, 3, 2, 3)], grad=False, unknown_shapes=False),
    OpCase("convolution_1d", lambda x, f: tf.nn.convolution(x, f, "SAME"),
           lambda x, f: ref_conv(x[:, None], f[None])[:, 0], [_randn(2, 7, 2), _randn(3, 2, 3)],
           grad=False, unknown_shapes=False),
    OpCase("atrous_conv2d", lambda x, f: tf.nn.atrous_conv2d(x, f, 2, "VALID"),
           lambda x, f: ref_conv(x, f, padding="VALID", dilations=(2, 2)),
           [_randn(2, 7, 7, 2), _randn(2, 3, 2, 2)], unknown_shapes=False),
    OpCase("separable_conv2d", lambda x, d, p: tf.nn.separable_conv2d(
        x, d, p, [1, 2, 2, 1], "SAME"),
           lambda x, d, p: ref_conv(ref_conv(x, d, (2, 2), depthwise=True), p, padding="VALID"),
           [_randn(2, 5, 5, 2), _randn(3, 3, 2, 2), _randn(1, 1, 4, 3)], F32_64),
]


@parametrize(CASES)
def test_forward(case, dtype):
    check_forward(case, dtype)


@parametrize([c for c in CASES if c.unknown_shapes and ("backprop" not in c.name or
                                                       "same_NHWC" in c.name)])
def test_shapes(case, dtype):
    check_shapes(case, dtype)


@pytest.mark.parametrize("case", [c for c in CASES if c.grad], ids=str)
def test_gradient(case):
    check_gradient(case)


# --- names, graph structure, static shapes ------------------------------------------------------
def _graph_ops():
    return [(op.name, op.type) for op in tf.get_default_graph().get_operations()]


def test_default_op_names_like_tensorflow():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 8, 8, 3])
        w = tf.placeholder(tf.float32, [3, 3, 3, 4])
        dw = tf.placeholder(tf.float32, [3, 3, 3, 2])
        pw = tf.placeholder(tf.float32, [1, 1, 6, 5])
        x1 = tf.placeholder(tf.float32, [2, 10, 3])
        w1 = tf.placeholder(tf.float32, [3, 3, 4])
        y = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
        assert y.name == "Conv2D:0" and y.op.type == "Conv2D"
        assert tf.nn.conv2d(x, w, 1, "SAME").name == "Conv2D_1:0"
        assert tf.nn.depthwise_conv2d(x, dw, [1, 1, 1, 1], "SAME").name == "depthwise:0"
        sep = tf.nn.separable_conv2d(x, dw, pw, [1, 1, 1, 1], "SAME")
        assert sep.name == "separable_conv2d:0" and sep.op.type == "Conv2D"
        assert sep.op.inputs[0].name == "separable_conv2d/depthwise:0"
        tr = tf.nn.conv2d_transpose(y, w, [2, 8, 8, 3], [1, 1, 1, 1], "SAME")
        assert tr.name == "conv2d_transpose:0" and tr.op.type == "Conv2DBackpropInput"
        assert tr.op.inputs[0].name == "conv2d_transpose/input_sizes:0"
        c1 = tf.nn.conv1d(x1, w1, 1, "SAME")
        assert c1.name == "conv1d/Squeeze:0" and c1.op.inputs[0].name == "conv1d:0"
        assert c1.shape.as_list() == [2, 10, 4]
        assert tf.nn.depthwise_conv2d_native(x, dw, [1, 1, 1, 1], "SAME").name == \
            "DepthwiseConv2dNative:0"
        atrous = tf.nn.atrous_conv2d(x, w, 2, "SAME")
        assert atrous.name == "convolution:0" and atrous.op.get_attr("dilations") == [1, 2, 2, 1]
        assert tf.nn.convolution(x, w, "SAME").name == "convolution_1:0"
        with pytest.raises(ValueError, match="rate 0 cannot be less than one"):
            tf.nn.atrous_conv2d(x, w, 0, "SAME")


def test_conv2d_attrs_like_tensorflow():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 8, 8, 3])
        w = tf.placeholder(tf.float32, [3, 3, 3, 4])
        op = tf.nn.conv2d(x, w, [2, 2], [[0, 0], [1, 2], [0, 1], [0, 0]], dilations=2).op
        assert op.get_attr("strides") == [1, 2, 2, 1]
        assert op.get_attr("padding") == b"EXPLICIT"
        assert op.get_attr("explicit_paddings") == [0, 0, 1, 2, 0, 1, 0, 0]
        assert op.get_attr("dilations") == [1, 2, 2, 1]
        assert op.get_attr("use_cudnn_on_gpu") is True
        assert op.outputs[0].shape.as_list() == [2, 4, 3, 4]
        nchw = tf.nn.conv2d(tf.placeholder(tf.float32, [2, 3, 8, 8]), w, 2, "SAME",
                            data_format="NCHW")
        assert nchw.op.get_attr("strides") == [1, 1, 2, 2]
        assert nchw.shape.as_list() == [2, 4, 4, 4]


def test_gradient_graph_uses_the_backprop_ops():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 8, 8, 3])
        w = tf.placeholder(tf.float32, [3, 3, 3, 4])
        dx, dw = tf.gradients(tf.nn.conv2d(x, w, 1, "SAME"), [x, w])
        assert dx.op.type == "Conv2DBackpropInput" and dw.op.type == "Conv2DBackpropFilter"
        assert dx.op.name == "gradients/Conv2D_grad/Conv2DBackpropInput"
        assert dx.op.inputs[0].op.type == "ShapeN"
        assert dx.shape.as_list() == [2, 8, 8, 3] and dw.shape.as_list() == [3, 3, 3, 4]


def test_static_shapes_with_unknown_dims():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, None, 8, 3])
        w = tf.placeholder(tf.float32, [3, 3, 3, 4])
        assert tf.nn.conv2d(x, w, [1, 1, 2, 1], "SAME").shape.as_list() == [None, None, 4, 4]
        assert tf.nn.conv2d(tf.placeholder(tf.float32), w, 1, "SAME").shape.as_list() == \
            [None, None, None, 4]
        sizes = tf.placeholder(tf.int32, [4])
        dy = tf.placeholder(tf.float32, [2, None, None, 4])
        assert tf.nn.conv2d_backprop_input(sizes, w, dy, 1, "SAME").shape.as_list() == \
            [2, None, None, 3]
        assert tf.nn.conv2d_backprop_filter(x, sizes, dy, 1, "SAME").shape.as_list() == \
            [None] * 4
        depthwise = tf.nn.depthwise_conv2d(x, tf.placeholder(tf.float32, [3, 3, 3, 2]),
                                           [1, 2, 2, 1], "VALID")
        assert depthwise.shape.as_list() == [None, None, 3, 6]


# --- errors -------------------------------------------------------------------------------------
@pytest.mark.parametrize("build,match", [
    (lambda x, w: tf.nn.conv2d(x[0], w, 1, "SAME"), "Shape must be rank 4 but is rank 3"),
    (lambda x, w: tf.nn.conv2d(x, w[0], 1, "SAME"), "Shape must be rank 4 but is rank 3"),
    (lambda x, w: tf.nn.conv2d(x, w[:, :, :2], 1, "SAME"),
     r"Depth of input \(3\) is not a multiple of input depth of filter \(2\)"),
    (lambda x, w: tf.nn.conv2d(x, tf.tile(w, [3, 3, 1, 1]), 1, "VALID"),
     "Negative dimension size caused by subtracting 9 from 8"),
    (lambda x, w: tf.nn.conv2d(x, w, 1, "FOO"),
     "Attr 'padding' of 'Conv2D' Op passed string 'FOO' not in"),
    (lambda x, w: tf.nn.conv2d(x, w, 1, "SAME", data_format="NCWH"),
     "Attr 'data_format' of 'Conv2D' Op passed string 'NCWH'"),
    (lambda x, w: tf.nn.conv2d(x, w, 1, [[1, 1], [1, 1]]),
     "When padding is a list, it must be of size 4"),
    (lambda x, w: tf.nn.conv2d(x, w, 1, [[1, 1], [1, 1], [1, 1], [0, 0]]),
     "Nonzero explicit padding in the batch or depth dimensions is not supported"),
    (lambda x, w: tf.nn.conv2d(x, w, [1, 1, 1], "SAME"),
     "strides should be of length 1, 2 or 4"),
    (lambda x, w: tf.nn.conv1d(x[0], w[0], 1, "SAME", data_format="NHCW"),
     "`data_format` must be 'NWC' or 'NCW'"),
    (lambda x, w: tf.nn.depthwise_conv2d(x, w[:, :, :2], [1, 1, 1, 1], "SAME"),
     "Dimensions must be equal, but are 3 and 2"),
    (lambda x, w: tf.nn.separable_conv2d(x, w, tf.zeros([2, 1, 12, 4]), [1, 1, 1, 1], "SAME"),
     "Dimensions 2 and 1 are not compatible"),
])
def test_value_errors_at_graph_construction(build, match):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 8, 8, 3])
        w = tf.placeholder(tf.float32, [3, 3, 3, 4])
        with pytest.raises(ValueError, match=match):
            build(x, w)


def test_type_errors_at_graph_construction():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="DataType int64 not in list of allowed values"):
            tf.nn.conv2d(tf.zeros([1, 4, 4, 1], tf.int64), tf.zeros([1, 1, 1, 1], tf.int64), 1,
                         "SAME")
        with pytest.raises(TypeError):
            tf.nn.conv2d(tf.zeros([1, 4, 4, 1]), tf.zeros([1, 1, 1, 1], tf.float64), 1, "SAME")


def _run_error(build, feed_shapes):
    with tf.Graph().as_default():
        holders = [tf.placeholder(tf.float32) for _ in feed_shapes]
        out = build(*holders)
        with tf.Session() as sess:
            sess.run(out, {h: np.ones(s, np.float32) for h, s in zip(holders, feed_shapes)})


def test_run_time_errors():
    with pytest.raises(errors.UnimplementedError, match="grouped convolutions"):
        _run_error(lambda x, w: tf.nn.conv2d(x, w, 1, "SAME"), [(1, 4, 4, 4), (3, 3, 2, 3)])
    with pytest.raises(errors.UnimplementedError, match="strides in the batch and depth"):
        _run_error(lambda x, w: tf.nn.conv2d(x, w, [2, 1, 1, 1], "SAME"),
                   [(2, 4, 4, 1), (1, 1, 1, 1)])
    with pytest.raises(errors.InvalidArgumentError, match="Computed output size would be "
                       "negative|Negative dimension size"):
        _run_error(lambda x, w: tf.nn.conv2d(x, w, 1, "VALID"), [(1, 2, 2, 1), (3, 3, 1, 1)])
    with pytest.raises(errors.InvalidArgumentError, match="Size of out_backprop doesn't match"):
        _run_error(lambda w, dy: tf.nn.conv2d_backprop_input([1, 8, 8, 1], w, dy, 2, "SAME"),
                   [(3, 3, 1, 1), (1, 5, 4, 1)])
    with pytest.raises(errors.InvalidArgumentError, match="same out_depth"):
        _run_error(lambda x, dy: tf.nn.conv2d_backprop_filter(x, [3, 3, 1, 2], dy, 1, "SAME"),
                   [(1, 4, 4, 1), (1, 4, 4, 3)])
    with pytest.raises(errors.InvalidArgumentError, match="input must be 4-dimensional"):
        _run_error(lambda x, w: tf.nn.conv2d(x, w, 1, "SAME"), [(4, 4, 1), (1, 1, 1, 1)])


# --- second derivatives -------------------------------------------------------------------------
def test_second_derivative_through_the_backprop_ops():
    """d/dw of <dL/dx, v> for L = sum(conv(x, w) ** 2), against central differences."""
    rng = np.random.RandomState(3)
    x0, w0 = rng.randn(1, 4, 4, 2), rng.randn(3, 3, 2, 2)
    v = rng.randn(1, 4, 4, 2)
    with tf.Graph().as_default():
        x, w = tf.constant(x0), tf.placeholder(tf.float64, w0.shape)
        y = tf.nn.conv2d(x, w, 1, "SAME")
        (dx,) = tf.gradients(tf.reduce_sum(y * y), [x])
        target = tf.reduce_sum(dx * v)
        (dw,) = tf.gradients(target, [w])
        with tf.Session() as sess:
            got = sess.run(dw, {w: w0})
            numeric = np.zeros_like(w0)
            for idx in np.ndindex(w0.shape):
                up, down = w0.copy(), w0.copy()
                up[idx] += 1e-5
                down[idx] -= 1e-5
                numeric[idx] = (sess.run(target, {w: up}) - sess.run(target, {w: down})) / 2e-5
    np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-6)


def test_large_inputs_use_several_row_blocks(monkeypatch):
    """The blocked im2col paths (forward, both backprops) agree with the reference when the
    output spans many blocks, including partial-image blocks."""
    from tensorweave.kernels import conv as conv_kernels
    monkeypatch.setattr(conv_kernels, "BLOCK_BYTES", 1 << 10)
    monkeypatch.setattr(conv_kernels, "MIN_ROWS", 7)
    rng = np.random.RandomState(0)
    for c, stride in ((3, 1), (9, 2)):
        x0, w0 = rng.randn(3, 9, 7, c), rng.randn(3, 3, c, 4)
        with tf.Graph().as_default():
            x, w = tf.constant(x0), tf.constant(w0)
            y = tf.nn.conv2d(x, w, stride, "SAME")
            dy = np.asarray(rng.randn(*y.shape.as_list()))
            dx, dw = tf.gradients(y, [x, w], dy)
            with tf.Session() as sess:
                got_y, got_dx, got_dw = sess.run([y, dx, dw])
        ref = {"strides": (stride, stride)}
        np.testing.assert_allclose(got_y, ref_conv(x0, w0, **ref), atol=1e-10)
        np.testing.assert_allclose(got_dx, ref_backprop_input(x0.shape, w0, dy, **ref),
                                   atol=1e-10)
        np.testing.assert_allclose(got_dw, ref_backprop_filter(x0, w0.shape, dy, **ref),
                                   atol=1e-10)


@pytest.mark.parametrize("r", [3, 5])
def test_winograd_path_matches_the_reference(monkeypatch, r):
    """Stride-1 3x3 and 5x5 convolutions, their filter gradients and their input gradients
    (such convolutions too) through Winograd, forced on small shapes and tiny bands, with the
    fused bias and ReLU of the remapper, in NCHW and with explicit padding."""
    from tensorweave.kernels import conv_winograd
    for name, value in (("MIN_TILES", 0), ("MIN_CHANNELS", 0),
                        ("MIN_BAND_TILES", 3), ("BAND_BYTES", 1)):
        monkeypatch.setattr(conv_winograd, name, value)
    calls = []
    for name in ("conv2d", "filter_gradient"):
        original = getattr(conv_winograd, name)
        monkeypatch.setattr(conv_winograd, name,
                            lambda *a, _f=original, _n=name: calls.append(_n) or _f(*a))
    rng = np.random.RandomState(0)
    for x_shape, padding, fmt in (((2, 7, 6, 3), "SAME", "NHWC"), ((1, 8, 9, 2), "VALID", "NHWC"),
                                  ((2, 3, 6, 7), "SAME", "NCHW"),
                                  ((1, 6, 5, 2), [[0, 0], [2, 0], [1, 2], [0, 0]], "NHWC")):
        x0 = rng.randn(*x_shape).astype(np.float32)
        c = x_shape[1] if fmt == "NCHW" else x_shape[3]
        w0 = rng.randn(r, r, c, 4).astype(np.float32)
        b0 = rng.randn(4).astype(np.float32)
        with tf.Graph().as_default():
            x, w = tf.constant(x0), tf.constant(w0)
            y = tf.nn.conv2d(x, w, 1, padding, data_format=fmt)
            act = tf.nn.relu(tf.nn.bias_add(y, b0, data_format=fmt))
            dy = rng.randn(*y.shape.as_list()).astype(np.float32)
            dx, dw = tf.gradients(y, [x, w], dy)
            with tf.Session() as sess:
                got_y, got_act, got_dx, got_dw = sess.run([y, act, dx, dw])
        want_y = ref_conv(x0, w0, padding=padding, fmt=fmt)
        bias = b0.reshape(-1, 1, 1) if fmt == "NCHW" else b0
        tol = {"rtol": 1e-5, "atol": 1e-4}
        np.testing.assert_allclose(got_y, want_y, **tol)
        np.testing.assert_allclose(got_act, np.maximum(want_y + bias, 0), **tol)
        np.testing.assert_allclose(got_dx, ref_backprop_input(x0.shape, w0, dy, padding=padding,
                                                              fmt=fmt), **tol)
        np.testing.assert_allclose(got_dw, ref_backprop_filter(x0, w0.shape, dy, padding=padding,
                                                               fmt=fmt), **tol)
    assert calls.count("filter_gradient") == 4
    assert calls.count("conv2d") >= 8   # the forward passes (fused or not) and input gradients
