"""Assignment to a slice of a variable: `v[1:3].assign(x)` (StridedSliceAssign).

Slicing a Variable returns the StridedSlice of its value with an `assign(value, name=None)`
method, as TensorFlow attaches one: it writes `value` into that slice of the variable in place
with StridedSliceAssign (a ref variable; the result is the ref, read as the whole new value) or
ResourceStridedSliceAssign (a resource variable; the result is the value read after it). The
op is named "<slice scope>/_assign" unless named. `value` broadcasts to the slice's shape with
TensorFlow's rule (kernels/slice_assign.py); like TensorFlow's, the ops have no gradient.
"""
from __future__ import annotations

import weakref

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_slicing_ops import INDEX_TYPES, MASKS, masks_of
from tensorweave.ops.state_ops import on_variable_shapes

__all__: list[str] = []

_ATTRS = [TypeAttr("T"), TypeAttr("Index", {_dtypes.int16, *INDEX_TYPES})] + \
    [Attr(k, "int", 0) for k in MASKS]


def _ref_shape(ctx):
    return ctx.input_shape(0)


StridedSliceAssign = define_op(
    "StridedSliceAssign",
    inputs=["ref: Ref(T)", "begin: Index", "end: Index", "strides: Index", "value: T"],
    outputs=["output_ref: Ref(T)"], attrs=_ATTRS, shape_fn=_ref_shape, is_stateful=True)

ResourceStridedSliceAssign = define_op(
    "ResourceStridedSliceAssign",
    inputs=["ref: resource", "begin: Index", "end: Index", "strides: Index", "value: T"],
    attrs=_ATTRS, shape_fn=on_variable_shapes(_ref_shape), is_stateful=True)


class VariableSlice(Tensor):
    """The StridedSlice of a variable's value, whose `assign` writes that slice."""

    __slots__ = ()

    def assign(self, value, name=None):
        """Writes `value` (broadcast to the slice's shape) into this slice of the variable.

        Returns:
          A ref variable's ref after the write, or a resource variable's value read after it.

        Raises:
          InvalidArgumentError: at run time, when `value` cannot be broadcast to the slice.
        """
        variable, scope = _SOURCES[self]
        op = self.op
        masks = masks_of(op)
        begin, end, strides = op.inputs[1:]
        name = name or scope.rstrip("/") + "/_assign"
        from tensorweave.ops.variables import is_resource_variable
        if is_resource_variable(variable):
            value = convert_to_tensor(value, dtype=variable.dtype.base_dtype)
            update = apply_op(ResourceStridedSliceAssign,
                              [variable.handle, begin, end, strides, value], masks, name=name)
            return variable._read_after(update)
        return apply_op(StridedSliceAssign, [variable._ref(), begin, end, strides, value],
                        masks, name=name)


_SOURCES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # slice -> (var, scope)


def assignable(sliced: Tensor, variable, scope: str) -> VariableSlice:
    """`sliced` (a StridedSlice of `variable`'s value, made in name scope `scope`) given
    `assign`, as TensorFlow gives a sliced variable."""
    sliced.__class__ = VariableSlice
    _SOURCES[sliced] = (variable, scope)
    return sliced
