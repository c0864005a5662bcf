"""Layout: NCHW conv/pool/bias subgraphs run as NHWC, with transposes only at the boundary."""
import numpy as np

import tensorweave as tf
from tensorweave.runtime.passes.layout import LAYOUT_OPS, convert_layout

RTOL = 1e-5   # the NHWC and NCHW kernels may sum in different orders


def _nchw_net(x, seed=0):
    rng = np.random.RandomState(seed)
    w1 = tf.constant(rng.randn(3, 3, 2, 4).astype(np.float32))
    w2 = tf.constant(rng.randn(3, 3, 4, 4).astype(np.float32))
    b = tf.constant(rng.randn(4).astype(np.float32))
    h = tf.nn.conv2d(x, w1, [1, 1, 1, 1], "SAME", data_format="NCHW")
    h = tf.nn.relu(tf.nn.bias_add(h, b, data_format="NCHW"))
    h = tf.nn.max_pool(h, [1, 1, 2, 2], [1, 1, 2, 2], "VALID", data_format="NCHW")
    h = tf.nn.conv2d(h, w2, [1, 1, 1, 1], "VALID", data_format="NCHW")
    return tf.reduce_sum(tf.tanh(h) * 2.0, axis=[2, 3])


def _layout_nodes(graph):
    return [n for n in graph if n.op in LAYOUT_OPS]


def test_nchw_region_runs_as_nhwc_with_two_boundary_transposes(pt):
    x = tf.placeholder(tf.float32, [2, 2, 8, 8])
    y = _nchw_net(x)
    graph, opts = pt.apply(convert_layout, y, feeds=[x])
    assert all(n.attrs["data_format"] == "NHWC" for n in _layout_nodes(graph))
    # one transpose in (after the feed) and one out (before the reduction over H, W)
    assert pt.ops(graph)["Transpose"] == 2
    assert opts.log.kinds().count("to_nhwc") == 4     # conv, bias_add, max_pool, conv
    assert "join_nhwc_region" in opts.log.kinds()           # relu, tanh and mul join in
    assert graph.nodes["Conv2D"].output_shapes[0].as_list() == [2, 8, 8, 4]
    feed = {x: np.random.RandomState(1).randn(2, 2, 8, 8).astype(np.float32)}
    pt.compare(y, feed, rtol=RTOL, atol=1e-5)


def test_user_transposes_at_the_boundary_cancel(pt):
    nhwc = tf.placeholder(tf.float32, [2, 8, 8, 2])
    x = tf.transpose(nhwc, [0, 3, 1, 2])                 # the user's NHWC -> NCHW
    h = tf.nn.conv2d(x, tf.ones([3, 3, 2, 3]), [1, 1, 1, 1], "SAME", data_format="NCHW")
    y = tf.transpose(tf.nn.relu(h), [0, 2, 3, 1])        # and back
    graph, opts = pt.apply(convert_layout, y, feeds=[nhwc])
    assert "cancel_transposes" in opts.log.kinds()
    conv = next(n for n in graph if n.op == "Conv2D")
    assert ("_arg" in conv.inputs[0][0])                  # reads the feed directly
    feed = {nhwc: np.random.RandomState(2).randn(2, 8, 8, 2).astype(np.float32)}
    pt.compare(y, feed, rtol=RTOL, atol=1e-5)


def test_strided_and_padded_attrs_are_permuted(pt):
    x = tf.placeholder(tf.float32, [1, 3, 9, 7])
    w = tf.constant(np.random.RandomState(3).randn(3, 2, 3, 5).astype(np.float32))
    y = tf.nn.conv2d(x, w, [1, 1, 2, 3], "VALID", data_format="NCHW")
    z = tf.nn.avg_pool(y, [1, 1, 2, 1], [1, 1, 1, 1], "SAME", data_format="NCHW")
    graph, _ = pt.apply(convert_layout, [z * 1.0], feeds=[x])
    conv = next(n for n in graph if n.op == "Conv2D")
    assert conv.attrs["strides"] == [1, 2, 3, 1]
    feed = {x: np.random.RandomState(4).randn(1, 3, 9, 7).astype(np.float32)}
    pt.compare(z * 1.0, feed, rtol=RTOL, atol=1e-5)


