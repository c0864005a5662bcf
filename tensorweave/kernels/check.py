"""Kernel of EnsureShape: passes its input through when its shape matches the wanted one."""
from __future__ import annotations

from tensorweave.framework import errors
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.shape_text import dims_text, shape_text
from tensorweave.kernels.registry import kernel


@kernel("EnsureShape", returns_view=True)
class EnsureShapeKernel:
    """InvalidArgumentError, worded as TensorFlow's, when the shape is not compatible."""

    def __init__(self, ctx):
        self.shape = _ts.as_shape(ctx.attrs["shape"])

    def compute(self, ctx, x):
        if not self.shape.is_compatible_with(x.shape):
            want = shape_text(self.shape, unknown_rank="<unknown>")
            raise errors.InvalidArgumentError(
                None, None, f"Shape of tensor {ctx.node_name} {dims_text(x.shape)} is not "
                f"compatible with expected shape {want}.")
        return x

