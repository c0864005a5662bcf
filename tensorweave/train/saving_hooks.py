"""SessionRunHooks that write files: checkpoints, summaries, step rates and Chrome traces.

Each triggers on a SecondOrStepTimer keyed by the global step. The global step comes along
with the run's fetches; when a trigger looks due, the exact value is re-read with the raw
session (the fetched one may predate the step's own increment).
"""
from __future__ import annotations

import os

from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.platform import tf_logging as logging
from tensorweave.protos import config_pb2
from tensorweave.protos.event_pb2 import SessionLog
from tensorweave.protos.summary_pb2 import Summary
from tensorweave.summary.writer import FileWriterCache
from tensorweave.train.basic_session_run_hooks import SecondOrStepTimer, require_global_step
from tensorweave.train.session_run_hook import SessionRunArgs, SessionRunHook
from tensorweave.train.training_util import get_global_step

__all__ = ["CheckpointSaverListener", "CheckpointSaverHook", "StepCounterHook",
           "SummarySaverHook", "ProfilerHook"]


class CheckpointSaverListener:
    """Callbacks around CheckpointSaverHook's saves; `after_save` returning True stops
    training."""

    def begin(self):
        """Called once, when the hook's `begin` runs."""

    def before_save(self, session, global_step_value):
        """Called before each save."""

    def after_save(self, session, global_step_value):
        """Called after each save; return True to request a stop."""

    def end(self, session, global_step_value):
        """Called once at the end, after the final save."""


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint when the session is created, every N seconds or steps, and at the end.

    Args:
      checkpoint_dir: directory of the checkpoints (also gets graph.pbtxt and events).
      save_secs: save every N seconds.
      save_steps: save every N global steps.
      saver: the Saver (default: the scaffold's, else the SAVERS collection's).
      checkpoint_basename: checkpoint file prefix.
      scaffold: a Scaffold supplying the saver.
      listeners: CheckpointSaverListeners called around each save.
      save_graph_def: also write graph.pbtxt and a .meta file per checkpoint.

    Raises:
      ValueError: both `saver` and `scaffold`, or not exactly one of save_secs / save_steps.
    """

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None,
                 save_graph_def=True):
        logging.info("Create CheckpointSaverHook.")
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = listeners or []
        self._save_graph_def = save_graph_def

    def begin(self):
        self._summary_writer = FileWriterCache.get(self._checkpoint_dir)
        self._global_step_tensor = require_global_step("CheckpointSaverHook")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord):
        from tensorweave.framework.graph_io import write_graph
        from tensorweave.framework.meta_graph import create_meta_graph_def
        global_step = session.run(self._global_step_tensor)
        graph = get_default_graph()
        if self._save_graph_def:
            write_graph(graph.as_graph_def(add_shapes=True), self._checkpoint_dir,
                        "graph.pbtxt")
        saver = self._get_saver()
        self._summary_writer.add_graph(graph)
        self._summary_writer.add_meta_graph(create_meta_graph_def(
            graph_def=graph.as_graph_def(add_shapes=True),
            saver_def=saver.saver_def if saver else None))
        self._save(session, global_step)
        self._timer.update_last_triggered_step(global_step)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        if self._timer.should_trigger_for_step(run_values.results + 1):
            global_step = run_context.session.run(self._global_step_tensor)
            if self._timer.should_trigger_for_step(global_step):
                self._timer.update_last_triggered_step(global_step)
                if self._save(run_context.session, global_step):
                    run_context.request_stop()

    def end(self, session):
        last_step = session.run(self._global_step_tensor)
        if last_step != self._timer.last_triggered_step():
            self._save(session, last_step)
        for listener in self._listeners:
            listener.end(session, last_step)

    def _save(self, session, step) -> bool:
        """Saves the checkpoint of `step`; True if a listener asks to stop."""
        logging.info("Calling checkpoint listeners before saving checkpoint %d...", step)
        for listener in self._listeners:
            listener.before_save(session, step)
        logging.info("Saving checkpoints for %d into %s.", step, self._save_path)
        self._get_saver().save(session, self._save_path, global_step=step,
                               write_meta_graph=self._save_graph_def)
        self._summary_writer.add_session_log(
            SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._save_path), step)
        logging.info("Calling checkpoint listeners after saving checkpoint %d...", step)
        should_stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                logging.info("A CheckpointSaverListener requested that training be stopped. "
                             "listener: %s", listener)
                should_stop = True
        return should_stop

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = get_default_graph().get_collection(GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError(f"No items in collection {GraphKeys.SAVERS}. Please add a saver "
                               f"to the collection or provide a saver or scaffold.")
        if len(savers) > 1:
            raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}. Please "
                               f"indicate which one to use by passing it to the constructor.")
        self._saver = savers[0]
        return self._saver


def _writer_for(output_dir, summary_writer):
    """The given writer, else the cached FileWriter of `output_dir` (None without one)."""
    if summary_writer is None and output_dir:
        return FileWriterCache.get(output_dir)
    return summary_writer


class StepCounterHook(SessionRunHook):
    """Logs and records (as the summary `<global step op>/sec`) global steps per second."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None,
                 summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._last_global_step = None

    def begin(self):
        self._summary_writer = _writer_for(self._output_dir, self._summary_writer)
        self._global_step_tensor = require_global_step("StepCounterHook")
        self._summary_tag = get_global_step().op.name + "/sec"

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        stale_step = run_values.results
        if self._timer.should_trigger_for_step(stale_step + 1):
            global_step = run_context.session.run(self._global_step_tensor)
            if self._timer.should_trigger_for_step(global_step):
                elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(global_step)
                if elapsed_time is not None:
                    self._record(elapsed_steps / elapsed_time, global_step)
        if stale_step == self._last_global_step:
            logging.log_first_n(
                logging.WARN, "It seems that global step (tf.train.get_global_step) has not "
                "been increased. Current value (could be stable): %s vs previous value: %s. "
                "You could increase the global step by passing tf.train.get_global_step() to "
                "Optimizer.apply_gradients or Optimizer.minimize.", 5, stale_step,
                self._last_global_step)
        self._last_global_step = stale_step

    def _record(self, steps_per_sec, global_step):
        if self._summary_writer is not None:
            summary = Summary(value=[Summary.Value(tag=self._summary_tag,
                                                   simple_value=steps_per_sec)])
            self._summary_writer.add_summary(summary, global_step)
        logging.info("%s: %g", self._summary_tag, steps_per_sec)


