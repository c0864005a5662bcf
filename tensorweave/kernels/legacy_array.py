"""Kernels of ops/legacy_array_ops.py, the replaced TF 1.x array and state ops.

Reverse runs ReverseV2's with the True dims as axes; Variable and PlaceholderV2 are VariableV2's
and Placeholder's registrations; TileGrad, Copy, DeepCopy and Empty are their own (no newer op
computes them).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.array import reverse_axes
from tensorweave.kernels.legacy_reuse import reuse_kernels
from tensorweave.kernels.registry import kernel, register_pure

reuse_kernels("Variable", "VariableV2", "state")
reuse_kernels("PlaceholderV2", "Placeholder", "constant")


def _reverse_v1(x, dims):
    """ReverseV2 over the dimensions whose flag is set."""
    dims = np.asarray(dims)
    if dims.ndim != 1:
        raise invalid_argument(f"'dims' must be 1-dimension, not {dims.ndim}")
    if dims.shape[0] != np.ndim(x):
        raise invalid_argument(f"'dims' must have the same number of values as 'input' has "
                               f"dimensions. 'input' has {np.ndim(x)}'dims' has "
                               f"{dims.shape[0]} values")
    return reverse_axes(x, np.flatnonzero(dims).astype(np.int32))


register_pure("Reverse", _reverse_v1, returns_view=True)


def _tile_grad(x, multiples):
    """Sums the tiles: dimension i splits into [m_i, d_i // m_i] (a remainder, as in TF's
    kernel, is left out) and the m_i axis is summed."""
    x, multiples = np.asarray(x), np.asarray(multiples)
    if multiples.shape != (x.ndim,):
        raise invalid_argument(f"Expected multiples argument to be a vector of length "
                               f"{x.ndim} but got length {multiples.size}")
    sizes = [d // int(m) if m else 0 for d, m in zip(x.shape, multiples)]
    whole = x[tuple(slice(0, s * int(m)) for s, m in zip(sizes, multiples))]
    split = [n for m, s in zip(multiples, sizes) for n in (int(m), s)]
    return np.sum(whole.reshape(split), axis=tuple(range(0, 2 * x.ndim, 2)), dtype=x.dtype)


register_pure("TileGrad", _tile_grad)
register_pure("Copy", lambda x: np.array(x, copy=True))
register_pure("DeepCopy", lambda x: np.array(x, copy=True))


@kernel("Empty")
class EmptyKernel:
    """A zero-filled tensor (empty strings for string): TF leaves it uninitialized unless
    `init`, so zeros are one valid result and a deterministic one."""

    def __init__(self, ctx):
        self.dtype = ctx.attrs["dtype"]

    def compute(self, ctx, shape):
        shape = np.asarray(shape)
        if shape.ndim != 1:
            raise invalid_argument(f"shape must be a vector of int32, got shape "
                                   f"{dims_text(shape.shape)}")
        dims = [int(d) for d in shape]
        for d in dims:
            if d < 0:
                raise invalid_argument(f"Dimension {d} must be >= 0")
        if self.dtype == _dtypes.string:
            return np.full(dims, b"", dtype=object)
        return np.zeros(dims, self.dtype.as_numpy_dtype)
