"""Kernel of LowerBound and UpperBound (ops/sort_ops.py, tf.searchsorted).

TensorFlow answers each value with C++'s std::lower_bound / std::upper_bound on its row. The
kernel runs that same binary search for all values at once: every step halves each value's
remaining range with one vectorized gather and comparison, so results agree with TensorFlow
even where `<` is not an order (NaN) or a row is not sorted, where np.searchsorted differs.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.kernels.registry import kernel


def binary_search(rows: np.ndarray, values: np.ndarray, upper: bool) -> np.ndarray:
    """Per value of `values` [b, m], std::lower_bound (or upper_bound) in its row of `rows`
    [b, n], as int64 positions in [0, n]."""
    n = rows.shape[1]
    first = np.zeros(values.shape, np.int64)
    length = np.full(values.shape, n, np.int64)
    row = np.arange(rows.shape[0])[:, None]
    for _ in range(n.bit_length()):  # each step leaves at most half of the range
        half = length >> 1
        middle = first + half
        probe = rows[row, np.minimum(middle, n - 1)]
        # lower_bound: go right while *middle < value; upper_bound: while !(value < *middle).
        right = ~(values < probe) if upper else probe < values
        right &= length > 0
        first = np.where(right, middle + 1, first)
        length = np.where(right, length - half - 1, half)
    return first


@kernel(("LowerBound", "UpperBound"), dtypes=_dtypes.REAL_NUMERIC)
class BoundKernel:
    """The side (lower or upper) and the output dtype, fixed per node."""

    def __init__(self, ctx):
        self.upper = ctx.op_type == "UpperBound"
        self.out_type = ctx.attrs["out_type"].as_numpy_dtype

    def compute(self, ctx, sorted_inputs, values):
        if np.shape(sorted_inputs)[0] != np.shape(values)[0]:
            raise errors.InvalidArgumentError(None, None,
                                              "Leading dim_size of both tensors must match.")
        return binary_search(sorted_inputs, values, self.upper).astype(self.out_type)
