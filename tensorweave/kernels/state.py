"""Variable kernels: storage lives in the device's resource manager as a VariableRef.

A reference variable's VariableV2 outputs it as a ref; a resource variable's VarHandleOp outputs
it (a ResourceVariableRef) as the DT_RESOURCE handle. The updates work on it either way, so a
resource op whose ref twin exists (AssignAddVariableOp, ResourceCountUpTo) runs the same
function; only the output differs (a resource update has none).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.array_index import gather, gather_nd
from tensorweave.kernels.registry import kernel
from tensorweave.runtime.executor.values import ResourceVariableRef, VariableRef, deref


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

    dtype_attr = "T"

    def __init__(self, ctx):
        self.validate = ctx.attrs["validate_shape"]
        self.np_dtype = ctx.attrs[self.dtype_attr].as_numpy_dtype

    def compute(self, ctx, ref, value):
        value = np.array(value, dtype=self.np_dtype, copy=True)
        old = ref.value
        if self.validate and old is not None and old.shape != value.shape:
            raise self.shape_error(old.shape, value.shape)
        ref.value = value
        return ref

    @staticmethod
    def shape_error(old, new) -> errors.InvalidArgumentError:
        return errors.InvalidArgumentError(
            None, None, f"Assign requires shapes of both tensors to match. lhs shape= "
            f"{list(old)} rhs shape= {list(new)}")


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


@kernel(("AssignAdd", "AssignAddVariableOp"))
def _assign_add(ctx, ref, value):
    return _update(ref, value, 1)


@kernel(("AssignSub", "AssignSubVariableOp"))
def _assign_sub(ctx, ref, value):
    return _update(ref, value, -1)


@kernel(("IsVariableInitialized", "VarIsInitializedOp"))
def _is_initialized(ctx, ref):
    return np.bool_(ref.value is not None)


@kernel(("CountUpTo", "ResourceCountUpTo"))
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


# --- resource variables ---------------------------------------------------------------------
@kernel("VarHandleOp")
class VarHandleKernel:
    """Finds or creates the variable's storage once (under its container and shared name, as
    VariableV2 does); each step outputs it as the handle."""

    def __init__(self, ctx):
        container = ctx.attrs["container"] or ctx.resources.DEFAULT_CONTAINER
        name = ctx.attrs["shared_name"] or ctx.node_name
        self.ref = ctx.resources.lookup_or_create(
            container, name, lambda: ResourceVariableRef(name, container))

    def compute(self, ctx):
        return self.ref


def _assigned_value(ref):
    """The resource variable's storage; FailedPrecondition, in TensorFlow's words, before
    anything is assigned to it."""
    value = ref.value
    if value is None:
        raise errors.FailedPreconditionError(
            None, None, f"Could not find variable {ref.name}. This could mean that the variable "
            "has been deleted. In TF1, it can also mean the variable is uninitialized. Debug "
            f"info: container={ref.container}, status error message="
            f"{ref.uninitialized_error().message}")
    return value


@kernel("ReadVariableOp")
def _read_variable(ctx, ref):
    """A copy of the value: what the read returns does not change with later updates."""
    return _assigned_value(ref).copy()


@kernel("ResourceGather")
class ResourceGatherKernel:
    """Rows of the variable (GatherV2's gather along axis `batch_dims`): a new array, read
    without copying the rest of the variable."""

    def __init__(self, ctx):
        self.batch_dims = ctx.attrs["batch_dims"]
        self.xp = ctx.xp

    def compute(self, ctx, ref, indices):
        value = _assigned_value(ref)
        if np.ndim(value) < 1:
            raise invalid_argument("params must be at least 1 dimensional")
        if np.ndim(value) <= self.batch_dims:
            raise invalid_argument(f"params must have at least {self.batch_dims + 1} (batch_dims "
                                   f"+ 1) dimensions but it has shape "
                                   f"{dims_text(np.shape(value))}")
        return gather(self.xp, value, indices, self.batch_dims, self.batch_dims)


@kernel("ResourceGatherNd")
def _resource_gather_nd(ctx, ref, indices):
    """GatherNd of the variable's value: a new array of the named elements or slices."""
    return gather_nd(_assigned_value(ref), indices)


@kernel("VariableShape")
def _variable_shape(ctx, ref):
    """The variable's current shape, as a vector of out_type."""
    return np.array(np.shape(_assigned_value(ref)), ctx.attrs["out_type"].as_numpy_dtype)


@kernel("AssignVariableOp")
class AssignVariableKernel(AssignKernel):
    """Stores a private copy of the value; with `validate_shape`, only of the variable's shape.
    Assign's kernel with the resource op's dtype attr and TensorFlow's message for it."""

    dtype_attr = "dtype"

    def compute(self, ctx, ref, value):
        super().compute(ctx, ref, value)   # AssignVariableOp has no outputs

    @staticmethod
    def shape_error(old, new) -> errors.InvalidArgumentError:
        return invalid_argument(f"Trying to assign to variable with tensor with wrong shape. "
                                f"Expected {dims_text(old)} got {dims_text(new)}")
