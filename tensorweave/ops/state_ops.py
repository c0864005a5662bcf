"""Stateful variable ops: the variable node, assignment and initialization checks.

A TF1 variable is a `VariableV2` node whose ref output is the variable's storage (a
`VariableRef` in the device's resource manager, so each session has its own values); `Assign`,
`AssignAdd` and `AssignSub` update it and return the ref; reading it as a value is an `Identity`.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op

__all__ = ["assign", "assign_add", "assign_sub", "count_up_to", "is_variable_initialized"]


def _variable_shape(ctx):
    return ctx.attrs["shape"]


VariableV2 = define_op(
    "VariableV2", outputs=["ref: Ref(dtype)"],
    attrs=[Attr("shape", "shape"), TypeAttr("dtype"), Attr("container", "string", ""),
           Attr("shared_name", "string", "")],
    shape_fn=_variable_shape, is_stateful=True, not_differentiable=True)


def variable_op_v2(shape, dtype, name="Variable", container="", shared_name=""):
    """Adds a VariableV2 node; its ref output is the variable's storage."""
    return apply_op(VariableV2, [], {"shape": _ts.as_shape(shape), "dtype": dtype,
                                     "container": container, "shared_name": shared_name},
                    name=name)


def _assign_shape(ctx):
    ref, value = ctx.input_shape(0), ctx.input_shape(1)
    if not ctx.attrs["validate_shape"]:
        return value
    try:
        return ref.merge_with(value)
    except ValueError:
        raise ValueError(f"Shapes must be equal rank, and compatible, but are {ref} and "
                         f"{value}") from None


def _update_shape(ctx):
    ref, value = ctx.input_shape(0), ctx.input_shape(1)
    try:
        return ref.merge_with(value)
    except ValueError:
        raise ValueError(f"Shapes must be equal rank, and compatible, but are {ref} and "
                         f"{value}") from None


Assign = define_op(
    "Assign", inputs=["ref: Ref(T)", "value: T"], outputs=["output_ref: Ref(T)"],
    attrs=[TypeAttr("T"), Attr("validate_shape", "bool", True),
           Attr("use_locking", "bool", True)],
    shape_fn=_assign_shape, is_stateful=True)

_UPDATE_ATTRS = [TypeAttr("T", _dtypes.NUMERIC), Attr("use_locking", "bool", False)]
AssignAdd = define_op("AssignAdd", inputs=["ref: Ref(T)", "value: T"],
                      outputs=["output_ref: Ref(T)"], attrs=_UPDATE_ATTRS,
                      shape_fn=_update_shape, is_stateful=True)
AssignSub = define_op("AssignSub", inputs=["ref: Ref(T)", "value: T"],
                      outputs=["output_ref: Ref(T)"], attrs=_UPDATE_ATTRS,
                      shape_fn=_update_shape, is_stateful=True)

CountUpTo = define_op(
    "CountUpTo", inputs=["ref: Ref(T)"], outputs=["output: T"],
    attrs=[TypeAttr("T", (_dtypes.int32, _dtypes.int64)), Attr("limit", "int")],
    shape_fn=lambda ctx: ctx.inputs[0]._shape, is_stateful=True, not_differentiable=True)

IsVariableInitialized = define_op(
    "IsVariableInitialized", inputs=["ref: Ref(dtype)"], outputs=["is_initialized: bool"],
    attrs=[TypeAttr("dtype")], shape_fn=lambda ctx: _ts.TensorShape([]), is_stateful=True,
    not_differentiable=True)


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    """Assigns `value` to the variable `ref` and returns `ref` after the assignment.

    Args:
      ref: a Variable (or its ref tensor).
      value: the new value; its shape must match unless `validate_shape` is False.
      validate_shape: if False, the variable takes `value`'s shape.
      use_locking: whether the update is protected by a lock.
      name: the op name.
    """
    attrs = {}
    if validate_shape is not None:
        attrs["validate_shape"] = validate_shape
    if use_locking is not None:
        attrs["use_locking"] = use_locking
    return apply_op(Assign, [ref, value], attrs, name=name or "Assign")


def assign_add(ref, value, use_locking=None, name=None):
    """Adds `value` to the variable `ref` and returns `ref` after the update."""
    attrs = {"use_locking": use_locking} if use_locking is not None else {}
    return apply_op(AssignAdd, [ref, value], attrs, name=name or "AssignAdd")


def assign_sub(ref, value, use_locking=None, name=None):
    """Subtracts `value` from the variable `ref` and returns `ref` after the update."""
    attrs = {"use_locking": use_locking} if use_locking is not None else {}
    return apply_op(AssignSub, [ref, value], attrs, name=name or "AssignSub")


def is_variable_initialized(variable):
    """A scalar bool tensor: whether `variable` has been initialized in this session."""
    return apply_op(IsVariableInitialized, [variable], name="IsVariableInitialized")


def count_up_to(ref, limit, name=None):
    """Increments the int32/int64 variable `ref` until it reaches `limit`.

    Args:
      ref: an int32 or int64 variable (scalar).
      limit: once `ref` equals it, the op raises OutOfRangeError instead.
      name: a name for the operation (default "CountUpTo").

    Returns:
      The value of `ref` before the increment.
    """
    return apply_op(CountUpTo, [ref], {"limit": limit}, name=name or "CountUpTo")
