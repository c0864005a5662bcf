"""The managed training loop behaves like TensorFlow 2.21's: hook call order, the steps saved and
summarized, the files left in checkpoint_dir, recovery from preemption, and the log lines and
error messages that are part of the behaviour.

Every expected value below was printed by the same program run under TensorFlow 2.21
(tensorflow.compat.v1 with v2 behaviour disabled). Triggers are step-based so the runs are
deterministic; elapsed-time suffixes and step rates are left out of the comparisons.
"""
import logging
import os
import time

import pytest

import tensorweave as tf


class _Lines(logging.Handler):
    """Collects "LEVEL: message" of every record."""

    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(f"{record.levelname}: {record.getMessage()}")


@pytest.fixture
def logs():
    """The tensorweave log at INFO, as "LEVEL: message" lines."""
    logger = tf.get_logger()
    handler, level = _Lines(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler.lines
    logger.removeHandler(handler)
    logger.setLevel(level)


def _events(logdir):
    """(step, kind, detail) of every event in `logdir`'s event files, in file order."""
    found = []
    for name in sorted(os.listdir(logdir)):
        if not name.startswith("events.out.tfevents"):
            continue
        for event in tf.train.summary_iterator(os.path.join(logdir, name)):
            kind = event.WhichOneof("what")
            if kind == "summary":
                detail = ",".join(value.tag for value in event.summary.value)
            elif kind == "session_log":
                detail = f"{event.session_log.status}:" \
                         f"{os.path.basename(event.session_log.checkpoint_path)}"
            else:
                detail = ""
            found.append((event.step, kind, detail))
    return found


def _checkpoint_state(directory, root):
    """The `checkpoint` text file of `directory`, with `root` written as DIR."""
    with open(os.path.join(directory, "checkpoint")) as f:
        return f.read().replace(str(root), "DIR")


def _checkpoint_steps(directory):
    return sorted(int(name[len("model.ckpt-"):-len(".index")])
                  for name in os.listdir(directory)
                  if name.startswith("model.ckpt-") and name.endswith(".index"))


class _Recorder(tf.train.SessionRunHook):
    """Records its calls in a shared list; fetches `fetch`, requests a stop at `stop_at`."""

    def __init__(self, name, calls, fetch=None, stop_at=None):
        self.name, self.calls, self.fetch, self.stop_at = name, calls, fetch, stop_at

    def begin(self):
        self.calls.append((self.name, "begin", tf.get_default_graph().finalized))

    def after_create_session(self, session, coord):
        self.calls.append((self.name, "after_create_session", type(coord).__name__,
                           int(session.run(tf.train.get_global_step()))))

    def before_run(self, run_context):
        self.calls.append((self.name, "before_run", len(run_context.original_args.feed_dict),
                           run_context.stop_requested))
        return None if self.fetch is None else tf.train.SessionRunArgs(self.fetch)

    def after_run(self, run_context, run_values):
        results = run_values.results
        if isinstance(results, dict):
            results = {key: float(value) for key, value in sorted(results.items())}
        elif isinstance(results, list):
            results = [float(value) for value in results]
        self.calls.append((self.name, "after_run", results))
        if self.stop_at is not None and results["gs"] >= self.stop_at:
            run_context.request_stop()

    def end(self, session):
        self.calls.append((self.name, "end", int(session.run(tf.train.get_global_step()))))


def test_hook_calls_merged_fetches_and_request_stop():
    calls = []
    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [], name="x")
        v = tf.Variable(1.0, name="v")
        y = x * v
        train = tf.group(tf.assign_add(gs, 1), tf.assign_add(v, 1.0))
        hooks = [_Recorder("A", calls, fetch={"gs": gs, "y": y}),
                 _Recorder("B", calls, fetch=[gs]),
                 _Recorder("C", calls, fetch={"gs": gs}, stop_at=2),
                 tf.train.StopAtStepHook(last_step=10)]
        with tf.train.MonitoredSession(hooks=hooks) as sess:
            seen = []
            while not sess.should_stop():
                _, step, value = sess.run([train, gs, y], feed_dict={x: 2.0})
                seen.append((int(step), float(value), sess.should_stop()))
            with pytest.raises(RuntimeError, match="^Run called even after should_stop "
                                                   "requested.$"):
                sess.run(train, feed_dict={x: 1.0})
        assert not tf.get_default_graph().finalized
    assert seen == [(1, 2.0, False), (2, 4.0, True)]
    run = [("A", "before_run", 1, False), ("B", "before_run", 1, False),
           ("C", "before_run", 1, False)]
    assert calls == [
        ("A", "begin", False), ("B", "begin", False), ("C", "begin", False),
        ("A", "after_create_session", "Coordinator", 0),
        ("B", "after_create_session", "Coordinator", 0),
        ("C", "after_create_session", "Coordinator", 0),
        *run, ("A", "after_run", {"gs": 1.0, "y": 2.0}), ("B", "after_run", [1.0]),
        ("C", "after_run", {"gs": 1.0}),
        *run, ("A", "after_run", {"gs": 2.0, "y": 4.0}), ("B", "after_run", [2.0]),
        ("C", "after_run", {"gs": 2.0}),
        ("A", "end", 2), ("B", "end", 2), ("C", "end", 2)]


