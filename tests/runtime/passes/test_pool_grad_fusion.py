"""Pool-gradient fusion: ReluGrad(MaxPoolGrad(f, ...), f) becomes one bit-identical kernel."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops.nn_ops import ReluGrad
from tensorweave.runtime.passes.pool_grad_fusion import fuse_pool_relu_gradients

FUSED = "_FusedMaxPoolGradReluGrad"


def _relu_pool_gradient(dtype, ksize, strides, padding, shape=(2, 7, 6, 5)):
    """(x, dy, d relu(x) -> max_pool): dy is fed, so it can hold NaN and signed values."""
    x = tf.placeholder(dtype, shape)
    pooled = tf.nn.max_pool(tf.nn.relu(x), [1, *ksize, 1], [1, *strides, 1], padding)
    dy = tf.placeholder(dtype, pooled.shape)
    (dx,) = tf.gradients(pooled, [x], grad_ys=dy)
    return x, dy, dx


def _feed(x, dy, dtype):
    rng = np.random.RandomState(0)
    xs = rng.randint(-3, 4, x.shape.as_list()).astype(dtype)   # ties, zeros, negatives
    xs[0, 0, 0, 0] = np.nan
    ys = rng.randn(*dy.shape.as_list()).astype(dtype)
    ys[1, 0, 0, :2] = [np.nan, -np.inf]
    return {x: xs, dy: ys}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ksize,strides,padding", [
    ((2, 2), (2, 2), "SAME"),      # disjoint windows: the compiled pass
    ((2, 2), (2, 2), "VALID"),     # some inputs in no window
    ((3, 3), (2, 2), "SAME"),      # overlapping windows: the slice formulation
])
def test_relu_max_pool_gradient_fuses_bit_identically(pt, dtype, ksize, strides, padding):
    x, dy, dx = _relu_pool_gradient(tf.as_dtype(dtype), ksize, strides, padding)
    graph, _ = pt.apply(fuse_pool_relu_gradients, [dx], feeds=[x, dy])
    ops = pt.ops(graph)
    assert ops[FUSED] == 1 and ops["MaxPoolGrad"] == 0 and ops["ReluGrad"] == 0
    feed = _feed(x, dy, dtype)
    fused = pt.run(dx, feed)
    plain = pt.run(dx, feed, pt.OFF)
    assert fused.dtype == plain.dtype and fused.tobytes() == plain.tobytes()
    assert np.isnan(fused).any()
    if ksize == strides:     # a negative gradient at a zero maximum gives -0.0, as ReluGrad's
        assert np.signbit(fused[fused == 0]).any()


def test_max_pool_gradient_of_other_features_or_fetched_is_not_fused(pt):
    x = tf.placeholder(tf.float32, [1, 4, 4, 2])
    h = tf.nn.relu(x)
    pooled = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    (pool_grad,) = tf.gradients(pooled, [h])
    other = apply_op(ReluGrad, [pool_grad, x * 2.0])
    graph, _ = pt.apply(fuse_pool_relu_gradients, [other], feeds=[x])
    assert FUSED not in pt.ops(graph)
    (dx,) = tf.gradients(pooled, [x])
    assert dx.op.type == "ReluGrad"
    graph, _ = pt.apply(fuse_pool_relu_gradients, [dx, dx.op.inputs[0]], feeds=[x])
    assert FUSED not in pt.ops(graph)
