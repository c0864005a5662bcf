"""TextLineReaderV2 and FixedLengthRecordReaderV2: how a work unit (file) becomes records.

The reading machinery (requests, queue callbacks, counters) is kernels/readers.py's
ReaderResource; these kernels only give it a record generator configured by the node's attrs,
which are checked when the kernel is created, with TensorFlow's messages.
"""
from __future__ import annotations

import functools
import itertools

from tensorweave.framework import errors
from tensorweave.kernels.file_io import decompress
from tensorweave.kernels.readers import ReaderKernel, read_whole
from tensorweave.kernels.registry import kernel


def _check_non_negative(attrs, *names) -> None:
    for name in names:
        if attrs[name] < 0:
            raise errors.InvalidArgumentError(
                None, None, f"{name} must be >= 0 not {attrs[name]}")


def _text_lines(work: bytes, options, skip: int):
    """Lines without "\\n" / "\\r\\n"; keys count lines from 1, headers included."""
    lines = read_whole(work.decode()).split(b"\n")
    if not lines[-1]:   # a final newline ends the last line rather than starting one
        lines.pop()
    for number, line in enumerate(lines[skip:], start=skip + 1):
        yield b"%s:%d" % (work, number), line[:-1] if line.endswith(b"\r") else line


def _fixed_length(work: bytes, options, header: int, record: int, footer: int, hop: int,
                  encoding: str):
    """Records of `record` bytes every `hop` bytes between header and footer; keys count
    records from 0. A partial record at the end is dropped."""
    data = read_whole(work.decode())
    if encoding in ("ZLIB", "GZIP"):   # other encodings read the file raw, as TF does
        data = decompress(data, encoding)
    body = data[header:max(header, len(data) - footer)]
    hop = hop or record
    # hop is 0 only when record is: TF then yields empty records without end
    starts = range(0, len(body) - record + 1, hop) if hop else itertools.repeat(0)
    for index, start in enumerate(starts):
        yield b"%s:%d" % (work, index), body[start:start + record]


@kernel("TextLineReaderV2")
class TextLineReaderKernel(ReaderKernel):
    """Records are the lines of each file, after `skip_header_lines`."""

    def __init__(self, ctx):
        super().__init__(ctx)
        _check_non_negative(ctx.attrs, "skip_header_lines")
        self.records_of = functools.partial(_text_lines, skip=ctx.attrs["skip_header_lines"])


@kernel("FixedLengthRecordReaderV2")
class FixedLengthRecordReaderKernel(ReaderKernel):
    """Records are fixed-length slices of each (optionally compressed) file."""

    def __init__(self, ctx):
        super().__init__(ctx)
        attrs = ctx.attrs
        _check_non_negative(attrs, "header_bytes", "record_bytes", "footer_bytes",
                            "hop_bytes")
        self.records_of = functools.partial(
            _fixed_length, header=attrs["header_bytes"], record=attrs["record_bytes"],
            footer=attrs["footer_bytes"], hop=attrs["hop_bytes"], encoding=attrs["encoding"])
