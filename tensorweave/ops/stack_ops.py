"""Stacks: per-step LIFO storage of tensors (StackV2, StackPushV2, StackPopV2, StackCloseV2).

While-loop gradients save one forward value per iteration on a stack and pop them in reverse
(autodiff/while_grad.py). The handle is created by a step and lives as long as the step's
values do, like TensorFlow's per-step stack resources.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op

__all__: list[str] = []  # internal (TF's gen_data_flow_ops), not in the tf namespace


def _scalar(ctx):
    return _ts.TensorShape([])


def _elem_shape(ctx):
    return ctx.input_shape(1)


StackV2 = define_op("StackV2", ["max_size: int32"], ["handle: resource"],
                    [TypeAttr("elem_type"), Attr("stack_name", "string", default="")],
                    _scalar, is_stateful=True, not_differentiable=True,
                    doc="A new empty stack of `elem_type` (max_size < 0: unbounded).")
StackPushV2 = define_op("StackPushV2", ["handle: resource", "elem: T"], ["output: T"],
                        [TypeAttr("T"), Attr("swap_memory", "bool", default=False)],
                        _elem_shape, is_stateful=True, not_differentiable=True,
                        doc="Pushes `elem`; returns it.")
StackPopV2 = define_op("StackPopV2", ["handle: resource"], ["elem: elem_type"],
                       [TypeAttr("elem_type")], lambda ctx: _ts.unknown_shape(),
                       is_stateful=True, not_differentiable=True,
                       doc="Pops the most recently pushed element.")
StackCloseV2 = define_op("StackCloseV2", ["handle: resource"], [], is_stateful=True,
                         not_differentiable=True, doc="Releases the stack's elements.")


def new_stack(elem_type, max_size=-1, stack_name="", name=None):
    """A new stack handle (TF's gen_data_flow_ops.stack_v2)."""
    return apply_op(StackV2, [max_size], {"elem_type": _dtypes.as_dtype(elem_type),
                                          "stack_name": stack_name}, name=name)


def stack_push(handle, elem, swap_memory=False, name=None):
    return apply_op(StackPushV2, [handle, elem], {"swap_memory": swap_memory}, name=name)


def stack_pop(handle, elem_type, name=None):
    return apply_op(StackPopV2, [handle], {"elem_type": _dtypes.as_dtype(elem_type)}, name=name)


def stack_close(handle, name=None):
    return apply_op(StackCloseV2, [handle], name=name)
