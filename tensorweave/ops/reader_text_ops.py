"""Line and fixed-length record readers: tf.TextLineReader and tf.FixedLengthRecordReader.

Both are TensorFlow's resource readers (TextLineReaderV2, FixedLengthRecordReaderV2) and share
ReaderBase's read / read_up_to / counters with the readers in reader_ops.py; only the way a work
unit (file) is cut into records differs, which is the kernels' business (kernels/readers_text.py).
"""
from __future__ import annotations

from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, define_op
from tensorweave.framework.shape_fns import scalar
from tensorweave.ops.reader_ops import ReaderBase

__all__ = ["TextLineReader", "FixedLengthRecordReader"]

_RESOURCE_ATTRS = [Attr("container", "string", ""), Attr("shared_name", "string", "")]

TextLineReaderV2 = define_op(
    "TextLineReaderV2", outputs=["reader_handle: resource"],
    attrs=[Attr("skip_header_lines", "int", 0)] + _RESOURCE_ATTRS,
    shape_fn=scalar, is_stateful=True, not_differentiable=True)
FixedLengthRecordReaderV2 = define_op(
    "FixedLengthRecordReaderV2", outputs=["reader_handle: resource"],
    attrs=[Attr("header_bytes", "int", 0), Attr("record_bytes", "int"),
           Attr("footer_bytes", "int", 0), Attr("hop_bytes", "int", 0)] + _RESOURCE_ATTRS +
    [Attr("encoding", "string", "")],
    shape_fn=scalar, is_stateful=True, not_differentiable=True)


class TextLineReader(ReaderBase):
    """A reader whose records are the lines of text files.

    Keys are "file:line" with 1-based line numbers counted from the top of the file (header
    lines included); values are the lines without their "\\n" (or "\\r\\n").
    """

    def __init__(self, skip_header_lines=None, name=None):
        """Creates a TextLineReaderV2.

        Args:
          skip_header_lines: how many lines to skip at the start of each file (None: 0).
          name: a name for the operation (optional).

        Raises:
          InvalidArgumentError: at run time if `skip_header_lines` is negative.
        """
        super().__init__(apply_op(TextLineReaderV2, [],
                                  {"skip_header_lines": skip_header_lines or 0}, name=name))


class FixedLengthRecordReader(ReaderBase):
    """A reader of fixed-length records: keys are "file:index" (0-based record number)."""

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
                 name=None, encoding=None):
        """Creates a FixedLengthRecordReaderV2.

        A file is `header_bytes`, then records of `record_bytes` starting every `hop_bytes`
        (every `record_bytes` if 0 or None), then `footer_bytes`; bytes left over that do not
        make a whole record are dropped.

        Args:
          record_bytes: the length of a record.
          header_bytes, footer_bytes: bytes skipped at the start and end of each file.
          hop_bytes: the distance between record starts (None or 0: `record_bytes`).
          name: a name for the operation (optional).
          encoding: "ZLIB" or "GZIP" for compressed files (the sizes apply to the
            decompressed data); None or "" for raw files.

        Raises:
          InvalidArgumentError: at run time if a size is negative.
        """
        attrs = {"record_bytes": record_bytes, "header_bytes": header_bytes or 0,
                 "footer_bytes": footer_bytes or 0, "hop_bytes": hop_bytes or 0,
                 "encoding": encoding or ""}
        super().__init__(apply_op(FixedLengthRecordReaderV2, [], attrs, name=name))
