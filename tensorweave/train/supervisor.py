"""tf.train.Supervisor (the TF1 training manager before MonitoredSession) and basic_train_loop.

The Supervisor gathers or builds the init, ready, local-init, summary and saver ops, finalizes
the graph, prepares (chief: restore or initialize) or waits for a session, and runs the
"standard services" as LooperThreads under its Coordinator: a summary thread and a step-rate
thread every `save_summaries_secs`, a checkpoint thread every `save_model_secs`.
"""
from __future__ import annotations

import contextlib
import os
import time

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.platform import tf_logging as logging
from tensorweave.protos.event_pb2 import SessionLog
from tensorweave.protos.summary_pb2 import Summary
from tensorweave.train import training_util
from tensorweave.train.coordinator import Coordinator, LooperThread
from tensorweave.train.session_manager import SessionManager

__all__ = ["Supervisor", "basic_train_loop"]


def _first_in_collection(graph, key):
    """The first item of collection `key`, or None."""
    items = graph.get_collection(key)
    if len(items) > 1:
        logging.info("Found %d %s operations. Returning the first one.", len(items), key)
    return items[0] if items else None


def _default_global_step(graph):
    """The integer tensor `global_step:0` of `graph`, or None."""
    try:
        step = graph.get_tensor_by_name("global_step:0")
    except KeyError:
        return None
    if step.dtype.base_dtype in (_dtypes.int32, _dtypes.int64):
        return step
    logging.warning("Found 'global_step' is not an int type: %s", step.dtype)
    return None


def _build_defaults(graph):
    """Builders of the ops a Supervisor makes when the graph's collection has none."""
    from tensorweave.ops.control_flow_ops import group
    from tensorweave.ops.summary_ops import merge_all
    from tensorweave.ops.variables import (
        global_variables,
        global_variables_initializer,
        local_variables_initializer,
        report_uninitialized_variables,
    )
    from tensorweave.train.saver import Saver
    return {
        GraphKeys.READY_OP: report_uninitialized_variables,
        GraphKeys.INIT_OP: global_variables_initializer,
        GraphKeys.LOCAL_INIT_OP: lambda: group(
            local_variables_initializer(), *graph.get_collection(GraphKeys.TABLE_INITIALIZERS)),
        GraphKeys.SAVERS: lambda: Saver() if global_variables() else None,
        GraphKeys.SUMMARY_OP: merge_all,
        GraphKeys.GLOBAL_STEP: lambda: _default_global_step(graph),
    }


