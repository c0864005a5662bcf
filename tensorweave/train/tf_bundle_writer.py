"""Writing TensorFlow's checkpoint format (the tensor bundle; train/tf_bundle.py reads it).

`rewrite_as_tensorflow(prefix)` turns the tensorweave checkpoint at `prefix` into the
TensorFlow checkpoint TensorFlow's Saver would have written for the same tensors: one data
file PREFIX.data-00000-of-00001 of raw little-endian bytes (strings as varint64 lengths, their
masked CRC32C, the bytes; bfloat16, which tensorweave holds as float32, as its 2 bytes rounded
to nearest even, as TF's cast), and PREFIX.index, an uncompressed SSTable holding the
BundleHeaderProto under "" and a BundleEntryProto per tensor (a partitioned tensor: an entry
listing its slices, and one entry per slice under TensorFlow's OrderedCode slice key). The
SavedModel builder uses it, so TensorFlow and TensorFlow Serving restore the models we save.

Saver checkpoints stay in our format: TensorFlow's fixed data-file names mean a save over an
existing prefix rewrites files the old index names, which our format avoids. A SavedModel is
written once into a fresh directory, where that cannot happen. Each file is still written to
a temporary name, fsynced and renamed, data before index.
"""
from __future__ import annotations

import os
import struct

import google_crc32c
import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph_io import shape_to_proto
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.platform.atomic_file import write_atomically
from tensorweave.protos import tensor_bundle_pb2, tensor_slice_pb2
from tensorweave.train import checkpoint_format as _fmt
from tensorweave.train.tf_bundle import SIGNED_HEADERS, TABLE_MAGIC, float32_to_bfloat16, mask

__all__ = ["rewrite_as_tensorflow"]

_FOOTER_HANDLES_SIZE = 40           # two BlockHandles, zero-padded, before the magic
_TENSOR_BUNDLE_VERSION = 1          # TensorFlow's kTensorBundleVersion


def rewrite_as_tensorflow(prefix: str) -> None:
    """Replaces the tensorweave checkpoint at `prefix` by the same tensors in TensorFlow's
    format (its data file, then its index), then removes the old data files; a checkpoint
    already in TensorFlow's format is left as it is.

    Raises:
      NotFoundError, DataLossError: the checkpoint at `prefix` cannot be read.
    """
    index = _fmt.read_index(prefix)
    if index.tensorflow:
        return
    old_files = _fmt.checkpoint_files(prefix)
    data, records = bytearray(), [(b"", _header().SerializeToString())]
    for name, entry in index.entries.items():
        pieces = entry.slices or (None,)
        boxes = [None if p is None else (p.start, p.shape) for p in pieces]
        values = _fmt.read_tensors(index, [name] * len(pieces), boxes)
        proto = tensor_bundle_pb2.BundleEntryProto(dtype=entry.dtype.as_datatype_enum,
                                                   shape=shape_to_proto(
                                                       TensorShape(list(entry.shape))))
        for piece, value in zip(entry.slices, values):
            piece_proto = tensor_bundle_pb2.BundleEntryProto(
                dtype=entry.dtype.as_datatype_enum,
                shape=shape_to_proto(TensorShape(list(piece.shape))))
            _append(data, piece_proto, value, entry.dtype)
            records.append((_slice_key(name, piece.start, piece.shape),
                            piece_proto.SerializeToString()))
            proto.slices.append(_slice_proto(piece.start, piece.shape))
        if not entry.slices:
            _append(data, proto, values[0], entry.dtype)
        records.append((name.encode(), proto.SerializeToString()))
    data_path = f"{prefix}.data-00000-of-00001"
    write_atomically(data_path, bytes(data))
    write_atomically(_fmt.index_path(prefix), _table(sorted(records)))
    for path in old_files:
        if path not in (data_path, _fmt.index_path(prefix)):
            os.remove(path)


def _header():
    header = tensor_bundle_pb2.BundleHeaderProto(
        num_shards=1, endianness=tensor_bundle_pb2.BundleHeaderProto.LITTLE)
    header.version.producer = _TENSOR_BUNDLE_VERSION
    return header


