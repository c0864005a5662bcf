"""Graph ⇄ GraphDef: the only protobuf boundary of the front end.

Typed attrs (DType, TensorShape, ndarray, lists) become AttrValues with TensorFlow's encoding
on export; on import each NodeDef's attrs are decoded by its OpDef's attr kinds and the node is
rebuilt through `create_op`, so imported graphs get the same checks and shapes as built ones.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.protos import (
    attr_value_pb2,
    graph_pb2,
    node_def_pb2,
    tensor_pb2,
    tensor_shape_pb2,
    versions_pb2,
)

# GraphDef versions: the producer of the GraphDefs we write, the oldest consumer they need, and
# the oldest producer whose GraphDefs we import (any: import_graph_def reads every version).
PRODUCER_VERSION = 1286
MIN_CONSUMER_VERSION = 0
MIN_PRODUCER_VERSION = 0


def versions_def() -> versions_pb2.VersionDef:
    return versions_pb2.VersionDef(producer=PRODUCER_VERSION,
                                   min_consumer=MIN_CONSUMER_VERSION)


# --- tensors -------------------------------------------------------------------------------
def shape_to_proto(shape: _ts.TensorShape) -> tensor_shape_pb2.TensorShapeProto:
    proto = tensor_shape_pb2.TensorShapeProto()
    if shape.ndims is None:
        proto.unknown_rank = True
    else:
        for d in shape.as_list():
            proto.dim.add(size=-1 if d is None else d)
    return proto


def shape_from_proto(proto) -> _ts.TensorShape:
    if proto.unknown_rank:
        return _ts.unknown_shape()
    return _ts.TensorShape([None if d.size < 0 else d.size for d in proto.dim])


def ndarray_to_tensor_proto(arr: np.ndarray) -> tensor_pb2.TensorProto:
    """TensorProto with tensor_content (numbers) or string_val (strings), like TF writes."""
    arr = np.asarray(arr)
    dtype = _dtypes.from_numpy(arr.dtype)
    proto = tensor_pb2.TensorProto(dtype=dtype.as_datatype_enum)
    proto.tensor_shape.CopyFrom(shape_to_proto(_ts.TensorShape(arr.shape)))
    if dtype == _dtypes.string:
        proto.string_val.extend(v if isinstance(v, bytes) else str(v).encode()
                                for v in arr.ravel())
    else:
        proto.tensor_content = np.ascontiguousarray(arr, arr.dtype.newbyteorder("<")).tobytes()
    return proto


_VAL_FIELDS = {
    _dtypes.float32: "float_val", _dtypes.float64: "double_val", _dtypes.int32: "int_val",
    _dtypes.int16: "int_val", _dtypes.int8: "int_val", _dtypes.uint8: "int_val",
    _dtypes.uint16: "int_val", _dtypes.int64: "int64_val", _dtypes.bool: "bool_val",
    _dtypes.uint32: "uint32_val", _dtypes.uint64: "uint64_val", _dtypes.complex64: "scomplex_val",
    _dtypes.complex128: "dcomplex_val",
}


def tensor_proto_to_ndarray(proto) -> np.ndarray:
    """The ndarray a TensorProto holds (tensor_content or typed values, a single value filled)."""
    dtype = _dtypes.as_dtype(proto.dtype)
    shape = tuple(d.size for d in proto.tensor_shape.dim)
    count = int(np.prod(shape)) if shape else 1
    if dtype == _dtypes.string:
        values = list(proto.string_val)
        out = np.empty(count, dtype=object)
        if values:
            out[:] = values if len(values) == count else [values[-1]] * count
        else:
            out[:] = [b""] * count
        return out.reshape(shape)
    np_dtype = np.dtype(_dtypes.numpy_dtype(dtype))
    if proto.tensor_content:
        storage = np_dtype if dtype != _dtypes.bfloat16 else np.dtype(np.uint16)
        # astype copies: the array is writable and owns its memory (one copy of the bytes).
        arr = np.frombuffer(proto.tensor_content, storage.newbyteorder("<")).astype(storage)
        if dtype == _dtypes.bfloat16:
            arr = (arr.astype(np.uint32) << 16).view(np.float32)
        return arr.reshape(shape)
    if dtype == _dtypes.float16:
        values = np.array(proto.half_val, np.uint16).view(np.float16)
    elif dtype == _dtypes.bfloat16:
        values = (np.array(proto.half_val, np.uint32) << 16).view(np.float32)
    elif dtype in (_dtypes.complex64, _dtypes.complex128):
        raw = np.array(getattr(proto, _VAL_FIELDS[dtype]), np.float64)
        values = raw[0::2] + 1j * raw[1::2]
    else:
        values = np.array(getattr(proto, _VAL_FIELDS[dtype]))
    values = values.astype(np_dtype)
    if values.size == count:
        return values.reshape(shape)
    if values.size == 0:
        return np.zeros(shape, np_dtype)
    out = np.empty(count, np_dtype)
    out[:values.size] = values
    out[values.size:] = values[-1]
    return out.reshape(shape)


# --- attrs ---------------------------------------------------------------------------------
def attr_to_proto(value, kind: str | None) -> attr_value_pb2.AttrValue:
    """Encodes a typed attr value; `kind` is the OpDef kind, or None to infer it."""
    a = attr_value_pb2.AttrValue()
    kind = kind or infer_attr_kind(value)
    if kind == "type":
        a.type = _dtypes.as_dtype(value).as_datatype_enum
    elif kind == "int":
        a.i = int(value)
    elif kind == "float":
        a.f = float(value)
    elif kind == "bool":
        a.b = bool(value)
    elif kind == "string":
        a.s = value if isinstance(value, bytes) else str(value).encode()
    elif kind == "shape":
        a.shape.CopyFrom(shape_to_proto(_ts.as_shape(value) if value is not None
                                        else _ts.unknown_shape()))
    elif kind == "tensor":
        a.tensor.CopyFrom(ndarray_to_tensor_proto(value))
    elif kind == "func":
        a.func.name = value if isinstance(value, str) else value.name
    elif kind.startswith("list("):
        _list_to_proto(a.list, value, kind[5:-1])
    else:
        raise TypeError(f"Cannot encode attr of kind {kind!r}: {value!r}")
    return a


def _list_to_proto(lst, values, inner: str) -> None:
    for v in values:
        if inner == "type":
            lst.type.append(_dtypes.as_dtype(v).as_datatype_enum)
        elif inner == "int":
            lst.i.append(int(v))
        elif inner == "float":
            lst.f.append(float(v))
        elif inner == "bool":
            lst.b.append(bool(v))
        elif inner == "string":
            lst.s.append(v if isinstance(v, bytes) else str(v).encode())
        elif inner == "shape":
            lst.shape.append(shape_to_proto(_ts.as_shape(v)))
        else:
            raise TypeError(f"Cannot encode list attr of {inner!r}")


def infer_attr_kind(value) -> str:
    """The attr kind (OpDef spelling: "int", "list(type)", ...) of an untyped (private) attr's
    value, NumPy scalars included; an empty list counts as list(string)."""
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, np.integer)):
        return "int"
    if isinstance(value, (float, np.floating)):
        return "float"
    if isinstance(value, (str, bytes)):
        return "string"
    if isinstance(value, _dtypes.DType):
        return "type"
    if isinstance(value, _ts.TensorShape):
        return "shape"
    if isinstance(value, np.ndarray):
        return "tensor"
    if isinstance(value, (list, tuple)):
        inner = infer_attr_kind(value[0]) if value else "string"
        return f"list({inner})"
    raise TypeError(f"Cannot infer the attr kind of {value!r}")


def attr_from_proto(a, kind: str | None):
    """Decodes an AttrValue into our typed value (by the OpDef kind, or by its oneof)."""
    field = a.WhichOneof("value")
    if kind is None:
        kind = {"type": "type", "i": "int", "f": "float", "b": "bool", "s": "string",
                "shape": "shape", "tensor": "tensor", "func": "func", "list": None}.get(field)
        if kind is None:
            return _list_from_proto(a.list, None)
    if kind == "type":
        return _dtypes.as_dtype(a.type)
    if kind == "int":
        return a.i
    if kind == "float":
        return a.f
    if kind == "bool":
        return a.b
    if kind == "string":
        return a.s.decode("utf-8", errors="surrogateescape")
    if kind == "shape":
        return shape_from_proto(a.shape)
    if kind == "tensor":
        return tensor_proto_to_ndarray(a.tensor)
    if kind == "func":
        return a.func.name
    return _list_from_proto(a.list, kind[5:-1])


def _list_from_proto(lst, inner):
    if inner is None:
        for name in ("s", "i", "f", "b", "type", "shape"):
            if len(getattr(lst, name)):
                inner = {"s": "string", "i": "int", "f": "float", "b": "bool",
                         "type": "type", "shape": "shape"}[name]
                break
        else:
            return []
    if inner == "type":
        return [_dtypes.as_dtype(t) for t in lst.type]
    if inner == "int":
        return list(lst.i)
    if inner == "float":
        return list(lst.f)
    if inner == "bool":
        return list(lst.b)
    if inner == "string":
        return [s.decode("utf-8", errors="surrogateescape") for s in lst.s]
    if inner == "shape":
        return [shape_from_proto(s) for s in lst.shape]
    raise TypeError(f"Cannot decode list attr of {inner!r}")


# --- nodes and graphs ----------------------------------------------------------------------
def node_def_of(op) -> node_def_pb2.NodeDef:
    """The NodeDef of an Operation (private attrs other than _class are left out)."""
    node = node_def_pb2.NodeDef(name=op.name, op=op.type, device=op.device)
    node.input.extend(t._as_node_def_input() for t in op.inputs)
    node.input.extend(f"^{c.name}" for c in op.control_inputs)
    specs = op.op_def.attrs
    for key, value in op.attrs.items():
        if key.startswith("_") and key != "_class":
            continue
        if value is None and key in specs and specs[key].kind == "shape":
            value = _ts.unknown_shape()
        if value is None:
            continue
        spec = specs.get(key)
        node.attr[key].CopyFrom(attr_to_proto(value, spec.kind if spec else None))
    return node


def graph_to_graph_def(graph, from_version=None, add_shapes: bool = False):
    """The GraphDef of `graph` (ops added after `from_version` only, if given)."""
    gd = graph_pb2.GraphDef()
    gd.versions.CopyFrom(versions_def())
    for op in graph.get_operations():
        if from_version is not None and op._id <= from_version:
            continue
        node = gd.node.add()
        node.CopyFrom(node_def_of(op))
        if add_shapes:
            node.attr["_output_shapes"].CopyFrom(
                attr_to_proto([t.shape for t in op.outputs], "list(shape)"))
    return gd


def write_graph(graph_or_graph_def, logdir: str, name: str, as_text: bool = True) -> str:
    """Writes a graph's GraphDef to `logdir/name` (text or binary) atomically; returns the path.

    TF1's tf.train.write_graph; like TF's, it also writes any other proto (a MetaGraphDef).
    """
    import os

    from google.protobuf import text_format

    from tensorweave.platform.atomic_file import write_atomically
    graph_def = graph_or_graph_def
    if hasattr(graph_def, "as_graph_def"):
        graph_def = graph_or_graph_def.as_graph_def()
    if logdir:
        os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    data = text_format.MessageToString(graph_def).encode() if as_text else \
        graph_def.SerializeToString()
    write_atomically(path, data)
    return path
