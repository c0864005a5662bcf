"""Constant folding: structure after the pass alone, and results with optimizations on vs off."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime.passes.constant_folding import fold_constants


def test_constant_subgraph_becomes_one_constant(pt):
    a = tf.constant(2.0)
    b = tf.constant([1.0, 2.0])
    y = tf.identity(a * b + 1.0, name="y")
    graph, opts = pt.apply(fold_constants, y)
    assert pt.ops(graph) == {"Const": 1, "_Retval": 1}
    assert graph.nodes["y"].op == "Const"   # the fetched node keeps its name
    np.testing.assert_array_equal(graph.nodes["y"].attrs["value"], [3.0, 5.0])
    assert "fold" in opts.log.kinds()
    pt.compare(y)


def test_folded_value_is_bit_identical_to_the_kernels(pt):
    x = tf.constant(np.linspace(-3, 3, 7).astype(np.float32))
    y = tf.sigmoid(tf.exp(x) * 0.3) / tf.constant(7.0)
    graph, _ = pt.apply(fold_constants, y)
    assert pt.ops(graph) == {"Const": 1, "_Retval": 1}
    pt.compare(y)  # exact


def test_shape_size_rank_of_fully_defined_shapes(pt):
    x = tf.placeholder(tf.float32, [2, 3])
    s, n, r = tf.shape(x), tf.size(x), tf.rank(x)
    graph, _ = pt.apply(fold_constants, [s, n, r], feeds=[x])
    assert pt.ops(graph)["Const"] == 3 and "Shape" not in pt.ops(graph)
    assert "_Arg" in pt.ops(graph)        # the feed is kept
    feed = {x: np.zeros((2, 3), np.float32)}
    plain, optimized = pt.compare([s, n, r], feed)
    assert optimized[0].dtype == np.int32 and optimized[0].tolist() == [2, 3]


def test_shape_with_unknown_dimension_is_not_folded(pt):
    x = tf.placeholder(tf.float32, [None, 3])
    s = tf.shape(x)
    r = tf.rank(x)   # the rank is known, so it folds
    graph, _ = pt.apply(fold_constants, [s, r], feeds=[x])
    assert pt.ops(graph)["Shape"] == 1
    assert "Rank" not in pt.ops(graph)
    for batch in (1, 4):
        out = pt.run([s, r], {x: np.zeros((batch, 3), np.float32)})
        assert out[0].tolist() == [batch, 3] and out[1] == 2


def test_reshape_cast_concat_of_constants_fold(pt):
    c = tf.reshape(tf.cast(tf.constant([1, 2, 3, 4]), tf.float32), [2, 2])
    d = tf.concat([c, tf.constant([[5.0, 6.0]])], axis=0)
    graph, _ = pt.apply(fold_constants, d)
    assert pt.ops(graph) == {"Const": 1, "_Retval": 1}
    pt.compare(d)


def test_partial_concat_merges_adjacent_constants(pt):
    x = tf.placeholder(tf.float32, [None, 2])
    d = tf.concat([tf.ones([1, 2]), tf.zeros([2, 2]), x, tf.ones([1, 2])], axis=0)
    graph, opts = pt.apply(fold_constants, d, feeds=[x])
    concat = [n for n in graph if n.op == "ConcatV2"]
    assert len(concat) == 1 and concat[0].attrs["N"] == 3
    assert "fold_partial_concat" in opts.log.kinds()
    pt.compare(d, {x: np.full((2, 2), 7.0, np.float32)})


def test_feeding_overrides_a_foldable_value(pt):
    two = tf.constant(2.0, name="two")
    y = two * 3.0 + 1.0
    assert pt.run(y) == 7.0
    assert pt.run(y, {two: 5.0}) == 16.0
    graph, _ = pt.apply(fold_constants, y, feeds=[two])
    assert "_Arg" in pt.ops(graph) and "Mul" in pt.ops(graph)


def test_stateful_ops_are_never_folded(pt):
    r = tf.random_uniform([3], seed=1) + tf.constant(1.0)
    graph, _ = pt.apply(fold_constants, r)
    assert "RandomUniform" in pt.ops(graph) and "AddV2" in pt.ops(graph)
    with tf.Session() as sess:
        assert not np.array_equal(sess.run(r), sess.run(r))


def test_size_cap_keeps_huge_constants_unmaterialized(pt):
    big = tf.zeros([1000, 1000]) + 1.0       # 4 MB
    graph, opts = pt.apply(fold_constants, big, max_folded_bytes=1 << 20)
    assert "Fill" in pt.ops(graph) or "AddV2" in pt.ops(graph)
    assert "skip_fold_too_large" in opts.log.kinds()
    graph, _ = pt.apply(fold_constants, big)  # the 10 MiB default allows it
    assert pt.ops(graph) == {"Const": 1, "_Retval": 1}
    cfg = pt.config()
    cfg.graph_options.optimizer_options.max_folded_constant_in_bytes = 1 << 20
    assert pt.run(big, cfg=cfg).sum() == 1e6


def test_large_fill_read_only_by_an_assign_is_not_kept_as_a_constant(pt):
    big = tf.Variable(tf.zeros([300, 300]))            # 360 KB: Assign keeps its own copy
    small = tf.Variable(tf.zeros([10]))
    graph, opts = pt.apply(fold_constants, [], targets=[big.initializer, small.initializer])
    assert "skip_fold_stored_fill" in opts.log.kinds()
    assert pt.ops(graph)["Fill"] == 1                  # only the large one stays a Fill
    both = tf.zeros([300, 300]) + 1.0                  # read by a pure op: folded as before
    graph, _ = pt.apply(fold_constants, both)
    assert pt.ops(graph) == {"Const": 1, "_Retval": 1}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert not sess.run(big).any() and sess.run(big).shape == (300, 300)


def test_kernel_errors_are_left_for_the_run(pt):
    y = tf.constant(3) // tf.constant(0)
    graph, opts = pt.apply(fold_constants, y)
    assert "FloorDiv" in pt.ops(graph)
    assert "skip_fold_kernel_error" in opts.log.kinds()
    with pytest.raises(tf.errors.InvalidArgumentError, match="division by zero"):
        pt.run(y)


def test_folded_node_keeps_its_control_dependencies(pt):
    v = tf.Variable(0, name="v")
    inc = tf.assign_add(v, 1)
    with tf.control_dependencies([inc]):
        c = tf.constant(2) * tf.constant(3)
    graph, _ = pt.apply(fold_constants, c)
    (const,) = [n for n in graph if n.op == "Const" and n.control_inputs]
    assert inc.op.name in const.control_inputs
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(c) == 6 and sess.run(c) == 6
        assert sess.run(v) == 2          # the assign ran once per run


def test_fetched_constants_are_copies(pt):
    y = tf.zeros([3]) + 1.0
    with tf.Session() as sess:
        first = sess.run(y)
        first += 100.0                      # the user's array: the graph must not see it
        np.testing.assert_array_equal(sess.run(y), [1.0, 1.0, 1.0])
