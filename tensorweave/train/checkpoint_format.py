"""tensorweave's checkpoint format: raw tensor bytes in data files, one checksummed index.

A checkpoint is named by its prefix (`/ckpt/model.ckpt-4`) and is these files:

    PREFIX.index                                the commit point: header, JSON table, CRC32C
    PREFIX.data-<token>-<shard:05d>-of-<n:05d>  a 64-byte header, then each tensor's bytes at a
                                                64-byte-aligned offset

Every tensor's bytes carry their own CRC32C in the index; the index carries one over itself.
A tensor may be stored as slices (the parts of a partitioned variable): its index entry then
holds the full shape and, per slice, where the slice lies in the full tensor and where its
bytes are. Any slice of a tensor can be read back, assembled from the stored slices that cover
it, so a checkpoint restores into another partitioning or none. `docs/checkpoint-format.md`
describes the bytes. Writes are atomic: data files are written to
temporary names, fsynced and renamed; the index is written the same way, last. A data file's
name holds a fresh random token, so writing over an existing prefix never touches the files the
old index names: a crash at any point leaves the old or the new checkpoint whole. Data files no
index refers to any more are removed once the new index is in place.

Contract: `write_checkpoint` and `merge_checkpoints` return only after everything is durable;
`read_index` and `read_tensors` raise NotFoundError for a missing checkpoint and DataLossError
for any file that is truncated, corrupt or of another format, and never return unchecked bytes.
The slices of a tensor lie inside it and never overlap.
"""
from __future__ import annotations

import ctypes
import glob
import json
import os
import secrets
import struct
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

import google_crc32c
import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.shape_text import dims_text
from tensorweave.train import tf_bundle
from tensorweave.train.checkpoint_slices import (
    assemble,
    check_slice_bounds,
    covering,
    intersection,
    slice_text,
)

# Index versions: 1 stores whole tensors only; 2 adds tensors stored as slices. A checkpoint
# is written with the lowest version that describes it, so one without slices stays readable
# by tensorweave versions that know only version 1. Data files are unchanged since version 1.
FORMAT_VERSION = 2
_WHOLE_TENSORS_VERSION = 1
DATA_VERSION = 1
INDEX_MAGIC = b"TWCKIDX\n"
DATA_MAGIC = b"TWCKDAT\n"
ALIGNMENT = 64
DATA_HEADER = struct.Struct("<8sI")         # magic, version (then zeros up to ALIGNMENT)
INDEX_HEADER = struct.Struct("<8sIQ")       # magic, version, JSON length
_CRC = struct.Struct("<I")
# Tensors at least this large are checksummed on a worker thread while the previous one is
# written or read (google-crc32c releases the GIL from 1 MB on).
_PARALLEL_CRC_BYTES = 1 << 20
_crc_pool: ThreadPoolExecutor | None = None
_crc_pool_lock = threading.Lock()

# Test hook: the stage at which a writer stops (prints the stage and sleeps) so a test can kill
# it there. Read once at import; never set in normal use.
_PAUSE_AT = os.environ.get("TENSORWEAVE_CHECKPOINT_PAUSE_AT", "")


def pause_point(stage: str) -> None:
    """Test hook: stops the writer at `stage` when TENSORWEAVE_CHECKPOINT_PAUSE_AT names it."""
    if _PAUSE_AT == stage:
        print(f"checkpoint writer paused at {stage}", flush=True)
        time.sleep(3600)


@dataclass(frozen=True)
class SliceEntry:
    """One stored piece of a tensor: where it lies in the full tensor (`start`, `shape`) and
    where its bytes are (shard, byte range, checksum)."""

    start: tuple
    shape: tuple
    shard: int
    offset: int
    length: int
    crc32c: int

    def to_json(self) -> dict:
        return {"start": list(self.start), "shape": list(self.shape), "shard": self.shard,
                "offset": self.offset, "length": self.length, "crc32c": self.crc32c}


