"""tf.train.summary_iterator: the `Event` protos of an event file, via the TFRecord reader.

CRCs are checked as for any TFRecord file.
"""
from __future__ import annotations

from tensorweave.io.tf_record import open_records, read_records
from tensorweave.protos import event_pb2


class _SummaryIterator:
    """Iterates over the events of one file, opened at once (a missing file fails here)."""

    def __init__(self, path):
        self._records = self._read(open_records(path))

    @staticmethod
    def _read(stream):
        try:
            yield from read_records(stream)
        finally:
            stream.close()

    def __iter__(self) -> _SummaryIterator:
        return self

    def __next__(self) -> event_pb2.Event:
        return event_pb2.Event.FromString(next(self._records))


def summary_iterator(path) -> _SummaryIterator:
    """Returns an iterator over the `Event` protos of an event file (TF1's
    tf.train.summary_iterator).

    The first event of a file written by `tf.summary.FileWriter` carries `file_version`; the
    others hold summaries, graphs, session logs and run metadata.

    Args:
      path: the event file.

    Returns:
      An iterator yielding `tf.Event` protos.

    Raises:
      NotFoundError: if the file does not exist.
      DataLossError (while iterating): if a record is corrupt or cut short.
    """
    return _SummaryIterator(path)