def test_feed_conflicts_name_the_fed_tensors():
    with tf.Graph().as_default():
        tf.train.get_or_create_global_step()
        x = tf.placeholder_with_default(1.0, [], name="x")
        cases = [([tf.train.FeedFnHook(lambda: {x: 3.0}), tf.train.FeedFnHook(lambda: {x: 4.0})],
                  None, "Same tensor is fed by two hooks."),
                 ([tf.train.FeedFnHook(lambda: {x: 3.0})], {x: 5.0},
                  "Same tensor is fed by a SessionRunHook and user.")]
        for hooks, feed, message in cases:
            with pytest.raises(RuntimeError) as info:
                with tf.train.MonitoredSession(hooks=hooks) as sess:
                    sess.run(x, feed_dict=feed)
            assert str(info.value) == \
                f"{message} Conflict(s): [<tf.Tensor 'x:0' shape=() dtype=float32>]"


def _quadratic_model():
    """(global step, w, train op) of w -> 3 by gradient descent, with a `loss` summary."""
    gs = tf.train.get_or_create_global_step()
    w = tf.get_variable("w", initializer=tf.constant(1.0))
    loss = tf.square(w - 3.0)
    tf.summary.scalar("loss", loss)
    return gs, w, tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)


class _Listener(tf.train.CheckpointSaverListener):
    def __init__(self, calls):
        self.calls = calls

    def begin(self):
        self.calls.append(("begin",))

    def before_save(self, session, global_step_value):
        self.calls.append(("before_save", int(global_step_value)))

    def after_save(self, session, global_step_value):
        self.calls.append(("after_save", int(global_step_value)))

    def end(self, session, global_step_value):
        self.calls.append(("end", int(global_step_value)))


TF_FIRST_RUN_EVENTS = [
    (0, "file_version", ""), (0, "graph_def", ""), (0, "meta_graph_def", ""),
    (0, "graph_def", ""), (0, "meta_graph_def", ""), (0, "session_log", "3:model.ckpt"),
    (1, "session_log", "1:"), (1, "summary", "loss"), (3, "summary", "loss"),
    (3, "session_log", "3:model.ckpt"), (5, "summary", "global_step/sec"),
    (5, "summary", "loss"), (6, "session_log", "3:model.ckpt"), (7, "summary", "loss")]
# The first run's final save at 7 is flushed by the second run, through the cached writer.
TF_SECOND_RUN_EVENTS = [
    (7, "session_log", "3:model.ckpt"), (0, "graph_def", ""), (0, "meta_graph_def", ""),
    (7, "session_log", "3:model.ckpt"), (7, "session_log", "1:"), (7, "summary", "loss"),
    (8, "summary", "loss")]


