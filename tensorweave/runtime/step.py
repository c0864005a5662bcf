"""Per-step state shared by a step's executors: id, cancellation, deadline, first error, resources.

`resources` is the step's container (TensorArrays, stacks): state that dies with the step.
"""
from __future__ import annotations

import itertools
import threading
import time

from tensorweave.framework import errors

_step_ids = itertools.count(1)
# The longest a blocked wait sleeps before it looks at its step's deadline again.
POLL_SECONDS = 0.5


class StepState:
    """One run of the graph. `cancel` fails every registered waiter of the step at once."""

    __slots__ = ("step_id", "error", "deadline", "rendezvous", "_lock", "_callbacks",
                 "cancelled", "stats", "resources")

    def __init__(self, timeout_ms: int = 0, rendezvous=None, stats=None):
        self.step_id = next(_step_ids)
        self.error = None
        self.cancelled = False
        self.deadline = time.monotonic() + timeout_ms / 1000.0 if timeout_ms > 0 else None
        self.rendezvous = rendezvous
        self.stats = stats  # a StepStatsCollector when the step is traced
        self._lock = threading.Lock()
        self._callbacks: dict[int, object] = {}
        self.resources: dict[bytes, object] = {}  # per-step state by name, like TF's step container

    def register_cancellation(self, callback) -> int | None:
        """Calls `callback(error)` when the step is cancelled; None if it already was."""
        with self._lock:
            if self.cancelled:
                return None
            token = id(callback)
            self._callbacks[token] = callback
            return token

    def deregister_cancellation(self, token) -> None:
        with self._lock:
            self._callbacks.pop(token, None)

    def cancel(self, error: Exception) -> None:
        """Records the first error and aborts everything waiting in this step."""
        with self._lock:
            if self.cancelled:
                return
            self.cancelled = True
            self.error = error
            callbacks = list(self._callbacks.values())
            self._callbacks.clear()
        if self.rendezvous is not None:
            self.rendezvous.start_abort(error)
        for cb in callbacks:
            cb(error)

    def root_error(self, exc: Exception) -> Exception:
        """What to report for a kernel of this step failing with `exc`: a cancellation that
        an earlier failure of the step caused reports that earlier (root) error instead."""
        if isinstance(exc, errors.CancelledError) and self.cancelled and self.error is not None:
            return self.error
        return exc

    def wait_seconds(self) -> float:
        """How long a blocked wait may sleep before it looks at the step again: POLL_SECONDS,
        or less when the deadline comes sooner (so a deadline ends a wait on time)."""
        if self.deadline is None:
            return POLL_SECONDS
        return min(POLL_SECONDS, max(0.0, self.deadline - time.monotonic()))

    def enforce_deadline(self) -> None:
        """Cancels the step with DeadlineExceededError once its deadline has passed."""
        if self.deadline is not None and not self.cancelled and \
                time.monotonic() >= self.deadline:
            self.cancel(errors.DeadlineExceededError(
                None, None, "Timed out waiting for the step to finish "
                "(RunOptions.timeout_in_ms or operation_timeout_in_ms)"))
