"""tf.train.Coordinator and LooperThread: stop a group of threads together, report errors.

Threads poll `should_stop()` (or block in `wait_for_stop`); any thread may `request_stop(ex)`;
the first exception reported is kept and re-raised by `join()` in the controlling thread once
every thread has stopped or the grace period has run out.
"""
from __future__ import annotations

import contextlib
import sys
import threading
import time

from tensorweave.framework import errors
from tensorweave.platform import tf_logging as logging

__all__ = ["Coordinator", "LooperThread"]


def _as_exc_info(ex) -> tuple:
    """(type, value, traceback) for an exc_info tuple or an exception instance.

    Unlike TF, which reads `sys.exc_info()` when given an instance (so an instance passed
    outside an `except` block is replaced by a ValueError), the instance itself is kept.
    """
    if isinstance(ex, tuple):
        if len(ex) != 3 or ex[0] is None or ex[1] is None:
            try:
                raise ValueError(f"ex must be a tuple or sys.exc_info must return the current "
                                 f"exception: {ex}")
            except ValueError:
                return sys.exc_info()
        return ex
    return type(ex), ex, ex.__traceback__


class Coordinator:
    """A coordinator for threads: one stop flag, the first reported exception, and join.

    Args:
      clean_stop_exception_types: exception types that stop the threads without being
        reported by `join()` (default: `(tf.errors.OutOfRangeError,)`, the normal end of input).
    """

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads: set = set()

    def _filter_exception(self, ex):
        """None for a clean-stop exception (it stops the threads but is not an error)."""
        value = ex[1] if isinstance(ex, tuple) else ex
        return None if isinstance(value, self._clean_stop_exception_types) else ex

    def request_stop(self, ex=None) -> None:
        """Asks every thread to stop; records `ex` (exception or exc_info) if it is the first.

        Raises:
          the exception `ex` itself if the coordinator was already joined (nobody would
          otherwise see it).
        """
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined and ex is not None:
                raise _as_exc_info(ex)[1]
            if self._stop_event.is_set():
                return
            if ex is not None and self._exc_info_to_raise is None:
                self._exc_info_to_raise = _as_exc_info(ex)
                if isinstance(ex, tuple):
                    logging.info("Error reported to Coordinator: %s", ex[1])
                else:  # TF names the class of an exception passed as an instance
                    logging.info("Error reported to Coordinator: %s, %s", type(ex), ex)
            self._stop_event.set()

    def clear_stop(self) -> None:
        """Clears the stop flag and the recorded exception so the threads can run again."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        """True once a stop was requested."""
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """Context manager: any exception raised in the block requests a stop and is reported
        (not re-raised), so a thread body can simply be wrapped in it."""
        try:
            yield
        except BaseException:  # noqa: BLE001 - every error, including SystemExit, is reported
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None) -> bool:
        """Blocks until a stop is requested or `timeout` seconds pass; True if stopping."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread) -> None:
        """Adds `thread` to those `join()` waits for."""
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for the threads to stop, then re-raises the first reported exception.

        Waits until every thread has finished or a stop was requested, then gives the threads
        `stop_grace_period_secs` more to finish.

        Args:
          threads: threads to join in addition to the registered ones.
          stop_grace_period_secs: how long threads may keep running after a stop request.
          ignore_live_threads: log instead of raising when threads outlive the grace period.

        Raises:
          the first exception passed to `request_stop`, or RuntimeError if threads are still
          alive after the grace period (unless `ignore_live_threads`).
        """
        with self._lock:
            threads = list(self._registered_threads.union(threads or ()))
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(0.05):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        stragglers = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise:
                raise self._exc_info_to_raise[1]
            if stragglers:
                message = "Coordinator stopped with threads still running: " + \
                    " ".join(stragglers)
                if not ignore_live_threads:
                    raise RuntimeError(message)
                logging.info(message)

    @property
    def joined(self) -> bool:
        return self._joined

    def raise_requested_exception(self) -> None:
        """Raises the exception reported with `request_stop`, if any."""
        with self._lock:
            if self._exc_info_to_raise:
                raise self._exc_info_to_raise[1]


class LooperThread(threading.Thread):
    """A daemon thread that calls `run_loop()` (or `target`) every `timer_interval_secs`
    (back to back if None) until the coordinator stops; errors are reported to it.

    Subclasses override `start_loop`, `run_loop` and `stop_loop`.
    """

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError(f"'coord' argument must be a Coordinator: {coord}")
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._loop_target = target
        if target is None and (args or kwargs):
            raise ValueError("'args' and 'kwargs' argument require that you also pass 'target'")
        self._loop_args = args or ()
        self._loop_kwargs = kwargs or {}
        coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        """Starts and returns a LooperThread calling `target(*args, **kwargs)` periodically."""
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args,
                              kwargs=kwargs)
        looper.start()
        return looper

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_time = time.monotonic()
                while not self._coord.wait_for_stop(max(0.0, next_time - time.monotonic())):
                    next_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        """Called once in the thread before the loop."""

    def stop_loop(self):
        """Called once in the thread after the loop."""

    def run_loop(self):
        """One iteration: calls `target` by default."""
        if self._loop_target is not None:
            self._loop_target(*self._loop_args, **self._loop_kwargs)