def test_monitored_training_session_checkpoints_summaries_and_restart(tmp_path, logs):
    ckpt_dir, extra_dir = tmp_path / "train", tmp_path / "train" / "extra"
    listener_calls, steps = [], []
    with tf.Graph().as_default():
        gs, _, train = _quadratic_model()
        extra = tf.train.CheckpointSaverHook(str(extra_dir), save_steps=5,
                                             listeners=[_Listener(listener_calls)])
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=str(ckpt_dir), save_checkpoint_steps=3, save_summaries_steps=2,
                log_step_count_steps=4, hooks=[tf.train.StopAtStepHook(last_step=7)],
                chief_only_hooks=[extra]) as sess:
            while not sess.should_stop():
                steps.append(int(sess.run([train, gs])[1]))
    assert steps == [1, 2, 3, 4, 5, 6, 7]
    assert listener_calls == [("begin",), ("before_save", 0), ("after_save", 0),
                              ("before_save", 5), ("after_save", 5), ("before_save", 7),
                              ("after_save", 7), ("end", 7)]
    saves = [line for line in logs if "checkpoint" in line]
    assert saves[:6] == [
        "INFO: Calling checkpoint listeners before saving checkpoint 0...",
        f"INFO: Saving checkpoints for 0 into {extra_dir}/model.ckpt.",
        "INFO: Calling checkpoint listeners after saving checkpoint 0...",
        "INFO: Calling checkpoint listeners before saving checkpoint 0...",
        f"INFO: Saving checkpoints for 0 into {ckpt_dir}/model.ckpt.",
        "INFO: Calling checkpoint listeners after saving checkpoint 0..."]
    assert len(saves) == 3 * 7   # saves at 0 (both), 3, 5, 6, 7 (both)
    assert _checkpoint_steps(ckpt_dir) == [3, 6, 7]   # max_to_keep=5 counts both hooks' saves
    assert _checkpoint_steps(extra_dir) == [5, 7]
    assert {"graph.pbtxt", "checkpoint", "model.ckpt-7.meta"} <= set(os.listdir(ckpt_dir))
    assert _checkpoint_state(ckpt_dir, tmp_path) == (
        'model_checkpoint_path: "DIR/train/model.ckpt-7"\n'
        'all_model_checkpoint_paths: "DIR/train/model.ckpt-3"\n'
        'all_model_checkpoint_paths: "DIR/train/extra/model.ckpt-5"\n'
        'all_model_checkpoint_paths: "DIR/train/model.ckpt-6"\n'
        'all_model_checkpoint_paths: "DIR/train/extra/model.ckpt-7"\n'
        'all_model_checkpoint_paths: "DIR/train/model.ckpt-7"\n')
    assert _events(ckpt_dir) == TF_FIRST_RUN_EVENTS

    steps = []
    with tf.Graph().as_default():
        gs, w, train = _quadratic_model()
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=str(ckpt_dir), save_checkpoint_steps=3, save_summaries_steps=2,
                log_step_count_steps=None, hooks=[tf.train.StopAtStepHook(num_steps=2)]) as sess:
            assert sess.run(gs) == 7 and round(float(sess.run(w)), 5) == 2.58057
            while not sess.should_stop():
                steps.append(int(sess.run([train, gs])[1]))
    assert steps == [8, 9]
    assert _checkpoint_steps(ckpt_dir) == [6, 7, 9]
    assert _events(ckpt_dir) == TF_FIRST_RUN_EVENTS + TF_SECOND_RUN_EVENTS


def test_checkpoint_saver_without_listeners_or_graph_def(tmp_path):
    logdir = tmp_path / "ckpt"
    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        train = tf.assign_add(gs, 1)
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=str(logdir), save_checkpoint_steps=2, save_summaries_steps=None,
                log_step_count_steps=None, save_graph_def=False,
                hooks=[tf.train.StopAtStepHook(last_step=5)]) as sess:
            while not sess.should_stop():
                sess.run(train)
    names = os.listdir(logdir)
    assert _checkpoint_steps(logdir) == [0, 2, 4, 5]
    assert "graph.pbtxt" not in names and not any(name.endswith(".meta") for name in names)


def test_listener_stops_training_and_summary_op_list(tmp_path, logs):
    class StopAtFour(tf.train.CheckpointSaverListener):
        def after_save(self, session, global_step_value):
            return global_step_value >= 4

        def __repr__(self):
            return "StopAtFour"

    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        v = tf.Variable(1.0, name="v")
        train = tf.group(tf.assign_add(gs, 1), tf.assign_add(v, 1.0))
        summaries = [tf.summary.scalar("a", v), tf.summary.scalar("b", v * 2)]
        hooks = [tf.train.SummarySaverHook(save_steps=2, output_dir=str(tmp_path),
                                           summary_op=summaries),
                 tf.train.CheckpointSaverHook(str(tmp_path), save_steps=2,
                                              listeners=[StopAtFour()]),
                 tf.train.StopAtStepHook(last_step=100)]
        with tf.train.SingularMonitoredSession(hooks=hooks) as sess:
            while not sess.should_stop():
                sess.run(train)
            assert sess.raw_session().run(gs) == 4
    assert "INFO: A CheckpointSaverListener requested that training be stopped. listener: " \
           "StopAtFour" in logs
    assert _events(tmp_path)[5:] == [
        (0, "session_log", "3:model.ckpt"), (1, "session_log", "1:"), (1, "summary", "a"),
        (1, "summary", "b"), (2, "session_log", "3:model.ckpt"), (3, "summary", "a"),
        (3, "summary", "b"), (4, "session_log", "3:model.ckpt")]


