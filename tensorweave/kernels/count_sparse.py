"""Kernels of DenseCountSparseOutput and SparseCountSparseOutput (tf.sparse.bincount).

TensorFlow's count_ops.cc, vectorized with NumPy.

Both reduce to (batch, value, weight) triples: a 1-D input is one batch, a matrix one batch per
row, a SparseTensor one batch per first index (one batch when it is 1-D). Values >= maxlength
(when maxlength >= 0) are skipped; the remaining (batch, value) pairs, sorted, are the output
indices, and their counts, weight sums or ones the output values. The last dense dimension is
maxlength if given, else max(largest counted value + 1, minlength), where an empty count has
largest value 0. Checks and their messages are TensorFlow's, in its order.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel

_INT32_MAX = 2**31 - 1


class _CountKernel:
    """Attrs parsed once, and the counting shared by both ops."""

    def __init__(self, ctx):
        self.minlength = ctx.attrs["minlength"]
        self.maxlength = ctx.attrs["maxlength"]
        self.binary = ctx.attrs["binary_output"]
        self.dtype = ctx.output_dtypes[1].as_numpy_dtype

    def count(self, batch: np.ndarray, values: np.ndarray, weights: np.ndarray | None,
              num_batches: int, is_1d: bool):
        """The (indices, values, dense_shape) of the counts of `values` per `batch`."""
        if values.size and values.min() < 0:
            raise invalid_argument("Input values must all be non-negative")
        if self.maxlength >= 0:
            kept = values < self.maxlength
            batch, values = batch[kept], values[kept]
            weights = None if weights is None else weights[kept]
        largest = int(values.max()) if values.size else 0
        size = self.maxlength if self.maxlength >= 0 else max(largest + 1, self.minlength)
        # Stable sort by (batch, value): each run is one output entry, its weights in input
        # order (TensorFlow's per-batch hash map adds them in that order too).
        order = np.lexsort((values, batch))
        batch, values = batch[order], values[order]
        starts = np.flatnonzero(np.r_[True, (batch[1:] != batch[:-1]) |
                                      (values[1:] != values[:-1])]) if values.size else \
            np.zeros(0, np.intp)
        if self.binary:
            counts = np.ones(len(starts), self.dtype)
        elif weights is not None:
            counts = np.add.reduceat(weights[order], starts, dtype=self.dtype) \
                if values.size else np.zeros(0, self.dtype)
        else:
            counts = np.diff(np.r_[starts, len(values)]).astype(self.dtype)
        columns = [values[starts]] if is_1d else [batch[starts], values[starts]]
        indices = np.stack(columns, 1).astype(np.int64).reshape(-1, len(columns))
        shape = [size] if is_1d else [num_batches, size]
        return indices, counts, np.array(shape, np.int64)


@kernel("DenseCountSparseOutput")
class DenseCountSparseOutputKernel(_CountKernel):
    """Counts of a vector, or of each row of a matrix."""

    def compute(self, ctx, values, weights):
        values, weights = np.asarray(values), np.asarray(weights)
        if values.ndim not in (1, 2):
            raise invalid_argument("Input must be a 1 or 2-dimensional tensor. Got: "
                                   f"{dims_text(values.shape)}")
        use_weights = weights.size > 0
        if use_weights and weights.shape != values.shape:
            raise invalid_argument("Weights and data must have the same shape. Weight shape: "
                                   f"{dims_text(weights.shape)}; data shape: "
                                   f"{dims_text(values.shape)}")
        if values.ndim == 2 and values.shape[0] == 0:
            raise invalid_argument("Invalid input: Shapes dimension cannot be 0.")
        rows = values.shape[0] if values.ndim == 2 else 1
        batch = np.repeat(np.arange(rows), values.size // rows)
        return self.count(batch, values.ravel(), weights.ravel() if use_weights else None,
                          rows, values.ndim == 1)


@kernel("SparseCountSparseOutput")
class SparseCountSparseOutputKernel(_CountKernel):
    """Counts of a SparseTensor's values per first index (all together when it is 1-D)."""

    def compute(self, ctx, indices, values, dense_shape, weights):
        indices, values = np.asarray(indices), np.asarray(values)
        dense_shape, weights = np.asarray(dense_shape), np.asarray(weights)
        _check_sparse(indices, values, dense_shape)
        use_weights = weights.size > 0
        if use_weights and weights.shape != values.shape:
            raise invalid_argument("Weights and values must have the same shape. Weight shape: "
                                   f"{dims_text(weights.shape)}; values shape: "
                                   f"{dims_text(values.shape)}")
        is_1d = dense_shape.size == 1
        num_batches = 1 if is_1d else int(dense_shape[0])
        if not 0 < num_batches < _INT32_MAX:
            raise invalid_argument(f"Cannot allocate {num_batches} batches, is the dense shape "
                                   "too wide?")
        batch = np.zeros(len(values), np.int64) if is_1d else indices[:, 0]
        return self.count(batch, values, weights if use_weights else None, num_batches, is_1d)


def _check_sparse(indices: np.ndarray, values: np.ndarray, dense_shape: np.ndarray) -> None:
    """TensorFlow's SparseCount input checks: ranks, sizes, and every index inside the shape."""
    if indices.ndim != 2:
        raise invalid_argument("Input indices must be a 2-dimensional tensor. Got: "
                               f"{dims_text(indices.shape)}")
    if values.ndim != 1:
        raise invalid_argument(f"Input values must be a vector. Got: {dims_text(values.shape)}")
    if dense_shape.ndim != 1:
        raise invalid_argument("Input shape must be a vector. Got: "
                               f"{dims_text(dense_shape.shape)}")
    if values.shape[0] != indices.shape[0]:
        raise invalid_argument("Number of values must match first dimension of indices.Got "
                               f"{values.shape[0]} values, indices shape: "
                               f"{dims_text(indices.shape)}")
    if dense_shape.shape[0] != indices.shape[1]:
        raise invalid_argument("Number of dimensions must match second dimension of indices."
                               f"Got {dense_shape.shape[0]} dimensions, indices shape: "
                               f"{dims_text(indices.shape)}")
    if dense_shape.size == 0:
        raise invalid_argument("The shape argument requires at least one element.")
    bad = (indices < 0) | (indices >= dense_shape)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        shown = " ".join(str(d) for d in dense_shape)
        raise invalid_argument(
            f"Invalid index value at {i}: dimension {j} has value {indices[i, j]} which is not "
            f"in [0, {dense_shape[j]}) (as given by dense shape Tensor<type: int64 shape: "
            f"[{dense_shape.size}] values: {shown}>")
