"""Kernels of the decoding ops: DecodeRaw, DecodeCSV, DecodeJSONExample, StringToNumber,
(de)serialized tensors.

Errors use TensorFlow's messages (they name the field, record or string).
"""
from __future__ import annotations

import re

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels.registry import kernel

# TF's DataTypeString spelling where it differs from the dtype's Python name.
_TF_NAMES = {_dtypes.float32: "float", _dtypes.float64: "double", _dtypes.float16: "half"}
_INT = re.compile(rb"\s*[+-]?\d+\s*\Z")
_HEX_FLOAT = re.compile(rb"\s*[+-]?0[xX][0-9a-fA-F.]+([pP][+-]?\d+)?\s*\Z")
_INT_RANGES = {_dtypes.int32: (-2**31, 2**31 - 1), _dtypes.int64: (-2**63, 2**63 - 1),
               _dtypes.uint32: (0, 2**32 - 1), _dtypes.uint64: (0, 2**64 - 1)}


def data_type_string(dtype) -> str:
    """`dtype` as TensorFlow's DataTypeString spells it in messages: "float", "double", "int32"."""
    return _TF_NAMES.get(dtype, dtype.name)


def _text(value: bytes) -> str:
    return value.decode("utf-8", "backslashreplace")


def parse_number(text: bytes, dtype):
    """`text` as a Python number of `dtype` (strtod/strtol rules: spaces, hex floats, inf,
    nan), or None if it is not one."""
    if b"_" in text:   # Python accepts 1_000; C's parsers do not
        return None
    if dtype in _INT_RANGES:
        if not _INT.match(text):
            return None
        value = int(text)
        low, high = _INT_RANGES[dtype]
        return value if low <= value <= high else None
    try:
        return float(text)
    except ValueError:
        if not _HEX_FLOAT.match(text):
            return None
        try:
            return float.fromhex(text.decode("ascii").strip())
        except ValueError:
            return None


@kernel("DecodeJSONExample")
def _decode_json_example(ctx, json_examples):
    from google.protobuf import json_format

    from tensorweave.protos import example_pb2
    out = np.empty(np.shape(json_examples), dtype=object)
    for index, text in np.ndenumerate(json_examples):
        try:
            example = json_format.Parse(text, example_pb2.Example())
        except json_format.ParseError as e:
            raise invalid_argument(f"Error while parsing JSON: {e}") from None
        out[index] = example.SerializeToString()
    return out


