"""Slot variables: per-variable optimizer state (`w/Adam`, `w/Momentum`, ...).

A slot is created through `get_variable` under a fresh variable scope named
`<primary op name>/<optimizer name>` (made unique, so a second Adam gets `w/Adam_2`), in the
enclosing variable scope, colocated with its primary variable, not trainable, in
GLOBAL_VARIABLES: exactly TensorFlow's names, so checkpoints line up. A resource variable's
slots are resource variables (the fused updates take all of them through handles).
"""
from __future__ import annotations

import contextlib

from tensorweave.framework.scopes import colocate_with
from tensorweave.ops import variable_scope as _vs
from tensorweave.ops.sliced_variables import SaveSliceInfo
from tensorweave.ops.variables import is_resource_variable


def _primary_name(primary) -> str:
    return primary.op.name


@contextlib.contextmanager
def _no_partitioner():
    """Slots are never partitioned, whatever the enclosing scope says (as in TensorFlow)."""
    scope = _vs.get_variable_scope()
    saved = scope._partitioner
    scope._partitioner = None
    try:
        yield
    finally:
        scope._partitioner = saved


def _create_slot_var(primary, initializer, name, shape, dtype, validate_shape,
                     colocate_with_primary):
    """Reserves the unique scope name `<primary>/<name>` and makes the variable there."""
    with _vs.variable_scope(None, default_name=f"{_primary_name(primary)}/{name}",
                            auxiliary_name_scope=False) as scope:
        full_name = scope.name
    parent = _vs.get_variable_scope().name
    relative = full_name[len(parent) + 1:] if parent else full_name
    colocation = colocate_with(primary) if colocate_with_primary else contextlib.nullcontext()
    with colocation, _no_partitioner():
        slot = _vs.get_variable(relative, shape=shape, dtype=dtype, initializer=initializer,
                                trainable=False, validate_shape=validate_shape,
                                use_resource=is_resource_variable(primary))
    _slice_like_primary(slot, primary)
    return slot


def _slice_like_primary(slot, primary) -> None:
    """A part of a partitioned variable has slots that are the same parts of the full slot
    (`<full name>/<slot name>`, e.g. `v/Momentum`), so checkpoints hold the whole slot as TF's
    do; a scalar slot is not sliced, a lower-rank one takes the leading dimensions."""
    info = getattr(primary, "_save_slice_info", None)
    n = slot.shape.ndims
    if info is None or n == 0:
        return
    slot_name = slot.op.name[len(primary.op.name) + 1:]
    slot._set_save_slice_info(SaveSliceInfo(f"{info.full_name}/{slot_name}",
                                            info.full_shape[:n], info.var_offset[:n],
                                            info.var_shape[:n]))


def create_slot(primary, val, name, colocate_with_primary=True):
    """A slot for `primary` whose initial value is the Tensor `val`.

    Args:
      primary: the Variable (or Tensor) the slot belongs to.
      val: the slot's initial value.
      name: the slot's name inside the primary's scope (usually the optimizer's name).
      colocate_with_primary: place the slot with the primary variable.

    Returns:
      The slot Variable.
    """
    validate_shape = val.get_shape().is_fully_defined()
    return _create_slot_var(primary, val, name, None, val.dtype.base_dtype, validate_shape,
                            colocate_with_primary)


def create_slot_with_initializer(primary, initializer, shape, dtype, name,
                                 colocate_with_primary=True):
    """A slot for `primary` initialized by `initializer(shape, dtype)`."""
    return _create_slot_var(primary, initializer, name, shape, dtype, shape.is_fully_defined(),
                            colocate_with_primary)


def create_zeros_slot(primary, name, dtype=None, colocate_with_primary=True):
    """A slot of zeros shaped and typed like `primary` (unless `dtype` is given)."""
    from tensorweave.ops import init_ops
    from tensorweave.ops.array_creation_ops import zeros
    from tensorweave.ops.array_ops import shape as shape_of
    dtype = dtype or primary.dtype.base_dtype
    slot_shape = primary.get_shape()
    if slot_shape.is_fully_defined():
        return create_slot_with_initializer(primary, init_ops.zeros_initializer(), slot_shape,
                                            dtype, name, colocate_with_primary)
    source = getattr(primary, "initial_value", None)
    source = primary if source is None else source
    return create_slot(primary, zeros(shape_of(source), dtype=dtype), name,
                       colocate_with_primary)
