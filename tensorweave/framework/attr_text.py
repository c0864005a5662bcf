"""How TensorFlow's messages print a node's attrs: `T=DT_FLOAT, transpose_a=false, ...`.

A shape function's error quotes the node as `{{node n}} = MatMul[<attrs>](a, b)`; the attrs are
TensorFlow's SummarizeAttrsHelper over the NodeDef, matched here byte for byte so messages can be
compared with TensorFlow's: every attr the node has (defaults included), sorted by name (byte
order, so `T` < `_class` < `alpha`), each `name=value` with the value as SummarizeAttrValue
writes it (attr_value_util.cc):

* types as their enum name (`DT_FLOAT`, `DT_INT32_REF`); bools `true`/`false`; ints in decimal;
* floats as the float32 they are stored as, `%.6g` or, when that does not read back as the same
  float, `%.9g` (tsl's FloatToBuffer): `0.001`, `1e-07`, `123456792`;
* strings quoted and C-escaped (`"a\\"b\\n"`, `"\\303\\251"`), cut to ten characters either side
  of `...` once the escaped text reaches 80 characters;
* shapes as `[2,?]`, `[]`, or `<unknown>`; functions as `name[]`;
* tensors as Tensor::DebugString: `Tensor<type: float shape: [2] values: 1.5 2>`, at most three
  values;
* lists as `[a, b]`; from 30 items on, the first five, `...`, the last five and
  `{attr_hash=N}`, N the Fingerprint64 of every item joined by ",".

Where a typed value has lost what its AttrValue said, the text follows the value: a bfloat16
tensor (held as float32) prints as `float`, and an imported private function attr (held as its
name) as a string.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.graph_io import infer_attr_kind
from tensorweave.framework.shape_text import dims_text, shape_text
from tensorweave.protos import types_pb2

__all__ = ["attr_text", "attrs_text", "summarize_value"]

_MAX_STRING = 80    # kMaxStringSummarySize
_MAX_LIST = 30      # kMaxListSummarySize
_TENSOR_VALUES = 3  # Tensor::DebugString's default num_values
_ESCAPES = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord('"'): '\\"',
            ord("'"): "\\'", ord("\\"): "\\\\"}


def attrs_text(attrs: Mapping, specs: Mapping) -> str:
    """The attrs of a node as TensorFlow lists them between its op's brackets.

    `specs` maps attr names to their OpDef `Attr`s; attrs without one (private attrs such as
    `_class`) are printed by their value's own kind.
    """
    pieces = []
    for name in sorted(attrs):
        spec = specs.get(name)
        kind = spec.kind if spec is not None else None
        value = attrs[name]
        if value is None:
            if kind != "shape":
                continue    # not set: a NodeDef would not have it (graph_io.node_def_of)
            value = _ts.unknown_shape()
        pieces.append(f"{name}={attr_text(value, kind)}")
    return ", ".join(pieces)


def attr_text(value, kind: str | None = None) -> str:
    """One attr value as SummarizeAttrValue writes it; `kind` is the OpDef kind, or None to
    infer it from the value."""
    kind = kind or infer_attr_kind(value)
    if kind.startswith("list("):
        return _list_text([attr_text(v, kind[5:-1]) for v in value])
    if kind == "type":
        return _type_name(_dtypes.as_dtype(value))
    if kind == "int":
        return str(int(value))
    if kind == "float":
        return _float_text(value)
    if kind == "bool":
        return "true" if value else "false"
    if kind == "string":
        return _string_text(_as_bytes(value))
    if kind == "shape":
        return shape_text(_ts.as_shape(value), unknown_rank="<unknown>")
    if kind == "tensor":
        return _tensor_text(np.asarray(value))
    if kind == "func":
        return f"{value if isinstance(value, str) else value.name}[]"
    raise TypeError(f"Cannot summarize attr of kind {kind!r}: {value!r}")




def _list_text(pieces: list[str]) -> str:
    if len(pieces) < _MAX_LIST:
        return "[" + ", ".join(pieces) + "]"
    # Long lists are elided; the hash of the whole list tells different ones apart.
    # Fingerprint64 (FarmHash) lives with the string-hash kernels: imported only when needed.
    from tensorweave.kernels.string_hash import hash_strings
    fingerprint = int(hash_strings([",".join(pieces).encode("utf-8")])[0])
    return "[" + ", ".join(pieces[:5] + ["..."] + pieces[-5:]) + f"]{{attr_hash={fingerprint}}}"


def _type_name(dtype: _dtypes.DType) -> str:
    return types_pb2.DataType.Name(dtype.as_datatype_enum)


def _float_text(value) -> str:
    """tsl's FloatToBuffer: the shortest of %.6g and %.9g that reads back as the same float32."""
    f = np.float32(value)
    if math.isnan(f):
        return "-nan" if math.copysign(1.0, f) < 0 else "nan"
    text = f"{float(f):.6g}"
    return text if np.float32(float(text)) == f else f"{float(f):.9g}"


