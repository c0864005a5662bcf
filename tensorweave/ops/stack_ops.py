"""Stack ops (StackV2, StackPushV2, StackPopV2, StackCloseV2): per-step LIFO stacks of tensors.

While-loop gradients save each iteration's forward values on a stack and pop them in reverse
in the gradient loop. A stack lives in its step's resource container, like a TensorArray.
These are internal building blocks (TF exposes them only as gen_data_flow_ops).
"""
from __future__ import annotations

from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.shape_fns import unknown

__all__: list[str] = []

StackV2 = define_op(
    "StackV2", inputs=["max_size: int32"], outputs=["handle: resource"],
    attrs=[TypeAttr("elem_type"), Attr("stack_name", "string", "")],
    shape_fn=lambda ctx: _ts.TensorShape([2]), is_stateful=True, not_differentiable=True,
    doc="A stack of at most `max_size` elements (unbounded if negative).")

StackPushV2 = define_op(
    "StackPushV2", inputs=["handle: resource", "elem: T"], outputs=["output: T"],
    attrs=[TypeAttr("T"), Attr("swap_memory", "bool", False)],
    shape_fn=lambda ctx: ctx.input_shape(1), is_stateful=True, not_differentiable=True,
    doc="Pushes `elem` and outputs it.")

StackPopV2 = define_op(
    "StackPopV2", inputs=["handle: resource"], outputs=["elem: elem_type"],
    attrs=[TypeAttr("elem_type")], shape_fn=unknown, is_stateful=True,
    not_differentiable=True, doc="Pops the top element.")

StackCloseV2 = define_op(
    "StackCloseV2", inputs=["handle: resource"], shape_fn=lambda ctx: [], is_stateful=True,
    not_differentiable=True, doc="Deletes the stack.")


def stack_v2(max_size, elem_type, stack_name="", name=None):
    """A new stack's handle; `max_size` < 0 means unbounded."""
    return apply_op(StackV2, [max_size], {"elem_type": elem_type, "stack_name": stack_name},
                    name=name)


def stack_push_v2(handle, elem, swap_memory=False, name=None):
    """Pushes `elem` onto the stack and returns it (`swap_memory` is accepted; CPU only)."""
    return apply_op(StackPushV2, [handle, elem], {"swap_memory": swap_memory}, name=name)


def stack_pop_v2(handle, elem_type, name=None):
    """Pops the element on top of the stack."""
    return apply_op(StackPopV2, [handle], {"elem_type": elem_type}, name=name)


def stack_close_v2(handle, name=None):
    """Deletes the stack; returns the op."""
    return apply_op(StackCloseV2, [handle], name=name)