def test_restart_past_last_step_runs_one_step(tmp_path):
    seen = []
    for last_step in (4, 2):
        with tf.Graph().as_default():
            gs = tf.train.get_or_create_global_step()
            train = tf.assign_add(gs, 1)
            with tf.train.MonitoredTrainingSession(
                    checkpoint_dir=str(tmp_path), save_summaries_steps=None,
                    log_step_count_steps=None,
                    hooks=[tf.train.StopAtStepHook(last_step=last_step)]) as sess:
                assert not sess.should_stop()
                while not sess.should_stop():
                    seen.append(int(sess.run(train)))
    assert seen == [1, 2, 3, 4, 5]
    assert _checkpoint_steps(tmp_path) == [0, 4, 5]


def _logged_values(logs):
    """The LoggingTensorHook lines without their "(x.xxx sec)" suffix."""
    return [line.split(" (")[0] for line in logs
            if " = " in line or line.startswith("INFO: FMT")]


def test_logging_tensor_hook_lines(logs):
    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        v = tf.Variable(0.5, name="v")
        train = tf.group(tf.assign_add(v, 1.0), tf.assign_add(gs, 1))
        hooks = [tf.train.LoggingTensorHook({"b_v": v, "a_gs": gs}, every_n_iter=2, at_end=True),
                 tf.train.LoggingTensorHook(["v:0", "global_step"], every_n_iter=3),
                 tf.train.LoggingTensorHook({"v": v}, at_end=True,
                                            formatter=lambda values: f"FMT v={values['v']}"),
                 tf.train.StopAtStepHook(num_steps=5)]
        with tf.train.MonitoredSession(hooks=hooks) as sess:
            while not sess.should_stop():
                sess.run(train)
    assert _logged_values(logs) == [
        "INFO: a_gs = 1, b_v = 1.5", "INFO: v:0 = 1.5, global_step = 1",
        "INFO: a_gs = 3, b_v = 3.5", "INFO: v:0 = 4.5, global_step = 4",
        "INFO: a_gs = 5, b_v = 5.5", "INFO: a_gs = 5, b_v = 5.5", "INFO: FMT v=5.5"]


@pytest.mark.parametrize("fail, outcome, log_line", [
    (True, "NanLossDuringTrainingError: NaN loss during training.",
     "ERROR: Model diverged with loss = NaN."),
    (False, "stopped after 1", "WARNING: Model diverged with loss = NaN.")])
def test_nan_tensor_hook(fail, outcome, log_line, logs):
    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        v = tf.Variable(0.5, name="v")
        train = tf.group(tf.assign_add(v, 1.0), tf.assign_add(gs, 1))
        loss = tf.log(v - 2.0)
        hooks = [tf.train.NanTensorHook(loss, fail_on_nan_loss=fail),
                 tf.train.StopAtStepHook(last_step=10)]
        try:
            with tf.train.MonitoredSession(hooks=hooks) as sess:
                runs = 0
                while not sess.should_stop():
                    sess.run(train)
                    runs += 1
            result = f"stopped after {runs}"
        except tf.train.NanLossDuringTrainingError as e:
            result = f"{type(e).__name__}: {e}"
    assert result == outcome
    assert log_line in logs


def test_final_ops_and_feed_fn_hooks():
    with tf.Graph().as_default():
        tf.train.get_or_create_global_step()
        gs = tf.train.get_global_step()
        x = tf.placeholder_with_default(1.0, [], name="x")
        v = tf.Variable(0.5, name="v")
        train = tf.group(tf.assign_add(v, x), tf.assign_add(gs, 1))
        final = tf.train.FinalOpsHook({"v": v, "d": v * 2})
        fed_final = tf.train.FinalOpsHook(v * x, final_ops_feed_dict={x: 10.0})
        hooks = [final, fed_final, tf.train.FeedFnHook(lambda: {x: 3.0}),
                 tf.train.StopAtStepHook(last_step=2)]
        with tf.train.MonitoredSession(hooks=hooks) as sess:
            values = []
            while not sess.should_stop():
                values.append(float(sess.run([train, v])[1]))
            assert final.final_ops_values is None
    assert values == [3.5, 6.5]
    assert final.final_ops_values == {"v": 6.5, "d": 13.0} and fed_final.final_ops_values == 65.0


