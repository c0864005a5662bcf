"""The SessionRunHooks in real MonitoredSessions; event files read back with TensorBoard's
EventAccumulator."""
import logging
import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest
from tensorboard.backend.event_processing import event_accumulator as ea

import tensorweave as tf
from tensorweave.train import basic_session_run_hooks


def _counter_graph():
    """A global step and a train op that increments it; returns (step, train)."""
    step = tf.train.get_or_create_global_step()
    return step, tf.assign_add(step, 1)


def _run_until_stop(sess, train, limit=100):
    runs = 0
    while not sess.should_stop() and runs < limit:
        sess.run(train)
        runs += 1
    return runs


def _events(logdir):
    acc = ea.EventAccumulator(str(logdir), size_guidance={ea.SCALARS: 0, ea.TENSORS: 0})
    acc.Reload()
    return acc


def test_second_or_step_timer(monkeypatch):
    timer = tf.train.SecondOrStepTimer(every_steps=3)
    assert timer.should_trigger_for_step(0) and timer.last_triggered_step() is None
    assert timer.update_last_triggered_step(0) == (None, None)
    assert [timer.should_trigger_for_step(s) for s in range(5)] == [False, False, False, True,
                                                                   True]
    elapsed_secs, elapsed_steps = timer.update_last_triggered_step(4)
    assert elapsed_steps == 4 and 0 <= elapsed_secs < 1
    clock = [1000.0]   # the timer's clock: 60 ms pass when the test says, not on a stall
    monkeypatch.setattr(basic_session_run_hooks, "time", SimpleNamespace(time=lambda: clock[0]))
    by_time = tf.train.SecondOrStepTimer(every_secs=0.05)
    by_time.update_last_triggered_step(1)
    assert not by_time.should_trigger_for_step(2)
    clock[0] += 0.06
    assert by_time.should_trigger_for_step(2) and not by_time.should_trigger_for_step(1)
    with pytest.raises(ValueError, match="Either every_secs or every_steps"):
        tf.train.SecondOrStepTimer()
    with pytest.raises(ValueError, match="Can not provide both"):
        tf.train.SecondOrStepTimer(every_secs=1, every_steps=1)


@pytest.mark.parametrize("kwargs, runs", [({"num_steps": 4}, 4), ({"last_step": 6}, 6)])
def test_stop_at_step_hook(kwargs, runs):
    with tf.Graph().as_default():
        step, train = _counter_graph()
        with tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(**kwargs)]) as sess:
            assert _run_until_stop(sess, train) == runs
            assert sess.run_step_fn(lambda step_context: step_context.session.run(step)) == runs


def test_stop_at_step_hook_errors():
    with pytest.raises(ValueError, match="One of num_steps or last_step"):
        tf.train.StopAtStepHook()
    with pytest.raises(ValueError, match="Only one of num_steps or last_step"):
        tf.train.StopAtStepHook(num_steps=1, last_step=1)
    with pytest.raises(ValueError, match="num_steps must be non-negative"):
        tf.train.StopAtStepHook(num_steps=-1)
    with tf.Graph().as_default():
        tf.constant(1)
        with pytest.raises(RuntimeError, match="Global step should be created to use "
                                               "StopAtStepHook"):
            tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(num_steps=1)])


class _Listener(tf.train.CheckpointSaverListener):
    def __init__(self, stop_after=None):
        self.calls = []
        self.stop_after = stop_after

    def begin(self):
        self.calls.append("begin")

    def before_save(self, session, global_step_value):
        self.calls.append(("before", int(global_step_value)))

    def after_save(self, session, global_step_value):
        self.calls.append(("after", int(global_step_value)))
        return global_step_value == self.stop_after

    def end(self, session, global_step_value):
        self.calls.append(("end", int(global_step_value)))


