"""Reading TensorFlow's checkpoints (the tensor-bundle format) into a CheckpointIndex.

A TensorFlow checkpoint is PREFIX.index, an SSTable (LevelDB's table format: data blocks of
prefix-compressed keys, an index block, a 48-byte footer ending in a magic number), and data
files PREFIX.data-<shard>-of-<num_shards> of raw tensor bytes. The table's key "" holds a
BundleHeaderProto; every other key is a tensor name whose value is a BundleEntryProto (dtype,
shape, shard, byte range, masked CRC32C). A tensor saved as slices (a partitioned variable)
has an entry listing its slices and no bytes; each slice is stored under a key that encodes
the name and the slice with TensorFlow's OrderedCode. Numbers are stored as their
little-endian bytes; a string tensor as the varint64 lengths of its elements, a 4-byte
checksum of those, then the bytes.

`read_index` turns all this into checkpoint_format's CheckpointIndex (with unmasked CRCs and
the slices as SliceEntries), so `read_tensors`, restore, `NewCheckpointReader` and
`init_from_checkpoint` read TensorFlow's checkpoints as they read ours. A bfloat16 tensor is
stored as its 2-byte values and read as float32, the type tensorweave holds bfloat16 in.
Compressed table blocks and big-endian bundles, which TensorFlow does not write on the
machines we run on, raise errors that say so.
"""
from __future__ import annotations

import struct

import google_crc32c
import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.protos import tensor_bundle_pb2

TABLE_MAGIC = struct.pack("<Q", 0xdb4775248b80fb57)
_FOOTER_SIZE = 48
_BLOCK_TRAILER_SIZE = 5      # compression type byte, masked CRC32C of contents + type
MASK_DELTA = 0xa282ead8
_SLICE_KEY_PREFIX = b"\x00"  # OrderedCode of the number 0, which starts every slice key


