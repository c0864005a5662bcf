"""Kernels of Roll, BroadcastTo and BroadcastArgs (ops/array_rearrange_ops.py).

Roll and a real BroadcastTo return new arrays; BroadcastTo to the input's own shape forwards
the input, as TensorFlow does, so it is registered `returns_view`. Checks and messages are
TensorFlow's (roll_op.cc, broadcast_to_op.cc, bcast_ops.cc).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel
from tensorweave.ops.array_rearrange_ops import broadcast_shape_of


@kernel("Roll")
def _roll(ctx, x, shift, axis):
    rank = np.ndim(x)
    if rank < 1:
        raise invalid_argument("input must be 1-D or higher")
    for what, value in (("shift", shift), ("axis", axis)):
        if np.ndim(value) > 1:
            raise invalid_argument(f"{what} must be a scalar or a 1-D vector. Found: "
                                   f"{dims_text(np.shape(value))}")
    if np.shape(shift) != np.shape(axis):
        raise invalid_argument("shift and axis must have the same size")
    axes = []
    for a in np.ravel(axis).tolist():
        a = a + rank if a < 0 else a
        if not 0 <= a < rank:
            raise invalid_argument(f"axis {a} is out of range")
        axes.append(a)
    return ctx.xp.roll(x, np.ravel(shift).tolist(), axes)


@kernel("BroadcastTo", returns_view=True)
def _broadcast_to(ctx, x, shape):
    if np.ndim(shape) != 1:
        raise invalid_argument(f"shape must be a vector of {{int32,int64}}, got shape "
                               f"{dims_text(np.shape(shape))}")
    dims = shape.tolist()
    for d in dims:
        if d < 0:
            raise invalid_argument(f"Dimension {d} must be >= 0")
    in_shape = np.shape(x)
    if tuple(dims) == in_shape:
        return x
    if len(in_shape) > len(dims):
        raise invalid_argument(f"Rank of input ({len(in_shape)}) must be no greater than rank of "
                               f"output shape ({len(dims)}).")
    out = broadcast_shape_of(in_shape, dims)
    if out is None:
        raise invalid_argument(f"Incompatible shapes: {dims_text(in_shape)} vs. {dims_text(dims)}")
    if out != dims:  # e.g. [0] -> [1]: compatible shapes, but the result would be [0]
        raise invalid_argument(f"Unable to broadcast tensor of shape {dims_text(in_shape)} to "
                               f"tensor of shape {dims_text(dims)}")
    return ctx.xp.broadcast_to(x, dims).copy()


@kernel("BroadcastArgs")
def _broadcast_args(ctx, s0, s1):
    for i, s in enumerate((s0, s1)):
        if np.ndim(s) != 1:
            raise invalid_argument(f"In[{i}] must be a vector.{dims_text(np.shape(s))}")
    a, b = s0.tolist(), s1.tolist()
    out = broadcast_shape_of(a, b)
    if out is None:
        raise invalid_argument(f"Incompatible shapes: {dims_text(a)} vs. {dims_text(b)}")
    return np.asarray(out, dtype=s0.dtype)
