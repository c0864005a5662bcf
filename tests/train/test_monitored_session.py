"""MonitoredSession, SingularMonitoredSession, MonitoredTrainingSession and Scaffold.

Real sessions and checkpoints. Preemption is injected by a test-only op whose kernel raises the
chosen error class once when the global step it reads reaches a chosen value, like a worker
failing mid-training.
"""
import os
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import shape_fns
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import define_op
from tensorweave.kernels.registry import kernel

_FAIL_AT = define_op("_TestFailAtStep", inputs=["step: T"], outputs=["out: T"],
                     shape_fn=shape_fns.unchanged, is_stateful=True, not_differentiable=True)
_INJECT = {"at": None, "error": None, "left": 0}


@kernel("_TestFailAtStep")
def _fail_at_step(ctx, step):
    """Raises _INJECT['error'] while failures are left and the step is _INJECT['at']."""
    if int(step) == _INJECT["at"] and _INJECT["left"] > 0:
        _INJECT["left"] -= 1
        raise _INJECT["error"](None, None, f"injected failure at step {int(step)}")
    return step


@pytest.fixture
def inject():
    def arm(error, at, times=1):
        _INJECT.update(error=error, at=at, left=times)
    yield arm
    _INJECT.update(at=None, error=None, left=0)


class RecordingHook(tf.train.SessionRunHook):
    """Records the calls it gets, in order, and what it was given."""

    def __init__(self, fetch=None, feed=None):
        self.calls, self.results, self.finalized = [], [], {}
        self._fetch, self._feed = fetch, feed

    def begin(self):
        self.calls.append("begin")
        self.finalized["begin"] = tf.get_default_graph().finalized

    def after_create_session(self, session, coord):
        self.calls.append("after_create_session")
        self.finalized["after_create_session"] = session.graph.finalized
        self.coord = coord

    def before_run(self, run_context):
        self.calls.append("before_run")
        if self._fetch is not None or self._feed is not None:
            return tf.train.SessionRunArgs(self._fetch, feed_dict=self._feed)
        return None

    def after_run(self, run_context, run_values):
        self.calls.append("after_run")
        self.results.append(run_values.results)

    def end(self, session):
        self.calls.append("end")


def _regression(fail_on_step=False):
    """A linear model trained by SGD; returns (train_op, global_step, w)."""
    rng = np.random.RandomState(0)
    xs = rng.randn(64, 3).astype(np.float32)
    ys = xs @ np.array([0.5, -1.0, 2.0], np.float32) + 0.25
    w = tf.Variable(tf.zeros([3]), name="w")
    b = tf.Variable(0.0, name="b")
    loss = tf.reduce_mean(tf.square(tf.reduce_sum(tf.constant(xs) * w, 1) + b - ys))
    global_step = tf.train.get_or_create_global_step()
    deps = [apply_op(_FAIL_AT, [tf.identity(global_step)])] if fail_on_step else []
    with tf.control_dependencies(deps):
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
    return train, global_step, loss


def test_hook_call_order_and_graph_finalized_while_open():
    with tf.Graph().as_default() as g:
        v = tf.Variable(1.0)
        hook = RecordingHook()
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            assert g.finalized and sess.graph is g
            assert sess.run(v) == 1.0
            sess.run(v)
            with pytest.raises(RuntimeError, match="finalized"):
                tf.constant(1.0)
        assert hook.calls == ["begin", "after_create_session", "before_run", "after_run",
                              "before_run", "after_run", "end"]
        assert hook.finalized == {"begin": False, "after_create_session": True}
        assert not g.finalized  # unfinalized again on close: it was not finalized before
        assert sess.should_stop()


def test_an_already_finalized_graph_stays_finalized():
    with tf.Graph().as_default() as g:
        tf.Variable(1.0)
        tf.train.Scaffold().finalize()
        with tf.train.MonitoredSession():
            pass
        assert g.finalized


