"""Kernels of the set ops (ops/set_ops.py): per-group set algebra on sorted integer keys.

Each set element becomes one int64 key `group * n_codes + code`, where `group` is the row-major
index of its leading coordinates and `code` the rank of its value among all distinct values of
both inputs (np.unique sorts numbers and byte strings alike). Sorted unique keys are then the
sets, grouped and ordered, and NumPy's sorted-array set routines do the algebra for every group
at once. Sparse inputs are checked like TensorFlow's SparseTensor (bounds, order, repeats) when
`validate_indices` is set.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel


def _validate_sparse(indices, shape) -> None:
    """TensorFlow's SparseTensor index checks, reporting the first bad index."""
    n = len(indices)
    if n == 0:
        return
    out_of_bounds = ((indices < 0) | (indices >= shape)).any(axis=1)
    order = np.zeros(n, np.int64)   # -1: before its predecessor, 0: repeated, 1: after it
    if n > 1:
        diff = indices[1:] - indices[:-1]
        nonzero = diff != 0
        first = np.argmax(nonzero, axis=1)
        sign = np.sign(diff[np.arange(n - 1), first])
        order[1:] = np.where(nonzero.any(axis=1), sign, 0)
    order[0] = 1
    bad = out_of_bounds | (order <= 0)
    if not bad.any():
        return
    i = int(np.argmax(bad))
    where = f"indices[{i}] = {dims_text(indices[i])}"
    if out_of_bounds[i]:
        raise invalid_argument(f"{where} is out of bounds: need 0 <= index < {dims_text(shape)}")
    if order[i] == 0:
        raise invalid_argument(f"{where} is repeated")
    raise invalid_argument(f"{where} is out of order. Many sparse ops require sorted indices.\n"
                           "    Use `tf.sparse.reorder` to create a correctly ordered copy.\n\n")


class _Set:
    """One input as (group shape, group id per element, values)."""

    def __init__(self, group_shape, groups, values):
        self.group_shape = tuple(int(d) for d in group_shape)
        self.groups = groups
        self.values = values

    @classmethod
    def dense(cls, x):
        if x.ndim < 2:
            raise invalid_argument(f"Invalid rank {x.ndim}.")
        n_groups = int(np.prod(x.shape[:-1]))
        return cls(x.shape[:-1], np.repeat(np.arange(n_groups), x.shape[-1]), x.ravel())

    @classmethod
    def sparse(cls, indices, values, shape, validate: bool):
        if shape.size < 2:
            raise invalid_argument(f"Invalid rank {shape.size}.")
        if validate:
            _validate_sparse(indices, shape)
        group_shape = shape[:-1]
        groups = np.ravel_multi_index(tuple(indices[:, :-1].T), group_shape) \
            if len(indices) else np.zeros(0, np.int64)
        return cls(group_shape, groups, values)


def _keys(sets: list[_Set]):
    """Sorted unique int64 keys of each input, and the sorted distinct values they index."""
    distinct, codes = np.unique(np.concatenate([s.values for s in sets]), return_inverse=True)
    n_codes = max(len(distinct), 1)
    keys, start = [], 0
    for s in sets:
        code = codes[start:start + len(s.values)].astype(np.int64)
        start += len(s.values)
        keys.append(np.unique(s.groups.astype(np.int64) * n_codes + code))
    return keys, distinct, n_codes


_OPERATIONS = {
    "intersection": lambda a, b: np.intersect1d(a, b, assume_unique=True),
    "union": np.union1d,
    "a-b": lambda a, b: np.setdiff1d(a, b, assume_unique=True),
    "b-a": lambda a, b: np.setdiff1d(b, a, assume_unique=True),
}


def _result(keys, distinct, n_codes, group_shape, dtype):
    """SparseTensor components of the sets given by sorted keys."""
    groups, codes = np.divmod(keys, n_codes)
    position = np.arange(len(keys)) - np.searchsorted(groups, groups, side="left")
    coords = np.unravel_index(groups, group_shape) if group_shape else ()
    indices = np.stack([*coords, position], axis=1).astype(np.int64) if len(keys) else \
        np.zeros((0, len(group_shape) + 1), np.int64)
    width = int(position.max()) + 1 if len(keys) else 0
    values = distinct[codes] if len(keys) else np.zeros(0, dtype)
    return indices, values.astype(dtype, copy=False), np.array([*group_shape, width], np.int64)


@kernel(["DenseToDenseSetOperation", "DenseToSparseSetOperation",
         "SparseToSparseSetOperation"])
class SetOperationKernel:
    """Sets of two inputs, each dense or sparse, combined group by group."""

    def __init__(self, ctx):
        self.operation = _OPERATIONS[ctx.attrs["set_operation"]]
        self.validate = ctx.attrs["validate_indices"]
        self.dtype = np.dtype(object) if ctx.attrs["T"].name == "string" else \
            np.dtype(ctx.attrs["T"].as_numpy_dtype)
        self.first_dense = ctx.op_type.startswith("Dense")
        self.second_dense = ctx.op_type == "DenseToDenseSetOperation"

    def compute(self, ctx, *inputs):
        if self.first_dense:
            a, rest = _Set.dense(inputs[0]), inputs[1:]
        else:
            a, rest = _Set.sparse(*inputs[:3], self.validate), inputs[3:]
        b = _Set.dense(rest[0]) if self.second_dense else _Set.sparse(*rest, self.validate)
        if a.group_shape != b.group_shape:
            raise invalid_argument(f"Mismatched shapes {dims_text(a.group_shape)} vs "
                                   f"{dims_text(b.group_shape)}")
        (ka, kb), distinct, n_codes = _keys([a, b])
        return _result(self.operation(ka, kb), distinct, n_codes, a.group_shape, self.dtype)


@kernel("SetSize")
def _set_size(ctx, indices, values, shape):
    s = _Set.sparse(indices, values, shape, ctx.attrs["validate_indices"])
    (keys,), _, n_codes = _keys([s])
    n_groups = int(np.prod(s.group_shape))
    counts = np.bincount(keys // n_codes, minlength=n_groups)
    return counts.astype(np.int32).reshape(s.group_shape)