def test_gradients_of_an_nchw_net_convert_too(pt):
    x = tf.placeholder(tf.float32, [2, 2, 6, 6])
    w = tf.Variable(np.random.RandomState(5).randn(3, 3, 2, 3).astype(np.float32))
    b = tf.Variable(np.zeros(3, np.float32))
    h = tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", data_format="NCHW"), b,
                       data_format="NCHW")
    h = tf.nn.max_pool(tf.nn.relu(h), [1, 1, 2, 2], [1, 1, 2, 2], "VALID", data_format="NCHW")
    loss = tf.reduce_sum(h * h)
    dw, db, dx = tf.gradients(loss, [w, b, x])
    fetches = [dw, db, tf.reduce_sum(dx * dx)]
    feed = {x: np.random.RandomState(6).randn(2, 2, 6, 6).astype(np.float32)}
    init = tf.global_variables_initializer()
    with tf.Session() as sess:
        sess.run(init)
        _, (graph_def,) = pt.partition_graphs(sess, fetches, feed)
    formats = {n.name: n.attr["data_format"].s for n in graph_def.node
               if n.op in LAYOUT_OPS or n.op.startswith("_Fused")}
    assert formats and all(f == b"NHWC" for f in formats.values()), formats
    ops = [n.op for n in graph_def.node]
    assert "Conv2DBackpropInput" in ops and "_FusedMaxPoolGradReluGrad" in ops   # NHWC, fused
    # the feed enters, dx leaves for the reduction, and the all-ones gradient of the first
    # reduction enters (float x * ones is kept: the Mul flushes denormals, see arithmetic.py)
    assert ops.count("Transpose") == 3
    pt.compare(fetches, feed, rtol=1e-4, atol=1e-4, init=init)


def test_nhwc_graphs_and_fetched_nodes_are_left_alone(pt):
    x = tf.placeholder(tf.float32, [1, 4, 4, 2])
    y = tf.nn.conv2d(x, tf.ones([1, 1, 2, 2]), [1, 1, 1, 1], "SAME")
    graph, opts = pt.apply(convert_layout, y, feeds=[x])
    assert opts.log.count == 0
    x2 = tf.placeholder(tf.float32, [1, 2, 4, 4])
    fetched = tf.nn.conv2d(x2, tf.ones([1, 1, 2, 2]), [1, 1, 1, 1], "SAME", data_format="NCHW")
    graph, opts = pt.apply(convert_layout, fetched, feeds=[x2])
    assert next(n for n in graph if n.op == "Conv2D").attrs["data_format"] == "NCHW"


def test_nchw_batch_norm_training_and_its_gradient(pt):
    x = tf.placeholder(tf.float32, [2, 3, 5, 5])
    scale = tf.Variable(np.array([1.0, 2.0, 0.5], np.float32))
    offset = tf.Variable(np.array([0.1, -0.2, 0.0], np.float32))
    h = tf.nn.conv2d(x, tf.ones([3, 3, 3, 3]) * 0.1, [1, 1, 1, 1], "SAME", data_format="NCHW")
    y, mean, var = tf.nn.fused_batch_norm(h, scale, offset, data_format="NCHW",
                                          is_training=True)
    loss = tf.reduce_sum(tf.nn.relu(y) * tf.range(5.0))
    grads = tf.gradients(loss, [scale, offset, x])
    init = tf.global_variables_initializer()
    feed = {x: np.random.RandomState(7).randn(2, 3, 5, 5).astype(np.float32)}
    fetches = [mean, var] + [tf.reduce_sum(g * g) for g in grads]
    with tf.Session() as sess:
        sess.run(init)
        _, (graph_def,) = pt.partition_graphs(sess, fetches, feed)
    norms = [n for n in graph_def.node if n.op.startswith("FusedBatchNorm")]
    assert norms and all(n.attr["data_format"].s == b"NHWC" for n in norms)
    pt.compare(fetches, feed, rtol=1e-4, atol=1e-4, init=init)
