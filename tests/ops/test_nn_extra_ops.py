"""batch_norm_with_global_normalization, compute_average_loss, scale_regularization_loss and the
depthwise_conv2d_backprop_* names: NumPy references and TF's errors (values checked against
TF 2.21)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors

X = np.arange(6.0).reshape(2, 3)
MEAN, VAR = np.array([1.0, 2.0, 3.0]), np.array([1.0, 4.0, 9.0])
BETA, GAMMA = np.array([0.5, 0.0, 1.0]), np.array([2.0, 3.0, 4.0])


def _run(t):
    with tf.Session() as sess:
        return sess.run(t)


@pytest.mark.parametrize("scale", [True, False])
def test_batch_norm_with_global_normalization(scale):
    with tf.Graph().as_default():
        out = tf.nn.batch_norm_with_global_normalization(
            tf.constant(X), tf.constant(MEAN), tf.constant(VAR), tf.constant(BETA),
            tf.constant(GAMMA), 0.001, scale)
        also = tf.nn.batch_norm_with_global_normalization(
            input=tf.constant(X), mean=tf.constant(MEAN), variance=tf.constant(VAR),
            beta=tf.constant(BETA), gamma=tf.constant(GAMMA), variance_epsilon=0.001,
            scale_after_normalization=scale, name="bn")
        assert out.op.name == "batchnorm/add_1" and also.op.name == "bn/add_1"
        got, got_also = _run([out, also])
    expected = (X - MEAN) / np.sqrt(VAR + 0.001) * (GAMMA if scale else 1.0) + BETA
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_allclose(got_also, expected, rtol=1e-12)


def test_batch_norm_with_global_normalization_both_names():
    with tf.Graph().as_default():
        x = tf.constant(X)
        with pytest.raises(ValueError, match="Cannot specify both 't' and 'input'"):
            tf.nn.batch_norm_with_global_normalization(
                input=x, t=x, m=MEAN, v=VAR, beta=BETA, gamma=GAMMA, variance_epsilon=0.1,
                scale_after_normalization=True)


@pytest.mark.parametrize("loss,kwargs,expected", [
    ([1.0, 2.0, 3.0, 6.0], {}, 3.0),
    ([[1.0, 2.0], [3.0, 6.0]], dict(sample_weight=[2.0, 0.5], global_batch_size=8), 1.3125),
    ([[1.0, 2.0], [3.0, 6.0]], dict(sample_weight=[[2.0], [0.5]]), 5.25),
    ([[1.0, 2.0], [3.0, 4.0]], dict(sample_weight=[[1.0, 2.0], [3.0, 4.0]]), 15.0),
    ([1.0, 2.0], dict(global_batch_size=0), 0.0),
])
def test_compute_average_loss(loss, kwargs, expected):
    with tf.Graph().as_default():
        out = tf.nn.compute_average_loss(tf.constant(loss), **kwargs)
        assert out.shape.as_list() == [] and out.dtype == tf.float32
        assert out.op.type == "DivNoNan"
        assert _run(out) == pytest.approx(expected)


def test_compute_average_loss_dtypes_and_dynamic_ranks():
    with tf.Graph().as_default():
        f64 = tf.nn.compute_average_loss(tf.constant([1.0, 2.0], tf.float64), sample_weight=2)
        ints = tf.nn.compute_average_loss(tf.constant([1, 2]))
        weights = tf.placeholder(tf.float32, None)
        dyn = tf.nn.compute_average_loss(tf.constant([[1.0, 2.0], [3.0, 6.0]]),
                                         sample_weight=weights)
        assert f64.dtype == tf.float64 and ints.dtype == tf.float64
        assert _run([f64, ints]) == [pytest.approx(3.0), pytest.approx(1.5)]
        with tf.Session() as sess:
            for w, expected in (([2.0, 0.5], 5.25), ([[2.0], [0.5]], 5.25), (2.0, 12.0),
                                ([[[2.0], [1.0]], [[1.0], [1.0]]], 6.5)):
                assert sess.run(dyn, {weights: w}) == pytest.approx(expected)


def test_compute_average_loss_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Expected a tensor with at least rank 1"):
            tf.nn.compute_average_loss(tf.constant(1.0))
        with pytest.raises(TypeError, match="global_batch_size must be an integer"):
            tf.nn.compute_average_loss(tf.constant([1.0]), global_batch_size=2.0)
        with pytest.raises(ValueError, match="global_batch_size must be scalar"):
            tf.nn.compute_average_loss(tf.constant([1.0]), global_batch_size=[2])
        out = tf.nn.compute_average_loss(tf.placeholder_with_default(1.0, None))
        with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError,
                                                 match="at least rank 1"):
            sess.run(out)


def test_scale_regularization_loss():
    with tf.Graph().as_default():
        one = tf.nn.scale_regularization_loss(tf.constant([1.0, 2.0]))
        many = tf.nn.scale_regularization_loss([tf.constant([1.0, 2.0]),
                                                tf.constant([3.0, 4.0])])
        assert one.op.type == "RealDiv" and one.op.name == "truediv"
        assert _run([one, many]) == [3.0, 10.0]


def test_depthwise_backprop_names():
    assert tf.nn.depthwise_conv2d_backprop_input is tf.nn.depthwise_conv2d_native_backprop_input
    assert tf.nn.depthwise_conv2d_backprop_filter is \
        tf.nn.depthwise_conv2d_native_backprop_filter
    with tf.Graph().as_default():
        out = tf.nn.depthwise_conv2d_backprop_input(
            [1, 3, 3, 2], tf.ones([2, 2, 2, 1]), tf.ones([1, 2, 2, 2]), [1, 1, 1, 1], "VALID")
        assert out.op.type == "DepthwiseConv2dNativeBackpropInput"
        got = _run(out)
    expected = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], np.float32)
    np.testing.assert_array_equal(got[0, :, :, 0], expected)
    np.testing.assert_array_equal(got[0, :, :, 1], expected)
