"""While loops whose nodes sit on several virtual devices: values cross once per iteration
through keys naming the frame instance and iteration, and each device holding part of a loop
iterates in step with it through a control loop (runtime/loop_frames.py). Every result is
checked against the same graph on one device or against NumPy; every run is bounded, so a
transfer that never arrives fails the test instead of hanging it."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.bounded import run_bounded

TWO_CPUS = tf.ConfigProto(device_count={"CPU": 2})


def _run(fetches, feeds=None, config=TWO_CPUS, init=False):
    with tf.Session(config=config) as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        return run_bounded(lambda: sess.run(fetches, feeds))


def _partition_ops(fetches):
    with tf.Session(config=TWO_CPUS) as sess:
        meta = tf.RunMetadata()
        run_bounded(lambda: sess.run(fetches, options=tf.RunOptions(
            output_partition_graphs=True), run_metadata=meta))
    return {g.node[0].device: g for g in meta.partition_graphs}


def test_a_loop_body_on_another_device():
    with tf.Graph().as_default():
        def body(i, a):
            with tf.device("/cpu:1"):
                return i + 1, a * 2.0
        out = tf.while_loop(lambda i, a: i < 3, body, [0, 1.0])
        assert _run(out) == (3, 8.0)
        parts = _partition_ops(out)
    assert len(parts) == 2
    for graph in parts.values():   # each device iterates its own control loop
        ops = [n.op for n in graph.node if "_control_loop" in n.name]
        assert sorted(ops) == ["Const", "Enter", "Identity", "Merge", "NextIteration",
                               "Switch"]
    frame_sends = [n for g in parts.values() for n in g.node
                   if n.op == "_Send" and n.attr["_frame"].s]
    assert {n.attr["_frame"].s for n in frame_sends} == {b"while/while_context"}


def test_zero_iterations_across_devices():
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])

        def body(i, a):
            with tf.device("/cpu:1"):
                return i + 1, a + 1.5
        out = tf.while_loop(lambda i, a: i < n, body, [0, 0.0])
        with tf.Session(config=TWO_CPUS) as sess:
            assert run_bounded(lambda: sess.run(out, {n: 0})) == (0, 0.0)
            assert run_bounded(lambda: sess.run(out, {n: 4})) == (4, 6.0)


def test_nested_loops_spanning_devices():
    def build():
        def outer(i, total):
            def inner(j, t):
                with tf.device("/cpu:1"):
                    step = tf.cast(i * 10 + j, tf.float32)
                return j + 1, t + step
            _, t = tf.while_loop(lambda j, t: j < i + 2, inner, [0, total])
            return i + 1, t
        return tf.while_loop(lambda i, t: i < 3, outer, [0, 0.0])
    expected = sum(i * 10 + j for i in range(3) for j in range(i + 2))
    with tf.Graph().as_default():
        assert _run(build()) == (3, expected)


def test_a_cond_inside_a_loop_spanning_devices():
    with tf.Graph().as_default():
        def body(i, a):
            def on_even():
                with tf.device("/cpu:1"):
                    return a + 1.0

            def on_odd():
                with tf.device("/cpu:0"):
                    return a * 2.0
            return i + 1, tf.cond(tf.equal(i % 2, 0), on_even, on_odd)
        out = tf.while_loop(lambda i, a: i < 5, body, [0, 1.0])
        a = 1.0
        for i in range(5):
            a = a + 1.0 if i % 2 == 0 else a * 2.0
        assert _run(out) == (5, a)


def test_many_iterations_in_parallel_across_devices():
    with tf.Graph().as_default():
        def body(i, a, b):
            with tf.device("/cpu:1"):
                a = a + tf.cast(i, tf.float32)
            with tf.device("/cpu:0"):
                b = b + 2.0 * a
            return i + 1, a, b
        out = tf.while_loop(lambda i, a, b: i < 200, body, [0, 0.0, 0.0],
                            parallel_iterations=32)
        a, b = 0.0, 0.0
        for i in range(200):
            a += i
            b += 2.0 * a
        assert _run(out) == (200, a, b)


def test_gradients_through_a_loop_spanning_devices():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3])

        def body(i, y):
            with tf.device("/cpu:1"):
                return i + 1, y * x
        _, y = tf.while_loop(lambda i, y: i < 4, body, [0, tf.ones([3], tf.float64)])
        grad = tf.gradients(tf.reduce_sum(y), x)[0]
        xs = np.array([0.5, -1.5, 2.0])
        value, g = _run([y, grad], {x: xs})
    np.testing.assert_allclose(value, xs ** 4)
    np.testing.assert_allclose(g, 4 * xs ** 3)


@pytest.mark.parametrize("moved", ["Enter", "NextIteration", "Merge", "Switch"])
def test_loop_nodes_moved_to_another_device(moved):
    """The ops of one kind on the other device: an Enter or NextIteration feeding another
    device is copied there (they deliver to another frame or iteration than the one they run
    in); the result is the one-device result."""
    with tf.Graph().as_default():
        out = tf.while_loop(lambda i, a: i < 6, lambda i, a: (i + 1, a * 1.5 + 1.0),
                            [0, 1.0])
        for op in tf.get_default_graph().get_operations():
            if op.type == moved:
                op._set_device("/cpu:1")
        a = 1.0
        for _ in range(6):
            a = a * 1.5 + 1.0
        assert _run(out) == (6, a)
        parts = _partition_ops(out)
    copies = {n.op for g in parts.values() for n in g.node
              if n.op in ("Enter", "NextIteration") and n.name.startswith("while/")
              and "/_" in n.name and "_control_loop" not in n.name}
    # a moved Merge or Switch takes its variable's other loop nodes along, but not its Enter
    assert copies == {"NextIteration": {"NextIteration"}}.get(moved, {"Enter"})


def test_an_error_inside_a_loop_spanning_devices_ends_the_step():
    with tf.Graph().as_default():
        def body(i, a):
            with tf.device("/cpu:1"):
                checked = tf.debugging.check_numerics(tf.log(a - 2.0), "log of the loop value")
            return i + 1, a - 1.0 + 0.0 * checked
        out = tf.while_loop(lambda i, a: i < 5, body, [0, 6.0])
        other = tf.constant(2.0) * 3.0
        with tf.Session(config=TWO_CPUS) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="log of the loop value"):
                run_bounded(lambda: sess.run(out))
            assert run_bounded(lambda: sess.run(other)) == 6.0   # the session still works


@pytest.mark.parametrize("use_resource", [False, True])
def test_rnn_training_with_variables_on_a_ps_device(use_resource):
    """dynamic_rnn under replica_device_setter: the cell's variables (and, with resource
    variables, their reads inside the loop) on the ps device, the loop on the worker's."""
    def losses(setter, config):
        with tf.Graph().as_default():
            tf.set_random_seed(1)
            tf.get_variable_scope().set_use_resource(use_resource)
            with tf.device(setter):
                x = tf.placeholder(tf.float32, [4, 5, 3])
                cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.LSTMCell(8),
                                                    tf.nn.rnn_cell.GRUCell(6)])
                out, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
                loss = tf.reduce_sum(tf.square(out))
                train = tf.train.AdamOptimizer(0.1).minimize(loss)
            xs = np.random.RandomState(0).rand(4, 5, 3)
            with tf.Session(config=config) as sess:
                sess.run(tf.global_variables_initializer())
                return [run_bounded(lambda: sess.run([loss, train], {x: xs}))[0]
                        for _ in range(5)]
    on_ps = losses(tf.train.replica_device_setter(ps_tasks=1, ps_device="/device:CPU:1",
                                                  worker_device="/device:CPU:0"), TWO_CPUS)
    one_device = losses("/device:CPU:0", None)
    np.testing.assert_allclose(on_ps, one_device, rtol=1e-6)
    assert on_ps[-1] < on_ps[0]


