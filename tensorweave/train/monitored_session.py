"""tf.train.MonitoredSession and friends: initialize or restore, run hooks, recover.

The session also coordinates the queue-runner threads and survives preemption.

A MonitoredSession is a stack of wrappers around a raw Session, outermost first:
  _RecoverableSession   on AbortedError / UnavailableError: close, recreate, restore, retry
  _CoordinatedSession   owns the Coordinator of the queue-runner threads; re-raises their errors
  _HookedSession        calls the hooks around every run, merging their fetches/feeds/options
Creating one calls every hook's `begin()`, finalizes the graph (Scaffold.finalize), creates the
session through a SessionCreator (restore the latest checkpoint or initialize), starts the
queue runners and calls `after_create_session`. Closing it normally calls `end()` on the hooks;
the graph is unfinalized again if it was not finalized before.
"""
from __future__ import annotations

import inspect

from tensorweave.framework import errors
from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.platform import tf_logging as logging
from tensorweave.protos import config_pb2
from tensorweave.train.saving_hooks import (
    CheckpointSaverHook,
    StepCounterHook,
    SummarySaverHook,
)
from tensorweave.train.scaffold import Scaffold
from tensorweave.train.session_manager import SessionManager
from tensorweave.train.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunValues

__all__ = ["SessionCreator", "ChiefSessionCreator", "WorkerSessionCreator", "MonitoredSession",
           "SingularMonitoredSession", "MonitoredTrainingSession"]

_PREEMPTION_ERRORS = (errors.AbortedError, errors.UnavailableError)
# TF's advice closing each "a new session will be created" log line.
_GRPC_ADVICE = ("This error may also occur due to a gRPC failure caused by high memory or "
                "network bandwidth usage in the parameter servers. If this error occurs "
                "repeatedly, try increasing the number of parameter servers assigned to the job.")
USE_DEFAULT = object()


class SessionCreator:
    """A factory for tf.Session: `create_session()`."""

    def create_session(self):
        raise NotImplementedError(f"create_session is not implemented for {self}.")


def _session_manager(scaffold):
    return SessionManager(local_init_op=scaffold.local_init_op,
                          local_init_feed_dict=scaffold.local_init_feed_dict,
                          ready_op=scaffold.ready_op,
                          ready_for_local_init_op=scaffold.ready_for_local_init_op,
                          graph=get_default_graph())


class ChiefSessionCreator(SessionCreator):
    """Creates a session that restores the latest checkpoint of `checkpoint_dir` (or
    `checkpoint_filename_with_path`) or else initializes the model."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path
        self._scaffold = scaffold or Scaffold()
        self._session_manager = None
        self._master = master
        self._config = config

    def create_session(self):
        self._scaffold.finalize()
        if self._session_manager is None:
            self._session_manager = _session_manager(self._scaffold)
        return self._session_manager.prepare_session(
            self._master, saver=self._scaffold.saver, checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path,
            config=self._config, init_op=self._scaffold.init_op,
            init_feed_dict=self._scaffold.init_feed_dict, init_fn=self._scaffold.init_fn)


class WorkerSessionCreator(SessionCreator):
    """Creates a session once the chief has initialized the model (waits up to
    `max_wait_secs`)."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        self._scaffold = scaffold or Scaffold()
        self._session_manager = None
        self._master = master
        self._config = config
        self._max_wait_secs = max_wait_secs

    def create_session(self):
        self._scaffold.finalize()
        if self._session_manager is None:
            self._session_manager = _session_manager(self._scaffold)
        return self._session_manager.wait_for_session(
            self._master, config=self._config, max_wait_secs=self._max_wait_secs)


def _start_queue_runners(sess, coord) -> list:
    """Starts the threads of the graph's QueueRunners, reporting to `coord`."""
    threads = []
    for qr in sess.graph.get_collection(GraphKeys.QUEUE_RUNNERS):
        threads.extend(qr.create_threads(sess, coord=coord, daemon=True, start=True))
    return threads