@kernel("DecodeRaw")
class DecodeRawKernel:
    """Every string's bytes reinterpreted as a vector of `out_type`; one frombuffer call."""

    def __init__(self, ctx):
        self.dtype = ctx.attrs["out_type"]
        self.size = self.dtype.size
        order = "<" if ctx.attrs["little_endian"] else ">"
        if self.dtype == _dtypes.bfloat16:   # stored as float32: the 2 bytes are its top half
            self.raw = np.dtype(f"{order}u2")
        else:
            self.raw = np.dtype(self.dtype.as_numpy_dtype).newbyteorder(order)

    def compute(self, ctx, data):
        strings = np.ravel(data)
        lengths = {len(s) for s in strings}
        width = len(strings[0]) if len(strings) else 0
        if len(lengths) > 1:
            i = next(k for k, s in enumerate(strings) if len(s) != width)
            raise invalid_argument(f"DecodeRaw requires input strings to all be the same size, but "
                                   f"element {i} has size {width} != {len(strings[i])}")
        if width % self.size:
            raise invalid_argument(f"Input to DecodeRaw has length {width} that is not a multiple "
                                   f"of {self.size}, the size of {data_type_string(self.dtype)}")
        values = np.frombuffer(b"".join(strings), dtype=self.raw)
        if self.dtype == _dtypes.bfloat16:
            values = (values.astype(np.uint32) << 16).view(np.float32)
        out = values.astype(self.dtype.as_numpy_dtype)   # native byte order, owned
        return out.reshape(np.shape(data) + (width // self.size,))


@kernel("StringToNumber")
class StringToNumberKernel:
    """Each string parsed as a number of `out_type`."""

    def __init__(self, ctx):
        self.dtype = ctx.attrs["out_type"]
        self.np_dtype = self.dtype.as_numpy_dtype

    def compute(self, ctx, strings):
        flat = np.ravel(strings)
        values = []
        for s in flat:
            value = parse_number(s, self.dtype)
            if value is None:
                raise invalid_argument("StringToNumberOp could not correctly convert string: "
                                       f"{_text(s)}")
            values.append(value)
        with np.errstate(over="ignore"):   # like strtof, a huge float becomes inf
            return np.array(values, dtype=self.np_dtype).reshape(np.shape(strings))


@kernel("DecodeCSV")
class DecodeCSVKernel:
    """CSV lines to columns: fields split (with RFC 4180 quoting), selected, defaulted and
    converted; one array per column."""

    def __init__(self, ctx):
        delim = ctx.attrs["field_delim"]
        delim = delim.encode() if isinstance(delim, str) else delim
        if len(delim) != 1:
            raise invalid_argument("field_delim should be only 1 char")
        self.delim = delim
        self.quoting = ctx.attrs["use_quote_delim"]
        na = ctx.attrs["na_value"]
        self.na = na.encode() if isinstance(na, str) else na
        self.select = ctx.attrs["select_cols"] or None
        self.dtypes = ctx.attrs["OUT_TYPE"]

    def compute(self, ctx, records, *defaults):
        n_cols = len(self.dtypes)
        defaults = [np.ravel(d) for d in defaults]
        for i, d in enumerate(defaults):
            if len(d) > 1:
                raise invalid_argument(f"There should only be 1 default per field but field {i} "
                                       f"has {len(d)}")
        columns = [[] for _ in range(n_cols)]
        for r, record in enumerate(np.ravel(records)):
            fields = self._fields(record, r)
            if self.select is not None:
                fields = [fields[c] for c in self.select if c < len(fields)]
            if len(fields) != n_cols:
                raise invalid_argument(f"Expect {n_cols} fields but have {len(fields)} in record "
                                       f"{r}")
            for f, (field, dtype) in enumerate(zip(fields, self.dtypes)):
                columns[f].append(self._value(field, dtype, defaults[f], f, r))
        shape = np.shape(records)
        out = []
        for values, dtype in zip(columns, self.dtypes):
            array = np.empty(len(values), dtype=object) if dtype == _dtypes.string else None
            if array is not None:
                array[:] = values
            else:
                with np.errstate(over="ignore"):
                    array = np.array(values, dtype=dtype.as_numpy_dtype)
            out.append(array.reshape(shape))
        return out[0] if n_cols == 1 else tuple(out)

    def _value(self, field: bytes, dtype, default, f: int, r: int):
        if field == b"" or field == self.na:
            if not len(default):
                raise invalid_argument(f"Field {f} is required but missing in record {r}!")
            return default[0]
        if dtype == _dtypes.string:
            return field
        value = parse_number(field, dtype)
        if value is None:
            raise invalid_argument(f"Field {f} in record {r} is not a valid "
                                   f"{data_type_string(dtype)}: {_text(field)}")
        return value

    def _fields(self, record: bytes, r: int) -> list:
        if not record:
            return []
        if not self.quoting:
            return record.split(self.delim)
        if b'"' not in record and b"\n" not in record and b"\r" not in record:
            return record.split(self.delim)
        fields, i, n = [], 0, len(record)
        while True:
            if record[i:i + 1] == b'"':   # quoted: "" is a quote, the field ends at '"<delim>'
                parts, i = [], i + 1
                while True:
                    j = record.find(b'"', i)
                    if j < 0:
                        raise invalid_argument("Quoted field has to end with quote followed by "
                                               f"delim or end in record {r}")
                    parts.append(record[i:j])
                    if record[j + 1:j + 2] == b'"':
                        parts.append(b'"')
                        i = j + 2
                        continue
                    i = j + 1
                    break
                if i < n and record[i:i + 1] != self.delim:
                    raise invalid_argument("Quote inside a string has to be escaped by another "
                                           "quote")
                fields.append(b"".join(parts))
            else:
                j = record.find(self.delim, i)
                field = record[i:] if j < 0 else record[i:j]
                if b'"' in field or b"\n" in field or b"\r" in field:
                    raise invalid_argument("Unquoted fields cannot have quotes/CRLFs inside")
                fields.append(field)
                i = n if j < 0 else j
            if i >= n:
                return fields
            i += 1   # past the delimiter
            if i == n:   # a trailing delimiter ends with one empty field
                fields.append(b"")
                return fields


@kernel("SerializeTensor")
def _serialize_tensor_kernel(ctx, tensor):
    from tensorweave.framework.tensor_util import make_tensor_proto
    proto = make_tensor_proto(tensor, dtype=ctx.input_dtypes[0].base_dtype)
    result = np.empty((), dtype=object)
    result[()] = proto.SerializeToString()
    return result


@kernel("ParseTensor")
class ParseTensorKernel:
    """A serialized TensorProto back to an array, checking its dtype against `out_type`."""

    def __init__(self, ctx):
        self.dtype = ctx.attrs["out_type"]

    def compute(self, ctx, serialized):
        from tensorweave.framework.tensor_util import make_ndarray
        from tensorweave.protos.tensor_pb2 import TensorProto
        if np.ndim(serialized) != 0:
            raise invalid_argument(f"Expected `serialized` to be a scalar, got shape: "
                                   f"{list(np.shape(serialized))}")
        proto = TensorProto()
        try:
            proto.ParseFromString(np.asarray(serialized, dtype=object).item())
        except Exception:   # protobuf's DecodeError, or not bytes
            raise invalid_argument("Could not parse `serialized` as TensorProto") from None
        dtype = _dtypes.as_dtype(proto.dtype)
        if dtype != self.dtype:
            raise invalid_argument("Type mismatch between parsed tensor "
                                   f"({data_type_string(dtype)}) and dtype "
                                   f"({data_type_string(self.dtype)})")
        return np.array(make_ndarray(proto), copy=True)
