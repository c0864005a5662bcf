"""tf.train.QueueRunner, add_queue_runner and start_queue_runners."""
import logging

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.bounded import drain

BOUNDED = tf.RunOptions(timeout_in_ms=5000)


def _drain(sess, tensor):
    return drain(sess, tensor, options=BOUNDED)


def test_runner_threads_move_every_element_then_close_the_queue():
    with tf.Graph().as_default():
        source = tf.FIFOQueue(64, [tf.int32], shapes=[[]])
        fill, close_source = source.enqueue_many([np.arange(40, dtype=np.int32)]), \
            source.close()
        q = tf.FIFOQueue(4, [tf.int32], shapes=[[]])
        runner = tf.train.QueueRunner(q, [q.enqueue([source.dequeue()])] * 3)
        tf.train.add_queue_runner(runner)
        assert tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS) == [runner]
        assert runner.name == q.name and runner.close_op.type == "QueueCloseV2"
        assert runner.cancel_op.get_attr("cancel_pending_enqueues")
        assert runner.queue_closed_exception_types == (tf.errors.OutOfRangeError,)
        item = q.dequeue()
        with tf.Session() as sess:
            sess.run(fill)
            sess.run(close_source)
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            assert len(threads) == 4   # three enqueue threads and the close-on-stop thread
            assert runner.create_threads(sess, coord) == []   # already running
            assert sorted(_drain(sess, item)) == list(range(40))
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)


def test_stop_request_cancels_a_blocked_enqueue():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(2, [tf.int32], shapes=[[]])
        runner = tf.train.QueueRunner(q, [q.enqueue([1])])
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = runner.create_threads(sess, coord, daemon=True, start=True)
            while sess.run(q.size()) < 2:
                pass
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)
            assert sess.run(q.is_closed())


def test_errors_go_to_the_coordinator_or_exceptions_raised():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(2, [tf.float32], shapes=[[]])
        bad = tf.placeholder(tf.float32, [])   # never fed: the enqueue fails
        runner = tf.train.QueueRunner(q, [q.enqueue([bad])])
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = runner.create_threads(sess, coord, start=True)
            with pytest.raises(tf.errors.InvalidArgumentError):
                coord.join(threads, stop_grace_period_secs=5)
            (thread,) = runner.create_threads(sess)   # no coordinator: the thread re-raises
            with pytest.raises(tf.errors.InvalidArgumentError):
                thread.run()
            assert len(runner.exceptions_raised) == 1


def test_start_queue_runners_needs_a_session_and_warns_without_runners(caplog):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="No default session"):
            tf.train.start_queue_runners()
        with pytest.raises(TypeError, match="tf.Session"):
            tf.train.start_queue_runners(sess=object())
        with tf.Session() as sess, caplog.at_level(logging.WARNING, "tensorweave"):
            assert tf.train.start_queue_runners(sess) == []
    assert any("no queue runners" in r.getMessage() for r in caplog.records)


def _runner_graph():
    """A queue fed by a two-thread runner from a counter variable; (runner, dequeued)."""
    q = tf.FIFOQueue(10, tf.float32, name="q")
    counter = tf.Variable(0.0, name="c")
    runner = tf.train.QueueRunner(q, [q.enqueue(tf.assign_add(counter, 1.0))] * 2)
    tf.train.add_queue_runner(runner)
    return runner, tf.identity(q.dequeue(), name="x")


def test_runner_to_proto_names_its_ops_as_tensorflow_does():
    with tf.Graph().as_default():
        runner, _ = _runner_graph()
        proto = runner.to_proto()
        # TensorFlow 2.21's QueueRunnerDef for the same graph, field for field.
        assert proto.queue_name == "q"
        assert list(proto.enqueue_op_name) == ["q_enqueue", "q_enqueue"]
        assert (proto.close_op_name, proto.cancel_op_name) == ("q_Close", "q_Close_1")
        assert list(proto.queue_closed_exception_types) == [tf.errors.OUT_OF_RANGE]
        assert runner.to_proto(export_scope="other") is None
        with pytest.raises(ValueError, match="mutually exclusive"):
            tf.train.QueueRunner(runner.queue, runner.enqueue_ops, queue_runner_def=proto)


def test_an_imported_meta_graph_starts_its_queue_runners(tmp_path):
    path = str(tmp_path / "m.meta")
    with tf.Graph().as_default():
        _runner_graph()
        tf.train.export_meta_graph(path)
    with tf.Graph().as_default() as graph:
        tf.train.import_meta_graph(path, import_scope="imp")
        (runner,) = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
        assert isinstance(runner, tf.train.QueueRunner) and runner.name == "imp/q"
        assert [op.name for op in runner.enqueue_ops] == ["imp/q_enqueue"] * 2
        assert (runner.close_op.name, runner.cancel_op.name) == ("imp/q_Close", "imp/q_Close_1")
        assert runner.queue_closed_exception_types == (tf.errors.OutOfRangeError,)
        x = graph.get_tensor_by_name("imp/x:0")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            values = [sess.run(x, options=BOUNDED) for _ in range(5)]
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)
        assert len(set(values)) == 5 and min(values) >= 1