def _double_text(value) -> str:
    """tsl's DoubleToBuffer: %.15g, or %.17g when that does not read back as the same double."""
    d = float(value)
    if math.isnan(d):
        return "-nan" if math.copysign(1.0, d) < 0 else "nan"
    text = f"{d:.15g}"
    return text if float(text) == d else f"{d:.17g}"


def _as_bytes(value) -> bytes:
    # Imported string attrs keep non-UTF-8 bytes as surrogates (graph_io.attr_from_proto).
    return value if isinstance(value, bytes) else str(value).encode("utf-8", "surrogateescape")


def _c_escape(data: bytes, utf8_safe: bool = False) -> str:
    """absl::CEscape (or Utf8SafeCEscape: bytes from 0x80 up pass through unescaped)."""
    out = bytearray()
    for b in data:
        if b in _ESCAPES:
            out += _ESCAPES[b].encode()
        elif (b < 0x20 or b == 0x7F) or (b >= 0x80 and not utf8_safe):
            out += f"\\{b:03o}".encode()
        else:
            out.append(b)
    return out.decode("utf-8", "replace")


def _string_text(data: bytes) -> str:
    escaped = _c_escape(data)
    if len(escaped) >= _MAX_STRING:
        escaped = escaped[:10] + "..." + escaped[-10:]
    return f'"{escaped}"'


# --- tensors: Tensor::DebugString ----------------------------------------------------------
def _tensor_text(arr: np.ndarray) -> str:
    dtype = _dtypes.from_numpy(arr.dtype)
    type_name = _type_name(dtype)[3:].lower()   # DataTypeString: DT_FLOAT -> "float"
    return (f"Tensor<type: {type_name} shape: {dims_text(arr.shape)} "
            f"values: {_tensor_values(arr, dtype)}>")


def summarize_value(arr: np.ndarray, max_values: int) -> str:
    """Tensor::SummarizeValue(max_values) of a NumPy value: `1 2 3...`, `[1 2][3...]`."""
    arr = np.asarray(arr)
    return _tensor_values(arr, _dtypes.from_numpy(arr.dtype), max_values)


def _tensor_values(arr: np.ndarray, dtype: _dtypes.DType, max_values: int = _TENSOR_VALUES
                   ) -> str:
    """Tensor::SummarizeValue: the first `max_values` values, nested in brackets by
    dimension."""
    n = arr.size
    limit = min(max_values, n)
    flat = arr.reshape(-1)[:limit]
    element = _element_text(dtype)
    if element is None:     # complex and other types TensorFlow does not print
        return " ".join("?" * limit) + ("..." if max_values < n else "")
    values = [element(v) for v in flat]
    if arr.ndim == 0:
        return " ".join(values) + ("..." if n > limit else "")
    out: list[str] = []
    _print_one_dim(0, arr.shape, limit, values, [0], out)
    return "".join(out) + ("..." if n > limit else "")


def _element_text(dtype: _dtypes.DType):
    if dtype == _dtypes.float64:
        return _double_text
    if dtype.is_floating:
        return _float_text
    if dtype == _dtypes.bool:
        return lambda v: "1" if v else "0"
    if dtype.is_integer:
        return lambda v: str(int(v))
    if dtype == _dtypes.string:
        return lambda v: _c_escape(_as_bytes(v), utf8_safe=True)
    return None


def _print_one_dim(dim: int, shape, limit: int, values: list[str], index: list[int],
                   out: list[str]) -> None:
    """TensorFlow's PrintOneDim: `[1 2 3]...`, `[[1 2]][[3...]]`; `index` counts values
    printed so far."""
    if index[0] >= limit:
        return
    if dim == len(shape) - 1:
        for i in range(shape[dim]):
            if index[0] >= limit:
                if dim != 0:
                    out.append("...")
                return
            if i > 0:
                out.append(" ")
            out.append(values[index[0]])
            index[0] += 1
        return
    for _ in range(shape[dim]):
        opened = index[0] < limit
        if opened:
            out.append("[")
        _print_one_dim(dim + 1, shape, limit, values, index, out)
        if index[0] < limit or opened:
            out.append("]")
