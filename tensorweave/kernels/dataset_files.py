"""Files read and written by tf.data: text lines, TFRecords and `cache(filename)` files.

Also the DatasetToTFRecord kernel (tf.data.experimental.TFRecordWriter), which writes every
element of a pipeline of scalar strings as a record, compressed as asked.

A cache file is a TFRecord file whose records are serialized TensorProtos, one per component,
preceded by one record holding the number of components; it is written to a temporary name
and renamed when the first full pass ends, so a partial pass never leaves a cache behind.
"""
from __future__ import annotations

import gzip
import os
import zlib

import numpy as np

from tensorweave.framework import errors, graph_io
from tensorweave.io import tf_record
from tensorweave.kernels.registry import kernel
from tensorweave.protos import tensor_pb2

_SUFFIX = ".twcache"


def path(name) -> str:
    return name.decode() if isinstance(name, bytes) else str(name)


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory"
                                   if isinstance(e, FileNotFoundError) else str(e)) from None


def file_bytes(name, compression: str) -> bytes:
    """The contents of a file, decompressed ("GZIP", "ZLIB" or "": none)."""
    data = _read(path(name))
    try:
        if compression == "GZIP":
            return gzip.decompress(data)
        if compression == "ZLIB":
            return zlib.decompress(data)
    except (OSError, EOFError, zlib.error) as e:
        raise errors.DataLossError(None, None, f"{path(name)}: not a valid {compression} "
                                   f"stream ({e})") from None
    return data


def text_lines(name, compression: str):
    """The lines of a text file, as TF's TextLineDataset reads them (BufferedInputStream's
    ReadLine): split at "\\n", every "\\r" dropped wherever it is, and text after the last
    "\\n" a line only if something but "\\r" is left of it ("a\\rb\\r\\n\\r" -> [b"ab"])."""
    lines = file_bytes(name, compression).replace(b"\r", b"").split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def tf_records(name, compression: str):
    """The records of a TFRecord file, CRCs checked."""
    return tf_record.tf_record_iterator(path(name), compression)


def read_cache(filename: str):
    """The cached elements, or None if no complete cache file exists yet."""
    path = filename + _SUFFIX
    if not os.path.exists(path):
        return None
    elements, records = [], tf_record.tf_record_iterator(path)
    for header in records:
        n = int(header)
        elements.append(tuple(
            graph_io.tensor_proto_to_ndarray(tensor_pb2.TensorProto.FromString(next(records)))
            for _ in range(n)))
    return elements


def write_cache(filename: str, elements) -> None:
    path = filename + _SUFFIX
    tmp = f"{path}.tmp-{os.getpid()}"
    with tf_record.TFRecordWriter(tmp) as writer:
        for e in elements:
            writer.write(str(len(e)).encode())
            for value in e:
                writer.write(graph_io.ndarray_to_tensor_proto(value).SerializeToString())
    os.replace(tmp, path)


@kernel("DatasetToTFRecord")
def _dataset_to_tf_record(ctx, dataset, filename, compression_type):
    name = path(np.asarray(filename).item())
    compression = np.asarray(compression_type).item()
    compression = compression.decode() if isinstance(compression, bytes) else compression
    with tf_record.TFRecordWriter(name, compression) as writer:
        for (record,) in dataset.make_node():
            writer.write(np.asarray(record).item())
