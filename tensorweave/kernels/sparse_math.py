"""SparseAdd(+Grad), SparseTensorDenseAdd, SparseTensorDenseMatMul and SparseMatMul kernels.

Entries are matched through their linear (row-major) position in the dense shape: adding two
SparseTensors sorts the concatenated positions and sums runs of equal ones, so the result is in
row-major order (TensorFlow merges two sorted inputs and gives the same result for them).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel
from tensorweave.kernels.segment import scatter_rows


def linear_positions(indices: np.ndarray, dims) -> np.ndarray:
    """Each index row's row-major position in a dense tensor of shape `dims`."""
    if indices.shape[1] == 0:
        return np.zeros(len(indices), np.int64)
    return np.ravel_multi_index(tuple(np.asarray(indices, np.int64).T),
                                tuple(int(d) for d in dims))


def _bounding_dims(*index_sets: np.ndarray) -> list[int]:
    """A shape containing every index row (for matching indices without a dense shape)."""
    rows = np.concatenate(index_sets, axis=0)
    return (rows.max(axis=0) + 1).tolist() if len(rows) else [1] * rows.shape[1]


@kernel("SparseAdd")
def _sparse_add(ctx, a_indices, a_values, a_shape, b_indices, b_values, b_shape, thresh):
    if len(a_shape) != len(b_shape) or np.any(a_shape != b_shape):
        raise invalid_argument(f"Operands' shapes do not match: got {dims_text(a_shape)} and "
                               f"{dims_text(b_shape)}")
    if np.ndim(thresh) != 0:
        raise invalid_argument(f"The magnitude threshold must be a scalar: got shape "
                               f"{dims_text(np.shape(thresh))}")
    positions = np.concatenate([linear_positions(a_indices, a_shape),
                                linear_positions(b_indices, b_shape)])
    indices = np.concatenate([a_indices, b_indices]).reshape(-1, len(a_shape))
    values = np.concatenate([a_values, b_values])
    order = np.argsort(positions, kind="stable")
    positions, indices, values = positions[order], indices[order], values[order]
    starts = np.flatnonzero(np.concatenate([[True], positions[1:] != positions[:-1]])) \
        if len(positions) else np.zeros(0, np.int64)
    sums = np.add.reduceat(values, starts) if len(starts) else values[:0]
    counts = np.diff(np.append(starts, len(positions)))
    # The threshold applies only where both operands have an entry (as in TensorFlow).
    keep = (counts == 1) | (np.abs(sums) >= thresh)
    return indices[starts[keep]], sums[keep].astype(values.dtype), \
        np.asarray(a_shape, np.int64)


