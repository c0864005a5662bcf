"""RecvTensors messages encoded by hand, so a tensor's bytes are copied once each way.

The stream's messages are `RecvTensorsResponse`s (protos/worker.proto). Built through the
generated class, a tensor is copied three times before it leaves (`tobytes`, into the
message, serializing) and twice after it arrives (parsing, into a writable array). Here the
sender joins the encoded headers with the arrays' own buffers (one copy), and the receiver
reads dtype, shape and `tensor_content` off the message and copies the content once into its
array, as TensorFlow hand-encodes its RecvTensor responses. The bytes are a valid
RecvTensorsResponse: the generated class parses them (tested). Tensors without
`tensor_content` (strings) go through the generated TensorProto. A SendTensorsRequest (the
tensors a loop frame's `_Send`s push to another task) is the same fields plus its step id.
"""
from __future__ import annotations

import numpy as np
from google.protobuf.message import DecodeError

from tensorweave.distributed import wire
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.protos import tensor_pb2

# Wire types of the protobuf encoding.
_VARINT, _BYTES = 0, 2


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(field: int, wire_type: int) -> bytes:
    return _varint(field << 3 | wire_type)


def _tensor_parts(value) -> list:
    """A TensorProto's encoding as byte chunks (the content as the array's own buffer)."""
    array = np.asarray(value)
    if array.dtype == object or array.dtype.kind in "SU":
        return [wire.tensor_proto(array).SerializeToString()]
    # (ascontiguousarray makes a 0-d array 1-d: the shape is the original's)
    array = np.ascontiguousarray(array, array.dtype.newbyteorder("<")).reshape(array.shape)
    shape = b"".join(_key(2, _BYTES) + _varint(len(dim)) + dim
                     for dim in (_key(1, _VARINT) + _varint(d) for d in array.shape))
    dtype = _dtypes.from_numpy(array.dtype).as_datatype_enum
    return [_key(1, _VARINT) + _varint(dtype), _key(2, _BYTES) + _varint(len(shape)) + shape,
            _key(4, _BYTES) + _varint(array.nbytes), memoryview(array.reshape(-1).view(np.uint8))]


def encode(items) -> bytes:
    """A RecvTensorsResponse of `items`: (rendezvous key, value, is_dead) triples."""
    chunks = []
    for key, value, is_dead in items:
        entry = [_key(1, _BYTES) + _varint(len(key.encode())) + key.encode()]
        if is_dead:
            entry.append(_key(3, _VARINT) + b"\x01")
        else:
            tensor = _tensor_parts(value)
            entry.append(_key(2, _BYTES) + _varint(sum(len(c) for c in tensor)))
            entry.extend(tensor)
        chunks.append(_key(1, _BYTES) + _varint(sum(len(c) for c in entry)))
        chunks.extend(entry)
    return b"".join(chunks)


def encode_pushed(step_id: int, items) -> bytes:
    """A SendTensorsRequest of step `step_id` carrying `items` (as `encode`)."""
    return encode(items) + _key(2, _VARINT) + _varint(step_id)


def decode_pushed(data: bytes) -> tuple[int, list]:
    """(step id, items) of a SendTensorsRequest; InvalidArgumentError if malformed."""
    try:
        step_ids = [v for f, v in _Reader(memoryview(data)).fields() if f == 2]
    except ValueError as e:
        raise errors.InvalidArgumentError(None, None, f"Malformed SendTensors message: "
                                          f"{e}") from None
    if len(step_ids) != 1 or not isinstance(step_ids[0], int):
        raise errors.InvalidArgumentError(None, None, "Malformed SendTensors message: "
                                          "no step id")
    return step_ids[0], decode(data)


class _Reader:
    """Fields of one encoded message, from a memoryview."""

    def __init__(self, data: memoryview):
        self.data, self.pos = data, 0

    def varint(self) -> int:
        shift = result = 0
        while True:
            if self.pos >= len(self.data):
                raise ValueError("truncated varint")
            byte = self.data[self.pos]
            self.pos += 1
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result
            shift += 7

    def fields(self):
        """(field number, value): an int for varints, a memoryview for bytes."""
        while self.pos < len(self.data):
            key = self.varint()
            field, wire_type = key >> 3, key & 7
            if wire_type == _VARINT:
                yield field, self.varint()
            elif wire_type == _BYTES:
                size = self.varint()
                start, self.pos = self.pos, self.pos + size
                if self.pos > len(self.data):
                    raise ValueError("truncated field")
                yield field, self.data[start:self.pos]
            else:
                raise ValueError(f"unexpected wire type {wire_type}")


def decode(data: bytes) -> list:
    """(rendezvous key, value or None, is_dead) of each tensor of a RecvTensorsResponse.

    Raises:
      InvalidArgumentError: for a malformed message or tensor.
    """
    try:
        out = []
        for field, entry in _Reader(memoryview(data)).fields():
            if field != 1:
                continue
            key, tensor, is_dead = "", None, False
            for sub, value in _Reader(entry).fields():
                if sub == 1:
                    key = bytes(value).decode()
                elif sub == 2:
                    tensor = value
                elif sub == 3:
                    is_dead = bool(value)
            out.append((key, None if is_dead else _array(tensor, key), is_dead))
        return out
    except (ValueError, TypeError, UnicodeDecodeError, DecodeError) as e:
        raise errors.InvalidArgumentError(None, None, f"Malformed RecvTensors message: "
                                          f"{e}") from None


def _array(tensor, key: str):
    """The array of an encoded TensorProto, its content copied once."""
    what = f"Tensor {key}"
    if tensor is None:
        raise ValueError(f"{key} has no tensor")
    dtype, dims, content, other = 0, [], None, False
    for field, value in _Reader(tensor).fields():
        if field == 1:
            dtype = value
        elif field == 2:
            dims = [size for f, dim in _Reader(value).fields() if f == 2
                    for g, size in _Reader(dim).fields() if g == 1]
        elif field == 4:
            content = value
        else:
            other = True
    if content is None or other:   # strings, or values in typed fields
        return wire.ndarray(tensor_pb2.TensorProto.FromString(bytes(tensor)), what)
    wire.check_dims(dims, what)
    try:
        np_dtype = np.dtype(_dtypes.numpy_dtype(_dtypes.as_dtype(dtype)))
    except (TypeError, ValueError, KeyError) as e:
        raise errors.InvalidArgumentError(None, None, f"{what}: {e}") from None
    if len(content) != int(np.prod(dims, dtype=np.int64)) * np_dtype.itemsize:
        raise ValueError(f"{what}: {len(content)} bytes of content for shape {dims}")
    # One copy, into an array of its own (writable, native byte order).
    return np.frombuffer(content, np_dtype.newbyteorder("<")).astype(np_dtype).reshape(dims)