def bfloat16_to_float32(bits: np.ndarray) -> np.ndarray:
    """The float32 values of bfloat16 bit patterns (uint16): exact, a bfloat16 is the upper
    half of a float32. tensorweave holds bfloat16 values as float32 (framework/dtypes.py)."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def float32_to_bfloat16(values) -> np.ndarray:
    """The bfloat16 bit patterns (uint16) of float32 values, as TF's Cast to bfloat16 (Eigen's
    float_to_bfloat16_rtne) makes them: rounded to nearest, ties to even (overflowing to
    +-inf, subnormals kept); a NaN becomes the quiet NaN 0x7fc0 with its sign."""
    f = np.asarray(values, dtype=np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7fff + ((bits >> 16) & 1)) >> 16   # 0x8000 and up rounds up
    nan = np.where(np.signbit(f), 0xffc0, 0x7fc0)
    return np.where(np.isnan(f), nan, rounded).astype(np.uint16)


def is_tensorflow_index(blob: bytes) -> bool:
    """Whether `blob` (an index file's bytes) is an SSTable, as TensorFlow's index is."""
    return len(blob) >= _FOOTER_SIZE and blob[-8:] == TABLE_MAGIC


def mask(crc: int) -> int:
    """TensorFlow's crc32c::Mask: a CRC stored beside the data it covers is rotated and
    offset, so a CRC of data that holds CRCs stays strong."""
    return ((((crc >> 15) | (crc << 17)) & 0xffffffff) + MASK_DELTA) & 0xffffffff


def unmask(masked: int) -> int:
    """The CRC32C that TensorFlow's crc32c::Mask turned into `masked`."""
    rotated = (masked - MASK_DELTA) & 0xffffffff
    return ((rotated >> 17) | (rotated << 15)) & 0xffffffff


def read_index(prefix: str, path: str, blob: bytes):
    """The CheckpointIndex of the TensorFlow checkpoint at `prefix`, whose index file `path`
    holds `blob`.

    Raises:
      DataLossError: the table is corrupt, or holds an entry tensorweave cannot read.
      UnimplementedError: compressed table blocks or a big-endian bundle.
    """
    from tensorweave.train.checkpoint_format import CheckpointIndex, SliceEntry, TensorEntry

    table = _Table(blob, path)
    header, entries, slices = None, {}, {}
    for key, value in table.items():
        if key == b"":
            header = tensor_bundle_pb2.BundleHeaderProto.FromString(value)
        elif key.startswith(_SLICE_KEY_PREFIX):
            name, start, lengths = _decode_slice_key(key, path)
            slices.setdefault(name, []).append((start, lengths, _entry(value, path)))
        else:
            entries[key.decode("utf-8", "replace")] = _entry(value, path)
    if header is None:
        raise _data_loss(f"TensorFlow checkpoint index {path} has no header entry")
    if header.endianness == tensor_bundle_pb2.BundleHeaderProto.BIG:
        raise errors.UnimplementedError(None, None, f"TensorFlow checkpoint {prefix} is "
                                        "big-endian; tensorweave reads little-endian ones")
    out = {}
    for name, e in sorted(entries.items()):
        dtype, shape = _dtype(e.dtype, name, path), _shape(e.shape)
        if not e.slices:
            out[name] = TensorEntry(name, dtype, shape, e.shard_id, e.offset, e.size,
                                    unmask(e.crc32c))
            continue
        pieces = []
        for start, lengths, piece in slices.get(name, ()):
            extent = tuple(shape[d] if n < 0 else n for d, n in enumerate(lengths))
            pieces.append(SliceEntry(tuple(start), extent, piece.shard_id, piece.offset,
                                     piece.size, unmask(piece.crc32c)))
        if len(pieces) != len(e.slices):
            raise _data_loss(f"TensorFlow checkpoint {path}: tensor {name!r} lists "
                             f"{len(e.slices)} slices but {len(pieces)} are stored")
        out[name] = TensorEntry(name, dtype, shape, slices=tuple(pieces))
    suffixes = [f"data-{shard:05d}-of-{header.num_shards:05d}"
                for shard in range(header.num_shards)]
    return CheckpointIndex(prefix, out, suffixes, tensorflow=True)


def decode_strings(raw: np.ndarray, piece, name: str, path: str) -> np.ndarray:
    """The string tensor (or slice) `piece` from its bytes `raw` in data file `path`:
    varint64 lengths, the masked CRC32C of the lengths, then the elements' bytes.

    TensorFlow's checksum of a string tensor is not one of its bytes: it runs over each
    length as 4 little-endian bytes (8 beyond 2**32 - 1), the lengths' checksum, then the
    strings; both checksums are verified.

    Raises:
      DataLossError: the bytes do not hold the piece's elements, or a checksum fails.
    """
    data = raw.tobytes()
    count = int(np.prod(piece.shape, dtype=np.int64))
    lengths, pos = [], 0
    crc = 0
    try:
        for _ in range(count):
            n, pos = _varint(data, pos)
            lengths.append(n)
            crc = google_crc32c.extend(crc, struct.pack("<I" if n <= 0xffffffff else "<Q", n))
        stored = data[pos:pos + 4]
        (lengths_crc,) = struct.unpack("<I", stored)
    except (IndexError, struct.error):
        raise _data_loss(f"string tensor {name!r} in {path} is shorter than its length "
                         "table") from None
    if unmask(lengths_crc) != crc:
        raise _data_loss(f"string tensor {name!r} in {path}: the checksum of its lengths does "
                         "not match; the checkpoint is corrupt")
    pos += 4
    if pos + sum(lengths) != len(data):
        raise _data_loss(f"string tensor {name!r} in {path}: {len(data) - pos} bytes of "
                         f"strings, its lengths add up to {sum(lengths)}")
    crc = google_crc32c.extend(google_crc32c.extend(crc, stored), data[pos:])
    if crc != piece.crc32c:
        raise _data_loss(f"Checksum does not match for tensor {name!r} in {path}: stored "
                         f"{piece.crc32c:#010x}, computed {crc:#010x}; the checkpoint is "
                         "corrupt")
    out = np.empty(count, dtype=object)
    for i, n in enumerate(lengths):
        out[i] = data[pos:pos + n]
        pos += n
    return out.reshape(piece.shape)


class _Table:
    """The key-value pairs of an uncompressed SSTable held in memory, in key order."""

    def __init__(self, blob: bytes, path: str):
        self.blob, self.path = blob, path

    def items(self):
        footer = self.blob[-_FOOTER_SIZE:]
        try:
            _, pos = self._handle(footer, 0)              # the metaindex block (unused)
            index_handle, _ = self._handle(footer, pos)
            for _, handle in self._block(*index_handle):
                yield from self._block(*self._handle(handle, 0)[0])
        except (IndexError, struct.error):
            raise _data_loss(f"TensorFlow checkpoint index {self.path} is truncated or "
                             "corrupt") from None

    @staticmethod
    def _handle(data: bytes, pos: int):
        """((offset, size), position after it): a BlockHandle, two varints."""
        offset, pos = _varint(data, pos)
        size, pos = _varint(data, pos)
        return (offset, size), pos

    def _block(self, offset: int, size: int):
        """The (key, value) pairs of the block at `offset`, its checksum verified."""
        end = offset + size
        if end + _BLOCK_TRAILER_SIZE > len(self.blob) - _FOOTER_SIZE:
            raise IndexError
        contents, kind = self.blob[offset:end], self.blob[end]
        (stored,) = struct.unpack_from("<I", self.blob, end + 1)
        if unmask(stored) != google_crc32c.value(self.blob[offset:end + 1]):
            raise _data_loss(f"Checksum mismatch in a block of TensorFlow checkpoint index "
                             f"{self.path}")
        if kind != 0:
            raise errors.UnimplementedError(None, None, f"TensorFlow checkpoint index "
                                            f"{self.path} has compressed blocks (type {kind}), "
                                            "which tensorweave does not read")
        (restarts,) = struct.unpack_from("<I", contents, len(contents) - 4)
        limit = len(contents) - 4 - 4 * restarts
        pos, key = 0, b""
        while pos < limit:
            shared, pos = _varint(contents, pos)
            unshared, pos = _varint(contents, pos)
            length, pos = _varint(contents, pos)
            key = key[:shared] + contents[pos:pos + unshared]
            pos += unshared
            yield key, contents[pos:pos + length]
            pos += length


def _varint(data: bytes, pos: int):
    """(value, position after it) of the little-endian base-128 varint at `pos`."""
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7f) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _entry(value: bytes, path: str):
    try:
        return tensor_bundle_pb2.BundleEntryProto.FromString(value)
    except Exception:  # noqa: BLE001 - protobuf's DecodeError and friends
        raise _data_loss(f"TensorFlow checkpoint index {path} holds an unreadable "
                         "entry") from None


