"""Kernels of SparseReduceSum/Max(+Sparse), SparseSoftmax, SparseSparseMaximum/Minimum and
SparseDenseCwiseAdd/Mul/Div.

Entries are grouped by their linear position in a smaller dense shape (the reduced shape; for
softmax, all dimensions but the last), then combined with `ufunc.at` / `ufunc.reduceat`.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel
from tensorweave.kernels.sparse_math import linear_positions
from tensorweave.kernels.sparse_reshape import row_major_order


def _reduced_axes(axes, rank: int) -> np.ndarray:
    axes = np.asarray(axes, np.int64).reshape(-1)
    bad = (axes < -rank) | (axes >= rank)
    if bad.any():
        raise invalid_argument(f"Invalid reduction dimension {axes[np.argmax(bad)]}, for input "
                               f"with {rank} dimensions.")
    return np.unique(axes % rank)


class _SparseReduceKernel:
    """Groups entries by their position with the reduced axes zeroed, combines each group."""

    def __init__(self, ctx):
        self.keep_dims = ctx.attrs["keep_dims"]
        self.sparse_output = ctx.op_type.endswith("Sparse")
        self.ufunc = np.maximum if ctx.op_type.startswith("SparseReduceMax") else np.add

    def compute(self, ctx, input_indices, input_values, input_shape, reduction_axes):
        shape = np.asarray(input_shape, np.int64)
        axes = _reduced_axes(reduction_axes, len(shape))
        kept = shape.copy()
        kept[axes] = 1
        grouped = np.array(input_indices, np.int64, copy=True)
        grouped[:, axes] = 0   # TF does not check the reduced coordinates either
        bad = np.any((grouped < 0) | (grouped >= kept), axis=1)
        if bad.any():
            i = int(np.argmax(bad))
            raise invalid_argument(f"Invalid index: {dims_text(input_indices[i])} out of bounds of "
                                   f"{dims_text(shape)}")
        pos = linear_positions(grouped, kept)
        out_shape = kept if self.keep_dims else np.delete(shape, axes)
        if self.sparse_output:
            return self._sparse(pos, input_values, kept, axes, out_shape)
        flat = np.zeros(int(np.prod(kept)), dtype=input_values.dtype)
        if self.ufunc is np.maximum and len(pos):   # max over the stored entries only
            present = np.zeros(flat.shape, bool)
            present[pos] = True
            flat[present] = _lowest(flat.dtype)
        self.ufunc.at(flat, pos, input_values)
        return flat.reshape(tuple(out_shape))

    def _sparse(self, pos, values, kept, axes, out_shape):
        """One entry per reduced position that had entries, in row-major order."""
        starts, order = group_starts(pos)
        out_values = self.ufunc.reduceat(values[order], starts) if len(starts) else values[:0]
        coords = unravel(pos[order][starts], kept)
        if not self.keep_dims:
            coords = np.delete(coords, axes, axis=1)
        return coords, out_values.astype(values.dtype), np.asarray(out_shape, np.int64)


def group_starts(pos: np.ndarray):
    """(start of each run of equal positions after a stable sort, the sort order)."""
    order = np.argsort(pos, kind="stable")
    sorted_pos = pos[order]
    if not len(pos):
        return np.zeros(0, np.int64), order
    return np.flatnonzero(np.concatenate([[True], sorted_pos[1:] != sorted_pos[:-1]])), order


def unravel(pos: np.ndarray, dims) -> np.ndarray:
    """Index rows [len(pos), len(dims)] of row-major positions."""
    if len(dims) == 0:
        return np.zeros((len(pos), 0), np.int64)
    return np.stack(np.unravel_index(pos, tuple(int(d) for d in dims)), axis=1).astype(np.int64)


def _lowest(dtype):
    return np.finfo(dtype).min if np.issubdtype(dtype, np.floating) else np.iinfo(dtype).min


for _name, _allowed in (("SparseReduceSum", _dtypes.NUMERIC),
                        ("SparseReduceMax", _dtypes.REAL_NUMERIC)):
    kernel([_name, _name + "Sparse"], dtypes=_allowed)(_SparseReduceKernel)


@kernel("SparseSoftmax", dtypes=_dtypes.FLOATING)
def _sparse_softmax(ctx, sp_indices, sp_values, sp_shape):
    """exp(x - row max) / row sum over each innermost row's stored entries."""
    shape = np.asarray(sp_shape, np.int64)
    if len(shape) < 2:
        raise invalid_argument("Input should have rank >= 2, but received shape: "
                               + ",".join(str(int(d)) for d in shape))
    if len(sp_values) == 0:
        return sp_values.copy()
    rows = linear_positions(np.asarray(sp_indices)[:, :-1], shape[:-1])
    _, rows = np.unique(rows, return_inverse=True)
    row_max = np.full(rows.max() + 1, -np.inf, dtype=sp_values.dtype)
    np.maximum.at(row_max, rows, sp_values)
    e = np.exp(sp_values - row_max[rows])
    row_sum = np.zeros_like(row_max)
    np.add.at(row_sum, rows, e)
    # TF writes the results in row-major order of the indices (it sorts a copy and does not
    # permute back): the same for the sorted input the op requires.
    return (e / row_sum[rows]).astype(sp_values.dtype)[row_major_order(sp_indices)]


