"""tf.train.QueueRunner: threads that keep running enqueue ops, and start_queue_runners.

Each enqueue op gets a thread that runs it until the queue closes (an OutOfRangeError from the
op's inputs, e.g. an exhausted input producer) or the coordinator asks to stop; the last thread
to finish closes the queue so its consumers drain it and then see OutOfRangeError. With a
coordinator, one more thread waits for the stop request and cancels pending enqueues. Errors
go to the coordinator, or are logged and kept in `exceptions_raised`.

A meta graph keeps the QUEUE_RUNNERS collection as QueueRunnerDef protos (`to_proto`), which
`import_meta_graph` turns back into QueueRunners over the imported ops (`from_proto`), so an
imported input pipeline starts with `start_queue_runners` as TensorFlow's does.
"""
from __future__ import annotations

import logging
import threading
import weakref

from tensorweave.framework import errors
from tensorweave.framework.graph import (
    GraphKeys,
    add_to_collection,
    get_collection,
    get_default_graph,
)
from tensorweave.protos import queue_runner_pb2

_log = logging.getLogger("tensorweave")

__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners"]


def _check_exception_types(queue, enqueue_ops, types) -> None:
    """TypeError unless `types` is a non-empty tuple of tf.errors classes: TF's check, message
    included (formatted with `%`, so a tuple of two or none raises a TypeError of its own)."""
    if not queue or not enqueue_ops:
        return   # TF reports the missing queue first
    if (not isinstance(types, tuple) or not types
            or not all(issubclass(t, errors.OpError) for t in types)):
        message = ("queue_closed_exception_types, when provided, must be a tuple of tf.error "
                   "types, but saw: %s")
        raise TypeError(message % types)   # TF's own %, odd tuples and all


class QueueRunner:
    """Holds a list of enqueue ops for a queue, each to be run in its own thread."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None, import_scope=None):
        """Creates a QueueRunner.

        Args:
          queue: the queue the enqueue ops feed.
          enqueue_ops: enqueue ops; each runs repeatedly in its own thread (the same op may
            appear several times for several threads).
          close_op: op closing the queue (default `queue.close()`).
          cancel_op: op closing it and cancelling pending enqueues (default
            `queue.close(cancel_pending_enqueues=True)`).
          queue_closed_exception_types: exceptions that mean "the input is exhausted"
            (default `(tf.errors.OutOfRangeError,)`).
          queue_runner_def: a QueueRunnerDef naming ops of the default graph to run instead
            (with no other argument); `import_scope` is prefixed to its names.
        """
        if queue_runner_def is not None:
            if queue or enqueue_ops:
                raise ValueError("queue_runner_def and queue are mutually exclusive.")
            queue, enqueue_ops, close_op, cancel_op, queue_closed_exception_types = \
                _parts_from_proto(queue_runner_def, import_scope)
        elif queue_closed_exception_types is not None:
            _check_exception_types(queue, enqueue_ops, queue_closed_exception_types)
        if not queue or not enqueue_ops:
            raise ValueError("Must provide queue and enqueue_ops.")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else queue.close(
            cancel_pending_enqueues=True)
        if queue_closed_exception_types is None:
            queue_closed_exception_types = (errors.OutOfRangeError,)
        self._queue_closed_exception_types = tuple(queue_closed_exception_types)
        self._lock = threading.Lock()
        self._runs_per_session: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._exceptions_raised: list = []

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self) -> list:
        return self._enqueue_ops

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def queue_closed_exception_types(self) -> tuple:
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self) -> list:
        """Exceptions raised by the threads when no coordinator was given."""
        return self._exceptions_raised

    @property
    def name(self) -> str:
        """The name of the queue runner: its queue's name."""
        return self._queue.name

    def to_proto(self, export_scope=None):
        """This runner as a QueueRunnerDef of op names relative to `export_scope`; None if its
        queue is outside that scope."""
        from tensorweave.framework.meta_graph import strip_name_scope
        if export_scope is not None and not self._queue.name.startswith(export_scope):
            return None
        return queue_runner_pb2.QueueRunnerDef(
            queue_name=strip_name_scope(self._queue.name, export_scope),
            enqueue_op_name=[strip_name_scope(op.name, export_scope)
                             for op in self._enqueue_ops],
            close_op_name=strip_name_scope(self._close_op.name, export_scope),
            cancel_op_name=strip_name_scope(self._cancel_op.name, export_scope),
            queue_closed_exception_types=[errors.error_code_from_exception_type(cls)
                                          for cls in self._queue_closed_exception_types])

    @staticmethod
    def from_proto(queue_runner_def, import_scope=None):
        """The QueueRunner a QueueRunnerDef describes, over the default graph's ops."""
        return QueueRunner(queue_runner_def=queue_runner_def, import_scope=import_scope)

    def _run(self, sess, enqueue_op, coord=None) -> None:
        """One thread: run `enqueue_op` until stop or input exhaustion."""
        decremented = False
        try:
            enqueue = sess.make_callable(enqueue_op)
            while not (coord and coord.should_stop()):
                try:
                    enqueue()
                except self._queue_closed_exception_types:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        last = self._runs_per_session[sess] == 0
                    if last:   # the last runner closes the queue so its readers finish
                        try:
                            sess.run(self._close_op)
                        except Exception as e:  # noqa: BLE001 - the session may be closing
                            _log.debug("Ignored exception closing the queue: %s", e)
                    return
        except Exception as e:  # noqa: BLE001 - reported to the coordinator
            if coord:
                coord.request_stop(e)
            else:
                _log.error("Exception in QueueRunner: %s", e)
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, cancel_op, coord) -> None:
        """Waits for the coordinator's stop, then cancels pending enqueues."""
        coord.wait_for_stop()
        try:
            sess.run(cancel_op)
        except Exception as e:  # noqa: BLE001 - the session may already be closed
            _log.debug("Ignored exception cancelling the queue: %s", e)

    def create_threads(self, sess, coord=None, daemon=False, start=False) -> list:
        """Creates (and optionally starts) the threads running the enqueue ops in `sess`.

        Args:
          sess: the Session to run the ops in.
          coord: optional Coordinator: errors are reported to it and a stop closes the queue.
          daemon: make the threads daemons.
          start: start the threads.

        Returns:
          The threads; an empty list if threads for `sess` are still running.
        """
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord))
                   for op in self._enqueue_ops]
        if coord:
            threads.append(threading.Thread(target=self._close_on_stop,
                                            args=(sess, self._cancel_op, coord)))
        for t in threads:
            if coord:
                coord.register_thread(t)
            if daemon:
                t.daemon = True
            if start:
                t.start()
        return threads