class SummarySaverHook(SessionRunHook):
    """Runs the summary op every N steps or seconds and writes it with the global step.

    Raises:
      ValueError: unless exactly one of `scaffold` and `summary_op` is given.
    """

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
                 scaffold=None, summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        self._summary_writer = _writer_for(self._output_dir, self._summary_writer)
        self._next_step = None
        self._global_step_tensor = require_global_step("SummarySaverHook")

    def before_run(self, run_context):
        self._request_summary = (self._next_step is None or
                                 self._timer.should_trigger_for_step(self._next_step))
        requests = {"global_step": self._global_step_tensor}
        summary_ops = self._get_summary_op() if self._request_summary else None
        if summary_ops is not None:
            requests["summary"] = summary_ops
        return SessionRunArgs(requests)

    def after_run(self, run_context, run_values):
        if not self._summary_writer:
            return
        global_step = run_values.results["global_step"] + 1
        if self._next_step is None or self._request_summary:
            global_step = run_context.session.run(self._global_step_tensor)
        if self._next_step is None:
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START),
                                                 global_step)
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            for summary in run_values.results.get("summary", ()):
                self._summary_writer.add_summary(summary, global_step)
        self._next_step = global_step + 1

    def end(self, session=None):
        if self._summary_writer:
            self._summary_writer.flush()

    def _get_summary_op(self):
        """The summary tensors to fetch, as a list, or None."""
        op = self._summary_op if self._summary_op is not None else self._scaffold.summary_op
        if op is None:
            return None
        return op if isinstance(op, list) else [op]


class ProfilerHook(SessionRunHook):
    """Every N steps or seconds, traces one step and writes `timeline-<step>.json` (Chrome
    trace format) to `output_dir`; the run metadata also goes to the event file."""

    def __init__(self, save_steps=None, save_secs=None, output_dir="", show_dataflow=True,
                 show_memory=False):
        # The timer first: bad arguments raise before the event file is created.
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._output_file = os.path.join(output_dir, "timeline-{}.json")
        self._file_writer = FileWriterCache.get(output_dir)
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory

    def begin(self):
        self._next_step = None
        self._global_step_tensor = require_global_step("ProfilerHook")

    def before_run(self, run_context):
        self._request_trace = (self._next_step is not None and
                               self._timer.should_trigger_for_step(self._next_step))
        options = config_pb2.RunOptions(trace_level=config_pb2.RunOptions.FULL_TRACE) \
            if self._request_trace else None
        return SessionRunArgs({"global_step": self._global_step_tensor}, options=options)

    def after_run(self, run_context, run_values):
        stale_step = run_values.results["global_step"]
        if self._next_step is None:
            # Do not trace before N steps or seconds have passed.
            self._timer.update_last_triggered_step(stale_step)
        global_step = stale_step + 1
        if self._request_trace:
            global_step = run_context.session.run(self._global_step_tensor)
            self._timer.update_last_triggered_step(global_step)
            self._save(global_step, run_values.run_metadata.step_stats)
            self._file_writer.add_run_metadata(run_values.run_metadata, f"step_{global_step}")
        self._next_step = global_step + 1

    def _save(self, step, step_stats):
        from tensorweave.client.timeline import Timeline
        path = self._output_file.format(step)
        logging.info("Saving timeline for %d into '%s'.", step, path)
        trace = Timeline(step_stats).generate_chrome_trace_format(
            show_dataflow=self._show_dataflow, show_memory=self._show_memory)
        with open(path, "w") as f:
            f.write(trace)
