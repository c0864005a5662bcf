"""Variable kernels: storage lives in the device's resource manager as a VariableRef."""
from __future__ import annotations

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import kernel
from tensorweave.runtime.executor.values import VariableRef, deref


@kernel("VariableV2")
class VariableKernel:
    """Finds or creates the variable's storage once; each step outputs the ref."""

    def __init__(self, ctx):
        name = ctx.attrs["shared_name"] or ctx.node_name
        self.ref = ctx.resources.lookup_or_create(ctx.attrs["container"], name,
                                                  lambda: VariableRef(ctx.node_name))

    def compute(self, ctx):
        return self.ref


@kernel("Assign")
class AssignKernel:
    """Stores a private copy of the value (the value may be a constant or a fed array)."""

    def __init__(self, ctx):
        self.validate = ctx.attrs["validate_shape"]
        self.np_dtype = ctx.attrs["T"].as_numpy_dtype

    def compute(self, ctx, ref, value):
        value = np.array(value, dtype=self.np_dtype, copy=True)
        old = ref.value
        if self.validate and old is not None and old.shape != value.shape:
            raise errors.InvalidArgumentError(
                None, None, f"Assign requires shapes of both tensors to match. lhs shape= "
                f"{list(old.shape)} rhs shape= {list(value.shape)}")
        ref.value = value
        return ref


def _update(ref, value, sign):
    current = deref(ref)
    if current.shape != np.shape(value) and np.broadcast_shapes(current.shape,
                                                                np.shape(value)) != current.shape:
        raise errors.InvalidArgumentError(
            None, None, f"Must have the same shape: variable {list(current.shape)} vs update "
            f"{list(np.shape(value))}")
    with ref.lock:
        if sign > 0:
            np.add(current, value, out=current, casting="unsafe")
        else:
            np.subtract(current, value, out=current, casting="unsafe")
    return ref


@kernel("AssignAdd")
def _assign_add(ctx, ref, value):
    return _update(ref, value, 1)


@kernel("AssignSub")
def _assign_sub(ctx, ref, value):
    return _update(ref, value, -1)


@kernel("IsVariableInitialized")
def _is_initialized(ctx, ref):
    return np.bool_(ref.value is not None)


@kernel("CountUpTo")
def _count_up_to(ctx, ref):
    """Returns the old value and adds one under the variable's lock; OutOfRange at the limit."""
    limit = ctx.attrs["limit"]
    with ref.lock:
        current = deref(ref)
        before = current.copy()
        if before >= limit:
            raise errors.OutOfRangeError(None, None, f"Reached limit of {limit}")
        current += 1
    return before
