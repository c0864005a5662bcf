"""Kernels of ops/legacy_array_ops.py, the replaced TF 1.x array and state ops.

Reverse runs ReverseV2's with the True dims as axes, UniqueV2 and UniqueWithCountsV2 Unique's for a
vector (and their own slice comparison along an axis); Variable and PlaceholderV2 are VariableV2's
and Placeholder's registrations; MatrixDiagV2, MatrixDiagPartV2 and MatrixSetDiagV2 run the V3
kernels with align LEFT_LEFT; TileGrad, Copy, DeepCopy and Empty are their own (no newer op
computes them).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels import constant, state  # noqa: F401 - registered first
from tensorweave.kernels.array import reverse_axes
from tensorweave.kernels.array_index import UniqueKernel
from tensorweave.kernels.array_matrix import (
    DIAG_TYPES,
    MatrixDiagKernel,
    MatrixDiagPartKernel,
    MatrixSetDiagKernel,
)
from tensorweave.kernels.legacy_reuse import newer_kernel
from tensorweave.kernels.registry import kernel, register_as, register_pure
from tensorweave.ops.legacy_array_ops import V2_ALIGN

register_as("Variable", "VariableV2")
register_as("PlaceholderV2", "Placeholder")


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


def _unique_axis(x, axis: np.ndarray) -> int | None:
    """The axis whose slices UniqueV2 compares (None: x is a vector, compared by value), with
    TF's checks and messages."""
    if axis.ndim != 1:
        raise invalid_argument("axis expects a 1D vector.")
    if axis.size > 1:
        raise invalid_argument("axis does not support input tensors larger than 1 elements")
    if axis.size == 0:
        if np.ndim(x) != 1:
            raise invalid_argument("unique expects a 1D vector.")
        return None
    a = int(axis[0])
    a = a + np.ndim(x) if a < 0 else a
    if not 0 <= a < np.ndim(x):
        raise invalid_argument(f"axis has to be between [0, {np.ndim(x)})")
    return None if np.ndim(x) == 1 else a


@kernel(("UniqueV2", "UniqueWithCountsV2"))
class UniqueV2Kernel:
    """Unique's kernel for a vector; otherwise the distinct slices along `axis` in order of
    first occurrence, compared by value (NaN equals nothing, as TF's hash map compares), with
    each slice's position among them, and for UniqueWithCountsV2 their counts."""

    def __init__(self, ctx):
        self.flat = UniqueKernel(ctx)
        self.idx_dtype = ctx.output_dtypes[1].as_numpy_dtype
        self.counts = ctx.op_type == "UniqueWithCountsV2"

    def compute(self, ctx, x, axis):
        a = _unique_axis(x, np.asarray(axis))
        if a is None:
            y, idx = self.flat.compute(ctx, x)
        else:
            slices = np.moveaxis(x, a, 0)
            rows = slices.reshape(x.shape[a], int(np.prod(slices.shape[1:]))).tolist()
            seen: dict = {}
            idx = np.array([seen.setdefault(tuple(r), len(seen)) for r in rows],
                           dtype=self.idx_dtype)
            # ids count up in order of first occurrence: each id's first position, in id order
            y = np.take(x, np.unique(idx, return_index=True)[1], axis=a)
        if not self.counts:
            return y, idx
        size = y.shape[0 if a is None else a]
        return y, idx, np.bincount(idx, minlength=size).astype(self.idx_dtype)


def _diag_v2_kernel(op_type: str, v3_kernel: type) -> None:
    """Registers for `op_type` a kernel that runs `v3_kernel` with V2's fixed alignment."""
    class DiagV2Kernel:
        def __init__(self, ctx):
            self.v3 = newer_kernel(v3_kernel, ctx, op_type.replace("V2", "V3"), align=V2_ALIGN)

        def compute(self, ctx, *inputs):
            return self.v3.compute(ctx, *inputs)

    DiagV2Kernel.__doc__ = f"{v3_kernel.__name__} with align {V2_ALIGN}, as {op_type} runs."
    kernel(op_type, dtypes=DIAG_TYPES)(DiagV2Kernel)


_diag_v2_kernel("MatrixDiagV2", MatrixDiagKernel)
_diag_v2_kernel("MatrixDiagPartV2", MatrixDiagPartKernel)
_diag_v2_kernel("MatrixSetDiagV2", MatrixSetDiagKernel)
