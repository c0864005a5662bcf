"""Common subexpression elimination: identical pure nodes merge; stateful ones never do."""
import numpy as np

import tensorweave as tf
from tensorweave.runtime.passes.cse import eliminate_common_subexpressions as cse


def test_identical_nodes_merge_and_merges_cascade(pt):
    x = tf.placeholder(tf.float32, [2, 3])
    w = tf.constant(np.ones((3, 4), np.float32))
    a = tf.tanh(tf.matmul(x, w) + 1.0)
    b = tf.tanh(tf.matmul(x, w) + 1.0)
    y = a - b
    graph, opts = pt.apply(cse, y, feeds=[x])
    assert pt.ops(graph)["MatMul"] == 1 and pt.ops(graph)["Tanh"] == 1
    sub = next(n for n in graph if n.op == "Sub")
    assert sub.inputs[0] == sub.inputs[1]
    plain, optimized = pt.compare(y, {x: np.array([[np.nan, 1, 2], [3, 4, 5]], np.float32)})
    assert np.isnan(optimized[0]).all()    # NaN - NaN stays NaN


def test_commutative_operands_in_either_order_merge(pt):
    x = tf.placeholder(tf.float32, [3])
    z = tf.placeholder(tf.float32, [3])
    y = tf.add(x, z) * tf.add(z, x) + tf.subtract(x, z) * tf.subtract(z, x)
    graph, _ = pt.apply(cse, y, feeds=[x, z])
    assert pt.ops(graph)["AddV2"] == 2 and pt.ops(graph)["Sub"] == 2   # sub is not commutative
    pt.compare(y, {x: np.array([1, 2, 3], np.float32), z: np.array([0.5, -1, 4], np.float32)})


def test_string_add_operands_in_either_order_do_not_merge(pt):
    # Add concatenates strings: not commutative (TensorFlow marks only AddV2 so)
    a = tf.placeholder(tf.string, [])
    b = tf.placeholder(tf.string, [])
    fetches = [tf.add(a, b), tf.add(b, a), tf.add(a, "x"), tf.add("x", a)]
    graph, _ = pt.apply(cse, fetches, feeds=[a, b])
    assert pt.ops(graph)["Add"] == 4
    plain, optimized = pt.compare(fetches, {a: "a", b: "b"})
    assert [bytes(v) for v in optimized] == [b"ab", b"ba", b"ax", b"xa"]


def test_random_ops_never_merge(pt):
    r1 = tf.random_uniform([4], seed=3)
    r2 = tf.random_uniform([4], seed=3)
    graph, _ = pt.apply(cse, [r1, r2])
    assert pt.ops(graph)["RandomUniform"] == 2
    a, b = pt.run([r1, r2])
    assert np.array_equal(a, b)      # same seed: same stream, still two draws per run


def test_assign_adds_never_merge(pt):
    v = tf.Variable(0)
    both = tf.group(tf.assign_add(v, 1), tf.assign_add(v, 1))
    graph, _ = pt.apply(cse, [], targets=[both])
    assert pt.ops(graph)["AssignAdd"] == 2
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(both)
        assert sess.run(v) == 2


def test_reads_ordered_by_different_control_inputs_do_not_merge(pt):
    v = tf.Variable(1.0)
    before = v * 2.0
    inc = tf.assign_add(v, 1.0)
    with tf.control_dependencies([inc]):
        after = v * 2.0
    graph, _ = pt.apply(cse, [before, after])
    assert pt.ops(graph)["Mul"] == 2


def test_fetched_duplicates_keep_their_names(pt):
    x = tf.placeholder(tf.float32, [2])
    a = tf.square(x, name="a")
    b = tf.square(x, name="b")
    graph, _ = pt.apply(cse, [a, b], feeds=[x])
    assert {n.inputs[0][0] for n in graph if n.op == "_Retval"} == {"a", "b"}
    assert pt.ops(graph)["Square"] == 1 and pt.ops(graph)["Identity"] == 1
    plain, optimized = pt.compare([a, b], {x: np.array([3.0, -1.0], np.float32)})


def test_equal_constants_merge(pt):
    x = tf.placeholder(tf.float32, [2])
    y = x * tf.constant(2.0) + x * tf.constant(2.0)
    graph, _ = pt.apply(cse, y, feeds=[x])
    assert pt.ops(graph)["Const"] == 1 and pt.ops(graph)["Mul"] == 1