def test_checkpoint_saver_hook_with_listeners(tmp_path):
    listener = _Listener()
    with tf.Graph().as_default():
        step, train = _counter_graph()
        hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=3, listeners=[listener])
        with tf.train.SingularMonitoredSession(hooks=[hook]) as sess:
            for _ in range(7):
                sess.run(train)
    assert listener.calls == ["begin", ("before", 0), ("after", 0), ("before", 3),
                              ("after", 3), ("before", 6), ("after", 6), ("before", 7),
                              ("after", 7), ("end", 7)]
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-7")
    assert tf.train.load_variable(str(tmp_path), "global_step") == 7
    assert (tmp_path / "graph.pbtxt").exists() and (tmp_path / "model.ckpt-3.meta").exists()
    acc = ea.EventAccumulator(str(tmp_path))
    acc.Reload()
    assert acc.Graph() is not None and acc.MetaGraph() is not None


def test_checkpoint_listener_can_stop_training(tmp_path):
    listener = _Listener(stop_after=4)
    with tf.Graph().as_default():
        _, train = _counter_graph()
        hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=2, listeners=[listener],
                                            save_graph_def=False)
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            assert _run_until_stop(sess, train) == 4
    assert not (tmp_path / "graph.pbtxt").exists()
    with pytest.raises(ValueError, match="You cannot provide both saver and scaffold"):
        tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1, saver=object(),
                                     scaffold=tf.train.Scaffold())


def test_summary_saver_hook_writes_every_n_steps(tmp_path):
    with tf.Graph().as_default():
        step, train = _counter_graph()
        tf.summary.scalar("step_squared", tf.cast(step * step, tf.float32))
        hook = tf.train.SummarySaverHook(save_steps=2, output_dir=str(tmp_path),
                                         summary_op=tf.summary.merge_all())
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            for _ in range(5):
                sess.run(train)
    scalars = _events(tmp_path).Scalars("step_squared")
    # Summaries run in the same step as the increment, recorded at the step after it.
    assert [s.step for s in scalars] == [1, 3, 5]
    assert all(s.value in (float((s.step - 1) ** 2), float(s.step ** 2)) for s in scalars)
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
        tf.train.SummarySaverHook(save_steps=1)


def test_monitored_training_session_writes_summaries_and_step_rate(tmp_path):
    with tf.Graph().as_default():
        step, train = _counter_graph()
        tf.summary.scalar("loss", tf.constant(0.5))
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=str(tmp_path), hooks=[tf.train.StopAtStepHook(last_step=9)],
                save_summaries_steps=3, log_step_count_steps=4) as sess:
            assert _run_until_stop(sess, train) == 9
    acc = _events(tmp_path)
    assert [s.step for s in acc.Scalars("loss")] == [1, 4, 7]
    rates = acc.Scalars("global_step/sec")
    # Every 4 steps from the first trigger, at step 1.
    assert [s.step for s in rates] == [5, 9] and all(r.value > 0 for r in rates)
    assert tf.train.load_variable(str(tmp_path), "global_step") == 9  # saved at the end


def test_step_counter_hook_validation():
    with pytest.raises(ValueError, match="exactly one of every_n_steps and every_n_secs"):
        tf.train.StepCounterHook(every_n_steps=None)


def test_logging_tensor_hook(caplog):
    with tf.Graph().as_default(), caplog.at_level(logging.INFO, logger="tensorweave"):
        step, train = _counter_graph()
        doubled = tf.identity(step * 2, name="doubled")
        hooks = [tf.train.LoggingTensorHook([doubled.name], every_n_iter=2),
                 tf.train.LoggingTensorHook({"s": step}, at_end=True,
                                            formatter=lambda v: f"formatted {v['s']}")]
        with tf.train.MonitoredSession(hooks=hooks) as sess:
            for _ in range(5):
                sess.run(train)
    messages = [r.getMessage() for r in caplog.records]
    logged = [m.split(" (")[0] for m in messages if m.startswith("doubled:0 = ")]
    # Iterations 0, 2, 4; `step * 2` reads the step the run started from (as in TensorFlow).
    assert logged == ["doubled:0 = 0", "doubled:0 = 4", "doubled:0 = 8"]
    assert messages[-1] == "formatted 5"
    with pytest.raises(ValueError, match="either at_end and/or exactly one"):
        tf.train.LoggingTensorHook(["x"])
    with pytest.raises(ValueError, match="invalid every_n_iter=0"):
        tf.train.LoggingTensorHook(["x"], every_n_iter=0)