class StepContext:
    """What `run_step_fn`'s step function gets: the raw session and a hooked `run`."""

    def __init__(self, session, run_with_hooks_fn):
        self._session = session
        self._run_with_hooks_fn = run_with_hooks_fn

    @property
    def session(self):
        return self._session

    def run_with_hooks(self, *args, **kwargs):
        return self._run_with_hooks_fn(*args, **kwargs)

    def request_stop(self):
        """Ends the iterations: raises StopIteration, which the `with` block treats as a
        normal end."""
        raise StopIteration("step_fn has requested the iterations to stop.")


class _WrappedSession:
    """Forwards to a wrapped session; the base of the wrapper stack."""

    def __init__(self, sess):
        self._sess = sess
        self._wrapped_is_stoppable = isinstance(sess, _WrappedSession)

    @property
    def graph(self):
        return self._sess.graph

    @property
    def sess_str(self):
        return self._sess.sess_str

    def _check_stop(self) -> bool:
        return False

    def should_stop(self) -> bool:
        if self._check_stop():
            return True
        if self._sess:
            return self._wrapped_is_stoppable and self._sess.should_stop()
        return True

    def close(self):
        if self._sess:
            try:
                self._sess.close()
            except _PREEMPTION_ERRORS as e:
                logging.error("An error occurred when attempting to close the session. This "
                              "may be due to a preemption in a connected worker or parameter "
                              "server. Error: %s", e)
            finally:
                self._sess = None

    def run(self, *args, **kwargs):
        return self._sess.run(*args, **kwargs)

    def run_step_fn(self, step_fn, raw_session, run_with_hooks):
        return step_fn(StepContext(raw_session, run_with_hooks or self.run))


class _HookedSession(_WrappedSession):
    """Calls the hooks' before_run / after_run around every run."""

    def __init__(self, sess, hooks):
        super().__init__(sess)
        self._hooks = hooks
        self._should_stop = False

    def _check_stop(self) -> bool:
        return self._should_stop

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        actual_fetches = {"caller": fetches}
        run_context = SessionRunContext(original_args=SessionRunArgs(fetches, feed_dict),
                                        session=self._sess)
        options = options or config_pb2.RunOptions()
        feed_dict = self._call_hook_before_run(run_context, actual_fetches, feed_dict, options)
        run_metadata = run_metadata or config_pb2.RunMetadata()
        outputs = self._sess.run(actual_fetches, feed_dict=feed_dict, options=options,
                                 run_metadata=run_metadata)
        for hook in self._hooks:
            hook.after_run(run_context, SessionRunValues(results=outputs.get(hook),
                                                         options=options,
                                                         run_metadata=run_metadata))
        self._should_stop = self._should_stop or run_context.stop_requested
        return outputs["caller"]

    def _call_hook_before_run(self, run_context, fetch_dict, user_feed_dict, options):
        """Adds each hook's fetches under the hook; returns the merged feed_dict."""
        hook_feeds = {}
        for hook in self._hooks:
            request = hook.before_run(run_context)
            if request is None:
                continue
            if request.fetches is not None:
                fetch_dict[hook] = request.fetches
            if request.feed_dict:
                _raise_if_feeds_intersect(hook_feeds, request.feed_dict,
                                          "Same tensor is fed by two hooks.")
                hook_feeds.update(request.feed_dict)
            if request.options:
                _merge_run_options(options, request.options)
        if not hook_feeds:
            return user_feed_dict
        if not user_feed_dict:
            return hook_feeds
        _raise_if_feeds_intersect(user_feed_dict, hook_feeds,
                                  "Same tensor is fed by a SessionRunHook and user.")
        merged = dict(user_feed_dict)
        merged.update(hook_feeds)
        return merged


def _raise_if_feeds_intersect(feeds_a, feeds_b, message):
    common = set(feeds_a) & set(feeds_b)
    if common:
        # TF prints the list of the keys themselves (their reprs); sorted to be stable.
        listed = sorted(common, key=lambda key: getattr(key, "name", str(key)))
        raise RuntimeError(f"{message} Conflict(s): {listed}")