def test_hook_fetches_feeds_and_options_are_merged():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        y = tf.placeholder(tf.float32, [], name="y")
        total = x + y
        fetching = RecordingHook(fetch={"double": x * 2.0})
        feeding = RecordingHook(feed={y: 10.0})

        class TraceHook(tf.train.SessionRunHook):
            def before_run(self, run_context):
                self.args = run_context.original_args
                return tf.train.SessionRunArgs(None, options=tf.RunOptions(
                    trace_level=tf.RunOptions.FULL_TRACE))

            def after_run(self, run_context, run_values):
                self.level = run_values.options.trace_level
                self.traced_nodes = sum(len(d.node_stats)
                                        for d in run_values.run_metadata.step_stats.dev_stats)

        tracer = TraceHook()
        with tf.train.MonitoredSession(hooks=[fetching, feeding, tracer]) as sess:
            assert sess.run(total, feed_dict={x: 1.5}) == 11.5
            assert fetching.results == [{"double": 3.0}] and feeding.results == [None]
            assert tracer.args.fetches is total and tracer.args.feed_dict == {x: 1.5}
            assert tracer.level == tf.RunOptions.FULL_TRACE and tracer.traced_nodes > 0
            with pytest.raises(RuntimeError, match="Same tensor is fed by a SessionRunHook "
                                                   "and user"):
                sess.run(total, feed_dict={x: 1.0, y: 2.0})
    with tf.Graph().as_default():
        y = tf.placeholder(tf.float32, [])
        hooks = [RecordingHook(feed={y: 1.0}), RecordingHook(feed={y: 2.0})]
        with tf.train.MonitoredSession(hooks=hooks) as sess:
            with pytest.raises(RuntimeError, match="Same tensor is fed by two hooks"):
                sess.run(y)


def test_request_stop_from_a_hook_and_run_after_stop():
    class StopAfterTwo(tf.train.SessionRunHook):
        runs = 0

        def after_run(self, run_context, run_values):
            self.runs += 1
            if self.runs == 2:
                run_context.request_stop()

    with tf.Graph().as_default():
        c = tf.constant(3)
        with tf.train.MonitoredSession(hooks=[StopAfterTwo()]) as sess:
            count = 0
            while not sess.should_stop():
                assert sess.run(c) == 3
                count += 1
            assert count == 2
            with pytest.raises(RuntimeError, match="Run called even after should_stop"):
                sess.run(c)


def test_out_of_range_ends_the_with_block_quietly_and_runs_end(inject):
    inject(tf.errors.OutOfRangeError, at=3, times=1)
    with tf.Graph().as_default():
        step = tf.assign_add(tf.Variable(0, dtype=tf.int64), 1)
        checked = apply_op(_FAIL_AT, [step])
        hook = RecordingHook()
        seen = []
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            while not sess.should_stop():
                seen.append(sess.run(checked))
        assert seen == [1, 2] and hook.calls[-1] == "end"


def test_other_errors_propagate_without_end_hooks():
    with tf.Graph().as_default():
        doubled = tf.placeholder(tf.float32, []) * 2.0
        hook = RecordingHook()
        with pytest.raises(tf.errors.InvalidArgumentError):
            with tf.train.MonitoredSession(hooks=[hook]) as sess:
                sess.run(doubled)  # unfed placeholder
        assert "end" not in hook.calls
        with pytest.raises(ZeroDivisionError):
            with tf.train.MonitoredSession(hooks=[hook]):
                raise ZeroDivisionError
        assert "end" not in hook.calls
        sess = tf.train.MonitoredSession()
        sess.close()
        with pytest.raises(RuntimeError, match="Session is already closed"):
            sess.close()