def _append(data: bytearray, proto, value, dtype) -> None:
    """Appends `value`'s bytes to `data` and records where they are and their checksum."""
    if dtype == _dtypes.string:
        raw, crc = _string_bytes(np.asarray(value, dtype=object).reshape(-1))
    else:
        if dtype.base_dtype == _dtypes.bfloat16:    # held as float32; TF stores 2 bytes
            raw = float32_to_bfloat16(value).tobytes()
        else:
            raw = np.ascontiguousarray(value, dtype=dtype.as_numpy_dtype).tobytes()
        crc = google_crc32c.value(raw)
    proto.offset, proto.size, proto.crc32c = len(data), len(raw), mask(crc)
    data += raw


def _string_bytes(items):
    """(bytes, checksum) of a string tensor as TensorFlow writes one: varint64 lengths, their
    masked checksum, the strings; the checksum runs over 4-byte lengths (8 beyond 2**32 - 1),
    the lengths' checksum and the strings."""
    items = [v if isinstance(v, bytes) else str(v).encode() for v in items]
    lengths, crc = bytearray(), 0
    for item in items:
        lengths += _varint(len(item))
        crc = google_crc32c.extend(crc, struct.pack("<I" if len(item) <= 0xffffffff else "<Q",
                                                    len(item)))
    checksum = struct.pack("<I", mask(crc))
    strings = b"".join(items)
    crc = google_crc32c.extend(google_crc32c.extend(crc, checksum), strings)
    return bytes(lengths) + checksum + strings, crc


def _slice_proto(start, shape):
    proto = tensor_slice_pb2.TensorSliceProto()
    for begin, length in zip(start, shape):
        extent = proto.extent.add()
        if begin:
            extent.start = begin
        extent.length = length
    return proto


def _slice_key(name: str, start, shape) -> bytes:
    """TensorFlow's key of a slice: OrderedCode 0, the name, the rank, then each dimension's
    start and length as signed numbers."""
    key = bytearray(b"\x00")
    for byte in name.encode():      # OrderedCode string: 00 and ff escaped, 00 01 ends it
        key += {0x00: b"\x00\xff", 0xff: b"\xff\x00"}.get(byte, bytes([byte]))
    key += b"\x00\x01"
    key += _ordered_unsigned(len(start))
    for begin, length in zip(start, shape):
        key += _ordered_signed(int(begin)) + _ordered_signed(int(length))
    return bytes(key)


def _ordered_unsigned(value: int) -> bytes:
    raw = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return bytes([len(raw)]) + raw


def _ordered_signed(value: int) -> bytes:
    """OrderedCode increasing signed number: n bytes of two's complement, the first bits
    flipped into a header of n ones (a non-negative number) or zeros (a negative one)."""
    magnitude = ~value if value < 0 else value
    length = 1
    while magnitude >= 1 << (7 * length - 1) and length < 10:
        length += 1
    raw = bytearray((value & ((1 << 80) - 1)).to_bytes(10, "big")[10 - length:])
    raw[0] ^= SIGNED_HEADERS[length][0]
    if length > 1:
        raw[1] ^= SIGNED_HEADERS[length][1]
    return bytes(raw)


def _table(records) -> bytes:
    """An uncompressed SSTable of the sorted (key, value) records: one data block, an empty
    metaindex block, an index block pointing at the data block, the footer."""
    out = bytearray()
    data_handle = _write_block(out, records)
    meta_handle = _write_block(out, [])
    index_handle = _write_block(out, [(records[-1][0], data_handle)] if records else [])
    handles = meta_handle + index_handle
    out += handles + bytes(_FOOTER_HANDLES_SIZE - len(handles)) + TABLE_MAGIC
    return bytes(out)


def _write_block(out: bytearray, records) -> bytes:
    """Appends a block of `records` (every entry a restart point, no shared key prefixes) and
    its trailer to `out`; returns its BlockHandle."""
    block, restarts = bytearray(), []
    for key, value in records:
        restarts.append(len(block))
        block += _varint(0) + _varint(len(key)) + _varint(len(value)) + key + value
    for offset in restarts or [0]:
        block += struct.pack("<I", offset)
    block += struct.pack("<I", len(restarts or [0]))
    handle = _varint(len(out)) + _varint(len(block))
    block += b"\x00"                                  # no compression
    out += block + struct.pack("<I", mask(google_crc32c.value(bytes(block))))
    return handle


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7f) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
