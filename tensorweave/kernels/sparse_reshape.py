"""SparseReorder, SparseReshape, SparseFillEmptyRows(+Grad): index arithmetic on COO triples.

Reordering is a stable lexicographic sort of the index rows; reshaping goes through the linear
(row-major) position of each entry, so it keeps the entries' order; filling empty rows places
each row's entries (in input order) after the rows before it and a default entry in each empty
row, and records where each input entry went (`reverse_index_map`) for the gradient.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel


def row_major_order(indices: np.ndarray) -> np.ndarray:
    """The stable permutation that sorts index rows lexicographically (row-major order)."""
    if indices.shape[1] == 0:
        return np.arange(len(indices))
    return np.lexsort(indices.T[::-1])


@kernel("SparseReorder")
def _sparse_reorder(ctx, input_indices, input_values, input_shape):
    order = row_major_order(np.asarray(input_indices))
    return input_indices[order], input_values[order]


def _resolve_shape(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """`new` with its -1 filled in; TF's checks and messages (reshape_util.cc)."""
    out = new.copy()
    unknown = -1
    for d, size in enumerate(new.tolist()):   # a shape vector: a handful of entries
        if size == -1:
            if unknown != -1:
                raise invalid_argument(f"only one output dimension may be -1, not both {unknown} "
                                       f"and {d}")
            unknown = d
            out[d] = 1
        elif size < 0:
            raise invalid_argument(f"size {d} must be non-negative, not {size}")
    dense_size = int(np.prod(old))
    product = int(np.prod(out))
    if unknown != -1:
        if product <= 0:
            raise invalid_argument("reshape cannot infer the missing input size for an empty "
                                   "tensor unless all specified input sizes are non-zero")
        missing = dense_size // product
        if missing * product != dense_size:
            raise invalid_argument(f"Input to reshape is a SparseTensor with {dense_size} dense "
                                   "values, but the requested shape requires a multiple of "
                                   f"{product}. input_shape={dims_text(old)} "
                                   f"output_shape={dims_text(out)}")
        out[unknown] = missing
    if int(np.prod(out)) != dense_size:
        raise invalid_argument(f"Input to reshape is a tensor with {dense_size} dense values, but "
                               f"the requested shape has {int(np.prod(out))}. input_shape="
                               f"{dims_text(old)} output_shape={dims_text(out)}")
    return out


@kernel("SparseReshape")
def _sparse_reshape(ctx, input_indices, input_shape, new_shape):
    old = np.asarray(input_shape, np.int64)
    new = _resolve_shape(old, np.asarray(new_shape, np.int64))
    indices = np.asarray(input_indices, np.int64)
    if indices.shape[1] != len(old):
        raise invalid_argument(f"Input tensor rank must match input indices shape: rank {len(old)} "
                               f"vs indices {dims_text(indices.shape)}")
    if len(indices) == 0:
        return np.zeros((0, len(new)), np.int64), new
    linear = np.ravel_multi_index(tuple(indices.T), tuple(old)) if len(old) else \
        np.zeros(len(indices), np.int64)
    out = np.stack(np.unravel_index(linear, tuple(new)), axis=1) if len(new) else \
        np.zeros((len(indices), 0), np.int64)
    return out.astype(np.int64), new


@kernel("SparseFillEmptyRows")
def _sparse_fill_empty_rows(ctx, indices, values, dense_shape, default_value):
    indices = np.asarray(indices, np.int64)
    if np.ndim(default_value) != 0:
        raise invalid_argument("default_value must be a scalar, saw: "
                               f"{list(np.shape(default_value))}")
    if len(dense_shape) == 0:
        raise invalid_argument("dense_shape must be a vector of rank >= 1")
    rows_total = int(dense_shape[0])
    n = len(indices)
    rows = indices[:, 0] if n else np.zeros(0, np.int64)
    bad = (rows < 0) | (rows >= rows_total)
    if bad.any():
        i = int(np.argmax(bad))
        raise invalid_argument(f"indices({i}, 0) is invalid: {rows[i]} >= {rows_total}")
    counts = np.bincount(rows, minlength=rows_total)
    empty = counts == 0
    row_start = np.concatenate([[0], np.cumsum(np.maximum(counts, 1))])[:rows_total]
    first_entry = np.concatenate([[0], np.cumsum(counts)])[:rows_total]
    order = np.argsort(rows, kind="stable")
    reverse = np.empty(n, np.int64)
    sorted_rows = rows[order]
    reverse[order] = row_start[sorted_rows] + np.arange(n) - first_entry[sorted_rows]
    total = n + int(empty.sum())
    out_indices = np.zeros((total, indices.shape[1]), np.int64)
    out_values = np.empty(total, dtype=np.asarray(values).dtype)
    out_indices[reverse] = indices
    out_values[reverse] = values
    empty_rows = np.flatnonzero(empty)
    out_indices[row_start[empty_rows], 0] = empty_rows
    out_values[row_start[empty_rows]] = default_value
    return out_indices, out_values, empty, reverse


@kernel("SparseFillEmptyRowsGrad")
def _sparse_fill_empty_rows_grad(ctx, reverse_index_map, grad_values):
    """d_values[i] = grad[reverse[i]]; the default gets the gradient of the filled entries."""
    reverse = np.asarray(reverse_index_map)
    bad = (reverse < 0) | (reverse >= len(grad_values))
    if bad.any():
        i = int(np.argmax(bad))
        raise invalid_argument(f"Elements in reverse index must be in [0, {len(grad_values)}) but "
                               f"got {reverse[i]}")
    d_values = grad_values[reverse]
    d_default = grad_values.sum(dtype=grad_values.dtype) - d_values.sum(dtype=grad_values.dtype)
    return d_values, np.asarray(d_default, dtype=grad_values.dtype)
