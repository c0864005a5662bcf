"""Kernels of the counting ops: DenseBincount, UniqueWithCounts, ListDiff, HistogramFixedWidth.

Run-time checks and their messages are TensorFlow's CPU kernels'. Dtype support too: ListDiff
has no bool or complex kernel, UniqueWithCounts no complex one.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.array_index import UniqueKernel
from tensorweave.kernels.registry import kernel

_REAL_OR_STRING = _dtypes.REAL_NUMERIC | {_dtypes.string}


@kernel("DenseBincount")
class DenseBincountKernel:
    """out[..., v] = sum of the weights (or count, or 1 with binary_output) of the elements of
    value v < size; a matrix input counts each row separately."""

    def __init__(self, ctx):
        self.binary = ctx.attrs["binary_output"]
        self.dtype = ctx.output_dtypes[0].as_numpy_dtype

    def compute(self, ctx, arr, size, weights):
        arr, weights = np.asarray(arr), np.asarray(weights)
        if np.ndim(size) != 0:
            raise invalid_argument(f"Shape must be rank 0 but is rank {np.ndim(size)}")
        if weights.shape != arr.shape and weights.size != 0:
            raise invalid_argument("`weights` must be the same shape as `arr` or a length-0 "
                                   "`Tensor`, in which case it acts as all weights equal to 1. "
                                   f"Received {dims_text(weights.shape)}")
        size = int(size)
        if size < 0:
            raise invalid_argument(f"size ({size}) must be non-negative")
        if arr.ndim > 2:
            raise invalid_argument(f"Shape must be at most rank 2 but is rank {arr.ndim}")
        if arr.size and arr.min() < 0:
            if arr.ndim < 2:
                raise invalid_argument("Input arr must be non-negative!")
            raise invalid_argument("Input 'in' must be non-negative! Negative input value found: "
                                   f"{arr.ravel()[np.argmax(arr.ravel() < 0)]}")
        values = arr if arr.ndim == 2 else arr.reshape(1, -1)
        rows = values.shape[0]
        counted = values < size
        # Row r's value v lands in bin r * size + v of the flattened result.
        bins = (values + np.arange(rows)[:, None] * size)[counted]
        out = np.zeros(rows * size, self.dtype)
        if self.binary:
            out[bins] = 1
        elif weights.size:
            np.add.at(out, bins, weights.reshape(values.shape)[counted])
        else:
            out += np.bincount(bins, minlength=rows * size).astype(self.dtype, copy=False)
        return out.reshape((rows, size) if arr.ndim == 2 else (size,))


@kernel("UniqueWithCounts", dtypes=_dtypes.REAL_NUMERIC | {_dtypes.string, _dtypes.bool})
class UniqueWithCountsKernel(UniqueKernel):
    """Unique's (y, idx), and how many elements of x equal each entry of y."""

    def compute(self, ctx, x):
        y, idx = super().compute(ctx, x)
        return y, idx, np.bincount(idx, minlength=len(y)).astype(self.idx_dtype, copy=False)


@kernel("ListDiff", dtypes=_REAL_OR_STRING)
class ListDiffKernel:
    """The entries of x not in y (NaN is in no list), and their positions in x."""

    def __init__(self, ctx):
        self.idx_dtype = ctx.output_dtypes[1].as_numpy_dtype

    def compute(self, ctx, x, y):
        for what, v in (("x", x), ("y", y)):
            if np.ndim(v) != 1:
                raise invalid_argument(f"{what} should be a 1D vector.")
        keep = np.flatnonzero(~np.isin(x, y))
        return x[keep], keep.astype(self.idx_dtype)


def _number(v) -> str:
    """A value as TensorFlow's error messages print it (C++ stream: 6 significant digits)."""
    return str(int(v)) if np.issubdtype(np.asarray(v).dtype, np.integer) else f"{v:g}"


@kernel("HistogramFixedWidth")
class HistogramFixedWidthKernel:
    """Bin i counts the values in [lo + i w, lo + (i + 1) w), w = (hi - lo) / nbins; values
    below lo go to the first bin, values at or above hi (and +inf) to the last."""

    def __init__(self, ctx):
        self.dtype = ctx.output_dtypes[0].as_numpy_dtype

    def compute(self, ctx, values, value_range, nbins):
        if np.ndim(value_range) != 1:
            raise invalid_argument("value_range should be a vector.")
        if np.size(value_range) != 2:
            raise invalid_argument("value_range should be a vector of 2 elements.")
        if np.ndim(nbins) != 0:
            raise invalid_argument("nbins should be a scalar.")
        lo, hi = value_range
        if not lo < hi:
            raise invalid_argument("value_range should satisfy value_range[0] < value_range[1], "
                                   f"but got '[{_number(lo)}, {_number(hi)}]'")
        nbins = int(nbins)
        if nbins <= 0:
            raise invalid_argument(f"nbins should be a positive number, but got '{nbins}'")
        values = np.asarray(values)
        if values.dtype.kind == "f" and np.isnan(values).any():
            raise invalid_argument("Histogram values must not contain NaN")
        # As TensorFlow: the offset in the values' dtype, the division in float64.
        step = float(hi - lo) / nbins
        offsets = (np.maximum(values, lo) - lo).astype(np.float64).ravel()
        index = np.minimum(offsets / step, nbins - 1).astype(np.intp)
        return np.bincount(index, minlength=nbins).astype(self.dtype, copy=False)
