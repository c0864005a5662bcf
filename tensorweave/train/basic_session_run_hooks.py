"""The basic SessionRunHooks that only look at the run: stopping, logging, NaN checks, feeds.

Hooks that write files (checkpoints, summaries, step rates, traces) are in saving_hooks.py.
A hook fetches what it needs through `before_run`'s SessionRunArgs so it costs no extra step;
values that must be exact (the global step at a trigger) are re-read with the raw session.
"""
from __future__ import annotations

import time

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.graph import get_default_graph
from tensorweave.platform import tf_logging as logging
from tensorweave.train.session_run_hook import SessionRunArgs, SessionRunHook
from tensorweave.train.training_util import get_or_create_global_step_read

__all__ = ["SecondOrStepTimer", "StopAtStepHook", "LoggingTensorHook", "NanTensorHook",
           "NanLossDuringTrainingError", "FinalOpsHook", "FeedFnHook", "GlobalStepWaiterHook"]


class SecondOrStepTimer:
    """Triggers at most once per step, every `every_secs` seconds or `every_steps` steps."""

    def __init__(self, every_secs=None, every_steps=None):
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self.reset()

    def reset(self) -> None:
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step) -> bool:
        """True if never triggered, or enough time / steps have passed since the last time."""
        last = self._last_triggered_step
        if last is None:
            return True
        if last == step:
            return False
        if self._every_secs is not None:
            return time.time() >= self._last_triggered_time + self._every_secs
        return step >= last + self._every_steps

    def update_last_triggered_step(self, step):
        """Records a trigger at `step`; returns (elapsed seconds, elapsed steps) or (None, None)
        for the first trigger."""
        now = time.time()
        if self._last_triggered_time is None:
            elapsed = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed

    def last_triggered_step(self):
        return self._last_triggered_step


class _NeverTriggerTimer(SecondOrStepTimer):
    """A timer that never triggers (LoggingTensorHook with only `at_end`)."""

    def __init__(self):
        self.reset()

    def should_trigger_for_step(self, step) -> bool:
        return False


def require_global_step(hook_name: str):
    """The global step's read (`global_step + 0`) that the hooks fetch, as TensorFlow's do:
    fetched with the train op, it is the step the run started from."""
    step = get_or_create_global_step_read()
    if step is None:
        raise RuntimeError(f"Global step should be created to use {hook_name}.")
    return step


def as_graph_element(obj):
    """The graph element `obj` names (a name without ':' means output 0 of a one-output op).

    Raises:
      ValueError: `obj` belongs to another graph, or names a multi-output op ambiguously.
    """
    graph = get_default_graph()
    if not isinstance(obj, str):
        if getattr(obj, "graph", None) is not graph:
            raise ValueError(f"Passed {obj} should have graph attribute that is equal to "
                             f"current graph {graph}.")
        return obj
    if ":" in obj:
        return graph.as_graph_element(obj)
    element = graph.as_graph_element(obj + ":0")
    try:
        graph.as_graph_element(obj + ":1")
    except (KeyError, ValueError):
        return element
    raise ValueError(f"Name {obj} is ambiguous, as this `Operation` has multiple outputs "
                     f"(at least 2).")


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches `last_step` (or `num_steps` more steps).

    Raises:
      ValueError: unless exactly one of `num_steps` and `last_step` is given, or if negative.
    """

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        if num_steps is not None and num_steps < 0:
            raise ValueError("num_steps must be non-negative")
        if last_step is not None and last_step < 0:
            raise ValueError("last_step must be non-negative")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self):
        self._global_step_tensor = require_global_step("StopAtStepHook")

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = session.run(self._global_step_tensor) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        # The fetched value may predate this step's increment: confirm before stopping.
        if run_values.results + 1 >= self._last_step:
            if run_context.session.run(self._global_step_tensor) >= self._last_step:
                run_context.request_stop()


class LoggingTensorHook(SessionRunHook):
    """Logs the values of tensors every N local steps, every N seconds, and/or at the end.

    Args:
      tensors: dict tag -> tensor (or name), or a list of tensors / names (tags in order).
      every_n_iter: log every N calls to `run` of this session.
      every_n_secs: log every N seconds.
      at_end: log once more when the session ends.
      formatter: `formatter(dict tag -> value) -> str`; default "tag = value, ...".
    """

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False,
                 formatter=None):
        only_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs "
                             "must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if isinstance(tensors, dict):
            self._tag_order = sorted(tensors)
        else:
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        self._tensors = tensors
        self._formatter = formatter
        self._timer = _NeverTriggerTimer() if only_at_end else SecondOrStepTimer(
            every_secs=every_n_secs, every_steps=every_n_iter)
        self._log_at_end = at_end

    def begin(self):
        self._timer.reset()
        self._iter_count = 0
        self._current_tensors = {tag: as_graph_element(t) for tag, t in self._tensors.items()}

    def before_run(self, run_context):
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current_tensors) if self._should_trigger else None

    def _log_tensors(self, values):
        elapsed_secs, _ = self._timer.update_last_triggered_step(self._iter_count)
        # TF prints with NumPy's suppress=True, a `formatter` too.
        with np.printoptions(suppress=True):
            if self._formatter:
                logging.info(self._formatter(values))
                return
            # str() of the NumPy value, as TF's "%s": 1.4 for a float32 1.4 (format() would
            # go through Python's float, 1.399999976158142).
            stats = ", ".join(f"{tag} = {values[tag]!s}" for tag in self._tag_order)
        if elapsed_secs is not None:
            logging.info("%s (%.3f sec)", stats, elapsed_secs)
        else:
            logging.info("%s", stats)

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))


class NanLossDuringTrainingError(RuntimeError):
    """Raised by NanTensorHook when the loss is NaN."""

    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Fails (NanLossDuringTrainingError) or requests a stop when `loss_tensor` is NaN."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results):
            message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                logging.error(message)
                raise NanLossDuringTrainingError
            logging.warning(message)
            run_context.request_stop()


class FinalOpsHook(SessionRunHook):
    """Evaluates `final_ops` when the session ends; the values are in `final_ops_values`."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        return self._final_ops_values

    def end(self, session):
        if self._final_ops is None:
            return
        try:
            self._final_ops_values = session.run(self._final_ops,
                                                 feed_dict=self._final_ops_feed_dict)
        except (errors.OutOfRangeError, StopIteration):
            logging.warning("An OutOfRangeError or StopIteration exception is raised by the "
                            "code in FinalOpsHook. This typically means the Ops running by the "
                            "FinalOpsHook have a dependency back to some input source, which "
                            "should be avoided. For example, the final ops should not have "
                            "dependency on an iterator.")
            raise


class FeedFnHook(SessionRunHook):
    """Feeds `feed_fn()` (a dict tensor -> value) into every run."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class GlobalStepWaiterHook(SessionRunHook):
    """Delays a worker's first step until the global step reaches `wait_until_step`."""

    def __init__(self, wait_until_step):
        self._wait_until_step = wait_until_step

    def begin(self):
        self._worker_is_started = False
        self._global_step_tensor = require_global_step("_GlobalStepWaiterHook")

    def before_run(self, run_context):
        if self._worker_is_started or self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        logging.info("Waiting for global step %d before starting training.",
                     self._wait_until_step)
        last_logged = 0
        while True:
            current = run_context.session.run(self._global_step_tensor)
            if current >= self._wait_until_step:
                self._worker_is_started = True
                return None
            if current - last_logged > 1000:
                logging.info("Waiting for global step %d before starting training. Current "
                             "step is %d.", self._wait_until_step, current)
                last_logged = current
            time.sleep(0.5)