def _train(ckpt_dir, last_step, hooks=(), fail_on_step=False, **kwargs):
    """Trains to last_step; returns (first step seen, steps run, loss)."""
    with tf.Graph().as_default():
        train, global_step, loss = _regression(fail_on_step)
        ran = 0
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=ckpt_dir, hooks=[tf.train.StopAtStepHook(last_step=last_step),
                                                *hooks],
                save_checkpoint_steps=5, save_summaries_steps=None, log_step_count_steps=None,
                **kwargs) as sess:
            start = sess.run(global_step)
            while not sess.should_stop():
                sess.run(train)
                ran += 1
            return start, ran, sess.graph  # the with block still closes the session


def test_training_resumes_from_the_latest_checkpoint(tmp_path):
    start, ran, _ = _train(str(tmp_path), 12)
    assert (start, ran) == (0, 12)
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-12")
    assert tf.train.load_variable(str(tmp_path), "global_step") == 12
    w_first = tf.train.load_variable(str(tmp_path), "w")
    start, ran, _ = _train(str(tmp_path), 20)
    assert (start, ran) == (12, 8)
    assert tf.train.load_variable(str(tmp_path), "global_step") == 20
    assert not np.allclose(tf.train.load_variable(str(tmp_path), "w"), w_first)
    state = tf.train.get_checkpoint_state(str(tmp_path))
    steps = [int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths]
    # Every 5 steps from the last save; the saver's history was recovered on restore.
    assert steps == [5, 10, 12, 17, 20]
    assert os.path.exists(tmp_path / "graph.pbtxt")


@pytest.mark.parametrize("error", [tf.errors.AbortedError, tf.errors.UnavailableError])
def test_preempted_step_recreates_the_session_from_the_latest_checkpoint(tmp_path, inject,
                                                                         error):
    inject(error, at=7)
    steps_seen = []

    class StepRecorder(tf.train.SessionRunHook):
        def begin(self):
            self.sessions = 0
            self.step = tf.train.get_global_step()

        def after_create_session(self, session, coord):
            self.sessions += 1

        def before_run(self, run_context):
            return tf.train.SessionRunArgs(self.step)

        def after_run(self, run_context, run_values):
            steps_seen.append(int(run_values.results))

    recorder = StepRecorder()
    start, ran, _ = _train(str(tmp_path), 10, hooks=[recorder], fail_on_step=True)
    assert _INJECT["left"] == 0 and recorder.sessions == 2
    # The first run reads the step (0); steps 0..6 ran, each fetching the variable it updates
    # (so it shows the new step, as in TensorFlow); step 7 failed, and the new session
    # restored the checkpoint of step 5 and went on from there.
    assert steps_seen == [0, 1, 2, 3, 4, 5, 6, 7, 6, 7, 8, 9, 10]
    assert (start, ran) == (0, 12)
    assert tf.train.load_variable(str(tmp_path), "global_step") == 10


def test_singular_monitored_session_does_not_recover(tmp_path, inject):
    inject(tf.errors.AbortedError, at=2)
    with tf.Graph().as_default():
        train, global_step, _ = _regression(fail_on_step=True)
        with pytest.raises(tf.errors.AbortedError, match="injected failure at step 2"):
            with tf.train.SingularMonitoredSession(checkpoint_dir=str(tmp_path)) as sess:
                assert isinstance(sess.raw_session(), tf.Session)
                for _ in range(5):
                    sess.run(train)


def test_worker_waits_for_the_chief_and_gives_up():
    with tf.Graph().as_default():
        tf.Variable(1.0)
        with pytest.raises(tf.errors.DeadlineExceededError, match="not ready after waiting"):
            tf.train.MonitoredTrainingSession(is_chief=False, max_wait_secs=0.1)


class _FakeQueueRunner:
    """Stands in for a tf.train.QueueRunner (a separate module): only `create_threads`."""

    def __init__(self, body):
        self.body = body

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        t = threading.Thread(target=self.body, args=(sess, coord), daemon=daemon)
        coord.register_thread(t)
        if start:
            t.start()
        return [t]


