"""Bias-gradient fusion: a ReLU gradient and the bias gradient summed from it, in one pass."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops.fused_ops import FusedReluGradBiasAddGrad
from tensorweave.runtime.passes.memory import IN_PLACE_ATTR

RELU = "_FusedReluGradBiasAddGrad"


def _partition_ops(pt, fetches, feed, cfg=None):
    with tf.Session(config=cfg) as sess:
        sess.run(tf.global_variables_initializer())
        _, graphs = pt.partition_graphs(sess, fetches, feed)
    return [n.op for g in graphs for n in g.node]


def _signed_values(rng, shape, dtype):
    """Normal values with NaN, infinities and both zeros among them."""
    v = rng.randn(*shape).astype(dtype)
    flat = v.reshape(-1)
    flat[:4] = [np.nan, np.inf, -0.0, 0.0]
    return v


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(6, 16), (300, 256), (2, 5, 4, 9)])
def test_dense_relu_bias_gradient_fuses_bit_identically(pt, dtype, shape):
    # `relu(h + b)`: the bias gradient is Sum(ReluGrad) over the leading axes.
    tdtype = tf.as_dtype(dtype)
    h = tf.placeholder(tdtype, shape)
    b = tf.placeholder(tdtype, shape[-1:])
    dy = tf.placeholder(tdtype, shape)
    out = tf.nn.relu(h + b)
    dh, db = tf.gradients(out, [h, b], grad_ys=dy)
    rng = np.random.RandomState(1)
    feed = {h: _signed_values(rng, shape, dtype), b: rng.randn(shape[-1]).astype(dtype),
            dy: _signed_values(rng, shape, dtype)}
    ops = _partition_ops(pt, [dh, db], feed)
    assert ops.count(RELU) == 1 and "ReluGrad" not in ops and "Sum" not in ops
    assert ops.count("Identity") == 1      # the fetched bias gradient keeps its name
    plain, fused = pt.compare([dh, db], feed)
    for a, c in zip(plain, fused):
        assert a.tobytes() == c.tobytes()


def test_a_dying_matmul_gradient_is_rectified_and_summed_in_place(pt):
    rng = np.random.RandomState(6)
    x = tf.placeholder(tf.float32, [96, 64])
    w = tf.constant(rng.randn(64, 80).astype(np.float32))
    b = tf.placeholder(tf.float32, [80])
    h = tf.nn.relu(tf.matmul(x, w) + b)
    loss = tf.reduce_sum(tf.matmul(h, rng.randn(80, 8).astype(np.float32)) ** 2)
    dx, db = tf.gradients(loss, [x, b])
    feed = {x: rng.randn(96, 64).astype(np.float32), b: rng.randn(80).astype(np.float32)}
    with tf.Session() as sess:
        _, (gd,) = pt.partition_graphs(sess, [dx, db], feed)
    fused = next(n for n in gd.node if n.op == RELU)
    assert fused.attr[IN_PLACE_ATTR].i == 0       # its gradient input is a dying MatMul output
    plain, optimized = pt.compare([dx, db], feed)
    assert all(a.tobytes() == c.tobytes() for a, c in zip(plain, optimized))


def test_bias_add_gradients_fuse_within_rounding_and_pooled_ones_stay(pt):
    rng = np.random.RandomState(2)
    x = tf.placeholder(tf.float32, [4, 12, 12, 3])
    w = tf.constant(rng.randn(3, 3, 3, 16).astype(np.float32))
    b = tf.constant(rng.randn(16).astype(np.float32))
    conv = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
    pooled = tf.nn.max_pool(tf.nn.relu(tf.nn.bias_add(conv, b)), [1, 2, 2, 1], [1, 2, 2, 1],
                            "SAME")
    b2 = tf.placeholder(tf.float32, [576])
    dense = tf.nn.relu(tf.nn.bias_add(tf.reshape(pooled, [4, -1]), b2))
    loss = tf.reduce_sum(dense * rng.randn(4, 576).astype(np.float32))
    grads = [g * 1.0 for g in tf.gradients(loss, [x, b, b2])]
    feed = {x: rng.randn(4, 12, 12, 3).astype(np.float32),
            b2: rng.randn(576).astype(np.float32)}
    ops = _partition_ops(pt, grads, feed)
    assert ops.count(RELU) == 1 and ops.count("BiasAddGrad") == 1     # the pooled one stays
    assert "_FusedMaxPoolGradReluGrad" in ops
    plain, fused = pt.compare(grads, feed, rtol=1e-5, atol=1e-5)
    assert plain[1].shape == (16,) and plain[2].shape == (576,)


def test_sums_it_cannot_take_stay_apart(pt):
    x = tf.placeholder(tf.float32, [4, 6, 8])
    r = tf.nn.relu(x)
    (g,) = tf.gradients(r, [x], grad_ys=tf.ones([4, 6, 8]))
    partial = tf.reduce_sum(g, axis=0)                 # not every leading axis
    kept = tf.reduce_sum(g, axis=[0, 1], keepdims=True)
    last = tf.reduce_sum(g, axis=[1, 2])               # the channel axis itself
    feed = {x: np.random.RandomState(4).randn(4, 6, 8).astype(np.float32)}
    assert RELU not in _partition_ops(pt, [partial, kept, last], feed)
    whole = tf.reduce_sum(g, axis=[0, 1])
    assert RELU in _partition_ops(pt, [whole * 2.0], feed)
    pt.compare([partial, kept, last, whole * 2.0], feed)
    column = tf.placeholder(tf.float32, [5000, 1])     # NumPy sums one column pairwise
    (gc,) = tf.gradients(tf.nn.relu(column), [column], grad_ys=tf.ones([5000, 1]))
    assert RELU not in _partition_ops(pt, [tf.reduce_sum(gc, axis=0) * 2.0],
                                      {column: np.ones([5000, 1], np.float32)})


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("contiguous", [True, False])
def test_fused_kernel_matches_numpy_and_its_shape_function(dtype, contiguous):
    rng = np.random.RandomState(5)
    g = _signed_values(rng, (3, 4, 10), dtype)
    x = _signed_values(rng, (3, 4, 10), dtype)
    if not contiguous:
        g, x = np.asfortranarray(g), np.asfortranarray(x)
    with tf.Graph().as_default():
        backprops, bias_grad = apply_op(FusedReluGradBiasAddGrad, [tf.constant(g),
                                                                    tf.constant(x)])
        assert backprops.shape.as_list() == [3, 4, 10] and bias_grad.shape.as_list() == [10]
        with tf.Session() as sess:
            got, sums = sess.run([backprops, bias_grad])
    want = g * (x > 0).astype(dtype)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == sums.dtype == dtype and sums.shape == (10,)
    np.testing.assert_allclose(sums, want.reshape(-1, 10).sum(axis=0, dtype=np.float64),
                               rtol=2e-3 if dtype == np.float16 else 1e-6)


def test_fused_kernel_rejects_mismatched_inputs():
    with tf.Graph().as_default():
        g = tf.placeholder(tf.float32)
        x = tf.placeholder(tf.float32)
        backprops, _ = apply_op(FusedReluGradBiasAddGrad, [g, x])
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="same shape"):
                sess.run(backprops, {g: np.ones([2, 3]), x: np.ones([3, 2])})
            with pytest.raises(tf.errors.InvalidArgumentError, match="at least 2-D"):
                sess.run(backprops, {g: np.ones([3]), x: np.ones([3])})