def test_logging_tensor_hook_names_graph_elements():
    with tf.Graph().as_default():
        tf.constant(1.0, name="c")
        tf.split(tf.constant([1.0, 2.0]), 2, name="pair")
        with pytest.raises(ValueError, match="Name pair is ambiguous"):
            tf.train.MonitoredSession(hooks=[tf.train.LoggingTensorHook(["pair"], at_end=True)])
    with tf.Graph().as_default():
        hook = tf.train.LoggingTensorHook({"c": "c"}, every_n_iter=1)
        tf.constant(2.0, name="c")
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            sess.run("c:0")
        assert hook._current_tensors["c"].name == "c:0"


def test_nan_tensor_hook():
    with tf.Graph().as_default():
        loss = tf.placeholder(tf.float32, [])
        with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(loss)]) as sess:
            sess.run(loss, {loss: 1.0})
            with pytest.raises(tf.train.NanLossDuringTrainingError,
                               match="NaN loss during training"):
                sess.run(loss, {loss: np.nan})
        hook = tf.train.NanTensorHook(loss, fail_on_nan_loss=False)
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            sess.run(loss, {loss: np.nan})
            assert sess.should_stop()


def test_final_ops_and_feed_fn_hooks():
    with tf.Graph().as_default():
        step, train = _counter_graph()
        x = tf.placeholder(tf.int64, [])
        total = tf.Variable(0, dtype=tf.int64)
        accumulate = tf.group(train, tf.assign_add(total, x))
        feeds = iter([1, 10, 100])
        final = tf.train.FinalOpsHook({"total": total, "steps": step})
        feed = tf.train.FeedFnHook(lambda: {x: next(feeds)})
        with tf.train.MonitoredSession(hooks=[final, feed]) as sess:
            for _ in range(3):
                sess.run(accumulate)
            assert final.final_ops_values is None
        assert final.final_ops_values == {"total": 111, "steps": 3}


def test_global_step_waiter_hook_waits_for_the_step():
    with tf.Graph().as_default():
        step, train = _counter_graph()
        hooks = [tf.train.GlobalStepWaiterHook(0), tf.train.GlobalStepWaiterHook(2)]
        with tf.train.MonitoredSession(hooks=hooks) as sess:
            raw = sess.run_step_fn(lambda step_context: step_context.session)
            chief = threading.Timer(0.1, lambda: [raw.run(train) for _ in range(2)])
            start = time.monotonic()   # before the timer starts: it fires 0.1 s after this
            chief.start()
            assert sess.run(train) == 3  # ran only after the "chief" reached step 2
            assert 0.1 <= time.monotonic() - start < 5.0
            chief.join(5.0)


def test_profiler_hook_writes_chrome_traces(tmp_path):
    import json
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        x = tf.Variable(1.0)
        train = tf.group(tf.assign_add(step, 1), tf.assign(x, x * 1.5))
        hook = tf.train.ProfilerHook(save_steps=2, output_dir=str(tmp_path))
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            for _ in range(5):
                sess.run(train)
    written = sorted(p.name for p in tmp_path.glob("timeline-*.json"))
    assert written == ["timeline-2.json", "timeline-4.json"]
    trace = json.loads((tmp_path / "timeline-2.json").read_text())
    names = {e.get("args", {}).get("name") for e in trace["traceEvents"]}
    assert any(n and "Assign" in n for n in names)
