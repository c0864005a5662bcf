"""UnravelIndex's kernel (ops/unravel_index_ops.py), as TensorFlow's CPU kernel.

The same checks and messages, and the same arithmetic: C's truncated `%` and `/`, so a negative
index (which TensorFlow lets through) gives the same coordinates as there.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel


def _eigen_text(values) -> str:
    """A vector as Eigen prints it in TensorFlow's messages: right-aligned, space-separated."""
    texts = [str(v) for v in values]
    width = max(map(len, texts), default=0)
    return " ".join(t.rjust(width) for t in texts)


@kernel("UnravelIndex")
class UnravelIndexKernel:
    """output[:, j] = (indices[j] % strides) / inner strides, strides[i] = prod(dims[i:])."""

    def __init__(self, ctx):
        self.dtype = ctx.attrs["Tidx"]
        self.limit = np.iinfo(self.dtype.as_numpy_dtype).max

    def compute(self, ctx, indices, dims):
        indices, dims = np.asarray(indices), np.asarray(dims)
        if indices.ndim > 1:
            raise invalid_argument("The indices can only be scalar or vector, got "
                                   f"\"{dims_text(indices.shape)}\"")
        if indices.size == 0:
            raise invalid_argument("received empty tensor indices: Tensor<type: "
                                   f"{self.dtype.name} shape: [0] values: >")
        if dims.ndim != 1:
            raise invalid_argument(f"The indices can only be 1-D, got \"{dims_text(dims.shape)}\"")
        self._check_dims(dims)
        size = int(np.prod(dims, dtype=np.int64))
        if (indices >= size).any():
            raise invalid_argument("index is out of bound as with dims")
        strides = np.cumprod(dims[::-1])[::-1]
        inner = np.append(strides[1:], 1).astype(dims.dtype)
        flat = indices.reshape(1, -1)
        remainder = np.fmod(flat, strides[:, None])    # C's %: the sign of the index
        out = np.sign(remainder) * (np.abs(remainder) // inner[:, None])   # C's / truncates
        return out.astype(dims.dtype).reshape(dims.shape + indices.shape)

    def _check_dims(self, dims) -> None:
        """Every dimension positive, and their product within the dtype. TensorFlow keeps the
        running product as a double and compares it with limit / dim in integers."""
        product = 1.0
        for i, d in enumerate(dims.tolist()):
            if d == 0:
                raise invalid_argument("Input dims cannot contain a dim of zero, but dims "
                                       f"contains zero at index {i}")
            if d < 0:
                raise invalid_argument(f"Input dims cannot be negative. Got dim = {d} at "
                                       f"index {i}")
            if not product <= float(self.limit // d):
                raise invalid_argument("Input dims product is causing integer overflow: "
                                       f"({_eigen_text(dims.tolist())})")
            product *= float(d)
