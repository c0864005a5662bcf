"""SparseToDense: scatter values into a default-filled array, validating indices vectorized."""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel


def check_sorted_in_bounds(indices: np.ndarray, shape: np.ndarray) -> None:
    """TF's index validation: the first index out of bounds, out of order or repeated."""
    if len(indices) == 0:
        return
    out_of_bounds = np.any((indices < 0) | (indices >= shape), axis=1)
    first_oob = int(np.argmax(out_of_bounds)) if out_of_bounds.any() else len(indices)
    linear = np.ravel_multi_index(tuple(np.clip(indices, 0, np.maximum(shape - 1, 0)).T),
                                  tuple(np.maximum(shape, 1)))
    steps = np.diff(linear)
    disorder = steps <= 0
    first_order = int(np.argmax(disorder)) + 1 if disorder.any() else len(indices)
    if first_oob <= first_order and first_oob < len(indices):
        raise invalid_argument(f"indices[{first_oob}] = {dims_text(indices[first_oob])} is out of "
                               f"bounds: need 0 <= index < {dims_text(shape)}")
    if first_order < len(indices):
        i = first_order
        if steps[i - 1] == 0:
            raise invalid_argument(f"indices[{i}] = {dims_text(indices[i])} is repeated")
        raise invalid_argument(f"indices[{i}] = {dims_text(indices[i])} is out of order. Many "
                               "sparse ops require sorted indices.\n    Use `tf.sparse.reorder` to "
                               "create a correctly ordered copy.\n\n")


@kernel("SparseToDense")
class SparseToDenseKernel:
    """dense = full(output_shape, default); dense[indices] = values."""

    def __init__(self, ctx):
        self.validate = ctx.attrs["validate_indices"]
        self.np_dtype = ctx.output_dtypes[0].as_numpy_dtype

    def compute(self, ctx, sparse_indices, output_shape, sparse_values, default_value):
        shape = np.asarray(output_shape, dtype=np.int64).reshape(-1)
        indices = np.asarray(sparse_indices, dtype=np.int64)
        if indices.ndim < 2:   # scalar or [N]: indices into a 1-D output
            indices = indices.reshape(-1, 1)
        n = indices.shape[0]
        if indices.shape[1] != len(shape):
            raise invalid_argument(f"sparse_indices should be a scalar, vector, or matrix, with "
                                   f"{len(shape)} columns to index output_shape, got shape "
                                   f"{list(np.shape(sparse_indices))}")
        if np.ndim(sparse_values) not in (0, 1) or \
                (np.ndim(sparse_values) == 1 and len(sparse_values) != n):
            raise invalid_argument("sparse_values has incorrect shape "
                                   f"{list(np.shape(sparse_values))}, should be [] or [{n}]")
        if np.ndim(default_value) != 0:
            raise invalid_argument(f"default_value should be a scalar, got shape "
                                   f"{list(np.shape(default_value))}")
        if np.any(shape < 0):
            raise invalid_argument(f"output_shape has a negative dimension: {dims_text(shape)}")
        if self.validate:
            check_sorted_in_bounds(indices, shape)
        dense = ctx.xp.full(tuple(int(d) for d in shape), default_value, dtype=self.np_dtype)
        if n:
            try:
                dense[tuple(indices.T)] = sparse_values
            except IndexError:   # only reachable with validate_indices=False
                raise invalid_argument("sparse_indices out of bounds of output_shape "
                                       f"{dims_text(shape)}") \
                    from None
        return dense