@dataclass(frozen=True)
class TensorEntry:
    """One tensor: its dtype and (full) shape, and where its bytes are: a shard, byte range
    and checksum for a whole tensor, or `slices` (and no location of its own) for a tensor
    stored as slices."""

    name: str
    dtype: _dtypes.DType
    shape: tuple
    shard: int | None = None
    offset: int | None = None
    length: int | None = None
    crc32c: int | None = None
    slices: tuple = ()

    def pieces(self) -> tuple:
        """The stored pieces: the slices, or the whole tensor as one piece at the origin."""
        if self.slices:
            return self.slices
        return (SliceEntry((0,) * len(self.shape), self.shape, self.shard, self.offset,
                           self.length, self.crc32c),)

    def to_json(self) -> dict:
        out = {"dtype": self.dtype.name, "shape": list(self.shape)}
        if self.slices:
            out["slices"] = [p.to_json() for p in self.slices]
        else:
            out.update(shard=self.shard, offset=self.offset, length=self.length,
                       crc32c=self.crc32c)
        return out


@dataclass
class CheckpointIndex:
    """A checkpoint's table of contents: its tensors, sorted by name, and its data files;
    `tensorflow` for a checkpoint in TensorFlow's format (train/tf_bundle.py), whose data
    files have no header and encode strings their own way."""

    prefix: str
    entries: dict
    data_suffixes: list
    tensorflow: bool = False

    def data_path(self, shard: int) -> str:
        return f"{self.prefix}.{self.data_suffixes[shard]}"


# --- names ---------------------------------------------------------------------------------
def index_path(prefix: str) -> str:
    return prefix + ".index"


def data_suffix(token: str, shard: int, num_shards: int) -> str:
    return f"data-{token}-{shard:05d}-of-{num_shards:05d}"


def checkpoint_files(prefix: str) -> list:
    """Every file of the checkpoint at `prefix` that exists (index and data files)."""
    found = glob.glob(glob.escape(prefix) + ".data-*")
    if os.path.exists(index_path(prefix)):
        found.append(index_path(prefix))
    return sorted(found)


# --- bytes of one tensor -------------------------------------------------------------------
def _as_bytes(array: np.ndarray) -> np.ndarray:
    """A uint8 view of a C-contiguous array (no copy): what is written and checksummed."""
    return array.reshape(-1).view(np.uint8)


def _encode(value, dtype: _dtypes.DType) -> np.ndarray:
    """The bytes to store for `value`: raw for numbers, lengths + bytes for strings."""
    if dtype == _dtypes.string:
        items = [v if isinstance(v, bytes) else str(v).encode() for v in
                 np.asarray(value, dtype=object).reshape(-1)]
        lengths = np.fromiter((len(v) for v in items), dtype="<u8", count=len(items))
        return np.frombuffer(lengths.tobytes() + b"".join(items), dtype=np.uint8)
    array = np.ascontiguousarray(value, dtype=dtype.as_numpy_dtype)
    return _as_bytes(array)


def _decode_strings(raw: np.ndarray, shape: tuple, name: str) -> np.ndarray:
    count = int(np.prod(shape, dtype=np.int64))
    head = count * 8
    if raw.size < head:
        raise _data_loss(f"string tensor {name!r} is shorter than its length table")
    lengths = raw[:head].view("<u8")
    out = np.empty(count, dtype=object)
    data = raw[head:].tobytes()
    pos = 0
    for i, n in enumerate(lengths.tolist()):
        out[i] = data[pos:pos + n]
        pos += n
    if pos != len(data):
        raise _data_loss(f"string tensor {name!r} has {len(data) - pos} stray bytes")
    return out.reshape(shape)


def _crc_pool_get() -> ThreadPoolExecutor:
    global _crc_pool
    with _crc_pool_lock:
        if _crc_pool is None:
            _crc_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tw-ckpt-crc")
    return _crc_pool


def _crc_async(buf: np.ndarray):
    """The CRC32C of `buf`, as a future for large buffers and a plain int otherwise."""
    if buf.nbytes >= _PARALLEL_CRC_BYTES:
        return _crc_pool_get().submit(google_crc32c.value, buf)
    return google_crc32c.value(buf)


def _result(crc) -> int:
    return crc if isinstance(crc, int) else crc.result()


def _data_loss(message: str) -> errors.DataLossError:
    return errors.DataLossError(None, None, message)


