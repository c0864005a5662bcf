"""Reader kernels: records from work units (file names) taken from a queue, asynchronously.

A ReaderResource serves read requests one at a time in arrival order. A request takes records
from the current work unit; when that is exhausted it dequeues the next unit from the queue
with a callback (no thread waits) and continues there. A closed, empty queue ends a read_up_to
with what it has, or fails with the queue's OutOfRangeError.

WholeFileReader and IdentityReader make one record per work unit, so a unit is finished as
soon as its record is taken (TensorFlow counts it completed then), and their state can be
saved and restored (ReaderSerializeStateV2 / ReaderRestoreStateV2, a ReaderBaseState proto as
TensorFlow writes it); the other readers refuse with TensorFlow's UnimplementedError.
"""
from __future__ import annotations

import threading
from collections import deque

import numpy as np
from google.protobuf.message import DecodeError

from tensorweave.framework import errors
from tensorweave.io.tf_record import open_records, read_records
from tensorweave.kernels.queues import resource_handle, resource_of
from tensorweave.kernels.registry import kernel
from tensorweave.protos.reader_base_pb2 import ReaderBaseState


def read_whole(path: str):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise errors.NotFoundError(None, None, f"{path}; {e.strerror}") from None


def _whole_file_records(work: bytes, options):
    yield work, read_whole(work.decode())


def _identity_records(work: bytes, options):
    yield work, work


def _tf_record_records(work: bytes, options):
    stream = open_records(work.decode(), options or None)
    try:
        offset = 0
        for record in read_records(stream):
            yield b"%s:%d" % (work, offset), record
            offset += len(record) + 16   # 8 length + 4 length CRC + data + 4 data CRC
    finally:
        stream.close()


class _Request:
    __slots__ = ("queue", "n", "step", "done", "keys", "values")

    def __init__(self, queue, n, step, done):
        self.queue, self.n, self.step, self.done = queue, n, step, done
        self.keys: list = []
        self.values: list = []


class ReaderResource:
    """A reader's state: the current work unit's record iterator and the counters.

    `description` names the reader in errors ("WholeFileReader 'node'"); `single_record`
    readers (one record per unit) can save and restore their state."""

    def __init__(self, records_of, options=None, description="", single_record=False):
        self._records_of = records_of
        self._options = options
        self.description = description
        self._single = single_record
        self._lock = threading.Lock()
        self._requests: deque[_Request] = deque()
        self._busy = False
        self._clear()

    def _clear(self) -> None:
        self._records = None
        self.work = b""
        self.produced = 0
        self.completed = 0

    def serialize(self) -> bytes:
        """The counters and current work unit as TensorFlow's ReaderBaseState bytes."""
        if not self._single:
            raise errors.UnimplementedError(None, None, "Reader SerializeState")
        with self._lock:
            started = self.completed + (self._records is not None)
            return ReaderBaseState(work_started=started, work_finished=self.completed,
                                   num_records_produced=self.produced,
                                   current_work=self.work).SerializeToString()

    def restore(self, state: bytes) -> None:
        """Takes the counters and unit of a serialized state; an unfinished unit restarts."""
        if not self._single:
            raise errors.UnimplementedError(None, None, "Reader RestoreState")
        parsed = ReaderBaseState()
        try:
            parsed.ParseFromString(state)
        except DecodeError:
            raise errors.InvalidArgumentError(
                None, None, f"Could not parse state for {self.description}: "
                f"{state.decode('unicode_escape', 'replace')}") from None
        _check_state(parsed, self.description)
        with self._lock:
            self.produced, self.completed = parsed.num_records_produced, parsed.work_finished
            self.work = parsed.current_work
            self._records = self._records_of(self.work, self._options) \
                if parsed.work_started > parsed.work_finished else None

    def reset(self) -> None:
        """Forgets the current work unit and zeroes the counters."""
        with self._lock:
            self._clear()

    def read(self, queue, n, step, done) -> None:
        """Queues a request for one record (n None) or up to n; serves it when it can."""
        with self._lock:
            self._requests.append(_Request(queue, n, step, done))
            if self._busy:
                return
            self._busy = True
        self._serve()

    def _serve(self) -> None:
        """Fills requests in order until one needs a new work unit (or none are left)."""
        while True:
            with self._lock:
                if not self._requests:
                    self._busy = False
                    return
                request = self._requests[0]
                want = request.n or 1
                try:
                    unit_ended = self._fill(request, want)
                except errors.OpError as e:
                    self._records = None   # the unit is abandoned, like TF's reader
                    self._requests.popleft()
                    finish = (request, e)
                else:
                    # As TF's ReadUpTo, a batch ends with its work unit once it has records.
                    if len(request.keys) < want and not (unit_ended and request.keys):
                        finish = None
                    else:
                        self._requests.popleft()
                        finish = (request, None)
            if finish is None:
                request.queue.dequeue(None, request.step, self._on_work)
                return
            _finish(*finish)

    def _fill(self, request, want) -> bool:
        """Adds records of the current work unit to the request; True if the unit ended."""
        while len(request.keys) < want and self._records is not None:
            try:
                key, value = next(self._records)
            except StopIteration:
                self._records = None
                self.completed += 1
                return True
            request.keys.append(key)
            request.values.append(value)
            self.produced += 1
            if self._single:
                self._records = None
                self.completed += 1
                return True
        return False

    def _on_work(self, outputs=None, error=None) -> None:
        """The queue's answer to a dequeue for the request at the head."""
        with self._lock:
            request = self._requests[0]
            if error is None:
                self.work = _as_bytes(outputs[0])
                self._records = self._records_of(self.work, self._options)
            else:
                self._requests.popleft()
        if error is not None:
            enough = request.n is not None and request.keys and \
                isinstance(error, errors.OutOfRangeError)
            _finish(request, None if enough else error)
        self._serve()


