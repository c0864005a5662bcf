"""Kernels of ops/tensor_scatter_ops.py: TensorScatterUpdate / Add / Sub / Max / Min.

Each returns a copy of `tensor` with the slices at `indices` combined with `updates`. Shapes
are checked in the order and words of TensorFlow's CPU kernel (TensorScatterOp, then
DoScatterNd); indices go through GatherNd's and ScatterNd's bounds check (kernels/array_index.py).
Repeated indices are applied in order, as TensorFlow's CPU loop applies them: add, sub, max and
min accumulate, and for update the last write wins. Max and min replace a value only by a
strictly greater (smaller) update, as Eigen's cwiseMax / cwiseMin do: a NaN update never lands,
while a NaN already in `tensor` stays.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.array_index import index_rows
from tensorweave.kernels.registry import register_pure

_MAX_DEPTH = 7  # DoScatterNd is instantiated for index depths 1..7 (its message says 5)


def _check_shapes(tensor, indices, updates) -> None:
    """InvalidArgumentError in TensorFlow's words, in its order, unless updates fit
    indices.shape[:-1] + tensor.shape[K:]."""
    t, i, u = np.shape(tensor), np.shape(indices), np.shape(updates)
    if not i:
        raise invalid_argument(f"Indices shape must have rank at least one. Found:{dims_text(i)}")
    if not u:
        raise invalid_argument(f"Updates shape must have rank at least one. Found:{dims_text(u)}")
    # TF's ValidEmptyOutputShape: no indices and no updates, or all three non-empty.
    if (np.size(indices) or np.size(updates)) and \
            not (np.size(tensor) and np.size(indices) and np.size(updates)):
        raise invalid_argument("Indices and updates specified for empty output shape")
    outer, depth = len(i) - 1, i[-1]
    if i[:outer] != u[:outer]:
        raise invalid_argument(f"Outer dimensions of indices and update must match. Indices "
                               f"shape: {dims_text(i)}, updates shape:{dims_text(u)}")
    if len(u) - outer != len(t) - depth:
        raise invalid_argument(f"Inner dimensions of output shape must match inner dimensions "
                               f"of updates shape. Output: {dims_text(t)} updates: {dims_text(u)}")
    if u[outer:] != t[depth:]:
        raise invalid_argument(f"The inner {len(t) - depth} dimensions of output.shape="
                               f"{dims_text(t)} must match the inner {len(u) - outer} dimensions "
                               f"of updates.shape={dims_text(u)}")
    if not t:
        raise invalid_argument(f"Output must be at least 1-D, got shape: {dims_text(t)}")
    if len(i) == 1:  # DoScatterNd reads 1-D indices as a column of depth-1 indices
        if u[0] != i[0]:
            raise invalid_argument(f"Dimensions [0,1) of indices[shape={dims_text(i)}] = {i[0]} "
                                   f"must match dimensions [0,1) of updates[shape={dims_text(u)}]"
                                   f" = {u[0]}")
        if depth:
            raise invalid_argument(f"Dimensions [1,{len(t)}) of input[shape={dims_text(t)}] must "
                                   f"match dimensions [1,{len(u)}) of updates[shape="
                                   f"{dims_text(u)}]")


def _tensor_scatter(combine: Callable) -> Callable:
    """The kernel: a checked copy of `tensor` on which `combine(out, where, rows)` applies the
    update rows at the index tuple `where`."""
    def compute(tensor, indices, updates):
        _check_shapes(tensor, indices, updates)
        out = np.array(tensor)  # a copy: the input is not changed
        if not out.size:
            return out
        depth = indices.shape[-1]
        if not 1 <= depth <= _MAX_DEPTH:
            raise invalid_argument(f"Only indices.shape[-1] values between 1 and 5 are currently "
                                   f"supported.  Requested rank: {depth}")
        flat = index_rows(indices, out.shape, "shape")
        combine(out, tuple(flat.T), np.reshape(updates, (len(flat),) + out.shape[depth:]))
        return out
    return compute


def _assign_in_order(out, where, rows) -> None:
    """out[where] = rows, the last of repeated indices winning (NumPy leaves that order open,
    so only each index's last row is written)."""
    linear = np.ravel_multi_index(where, out.shape[:len(where)])
    _, from_end = np.unique(linear[::-1], return_index=True)
    last = len(linear) - 1 - from_end
    out[tuple(w[last] for w in where)] = rows[last]


def _accumulate(ufunc) -> Callable:
    """ufunc.at: every row of repeated indices is combined, in order."""
    def combine(out, where, rows) -> None:
        ufunc.at(out, where, rows)
    return combine


def _extremum(ufunc, never_wins: float) -> Callable:
    """ufunc.at with NaN updates replaced by a value that never wins (-inf for max): ufunc
    keeps a NaN already in `out`, as Eigen does, but would also let a NaN update in."""
    def combine(out, where, rows) -> None:
        if out.dtype.kind == "f":
            rows = np.where(np.isnan(rows), never_wins, rows)
        ufunc.at(out, where, rows)
    return combine


# TensorFlow's CPU registrations: update for every dtype, the arithmetic ones for numbers.
for _op_type, _combine, _types in (
        ("TensorScatterUpdate", _assign_in_order, {}),
        ("TensorScatterAdd", _accumulate(np.add), {"T": _dtypes.NUMERIC}),
        ("TensorScatterSub", _accumulate(np.subtract), {"T": _dtypes.NUMERIC}),
        ("TensorScatterMax", _extremum(np.maximum, -np.inf), {"T": _dtypes.REAL_NUMERIC}),
        ("TensorScatterMin", _extremum(np.minimum, np.inf), {"T": _dtypes.REAL_NUMERIC})):
    register_pure(_op_type, _tensor_scatter(_combine),
                  dtypes={**_types, "Tindices": _dtypes.INDEX})