class _SparseSparseKernel:
    """SparseSparseMaximum/Minimum: the union of the entries, absent ones counting as 0."""

    def __init__(self, ctx):
        self.ufunc = np.maximum if ctx.op_type == "SparseSparseMaximum" else np.minimum

    def compute(self, ctx, a_indices, a_values, a_shape, b_indices, b_values, b_shape):
        if len(a_shape) != len(b_shape) or np.any(a_shape != b_shape):
            for d, (x, y) in enumerate(zip(np.asarray(a_shape).tolist(),
                                           np.asarray(b_shape).tolist())):
                if x != y:
                    raise invalid_argument(f"Operands' shapes do not match: got {x} and {y} for "
                                           f"dimension {d}")
            raise invalid_argument(f"Operands do not have the same ranks; got shapes: "
                                   f"{dims_text(a_shape)} and {dims_text(b_shape)}")
        pos = np.concatenate([linear_positions(a_indices, a_shape),
                              linear_positions(b_indices, b_shape)])
        values = np.concatenate([a_values, b_values])
        starts, order = group_starts(pos)
        counts = np.diff(np.append(starts, len(pos)))
        combined = self.ufunc.reduceat(values[order], starts) if len(starts) else values[:0]
        lone = counts == 1   # present in one operand: the other's implicit 0 takes part
        combined[lone] = self.ufunc(combined[lone], 0)
        return unravel(pos[order][starts], a_shape), combined.astype(values.dtype)


kernel(["SparseSparseMaximum", "SparseSparseMinimum"],
       dtypes=_dtypes.REAL_NUMERIC)(_SparseSparseKernel)

_CWISE = {"SparseDenseCwiseAdd": np.add, "SparseDenseCwiseMul": np.multiply,
          "SparseDenseCwiseDiv": np.divide}


class _SparseDenseCwiseKernel:
    """values op dense[index], the dense operand broadcast to the sparse shape."""

    def __init__(self, ctx):
        self.ufunc = _CWISE[ctx.op_type]

    def compute(self, ctx, sp_indices, sp_values, sp_shape, dense):
        shape = tuple(int(d) for d in sp_shape)
        try:
            full = np.broadcast_to(dense, shape)
        except ValueError:
            raise invalid_argument("SparseDenseBinaryOpShared broadcasts dense to sparse only; got "
                                   f"incompatible shapes: {dims_text(shape)} vs. "
                                   f"{dims_text(dense.shape)}") from None
        if len(sp_values) == 0:
            return sp_values.copy()
        gathered = full[tuple(np.asarray(sp_indices).T)]
        if self.ufunc is np.divide and sp_values.dtype.kind in "iu":
            return (sp_values // gathered).astype(sp_values.dtype)
        return self.ufunc(sp_values, gathered).astype(sp_values.dtype)


kernel(list(_CWISE), dtypes=_dtypes.NUMERIC)(_SparseDenseCwiseKernel)
