"""Kernels of ops/misc_array_ops.py: InvertPermutation, Bitcast, Cross, ParallelConcat,
SegmentProd / UnsortedSegmentProd and the variable updates ScatterNdAdd / Sub / Update (and
their resource twins, the storage arriving as the handle).

Error messages are TensorFlow's. Bitcast reinterprets a contiguous copy's bytes with a NumPy
view. The segment products reuse the segment kernels (kernels/segment.py) with np.multiply and
1 for empty segments; the ScatterNd updates validate indices as ScatterNd does
(kernels/array_index.py) and then change the variable's storage in place.
"""
from __future__ import annotations

import contextlib

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.array_index import index_rows
from tensorweave.kernels.registry import kernel
from tensorweave.kernels.segment import SegmentKernel, UnsortedSegmentKernel
from tensorweave.runtime.executor.values import deref


@kernel("InvertPermutation")
def _invert_permutation(ctx, x):
    if x.ndim != 1:
        raise invalid_argument("invert_permutation expects a 1D vector.")
    n = x.size
    bad = (x < 0) | (x >= n)
    if bad.any():
        raise invalid_argument(f"{x[int(np.argmax(bad))]} is not between 0 and {n}")
    _, first = np.unique(x, return_index=True)
    if first.size < n:  # the first position holding a value seen before
        repeated = np.ones(n, dtype=bool)
        repeated[first] = False
        raise invalid_argument(f"{x[int(np.argmax(repeated))]} is duplicated in the input.")
    out = np.empty(n, dtype=x.dtype)
    out[x] = np.arange(n, dtype=x.dtype)
    return out


@kernel("Bitcast")
class BitcastKernel:
    """The input's bytes viewed as `type`, the last dimension split or merged."""

    def __init__(self, ctx):
        self.src, self.dst = ctx.attrs["T"], ctx.attrs["type"]
        self.out = np.dtype(self.dst.as_numpy_dtype)

    def compute(self, ctx, x):
        in_size, out_size = self.src.size, self.dst.size
        if in_size < out_size and (x.ndim == 0 or x.shape[-1] * in_size != out_size):
            raise invalid_argument(f"Cannot bitcast from {self.src.as_datatype_enum} to "
                                   f"{self.dst.as_datatype_enum}")
        flat = np.ascontiguousarray(x).view(self.out) if x.ndim else \
            np.ascontiguousarray(x.reshape(1)).view(self.out)
        if in_size > out_size:
            return flat.reshape(x.shape + (in_size // out_size,))
        if in_size < out_size:
            return flat.reshape(x.shape[:-1])
        return flat.reshape(x.shape)


@kernel("Cross")
def _cross(ctx, a, b):
    if a.shape != b.shape:
        raise invalid_argument(f"Both inputs must be of same shape: {dims_text(a.shape)} vs. "
                               f"{dims_text(b.shape)}")
    if a.ndim == 0 or a.shape[-1] != 3:
        raise errors.FailedPreconditionError(
            None, None, "Cross-products are only defined for 3-element vectors.")
    return np.cross(a, b).astype(a.dtype, copy=False)


@kernel("ParallelConcat")
def _parallel_concat(ctx, *values):
    return np.concatenate(values, axis=0)


@kernel("SegmentProd")
class SegmentProdKernel(SegmentKernel):
    """Products over runs of equal sorted ids; ids with no rows are 1."""

    ufunc = np.multiply

    def compute(self, ctx, data, segment_ids):
        out = super().compute(ctx, data, segment_ids)
        ids = np.asarray(segment_ids)
        missing = np.ones(out.shape[0], dtype=bool)
        missing[ids] = False
        out[missing] = 1
        return out


@kernel("UnsortedSegmentProd")
class UnsortedSegmentProdKernel(UnsortedSegmentKernel):
    """Products of rows per id, in row order; empty segments are 1."""

    ufunc = np.multiply

    def __init__(self, ctx):
        super().__init__(ctx)
        self.init = 1


class _ScatterNdKernel:
    """ref[indices[i]] (op)= updates[i] over the leading K dimensions, in place."""

    ufunc = None  # None: plain assignment (ScatterNdUpdate)

    def __init__(self, ctx):
        self.locking = ctx.attrs["use_locking"]

    def compute(self, ctx, ref, indices, updates):
        params = deref(ref)
        indices, updates = np.asarray(indices), np.asarray(updates)
        depth = indices.shape[-1]
        slice_shape = params.shape[depth:]
        if depth > params.ndim or updates.shape != indices.shape[:-1] + slice_shape:
            raise invalid_argument(
                f"Must have updates.shape = indices.shape[:batch_dim] + params_shape[slice_dim:]"
                f", got updates.shape: {dims_text(updates.shape)}, indices.shape: "
                f"{dims_text(indices.shape)}, params_shape: {dims_text(params.shape)}")
        flat = index_rows(indices, params.shape, "shape")
        where = tuple(flat.T)
        rows = updates.reshape((len(flat),) + slice_shape)
        with ref.lock if self.locking else contextlib.nullcontext():
            if self.ufunc is None:
                params[where] = rows
            else:
                self.ufunc.at(params, where, rows)
        return ref


for _op_type, _ufunc in (("ScatterNdUpdate", None), ("ScatterNdAdd", np.add),
                         ("ScatterNdSub", np.subtract)):
    kernel((_op_type, "Resource" + _op_type))(
        type(f"{_op_type}Kernel", (_ScatterNdKernel,), {"ufunc": _ufunc}))
