"""Readers: tf.WholeFileReader, tf.TFRecordReader, tf.IdentityReader, and tf.read_file.

A reader takes work units (file names) from a queue, usually a string_input_producer, and
produces records from each: read() dequeues the next file when the current one is exhausted,
asynchronously (kernels/readers.py), so an empty queue holds no thread. Ops are TensorFlow's
resource forms (WholeFileReaderV2, ReaderReadV2, ...).
"""
from __future__ import annotations

from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.shape_fns import scalar

__all__ = ["ReaderBase", "WholeFileReader", "TFRecordReader", "IdentityReader", "read_file"]

_READER_ATTRS = [Attr("container", "string", ""), Attr("shared_name", "string", "")]
_READER = "reader_handle: resource"


def _vectors(ctx):
    return [_ts.TensorShape([None])] * 2


def _define(op_type, inputs=(), outputs=(), attrs=(), shape_fn=None):
    return define_op(op_type, inputs=list(inputs), outputs=list(outputs), attrs=list(attrs),
                     shape_fn=shape_fn, is_stateful=True, not_differentiable=True)


WholeFileReaderV2, IdentityReaderV2 = (
    _define(op_type, outputs=[_READER], attrs=_READER_ATTRS, shape_fn=scalar)
    for op_type in ("WholeFileReaderV2", "IdentityReaderV2"))
TFRecordReaderV2 = _define("TFRecordReaderV2", outputs=[_READER],
                           attrs=_READER_ATTRS + [Attr("compression_type", "string", "")],
                           shape_fn=scalar)
ReaderReadV2 = _define("ReaderReadV2", [_READER, "queue_handle: resource"],
                       ["key: string", "value: string"], shape_fn=scalar)
ReaderReadUpToV2 = _define("ReaderReadUpToV2",
                           [_READER, "queue_handle: resource", "num_records: int64"],
                           ["keys: string", "values: string"], shape_fn=_vectors)
ReaderNumRecordsProducedV2, ReaderNumWorkUnitsCompletedV2 = (
    _define(op_type, [_READER], [f"{out}: int64"], shape_fn=scalar)
    for op_type, out in (("ReaderNumRecordsProducedV2", "records_produced"),
                         ("ReaderNumWorkUnitsCompletedV2", "units_completed")))
ReaderResetV2 = _define("ReaderResetV2", [_READER])
ReaderSerializeStateV2 = _define("ReaderSerializeStateV2", [_READER], ["state: string"],
                                 shape_fn=scalar)
ReaderRestoreStateV2 = _define("ReaderRestoreStateV2", [_READER, "state: string"])
ReadFile = define_op("ReadFile", inputs=["filename: string"], outputs=["contents: string"],
                     shape_fn=scalar, not_differentiable=True)


def _queue_ref(queue):
    return queue if isinstance(queue, Tensor) else queue.queue_ref


class ReaderBase:
    """Base class of readers: produce (key, value) records from work units in a queue."""

    def __init__(self, reader_ref, supports_serialize=False):
        self._reader_ref = reader_ref
        self._supports_serialize = supports_serialize

    @property
    def reader_ref(self):
        """The reader's resource handle."""
        return self._reader_ref

    @property
    def supports_serialize(self) -> bool:
        return self._supports_serialize

    def read(self, queue, name=None):
        """Returns the next (key, value) record, dequeuing a new work unit when needed.

        Args:
          queue: a queue (or its handle) of string work units (file names).
          name: a name for the operation (optional).

        Returns:
          A pair of scalar string tensors (key, value).
        """
        return tuple(apply_op(ReaderReadV2, [self._reader_ref, _queue_ref(queue)], name=name))

    def read_up_to(self, queue, num_records, name=None):
        """Returns up to `num_records` (keys, values); fewer once the queue is exhausted."""
        return tuple(apply_op(ReaderReadUpToV2, [self._reader_ref, _queue_ref(queue),
                                                 num_records], name=name))

    def num_records_produced(self, name=None):
        """The number of records this reader has produced (a scalar int64 tensor)."""
        return apply_op(ReaderNumRecordsProducedV2, [self._reader_ref], name=name)

    def num_work_units_completed(self, name=None):
        """The number of work units this reader has finished (a scalar int64 tensor)."""
        return apply_op(ReaderNumWorkUnitsCompletedV2, [self._reader_ref], name=name)

    def reset(self, name=None):
        """Restores the reader to its initial clean state."""
        return apply_op(ReaderResetV2, [self._reader_ref], name=name)

    def serialize_state(self, name=None):
        """The reader's position as a scalar string (a ReaderBaseState proto). Running it
        raises UnimplementedError unless `supports_serialize`."""
        return apply_op(ReaderSerializeStateV2, [self._reader_ref], name=name)

    def restore_state(self, state, name=None):
        """An op putting the reader back at a position `serialize_state` returned."""
        return apply_op(ReaderRestoreStateV2, [self._reader_ref, state], name=name)


class WholeFileReader(ReaderBase):
    """A reader whose records are whole files: key = file name, value = its contents."""

    def __init__(self, name=None):
        super().__init__(apply_op(WholeFileReaderV2, [], name=name), supports_serialize=True)


class IdentityReader(ReaderBase):
    """A reader whose record is the work unit itself, as both key and value."""

    def __init__(self, name=None):
        super().__init__(apply_op(IdentityReaderV2, [], name=name), supports_serialize=True)


class TFRecordReader(ReaderBase):
    """A reader of TFRecord files: key = "file:offset", value = the record."""

    def __init__(self, name=None, options=None):
        """Args: name: op name; options: a TFRecordOptions (compression) or None."""
        from tensorweave.io.tf_record import TFRecordOptions  # tensorweave.io imports this module
        kind = TFRecordOptions.get_compression_type_string(options)
        super().__init__(apply_op(TFRecordReaderV2, [], {"compression_type": kind}, name=name))


def read_file(filename, name=None):
    """Reads and returns the entire contents of the file `filename` (a scalar string)."""
    return apply_op(ReadFile, [filename], name=name)