def find_rows(rows: np.ndarray, table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each index row of `rows`, its position in `table` and whether it is there at all
    (rows with a negative coordinate are not)."""
    valid = np.all(rows >= 0, axis=1)
    rows = np.where(valid[:, None], rows, 0)
    dims = _bounding_dims(rows, table)
    table_pos = linear_positions(table, dims)
    order = np.argsort(table_pos, kind="stable")
    sorted_pos = table_pos[order]
    pos = linear_positions(rows, dims)
    slot = np.minimum(np.searchsorted(sorted_pos, pos), max(len(sorted_pos) - 1, 0))
    found = valid & (sorted_pos[slot] == pos) if len(sorted_pos) else np.zeros(len(pos), bool)
    return order[slot] if len(sorted_pos) else slot, found


def gather_found(grad: np.ndarray, rows: np.ndarray, table: np.ndarray) -> np.ndarray:
    """grad[position of each row in `table`], zero for rows not in it."""
    where, found = find_rows(rows, table)
    out = np.zeros(len(rows), dtype=grad.dtype)
    out[found] = grad[where[found]]
    return out


@kernel("SparseAddGrad")
def _sparse_add_grad(ctx, backprop_val_grad, a_indices, b_indices, sum_indices):
    """Each input entry gets the gradient of the sum entry at its index (zero if dropped)."""
    return (gather_found(backprop_val_grad, a_indices, sum_indices),
            gather_found(backprop_val_grad, b_indices, sum_indices))


@kernel("SparseTensorDenseAdd")
def _sparse_tensor_dense_add(ctx, a_indices, a_values, a_shape, b):
    if len(a_shape) != b.ndim:
        raise invalid_argument(f"Dimension mismatch: a_shape has {len(a_shape)} dims but b has "
                               f"{b.ndim} dims")
    for d, (sparse_dim, dense_dim) in enumerate(zip(np.asarray(a_shape).tolist(), b.shape)):
        if sparse_dim != dense_dim:
            raise invalid_argument(f"Dimension {d} does not equal (no broadcasting is supported): "
                                   f"sparse side {sparse_dim} vs dense side {dense_dim}")
    out = np.array(b, copy=True)
    if len(a_indices):
        bad = np.any((a_indices < 0) | (a_indices >= np.asarray(a_shape)), axis=1)
        if bad.any():
            i = int(np.argmax(bad))
            raise invalid_argument(f"Index {i} is out of bounds: {dims_text(a_indices[i])} not in "
                                   f"{dims_text(a_shape)}")
        np.add.at(out, tuple(np.asarray(a_indices).T), a_values)
    return out


@kernel("SparseTensorDenseMatMul")
class SparseTensorDenseMatMulKernel:
    """out[m] += a[m, k] * b[k] for each entry (m, k) of op(A), scattered row-wise."""

    def __init__(self, ctx):
        self.adjoint_a = ctx.attrs["adjoint_a"]
        self.adjoint_b = ctx.attrs["adjoint_b"]

    def compute(self, ctx, a_indices, a_values, a_shape, b):
        if b.ndim != 2:
            raise invalid_argument(f"Tensor 'b' is not a matrix: {dims_text(b.shape)}")
        if len(a_shape) != 2:
            raise invalid_argument(f"Tensor 'a_shape' is not a vector of 2 elements: "
                                   f"{dims_text(np.shape(a_shape))}")
        if self.adjoint_b:
            b = b.conj().T
        m_col, k_col = (1, 0) if self.adjoint_a else (0, 1)
        out_rows, inner = int(a_shape[m_col]), int(a_shape[k_col])
        if inner != b.shape[0]:
            raise invalid_argument("Cannot multiply A and B because inner dimension does not "
                                   f"match: {inner} vs. {b.shape[0]}.  Did you forget a "
                                   f"transpose?  Dimensions of A: {dims_text(a_shape)}).  "
                                   f"Dimensions of B: {dims_text(b.shape)}")
        indices = np.asarray(a_indices, np.int64)
        rows, cols = indices[:, m_col], indices[:, k_col]
        for name, idx, col, limit in (("k", cols, k_col, inner), ("m", rows, m_col, out_rows)):
            bad = (idx < 0) | (idx >= limit)
            if bad.any():
                i = int(np.argmax(bad))
                raise invalid_argument(f"{name} ({idx[i]}) from index[{i},{col}] out of bounds "
                                       f"(>={limit})")
        values = a_values.conj() if self.adjoint_a else a_values
        out = np.zeros((out_rows, b.shape[1]), dtype=np.result_type(a_values, b))
        if len(rows) and out.size:
            scatter_rows(out, rows, values[:, None] * b[cols], np.add)
        return out


@kernel("SparseMatMul")
class SparseMatMulKernel:
    """A dense float32 product (the sparsity hints only choose TF's algorithm)."""

    def __init__(self, ctx):
        self.transpose_a = ctx.attrs["transpose_a"]
        self.transpose_b = ctx.attrs["transpose_b"]

    def compute(self, ctx, a, b):
        a = np.asarray(a, np.float32)
        b = np.asarray(b, np.float32)
        a = a.T if self.transpose_a else a
        b = b.T if self.transpose_b else b
        if a.shape[1] != b.shape[0]:
            raise invalid_argument(f"Matrix size-incompatible: In[0]: {dims_text(a.shape)}, In[1]: "
                                   f"{dims_text(b.shape)}")
        return a @ b