def _dtype(enum: int, name: str, path: str) -> _dtypes.DType:
    try:
        return _dtypes.as_dtype(enum)
    except TypeError:
        raise _data_loss(f"TensorFlow checkpoint {path}: tensor {name!r} has DataType {enum}, "
                         "which tensorweave cannot read") from None


def _shape(proto) -> tuple:
    return tuple(int(d.size) for d in proto.dim)


def _decode_slice_key(key: bytes, path: str):
    """(name, start, lengths) of a slice's key: OrderedCode's 0, the name, the rank, then a
    signed start and length per dimension (length -1: the whole dimension)."""
    try:
        pos = len(_SLICE_KEY_PREFIX)
        name, pos = _ordered_string(key, pos)
        rank, pos = _ordered_unsigned(key, pos)
        numbers = []
        for _ in range(2 * rank):
            value, pos = _ordered_signed(key, pos)
            numbers.append(value)
    except (IndexError, UnicodeDecodeError):
        raise _data_loss(f"TensorFlow checkpoint index {path} holds an unreadable slice "
                         "key") from None
    return name, numbers[0::2], numbers[1::2]


def _ordered_string(key: bytes, pos: int):
    """OrderedCode string: 0x00 escaped as 00 ff, 0xff as ff 00, ended by 00 01."""
    out = bytearray()
    while True:
        byte = key[pos]
        if byte == 0x00:
            if key[pos + 1] == 0x01:
                return out.decode("utf-8"), pos + 2
            out.append(0x00)
        elif byte == 0xff:
            out.append(0xff)
        else:
            out.append(byte)
            pos += 1
            continue
        pos += 2


def _ordered_unsigned(key: bytes, pos: int):
    """OrderedCode increasing unsigned number: a length byte, then big-endian bytes."""
    length = key[pos]
    return int.from_bytes(key[pos + 1:pos + 1 + length], "big"), pos + 1 + length


def _ordered_signed(key: bytes, pos: int):
    """OrderedCode increasing signed number of 1-10 bytes: the two's complement value with
    its first bits flipped into a header, as many ones (zeros for a negative number) as
    bytes, then the opposite bit."""
    first = key[pos]
    fill = 0x00 if first & 0x80 else 0xff
    second = key[pos + 1] if pos + 1 < len(key) else fill
    header = ((first ^ fill) << 8) | (second ^ fill)
    length = 0
    while header & (0x8000 >> length):
        length += 1
    raw = bytearray(key[pos:pos + length])
    raw[0] ^= SIGNED_HEADERS[length][0]
    if length > 1:
        raw[1] ^= SIGNED_HEADERS[length][1]
    return int.from_bytes(raw[-8:], "big", signed=True), pos + length


# The header bits OrderedCode XORs into the first two bytes of an n-byte signed number.
SIGNED_HEADERS = [(0, 0), (0x80, 0), (0xc0, 0), (0xe0, 0), (0xf0, 0), (0xf8, 0), (0xfc, 0),
                   (0xfe, 0), (0xff, 0), (0xff, 0x80), (0xff, 0xc0)]


def _data_loss(message: str) -> errors.DataLossError:
    return errors.DataLossError(None, None, message)