def _merge_run_options(options, incoming):
    """Folds a hook's RunOptions into the run's: the most detailed trace, the longest timeout."""
    options.trace_level = max(options.trace_level, incoming.trace_level)
    options.timeout_in_ms = max(options.timeout_in_ms, incoming.timeout_in_ms)
    options.inter_op_thread_pool = max(options.inter_op_thread_pool,
                                       incoming.inter_op_thread_pool)
    options.output_partition_graphs = (options.output_partition_graphs or
                                       incoming.output_partition_graphs)
    options.report_tensor_allocations_upon_oom = (
        options.report_tensor_allocations_upon_oom or
        incoming.report_tensor_allocations_upon_oom)


class _CoordinatedSession(_WrappedSession):
    """Owns the Coordinator: its recorded thread errors surface in `run` and `should_stop`;
    `close` stops and joins the threads."""

    def __init__(self, sess, coord, stop_grace_period_secs=120):
        super().__init__(sess)
        self._coord = coord
        self._stop_grace_period_secs = stop_grace_period_secs

    def _check_stop(self) -> bool:
        self._coord.raise_requested_exception()
        return self._coord.should_stop()

    def close(self):
        self._coord.request_stop()
        try:
            self._coord.join(stop_grace_period_secs=self._stop_grace_period_secs,
                             ignore_live_threads=True)
        finally:
            try:
                super().close()
            except Exception:  # noqa: BLE001 - join() already reported the useful error
                pass

    def _reraise_root_cause(self, call, *args):
        """Runs `call`; on a non-preemption error, a preemption a thread reported to the
        coordinator is the root cause and is raised instead."""
        try:
            return call(*args)
        except _PREEMPTION_ERRORS:
            raise
        except Exception as original:
            try:
                self._coord.raise_requested_exception()
            except _PREEMPTION_ERRORS:
                raise
            except Exception:  # noqa: BLE001 - the run's own error is the one to report
                raise original from None
            raise

    def run(self, *args, **kwargs):
        return self._reraise_root_cause(lambda: self._sess.run(*args, **kwargs))

    def run_step_fn(self, step_fn, raw_session, run_with_hooks):
        return self._reraise_root_cause(self._sess.run_step_fn, step_fn, raw_session,
                                        run_with_hooks)


class _RecoverableSession(_WrappedSession):
    """Recreates the session (restoring the latest checkpoint) when a step is preempted."""

    def __init__(self, sess_creator):
        self._sess_creator = sess_creator
        super().__init__(self._create_session())

    def _create_session(self):
        while True:
            try:
                return self._sess_creator.create_session()
            except _PREEMPTION_ERRORS as e:
                logging.info("An error was raised while a session was being created. This may "
                             "be due to a preemption of a connected worker or parameter "
                             "server. A new session will be created. %s Error: %s",
                             _GRPC_ADVICE, e)

    def _check_stop(self) -> bool:
        try:
            return self._sess._check_stop() if self._sess else True
        except _PREEMPTION_ERRORS as e:
            logging.info("An error was raised while considering whether the session is "
                         "complete. This may be due to a preemption in a connected worker or "
                         "parameter server. The current session will be closed and a new "
                         "session will be created. %s Error: %s", _GRPC_ADVICE, e)
            self.close()
            self._sess = self._create_session()
            return False
        except Exception:  # noqa: BLE001 - should_stop answers True rather than raising
            return True

    def _retry(self, call):
        """Runs `call()` until it is not preempted, recreating the session each time."""
        while True:
            try:
                if not self._sess:
                    self._sess = self._create_session()
                return call()
            except _PREEMPTION_ERRORS as e:
                logging.info("An error was raised. This may be due to a preemption in a "
                             "connected worker or parameter server. The current session will "
                             "be closed and a new session will be created. %s Error: %s",
                             _GRPC_ADVICE, e)
                self.close()
                self._sess = None

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        return self._retry(lambda: self._sess.run(fetches, feed_dict=feed_dict,
                                                  options=options, run_metadata=run_metadata))

    def run_step_fn(self, step_fn, raw_session, run_with_hooks):
        return self._retry(lambda: self._sess.run_step_fn(
            step_fn, self._sess_creator.tf_sess, self._sess.run))


