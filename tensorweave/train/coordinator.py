"""tf.train.Coordinator and LooperThread: stop a group of threads together, report their errors.

Threads poll `should_stop()`; any of them may `request_stop(ex)`; the main thread `join`s them,
which re-raises the first reported exception (OutOfRangeError counts as a clean stop, like TF).
"""
from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time

from tensorweave.framework import errors

_log = logging.getLogger("tensorweave")

__all__ = ["Coordinator", "LooperThread"]


class Coordinator:
    """A coordinator for threads: a shared stop flag plus the first exception reported."""

    def __init__(self, clean_stop_exception_types=None):
        """Creates a coordinator.

        Args:
          clean_stop_exception_types: exception types that stop the threads without being
            reported by `join` (default: `(tf.errors.OutOfRangeError,)`).
        """
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads: set = set()

    def _filter_exception(self, ex):
        exception = ex[1] if isinstance(ex, tuple) else ex
        if isinstance(exception, self._clean_stop_exception_types):
            return None
        return ex

    def request_stop(self, ex=None):
        """Requests that the threads stop; `ex` (an exception or exc_info) is kept for `join`.

        Args:
          ex: optional exception or `sys.exc_info()` tuple; the first one reported is raised by
            `join` (clean-stop types such as OutOfRangeError are not).
        """
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:
                if ex is not None:
                    exception = ex[1] if isinstance(ex, tuple) else ex
                    _log.info("Ignored exception after join: %r", exception)
                return
            if not self._stop_event.is_set():
                if ex is not None and self._exc_info_to_raise is None:
                    if isinstance(ex, tuple):
                        _log.info("Error reported to Coordinator: %s", ex[1])
                        self._exc_info_to_raise = ex
                    else:
                        if not isinstance(ex, BaseException):
                            raise ValueError(f"ex must be a tuple or an Exception, got {ex!r}")
                        _log.info("Error reported to Coordinator: %s", ex)
                        self._exc_info_to_raise = (type(ex), ex, ex.__traceback__)
                self._stop_event.set()

    def clear_stop(self):
        """Clears the stop flag (and the recorded exception) so the coordinator can be reused."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        """True once a stop was requested."""
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """A context manager that requests a stop with any exception raised in its body."""
        try:
            yield
        except:  # noqa: E722 - like TF, every exception (even SystemExit) stops the threads
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None) -> bool:
        """Waits until a stop is requested or `timeout` seconds pass; True if stop requested."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread) -> None:
        """Adds `thread` to the threads `join` waits for."""
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for the threads to stop; raises the first exception given to request_stop.

        Args:
          threads: threads to join besides the registered ones.
          stop_grace_period_secs: how long threads may keep running after a stop request.
          ignore_live_threads: log instead of raising RuntimeError for threads still alive.

        Raises:
          The exception passed to request_stop, if any; RuntimeError for threads still alive
          after the grace period (unless ignore_live_threads).
        """
        with self._lock:
            threads = self._registered_threads.union(threads or ())
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(1.0):
            pass
        wait = 0.001
        while any(t.is_alive() for t in threads) and stop_grace_period_secs >= 0.0:
            time.sleep(wait)
            stop_grace_period_secs -= wait
            wait = max(min(2 * wait, stop_grace_period_secs), 0.001)
        stragglers = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise:
                raise self._exc_info_to_raise[1].with_traceback(self._exc_info_to_raise[2])
            if stragglers:
                message = "Coordinator stopped with threads still running: " + " ".join(
                    stragglers)
                if not ignore_live_threads:
                    raise RuntimeError(message)
                _log.info(message)

    @property
    def joined(self) -> bool:
        return self._joined

    def raise_requested_exception(self):
        """Raises the exception given to request_stop, if any."""
        with self._lock:
            if self._exc_info_to_raise:
                raise self._exc_info_to_raise[1].with_traceback(self._exc_info_to_raise[2])


class LooperThread(threading.Thread):
    """A daemon thread calling `run_loop` (or `target`) until the coordinator stops.

    With `timer_interval_secs` it runs once per interval, otherwise back to back.
    """

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError(f"'coord' argument must be a Coordinator: {coord}")
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        self._args = args or ()
        self._kwargs = kwargs or {}
        self._coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        """Starts and returns a LooperThread running `target`."""
        looper = LooperThread(coord, timer_interval_secs, target, args, kwargs)
        looper.start()
        return looper

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_time = time.time()
                while not self._coord.wait_for_stop(next_time - time.time()):
                    next_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        """Called once before the loop."""

    def stop_loop(self):
        """Called once after the loop."""

    def run_loop(self):
        """One iteration: calls the target."""
        if self._target:
            self._target(*self._args, **self._kwargs)
