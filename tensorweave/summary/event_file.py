"""Event files: a background thread appends serialized `Event` protos to one TFRecord file.

The file is `<logdir>/events.out.tfevents.<10-digit seconds>.<hostname><suffix>`, and its first
record is an Event carrying `file_version "brain.Event:2"`, as TensorBoard expects. Callers
enqueue serialized events on a bounded queue (a full queue blocks the caller); the writer
thread writes them and flushes the first one at once (as TF does), then at least every
`flush_secs`, or on request. An error in the
thread is raised in the caller on its next call. `close` flushes, stops the thread and closes
the file; `reopen` starts a new file.
"""
from __future__ import annotations

import atexit
import os
import queue
import socket
import threading
import time
import weakref

from tensorweave.io.tf_record import encode_record
from tensorweave.protos import event_pb2

FILE_VERSION = "brain.Event:2"
_POLL_SECS = 0.5  # how often a blocked put re-checks that the writer thread is alive
_OPEN_WRITERS: weakref.WeakSet = weakref.WeakSet()


def _close_open_writers() -> None:
    for writer in list(_OPEN_WRITERS):
        try:
            writer.close()
        except Exception:  # noqa: BLE001 - nothing can be reported at exit
            pass


atexit.register(_close_open_writers)


class _Flush:
    """A flush request; `done` is set once the file has been flushed."""

    def __init__(self):
        self.done = threading.Event()


_CLOSE = object()


class _EventsFile:
    """One open event file: the version record first, then framed events."""

    def __init__(self, logdir: str, suffix: str):
        self._logdir, self._suffix = logdir, suffix
        self._open()

    def _open(self) -> None:
        seconds = int(time.time())
        host = socket.gethostname()
        # Never overwrite an earlier file of this directory (TF truncates one of the same second).
        while True:
            path = os.path.join(self._logdir,
                                f"events.out.tfevents.{seconds:010d}.{host}{self._suffix}")
            if not os.path.exists(path):
                break
            seconds += 1
        self.path = path
        self._file = open(path, "wb")
        first = event_pb2.Event(wall_time=float(seconds), file_version=FILE_VERSION)
        first.source_metadata.writer = "tensorweave"
        self._file.write(encode_record(first.SerializeToString()))
        self.flush()

    def write(self, serialized_event: bytes) -> None:
        self._file.write(encode_record(serialized_event))

    def flush(self) -> None:
        """Flushes and syncs; re-creates the file (and says so) if it was deleted meanwhile."""
        self._file.flush()
        os.fsync(self._file.fileno())
        if not os.path.exists(self.path):
            from tensorweave.platform import tf_logging as logging
            logging.warning("Event file %s was deleted; writing to a new file.", self.path)
            self._file.close()
            self._open()

    def close(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()


class EventFileWriter:
    """Writes serialized Event protos to an event file in `logdir` from a writer thread.

    Args:
      logdir: the directory (created if missing).
      max_queue: events that may wait in the queue before `add_event` blocks.
      flush_secs: the longest time a written event may stay unflushed.
      filename_suffix: appended to the event file's name.
    """

    def __init__(self, logdir, max_queue: int = 10, flush_secs: float = 120,
                 filename_suffix: str | None = None):
        self._logdir = str(logdir)
        os.makedirs(self._logdir, exist_ok=True)
        self._max_queue = max_queue
        self._flush_secs = flush_secs
        self._suffix = filename_suffix or ""
        self._lock = threading.Lock()
        self._closed = True
        self._start()

    def _start(self) -> None:
        self._error: BaseException | None = None
        self._queue: queue.Queue = queue.Queue(max(0, self._max_queue))
        self._file = _EventsFile(self._logdir, self._suffix)
        self._thread = threading.Thread(target=self._run, name="EventFileWriter",
                                        daemon=True)
        self._closed = False
        self._thread.start()
        _OPEN_WRITERS.add(self)

    @property
    def path(self) -> str:
        """The event file currently written."""
        return self._file.path

    def get_logdir(self) -> str:
        return self._logdir

    # --- the writer thread ----------------------------------------------------------------
    def _run(self) -> None:
        events_file = self._file
        next_flush = None   # none yet: as in TF, the first event written is flushed at once
        dirty = False
        while True:
            timeout = None if next_flush is None else max(0.0, next_flush - time.monotonic())
            try:
                item = self._queue.get(timeout=timeout)
            except queue.Empty:
                item = None
            if item is _CLOSE:
                try:
                    events_file.close()
                except BaseException as e:  # noqa: BLE001 - handed to the caller
                    self._error = self._error or e
                return
            try:
                if isinstance(item, bytes) and self._error is None:
                    events_file.write(item)
                    dirty = True
                now = time.monotonic()
                due = dirty if next_flush is None else now >= next_flush
                if isinstance(item, _Flush) or due:
                    if dirty or isinstance(item, _Flush):
                        events_file.flush()
                    dirty = False
                    if due or next_flush is not None:
                        next_flush = now + self._flush_secs
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                self._error = self._error or e
            finally:
                if isinstance(item, _Flush):
                    item.done.set()

    def _raise_error(self) -> None:
        error, self._error = self._error, None
        if error is not None:
            raise error

    def _put(self, item) -> None:
        while True:
            try:
                self._queue.put(item, timeout=_POLL_SECS)
                return
            except queue.Full:
                if not self._thread.is_alive():
                    raise RuntimeError("the event writer thread has stopped") from None

    # --- API ------------------------------------------------------------------------------
    def add_event(self, event) -> None:
        """Queues an Event proto (or its serialization); a no-op once closed."""
        with self._lock:
            if self._closed:
                return
            self._raise_error()
            self._put(event if isinstance(event, bytes) else event.SerializeToString())

    def flush(self) -> None:
        """Blocks until every queued event is written and the file is flushed."""
        with self._lock:
            if self._closed:
                return
            request = _Flush()
            self._put(request)
            request.done.wait()
            self._raise_error()

    def close(self) -> None:
        """Flushes, stops the writer thread and closes the file."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            _OPEN_WRITERS.discard(self)
            self._put(_CLOSE)
            self._thread.join()
            self._raise_error()

    def reopen(self) -> None:
        """After `close`, starts writing a new event file in the same directory."""
        with self._lock:
            if self._closed:
                self._start()

    @property
    def closed(self) -> bool:
        return self._closed