class Supervisor:
    """A training helper that checkpoints models and computes summaries (TF1).

    Arguments left at `Supervisor.USE_DEFAULT` come from the graph's collection of the same
    kind or a default built and added there; None disables the feature. Only the chief
    (`is_chief`) initializes or restores the model and writes checkpoints and events to
    `logdir`.
    """

    USE_DEFAULT = 0

    def __init__(self, graph=None, ready_op=USE_DEFAULT, ready_for_local_init_op=USE_DEFAULT,
                 is_chief=True, init_op=USE_DEFAULT, init_feed_dict=None,
                 local_init_op=USE_DEFAULT, logdir=None, summary_op=USE_DEFAULT,
                 saver=USE_DEFAULT, global_step=USE_DEFAULT, save_summaries_secs=120,
                 save_model_secs=600, recovery_wait_secs=30, stop_grace_secs=120,
                 checkpoint_basename="model.ckpt", session_manager=None,
                 summary_writer=USE_DEFAULT, init_fn=None, local_init_run_options=None):
        from tensorweave.framework.meta_graph import create_meta_graph_def
        from tensorweave.summary.writer import FileWriter
        graph = graph if graph is not None else get_default_graph()
        with graph.as_default():
            defaults = _build_defaults(graph)

            def pick(value, key, build=True):
                if value is not Supervisor.USE_DEFAULT:
                    return value
                value = _first_in_collection(graph, key)
                if value is None and build:
                    value = defaults[key]()
                    if value is not None:
                        graph.add_to_collection(key, value)
                return value

            self._ready_op = pick(ready_op, GraphKeys.READY_OP)
            # No default: kept None for backward compatibility, as in TF.
            self._ready_for_local_init_op = pick(ready_for_local_init_op,
                                                 GraphKeys.READY_FOR_LOCAL_INIT_OP, build=False)
            self._init_op = pick(init_op, GraphKeys.INIT_OP)
            self._local_init_op = pick(local_init_op, GraphKeys.LOCAL_INIT_OP)
            self._saver = pick(saver, GraphKeys.SAVERS)
            self._summary_op = pick(summary_op, GraphKeys.SUMMARY_OP)
            self._global_step = pick(global_step, GraphKeys.GLOBAL_STEP)
        self._graph = graph
        self._init_feed_dict = init_feed_dict
        self._meta_graph_def = create_meta_graph_def(
            graph_def=graph.as_graph_def(add_shapes=True), graph=graph,
            saver_def=self._saver.saver_def if self._saver else None)
        self._is_chief = is_chief
        self._coord = Coordinator()
        self._recovery_wait_secs = recovery_wait_secs
        self._stop_grace_secs = stop_grace_secs
        self._init_fn = init_fn
        self._logdir = self._save_summaries_secs = self._save_model_secs = None
        self._save_path = self._summary_writer = None
        self._graph_added_to_summary = False
        if is_chief:
            self._logdir = logdir
            self._save_summaries_secs = save_summaries_secs
            self._save_model_secs = save_model_secs
            if logdir:
                self._save_path = os.path.join(logdir, checkpoint_basename)
            if summary_writer is Supervisor.USE_DEFAULT:
                self._summary_writer = FileWriter(logdir) if logdir else None
            else:
                self._summary_writer = summary_writer
        self._session_manager = session_manager or SessionManager(
            local_init_op=self._local_init_op, ready_op=self._ready_op,
            ready_for_local_init_op=self._ready_for_local_init_op, graph=graph,
            recovery_wait_secs=recovery_wait_secs,
            local_init_run_options=local_init_run_options)
        self._verify_setup()
        graph.finalize()

    def _verify_setup(self):
        """A non-chief replica needs every variable placed on a device explicitly."""
        if self._is_chief:
            return
        for op in self._graph.get_operations():
            if op.type in ("Variable", "VariableV2") and not op.device:
                raise ValueError(f"When using replicas, all Variables must have their device "
                                 f"set: {op}")

    is_chief = property(lambda self: self._is_chief)
    session_manager = property(lambda self: self._session_manager)
    coord = property(lambda self: self._coord)
    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    summary_writer = property(lambda self: self._summary_writer)
    summary_op = property(lambda self: self._summary_op)
    save_summaries_secs = property(lambda self: self._save_summaries_secs)
    global_step = property(lambda self: self._global_step)
    saver = property(lambda self: self._saver)
    save_model_secs = property(lambda self: self._save_model_secs)
    save_path = property(lambda self: self._save_path)

    def _write_graph(self):
        """Writes graph.pbtxt to logdir and the graph and meta graph to the event file once."""
        from tensorweave.framework.graph_io import write_graph
        if self._logdir:
            write_graph(self._graph.as_graph_def(add_shapes=True), self._logdir, "graph.pbtxt")
        if self._summary_writer and not self._graph_added_to_summary:
            self._summary_writer.add_graph(self._graph)
            self._summary_writer.add_meta_graph(self._meta_graph_def)
            self._graph_added_to_summary = True

    def start_standard_services(self, sess):
        """Starts the summary, step-counter and checkpoint threads (chief only).

        Returns:
          the started threads (None without a logdir).

        Raises:
          RuntimeError: on a non-chief supervisor.
        """
        if not self._is_chief:
            raise RuntimeError("Only chief supervisor can start standard services. Because "
                               "only chief supervisors can write events.")
        if not self._logdir:
            logging.warning("Standard services need a 'logdir' passed to the SessionManager")
            return None
        if self._global_step is not None and self._summary_writer:
            step = training_util.global_step(sess, self._global_step)
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START), step)
        threads = []
        if self._save_summaries_secs and self._summary_writer:
            if self._summary_op is not None:
                threads.append(SVSummaryThread(self, sess))
            if self._global_step is not None:
                threads.append(SVStepCounterThread(self, sess))
        if self._saver and self._save_model_secs:
            threads.append(SVTimerCheckpointThread(self, sess))
        for t in threads:
            t.start()
        return threads

    def prepare_or_wait_for_session(self, master="", config=None, wait_for_checkpoint=False,
                                    max_wait_secs=7200, start_standard_services=True):
        """A ready session: the chief restores from logdir or initializes, a worker waits;
        then the standard services and queue runners start."""
        self._coord.clear_stop()
        if self._summary_writer:
            self._summary_writer.reopen()
        if self._is_chief:
            sess = self._session_manager.prepare_session(
                master, init_op=self._init_op, saver=self._saver, checkpoint_dir=self._logdir,
                wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs,
                config=config, init_feed_dict=self._init_feed_dict, init_fn=self._init_fn)
            self._write_graph()
            if start_standard_services:
                logging.info("Starting standard services.")
                self.start_standard_services(sess)
        else:
            sess = self._session_manager.wait_for_session(master, config=config,
                                                          max_wait_secs=max_wait_secs)
        if start_standard_services:
            logging.info("Starting queue runners.")
            self.start_queue_runners(sess)
        return sess

    def start_queue_runners(self, sess, queue_runners=None):
        """Starts threads for `queue_runners` (default: the graph's QUEUE_RUNNERS)."""
        if queue_runners is None:
            queue_runners = self._graph.get_collection(GraphKeys.QUEUE_RUNNERS)
        threads = []
        for qr in queue_runners:
            threads.extend(qr.create_threads(sess, coord=self._coord, daemon=True, start=True))
        return threads

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """Starts a LooperThread calling `target` every `timer_interval_secs`."""
        return LooperThread.loop(self._coord, timer_interval_secs, target, args, kwargs)

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False):
        """Stops the services and joins the threads, re-raising the first error they
        reported; then closes the summary writer."""
        self._coord.request_stop()
        try:
            self._coord.join(threads, stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            if close_summary_writer and self._summary_writer:
                self._summary_writer.add_session_log(SessionLog(status=SessionLog.STOP))
                self._summary_writer.close()
                self._graph_added_to_summary = False

    def request_stop(self, ex=None):
        self._coord.request_stop(ex=ex)

    def should_stop(self):
        return self._coord.should_stop()

    def stop_on_exception(self):
        return self._coord.stop_on_exception()

    def wait_for_stop(self):
        self._coord.wait_for_stop()

    def summary_computed(self, sess, summary, global_step=None):
        """Writes a summary computed by the caller (at the current global step by default)."""
        if not self._summary_writer:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self._global_step is not None:
            global_step = training_util.global_step(sess, self._global_step)
        self._summary_writer.add_summary(summary, global_step)

    @contextlib.contextmanager
    def managed_session(self, master="", config=None, start_standard_services=True,
                        close_summary_writer=True):
        """A context manager yielding a prepared session; on exit the services stop, errors
        in the block (other than OutOfRangeError) are re-raised, and the session closes."""
        sess = None
        try:
            sess = self.prepare_or_wait_for_session(
                master=master, config=config, start_standard_services=start_standard_services)
            yield sess
        except Exception as e:  # noqa: BLE001 - reported through the coordinator, raised by stop
            self.request_stop(e)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                if sess is not None:
                    with contextlib.suppress(Exception):
                        sess.close()

    # TensorFlow keeps the CamelCase names of its first releases as aliases.
    Loop = loop
    PrepareSession = prepare_or_wait_for_session
    RequestStop = request_stop
    ShouldStop = should_stop
    StartQueueRunners = start_queue_runners
    StartStandardServices = start_standard_services
    Stop = stop
    StopOnException = stop_on_exception
    SummaryComputed = summary_computed
    WaitForStop = wait_for_stop


class SVSummaryThread(LooperThread):
    """Runs the summary op and writes it every `save_summaries_secs`."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv = sv
        self._sess = sess

    def run_loop(self):
        if self._sv.global_step is not None:
            summary, step = self._sess.run([self._sv.summary_op, self._sv.global_step])
        else:
            summary, step = self._sess.run(self._sv.summary_op), None
        if self._sv.summary_writer:
            logging.info("Recording summary at step %s.", step)
            self._sv.summary_writer.add_summary(summary, step)


class SVStepCounterThread(LooperThread):
    """Records global steps per second every `save_summaries_secs`."""

    def __init__(self, sv, sess, step_counter=None):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv = sv
        self._sess = sess
        self._step_counter = sv.global_step if step_counter is None else step_counter
        self._summary_tag = f"{self._step_counter.op.name}/sec"

    def start_loop(self):
        self._last_time = time.time()
        self._last_step = training_util.global_step(self._sess, self._step_counter)

    def run_loop(self):
        step = training_util.global_step(self._sess, self._step_counter)
        now = time.time()
        elapsed = now - self._last_time
        rate = (step - self._last_step) / elapsed if elapsed > 0 else float("inf")
        self._last_step, self._last_time = step, now
        if self._sv.summary_writer:
            self._sv.summary_writer.add_summary(
                Summary(value=[Summary.Value(tag=self._summary_tag, simple_value=rate)]), step)
        logging.log_first_n(logging.INFO, "%s: %g", 10, self._summary_tag, rate)


class SVTimerCheckpointThread(LooperThread):
    """Saves a checkpoint every `save_model_secs` (the first right away)."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_model_secs)
        self._sv = sv
        self._sess = sess

    def run_loop(self):
        sv = self._sv
        logging.info("Saving checkpoint to path %s", sv.save_path)
        sv.saver.save(self._sess, sv.save_path, global_step=sv.global_step)
        if sv.summary_writer and sv.global_step is not None:
            step = training_util.global_step(self._sess, sv.global_step)
            sv.summary_writer.add_session_log(
                SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=sv.save_path), step)


def basic_train_loop(supervisor, train_step_fn, args=None, kwargs=None, master=""):
    """Calls `train_step_fn(sess, *args, **kwargs)` until the supervisor stops; starts over
    with a new managed session after an AbortedError."""
    args, kwargs = args or [], kwargs or {}
    should_retry = True
    while should_retry:
        try:
            should_retry = False
            with supervisor.managed_session(master) as sess:
                while not supervisor.should_stop():
                    train_step_fn(sess, *args, **kwargs)
        except errors.AbortedError:
            should_retry = True
