"""Kernels of StridedSliceAssign and ResourceStridedSliceAssign (ops/slice_assign_ops.py).

The slice is StridedSlice's (`strided_slice_plan`); the value is written into it in place,
under the variable's lock, after TensorFlow's broadcast: leading dimensions of size 1 beyond
the slice's rank are dropped, then the value broadcasts to the slice's shape, or the step fails
with TensorFlow's "Cannot broadcast input shape [2] into final shape [3]".
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.array_slicing import CachedIndexKernel
from tensorweave.kernels.registry import kernel
from tensorweave.ops.array_slicing_ops import MASKS, strided_slice_plan
from tensorweave.runtime.executor.values import deref


def fitted(value: np.ndarray, shape: tuple) -> np.ndarray:
    """`value` broadcast to `shape` by TensorFlow's rule for slice assignment."""
    squeezed = value
    while squeezed.ndim > len(shape) and squeezed.shape[0] == 1:
        squeezed = squeezed[0]
    try:
        return np.broadcast_to(squeezed, shape)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, None, f"Cannot broadcast input shape {dims_text(value.shape)} into final "
            f"shape {dims_text(shape)}") from None


@kernel(("StridedSliceAssign", "ResourceStridedSliceAssign"))
class StridedSliceAssignKernel(CachedIndexKernel):
    """Writes the value into the strided slice of the variable's storage."""

    def __init__(self, ctx):
        super().__init__(ctx)
        self.masks = tuple(ctx.attrs[k] for k in MASKS)

    def compute(self, ctx, ref, begin, end, strides, value):
        params = deref(ref)
        key = (params.shape, begin.tobytes(), end.tobytes(), strides.tobytes())
        index = self.index_for(
            key, lambda: strided_slice_plan(params.shape, begin, end, strides, *self.masks)[0])
        with ref.lock:
            params[index] = fitted(np.asarray(value), params[index].shape)
        return ref