def test_recovery_from_preemption_restores_the_latest_checkpoint(tmp_path, logs):
    calls = []

    class Preempt(tf.train.SessionRunHook):
        """Raises AbortedError on its 4th and 7th before_run."""

        def __init__(self):
            self.count = 0

        def after_create_session(self, session, coord):
            calls.append(("after_create_session", int(session.run(gs))))

        def before_run(self, run_context):
            self.count += 1
            if self.count in (4, 7):
                raise tf.errors.AbortedError(None, None, f"preempted {self.count}")
            return tf.train.SessionRunArgs(gs)

        def after_run(self, run_context, run_values):
            calls.append(("after_run", int(run_values.results)))

    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        v = tf.Variable(1.0, name="v")
        train = tf.group(tf.assign_add(gs, 1), tf.assign_add(v, 1.0))
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=str(tmp_path), save_checkpoint_steps=2,
                save_summaries_steps=None, log_step_count_steps=None,
                hooks=[Preempt(), tf.train.StopAtStepHook(last_step=6)]) as sess:
            seen = []
            while not sess.should_stop():
                _, step, value = sess.run([train, gs, v])
                seen.append((int(step), float(value)))
    assert seen == [(1, 2.0), (2, 3.0), (3, 4.0), (3, 4.0), (4, 5.0), (5, 6.0), (6, 7.0)]
    assert calls == [("after_create_session", 0), ("after_run", 1), ("after_run", 2),
                     ("after_run", 3), ("after_create_session", 2), ("after_run", 3),
                     ("after_run", 4), ("after_create_session", 4), ("after_run", 5),
                     ("after_run", 6)]
    assert "INFO: An error was raised. This may be due to a preemption in a connected worker " \
           "or parameter server. The current session will be closed and a new session will " \
           "be created. This error may also occur due to a gRPC failure caused by high " \
           "memory or network bandwidth usage in the parameter servers. If this error occurs " \
           "repeatedly, try increasing the number of parameter servers assigned to the job. " \
           "Error: preempted 4" in logs
    restores = [line for line in logs if line.startswith("INFO: Restoring parameters")]
    assert restores == [f"INFO: Restoring parameters from {tmp_path}/model.ckpt-2",
                        f"INFO: Restoring parameters from {tmp_path}/model.ckpt-4"]


def test_session_manager_wait_message_counts_whole_seconds(logs):
    with tf.Graph().as_default():
        tf.Variable(2.0, name="v")
        manager = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables(),
                                          recovery_wait_secs=0.1)
        with pytest.raises(tf.errors.DeadlineExceededError) as info:
            manager.wait_for_session("", max_wait_secs=0.3)
    assert info.value.message == "Session was not ready after waiting 0 secs."
    assert logs.count("INFO: Waiting for model to be ready.  Ready_for_local_init_op:  None, "
                      "ready: Variables not initialized: v") == 2


def test_supervisor_error_report_names_the_class(logs):
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        supervisor = tf.train.Supervisor(logdir=None)
        with pytest.raises(ValueError, match="^inner$"):
            with supervisor.managed_session():
                raise ValueError("inner")
    assert "INFO: Error reported to Coordinator: <class 'ValueError'>, inner" in logs


def test_supervisor_checkpoint_and_events(tmp_path):
    def model():
        gs = tf.train.get_or_create_global_step()
        v = tf.Variable(1.0, name="v")
        tf.summary.scalar("v", v)
        return gs, v, tf.group(tf.assign_add(gs, 1), tf.assign_add(v, 1.0))

    with tf.Graph().as_default():
        gs, v, train = model()
        supervisor = tf.train.Supervisor(logdir=str(tmp_path), save_summaries_secs=None,
                                         save_model_secs=1000)
        with supervisor.managed_session() as sess:
            # Lets the checkpoint thread save step 0 and log it before training starts.
            deadline = time.monotonic() + 10
            while not os.path.exists(tmp_path / "checkpoint") and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(0.2)
            for _ in range(3):
                sess.run(train)
    assert _checkpoint_steps(tmp_path) == [0]
    assert {"graph.pbtxt", "model.ckpt-0.meta"} <= set(os.listdir(tmp_path))
    assert _events(tmp_path) == [
        (0, "file_version", ""), (0, "graph_def", ""), (0, "meta_graph_def", ""),
        (0, "session_log", "1:"), (0, "session_log", "3:model.ckpt"), (0, "session_log", "2:")]
    with tf.Graph().as_default():
        gs, v, train = model()
        supervisor = tf.train.Supervisor(logdir=str(tmp_path), save_summaries_secs=None,
                                         save_model_secs=None)
        with supervisor.managed_session() as sess:
            assert sess.run([gs, v]) == [0, 1.0]   # the Supervisor does not save at stop


def test_profiler_hook_checks_its_trigger_first():
    with pytest.raises(ValueError, match="^Either every_secs or every_steps should be "
                                         "provided.$"):
        tf.train.ProfilerHook()