def test_an_embedding_lookup_inside_a_loop_reads_the_ps_each_iteration():
    """embedding_lookup colocates its gather with the table: inside a loop on the worker,
    the ids go to the ps and the rows come back every iteration."""
    def run(setter, config):
        with tf.Graph().as_default():
            with tf.device(setter):
                table = tf.get_variable("table", initializer=np.linspace(
                    -1, 1, 20, dtype=np.float32).reshape(10, 2))

                def body(i, acc):
                    row = tf.nn.embedding_lookup(table, tf.reshape(i % 10, [1]))
                    return i + 1, acc + tf.reduce_sum(tf.square(row - 0.3))
                _, total = tf.while_loop(lambda i, a: i < 7, body, [0, 0.0])
                train = tf.train.GradientDescentOptimizer(0.1).minimize(total)
            with tf.Session(config=config) as sess:
                sess.run(tf.global_variables_initializer())
                return [run_bounded(lambda: sess.run([total, train]))[0] for _ in range(3)], \
                    sess.run(table)
    totals, table = run(tf.train.replica_device_setter(
        ps_tasks=1, ps_device="/device:CPU:1", worker_device="/device:CPU:0"), TWO_CPUS)
    expected_totals, expected_table = run("/device:CPU:0", None)
    np.testing.assert_allclose(totals, expected_totals, rtol=1e-6)
    np.testing.assert_allclose(table, expected_table, rtol=1e-6)
