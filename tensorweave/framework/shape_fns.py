"""Reusable shape functions and the context they read.

A shape function takes a `ShapeContext` and returns the output shapes (a TensorShape for a
single-output op, else a list). It is pure, handles unknown dims and ranks, and raises
ValueError for incompatible inputs; `apply_op` adds the node, the input shapes and the input
values the function read (as TensorFlow lists them) to the message.
"""
from __future__ import annotations

from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.static_value import (
    invalid_shape_entry,
    static_shape_value,
    static_value,
    unknown_shape_value,
)

TensorShape = _ts.TensorShape


class ShapeTensorError(ValueError):
    """A shape tensor holds an entry below -1. TF raises this while materializing the input
    for the shape function, outside it, so `apply_op` adds no node text."""


class ShapeContext:
    """What a shape function may read: input shapes, attrs, statically known input values.

    It records which inputs the function read as values or as partial shapes, for the error
    text; a `blind` context hides every value, as TF's first shape-function run sees them.
    """

    __slots__ = ("inputs", "attrs", "op_type", "blind", "read_values", "read_shapes")

    def __init__(self, inputs, attrs: dict, op_type: str, blind: bool = False):
        self.inputs = inputs
        self.attrs = attrs
        self.op_type = op_type
        self.blind = blind
        self.read_values: set[int] = set()
        self.read_shapes: set[int] = set()

    def input_shape(self, i: int) -> TensorShape:
        return self.inputs[i]._shape

    @property
    def input_shapes(self) -> list[TensorShape]:
        return [t._shape for t in self.inputs]

    def attr(self, name: str):
        return self.attrs[name]

    def static_value(self, i: int):
        """The NumPy value of input i if the graph fixes it, else None."""
        self.read_values.add(i)
        return None if self.blind else static_value(self.inputs[i])

    def static_shape(self, i: int) -> TensorShape:
        """Input i (a 1-D shape tensor) as a possibly partial TensorShape."""
        self.read_shapes.add(i)
        if self.blind:
            return unknown_shape_value(self.inputs[i])
        bad = invalid_shape_entry(self.inputs[i])
        if bad is not None:
            raise ShapeTensorError(f"Invalid value in tensor used for shape: {bad}")
        return static_shape_value(self.inputs[i])


def unknown(ctx: ShapeContext):
    """Outputs of unknown shape (one per output the op makes)."""
    return _ts.unknown_shape()


def scalar(ctx: ShapeContext):
    return _ts.TensorShape([])


def unchanged(ctx: ShapeContext):
    """Output shaped like input 0 (elementwise unary ops)."""
    return ctx.inputs[0]._shape


def broadcast_shapes(a: TensorShape, b: TensorShape) -> TensorShape:
    """NumPy broadcasting of two static shapes; ValueError if they cannot broadcast."""
    if a.ndims is None or b.ndims is None:
        return _ts.unknown_shape()
    da, db = a.as_list(), b.as_list()
    if len(da) < len(db):
        da = [1] * (len(db) - len(da)) + da
    else:
        db = [1] * (len(da) - len(db)) + db
    out = []
    for x, y in zip(da, db):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None:
            out.append(y)
        elif y is None or x == y:
            out.append(x)
        else:
            raise ValueError(f"Dimensions must be equal, but are {x} and {y}")
    return TensorShape(out)


def broadcast(ctx: ShapeContext):
    """Binary elementwise ops with NumPy broadcasting."""
    return broadcast_shapes(ctx.inputs[0]._shape, ctx.inputs[1]._shape)


def merged(ctx: ShapeContext):
    """All inputs must have compatible shapes; the output is their merge (AddN)."""
    shape = _ts.unknown_shape()
    for t in ctx.inputs:
        try:
            shape = shape.merge_with(t._shape)
        except ValueError:
            raise ValueError(f"Shapes must be equal rank, and compatible, but are {shape} and "
                             f"{t._shape}") from None
    return shape


def normalize_axes(axes, rank: int, what: str = "axis") -> list[int]:
    """Axes in [-rank, rank) made non-negative; ValueError naming the bad one."""
    out = []
    for a in axes:
        a = int(a)
        if not -rank <= a < rank:
            raise ValueError(f"Invalid reduction dimension {a} for input with {rank} dimensions."
                             if what == "axis" else f"{what} {a} out of range for rank {rank}")
        out.append(a % rank)
    return out


def reduction(ctx: ShapeContext):
    """Reductions: input 0 reduced over the axes in input 1 (`keep_dims` attr)."""
    shape = ctx.inputs[0]._shape
    keep = ctx.attrs.get("keep_dims", False)
    axes = ctx.static_value(1)
    if axes is None:
        if keep and shape.ndims is not None:
            return _ts.unknown_shape(rank=shape.ndims)
        axes_shape = ctx.inputs[1]._shape
        if shape.ndims is not None and axes_shape.ndims == 0:
            return _ts.unknown_shape(rank=shape.ndims - 1)
        return _ts.unknown_shape()
    if shape.ndims is None:
        return _ts.unknown_shape()
    axes = set(normalize_axes(axes.reshape(-1), shape.ndims))
    dims = shape.as_list()
    if keep:
        return TensorShape([1 if i in axes else d for i, d in enumerate(dims)])
    return TensorShape([d for i, d in enumerate(dims) if i not in axes])