def _check_state(state, description: str) -> None:
    """TensorFlow's checks of a restored ReaderBaseState."""
    if state.num_records_produced < 0 or state.work_started < 0 or state.work_finished < 0:
        raise errors.InvalidArgumentError(
            None, None, f"Unexpected negative value in state for {description}")
    if state.work_finished > state.work_started:
        raise errors.InvalidArgumentError(
            None, None, f"Unexpected work_finished > work_started for {description}")
    if state.work_started > state.work_finished + 1:
        raise errors.InvalidArgumentError(
            None, None, f"Unexpected work_started > work_finished + 1 for {description}")
    if state.work_started > state.work_finished and not state.current_work:
        raise errors.InvalidArgumentError(
            None, None, f"Unexpected empty work in state for {description}")


def _finish(request, error) -> None:
    if error is not None:
        request.done(error=error)
        return
    if request.n is None:
        request.done((_string(request.keys[0]), _string(request.values[0])))
        return
    keys = np.empty(len(request.keys), dtype=object)
    values = np.empty(len(request.values), dtype=object)
    keys[:] = request.keys
    values[:] = request.values
    request.done((keys, values))


def _as_bytes(value) -> bytes:
    value = value.item() if isinstance(value, np.ndarray) else value
    return value.encode() if isinstance(value, str) else bytes(value)


def _string(value: bytes) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = value
    return out


class ReaderKernel:
    """Creates the node's ReaderResource once per session and outputs its handle; a
    subclass gives `records_of(work, options)`, the records of one work unit."""

    single_record = False    # one record per work unit: see the module docstring

    def __init__(self, ctx):
        self.handle = None

    def compute(self, ctx):
        if self.handle is None:
            attrs = ctx.attrs
            reader = ctx.resources.lookup_or_create(
                attrs.get("container") or "", attrs.get("shared_name") or ctx.node_name,
                lambda: ReaderResource(self.records_of, attrs.get("compression_type"),
                                       f"{ctx.op_type[:-2]} '{ctx.node_name}'",
                                       self.single_record))
            self.handle = resource_handle(reader)
        return self.handle


@kernel("WholeFileReaderV2")
class WholeFileReaderKernel(ReaderKernel):
    """One record per file: its name and its contents."""

    records_of = staticmethod(_whole_file_records)
    single_record = True


@kernel("IdentityReaderV2")
class IdentityReaderKernel(ReaderKernel):
    """Records are the work units themselves."""

    records_of = staticmethod(_identity_records)
    single_record = True


@kernel("TFRecordReaderV2")
class TFRecordReaderKernel(ReaderKernel):
    """Records of TFRecord files (optionally ZLIB/GZIP compressed)."""

    records_of = staticmethod(_tf_record_records)


class ReaderReadKernel:
    """ReaderReadV2 / ReaderReadUpToV2: asynchronous; completes when records are available."""

    def __init__(self, ctx):
        self.up_to = ctx.op_type == "ReaderReadUpToV2"

    def compute_async(self, ctx, step, inputs, done):
        n = None
        if self.up_to:
            n = int(inputs[2])
            if n <= 0:
                raise errors.InvalidArgumentError(
                    None, None, f"num_records must be > 0 but is {n}")
        resource_of(inputs[0]).read(resource_of(inputs[1]), n, step, done)


kernel(["ReaderReadV2", "ReaderReadUpToV2"])(ReaderReadKernel)


@kernel("ReaderNumRecordsProducedV2")
def _records_produced(ctx, handle):
    return np.int64(resource_of(handle).produced)


@kernel("ReaderNumWorkUnitsCompletedV2")
def _units_completed(ctx, handle):
    return np.int64(resource_of(handle).completed)


@kernel("ReaderResetV2")
def _reader_reset(ctx, handle):
    resource_of(handle).reset()


@kernel("ReaderSerializeStateV2")
def _reader_serialize_state(ctx, handle):
    return _string(resource_of(handle).serialize())


@kernel("ReaderRestoreStateV2")
def _reader_restore_state(ctx, handle, state):
    resource_of(handle).restore(_as_bytes(state))


@kernel("ReadFile")
def _read_file(ctx, filename):
    return _string(read_whole(_as_bytes(filename).decode()))
