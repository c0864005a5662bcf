"""The ops behind tf.data Optionals: a scalar variant that holds one element or nothing.

An optional travels as a scalar `variant` tensor (its run-time value is kernels/optional.py's
`OptionalValue`); `OptionalGetValue` unpacks it into the element's flat component tensors, typed
and shaped by its `output_types` / `output_shapes` attrs as `IteratorGetNext`'s are. Op types,
args and attrs are TensorFlow's. As in TensorFlow, a gradient flows through `OptionalFromValue`
and `OptionalGetValue` (each one's gradient is the other op); the rest are not differentiable.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns
from tensorweave.framework.apply_op import apply_op, create_op
from tensorweave.framework.op_def import Arg, Attr, define_op
from tensorweave.ops.data_ops import element_attrs

__all__: list[str] = []

_ELEMENT_ATTRS = [Attr("output_types", "list(type)", minimum=1),
                  Attr("output_shapes", "list(shape)", minimum=1)]


def _component_shapes(ctx):
    """The element's component shapes, as the attrs declare them."""
    return list(ctx.attrs["output_shapes"])


IteratorGetNextAsOptional = define_op(
    "IteratorGetNextAsOptional", inputs=[Arg("iterator", dtype=_dtypes.resource)],
    outputs=[Arg("optional", dtype=_dtypes.variant)], attrs=_ELEMENT_ATTRS,
    shape_fn=shape_fns.scalar, is_stateful=True, not_differentiable=True)

OptionalFromValue = define_op(
    "OptionalFromValue", inputs=[Arg("components", type_list_attr="Toutput_types")],
    outputs=[Arg("optional", dtype=_dtypes.variant)],
    attrs=[Attr("Toutput_types", "list(type)", minimum=1)], shape_fn=shape_fns.scalar)

OptionalNone = define_op(
    "OptionalNone", outputs=[Arg("optional", dtype=_dtypes.variant)],
    shape_fn=shape_fns.scalar, not_differentiable=True)

OptionalHasValue = define_op(
    "OptionalHasValue", inputs=[Arg("optional", dtype=_dtypes.variant)],
    outputs=[Arg("has_value", dtype=_dtypes.bool)], shape_fn=shape_fns.scalar,
    not_differentiable=True)

OptionalGetValue = define_op(
    "OptionalGetValue", inputs=[Arg("optional", dtype=_dtypes.variant)],
    outputs=[Arg("components", type_list_attr="output_types")], attrs=_ELEMENT_ATTRS,
    shape_fn=_component_shapes)


@OptionalFromValue.gradient
def _optional_from_value_grad(op, grad):
    """The gradient arrives as an optional of the components' gradients: unpack it."""
    return optional_get_value(grad, [t.dtype for t in op.inputs], [t.shape for t in op.inputs])


@OptionalGetValue.gradient
def _optional_get_value_grad(op, *grads):
    """The components' gradients, packed as the optional's gradient."""
    return [optional_from_value(grads)]


def iterator_get_next_as_optional(iterator, types, shapes, name=None):
    """An optional of the iterator's next element; empty after its last element."""
    return apply_op(IteratorGetNextAsOptional, [iterator], element_attrs(types, shapes),
                    name=name)


def optional_from_value(components, name=None):
    """An optional holding the flat component tensors `components`."""
    return apply_op(OptionalFromValue, [list(components)], name=name)


def optional_none(name=None):
    """An optional holding nothing."""
    return apply_op(OptionalNone, [], name=name)


def optional_has_value(optional, name=None):
    """A bool scalar: whether `optional` holds a value."""
    return apply_op(OptionalHasValue, [optional], name=name)


def optional_get_value(optional, types, shapes, name=None) -> list:
    """The component tensors `optional` holds (of these dtypes and static shapes)."""
    op = create_op(OptionalGetValue, [optional], element_attrs(types, shapes), name=name)
    return list(op.outputs)