def _parts_from_proto(queue_runner_def, import_scope) -> tuple:
    """(queue, enqueue ops, close op, cancel op, closed exception types) that a
    QueueRunnerDef names, looked up in the default graph (the queue as its op: what
    TensorFlow's QueueRunner holds after an import)."""
    from tensorweave.framework.meta_graph import prepend_name_scope
    graph = get_default_graph()

    def op(name):
        return graph.as_graph_element(prepend_name_scope(name, import_scope))
    codes = queue_runner_def.queue_closed_exception_types
    return (op(queue_runner_def.queue_name),
            [op(name) for name in queue_runner_def.enqueue_op_name],
            op(queue_runner_def.close_op_name), op(queue_runner_def.cancel_op_name),
            [errors.exception_type_from_error_code(code) for code in codes] or
            [errors.OutOfRangeError])


def add_queue_runner(qr, collection=GraphKeys.QUEUE_RUNNERS) -> None:
    """Adds `qr` to the default graph's `collection` (QUEUE_RUNNERS by default)."""
    add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True,
                        collection=GraphKeys.QUEUE_RUNNERS) -> list:
    """Starts the threads of every QueueRunner in the graph's `collection`.

    Args:
      sess: the Session (default: the default session).
      coord: optional Coordinator for the threads.
      daemon: make the threads daemons.
      start: start the threads (else the caller must).
      collection: the collection of queue runners.

    Returns:
      The list of threads.
    """
    if sess is None:
        from tensorweave.runtime.session import get_default_session
        sess = get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: No default session is registered. "
                             "Use `with sess.as_default()` or pass an explicit session to "
                             "tf.start_queue_runners(sess=sess)")
    if not hasattr(sess, "make_callable"):
        if type(sess).__name__ in ("MonitoredSession", "SingularMonitoredSession"):
            return []   # a MonitoredSession starts its queue runners itself
        raise TypeError(f"sess must be a `tf.Session` object. Given class: {type(sess)}")
    with sess.graph.as_default():
        runners = get_collection(collection)
    if not runners:
        _log.warning("`tf.train.start_queue_runners()` was called when no queue runners were "
                     "defined. You can safely remove the call to this deprecated function.")
    threads = []
    for qr in runners:
        threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