def test_queue_runners_start_and_their_errors_surface_on_close():
    started = threading.Event()

    def body(sess, coord):
        coord.request_stop(ValueError("queue runner failed"))
        started.set()   # after the stop request, which the test then checks

    with tf.Graph().as_default() as g:
        c = tf.constant(1)
        g.add_to_collection(tf.GraphKeys.QUEUE_RUNNERS, _FakeQueueRunner(body))
        sess = tf.train.MonitoredSession()
        assert started.wait(5.0)
        assert sess.should_stop()  # the coordinator stopped with an error
        assert sess.run(c) == 1  # as in TF, a run itself still works
        with pytest.raises(ValueError, match="queue runner failed"):
            sess.close()


def test_run_step_fn():
    with tf.Graph().as_default():
        v = tf.Variable(0)
        inc = tf.assign_add(v, 1)
        hook = RecordingHook()
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            assert sess.run_step_fn(lambda step_context: step_context.run_with_hooks(inc)) == 1
            assert sess.run_step_fn(lambda step_context: step_context.session.run(inc)) == 2
            assert hook.calls.count("before_run") == 1  # only run_with_hooks calls hooks

            def stop(step_context):
                step_context.request_stop()

            with pytest.raises(StopIteration):
                sess.run_step_fn(stop)
            with pytest.raises(ValueError, match="`step_fn` may either have one"):
                sess.run_step_fn(lambda ctx: None)


def test_scaffold_defaults_and_collections():
    with tf.Graph().as_default() as g:
        tf.Variable(1.0, name="v")
        local = tf.Variable(2.0, name="local", collections=[tf.GraphKeys.LOCAL_VARIABLES])
        scaffold = tf.train.Scaffold().finalize()
        assert g.finalized
        assert g.get_collection(tf.GraphKeys.READY_OP) == [scaffold.ready_op]
        assert g.get_collection(tf.GraphKeys.INIT_OP) == [scaffold.init_op]
        assert g.get_collection(tf.GraphKeys.LOCAL_INIT_OP) == [scaffold.local_init_op]
        assert g.get_collection(tf.GraphKeys.SAVERS) == [scaffold.saver]
        assert scaffold.summary_op is None  # no summaries in the graph
        with tf.Session() as sess:
            assert sess.run(scaffold.ready_op).tolist() == [b"v", b"local"]
            assert sess.run(scaffold.ready_for_local_init_op).tolist() == [b"v"]
            sess.run(scaffold.init_op)
            assert sess.run(scaffold.ready_op).tolist() == [b"local"]
            assert sess.run(scaffold.ready_for_local_init_op).size == 0
            sess.run(scaffold.local_init_op)
            assert sess.run(local) == 2.0 and sess.run(scaffold.ready_op).size == 0
        g._unsafe_unfinalize()
        again = tf.train.Scaffold().finalize()  # reuses the collections' items
        assert again.init_op is scaffold.init_op and again.saver is scaffold.saver


def test_scaffold_init_fn_copy_and_conflicts():
    with tf.Graph().as_default() as g:
        v = tf.Variable(1.0)
        calls = []
        base = tf.train.Scaffold(init_op=tf.no_op(), init_fn=lambda scaffold, sess: calls.append(
            (scaffold, sess.run(v.initializer))))
        copy = tf.train.Scaffold(copy_from_scaffold=base)
        assert copy.init_op is base.init_op
        with tf.train.MonitoredSession(tf.train.ChiefSessionCreator(scaffold=copy)) as sess:
            assert sess.run(v) == 1.0
        assert calls == [(copy, None)]
        with pytest.raises(TypeError, match="copy_from_scaffold is not a Scaffold"):
            tf.train.Scaffold(copy_from_scaffold=object())
        g.add_to_collection(tf.GraphKeys.READY_OP, tf.constant([], tf.string))
        g.add_to_collection(tf.GraphKeys.READY_OP, tf.constant([], tf.string))
        with pytest.raises(RuntimeError, match='More than one item in the collection "ready_op"'):
            tf.train.Scaffold().finalize()