# --- files ---------------------------------------------------------------------------------
def _fsync_dir(directory: str) -> None:
    fd = os.open(directory or ".", os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_data_file(path: str, buffers: list, pause: bool = False):
    """Writes one data file (temp name, fdatasync, rename); returns [(offset, len, crc)]."""
    tmp = f"{path}.tmp"
    placed = []
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        with open(fd, "wb", buffering=0, closefd=True) as f:
            header = DATA_HEADER.pack(DATA_MAGIC, DATA_VERSION)
            pos = f.write(header.ljust(ALIGNMENT, b"\0"))
            crcs = [_crc_async(buf) for buf in buffers]
            for buf in buffers:
                pad = -pos % ALIGNMENT
                if pad:
                    pos += f.write(b"\0" * pad)
                placed.append((pos, buf.nbytes))
                pos += _write_all(f, buf)
                _start_writeback(f.fileno(), placed[-1][0], buf.nbytes)
                if pause and len(placed) == 1:
                    pause_point("data")
            os.fdatasync(f.fileno())
        placed = [(off, n, _result(crc)) for (off, n), crc in zip(placed, crcs)]
        os.replace(tmp, path)
    except BaseException:
        _remove_quietly(tmp)
        raise
    return placed


def _load_sync_file_range():
    """libc's sync_file_range (Linux), or None: starts writeback without waiting for it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.sync_file_range
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_sync_file_range = _load_sync_file_range()
_SYNC_FILE_RANGE_WRITE = 2


def _start_writeback(fd: int, offset: int, length: int) -> None:
    """Lets the disk work on a large tensor while the next is copied into the page cache,
    so the final fdatasync waits only for the tail."""
    if _sync_file_range is not None and length >= _PARALLEL_CRC_BYTES:
        _sync_file_range(fd, offset, length, _SYNC_FILE_RANGE_WRITE)


def _write_all(f, buf: np.ndarray) -> int:
    view = memoryview(buf)
    done = 0
    while done < len(view):
        done += f.write(view[done:])
    return done


def _write_index(prefix: str, entries: list, data_suffixes: list) -> None:
    """Writes PREFIX.index atomically: the commit point of a checkpoint."""
    version = FORMAT_VERSION if any(e.slices for e in entries) else _WHOLE_TENSORS_VERSION
    body = json.dumps({
        "format": "tensorweave-checkpoint", "version": version,
        "data_files": data_suffixes,
        "tensors": {e.name: e.to_json() for e in sorted(entries, key=lambda e: e.name)},
    }, separators=(",", ":")).encode()
    blob = INDEX_HEADER.pack(INDEX_MAGIC, version, len(body)) + body
    blob += _CRC.pack(google_crc32c.value(blob))
    path = index_path(prefix)
    tmp = f"{path}.{secrets.token_hex(4)}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        _remove_quietly(tmp)
        raise


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def _remove_stale_data(prefix: str, keep: list) -> None:
    keep_paths = {f"{prefix}.{s}" for s in keep}
    for path in glob.glob(glob.escape(prefix) + ".data-*"):
        if path not in keep_paths:
            _remove_quietly(path)


def _check_directory(prefix: str) -> str:
    directory = os.path.dirname(prefix)
    if directory and not os.path.isdir(directory):
        raise errors.NotFoundError(
            None, None, f"Failed to create a NewWriteableFile: {prefix}.index : No such file "
            f"or directory; the parent directory {directory!r} does not exist")
    return directory


class _Table:
    """The tensors of an index being built (by a write or a merge), checked as they come: a
    name is one whole tensor or any number of disjoint slices of one dtype and full shape.
    Each tensor keeps the caller's `item` per piece (a buffer number, or an entry)."""

    def __init__(self, duplicate_message):
        self._duplicate_message = duplicate_message
        self.tensors: dict = {}   # name -> [dtype, full shape, whole item | None, slices]

    def _duplicate(self, name) -> errors.InvalidArgumentError:
        return errors.InvalidArgumentError(None, None, self._duplicate_message(name))

    def add_whole(self, name, dtype, shape, item) -> None:
        if name in self.tensors:
            raise self._duplicate(name)
        self.tensors[name] = [dtype, tuple(shape), item, []]

    def add_slice(self, name, dtype, full_shape, start, shape, item) -> None:
        full_shape, start, shape = tuple(full_shape), tuple(start), tuple(shape)
        check_slice_bounds(full_shape, start, shape)
        known = self.tensors.setdefault(name, [dtype, full_shape, None, []])
        if known[2] is not None:
            raise self._duplicate(name)
        if (known[0], known[1]) != (dtype, full_shape):
            raise errors.InvalidArgumentError(
                None, None, f"Slices of tensor {name!r} disagree: {known[0].name} "
                f"{dims_text(known[1])} and {dtype.name} {dims_text(full_shape)}")
        for other_start, other_shape, _ in known[3]:
            if (other_start, other_shape) == (start, shape):
                raise self._duplicate(name)
            if intersection(start, shape, other_start, other_shape) is not None:
                raise errors.InvalidArgumentError(
                    None, None, f"Slices {slice_text(other_start, other_shape)} and "
                    f"{slice_text(start, shape)} of tensor {name!r} overlap")
        known[3].append((start, shape, item))

    def entries(self, whole_entry, slice_entry) -> list:
        """TensorEntries, made by `whole_entry(name, dtype, shape, item)` and, per slice,
        `slice_entry(start, shape, item)` (slices in order of their start)."""
        out = []
        for name, (dtype, shape, whole, slices) in self.tensors.items():
            if whole is not None:
                out.append(whole_entry(name, dtype, shape, whole))
            else:
                pieces = tuple(slice_entry(*s) for s in sorted(slices, key=lambda s: s[0]))
                out.append(TensorEntry(name, dtype, shape, slices=pieces))
        return out


# --- writing -------------------------------------------------------------------------------
def write_checkpoint(prefix: str, names, values, dtypes, slices=None) -> None:
    """Writes `values` under `names` as the checkpoint at `prefix` (one shard), atomically.

    Args:
      prefix: the checkpoint prefix.
      names: one checkpoint name per value.
      values: the tensors' values.
      dtypes: their DTypes.
      slices: optional, per value None (a whole tensor) or `(full_shape, start)`: the value
        is the slice of tensor `name` (of `full_shape`) that begins at `start`. Several
        values may be disjoint slices of one name.

    Raises:
      InvalidArgumentError: a name used twice (other than for disjoint slices), slices of one
        name of different dtypes or full shapes, or a name/value count mismatch.
      InternalError: a slice outside its full shape (TensorFlow's error).
      NotFoundError: the directory does not exist.
    """
    names = list(names)
    if len(names) != len(values):
        raise errors.InvalidArgumentError(
            None, None, f"Checkpoint tensor names must match the tensors: {len(names)} "
            f"names, {len(values)} tensors")
    slices = list(slices) if slices is not None else [None] * len(names)
    shapes = [tuple(np.shape(value)) for value in values]
    table = _Table(lambda name: f"Adding duplicate key: {name} (checkpoint tensor names must "
                                "be unique, except for disjoint slices of one tensor)")
    for i, (name, dtype, shape, where) in enumerate(zip(names, dtypes, shapes, slices)):
        if where is None:
            table.add_whole(name, dtype.base_dtype, shape, i)
        else:
            table.add_slice(name, dtype.base_dtype, where[0], where[1], shape, i)
    directory = _check_directory(prefix)
    token = secrets.token_hex(4)
    buffers = [_encode(value, dtype) for value, dtype in zip(values, dtypes)]
    suffix = data_suffix(token, 0, 1)
    placed = _write_data_file(f"{prefix}.{suffix}", buffers, pause=True)
    entries = table.entries(
        lambda name, dtype, shape, i: TensorEntry(name, dtype, shape, 0, *placed[i]),
        lambda start, shape, i: SliceEntry(start, shape, 0, *placed[i]))
    _fsync_dir(directory)
    pause_point("index")
    _write_index(prefix, entries, [suffix])
    _fsync_dir(directory)
    _remove_stale_data(prefix, [suffix])


def merge_checkpoints(prefixes, destination: str, delete_old_dirs: bool = True) -> None:
    """Merges single-shard checkpoints into one checkpoint at `destination` (shard k = k-th).

    Slices of one tensor may come from several shards (the parts of a partitioned variable on
    several devices). Every index is read and checked before any file moves; then the shards'
    data files are renamed into place and the merged index is written last. With
    `delete_old_dirs`, each shard's directory is removed once empty.

    Raises:
      InvalidArgumentError: a whole tensor in more than one shard, or slices of one tensor
        that disagree or overlap.
    """
    prefixes = list(prefixes)
    directory = _check_directory(destination)
    token = secrets.token_hex(4)
    indexes = [read_index(prefix) for prefix in prefixes]
    table = _Table(lambda name: f"Tensor {name!r} is in more than one shard to merge")
    for k, index in enumerate(indexes):
        for e in index.entries.values():
            if not e.slices:
                table.add_whole(e.name, e.dtype, e.shape, replace(e, shard=k))
            for piece in e.slices:
                table.add_slice(e.name, e.dtype, e.shape, piece.start, piece.shape,
                                replace(piece, shard=k))
    suffixes = [data_suffix(token, k, len(prefixes)) for k in range(len(prefixes))]
    for index, suffix in zip(indexes, suffixes):
        os.replace(index.data_path(0), f"{destination}.{suffix}")
    entries = table.entries(lambda name, dtype, shape, entry: entry,
                            lambda start, shape, piece: piece)
    _fsync_dir(directory)
    _write_index(destination, entries, suffixes)
    _fsync_dir(directory)
    _remove_stale_data(destination, suffixes)
    for prefix in prefixes:
        _remove_quietly(index_path(prefix))
        if delete_old_dirs:
            try:
                os.rmdir(os.path.dirname(prefix))
            except OSError:
                pass


# --- reading -------------------------------------------------------------------------------
def read_index(prefix: str) -> CheckpointIndex:
    """Reads and verifies PREFIX.index.

    Raises:
      NotFoundError: there is no index at `prefix`.
      DataLossError: the index is truncated, corrupt or not a tensorweave checkpoint.
    """
    path = index_path(prefix)
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(
            None, None, f"Unsuccessful TensorSliceReader constructor: Failed to find any "
            f"matching files for {prefix}") from None
    except IsADirectoryError:
        raise errors.DataLossError(None, None, f"{path} is a directory") from None
    if not blob.startswith(INDEX_MAGIC) and tf_bundle.is_tensorflow_index(blob):
        return tf_bundle.read_index(prefix, path, blob)
    if len(blob) < INDEX_HEADER.size + _CRC.size:
        raise _data_loss(f"Checkpoint index {path} is truncated ({len(blob)} bytes)")
    magic, version, length = INDEX_HEADER.unpack_from(blob)
    if magic != INDEX_MAGIC:
        raise _data_loss(f"{path} is not a tensorweave checkpoint index (bad magic "
                         f"{magic!r})")
    if version > FORMAT_VERSION:
        raise _data_loss(f"Checkpoint index {path} has format version {version}, newer than "
                         f"this tensorweave reads (format version {FORMAT_VERSION})")
    end = INDEX_HEADER.size + length
    if len(blob) != end + _CRC.size:
        raise _data_loss(f"Checkpoint index {path} is truncated or has trailing bytes "
                         f"({len(blob)} bytes, expected {end + _CRC.size})")
    (crc,) = _CRC.unpack_from(blob, end)
    if google_crc32c.value(blob[:end]) != crc:
        raise _data_loss(f"Checksum mismatch in checkpoint index {path}")
    table = json.loads(blob[INDEX_HEADER.size:end])
    entries = {name: _parse_entry(name, e) for name, e in table["tensors"].items()}
    return CheckpointIndex(prefix, entries, list(table["data_files"]))


def _parse_entry(name: str, e: dict) -> TensorEntry:
    dtype, shape = _dtypes.as_dtype(e["dtype"]), tuple(e["shape"])
    if "slices" in e:
        return TensorEntry(name, dtype, shape, slices=tuple(
            SliceEntry(tuple(p["start"]), tuple(p["shape"]), p["shard"], p["offset"],
                       p["length"], p["crc32c"]) for p in e["slices"]))
    return TensorEntry(name, dtype, shape, e["shard"], e["offset"], e["length"], e["crc32c"])


def read_tensors(index: CheckpointIndex, names, boxes=None) -> list:
    """Reads and verifies the named tensors, or slices of them, from the stored pieces that
    cover them; every piece read is checked before any value is returned.

    Args:
      index: the checkpoint's index.
      names: the tensors to read.
      boxes: optional, per name None (the whole tensor) or `(start, shape)`, a slice inside
        the tensor (see `check_slice_bounds`).

    Raises:
      NotFoundError: a name is not in the checkpoint, or a data file is missing.
      InvalidArgumentError: the stored slices of a tensor do not cover what is asked.
      DataLossError: a data file is truncated or a tensor fails its checksum.
    """
    boxes = list(boxes) if boxes is not None else [None] * len(names)
    requests = []
    for name, box in zip(names, boxes):
        entry = index.entries.get(name)
        if entry is None:
            raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint")
        start, shape = (tuple(box[0]), tuple(box[1])) if box is not None else \
            ((0,) * len(entry.shape), entry.shape)
        requests.append((entry, start, shape, covering(entry, start, shape, box is None)))
    read = _read_pieces(index, {(e.name, piece): (e, piece)
                                for e, _, _, found in requests for piece, _ in found})
    return [assemble(e, start, shape, found, read) for e, start, shape, found in requests]


def _read_pieces(index: CheckpointIndex, wanted: dict) -> dict:
    """{key: array} for {key: (entry, piece)}: each data file read once, in offset order."""
    by_shard: dict = {}
    for key, (_, piece) in wanted.items():
        by_shard.setdefault(piece.shard, []).append(key)
    out = {}
    for shard, keys in by_shard.items():
        keys.sort(key=lambda k: wanted[k][1].offset)
        out.update(zip(keys, _read_shard(index, shard, [wanted[k] for k in keys])))
    return out


def _read_shard(index, shard, items) -> list:
    """The verified arrays of [(entry, piece)] stored in data file `shard`."""
    path = index.data_path(shard)
    try:
        f = open(path, "rb", buffering=0)
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"Checkpoint data file {path} is missing "
                                   f"(the index {index_path(index.prefix)} names it)") from None
    pending = []
    with f:
        pos = 0
        if not index.tensorflow:
            header = f.read(DATA_HEADER.size)
            if len(header) < DATA_HEADER.size or header[:8] != DATA_MAGIC:
                raise _data_loss(f"{path} is not a tensorweave checkpoint data file")
            pos = DATA_HEADER.size
        for e, piece in items:
            if pos != piece.offset:
                f.seek(piece.offset)
            buf = _read_exact(f, e, piece, path, index.tensorflow)
            pos = piece.offset + piece.length
            tf_strings = index.tensorflow and e.dtype == _dtypes.string
            pending.append((e, piece, buf, None if tf_strings else _crc_async(buf)))
    out = []
    for e, piece, buf, crc in pending:
        if crc is None:   # TensorFlow checksums a string tensor its own way
            out.append(tf_bundle.decode_strings(buf, piece, e.name, path))
            continue
        if _result(crc) != piece.crc32c:
            raise _data_loss(f"Checksum does not match for tensor {e.name!r} in {path}: "
                             f"stored {piece.crc32c:#010x}, computed {_result(crc):#010x}; "
                             "the checkpoint is corrupt")
        out.append(_to_array(e, piece, buf, index.tensorflow))
    return out


