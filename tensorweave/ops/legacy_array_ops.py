"""TF 1.x's array and state ops that newer ops replaced, kept so their GraphDefs import.

TF 1.x graphs carry Reverse (a bool per dimension, before ReverseV2's axis list), TileGrad (Tile's
gradient before GraphDef version 3), Variable and PlaceholderV2 (old names of VariableV2 and
Placeholder), UniqueV2 and UniqueWithCountsV2 (tf.unique with an axis input), and the debugger's and
in-place helpers Copy, DeepCopy and Empty, and TF 2.0-2.1's MatrixDiagV2, MatrixDiagPartV2 and
MatrixSetDiagV2 (V3 without the align attr: a band's shorter diagonals always aligned left). Each
has TensorFlow 2.21's raw-op signature and its registered gradient; ops TF leaves without one stay
without one. Kernels: kernels/legacy_array.py.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.shape_fns import ShapeContext
from tensorweave.ops.array_creation_ops import zeros_like
from tensorweave.ops.array_matrix_ops import (
    MatrixDiagPartV3,
    MatrixDiagV3,
    MatrixSetDiagV3,
    matrix_diag,
    matrix_diag_part,
    matrix_set_diag,
)
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


# The alignment TF's V2 diagonal kernels use: they read no attr and keep their LEFT_LEFT default.
V2_ALIGN = "LEFT_LEFT"


def _v3_shape(v3):
    """V3's shape function run on a V2 node as if it carried align = LEFT_LEFT."""
    def shape_fn(ctx):
        return v3.shape_fn(ShapeContext(ctx.inputs, {**ctx.attrs, "align": V2_ALIGN}, v3.name,
                                        ctx.blind))
    return shape_fn


MatrixDiagV2 = define_op(
    "MatrixDiagV2",
    inputs=["diagonal: T", "k: int32", "num_rows: int32", "num_cols: int32",
            "padding_value: T"],
    outputs=["output: T"], attrs=[TypeAttr("T")], shape_fn=_v3_shape(MatrixDiagV3),
    doc="MatrixDiagV3 with a band's shorter diagonals aligned left (TF 2.0-2.1 graphs).")
MatrixDiagPartV2 = define_op(
    "MatrixDiagPartV2", inputs=["input: T", "k: int32", "padding_value: T"],
    outputs=["diagonal: T"], attrs=[TypeAttr("T")], shape_fn=_v3_shape(MatrixDiagPartV3),
    doc="MatrixDiagPartV3 with a band's shorter diagonals aligned left (TF 2.0-2.1 graphs).")
MatrixSetDiagV2 = define_op(
    "MatrixSetDiagV2", inputs=["input: T", "diagonal: T", "k: int32"], outputs=["output: T"],
    attrs=[TypeAttr("T")], shape_fn=_v3_shape(MatrixSetDiagV3),
    doc="MatrixSetDiagV3 with a band's shorter diagonals aligned left (TF 2.0-2.1 graphs).")

# TF's V2 gradients below build the V3 ops through the wrappers' default align, RIGHT_LEFT, not
# the forward op's LEFT_LEFT: they agree on single diagonals and subdiagonals but, like TF's,
# misplace a band's shorter superdiagonals. They follow TF so imported graphs train as there.


@MatrixDiagV2.gradient
def _matrix_diag_v2_grad(op, grad):
    """TF's _MatrixDiagV2Grad: the diagonals read back out of the gradient."""
    return [matrix_diag_part(grad, k=op.inputs[1]), None, None, None, None]


@MatrixDiagPartV2.gradient
def _matrix_diag_part_v2_grad(op, grad):
    """TF's _MatrixDiagPartV2Grad: MatrixDiag of the gradient when the matrix size is static,
    else the gradient written into zeros shaped like the input."""
    x, k = op.inputs[:2]
    matrix = x.shape[-2:]
    if matrix.is_fully_defined():
        rows, cols = matrix.as_list()
        return [matrix_diag(grad, k=k, num_rows=rows, num_cols=cols), None, None]
    return [matrix_set_diag(zeros_like(x), grad, k=k), None, None]


@MatrixSetDiagV2.gradient
def _matrix_set_diag_v2_grad(op, grad):
    """TF's _MatrixSetDiagGradV2: the input gets the gradient with the diagonals zeroed, the
    diagonals the gradient's diagonals."""
    diagonal, k = op.inputs[1:]
    return [matrix_set_diag(grad, zeros_like(diagonal), k=k), matrix_diag_part(grad, k=k), None]
