"""tf.layers' 3-D convolution and pooling layers and SeparableConv1D: variable names and shapes
as TensorFlow 2.21's legacy layers build them (checked with tf.compat.v1 + tf_keras), outputs
against NumPy references."""
import numpy as np
import pytest

import tensorweave as tf
from tests.ops.test_nn_conv3d_ops import ref_backprop_input, ref_conv


def _linspace(*shape):
    return tf.constant_initializer(np.linspace(-1, 1, int(np.prod(shape))).reshape(shape))


def _kernel(*shape):
    return np.linspace(-1, 1, int(np.prod(shape))).reshape(shape)


def _pool_ref(x, size, strides, padding, kind):
    """Max / mean over windows of NDHWC x (padding never counted), by output position."""
    outs, befores = [], []
    for n, k, s in zip(x.shape[1:4], size, strides):
        o = -(-n // s) if padding == "same" else (n - k) // s + 1
        outs.append(o)
        befores.append(max((o - 1) * s + k - n, 0) // 2 if padding == "same" else 0)
    out = np.zeros((x.shape[0], *outs, x.shape[4]))
    for pos in np.ndindex(*outs):
        index = tuple(slice(max(p * s - b, 0), p * s - b + k)
                      for p, s, b, k in zip(pos, strides, befores, size))
        window = x[(slice(None), *index)].reshape(x.shape[0], -1, x.shape[4])
        out[(slice(None), *pos)] = window.max(1) if kind == "max" else window.mean(1)
    return out


@pytest.fixture
def x5():
    return np.random.RandomState(0).randn(2, 4, 5, 6, 3).astype(np.float32)


def _run(y):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(y)


def test_conv3d_layer_variables_and_values(x5):
    with tf.Graph().as_default():
        y = tf.layers.conv3d(tf.constant(x5), 2, (2, 3, 1), strides=(1, 2, 1),
                             kernel_initializer=_linspace(2, 3, 1, 3, 2),
                             bias_initializer=tf.constant_initializer(0.5),
                             activation=tf.nn.relu)
        z = tf.layers.Conv3D(4, 2, padding="same", dilation_rate=(1, 2, 1))(tf.constant(x5))
        assert [(v.name, v.shape.as_list()) for v in tf.global_variables()] == [
            ("conv3d/kernel:0", [2, 3, 1, 3, 2]), ("conv3d/bias:0", [2]),
            ("conv3d_1/kernel:0", [2, 2, 2, 3, 4]), ("conv3d_1/bias:0", [4])]
        assert y.shape.as_list() == [2, 3, 2, 6, 2] and z.shape.as_list() == [2, 4, 5, 6, 4]
        got = _run(y)
    want = np.maximum(ref_conv(x5, _kernel(2, 3, 1, 3, 2), (1, 2, 1), "VALID") + 0.5, 0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_conv3d_layer_channels_first(x5):
    xc = np.moveaxis(x5, -1, 1)
    with tf.Graph().as_default():
        y = tf.layers.conv3d(tf.constant(xc), 2, 2, data_format="channels_first",
                             kernel_initializer=_linspace(2, 2, 2, 3, 2),
                             bias_initializer=tf.constant_initializer([0.5, -1.0]))
        assert y.shape.as_list() == [2, 2, 3, 4, 5]
        got = _run(y)
    want = ref_conv(x5, _kernel(2, 2, 2, 3, 2), (1, 1, 1), "VALID") + [0.5, -1.0]
    np.testing.assert_allclose(got, np.moveaxis(want, -1, 1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("padding,strides,shape", [
    ("valid", 2, [2, 9, 11, 13, 2]), ("same", (1, 2, 2), [2, 4, 10, 12, 2])])
def test_conv3d_transpose_layer(x5, padding, strides, shape):
    with tf.Graph().as_default():
        y = tf.layers.conv3d_transpose(tf.constant(x5), 2, 3, strides=strides, padding=padding,
                                       kernel_initializer=_linspace(3, 3, 3, 2, 3))
        assert [(v.name, v.shape.as_list()) for v in tf.global_variables()] == [
            ("conv3d_transpose/kernel:0", [3, 3, 3, 2, 3]), ("conv3d_transpose/bias:0", [2])]
        assert y.op.type == "BiasAdd"
        got = _run(y)
    s = (strides,) * 3 if isinstance(strides, int) else strides
    want = ref_backprop_input(shape, _kernel(3, 3, 3, 2, 3), x5, s, padding.upper())
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pooling3d_layers(x5, kind):
    fn = tf.layers.max_pooling3d if kind == "max" else tf.layers.average_pooling3d
    cls = tf.layers.MaxPooling3D if kind == "max" else tf.layers.AveragePooling3D
    with tf.Graph().as_default():
        a = fn(tf.constant(x5), 2, 2)
        b = fn(tf.constant(x5), (2, 3, 2), (1, 2, 2), padding="same")
        c = cls(2, 1, data_format="channels_first")(tf.constant(np.moveaxis(x5, -1, 1)))
        assert a.op.type == ("MaxPool3D" if kind == "max" else "AvgPool3D")
        got = _run([a, b, c])
    np.testing.assert_allclose(got[0], _pool_ref(x5, (2, 2, 2), (2, 2, 2), "valid", kind),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], _pool_ref(x5, (2, 3, 2), (1, 2, 2), "same", kind),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[2], np.moveaxis(
        _pool_ref(x5, (2, 2, 2), (1, 1, 1), "valid", kind), -1, 1), rtol=1e-5, atol=1e-6)


def _separable_ref(x, depthwise, pointwise, stride, padding, rate):
    """Depthwise 1-D convolution (channel c * M + m uses depthwise[:, c, m]), then 1x1."""
    k, c, m = depthwise.shape
    n, w, _ = x.shape
    eff = (k - 1) * rate + 1
    out_w = -(-w // stride) if padding == "same" else (w - eff) // stride + 1
    before = max((out_w - 1) * stride + eff - w, 0) // 2 if padding == "same" else 0
    depth = np.zeros((n, out_w, c, m))
    for o in range(out_w):
        for t in range(k):
            i = o * stride + t * rate - before
            if 0 <= i < w:
                depth[:, o] += x[:, i, :, None] * depthwise[t]
    return depth.reshape(n, out_w, c * m) @ pointwise[0]


@pytest.mark.parametrize("kwargs", [
    {"depth_multiplier": 2}, {"strides": 2, "padding": "same"},
    {"dilation_rate": 2, "padding": "same"}])
def test_separable_conv1d_layer(kwargs):
    x = np.random.RandomState(1).randn(2, 7, 3).astype(np.float32)
    m = kwargs.get("depth_multiplier", 1)
    with tf.Graph().as_default():
        y = tf.layers.separable_conv1d(tf.constant(x), 4, 3,
                                       depthwise_initializer=_linspace(3, 3, m),
                                       pointwise_initializer=_linspace(1, 3 * m, 4), **kwargs)
        assert [(v.name, v.shape.as_list()) for v in tf.global_variables()] == [
            ("separable_conv1d/depthwise_kernel:0", [3, 3, m]),
            ("separable_conv1d/pointwise_kernel:0", [1, 3 * m, 4]),
            ("separable_conv1d/bias:0", [4])]
        got = _run(y)
    want = _separable_ref(x, _kernel(3, 3, m), _kernel(1, 3 * m, 4), kwargs.get("strides", 1),
                          kwargs.get("padding", "valid"), kwargs.get("dilation_rate", 1))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_separable_conv1d_class_channels_first():
    x = np.random.RandomState(2).randn(2, 3, 6).astype(np.float32)
    with tf.Graph().as_default():
        layer = tf.layers.SeparableConv1D(2, 2, data_format="channels_first",
                                          depthwise_initializer=_linspace(2, 3, 1),
                                          pointwise_initializer=_linspace(1, 3, 2))
        y = layer(tf.constant(x))
        assert y.shape.as_list() == [2, 2, 5] and layer.depthwise_kernel.name == \
            "separable_conv1d/depthwise_kernel:0"
        got = _run(y)
    want = _separable_ref(np.moveaxis(x, 1, -1), _kernel(2, 3, 1), _kernel(1, 3, 2), 1, "valid",
                          1)
    np.testing.assert_allclose(got, np.moveaxis(want, -1, 1), rtol=1e-5, atol=1e-5)


def test_conv3d_layer_needs_known_channels():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="channel dimension of the inputs should be"):
            tf.layers.conv3d_transpose(tf.placeholder(tf.float32, [1, 2, 2, 2, None]), 2, 2)