class _CoordinatedSessionCreator(SessionCreator):
    """Creates the raw session, starts the queue runners, tells the hooks, and stacks the
    coordinated and hooked wrappers on it."""

    def __init__(self, session_creator, hooks, stop_grace_period_secs):
        self._session_creator = session_creator
        self._hooks = hooks
        self._stop_grace_period_secs = stop_grace_period_secs
        self.tf_sess = None
        self.coord = None

    def create_session(self):
        from tensorweave.train.coordinator import Coordinator
        self.tf_sess = self._session_creator.create_session()
        # Every error reaches the caller: nothing counts as a clean stop here.
        self.coord = Coordinator(clean_stop_exception_types=[])
        _start_queue_runners(self.tf_sess, self.coord)
        for hook in self._hooks:
            hook.after_create_session(self.tf_sess, self.coord)
        return _CoordinatedSession(_HookedSession(self.tf_sess, self._hooks), self.coord,
                                   self._stop_grace_period_secs)


class _MonitoredSession:
    """The shared body of MonitoredSession and SingularMonitoredSession."""

    StepContext = StepContext   # what `run_step_fn`'s step function receives (TF's name)

    def __init__(self, session_creator, hooks, should_recover, stop_grace_period_secs=120):
        self._graph_was_finalized = get_default_graph().finalized
        self._hooks = list(hooks or [])
        for hook in self._hooks:
            hook.begin()
        self._coordinated_creator = _CoordinatedSessionCreator(
            session_creator or ChiefSessionCreator(), self._hooks, stop_grace_period_secs)
        if should_recover:
            self._sess = _RecoverableSession(self._coordinated_creator)
        else:
            self._sess = self._coordinated_creator.create_session()

    @property
    def graph(self):
        return self._tf_sess().graph

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs `fetches` like Session.run, with the hooks adding their fetches and feeds.

        Raises:
          RuntimeError: if called after `should_stop()` turned True.
        """
        return self._sess.run(fetches, feed_dict=feed_dict, options=options,
                              run_metadata=run_metadata)

    def run_step_fn(self, step_fn):
        """Calls `step_fn(step_context)` with the raw session and a `run_with_hooks`.

        Raises:
          ValueError: if `step_fn` takes other arguments than `step_context` (and `self`).
        """
        params = tuple(inspect.signature(step_fn).parameters)
        if params not in (("step_context",), ("self", "step_context")):
            raise ValueError(f"`step_fn` may either have one `step_context` argument, or "
                             f"`self` and `step_context` arguments if it's an instance method. "
                             f"Got {params} instead.")
        return self._sess.run_step_fn(step_fn, self._tf_sess(), run_with_hooks=None)

    def should_stop(self) -> bool:
        """True once a hook or the coordinator asked to stop, or the session is closed."""
        return self._sess is None or self._sess.should_stop()

    def close(self):
        self._close_internal()

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception_value, traceback):
        if exception_type in (errors.OutOfRangeError, StopIteration):
            exception_type = None
        self._close_internal(exception_type)
        return exception_type is None

    def _close_internal(self, exception_type=None):
        """Ends the hooks (only on a normal exit), closes the session, restores the graph's
        finalized state."""
        try:
            if not exception_type:
                for hook in self._hooks:
                    hook.end(self._coordinated_creator.tf_sess)
        finally:
            try:
                if self._sess is None:
                    raise RuntimeError("Session is already closed.")
                self._sess.close()
            finally:
                self._sess = None
                self._coordinated_creator.tf_sess = None
                self._coordinated_creator.coord = None
                if not self._graph_was_finalized:
                    get_default_graph()._unsafe_unfinalize()

    def _tf_sess(self):
        return self._coordinated_creator.tf_sess


class MonitoredSession(_MonitoredSession):
    """A session that handles initialization, restoring, hooks and recovery from errors.

    Args:
      session_creator: a SessionCreator (default: ChiefSessionCreator()).
      hooks: SessionRunHooks.
      stop_grace_period_secs: how long the coordinated threads get to stop on close.
    """

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        super().__init__(session_creator, hooks, should_recover=True,
                         stop_grace_period_secs=stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSession):
    """A MonitoredSession for a single process (chief) that does not recover from errors and
    exposes its raw session."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                      checkpoint_dir=checkpoint_dir,
                                      checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(creator, hooks, should_recover=False,
                         stop_grace_period_secs=stop_grace_period_secs)

    def raw_session(self):
        """The underlying tf.Session."""
        return self._tf_sess()


