"""Kernel of EnsureShape: passes its input through when its shape matches the wanted one."""
from __future__ import annotations

from tensorweave.framework import errors
from tensorweave.framework import tensor_shape as _ts
from tensorweave.kernels.registry import kernel


@kernel("EnsureShape", returns_view=True)
class EnsureShapeKernel:
    """InvalidArgumentError, worded as TensorFlow's, when the shape is not compatible."""

    def __init__(self, ctx):
        self.shape = _ts.as_shape(ctx.attrs["shape"])

    def compute(self, ctx, x):
        if not self.shape.is_compatible_with(x.shape):
            want = "<unknown>" if self.shape.ndims is None else _dims(self.shape.as_list())
            raise errors.InvalidArgumentError(
                None, None, f"Shape of tensor {ctx.node_name} {_dims(x.shape)} is not "
                f"compatible with expected shape {want}.")
        return x


def _dims(dims) -> str:
    """A shape as TensorFlow's C++ runtime prints it: [2,?,3]."""
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"
