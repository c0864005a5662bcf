"""SessionRunHook and the records passed to it (tf.train.SessionRunHook & co).

A MonitoredSession calls, in order: `begin()` before the graph is finalized,
`after_create_session(session, coord)` for each (re)created session, `before_run(run_context)`
and `after_run(run_context, run_values)` around every `run`, and `end(session)` on a normal close.
"""
from __future__ import annotations

import collections

__all__ = ["SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues"]


class SessionRunHook:
    """Hook to extend calls to MonitoredSession.run(); every method is optional."""

    def begin(self):
        """Called once before the graph is finalized: the hook may still add ops."""

    def after_create_session(self, session, coord):
        """Called when a session has been created (and initialized or restored)."""

    def before_run(self, run_context):
        """Called before each run; may return SessionRunArgs to add fetches, feeds, options."""
        return None

    def after_run(self, run_context, run_values):
        """Called after each run with the hook's own fetched results."""

    def end(self, session):
        """Called at the end of a session that closes without an error."""


class SessionRunArgs(collections.namedtuple("SessionRunArgs",
                                            ["fetches", "feed_dict", "options"])):
    """What a hook adds to a `Session.run()` call: fetches, feed_dict and RunOptions."""

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunContext:
    """The run a hook is observing: the caller's arguments, the session, and a stop flag."""

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        """The SessionRunArgs of the caller's `run` (before hooks added theirs)."""
        return self._original_args

    @property
    def session(self):
        """The raw session, for extra runs that bypass the hooks."""
        return self._session

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    def request_stop(self) -> None:
        """Asks the MonitoredSession to stop after this run (`should_stop()` turns True)."""
        self._stop_requested = True


SessionRunValues = collections.namedtuple("SessionRunValues",
                                          ["results", "options", "run_metadata"])
SessionRunValues.__doc__ = """The results of a run for one hook: its fetches' values, the
RunOptions used and the RunMetadata filled."""