def _resolve_pair(steps, secs, default_steps, default_secs):
    """Fills the USE_DEFAULT members of a (steps, secs) pair the way TF does."""
    if steps is USE_DEFAULT and secs is USE_DEFAULT:
        return default_steps, default_secs
    return (None if steps is USE_DEFAULT else steps), (None if secs is USE_DEFAULT else secs)


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None,  # noqa: N802
                             hooks=None, chief_only_hooks=None,
                             save_checkpoint_secs=USE_DEFAULT, save_summaries_steps=USE_DEFAULT,
                             save_summaries_secs=USE_DEFAULT, config=None,
                             stop_grace_period_secs=120, log_step_count_steps=100,
                             max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT,
                             summary_dir=None, save_graph_def=True):
    """A MonitoredSession set up for training: checkpoints, summaries and step counting.

    The chief restores from `checkpoint_dir` or initializes, and adds (when `summary_dir` or
    `checkpoint_dir` is set) a StepCounterHook, a SummarySaverHook (default every 100 steps)
    and a CheckpointSaverHook (default every 600 s); a worker waits for the chief.

    Args:
      master: the session target.
      is_chief: whether this process initializes / restores and writes files.
      checkpoint_dir: directory of checkpoints to restore from and save to.
      scaffold: a Scaffold (default: a new one).
      hooks: SessionRunHooks for every process.
      chief_only_hooks: SessionRunHooks for the chief only.
      save_checkpoint_secs / save_checkpoint_steps: checkpoint frequency (None: never).
      save_summaries_steps / save_summaries_secs: summary frequency (None: never).
      config: ConfigProto of the session.
      stop_grace_period_secs: see Coordinator.join.
      log_step_count_steps: how often to log and record global steps per second.
      max_wait_secs: how long a worker waits for the chief.
      summary_dir: where summaries go (default: checkpoint_dir).
      save_graph_def: write graph.pbtxt and .meta files with the checkpoints.

    Returns:
      A MonitoredSession.
    """
    save_summaries_steps, save_summaries_secs = _resolve_pair(
        save_summaries_steps, save_summaries_secs, 100, None)
    save_checkpoint_steps, save_checkpoint_secs = _resolve_pair(
        save_checkpoint_steps, save_checkpoint_secs, None, 600)
    scaffold = scaffold or Scaffold()
    if not is_chief:
        creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config,
                                       max_wait_secs=max_wait_secs)
        return MonitoredSession(session_creator=creator, hooks=hooks or [],
                                stop_grace_period_secs=stop_grace_period_secs)
    all_hooks = list(chief_only_hooks or [])
    creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir,
                                  master=master, config=config)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(StepCounterHook(output_dir=summary_dir,
                                             every_n_steps=log_step_count_steps))
        if (save_summaries_steps and save_summaries_steps > 0) or \
                (save_summaries_secs and save_summaries_secs > 0):
            all_hooks.append(SummarySaverHook(scaffold=scaffold, save_steps=save_summaries_steps,
                                              save_secs=save_summaries_secs,
                                              output_dir=summary_dir))
    if checkpoint_dir and ((save_checkpoint_secs and save_checkpoint_secs > 0) or
                           (save_checkpoint_steps and save_checkpoint_steps > 0)):
        all_hooks.append(CheckpointSaverHook(checkpoint_dir, save_steps=save_checkpoint_steps,
                                             save_secs=save_checkpoint_secs, scaffold=scaffold,
                                             save_graph_def=save_graph_def))
    all_hooks.extend(hooks or [])
    return MonitoredSession(session_creator=creator, hooks=all_hooks,
                            stop_grace_period_secs=stop_grace_period_secs)
