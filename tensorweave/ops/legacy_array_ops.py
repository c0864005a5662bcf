"""TF 1.x's array and state ops that newer ops replaced, kept so their GraphDefs import.

TF 1.x graphs carry Reverse (a bool per dimension, before ReverseV2's axis list), TileGrad (Tile's
gradient before GraphDef version 3), Variable and PlaceholderV2 (old names of VariableV2 and
Placeholder), UniqueV2 and UniqueWithCountsV2 (tf.unique with an axis input), and the debugger's and
in-place helpers Copy, DeepCopy and Empty. Each has TensorFlow 2.21's raw-op signature and its
registered gradient; ops TF leaves without one stay without one. Kernels: kernels/legacy_array.py.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.ops.constant_op import Placeholder
from tensorweave.ops.state_ops import VariableV2

__all__: list[str] = []


def _reverse_shape(ctx):
    """The tensor's shape; dims must be a vector with one entry per dimension."""
    shape, dims = ctx.input_shape(0), ctx.input_shape(1).with_rank(1)
    if shape.ndims is not None and dims[0].value is not None and dims[0].value != shape.ndims:
        raise ValueError(f"Dimensions must be equal, but are {dims[0].value} and {shape.ndims}")
    return shape


Reverse = define_op(
    "Reverse", inputs=["tensor: T", "dims: bool"], outputs=["output: T"],
    attrs=[TypeAttr("T")], shape_fn=_reverse_shape,
    doc="TF 1.x's tf.reverse op: reverses the dimensions whose `dims` entry is True.")


@Reverse.gradient
def _reverse_grad(op, grad):
    """Reversing is its own inverse: reverse the gradient along the same dimensions."""
    return [apply_op(Reverse, [grad, op.inputs[1]]), None]


def _tile_grad_shape(ctx):
    """The input's shape divided by the multiples, where both are known."""
    shape = ctx.input_shape(0)
    ctx.input_shape(1).with_rank(1)
    multiples = ctx.static_value(1)
    if shape.ndims is None:
        return _ts.unknown_shape()
    if multiples is None:
        return _ts.unknown_shape(shape.ndims)
    return _ts.TensorShape([None if d is None else d // int(m)
                            for d, m in zip(shape.as_list(), multiples)])


TileGrad = define_op(
    "TileGrad", inputs=["input: T", "multiples: int32"], outputs=["output: T"],
    attrs=[TypeAttr("T")], shape_fn=_tile_grad_shape,
    doc="Tile's gradient before GraphDef version 3: the sum of the input's tiles.")

Variable = define_op(
    "Variable", outputs=["ref: Ref(dtype)"],
    attrs=[Attr("shape", "shape"), TypeAttr("dtype"), Attr("container", "string", ""),
           Attr("shared_name", "string", "")],
    shape_fn=VariableV2.shape_fn, is_stateful=True, not_differentiable=True,
    doc="VariableV2's name in TF 1.0-era graphs.")
PlaceholderV2 = define_op(
    "PlaceholderV2", outputs=["output: dtype"], attrs=[TypeAttr("dtype"), Attr("shape", "shape")],
    shape_fn=Placeholder.shape_fn, is_stateful=True, not_differentiable=True,
    doc="Placeholder with a required shape attr (TF 1.0-era graphs).")

Copy = define_op(
    "Copy", inputs=["input: T"], outputs=["output: T"],
    attrs=[TypeAttr("T"), Attr("tensor_name", "string", ""),
           Attr("debug_ops_spec", "list(string)", [])],
    shape_fn=lambda ctx: ctx.input_shape(0),
    doc="The debugger's copy of a watched tensor (tfdbg graphs).")
DeepCopy = define_op(
    "DeepCopy", inputs=["x: T"], outputs=["y: T"], attrs=[TypeAttr("T")],
    shape_fn=lambda ctx: ctx.input_shape(0), is_stateful=True,
    doc="A copy of x in a new buffer (inplace_ops' deep_copy).")
Empty = define_op(
    "Empty", inputs=["shape: int32"], outputs=["output: dtype"],
    attrs=[TypeAttr("dtype"), Attr("init", "bool", False)],
    shape_fn=lambda ctx: ctx.static_shape(0), is_stateful=True,
    doc="A new tensor of the given shape (inplace_ops' empty); zero-filled here.")



def _unique_v2_shape(ctx):
    """y: x's rank, sizes unknown; idx: [x's size along the static axis], or x's shape for a
    vector and an empty axis; count: [?]. TF's checks of a static axis."""
    x = ctx.input_shape(0)
    y = _ts.unknown_shape(x.ndims)
    axis = ctx.static_value(1)
    idx = _ts.TensorShape([None])
    if axis is not None:
        axis = np.asarray(axis)
        if axis.ndim != 1:
            raise ValueError("axis expects a 1D vector.")
        if axis.size > 1:
            raise ValueError("axis does not support input tensors larger than 1 elements.")
        if axis.size == 0:
            if x.ndims not in (None, 1):
                raise ValueError("x expects a 1D vector.")
            if x.ndims == 1:
                idx = x
        elif x.ndims is not None:
            a = int(axis[0])
            if not -x.ndims <= a < x.ndims:
                raise ValueError(f"axis expects to be in the range [{-x.ndims}, {x.ndims})")
            idx = _ts.TensorShape([x.as_list()[a]])
    outputs = [y, idx]
    return outputs + [_ts.TensorShape([None])] if ctx.op_type == "UniqueWithCountsV2" else outputs


_UNIQUE_ATTRS = [TypeAttr("T"), TypeAttr("Taxis", _dtypes.INDEX, _dtypes.int64),
                 TypeAttr("out_idx", _dtypes.INDEX, _dtypes.int32)]
UniqueV2 = define_op(
    "UniqueV2", inputs=["x: T", "axis: Taxis"], outputs=["y: T", "idx: out_idx"],
    attrs=_UNIQUE_ATTRS, shape_fn=_unique_v2_shape,
    doc="Unique with an axis input: the distinct slices along axis ([] for a vector).")
UniqueWithCountsV2 = define_op(
    "UniqueWithCountsV2", inputs=["x: T", "axis: Taxis"],
    outputs=["y: T", "idx: out_idx", "count: out_idx"], attrs=_UNIQUE_ATTRS,
    shape_fn=_unique_v2_shape,
    doc="UniqueV2 with each distinct slice's number of occurrences.")
