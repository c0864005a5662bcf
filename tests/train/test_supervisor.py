"""tf.train.Supervisor and basic_train_loop: managed sessions, services threads, restart."""
import time

import numpy as np
import pytest
from tensorboard.backend.event_processing import event_accumulator as ea

import tensorweave as tf


def _model():
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(1.0, name="w")
    train = tf.group(tf.assign_add(step, 1), tf.assign(w, w * 2.0))
    tf.summary.scalar("w_value", w)
    return step, w, train


def test_managed_session_initializes_then_restores(tmp_path):
    with tf.Graph().as_default() as g:
        step, w, train = _model()
        # No checkpoint thread here (its first save races the training steps under load; the
        # thread is covered by test_standard_services_save_checkpoints_and_summaries).
        sv = tf.train.Supervisor(logdir=str(tmp_path), save_summaries_secs=0.05,
                                 save_model_secs=None)
        assert g.finalized and sv.is_chief and sv.global_step is step
        assert sv.save_path == str(tmp_path / "model.ckpt")
        with sv.managed_session() as sess:
            for _ in range(3):
                sess.run(train)
            sv.saver.save(sess, sv.save_path, global_step=sv.global_step)
            sv.summary_computed(sess, sess.run(sv.summary_op))
        assert sv.should_stop()
    acc = ea.EventAccumulator(str(tmp_path))
    acc.Reload()
    assert 3 in [s.step for s in acc.Scalars("w_value")]
    assert acc.Graph() is not None
    with tf.Graph().as_default():
        step, w, train = _model()
        sv = tf.train.Supervisor(logdir=str(tmp_path), save_summaries_secs=None,
                                 save_model_secs=None)
        with sv.managed_session() as sess:
            assert sess.run(step) == 3 and sess.run(w) == 8.0


def _saved_global_step(logdir):
    """The global step of the latest checkpoint in `logdir`, or None before the first."""
    if tf.train.latest_checkpoint(str(logdir)) is None:
        return None
    return tf.train.load_variable(str(logdir), "global_step")


def test_standard_services_save_checkpoints_and_summaries(tmp_path):
    with tf.Graph().as_default():
        step, w, train = _model()
        sv = tf.train.Supervisor(logdir=str(tmp_path), save_summaries_secs=0.05,
                                 save_model_secs=0.05)
        with sv.managed_session() as sess:
            sess.run(train)
            # The services run in the background: wait (bounded, not a fixed 0.3 s that a
            # loaded machine could miss) for the checkpoint thread to save after the step.
            deadline = time.monotonic() + 10
            while _saved_global_step(tmp_path) != 1:
                assert time.monotonic() < deadline, "no checkpoint of step 1 was saved"
                assert sv.coord.wait_for_stop(0.05) is False
    acc = ea.EventAccumulator(str(tmp_path))
    acc.Reload()
    assert acc.Scalars("w_value") and acc.Scalars("global_step/sec")
    assert (tmp_path / "graph.pbtxt").exists()


def test_errors_in_the_block_are_raised_after_stopping():
    with tf.Graph().as_default():
        _model()
        sv = tf.train.Supervisor(logdir=None)
        with pytest.raises(ValueError, match="inside the block"):
            with sv.managed_session():
                raise ValueError("inside the block")
        assert sv.should_stop()
        with sv.managed_session():  # OutOfRangeError ends the block quietly
            raise tf.errors.OutOfRangeError(None, None, "input exhausted")


def test_loop_and_request_stop():
    with tf.Graph().as_default():
        step, _, train = _model()
        sv = tf.train.Supervisor(logdir=None)
        with sv.managed_session() as sess:
            ticks = []
            sv.loop(0.01, lambda: ticks.append(1) if len(ticks) < 3 else sv.request_stop())
            assert sv.coord.wait_for_stop(5.0)
            assert len(ticks) == 3 and sv.should_stop()
            assert sess.run(step) == 0


def test_basic_train_loop_retries_after_aborted():
    with tf.Graph().as_default():
        step, _, train = _model()
        sv = tf.train.Supervisor(logdir=None)
        calls = []

        def train_step(sess, limit):
            calls.append(int(sess.run(step)))
            if len(calls) == 2:
                raise tf.errors.AbortedError(None, None, "preempted")
            sess.run(train)
            if len(calls) >= limit:
                sv.request_stop()

        tf.train.basic_train_loop(sv, train_step, args=(5,))
        # Without a logdir nothing is restored: the second session starts from step 0.
        assert calls == [0, 1, 0, 1, 2]


def test_supervisor_defaults_and_explicit_none():
    with tf.Graph().as_default() as g:
        tf.Variable(np.zeros(2, np.float32))
        sv = tf.train.Supervisor(logdir=None, summary_op=None, saver=None, global_step=None)
        assert sv.summary_op is None and sv.saver is None and sv.global_step is None
        assert g.get_collection(tf.GraphKeys.INIT_OP) == [sv.init_op]
        assert sv.ready_for_local_init_op is None
        with sv.managed_session() as sess:
            assert sess.run(sv.ready_op).size == 0
            with pytest.raises(RuntimeError, match="requires a summary writer"):
                sv.summary_computed(sess, b"")


def test_non_chief_supervisor():
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            tf.Variable(1.0)
        sv = tf.train.Supervisor(is_chief=False, logdir="/nonexistent", recovery_wait_secs=0.01)
        assert sv.summary_writer is None and sv.save_path is None
        with pytest.raises(RuntimeError, match="Only chief supervisor"):
            sv.start_standard_services(None)
    with tf.Graph().as_default():
        tf.Variable(1.0)
        with pytest.raises(ValueError, match="all Variables must have their device set"):
            tf.train.Supervisor(is_chief=False)


def test_camel_case_names_of_the_first_releases():
    # Programs written for TensorFlow 0.x call sv.PrepareSession, sv.Loop, sv.ShouldStop, ...
    with tf.Graph().as_default():
        step, _, train = _model()
        sv = tf.train.Supervisor(logdir=None)
        sess = sv.PrepareSession()
        ticks = []
        sv.Loop(0.01, lambda: ticks.append(1) if len(ticks) < 2 else sv.RequestStop())
        sv.WaitForStop()
        assert len(ticks) == 2 and sv.ShouldStop()
        sv.Stop()
        assert sess.run(step) == 0
        sess.close()
    assert tf.train.Supervisor.StopOnException is tf.train.Supervisor.stop_on_exception
    assert tf.train.Supervisor.SummaryComputed is tf.train.Supervisor.summary_computed
    assert tf.train.Supervisor.StartQueueRunners is tf.train.Supervisor.start_queue_runners
    assert tf.train.Supervisor.StartStandardServices is \
        tf.train.Supervisor.start_standard_services
    assert tf.train.MonitoredSession.StepContext is tf.train.SingularMonitoredSession.StepContext
