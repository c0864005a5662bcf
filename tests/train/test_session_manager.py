"""tf.train.SessionManager: prepare (restore or initialize), recover, wait; readiness checks."""
import numpy as np
import pytest

import tensorweave as tf


def _model():
    v = tf.Variable([1.0, 2.0], name="v")
    local = tf.Variable(5.0, name="local", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    return v, local


def _manager(local_init=True, recovery_wait_secs=0.01):
    return tf.train.SessionManager(
        ready_op=tf.report_uninitialized_variables(),
        local_init_op=tf.local_variables_initializer() if local_init else None,
        ready_for_local_init_op=(tf.report_uninitialized_variables(tf.global_variables())
                                 if local_init else None),
        recovery_wait_secs=recovery_wait_secs)


def test_prepare_session_initializes_without_checkpoint(tmp_path):
    with tf.Graph().as_default():
        v, local = _model()
        sm = _manager()
        sess = sm.prepare_session("", init_op=tf.global_variables_initializer(),
                                  saver=tf.train.Saver([v]), checkpoint_dir=str(tmp_path))
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
        assert sess.run(local) == 5.0  # local_init_op ran
        sess.close()


def test_prepare_session_restores_the_latest_checkpoint(tmp_path):
    with tf.Graph().as_default():
        v, _ = _model()
        saver = tf.train.Saver([v])
        with tf.Session() as sess:
            sess.run(v.initializer)
            sess.run(v.assign([7.0, 8.0]))
            saver.save(sess, str(tmp_path / "model"), global_step=3)
        init_fn_calls = []
        sess = _manager().prepare_session("", init_op=tf.global_variables_initializer(),
                                          saver=saver, checkpoint_dir=str(tmp_path),
                                          init_fn=init_fn_calls.append)
        np.testing.assert_array_equal(sess.run(v), [7.0, 8.0])
        assert init_fn_calls == []  # restored: neither init_op nor init_fn ran
        assert saver.last_checkpoints == [str(tmp_path / "model-3")]
        sess.close()
        by_path = _manager().prepare_session(
            "", saver=saver, checkpoint_filename_with_path=str(tmp_path / "model-3"))
        np.testing.assert_array_equal(by_path.run(v), [7.0, 8.0])
        by_path.close()
        with pytest.raises(ValueError, match="Can not provide both checkpoint_dir"):
            _manager().prepare_session("", saver=saver, checkpoint_dir=str(tmp_path),
                                       checkpoint_filename_with_path=str(tmp_path / "model-3"))


def test_prepare_session_errors():
    with tf.Graph().as_default():
        v, _ = _model()
        with pytest.raises(RuntimeError, match="Model is not initialized and no init_op"):
            _manager(local_init=False).prepare_session("")
        with pytest.raises(RuntimeError, match="Init operations did not make model ready.*"
                                               "Variables not initialized: v"):
            _manager(local_init=False).prepare_session("", init_op=tf.no_op())
        with pytest.raises(RuntimeError, match="did not make model ready for local_init"):
            _manager().prepare_session("", init_fn=lambda sess: None)
        init_fn_ran = []
        sess = _manager().prepare_session(
            "", init_fn=lambda s: init_fn_ran.append(s.run(v.initializer)))
        assert init_fn_ran == [None] and sess.run(v).tolist() == [1.0, 2.0]
        sess.close()
        with pytest.raises(ValueError, match="you must also pass a local_init_op"):
            tf.train.SessionManager(ready_for_local_init_op=tf.report_uninitialized_variables())


def test_recover_session(tmp_path):
    with tf.Graph().as_default():
        v, local = _model()
        saver = tf.train.Saver([v])
        sess, initialized = _manager().recover_session("", saver=saver,
                                                       checkpoint_dir=str(tmp_path))
        assert not initialized
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(v)
        sess.run(v.initializer)
        saver.save(sess, str(tmp_path / "model"))
        sess.close()
        sess, initialized = _manager().recover_session("", saver=saver,
                                                       checkpoint_dir=str(tmp_path))
        assert initialized and sess.run(v).tolist() == [1.0, 2.0] and sess.run(local) == 5.0
        sess.close()


def test_wait_for_session_times_out_when_nobody_initializes():
    with tf.Graph().as_default():
        _model()
        with pytest.raises(tf.errors.DeadlineExceededError,
                           match="Session was not ready after waiting"):
            _manager().wait_for_session("", max_wait_secs=0.05)


def test_wait_for_session_returns_when_ready():
    with tf.Graph().as_default():
        tf.Variable(3.0, name="only_local", collections=[tf.GraphKeys.LOCAL_VARIABLES])
        sm = _manager()
        sess = sm.wait_for_session("", max_wait_secs=1.0)
        assert sess.run("only_local:0") == 3.0  # local_init_op ran in the worker session
        sess.close()


def test_ready_op_that_fails_for_other_reasons_raises():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.string, [None])
        sm = tf.train.SessionManager(ready_op=tf.identity(x))
        with pytest.raises(tf.errors.InvalidArgumentError):
            sm.prepare_session("", init_op=tf.no_op())
