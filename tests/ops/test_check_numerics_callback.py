"""tf.debugging.enable_check_numerics on graphs: every float output made while it is on is
checked, inside loops and gradients too, with TensorFlow 2.21's message (its run of the first
test's program fails at the same node, after the same first result)."""
import threading

import numpy as np
import pytest

import tensorweave as tf


@pytest.fixture
def checking():
    tf.debugging.enable_check_numerics()
    yield
    tf.debugging.disable_check_numerics()


def _checks(graph):
    return [op for op in graph.get_operations() if op.type == "CheckNumericsV2"]


def test_a_nan_inside_a_loop_names_the_op_and_the_users_line(checking):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2], name="x")

        def body(i, v):
            return i + 1, tf.log(v - 1.5, name="loglog")
        y = tf.while_loop(lambda i, v: i < 3, body, [0, x])[1]
        total = tf.reduce_sum(y * 2.0)
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(total, {x: [1000.0, 2000.0]}), -5.700625,
                                       rtol=1e-5)
            with pytest.raises(tf.errors.InvalidArgumentError) as caught:
                sess.run(total, {x: [3.0, 3.0]})
    error = caught.value
    assert error.op.name == "while/loglog/CheckNumericsV2"
    message = error.message
    assert '!!! Detected Infinity or NaN in output 0 of graph op "Log" (# of outputs: 1) !!!' \
        in message
    assert "  dtype: <dtype: 'float32'>\n  shape: (2,)" in message
    assert 'Input tensor: Tensor("while/sub:0", shape=(2,), dtype=float32)' in message
    assert ' -> |   return i + 1, tf.log(v - 1.5, name="loglog")' in message
    assert " : Tensor had NaN values" in message


def test_gradients_and_updates_are_checked(checking):
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 4.0])
        loss = tf.reduce_sum(tf.sqrt(w))
        train = tf.train.GradientDescentOptimizer(10.0).minimize(loss)
        with tf.Session() as sess:
            sess.run(w.initializer)
            sess.run(train)   # w becomes [-4, 1.5]: its square root is NaN
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match='graph op "(Sqrt|SqrtGrad)"'):
                sess.run(train)
        grads = [op for op in _checks(tf.get_default_graph())
                 if op.name.startswith("gradients/")]
        assert grads, "the gradient's ops are checked too"


def test_only_float_outputs_of_computing_ops_are_checked(checking):
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [3])
        n = tf.placeholder(tf.int32, [])
        r = tf.reshape(x, [1, 3])
        y = tf.exp(r)
        s = n * 2
    checked = {op.inputs[0].op.name for op in _checks(g)}
    assert checked == {"Exp"}
    assert y.op.type == "CheckNumericsV2" and r.op.type == "Reshape" and s.op.type == "Mul"
    with tf.Session(graph=g) as sess:   # placeholders stay feedable
        np.testing.assert_allclose(sess.run(y, {x: [0.0, 0.0, 0.0]}), [[1.0, 1.0, 1.0]])
        with pytest.raises(tf.errors.InvalidArgumentError, match="Tensor had \\+Inf values"):
            sess.run(y, {x: [1000.0, 0.0, 0.0]})


def test_enabling_is_idempotent_per_thread_and_disabling_stops_it():
    tf.debugging.enable_check_numerics()
    tf.debugging.enable_check_numerics()
    try:
        with tf.Graph().as_default() as g:
            tf.exp(tf.constant([1.0]))
            other = []
            thread = threading.Thread(
                target=lambda: other.append(_made_on_this_thread(g)))
            thread.start()
            thread.join()
        assert len(_checks(g)) == 1 and other == [0]
    finally:
        tf.debugging.disable_check_numerics()
    tf.debugging.disable_check_numerics()   # again: harmless
    with tf.Graph().as_default() as g:
        tf.exp(tf.constant([1.0]))
    assert _checks(g) == []


def _made_on_this_thread(graph):
    with graph.as_default():
        tf.exp(tf.constant([2.0]), name="elsewhere")
    return sum(op.inputs[0].op.name == "elsewhere" for op in _checks(graph))