def _stored_type(dtype: _dtypes.DType, tensorflow: bool):
    """The NumPy type of a tensor's stored elements. tensorweave holds bfloat16 values as
    float32 (framework/dtypes.py) and stores those 4 bytes, so its checkpoints keep them
    exactly; TensorFlow stores bfloat16's own 2 bytes (train/tf_bundle.py converts)."""
    if tensorflow and dtype.base_dtype == _dtypes.bfloat16:
        return np.uint16
    return dtype.as_numpy_dtype


def _read_exact(f, e: TensorEntry, piece: SliceEntry, path: str,
                tensorflow: bool = False) -> np.ndarray:
    """Reads a piece's bytes into a fresh buffer laid out as the stored array."""
    if e.dtype == _dtypes.string:
        buf = np.empty(piece.length, dtype=np.uint8)
    else:
        buf = _as_bytes(np.empty(piece.shape, dtype=_stored_type(e.dtype, tensorflow)))
        if buf.nbytes != piece.length:
            raise _data_loss(f"Tensor {e.name!r} in {path}: {piece.length} bytes for shape "
                             f"{list(piece.shape)} of {e.dtype.name}")
    got = 0
    view = memoryview(buf)
    while got < piece.length:
        n = f.readinto(view[got:])
        if not n:
            raise _data_loss(f"Checkpoint data file {path} is truncated: tensor {e.name!r} "
                             f"needs bytes {piece.offset}..{piece.offset + piece.length}, the "
                             f"file ends at {piece.offset + got}")
        got += n
    return buf


def _to_array(e: TensorEntry, piece: SliceEntry, buf: np.ndarray,
              tensorflow: bool = False) -> np.ndarray:
    if e.dtype == _dtypes.string:
        return _decode_strings(buf, piece.shape, e.name)
    stored = _stored_type(e.dtype, tensorflow)
    array = buf.view(stored).reshape(piece.shape)
    if stored != e.dtype.as_numpy_dtype:    # TensorFlow's 2-byte bfloat16
        return tf_bundle.bfloat16_to_float32(array)
    return array
