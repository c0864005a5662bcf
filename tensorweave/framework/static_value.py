"""Values known while the graph is built: what shape functions and `get_static_value` see.

Op families register, per op type, a rule that computes an output's value from its inputs'
static values (Const reads its attr, Shape reads a fully-defined shape, Pack stacks known
scalars). `static_value` applies them recursively and returns None when anything is unknown.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

# op type -> rule(op, value_index) returning an ndarray or None
_RULES: dict[str, Callable] = {}
_MAX_ELEMENTS = 1 << 16  # values this large are not worth knowing statically


def register_static_value(op_type: str):
    """Decorator registering the static-value rule of `op_type`."""
    def decorate(fn):
        _RULES[op_type] = fn
        return fn
    return decorate


def static_value(tensor) -> np.ndarray | None:
    """The value of `tensor` if the graph fixes it, else None."""
    rule = _RULES.get(tensor.op.type)
    if rule is None:
        return None
    value = rule(tensor.op, tensor.value_index)
    if value is not None and getattr(value, "size", 0) > _MAX_ELEMENTS:
        return None
    return value


def static_values(tensors) -> list | None:
    """The static values of all `tensors`, or None if any is unknown."""
    out = []
    for t in tensors:
        v = static_value(t)
        if v is None:
            return None
        out.append(v)
    return out


def static_shape_value(tensor):
    """A 1-D shape tensor as a TensorShape with unknown entries where not fixed (TF's
    ConstantPartialShape): handles constants, Shape, Pack, ConcatV2, integer Casts and
    StridedSlices of partial values."""
    from tensorweave.framework import tensor_shape as _ts
    value = static_value(tensor)
    if value is not None:
        return _ts.TensorShape([None if int(d) < 0 else int(d) for d in np.ravel(value)])
    op = tensor.op
    if op.type == "Shape":
        return op.inputs[0].shape
    if op.type == "Cast":
        # As TF: through a cast to int32/int64 the partial shape is the input's; to another
        # type only its length survives.
        before = static_shape_value(op.inputs[0])
        if before.ndims is None:
            return unknown_shape_value(tensor)
        if op._attrs["DstT"].base_dtype.name not in ("int32", "int64"):
            return _ts.unknown_shape(rank=before.ndims)
        return before
    if op.type == "StridedSlice":
        return _strided_slice_shape_value(tensor)
    if op.type == "Pack":
        dims = []
        for t in op.inputs:
            v = static_value(t)
            dims.append(None if v is None or int(v) < 0 else int(v))
        return _ts.TensorShape(dims)
    if op.type == "ConcatV2":
        result = _ts.TensorShape([])
        for t in op.inputs[:-1]:
            result = result.concatenate(static_shape_value(t))
        return result
    return unknown_shape_value(tensor)


def _strided_slice_shape_value(tensor):
    """TF's PartialStridedSliceShape: `partial_shape[begin:end:stride]` for one static
    begin/end/stride and no masks but begin/end bit 0; otherwise dims of unknown value."""
    from tensorweave.framework import tensor_shape as _ts
    op = tensor.op
    attrs = op._attrs
    spec = static_values(op.inputs[1:])
    if (spec is None or any(np.shape(v) != (1,) for v in spec)
            or attrs["begin_mask"] not in (0, 1) or attrs["end_mask"] not in (0, 1)
            or attrs["ellipsis_mask"] or attrs["new_axis_mask"] or attrs["shrink_axis_mask"]):
        return unknown_shape_value(tensor)
    source = static_shape_value(op.inputs[0])
    if source.ndims is None:
        return unknown_shape_value(tensor)
    begin = None if attrs["begin_mask"] else int(spec[0][0])
    end = None if attrs["end_mask"] else int(spec[1][0])
    return _ts.TensorShape(source.as_list()[begin:end:int(spec[2][0])])


def invalid_shape_entry(tensor) -> int | None:
    """The first entry below -1 that TF's ConstantPartialShape rejects ("Invalid value in
    tensor used for shape") when it materializes `tensor` as a shape, else None.

    As in TF, Shape and Pack are read piecewise (a negative packed scalar is an unknown dim,
    not an error) and ConcatV2 checks each piece; anything else is checked by its value.
    """
    op = tensor.op
    if op.type in ("Shape", "Pack"):
        return None
    if op.type == "ConcatV2":
        for t in op.inputs[:-1]:
            bad = invalid_shape_entry(t)
            if bad is not None:
                return bad
        return None
    value = static_value(tensor)
    if value is None:
        return None
    bad = [int(d) for d in np.ravel(value) if int(d) < -1]
    return bad[0] if bad else None


def unknown_shape_value(tensor):
    """A 1-D shape tensor of unknown value as a shape: one unknown dim per entry if its length
    is known, else an unknown shape."""
    from tensorweave.framework import tensor_shape as _ts
    length = _ts.dimension_value(tensor.shape[0]) if tensor.shape.ndims == 1 else None
    return _ts.unknown_shape(rank=length) if length is not None else _ts.unknown_shape()
