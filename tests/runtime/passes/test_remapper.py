"""Remapping: MatMul/Conv2D + bias (+ activation) become one fused node with identical results."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_def import OP_REGISTRY
from tensorweave.runtime.passes.remapper import fuse_contractions

ACTIVATIONS = {"Relu": tf.nn.relu, "Relu6": tf.nn.relu6, "Elu": tf.nn.elu, "Tanh": tf.tanh,
               "Sigmoid": tf.sigmoid, "LeakyRelu": lambda h: tf.nn.leaky_relu(h, alpha=0.3)}


def _data(*shape, seed=0, dtype=np.float32):
    return np.random.RandomState(seed).randn(*shape).astype(dtype)


@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
def test_matmul_bias_add_activation_is_one_node_and_exact(pt, activation):
    x = tf.placeholder(tf.float32, [None, 5])
    w = tf.constant(_data(5, 4, seed=1))
    b = tf.constant(_data(4, seed=2))
    y = ACTIVATIONS[activation](tf.nn.bias_add(tf.matmul(x, w), b))
    graph, opts = pt.apply(fuse_contractions, y, feeds=[x])
    (fused,) = [n for n in graph if n.op == "_FusedMatMul"]
    assert fused.attrs["fused_ops"] == ["BiasAdd", activation]
    assert fused.name == y.op.name                       # the last node's name
    assert "MatMul" not in pt.ops(graph) and "BiasAdd" not in pt.ops(graph)
    feed = {x: np.concatenate([_data(6, 5, seed=3), [[np.nan, np.inf, -np.inf, 0, 1]]])}
    pt.compare(y, feed)                                  # bit-identical


def test_fused_leaky_relu_uses_alpha_rounded_to_float32_in_float64(pt):
    """TF's leakyrelu_alpha is a float32 attr: -1 * 1 + -2 * 1 + 0 scaled by it is TF 2.21's
    -0.9000000357627869, fused or not, even in float64."""
    x = tf.placeholder(tf.float64, [1, 2])
    w = tf.constant([[1.0], [1.0]], tf.float64)
    y = tf.nn.leaky_relu(tf.nn.bias_add(tf.matmul(x, w), tf.constant([0.0], tf.float64)),
                         alpha=0.3)
    graph, _ = pt.apply(fuse_contractions, y, feeds=[x])
    assert pt.ops(graph)["_FusedMatMul"] == 1
    plain, fused = pt.compare(y, {x: [[-1.0, -2.0]]})
    assert plain.item() == fused.item() == -0.9000000357627869


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_matmul_plus_bias_vector_and_transposes(pt, dtype):
    x = tf.placeholder(dtype, [3, 5])
    w = tf.constant(_data(4, 5, seed=1, dtype=dtype.as_numpy_dtype))
    b = tf.constant(_data(4, seed=2, dtype=dtype.as_numpy_dtype))
    y = b + tf.matmul(x, w, transpose_b=True)           # Add(bias) in either operand order
    graph, _ = pt.apply(fuse_contractions, y, feeds=[x])
    (fused,) = [n for n in graph if n.op == "_FusedMatMul"]
    assert fused.attrs["fused_ops"] == ["BiasAdd"] and fused.attrs["transpose_b"]
    pt.compare(y, {x: _data(3, 5, seed=4, dtype=dtype.as_numpy_dtype)})


def test_add_that_broadcasts_more_than_a_bias_is_not_fused(pt):
    x = tf.placeholder(tf.float32, [3, 5])
    y = tf.matmul(x, tf.ones([5, 4])) + tf.ones([3, 4])  # 2-D: not a bias
    graph, _ = pt.apply(fuse_contractions, y, feeds=[x])
    assert "_FusedMatMul" not in pt.ops(graph)


def test_intermediate_with_another_reader_blocks_fusion_but_shape_readers_move(pt):
    x = tf.placeholder(tf.float32, [None, 5])
    mm = tf.matmul(x, tf.ones([5, 4]))
    z = tf.nn.relu(mm + tf.ones([4]))
    shape = tf.shape(mm)                    # moved to the fused output
    graph, _ = pt.apply(fuse_contractions, [z, shape], feeds=[x])
    assert pt.ops(graph)["_FusedMatMul"] == 1
    assert next(n for n in graph if n.op == "Shape").inputs == [(z.op.name, 0)]
    other = tf.matmul(x, tf.ones([5, 4]), name="kept")
    w = tf.nn.relu(other + tf.ones([4]))
    graph, _ = pt.apply(fuse_contractions, [w, other * 2.0], feeds=[x])
    assert "_FusedMatMul" not in pt.ops(graph)
    pt.compare([z, shape], {x: _data(2, 5)})


def test_fetched_intermediate_is_not_fused_away(pt):
    x = tf.placeholder(tf.float32, [2, 5])
    biased = tf.nn.bias_add(tf.matmul(x, tf.ones([5, 4])), tf.ones([4]), name="biased")
    y = tf.nn.relu(biased)
    graph, _ = pt.apply(fuse_contractions, [y, biased], feeds=[x])
    (fused,) = [n for n in graph if n.op == "_FusedMatMul"]
    assert fused.name == "biased" and fused.attrs["fused_ops"] == ["BiasAdd"]
    assert "Relu" in pt.ops(graph)
    pt.compare([y, biased], {x: _data(2, 5)})


@pytest.mark.parametrize("activation", ["Relu", "Elu", None])
@pytest.mark.parametrize("in_shape,k,stride", [
    ((2, 7, 7, 3), 3, 2),       # one block of output rows
    ((3, 20, 20, 3), 5, 1),     # many blocks: the epilogue runs per block on the pool
    ((2, 9, 9, 6), 1, 1),       # 1x1: a plain matmul, epilogue after
])
def test_conv2d_bias_activation_is_one_node_and_exact(pt, activation, in_shape, k, stride):
    x = tf.placeholder(tf.float32, in_shape)
    w = tf.constant(_data(k, k, in_shape[-1], 4, seed=1))
    h = tf.nn.conv2d(x, w, [1, stride, stride, 1], "SAME") + tf.constant(_data(4, seed=2))
    y = ACTIVATIONS[activation](h) if activation else h
    graph, _ = pt.apply(fuse_contractions, y, feeds=[x])
    (fused,) = [n for n in graph if n.op == "_FusedConv2D"]
    assert fused.attrs["fused_ops"] == ["BiasAdd"] + ([activation] if activation else [])
    assert fused.attrs["strides"] == [1, stride, stride, 1]
    pt.compare(y, {x: _data(*in_shape, seed=3)})


@pytest.mark.skipif("FusedBatchNormV3" not in OP_REGISTRY and "FusedBatchNorm" not in
                    OP_REGISTRY, reason="fused batch norm is not defined yet (Training issue)")
def test_conv2d_inference_batch_norm_is_folded_into_the_filter(pt):
    x = tf.placeholder(tf.float32, [2, 6, 6, 3])
    w = tf.constant(_data(3, 3, 3, 4, seed=1))
    scale, offset = tf.constant(_data(4, seed=2) + 2), tf.constant(_data(4, seed=3))
    mean, var = tf.constant(_data(4, seed=4)), tf.constant(np.abs(_data(4, seed=5)) + 0.5)
    h = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
    y, _, _ = tf.nn.fused_batch_norm(h, scale, offset, mean, var, epsilon=1e-3,
                                     is_training=False)
    y = tf.nn.relu(y)
    graph, _ = pt.apply(fuse_contractions, y, feeds=[x])
    (fused,) = [n for n in graph if n.op == "_FusedConv2D"]
    assert fused.attrs["fused_ops"] == ["FusedBatchNorm", "Relu"]
    pt.compare(y, {x: _data(2, 6, 6, 3, seed=6)}, rtol=1e-5, atol=1e-5)


def test_training_step_with_fused_matmuls_matches(pt):
    x = tf.placeholder(tf.float32, [None, 6])
    w1 = tf.Variable(_data(6, 8, seed=1))
    b1 = tf.Variable(np.zeros(8, np.float32))
    w2 = tf.Variable(_data(8, 3, seed=2))
    h = tf.nn.relu(tf.matmul(x, w1) + b1)
    out = tf.matmul(h, w2)
    loss = tf.reduce_sum(out * out)
    grads = tf.gradients(loss, [w1, b1, w2])
    init = tf.global_variables_initializer()
    with tf.Session() as sess:
        sess.run(init)
        _, (gd,) = pt.partition_graphs(sess, grads, {x: _data(4, 6, seed=3)})
    assert "_FusedMatMul" in [n.op for n in gd.node]
    pt.compare(grads, {x: _data(4, 6, seed=3)}, init=init)
